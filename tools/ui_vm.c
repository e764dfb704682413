/* SPDX-License-Identifier: Apache-2.0 */
/* The VM worker of `ddmc ui` (ui_vm.h): the connection, the polls, the histories, the snapshot.
 * The mailbox's operations are in ui_ops.c; this file keeps what lives between polls. */
#include "ui_vm_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define T_THEN DDMC_HOST_FOURCC('T', 'H', 'E', 'N')
#define T_THST DDMC_HOST_FOURCC('T', 'H', 'S', 'T')
#define T_HPIF DDMC_HOST_FOURCC('H', 'P', 'I', 'F')
#define T_APNM DDMC_HOST_FOURCC('A', 'P', 'N', 'M')
#define T_WAIT DDMC_HOST_FOURCC('W', 'A', 'I', 'T')
#define T_MPSE DDMC_HOST_FOURCC('M', 'P', 'S', 'E')
#define T_FAIL DDMC_HOST_FOURCC('F', 'A', 'I', 'L')
#define T_HPDS DDMC_HOST_FOURCC('H', 'P', 'D', 'S')

static int64_t wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

ui_vm *ui_vm_new(const opts *o) {
  ui_vm *v = calloc(1, sizeof *v);
  if (v == NULL) return NULL;
  v->o = o;
  v->pid = o->pid;
  snprintf(v->target, sizeof v->target, "%s", o->target);
  pthread_mutex_init(&v->mu, NULL);
  pthread_cond_init(&v->cv, NULL);
  ddmc_host_threads_init(&v->threads);
  ddmc_host_heapdump_init(&v->dump, 0);
  snprintf(v->state, sizeof v->state, "connecting");
  return v;
}

static void forget_vm(ui_vm *v) {
  ddmc_host_free(v->h);
  v->h = NULL;
  ddmc_host_helo_free(&v->helo);
  ddmc_host_apnm_free(&v->apnm);
  v->apnm_seen = v->waiting = 0;
  ddmc_host_threads_free(&v->threads);
  ddmc_host_threads_init(&v->threads);
  ddmc_host_heapdump_free(&v->dump);
  ddmc_host_heapdump_init(&v->dump, 0);
  free(v->trace_data);
  v->trace_data = NULL;
  v->trace_len = 0;
  free(v->hprof_data);
  v->hprof_data = NULL;
  v->hprof_len = 0;
  v->tracking_allocs = v->tracing = 0;
}

void ui_vm_set_list(ui_vm *v, ui_list *l) { v->list = l; }

void ui_vm_free(ui_vm *v) {
  if (v == NULL) return;
  forget_vm(v);
  ddmc_host_threads_free(&v->threads);
  ddmc_host_heapdump_free(&v->dump);
  free(v->kept_trace);
  free(v->kept_real);
  free(v->snap);
  free(v->mb.out);
  pthread_mutex_destroy(&v->mu);
  pthread_cond_destroy(&v->cv);
  free(v);
}

void ui_vm_shutdown(ui_vm *v) {
  pthread_mutex_lock(&v->mu);
  v->shutdown = 1;
  pthread_cond_broadcast(&v->cv);
  pthread_mutex_unlock(&v->mu);
}

/* ---- what the VM sends ------------------------------------------------------------------------ */

static void heap_sample(ui_vm *v, const ddmc_host_heap_info *h) {
  ui_heap_sample *s = &v->heap[v->heap_n % UI_VM_HEAP_SAMPLES];
  s->t_ms = wall_ms();
  s->allocated = h->allocated_bytes;
  s->footprint = h->footprint;
  s->max = h->max_bytes;
  s->objects = h->allocated_objects;
  v->heap_n++;
  /* HPIF with reason NEXT_GC or EVERY_GC: a collection just ended. */
  if (h->reason == 2 || h->reason == 3) v->gc[v->gc_n++ % UI_VM_GC_MARKS] = s->t_ms;
}

static void take_hpif(ui_vm *v, const ddmc_host_packet *p) {
  ddmc_host_hpif hp;
  if (ddmc_host_hpif_parse(p->chunk, p->chunk_len, &hp) != 0) return;
  if (hp.count > 0) {
    v->hpif_seq++;
    v->last_hpif = hp.heaps[0];
    heap_sample(v, &hp.heaps[0]);
  }
  ddmc_host_hpif_free(&hp);
}

