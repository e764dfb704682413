/* SPDX-License-Identifier: Apache-2.0 */
/* dt_socket: TCP. server=y listens (127.0.0.1 unless a host is named; port 0, or none, takes any
 * free port the kernel gives, as the JDK's agent does: Dalvik scanned 8000-8040, where a debugger
 * still dialling a VM that has just exited reached the next VM to take the port) and accepts one
 * peer at a time, only from the allow= list when there is one (others are closed at once and
 * logged, and the listening goes on, as the JDK's agent does); server=n dials host:port and
 * re-dials with back-off (500 ms, x1.5, capped) after each session until the VM stops.
 *
 * Every socket is close-on-exec, so a VM that forks and execs does not leak its debug port into
 * the child. Dialing is non-blocking so ddmc_vm_stop never waits on a SYN that goes unanswered. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "vm_int.h"

static void set_peer_options(int fd) {
  int one = 1;
  /* Requests and replies are small and latency-bound. */
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

static int resolve(ddmc_vm *vm, const char *host, uint16_t port, int passive, struct addrinfo **res) {
  struct addrinfo hints;
  memset(&hints, 0, sizeof(hints));
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = passive ? AI_PASSIVE : 0;
  char ports[8];
  snprintf(ports, sizeof(ports), "%u", (unsigned)port);
  errno = 0;
  int rc = getaddrinfo(host, ports, &hints, res);
  if (rc != 0) {
    /* EAI_SYSTEM's own text is "System error": the problem is in errno. */
    const char *why = rc == EAI_SYSTEM && errno != 0 ? strerror(errno) : gai_strerror(rc);
    ddmc__log(vm, DDMC_LOG_ERROR, "JDWP: cannot resolve '%s': %s", host, why);
    return DDMC_EADDR;
  }
  return 0;
}

/* A port in use on any of the host's addresses makes the port "in use", whatever the other
 * addresses said: "localhost" may be ::1 on a machine without IPv6 (EADDRNOTAVAIL) and
 * 127.0.0.1 taken, and "in use" is the reason a user can act on. */
static void note_failure(int *why, int err) {
  if (*why != EADDRINUSE) *why = err;
}

/* Returns a listening fd, -2 when host does not resolve (already logged), or -1 with *why set to
 * the errno of the step that failed. A normal backlog: with a short one a connect storm drops
 * SYNs and stalls the clients that retry a second later. */
static int try_listen(ddmc_vm *vm, const char *host, uint16_t port, int *why) {
  struct addrinfo *res;
  if (resolve(vm, host, port, 1, &res) != 0) return -2;
  int fd = -1;
  *why = EADDRNOTAVAIL;
  for (struct addrinfo *ai = res; ai != NULL; ai = ai->ai_next) {
    fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0) {
      note_failure(why, errno);
      continue;
    }
    int one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, SOMAXCONN) == 0) break;
    note_failure(why, errno);
    close(fd);
    fd = -1;
  }
  freeaddrinfo(res);
  return fd;
}

static int socket_prepare(ddmc_vm *vm) {
  if (!vm->opt.server) return 0; /* dialing happens on the JDWP thread */
  const char *host = vm->opt.host[0] ? vm->opt.host : "127.0.0.1";
  int why = 0;
  uint16_t port = vm->opt.port;
  int fd = try_listen(vm, host, port, &why);
  if (fd == -2) return DDMC_EADDR; /* resolve() said why */
  if (fd < 0) {
    ddmc__log(vm, DDMC_LOG_ERROR, "JDWP: cannot listen on %s:%u: %s", host, (unsigned)port, strerror(why));
    return DDMC_EADDR;
  }
  /* Port 0: report the one the kernel gave. */
  struct sockaddr_storage ss;
  socklen_t sl = sizeof(ss);
  if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
    if (ss.ss_family == AF_INET) port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
    else if (ss.ss_family == AF_INET6) port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
  }
  vm->listen_fd = fd;
  atomic_store(&vm->port, port);
  ddmc__log(vm, DDMC_LOG_INFO, "JDWP listening on %s:%u", host, (unsigned)port);
  return 0;
}

