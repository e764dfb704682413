/* SPDX-License-Identifier: Apache-2.0 */
/* Threads, groups, frames, locals and monitors from JVM TI: the bridge's thread_info,
 * for_each_group, main_thread, frame_*, get_local / set_local and the monitor ops. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ja.h"

jthread ja_thread(uint32_t id) { return (jthread)ja_kept_obj(id); }

static void ti_free(void *p) {
  if (p) (*ja.ti)->Deallocate(ja.ti, (unsigned char *)p);
}

static int status_of(jint st) {
  if (!(st & JVMTI_THREAD_STATE_ALIVE)) return DDMC_TS_ZOMBIE;
  if (st & JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER) return DDMC_TS_MONITOR;
  if (st & JVMTI_THREAD_STATE_SLEEPING) return DDMC_TS_SLEEPING;
  if (st & (JVMTI_THREAD_STATE_IN_OBJECT_WAIT | JVMTI_THREAD_STATE_PARKED)) return DDMC_TS_WAIT;
  if (st & JVMTI_THREAD_STATE_WAITING_WITH_TIMEOUT) return DDMC_TS_SLEEPING;
  if (st & JVMTI_THREAD_STATE_WAITING) return DDMC_TS_WAIT;
  return DDMC_TS_RUNNING;
}

static int thread_info(void *vd, uint32_t id, ddmc_thread_detail *out) {
  /* The name is borrowed until the op returns: a per-thread copy outlives JVM TI's. */
  static _Thread_local char name[256];
  ja_tstate *e = ja_tstate_of(id);
  jthread t = ja_thread(id); /* threads are kept entries: a global reference, never freed */
  if (e == NULL || t == NULL) return DDMC_JDWP_INVALID_THREAD;
  JNIEnv *env = ja_enter();
  if (env == NULL) return DDMC_JDWP_VM_DEAD;
  int rc = DDMC_JDWP_INVALID_THREAD;
  jvmtiThreadInfo ti;
  memset(&ti, 0, sizeof ti);
  jclass tc = ja_known(env, JA_KNOWN_THREAD);
  if (tc != NULL && (*env)->IsInstanceOf(env, t, tc) &&
      (*ja.ti)->GetThreadInfo(ja.ti, t, &ti) == JVMTI_ERROR_NONE) {
    jint st = 0;
    (*ja.ti)->GetThreadState(ja.ti, t, &st);
    snprintf(name, sizeof name, "%s", ti.name ? ti.name : "");
    out->object = id;
    out->group = ja_ref(env, ti.thread_group);
    out->name = name;
    out->status = status_of(st);
    out->internal = ja_is_internal(id);
    ti_free(ti.name);
    rc = out->group == 0 && ti.thread_group != NULL ? DDMC_JDWP_OUT_OF_MEMORY : 0;
  }
  (*env)->ExceptionClear(env);
  ja_leave(env);
  return rc;
}

/* AllThreads and suspending every thread need only the thread objects: one GetAllThreads, their
 * names (ja_ref_threads) and the table's internal marks, where thread_info per thread would cost
 * HotSpot a walk of its list of threads for each of GetThreadInfo and GetThreadState (n threads:
 * n^2). */
static int for_each_debuggee_thread(void *vd, ddmc_thread_object_visit_fn fn, void *arg) {
  JNIEnv *env = ja_enter();
  if (env == NULL) return DDMC_JDWP_VM_DEAD;
  jint n = 0;
  jthread *ts = NULL;
  jvmtiError err = (*ja.ti)->GetAllThreads(ja.ti, &n, &ts);
  if (err != JVMTI_ERROR_NONE) {
    ja_leave(env);
    return ja_err(err);
  }
  uint32_t *ids = malloc(((size_t)n + 1) * sizeof *ids);
  if (ids != NULL) ja_ref_threads(env, ts, n, ids);
  for (jint i = 0; i < n && ids != NULL; i++) {
    uint32_t id = ids[i];
    if (ja_tstate_of(id) != NULL && !ja_is_internal(id) && fn(arg, id, id) != 0) break;
  }
  int rc = ids != NULL ? 0 : DDMC_JDWP_OUT_OF_MEMORY;
  for (jint i = 0; i < n; i++) (*env)->DeleteLocalRef(env, ts[i]);
  free(ids);
  ti_free(ts);
  ja_leave(env);
  return rc;
}

