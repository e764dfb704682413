/* SPDX-License-Identifier: Apache-2.0 */
/* Raw monitors: an agent's own re-entrant locks with wait / notify, usable in every phase and
 * from any thread (event callbacks, agent threads, the collector's GC callbacks).
 *
 * A monitor is a mutex, a condition variable, its owner (a pthread_t) and an entry count. The
 * mutex is only held inside these functions: a thread that "owns" the monitor holds no mutex
 * while it runs the agent's code, so a GC callback that enters a monitor an agent thread owns
 * waits for that thread's RawMonitorExit, never for a lock the collector itself holds. Waiting
 * to enter or in RawMonitorWait, a VM thread counts as parked (bridge.thread_parking), so a
 * collection started meanwhile does not wait for it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jvmti/funcs.h"

#define RAWMON_MAGIC 0x52574d4eu /* "RWMN" */

/* A thread in RawMonitorWait, on its own stack: notify marks the first waiter not yet marked,
 * so a notify wakes a thread that was waiting when it was made, never one that came after. */
typedef struct waiter {
  struct waiter *next;
  int notified;
} waiter;

struct ddmc__jv_rawmon {
  uint32_t magic;
  pthread_mutex_t mu;
  pthread_cond_t entry; /* signalled when the monitor becomes free */
  pthread_cond_t cv;    /* wait / notify */
  int owned;
  pthread_t owner;
  jint count;
  waiter *waiting; /* in the order they began to wait */
  char *name;
};

static int is_mine(jrawMonitorID m) { return m->owned && pthread_equal(m->owner, pthread_self()); }

static jvmtiError check(ddmc__jv_jenv *e, jrawMonitorID m) {
  if (e == NULL || e->jv == NULL || atomic_load(&e->disposed)) return JVMTI_ERROR_INVALID_ENVIRONMENT;
  if (m == NULL || m->magic != RAWMON_MAGIC) return JVMTI_ERROR_INVALID_MONITOR;
  return JVMTI_ERROR_NONE;
}

/* An interpreter thread inside an event callback blocks as if parked, so a collection started
 * meanwhile does not wait for it. Agent threads and the collector's own thread never park: the
 * world stop does not wait for them (they run no bytecode). Never called with m->mu held. */
static void parking(ddmc__jv_jenv *e, int on) {
  ddmc__jvmti *jv = e->jv;
  uint32_t self = ddmc__jv_self();
  if (self != 0 && ddmc__jv_may_park() && jv->bridge != NULL && jv->bridge->thread_parking != NULL)
    jv->bridge->thread_parking(jv->bridge_data, self, on);
}