/* A copy of the chunk's payload into *data (the previous one freed). */
static void take_blob(const ddmc_host_packet *p, uint8_t **data, size_t *len) {
  free(*data);
  *len = 0;
  *data = malloc(p->chunk_len ? p->chunk_len : 1);
  if (*data == NULL) return;
  memcpy(*data, p->chunk, p->chunk_len);
  *len = p->chunk_len;
}

/* Everything that is not the reply being waited for. Called by the worker without the lock: the
 * fields it changes are the worker's own until ui_vm_publish copies them out. */
void ui_vm_dispatch(ui_vm *v, const ddmc_host_packet *p) {
  if (p->is_reply || !p->is_ddm) return;
  if (p->chunk_type == T_APNM) {
    ddmc_host_apnm a;
    if (ddmc_host_apnm_parse(p->chunk, p->chunk_len, &a) == 0) {
      ddmc_host_apnm_free(&v->apnm);
      v->apnm = a;
      v->apnm_seen = 1;
    }
  } else if (p->chunk_type == T_WAIT) {
    uint8_t reason;
    if (ddmc_host_wait_parse(p->chunk, p->chunk_len, &reason) == 0) v->waiting = 1;
  } else if (p->chunk_type == T_HPIF) {
    take_hpif(v, p);
  } else if (p->chunk_type == T_MPSE) {
    take_blob(p, &v->trace_data, &v->trace_len);
  } else if (p->chunk_type == T_HPDS) {
    take_blob(p, &v->hprof_data, &v->hprof_len);
  } else if (ddmc_host_threads_feed(&v->threads, p, NULL, NULL) == 0) {
    if (ddmc_host_heapdump_feed(&v->dump, p) == 1) v->dump_seq++;
  }
}

/* Dispatches what has arrived, without waiting; a lost connection sets v->lost. */
void ui_vm_drain(ui_vm *v, int wait_ms) {
  for (int k = 0; v->h != NULL && k < 10000; k++) {
    ddmc_host_packet p;
    int rc = ddmc_host_recv(v->h, &p, k == 0 ? wait_ms : 0);
    if (rc == DDMC_ETIMEDOUT) return;
    if (rc == DDMC_EPROTO || rc == DDMC_ETOOBIG) {
      /* A bad chunk is consumed and the stream goes on; a broken stream fails every later call. */
      if (++v->bad_packets > 100) v->lost = 1;
      continue;
    }
    if (rc) {
      v->lost = 1;
      snprintf(v->error, sizeof v->error, "the connection was lost: %s", ddmc_host_strerror(rc));
      return;
    }
    ui_vm_dispatch(v, &p);
  }
}

/* One request and its reply; a FAIL or JDWP error becomes a message in err. Returns 0, 1 (the
 * VM refused: err says why) or a DDMC_E* code (the connection is marked lost when it is gone).
 * take (may be NULL) sees the reply before the queued packets are dispatched. */
int ui_vm_request(ui_vm *v, uint32_t type, const void *data, size_t len, int timeout_ms,
                  void (*take)(ui_vm *v, const ddmc_host_packet *reply), char *err, size_t errlen) {
  ddmc_host_packet r;
  char t[5];
  int rc = ddmc_host_request(v->h, type, data, len, &r, timeout_ms);
  if (rc) {
    snprintf(err, errlen, "%s: %s", ddmc_host_fourcc_str(type, t), ddmc_host_strerror(rc));
    if (rc != DDMC_ETIMEDOUT && rc != DDMC_EQFULL) {
      v->lost = 1;
      snprintf(v->error, sizeof v->error, "the connection was lost: %s", ddmc_host_strerror(rc));
    }
    ui_vm_drain(v, 0);
    return rc;
  }
  int refused = 0;
  if (r.error != 0) {
    snprintf(err, errlen, "the VM answered %s with JDWP error %u", ddmc_host_fourcc_str(type, t), (unsigned)r.error);
    refused = 1;
  } else if (r.is_ddm && r.chunk_type == T_FAIL) {
    ddmc_host_fail f;
    int ok = ddmc_host_fail_parse(r.chunk, r.chunk_len, &f) == 0;
    snprintf(err, errlen, "the VM refused %s: %s", ddmc_host_fourcc_str(type, t), ok && f.msg ? f.msg : "(no message)");
    if (ok) ddmc_host_fail_free(&f);
    refused = 1;
  } else if (take) {
    take(v, &r);
  }
  ui_vm_drain(v, 0);
  return refused;
}

