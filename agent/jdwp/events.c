/* SPDX-License-Identifier: Apache-2.0 */
/* JVM TI events to libddmc's event hub (ddmc_post_*). Each callback runs on the Java thread the
 * event happened on, in native code: the library may park it there (a suspending event) and hand
 * it a method call (invoke.c), both of which HotSpot allows inside a callback.
 *
 * One location, one report. HotSpot reports MethodEntry, Breakpoint and SingleStep at one
 * instruction as separate callbacks (in that order); the library wants one ddmc_post_location
 * with the flags of all of them, as JDI expects one composite. The first callback at a location
 * reports it with every flag that applies and leaves a mark naming the callbacks still to come
 * there (a breakpoint set at it, a step in progress); those are then dropped once each. A kind
 * that comes again at the marked location is a new execution of it (a loop of one instruction)
 * and is reported.
 *
 * The gate first. A callback calls ja_callback_enter before anything that takes a lock of the
 * agent (ja_location and ja_ref take the class and name tables' locks and call JVM TI under
 * them): before the gate a thread may be suspended through JVM TI, and it stops at its next JVM
 * TI call, which under such a lock leaves the JDWP thread waiting for the lock and the debugger
 * for its reply. Only JVM TI calls (GetFrameLocation, GetFrameCount) come before the gate. */
#include <stdio.h>
#include <string.h>

#include "ja.h"

enum { K_ENTRY = 1, K_BP = 2, K_STEP = 4 };

typedef struct mark {
  jmethodID m;
  jlocation l;
  int32_t depth;
  unsigned pending;
} mark;
static _Thread_local mark tl_mark;

static int quiet(void) { return !atomic_load_explicit(&ja.live, memory_order_acquire) || ja_thread_is_internal(); }

static int32_t depth_of(jthread t) {
  jint n = 0;
  (*ja.ti)->GetFrameCount(ja.ti, t, &n);
  return n - 1;
}

/* An event whose objects the full table cannot name is not reported (a null in their place would
 * be a wrong answer): said on stderr, the first time and every 1000th after. */
static int dropped(const char *what) {
  static atomic_uint n;
  unsigned k = atomic_fetch_add(&n, 1);
  if (k % 1000 == 0)
    fprintf(stderr, "ddmcjdwp: %s event not reported: the table of names is full (%u such events so far)\n", what,
            k + 1);
  return 1;
}

/* o's number in *out; non-zero (the event dropped, said) when the full table cannot name it. */
static int name_of(JNIEnv *env, jobject o, ddmc_ref *out, const char *what) {
  *out = ja_ref(env, o);
  return o != NULL && *out == 0 ? dropped(what) : 0;
}

/* 'this' of the frame at depth in *out, 0 for static and native methods; non-zero as name_of. */
static int this_of(JNIEnv *env, jthread t, jmethodID m, jint depth, ddmc_ref *out, const char *what) {
  jint mods = 0;
  *out = 0;
  if (!ja.caps.can_access_local_variables || (*ja.ti)->GetMethodModifiers(ja.ti, m, &mods) != JVMTI_ERROR_NONE ||
      (mods & (DDMC_ACC_STATIC | DDMC_ACC_NATIVE)))
    return 0;
  jobject o = NULL;
  if ((*ja.ti)->GetLocalInstance(ja.ti, t, depth, &o) != JVMTI_ERROR_NONE || o == NULL) return 0;
  int rc = name_of(env, o, out, what);
  (*env)->DeleteLocalRef(env, o);
  return rc;
}

/* The top frame (for events JVM TI reports without a location): JVM TI only, so it may come
 * before ja_callback_enter. */
static int top_frame(jthread t, jmethodID *m, jlocation *l) {
  *l = -1;
  return (*ja.ti)->GetFrameLocation(ja.ti, t, 0, m, l) != JVMTI_ERROR_NONE ? -1 : 0;
}

