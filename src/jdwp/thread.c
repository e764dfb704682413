/* SPDX-License-Identifier: Apache-2.0 */
/* The JDWP thread: gets a peer from the transport, serves it and every later peer side by side
 * (docs/sessions.md), and goes back to the transport when the last one has left, until the VM
 * stops. It is the only thread that reads from or writes to a peer.
 *
 * The loop polls every session's socket, the wake eventfd (unsolicited chunks queued, or stop)
 * and the transport's extra fd (the next peer, taken while there is room under
 * ddmc_options.max_sessions). Writes are non-blocking and resumed on POLLOUT, so one slow peer
 * costs only memory up to its high-water mark, never a blocked VM thread or another session's
 * turn, and no CPU: the thread sleeps in poll whenever it cannot make progress. */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <linux/sockios.h>

#include "jdwp/session.h"

/* After it drains unsolicited chunks the JDWP thread keeps wake-ups pending this long. */
#define DDMC__WAKE_GRACE_MS 1

static int flush_out(ddmc__jdwp_session *s) {
  ddmc_vm *vm = s->vm;
  while (s->out_off < s->out.len) {
    ssize_t n = send(s->fd, s->out.p + s->out_off, s->out.len - s->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      s->out_off += (size_t)n;
      s->sent += (uint64_t)n;
      atomic_fetch_add_explicit(&vm->st_bytes_out, (uint64_t)n, memory_order_relaxed);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    return DDMC_EIO; /* EPIPE, ECONNRESET: the peer is gone */
  }
  if (s->out_off == s->out.len) {
    s->out.len = 0;
    s->out_off = 0;
  } else if (s->out_off >= 65536 && s->out_off >= s->out.len / 2) {
    ddmc__buf_consume(&s->out, s->out_off);
    s->out_off = 0;
  }
  return 0;
}

static void session_handshake_done(ddmc__jdwp_session *s) {
  ddmc_vm *vm = s->vm;
  s->shaken = 1;
  /* The echo is the first thing the peer receives: the queue opens only now, so no chunk can
   * overtake it (Dalvik's race with the early APNM, which newer ddmlib had to work around). */
  ddmc_buf_put_bytes(&s->out, DDMC__HANDSHAKE, DDMC__HANDSHAKE_LEN);
  s->number = atomic_fetch_add(&vm->sessions_begun, 1) + 1;
  if (!atomic_load(&vm->connected)) ddmc__send_ring_open(&vm->ring);
  atomic_store(&vm->connected, 1);
  /* A free seat goes to the newcomer; it keeps it only until another session changes the VM's
   * world first (ddmc__jdwp_seat_check). Services first (VM_START): a suspend=y VM wakes only
   * after it. */
  if (s->set == NULL || s->set->seat == 0) ddmc__jdwp_seat_take(s);
  ddmc__lock(&vm->state_lock);
  atomic_fetch_add(&vm->st_sessions, 1);
  pthread_cond_broadcast(&vm->state_cond); /* suspend=y */
  ddmc__unlock(&vm->state_lock);
  ddmc__log(vm, DDMC_LOG_INFO, "JDWP: peer connected (session %u)", s->number);
}

int ddmc__jdwp_session_input(ddmc__jdwp_session *s, const uint8_t *p, size_t n) {
  ddmc_vm *vm = s->vm;
  int rc = ddmc__jdwp_framer_feed(&s->fr, p, n);
  if (rc != 0) return rc;
  for (;;) {
    ddmc__jdwp_packet pkt;
    rc = ddmc__jdwp_framer_next(&s->fr, &pkt);
    if (rc == DDMC__FRAME_NEED_MORE) return 0;
    if (rc == DDMC__FRAME_HANDSHAKE) {
      session_handshake_done(s);
      continue;
    }
    if (rc < 0) return rc;
    atomic_fetch_add_explicit(&vm->st_packets_in, 1, memory_order_relaxed);
    rc = ddmc__jdwp_session_packet(s, &pkt);
    if (rc != 0) return rc;
    if (atomic_load(&vm->stopping) || s->leaving) return 0; /* what follows Dispose goes unread */
  }
}

/* Reads what is available and handles every complete packet. Returns 0, DDMC_ECLOSED at EOF, or
 * a protocol/memory error. */
static int read_and_handle(ddmc__jdwp_session *s) {
  ddmc_vm *vm = s->vm;
  uint8_t tmp[65536];
  size_t budget = 4 * sizeof(tmp); /* bounded work per wake-up keeps the queue drained */
  while (budget > 0 && ddmc__jdwp_session_pending(s) < DDMC__OUT_HIGH_WATER && s->ext == NULL && !s->leaving) {
    ssize_t n = recv(s->fd, tmp, sizeof(tmp), MSG_DONTWAIT);
    if (n == 0) return DDMC_ECLOSED;
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
      return DDMC_ECLOSED;
    }
    atomic_fetch_add_explicit(&vm->st_bytes_in, (uint64_t)n, memory_order_relaxed);
    budget -= DDMC__MIN(budget, (size_t)n);
    int rc = ddmc__jdwp_session_input(s, tmp, (size_t)n);
    if (rc != 0) return rc;
    if (atomic_load(&vm->stopping)) return 0;
  }
  return 0;
}

