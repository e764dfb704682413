/* SPDX-License-Identifier: Apache-2.0 */
/* dt_android_adb (src/jdwp/transport_adb.c) against a tiny adbd written into the test: an
 * abstract unix socket per test, the pid announcement in both formats, descriptor passing with
 * SCM_RIGHTS, a second descriptor while a session is live, the control socket dying while idle
 * and during a session, stray bytes without a descriptor (a 100,000-byte flood idle and during a
 * session, a SEQPACKET storm: one line and a re-dial), a descriptor with stray bytes or with none,
 * extra descriptors in one message closed, SO_PEERCRED rejection, back-off timing, the name from
 * options or $DDMC_ADB_CONTROL, bad names, close-on-exec, and a stop that never waits on adbd.
 * Every wait is bounded; alarm() backs that up. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>

#include "ddmc/ddmc.h"
#include "ddmc_host.h"
#include "util/testutil.h"

#define TMO 5000

/* ------------------------------------------------------------------ helpers */

static atomic_int g_unreachable; /* "cannot reach adbd" log lines: one per failed dial */
static atomic_int g_untrusted;   /* "not trusted" log lines */
static atomic_int g_dropped;     /* "already connected; dropping" */
static atomic_int g_announced;   /* "announced pid" */
static atomic_int g_warnings;    /* WARN and ERROR lines */

static void log_fn(void *d, ddmc_log_level lvl, const char *msg) {
  (void)d;
  if (strstr(msg, "cannot reach adbd")) atomic_fetch_add(&g_unreachable, 1);
  if (strstr(msg, "not trusted")) atomic_fetch_add(&g_untrusted, 1);
  if (strstr(msg, "dropping the new one")) atomic_fetch_add(&g_dropped, 1);
  if (strstr(msg, "announced pid")) atomic_fetch_add(&g_announced, 1);
  if (lvl >= DDMC_LOG_WARN) atomic_fetch_add(&g_warnings, 1);
  if (getenv("DDMC_TEST_VERBOSE")) fprintf(stderr, "ddmc[%d]: %s\n", (int)lvl, msg);
}

static void reset_counters(void) {
  atomic_store(&g_unreachable, 0);
  atomic_store(&g_untrusted, 0);
  atomic_store(&g_dropped, 0);
  atomic_store(&g_announced, 0);
  atomic_store(&g_warnings, 0);
}

/* A fresh abstract name per use, so tests (and parallel ctest runs) never collide. */
static void unique_name(char *out, size_t n) {
  static int seq;
  snprintf(out, n, "@ddmc-adb-test-%d-%d", (int)getpid(), ++seq);
}

static socklen_t make_addr(const char *name, struct sockaddr_un *sa) {
  memset(sa, 0, sizeof(*sa));
  sa->sun_family = AF_UNIX;
  size_t n = strlen(name);
  assert_true(name[0] == '@' && n >= 2 && n <= sizeof(sa->sun_path));
  memcpy(sa->sun_path + 1, name + 1, n - 1);
  return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
}

/* The adbd side: a listening control socket. */
static int ctl_listen(const char *name, int type) {
  struct sockaddr_un sa;
  socklen_t sl = make_addr(name, &sa);
  int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
  assert_true(fd >= 0);
  assert_int_equal(bind(fd, (struct sockaddr *)&sa, sl), 0);
  assert_int_equal(listen(fd, 8), 0);
  return fd;
}

/* Accepts one VM within timeout_ms; -1 on timeout. */
static int ctl_accept(int lfd, int timeout_ms) {
  struct pollfd p = {.fd = lfd, .events = POLLIN};
  if (poll(&p, 1, timeout_ms) != 1) return -1;
  return accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
}

/* Reads exactly n bytes (stream) or one message (seqpacket) within TMO. Returns bytes read. */
static ssize_t read_some(int fd, void *buf, size_t n, int timeout_ms) {
  size_t got = 0;
  int64_t deadline = mono_ms() + timeout_ms;
  while (got < n) {
    int left = (int)(deadline - mono_ms());
    if (left <= 0) break;
    struct pollfd p = {.fd = fd, .events = POLLIN};
    if (poll(&p, 1, left) != 1) break;
    ssize_t r = recv(fd, (char *)buf + got, n - got, 0);
    if (r <= 0) break;
    got += (size_t)r;
  }
  return (ssize_t)got;
}

/* Sends fd over the control connection with n payload bytes in the same message. */
static void send_fd_with(int conn, int fd, const char *bytes, size_t n) {
  struct iovec iov = {.iov_base = (void *)bytes, .iov_len = n};
  union {
    struct cmsghdr h;
    char buf[CMSG_SPACE(sizeof(int))];
  } cm;
  memset(&cm, 0, sizeof(cm));
  struct msghdr msg;
  memset(&msg, 0, sizeof(msg));
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = cm.buf;
  msg.msg_controllen = sizeof(cm.buf);
  struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  memcpy(CMSG_DATA(c), &fd, sizeof(int));
  assert_int_equal(sendmsg(conn, &msg, MSG_NOSIGNAL), (ssize_t)n);
}

/* The way adbd does it: one fd, 1-byte payload. */
static void send_fd(int conn, int fd) { send_fd_with(conn, fd, "!", 1); }

/* Sends one message with len bytes of data (0: none) and nfds descriptors. Returns sendmsg's
 * result. */