/* ---- connecting ------------------------------------------------------------------------------- */

static int open_connection(ui_vm *v) {
  const opts *o = v->o;
  int rc;
  v->error[0] = '\0'; /* this attempt's reason replaces the last one's */
  if (v->pid) {
    char why[256] = "";
    rc = ddmc_host_connect_adb(&v->h, "127.0.0.1", o->adb_port, o->serial, v->pid, o->timeout_ms, why, sizeof why);
    if (rc && why[0]) snprintf(v->error, sizeof v->error, "cannot reach %s: adb says %s", v->target, why);
  } else if (v->list) {
    snprintf(v->state, sizeof v->state, "none");
    snprintf(v->error, sizeof v->error, "no VM picked: pick one on the VMs page");
    return -1;
  } else {
    rc = ddmc_host_connect_tcp(&v->h, o->host, o->port, o->timeout_ms);
  }
  if (rc) {
    v->h = NULL;
    if (!v->error[0]) snprintf(v->error, sizeof v->error, "cannot connect to %s: %s", v->target, ddmc_host_strerror(rc));
    snprintf(v->state, sizeof v->state, "unreachable");
    return -1;
  }
  if ((rc = ddmc_host_handshake(v->h, o->timeout_ms)) != 0 || (rc = ddmc_host_hello(v->h, &v->helo, o->timeout_ms)) != 0) {
    /* A VM that accepts the connection but not the handshake has a debugger on it already. */
    snprintf(v->error, sizeof v->error, "%s: %s", v->target, ddmc_host_strerror(rc));
    snprintf(v->state, sizeof v->state, "attached");
    return -1;
  }
  if (o->zlib) ddmc_host_opt_in_zlib(v->h);
  char err[256];
  uint8_t on = 1, every_gc = 3;
  if (ui_vm_request(v, T_THEN, &on, 1, o->timeout_ms, NULL, err, sizeof err) < 0) return -1;
  /* Heap info after every collection: the GC marks on the chart. */
  if (ui_vm_request(v, T_HPIF, &every_gc, 1, o->timeout_ms, NULL, err, sizeof err) < 0) return -1;
  snprintf(v->state, sizeof v->state, "connected");
  v->error[0] = '\0';
  return 0;
}

/* ---- the timeline ----------------------------------------------------------------------------- */

static ui_row *row_of(ui_vm *v, uint32_t id) {
  for (size_t i = 0; i < v->nrows; i++)
    if (v->rows[i].id == id) return &v->rows[i];
  if (v->nrows == UI_VM_TIMELINE_ROWS) return NULL;
  ui_row *r = &v->rows[v->nrows++];
  memset(r, 0, sizeof *r);
  memset(r->s, '.', sizeof r->s);
  r->id = id;
  return r;
}

/* One column of the timeline: each live thread's status as a character ('0'+code, '?' past 9),
 * '.' where a thread was not there. Rows whose whole window is '.' go. */
static void timeline_sample(ui_vm *v) {
  uint64_t col = v->tl_n % UI_VM_TIMELINE_SAMPLES;
  v->tl_t[col] = wall_ms();
  for (size_t i = 0; i < v->nrows; i++) v->rows[i].s[col] = '.';
  for (size_t i = 0; i < v->threads.count; i++) {
    const ddmc_host_thread *t = &v->threads.v[i];
    ui_row *r = row_of(v, t->id);
    if (r == NULL) continue;
    r->s[col] = t->has_stats ? (char)(t->status <= 9 ? '0' + t->status : '?') : '6';
    r->last = v->tl_n;
    snprintf(r->name, sizeof r->name, "%s", t->name);
  }
  v->tl_n++;
  size_t k = 0;
  for (size_t i = 0; i < v->nrows; i++)
    if (v->tl_n - v->rows[i].last <= UI_VM_TIMELINE_SAMPLES) v->rows[k++] = v->rows[i];
  v->nrows = k;
}

