/* SPDX-License-Identifier: Apache-2.0 */
/* Object monitors: monitor-enter/exit, wait, notify, notify-all.
 *
 * A monitor is created the first time an object is locked and lives in a hash table keyed by
 * the object's reference (objects never move), under one VM-wide mutex: minivm programs have a
 * handful of contended locks, so a fat lock per object and a global table are plenty. The
 * collector drops the monitors of dead objects after marking. Blocking paths first switch the
 * thread to a safe status (MONITOR, WAIT, SLEEPING) so a collection never waits for them, and only
 * become RUNNING again after releasing mon_lock (see the lock order in internal.h). */
#include <errno.h>
#include <string.h>
#include <time.h>

#include "internal.h"

static unsigned bucket(mvm_ref obj) { return (obj * 2654435761u) >> 24; }

static mvm_monitor *lookup(mvm_vm *vm, mvm_ref obj, int create) {
  mvm_monitor **head = &vm->mon[bucket(obj) % MVM_MON_BUCKETS];
  for (mvm_monitor *m = *head; m; m = m->next)
    if (m->obj == obj) return m;
  if (!create) return NULL;
  mvm_monitor *m = mvm_ncalloc(vm, 1, sizeof *m);
  if (!m) return NULL;
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&m->enter_cond, NULL);
  pthread_cond_init(&m->wait_cond, &ca);
  pthread_condattr_destroy(&ca);
  m->obj = obj;
  m->next = *head;
  *head = m;
  return m;
}

static void destroy(mvm_vm *vm, mvm_monitor *m) {
  pthread_cond_destroy(&m->enter_cond);
  pthread_cond_destroy(&m->wait_cond);
  mvm_nfree(vm, m);
}

/* Monitor events for a debugger or an agent (mvm_dbg_hooks.monitor), at the top frame's
 * instruction; one call through monitor_wants when nobody listens. No VM lock held, RUNNING. */
static void report(mvm_thread *t, int kind, mvm_ref obj, int64_t arg) {
  mvm_vm *vm = t->vm;
  if (!vm->dbg.monitor || !vm->dbg.monitor_wants || t->depth == 0 || !vm->dbg.monitor_wants(vm->dbg.ud, kind)) return;
  const mvm_frame *f = &t->frames[t->depth - 1];
  mvm_loc loc = mvm_loc_of(f->m, atomic_load_explicit(&f->pc, memory_order_relaxed));
  vm->dbg.monitor(vm->dbg.ud, t->id, &loc, (int32_t)t->depth - 1, kind, obj, arg);
}

/* With mon_lock held and t already in a safe status: waits for the owner to leave. */
static int acquire_slow(mvm_vm *vm, mvm_thread *t, mvm_monitor *m, uint32_t count, int32_t depth) {
  t->blocked_on = m->obj;
  while (m->owner && !atomic_load(&vm->shutdown)) pthread_cond_wait(&m->enter_cond, &vm->mon_lock);
  t->blocked_on = 0;
  if (m->owner) return -1;
  m->owner = t;
  m->count = count;
  m->depth = depth;
  return 0;
}

int mvm_monitor_enter(mvm_thread *t, mvm_ref obj) {
  mvm_vm *vm = t->vm;
  pthread_mutex_lock(&vm->mon_lock);
  mvm_monitor *m = lookup(vm, obj, 1);
  if (m && (m->owner == t || !m->owner)) {
    if (!m->owner) m->depth = (int32_t)t->depth - 1;
    m->owner = t;
    m->count++;
    pthread_mutex_unlock(&vm->mon_lock);
    return 0;
  }
  pthread_mutex_unlock(&vm->mon_lock);
  if (!m) return -1;
  report(t, MVM_MON_CONTENDED_ENTER, obj, 0);
  mvm_set_status(t, MVM_TS_MONITOR);
  pthread_mutex_lock(&vm->mon_lock);
  /* A collection may have run meanwhile, but the object is live in our register, so its
   * monitor was kept; create-if-missing only guards that reasoning. */
  m = lookup(vm, obj, 1);
  int rc = m ? acquire_slow(vm, t, m, 1, (int32_t)t->depth - 1) : -1;
  pthread_mutex_unlock(&vm->mon_lock);
  if (rc == 0) mvm_set_status(t, MVM_TS_RUNNING);
  if (rc == 0) report(t, MVM_MON_CONTENDED_ENTERED, obj, 0);
  return rc;
}

static mvm_monitor *owned(mvm_thread *t, mvm_ref obj, const char **msg) {
  mvm_monitor *m = lookup(t->vm, obj, 0);
  if (!m || m->owner != t) {
    *msg = "IllegalMonitorStateException: current thread does not own the monitor";
    return NULL;
  }
  return m;
}

