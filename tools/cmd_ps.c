/* SPDX-License-Identifier: Apache-2.0 */
/* ddmc ps: every JDWP process on a device, through the local adb server, as DDMS's device panel
 * lists them. The pids come from adb's track-jdwp; each is asked for HELO over its own jdwp:PID
 * connection, all of them at once; the timeout bounds the whole listing. o->adb_port and o->serial
 * name the adb server and the device; o->host is never used.
 *
 * One connection to the adb server carries track-jdwp: after host:transport[-any|:SERIAL] and
 * track-jdwp are OKAYed, adbd sends the whole list of JDWP pids as [4 hex digits: length]["pid\n"
 * ...] once, then again on every change. Without --watch the first list is all we read.
 *
 * Each pid gets a probe, its own adb connection that walks through
 *   host:transport... -> jdwp:PID -> JDWP handshake -> HELO + FEAT + SESS -> done
 * without blocking: every probe's socket is in one poll() set, so 300 VMs cost one round trip
 * each, in parallel. The bytes each socket sends go through the host's reader fed bytes
 * (ddmc_host_reader: adb's verdicts, track-jdwp's messages, the echo, the packets); this file
 * only reads sockets and decides what each item means for the listing.
 *
 * -t bounds the whole listing, not each probe: every row's deadline is the start plus -t (with --watch, its appearing plus -t), queued time included, so VMs that never
 * answer cost -t once, not once per MAX_PROBES of them; a row still queued then (every slot held
 * by a silent VM) is listed as not asked.
 *
 * SESS is sent last, as a marker: its reply comes after anything the VM sends while it handles
 * HELO (a WAIT, an APNM), so a VM that answers it is done at once; one that does not (ART
 * sends no reply without data) is given LINGER_MS after its HELO reply.
 *
 * "Debugger attached": a libddmc VM serves a monitor beside its debugger and says so in SESS
 * (docs/sessions.md). A VM that accepts one JDWP peer at a time (ART's adbconnection) closes our
 * connection during the handshake while a debugger or monitor holds it; that is what ddmlib
 * reports as attached too. The probe disconnects as soon as it has its answer, so it holds a VM
 * no longer than that. */
#include "cli.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define T_HELO DDMC_HOST_FOURCC('H', 'E', 'L', 'O')
#define T_FEAT DDMC_HOST_FOURCC('F', 'E', 'A', 'T')
#define T_APNM DDMC_HOST_FOURCC('A', 'P', 'N', 'M')
#define T_WAIT DDMC_HOST_FOURCC('W', 'A', 'I', 'T')
#define T_SESS DDMC_HOST_FOURCC('S', 'E', 'S', 'S')

#define LINGER_MS 200
#define MAX_PROBES 256    /* connections in flight, also bounded by RLIMIT_NOFILE */
#define MAX_PIDS 65536    /* a track-jdwp message is at most 65535 bytes anyway */
#define REDRAW_MIN_MS 500 /* --watch: at most this often while probes are still running */
#define READS_PER_WAKE 16 /* reads of one socket per poll() wake-up: a flooding peer cannot starve the rest */

typedef struct ps_args {
  int watch;       /* keep listening to track-jdwp and redraw on every change */
  double duration; /* --watch: seconds to watch; < 0 until Ctrl-C */
} ps_args;

typedef enum pstate { P_QUEUED, P_TRANSPORT, P_JDWP, P_SHAKE, P_HELO, P_DONE } pstate;

typedef enum presult { PR_PENDING, PR_OK, PR_NO_ANSWER, PR_ATTACHED, PR_NOT_DDM, PR_GONE, PR_ERROR } presult;

static const char *result_name(presult r) {
  switch (r) {
    case PR_OK: return "ok";
    case PR_NO_ANSWER: return "no-answer";
    case PR_ATTACHED: return "debugger-attached";
    case PR_NOT_DDM: return "not-ddm";
    case PR_GONE: return "gone";
    case PR_ERROR: return "error";
    default: return "probing";
  }
}

typedef struct proc {
  uint32_t pid;
  pstate state;
  presult result;
  ddmc_host *h;
  ddmc_host_reader *rd; /* what the probe's socket sends, from adb's first verdict to the packets */
  int64_t t_start, deadline, linger_until, probe_ms;
  uint32_t helo_id, feat_id, sess_id;
  int helo_done;
  ddmc_host_helo helo;
  int waiting;
  int beside; /* SESS: the VM answers us beside a debugger that holds its seat */
  int apnm_seen;
  ddmc_host_apnm apnm;
  char msg[200];
} proc;

typedef struct event {
  int64_t t_ms;
  int appeared;
  uint32_t pid;
  char *app_name; /* gone: the last name known */
} event;

typedef struct ps {
  const opts *o;
  const ps_args *a;
  char target[320];
  int64_t t0;
  /* track-jdwp */
  ddmc_host *track;
  ddmc_host_reader *trd; /* track-jdwp's messages */
  int lists; /* messages read */
  /* the table, sorted by pid */
  proc **v;
  size_t n, cap;
  size_t active, max_active;
  /* --watch */
  event *ev;
  size_t n_ev, cap_ev;
  int dirty;
  int64_t last_draw;
  unsigned added, removed; /* since the last picture */
  int draws;
  int tty;
  /* the poll set: pp[i] is the probe of pf[i], NULL for the tracker */
  struct pollfd *pf;
  proc **pp;
  size_t pcap;
} ps;

