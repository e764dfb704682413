/* SPDX-License-Identifier: Apache-2.0 */
/* Thread suspension for agents (SuspendThread, ResumeThread, SuspendThreadList,
 * ResumeThreadList), shared with the JDWP debugger's counts.
 *
 * JVM TI suspension is one flag per thread (a second SuspendThread is THREAD_SUSPENDED, a
 * ResumeThread of a thread not suspended THREAD_NOT_SUSPENDED); the debugger keeps its own count
 * (src/debugger/threads.c) and, through vmctl's arbiter (client.c sets it), reaches
 * ddmc__jv_susp_debugger when it goes 0 -> 1 and back. The VM's
 * suspend_thread is called when the first of the two holds a thread, resume_thread when the
 * last lets go: a thread suspended by both stays stopped until both resumed it.
 *
 * A thread that suspends itself cannot wait for its own safepoint: it records the hold and waits
 * here (parked, for a VM thread inside a callback, so the collector does not wait for it) until
 * neither agents nor the debugger hold it. The debugger then needs no VM call for it either.
 *
 * Locks: susp.op serialises transitions and is held across the VM's suspend_thread (which waits
 * for the target to stop), as the debugger's sus_lock is (the debugger takes sus_lock, then op).
 * A VM thread takes it parked, so a thread waiting for it never holds up a suspend of itself.
 * susp.lock guards the table only (a leaf). */
#include <string.h>

#include "jvmti/funcs.h"

int ddmc__jv_susp_init(ddmc__jv_susp *s) {
  memset(s, 0, sizeof(*s));
  if (pthread_mutex_init(&s->op, NULL) != 0) return DDMC_ENOMEM;
  if (pthread_mutex_init(&s->lock, NULL) != 0) {
    pthread_mutex_destroy(&s->op);
    return DDMC_ENOMEM;
  }
  if (pthread_cond_init(&s->cv, NULL) != 0) {
    pthread_mutex_destroy(&s->lock);
    pthread_mutex_destroy(&s->op);
    return DDMC_ENOMEM;
  }
  return 0;
}

void ddmc__jv_susp_destroy(ddmc__jv_susp *s) {
  pthread_cond_destroy(&s->cv);
  pthread_mutex_destroy(&s->lock);
  pthread_mutex_destroy(&s->op);
}

/* The entry of thread (created when create is set; NULL when absent or the table is full).
 * s->lock held. */
static ddmc__jv_susp_entry *entry(ddmc__jv_susp *s, uint32_t thread, int create) {
  for (uint32_t i = 0; i < s->n; i++)
    if (s->v[i].thread == thread) return &s->v[i];
  if (!create || s->n == DDMC__MAX_SUSP) return NULL;
  ddmc__jv_susp_entry *e = &s->v[s->n++];
  memset(e, 0, sizeof(*e));
  e->thread = thread;
  return e;
}

/* Drops an entry nothing holds any more. s->lock held. */
static void tidy(ddmc__jv_susp *s, ddmc__jv_susp_entry *e) {
  if (e->agent || e->dbg || e->vm || e->self) return;
  *e = s->v[--s->n];
}

typedef struct held {
  int found, agent, dbg;
} held;

static held snapshot(ddmc__jv_susp *s, uint32_t thread) {
  held h = {0, 0, 0};
  ddmc__lock(&s->lock);
  ddmc__jv_susp_entry *e = entry(s, thread, 0);
  if (e != NULL) h = (held){1, e->agent, e->dbg};
  ddmc__unlock(&s->lock);
  return h;
}

/* One side (agent or debugger) takes (on = 1) or releases its hold of thread; the VM is asked to
 * stop or release the thread when the holds go from none to some or back. s->op held. Returns a
 * JDWP error of the VM's op, DDMC_JDWP_OUT_OF_MEMORY (table full). */
static int set_hold(ddmc__jv_susp *s, const ddmc_vm_bridge *bridge, void *data, uint32_t thread, int agent, int on) {
  ddmc__lock(&s->lock);
  ddmc__jv_susp_entry *e = entry(s, thread, on);
  if (e == NULL) {
    ddmc__unlock(&s->lock);
    return on ? DDMC_JDWP_OUT_OF_MEMORY : 0;
  }
  int before = e->agent || e->dbg;
  if (agent)
    e->agent = (uint8_t)on;
  else
    e->dbg = (uint8_t)on;
  int after = e->agent || e->dbg;
  int call_suspend = !before && after && !e->vm && !e->self;
  int call_resume = before && !after && e->vm;
  if (before && !after && e->self) pthread_cond_broadcast(&s->cv);
  ddmc__unlock(&s->lock);
  int rc = 0;
  if (call_suspend) {
    rc = bridge->suspend_thread ? bridge->suspend_thread(data, thread) : DDMC_JDWP_NOT_IMPLEMENTED;
    ddmc__lock(&s->lock);
    e = entry(s, thread, 0);
    if (e != NULL && rc == 0) e->vm = 1;
    if (e != NULL && rc != 0) { /* undo the hold: the thread runs on */
      if (agent)
        e->agent = 0;
      else
        e->dbg = 0;
      tidy(s, e);
    }
    ddmc__unlock(&s->lock);
  } else if (call_resume) {
    ddmc__lock(&s->lock);
    e = entry(s, thread, 0);
    if (e != NULL) e->vm = 0;
    if (e != NULL) tidy(s, e);
    ddmc__unlock(&s->lock);
    rc = bridge->resume_thread ? bridge->resume_thread(data, thread) : DDMC_JDWP_NOT_IMPLEMENTED;
  } else {
    ddmc__lock(&s->lock);
    e = entry(s, thread, 0);
    if (e != NULL) tidy(s, e);
    ddmc__unlock(&s->lock);
  }
  return rc;
}

