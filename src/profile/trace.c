/* SPDX-License-Identifier: Apache-2.0 */
/* Method tracing: starting and stopping a trace, and the method-event path every VM thread runs
 * while an instrumented trace records.
 *
 * Load: two events per method call on every VM thread for the whole trace, so the path is kept
 * to a few loads, a store to the thread's own busy flag, a clock read, a lookup in a
 * lock-free method table and a 14-byte store into the thread's region of the buffer. The
 * thread CPU clock is a system call (over a microsecond where this was measured); it is read
 * once per trace_cpu_refresh_us of the thread's wall time and extrapolated in between.
 *
 * Handshake with stop. A VM thread sets its busy flag, then loads the published trace; stop clears
 * the published pointer, then waits for every busy flag. Each side stores before it loads, with
 * the barrier between on stop's side where the kernel can do that (afence.h), so a thread either
 * sees no trace or is waited for: once stop has
 * seen every flag clear no thread touches the trace, and it can be moved, sent and freed. The
 * per-thread states themselves are never freed before ddmc_vm_free, so the flag is always there. */
#include <sched.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "profile/afence.h"
#include "profile/trace_int.h"

#define MSLOTS 65536u        /* method table slots; ids are slot << 2 */
#define REGION_RECORDS 1170u /* about 16 KiB per region */
#define SPIN_BEFORE_YIELD 64

/* ---- the buffer */

/* A region for a writer (its start and end in pos and end): 1, or 0 once the buffer is full. */
static int take_region(ddmc__prof_trace *tr, uint8_t **pos, uint8_t **end, size_t *off) {
  if (atomic_load_explicit(&tr->overflow, memory_order_relaxed)) return 0;
  size_t o = atomic_fetch_add_explicit(&tr->next, tr->region, memory_order_relaxed);
  if (o >= tr->cap) { /* cap is a whole number of regions */
    atomic_store_explicit(&tr->overflow, 1, memory_order_relaxed);
    return 0;
  }
  *pos = tr->buf + o;
  *end = *pos + tr->region;
  *off = o;
  return 1;
}

static int emit(ddmc__prof_trace *tr, struct ddmc__prof_tthread *t, uint32_t value, uint32_t cpu, uint32_t wall) {
  if (t->pos == t->end) {
    if (t->pos != NULL) tr->fill[t->region_off / tr->region] = (uint32_t)tr->region;
    if (!take_region(tr, &t->pos, &t->end, &t->region_off)) {
      t->pos = t->end = NULL;
      return 0;
    }
  }
  ddmc__prof_dmtrace_rec(t->pos, t->tid, value, cpu, wall);
  t->pos += DDMC__TRACE_REC;
  return 1;
}

/* ---- methods */

static uint32_t method_id(ddmc__prof_trace *tr, uint64_t cls, uint32_t method) {
  uint64_t h = cls * 0x9e3779b97f4a7c15ull ^ ((uint64_t)method + 1) * 0xc2b2ae3d27d4eb4full;
  uint32_t mask = tr->mcap - 1, i = (uint32_t)(h >> 40) & mask;
  for (uint32_t probes = 0; probes < tr->mcap; probes++, i = (i + 1) & mask) {
    ddmc__prof_mslot *s = &tr->mslots[i];
    uint32_t st = atomic_load_explicit(&s->state, memory_order_acquire);
    if (st == 0) {
      if (atomic_load_explicit(&tr->mcount, memory_order_relaxed) >= tr->mlimit) return DDMC__NO_METHOD;
      if (atomic_compare_exchange_strong(&s->state, &st, 1)) {
        s->cls = cls;
        s->method = method;
        atomic_fetch_add_explicit(&tr->mcount, 1, memory_order_relaxed);
        atomic_store_explicit(&s->state, 2, memory_order_release);
        return i << 2;
      }
    }
    /* Another thread is filling this slot: two stores away from done. */
    for (int spins = 0; st == 1; spins++) {
      if (spins >= SPIN_BEFORE_YIELD) sched_yield();
      st = atomic_load_explicit(&s->state, memory_order_acquire);
    }
    if (s->cls == cls && s->method == method) return i << 2;
  }
  return DDMC__NO_METHOD;
}

/* ---- clocks */

static int64_t thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The thread's CPU time in µs since its first event: from the kernel at most every refresh_ns of
 * wall time, advanced with the wall clock in between, and never backwards. A thread that was
 * descheduled inside a window is charged at most that window, and only until the next read. */