static ssize_t send_fds(int conn, const int *fds, int nfds, const void *data, size_t len) {
  struct iovec iov = {.iov_base = (void *)data, .iov_len = len};
  union {
    struct cmsghdr h;
    char buf[CMSG_SPACE(16 * sizeof(int))];
  } cm;
  assert_true(nfds >= 1 && nfds <= 16);
  memset(&cm, 0, sizeof(cm));
  struct msghdr msg;
  memset(&msg, 0, sizeof(msg));
  msg.msg_iov = len ? &iov : NULL;
  msg.msg_iovlen = len ? 1 : 0;
  msg.msg_control = cm.buf;
  msg.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
  struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
  memcpy(CMSG_DATA(c), fds, (size_t)nfds * sizeof(int));
  return sendmsg(conn, &msg, MSG_NOSIGNAL);
}

/* A stray-bytes flood from a broken adbd: total bytes in sends of chunk bytes (on SEQPACKET,
 * messages of chunk bytes), none with a descriptor. Stops early, without failing, once the VM
 * has closed its end. Returns the bytes sent. */
static size_t flood(int conn, size_t total, size_t chunk) {
  static char junk[100000];
  memset(junk, 'j', sizeof(junk));
  assert_true(chunk >= 1 && chunk <= sizeof(junk));
  size_t sent = 0;
  while (sent < total) {
    size_t n = total - sent < chunk ? total - sent : chunk;
    ssize_t w = send(conn, junk, n, MSG_NOSIGNAL);
    if (w <= 0) break; /* EPIPE/ECONNRESET: the VM dropped the control socket */
    sent += (size_t)w;
  }
  return sent;
}

/* Reads a raw32 announcement (one SEQPACKET message, the pid in host order) and checks it. */
static void expect_raw32(int conn, uint32_t want) {
  uint8_t buf[16];
  struct pollfd p = {.fd = conn, .events = POLLIN};
  assert_int_equal(poll(&p, 1, TMO), 1);
  assert_int_equal(recv(conn, buf, sizeof(buf), 0), 4);
  uint32_t pid;
  memcpy(&pid, buf, 4);
  assert_int_equal(pid, want);
}

/* CPU time (user + system) of this whole process, in ms: the VM's JDWP thread included. */
static int64_t cpu_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A debugger connection as adbd makes it: a socketpair whose far end goes to the VM. Returns
 * the near end; *far_ino is the inode of the far end (to find the VM's copy of it). */
static int hand_over(int conn, ino_t *far_ino) {
  int sv[2];
  assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  if (far_ino) {
    struct stat st;
    assert_int_equal(fstat(sv[1], &st), 0);
    *far_ino = st.st_ino;
  }
  send_fd(conn, sv[1]);
  close(sv[1]);
  return sv[0];
}

/* HELO over the near end; checks the pid. Frees the handle. */
static void check_hello(int near_fd, uint32_t want_pid) {
  ddmc_host *h;
  assert_int_equal(ddmc_host_from_fd(&h, near_fd), 0);
  assert_int_equal(ddmc_host_handshake(h, TMO), 0);
  ddmc_host_helo helo;
  assert_int_equal(ddmc_host_hello(h, &helo, TMO), 0);
  assert_int_equal(helo.pid, want_pid);
  assert_string_equal(helo.vm_ident, "adbtest v1");
  ddmc_host_helo_free(&helo);
  ddmc_host_free(h);
}

/* HELO over an open handle, which stays open. */
static void check_hello_h(ddmc_host *h, uint32_t want_pid) {
  ddmc_host_helo helo;
  assert_int_equal(ddmc_host_hello(h, &helo, TMO), 0);
  assert_int_equal(helo.pid, want_pid);
  ddmc_host_helo_free(&helo);
}

/* True when fd reads EOF (or a reset) within timeout_ms. */
static int sees_eof(int fd, int timeout_ms) {
  struct pollfd p = {.fd = fd, .events = POLLIN};
  if (poll(&p, 1, timeout_ms) != 1) return 0;
  char b;
  ssize_t r = recv(fd, &b, 1, MSG_DONTWAIT);
  return r == 0 || (r < 0 && errno != EAGAIN);
}

typedef struct adbvm {
  ddmc_vm *vm;
  char name[108];
  uint32_t pid;
} adbvm;

/* Creates and starts a VM on dt_android_adb. name NULL: leave options.adb_control empty. */
static int adbvm_start_rc(adbvm *a, const char *name, ddmc_adb_announce fmt, uint32_t pid,
                          const uint32_t *uids, int nuids) {
  memset(a, 0, sizeof(*a));
  ddmc_options o;
  ddmc_options_init(&o);
  char err[256];
  assert_int_equal(ddmc_options_parse(&o, "-agentlib:jdwp=transport=dt_android_adb,server=y,suspend=n", err,
                                      sizeof(err)), 0);
  o.adb_announce = fmt;
  if (name) {
    snprintf(o.adb_control, sizeof(o.adb_control), "%s", name);
    snprintf(a->name, sizeof(a->name), "%s", name);
  }
  for (int i = 0; i < nuids; i++) o.adb_allowed_uids[i] = uids[i];
  o.adb_allowed_uid_count = nuids;
  ddmc_vm_ops ops;
  memset(&ops, 0, sizeof(ops));
  ops.log = log_fn;
  assert_int_equal(ddmc_vm_new(&a->vm, &o, &ops, NULL, a), 0);
  ddmc_vm_ident id = {"adbtest v1", "64-bit (x86_64)", "", 0, pid};
  assert_int_equal(ddmc_vm_set_ident(a->vm, &id), 0);
  a->pid = pid ? pid : (uint32_t)getpid();
  int rc = ddmc_vm_start(a->vm);
  if (rc != 0) {
    ddmc_vm_free(a->vm);
    a->vm = NULL;
  }
  return rc;
}

static void adbvm_start(adbvm *a, const char *name, ddmc_adb_announce fmt, uint32_t pid) {
  assert_int_equal(adbvm_start_rc(a, name, fmt, pid, NULL, 0), 0);
}

static void adbvm_stop(adbvm *a) {
  int64_t t0 = mono_ms();
  ddmc_vm_free(a->vm);
  a->vm = NULL;
  /* Nothing in the transport may block a stop on adbd. */
  assert_true(mono_ms() - t0 < 1000);
}

/* Reads a hex4 announcement and checks it. */
static void expect_hex4(int conn, const char *want) {
  char buf[8] = {0};
  assert_int_equal(read_some(conn, buf, 4, TMO), 4);
  assert_string_equal(buf, want);
  /* Nothing follows: no NUL, no newline. */
  struct pollfd p = {.fd = conn, .events = POLLIN};
  assert_int_equal(poll(&p, 1, 100), 0);
}

/* Finds, among this process's fds, another one open on the socket with inode ino (the VM's copy
 * of a descriptor we passed), skipping 'skip'. Returns it or -1. */
static int find_fd_by_inode(ino_t ino, int skip) {
  DIR *d = opendir("/proc/self/fd");
  if (d == NULL) return -1;
  int found = -1;
  struct dirent *e;
  while ((e = readdir(d)) != NULL && found < 0) {
    int fd = atoi(e->d_name);
    if (e->d_name[0] == '.' || fd == skip || fd == dirfd(d)) continue;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) && st.st_ino == ino) found = fd;
  }
  closedir(d);
  return found;
}

