/* SPDX-License-Identifier: Apache-2.0 */
/* dt_android_adb: the VM side of adbd's @jdwp-control socket
 * (docs/protocol/ddm-wire.md §5).
 *
 * The JDWP thread connects to the control socket, checks that the peer is a trusted uid
 * (SO_PEERCRED), announces the pid, and then waits for adbd to hand over each debugger
 * connection as a descriptor (SCM_RIGHTS, one fd per message with a 1-byte payload). The
 * descriptor is the session's socket; thread.c speaks JDWP on it. While a session is live the
 * control socket stays in the session's poll set: a second descriptor is received and closed at
 * once ("Ignoring second debugger -- accepting and dropping", Dalvik), and a failed receive there
 * means adbd went away, so the control socket is closed and re-dialed after the session. Bytes
 * without a descriptor count as such a failure (adb_recv_fd says why): they are read 4 KiB at a
 * time, logged in one line, and the control socket is re-dialed; they never cost a read and a log
 * line per byte.
 *
 * When adbd is not there, or the control socket breaks, the thread re-dials forever with back-off
 * (500 ms, x1.5, capped at 2 s) until ddmc_vm_stop. Dalvik gave up for good after 5 failures in
 * one accept; ART's adbconnection has no limit, and neither has this.
 *
 * The socket name is options.adb_control if non-empty, else $DDMC_ADB_CONTROL, else
 * "@jdwp-control"; a leading '@' means the Linux abstract namespace (no trailing NUL in the
 * address, as adbd binds it). prepare() resolves and checks the name only: adbd may start later.
 *
 * Announcement formats (options.adb_announce):
 *   DDMC_ADB_HEX4_STREAM      SOCK_STREAM, "%04x" of the pid, 4 bytes, no NUL (Android 1-7). A pid
 *                             over 0xffff is cut to its first 4 hex digits, as Dalvik's
 *                             snprintf(buf, 5, "%04x") did; a warning says so.
 *   DDMC_ADB_RAW32_SEQPACKET  SOCK_SEQPACKET, the pid as a host-order u32 (Android 9-11).
 *
 * Every descriptor is close-on-exec (the received ones through MSG_CMSG_CLOEXEC) and every call
 * is non-blocking, so ddmc_vm_stop never waits on adbd. Sends use MSG_NOSIGNAL: no SIGPIPE.
 * Only the JDWP thread touches vm->listen_fd (the control socket) after prepare, and shutdown
 * runs once that thread has been joined. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "vm_int.h"

#define ADB_DEFAULT_CONTROL "@jdwp-control"
#define ADB_ENV_CONTROL "DDMC_ADB_CONTROL"
#define ADB_BACKOFF_FIRST_MS 500
#define ADB_BACKOFF_MAX_MS 2000
#define ADB_UID_SHELL 2000u

/* Builds the socket address for name ('@' = abstract). Returns the address length, or 0 when the
 * name is empty or does not fit. */
static socklen_t adb_make_addr(const char *name, struct sockaddr_un *sa) {
  memset(sa, 0, sizeof(*sa));
  sa->sun_family = AF_UNIX;
  size_t n = strlen(name);
  if (name[0] == '@') {
    /* Abstract: sun_path[0] = NUL, then the name with no terminator; the length says where it
     * ends (adbd binds "\0jdwp-control" with offsetof + 13). */
    if (n < 2 || n > sizeof(sa->sun_path)) return 0;
    memcpy(sa->sun_path + 1, name + 1, n - 1);
    return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n);
  }
  if (n == 0 || n >= sizeof(sa->sun_path)) return 0;
  memcpy(sa->sun_path, name, n);
  return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n + 1);
}

