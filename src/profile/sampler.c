/* SPDX-License-Identifier: Apache-2.0 */
/* Sampling (SPSS): a thread of the library visits every VM thread's stack at the requested
 * interval, through the same ddmc_vm_ops the THST and STKL chunks use (for_each_thread,
 * thread_stack), and writes the difference between a thread's stack and its previous sample as
 * EXIT and ENTER records into the trace buffer, as Dalvik's and ART's samplers did. It is the
 * buffer's only writer, so it writes without atomics; it stops writing when the buffer is full.
 *
 * Load: per tick, one thread list and one stack walk per thread; a thread's CPU clock is read
 * only when its stack changed (a record needs it), so idle threads cost their walk alone.
 * Methods are named by the frames' strings (class, method, signature, file), interned once. */
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "profile/trace_int.h"

#define MAX_DEPTH 512u
#define MAX_METHODS 65536u

typedef struct sthread {
  uint32_t id, tid, tick;
  uint32_t *stack; /* method ids, outermost first */
  uint32_t depth, cap;
  int64_t cpu_base, cpu_last;
  int have_base;
} sthread;

struct ddmc__prof_sampler {
  ddmc_vm *vm;
  ddmc__prof_trace *tr;
  pthread_t th;
  int started;
  pthread_mutex_t lock;
  pthread_cond_t cond;
  int stop;
  int64_t interval_ns;
  size_t pos;
  uint32_t tick;
  sthread **threads; /* open addressing by id, cap a power of two */
  uint32_t nthreads, tcap;
  uint32_t *mhash, mhcap; /* method index + 1 by key hash */
  uint32_t mcap;
  struct {
    uint32_t id, tid;
  } * list;
  uint32_t nlist, listcap;
  uint32_t cur[MAX_DEPTH];
  uint32_t ncur;
  int err;
};

static const ddmc__mem *MEM(struct ddmc__prof_sampler *s) { return &s->vm->mem; }

/* ---- methods by name */

static uint32_t fnv(const char *k, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)k[i]) * 16777619u;
  return h;
}

static size_t key_len(const char *k) { /* four NUL-terminated parts */
  size_t n = 0;
  for (int i = 0; i < 4; i++) n += strlen(k + n) + 1;
  return n;
}

static uint32_t intern(struct ddmc__prof_sampler *s, const ddmc_frame *f) {
  const char *parts[4] = {f->class_name, f->method_name, f->signature, f->file};
  char key[1024];
  size_t n = 0;
  for (int i = 0; i < 4; i++) {
    const char *p = parts[i] ? parts[i] : "";
    size_t l = strnlen(p, 255);
    memcpy(key + n, p, l);
    n += l;
    key[n++] = '\0';
  }
  uint32_t h = fnv(key, n);
  ddmc__prof_trace *tr = s->tr;
  if (s->mhcap)
    for (uint32_t k = h & (s->mhcap - 1); s->mhash[k]; k = (k + 1) & (s->mhcap - 1)) {
      const char *e = tr->smethods[s->mhash[k] - 1].key;
      if (key_len(e) == n && memcmp(e, key, n) == 0) return (s->mhash[k] - 1) << 2;
    }
  if (tr->nsmethods >= MAX_METHODS) return DDMC__NO_METHOD;
  if (tr->nsmethods == s->mcap) {
    uint32_t cap = s->mcap ? s->mcap * 2 : 64;
    ddmc__prof_smethod *v = ddmc__realloc(MEM(s), tr->smethods, (size_t)cap * sizeof(*v));
    if (v == NULL) return DDMC__NO_METHOD;
    tr->smethods = v;
    s->mcap = cap;
  }
  if ((tr->nsmethods + 1) * 2 > s->mhcap) {
    uint32_t hc = s->mhcap ? s->mhcap * 2 : 128;
    uint32_t *nh = ddmc__calloc(MEM(s), hc, sizeof(*nh));
    if (nh == NULL) return DDMC__NO_METHOD;
    for (uint32_t i = 0; i < tr->nsmethods; i++) {
      const char *e = tr->smethods[i].key;
      uint32_t k = fnv(e, key_len(e)) & (hc - 1);
      while (nh[k]) k = (k + 1) & (hc - 1);
      nh[k] = i + 1;
    }
    ddmc__free(MEM(s), s->mhash);
    s->mhash = nh;
    s->mhcap = hc;
  }
  char *copy = ddmc__malloc(MEM(s), n);
  if (copy == NULL) return DDMC__NO_METHOD;
  memcpy(copy, key, n);
  ddmc__prof_smethod *m = &tr->smethods[tr->nsmethods];
  m->key = copy;
  m->cls = copy;
  m->name = m->cls + strlen(m->cls) + 1;
  m->sig = m->name + strlen(m->name) + 1;
  m->file = m->sig + strlen(m->sig) + 1;
  uint32_t k = h & (s->mhcap - 1);
  while (s->mhash[k]) k = (k + 1) & (s->mhcap - 1);
  s->mhash[k] = ++tr->nsmethods;
  return (tr->nsmethods - 1) << 2;
}