/* Finds the VM's control socket: the fd whose peer address is our abstract name. */
static int find_fd_by_peer(const char *name) {
  struct sockaddr_un want;
  socklen_t wl = make_addr(name, &want);
  DIR *d = opendir("/proc/self/fd");
  if (d == NULL) return -1;
  int found = -1;
  struct dirent *e;
  while ((e = readdir(d)) != NULL && found < 0) {
    int fd = atoi(e->d_name);
    if (e->d_name[0] == '.' || fd == dirfd(d)) continue;
    struct sockaddr_un sa;
    socklen_t sl = sizeof(sa);
    if (getpeername(fd, (struct sockaddr *)&sa, &sl) == 0 && sl == wl && memcmp(&sa, &want, wl) == 0) found = fd;
  }
  closedir(d);
  return found;
}

/* ------------------------------------------------------------------ tests */

static void test_hex4_fd_passing(void **state) {
  (void)state;
  reset_counters();
  char name[64];
  unique_name(name, sizeof(name));
  int l = ctl_listen(name, SOCK_STREAM);
  adbvm a;
  adbvm_start(&a, name, DDMC_ADB_HEX4_STREAM, 0x1a2b);
  int c = ctl_accept(l, TMO);
  assert_true(c >= 0);
  expect_hex4(c, "1a2b");

  /* The control socket is close-on-exec. */
  int ctl = find_fd_by_peer(name);
  assert_true(ctl >= 0);
  assert_true(fcntl(ctl, F_GETFD) & FD_CLOEXEC);

  ino_t ino;
  int near = hand_over(c, &ino);
  ddmc_host *h;
  assert_int_equal(ddmc_host_from_fd(&h, near), 0);
  assert_int_equal(ddmc_host_handshake(h, TMO), 0);
  check_hello_h(h, 0x1a2b);
  assert_true(ddmc_vm_is_connected(a.vm));
  /* The VM's copy of the debugger socket: non-blocking and close-on-exec. */
  int vfd = find_fd_by_inode(ino, near);
  assert_true(vfd >= 0);
  assert_true(fcntl(vfd, F_GETFD) & FD_CLOEXEC);
  assert_true(fcntl(vfd, F_GETFL) & O_NONBLOCK);

  /* A second jdwp:PID connection while one is live: a session of its own beside the first
   * (docs/sessions.md), as adbd hands one over per request. */
  int near2 = hand_over(c, NULL);
  ddmc_host *h2;
  assert_int_equal(ddmc_host_from_fd(&h2, near2), 0);
  assert_int_equal(ddmc_host_handshake(h2, TMO), 0);
  check_hello_h(h2, 0x1a2b);
  check_hello_h(h, 0x1a2b); /* the first one is untouched */
  assert_int_equal(atomic_load(&g_dropped), 0);
  ddmc_host_free(h2);

  /* The session ends; the same control socket hands over the next one, no re-announce. */
  ddmc_host_free(h);
  for (int i = 0; i < 200 && ddmc_vm_is_connected(a.vm); i++) sleep_ms(10);
  assert_false(ddmc_vm_is_connected(a.vm));
  near = hand_over(c, NULL);
  check_hello(near, 0x1a2b);
  assert_int_equal(atomic_load(&g_announced), 1);

  adbvm_stop(&a);
  /* The VM closed its end of the control socket. */
  assert_true(sees_eof(c, TMO));
  close(c);
  close(l);
}