int mvm_monitor_exit(mvm_thread *t, mvm_ref obj, const char **msg) {
  mvm_vm *vm = t->vm;
  pthread_mutex_lock(&vm->mon_lock);
  mvm_monitor *m = owned(t, obj, msg);
  if (m && --m->count == 0) {
    m->owner = NULL;
    pthread_cond_signal(&m->enter_cond);
  }
  pthread_mutex_unlock(&vm->mon_lock);
  return m ? 0 : -1;
}

int mvm_monitor_wait(mvm_thread *t, mvm_ref obj, int64_t timeout_ms, const char **msg) {
  mvm_vm *vm = t->vm;
  pthread_mutex_lock(&vm->mon_lock);
  mvm_monitor *m = owned(t, obj, msg);
  if (!m) {
    pthread_mutex_unlock(&vm->mon_lock);
    return -1;
  }
  if (vm->dbg.monitor) { /* MonitorWait, still owning it, with no VM lock held */
    pthread_mutex_unlock(&vm->mon_lock);
    report(t, MVM_MON_WAIT, obj, timeout_ms > 0 ? timeout_ms : 0);
    pthread_mutex_lock(&vm->mon_lock);
    m = lookup(vm, obj, 1); /* kept: we own it, and obj is live in a register */
    if (!m || m->owner != t) {
      pthread_mutex_unlock(&vm->mon_lock);
      return -1;
    }
  }
  uint32_t saved = m->count;
  int32_t saved_depth = m->depth;
  m->owner = NULL;
  m->count = 0;
  pthread_cond_signal(&m->enter_cond);
  t->notified = 0;
  t->wait_next = NULL;
  mvm_thread **pp = &m->waiters;   /* FIFO: notify wakes the longest waiter */
  while (*pp) pp = &(*pp)->wait_next;
  *pp = t;
  t->blocked_on = obj;
  /* As in Java, wait(0) waits forever; a positive timeout is a timed wait (SLEEPING). */
  mvm_set_status(t, timeout_ms > 0 ? MVM_TS_SLEEPING : MVM_TS_WAIT);
  struct timespec until;
  if (timeout_ms > 0) {
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_sec += timeout_ms / 1000;
    until.tv_nsec += (timeout_ms % 1000) * 1000000;
    if (until.tv_nsec >= 1000000000) {
      until.tv_sec++;
      until.tv_nsec -= 1000000000;
    }
  }
  int rc = 0;
  while (!t->notified && !atomic_load(&vm->shutdown) && rc != ETIMEDOUT && !atomic_load(&t->interrupted) &&
         !atomic_load(&t->async_pending))
    rc = timeout_ms > 0 ? pthread_cond_timedwait(&m->wait_cond, &vm->mon_lock, &until)
                        : pthread_cond_wait(&m->wait_cond, &vm->mon_lock);
  if (!t->notified)   /* timed out, interrupted or shut down: still queued */
    for (pp = &m->waiters; *pp; pp = &(*pp)->wait_next)
      if (*pp == t) {
        *pp = t->wait_next;
        break;
      }
  int timed_out = !t->notified && rc == ETIMEDOUT;
  if (m->owner) mvm_set_status(t, MVM_TS_MONITOR);
  rc = acquire_slow(vm, t, m, saved, saved_depth);
  pthread_mutex_unlock(&vm->mon_lock);
  if (rc == 0) mvm_set_status(t, MVM_TS_RUNNING);
  if (rc == 0) report(t, MVM_MON_WAITED, obj, timed_out);
  if (rc == 0 && atomic_exchange(&t->interrupted, 0)) return 1;
  return rc;
}

int mvm_monitor_notify(mvm_thread *t, mvm_ref obj, int all, const char **msg) {
  mvm_vm *vm = t->vm;
  pthread_mutex_lock(&vm->mon_lock);
  mvm_monitor *m = owned(t, obj, msg);
  if (m && m->waiters) {
    do {
      mvm_thread *w = m->waiters;
      m->waiters = w->wait_next;
      w->notified = 1;
    } while (all && m->waiters);
    /* One condition variable per monitor: wake all, each checks its own flag. */
    pthread_cond_broadcast(&m->wait_cond);
  }
  pthread_mutex_unlock(&vm->mon_lock);
  return m ? 0 : -1;
}

void mvm_monitor_release_all(mvm_thread *t) {
  mvm_vm *vm = t->vm;
  pthread_mutex_lock(&vm->mon_lock);
  for (int b = 0; b < MVM_MON_BUCKETS; b++)
    for (mvm_monitor *m = vm->mon[b]; m; m = m->next)
      if (m->owner == t) {
        m->owner = NULL;
        m->count = 0;
        pthread_cond_signal(&m->enter_cond);
      }
  pthread_mutex_unlock(&vm->mon_lock);
}

