/* SPDX-License-Identifier: Apache-2.0 */
/* The lock contract of the bridge is checked (debug builds; src/bridge_check.h): an op runs under
 * the library locks its comment in bridge.h names, and a call under any other library lock aborts
 * with the op's name. Built only where the check is compiled in (no NDEBUG). */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "fakebridge.h"
#include "vm_int.h"

#ifndef DDMC__LOCK_CHECK
#error "test_lockcheck needs a build without NDEBUG"
#endif

/* The tests' one fake bridge, without the debugger: the ops are called straight, as a client of
 * the bridge calls them, under the locks each test takes. */
static fakebridge g_fb;
static unsigned g_suspend_held;

static void on_hook(void *arg, int where, uint32_t thread) {
  (void)arg;
  (void)thread;
  if (where == FD_HOOK_SUSPEND) g_suspend_held = ddmc__locks_held(DDMC__LOCK_SUSPEND);
}

static ddmc_vm *new_vm(void) {
  assert_int_equal(fakebridge_new(&g_fb, FAKEBRIDGE_NO_DEBUGGER | FAKEBRIDGE_NO_SESSION), 0);
  g_fb.hook = on_hook;
  g_suspend_held = 0;
  return g_fb.fv.vm;
}

/* Runs fn in a child; returns its stderr and whether it died of SIGABRT. */
static int dies_of_abort(void (*fn)(ddmc_vm *), ddmc_vm *vm, char *err, size_t n) {
  int p[2];
  assert_int_equal(pipe(p), 0);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    dup2(p[1], 2);
    fn(vm);
    _exit(0);
  }
  close(p[1]);
  ssize_t got = read(p[0], err, n - 1);
  err[got > 0 ? got : 0] = '\0';
  close(p[0]);
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}

static void thread_info_under_leaf(ddmc_vm *vm) {
  pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  ddmc_thread_detail d;
  ddmc__lock(&m);
  ddmc__bridge(vm)->thread_info(vm->bridge_data, 1, &d);
}

static void thread_info_under_switches(ddmc_vm *vm) {
  pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  ddmc_thread_detail d;
  ddmc__lock_role(&m, DDMC__LOCK_SWITCHES);
  ddmc__bridge(vm)->thread_info(vm->bridge_data, 1, &d);
}

static void breakpoint_under_suspension(ddmc_vm *vm) {
  pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  ddmc_location loc = {1, 0, 0};
  ddmc__lock_role(&m, DDMC__LOCK_SUSPEND);
  ddmc__bridge(vm)->set_breakpoint(vm->bridge_data, &loc);
}

static void test_allowed_locks_pass(void **state) {
  (void)state;
  ddmc_vm *vm = new_vm();
  ddmc_thread_detail d;
  assert_int_equal(ddmc__bridge(vm)->thread_info(vm->bridge_data, FD_T_MAIN, &d), 0); /* no lock */
  assert_string_equal(d.name, "main");
  ddmc_location loc = {FD_C_DEBUG, FD_M_COMPUTE, 5};
  assert_int_equal(ddmc__ctl_breakpoint(vm, &loc, 1), 0); /* under the switch lock, as allowed */
  assert_int_equal(ddmc__ctl_suspend(vm, FD_T_MAIN, 1), 0); /* vmctl itself holds no lock here */
  assert_int_equal(atomic_load(&g_fb.n_set_bp), 1);
  assert_int_equal(g_suspend_held, 0);
  assert_int_equal(ddmc__ctl_suspend(vm, FD_T_MAIN, 0), 0);
  pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER; /* what the debugger does: suspend under sus_lock */
  ddmc__lock_role(&m, DDMC__LOCK_SUSPEND);
  assert_int_equal(ddmc__ctl_suspend(vm, FD_T_MAIN, 1), 0);
  assert_int_equal(ddmc__bridge(vm)->thread_info(vm->bridge_data, FD_T_MAIN, &d), 0);
  ddmc__unlock_role(&m, DDMC__LOCK_SUSPEND);
  assert_int_equal(g_suspend_held, 1);
  assert_int_equal(atomic_load(&g_fb.n_suspend), 2);
  assert_int_equal(ddmc__locks_held(DDMC__LOCK_SUSPEND), 0);
  assert_int_equal(atomic_load(&g_fb.bad_calls), 0);
  fakebridge_free(&g_fb);
}

static void test_forbidden_locks_abort(void **state) {
  (void)state;
  ddmc_vm *vm = new_vm();
  char err[512];
  assert_true(dies_of_abort(thread_info_under_leaf, vm, err, sizeof(err)));
  assert_non_null(strstr(err, "bridge op thread_info"));
  assert_non_null(strstr(err, "1 leaf"));
  assert_true(dies_of_abort(thread_info_under_switches, vm, err, sizeof(err)));
  assert_non_null(strstr(err, "1 switch"));
  assert_true(dies_of_abort(breakpoint_under_suspension, vm, err, sizeof(err)));
  assert_non_null(strstr(err, "bridge op set_breakpoint"));
  fakebridge_free(&g_fb);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_allowed_locks_pass),
      cmocka_unit_test(test_forbidden_locks_abort),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