/* ---- failure ---------------------------------------------------------------------------------- */

static void ps_free(ps *p);

static _Noreturn void ps_fail(ps *p, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static _Noreturn void ps_fail(ps *p, int code, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  fflush(stdout);
  fprintf(stderr, "ddmc: %s\n", sess_tx(msg)); /* adb's messages are quoted: escape for the terminal */
  if (p->o->json) {
    jw w;
    jw_init(&w, stdout);
    jw_obj(&w);
    jw_kstr(&w, "command", "ps");
    jw_kbool(&w, "ok", 0);
    jw_kstr(&w, "target", p->target);
    jw_key(&w, "error");
    jw_obj(&w);
    jw_kint(&w, "exit", code);
    jw_kstr(&w, "message", msg);
    jw_close(&w);
    jw_close(&w);
    jw_end(&w);
  }
  ps_free(p);
  exit(code);
}

/* ---- adb -------------------------------------------------------------------------------------- */

static void transport_request(const opts *o, char *b, size_t n) {
  if (o->serial && *o->serial)
    snprintf(b, n, "host:transport:%s", o->serial);
  else
    snprintf(b, n, "host:transport-any");
}

/* Blocking: the tracker's own two requests, once; exits with a message on anything but OKAY. */
static void tracker_request(ps *p, const char *req, int timeout_ms) {
  char msg[300] = "";
  if (timeout_ms < 1) timeout_ms = 1; /* ddmc_host_adb_request reads 0 as its default */
  int rc = ddmc_host_adb_request(p->track, req, timeout_ms, msg, sizeof msg);
  if (rc == 0) return;
  if (rc == DDMC_ETIMEDOUT)
    ps_fail(p, EXIT_CONNECT, "the adb server at 127.0.0.1:%u did not answer %s within %d ms", (unsigned)p->o->adb_port,
            req, p->o->timeout_ms);
  if (rc == DDMC_EPROTO) ps_fail(p, EXIT_CONNECT, "127.0.0.1:%u is not an adb server", (unsigned)p->o->adb_port);
  if (rc == DDMC_ENOENT) ps_fail(p, EXIT_CONNECT, "cannot reach %s: adb says %s", p->target, msg);
  ps_fail(p, EXIT_CONNECT, "the adb server at 127.0.0.1:%u dropped %s: %s", (unsigned)p->o->adb_port, req,
          ddmc_host_strerror(rc));
}

static void tracker_open(ps *p) {
  int64_t deadline = sess_mono_ms() + p->o->timeout_ms;
  int rc = ddmc_host_connect_tcp(&p->track, "127.0.0.1", p->o->adb_port, p->o->timeout_ms);
  if (rc) {
    p->track = NULL;
    ps_fail(p, EXIT_CONNECT, "cannot connect to the adb server at 127.0.0.1:%u: %s", (unsigned)p->o->adb_port,
            rc == DDMC_ECONNREFUSED ? "connection refused (is it running? adb -P PORT start-server)"
            : rc == DDMC_ETIMEDOUT  ? "connect timed out"
                                    : ddmc_host_strerror(rc));
  }
  char req[200];
  transport_request(p->o, req, sizeof req);
  tracker_request(p, req, (int)(deadline - sess_mono_ms()));
  tracker_request(p, "track-jdwp", (int)(deadline - sess_mono_ms()));
  if ((rc = ddmc_host_reader_new(&p->trd, DDMC_HOST_EXPECT_ADB_MESSAGES, 0)) != 0)
    ps_fail(p, EXIT_ERROR, "track-jdwp: %s", ddmc_host_strerror(rc));
}

/* ---- the table -------------------------------------------------------------------------------- */

static size_t find_slot(const ps *p, uint32_t pid) {
  size_t lo = 0, hi = p->n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (p->v[mid]->pid < pid)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static proc *find_proc(const ps *p, uint32_t pid) {
  size_t i = find_slot(p, pid);
  return i < p->n && p->v[i]->pid == pid ? p->v[i] : NULL;
}

static void proc_finish(ps *p, proc *x, presult r) {
  if (x->h) {
    ddmc_host_free(x->h);
    x->h = NULL;
    p->active--;
  }
  ddmc_host_reader_free(x->rd);
  x->rd = NULL;
  x->state = P_DONE;
  x->result = r;
  x->probe_ms = sess_mono_ms() - x->t_start;
  p->dirty = 1;
}

static void proc_free(ps *p, proc *x) {
  if (x->h) {
    ddmc_host_free(x->h);
    p->active--;
  }
  ddmc_host_reader_free(x->rd);
  ddmc_host_helo_free(&x->helo);
  ddmc_host_apnm_free(&x->apnm);
  free(x);
}

static const char *app_name_of(const proc *x) {
  if (x->result != PR_OK) return NULL;
  return x->apnm_seen ? x->apnm.name : x->helo.app_name;
}

static void add_event(ps *p, int appeared, uint32_t pid, const char *name) {
  if (p->n_ev == p->cap_ev) {
    size_t cap = p->cap_ev ? 2 * p->cap_ev : 64;
    event *e = realloc(p->ev, cap * sizeof *e);
    if (e == NULL) ps_fail(p, EXIT_ERROR, "out of memory");
    p->ev = e;
    p->cap_ev = cap;
  }
  p->ev[p->n_ev++] = (event){sess_mono_ms() - p->t0, appeared, pid, name ? strdup(name) : NULL};
}

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

/* One track-jdwp message: the complete list of pids. */
static void apply_list(ps *p, const char *body, size_t len) {
  uint32_t *pids = malloc((len / 2 + 1) * sizeof *pids);
  if (pids == NULL) ps_fail(p, EXIT_ERROR, "out of memory");
  size_t np = 0;
  const char *q = body, *end = body + len;
  while (q < end) {
    const char *nl = memchr(q, '\n', (size_t)(end - q));
    const char *le = nl ? nl : end;
    uint64_t v = 0;
    int ok = le > q && le - q <= 10;
    for (const char *c = q; ok && c < le; c++) {
      if (*c < '0' || *c > '9')
        ok = 0;
      else
        v = v * 10 + (uint64_t)(*c - '0');
    }
    if (ok && v > 0 && v <= UINT32_MAX)
      pids[np++] = (uint32_t)v;
    else if (le > q && p->o->verbose)
      fprintf(stderr, "ddmc: track-jdwp: ignoring the line '%.*s'\n", (int)(le - q), q);
    q = le + 1;
  }
  qsort(pids, np, sizeof *pids, cmp_u32);
  int first = p->lists++ == 0;
  /* Gone: in the table, not in the list. */
  size_t keep = 0;
  for (size_t i = 0; i < p->n; i++) {
    proc *x = p->v[i];
    if (bsearch(&x->pid, pids, np, sizeof *pids, cmp_u32)) {
      p->v[keep++] = x;
      continue;
    }
    add_event(p, 0, x->pid, app_name_of(x));
    p->removed++;
    proc_free(p, x);
    p->dirty = 1;
  }
  p->n = keep;
  for (size_t k = 0; k < np; k++) {
    if (k > 0 && pids[k] == pids[k - 1]) continue;
    if (find_proc(p, pids[k])) continue;
    if (p->n >= MAX_PIDS) break;
    if (p->n == p->cap) {
      size_t cap = p->cap ? 2 * p->cap : 64;
      proc **nv = realloc(p->v, cap * sizeof *nv);
      if (nv == NULL) ps_fail(p, EXIT_ERROR, "out of memory");
      p->v = nv;
      p->cap = cap;
    }
    proc *x = calloc(1, sizeof *x);
    if (x == NULL) ps_fail(p, EXIT_ERROR, "out of memory");
    x->pid = pids[k];
    /* -t bounds the row, queued time included: the first list's rows end within -t of the start
     * (the whole listing), a later one's within -t of its appearing. */
    x->deadline = (first ? p->t0 : sess_mono_ms()) + p->o->timeout_ms;
    size_t at = find_slot(p, x->pid);
    memmove(p->v + at + 1, p->v + at, (p->n - at) * sizeof *p->v);
    p->v[at] = x;
    p->n++;
    if (!first) {
      add_event(p, 1, x->pid, NULL);
      p->added++;
    }
    p->dirty = 1;
  }
  free(pids);
}

/* One read of the socket fd into rd: 2 (bytes fed: drain rd, then read again), 0 (nothing more
 * for now), 1 (EOF or reset), or a ddmc_host_reader_feed error. One read is at most 16 KiB, under
 * DDMC_HOST_READER_FEED_MAX, so a reader drained between reads never refuses bytes. */
static int read_into(int fd, ddmc_host_reader *rd) {
  for (;;) {
    char b[16384];
    ssize_t r = recv(fd, b, sizeof b, MSG_DONTWAIT);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return 0;
    if (r <= 0) return 1;
    int rc = ddmc_host_reader_feed(rd, b, (size_t)r);
    return rc ? rc : 2;
  }
}

/* Reads what track-jdwp sent; applies every complete message. */
static void tracker_read(ps *p) {
  int rc, reads = 0;
  do {
    rc = read_into(ddmc_host_fd(p->track), p->trd);
    ddmc_host_item it;
    int got;
    while ((got = ddmc_host_reader_next(p->trd, &it)) == 1) apply_list(p, it.text, it.text_len);
    if (got < 0)
      ps_fail(p, EXIT_NOT_DDM, "the adb server at 127.0.0.1:%u broke track-jdwp: %s", (unsigned)p->o->adb_port,
              ddmc_host_reader_why(p->trd));
  } while (rc == 2 && ++reads < READS_PER_WAKE);
  if (rc == 2) return; /* more to read: poll says so again */
  if (rc == 1) ps_fail(p, EXIT_ERROR, "the adb server closed track-jdwp (the device went away?)");
  if (rc) ps_fail(p, EXIT_ERROR, "track-jdwp: %s", ddmc_host_strerror(rc));
}

/* ---- probes ----------------------------------------------------------------------------------- */

static void probe_start(ps *p, proc *x) {
  x->t_start = sess_mono_ms();
  int64_t left = x->deadline - x->t_start;
  int rc = ddmc_host_connect_tcp(&x->h, "127.0.0.1", p->o->adb_port, left > 1 ? (int)left : 1);
  if (rc) {
    x->h = NULL;
    snprintf(x->msg, sizeof x->msg, "cannot connect to the adb server: %s", ddmc_host_strerror(rc));
    proc_finish(p, x, PR_ERROR);
    return;
  }
  p->active++;
  if ((rc = ddmc_host_reader_new(&x->rd, DDMC_HOST_EXPECT_ADB_STATUS, 0)) != 0) {
    snprintf(x->msg, sizeof x->msg, "%s", ddmc_host_strerror(rc));
    proc_finish(p, x, PR_ERROR);
    return;
  }
  char req[200];
  transport_request(p->o, req, sizeof req);
  if (ddmc_host_adb_send(x->h, req) != 0) {
    snprintf(x->msg, sizeof x->msg, "the adb server dropped the connection");
    proc_finish(p, x, PR_ERROR);
    return;
  }
  x->state = P_TRANSPORT;
}

/* adb's verdict on the transport or jdwp:PID request: the next request, the handshake, or the end. */
static void probe_status(ps *p, proc *x, const ddmc_host_item *it) {
  if (it->kind == DDMC_HOST_ITEM_FAIL) {
    /* Refused jdwp:PID: the process left between the list and the probe (adb says "closed"). */
    snprintf(x->msg, sizeof x->msg, "adb: %.180s", it->text);
    proc_finish(p, x, x->state == P_JDWP ? PR_GONE : PR_ERROR);
    return;
  }
  if (x->state == P_TRANSPORT) {
    char req[32];
    snprintf(req, sizeof req, "jdwp:%u", (unsigned)x->pid);
    if (ddmc_host_adb_send(x->h, req) != 0) goto dropped;
    x->state = P_JDWP;
  } else {
    /* The VM's JDWP stream from here on. */
    if (ddmc_host_send_raw(x->h, DDMC_HOST_HANDSHAKE, DDMC_HOST_HANDSHAKE_LEN) != 0) goto dropped;
    ddmc_host_reader_expect(x->rd, DDMC_HOST_EXPECT_HANDSHAKE);
    x->state = P_SHAKE;
  }
  return;
dropped:
  snprintf(x->msg, sizeof x->msg, "the adb server dropped the connection");
  proc_finish(p, x, PR_ERROR);
}

/* The handshake's echo came back: ask HELO, FEAT and SESS at once. */
static void probe_shaken(ps *p, proc *x) {
  uint8_t one[4] = {0, 0, 0, 1};
  if (ddmc_host_send_chunk(x->h, T_HELO, one, sizeof one, &x->helo_id) != 0 ||
      ddmc_host_send_chunk(x->h, T_FEAT, NULL, 0, &x->feat_id) != 0 ||
      ddmc_host_send_chunk(x->h, T_SESS, NULL, 0, &x->sess_id) != 0) {
    snprintf(x->msg, sizeof x->msg, "the VM closed the connection after the handshake");
    proc_finish(p, x, PR_ERROR);
    return;
  }
  x->state = P_HELO;
}

static void probe_helo_reply(ps *p, proc *x, const ddmc_host_packet *pk) {
  if (pk->error || !pk->is_ddm || pk->chunk_type != T_HELO) {
    snprintf(x->msg, sizeof x->msg, "a JDWP VM, not DDM-aware (HELO got %s)",
             pk->error     ? "a JDWP error"
             : !pk->is_ddm ? "an empty reply"
                           : "another chunk");
    proc_finish(p, x, PR_NOT_DDM);
    return;
  }
  if (ddmc_host_helo_parse(pk->chunk, pk->chunk_len, &x->helo)) {
    snprintf(x->msg, sizeof x->msg, "a malformed HELO reply");
    proc_finish(p, x, PR_NOT_DDM);
    return;
  }
  x->helo_done = 1;
  x->linger_until = sess_mono_ms() + LINGER_MS;
}

/* One packet from the VM (before or after the echo). */
static void probe_packet(ps *p, proc *x, const ddmc_host_packet *pk) {
  if (pk->is_reply && pk->id == x->helo_id && x->helo_id != 0) {
    probe_helo_reply(p, x, pk);
  } else if (pk->is_reply && pk->id != 0 && (pk->id == x->feat_id || pk->id == x->sess_id)) {
    ddmc_host_sess ss;
    if (pk->id == x->sess_id && pk->is_ddm && pk->chunk_type == T_SESS &&
        ddmc_host_sess_parse(pk->chunk, pk->chunk_len, &ss) == 0)
      x->beside = ss.debugger && ss.seat != ss.self;
    int last = pk->id == x->sess_id;
    if (last) x->sess_id = 0;
    else x->feat_id = 0;
    if (last && x->helo_done) proc_finish(p, x, PR_OK); /* else a reply before HELO's: wait for HELO alone */
  } else if (!pk->is_reply && pk->is_ddm && pk->chunk_type == T_WAIT) {
    x->waiting = 1;
  } else if (!pk->is_reply && pk->is_ddm && pk->chunk_type == T_APNM) {
    ddmc_host_apnm a;
    if (ddmc_host_apnm_parse(pk->chunk, pk->chunk_len, &a) == 0) {
      ddmc_host_apnm_free(&x->apnm);
      x->apnm = a;
      x->apnm_seen = 1;
    }
  }
}

/* The reader refused what the socket sent (or could not take it). */
static void probe_broken(ps *p, proc *x, int rc) {
  if (x->state == P_TRANSPORT || x->state == P_JDWP) {
    snprintf(x->msg, sizeof x->msg, "not an adb server: %.170s", ddmc_host_reader_why(x->rd));
    proc_finish(p, x, PR_ERROR);
  } else if (x->state == P_SHAKE) {
    snprintf(x->msg, sizeof x->msg, "not a JDWP VM (bad handshake answer)");
    proc_finish(p, x, PR_NOT_DDM);
  } else {
    snprintf(x->msg, sizeof x->msg, "broke the JDWP framing: %s", ddmc_host_strerror(rc));
    proc_finish(p, x, x->helo_done ? PR_OK : PR_NOT_DDM);
  }
}

/* The peer went away after everything it sent was taken. */
static void probe_closed(ps *p, proc *x) {
  if (x->state == P_SHAKE) {
    snprintf(x->msg, sizeof x->msg, "the VM refused the connection: another debugger is attached");
    proc_finish(p, x, PR_ATTACHED);
  } else if (x->state == P_HELO && x->helo_done) {
    proc_finish(p, x, PR_OK);
  } else if (x->state == P_HELO) {
    snprintf(x->msg, sizeof x->msg, "the VM closed the connection before answering HELO");
    proc_finish(p, x, PR_ERROR);
  } else {
    snprintf(x->msg, sizeof x->msg, "the adb server closed the connection");
    proc_finish(p, x, PR_ERROR);
  }
}

/* The socket has bytes (or EOF): the reader makes items of them, each moves the probe on. */
static void probe_readable(ps *p, proc *x) {
  int rc, reads = 0;
  do {
    rc = read_into(ddmc_host_fd(x->h), x->rd);
    ddmc_host_item it;
    int got;
    while (x->state != P_DONE && (got = ddmc_host_reader_next(x->rd, &it)) != 0) {
      if (got < 0) {
        probe_broken(p, x, got);
        return;
      }
      if (it.kind == DDMC_HOST_ITEM_OKAY || it.kind == DDMC_HOST_ITEM_FAIL) probe_status(p, x, &it);
      else if (it.kind == DDMC_HOST_ITEM_HANDSHAKE) probe_shaken(p, x);
      else if (it.kind == DDMC_HOST_ITEM_PACKET) probe_packet(p, x, &it.packet);
    }
    if (x->state == P_DONE) return;
  } while (rc == 2 && ++reads < READS_PER_WAKE);
  if (rc == 2) return; /* more to read: poll says so again, after the other sockets had their turn */
  if (rc == 1) probe_closed(p, x);
  else if (rc) probe_broken(p, x, rc);
}

static void probe_timers(ps *p, proc *x, int64_t now) {
  if (x->state == P_HELO && x->helo_done && (now >= x->linger_until || now >= x->deadline)) {
    proc_finish(p, x, PR_OK);
  } else if (x->state == P_QUEUED && now >= x->deadline) {
    /* Never asked: every probe slot was held by a VM slower than -t. */
    x->t_start = now;
    snprintf(x->msg, sizeof x->msg, "not asked within %d ms: %zu probes at a time, all of them waiting",
             p->o->timeout_ms, p->max_active);
    proc_finish(p, x, PR_NO_ANSWER);
  } else if (x->state != P_QUEUED && x->state != P_DONE && now >= x->deadline) {
    const char *phase = x->state == P_TRANSPORT || x->state == P_JDWP ? "adb's answer"
                        : x->state == P_SHAKE                         ? "the JDWP handshake"
                                                                      : "HELO";
    snprintf(x->msg, sizeof x->msg, "no answer to %s within %d ms", phase, p->o->timeout_ms);
    proc_finish(p, x, PR_NO_ANSWER);
  }
}

/* ---- output ----------------------------------------------------------------------------------- */

static const char *debugger_of(const proc *x) {
  if (x->result == PR_ATTACHED) return "attached";
  if (x->result != PR_OK) return NULL;
  return x->beside ? "attached" : x->waiting ? "waiting" : "none";
}

static void print_table(ps *p, FILE *f) {
  /* ABI and VM columns as wide as their widest entry (within reason): "64-bit (x86_64)". */
  int wabi = 3, wvm = 2;
  for (size_t i = 0; i < p->n; i++) {
    const proc *x = p->v[i];
    if (x->result != PR_OK) continue;
    int la = x->helo.abi ? (int)strlen(sess_tx(x->helo.abi)) : 1, lv = (int)strlen(sess_tx(x->helo.vm_ident));
    if (la > wabi) wabi = la < 24 ? la : 24;
    if (lv > wvm) wvm = lv < 32 ? lv : 32;
  }
  fprintf(f, "%8s %5s  %-*s  %-8s  %-*s  %s\n", "PID", "USER", wabi, "ABI", "DEBUGGER", wvm, "VM", "NAME");
  for (size_t i = 0; i < p->n; i++) {
    const proc *x = p->v[i];
    if (x->result == PR_OK) {
      const ddmc_host_helo *h = &x->helo;
      char user[16] = "-";
      if (x->apnm_seen && x->apnm.has_user_id)
        snprintf(user, sizeof user, "%d", (int)x->apnm.user_id);
      else if (h->present & DDMC_HOST_HELO_USER_ID)
        snprintf(user, sizeof user, "%d", (int)h->user_id);
      const char *app = app_name_of(x);
      fprintf(f, "%8u %5s  %-*s  %-8s  %-*s  %s", (unsigned)x->pid, user, wabi, h->abi ? sess_tx(h->abi) : "-",
              x->beside ? "attached" : x->waiting ? "waiting" : "-", wvm, sess_tx(h->vm_ident), app && app[0] ? sess_tx(app) : "(no name)");
      if (h->pid != x->pid) fprintf(f, "  (the VM says pid %u)", (unsigned)h->pid);
      fputc('\n', f);
    } else {
      int pending = x->result == PR_PENDING;
      fprintf(f, "%8u %5s  %-*s  %-8s  %-*s  %s%s%s\n", (unsigned)x->pid, "-", wabi, "-",
              x->result == PR_ATTACHED ? "attached" : "?", wvm, "-", pending ? "" : "(",
              pending ? "(probing...)" : sess_tx(x->msg), pending ? "" : ")");
    }
  }
}

static void json_proc(jw *w, const proc *x) {
  jw_obj(w);
  jw_kuint(w, "pid", x->pid);
  jw_kstr(w, "state", result_name(x->result));
  jw_kstr(w, "message", x->result == PR_OK || x->result == PR_PENDING ? NULL : x->msg);
  const ddmc_host_helo *h = &x->helo;
  int ok = x->result == PR_OK;
  jw_key(w, "vm_pid");
  if (ok)
    jw_uint(w, h->pid);
  else
    jw_null(w);
  jw_kstr(w, "vm_ident", ok ? h->vm_ident : NULL);
  jw_kstr(w, "app_name", app_name_of(x));
  jw_key(w, "user_id");
  if (ok && x->apnm_seen && x->apnm.has_user_id)
    jw_int(w, x->apnm.user_id);
  else if (ok && (h->present & DDMC_HOST_HELO_USER_ID))
    jw_int(w, h->user_id);
  else
    jw_null(w);
  jw_kstr(w, "abi", ok ? h->abi : NULL);
  jw_kstr(w, "jvm_flags", ok ? h->jvm_flags : NULL);
  jw_kstr(w, "package", ok ? (x->apnm_seen && x->apnm.pkg_name ? x->apnm.pkg_name : h->pkg_name) : NULL);
  jw_key(w, "native_debuggable");
  if (ok && (h->present & DDMC_HOST_HELO_NATIVE_DEBUGGABLE))
    jw_bool(w, h->native_debuggable);
  else
    jw_null(w);
  jw_kstr(w, "debugger", debugger_of(x));
  jw_key(w, "waiting_for_debugger");
  if (ok)
    jw_bool(w, x->waiting);
  else
    jw_null(w);
  jw_key(w, "debugger_attached");
  if (ok || x->result == PR_ATTACHED)
    jw_bool(w, x->result == PR_ATTACHED || x->beside);
  else
    jw_null(w);
  jw_key(w, "probe_ms");
  if (x->state == P_DONE)
    jw_int(w, x->probe_ms);
  else
    jw_null(w);
  jw_close(w);
}

static void count_results(const ps *p, size_t *answered, size_t *pending) {
  *answered = *pending = 0;
  for (size_t i = 0; i < p->n; i++) {
    if (p->v[i]->result == PR_OK) (*answered)++;
    if (p->v[i]->result == PR_PENDING) (*pending)++;
  }
}

static int print_json(ps *p) {
  size_t answered, pending;
  count_results(p, &answered, &pending);
  jw w;
  jw_init(&w, stdout);
  jw_obj(&w);
  jw_kstr(&w, "command", "ps");
  jw_kbool(&w, "ok", 1);
  jw_kstr(&w, "target", p->target);
  jw_kint(&w, "timeout_ms", p->o->timeout_ms);
  jw_kint(&w, "elapsed_ms", sess_mono_ms() - p->t0);
  jw_kuint(&w, "count", p->n);
  jw_kuint(&w, "answered", answered);
  jw_key(&w, "processes");
  jw_arr(&w);
  for (size_t i = 0; i < p->n; i++) json_proc(&w, p->v[i]);
  jw_close(&w);
  if (p->a->watch) {
    jw_kbool(&w, "watch", 1);
    jw_kbool(&w, "interrupted", sess_interrupted != 0);
    jw_kuint(&w, "lists", (uint64_t)p->lists);
    jw_key(&w, "events");
    jw_arr(&w);
    for (size_t i = 0; i < p->n_ev; i++) {
      const event *e = &p->ev[i];
      jw_obj(&w);
      jw_kint(&w, "t_ms", e->t_ms);
      jw_kstr(&w, "event", e->appeared ? "appeared" : "gone");
      jw_kuint(&w, "pid", e->pid);
      if (e->appeared) {
        const proc *x = find_proc(p, e->pid);
        jw_kstr(&w, "app_name", x ? app_name_of(x) : NULL);
      } else {
        jw_kstr(&w, "app_name", e->app_name);
      }
      jw_close(&w);
    }
    jw_close(&w);
  }
  jw_close(&w);
  return jw_end(&w) == 0 ? EXIT_OK : EXIT_ERROR;
}

static void draw(ps *p) {
  size_t answered, pending;
  count_results(p, &answered, &pending);
  if (p->tty) fputs("\033[H\033[2J", stdout);
  time_t now = time(NULL);
  char hhmmss[16];
  strftime(hhmmss, sizeof hhmmss, "%H:%M:%S", localtime(&now));
  printf("ddmc ps  %s  %zu processes (+%u -%u)  %s  (Ctrl-C quits)\n\n", p->target, p->n, p->added, p->removed, hhmmss);
  print_table(p, stdout);
  if (!p->tty) putchar('\n');
  fflush(stdout);
  p->added = p->removed = 0;
  p->dirty = 0;
  p->draws++;
  p->last_draw = sess_mono_ms();
}

/* ---- the loop --------------------------------------------------------------------------------- */

static void on_sigint(int sig) {
  (void)sig;
  sess_interrupted = 1;
}

static void ps_free(ps *p) {
  ddmc_host_free(p->track);
  p->track = NULL;
  ddmc_host_reader_free(p->trd);
  p->trd = NULL;
  for (size_t i = 0; i < p->n; i++) proc_free(p, p->v[i]);
  free(p->v);
  p->v = NULL;
  p->n = 0;
  for (size_t i = 0; i < p->n_ev; i++) free(p->ev[i].app_name);
  free(p->ev);
  p->ev = NULL;
  p->n_ev = 0;
  free(p->pf);
  free(p->pp);
  p->pf = NULL;
  p->pp = NULL;
}

/* Room for the probes: as many descriptors as the hard limit allows, within MAX_PROBES. */
static size_t probe_budget(void) {
  struct rlimit rl;
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return 16;
  rlim_t want = MAX_PROBES + 64;
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
    rlim_t cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
    struct rlimit nr = {cur, rl.rlim_max};
    if (setrlimit(RLIMIT_NOFILE, &nr) == 0) rl.rlim_cur = cur;
  }
  if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur >= want) return MAX_PROBES;
  return rl.rlim_cur > 32 ? (size_t)(rl.rlim_cur - 32) : 1;
}

