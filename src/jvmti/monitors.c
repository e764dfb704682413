/* SPDX-License-Identifier: Apache-2.0 */
/* Object monitors seen from an agent: GetOwnedMonitorInfo, GetOwnedMonitorStackDepthInfo,
 * GetCurrentContendedMonitor, GetObjectMonitorUsage, over the bridge's owned_monitors,
 * contended_monitor and monitor_info. Another thread's monitors are read with the world stopped
 * (with_world_stopped, when the VM has it), so the answer is one consistent snapshot. */
#include <stdlib.h>
#include <string.h>

#include "jvmti/funcs.h"

#define DDMC__MAX_MONITORS 4096

typedef struct owned {
  ddmc__jvmti *jv;
  uint32_t thread;
  ddmc_ref obj[DDMC__MAX_MONITORS];
  int32_t depth[DDMC__MAX_MONITORS];
  uint32_t n;
  int rc;
} owned;

static int owned_visit(void *arg, ddmc_ref obj, int32_t depth) {
  owned *o = arg;
  if (o->n == DDMC__MAX_MONITORS) return 1;
  o->obj[o->n] = obj;
  o->depth[o->n++] = depth;
  return 0;
}

static int read_owned(void *arg) {
  owned *o = arg;
  o->rc = o->jv->bridge->owned_monitors(o->jv->bridge_data, o->thread, owned_visit, o);
  return 0;
}

/* Runs fn(arg) on the thread itself when it asks about itself, else with the world stopped. */
static void stopped(ddmc__jvmti *jv, uint32_t thread, ddmc_stopped_fn fn, void *arg) {
  if (thread == ddmc__jv_self() || jv->bridge->with_world_stopped == NULL)
    fn(arg);
  else
    jv->bridge->with_world_stopped(jv->bridge_data, fn, arg);
}

static jvmtiError thread_rc(int jdwp) {
  if (jdwp == DDMC_JDWP_INVALID_THREAD || jdwp == DDMC_JDWP_THREAD_NOT_ALIVE) return JVMTI_ERROR_THREAD_NOT_ALIVE;
  return ddmc__jv_err(jdwp);
}

static jvmtiError get_owned(ddmc__jv_jenv *e, jthread thread, owned **out) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_LIVE);
  if (rc) return rc;
  ddmc__jvmti *jv = e->jv;
  if (jv->bridge == NULL || jv->bridge->owned_monitors == NULL) return JVMTI_ERROR_NOT_AVAILABLE;
  owned *o = calloc(1, sizeof(*o));
  if (o == NULL) return JVMTI_ERROR_OUT_OF_MEMORY;
  o->jv = jv;
  if ((rc = ddmc__jv_thread_of(jv, thread, &o->thread)) != 0) {
    free(o);
    return rc;
  }
  stopped(jv, o->thread, read_owned, o);
  if (o->rc != 0) {
    rc = thread_rc(o->rc);
    free(o);
    return rc;
  }
  *out = o;
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_GetOwnedMonitorInfo(ddmc__jv_jenv *e, jthread thread, jint *owned_monitor_count_ptr,
                                           jobject **owned_monitors_ptr) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_LIVE);
  if (rc) return rc;
  if (!ddmc__jv_jenv_has_cap(e, DDMC_CAP_can_get_owned_monitor_info)) return JVMTI_ERROR_MUST_POSSESS_CAPABILITY;
  if (owned_monitor_count_ptr == NULL || owned_monitors_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  owned *o;
  if ((rc = get_owned(e, thread, &o)) != 0) return rc;
  jobject *v = ddmc__jv_alloc(sizeof(jobject) * (o->n ? o->n : 1));
  jint k = 0;
  for (uint32_t i = 0; v != NULL && i < o->n; i++) {
    jobject h = ddmc__jv_ref_local(e->jv, o->obj[i], 0, 0);
    if (h != NULL) v[k++] = h;
  }
  free(o);
  if (v == NULL) return JVMTI_ERROR_OUT_OF_MEMORY;
  *owned_monitor_count_ptr = k;
  *owned_monitors_ptr = v;
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_GetOwnedMonitorStackDepthInfo(ddmc__jv_jenv *e, jthread thread, jint *monitor_info_count_ptr,
                                                     ddmc__jv_jmonitor_depth **monitor_info_ptr) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_LIVE);
  if (rc) return rc;
  if (!ddmc__jv_jenv_has_cap(e, DDMC_CAP_can_get_owned_monitor_stack_depth_info))
    return JVMTI_ERROR_MUST_POSSESS_CAPABILITY;
  if (monitor_info_count_ptr == NULL || monitor_info_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  owned *o;
  if ((rc = get_owned(e, thread, &o)) != 0) return rc;
  ddmc__jv_jmonitor_depth *v = ddmc__jv_alloc(sizeof(*v) * (o->n ? o->n : 1));
  jint k = 0;
  for (uint32_t i = 0; v != NULL && i < o->n; i++) {
    jobject h = ddmc__jv_ref_local(e->jv, o->obj[i], 0, 0);
    if (h != NULL) v[k++] = (ddmc__jv_jmonitor_depth){h, o->depth[i]};
  }
  free(o);
  if (v == NULL) return JVMTI_ERROR_OUT_OF_MEMORY;
  *monitor_info_count_ptr = k;
  *monitor_info_ptr = v;
  return JVMTI_ERROR_NONE;
}

