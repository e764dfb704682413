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

/* ../fakebridge.h's program: Debug's main (code 0..20) and its static int counter; a synthetic
 * class whose method 1 is the constructor A(long, float, A, byte, double). */
#define T_MAIN FD_T_MAIN
#define T_WORKER FD_T_WORKER
#define C_A FD_C_DEBUG
#define M_A FD_M_MAIN
#define F_A FD_F_COUNTER
#define C_NEW (FD_C_SYNTH + 1)

static int setup(void **state) {
  fixture *f = jv_fixture_new(FAKEBRIDGE_MONITOR_EVENTS | FAKEBRIDGE_SYNTH_CLASSES);
  f->fb.synth.ctor = 1;
  f->fb.synth.ctor_sig = "(JFLA;BD)V"; /* A(long, float, A, byte, double) */
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
  assert_int_equal(atomic_load(&f->fb.n_suspend), 1);
  assert_int_equal(ddmc__jv_jt_SuspendThread(f->e, w), JVMTI_ERROR_THREAD_SUSPENDED);
  jint st = 0;
  assert_int_equal(ddmc__jv_jt_GetThreadState(f->e, w, &st), 0);
  assert_true(st & JVMTI_THREAD_STATE_SUSPENDED);
  /* The debugger suspends it too (its count 0 -> 1, through vmctl's arbiter): the VM is not asked
   * again. */
  assert_int_equal(ddmc__ctl_suspend(f->vm, T_WORKER, 1), 0);
  assert_int_equal(atomic_load(&f->fb.n_suspend), 1);
  /* The agent lets go: the debugger still holds it. */
  assert_int_equal(ddmc__jv_jt_ResumeThread(f->e, w), 0);
  assert_int_equal(atomic_load(&f->fb.n_resume), 0);
  /* The debugger lets go: now the VM resumes it, once. */
  assert_int_equal(ddmc__ctl_suspend(f->vm, T_WORKER, 0), 0);
  assert_int_equal(atomic_load(&f->fb.n_resume), 1);
  /* Locals: only of the calling thread or a suspended one. */
  ddmc__jv_caps lv;
  memset(&lv, 0, sizeof(lv));
  ddmc__jv_cap_set(&lv, DDMC_CAP_can_access_local_variables);
  assert_int_equal(ddmc__jv_jt_AddCapabilities(f->e, &lv), 0);
  jint v;
  assert_int_equal(ddmc__jv_jt_GetLocalInt(f->e, w, 0, 1, &v), JVMTI_ERROR_THREAD_NOT_SUSPENDED);
  assert_int_equal(ddmc__jv_jt_SetLocalInt(f->e, w, 0, 1, 1), JVMTI_ERROR_THREAD_NOT_SUSPENDED);
  assert_int_equal(ddmc__jv_jt_SuspendThread(f->e, w), 0);
  assert_int_equal(ddmc__jv_jt_GetLocalInt(f->e, w, 0, 1, &v), 0);
  assert_int_equal(v, 1); /* compute(1)'s n */
  assert_int_equal(ddmc__jv_jt_ResumeThread(f->e, w), 0);
  /* The list forms: one result per thread, a bad handle answered in place. */
  jthread list[2] = {w, (jthread)(uintptr_t)0x7777};
  jvmtiError res[2];
  assert_int_equal(ddmc__jv_jt_SuspendThreadList(f->e, 2, list, res), 0);
  assert_int_equal(res[0], JVMTI_ERROR_NONE);
  assert_int_equal(res[1], JVMTI_ERROR_INVALID_THREAD);
  assert_int_equal(ddmc__jv_jt_ResumeThreadList(f->e, 2, list, res), 0);
  assert_int_equal(res[0], JVMTI_ERROR_NONE);
  assert_int_equal(atomic_load(&f->fb.n_resume), 3);
  assert_int_equal(ddmc__jv_jt_SuspendThreadList(f->e, 1, NULL, res), JVMTI_ERROR_NULL_POINTER);
  assert_int_equal(ddmc__jv_jt_SuspendThreadList(f->e, -1, list, res), JVMTI_ERROR_ILLEGAL_ARGUMENT);
}

