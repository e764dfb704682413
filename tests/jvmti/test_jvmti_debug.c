/* SPDX-License-Identifier: Apache-2.0 */
/* JVM TI's debugging and suspension functions without a VM process, over a fake bridge that
 * counts what the VM is asked to do: suspension shared with the debugger (src/jvmti/suspend.c),
 * breakpoints and field watches shared with it through src/vmctl (src/jvmti/debug.c), single
 * stepping and the monitor events' switch following SetEventNotificationMode, and their bad input; raw monitors' notify; JNI
 * NewObject's argument forms. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "ddmc/ddmc.h"
#include "jvmti/jv_fixture.h"
#include "util/testutil.h"
#include "vmctl/switches.h"

#define T_MAIN 1
#define T_WORKER 2
#define C_A 7

static int g_suspends[3], g_resumes[3], g_bps, g_bp_clears, g_watch, g_stepping[3];
static int g_monitor_calls, g_monitor_on; /* set_monitor_events */

static int op_thread_info(void *d, uint32_t t, ddmc_thread_detail *out) {
  if (t != T_MAIN && t != T_WORKER) return DDMC_JDWP_INVALID_THREAD;
  memset(out, 0, sizeof(*out));
  out->object = 100 + t;
  out->name = t == T_MAIN ? "main" : "worker";
  out->status = DDMC_TS_RUNNING;
  return 0;
}
static int op_suspend(void *d, uint32_t t) {
  g_suspends[t]++;
  return 0;
}
static int op_resume(void *d, uint32_t t) {
  g_resumes[t]++;
  return 0;
}
static int op_method_info(void *d, ddmc_class c, uint32_t m, ddmc_method_info *out) {
  if (c != C_A || m > 1) return DDMC_JDWP_INVALID_METHODID;
  memset(out, 0, sizeof(*out));
  out->name = m == 0 ? "f" : "<init>";
  out->signature = m == 0 ? "()V" : "(JFLA;BD)V"; /* A(long, float, A, byte, double) */
  out->code_start = 0;
  out->code_end = 9;
  return 0;
}
static int op_field_info(void *d, ddmc_class c, uint32_t f, ddmc_field_info *out) {
  if (c != C_A || f != 0) return DDMC_JDWP_INVALID_FIELDID;
  memset(out, 0, sizeof(*out));
  out->name = "x";
  out->signature = "I";
  return 0;
}
static int op_class_info(void *d, ddmc_class c, ddmc_class_info *out) {
  if (c != C_A) return DDMC_JDWP_INVALID_CLASS;
  memset(out, 0, sizeof(*out));
  out->signature = "LA;";
  out->nmethods = 2;
  out->nfields = 1;
  return 0;
}
/* JNI NewObject reaches the VM as a constructor call on the calling thread. */
static ddmc_value g_ctor_args[8];
static int g_ctor_nargs, g_ctor_calls;
static int op_invoke(void *d, uint32_t thread, ddmc_class c, uint32_t m, ddmc_ref self, const ddmc_value *args,
                     int32_t nargs, int options, ddmc_value *result, ddmc_ref *exception) {
  g_ctor_calls++;
  if (c != C_A || m != 1 || thread != T_MAIN || !(options & DDMC_INVOKE_CONSTRUCT) || nargs > 8)
    return DDMC_JDWP_INVALID_METHODID;
  g_ctor_nargs = nargs;
  memcpy(g_ctor_args, args, sizeof(ddmc_value) * (size_t)nargs);
  *result = (ddmc_value){.tag = 'L', .u.l = 0x500};
  *exception = 0;
  return 0;
}
static int op_set_bp(void *d, const ddmc_location *l) {
  g_bps++;
  return 0;
}
static int op_clear_bp(void *d, const ddmc_location *l) {
  g_bp_clears++;
  return 0;
}
static int op_watch(void *d, ddmc_class c, uint32_t f, unsigned w) {
  g_watch = (int)w;
  return 0;
}
static int op_stepping(void *d, uint32_t t, int on) {
  g_stepping[t] = on;
  return 0;
}
static int op_get_local(void *d, uint32_t t, int32_t depth, int32_t slot, char tag, ddmc_value *out) {
  out->tag = tag;
  out->u.i = 42;
  return 0;
}
static int op_set_local(void *d, uint32_t t, int32_t depth, int32_t slot, const ddmc_value *v) { return 0; }
static int op_variable_table(void *d, ddmc_class c, uint32_t m, ddmc_variable_visit_fn fn, void *arg) {
  return DDMC_JDWP_ABSENT_INFORMATION;
}
static void op_monitor_events(void *d, int on) {
  g_monitor_calls++;
  g_monitor_on = on;
}
static int vm_for_each_thread(void *d, ddmc_thread_visit_fn fn, void *arg) {
  ddmc_thread_info a = {.id = T_MAIN, .tid = 1, .name = "main"}, b = {.id = T_WORKER, .tid = 2, .name = "worker"};
  if (fn(arg, &a)) return 0;
  fn(arg, &b);
  return 0;
}