static int adb_prepare(ddmc_vm *vm) {
  /* vm->opt is the VM's private copy: the resolved name is kept there for acquire(). */
  if (vm->opt.adb_control[0] == '\0') {
    const char *env = getenv(ADB_ENV_CONTROL);
    const char *name = (env != NULL && env[0] != '\0') ? env : ADB_DEFAULT_CONTROL;
    size_t n = strlen(name);
    if (n >= sizeof(vm->opt.adb_control)) {
      ddmc__log(vm, DDMC_LOG_ERROR, "JDWP: adb control socket name from $%s is too long (%zu bytes)", ADB_ENV_CONTROL,
                n);
      return DDMC_EADDR;
    }
    memcpy(vm->opt.adb_control, name, n + 1);
  }
  struct sockaddr_un sa;
  if (memchr(vm->opt.adb_control, '\0', sizeof(vm->opt.adb_control)) == NULL ||
      adb_make_addr(vm->opt.adb_control, &sa) == 0) {
    ddmc__log(vm, DDMC_LOG_ERROR, "JDWP: bad adb control socket name '%.*s'", (int)sizeof(vm->opt.adb_control),
              vm->opt.adb_control);
    return DDMC_EADDR;
  }
  if (vm->opt.adb_announce != DDMC_ADB_HEX4_STREAM && vm->opt.adb_announce != DDMC_ADB_RAW32_SEQPACKET) {
    ddmc__log(vm, DDMC_LOG_ERROR, "JDWP: unknown adb announcement format %d", (int)vm->opt.adb_announce);
    return DDMC_EINVAL;
  }
  int nuid = vm->opt.adb_allowed_uid_count;
  if (nuid < 0 || (size_t)nuid > sizeof(vm->opt.adb_allowed_uids) / sizeof(vm->opt.adb_allowed_uids[0])) {
    ddmc__log(vm, DDMC_LOG_ERROR, "JDWP: adb_allowed_uid_count %d out of range", nuid);
    return DDMC_EINVAL;
  }
  if (nuid == 0) {
    /* root, shell (adbd's uids on a device) and our own uid (an adbd run by the same user). */
    vm->opt.adb_allowed_uids[0] = 0;
    vm->opt.adb_allowed_uids[1] = ADB_UID_SHELL;
    vm->opt.adb_allowed_uids[2] = (uint32_t)getuid();
    vm->opt.adb_allowed_uid_count = 3;
  }
  vm->listen_fd = -1;
  ddmc__log(vm, DDMC_LOG_INFO, "JDWP: dt_android_adb via %s (%s)", vm->opt.adb_control,
            vm->opt.adb_announce == DDMC_ADB_HEX4_STREAM ? "hex4/stream" : "raw32/seqpacket");
  return 0;
}

static void adb_close_control(ddmc_vm *vm) {
  if (vm->listen_fd >= 0) close(vm->listen_fd);
  vm->listen_fd = -1;
}

static int adb_peer_trusted(ddmc_vm *vm, int fd) {
  struct ucred cr;
  socklen_t len = sizeof(cr);
  if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) != 0 || len != sizeof(cr)) {
    ddmc__log(vm, DDMC_LOG_WARN, "JDWP: cannot read the adb control peer's credentials: %s", strerror(errno));
    return 0;
  }
  for (int i = 0; i < vm->opt.adb_allowed_uid_count; i++)
    if ((uint32_t)cr.uid == vm->opt.adb_allowed_uids[i]) return 1;
  ddmc__log(vm, DDMC_LOG_WARN, "JDWP: %s is served by pid %ld uid %lu, which is not trusted; disconnecting",
            vm->opt.adb_control, (long)cr.pid, (unsigned long)cr.uid);
  return 0;
}

/* Sends all n bytes of the announcement on the fresh (empty, non-blocking) socket. */
static int adb_send_all(int fd, const void *p, size_t n) {
  for (;;) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (w == (ssize_t)n) return 0;
    if (w < 0 && errno == EINTR) continue;
    if (w >= 0) errno = EIO; /* a short write of 4 bytes on an empty socket: treat as broken */
    return -1;
  }
}

/* One attempt: connect, check the peer, announce. Returns the control fd, or -1 with a reason
 * logged at 'quiet' level (DEBUG while retrying, INFO the first time). */
