/* SPDX-License-Identifier: Apache-2.0 */
/* Event delivery to the agents' environments. The VM reports each event once (ddmc_post_*,
 * src/hub); the hub hands it to its clients in rank order, JVM TI (client.c, which calls in
 * here) before the JDWP debugger, which may park the thread: one event path out of the VM,
 * several clients of it.
 *
 * Cost when no agent wants the event: one atomic load (the state pointer, NULL without agents)
 * or two (the per-event count). Otherwise each environment that enabled the event, for every
 * thread or for this one, gets its callback on the reporting thread, with:
 *   - the thread's JNIEnv, and local handles (jthread, jclass, objects) that go when the
 *     callback returns;
 *   - ddmc__jv_self() naming the VM thread, so GetCurrentThread and NULL-thread arguments work;
 *   - "may park" set for threads that run bytecode, so a raw monitor they wait for does not
 *     hold up the VM's collector.
 * Differences from JDWP handled here: MethodExit is also sent for a frame an exception pops
 * (was_popped_by_exception = true), which JDWP does not report; ClassLoad goes with
 * ClassPrepare (a VM that prepares a class where it loads it). */
#include <string.h>

#include "jvmti/funcs.h"

typedef void (*cb_env)(ddmc__jv_jenv *, ddmc__jv_jnienv *);
typedef void (*cb_env_thread)(ddmc__jv_jenv *, ddmc__jv_jnienv *, jthread);
typedef void (*cb_env_thread_class)(ddmc__jv_jenv *, ddmc__jv_jnienv *, jthread, jclass);
typedef void (*cb_method)(ddmc__jv_jenv *, ddmc__jv_jnienv *, jthread, jmethodID);
typedef void (*cb_method_exit)(ddmc__jv_jenv *, ddmc__jv_jnienv *, jthread, jmethodID, jboolean, jvalue);
typedef void (*cb_location)(ddmc__jv_jenv *, ddmc__jv_jnienv *, jthread, jmethodID, jlocation);
typedef void (*cb_exception)(ddmc__jv_jenv *, ddmc__jv_jnienv *, jthread, jmethodID, jlocation, jobject, jmethodID,
                             jlocation);
typedef void (*cb_exception_catch)(ddmc__jv_jenv *, ddmc__jv_jnienv *, jthread, jmethodID, jlocation, jobject);
typedef void (*cb_field_access)(ddmc__jv_jenv *, ddmc__jv_jnienv *, jthread, jmethodID, jlocation, jclass, jobject,
                                jfieldID);
typedef void (*cb_field_modification)(ddmc__jv_jenv *, ddmc__jv_jnienv *, jthread, jmethodID, jlocation, jclass,
                                      jobject, jfieldID, char, jvalue);

static inline int wanted(ddmc__jvmti *jv, int ev) {
  return jv != NULL && atomic_load_explicit(&jv->want[ev - DDMC__JEV_FIRST], memory_order_relaxed) > 0;
}

/* The callback of e for ev when e has it enabled on thread, else NULL. */
static ddmc__jv_fnptr callback(ddmc__jv_jenv *e, int ev, uint32_t thread) {
  if (atomic_load_explicit(&e->disposed, memory_order_relaxed)) return NULL;
  ddmc__jv_fnptr f = atomic_load_explicit(&e->cb[ev - DDMC__JEV_FIRST], memory_order_acquire);
  return f != NULL && ddmc__jv_jenv_enabled(e, ev, thread) ? f : NULL;
}

/* Around each event: the thread's identity, its local frame, and back. */
typedef struct scope {
  uint32_t self;
  int may_park;
  uint32_t mark;
} scope;

static void scope_enter(scope *s, uint32_t thread, int may_park) {
  s->self = ddmc__jv_self();
  s->may_park = ddmc__jv_may_park();
  s->mark = ddmc__jv_ref_frame_push();
  if (thread != 0) ddmc__jv_set_self(thread);
  ddmc__jv_set_may_park(may_park);
}

static void scope_leave(ddmc__jvmti *jv, scope *s) {
  ddmc__jv_ref_frame_pop(jv, s->mark);
  ddmc__jv_set_self(s->self);
  ddmc__jv_set_may_park(s->may_park);
}

static ddmc__jv_jenv *first_env(ddmc__jvmti *jv) { return atomic_load_explicit(&jv->envs, memory_order_acquire); }

/* ---- VM lifecycle (agents.c) */

void ddmc__jv_hub_vm_start(ddmc__jvmti *jv) {
  if (!wanted(jv, JVMTI_EVENT_VM_START)) return;
  scope s;
  scope_enter(&s, 0, 0);
  ddmc__jv_jnienv *jni = ddmc__jv_jni_env(jv);
  for (ddmc__jv_jenv *e = first_env(jv); e; e = e->next) {
    ddmc__jv_fnptr f = callback(e, JVMTI_EVENT_VM_START, 0);
    if (f) ((cb_env)f)(e, jni);
  }
  scope_leave(jv, &s);
}