static int setup(void **state) {
  static ddmc_vm_bridge bridge;
  memset(&bridge, 0, sizeof(bridge));
  bridge.thread_info = op_thread_info;
  bridge.suspend_thread = op_suspend;
  bridge.resume_thread = op_resume;
  bridge.method_info = op_method_info;
  bridge.field_info = op_field_info;
  bridge.class_info = op_class_info;
  bridge.set_breakpoint = op_set_bp;
  bridge.clear_breakpoint = op_clear_bp;
  bridge.set_field_watch = op_watch;
  bridge.set_stepping = op_stepping;
  bridge.get_local = op_get_local;
  bridge.set_local = op_set_local;
  bridge.variable_table = op_variable_table;
  bridge.invoke = op_invoke;
  bridge.set_monitor_events = op_monitor_events;
  ddmc_vm_ops vops;
  memset(&vops, 0, sizeof(vops));
  vops.for_each_thread = vm_for_each_thread;
  fixture *f = jv_fixture_new(&bridge, &vops);
  memset(g_suspends, 0, sizeof(g_suspends));
  memset(g_resumes, 0, sizeof(g_resumes));
  memset(g_stepping, 0, sizeof(g_stepping));
  g_bps = g_bp_clears = g_watch = 0;
  g_monitor_calls = g_monitor_on = 0;
  *state = f;
  return 0;
}

static int teardown(void **state) {
  jv_fixture_free(*state);
  return 0;
}

static void caps_and_live(fixture *f) {
  ddmc__jv_caps c;
  memset(&c, 0, sizeof(c));
  ddmc__jv_cap_set(&c, DDMC_CAP_can_suspend);
  ddmc__jv_cap_set(&c, DDMC_CAP_can_generate_breakpoint_events);
  ddmc__jv_cap_set(&c, DDMC_CAP_can_generate_field_access_events);
  ddmc__jv_cap_set(&c, DDMC_CAP_can_generate_field_modification_events);
  ddmc__jv_cap_set(&c, DDMC_CAP_can_generate_single_step_events);
  ddmc__jv_cap_set(&c, DDMC_CAP_can_generate_monitor_events);
  assert_int_equal(ddmc__jv_jt_AddCapabilities(f->e, &c), 0);
  assert_int_equal(ddmc_agent_vm_start(f->vm), 0);
  assert_int_equal(ddmc_agent_vm_init(f->vm, 0), 0);
}