static int accept_one(ddmc_vm *vm, struct sockaddr_storage *ss) {
  for (;;) {
    socklen_t sl = sizeof(*ss);
    int fd = accept4(vm->listen_fd, (struct sockaddr *)ss, &sl, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0) return fd;
    if (errno == EINTR || errno == ECONNABORTED) continue;
    return -1;
  }
}

/* allow=: the first `bits` bits of the peer's address match an entry's. An IPv4 peer on an IPv6
 * socket (::ffff:a.b.c.d) is matched as IPv4. */
static int peer_allowed(const ddmc_options *o, const struct sockaddr_storage *ss) {
  if (o->allow_count == 0) return 1;
  uint8_t a[16];
  int family;
  if (ss->ss_family == AF_INET) {
    memcpy(a, &((const struct sockaddr_in *)ss)->sin_addr, 4);
    family = 4;
  } else if (ss->ss_family == AF_INET6) {
    const struct in6_addr *v6 = &((const struct sockaddr_in6 *)ss)->sin6_addr;
    family = IN6_IS_ADDR_V4MAPPED(v6) ? 4 : 6;
    memcpy(a, family == 4 ? v6->s6_addr + 12 : v6->s6_addr, family == 4 ? 4 : 16);
  } else {
    return 0;
  }
  for (int i = 0; i < o->allow_count; i++) {
    const struct ddmc_allow_entry *e = &o->allow[i];
    if (e->family != family) continue;
    int full = e->bits / 8, rest = e->bits % 8;
    if (memcmp(a, e->addr, (size_t)full) != 0) continue;
    if (rest && ((a[full] ^ e->addr[full]) & (uint8_t)(0xff << (8 - rest)))) continue;
    return 1;
  }
  return 0;
}

static void log_refused_peer(ddmc_vm *vm, const struct sockaddr_storage *ss) {
  char host[64] = "?";
  getnameinfo((const struct sockaddr *)ss, sizeof(*ss), host, sizeof(host), NULL, 0, NI_NUMERICHOST);
  ddmc__log(vm, DDMC_LOG_WARN, "JDWP: peer %s not allowed to connect (allow=)", host);
}

/* timeout=: when this wait for a peer gives up (-1: never). */
static int64_t acquire_deadline(const ddmc_vm *vm) {
  return vm->opt.timeout_ms > 0 ? ddmc__now_ms() + vm->opt.timeout_ms : -1;
}

static int socket_acquire_listen(ddmc_vm *vm) {
  int64_t deadline = acquire_deadline(vm);
  while (!atomic_load(&vm->stopping)) {
    if (deadline >= 0 && ddmc__now_ms() >= deadline) {
      atomic_store(&vm->timed_out, 1);
      return -1;
    }
    if (ddmc__wait_readable_until(vm, vm->listen_fd, deadline)) {
      struct sockaddr_storage ss;
      int fd = accept_one(vm, &ss);
      if (fd >= 0 && !peer_allowed(&vm->opt, &ss)) {
        log_refused_peer(vm, &ss);
        close(fd);
        continue;
      }
      if (fd >= 0) {
        set_peer_options(fd);
        return fd;
      }
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        /* EMFILE and friends: back off instead of spinning on a listen fd that stays readable. */
        ddmc__log(vm, DDMC_LOG_WARN, "JDWP: accept: %s", strerror(errno));
        ddmc__sleep_interruptible(vm, 100);
      }
    }
  }
  return -1;
}

/* Waits for a non-blocking connect to finish (10 s at most, or until woken). Returns 0, or the
 * errno-style reason it did not connect. */