void ddmc__jv_hub_vm_init(ddmc__jvmti *jv, uint32_t thread) {
  scope s;
  scope_enter(&s, thread, 0);
  if (wanted(jv, JVMTI_EVENT_VM_INIT)) {
    ddmc__jv_jnienv *jni = ddmc__jv_jni_env(jv);
    jthread t = ddmc__jv_thread_local(jv, thread);
    for (ddmc__jv_jenv *e = first_env(jv); e; e = e->next) {
      ddmc__jv_fnptr f = callback(e, JVMTI_EVENT_VM_INIT, thread);
      if (f) ((cb_env_thread)f)(e, jni, t);
    }
  }
  scope_leave(jv, &s);
  ddmc__jv_step_sync(jv); /* SingleStep enabled in OnLoad: the threads there are now */
}

void ddmc__jv_hub_vm_death(ddmc__jvmti *jv, uint32_t thread) {
  if (!wanted(jv, JVMTI_EVENT_VM_DEATH)) return;
  scope s;
  scope_enter(&s, thread, 0);
  ddmc__jv_jnienv *jni = ddmc__jv_jni_env(jv);
  for (ddmc__jv_jenv *e = first_env(jv); e; e = e->next) {
    ddmc__jv_fnptr f = callback(e, JVMTI_EVENT_VM_DEATH, thread);
    if (f) ((cb_env)f)(e, jni);
  }
  scope_leave(jv, &s);
}

/* ---- from the post calls (src/debugger/events.c) */

int ddmc__jv_hub_wants(const ddmc_vm *vm, int jdwp_kind) {
  ddmc__jvmti *jv = ddmc__jv_get(vm);
  if (jv == NULL) return 0;
  switch (jdwp_kind) {
    case DDMC_EV_SINGLE_STEP: return wanted(jv, JVMTI_EVENT_SINGLE_STEP);
    case DDMC_EV_BREAKPOINT: return wanted(jv, JVMTI_EVENT_BREAKPOINT);
    case DDMC_EV_EXCEPTION: return wanted(jv, JVMTI_EVENT_EXCEPTION);
    case DDMC_EV_EXCEPTION_CATCH: return wanted(jv, JVMTI_EVENT_EXCEPTION_CATCH);
    case DDMC_EV_THREAD_START: return wanted(jv, JVMTI_EVENT_THREAD_START);
    case DDMC_EV_THREAD_DEATH: return wanted(jv, JVMTI_EVENT_THREAD_END);
    case DDMC_EV_CLASS_PREPARE:
    case DDMC_EV_CLASS_LOAD: return wanted(jv, JVMTI_EVENT_CLASS_PREPARE) || wanted(jv, JVMTI_EVENT_CLASS_LOAD);
    case DDMC_EV_FIELD_ACCESS: return wanted(jv, JVMTI_EVENT_FIELD_ACCESS);
    case DDMC_EV_FIELD_MODIFICATION: return wanted(jv, JVMTI_EVENT_FIELD_MODIFICATION);
    case DDMC_EV_METHOD_ENTRY: return wanted(jv, JVMTI_EVENT_METHOD_ENTRY);
    case DDMC_EV_METHOD_EXIT:
    case DDMC_EV_METHOD_EXIT_WITH_RETURN_VALUE: return wanted(jv, JVMTI_EVENT_METHOD_EXIT);
    case DDMC_EV_MONITOR_WAIT: return wanted(jv, JVMTI_EVENT_MONITOR_WAIT);
    case DDMC_EV_MONITOR_WAITED: return wanted(jv, JVMTI_EVENT_MONITOR_WAITED);
    case DDMC_EV_MONITOR_CONTENDED_ENTER: return wanted(jv, JVMTI_EVENT_MONITOR_CONTENDED_ENTER);
    case DDMC_EV_MONITOR_CONTENDED_ENTERED: return wanted(jv, JVMTI_EVENT_MONITOR_CONTENDED_ENTERED);
    case DDMC_EV_VM_DEATH: return wanted(jv, JVMTI_EVENT_VM_DEATH);
    default: return 0;
  }
}

void ddmc__jv_hub_thread(ddmc_vm *vm, uint32_t thread, int start) {
  ddmc__jvmti *jv = ddmc__jv_get(vm);
  if (jv != NULL) ddmc__jv_step_thread(jv, thread, start); /* before its first instruction */
  int ev = start ? JVMTI_EVENT_THREAD_START : JVMTI_EVENT_THREAD_END;
  if (!wanted(jv, ev) || atomic_load(&jv->phase) != JVMTI_PHASE_LIVE) return;
  scope s;
  scope_enter(&s, thread, 1);
  ddmc__jv_jnienv *jni = ddmc__jv_jni_env(jv);
  jthread t = ddmc__jv_thread_local(jv, thread);
  for (ddmc__jv_jenv *e = first_env(jv); e && t; e = e->next) {
    ddmc__jv_fnptr f = callback(e, ev, thread);
    if (f) ((cb_env_thread)f)(e, jni, t);
  }
  scope_leave(jv, &s);
}

