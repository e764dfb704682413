/* SPDX-License-Identifier: Apache-2.0 */
/* Starting the real minivm binary for end-to-end tests: stderr goes to a file, the JDWP port is
 * read from its "JDWP listening on 127.0.0.1:PORT" line. */
#ifndef DDMC_TEST_MINIVM_PROC_H
#define DDMC_TEST_MINIVM_PROC_H

#include <stdint.h>
#include <sys/types.h>

#include "ddmc_host.h"
#include "util/testutil.h"

typedef struct minivm_proc {
  pid_t pid;
  uint16_t port;
  char log[64];
} minivm_proc;

/* Starts MINIVM_PATH with -agentlib:jdwp=...address=127.0.0.1:0 (any free port), the
 * space-separated extra options (may be NULL), and MINIVM_PROGRAMS/<program>.mvm. Asserts. */
void minivm_spawn(minivm_proc *c, const char *program, const char *extra);
/* SIGKILL and reap; removes the log. */
void minivm_reap(minivm_proc *c);
/* Non-zero while the process runs. */
int minivm_alive(const minivm_proc *c);
/* Connects and handshakes. Asserts. */
ddmc_host *minivm_attach(const minivm_proc *c);
/* The log so far (malloc'd, NUL-terminated). */
char *minivm_log(const minivm_proc *c);

#endif