static void test_suspend_shared_with_debugger(void **state) {
  fixture *f = *state;
  jthread w = ddmc__jv_thread_local(f->jv, T_WORKER);
  assert_int_equal(ddmc__jv_jt_SuspendThread(f->e, w), JVMTI_ERROR_WRONG_PHASE);
  caps_and_live(f);
  assert_non_null(w);
  assert_int_equal(ddmc__jv_jt_ResumeThread(f->e, w), JVMTI_ERROR_THREAD_NOT_SUSPENDED);
  assert_int_equal(ddmc__jv_jt_SuspendThread(f->e, w), 0);
  assert_int_equal(g_suspends[T_WORKER], 1);
  assert_int_equal(ddmc__jv_jt_SuspendThread(f->e, w), JVMTI_ERROR_THREAD_SUSPENDED);
  jint st = 0;
  assert_int_equal(ddmc__jv_jt_GetThreadState(f->e, w, &st), 0);
  assert_true(st & JVMTI_THREAD_STATE_SUSPENDED);
  /* The debugger suspends it too (its count 0 -> 1, through vmctl's arbiter): the VM is not asked
   * again. */
  assert_int_equal(ddmc__ctl_suspend(f->vm, T_WORKER, 1), 0);
  assert_int_equal(g_suspends[T_WORKER], 1);
  /* The agent lets go: the debugger still holds it. */
  assert_int_equal(ddmc__jv_jt_ResumeThread(f->e, w), 0);
  assert_int_equal(g_resumes[T_WORKER], 0);
  /* The debugger lets go: now the VM resumes it, once. */
  assert_int_equal(ddmc__ctl_suspend(f->vm, T_WORKER, 0), 0);
  assert_int_equal(g_resumes[T_WORKER], 1);
  /* Locals: only of the calling thread or a suspended one. */
  ddmc__jv_caps lv;
  memset(&lv, 0, sizeof(lv));
  ddmc__jv_cap_set(&lv, DDMC_CAP_can_access_local_variables);
  assert_int_equal(ddmc__jv_jt_AddCapabilities(f->e, &lv), 0);
  jint v;
  assert_int_equal(ddmc__jv_jt_GetLocalInt(f->e, w, 0, 0, &v), JVMTI_ERROR_THREAD_NOT_SUSPENDED);
  assert_int_equal(ddmc__jv_jt_SetLocalInt(f->e, w, 0, 0, 1), JVMTI_ERROR_THREAD_NOT_SUSPENDED);
  assert_int_equal(ddmc__jv_jt_SuspendThread(f->e, w), 0);
  assert_int_equal(ddmc__jv_jt_GetLocalInt(f->e, w, 0, 0, &v), 0);
  assert_int_equal(v, 42);
  assert_int_equal(ddmc__jv_jt_ResumeThread(f->e, w), 0);
  /* The list forms: one result per thread, a bad handle answered in place. */
  jthread list[2] = {w, (jthread)(uintptr_t)0x7777};
  jvmtiError res[2];
  assert_int_equal(ddmc__jv_jt_SuspendThreadList(f->e, 2, list, res), 0);
  assert_int_equal(res[0], JVMTI_ERROR_NONE);
  assert_int_equal(res[1], JVMTI_ERROR_INVALID_THREAD);
  assert_int_equal(ddmc__jv_jt_ResumeThreadList(f->e, 2, list, res), 0);
  assert_int_equal(res[0], JVMTI_ERROR_NONE);
  assert_int_equal(g_resumes[T_WORKER], 3);
  assert_int_equal(ddmc__jv_jt_SuspendThreadList(f->e, 1, NULL, res), JVMTI_ERROR_NULL_POINTER);
  assert_int_equal(ddmc__jv_jt_SuspendThreadList(f->e, -1, list, res), JVMTI_ERROR_ILLEGAL_ARGUMENT);
}