static void location_event(JNIEnv *env, jthread t, jmethodID m, jlocation l, unsigned kind) {
  if (quiet()) return;
  int32_t depth = depth_of(t);
  if (tl_mark.m == m && tl_mark.l == l && tl_mark.depth == depth && (tl_mark.pending & kind)) {
    tl_mark.pending &= ~kind;
    return;
  }
  uint32_t id = ja_callback_enter(env, t);
  if (id == 0) return;
  ja_tstate *e = ja_tstate_of(id);
  unsigned flags = 0, pending = 0;
  if (ja_breakpoint_at(m, l)) {
    flags |= DDMC_POST_AT_BREAKPOINT;
    if (kind != K_BP) pending |= K_BP;
  }
  if (e && atomic_load(&e->stepping) && kind != K_STEP) pending |= K_STEP;
  if (kind == K_ENTRY) flags |= DDMC_POST_METHOD_ENTRY;
  ddmc_location loc;
  ddmc_ref self = 0;
  if (ja_location(env, m, l, &loc) == 0 && this_of(env, t, m, 0, &self, "location") == 0) {
    mark saved = {m, l, depth, pending};
    tl_mark = saved;
    ddmc_post_location(ja.vm, id, &loc, depth, self, flags);
    /* A method call the debugger made while the thread was parked ran its own events. */
    tl_mark = saved;
  }
  ja_callback_leave(id);
}

static void breakpoint_cb(jvmtiEnv *ti, JNIEnv *env, jthread t, jmethodID m, jlocation l) {
  location_event(env, t, m, l, K_BP);
}

static void single_step_cb(jvmtiEnv *ti, JNIEnv *env, jthread t, jmethodID m, jlocation l) {
  if (ja_pop_step(env, t)) return;
  location_event(env, t, m, l, K_STEP);
}

static void method_entry_cb(jvmtiEnv *ti, JNIEnv *env, jthread t, jmethodID m) {
  jlocation start = -1, end = -1;
  /* A native method has no instruction to stop at. */
  if ((*ja.ti)->GetMethodLocation(ja.ti, m, &start, &end) != JVMTI_ERROR_NONE || start < 0) return;
  location_event(env, t, m, start, K_ENTRY);
}

static char return_type(jmethodID m) {
  char *name = NULL, *sig = NULL;
  char rt = 'V';
  if ((*ja.ti)->GetMethodName(ja.ti, m, &name, &sig, NULL) == JVMTI_ERROR_NONE) {
    const char *p = sig ? strchr(sig, ')') : NULL;
    rt = p && p[1] ? (p[1] == '[' ? 'L' : p[1]) : 'V';
  }
  if (name) (*ja.ti)->Deallocate(ja.ti, (unsigned char *)name);
  if (sig) (*ja.ti)->Deallocate(ja.ti, (unsigned char *)sig);
  return rt;
}

static void method_exit_cb(jvmtiEnv *ti, JNIEnv *env, jthread t, jmethodID m, jboolean popped, jvalue ret) {
  if (quiet()) return;
  ddmc_location loc;
  jmethodID top = NULL;
  jlocation l;
  if (top_frame(t, &top, &l) || top != m) return;
  uint32_t id = ja_callback_enter(env, t);
  if (id == 0) return;
  int32_t depth = depth_of(t);
  ddmc_ref self = 0;
  ddmc_value v;
  if (ja_location(env, m, l, &loc)) {
    /* not reported: a class JVM TI cannot describe */
  } else if (this_of(env, t, m, 0, &self, "method exit")) {
    /* said */
  } else if (popped) {
    ddmc_post_method_unwind(ja.vm, id, &loc, depth, self);
  } else if (ja_value_in(env, return_type(m), ret, &v) != 0) {
    dropped("method exit");
  } else {
    ddmc_post_method_exit(ja.vm, id, &loc, depth, self, &v);
  }
  ja_callback_leave(id);
}

static void exception_cb(jvmtiEnv *ti, JNIEnv *env, jthread t, jmethodID m, jlocation l, jobject exc, jmethodID catch_m,
                         jlocation catch_l) {
  if (quiet() || !ddmc_event_wanted(ja.vm, DDMC_EV_EXCEPTION)) return;
  uint32_t id = ja_callback_enter(env, t);
  if (id == 0) return;
  ddmc_location loc, cloc;
  ddmc_ref self, x;
  if (ja_location(env, m, l, &loc) == 0 && this_of(env, t, m, 0, &self, "exception") == 0 &&
      name_of(env, exc, &x, "exception") == 0) {
    int has_catch = catch_m && ja_location(env, catch_m, catch_l, &cloc) == 0;
    ddmc_post_exception(ja.vm, id, &loc, depth_of(t), self, x, has_catch ? &cloc : NULL);
  }
  ja_callback_leave(id);
}