static int visit_groups(JNIEnv *env, jint n, jthreadGroup *gs, ddmc_ref parent, ddmc_group_visit_fn fn, void *arg,
                        int depth) {
  int stop = 0;
  for (jint i = 0; i < n && !stop; i++) {
    jvmtiThreadGroupInfo gi;
    memset(&gi, 0, sizeof gi);
    if ((*ja.ti)->GetThreadGroupInfo(ja.ti, gs[i], &gi) != JVMTI_ERROR_NONE) continue;
    ddmc_ref g = ja_ref(env, gs[i]);
    stop = fn(arg, g, parent, gi.name ? gi.name : "");
    ti_free(gi.name);
    if (gi.parent) (*env)->DeleteLocalRef(env, gi.parent);
    jint nt = 0, ng = 0;
    jthread *ts = NULL;
    jthreadGroup *kids = NULL;
    /* A bound on nesting: groups form a tree, but a malicious program can make it deep. */
    if (!stop && depth < 64 && (*ja.ti)->GetThreadGroupChildren(ja.ti, gs[i], &nt, &ts, &ng, &kids) == JVMTI_ERROR_NONE) {
      for (jint k = 0; k < nt; k++) (*env)->DeleteLocalRef(env, ts[k]);
      stop = visit_groups(env, ng, kids, g, fn, arg, depth + 1);
      for (jint k = 0; k < ng; k++) (*env)->DeleteLocalRef(env, kids[k]);
      ti_free(ts);
      ti_free(kids);
    }
  }
  return stop;
}

static int for_each_group(void *vd, ddmc_group_visit_fn fn, void *arg) {
  JNIEnv *env = ja_enter();
  if (env == NULL) return DDMC_JDWP_VM_DEAD;
  jint n = 0;
  jthreadGroup *gs = NULL;
  jvmtiError e = (*ja.ti)->GetTopThreadGroups(ja.ti, &n, &gs);
  if (e == JVMTI_ERROR_NONE) {
    visit_groups(env, n, gs, 0, fn, arg, 0);
    ti_free(gs);
  }
  ja_leave(env);
  return ja_err(e);
}

static int main_thread(void *vd, uint32_t *out) {
  if (ja.main_thread == 0) return DDMC_JDWP_INVALID_THREAD;
  *out = ja.main_thread;
  return 0;
}

/* Frames a PopFrames popped that JVM TI still shows until the thread runs (mutate.c). */
static int32_t hidden(uint32_t thread) {
  ja_tstate *e = ja_tstate_of(thread);
  return e ? atomic_load(&e->hidden) : 0;
}

static int frame_count(void *vd, uint32_t thread, int32_t *out) {
  jthread t = ja_thread(thread);
  if (t == NULL) return DDMC_JDWP_INVALID_THREAD;
  jint n = 0;
  jvmtiError e = (*ja.ti)->GetFrameCount(ja.ti, t, &n);
  n -= hidden(thread);
  *out = n > 0 ? n : 0;
  return ja_err(e);
}

static int frame_location(void *vd, uint32_t thread, int32_t depth, ddmc_location *out) {
  jthread t = ja_thread(thread);
  if (t == NULL) return DDMC_JDWP_INVALID_THREAD;
  depth += hidden(thread);
  jmethodID m = NULL;
  jlocation l = -1;
  jvmtiError e = (*ja.ti)->GetFrameLocation(ja.ti, t, depth, &m, &l);
  if (e != JVMTI_ERROR_NONE) return e == JVMTI_ERROR_NO_MORE_FRAMES ? DDMC_JDWP_INVALID_FRAMEID : ja_err(e);
  JNIEnv *env = ja_enter();
  if (env == NULL) return DDMC_JDWP_VM_DEAD;
  int rc = ja_location(env, m, l, out);
  ja_leave(env);
  return rc;
}

/* One GetStackTrace for n frames: GetFrameLocation walks from the top for each depth. n is the
 * library's batch (cmd_thread.c: at most 65536), so the frames' buffer is bounded. Frames a pop
 * hides are skipped as frame_location skips them. */
static int frame_locations(void *vd, uint32_t thread, int32_t first, int32_t n, ddmc_location *out) {
  jthread t = ja_thread(thread);
  if (t == NULL) return DDMC_JDWP_INVALID_THREAD;
  if (n <= 0 || n > 65536 || first < 0) return DDMC_JDWP_ILLEGAL_ARGUMENT;
  jvmtiFrameInfo *fr = malloc((size_t)n * sizeof *fr);
  if (fr == NULL) return DDMC_JDWP_OUT_OF_MEMORY;
  jint got = 0;
  jvmtiError e = (*ja.ti)->GetStackTrace(ja.ti, t, first + hidden(thread), n, fr, &got);
  int rc = e == JVMTI_ERROR_ILLEGAL_ARGUMENT || (e == JVMTI_ERROR_NONE && got < n) ? DDMC_JDWP_INVALID_FRAMEID : ja_err(e);
  JNIEnv *env = rc == 0 ? ja_enter() : NULL;
  if (rc == 0 && env == NULL) rc = DDMC_JDWP_VM_DEAD;
  for (jint i = 0; i < got && rc == 0; i++) rc = ja_location(env, fr[i].method, fr[i].location, &out[i]);
  if (env != NULL) ja_leave(env);
  free(fr);
  return rc;
}