static void test_hex4_long_pid_truncates(void **state) {
  (void)state;
  char name[64];
  unique_name(name, sizeof(name));
  int l = ctl_listen(name, SOCK_STREAM);
  adbvm a;
  adbvm_start(&a, name, DDMC_ADB_HEX4_STREAM, 0x12345);
  int c = ctl_accept(l, TMO);
  assert_true(c >= 0);
  expect_hex4(c, "1234"); /* Dalvik's snprintf(buf, 5, "%04x") */
  /* Small pids are zero-padded. */
  adbvm_stop(&a);
  close(c);
  adbvm_start(&a, name, DDMC_ADB_HEX4_STREAM, 0x2a);
  c = ctl_accept(l, TMO);
  assert_true(c >= 0);
  expect_hex4(c, "002a");
  adbvm_stop(&a);
  close(c);
  close(l);
}

static void test_raw32_seqpacket(void **state) {
  (void)state;
  char name[64];
  unique_name(name, sizeof(name));
  int l = ctl_listen(name, SOCK_SEQPACKET);
  adbvm a;
  adbvm_start(&a, name, DDMC_ADB_RAW32_SEQPACKET, 0x12345);
  int c = ctl_accept(l, TMO);
  assert_true(c >= 0);
  int type = 0;
  socklen_t tl = sizeof(type);
  assert_int_equal(getsockopt(c, SOL_SOCKET, SO_TYPE, &type, &tl), 0);
  assert_int_equal(type, SOCK_SEQPACKET);
  /* One message of exactly 4 bytes: the pid in host order. */
  uint8_t buf[16];
  struct pollfd p = {.fd = c, .events = POLLIN};
  assert_int_equal(poll(&p, 1, TMO), 1);
  assert_int_equal(recv(c, buf, sizeof(buf), 0), 4);
  uint32_t pid;
  memcpy(&pid, buf, 4);
  assert_int_equal(pid, 0x12345);

  int near = hand_over(c, NULL);
  check_hello(near, 0x12345);
  adbvm_stop(&a);
  close(c);
  close(l);
}

/* adbd is not there at start: the VM starts anyway and dials with back-off 500, 750, 1125... */
static void test_retry_until_adbd_appears(void **state) {
  (void)state;
  reset_counters();
  char name[64];
  unique_name(name, sizeof(name));
  adbvm a;
  int64_t t0 = mono_ms();
  adbvm_start(&a, name, DDMC_ADB_HEX4_STREAM, 0);
  assert_true(mono_ms() - t0 < 500); /* prepare does not wait for adbd */
  sleep_ms(3500);
  /* Attempts at ~0, 500, 1250, 2375 ms: four; 3 or 5 tolerate scheduling noise. A fixed
   * 500 ms interval would give 7-8, no back-off at all hundreds. */
  int n = atomic_load(&g_unreachable);
  assert_true(n >= 3 && n <= 5);
  int l = ctl_listen(name, SOCK_STREAM);
  int c = ctl_accept(l, 3000); /* the next attempt is at most 2 s away (the cap) */
  assert_true(c >= 0);
  char want[8];
  snprintf(want, sizeof(want), "%04x", (unsigned)getpid());
  want[4] = '\0';
  expect_hex4(c, want);
  int near = hand_over(c, NULL);
  check_hello(near, (uint32_t)getpid());
  adbvm_stop(&a);
  close(c);
  close(l);
}

/* The back-off never gives up (Dalvik stopped after 5): after 10 s of no adbd it still dials,
 * at the 2 s cap. */
static void test_retry_forever_capped(void **state) {
  (void)state;
  reset_counters();
  char name[64];
  unique_name(name, sizeof(name));
  adbvm a;
  adbvm_start(&a, name, DDMC_ADB_HEX4_STREAM, 0);
  sleep_ms(9000);
  int n1 = atomic_load(&g_unreachable);
  /* 0, .5, 1.25, 2.375, 4.06, 6.06, 8.06 -> 7 attempts (6..8 with noise). */
  assert_true(n1 >= 6 && n1 <= 8);
  sleep_ms(4100);
  int n2 = atomic_load(&g_unreachable);
  assert_true(n2 - n1 >= 2 && n2 - n1 <= 3); /* every 2 s */
  int l = ctl_listen(name, SOCK_STREAM);
  int c = ctl_accept(l, 3000);
  assert_true(c >= 0);
  adbvm_stop(&a);
  close(c);
  close(l);
}

/* adbd dies while the VM waits for a debugger: the VM re-dials and announces again. */
static void test_control_dies_while_idle(void **state) {
  (void)state;
  reset_counters();
  char name[64];
  unique_name(name, sizeof(name));
  int l = ctl_listen(name, SOCK_STREAM);
  adbvm a;
  adbvm_start(&a, name, DDMC_ADB_HEX4_STREAM, 0x4321);
  int c = ctl_accept(l, TMO);
  assert_true(c >= 0);
  expect_hex4(c, "4321");
  /* adbd restarts: the old listener and connection go, a new one comes up. */
  close(c);
  close(l);
  sleep_ms(200);
  l = ctl_listen(name, SOCK_STREAM);
  c = ctl_accept(l, 3000);
  assert_true(c >= 0);
  expect_hex4(c, "4321");
  assert_int_equal(atomic_load(&g_announced), 2);
  int near = hand_over(c, NULL);
  check_hello(near, 0x4321);
  adbvm_stop(&a);
  close(c);
  close(l);
}