static void exception_catch_cb(jvmtiEnv *ti, JNIEnv *env, jthread t, jmethodID m, jlocation l, jobject exc) {
  if (quiet() || !ddmc_event_wanted(ja.vm, DDMC_EV_EXCEPTION_CATCH)) return;
  uint32_t id = ja_callback_enter(env, t);
  if (id == 0) return;
  ddmc_location loc;
  ddmc_ref self, x;
  if (ja_location(env, m, l, &loc) == 0 && this_of(env, t, m, 0, &self, "exception catch") == 0 &&
      name_of(env, exc, &x, "exception catch") == 0)
    ddmc_post_exception_catch(ja.vm, id, &loc, depth_of(t), self, x);
  ja_callback_leave(id);
}

static void field_access_cb(jvmtiEnv *ti, JNIEnv *env, jthread t, jmethodID m, jlocation l, jclass k, jobject obj,
                            jfieldID f) {
  if (quiet() || !ddmc_event_wanted(ja.vm, DDMC_EV_FIELD_ACCESS)) return;
  uint32_t id = ja_callback_enter(env, t);
  if (id == 0) return;
  ddmc_location loc;
  ddmc_class c = 0;
  int32_t index = -1;
  ddmc_ref self, o;
  if (ja_location(env, m, l, &loc) == 0 && (index = ja_field_index(c = ja_ref(env, k), f)) >= 0 &&
      this_of(env, t, m, 0, &self, "field access") == 0 && name_of(env, obj, &o, "field access") == 0)
    ddmc_post_field_access(ja.vm, id, &loc, depth_of(t), self, c, (uint32_t)index, o);
  ja_callback_leave(id);
}

static void field_modification_cb(jvmtiEnv *ti, JNIEnv *env, jthread t, jmethodID m, jlocation l, jclass k, jobject obj,
                                  jfieldID f, char sig, jvalue nv) {
  if (quiet() || !ddmc_event_wanted(ja.vm, DDMC_EV_FIELD_MODIFICATION)) return;
  uint32_t id = ja_callback_enter(env, t);
  if (id == 0) return;
  ddmc_location loc;
  ddmc_class c = 0;
  int32_t index = -1;
  ddmc_value v;
  ddmc_ref self, o;
  if (ja_location(env, m, l, &loc) || (index = ja_field_index(c = ja_ref(env, k), f)) < 0) {
    /* not reported: a class JVM TI cannot describe */
  } else if (ja_value_in(env, sig == '[' ? 'L' : sig, nv, &v) != 0) {
    dropped("field modification");
  } else if (this_of(env, t, m, 0, &self, "field modification") == 0 &&
             name_of(env, obj, &o, "field modification") == 0)
    ddmc_post_field_modification(ja.vm, id, &loc, depth_of(t), self, c, (uint32_t)index, o, &v);
  ja_callback_leave(id);
}

static void class_prepare_cb(jvmtiEnv *ti, JNIEnv *env, jthread t, jclass k) {
  if (quiet() || !ddmc_event_wanted(ja.vm, DDMC_EV_CLASS_PREPARE)) return;
  uint32_t id = ja_callback_enter(env, t);
  if (id == 0) return;
  ddmc_post_class_prepare(ja.vm, id, ja_ref(env, k));
  ja_callback_leave(id);
}

static void thread_start_cb(jvmtiEnv *ti, JNIEnv *env, jthread t) {
  if (ja_thread_is_internal()) { /* ja_env attaching a thread of libddmc */
    ja_set_internal(ja_ref(env, t));
    return;
  }
  if (!atomic_load(&ja.live)) return;
  uint32_t id = ja_callback_enter(env, t);
  if (id == 0) return;
  jvmtiThreadInfo info;
  memset(&info, 0, sizeof info);
  if ((*ja.ti)->GetThreadInfo(ja.ti, t, &info) == JVMTI_ERROR_NONE) {
    ddmc_notify_thread_start(ja.vm, id, info.name ? info.name : "");
    if (info.name) (*ja.ti)->Deallocate(ja.ti, (unsigned char *)info.name);
  }
  ddmc_post_thread_start(ja.vm, id);
  ja_callback_leave(id);
}

static void thread_end_cb(jvmtiEnv *ti, JNIEnv *env, jthread t) {
  if (quiet()) return;
  uint32_t id = ja_callback_enter(env, t);
  if (id == 0) return;
  ddmc_post_thread_death(ja.vm, id);
  ddmc_notify_thread_end(ja.vm, id);
  ja_callback_leave(id);
}

