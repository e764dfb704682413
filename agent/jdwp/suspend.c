/* SPDX-License-Identifier: Apache-2.0 */
/* Suspension through JVM TI: the bridge's suspend_thread / resume_thread, their bulk forms
 * (one SuspendThreadList / ResumeThreadList for every thread the library stops or lets go at
 * once) and thread_parking, the gate around every JVM TI callback (ja_callback_enter / _leave), the world stopped for a heap
 * walk (ja_world_stop), and a thread held suspended for PopFrame / ForceEarlyReturn
 * (ja_with_suspended). Below events.c, heap.c and mutate.c, which call in; it reaches only the
 * table of names (refs.c) and threads.c's jthread lookup. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "ja.h"

/* Suspension. A thread that runs one of the agent's callbacks is in native code, where HotSpot's
 * SuspendThread does not stop it: it stops at its next JNI or JVM TI call instead. Inside a
 * callback that call may come while it holds a lock of libddmc (an event that suspends every
 * thread enumerates them under the library's suspension lock), and the JDWP thread that would
 * resume it waits for that lock: a deadlock. So a thread inside a callback is never suspended
 * through JVM TI: it is "gated", and stops on the agent's condition variable where its outermost
 * callback returns, before it runs bytecode again, until resume_thread opens the gate. A thread
 * JVM TI suspended just as it entered a callback stops at its first JVM TI call in
 * ja_callback_enter, before it takes any lock (a thread cannot resume itself). Threads outside
 * callbacks are suspended by JVM TI as usual. One lock for all threads: a leaf, never held across
 * a call into libddmc. */
static pthread_mutex_t sus_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sus_cv = PTHREAD_COND_INITIALIZER;

/* The thread is about to run bytecode again (resumed, or leaving its callback): the frames
 * PopFrame left shown (mutate.c) are gone now. */
static void thread_runs(ja_tstate *e) { atomic_store(&e->hidden, 0); }

uint32_t ja_callback_enter(JNIEnv *env, jthread t) {
  uint32_t id = (uint32_t)ja_ref(env, t);
  ja_tstate *e = ja_tstate_of(id);
  if (e == NULL) {
    /* Threads are named from a reserve the bound on objects leaves alone: this takes 2^18 of
     * them alive at once. */
    if (t != NULL) fprintf(stderr, "ddmcjdwp: an event of a thread that cannot be named is not reported\n");
    return 0;
  }
  pthread_mutex_lock(&sus_mu);
  int stopped = e->in_callback++ == 0 && (e->ti_suspended || e->world == 1);
  pthread_mutex_unlock(&sus_mu);
  if (stopped) {
    /* Suspended by JVM TI just before the callback: the first JVM TI call stops it, here, where
     * it holds nothing, until resume_thread resumes it. */
    jint st = 0;
    (*ja.ti)->GetThreadState(ja.ti, t, &st);
  }
  return id;
}

void ja_callback_leave(uint32_t id) {
  ja_tstate *e = ja_tstate_of(id);
  if (e == NULL) return;
  pthread_mutex_lock(&sus_mu);
  if (--e->in_callback == 0) {
    while (e->gated || e->world == 2) pthread_cond_wait(&sus_cv, &sus_mu);
    thread_runs(e);
  }
  pthread_mutex_unlock(&sus_mu);
}

jvmtiError ja_with_suspended(uint32_t thread, jvmtiError (*fn)(jthread t, void *arg), void *arg) {
  jthread t = ja_thread(thread);
  ja_tstate *e = ja_tstate_of(thread);
  if (t == NULL || e == NULL) return JVMTI_ERROR_INVALID_THREAD;
  pthread_mutex_lock(&sus_mu);
  jvmtiError r;
  if (e->ti_suspended || e->world == 1) {
    r = fn(t, arg);
  } else {
    /* In native code (a callback): SuspendThread returns at once and the thread stays put. */
    r = (*ja.ti)->SuspendThread(ja.ti, t);
    int ours = r == JVMTI_ERROR_NONE;
    if (r == JVMTI_ERROR_NONE || r == JVMTI_ERROR_THREAD_SUSPENDED) r = fn(t, arg);
    if (ours) (*ja.ti)->ResumeThread(ja.ti, t);
  }
  pthread_mutex_unlock(&sus_mu);
  return r;
}