/* One poll() over the tracker and every probe's socket, until the next deadline (a probe's, the
 * first list's, `end`, or 100 ms), and the reads it found ready. */
static void poll_once(ps *p, int64_t now, int64_t end) {
  size_t need = 1 + p->active;
  if (need > p->pcap) {
    size_t cap = need * 2;
    struct pollfd *npf = realloc(p->pf, cap * sizeof *npf);
    if (npf == NULL) ps_fail(p, EXIT_ERROR, "out of memory");
    p->pf = npf;
    proc **npp = realloc(p->pp, cap * sizeof *npp);
    if (npp == NULL) ps_fail(p, EXIT_ERROR, "out of memory");
    p->pp = npp;
    p->pcap = cap;
  }
  struct pollfd *pf = p->pf;
  proc **pp = p->pp;
  size_t nf = 0;
  if (p->track) {
    pf[nf] = (struct pollfd){.fd = ddmc_host_fd(p->track), .events = POLLIN};
    pp[nf++] = NULL;
  }
  int64_t wake = now + 100; /* SIGINT is noticed at least this often */
  if (p->lists == 0 && p->t0 + p->o->timeout_ms < wake) wake = p->t0 + p->o->timeout_ms;
  for (size_t i = 0; i < p->n; i++) {
    proc *x = p->v[i];
    if (x->state == P_DONE) continue;
    int64_t t = x->helo_done && x->linger_until < x->deadline ? x->linger_until : x->deadline;
    if (t < wake) wake = t;
    if (x->h == NULL) continue;
    pf[nf] = (struct pollfd){.fd = ddmc_host_fd(x->h), .events = POLLIN};
    pp[nf++] = x;
  }
  if (end < wake) wake = end;
  int rc = poll(pf, nf, wake > now ? (int)(wake - now) : 0);
  if (rc < 0 && errno != EINTR) ps_fail(p, EXIT_ERROR, "poll: %s", strerror(errno));
  for (size_t i = 0; rc > 0 && i < nf; i++) {
    if (!pf[i].revents) continue;
    if (pp[i] == NULL)
      tracker_read(p);
    else if (pp[i]->h)
      probe_readable(p, pp[i]);
  }
}