static int adb_dial_once(ddmc_vm *vm, int first) {
  int stream = vm->opt.adb_announce == DDMC_ADB_HEX4_STREAM;
  struct sockaddr_un sa;
  socklen_t sl = adb_make_addr(vm->opt.adb_control, &sa);
  int fd = socket(AF_UNIX, (stream ? SOCK_STREAM : SOCK_SEQPACKET) | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) {
    ddmc__log(vm, DDMC_LOG_WARN, "JDWP: socket(AF_UNIX): %s", strerror(errno));
    return -1;
  }
  int rc;
  do {
    rc = connect(fd, (struct sockaddr *)&sa, sl);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    /* ENOENT/ECONNREFUSED: adbd is not there (yet). EAGAIN: its backlog is full. */
    ddmc__log(vm, first ? DDMC_LOG_INFO : DDMC_LOG_DEBUG, "JDWP: cannot reach adbd at %s: %s", vm->opt.adb_control,
              strerror(errno));
    close(fd);
    return -1;
  }
  if (!adb_peer_trusted(vm, fd)) {
    shutdown(fd, SHUT_RDWR);
    close(fd);
    return -1;
  }
  uint32_t pid = vm->pid;
  if (stream) {
    char hex[16];
    /* "%04x" cut to 4 characters: Dalvik's snprintf(buff, 5, ...) (b/17661822). */
    snprintf(hex, sizeof(hex), "%04x", (unsigned)pid);
    if (pid > 0xffffu)
      ddmc__log(vm, DDMC_LOG_WARN, "JDWP: pid %u does not fit the 4-hex-digit adb announcement; adbd sees '%.4s'",
                (unsigned)pid, hex);
    rc = adb_send_all(fd, hex, 4);
  } else {
    rc = adb_send_all(fd, &pid, sizeof(pid)); /* host byte order, as ART sends it */
  }
  if (rc != 0) {
    ddmc__log(vm, DDMC_LOG_WARN, "JDWP: cannot announce pid %u to adbd: %s", (unsigned)pid, strerror(errno));
    close(fd);
    return -1;
  }
  ddmc__log(vm, DDMC_LOG_INFO, "JDWP: announced pid %u to adbd at %s", (unsigned)pid, vm->opt.adb_control);
  return fd;
}

/* Room for this many descriptors per message: adbd sends one, but whatever arrives must be
 * received (and closed), not left to the kernel's MSG_CTRUNC path. */
#define ADB_MAX_FDS 8

/* Receives one descriptor from the control socket. Returns the fd (>= 0); -1 when there was
 * nothing to receive (EAGAIN); -2 when the control socket is gone (EOF or error) or is not a
 * jdwp-control stream.
 *
 * adbd sends exactly one byte with each descriptor (Android 1-7: '!', jdwp_service.c; 8 on:
 * SendFileDescriptors(fd, "", 1, ...)) and never anything else after the pid. So:
 *   - Data without a descriptor means the other end does not speak the protocol, or the stream
 *     lost its framing; nothing later on it can be trusted. The whole read (up to 4 KiB at once)
 *     is logged in one line and the control socket is reported broken: the caller closes it and
 *     re-dials with back-off. Any stray byte counts, not "more than N": there is no legitimate
 *     stray byte to tolerate, and skipping them instead would cost a read (and, before, a log
 *     line) per burst for as long as the peer cares to send. Reading a byte per recvmsg and
 *     logging each cost a fifth of a core for 100,000 stray bytes and blocked the JDWP thread
 *     in a log hook whose stderr nobody drained.
 *   - A descriptor is taken whatever came with it: stray bytes glued to it in the same read
 *     (a stream socket returns earlier descriptor-less bytes together with the next message
 *     that carries one), or no byte at all (a 0-byte SOCK_SEQPACKET message can carry
 *     descriptors; before, it read as EOF and the descriptor leaked). One line says so.
 *   - Extra descriptors in one message are closed here, one line for all of them. */
static int adb_recv_fd(ddmc_vm *vm, int ctl) {
  for (;;) {
    char data[4096];
    struct iovec iov = {.iov_base = data, .iov_len = sizeof(data)};
    union {
      struct cmsghdr h;
      char buf[CMSG_SPACE(ADB_MAX_FDS * sizeof(int))];
    } cm;
    memset(&cm, 0, sizeof(cm));
    struct msghdr msg;
    memset(&msg, 0, sizeof(msg));
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cm.buf;
    msg.msg_controllen = sizeof(cm.buf);
    ssize_t n = recvmsg(ctl, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return -1;
    if (n < 0) {
      ddmc__log(vm, DDMC_LOG_INFO, "JDWP: adbd closed %s: %s", vm->opt.adb_control, strerror(errno));
      return -2;
    }
    /* Descriptors first: a 0-byte message may carry them, so n == 0 is not EOF until this
     * says there was none. */
    int fd = -1;
    size_t extra = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c != NULL; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS || c->cmsg_len < CMSG_LEN(0)) continue;
      size_t nfd = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
      for (size_t i = 0; i < nfd; i++) {
        int x;
        memcpy(&x, CMSG_DATA(c) + i * sizeof(int), sizeof(int)); /* CMSG_DATA may be unaligned */
        if (x < 0) continue;
        if (fd < 0) {
          fd = x;
        } else {
          close(x); /* one fd per message is the protocol: never leak extras */
          extra++;
        }
      }
    }
    if (extra > 0 || (msg.msg_flags & MSG_CTRUNC))
      ddmc__log(vm, DDMC_LOG_WARN, "JDWP: adbd sent several descriptors in one message; %zu extra closed%s", extra,
                (msg.msg_flags & MSG_CTRUNC) ? ", more dropped by the kernel" : "");
    if (fd < 0) {
      if (n == 0) {
        ddmc__log(vm, DDMC_LOG_INFO, "JDWP: adbd closed %s", vm->opt.adb_control);
      } else {
        ddmc__log(vm, DDMC_LOG_WARN,
                  "JDWP: %s sent %zd%s byte(s) without a descriptor: not a jdwp-control stream; re-dialing",
                  vm->opt.adb_control, n, ((size_t)n == sizeof(data) || (msg.msg_flags & MSG_TRUNC)) ? "+" : "");
      }
      return -2;
    }
    if (n == 0)
      ddmc__log(vm, DDMC_LOG_WARN, "JDWP: adbd sent a descriptor without its data byte; taken");
    else if (n > 1)
      ddmc__log(vm, DDMC_LOG_WARN, "JDWP: adbd sent a descriptor with %zd%s stray byte(s); taken, the bytes ignored",
                n - 1, ((size_t)n == sizeof(data) || (msg.msg_flags & MSG_TRUNC)) ? "+" : "");
    return fd;
  }
}