static int frame_this(void *vd, uint32_t thread, int32_t depth, ddmc_ref *out) {
  jthread t = ja_thread(thread);
  if (t == NULL) return DDMC_JDWP_INVALID_THREAD;
  depth += hidden(thread);
  jmethodID m = NULL;
  jlocation l = -1;
  jint mods = 0;
  jvmtiError e = (*ja.ti)->GetFrameLocation(ja.ti, t, depth, &m, &l);
  if (e != JVMTI_ERROR_NONE) return e == JVMTI_ERROR_NO_MORE_FRAMES ? DDMC_JDWP_INVALID_FRAMEID : ja_err(e);
  (*ja.ti)->GetMethodModifiers(ja.ti, m, &mods);
  *out = 0;
  if (mods & (DDMC_ACC_STATIC | DDMC_ACC_NATIVE)) return 0;
  JNIEnv *env = ja_enter();
  if (env == NULL) return DDMC_JDWP_VM_DEAD;
  jobject o = NULL;
  e = (*ja.ti)->GetLocalInstance(ja.ti, t, depth, &o);
  if (e == JVMTI_ERROR_NONE) *out = ja_ref(env, o);
  ja_leave(env);
  return e == JVMTI_ERROR_OPAQUE_FRAME ? 0 : ja_err(e);
}

static int get_local(void *vd, uint32_t thread, int32_t depth, int32_t slot, char tag, ddmc_value *out) {
  jthread t = ja_thread(thread);
  if (t == NULL) return DDMC_JDWP_INVALID_THREAD;
  depth += hidden(thread);
  JNIEnv *env = ja_enter();
  if (env == NULL) return DDMC_JDWP_VM_DEAD;
  jvmtiError e;
  jvalue v;
  memset(&v, 0, sizeof v);
  char jt = tag;
  switch (tag) {
  case 'Z': case 'B': case 'C': case 'S': case 'I': e = (*ja.ti)->GetLocalInt(ja.ti, t, depth, slot, &v.i);
    /* GetLocalInt reads the slot as an int; narrow it as the type says */
    if (tag == 'Z') v.z = (jboolean)(v.i != 0);
    else if (tag == 'B') v.b = (jbyte)v.i;
    else if (tag == 'C') v.c = (jchar)v.i;
    else if (tag == 'S') v.s = (jshort)v.i;
    break;
  case 'J': e = (*ja.ti)->GetLocalLong(ja.ti, t, depth, slot, &v.j); break;
  case 'F': e = (*ja.ti)->GetLocalFloat(ja.ti, t, depth, slot, &v.f); break;
  case 'D': e = (*ja.ti)->GetLocalDouble(ja.ti, t, depth, slot, &v.d); break;
  default:
    jt = 'L';
    e = (*ja.ti)->GetLocalObject(ja.ti, t, depth, slot, &v.l);
    break;
  }
  int rc = e == JVMTI_ERROR_NONE ? ja_value_in(env, jt, v, out) : ja_err(e);
  ja_leave(env);
  return rc;
}