static void test_breakpoints_and_watches(void **state) {
  fixture *f = *state;
  jmethodID m = ddmc__jv_method_id(f->jv, C_A, M_A);
  jclass k = ddmc__jv_class_local(f->jv, C_A);
  jfieldID x = ddmc__jv_field_id(f->jv, C_A, F_A);
  assert_int_equal(ddmc__jv_jt_SetBreakpoint(f->e, m, 3), JVMTI_ERROR_WRONG_PHASE);
  caps_and_live(f);
  assert_int_equal(ddmc__jv_jt_SetBreakpoint(f->e, m, 21), JVMTI_ERROR_INVALID_LOCATION);
  assert_int_equal(ddmc__jv_jt_SetBreakpoint(f->e, (jmethodID)(uintptr_t)0x999, 3), JVMTI_ERROR_INVALID_METHODID);
  assert_int_equal(ddmc__jv_jt_SetBreakpoint(f->e, m, 3), 0);
  assert_int_equal(ddmc__jv_jt_SetBreakpoint(f->e, m, 3), JVMTI_ERROR_DUPLICATE);
  /* A debugger's breakpoint at the same place: one VM breakpoint, kept until both clear. */
  ddmc_location loc = {C_A, M_A, 3};
  assert_int_equal(ddmc__ctl_breakpoint(f->vm, &loc, 1), 0);
  assert_int_equal(atomic_load(&f->fb.n_set_bp), 1);
  assert_int_equal(ddmc__jv_jt_ClearBreakpoint(f->e, m, 3), 0);
  assert_int_equal(atomic_load(&f->fb.n_clear_bp), 0);
  assert_int_equal(ddmc__jv_jt_ClearBreakpoint(f->e, m, 3), JVMTI_ERROR_NOT_FOUND);
  assert_int_equal(ddmc__ctl_breakpoint(f->vm, &loc, 0), 0);
  assert_int_equal(atomic_load(&f->fb.n_clear_bp), 1);
  /* Watches: access and modification, each counted; the VM sees the mask. */
  assert_int_equal(ddmc__jv_jt_SetFieldAccessWatch(f->e, k, x), 0);
  assert_int_equal(atomic_load(&f->fb.last_watch_mask), DDMC_WATCH_ACCESS);
  assert_int_equal(ddmc__jv_jt_SetFieldModificationWatch(f->e, k, x), 0);
  assert_int_equal(atomic_load(&f->fb.last_watch_mask), DDMC_WATCH_ACCESS | DDMC_WATCH_MODIFY);
  assert_int_equal(ddmc__jv_jt_SetFieldAccessWatch(f->e, k, x), JVMTI_ERROR_DUPLICATE);
  assert_int_equal(ddmc__jv_jt_ClearFieldAccessWatch(f->e, k, x), 0);
  assert_int_equal(atomic_load(&f->fb.last_watch_mask), DDMC_WATCH_MODIFY);
  assert_int_equal(ddmc__jv_jt_ClearFieldAccessWatch(f->e, k, x), JVMTI_ERROR_NOT_FOUND);
  assert_int_equal(ddmc__jv_jt_SetFieldAccessWatch(f->e, k, (jfieldID)(uintptr_t)0x555), JVMTI_ERROR_INVALID_FIELDID);
  assert_int_equal(ddmc__jv_jt_SetFieldAccessWatch(f->e, NULL, x), JVMTI_ERROR_INVALID_CLASS);
  /* DisposeEnvironment takes the environment's watches and breakpoints with it. */
  assert_int_equal(ddmc__jv_jt_SetBreakpoint(f->e, m, 5), 0);
  assert_int_equal(ddmc__jv_jt_DisposeEnvironment(f->e), 0);
  assert_int_equal(atomic_load(&f->fb.last_watch_mask), 0);
  assert_int_equal(atomic_load(&f->fb.n_clear_bp), 2);
}

static void test_single_step_follows_enables(void **state) {
  fixture *f = *state;
  caps_and_live(f);
  jthread w = ddmc__jv_thread_local(f->jv, T_WORKER);
  assert_int_equal(ddmc__jv_jt_SetEventNotificationMode(f->e, JVMTI_ENABLE, JVMTI_EVENT_SINGLE_STEP, w), 0);
  assert_int_equal(atomic_load(&f->fb.stepping[T_WORKER]), 1);
  assert_int_equal(atomic_load(&f->fb.stepping[T_MAIN]), 0);
  assert_int_equal(ddmc__jv_jt_SetEventNotificationMode(f->e, JVMTI_ENABLE, JVMTI_EVENT_SINGLE_STEP, NULL), 0);
  assert_int_equal(atomic_load(&f->fb.stepping[T_MAIN]), 1);
  assert_int_equal(ddmc__jv_jt_SetEventNotificationMode(f->e, JVMTI_DISABLE, JVMTI_EVENT_SINGLE_STEP, NULL), 0);
  assert_int_equal(atomic_load(&f->fb.stepping[T_MAIN]), 0);
  assert_int_equal(atomic_load(&f->fb.stepping[T_WORKER]), 1); /* still enabled for it alone */
  assert_int_equal(ddmc__jv_jt_SetEventNotificationMode(f->e, JVMTI_DISABLE, JVMTI_EVENT_SINGLE_STEP, w), 0);
  assert_int_equal(atomic_load(&f->fb.stepping[T_WORKER]), 0);
}

