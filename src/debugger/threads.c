/* SPDX-License-Identifier: Apache-2.0 */
/* Suspension as the debugger sees it: a count per thread (docs/protocol/jdwp.md §2.6), kept apart from whatever
 * the VM does to its threads for itself.
 *
 * A count going 0 -> 1 asks the VM to stop the thread (bridge.suspend_thread), 1 -> 0 lets it go
 * (bridge.resume_thread), except for a thread that stopped itself for an event: it waits inside its
 * ddmc_post_* call, on parked_cv, until its count is 0 again. When a count returns to 0 the
 * thread's epoch moves on, and every frameID handed out before is dead (INVALID_FRAMEID).
 *
 * An event that suspends raises the counts before its packet is queued, so a Resume from the
 * debugger always finds them raised: Dalvik needed a hand-off token for that race, this order
 * needs none. */
#include <string.h>

#include "debugger/glue.h"
#include "debugger/state.h"
#include "vmctl/switches.h"

#define DDMC__MAX_THREADS 65536u

int ddmc__dbg_thrs_init(ddmc__dbg_thrs *t) {
  memset(t, 0, sizeof(*t));
  if (pthread_mutex_init(&t->sus_lock, NULL) != 0) return DDMC_ENOMEM;
  if (pthread_mutex_init(&t->lock, NULL) != 0) {
    pthread_mutex_destroy(&t->sus_lock);
    return DDMC_ENOMEM;
  }
  if (pthread_cond_init(&t->parked_cv, NULL) != 0) {
    pthread_mutex_destroy(&t->lock);
    pthread_mutex_destroy(&t->sus_lock);
    return DDMC_ENOMEM;
  }
  return 0;
}

static uint32_t hash32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

/* The entry of thread id, created when create is set. lock held. NULL: unknown / no memory. */
static ddmc__dbg_thr *entry(ddmc__dbg *d, uint32_t id, int create) {
  ddmc__dbg_thrs *t = &d->thr;
  if (t->hash_cap) {
    uint32_t mask = t->hash_cap - 1;
    for (uint32_t i = hash32(id) & mask; t->hash[i] != 0; i = (i + 1) & mask)
      if (t->v[t->hash[i] - 1]->id == id) return t->v[t->hash[i] - 1];
  }
  if (!create || t->n >= DDMC__MAX_THREADS) return NULL;
  if (t->n == t->cap) {
    uint32_t cap = t->cap ? t->cap * 2 : 32;
    ddmc__dbg_thr **v = ddmc__realloc(d->mem, t->v, (size_t)cap * sizeof(*v));
    if (v == NULL) return NULL;
    t->v = v;
    t->cap = cap;
  }
  if ((t->n + 1) * 2 > t->hash_cap) {
    uint32_t cap = t->hash_cap ? t->hash_cap * 2 : 64;
    uint32_t *h = ddmc__calloc(d->mem, cap, sizeof(uint32_t));
    if (h == NULL) return NULL;
    for (uint32_t k = 0; k < t->n; k++) {
      uint32_t i = hash32(t->v[k]->id) & (cap - 1);
      while (h[i] != 0) i = (i + 1) & (cap - 1);
      h[i] = k + 1;
    }
    ddmc__free(d->mem, t->hash);
    t->hash = h;
    t->hash_cap = cap;
  }
  ddmc__dbg_thr *e = ddmc__calloc(d->mem, 1, sizeof(*e));
  if (e == NULL) return NULL;
  e->id = id;
  e->epoch = 1;
  e->count = t->all_count;
  atomic_fetch_add_explicit(&t->held, t->all_count, memory_order_release);
  t->v[t->n] = e;
  uint32_t i = hash32(id) & (t->hash_cap - 1);
  while (t->hash[i] != 0) i = (i + 1) & (t->hash_cap - 1);
  t->hash[i] = ++t->n;
  return e;
}

static ddmc__dbg_thr *get(ddmc__dbg *d, uint32_t id, int create) {
  ddmc__lock(&d->thr.lock);
  ddmc__dbg_thr *e = entry(d, id, create);
  ddmc__unlock(&d->thr.lock);
  return e;
}