static void monitor_event(JNIEnv *env, jthread t, jobject obj, ddmc_event_kind kind, jlong timeout,
                          jboolean timed_out) {
  if (quiet() || !ddmc_event_wanted(ja.vm, kind)) return;
  ddmc_location loc;
  jmethodID m = NULL;
  jlocation l;
  if (top_frame(t, &m, &l)) return;
  uint32_t id = ja_callback_enter(env, t);
  if (id == 0) return;
  int32_t depth = depth_of(t);
  ddmc_ref self, o;
  if (ja_location(env, m, l, &loc) || this_of(env, t, m, 0, &self, "monitor") || name_of(env, obj, &o, "monitor")) {
    ja_callback_leave(id);
    return;
  }
  switch (kind) {
    case DDMC_EV_MONITOR_CONTENDED_ENTER: ddmc_post_monitor_contended_enter(ja.vm, id, &loc, depth, self, o); break;
    case DDMC_EV_MONITOR_CONTENDED_ENTERED: ddmc_post_monitor_contended_entered(ja.vm, id, &loc, depth, self, o); break;
    case DDMC_EV_MONITOR_WAIT: ddmc_post_monitor_wait(ja.vm, id, &loc, depth, self, o, timeout); break;
    default: ddmc_post_monitor_waited(ja.vm, id, &loc, depth, self, o, timed_out); break;
  }
  ja_callback_leave(id);
}

static void contended_enter_cb(jvmtiEnv *ti, JNIEnv *env, jthread t, jobject o) {
  monitor_event(env, t, o, DDMC_EV_MONITOR_CONTENDED_ENTER, 0, 0);
}
static void contended_entered_cb(jvmtiEnv *ti, JNIEnv *env, jthread t, jobject o) {
  monitor_event(env, t, o, DDMC_EV_MONITOR_CONTENDED_ENTERED, 0, 0);
}
static void monitor_wait_cb(jvmtiEnv *ti, JNIEnv *env, jthread t, jobject o, jlong timeout) {
  monitor_event(env, t, o, DDMC_EV_MONITOR_WAIT, timeout, 0);
}
static void monitor_waited_cb(jvmtiEnv *ti, JNIEnv *env, jthread t, jobject o, jboolean timed_out) {
  monitor_event(env, t, o, DDMC_EV_MONITOR_WAITED, 0, timed_out);
}

/* Re-entry. A JNI or JVM TI call in a callback may run Java code on the same thread (HotSpot's
 * FindClass does when the caller's frame is in NativeLibraries), and that code posts events: the
 * callback for one would run inside the other, to no end (the stack overflows). As the JDK's agent
 * does, an event on a thread that is inside one of these callbacks is not reported; a method the
 * debugger calls there (invoke) is the debugger's code, and reports its events (ja_events_pause). */
static _Thread_local int tl_inside;

int ja_events_pause(void) {
  int was = tl_inside;
  tl_inside = 0;
  return was;
}

void ja_events_unpause(int was) { tl_inside = was; }

#define GUARDED(call)      \
  do {                     \
    if (tl_inside) return; \
    tl_inside = 1;         \
    call;                  \
    tl_inside = 0;         \
  } while (0)