/* The listing at the end (the last picture with --watch) and -v's line; returns the exit code. */
static int ps_report(ps *p) {
  const opts *o = p->o;
  size_t answered, pending;
  count_results(p, &answered, &pending);
  if (o->verbose)
    fprintf(stderr, "ddmc: %zu JDWP processes, %zu answered HELO, %zu other, in %lld ms (%zu probes at a time)\n", p->n,
            answered, p->n - answered - pending, (long long)(sess_mono_ms() - p->t0), p->max_active);
  int code = EXIT_OK;
  if (o->json) {
    code = print_json(p);
  } else if (p->a->watch) {
    if (p->dirty || p->draws == 0) draw(p);
  } else {
    print_table(p, stdout);
  }
  if (!o->json && (fflush(stdout) != 0 || ferror(stdout))) {
    fprintf(stderr, "ddmc: cannot write the output: %s\n", strerror(errno));
    code = EXIT_ERROR;
  }
  return code;
}

static int ps_run(const opts *o, const ps_args *a) {
  ps *p = calloc(1, sizeof *p);
  if (p == NULL) {
    fprintf(stderr, "ddmc: out of memory\n");
    return EXIT_ERROR;
  }
  p->o = o;
  p->a = a;
  p->t0 = sess_mono_ms();
  p->tty = isatty(STDOUT_FILENO);
  p->max_active = probe_budget();
  snprintf(p->target, sizeof p->target, "adb 127.0.0.1:%u%s%s", (unsigned)o->adb_port, o->serial ? " device " : "",
           o->serial ? o->serial : "");
  if (a->watch) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sa.sa_flags = SA_RESTART; /* a write to stdout must not fail with EINTR; poll() still returns */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
  }
  tracker_open(p);
  int64_t end = a->watch && a->duration >= 0 ? p->t0 + (int64_t)(a->duration * 1000.0) : INT64_MAX;

  p->last_draw = p->t0; /* the first picture waits for the first answers, up to REDRAW_MIN_MS */
  for (;;) {
    int64_t now = sess_mono_ms();
    if (p->lists == 0 && now - p->t0 >= o->timeout_ms)
      ps_fail(p, EXIT_TIMEOUT, "track-jdwp sent no list within %d ms", o->timeout_ms);
    for (size_t i = 0; i < p->n; i++) probe_timers(p, p->v[i], now);
    for (size_t i = 0; i < p->n && p->active < p->max_active; i++)
      if (p->v[i]->state == P_QUEUED) probe_start(p, p->v[i]);
    size_t answered, pending;
    count_results(p, &answered, &pending);
    if (!a->watch && p->lists > 0 && pending == 0) break;
    if (a->watch) {
      if (p->lists > 0 && !o->json && p->dirty && (pending == 0 || now - p->last_draw >= REDRAW_MIN_MS)) draw(p);
      if (sess_interrupted || now >= end) break;
    }

    poll_once(p, now, end);
    /* Without --watch the first list is the answer: adb may stop tracking. */
    if (!a->watch && p->lists > 0 && p->track) {
      ddmc_host_free(p->track);
      p->track = NULL;
    }
  }

  int code = ps_report(p);
  ps_free(p);
  free(p);
  return code;
}