int ddmc__dbg_thr_count(ddmc__dbg *d, uint32_t thread) {
  ddmc__lock(&d->thr.lock);
  ddmc__dbg_thr *e = entry(d, thread, 0);
  int n = e ? e->count : 0;
  ddmc__unlock(&d->thr.lock);
  return n;
}

uint64_t ddmc__dbg_frame_id(ddmc__dbg *d, uint32_t thread, int32_t depth) {
  ddmc__lock(&d->thr.lock);
  ddmc__dbg_thr *e = entry(d, thread, 0);
  uint32_t epoch = e ? e->epoch : 0;
  ddmc__unlock(&d->thr.lock);
  return ((uint64_t)epoch << 32) | (uint32_t)(depth + 1);
}

int ddmc__dbg_frame_check(ddmc__dbg *d, uint32_t thread, uint64_t frame_id, int32_t *depth) {
  ddmc__lock(&d->thr.lock);
  ddmc__dbg_thr *e = entry(d, thread, 0);
  int rc = 0;
  if (e == NULL || e->count == 0)
    rc = DDMC_JDWP_THREAD_NOT_SUSPENDED;
  else if ((uint32_t)(frame_id >> 32) != e->epoch || (uint32_t)frame_id == 0 || (uint32_t)frame_id > INT32_MAX)
    rc = DDMC_JDWP_INVALID_FRAMEID;
  else
    *depth = (int32_t)((uint32_t)frame_id - 1);
  ddmc__unlock(&d->thr.lock);
  return rc;
}

void ddmc__dbg_thr_frames_moved(ddmc__dbg *d, uint32_t thread) {
  ddmc__lock(&d->thr.lock);
  ddmc__dbg_thr *e = entry(d, thread, 0);
  if (e != NULL) e->epoch++;
  ddmc__unlock(&d->thr.lock);
}

/* ---- counts. sus_lock held by every caller of these.
 *
 * Each change of a count is two steps: the count (suspend_count, resume_count), which says
 * whether the VM must stop or release the thread, then the VM's call (vm_done with its result).
 * Suspending or resuming every thread moves all the counts first and makes the VM's calls in one
 * batch (ddmc__ctl_suspend_list). vm_suspended is set (or cleared) with the count, before the
 * VM's call: a thread met twice in one batch is not stopped twice, and a failed stop undoes it. */

/* Raises e's count; 1 when the VM is to stop the thread: the thread stops itself when it waits in
 * a post call, and one that inherited a suspend-all count (first seen meanwhile) is stopped on its
 * first Suspend. */
static int suspend_count(ddmc__dbg *d, ddmc__dbg_thr *e) {
  ddmc__lock(&d->thr.lock);
  int first = !e->vm_suspended && !e->parked;
  e->count++;
  atomic_fetch_add_explicit(&d->thr.held, 1, memory_order_release);
  ddmc__unlock(&d->thr.lock);
  if (first) e->vm_suspended = 1;
  return first;
}

/* Lowers e's count (to 0 with to_zero); 1 when the VM is to let the thread go. */
static int resume_count(ddmc__dbg *d, ddmc__dbg_thr *e, int to_zero) {
  ddmc__lock(&d->thr.lock);
  if (e->count == 0) {
    ddmc__unlock(&d->thr.lock);
    /* Never below 0. But a thread whose count its call took (invoke_begin) may still be held by
     * the VM (an event that suspended every thread reached it inside its own event callback):
     * invoke_end gives the count back only to the session that made the call, so a session that
     * ends meanwhile lets the VM go here, or the thread stops for good where its call returns. */
    if (!to_zero || !e->vm_suspended) return 0;
    e->vm_suspended = 0;
    return d->bridge.resume_thread != NULL;
  }
  atomic_fetch_sub_explicit(&d->thr.held, to_zero ? e->count : 1, memory_order_release);
  e->count = to_zero ? 0 : e->count - 1;
  int last = e->count == 0;
  if (last) {
    e->epoch++;
    if (e->parked) pthread_cond_broadcast(&d->thr.parked_cv);
  }
  ddmc__unlock(&d->thr.lock);
  if (!last || !e->vm_suspended) return 0;
  e->vm_suspended = 0;
  return d->bridge.resume_thread != NULL;
}