void mvm_monitor_sweep(mvm_vm *vm) {
  pthread_mutex_lock(&vm->mon_lock);
  for (int b = 0; b < MVM_MON_BUCKETS; b++)
    for (mvm_monitor **pp = &vm->mon[b]; *pp;) {
      mvm_monitor *m = *pp;
      /* Waiters and blocked enterers hold the object in a register, so a dead object's monitor
       * has none; an owner that dropped every reference can never exit it anyway. */
      if (!mvm_deref(vm, m->obj)->mark) {
        *pp = m->next;
        destroy(vm, m);
      } else {
        pp = &m->next;
      }
    }
  pthread_mutex_unlock(&vm->mon_lock);
}

void mvm_monitor_wake_all(mvm_vm *vm) {
  pthread_mutex_lock(&vm->mon_lock);
  for (int b = 0; b < MVM_MON_BUCKETS; b++)
    for (mvm_monitor *m = vm->mon[b]; m; m = m->next) {
      pthread_cond_broadcast(&m->enter_cond);
      pthread_cond_broadcast(&m->wait_cond);
    }
  pthread_mutex_unlock(&vm->mon_lock);
}

void mvm_monitor_free_all(mvm_vm *vm) {
  for (int b = 0; b < MVM_MON_BUCKETS; b++)
    while (vm->mon[b]) {
      mvm_monitor *m = vm->mon[b];
      vm->mon[b] = m->next;
      destroy(vm, m);
    }
}

/* ---- A debugger's view (JDWP MonitorInfo, OwnedMonitors, CurrentContendedMonitor). Copied
 * under mon_lock, visited after: the visitors call back into the VM. The caller stops the world
 * (mvm_dbg_enter), so the objects stay alive and the threads where they are. */

#define MVM_MON_VIEW_MAX 512

int mvm_dbg_monitor_info(mvm_vm *vm, uint64_t obj, uint32_t *owner, int32_t *count,
                         int (*waiter)(void *arg, uint32_t thread), void *arg) {
  uint32_t ids[MVM_MON_VIEW_MAX];
  uint32_t n = 0;
  *owner = 0;
  *count = 0;
  pthread_mutex_lock(&vm->thread_lock);
  pthread_mutex_lock(&vm->mon_lock);
  mvm_monitor *m = lookup(vm, (mvm_ref)obj, 0);
  if (m && m->owner) {
    *owner = m->owner->id;
    *count = (int32_t)m->count;
  }
  /* waiting to enter, then waiting in wait() (both have blocked_on set) */
  for (mvm_thread *t = vm->threads; t && n < MVM_MON_VIEW_MAX; t = t->next)
    if (t->blocked_on == (mvm_ref)obj && obj) ids[n++] = t->id;
  pthread_mutex_unlock(&vm->mon_lock);
  pthread_mutex_unlock(&vm->thread_lock);
  for (uint32_t i = 0; i < n; i++)
    if (waiter(arg, ids[i])) break;
  return 0;
}

static mvm_thread *find_thread(mvm_vm *vm, uint32_t id) {
  for (mvm_thread *t = vm->threads; t; t = t->next)
    if (t->id == id) return t;
  return NULL;
}

int mvm_dbg_owned_monitors(mvm_vm *vm, uint32_t id, int (*fn)(void *arg, uint64_t obj, int32_t depth), void *arg) {
  mvm_ref objs[MVM_MON_VIEW_MAX];
  int32_t depths[MVM_MON_VIEW_MAX];
  uint32_t n = 0;
  pthread_mutex_lock(&vm->thread_lock);
  mvm_thread *t = find_thread(vm, id);
  if (!t) {
    pthread_mutex_unlock(&vm->thread_lock);
    return MVM_DBG_ENOTHREAD;
  }
  /* depth from the innermost frame, as a debugger counts */
  int32_t top = (int32_t)t->depth - 1;
  pthread_mutex_lock(&vm->mon_lock);
  for (int b = 0; b < MVM_MON_BUCKETS && n < MVM_MON_VIEW_MAX; b++)
    for (mvm_monitor *m = vm->mon[b]; m && n < MVM_MON_VIEW_MAX; m = m->next)
      if (m->owner == t) {
        objs[n] = m->obj;
        depths[n++] = m->depth >= 0 && m->depth <= top ? top - m->depth : -1;
      }
  pthread_mutex_unlock(&vm->mon_lock);
  pthread_mutex_unlock(&vm->thread_lock);
  for (uint32_t i = 0; i < n; i++)
    if (fn(arg, objs[i], depths[i])) break;
  return 0;
}

int mvm_dbg_contended_monitor(mvm_vm *vm, uint32_t id, uint64_t *out) {
  pthread_mutex_lock(&vm->thread_lock);
  mvm_thread *t = find_thread(vm, id);
  if (t) {
    pthread_mutex_lock(&vm->mon_lock);
    *out = t->blocked_on;
    pthread_mutex_unlock(&vm->mon_lock);
  }
  pthread_mutex_unlock(&vm->thread_lock);
  return t ? 0 : MVM_DBG_ENOTHREAD;
}