jvmtiError ddmc__jv_jt_CreateRawMonitor(ddmc__jv_jenv *e, const char *name, jrawMonitorID *monitor_ptr) {
  if (e == NULL || e->jv == NULL || atomic_load(&e->disposed)) return JVMTI_ERROR_INVALID_ENVIRONMENT;
  if (name == NULL || monitor_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  struct ddmc__jv_rawmon *m = calloc(1, sizeof(*m));
  if (m == NULL) return JVMTI_ERROR_OUT_OF_MEMORY;
  if ((m->name = ddmc__jv_strdup(name)) == NULL) {
    free(m);
    return JVMTI_ERROR_OUT_OF_MEMORY;
  }
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  if (pthread_mutex_init(&m->mu, NULL) != 0 || pthread_cond_init(&m->entry, NULL) != 0 ||
      pthread_cond_init(&m->cv, &ca) != 0) {
    pthread_condattr_destroy(&ca);
    free(m->name);
    free(m);
    return JVMTI_ERROR_OUT_OF_MEMORY;
  }
  pthread_condattr_destroy(&ca);
  m->magic = RAWMON_MAGIC;
  *monitor_ptr = m;
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_DestroyRawMonitor(ddmc__jv_jenv *e, jrawMonitorID m) {
  jvmtiError rc = check(e, m);
  if (rc) return rc;
  ddmc__lock(&m->mu);
  /* Destroying a monitor another thread owns is NOT_MONITOR_OWNER; the owner may destroy it. */
  if (m->owned && !is_mine(m)) {
    ddmc__unlock(&m->mu);
    return JVMTI_ERROR_NOT_MONITOR_OWNER;
  }
  if (m->waiting != NULL) {
    ddmc__unlock(&m->mu);
    return JVMTI_ERROR_NOT_MONITOR_OWNER;
  }
  m->magic = 0;
  ddmc__unlock(&m->mu);
  pthread_cond_destroy(&m->cv);
  pthread_cond_destroy(&m->entry);
  pthread_mutex_destroy(&m->mu);
  free(m->name);
  free(m);
  return JVMTI_ERROR_NONE;
}

/* Takes ownership for the calling thread, m->mu held on entry and on return. A thread never
 * leaves the parked state while it owns the monitor: leaving may wait for a collection, whose
 * GC callback may want this very monitor. */
static void acquire(ddmc__jv_jenv *e, jrawMonitorID m) {
  while (m->owned) {
    ddmc__unlock(&m->mu);
    parking(e, 1);
    ddmc__lock(&m->mu);
    while (m->owned) pthread_cond_wait(&m->entry, &m->mu);
    ddmc__unlock(&m->mu);
    parking(e, 0);
    ddmc__lock(&m->mu);
  }
  m->owned = 1;
  m->owner = pthread_self();
}

jvmtiError ddmc__jv_jt_RawMonitorEnter(ddmc__jv_jenv *e, jrawMonitorID m) {
  jvmtiError rc = check(e, m);
  if (rc) return rc;
  ddmc__lock(&m->mu);
  if (is_mine(m)) {
    m->count++;
  } else {
    acquire(e, m);
    m->count = 1;
  }
  ddmc__unlock(&m->mu);
  return JVMTI_ERROR_NONE;
}

/* Exit, Wait, Notify and NotifyAll: the monitor's mutex held on success, when the caller owns it. */
static jvmtiError lock_owned(ddmc__jv_jenv *e, jrawMonitorID m) {
  jvmtiError rc = check(e, m);
  if (rc) return rc;
  ddmc__lock(&m->mu);
  if (!is_mine(m)) {
    ddmc__unlock(&m->mu);
    return JVMTI_ERROR_NOT_MONITOR_OWNER;
  }
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_RawMonitorExit(ddmc__jv_jenv *e, jrawMonitorID m) {
  jvmtiError rc = lock_owned(e, m);
  if (rc) return rc;
  if (--m->count == 0) {
    m->owned = 0;
    pthread_cond_signal(&m->entry);
  }
  ddmc__unlock(&m->mu);
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_RawMonitorWait(ddmc__jv_jenv *e, jrawMonitorID m, jlong millis) {
  jvmtiError rc = lock_owned(e, m);
  if (rc) return rc;
  /* Give the monitor up whole, wait for a notify (or the time), take it back at the same count. */
  jint count = m->count;
  m->owned = 0;
  m->count = 0;
  pthread_cond_signal(&m->entry);
  struct timespec until;
  if (millis > 0) {
    clock_gettime(CLOCK_MONOTONIC, &until);
    jlong s = millis / 1000;
    until.tv_sec += s > 1000000000 ? 1000000000 : (time_t)s;
    until.tv_nsec += (long)(millis % 1000) * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
      until.tv_sec++;
      until.tv_nsec -= 1000000000L;
    }
  }
  waiter self = {NULL, 0}, **at = &m->waiting;
  while (*at != NULL) at = &(*at)->next;
  *at = &self;
  ddmc__unlock(&m->mu);
  parking(e, 1);
  ddmc__lock(&m->mu);
  while (!self.notified) {
    int w = millis > 0 ? pthread_cond_timedwait(&m->cv, &m->mu, &until) : pthread_cond_wait(&m->cv, &m->mu);
    if (w == ETIMEDOUT) break;
  }
  for (at = &m->waiting; *at != &self; at = &(*at)->next) {
  }
  *at = self.next;
  ddmc__unlock(&m->mu);
  parking(e, 0); /* before owning it again (see acquire) */
  ddmc__lock(&m->mu);
  acquire(e, m);
  m->count = count;
  ddmc__unlock(&m->mu);
  return JVMTI_ERROR_NONE;
}

static jvmtiError notify(ddmc__jv_jenv *e, jrawMonitorID m, int all) {
  jvmtiError rc = lock_owned(e, m);
  if (rc) return rc;
  for (waiter *w = m->waiting; w != NULL; w = w->next) {
    if (w->notified) continue;
    w->notified = 1;
    if (!all) break;
  }
  pthread_cond_broadcast(&m->cv);
  ddmc__unlock(&m->mu);
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_RawMonitorNotify(ddmc__jv_jenv *e, jrawMonitorID m) { return notify(e, m, 0); }

jvmtiError ddmc__jv_jt_RawMonitorNotifyAll(ddmc__jv_jenv *e, jrawMonitorID m) { return notify(e, m, 1); }