/* The VM's answer rc to stopping e (suspend) or letting it go: a stop that failed takes the
 * count back, and the thread runs on. */
static int vm_done(ddmc__dbg *d, ddmc__dbg_thr *e, int suspend, int rc) {
  if (rc == 0 || !suspend) return rc;
  e->vm_suspended = 0;
  ddmc__lock(&d->thr.lock);
  e->count--;
  atomic_fetch_sub_explicit(&d->thr.held, 1, memory_order_release);
  ddmc__unlock(&d->thr.lock);
  return rc;
}

static int suspend_locked(ddmc__dbg *d, ddmc__dbg_thr *e) {
  /* Through vmctl: an agent may hold the thread too. */
  return suspend_count(d, e) ? vm_done(d, e, 1, ddmc__ctl_suspend(d->vm, e->id, 1)) : 0;
}

static int resume_locked(ddmc__dbg *d, ddmc__dbg_thr *e, int to_zero) {
  return resume_count(d, e, to_zero) ? ddmc__ctl_suspend(d->vm, e->id, 0) : 0;
}

/* The threads of one suspension or resumption of every thread whose VM call waits for the batch. */
typedef struct batch {
  ddmc__dbg *d;
  int suspend;
  uint32_t except; /* a thread left as it is (all_locked) */
  ddmc__dbg_thr **e;
  uint32_t *ids;
  uint32_t n, cap;
  int err; /* the first error */
} batch;

/* e's VM call into the batch; made at once when there is no room for it. */
static void batch_add(batch *b, ddmc__dbg_thr *e) {
  if (b->n == b->cap && b->cap < DDMC__MAX_THREADS) {
    uint32_t cap = b->cap ? b->cap * 2 : 64;
    ddmc__dbg_thr **v = ddmc__realloc(b->d->mem, b->e, (size_t)cap * sizeof(*v));
    if (v != NULL) b->e = v;
    uint32_t *ids = v != NULL ? ddmc__realloc(b->d->mem, b->ids, (size_t)cap * sizeof(*ids)) : NULL;
    if (ids != NULL) b->ids = ids;
    if (ids != NULL) b->cap = cap;
  }
  if (b->n < b->cap) {
    b->e[b->n] = e;
    b->ids[b->n++] = e->id;
    return;
  }
  int rc = vm_done(b->d, e, b->suspend, ddmc__ctl_suspend(b->d->vm, e->id, b->suspend));
  if (rc != 0 && b->err == 0) b->err = rc;
}

/* The batch's VM calls, in one go when the VM has the op (vmctl), each result then taken as
 * the single call's would be. */
static int batch_end(batch *b) {
  int *errs = b->n ? ddmc__calloc(b->d->mem, b->n, sizeof(int)) : NULL;
  if (errs != NULL) ddmc__ctl_suspend_list(b->d->vm, b->ids, b->n, b->suspend, errs);
  for (uint32_t i = 0; i < b->n; i++) {
    int rc = errs != NULL ? errs[i] : ddmc__ctl_suspend(b->d->vm, b->ids[i], b->suspend);
    rc = vm_done(b->d, b->e[i], b->suspend, rc);
    if (rc != 0 && b->err == 0) b->err = rc;
  }
  ddmc__free(b->d->mem, errs);
  ddmc__free(b->d->mem, b->e);
  ddmc__free(b->d->mem, b->ids);
  return b->err;
}

int ddmc__dbg_thr_suspend(ddmc__dbg *d, uint32_t thread) {
  ddmc__dbg_thr *e = get(d, thread, 1);
  if (e == NULL) return DDMC_JDWP_OUT_OF_MEMORY;
  ddmc__lock_role(&d->thr.sus_lock, DDMC__LOCK_SUSPEND);
  int rc = suspend_locked(d, e);
  ddmc__unlock_role(&d->thr.sus_lock, DDMC__LOCK_SUSPEND);
  return rc;
}