void ddmc__jv_hub_class_prepare(ddmc_vm *vm, uint32_t thread, ddmc_class c) {
  ddmc__jvmti *jv = ddmc__jv_get(vm);
  int load = wanted(jv, JVMTI_EVENT_CLASS_LOAD), prep = wanted(jv, JVMTI_EVENT_CLASS_PREPARE);
  if (!(load || prep)) return;
  int phase = atomic_load(&jv->phase);
  if (phase != JVMTI_PHASE_LIVE && phase != JVMTI_PHASE_START) return;
  scope s;
  scope_enter(&s, thread, 1);
  ddmc__jv_jnienv *jni = ddmc__jv_jni_env(jv);
  jthread t = ddmc__jv_thread_local(jv, thread);
  jclass k = ddmc__jv_class_local(jv, c);
  for (int ev = JVMTI_EVENT_CLASS_LOAD; ev <= JVMTI_EVENT_CLASS_PREPARE && k; ev++) {
    if (ev == JVMTI_EVENT_CLASS_LOAD ? !load : !prep) continue;
    for (ddmc__jv_jenv *e = first_env(jv); e; e = e->next) {
      ddmc__jv_fnptr f = callback(e, ev, thread);
      if (f) ((cb_env_thread_class)f)(e, jni, t, k);
    }
  }
  scope_leave(jv, &s);
}

static jvalue to_jvalue(ddmc__jvmti *jv, const ddmc_value *v) {
  jvalue out;
  memset(&out, 0, sizeof(out));
  if (v == NULL) return out;
  switch (v->tag) {
    case 'Z': out.z = (jboolean)v->u.i; break;
    case 'B': out.b = (jbyte)v->u.i; break;
    case 'C': out.c = (jchar)v->u.i; break;
    case 'S': out.s = (jshort)v->u.i; break;
    case 'I': out.i = v->u.i; break;
    case 'J': out.j = v->u.j; break;
    case 'F': out.f = v->u.f; break;
    case 'D': out.d = v->u.d; break;
    case 'V': break;
    default: out.l = v->u.l ? ddmc__jv_ref_local(jv, v->u.l, 0, 0) : NULL; break; /* a reference */
  }
  return out;
}

void ddmc__jv_hub_location(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, unsigned flags) {
  ddmc__jvmti *jv = ddmc__jv_get(vm);
  int entry = (flags & DDMC_POST_METHOD_ENTRY) && wanted(jv, JVMTI_EVENT_METHOD_ENTRY);
  int bp = (flags & DDMC_POST_AT_BREAKPOINT) && wanted(jv, JVMTI_EVENT_BREAKPOINT);
  int step = wanted(jv, JVMTI_EVENT_SINGLE_STEP);
  if (!(entry || bp || step) || atomic_load(&jv->phase) != JVMTI_PHASE_LIVE) return;
  scope s;
  scope_enter(&s, thread, 1);
  ddmc__jv_jnienv *jni = ddmc__jv_jni_env(jv);
  jthread t = ddmc__jv_thread_local(jv, thread);
  jmethodID m = ddmc__jv_method_id(jv, loc->cls, loc->method);
  for (ddmc__jv_jenv *e = first_env(jv); e && t && m; e = e->next) {
    ddmc__jv_fnptr f;
    if (entry && (f = callback(e, JVMTI_EVENT_METHOD_ENTRY, thread)) != NULL) ((cb_method)f)(e, jni, t, m);
    if (step && (f = callback(e, JVMTI_EVENT_SINGLE_STEP, thread)) != NULL) ((cb_location)f)(e, jni, t, m, loc->index);
    /* An environment hears only of its own breakpoints (a debugger's, or another agent's, at
     * the same place are theirs). */
    if (bp && (f = callback(e, JVMTI_EVENT_BREAKPOINT, thread)) != NULL && ddmc__jv_jenv_has_bp(e, loc))
      ((cb_location)f)(e, jni, t, m, loc->index);
  }
  scope_leave(jv, &s);
}