/* ---- threads */

static sthread *thread_get(struct ddmc__prof_sampler *s, uint32_t id) {
  if (s->tcap)
    for (uint32_t k = (id * 2654435761u) & (s->tcap - 1); s->threads[k]; k = (k + 1) & (s->tcap - 1))
      if (s->threads[k]->id == id) return s->threads[k];
  if ((s->nthreads + 1) * 2 > s->tcap) {
    uint32_t cap = s->tcap ? s->tcap * 2 : 64;
    sthread **v = ddmc__calloc(MEM(s), cap, sizeof(*v));
    if (v == NULL) return NULL;
    for (uint32_t i = 0; i < s->tcap; i++) {
      if (!s->threads[i]) continue;
      uint32_t k = (s->threads[i]->id * 2654435761u) & (cap - 1);
      while (v[k]) k = (k + 1) & (cap - 1);
      v[k] = s->threads[i];
    }
    ddmc__free(MEM(s), s->threads);
    s->threads = v;
    s->tcap = cap;
  }
  sthread *t = ddmc__calloc(MEM(s), 1, sizeof(*t));
  if (t == NULL) return NULL;
  t->id = id;
  uint32_t k = (id * 2654435761u) & (s->tcap - 1);
  while (s->threads[k]) k = (k + 1) & (s->tcap - 1);
  s->threads[k] = t;
  s->nthreads++;
  return t;
}

static void threads_free(struct ddmc__prof_sampler *s) {
  for (uint32_t i = 0; i < s->tcap; i++)
    if (s->threads[i]) {
      ddmc__free(MEM(s), s->threads[i]->stack);
      ddmc__free(MEM(s), s->threads[i]);
    }
  ddmc__free(MEM(s), s->threads);
  s->threads = NULL;
  s->tcap = s->nthreads = 0;
}

/* Threads that were not in this tick's list have ended: their frames stay open, as in Dalvik. */
static void threads_sweep(struct ddmc__prof_sampler *s) {
  uint32_t live = 0;
  for (uint32_t i = 0; i < s->tcap; i++)
    if (s->threads[i] && s->threads[i]->tick == s->tick) live++;
  if (live == s->nthreads) return;
  sthread **old = s->threads;
  uint32_t cap = s->tcap;
  s->threads = NULL;
  s->tcap = s->nthreads = 0;
  for (uint32_t i = 0; i < cap; i++) {
    sthread *t = old[i];
    if (t == NULL) continue;
    if (t->tick != s->tick) {
      ddmc__free(MEM(s), t->stack);
      ddmc__free(MEM(s), t);
      continue;
    }
    sthread *n = thread_get(s, t->id); /* a fresh slot: move the state over */
    if (n == NULL) {
      ddmc__free(MEM(s), t->stack);
      ddmc__free(MEM(s), t);
      continue;
    }
    *n = *t;
    ddmc__free(MEM(s), t);
  }
  ddmc__free(MEM(s), old);
}

/* ---- one tick */

static int on_thread(void *arg, const ddmc_thread_info *t) {
  struct ddmc__prof_sampler *s = arg;
  if (t->id >= DDMC__TRACE_MAX_THREADS) return 0;
  if (s->nlist == s->listcap) {
    uint32_t cap = s->listcap ? s->listcap * 2 : 32;
    void *v = ddmc__realloc(MEM(s), s->list, (size_t)cap * sizeof(*s->list));
    if (v == NULL) return 1;
    s->list = v;
    s->listcap = cap;
  }
  s->list[s->nlist].id = t->id;
  s->list[s->nlist++].tid = t->tid;
  return 0;
}

static int on_frame(void *arg, const ddmc_frame *f) {
  struct ddmc__prof_sampler *s = arg;
  if (s->ncur == MAX_DEPTH) return 1; /* deeper frames are left out, the same way every tick */
  s->cur[s->ncur++] = intern(s, f);
  return 0;
}