typedef struct contended {
  ddmc__jvmti *jv;
  uint32_t thread;
  ddmc_ref obj;
  int rc;
} contended;

static int read_contended(void *arg) {
  contended *c = arg;
  c->rc = c->jv->bridge->contended_monitor(c->jv->bridge_data, c->thread, &c->obj);
  return 0;
}

jvmtiError ddmc__jv_jt_GetCurrentContendedMonitor(ddmc__jv_jenv *e, jthread thread, jobject *monitor_ptr) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_LIVE);
  if (rc) return rc;
  if (!ddmc__jv_jenv_has_cap(e, DDMC_CAP_can_get_current_contended_monitor)) return JVMTI_ERROR_MUST_POSSESS_CAPABILITY;
  if (monitor_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  ddmc__jvmti *jv = e->jv;
  if (jv->bridge == NULL || jv->bridge->contended_monitor == NULL) return JVMTI_ERROR_NOT_AVAILABLE;
  contended c = {jv, 0, 0, 0};
  if ((rc = ddmc__jv_thread_of(jv, thread, &c.thread)) != 0) return rc;
  stopped(jv, c.thread, read_contended, &c);
  if (c.rc != 0) return thread_rc(c.rc);
  *monitor_ptr = c.obj ? ddmc__jv_ref_local(jv, c.obj, 0, 0) : NULL;
  return JVMTI_ERROR_NONE;
}

typedef struct usage {
  ddmc__jvmti *jv;
  ddmc_ref obj;
  uint32_t owner;
  int32_t count;
  uint32_t waiters[DDMC__MAX_MONITORS];
  uint32_t n;
  int rc;
} usage;

static int usage_visit(void *arg, uint32_t thread) {
  usage *u = arg;
  if (u->n == DDMC__MAX_MONITORS) return 1;
  u->waiters[u->n++] = thread;
  return 0;
}

static int read_usage(void *arg) {
  usage *u = arg;
  u->rc = u->jv->bridge->monitor_info(u->jv->bridge_data, u->obj, &u->owner, &u->count, usage_visit, u);
  return 0;
}

jvmtiError ddmc__jv_jt_GetObjectMonitorUsage(ddmc__jv_jenv *e, jobject object, ddmc__jv_jmonitor_usage *info_ptr) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_LIVE);
  if (rc) return rc;
  if (!ddmc__jv_jenv_has_cap(e, DDMC_CAP_can_get_monitor_info)) return JVMTI_ERROR_MUST_POSSESS_CAPABILITY;
  if (info_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  ddmc__jvmti *jv = e->jv;
  if (jv->bridge == NULL || jv->bridge->monitor_info == NULL) return JVMTI_ERROR_NOT_AVAILABLE;
  ddmc__jv_cell c;
  if (object == NULL || ddmc__jv_ref_get(jv, object, &c) != 0 || c.ref == 0) return JVMTI_ERROR_INVALID_OBJECT;
  usage *u = calloc(1, sizeof(*u));
  if (u == NULL) return JVMTI_ERROR_OUT_OF_MEMORY;
  u->jv = jv;
  u->obj = c.ref;
  stopped(jv, 0, read_usage, u); /* 0: never the caller, always stopped */
  if (u->rc != 0) {
    rc = u->rc == DDMC_JDWP_INVALID_OBJECT ? JVMTI_ERROR_INVALID_OBJECT : ddmc__jv_err(u->rc);
    free(u);
    return rc;
  }
  /* Waiting to enter (blocked) and waiting in wait() come as one list: the thread's status tells
   * them apart. */
  jthread *w = ddmc__jv_alloc(sizeof(jthread) * (u->n ? u->n : 1));
  jthread *nw = ddmc__jv_alloc(sizeof(jthread) * (u->n ? u->n : 1));
  jint nwait = 0, nnotify = 0;
  for (uint32_t i = 0; w != NULL && nw != NULL && i < u->n; i++) {
    ddmc_thread_detail ti;
    memset(&ti, 0, sizeof(ti));
    if (jv->bridge->thread_info == NULL || jv->bridge->thread_info(jv->bridge_data, u->waiters[i], &ti) != 0) continue;
    jthread t = ddmc__jv_thread_local(jv, u->waiters[i]);
    if (t == NULL) continue;
    if (ti.status == DDMC_TS_WAIT || ti.status == DDMC_TS_SLEEPING)
      nw[nnotify++] = t;
    else
      w[nwait++] = t;
  }
  if (w == NULL || nw == NULL) {
    free(w);
    free(nw);
    free(u);
    return JVMTI_ERROR_OUT_OF_MEMORY;
  }
  memset(info_ptr, 0, sizeof(*info_ptr));
  info_ptr->owner = u->owner ? ddmc__jv_thread_local(jv, u->owner) : NULL;
  info_ptr->entry_count = u->owner ? u->count : 0;
  info_ptr->waiter_count = nwait;
  info_ptr->waiters = w;
  info_ptr->notify_waiter_count = nnotify;
  info_ptr->notify_waiters = nw;
  free(u);
  return JVMTI_ERROR_NONE;
}