static int ps_main(opts *o, int argc, char **argv) {
  ps_args a = {0, -1};
  int have_duration = 0;
  for (int k = 0; k < argc; k++) {
    if (strcmp(argv[k], "--watch") == 0 || strcmp(argv[k], "-w") == 0) {
      a.watch = 1;
    } else if (strcmp(argv[k], "--duration") == 0 || strcmp(argv[k], "-d") == 0) {
      a.duration = cli_parse_seconds(k + 1 < argc ? argv[++k] : NULL, "--duration");
      have_duration = 1;
    } else {
      cli_usage_error("ps: unexpected argument '%s'", argv[k]);
    }
  }
  if (have_duration && !a.watch) cli_usage_error("ps: --duration goes with --watch%s", "");
  return ps_run(o, &a);
}

const cli_cmd cmd_ps = {
    .name = "ps",
    .summary =
        "  ps [--watch [--duration S]]\n"
        "                         every JDWP process on the device (adb track-jdwp; -s, -P), each\n"
        "                         asked for HELO: pid, user id, ABI, debugger, VM, app name; --watch\n"
        "                         redraws as processes come and go (for S seconds or until Ctrl-C)\n",
    .help =
        "usage: ddmc [-s SERIAL] [-P ADB_PORT] [--json] [-v] [-t MS] ps [--watch [--duration S]]\n"
        "\n"
        "Every JDWP process on the device, through the local adb server (track-jdwp). Each is asked\n"
        "for HELO, all at once: pid, user id, ABI, debugger (waiting: the VM waits for one; attached:\n"
        "a debugger holds it, said by the VM beside it or by its refusing the connection), VM, app\n"
        "name. -t MS bounds the whole listing (default 5000): the command ends within MS, listing\n"
        "every VM that has not answered by then as not answering (with --watch: within MS of a\n"
        "process appearing). -c and -p do not apply.\n"
        "\n"
        "Options:\n"
        "  -w, --watch              keep listening to track-jdwp and redraw as processes come and go\n"
        "  -d, --duration S         with --watch: stop after S seconds (default: at Ctrl-C)\n",
    .run = ps_main,
    .lists_adb = 1,
};