/* Sleeps *delay ms (interruptibly) and grows it: 500, 750, 1125, 1687, 2000, 2000... Returns
 * non-zero when the VM is stopping. */
static int adb_backoff(ddmc_vm *vm, int *delay) {
  if (ddmc__sleep_interruptible(vm, *delay)) return 1;
  *delay += *delay / 2;
  if (*delay > ADB_BACKOFF_MAX_MS) *delay = ADB_BACKOFF_MAX_MS;
  return 0;
}

/* A connection adbd handed over, made non-blocking; -1 (closed) when it cannot be. */
static int adb_take(ddmc_vm *vm, int fd) {
  int fl = fcntl(fd, F_GETFL);
  if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0) {
    ddmc__log(vm, DDMC_LOG_WARN, "JDWP: bad descriptor from adbd: %s", strerror(errno));
    close(fd);
    return -1;
  }
  ddmc__log(vm, DDMC_LOG_INFO, "JDWP: adbd handed over a debugger connection");
  return fd;
}

static int adb_acquire(ddmc_vm *vm) {
  int delay = ADB_BACKOFF_FIRST_MS;
  int first = 1;
  while (!atomic_load(&vm->stopping)) {
    if (vm->listen_fd < 0) {
      vm->listen_fd = adb_dial_once(vm, first);
      first = 0;
      if (vm->listen_fd < 0) {
        if (adb_backoff(vm, &delay)) break;
        continue;
      }
      first = 1; /* log the next outage once at INFO again */
    }
    if (ddmc__wait_readable(vm, vm->listen_fd)) {
      int fd = adb_recv_fd(vm, vm->listen_fd);
      if (fd == -2) {
        /* adbd restarted, died, or dropped us. Back off before re-dialing too: an adbd that
         * accepts and closes at once must not turn this into a busy loop. */
        adb_close_control(vm);
        if (adb_backoff(vm, &delay)) break;
        continue;
      }
      if (fd < 0 || (fd = adb_take(vm, fd)) < 0) continue;
      return fd;
    }
  }
  return -1;
}

static int adb_extra_fd(ddmc_vm *vm) { return vm->listen_fd; }

/* adbd's next jdwp:PID connection while sessions run: each is a session of its own. */
static int adb_accept_extra(ddmc_vm *vm) {
  int fd = adb_recv_fd(vm, vm->listen_fd);
  if (fd >= 0) return adb_take(vm, fd);
  /* -2: the control socket died; the sessions go on, and acquire() re-dials once they end. */
  if (fd == -2) adb_close_control(vm);
  return -1;
}

static void adb_session_ended(ddmc_vm *vm) { (void)vm; }

static void adb_shutdown(ddmc_vm *vm) { adb_close_control(vm); }

const ddmc__transport ddmc__jdwp_transport_adb = {
    .name = "dt_android_adb",
    .prepare = adb_prepare,
    .acquire = adb_acquire,
    .extra_fd = adb_extra_fd,
    .accept_extra = adb_accept_extra,
    .session_ended = adb_session_ended,
    .shutdown = adb_shutdown,
};