/* ---- JNI NewObject, NewObjectV and NewObjectA: the arguments by the constructor's descriptor */

static jobject new_v(ddmc__jv_jnienv *env, jclass c, jmethodID m, ...) {
  va_list ap;
  va_start(ap, m);
  jobject o = ddmc__jv_jni_NewObjectV(env, c, m, ap);
  va_end(ap);
  return o;
}

static void check_ctor_args(fixture *f, ddmc_ref other) {
  const ddmc_value *g_ctor_args = f->fb.last_invoke_args;
  assert_int_equal(f->fb.last_invoke_nargs, 5);
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
  jclass a = ddmc__jv_ref_new(f->jv, DDMC__CELL_GLOBAL, 0x300, C_NEW, 0);
  jobject other = ddmc__jv_ref_new(f->jv, DDMC__CELL_GLOBAL, 0x77, 0, 0);
  jmethodID init = ddmc__jv_method_id(f->jv, C_NEW, 1), plain = ddmc__jv_method_id(f->jv, C_NEW, 0);
  ddmc__jv_set_self(T_MAIN);
  ddmc__jv_cell cell;
  jobject o = ddmc__jv_jni_NewObject(env, a, init, (jlong)-5000000000LL, 1.5, other, (jint)-7, 2.25);
  assert_non_null(o);
  assert_int_equal(ddmc__jv_ref_get(f->jv, o, &cell), 0);
  fd_object *made = fakebridge_object(&f->fb, cell.ref); /* the object the VM made */
  assert_non_null(made);
  assert_int_equal(made->cls, C_NEW);
  check_ctor_args(f, 0x77);
  memset(f->fb.last_invoke_args, 0, sizeof(f->fb.last_invoke_args));
  assert_non_null(new_v(env, a, init, (jlong)-5000000000LL, 1.5, other, (jint)-7, 2.25));
  check_ctor_args(f, 0x77);
  memset(f->fb.last_invoke_args, 0, sizeof(f->fb.last_invoke_args));
  jvalue av[5] = {{.j = -5000000000LL}, {.f = 1.5f}, {.l = NULL}, {.b = -7}, {.d = 2.25}};
  assert_non_null(ddmc__jv_jni_NewObjectA(env, a, init, av));
  check_ctor_args(f, 0); /* a null reference */
  /* Bad input: no argument array for a constructor that takes five, a method that is not a
   * constructor, a stale reference: each a pending exception, and the VM never asked. */
  int calls = atomic_load(&f->fb.n_invoke);
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
  assert_int_equal(atomic_load(&f->fb.n_invoke), calls);
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
  assert_int_equal(atomic_load(&f->fb.n_monitor_events), 1);
  assert_int_equal(atomic_load(&f->fb.monitor_events), 1);
  assert_int_equal(ddmc__jv_jt_SetEventNotificationMode(f->e, JVMTI_ENABLE, JVMTI_EVENT_MONITOR_CONTENDED_ENTER, w), 0);
  assert_int_equal(ddmc__jv_jt_SetEventNotificationMode(f->e, JVMTI_DISABLE, JVMTI_EVENT_MONITOR_WAIT, NULL), 0);
  assert_int_equal(atomic_load(&f->fb.n_monitor_events), 1); /* the worker's CONTENDED_ENTER keeps them on */
  assert_int_equal(ddmc__jv_jt_SetEventNotificationMode(f->e, JVMTI_DISABLE, JVMTI_EVENT_MONITOR_CONTENDED_ENTER, w), 0);
  assert_int_equal(atomic_load(&f->fb.n_monitor_events), 2);
  assert_int_equal(atomic_load(&f->fb.monitor_events), 0);
  /* other events leave it alone */
  assert_int_equal(ddmc__jv_jt_SetEventNotificationMode(f->e, JVMTI_ENABLE, JVMTI_EVENT_THREAD_START, NULL), 0);
  assert_int_equal(atomic_load(&f->fb.n_monitor_events), 2);
  /* DisposeEnvironment takes its enables with it */
  assert_int_equal(ddmc__jv_jt_SetEventNotificationMode(f->e, JVMTI_ENABLE, JVMTI_EVENT_MONITOR_WAITED, NULL), 0);
  assert_int_equal(atomic_load(&f->fb.n_monitor_events), 3);
  assert_int_equal(ddmc__jv_jt_DisposeEnvironment(f->e), 0);
  assert_int_equal(atomic_load(&f->fb.n_monitor_events), 4);
  assert_int_equal(atomic_load(&f->fb.monitor_events), 0);
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