static int serve_mailbox(ui_vm *v);

/* ---- the worker ------------------------------------------------------------------------------- */

static void take_thst(ui_vm *v, const ddmc_host_packet *reply) {
  ddmc_host_threads_feed(&v->threads, reply, NULL, NULL);
}

static void poll_vm(ui_vm *v) {
  char err[256];
  uint8_t now = 1;
  if (ui_vm_request(v, T_THST, NULL, 0, v->o->timeout_ms, take_thst, err, sizeof err) < 0 || v->lost) return;
  timeline_sample(v);
  ui_vm_request(v, T_HPIF, &now, 1, v->o->timeout_ms, NULL, err, sizeof err);
}

static void lose(ui_vm *v) {
  forget_vm(v);
  v->lost = 0;
  v->bad_packets = 0;
  snprintf(v->state, sizeof v->state, "lost");
  v->nrows = 0;
  v->tl_n = 0;
}

void ui_vm_pick(ui_vm *v, uint32_t pid) {
  lose(v);
  v->heap_n = v->gc_n = 0;
  v->hpif_seq = 0;
  free(v->kept_trace);
  free(v->kept_real);
  v->kept_trace = v->kept_real = NULL;
  v->kept_trace_len = v->kept_real_len = 0;
  v->pid = pid;
  snprintf(v->target, sizeof v->target, "pid %u via adb 127.0.0.1:%u%s%s", (unsigned)pid, (unsigned)v->o->adb_port,
           v->o->serial ? " device " : "", v->o->serial ? v->o->serial : "");
  snprintf(v->state, sizeof v->state, "connecting");
  v->error[0] = '\0';
  v->connect_now = 1;
}

static void deadline_in(struct timespec *dl, int ms) {
  clock_gettime(CLOCK_REALTIME, dl);
  dl->tv_sec += ms / 1000;
  dl->tv_nsec += (long)(ms % 1000) * 1000000L;
  if (dl->tv_nsec >= 1000000000L) {
    dl->tv_sec++;
    dl->tv_nsec -= 1000000000L;
  }
}

/* With no VM to read, the worker sleeps until a page posts (or ms pass). */
static void wait_for_post(ui_vm *v, int ms) {
  struct timespec dl;
  deadline_in(&dl, ms);
  pthread_mutex_lock(&v->mu);
  int rc = 0;
  while (v->mb.posted == v->mb.done && !v->shutdown && rc != ETIMEDOUT) rc = pthread_cond_timedwait(&v->cv, &v->mu, &dl);
  pthread_mutex_unlock(&v->mu);
}

/* --all: a new listing is published at once, whether or not a VM is connected. */
static int list_changed(ui_vm *v) {
  if (v->list == NULL) return 0;
  uint64_t seq = ui_list_seq(v->list);
  if (seq == v->list_seq) return 0;
  v->list_seq = seq;
  return 1;
}

void ui_vm_run(ui_vm *v, volatile sig_atomic_t *stop) {
  int64_t next_poll = 0, next_connect = 0;
  while (!*stop) {
    int64_t now = sess_mono_ms();
    if (v->connect_now) next_connect = now;
    v->connect_now = 0;
    if (list_changed(v)) ui_snap_publish(v);
    if (v->h == NULL && now >= next_connect) {
      if (open_connection(v) != 0) {
        forget_vm(v);
        next_connect = now + 2000;
      }
      ui_snap_publish(v);
    }
    if (v->h != NULL && now >= next_poll) {
      poll_vm(v);
      next_poll = now + 1000;
      if (v->lost) lose(v);
      ui_snap_publish(v);
    }
    if (serve_mailbox(v)) {
      if (v->lost) lose(v);
      ui_snap_publish(v);
      continue;
    }
    if (v->h != NULL) {
      ui_vm_drain(v, 50);
      if (v->lost) {
        lose(v);
        ui_snap_publish(v);
      }
    } else {
      wait_for_post(v, 50);
    }
  }
  ui_vm_shutdown(v);
}

/* ---- the mailbox ----------------------------------------------------------------------------- */