static void log_end(ddmc__jdwp_session *s, int why) {
  ddmc_vm *vm = s->vm;
  if (why == DDMC_EPROTO || why == DDMC_ETOOBIG) {
    atomic_fetch_add(&vm->st_protocol_errors, 1);
    ddmc__log(vm, DDMC_LOG_WARN, "JDWP: dropping peer: %s", ddmc_strerror(why));
  } else if (why == DDMC_ETIMEDOUT && s->shaken) {
    ddmc__log(vm, DDMC_LOG_WARN, "JDWP: dropping peer: it read nothing for %d ms %s", vm->opt.stall_timeout_ms,
              s->ext ? "in the middle of a transfer" : "while output waited for it");
  } else if (why == DDMC_ETIMEDOUT) {
    ddmc__log(vm, DDMC_LOG_WARN, "JDWP: dropping peer: no handshake within %d ms", vm->opt.handshake_timeout_ms);
  } else if (why == DDMC_ENOMEM) {
    ddmc__log(vm, DDMC_LOG_ERROR, "JDWP: dropping peer: out of memory");
  } else {
    ddmc__log(vm, DDMC_LOG_INFO, "JDWP: peer disconnected (session %u)", s->number);
  }
  if (s->lost > 0)
    ddmc__log(vm, DDMC_LOG_INFO, "JDWP: session %u lost %llu unsolicited packet(s) while it did not read", s->number,
              (unsigned long long)s->lost);
}

void ddmc__jdwp_session_end(ddmc__jdwp_session *s, int why) {
  ddmc_vm *vm = s->vm;
  log_end(s, why);
  int last = s->set == NULL || s->set->n <= 1;
  int seated = s->shaken && (s->set == NULL || s->set->seat == s->number);
  if (last) atomic_store(&vm->connected, 0);
  if (seated) {
    /* The debugger leaves (docs/protocol/jdwp.md §2.7: its requests and suspensions go); the seat is free. */
    atomic_store(&vm->session_no, 0);
    if (s->set != NULL) s->set->seat = 0;
    for (int i = 0; i < vm->nservices; i++)
      if (vm->services[i].session_end) vm->services[i].session_end(vm, vm->services[i].ud);
  }
  /* DDM is over when its last session leaves: the families stop their notifications then. */
  int drop_ddm = s->set == NULL || (s->ddm && --s->set->nddm == 0);
  int was_ddm = drop_ddm ? atomic_exchange(&vm->ddm_active, 0) : 0;
  ddmc__jdwp_session_drop_output(s, why);
  if (s->fd >= 0) {
    shutdown(s->fd, SHUT_RDWR);
    close(s->fd);
    s->fd = -1;
  }
  if (was_ddm) ddmc__chunk_registry_disconnected(vm);
  if (seated && atomic_exchange(&vm->debugger_active, 0) && vm->ops.debugger_detached)
    vm->ops.debugger_detached(vm->vm_data);
  ddmc__jdwp_framer_free(&s->fr);
  ddmc__buf_free(&s->out);
  ddmc__buf_free(&s->reply);
  ddmc__buf_free(&s->hbuf);
  ddmc__buf_free(&s->extra);
  ddmc__buf_free(&s->later);
  ddmc__buf_free(&s->zbuf);
}