static void test_breakpoints_and_watches(void **state) {
  fixture *f = *state;
  jmethodID m = ddmc__jv_method_id(f->jv, C_A, 0);
  jclass k = ddmc__jv_class_local(f->jv, C_A);
  jfieldID x = ddmc__jv_field_id(f->jv, C_A, 0);
  assert_int_equal(ddmc__jv_jt_SetBreakpoint(f->e, m, 3), JVMTI_ERROR_WRONG_PHASE);
  caps_and_live(f);
  assert_int_equal(ddmc__jv_jt_SetBreakpoint(f->e, m, 10), JVMTI_ERROR_INVALID_LOCATION);
  assert_int_equal(ddmc__jv_jt_SetBreakpoint(f->e, (jmethodID)(uintptr_t)0x999, 3), JVMTI_ERROR_INVALID_METHODID);
  assert_int_equal(ddmc__jv_jt_SetBreakpoint(f->e, m, 3), 0);
  assert_int_equal(ddmc__jv_jt_SetBreakpoint(f->e, m, 3), JVMTI_ERROR_DUPLICATE);
  /* A debugger's breakpoint at the same place: one VM breakpoint, kept until both clear. */
  ddmc_location loc = {C_A, 0, 3};
  assert_int_equal(ddmc__ctl_breakpoint(f->vm, &loc, 1), 0);
  assert_int_equal(g_bps, 1);
  assert_int_equal(ddmc__jv_jt_ClearBreakpoint(f->e, m, 3), 0);
  assert_int_equal(g_bp_clears, 0);
  assert_int_equal(ddmc__jv_jt_ClearBreakpoint(f->e, m, 3), JVMTI_ERROR_NOT_FOUND);
  assert_int_equal(ddmc__ctl_breakpoint(f->vm, &loc, 0), 0);
  assert_int_equal(g_bp_clears, 1);
  /* Watches: access and modification, each counted; the VM sees the mask. */
  assert_int_equal(ddmc__jv_jt_SetFieldAccessWatch(f->e, k, x), 0);
  assert_int_equal(g_watch, DDMC_WATCH_ACCESS);
  assert_int_equal(ddmc__jv_jt_SetFieldModificationWatch(f->e, k, x), 0);
  assert_int_equal(g_watch, DDMC_WATCH_ACCESS | DDMC_WATCH_MODIFY);
  assert_int_equal(ddmc__jv_jt_SetFieldAccessWatch(f->e, k, x), JVMTI_ERROR_DUPLICATE);
  assert_int_equal(ddmc__jv_jt_ClearFieldAccessWatch(f->e, k, x), 0);
  assert_int_equal(g_watch, DDMC_WATCH_MODIFY);
  assert_int_equal(ddmc__jv_jt_ClearFieldAccessWatch(f->e, k, x), JVMTI_ERROR_NOT_FOUND);
  assert_int_equal(ddmc__jv_jt_SetFieldAccessWatch(f->e, k, (jfieldID)(uintptr_t)0x555), JVMTI_ERROR_INVALID_FIELDID);
  assert_int_equal(ddmc__jv_jt_SetFieldAccessWatch(f->e, NULL, x), JVMTI_ERROR_INVALID_CLASS);
  /* DisposeEnvironment takes the environment's watches and breakpoints with it. */
  assert_int_equal(ddmc__jv_jt_SetBreakpoint(f->e, m, 5), 0);
  assert_int_equal(ddmc__jv_jt_DisposeEnvironment(f->e), 0);
  assert_int_equal(g_watch, 0);
  assert_int_equal(g_bp_clears, 2);
}

static void test_single_step_follows_enables(void **state) {
  fixture *f = *state;
  caps_and_live(f);
  jthread w = ddmc__jv_thread_local(f->jv, T_WORKER);
  assert_int_equal(ddmc__jv_jt_SetEventNotificationMode(f->e, JVMTI_ENABLE, JVMTI_EVENT_SINGLE_STEP, w), 0);
  assert_int_equal(g_stepping[T_WORKER], 1);
  assert_int_equal(g_stepping[T_MAIN], 0);
  assert_int_equal(ddmc__jv_jt_SetEventNotificationMode(f->e, JVMTI_ENABLE, JVMTI_EVENT_SINGLE_STEP, NULL), 0);
  assert_int_equal(g_stepping[T_MAIN], 1);
  assert_int_equal(ddmc__jv_jt_SetEventNotificationMode(f->e, JVMTI_DISABLE, JVMTI_EVENT_SINGLE_STEP, NULL), 0);
  assert_int_equal(g_stepping[T_MAIN], 0);
  assert_int_equal(g_stepping[T_WORKER], 1); /* still enabled for it alone */
  assert_int_equal(ddmc__jv_jt_SetEventNotificationMode(f->e, JVMTI_DISABLE, JVMTI_EVENT_SINGLE_STEP, w), 0);
  assert_int_equal(g_stepping[T_WORKER], 0);
}

/* ---- JNI NewObject, NewObjectV and NewObjectA: the arguments by the constructor's descriptor */

static jobject new_v(ddmc__jv_jnienv *env, jclass c, jmethodID m, ...) {
  va_list ap;
  va_start(ap, m);
  jobject o = ddmc__jv_jni_NewObjectV(env, c, m, ap);
  va_end(ap);
  return o;
}