static uint32_t cpu_us(ddmc__prof_trace *tr, struct ddmc__prof_tthread *t, int64_t now) {
  if (tr->refresh_ns == 0 || now - t->real_at_ns >= tr->refresh_ns) {
    t->real_ns = thread_cpu_ns();
    t->real_at_ns = now;
    if (t->real_ns > t->cpu_ns) t->cpu_ns = t->real_ns;
  } else {
    int64_t est = t->real_ns + (now - t->real_at_ns);
    if (est > t->cpu_ns) t->cpu_ns = est;
  }
  return (uint32_t)((t->cpu_ns - t->cpu_base_ns) / 1000);
}

/* ---- a thread's stack as the trace saw it */

static int push(ddmc_vm *vm, struct ddmc__prof_tthread *t, uint64_t cls, uint32_t method, uint32_t id) {
  if (t->depth == t->cap) {
    if (t->cap >= DDMC__TRACE_MAX_DEPTH) return 0;
    uint32_t cap = t->cap ? t->cap * 2 : 64;
    ddmc__prof_tframe *s = ddmc__realloc(&vm->mem, t->stack, (size_t)cap * sizeof(*s));
    if (s == NULL) return 0;
    t->stack = s;
    t->cap = cap;
  }
  t->stack[t->depth++] = (ddmc__prof_tframe){cls, method, id};
  return 1;
}

/* Frames the thread left by an exception: UNROLL records, innermost first. */
static void unroll_to(ddmc__prof_trace *tr, struct ddmc__prof_tthread *t, uint32_t depth, uint32_t cpu, uint32_t wall) {
  while (t->depth > depth) {
    const ddmc__prof_tframe *f = &t->stack[--t->depth];
    if (f->id != DDMC__NO_METHOD) emit(tr, t, f->id | DDMC__TR_UNROLL, cpu, wall);
  }
}

/* Frames entered before the trace saw this thread (or while it could not follow): asked of the VM
 * on the thread itself, outermost first, and given ENTER records so every EXIT has its ENTER. */
static void backfill(ddmc_vm *vm, ddmc__prof_trace *tr, struct ddmc__prof_tthread *t, uint32_t thread, int32_t depth,
                     uint32_t upto, uint32_t cpu, uint32_t wall) {
  const ddmc_vm_bridge *bridge = ddmc__bridge(vm);
  while (t->depth < upto) {
    ddmc_location l;
    uint32_t id = DDMC__NO_METHOD;
    memset(&l, 0, sizeof(l));
    if (bridge->frame_location && bridge->frame_location(vm->bridge_data, thread, depth - (int32_t)t->depth, &l) == 0)
      id = method_id(tr, l.cls, l.method);
    if (!push(vm, t, l.cls, l.method, id)) return;
    if (id != DDMC__NO_METHOD) emit(tr, t, id | DDMC__TR_ENTER, cpu, wall);
  }
}

static void thread_reset(ddmc__prof_trace *tr, struct ddmc__prof_tthread *t, uint32_t thread, int64_t now) {
  t->gen = tr->gen;
  t->tid = (uint16_t)thread;
  t->depth = 0;
  t->pos = t->end = NULL;
  t->cpu_base_ns = t->cpu_ns = t->real_ns = thread_cpu_ns();
  t->real_at_ns = now;
  t->last_wall = 0;
  ddmc__prof_trace_seen(tr, thread);
}

static void record(ddmc_vm *vm, ddmc__prof_trace *tr, struct ddmc__prof_tthread *t, uint32_t thread,
                   const ddmc_location *loc, uint32_t d, int exit) {
  int64_t now = ddmc__prof_tclock_ns(&tr->clock);
  if (t->gen != tr->gen) thread_reset(tr, t, thread, now);
  uint32_t wall = (uint32_t)(now / 1000);
  if (wall < t->last_wall) wall = t->last_wall; /* a thread moved to a CPU whose counter lags */
  t->last_wall = wall;
  uint32_t cpu = cpu_us(tr, t, now);
  uint32_t want = exit ? d + 1 : d; /* frames below the event's own, plus it for an exit */
  unroll_to(tr, t, want, cpu, wall);
  if (t->depth < want) backfill(vm, tr, t, thread, (int32_t)d, want, cpu, wall);
  if (t->depth != want) { /* deeper than the tracker follows */
    atomic_fetch_add_explicit(&tr->lost, 1, memory_order_relaxed);
    return;
  }
  if (!exit) {
    uint32_t id = method_id(tr, loc->cls, loc->method);
    if (!push(vm, t, loc->cls, loc->method, id) || id == DDMC__NO_METHOD)
      atomic_fetch_add_explicit(&tr->lost, 1, memory_order_relaxed);
    else
      emit(tr, t, id | DDMC__TR_ENTER, cpu, wall);
    return;
  }
  const ddmc__prof_tframe *f = &t->stack[--t->depth];
  if (f->id == DDMC__NO_METHOD) return;
  /* Another method returning from this frame means the one we knew left it some other way. */
  int same = f->cls == loc->cls && f->method == loc->method;
  emit(tr, t, f->id | (same ? DDMC__TR_EXIT : DDMC__TR_UNROLL), cpu, wall);
}