/* adbd dies during a session: the session goes on; once it ends the VM re-dials. */
static void test_control_dies_during_session(void **state) {
  (void)state;
  reset_counters();
  char name[64];
  unique_name(name, sizeof(name));
  int l = ctl_listen(name, SOCK_STREAM);
  adbvm a;
  adbvm_start(&a, name, DDMC_ADB_HEX4_STREAM, 0x0777);
  int c = ctl_accept(l, TMO);
  assert_true(c >= 0);
  expect_hex4(c, "0777");
  int near = hand_over(c, NULL);
  ddmc_host *h;
  assert_int_equal(ddmc_host_from_fd(&h, near), 0);
  assert_int_equal(ddmc_host_handshake(h, TMO), 0);
  check_hello_h(h, 0x777);
  close(c);
  close(l);
  sleep_ms(300);
  /* The VM noticed (its control fd is gone) but the debugger still works. */
  assert_int_equal(find_fd_by_peer(name), -1);
  check_hello_h(h, 0x777);
  assert_true(ddmc_vm_is_connected(a.vm));
  /* adbd is back; the VM dials again only after the session. */
  l = ctl_listen(name, SOCK_STREAM);
  assert_int_equal(ctl_accept(l, 700), -1);
  ddmc_host_free(h);
  c = ctl_accept(l, 3000);
  assert_true(c >= 0);
  expect_hex4(c, "0777");
  near = hand_over(c, NULL);
  check_hello(near, 0x777);
  adbvm_stop(&a);
  close(c);
  close(l);
}

/* adbd sends one byte with each descriptor. Bytes without one mean the control stream is not
 * what it should be: the VM drops it and dials again, and the new one works. */
static void test_message_without_fd(void **state) {
  (void)state;
  reset_counters();
  char name[64];
  unique_name(name, sizeof(name));
  int l = ctl_listen(name, SOCK_STREAM);
  adbvm a;
  adbvm_start(&a, name, DDMC_ADB_HEX4_STREAM, 0x1111);
  int c = ctl_accept(l, TMO);
  assert_true(c >= 0);
  expect_hex4(c, "1111");
  assert_int_equal(send(c, "x", 1, MSG_NOSIGNAL), 1);
  assert_true(sees_eof(c, TMO)); /* dropped */
  close(c);
  c = ctl_accept(l, 3000); /* and dialled again */
  assert_true(c >= 0);
  expect_hex4(c, "1111");
  int near = hand_over(c, NULL);
  check_hello(near, 0x1111);
  adbvm_stop(&a);
  close(c);
  close(l);
}

/* 100,000 stray bytes used to be read one recvmsg per byte and logged as 100,001 WARN lines
 * (a fifth of a core; with stderr on an undrained pipe the JDWP thread blocked in the log hook).
 * Now: one bulk read, one line, the control socket dropped, a re-dial with the pid after one
 * back-off step, and the descriptor passed on the new connection is served at once. */
static void test_stray_bytes_flood(void **state) {
  (void)state;
  reset_counters();
  char name[64];
  unique_name(name, sizeof(name));
  int l = ctl_listen(name, SOCK_STREAM);
  adbvm a;
  adbvm_start(&a, name, DDMC_ADB_HEX4_STREAM, 0x2222);
  int c = ctl_accept(l, TMO);
  assert_true(c >= 0);
  expect_hex4(c, "2222");
  int64_t cpu0 = cpu_ms();
  flood(c, 100000, 100000);
  assert_true(sees_eof(c, TMO)); /* (b) the VM dropped the broken control socket... */
  close(c);
  int64_t t0 = mono_ms();
  c = ctl_accept(l, 3000); /* ...and dialled again, announcing the pid */
  assert_true(c >= 0);
  expect_hex4(c, "2222");
  int near = hand_over(c, NULL);
  check_hello(near, 0x2222);                  /* (c) a peer over the passed descriptor... */
  assert_true(mono_ms() - t0 < 2500);         /* ...within one back-off step and then some */
  assert_true(atomic_load(&g_warnings) <= 3); /* (a) a line or so, not 100,001 */
  assert_int_equal(atomic_load(&g_announced), 2);
  if (getenv("DDMC_TEST_VERBOSE"))
    fprintf(stderr, "stray-bytes flood: %lld ms CPU (process, incl. the sender), %d WARN line(s)\n",
            (long long)(cpu_ms() - cpu0), atomic_load(&g_warnings));
  adbvm_stop(&a);
  close(c);
  close(l);
}

/* The same on SOCK_SEQPACKET (raw32): a storm of 1-byte messages without a descriptor. The first
 * one breaks the control socket; the rest never cost a read or a line. */
static void test_stray_messages_seqpacket(void **state) {
  (void)state;
  reset_counters();
  char name[64];
  unique_name(name, sizeof(name));
  int l = ctl_listen(name, SOCK_SEQPACKET);
  adbvm a;
  adbvm_start(&a, name, DDMC_ADB_RAW32_SEQPACKET, 0x4444);
  int c = ctl_accept(l, TMO);
  assert_true(c >= 0);
  expect_raw32(c, 0x4444);
  size_t sent = flood(c, 100000, 1);
  assert_true(sees_eof(c, TMO));
  assert_true(sent < 100000); /* the VM closed it long before the storm was over */
  close(c);
  c = ctl_accept(l, 3000);
  assert_true(c >= 0);
  expect_raw32(c, 0x4444);
  int near = hand_over(c, NULL);
  check_hello(near, 0x4444);
  assert_true(atomic_load(&g_warnings) <= 3);
  assert_int_equal(atomic_load(&g_announced), 2);
  adbvm_stop(&a);
  close(c);
  close(l);
}