static int set_local(void *vd, uint32_t thread, int32_t depth, int32_t slot, const ddmc_value *val) {
  jthread t = ja_thread(thread);
  if (t == NULL) return DDMC_JDWP_INVALID_THREAD;
  depth += hidden(thread);
  char jt = val->tag;
  if (jt == 's' || jt == '[' || jt == 't' || jt == 'g' || jt == 'l' || jt == 'c') jt = 'L';
  jvalue v;
  JNIEnv *env = ja_enter();
  if (env == NULL) return DDMC_JDWP_VM_DEAD;
  int rc = ja_value_out(jt, val, &v);
  if (rc) {
    ja_leave(env);
    return rc;
  }
  jvmtiError e;
  switch (jt) {
  case 'Z': e = (*ja.ti)->SetLocalInt(ja.ti, t, depth, slot, v.z); break;
  case 'B': e = (*ja.ti)->SetLocalInt(ja.ti, t, depth, slot, v.b); break;
  case 'C': e = (*ja.ti)->SetLocalInt(ja.ti, t, depth, slot, v.c); break;
  case 'S': e = (*ja.ti)->SetLocalInt(ja.ti, t, depth, slot, v.s); break;
  case 'I': e = (*ja.ti)->SetLocalInt(ja.ti, t, depth, slot, v.i); break;
  case 'J': e = (*ja.ti)->SetLocalLong(ja.ti, t, depth, slot, v.j); break;
  case 'F': e = (*ja.ti)->SetLocalFloat(ja.ti, t, depth, slot, v.f); break;
  case 'D': e = (*ja.ti)->SetLocalDouble(ja.ti, t, depth, slot, v.d); break;
  default: e = (*ja.ti)->SetLocalObject(ja.ti, t, depth, slot, v.l); break;
  }
  ja_leave(env);
  return ja_err(e);
}

/* ---- monitors */

static int monitor_info(void *vd, ddmc_ref obj, uint32_t *owner, int32_t *entry_count, ddmc_thread_id_visit_fn waiter,
                        void *arg) {
  JNIEnv *env = ja_enter();
  if (env == NULL) return DDMC_JDWP_VM_DEAD;
  jobject o = ja_obj(obj);
  if (o == NULL) {
    ja_leave(env);
    return DDMC_JDWP_INVALID_OBJECT;
  }
  jvmtiMonitorUsage u;
  memset(&u, 0, sizeof u);
  jvmtiError e = (*ja.ti)->GetObjectMonitorUsage(ja.ti, o, &u);
  if (e == JVMTI_ERROR_NONE) {
    *owner = (uint32_t)ja_ref(env, u.owner);
    *entry_count = u.entry_count;
    int stop = 0;
    for (jint i = 0; i < u.waiter_count && !stop; i++) stop = waiter(arg, (uint32_t)ja_ref(env, u.waiters[i]));
    for (jint i = 0; i < u.notify_waiter_count && !stop; i++)
      stop = waiter(arg, (uint32_t)ja_ref(env, u.notify_waiters[i]));
    ti_free(u.waiters);
    ti_free(u.notify_waiters);
  }
  ja_leave(env);
  return ja_err(e);
}

static int owned_monitors(void *vd, uint32_t thread, ddmc_monitor_visit_fn fn, void *arg) {
  jthread t = ja_thread(thread);
  if (t == NULL) return DDMC_JDWP_INVALID_THREAD;
  JNIEnv *env = ja_enter();
  if (env == NULL) return DDMC_JDWP_VM_DEAD;
  jint n = 0;
  jvmtiMonitorStackDepthInfo *info = NULL;
  jvmtiError e = (*ja.ti)->GetOwnedMonitorStackDepthInfo(ja.ti, t, &n, &info);
  if (e == JVMTI_ERROR_NONE) {
    int stop = 0;
    for (jint i = 0; i < n && !stop; i++) stop = fn(arg, ja_ref(env, info[i].monitor), info[i].stack_depth);
    ti_free(info);
  }
  ja_leave(env);
  return ja_err(e);
}

static int contended_monitor(void *vd, uint32_t thread, ddmc_ref *out) {
  jthread t = ja_thread(thread);
  if (t == NULL) return DDMC_JDWP_INVALID_THREAD;
  JNIEnv *env = ja_enter();
  if (env == NULL) return DDMC_JDWP_VM_DEAD;
  jobject o = NULL;
  jvmtiError e = (*ja.ti)->GetCurrentContendedMonitor(ja.ti, t, &o);
  *out = e == JVMTI_ERROR_NONE ? ja_ref(env, o) : 0;
  ja_leave(env);
  return ja_err(e);
}

void ja_bridge_threads(ddmc_vm_bridge *b) {
  b->thread_info = thread_info;
  b->for_each_debuggee_thread = for_each_debuggee_thread;
  b->for_each_group = for_each_group;
  b->main_thread = main_thread;
  b->frame_count = frame_count;
  b->frame_location = frame_location;
  b->frame_locations = frame_locations;
  b->frame_this = frame_this;
  if (ja.caps.can_access_local_variables) {
    b->get_local = get_local;
    b->set_local = set_local;
  }
  if (ja.caps.can_get_monitor_info) b->monitor_info = monitor_info;
  if (ja.caps.can_get_owned_monitor_stack_depth_info) b->owned_monitors = owned_monitors;
  if (ja.caps.can_get_current_contended_monitor) b->contended_monitor = contended_monitor;
}