static struct ddmc__prof_tthread *thread_state(ddmc_vm *vm, _Atomic(struct ddmc__prof_tthread *) *tab,
                                               uint32_t thread) {
  struct ddmc__prof_tthread *t = atomic_load_explicit(&tab[thread], memory_order_acquire);
  if (t != NULL) return t;
  struct ddmc__prof_tthread *n = ddmc__calloc(&vm->mem, 1, sizeof(*n));
  if (n == NULL) return NULL;
  atomic_init(&n->busy, 0);
  if (atomic_compare_exchange_strong(&tab[thread], &t, n)) return n;
  ddmc__free(&vm->mem, n); /* another call for the same thread id won */
  return t;
}

/* A method entered (exit = 0) or left (1) at frame depth (frame count - 1), on the VM thread. */
static void trace_method(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, int32_t depth, int exit) {
  ddmc__prof *p = &vm->prof;
  if (thread >= DDMC__TRACE_MAX_THREADS || depth < 0) { /* record thread ids are u2 */
    atomic_fetch_add_explicit(&p->st_lost, 1, memory_order_relaxed);
    return;
  }
  struct ddmc__prof_tthread *t = thread_state(vm, p->threads, thread);
  if (t == NULL) return;
  ddmc__prof_afence_set(&t->busy);
  ddmc__prof_trace *tr = atomic_load_explicit(&p->trace, memory_order_acquire);
  if (tr != NULL && tr->mode == DDMC_TRACE_METHODS && !atomic_load_explicit(&tr->overflow, memory_order_relaxed))
    record(vm, tr, t, thread, loc, (uint32_t)depth, exit);
  atomic_store_explicit(&t->busy, 0, memory_order_release);
}

/* The trace's hub client: method entries and exits, before any client that may park the thread.
 * One load when no trace runs. */
static int trace_location(ddmc_vm *vm, void *ud, uint32_t thread, const ddmc_location *loc, int32_t depth,
                          ddmc_ref this_obj, unsigned flags) {
  (void)ud;
  (void)this_obj;
  if (atomic_load_explicit(&vm->prof.trace, memory_order_acquire) == NULL) return DDMC_ENOTCONN;
  if (flags & DDMC_POST_METHOD_ENTRY) trace_method(vm, thread, loc, depth, 0);
  return 0;
}

static int trace_method_exit(ddmc_vm *vm, void *ud, uint32_t thread, const ddmc_location *loc, int32_t depth,
                             ddmc_ref this_obj, const ddmc_value *ret) {
  (void)ud;
  (void)this_obj;
  (void)ret;
  if (atomic_load_explicit(&vm->prof.trace, memory_order_acquire) == NULL) return DDMC_ENOTCONN;
  trace_method(vm, thread, loc, depth, 1);
  return 0;
}

/* ddmc_event_wanted: a running trace wants every method entry and exit. */
static int trace_wants(const ddmc_vm *vm, void *ud, int kind) {
  (void)ud;
  return (kind == DDMC_EV_METHOD_ENTRY || kind == DDMC_EV_METHOD_EXIT) &&
         atomic_load_explicit(&((ddmc_vm *)vm)->prof.trace, memory_order_acquire) != NULL;
}

int ddmc__prof_trace_subscribe(ddmc_vm *vm) {
  static const ddmc__hub_client client = {.name = "method trace",
                                          .rank = DDMC__HUB_RANK_TRACE,
                                          .location = trace_location,
                                          .method_exit = trace_method_exit,
                                          .wants = trace_wants};
  return ddmc__hub_subscribe(vm, &client, NULL, NULL, NULL);
}

/* ---- start and stop (JDWP thread) */

