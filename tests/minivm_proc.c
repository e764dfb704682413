/* SPDX-License-Identifier: Apache-2.0 */
#include "minivm_proc.h"

#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

char *minivm_log(const minivm_proc *c) {
  FILE *f = fopen(c->log, "r");
  char *buf = calloc(1, 1 << 20);
  if (f == NULL || buf == NULL) {
    if (f) fclose(f);
    return buf;
  }
  size_t n = fread(buf, 1, (1 << 20) - 1, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

void minivm_spawn(minivm_proc *c, const char *program, const char *extra) {
  snprintf(c->log, sizeof(c->log), "/tmp/ddmc-test-%d-XXXXXX", (int)getpid());
  int fd = mkstemp(c->log);
  assert_true(fd >= 0);
  char prog[512], words[256] = "";
  snprintf(prog, sizeof(prog), "%s/%s.mvm", MINIVM_PROGRAMS, program);
  if (extra) snprintf(words, sizeof(words), "%s", extra);
  const char *argv[16];
  int i = 0;
  argv[i++] = MINIVM_PATH;
  argv[i++] = "-agentlib:jdwp=transport=dt_socket,address=127.0.0.1:0,server=y,suspend=n";
  for (char *save = NULL, *w = strtok_r(words, " ", &save); w && i < 13; w = strtok_r(NULL, " ", &save))
    argv[i++] = w;
  argv[i++] = prog;
  argv[i] = NULL;
  c->pid = fork();
  assert_true(c->pid >= 0);
  if (c->pid == 0) {
    dup2(fd, 2);
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    execv(MINIVM_PATH, (char *const *)argv);
    _exit(127);
  }
  close(fd);
  c->port = 0;
  static const char kLine[] = "JDWP listening on 127.0.0.1:";
  for (int64_t end = mono_ms() + 10000; mono_ms() < end && c->port == 0;) {
    char *s = minivm_log(c);
    const char *p = s ? strstr(s, kLine) : NULL;
    if (p) c->port = (uint16_t)atoi(p + sizeof(kLine) - 1);
    free(s);
    if (!c->port) sleep_ms(20);
  }
  if (c->port == 0) print_error("minivm did not report its port; log %s\n", c->log);
  assert_true(c->port != 0);
}

int minivm_alive(const minivm_proc *c) {
  return c->pid > 0 && waitpid(c->pid, NULL, WNOHANG) == 0;
}

void minivm_reap(minivm_proc *c) {
  if (c->pid > 0) {
    kill(c->pid, SIGKILL);
    waitpid(c->pid, NULL, 0);
    c->pid = -1;
  }
  unlink(c->log);
}

ddmc_host *minivm_attach(const minivm_proc *c) {
  ddmc_host *h = NULL;
  assert_int_equal(ddmc_host_connect_tcp(&h, "127.0.0.1", c->port, 5000), 0);
  assert_int_equal(ddmc_host_handshake(h, 5000), 0);
  return h;
}