void ddmc__jv_hub_method_exit(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, const ddmc_value *ret,
                           int by_exception) {
  ddmc__jvmti *jv = ddmc__jv_get(vm);
  if (!wanted(jv, JVMTI_EVENT_METHOD_EXIT) || atomic_load(&jv->phase) != JVMTI_PHASE_LIVE) return;
  scope s;
  scope_enter(&s, thread, 1);
  ddmc__jv_jnienv *jni = ddmc__jv_jni_env(jv);
  jthread t = ddmc__jv_thread_local(jv, thread);
  jmethodID m = ddmc__jv_method_id(jv, loc->cls, loc->method);
  jvalue v = by_exception ? (jvalue){0} : to_jvalue(jv, ret);
  for (ddmc__jv_jenv *e = first_env(jv); e && t && m; e = e->next) {
    ddmc__jv_fnptr f = callback(e, JVMTI_EVENT_METHOD_EXIT, thread);
    if (f) ((cb_method_exit)f)(e, jni, t, m, (jboolean)(by_exception != 0), v);
  }
  scope_leave(jv, &s);
}

/* ---- exceptions and fields */

/* Exception (catch_loc: the handler, or NULL) or, with ev EXCEPTION_CATCH, the handler at loc. */
static void exception_event(ddmc_vm *vm, int ev, uint32_t thread, const ddmc_location *loc, ddmc_ref exc,
                            const ddmc_location *catch_loc) {
  ddmc__jvmti *jv = ddmc__jv_get(vm);
  if (!wanted(jv, ev) || atomic_load(&jv->phase) != JVMTI_PHASE_LIVE) return;
  scope s;
  scope_enter(&s, thread, 1);
  ddmc__jv_jnienv *jni = ddmc__jv_jni_env(jv);
  jthread t = ddmc__jv_thread_local(jv, thread);
  jmethodID m = ddmc__jv_method_id(jv, loc->cls, loc->method);
  jmethodID cm = catch_loc ? ddmc__jv_method_id(jv, catch_loc->cls, catch_loc->method) : NULL;
  jobject x = ddmc__jv_ref_local(jv, exc, 0, 0);
  for (ddmc__jv_jenv *e = first_env(jv); e && t && m && x; e = e->next) {
    ddmc__jv_fnptr f = callback(e, ev, thread);
    if (f && ev == JVMTI_EVENT_EXCEPTION)
      ((cb_exception)f)(e, jni, t, m, loc->index, x, cm, cm ? catch_loc->index : 0);
    else if (f)
      ((cb_exception_catch)f)(e, jni, t, m, loc->index, x);
  }
  scope_leave(jv, &s);
}

void ddmc__jv_hub_exception(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, ddmc_ref exc,
                         const ddmc_location *catch_loc) {
  exception_event(vm, JVMTI_EVENT_EXCEPTION, thread, loc, exc, catch_loc);
}

void ddmc__jv_hub_exception_catch(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, ddmc_ref exc) {
  exception_event(vm, JVMTI_EVENT_EXCEPTION_CATCH, thread, loc, exc, NULL);
}

static char type_letter(char tag) {
  /* JDWP's object tags (s, t, g, l, c, [) are all 'L' to JVM TI. */
  return strchr("ZBCSIJFD", tag) != NULL && tag != 0 ? tag : 'L';
}

void ddmc__jv_hub_field(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, ddmc_class c, uint32_t field,
                     ddmc_ref object, const ddmc_value *new_value) {
  ddmc__jvmti *jv = ddmc__jv_get(vm);
  int ev = new_value ? JVMTI_EVENT_FIELD_MODIFICATION : JVMTI_EVENT_FIELD_ACCESS;
  if (!wanted(jv, ev) || atomic_load(&jv->phase) != JVMTI_PHASE_LIVE) return;
  unsigned kind = new_value ? DDMC_WATCH_MODIFY : DDMC_WATCH_ACCESS;
  scope s;
  scope_enter(&s, thread, 1);
  ddmc__jv_jnienv *jni = ddmc__jv_jni_env(jv);
  jthread t = ddmc__jv_thread_local(jv, thread);
  jmethodID m = ddmc__jv_method_id(jv, loc->cls, loc->method);
  jclass k = ddmc__jv_class_local(jv, c);
  jfieldID fid = ddmc__jv_field_id(jv, c, field);
  jobject o = object ? ddmc__jv_ref_local(jv, object, 0, 0) : NULL;
  char sig = new_value ? type_letter(new_value->tag) : 0;
  jvalue v = new_value ? to_jvalue(jv, new_value) : (jvalue){0};
  for (ddmc__jv_jenv *e = first_env(jv); e && t && m && k && fid; e = e->next) {
    ddmc__jv_fnptr f = callback(e, ev, thread);
    if (f == NULL || !ddmc__jv_jenv_watches(e, c, field, kind)) continue;
    if (new_value)
      ((cb_field_modification)f)(e, jni, t, m, loc->index, k, o, fid, sig, v);
    else
      ((cb_field_access)f)(e, jni, t, m, loc->index, k, o, fid);
  }
  scope_leave(jv, &s);
}
