/* SPDX-License-Identifier: Apache-2.0 */
/* Files the VM writes because a peer named them: HPDU's heap dump and MPRS's trace.
 *
 * The name comes from whoever reached the JDWP port, which on a desktop is any local user, and
 * the handler runs on the JDWP thread, which serves every peer. So the name may only ever make
 * the VM create a new regular file:
 * - O_CREAT|O_EXCL: an existing name is refused, never truncated (a file of the VM's user, or a
 *   symlink to one, is not the peer's to overwrite); O_EXCL also fails on a symlink, even a
 *   dangling one, and O_NOFOLLOW says so once more;
 * - O_NONBLOCK: no open waits (on a FIFO, for a reader that never comes), and fstat after the
 *   open insists on a regular file, so no write can wait on a reader either;
 * - ddmc_prof_config.file_dir, when set, confines the name to files directly in that directory;
 * - only a file this code created is ever removed (ddmc__prof_outfile_discard checks that the name
 *   still leads to the same inode).
 * Android's runtime writes wherever the host says (ddmlib sends /sdcard/<app>.hprof, a name it
 * removes after pulling); with file_dir unset so does this, but for a name that exists. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "profile/outfile.h"

/* 0 when path names a file directly inside dir (dir without its trailing slashes). */
static int inside(const char *dir, const char *path) {
  size_t n = strlen(dir);
  while (n > 1 && dir[n - 1] == '/') n--;
  if (n == 1 && dir[0] == '/') n = 0; /* "/" itself: the name is "/<file>" */
  if (strncmp(path, dir, n) != 0 || path[n] != '/') return -1;
  const char *name = path + n + 1;
  if (name[0] == '\0' || strchr(name, '/') != NULL || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) return -1;
  return 0;
}

int ddmc__prof_outfile_open(ddmc_vm *vm, const char *path, ddmc__prof_outfile *out, char *msg, size_t msglen) {
  out->fd = -1;
  const char *dir = vm->prof.cfg.file_dir;
  if (dir[0] != '\0' && inside(dir, path) != 0) {
    snprintf(msg, msglen, "cannot create %s: the VM writes files only directly in %s", path, dir);
    return DDMC_EINVAL;
  }
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY, 0644);
  if (fd < 0) {
    int e = errno;
    if (e == EEXIST)
      snprintf(msg, msglen, "cannot create %s: the file exists (the VM writes only new files)", path);
    else
      snprintf(msg, msglen, "cannot open %s: %s", path, strerror(e));
    return e == ENOENT ? DDMC_ENOENT : DDMC_EIO;
  }
  if (fstat(fd, &out->st) != 0 || !S_ISREG(out->st.st_mode)) {
    /* O_EXCL made it, so only a strange file system gets here; what it made is left alone. */
    close(fd);
    snprintf(msg, msglen, "cannot create %s: not a regular file", path);
    return DDMC_EIO;
  }
  out->fd = fd;
  return 0;
}

void ddmc__prof_outfile_discard(const char *path, const ddmc__prof_outfile *f) {
  struct stat now;
  /* Someone may have renamed ours away and put another file in its place meanwhile. */
  if (lstat(path, &now) != 0 || now.st_dev != f->st.st_dev || now.st_ino != f->st.st_ino || !S_ISREG(now.st_mode))
    return;
  unlink(path);
}