/* Runs the posted operation, if there is one; returns 1 when it did. */
static int serve_mailbox(ui_vm *v) {
  pthread_mutex_lock(&v->mu);
  if (v->mb.posted == v->mb.done) {
    pthread_mutex_unlock(&v->mu);
    return 0;
  }
  char op[sizeof v->mb.op], arg[sizeof v->mb.arg];
  memcpy(op, v->mb.op, sizeof op);
  memcpy(arg, v->mb.arg, sizeof arg);
  uint64_t seq = v->mb.posted;
  pthread_mutex_unlock(&v->mu);
  ui_vm_result r = {0};
  ui_ops_run(v, op, arg, &r);
  pthread_mutex_lock(&v->mu);
  free(v->mb.out);
  v->mb.out = r.body; /* until its caller takes it, or the next post when the caller gave up */
  v->mb.out_len = r.len;
  v->mb.status = r.status;
  v->mb.ctype = r.ctype;
  v->mb.done = seq;
  pthread_cond_broadcast(&v->cv);
  pthread_mutex_unlock(&v->mu);
  return 1;
}

static void result_text(ui_vm_result *r, int status, const char *msg) {
  r->status = status;
  r->ctype = "text/plain; charset=utf-8";
  r->body = strdup(msg);
  r->len = r->body ? strlen(r->body) : 0;
}

void ui_vm_call(ui_vm *v, const char *op, const char *arg, ui_vm_result *r) {
  memset(r, 0, sizeof *r);
  if (strlen(op) >= sizeof v->mb.op || strlen(arg) >= sizeof v->mb.arg) {
    result_text(r, 400, "bad request");
    return;
  }
  struct timespec dl;
  deadline_in(&dl, 10000);
  pthread_mutex_lock(&v->mu);
  int rc = 0;
  /* Waiting for done alone would free a result its caller is about to take: the worker's
   * broadcast wakes this caller too, maybe first. */
  while ((v->mb.posted != v->mb.done || v->mb.posted != v->mb.settled) && !v->shutdown && rc != ETIMEDOUT)
    rc = pthread_cond_timedwait(&v->cv, &v->mu, &dl);
  if (v->mb.posted != v->mb.done || v->mb.posted != v->mb.settled || v->shutdown) {
    pthread_mutex_unlock(&v->mu);
    result_text(r, 503, "busy: another request is running");
    return;
  }
  free(v->mb.out); /* a result whose caller gave up */
  v->mb.out = NULL;
  uint64_t seq = ++v->mb.posted;
  snprintf(v->mb.op, sizeof v->mb.op, "%s", op);
  snprintf(v->mb.arg, sizeof v->mb.arg, "%s", arg);
  pthread_cond_broadcast(&v->cv); /* the worker, when it waits for a post */
  /* A trace or a heap map may take long to arrive; everything else is one request. */
  deadline_in(&dl, 120000);
  rc = 0;
  while (v->mb.done < seq && !v->shutdown && rc != ETIMEDOUT) rc = pthread_cond_timedwait(&v->cv, &v->mu, &dl);
  if (v->mb.done == seq) {
    r->status = v->mb.status;
    r->ctype = v->mb.ctype;
    r->body = v->mb.out;
    r->len = v->mb.out_len;
    v->mb.out = NULL;
  }
  v->mb.settled = seq; /* taken, or given up: the next caller may post */
  pthread_cond_broadcast(&v->cv);
  pthread_mutex_unlock(&v->mu);
  if (r->status == 0) result_text(r, 504, "the VM did not finish in time");
}

/* ---- the snapshot ----------------------------------------------------------------------------- */

char *ui_vm_snapshot(ui_vm *v, uint64_t after, int wait_ms, uint64_t *version, size_t *len) {
  struct timespec dl;
  deadline_in(&dl, wait_ms);
  pthread_mutex_lock(&v->mu);
  int rc = 0;
  while ((v->snap == NULL || v->version <= after) && !v->shutdown && rc != ETIMEDOUT)
    rc = pthread_cond_timedwait(&v->cv, &v->mu, &dl);
  char *out = NULL;
  if (v->snap != NULL && v->version > after && !v->shutdown && (out = malloc(v->snap_len + 1)) != NULL) {
    memcpy(out, v->snap, v->snap_len + 1);
    *len = v->snap_len;
    *version = v->version;
  }
  pthread_mutex_unlock(&v->mu);
  return out;
}