/* Stray bytes while a session is live (the control socket is in the session's poll set): the
 * control socket is dropped in one read, the session goes on, and the VM re-dials once it ends.
 * Before, the session loop woke once per byte, 100,000 times, each with a WARN line. */
static void test_stray_bytes_during_session(void **state) {
  (void)state;
  reset_counters();
  char name[64];
  unique_name(name, sizeof(name));
  int l = ctl_listen(name, SOCK_STREAM);
  adbvm a;
  adbvm_start(&a, name, DDMC_ADB_HEX4_STREAM, 0x0888);
  int c = ctl_accept(l, TMO);
  assert_true(c >= 0);
  expect_hex4(c, "0888");
  int near = hand_over(c, NULL);
  ddmc_host *h;
  assert_int_equal(ddmc_host_from_fd(&h, near), 0);
  assert_int_equal(ddmc_host_handshake(h, TMO), 0);
  check_hello_h(h, 0x888);
  flood(c, 100000, 100000);
  assert_true(sees_eof(c, TMO));
  close(c);
  assert_int_equal(find_fd_by_peer(name), -1); /* the VM's control fd is gone */
  check_hello_h(h, 0x888);                     /* the debugger is untouched */
  assert_true(ddmc_vm_is_connected(a.vm));
  assert_int_equal(ctl_accept(l, 300), -1); /* no re-dial while the session is live */
  ddmc_host_free(h);
  c = ctl_accept(l, 3000);
  assert_true(c >= 0);
  expect_hex4(c, "0888");
  near = hand_over(c, NULL);
  check_hello(near, 0x888);
  assert_true(atomic_load(&g_warnings) <= 3);
  adbvm_stop(&a);
  close(c);
  close(l);
}

/* A descriptor that arrives with stray bytes in the same read is still taken, with one line for
 * the bytes; the control socket is kept. */
static void test_fd_with_stray_bytes(void **state) {
  (void)state;
  reset_counters();
  char name[64];
  unique_name(name, sizeof(name));
  int l = ctl_listen(name, SOCK_STREAM);
  adbvm a;
  adbvm_start(&a, name, DDMC_ADB_HEX4_STREAM, 0x3333);
  int c = ctl_accept(l, TMO);
  assert_true(c >= 0);
  expect_hex4(c, "3333");
  int sv[2];
  assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  char bytes[16] = "0123456789abcdef";
  assert_int_equal(send_fds(c, &sv[1], 1, bytes, sizeof(bytes)), (ssize_t)sizeof(bytes));
  close(sv[1]);
  ddmc_host *h;
  assert_int_equal(ddmc_host_from_fd(&h, sv[0]), 0);
  assert_int_equal(ddmc_host_handshake(h, TMO), 0);
  check_hello_h(h, 0x3333);
  assert_int_equal(atomic_load(&g_announced), 1); /* the control socket was kept */
  assert_true(find_fd_by_peer(name) >= 0);
  /* One line for the 15 extra bytes (before: one per byte, read in the live session's loop). */
  assert_int_equal(atomic_load(&g_warnings), 1);
  /* The control socket still works: a second connection is served beside the first. */
  int near2 = hand_over(c, NULL);
  ddmc_host *h2;
  assert_int_equal(ddmc_host_from_fd(&h2, near2), 0);
  assert_int_equal(ddmc_host_handshake(h2, TMO), 0);
  check_hello_h(h2, 0x3333);
  ddmc_host_free(h2);
  check_hello_h(h, 0x3333);
  ddmc_host_free(h);
  adbvm_stop(&a);
  close(c);
  close(l);
}

/* Ten descriptors in one message: the first is the debugger, the other nine are closed (seven by
 * the VM, two by the kernel for want of room), one line for all. */
static void test_extra_fds_closed(void **state) {
  (void)state;
  reset_counters();
  char name[64];
  unique_name(name, sizeof(name));
  int l = ctl_listen(name, SOCK_STREAM);
  adbvm a;
  adbvm_start(&a, name, DDMC_ADB_HEX4_STREAM, 0x5151);
  int c = ctl_accept(l, TMO);
  assert_true(c >= 0);
  expect_hex4(c, "5151");
  int near[10], far[10];
  for (int i = 0; i < 10; i++) {
    int sv[2];
    assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    near[i] = sv[0];
    far[i] = sv[1];
  }
  assert_int_equal(send_fds(c, far, 10, "!", 1), 1);
  for (int i = 0; i < 10; i++) close(far[i]);
  for (int i = 1; i < 10; i++) {
    assert_true(sees_eof(near[i], TMO)); /* closed, not leaked */
    close(near[i]);
  }
  check_hello(near[0], 0x5151);
  assert_int_equal(atomic_load(&g_warnings), 1);
  assert_int_equal(atomic_load(&g_announced), 1);
  adbvm_stop(&a);
  close(c);
  close(l);
}

/* SOCK_SEQPACKET can carry a descriptor in a 0-byte message. recvmsg returns 0 for it, which is
 * not EOF: the descriptor is taken (before, it was taken for EOF, leaked, and the control
 * socket re-dialed). */
