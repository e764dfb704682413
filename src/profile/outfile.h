/* SPDX-License-Identifier: Apache-2.0 */
/* Files a peer asks the VM to write (HPDU, MPRS): created new, regular, never blocking, inside
 * ddmc_prof_config.file_dir when that is set. See outfile.c for why each rule. JDWP thread. */
#ifndef DDMC_PROFILE_OUTFILE_H
#define DDMC_PROFILE_OUTFILE_H

#include <stddef.h>
#include <sys/stat.h>

#include "vm_int.h"

typedef struct ddmc__prof_outfile {
  int fd;          /* -1 until opened */
  struct stat st;  /* the file as created: what discard checks the name against */
} ddmc__prof_outfile;

/* Creates path for writing. Returns 0 (out->fd open), or DDMC_EINVAL (outside file_dir),
 * DDMC_ENOENT (no such directory), DDMC_EIO (exists, not a regular file, other errors) with a
 * one-line reason in msg that names the path. */
int ddmc__prof_outfile_open(ddmc_vm *vm, const char *path, ddmc__prof_outfile *out, char *msg, size_t msglen);

/* Removes path after a failed write, only if it still is the file f was opened as. */
void ddmc__prof_outfile_discard(const char *path, const ddmc__prof_outfile *f);

#endif