static int connect_result(ddmc_vm *vm, int fd) {
  struct pollfd p[2] = {{.fd = fd, .events = POLLOUT}, {.fd = vm->wake_fd, .events = POLLIN}};
  int rc;
  do {
    rc = poll(p, 2, 10000);
  } while (rc < 0 && errno == EINTR);
  if (rc < 0) return errno;
  if (!(p[0].revents & (POLLOUT | POLLERR | POLLHUP))) return rc == 0 ? ETIMEDOUT : EINTR; /* EINTR: woken */
  int soerr = 0;
  socklen_t sl = sizeof(soerr);
  if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0) return errno;
  return soerr;
}

/* One non-blocking connect attempt, bounded and interruptible. On failure *why is the errno of
 * the last address tried (0 when the host did not resolve: resolve() logged that). */
static int dial_once(ddmc_vm *vm, int *why) {
  struct addrinfo *res;
  *why = 0;
  if (resolve(vm, vm->opt.host, vm->opt.port, 0, &res) != 0) return -1;
  int out = -1;
  for (struct addrinfo *ai = res; ai != NULL && out < 0 && !atomic_load(&vm->stopping); ai = ai->ai_next) {
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    if (fd < 0) {
      *why = errno;
      continue;
    }
    int rc = connect(fd, ai->ai_addr, ai->ai_addrlen);
    if (rc != 0) rc = errno == EINPROGRESS ? connect_result(vm, fd) : errno;
    *why = rc;
    if (rc == 0) {
      set_peer_options(fd);
      out = fd;
    } else {
      close(fd);
    }
  }
  freeaddrinfo(res);
  return out;
}

static int socket_acquire_dial(ddmc_vm *vm) {
  int delay = 500;
  int64_t deadline = acquire_deadline(vm);
  while (!atomic_load(&vm->stopping)) {
    int why;
    int fd = dial_once(vm, &why);
    if (fd >= 0) return fd;
    if (deadline >= 0 && ddmc__now_ms() + delay >= deadline) {
      ddmc__log(vm, DDMC_LOG_ERROR, "JDWP: cannot reach %s:%u: %s", vm->opt.host, (unsigned)vm->opt.port,
                why ? strerror(why) : "host not resolved");
      atomic_store(&vm->timed_out, 1);
      return -1;
    }
    ddmc__log(vm, DDMC_LOG_DEBUG, "JDWP: cannot reach %s:%u: %s; retrying in %d ms", vm->opt.host,
              (unsigned)vm->opt.port, why ? strerror(why) : "host not resolved", delay);
    if (ddmc__sleep_interruptible(vm, delay)) break;
    delay += delay / 2;
    if (delay > vm->opt.redial_max_ms) delay = vm->opt.redial_max_ms;
  }
  return -1;
}

static int socket_acquire(ddmc_vm *vm) {
  return vm->opt.server ? socket_acquire_listen(vm) : socket_acquire_dial(vm);
}

static int socket_extra_fd(ddmc_vm *vm) { return vm->opt.server ? vm->listen_fd : -1; }

/* The next peer while sessions run: allow= applies to it as to the first. */
static int socket_accept_extra(ddmc_vm *vm) {
  struct sockaddr_storage ss;
  int fd = accept_one(vm, &ss);
  if (fd >= 0 && !peer_allowed(&vm->opt, &ss)) {
    log_refused_peer(vm, &ss);
    close(fd);
    return -1;
  }
  if (fd >= 0) set_peer_options(fd);
  return fd;
}

static void socket_session_ended(ddmc_vm *vm) {
  if (!vm->opt.server && !atomic_load(&vm->stopping)) ddmc__sleep_interruptible(vm, 500);
}

static void socket_shutdown(ddmc_vm *vm) {
  if (vm->listen_fd >= 0) close(vm->listen_fd);
  vm->listen_fd = -1;
}

const ddmc__transport ddmc__jdwp_transport_socket = {
    .name = "dt_socket",
    .prepare = socket_prepare,
    .acquire = socket_acquire,
    .extra_fd = socket_extra_fd,
    .accept_extra = socket_accept_extra,
    .session_ended = socket_session_ended,
    .shutdown = socket_shutdown,
};