int ddmc__dbg_thr_resume(ddmc__dbg *d, uint32_t thread) {
  ddmc__dbg_thr *e = get(d, thread, 0);
  if (e == NULL) return 0;
  ddmc__lock_role(&d->thr.sus_lock, DDMC__LOCK_SUSPEND);
  int rc = resume_locked(d, e, 0);
  ddmc__unlock_role(&d->thr.sus_lock, DDMC__LOCK_SUSPEND);
  return rc;
}

/* ---- the threads a debugger sees */

typedef struct collect {
  ddmc__dbg *d;
  uint32_t *ids;
  uint32_t n, cap;
  int err;
} collect;

static int collect_visit(void *arg, const ddmc_thread_info *t) {
  collect *c = arg;
  if (c->n == c->cap) {
    if (c->cap >= DDMC__MAX_THREADS) return 0;
    uint32_t cap = c->cap ? c->cap * 2 : 64;
    uint32_t *v = ddmc__realloc(c->d->mem, c->ids, (size_t)cap * sizeof(uint32_t));
    if (v == NULL) {
      c->err = DDMC_JDWP_OUT_OF_MEMORY;
      return 1;
    }
    c->ids = v;
    c->cap = cap;
  }
  c->ids[c->n++] = t->id;
  return 0;
}

/* Ids of the VM's threads, copied out first: the visitor then calls ops outside the VM's own
 * iteration (and its locks). */
static int collect_threads(ddmc__dbg *d, collect *c) {
  memset(c, 0, sizeof(*c));
  c->d = d;
  const ddmc_vm_ops *vo = ddmc__dbg_vm_ops(d->vm);
  if (vo->for_each_thread == NULL || d->bridge.thread_info == NULL) return DDMC_JDWP_NOT_IMPLEMENTED;
  vo->for_each_thread(ddmc_vm_data(d->vm), collect_visit, c);
  return c->err;
}

int ddmc__dbg_thr_for_each(ddmc__dbg *d, ddmc__dbg_thr_visit_fn fn, void *arg) {
  collect c;
  int rc = collect_threads(d, &c);
  for (uint32_t i = 0; rc == 0 && i < c.n; i++) {
    ddmc_thread_detail info;
    memset(&info, 0, sizeof(info));
    if (d->bridge.thread_info(d->vm_data, c.ids[i], &info) != 0 || info.internal || info.object == 0) continue;
    ddmc__dbg_thr *e = get(d, c.ids[i], 1);
    if (e != NULL) {
      ddmc__lock(&d->thr.lock);
      e->object = info.object;
      e->dead = 0;
      ddmc__unlock(&d->thr.lock);
    }
    if (fn(arg, c.ids[i], &info) != 0) break; /* the visitor stops; its errors are its own */
  }
  ddmc__free(d->mem, c.ids);
  return rc;
}

typedef struct object_visit {
  ddmc__dbg *d;
  ddmc__dbg_thr_visit_fn fn;
  void *arg;
} object_visit;

static int object_visit_one(void *arg, uint32_t thread, ddmc_ref object) {
  object_visit *v = arg;
  if (object == 0) return 0;
  ddmc__dbg_thr *e = get(v->d, thread, 1);
  if (e != NULL) {
    ddmc__lock(&v->d->thr.lock);
    e->object = object;
    e->dead = 0;
    ddmc__unlock(&v->d->thr.lock);
  }
  ddmc_thread_detail info;
  memset(&info, 0, sizeof(info));
  info.object = object;
  return v->fn(v->arg, thread, &info) != 0; /* the visitor stops; its errors are its own */
}

int ddmc__dbg_thr_for_each_object(ddmc__dbg *d, ddmc__dbg_thr_visit_fn fn, void *arg) {
  if (d->bridge.for_each_debuggee_thread == NULL) return ddmc__dbg_thr_for_each(d, fn, arg);
  object_visit v = {d, fn, arg};
  return d->bridge.for_each_debuggee_thread(d->vm_data, object_visit_one, &v);
}