static void check_ctor_args(ddmc_ref other) {
  assert_int_equal(g_ctor_nargs, 5);
  assert_int_equal(g_ctor_args[0].tag, 'J');
  assert_true(g_ctor_args[0].u.j == -5000000000LL);
  assert_int_equal(g_ctor_args[1].tag, 'F');
  assert_true(g_ctor_args[1].u.f == 1.5f);
  assert_int_equal(g_ctor_args[2].tag, 'L');
  assert_int_equal(g_ctor_args[2].u.l, other);
  assert_int_equal(g_ctor_args[3].tag, 'B');
  assert_int_equal(g_ctor_args[3].u.i, -7);
  assert_int_equal(g_ctor_args[4].tag, 'D');
  assert_true(g_ctor_args[4].u.d == 2.25);
}

static void test_new_object_arguments(void **state) {
  fixture *f = *state;
  caps_and_live(f);
  ddmc__jv_jnienv *env = ddmc__jv_jni_env(f->jv);
  jclass a = ddmc__jv_ref_new(f->jv, DDMC__CELL_GLOBAL, 0x300, C_A, 0);
  jobject other = ddmc__jv_ref_new(f->jv, DDMC__CELL_GLOBAL, 0x77, 0, 0);
  jmethodID init = ddmc__jv_method_id(f->jv, C_A, 1), plain = ddmc__jv_method_id(f->jv, C_A, 0);
  ddmc__jv_set_self(T_MAIN);
  ddmc__jv_cell cell;
  jobject o = ddmc__jv_jni_NewObject(env, a, init, (jlong)-5000000000LL, 1.5, other, (jint)-7, 2.25);
  assert_non_null(o);
  assert_int_equal(ddmc__jv_ref_get(f->jv, o, &cell), 0);
  assert_int_equal(cell.ref, 0x500);
  check_ctor_args(0x77);
  memset(g_ctor_args, 0, sizeof(g_ctor_args));
  assert_non_null(new_v(env, a, init, (jlong)-5000000000LL, 1.5, other, (jint)-7, 2.25));
  check_ctor_args(0x77);
  memset(g_ctor_args, 0, sizeof(g_ctor_args));
  jvalue av[5] = {{.j = -5000000000LL}, {.f = 1.5f}, {.l = NULL}, {.b = -7}, {.d = 2.25}};
  assert_non_null(ddmc__jv_jni_NewObjectA(env, a, init, av));
  check_ctor_args(0); /* a null reference */
  /* Bad input: no argument array for a constructor that takes five, a method that is not a
   * constructor, a stale reference: each a pending exception, and the VM never asked. */
  int calls = g_ctor_calls;
  assert_null(ddmc__jv_jni_NewObjectA(env, a, init, NULL));
  assert_true(ddmc__jv_jni_ExceptionCheck(env));
  ddmc__jv_jni_ExceptionClear(env);
  assert_null(ddmc__jv_jni_NewObject(env, a, plain));
  assert_true(ddmc__jv_jni_ExceptionCheck(env));
  ddmc__jv_jni_ExceptionClear(env);
  av[2].l = (jobject)(uintptr_t)0xdead0;
  assert_null(ddmc__jv_jni_NewObjectA(env, a, init, av));
  assert_true(ddmc__jv_jni_ExceptionCheck(env));
  ddmc__jv_jni_ExceptionClear(env);
  assert_int_equal(g_ctor_calls, calls);
  ddmc__jv_set_self(0);
}

/* ---- raw monitors: a notify wakes a thread that was waiting, not one that waits after it */

typedef struct rm_arg {
  fixture *f;
  jrawMonitorID m;
  int waiting, woke; /* under m */
} rm_arg;

static void *rm_waiter(void *p) {
  rm_arg *a = p;
  assert_int_equal(ddmc__jv_jt_RawMonitorEnter(a->f->e, a->m), 0);
  a->waiting = 1;
  assert_int_equal(ddmc__jv_jt_RawMonitorWait(a->f->e, a->m, 0), 0);
  a->woke = 1;
  assert_int_equal(ddmc__jv_jt_RawMonitorExit(a->f->e, a->m), 0);
  return NULL;
}

/* The VM's monitor events are on while some environment enables any of the four (globally or for
 * a thread), and the switch is told only when that changes (bridge.h, set_monitor_events). */
