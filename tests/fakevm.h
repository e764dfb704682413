/* SPDX-License-Identifier: Apache-2.0 */
/* The one fake VM of the tests: every ddmc_vm_ops hook, answering from a table of knobs
 * (fakevm_config) and counting what the library asks of it. test_session and test_stress drive it
 * from a real socket peer (ddmc_host), test_failmalloc under a failing allocator, fuzz_session
 * without a socket. A new bridge hook gets its one fake here, with a knob if a user needs another
 * answer.
 *
 * The VM part needs only libddmc. The harness below it (fakevm_start, peer_connect) needs cmocka
 * and the host library; a target without them (the fuzzer) defines FAKEVM_VM_ONLY. */
#ifndef DDMC_TEST_FAKEVM_H
#define DDMC_TEST_FAKEVM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "ddmc/ddmc.h"

/* A thread: info.tid 0 stands for getpid(). stack == NULL: thread_stack answers DDMC_ENOENT.
 * cpu_user_ns or cpu_system_ns non-zero: a thread the OS does not name (reported with tid 0, as
 * under JVM TI), whose CPU times thread_cpu_time answers. */
typedef struct fakevm_thread {
  ddmc_thread_info info;
  const ddmc_frame *stack; /* innermost first */
  size_t depth;
  uint64_t cpu_user_ns, cpu_system_ns;
} fakevm_thread;

/* A heap run; bytes > 0. */
typedef struct fakevm_region {
  size_t bytes;
  ddmc_heap_kind kind;
  ddmc_heap_solidity solidity;
} fakevm_region;

/* heap_info answers info; walk_heap repeats pattern from info.base until info.footprint is
 * covered (the last run clipped, each run's start rounded up to 8 bytes). */
typedef struct fakevm_heap {
  ddmc_heap_info info;
  const fakevm_region *pattern;
  size_t npattern;
} fakevm_heap;

typedef struct fakevm_config {
  const fakevm_thread *threads;
  size_t nthreads;
  fakevm_heap managed; /* DDMC_HEAP_MANAGED */
  fakevm_heap native;  /* any other heap id */
  /* Library log lines; NULL: stderr when DDMC_TEST_VERBOSE is set. Every line is counted. */
  void (*log)(void *log_ud, ddmc_log_level level, const char *msg);
  void *log_ud;
  size_t sendq_bytes; /* fakevm_start only: the send-queue cap (0: the library's default) */
} fakevm_config;

/* Three threads (main with a two-frame stack; a UTF-8 name; a daemon whose name is over 124
 * bytes), a 1 MiB managed heap based above 4 GiB, a 4 KiB native heap. */
extern const fakevm_config fakevm_default;

typedef struct fakevm {
  ddmc_vm *vm;
  fakevm_config cfg;
  ddmc_vm_ops ops;        /* filled by fakevm_init; a user may clear hooks before fakevm_new */
  atomic_int answer_jdwp; /* 1: jdwp_command answers VirtualMachine.Version (1/1), else NOT_IMPLEMENTED;
                             2: and every other command with an empty success */
  atomic_int attached, detached, gc_requests, exits, last_exit, jdwp_thread_started, jdwp_thread_ended, log_lines;
  uint32_t pid;
  int verbose;
} fakevm;

/* Zeroes f and takes cfg (NULL: fakevm_default); calls nothing in the library. */
void fakevm_init(fakevm *f, const fakevm_config *cfg);
/* ddmc_vm_new with f's ops and f as vm_data (f must not move until fakevm_stop). Returns its code. */
int fakevm_new(fakevm *f, const ddmc_options *o, const ddmc_allocator *mem);
/* Frees the VM (NULL-safe); the counters stay readable. */
void fakevm_stop(fakevm *f);

#ifndef FAKEVM_VM_ONLY
#include "ddmc_host.h"

/* fakevm_init, fakevm_new with "transport=dt_socket,address=127.0.0.1:0,server=y" plus extra_opts,
 * ident "fakevm v1" and two features, then ddmc_vm_start, asserting each step. Returns the port
 * (any free one), or 0 with suspend=y: the caller starts the VM on another thread. */
uint16_t fakevm_start_cfg(fakevm *f, const fakevm_config *cfg, const char *extra_opts, int handshake_timeout_ms);
uint16_t fakevm_start(fakevm *f, const char *extra_opts, int handshake_timeout_ms);
/* Connects and handshakes a host peer. */
ddmc_host *peer_connect(uint16_t port);
#endif

#endif