void ddmc__jdwp_session_init(ddmc__jdwp_session *s, ddmc_vm *vm, int fd) {
  memset(s, 0, sizeof(*s));
  s->vm = vm;
  s->fd = fd;
  ddmc__jdwp_framer_init(&s->fr, &vm->mem, vm->opt.max_packet);
  /* Every buffer has a cap: out holds the high-water mark plus one reply and the extras of one
   * packet past it. */
  ddmc__buf_init(&s->out, &vm->mem, DDMC__OUT_HIGH_WATER + DDMC__REPLY_MAX + 2 * DDMC__PACKET_REPLY_BYTES);
  ddmc__buf_init(&s->reply, &vm->mem, DDMC__REPLY_MAX);
  ddmc__buf_init(&s->hbuf, &vm->mem, DDMC__REPLY_MAX);
  ddmc__buf_init(&s->extra, &vm->mem, 2 * DDMC__PACKET_REPLY_BYTES);
  ddmc__buf_init(&s->later, &vm->mem, DDMC__OUT_HIGH_WATER + DDMC__REPLY_MAX);
  ddmc__buf_init(&s->zbuf, &vm->mem, DDMC__REPLY_MAX + 4096);
  s->hs_deadline = ddmc__now_ms() + vm->opt.handshake_timeout_ms;
}

/* Bytes the peer has taken: those written minus those the kernel still holds for it (SIOCOUTQ:
 * unacknowledged on TCP, unread on a Unix socket). Not what the socket accepted: a send buffer
 * that grows takes a trickle now and then from a peer that reads nothing, which would keep
 * putting off the stall timeout. Without SIOCOUTQ, what was written. */
static uint64_t taken_by_peer(const ddmc__jdwp_session *s) {
  int queued = 0;
  if (ioctl(s->fd, SIOCOUTQ, &queued) != 0 || queued < 0 || (uint64_t)queued > s->sent) return s->sent;
  return s->sent - (uint64_t)queued;
}

/* The poll timeout (-1: none) for what one session has due next: its handshake's deadline, its
 * peer stalled with output waiting. Sets s->why when the session must end now. */
static int session_timeout(ddmc__jdwp_session *s, int64_t now) {
  ddmc_vm *vm = s->vm;
  int timeout = -1;
  if (!s->shaken) {
    if (now >= s->hs_deadline) {
      s->why = DDMC_ETIMEDOUT;
      return 0;
    }
    timeout = (int)(s->hs_deadline - now);
  }
  /* Output waits for a peer that reads nothing: events it asked for, or a transfer (a trace, a
   * heap dump) that holds the session until it is out. Such a peer would hold the session and its
   * buffers forever (and, the debugger, the queue: the VM's events go to EQFULL meanwhile). */
  uint64_t taken = ddmc__jdwp_session_pending(s) ? taken_by_peer(s) : s->taken;
  if (ddmc__jdwp_session_pending(s) == 0 || taken != s->taken) {
    s->progress_ms = now;
    s->taken = taken;
  } else if (vm->opt.stall_timeout_ms > 0) {
    int64_t due = s->progress_ms + vm->opt.stall_timeout_ms;
    if (now >= due) {
      s->why = DDMC_ETIMEDOUT;
      return 0;
    }
    if (timeout < 0 || due - now < timeout) timeout = (int)(due - now);
  }
  return timeout;
}

static int min_timeout(int a, int b) { return a < 0 ? b : (b < 0 || a < b ? a : b); }

/* The buffers of a big reply given back once the session has had none for DDMC__TRIM_DELAY_MS
 * and its output is out (a stream empties out often, and a trim costs: after big replies only).
 * Returns the poll timeout until then (-1: none). */
