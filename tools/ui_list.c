/* SPDX-License-Identifier: Apache-2.0 */
/* The VM list of `ddmc ui --all` (ui_list.h): `ddmc --json ps` in a child process, again and
 * again. */
#include "ui_list.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

struct ui_list {
  const opts *o;
  pthread_t th;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int stop;      /* under mu */
  char *doc;     /* under mu: the last document */
  uint64_t seq;  /* under mu */
  char error[200];
};

static int stopping(ui_list *l) {
  pthread_mutex_lock(&l->mu);
  int s = l->stop;
  pthread_mutex_unlock(&l->mu);
  return s;
}

static pid_t spawn_ps(ui_list *l, int *rfd) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return -1;
  char port[8], tmo[16];
  snprintf(port, sizeof port, "%u", (unsigned)l->o->adb_port);
  snprintf(tmo, sizeof tmo, "%d", l->o->timeout_ms < 3000 ? l->o->timeout_ms : 3000);
  char *argv[12];
  int n = 0;
  argv[n++] = "ddmc";
  argv[n++] = "-P";
  argv[n++] = port;
  if (l->o->serial) {
    argv[n++] = "-s";
    argv[n++] = (char *)l->o->serial;
  }
  argv[n++] = "-t";
  argv[n++] = tmo;
  argv[n++] = "--json";
  argv[n++] = "ps";
  argv[n] = NULL;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid;
  int rc = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return -1;
  }
  *rfd = fds[0];
  return pid;
}

/* One listing: its stdout into *out (malloc'd), bounded in size and time; stop ends it early. */
static int run_ps(ui_list *l, char **out, char *err, size_t errlen) {
  int fd;
  pid_t pid = spawn_ps(l, &fd);
  if (pid < 0) {
    snprintf(err, errlen, "cannot run ddmc ps: %s", strerror(errno));
    return -1;
  }
  size_t len = 0, cap = 65536;
  char *buf = malloc(cap);
  int64_t end = sess_mono_ms() + l->o->timeout_ms + 10000;
  const char *why = buf ? NULL : "out of memory";
  while (why == NULL) {
    struct pollfd p = {fd, POLLIN, 0};
    int r = poll(&p, 1, 200);
    if (stopping(l) || sess_mono_ms() > end) why = "ddmc ps took too long";
    if (why || r <= 0) continue;
    if (len + 4096 > cap) {
      char *b = cap < UI_LIST_MAX_BYTES ? realloc(buf, cap * 2) : NULL;
      if (b == NULL) {
        why = cap < UI_LIST_MAX_BYTES ? "out of memory" : "ddmc ps printed more than the list keeps";
        continue;
      }
      buf = b;
      cap *= 2;
    }
    ssize_t k = read(fd, buf + len, cap - len - 1);
    if (k <= 0) break; /* the end (or an error: what came is judged below) */
    len += (size_t)k;
  }
  if (why) kill(pid, SIGTERM);
  close(fd);
  int st = 0;
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
  }
  if (why || len == 0) {
    snprintf(err, errlen, "%s", why ? why : "ddmc ps printed nothing");
    free(buf);
    return -1;
  }
  buf[len] = '\0';
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) snprintf(err, errlen, "ddmc ps exited with %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  *out = buf;
  return 0;
}

static void *list_main(void *arg) {
  ui_list *l = arg;
  while (!stopping(l)) {
    char *doc = NULL, err[200] = "";
    run_ps(l, &doc, err, sizeof err);
    pthread_mutex_lock(&l->mu);
    if (doc) {
      free(l->doc);
      l->doc = doc;
    }
    snprintf(l->error, sizeof l->error, "%s", err);
    l->seq++;
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += UI_LIST_PERIOD_MS / 1000;
    dl.tv_nsec += (long)(UI_LIST_PERIOD_MS % 1000) * 1000000L;
    if (dl.tv_nsec >= 1000000000L) {
      dl.tv_sec++;
      dl.tv_nsec -= 1000000000L;
    }
    int rc = 0;
    while (!l->stop && rc != ETIMEDOUT) rc = pthread_cond_timedwait(&l->cv, &l->mu, &dl);
    pthread_mutex_unlock(&l->mu);
  }
  return NULL;
}

ui_list *ui_list_start(const opts *o) {
  ui_list *l = calloc(1, sizeof *l);
  if (l == NULL) return NULL;
  l->o = o;
  pthread_mutex_init(&l->mu, NULL);
  pthread_cond_init(&l->cv, NULL);
  if (pthread_create(&l->th, NULL, list_main, l) != 0) {
    pthread_mutex_destroy(&l->mu);
    pthread_cond_destroy(&l->cv);
    free(l);
    return NULL;
  }
  return l;
}

void ui_list_stop(ui_list *l) {
  if (l == NULL) return;
  pthread_mutex_lock(&l->mu);
  l->stop = 1;
  pthread_cond_broadcast(&l->cv);
  pthread_mutex_unlock(&l->mu);
  pthread_join(l->th, NULL);
  free(l->doc);
  pthread_mutex_destroy(&l->mu);
  pthread_cond_destroy(&l->cv);
  free(l);
}

uint64_t ui_list_seq(ui_list *l) {
  pthread_mutex_lock(&l->mu);
  uint64_t s = l->seq;
  pthread_mutex_unlock(&l->mu);
  return s;
}

char *ui_list_copy(ui_list *l, uint64_t *seq, char *error, size_t errlen) {
  pthread_mutex_lock(&l->mu);
  char *c = l->doc ? strdup(l->doc) : NULL;
  *seq = l->seq;
  snprintf(error, errlen, "%s", l->error);
  pthread_mutex_unlock(&l->mu);
  return c;
}