static int lookup_object(ddmc__dbg *d, ddmc_ref o, uint32_t *thread) {
  int found = 0;
  ddmc__lock(&d->thr.lock);
  for (uint32_t i = 0; i < d->thr.n && !found; i++) {
    ddmc__dbg_thr *e = d->thr.v[i];
    if (e->object == o && !e->dead) {
      *thread = e->id;
      found = 1;
    }
  }
  ddmc__unlock(&d->thr.lock);
  return found;
}

static int noop_visit(void *arg, uint32_t thread, const ddmc_thread_detail *info) { return 0; }

int ddmc__dbg_thr_id(ddmc__dbg *d, uint32_t thread, uint64_t *id) {
  ddmc_thread_detail info;
  memset(&info, 0, sizeof(info));
  int rc = DDMC__DBG_CALL(d, thread_info, thread, &info);
  if (rc != 0) return rc;
  if (info.internal) return DDMC_JDWP_INVALID_THREAD;
  /* Remembered: a thread that ends before the debugger names it back (ThreadStart's, read after
   * the thread is gone) is still found by its object (thr_of_object), as long as the VM says so. */
  ddmc__dbg_thr *e = info.object != 0 ? get(d, thread, 1) : NULL;
  if (e != NULL) {
    ddmc__lock(&d->thr.lock);
    e->object = info.object;
    e->dead = 0;
    ddmc__unlock(&d->thr.lock);
  }
  return ddmc__dbg_id_of_object(d, info.object, id);
}

int ddmc__dbg_thr_of_object(ddmc__dbg *d, ddmc_ref o, uint32_t *thread) {
  if (o == 0) return DDMC_JDWP_INVALID_THREAD;
  if (!lookup_object(d, o, thread)) {
    ddmc__dbg_thr_for_each_object(d, noop_visit, NULL); /* learn threads started since */
    if (!lookup_object(d, o, thread)) return DDMC_JDWP_INVALID_THREAD;
  }
  /* Still alive and visible? */
  ddmc_thread_detail info;
  memset(&info, 0, sizeof(info));
  if (d->bridge.thread_info == NULL || d->bridge.thread_info(d->vm_data, *thread, &info) != 0 || info.internal ||
      info.object != o) {
    ddmc__dbg_thr *e = get(d, *thread, 0);
    if (e != NULL) {
      ddmc__lock(&d->thr.lock);
      e->dead = 1;
      ddmc__unlock(&d->thr.lock);
    }
    return DDMC_JDWP_INVALID_THREAD;
  }
  return 0;
}

static int all_visit(void *arg, uint32_t thread, const ddmc_thread_detail *info) {
  batch *b = arg;
  if (thread == b->except) return 0;
  ddmc__dbg_thr *e = get(b->d, thread, 1);
  if (e == NULL) {
    if (b->err == 0) b->err = DDMC_JDWP_OUT_OF_MEMORY;
    return 0;
  }
  if (b->suspend ? suspend_count(b->d, e) : resume_count(b->d, e, 0)) batch_add(b, e);
  return 0;
}

static int all_locked(ddmc__dbg *d, int suspend, uint32_t except) {
  batch b = {d, suspend, except, NULL, NULL, 0, 0, 0};
  int rc = ddmc__dbg_thr_for_each_object(d, all_visit, &b);
  int err = batch_end(&b);
  return rc ? rc : err;
}

/* Every known thread, dead or unlisted ones too: none may stay counted. */
static int resume_every(ddmc__dbg *d, int to_zero) {
  batch b = {d, 0, 0, NULL, NULL, 0, 0, 0};
  ddmc__lock(&d->thr.lock);
  uint32_t n = d->thr.n;
  ddmc__unlock(&d->thr.lock);
  for (uint32_t i = 0; i < n; i++) {
    ddmc__lock(&d->thr.lock);
    ddmc__dbg_thr *e = d->thr.v[i];
    ddmc__unlock(&d->thr.lock);
    if (resume_count(d, e, to_zero)) batch_add(&b, e);
  }
  return batch_end(&b);
}