static void JNICALL on_breakpoint(jvmtiEnv *ti, JNIEnv *env, jthread t, jmethodID m, jlocation l) {
  GUARDED(breakpoint_cb(ti, env, t, m, l));
}
static void JNICALL on_single_step(jvmtiEnv *ti, JNIEnv *env, jthread t, jmethodID m, jlocation l) {
  GUARDED(single_step_cb(ti, env, t, m, l));
}
static void JNICALL on_method_entry(jvmtiEnv *ti, JNIEnv *env, jthread t, jmethodID m) {
  GUARDED(method_entry_cb(ti, env, t, m));
}
static void JNICALL on_method_exit(jvmtiEnv *ti, JNIEnv *env, jthread t, jmethodID m, jboolean popped, jvalue ret) {
  GUARDED(method_exit_cb(ti, env, t, m, popped, ret));
}
static void JNICALL on_exception(jvmtiEnv *ti, JNIEnv *env, jthread t, jmethodID m, jlocation l, jobject exc,
                                 jmethodID catch_m, jlocation catch_l) {
  GUARDED(exception_cb(ti, env, t, m, l, exc, catch_m, catch_l));
}
static void JNICALL on_exception_catch(jvmtiEnv *ti, JNIEnv *env, jthread t, jmethodID m, jlocation l, jobject exc) {
  GUARDED(exception_catch_cb(ti, env, t, m, l, exc));
}
static void JNICALL on_field_access(jvmtiEnv *ti, JNIEnv *env, jthread t, jmethodID m, jlocation l, jclass k,
                                    jobject obj, jfieldID f) {
  GUARDED(field_access_cb(ti, env, t, m, l, k, obj, f));
}
static void JNICALL on_field_modification(jvmtiEnv *ti, JNIEnv *env, jthread t, jmethodID m, jlocation l, jclass k,
                                          jobject obj, jfieldID f, char sig, jvalue nv) {
  GUARDED(field_modification_cb(ti, env, t, m, l, k, obj, f, sig, nv));
}
static void JNICALL on_class_prepare(jvmtiEnv *ti, JNIEnv *env, jthread t, jclass k) {
  GUARDED(class_prepare_cb(ti, env, t, k));
}
static void JNICALL on_thread_start(jvmtiEnv *ti, JNIEnv *env, jthread t) { GUARDED(thread_start_cb(ti, env, t)); }
static void JNICALL on_thread_end(jvmtiEnv *ti, JNIEnv *env, jthread t) { GUARDED(thread_end_cb(ti, env, t)); }
static void JNICALL on_contended_enter(jvmtiEnv *ti, JNIEnv *env, jthread t, jobject o) {
  GUARDED(contended_enter_cb(ti, env, t, o));
}
static void JNICALL on_contended_entered(jvmtiEnv *ti, JNIEnv *env, jthread t, jobject o) {
  GUARDED(contended_entered_cb(ti, env, t, o));
}
static void JNICALL on_monitor_wait(jvmtiEnv *ti, JNIEnv *env, jthread t, jobject o, jlong timeout) {
  GUARDED(monitor_wait_cb(ti, env, t, o, timeout));
}
static void JNICALL on_monitor_waited(jvmtiEnv *ti, JNIEnv *env, jthread t, jobject o, jboolean timed_out) {
  GUARDED(monitor_waited_cb(ti, env, t, o, timed_out));
}

void ja_events_callbacks(jvmtiEventCallbacks *cb) {
  cb->Breakpoint = on_breakpoint;
  cb->SingleStep = on_single_step;
  cb->MethodEntry = on_method_entry;
  cb->MethodExit = on_method_exit;
  cb->Exception = on_exception;
  cb->ExceptionCatch = on_exception_catch;
  cb->FieldAccess = on_field_access;
  cb->FieldModification = on_field_modification;
  cb->ClassPrepare = on_class_prepare;
  cb->ThreadStart = on_thread_start;
  cb->ThreadEnd = on_thread_end;
  cb->MonitorContendedEnter = on_contended_enter;
  cb->MonitorContendedEntered = on_contended_entered;
  cb->MonitorWait = on_monitor_wait;
  cb->MonitorWaited = on_monitor_waited;
}

int ja_events_enable(void) {
  jvmtiEvent always[16];
  int n = 0;
  always[n++] = JVMTI_EVENT_VM_INIT;
  always[n++] = JVMTI_EVENT_VM_DEATH;
  always[n++] = JVMTI_EVENT_THREAD_START;
  always[n++] = JVMTI_EVENT_THREAD_END;
  always[n++] = JVMTI_EVENT_CLASS_PREPARE;
  if (ja.caps.can_generate_breakpoint_events) always[n++] = JVMTI_EVENT_BREAKPOINT;
  if (ja.caps.can_generate_exception_events) {
    always[n++] = JVMTI_EVENT_EXCEPTION;
    always[n++] = JVMTI_EVENT_EXCEPTION_CATCH;
  }
  /* Only the fields the library watches report these. */
  if (ja.caps.can_generate_field_access_events) always[n++] = JVMTI_EVENT_FIELD_ACCESS;
  if (ja.caps.can_generate_field_modification_events) always[n++] = JVMTI_EVENT_FIELD_MODIFICATION;
  /* The monitor events are switched by the library (control.c, set_monitor_events). */
  for (int i = 0; i < n; i++) {
    jvmtiError e = (*ja.ti)->SetEventNotificationMode(ja.ti, JVMTI_ENABLE, always[i], NULL);
    if (e != JVMTI_ERROR_NONE) return (int)e;
  }
  return 0;
}