/* The two halves of suspend_thread around JVM TI's call, under sus_mu. suspend_begin stops e
 * without JVM TI where it can (a heap walk's stop taken over, a thread in a callback gated) and
 * says whether SuspendThread is needed; suspend_end takes its answer. */
static int suspend_begin(ja_tstate *e) {
  if (e->world == 1) {
    /* Already stopped by JVM TI for a heap walk: the debugger's from now on. */
    e->world = 0;
    e->ti_suspended = 1;
    return 0;
  }
  if (e->in_callback > 0) {
    e->gated = 1;
    return 0;
  }
  /* The target may be about to take sus_mu in ja_callback_enter: it is in native code then,
   * which SuspendThread does not wait for. */
  return !e->ti_suspended && !e->gated;
}

static int suspend_end(ja_tstate *e, jvmtiError r) {
  /* Already suspended (by another agent): stopped all the same. A thread that has ended is no
   * longer running anything to stop. */
  if (r == JVMTI_ERROR_NONE) e->ti_suspended = 1;
  if (r == JVMTI_ERROR_THREAD_SUSPENDED || r == JVMTI_ERROR_THREAD_NOT_ALIVE) r = JVMTI_ERROR_NONE;
  return ja_err(r);
}

/* The same for resume_thread: a gated thread's gate opened, 1 when ResumeThread is needed. */
static int resume_begin(ja_tstate *e) {
  int ti = e->ti_suspended;
  if (ti) {
    thread_runs(e);
    e->ti_suspended = 0;
  }
  if (e->gated) {
    e->gated = 0;
    pthread_cond_broadcast(&sus_cv);
  }
  return ti;
}

static int resume_end(jvmtiError r) {
  if (r == JVMTI_ERROR_THREAD_NOT_SUSPENDED || r == JVMTI_ERROR_THREAD_NOT_ALIVE) r = JVMTI_ERROR_NONE;
  return ja_err(r);
}

static int suspend_thread(void *vd, uint32_t thread) {
  ja_tstate *e = ja_tstate_of(thread);
  jthread t = ja_thread(thread);
  if (e == NULL || t == NULL) return DDMC_JDWP_INVALID_THREAD;
  int rc = 0;
  pthread_mutex_lock(&sus_mu);
  if (suspend_begin(e)) rc = suspend_end(e, (*ja.ti)->SuspendThread(ja.ti, t));
  pthread_mutex_unlock(&sus_mu);
  return rc;
}

static int resume_thread(void *vd, uint32_t thread) {
  ja_tstate *e = ja_tstate_of(thread);
  jthread t = ja_thread(thread);
  if (e == NULL || t == NULL) return DDMC_JDWP_INVALID_THREAD;
  int rc = 0;
  pthread_mutex_lock(&sus_mu);
  if (resume_begin(e)) rc = resume_end((*ja.ti)->ResumeThread(ja.ti, t));
  pthread_mutex_unlock(&sus_mu);
  return rc;
}

/* The bridge's suspend_threads / resume_threads: each thread as suspend_thread / resume_thread
 * would take it, with one SuspendThreadList / ResumeThreadList for those JVM TI stops or lets go
 * (one call in place of n, each of which looks its thread up in HotSpot's list of threads). */
typedef struct bulk_one {
  ja_tstate *e;
  jthread t;
  uint32_t at; /* index in the library's list */
} bulk_one;

static int in_bulk(const uint32_t *threads, uint32_t n, int *errs, int suspend) {
  bulk_one *v = malloc((size_t)n * sizeof *v);
  jthread *ts = malloc((size_t)n * sizeof *ts);
  jvmtiError *rs = malloc((size_t)n * sizeof *rs);
  if (v == NULL || ts == NULL || rs == NULL) {
    free(v), free(ts), free(rs);
    return DDMC_JDWP_OUT_OF_MEMORY;
  }
  uint32_t k = 0;
  for (uint32_t i = 0; i < n; i++) {
    v[i].e = ja_tstate_of(threads[i]);
    v[i].t = ja_thread(threads[i]);
    if (v[i].t == NULL) v[i].e = NULL;
    errs[i] = v[i].e == NULL ? DDMC_JDWP_INVALID_THREAD : 0;
  }
  pthread_mutex_lock(&sus_mu);
  for (uint32_t i = 0; i < n; i++) {
    ja_tstate *e = v[i].e;
    if (e == NULL || !(suspend ? suspend_begin(e) : resume_begin(e))) continue;
    v[k].at = i; /* k <= i: v[i] already read */
    v[k].e = e;
    ts[k++] = v[i].t;
  }
  jvmtiError r = JVMTI_ERROR_NONE;
  if (k > 0)
    r = suspend ? (*ja.ti)->SuspendThreadList(ja.ti, (jint)k, ts, rs) : (*ja.ti)->ResumeThreadList(ja.ti, (jint)k, ts, rs);
  for (uint32_t j = 0; j < k; j++) {
    jvmtiError rj = r != JVMTI_ERROR_NONE ? r : rs[j];
    errs[v[j].at] = suspend ? suspend_end(v[j].e, rj) : resume_end(rj);
  }
  pthread_mutex_unlock(&sus_mu);
  free(v), free(ts), free(rs);
  return 0;
}