int ddmc__jv_susp_debugger(ddmc_vm *vm, uint32_t thread, int suspend) {
  ddmc__jvmti *jv = ddmc__jv_get(vm);
  if (jv == NULL || jv->bridge == NULL) return DDMC_JDWP_NOT_IMPLEMENTED;
  ddmc__lock_role(&jv->susp.op, DDMC__LOCK_SUSPEND);
  int rc = set_hold(&jv->susp, jv->bridge, jv->bridge_data, thread, 0, suspend);
  ddmc__unlock_role(&jv->susp.op, DDMC__LOCK_SUSPEND);
  return rc;
}

/* ---- JVM TI */

/* A VM thread in a callback counts as parked while it waits for susp.op or for its own resume,
 * so neither a collection nor a suspend of it waits for it. */
static int park_self(ddmc__jvmti *jv, int on) {
  uint32_t self = ddmc__jv_self();
  if (self == 0 || !ddmc__jv_may_park() || jv->bridge == NULL || jv->bridge->thread_parking == NULL) return 0;
  jv->bridge->thread_parking(jv->bridge_data, self, on);
  return 1;
}

static jvmtiError check(ddmc__jv_jenv *e) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_LIVE);
  if (rc) return rc;
  if (!ddmc__jv_jenv_has_cap(e, DDMC_CAP_can_suspend)) return JVMTI_ERROR_MUST_POSSESS_CAPABILITY;
  if (e->jv->bridge == NULL || e->jv->bridge->suspend_thread == NULL || e->jv->bridge->resume_thread == NULL)
    return JVMTI_ERROR_NOT_AVAILABLE;
  return JVMTI_ERROR_NONE;
}

/* Is thread alive (thread_info answers for it and it is not a zombie)? */
static int alive(ddmc__jvmti *jv, uint32_t thread) {
  ddmc_thread_detail ti;
  memset(&ti, 0, sizeof(ti));
  return jv->bridge->thread_info != NULL && jv->bridge->thread_info(jv->bridge_data, thread, &ti) == 0 &&
         ti.status != DDMC_TS_ZOMBIE && ti.object != 0;
}

/* Suspends one thread (not the caller). s->op held by the caller. */
static jvmtiError suspend_other(ddmc__jvmti *jv, uint32_t thread) {
  held h = snapshot(&jv->susp, thread);
  if (h.agent) return JVMTI_ERROR_THREAD_SUSPENDED;
  int rc = set_hold(&jv->susp, jv->bridge, jv->bridge_data, thread, 1, 1);
  if (rc == DDMC_JDWP_INVALID_THREAD) return JVMTI_ERROR_THREAD_NOT_ALIVE;
  return rc ? ddmc__jv_err(rc) : JVMTI_ERROR_NONE;
}

/* The calling thread suspends itself: the hold is recorded (op held on entry, released here),
 * then the thread waits until neither agents nor the debugger hold it. */
static jvmtiError suspend_self(ddmc__jvmti *jv, uint32_t self) {
  ddmc__jv_susp *s = &jv->susp;
  ddmc__lock(&s->lock);
  ddmc__jv_susp_entry *e = entry(s, self, 1);
  if (e == NULL) {
    ddmc__unlock(&s->lock);
    ddmc__unlock_role(&s->op, DDMC__LOCK_SUSPEND);
    return JVMTI_ERROR_OUT_OF_MEMORY;
  }
  if (e->agent) { /* cannot happen (it would be waiting), but never wait twice */
    ddmc__unlock(&s->lock);
    ddmc__unlock_role(&s->op, DDMC__LOCK_SUSPEND);
    return JVMTI_ERROR_THREAD_SUSPENDED;
  }
  e->agent = 1;
  e->self = 1;
  ddmc__unlock_role(&s->op, DDMC__LOCK_SUSPEND); /* others may resume it now */
  for (;;) {
    e = entry(s, self, 0);
    if (e == NULL || !(e->agent || e->dbg)) break;
    pthread_cond_wait(&s->cv, &s->lock);
  }
  if (e != NULL) {
    e->self = 0;
    tidy(s, e);
  }
  ddmc__unlock(&s->lock);
  return JVMTI_ERROR_NONE;
}