static void all_count_add(ddmc__dbg *d, int delta) {
  ddmc__lock(&d->thr.lock);
  int32_t before = d->thr.all_count;
  d->thr.all_count += delta;
  if (d->thr.all_count < 0) d->thr.all_count = 0;
  atomic_fetch_add_explicit(&d->thr.held, d->thr.all_count - before, memory_order_release);
  ddmc__unlock(&d->thr.lock);
}

int ddmc__dbg_thr_suspend_all(ddmc__dbg *d) {
  ddmc__lock_role(&d->thr.sus_lock, DDMC__LOCK_SUSPEND);
  int rc = all_locked(d, 1, 0);
  all_count_add(d, 1); /* after: the threads visited above were counted one by one */
  ddmc__unlock_role(&d->thr.sus_lock, DDMC__LOCK_SUSPEND);
  return rc;
}

int ddmc__dbg_thr_resume_all(ddmc__dbg *d) {
  ddmc__lock_role(&d->thr.sus_lock, DDMC__LOCK_SUSPEND);
  all_count_add(d, -1);
  int rc = resume_every(d, 0);
  ddmc__unlock_role(&d->thr.sus_lock, DDMC__LOCK_SUSPEND);
  return rc;
}

void ddmc__dbg_thrs_release_all(ddmc__dbg *d) {
  ddmc__lock_role(&d->thr.sus_lock, DDMC__LOCK_SUSPEND);
  ddmc__lock(&d->thr.lock);
  atomic_fetch_sub_explicit(&d->thr.held, d->thr.all_count, memory_order_release);
  d->thr.all_count = 0;
  ddmc__unlock(&d->thr.lock);
  resume_every(d, 1);
  ddmc__lock(&d->thr.lock);
  pthread_cond_broadcast(&d->thr.parked_cv); /* 'connected' is already 0: parked threads leave */
  ddmc__unlock(&d->thr.lock);
  ddmc__unlock_role(&d->thr.sus_lock, DDMC__LOCK_SUSPEND);
}

/* ---- events from VM threads */

int ddmc__dbg_thr_event_suspend(ddmc__dbg *d, uint32_t thread, int policy) {
  ddmc__dbg_thr *self = get(d, thread, 1);
  if (self == NULL) return DDMC_JDWP_OUT_OF_MEMORY;
  ddmc__lock_role(&d->thr.sus_lock, DDMC__LOCK_SUSPEND);
  ddmc__lock(&d->thr.lock);
  self->count++; /* stops itself: no bridge.suspend_thread */
  self->parking = 1;
  atomic_fetch_add_explicit(&d->thr.held, 1, memory_order_release);
  ddmc__unlock(&d->thr.lock);
  int rc = 0;
  if (policy == 2) {
    rc = all_locked(d, 1, thread);
    all_count_add(d, 1);
  }
  ddmc__unlock_role(&d->thr.sus_lock, DDMC__LOCK_SUSPEND);
  return rc;
}

void ddmc__dbg_thr_event_undo(ddmc__dbg *d, uint32_t thread, int policy) {
  ddmc__dbg_thr *self = get(d, thread, 0);
  ddmc__dbg_job *job = NULL;
  ddmc__lock_role(&d->thr.sus_lock, DDMC__LOCK_SUSPEND);
  if (self != NULL) {
    ddmc__lock(&d->thr.lock);
    self->parking = 0;
    job = self->job; /* a call that guessed the thread would park: it will not */
    self->job = NULL;
    if (job != NULL) { /* the call's resume (ddmc__dbg_thr_invoke) is undone with it */
      self->count++;
      atomic_fetch_add_explicit(&d->thr.held, 1, memory_order_release);
    }
    ddmc__unlock(&d->thr.lock);
    resume_locked(d, self, 0);
  }
  if (policy == 2) {
    all_count_add(d, -1);
    all_locked(d, 0, thread);
  }
  ddmc__unlock_role(&d->thr.sus_lock, DDMC__LOCK_SUSPEND);
  if (job != NULL) {
    job->error = DDMC_JDWP_INVALID_THREAD;
    job->run(d, thread, job); /* answers, frees */
  }
}

/* The other threads' counts down by one (suspend 0: those above 0) or up by one (1). sus_lock
 * held. */