static int trim_due(ddmc__jdwp_session *s, int64_t now) {
  if (s->trim_at == 0 || ddmc__jdwp_session_pending(s) != 0) return -1; /* flushing wakes the loop */
  if (now < s->trim_at) return (int)(s->trim_at - now);
  s->trim_at = 0;
  ddmc__buf_shrink(&s->reply, DDMC__KEEP_BYTES);
  ddmc__buf_shrink(&s->out, DDMC__KEEP_BYTES);
  ddmc__mem_trim(&s->vm->mem);
  return -1;
}

/* The thread's sessions and its wake-up grace period. */
typedef struct loop {
  ddmc_vm *vm;
  ddmc__jdwp_sessions set;
  int64_t grace_until; /* while non-zero, wake-ups are left pending on purpose */
} loop;

static int any_shaken(const loop *l) {
  for (int i = 0; i < l->set.n; i++)
    if (l->set.s[i]->shaken) return 1;
  return 0;
}

/* A session whose full output holds the queue (ddmc__jdwp_session_drain_queue): the debugger seat
 * or a session alone. */
static int holds_queue(const loop *l) {
  for (int i = 0; i < l->set.n; i++) {
    const ddmc__jdwp_session *s = l->set.s[i];
    size_t waiting = s->ext != NULL ? s->later.len : ddmc__jdwp_session_pending(s);
    if (s->shaken && waiting >= DDMC__OUT_HIGH_WATER &&
        (l->set.n == 1 || (s->number == l->set.seat && l->set.seat_confirmed)))
      return 1;
  }
  return 0;
}

/* The poll timeout for everything due next: each session's, the services' ticks, the end of a
 * wake-up grace period. */
static int next_timeout(loop *l, int64_t now) {
  ddmc_vm *vm = l->vm;
  int timeout = -1;
  for (int i = 0; i < l->set.n; i++) {
    timeout = min_timeout(timeout, session_timeout(l->set.s[i], now));
    timeout = min_timeout(timeout, trim_due(l->set.s[i], now));
  }
  if (any_shaken(l))
    for (int i = 0; i < vm->nservices; i++)
      if (vm->services[i].tick != NULL) timeout = min_timeout(timeout, vm->services[i].tick(vm, vm->services[i].ud, now));
  if (l->grace_until && !holds_queue(l)) /* else nothing drains at its end */
    timeout = min_timeout(timeout, l->grace_until > now ? (int)(l->grace_until - now) : 0);
  /* A transfer with room in its session's output goes on at once: nothing else would wake the
   * thread for it once the socket took everything. */
  for (int i = 0; i < l->set.n; i++)
    if (l->set.s[i]->ext != NULL && ddmc__jdwp_session_pending(l->set.s[i]) < DDMC__OUT_HIGH_WATER) timeout = 0;
  return timeout;
}

static size_t queued_total(const loop *l) {
  size_t t = 0;
  for (int i = 0; i < l->set.n; i++) t += l->set.s[i]->out.len + l->set.s[i]->later.len;
  return t;
}

/* Moves queued packets from VM threads into the sessions' output, keeping wake-ups off for a
 * short grace period while traffic flows. */
static void drain_with_grace(loop *l) {
  ddmc_vm *vm = l->vm;
  ddmc__jdwp_session *any = l->set.s[0];
  size_t before = queued_total(l);
  ddmc__jdwp_session_drain_queue(any, 0);
  if (queued_total(l) == before && l->grace_until && ddmc__now_ms() >= l->grace_until) {
    /* Quiet for a grace period: re-arm wake-ups, then look once more, so a chunk pushed just
     * before the re-arm (whose sender skipped the wake) is not left behind. */
    l->grace_until = 0;
    atomic_store(&vm->wake_pending, 0);
    ddmc__jdwp_session_drain_queue(any, 0);
  }
  if (queued_total(l) != before) {
    /* Traffic: stay awake a little. Senders see a wake-up pending and skip the eventfd write (a
     * system call on a VM thread); their chunks wait at most the grace period. */
    atomic_store(&vm->wake_pending, 1);
    l->grace_until = ddmc__now_ms() + DDMC__WAKE_GRACE_MS;
  }
}