static void test_seqpacket_fd_without_bytes(void **state) {
  (void)state;
  reset_counters();
  char name[64];
  unique_name(name, sizeof(name));
  int l = ctl_listen(name, SOCK_SEQPACKET);
  adbvm a;
  adbvm_start(&a, name, DDMC_ADB_RAW32_SEQPACKET, 0x6161);
  int c = ctl_accept(l, TMO);
  assert_true(c >= 0);
  expect_raw32(c, 0x6161);
  int sv[2];
  assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  assert_int_equal(send_fds(c, &sv[1], 1, NULL, 0), 0);
  close(sv[1]);
  check_hello(sv[0], 0x6161);
  assert_int_equal(atomic_load(&g_announced), 1);
  assert_true(atomic_load(&g_warnings) <= 1);
  adbvm_stop(&a);
  close(c);
  close(l);
}

/* SO_PEERCRED: an adbd whose uid is not in the set is dropped before the pid goes out, and the
 * VM tries again later, with back-off. */
static void test_peercred_rejected(void **state) {
  (void)state;
  reset_counters();
  char name[64];
  unique_name(name, sizeof(name));
  int l = ctl_listen(name, SOCK_STREAM);
  uint32_t uids[1] = {(uint32_t)getuid() + 4242u};
  adbvm a;
  assert_int_equal(adbvm_start_rc(&a, name, DDMC_ADB_HEX4_STREAM, 0x2222, uids, 1), 0);
  int c = ctl_accept(l, TMO);
  assert_true(c >= 0);
  int64_t t1 = mono_ms();
  char buf[8];
  assert_int_equal(read_some(c, buf, 4, TMO), 0); /* EOF, no announcement */
  close(c);
  c = ctl_accept(l, TMO);
  assert_true(c >= 0);
  assert_true(mono_ms() - t1 >= 350); /* backed off, not a busy loop */
  assert_int_equal(read_some(c, buf, 4, TMO), 0);
  close(c);
  assert_true(atomic_load(&g_untrusted) >= 2);
  assert_int_equal(atomic_load(&g_announced), 0);
  adbvm_stop(&a);

  /* The same adbd with our uid in the set is accepted. */
  uids[0] = (uint32_t)getuid();
  uint32_t two[2] = {12345u, (uint32_t)getuid()};
  assert_int_equal(adbvm_start_rc(&a, name, DDMC_ADB_HEX4_STREAM, 0x2222, two, 2), 0);
  c = ctl_accept(l, TMO);
  assert_true(c >= 0);
  expect_hex4(c, "2222");
  adbvm_stop(&a);
  close(c);
  close(l);
}

/* The default set is root, shell and our own uid: an adbd run as us passes. */
static void test_peercred_default_set(void **state) {
  (void)state;
  char name[64];
  unique_name(name, sizeof(name));
  int l = ctl_listen(name, SOCK_STREAM);
  adbvm a;
  assert_int_equal(adbvm_start_rc(&a, name, DDMC_ADB_HEX4_STREAM, 0x3333, NULL, 0), 0);
  int c = ctl_accept(l, TMO);
  assert_true(c >= 0);
  expect_hex4(c, "3333");
  adbvm_stop(&a);
  close(c);
  close(l);
}

/* $DDMC_ADB_CONTROL names the socket when options.adb_control is empty; the option wins. */
static void test_name_from_env(void **state) {
  (void)state;
  char name[64], other[64];
  unique_name(name, sizeof(name));
  unique_name(other, sizeof(other));
  int l = ctl_listen(name, SOCK_STREAM);
  setenv("DDMC_ADB_CONTROL", name, 1);
  adbvm a;
  adbvm_start(&a, NULL, DDMC_ADB_HEX4_STREAM, 0x5555);
  int c = ctl_accept(l, TMO);
  assert_true(c >= 0);
  expect_hex4(c, "5555");
  adbvm_stop(&a);
  close(c);

  int l2 = ctl_listen(other, SOCK_STREAM);
  adbvm_start(&a, other, DDMC_ADB_HEX4_STREAM, 0x6666);
  c = ctl_accept(l2, TMO);
  assert_true(c >= 0);
  expect_hex4(c, "6666");
  assert_int_equal(ctl_accept(l, 300), -1);
  adbvm_stop(&a);
  close(c);
  close(l2);
  close(l);
  unsetenv("DDMC_ADB_CONTROL");
}

static void test_bad_names(void **state) {
  (void)state;
  adbvm a;
  assert_int_equal(adbvm_start_rc(&a, "@", DDMC_ADB_HEX4_STREAM, 0, NULL, 0), DDMC_EADDR);
  char longname[120];
  memset(longname, 'x', sizeof(longname));
  longname[0] = '@';
  longname[sizeof(longname) - 1] = '\0';
  setenv("DDMC_ADB_CONTROL", longname, 1);
  assert_int_equal(adbvm_start_rc(&a, NULL, DDMC_ADB_HEX4_STREAM, 0, NULL, 0), DDMC_EADDR);
  unsetenv("DDMC_ADB_CONTROL");
  /* The longest abstract name that fits is fine (and nobody is there). */
  char maxname[108];
  memset(maxname, 'y', sizeof(maxname));
  maxname[0] = '@';
  maxname[107] = '\0';
  assert_int_equal(adbvm_start_rc(&a, maxname, DDMC_ADB_HEX4_STREAM, 0, NULL, 0), 0);
  adbvm_stop(&a);
  /* A filesystem path works too. */
  char path[64];
  snprintf(path, sizeof(path), "/tmp/ddmc-adb-test-%d.sock", (int)getpid());
  unlink(path);
  struct sockaddr_un sa;
  memset(&sa, 0, sizeof(sa));
  sa.sun_family = AF_UNIX;
  snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
  int l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  assert_int_equal(bind(l, (struct sockaddr *)&sa, sizeof(sa)), 0);
  assert_int_equal(listen(l, 4), 0);
  assert_int_equal(adbvm_start_rc(&a, path, DDMC_ADB_HEX4_STREAM, 0x7777, NULL, 0), 0);
  int c = ctl_accept(l, TMO);
  assert_true(c >= 0);
  expect_hex4(c, "7777");
  adbvm_stop(&a);
  close(c);
  close(l);
  unlink(path);
}