static uint32_t clock_cost_ns(const ddmc__prof_tclock *c) {
  int64_t a = ddmc__prof_mono_ns(), b;
  volatile int64_t sink = 0;
  for (int i = 0; i < 64; i++) sink += ddmc__prof_tclock_ns(c);
  b = ddmc__prof_mono_ns();
  (void)sink;
  return (uint32_t)((b - a) / 64);
}

void ddmc__prof_trace_free(ddmc_vm *vm, ddmc__prof_trace *tr) {
  if (tr == NULL) return;
  if (tr->fd >= 0) close(tr->fd);
  ddmc__prof_sampler_free(tr);
  ddmc__free(&vm->mem, tr->buf);
  ddmc__free(&vm->mem, tr->fill);
  ddmc__free(&vm->mem, (void *)tr->seen);
  ddmc__free(&vm->mem, tr->mslots);
  ddmc__buf_free(&tr->head);
  ddmc__free(&vm->mem, tr);
}

static ddmc__prof_trace *trace_new(ddmc_vm *vm, const ddmc__prof_trace_req *req) {
  const ddmc_prof_config *cfg = &vm->prof.cfg;
  uint64_t want = req->buffer_size ? req->buffer_size : DDMC__TRACE_DEFAULT_BYTES;
  if (want > cfg->trace_max_bytes) want = cfg->trace_max_bytes;
  if (want < DDMC__TRACE_MIN_BYTES) want = DDMC__TRACE_MIN_BYTES;
  size_t records = (size_t)(want - DDMC__TRACE_HDR) / DDMC__TRACE_REC; /* the header counts, as in Dalvik */
  size_t per_region = req->mode == DDMC_TRACE_SAMPLING ? records : DDMC__MIN(REGION_RECORDS, records / 8);
  if (per_region == 0) per_region = 1;
  ddmc__prof_trace *tr = ddmc__calloc(&vm->mem, 1, sizeof(*tr));
  if (tr == NULL) return NULL;
  tr->vm = vm;
  tr->fd = -1;
  tr->mode = req->mode;
  tr->region = per_region * DDMC__TRACE_REC;
  tr->cap = records / per_region * tr->region;
  ddmc__buf_init(&tr->head, &vm->mem, (size_t)64 << 20);
  tr->buf = ddmc__malloc(&vm->mem, tr->cap);
  /* Touched here, on the JDWP thread: the page faults of a fresh buffer are not left to the VM
   * threads' method calls (Dalvik filled its buffer too). */
  if (tr->buf != NULL) memset(tr->buf, 0, tr->cap);
  tr->fill = ddmc__calloc(&vm->mem, tr->cap / tr->region, sizeof(uint32_t));
  tr->seen = ddmc__calloc(&vm->mem, DDMC__TRACE_MAX_THREADS / 8, 1);
  if (req->mode == DDMC_TRACE_METHODS) {
    tr->mcap = MSLOTS;
    tr->mlimit = MSLOTS / 4 * 3;
    tr->mslots = ddmc__calloc(&vm->mem, MSLOTS, sizeof(ddmc__prof_mslot));
  }
  if (tr->buf == NULL || tr->fill == NULL || tr->seen == NULL || (req->mode == DDMC_TRACE_METHODS && !tr->mslots)) {
    ddmc__prof_trace_free(vm, tr);
    return NULL;
  }
  tr->gen = atomic_fetch_add(&vm->prof.next_gen, 1) + 1;
  tr->refresh_ns = (int64_t)cfg->trace_cpu_refresh_us * 1000;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  tr->start_us = (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
  ddmc__prof_tclock_start(&tr->clock);
  tr->clock_ns = clock_cost_ns(&tr->clock);
  tr->t0_ns = tr->clock.mono0;
  return tr;
}

/* Waits until no VM thread is inside the method-event path of tr, then records where each
 * thread's region ends. */
static void quiesce(ddmc_vm *vm, ddmc__prof_trace *tr) {
  _Atomic(struct ddmc__prof_tthread *) *tab = vm->prof.threads;
  ddmc__prof_afence_heavy();
  for (uint32_t i = 0; i < DDMC__TRACE_MAX_THREADS; i++) {
    struct ddmc__prof_tthread *t = atomic_load(&tab[i]);
    if (t == NULL) continue;
    while (atomic_load(&t->busy)) sched_yield();
    if (tr != NULL && t->gen == tr->gen && t->pos != NULL)
      tr->fill[t->region_off / tr->region] = (uint32_t)(t->pos - (tr->buf + t->region_off));
  }
}

int ddmc__prof_trace_start(ddmc_vm *vm, const ddmc__prof_trace_req *req) {
  ddmc__prof *p = &vm->prof;
  if (p->current != NULL) return DDMC_ESTATE;
  if (req->mode == DDMC_TRACE_METHODS ? !ddmc__prof_can_trace(vm) : !ddmc__prof_can_sample(vm)) return DDMC_ENOTSUP;
  if (p->threads == NULL && (p->threads = ddmc__calloc(&vm->mem, DDMC__TRACE_MAX_THREADS, sizeof(*p->threads))) == NULL)
    return DDMC_ENOMEM;
  ddmc__prof_trace *tr = trace_new(vm, req);
  if (tr == NULL) return DDMC_ENOMEM;
  int rc;
  if (req->mode == DDMC_TRACE_METHODS) {
    ddmc__prof_afence_init();
    atomic_store(&p->trace, tr);
    rc = ddmc__ctl_method_events(vm, DDMC__ME_TRACE, 1);
    if (rc != 0) {
      atomic_store(&p->trace, NULL);
      quiesce(vm, NULL);
    }
  } else {
    rc = ddmc__prof_sampler_start(vm, tr, req->interval_us);
  }
  if (rc != 0) {
    ddmc__prof_trace_free(vm, tr);
    return rc;
  }
  tr->fd = req->fd;
  p->current = tr;
  atomic_store(&p->mode, req->mode);
  ddmc__log(vm, DDMC_LOG_INFO, "%s started: %zu bytes for records",
            req->mode == DDMC_TRACE_METHODS ? "method tracing" : "sampling", tr->cap);
  return 0;
}

ddmc__prof_trace *ddmc__prof_trace_stop(ddmc_vm *vm, int *err) {
  ddmc__prof *p = &vm->prof;
  ddmc__prof_trace *tr = p->current;
  if (tr == NULL) return NULL;
  if (tr->mode == DDMC_TRACE_SAMPLING) {
    ddmc__prof_sampler_stop(tr);
  } else {
    atomic_store(&p->trace, NULL);
    quiesce(vm, tr);
    ddmc__ctl_method_events(vm, DDMC__ME_TRACE, 0);
    /* Move the regions' filled parts together. */
    size_t used = DDMC__MIN(atomic_load(&tr->next), tr->cap), dst = 0;
    for (size_t r = 0; r < used / tr->region; r++) {
      if (tr->fill[r] && dst != r * tr->region) memmove(tr->buf + dst, tr->buf + r * tr->region, tr->fill[r]);
      dst += tr->fill[r];
    }
    tr->len = dst;
  }
  double k = ddmc__prof_tclock_finish(&tr->clock, &tr->elapsed_ns);
  if (tr->mode == DDMC_TRACE_METHODS && (k > 1.0000001 || k < 0.9999999)) /* the whole trace's TSC rate */
    for (size_t at = 0; at < tr->len; at += DDMC__TRACE_REC) {
      uint8_t *w = tr->buf + at + 10;
      uint32_t v = (uint32_t)w[0] | (uint32_t)w[1] << 8 | (uint32_t)w[2] << 16 | (uint32_t)w[3] << 24;
      ddmc__prof_le32(w, (uint32_t)((double)v * k + 0.5));
    }
  p->current = NULL;
  atomic_store(&p->mode, DDMC_TRACE_OFF);
  int over = atomic_load(&tr->overflow);
  atomic_fetch_add(&p->st_traces, 1);
  atomic_fetch_add(&p->st_records, tr->len / DDMC__TRACE_REC);
  atomic_fetch_add(&p->st_lost, atomic_load(&tr->lost));
  if (over) atomic_fetch_add(&p->st_overflows, 1);
  ddmc__log(vm, DDMC_LOG_INFO, "trace stopped: %zu records%s", tr->len / DDMC__TRACE_REC,
            over ? " (the buffer filled: recording stopped there)" : "");
  if (err != NULL) *err = ddmc__prof_trace_build_head(vm, tr);
  return tr;
}

void ddmc__prof_trace_parts(const ddmc__prof_trace *tr, const uint8_t **head, size_t *head_len, const uint8_t **recs,
                            size_t *recs_len) {
  *head = tr->head.p;
  *head_len = tr->head.len;
  *recs = tr->buf;
  *recs_len = tr->len;
}

int ddmc__prof_trace_fd(const ddmc__prof_trace *tr) { return tr->fd; }