static void others_locked(ddmc__dbg *d, uint32_t thread, int suspend) {
  ddmc__lock(&d->thr.lock);
  uint32_t n = d->thr.n;
  ddmc__unlock(&d->thr.lock);
  for (uint32_t i = 0; i < n; i++) {
    ddmc__lock(&d->thr.lock);
    ddmc__dbg_thr *e = d->thr.v[i];
    int take = e->id != thread && !e->dead && (suspend || e->count > 0);
    ddmc__unlock(&d->thr.lock);
    if (take) suspend ? (void)suspend_locked(d, e) : (void)resume_locked(d, e, 0);
  }
}

void ddmc__dbg_thr_invoke_begin(ddmc__dbg *d, uint32_t thread, ddmc__dbg_job *job, int all) {
  ddmc__dbg_thr *self = get(d, thread, 0);
  ddmc__lock_role(&d->thr.sus_lock, DDMC__LOCK_SUSPEND);
  job->all_taken = 0;
  if (self != NULL) {
    ddmc__lock(&d->thr.lock);
    /* The thread runs its own call: no bridge.resume_thread, the count alone (the call's own resume
     * was taken by ddmc__dbg_thr_invoke; a suspension that came since is taken too). Its frames
     * are dead from here (JDI forgets them across a call too). */
    job->own += self->count;
    atomic_fetch_sub_explicit(&d->thr.held, self->count, memory_order_release);
    self->count = 0;
    self->epoch++;
    ddmc__unlock(&d->thr.lock);
  }
  if (all) {
    ddmc__lock(&d->thr.lock);
    job->all_taken = d->thr.all_count > 0;
    ddmc__unlock(&d->thr.lock);
    if (job->all_taken) all_count_add(d, -1);
    others_locked(d, thread, 0);
  }
  ddmc__unlock_role(&d->thr.sus_lock, DDMC__LOCK_SUSPEND);
}

void ddmc__dbg_thr_invoke_end(ddmc__dbg *d, uint32_t thread, ddmc__dbg_job *job, int all) {
  ddmc__dbg_thr *self = get(d, thread, 0);
  ddmc__lock_role(&d->thr.sus_lock, DDMC__LOCK_SUSPEND);
  /* Under sus_lock: a session end moves gen on before it takes sus_lock to release every
   * count, so either it sees what is raised here, or this sees it gone. */
  if (atomic_load(&d->connected) && atomic_load(&d->gen) == job->gen) {
    if (self != NULL && job->own > 0) {
      ddmc__lock(&d->thr.lock);
      self->count += job->own; /* it parks itself again: no bridge.suspend_thread */
      /* The reply goes before the thread is back in its park loop: the debugger's next call,
       * sent the instant the reply arrives, waits for it there. */
      self->parking = 1;
      atomic_fetch_add_explicit(&d->thr.held, job->own, memory_order_release);
      ddmc__unlock(&d->thr.lock);
    }
    if (all) {
      others_locked(d, thread, 1);
      if (job->all_taken) all_count_add(d, 1);
    }
  }
  ddmc__unlock_role(&d->thr.sus_lock, DDMC__LOCK_SUSPEND);
}

void ddmc__dbg_thr_park(ddmc__dbg *d, uint32_t thread) {
  ddmc__dbg_thr *self = get(d, thread, 0);
  if (self == NULL) return;
  ddmc__lock(&d->thr.lock);
  self->parking = 0;
  self->parked = 1;
  /* A call waits here until the thread's count is 0: the debugger's other suspensions are
   * resumed first (JDWP: the call resumes the thread as ThreadReference.Resume does). */
  while ((self->count > 0 || self->job != NULL) && atomic_load(&d->connected)) {
    if (self->job != NULL && self->count == 0) {
      ddmc__dbg_job *job = self->job;
      self->job = NULL;
      /* Running, not parked, while it calls: a Suspend meanwhile stops it through the VM. */
      self->parked = 0;
      self->invoking++;
      ddmc__unlock(&d->thr.lock);
      job->run(d, thread, job); /* frees job */
      ddmc__lock(&d->thr.lock);
      self->invoking--;
      self->parking = 0;
      self->parked = 1;
      continue;
    }
    pthread_cond_wait(&d->thr.parked_cv, &d->thr.lock);
  }
  ddmc__dbg_job *left = self->job; /* resumed, or the debugger left, before the thread took it */
  self->job = NULL;
  self->parked = 0;
  ddmc__unlock(&d->thr.lock);
  if (left != NULL && atomic_load(&d->connected)) {
    left->error = DDMC_JDWP_INVALID_THREAD; /* a reply all the same: the debugger waits for one */
    left->run(d, thread, left);
  } else {
    ddmc__free(d->mem, left);
  }
}