/* ddmc_vm_stop returns promptly in every state: dialing, waiting for a descriptor, in a session. */
static void test_stop_is_prompt(void **state) {
  (void)state;
  char name[64];
  unique_name(name, sizeof(name));
  adbvm a;
  adbvm_start(&a, name, DDMC_ADB_HEX4_STREAM, 0);
  sleep_ms(1300); /* inside a back-off sleep */
  adbvm_stop(&a);

  int l = ctl_listen(name, SOCK_STREAM);
  adbvm_start(&a, name, DDMC_ADB_RAW32_SEQPACKET, 0);
  /* A stream listener for a seqpacket client: connect fails (EPROTOTYPE), back-off, stop. */
  sleep_ms(300);
  adbvm_stop(&a);
  close(l);

  l = ctl_listen(name, SOCK_STREAM);
  adbvm_start(&a, name, DDMC_ADB_HEX4_STREAM, 0);
  int c = ctl_accept(l, TMO);
  assert_true(c >= 0);
  sleep_ms(100);
  adbvm_stop(&a); /* waiting for a descriptor */

  adbvm_start(&a, name, DDMC_ADB_HEX4_STREAM, 0x99);
  int c2 = ctl_accept(l, TMO);
  assert_true(c2 >= 0);
  expect_hex4(c2, "0099");
  int near = hand_over(c2, NULL);
  ddmc_host *h;
  assert_int_equal(ddmc_host_from_fd(&h, near), 0);
  assert_int_equal(ddmc_host_handshake(h, TMO), 0);
  adbvm_stop(&a); /* in a session */
  ddmc_host_free(h);
  close(c);
  close(c2);
  close(l);
}

/* suspend=y over adb: start blocks until adbd hands over a debugger and it shakes hands. */
typedef struct {
  char name[64];
  atomic_int done;
} susp_arg;

static void *adbd_thread(void *p) {
  susp_arg *s = p;
  int l = ctl_listen(s->name, SOCK_STREAM);
  int c = ctl_accept(l, TMO);
  if (c >= 0) {
    char buf[4];
    read_some(c, buf, 4, TMO);
    sleep_ms(300);
    int near = hand_over(c, NULL);
    ddmc_host *h;
    if (ddmc_host_from_fd(&h, near) == 0) {
      ddmc_host_handshake(h, TMO);
      while (!atomic_load(&s->done)) sleep_ms(10);
      ddmc_host_free(h);
    }
    close(c);
  }
  close(l);
  return NULL;
}

static void test_suspend_y(void **state) {
  (void)state;
  susp_arg s;
  unique_name(s.name, sizeof(s.name));
  atomic_init(&s.done, 0);
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, adbd_thread, &s), 0);
  ddmc_options o;
  ddmc_options_init(&o);
  char err[256];
  assert_int_equal(ddmc_options_parse(&o, "transport=dt_android_adb,suspend=y", err, sizeof(err)), 0);
  snprintf(o.adb_control, sizeof(o.adb_control), "%s", s.name);
  ddmc_vm_ops ops;
  memset(&ops, 0, sizeof(ops));
  ops.log = log_fn;
  ddmc_vm *vm;
  assert_int_equal(ddmc_vm_new(&vm, &o, &ops, NULL, NULL), 0);
  int64_t t0 = mono_ms();
  assert_int_equal(ddmc_vm_start(vm), 0);
  assert_true(mono_ms() - t0 >= 250);
  assert_true(ddmc_vm_is_connected(vm));
  atomic_store(&s.done, 1);
  pthread_join(t, NULL);
  ddmc_vm_free(vm);
}

int main(void) {
  alarm(150);
  signal(SIGPIPE, SIG_DFL); /* the library must never raise it */
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hex4_fd_passing),
      cmocka_unit_test(test_hex4_long_pid_truncates),
      cmocka_unit_test(test_raw32_seqpacket),
      cmocka_unit_test(test_retry_until_adbd_appears),
      cmocka_unit_test(test_retry_forever_capped),
      cmocka_unit_test(test_control_dies_while_idle),
      cmocka_unit_test(test_control_dies_during_session),
      cmocka_unit_test(test_message_without_fd),
      cmocka_unit_test(test_stray_bytes_flood),
      cmocka_unit_test(test_stray_messages_seqpacket),
      cmocka_unit_test(test_stray_bytes_during_session),
      cmocka_unit_test(test_fd_with_stray_bytes),
      cmocka_unit_test(test_extra_fds_closed),
      cmocka_unit_test(test_seqpacket_fd_without_bytes),
      cmocka_unit_test(test_peercred_rejected),
      cmocka_unit_test(test_peercred_default_set),
      cmocka_unit_test(test_name_from_env),
      cmocka_unit_test(test_bad_names),
      cmocka_unit_test(test_stop_is_prompt),
      cmocka_unit_test(test_suspend_y),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