static int suspend_threads(void *vd, const uint32_t *threads, uint32_t n, int *errs) {
  return in_bulk(threads, n, errs, 1);
}

static int resume_threads(void *vd, const uint32_t *threads, uint32_t n, int *errs) {
  return in_bulk(threads, n, errs, 0);
}

/* The world for a heap walk: the same two ways of stopping a thread as suspend_thread, recorded
 * in world so that the debugger's suspensions are left as they are. A gated thread may still be
 * inside its callback while the walk runs (it touches no Java heap there unless it runs a method
 * call for the debugger); it runs no bytecode after it. */
static uint32_t *world_ids;
static jint world_n;

int ja_world_stop(JNIEnv *env) {
  jint n = 0;
  jthread *ts = NULL, self = NULL;
  if ((*ja.ti)->GetAllThreads(ja.ti, &n, &ts) != JVMTI_ERROR_NONE) return DDMC_JDWP_INTERNAL;
  (*ja.ti)->GetCurrentThread(ja.ti, &self);
  uint32_t me = self ? (uint32_t)ja_ref(env, self) : 0;
  world_ids = calloc((size_t)n + 1, sizeof *world_ids);
  world_n = 0;
  for (jint i = 0; i < n; i++) {
    uint32_t id = (uint32_t)ja_ref(env, ts[i]);
    ja_tstate *e = ja_tstate_of(id);
    if (e != NULL && id != me && !ja_is_internal(id) && world_ids != NULL) {
      pthread_mutex_lock(&sus_mu);
      if (e->in_callback > 0) {
        e->world = 2;
      } else if (!e->ti_suspended && !e->gated && (*ja.ti)->SuspendThread(ja.ti, ts[i]) == JVMTI_ERROR_NONE) {
        e->world = 1;
      }
      pthread_mutex_unlock(&sus_mu);
      world_ids[world_n++] = id;
    }
    (*env)->DeleteLocalRef(env, ts[i]);
  }
  if (self) (*env)->DeleteLocalRef(env, self);
  (*ja.ti)->Deallocate(ja.ti, (unsigned char *)ts);
  return world_ids != NULL ? 0 : DDMC_JDWP_OUT_OF_MEMORY;
}

void ja_world_resume(void) {
  pthread_mutex_lock(&sus_mu);
  for (jint i = 0; i < world_n; i++) {
    ja_tstate *e = ja_tstate_of(world_ids[i]);
    if (e == NULL) continue;
    if (e->world == 1) (*ja.ti)->ResumeThread(ja.ti, ja_thread(world_ids[i]));
    e->world = 0;
  }
  pthread_cond_broadcast(&sus_cv);
  pthread_mutex_unlock(&sus_mu);
  free(world_ids);
  world_ids = NULL;
  world_n = 0;
}

/* A thread parked inside a post call is inside a JVM TI callback: in native code, which HotSpot's
 * safepoints and collector never wait for. Only noted, for THST: a thread stopped at a breakpoint
 * is suspended to a DDM monitor beside the debugger (ddm.c), not "native". */
static void thread_parking(void *vd, uint32_t thread, int parked) {
  ja_tstate *e = ja_tstate_of(thread);
  if (e != NULL) atomic_store_explicit(&e->parked, parked, memory_order_relaxed);
}

void ja_bridge_suspend(ddmc_vm_bridge *b) {
  if (ja.caps.can_suspend) {
    b->suspend_thread = suspend_thread;
    b->resume_thread = resume_thread;
    b->suspend_threads = suspend_threads;
    b->resume_threads = resume_threads;
  }
  b->thread_parking = thread_parking;
}