/* A thread no event holds: INVALID_THREAD, as HotSpot answers. JDI turns exactly that code into
 * IncompatibleThreadStateException for a call; THREAD_NOT_SUSPENDED there reaches the IDE as an
 * InternalException. A thread whose event raised its count but that has not parked yet takes the
 * call when it parks: IDEs call toString() the instant the event arrives. */
int ddmc__dbg_thr_invoke(ddmc__dbg *d, uint32_t thread, ddmc__dbg_job *job) {
  ddmc__dbg_thr *e = get(d, thread, 0);
  int rc = DDMC_JDWP_INVALID_THREAD;
  ddmc__lock(&d->thr.lock);
  if (e == NULL) {
  } else if (e->job != NULL) {
    rc = DDMC_JDWP_ALREADY_INVOKING;
  } else if (e->count > 0 && (e->parked || e->parking)) {
    /* The call resumes the thread once, as ThreadReference.Resume: it runs when the count is 0,
     * and gives that one back when it returns (invoke_end). */
    job->gen = atomic_load(&d->gen);
    job->own = 1;
    e->job = job;
    e->count--;
    atomic_fetch_sub_explicit(&d->thr.held, 1, memory_order_release);
    if (e->count == 0) e->epoch++;
    rc = 0;
    if (e->parked) pthread_cond_broadcast(&d->thr.parked_cv);
  } else if (e->invoking) {
    rc = DDMC_JDWP_ALREADY_INVOKING;
  }
  ddmc__unlock(&d->thr.lock);
  return rc;
}

void ddmc__dbg_thr_wait_resumed(ddmc__dbg *d, uint32_t thread) {
  if (!atomic_load(&d->connected)) return;
  /* Nothing held (a trace's method events with a DDM peer connected): no lock per event. */
  if (atomic_load_explicit(&d->thr.held, memory_order_acquire) == 0) return;
  ddmc__dbg_thr *self = get(d, thread, 1);
  if (self == NULL) return;
  ddmc__lock(&d->thr.lock);
  int held = self->count > 0 || self->job != NULL; /* a call taken before it parked */
  ddmc__unlock(&d->thr.lock);
  if (!held) return;
  if (d->bridge.thread_parking) d->bridge.thread_parking(d->vm_data, thread, 1);
  ddmc__dbg_thr_park(d, thread);
  if (d->bridge.thread_parking) d->bridge.thread_parking(d->vm_data, thread, 0);
}

void ddmc__dbg_thrs_forget(ddmc__dbg *d) {
  ddmc__lock(&d->thr.lock);
  for (uint32_t i = 0; i < d->thr.n; i++) d->thr.v[i]->object = 0;
  ddmc__unlock(&d->thr.lock);
}

void ddmc__dbg_thrs_destroy(ddmc__dbg *d) {
  ddmc__dbg_thrs *t = &d->thr;
  for (uint32_t i = 0; i < t->n; i++) ddmc__free(d->mem, t->v[i]);
  ddmc__free(d->mem, t->v);
  ddmc__free(d->mem, t->hash);
  pthread_cond_destroy(&t->parked_cv);
  pthread_mutex_destroy(&t->lock);
  pthread_mutex_destroy(&t->sus_lock);
}

int ddmc_dbg_suspend_count(ddmc_vm *vm, uint32_t thread) {
  ddmc__dbg *d = vm ? ddmc__dbg_of_vm(vm) : NULL;
  return d ? ddmc__dbg_thr_count(d, thread) : 0;
}