/* Serves fd beside the others, or refuses it past max_sessions (closed before its handshake: the
 * log says why). */
static void add_session(loop *l, int fd) {
  ddmc_vm *vm = l->vm;
  int cap = vm->opt.max_sessions > 0 ? DDMC__MIN(vm->opt.max_sessions, DDMC__SESSIONS_MAX) : DDMC_DEFAULT_MAX_SESSIONS;
  ddmc__jdwp_session *s = NULL;
  if (l->set.n >= cap) {
    ddmc__log(vm, DDMC_LOG_WARN, "JDWP: refusing a peer: %d sessions are open (max_sessions=%d)", l->set.n, cap);
  } else if ((s = ddmc__calloc(&vm->mem, 1, sizeof(*s))) == NULL) {
    ddmc__log(vm, DDMC_LOG_ERROR, "JDWP: refusing a peer: out of memory");
  }
  if (s == NULL) {
    close(fd);
    return;
  }
  ddmc__jdwp_session_init(s, vm, fd);
  s->set = &l->set;
  l->set.s[l->set.n++] = s;
}

static void remove_session(loop *l, int i) {
  ddmc__jdwp_session *s = l->set.s[i];
  ddmc__jdwp_session_end(s, s->why);
  l->set.s[i] = l->set.s[--l->set.n];
  ddmc__free(&l->vm->mem, s);
}

/* One wake-up's work for session s: its input (bounded), then its output as far as the socket
 * takes it. Errors are left in s->why. */
static void serve_input(ddmc__jdwp_session *s, short revents) {
  if (s->why == 0 && (revents & (POLLIN | POLLHUP | POLLERR))) {
    int why = read_and_handle(s);
    if (why != 0) {
      /* Flush what was already answered (a FAIL, an echo) before closing: best effort. */
      flush_out(s);
      s->why = why;
    }
  }
}

/* Every session's turn: input, new peers, the queue, output. Returns 0, or an error when the
 * loop cannot go on (poll failed). */
static int turn(loop *l) {
  ddmc_vm *vm = l->vm;
  unsigned flush_seq = atomic_load(&vm->flush_seq);
  int timeout = next_timeout(l, ddmc__now_ms());
  struct pollfd p[DDMC__SESSIONS_MAX + 2];
  int extra = vm->transport->extra_fd(vm);
  p[0] = (struct pollfd){.fd = vm->wake_fd, .events = POLLIN};
  p[1] = (struct pollfd){.fd = extra, .events = POLLIN}; /* poll skips a negative fd */
  int n = l->set.n;
  for (int i = 0; i < n; i++) {
    ddmc__jdwp_session *s = l->set.s[i];
    size_t pending = ddmc__jdwp_session_pending(s);
    int can_read = pending < DDMC__OUT_HIGH_WATER && s->ext == NULL && s->why == 0 && !s->leaving;
    short events = (short)((pending ? POLLOUT : 0) | (can_read ? POLLIN : 0));
    p[2 + i] = (struct pollfd){.fd = s->fd, .events = events};
  }
  if (poll(p, (nfds_t)(2 + n), timeout) < 0) return errno == EINTR ? 0 : DDMC_EIO;
  if (p[0].revents & POLLIN) ddmc__drain_wake(vm);
  for (int i = 0; i < n && !atomic_load(&vm->stopping); i++) {
    ddmc__send_set_requester(l->set.s[i]->number);
    serve_input(l->set.s[i], p[2 + i].revents);
  }
  ddmc__send_set_requester(0);
  /* Only after the sessions' input: a debugger that closes and reconnects at once has its EOF
   * and its new connection in the same wake-up, and the new one must not count against the cap. */
  for (int i = 0; i < n; i++)
    if (l->set.s[i]->why != 0) remove_session(l, i--), n--;
  if (extra >= 0 && (p[1].revents & POLLIN)) {
    int fd = vm->transport->accept_extra(vm);
    if (fd >= 0) add_session(l, fd);
  }
  if (l->set.n == 0) return 0;
  if (holds_queue(l)) {
    /* Blocked on the debugger's peer: the queue waits for room, and POLLOUT is what wakes the
     * thread, not publishers: their wake-ups stay pending, as in a grace period, which the first
     * drain after the block ends (re-arming them). next_timeout ignores that period meanwhile: its
     * end, in the past, would make every poll return at once, a spin while the peer reads nothing. */
    if (l->grace_until == 0) l->grace_until = ddmc__now_ms();
    atomic_store(&vm->wake_pending, 1);
    ddmc__jdwp_session_drain_queue(l->set.s[0], 0); /* other sessions' transfers go on */
  } else if (any_shaken(l)) {
    drain_with_grace(l);
  }
  int idle = any_shaken(l) && ddmc__send_ring_peek(&vm->ring) == NULL;
  for (int i = 0; i < l->set.n; i++) {
    ddmc__jdwp_session *s = l->set.s[i];
    if (s->why == 0 && ddmc__jdwp_session_pending(s)) s->why = flush_out(s);
    if (s->why == 0 && s->leaving && !ddmc__jdwp_session_pending(s) && s->ext == NULL) s->why = DDMC_ECLOSED;
    if (s->shaken && (ddmc__jdwp_session_pending(s) || s->ext != NULL)) idle = 0;
  }
  if (idle) atomic_store(&vm->flushed_seq, flush_seq);
  for (int i = 0; i < l->set.n; i++)
    if (l->set.s[i]->why != 0) remove_session(l, i--);
  return 0;
}