static int64_t thread_cpu_ns(uint32_t tid, int64_t last) {
  /* The CPU clock of another thread of this process: Linux's per-thread clock id for a tid. */
  clockid_t cid = tid ? (clockid_t)((~(clockid_t)tid) * 8 + 6) : CLOCK_PROCESS_CPUTIME_ID;
  struct timespec ts;
  if (clock_gettime(cid, &ts) != 0) return last;
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int put(struct ddmc__prof_sampler *s, uint16_t tid, uint32_t value, uint32_t cpu, uint32_t wall) {
  ddmc__prof_trace *tr = s->tr;
  if (s->pos + DDMC__TRACE_REC > tr->cap) {
    atomic_store(&tr->overflow, 1);
    return 0;
  }
  ddmc__prof_dmtrace_rec(tr->buf + s->pos, tid, value, cpu, wall);
  s->pos += DDMC__TRACE_REC;
  return 1;
}

/* The record times for thread t now: wall since the trace's start, t's CPU since its first record. */
static void clocks_now(struct ddmc__prof_sampler *s, sthread *t, uint32_t *cpu, uint32_t *wall) {
  int64_t now = ddmc__prof_mono_ns();
  int64_t cpu_ns = thread_cpu_ns(t->tid, t->cpu_last);
  if (!t->have_base) {
    t->cpu_base = cpu_ns;
    t->have_base = 1;
  }
  if (cpu_ns < t->cpu_last) cpu_ns = t->cpu_last;
  t->cpu_last = cpu_ns;
  *wall = (uint32_t)((now - s->tr->t0_ns) / 1000);
  *cpu = (uint32_t)((cpu_ns - t->cpu_base) / 1000);
}

/* EXIT records for t's frames above depth k, innermost first; 0 once the buffer is full. */
static int exits_above(struct ddmc__prof_sampler *s, const sthread *t, uint32_t k, uint32_t cpu, uint32_t wall) {
  for (uint32_t j = t->depth; j > k; j--)
    if (t->stack[j - 1] != DDMC__NO_METHOD && !put(s, (uint16_t)t->id, t->stack[j - 1] | DDMC__TR_EXIT, cpu, wall))
      return 0;
  return 1;
}

static int sample_thread(struct ddmc__prof_sampler *s, uint32_t id, uint32_t tid) {
  ddmc_vm *vm = s->vm;
  s->ncur = 0;
  if (vm->ops.thread_stack(vm->vm_data, id, on_frame, s) != 0 && s->ncur == 0) return 1; /* gone */
  for (uint32_t i = 0, j = s->ncur ? s->ncur - 1 : 0; i < j; i++, j--) {                 /* outermost first */
    uint32_t x = s->cur[i];
    s->cur[i] = s->cur[j];
    s->cur[j] = x;
  }
  sthread *t = thread_get(s, id);
  if (t == NULL) return 1;
  t->tick = s->tick;
  t->tid = tid;
  uint32_t k = 0;
  while (k < t->depth && k < s->ncur && t->stack[k] == s->cur[k]) k++;
  if (k == t->depth && k == s->ncur) return 1;
  if (s->ncur > t->cap) {
    uint32_t *v = ddmc__realloc(MEM(s), t->stack, (size_t)MAX_DEPTH * sizeof(*v));
    if (v == NULL) return 1;
    t->stack = v;
    t->cap = MAX_DEPTH;
  }
  uint32_t cpu, wall;
  clocks_now(s, t, &cpu, &wall);
  ddmc__prof_trace_seen(s->tr, id);
  if (!exits_above(s, t, k, cpu, wall)) return 0;
  for (uint32_t j = k; j < s->ncur; j++)
    if (s->cur[j] != DDMC__NO_METHOD && !put(s, (uint16_t)id, s->cur[j] | DDMC__TR_ENTER, cpu, wall)) return 0;
  if (s->ncur) memcpy(t->stack, s->cur, s->ncur * sizeof(uint32_t));
  t->depth = s->ncur;
  return 1;
}

/* Returns 0 once the buffer is full. */
static int tick(struct ddmc__prof_sampler *s) {
  ddmc_vm *vm = s->vm;
  s->tick++;
  s->nlist = 0;
  vm->ops.for_each_thread(vm->vm_data, on_thread, s);
  atomic_fetch_add_explicit(&vm->prof.st_samples, 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&vm->prof.st_sample_threads, s->nlist, memory_order_relaxed);
  for (uint32_t i = 0; i < s->nlist; i++)
    if (!sample_thread(s, s->list[i].id, s->list[i].tid)) return 0;
  threads_sweep(s);
  return 1;
}

/* At SPSE: every live thread's open frames exit now. Only differences are recorded, so a thread
 * whose stack never changed has no record after its first; its time up to the stop would be lost
 * to every reader (dmtracedump closes open frames at the thread's last record, and so do ddmc's
 * exports). A thread that ended keeps its frames open, as Dalvik left them. */
static void close_frames(struct ddmc__prof_sampler *s) {
  for (uint32_t i = 0; i < s->tcap; i++) {
    sthread *t = s->threads[i];
    if (t == NULL || t->depth == 0) continue;
    uint32_t cpu, wall;
    clocks_now(s, t, &cpu, &wall);
    if (!exits_above(s, t, 0, cpu, wall)) return;
    t->depth = 0;
  }
}

static void *sampler_main(void *arg) {
  struct ddmc__prof_sampler *s = arg;
  pthread_setname_np(pthread_self(), "ddmc-sampler");
  int64_t next = ddmc__prof_mono_ns();
  ddmc__lock(&s->lock);
  while (!s->stop) {
    ddmc__unlock(&s->lock);
    int more = tick(s);
    ddmc__lock(&s->lock);
    if (!more) break; /* full: recording stops here; SPSE still collects what there is */
    int64_t now = ddmc__prof_mono_ns();
    next += s->interval_ns;
    if (next < now) next = now + s->interval_ns; /* fell behind: skip, never catch up in a burst */
    struct timespec ts = {(time_t)(next / 1000000000), (long)(next % 1000000000)};
    while (!s->stop && pthread_cond_timedwait(&s->cond, &s->lock, &ts) == 0) {
    }
  }
  int stopped = s->stop;
  ddmc__unlock(&s->lock);
  if (stopped) close_frames(s);
  return NULL;
}

int ddmc__prof_sampler_start(ddmc_vm *vm, ddmc__prof_trace *tr, uint32_t interval_us) {
  struct ddmc__prof_sampler *s = ddmc__calloc(&vm->mem, 1, sizeof(*s));
  if (s == NULL) return DDMC_ENOMEM;
  s->vm = vm;
  s->tr = tr;
  uint32_t min = vm->prof.cfg.sample_min_interval_us;
  s->interval_ns = (int64_t)(interval_us < min ? min : interval_us) * 1000;
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  int ok = pthread_mutex_init(&s->lock, NULL) == 0;
  if (ok && pthread_cond_init(&s->cond, &ca) != 0) {
    pthread_mutex_destroy(&s->lock);
    ok = 0;
  }
  pthread_condattr_destroy(&ca);
  if (!ok) {
    ddmc__free(&vm->mem, s);
    return DDMC_ENOMEM;
  }
  tr->sampler = s;
  if (pthread_create(&s->th, NULL, sampler_main, s) != 0) return DDMC_ENOMEM; /* freed with tr */
  s->started = 1;
  return 0;
}

void ddmc__prof_sampler_stop(ddmc__prof_trace *tr) {
  struct ddmc__prof_sampler *s = tr->sampler;
  if (s == NULL || !s->started) return;
  ddmc__lock(&s->lock);
  s->stop = 1;
  pthread_cond_signal(&s->cond);
  ddmc__unlock(&s->lock);
  pthread_join(s->th, NULL);
  s->started = 0;
  tr->len = s->pos;
}

void ddmc__prof_sampler_free(ddmc__prof_trace *tr) {
  struct ddmc__prof_sampler *s = tr->sampler;
  for (uint32_t i = 0; i < tr->nsmethods; i++) ddmc__free(&tr->vm->mem, tr->smethods[i].key);
  ddmc__free(&tr->vm->mem, tr->smethods);
  tr->smethods = NULL;
  tr->nsmethods = 0;
  if (s == NULL) return;
  ddmc__prof_sampler_stop(tr);
  threads_free(s);
  ddmc__free(MEM(s), s->mhash);
  ddmc__free(MEM(s), s->list);
  pthread_cond_destroy(&s->cond);
  pthread_mutex_destroy(&s->lock);
  ddmc__free(MEM(s), s);
  tr->sampler = NULL;
}