static jvmtiError suspend_one(ddmc__jvmti *jv, uint32_t thread) {
  if (!alive(jv, thread)) return JVMTI_ERROR_THREAD_NOT_ALIVE;
  int parked = park_self(jv, 1);
  ddmc__lock_role(&jv->susp.op, DDMC__LOCK_SUSPEND);
  jvmtiError rc;
  if (thread == ddmc__jv_self()) {
    rc = suspend_self(jv, thread); /* releases op */
  } else {
    rc = suspend_other(jv, thread);
    ddmc__unlock_role(&jv->susp.op, DDMC__LOCK_SUSPEND);
  }
  if (parked) park_self(jv, 0);
  return rc;
}

static jvmtiError resume_one(ddmc__jvmti *jv, uint32_t thread) {
  held h = snapshot(&jv->susp, thread);
  if (!h.agent) return alive(jv, thread) ? JVMTI_ERROR_THREAD_NOT_SUSPENDED : JVMTI_ERROR_THREAD_NOT_ALIVE;
  int parked = park_self(jv, 1);
  ddmc__lock_role(&jv->susp.op, DDMC__LOCK_SUSPEND);
  h = snapshot(&jv->susp, thread);
  int rc = h.agent ? set_hold(&jv->susp, jv->bridge, jv->bridge_data, thread, 1, 0) : -1;
  ddmc__unlock_role(&jv->susp.op, DDMC__LOCK_SUSPEND);
  if (parked) park_self(jv, 0);
  if (rc < 0) return JVMTI_ERROR_THREAD_NOT_SUSPENDED; /* resumed meanwhile by another thread */
  if (rc == DDMC_JDWP_INVALID_THREAD) return JVMTI_ERROR_THREAD_NOT_ALIVE;
  return rc ? ddmc__jv_err(rc) : JVMTI_ERROR_NONE;
}

static jvmtiError one(ddmc__jv_jenv *e, jthread thread, int suspend) {
  jvmtiError rc = check(e);
  if (rc) return rc;
  uint32_t id;
  if ((rc = ddmc__jv_thread_of(e->jv, thread, &id)) != 0) return rc;
  return suspend ? suspend_one(e->jv, id) : resume_one(e->jv, id);
}

jvmtiError ddmc__jv_jt_SuspendThread(ddmc__jv_jenv *e, jthread thread) { return one(e, thread, 1); }

jvmtiError ddmc__jv_jt_ResumeThread(ddmc__jv_jenv *e, jthread thread) { return one(e, thread, 0); }

#define DDMC__MAX_LIST (1 << 16)

static jvmtiError list_check(ddmc__jv_jenv *e, jint count, const jthread *list, const jvmtiError *results) {
  jvmtiError rc = check(e);
  if (rc) return rc;
  if (count < 0 || count > DDMC__MAX_LIST) return JVMTI_ERROR_ILLEGAL_ARGUMENT;
  return list == NULL || results == NULL ? JVMTI_ERROR_NULL_POINTER : JVMTI_ERROR_NONE;
}

/* The calling thread, if listed, is suspended last (it blocks there), as the specification says. */
jvmtiError ddmc__jv_jt_SuspendThreadList(ddmc__jv_jenv *e, jint request_count, const jthread *request_list,
                                         jvmtiError *results) {
  jvmtiError rc = list_check(e, request_count, request_list, results);
  if (rc) return rc;
  uint32_t self = ddmc__jv_self();
  jint self_at = -1;
  for (jint i = 0; i < request_count; i++) {
    uint32_t id;
    results[i] = ddmc__jv_thread_of(e->jv, request_list[i], &id);
    if (results[i] != JVMTI_ERROR_NONE) continue;
    if (id == self && self_at < 0) {
      self_at = i;
      continue;
    }
    results[i] = suspend_one(e->jv, id);
  }
  if (self_at >= 0) results[self_at] = suspend_one(e->jv, self);
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_ResumeThreadList(ddmc__jv_jenv *e, jint request_count, const jthread *request_list,
                                        jvmtiError *results) {
  jvmtiError rc = list_check(e, request_count, request_list, results);
  if (rc) return rc;
  for (jint i = 0; i < request_count; i++) {
    uint32_t id;
    results[i] = ddmc__jv_thread_of(e->jv, request_list[i], &id);
    if (results[i] == JVMTI_ERROR_NONE) results[i] = resume_one(e->jv, id);
  }
  return JVMTI_ERROR_NONE;
}

int ddmc__jv_susp_held(ddmc__jvmti *jv, uint32_t thread) {
  held h = snapshot(&jv->susp, thread);
  return h.agent || h.dbg;
}