static void test_monitor_events_follow_enables(void **state) {
  fixture *f = *state;
  caps_and_live(f);
  jthread w = ddmc__jv_thread_local(f->jv, T_WORKER);
  assert_int_equal(ddmc__jv_jt_SetEventNotificationMode(f->e, JVMTI_ENABLE, JVMTI_EVENT_MONITOR_WAIT, NULL), 0);
  assert_int_equal(g_monitor_calls, 1);
  assert_int_equal(g_monitor_on, 1);
  assert_int_equal(ddmc__jv_jt_SetEventNotificationMode(f->e, JVMTI_ENABLE, JVMTI_EVENT_MONITOR_CONTENDED_ENTER, w), 0);
  assert_int_equal(ddmc__jv_jt_SetEventNotificationMode(f->e, JVMTI_DISABLE, JVMTI_EVENT_MONITOR_WAIT, NULL), 0);
  assert_int_equal(g_monitor_calls, 1); /* the worker's CONTENDED_ENTER keeps them on */
  assert_int_equal(ddmc__jv_jt_SetEventNotificationMode(f->e, JVMTI_DISABLE, JVMTI_EVENT_MONITOR_CONTENDED_ENTER, w), 0);
  assert_int_equal(g_monitor_calls, 2);
  assert_int_equal(g_monitor_on, 0);
  /* other events leave it alone */
  assert_int_equal(ddmc__jv_jt_SetEventNotificationMode(f->e, JVMTI_ENABLE, JVMTI_EVENT_THREAD_START, NULL), 0);
  assert_int_equal(g_monitor_calls, 2);
  /* DisposeEnvironment takes its enables with it */
  assert_int_equal(ddmc__jv_jt_SetEventNotificationMode(f->e, JVMTI_ENABLE, JVMTI_EVENT_MONITOR_WAITED, NULL), 0);
  assert_int_equal(g_monitor_calls, 3);
  assert_int_equal(ddmc__jv_jt_DisposeEnvironment(f->e), 0);
  assert_int_equal(g_monitor_calls, 4);
  assert_int_equal(g_monitor_on, 0);
}

static void test_raw_monitor_notify_goes_to_a_waiter(void **state) {
  fixture *f = *state;
  rm_arg a = {f, NULL, 0, 0};
  assert_int_equal(ddmc__jv_jt_CreateRawMonitor(f->e, "rm", &a.m), 0);
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, rm_waiter, &a), 0);
  for (int waiting = 0; !waiting;) { /* it sets waiting, then gives the monitor up only by waiting */
    assert_int_equal(ddmc__jv_jt_RawMonitorEnter(f->e, a.m), 0);
    waiting = a.waiting;
    assert_int_equal(ddmc__jv_jt_RawMonitorExit(f->e, a.m), 0);
  }
  assert_int_equal(ddmc__jv_jt_RawMonitorEnter(f->e, a.m), 0);
  assert_int_equal(ddmc__jv_jt_RawMonitorNotify(f->e, a.m), 0);
  /* This thread waits after the notify: the notify is not its to take (it once was, and the
   * waiter above then slept for ever: threadwatch's VMDeath lost its agent thread that way). */
  int64_t t0 = mono_ms();
  assert_int_equal(ddmc__jv_jt_RawMonitorWait(f->e, a.m, 200), 0);
  assert_true(mono_ms() - t0 >= 150);
  int woke = 0;
  for (int i = 0; i < 500 && !woke; i++) {
    woke = a.woke;
    assert_int_equal(ddmc__jv_jt_RawMonitorWait(f->e, a.m, 10), 0);
  }
  assert_true(woke || a.woke);
  assert_int_equal(ddmc__jv_jt_RawMonitorExit(f->e, a.m), 0);
  pthread_join(th, NULL);
  assert_int_equal(ddmc__jv_jt_DestroyRawMonitor(f->e, a.m), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_suspend_shared_with_debugger, setup, teardown),
      cmocka_unit_test_setup_teardown(test_breakpoints_and_watches, setup, teardown),
      cmocka_unit_test_setup_teardown(test_single_step_follows_enables, setup, teardown),
      cmocka_unit_test_setup_teardown(test_monitor_events_follow_enables, setup, teardown),
      cmocka_unit_test_setup_teardown(test_raw_monitor_notify_goes_to_a_waiter, setup, teardown),
      cmocka_unit_test_setup_teardown(test_new_object_arguments, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