static void run_sessions(ddmc_vm *vm, int fd) {
  loop l;
  memset(&l, 0, sizeof(l));
  l.vm = vm;
  add_session(&l, fd);
  while (!atomic_load(&vm->stopping) && l.set.n > 0) {
    int why = turn(&l);
    if (why == 0) continue;
    for (int i = 0; i < l.set.n; i++) l.set.s[i]->why = why;
    break;
  }
  while (l.set.n > 0) remove_session(&l, l.set.n - 1);
  atomic_store(&vm->wake_pending, 0); /* the next session starts with wake-ups armed */
}

/* timeout=: no debugger came in time (the transport set vm->timed_out). A suspend=y start still
 * waiting for its first peer gets DDMC_ETIMEDOUT and its VM decides; otherwise the VM ends, as the
 * JDK's agent ends it, but with status 1 where the JDK gives 0: to a script a debugger that never
 * came is a failure. The port closes either way: nobody would serve it. */
static void give_up_waiting(ddmc_vm *vm) {
  ddmc__log(vm, DDMC_LOG_ERROR, "JDWP: no debugger connected within timeout=%d ms", vm->opt.timeout_ms);
  vm->transport->shutdown(vm);
  vm->transport_down = 1; /* ddmc_vm_stop reads it after joining this thread */
  ddmc__lock(&vm->state_lock);
  int starter_waits = vm->opt.suspend && atomic_load(&vm->st_sessions) == 0;
  pthread_cond_broadcast(&vm->state_cond);
  ddmc__unlock(&vm->state_lock);
  if (!starter_waits && vm->ops.exit) vm->ops.exit(vm->vm_data, 1);
}

void *ddmc__jdwp_thread_main(void *arg) {
  ddmc_vm *vm = arg;
  ddmc__send_mark_jdwp_thread();
  /* A name to find it by in top -H and /proc/PID/task; the VM's hook may rename it. */
  pthread_setname_np(pthread_self(), "ddmc-jdwp");
  if (vm->ops.jdwp_thread_start) vm->ops.jdwp_thread_start(vm->vm_data);
  while (!atomic_load(&vm->stopping)) {
    int fd = vm->transport->acquire(vm);
    if (fd < 0 && atomic_load(&vm->timed_out)) {
      give_up_waiting(vm);
      break;
    }
    if (fd < 0) continue; /* stopping, or the transport backs off by itself */
    run_sessions(vm, fd);
    vm->transport->session_ended(vm);
  }
  if (vm->ops.jdwp_thread_end) vm->ops.jdwp_thread_end(vm->vm_data);
  return NULL;
}
