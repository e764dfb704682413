/* SPDX-License-Identifier: Apache-2.0 */
/* Stepping (src/debugger/step.c): where a step by line or instruction ends (over, into, out),
 * methods without lines, and SINGLE_STEP requests run against posted locations. */
#include "dbg_fixture.h"

/* ddmc__dbg_step_stops against the fake's line table of compute: lines {0: 20, 5: 21, 8: 22}. */
static void test_step_stops(void **state) {
  (void)state;
  ddmc__dbg *d = F->d;
  ddmc__dbg_step s;
  memset(&s, 0, sizeof(s));
  s.start = (ddmc_location){FD_C_DEBUG, FD_M_COMPUTE, 5};
  s.start_depth = 1;
  s.start_line = 21;
  assert_int_equal(ddmc__dbg_line_of(d, &s.start), 21);
  ddmc_location l6 = {FD_C_DEBUG, FD_M_COMPUTE, 6}, l8 = {FD_C_DEBUG, FD_M_COMPUTE, 8},
                l0 = {FD_C_DEBUG, FD_M_COMPUTE, 0}, m4 = {FD_C_DEBUG, FD_M_MAIN, 4};
  assert_int_equal(ddmc__dbg_line_of(d, &l6), 21);
  assert_int_equal(ddmc__dbg_line_of(d, &l8), 22);
  assert_int_equal(ddmc__dbg_line_of(d, &m4), 11);
  ddmc_location before = {FD_C_DEBUG, FD_M_COMPUTE, -1};
  assert_int_equal(ddmc__dbg_line_of(d, &before), -1);
  /* LINE OVER */
  s.size = 1;
  s.depth = 1;
  assert_false(ddmc__dbg_step_stops(d, &s, &l6, 1)); /* same line */
  assert_true(ddmc__dbg_step_stops(d, &s, &l8, 1));  /* next line */
  assert_true(ddmc__dbg_step_stops(d, &s, &l0, 1));  /* a jump back to another line */
  assert_false(ddmc__dbg_step_stops(d, &s, &m4, 2)); /* inside a call */
  assert_true(ddmc__dbg_step_stops(d, &s, &m4, 0));  /* the frame returned */
  /* LINE INTO: stops inside a call with line information... */
  s.depth = 0;
  assert_true(ddmc__dbg_step_stops(d, &s, &m4, 2));
  assert_false(ddmc__dbg_step_stops(d, &s, &l6, 1));
  /* LINE OUT: only when the frame returned */
  s.depth = 2;
  assert_false(ddmc__dbg_step_stops(d, &s, &l8, 1));
  assert_false(ddmc__dbg_step_stops(d, &s, &m4, 2));
  assert_true(ddmc__dbg_step_stops(d, &s, &m4, 0));
  /* MIN: by instruction */
  s.size = 0;
  s.depth = 1;
  assert_true(ddmc__dbg_step_stops(d, &s, &l6, 1));
  assert_false(ddmc__dbg_step_stops(d, &s, &s.start, 1));
  s.depth = 0;
  assert_true(ddmc__dbg_step_stops(d, &s, &m4, 2));
  /* the same index in another method at the same depth: a different place */
  s.size = 1;
  s.depth = 1;
  ddmc_location other = {FD_C_DEBUG, FD_M_MAIN, 5};
  assert_true(ddmc__dbg_step_stops(d, &s, &other, 1));
  /* a request that stays (no Count) steps on from where it ended */
  ddmc__dbg_step_restart(d, &s, &other, 1);
  assert_false(ddmc__dbg_step_stops(d, &s, &other, 1));
  assert_true(ddmc__dbg_step_stops(d, &s, &m4, 0));
}

/* ...and INTO a method without line information does not stop there (a fresh debugger: the
 * line cache is per session). */
static void test_step_into_no_lines(void **state) {
  (void)state;
  atomic_store(&F->absent_info, 1);
  ddmc__dbg_step s;
  memset(&s, 0, sizeof(s));
  s.size = 1;
  s.depth = 0;
  s.start = (ddmc_location){FD_C_DEBUG, FD_M_COMPUTE, 5};
  s.start_depth = 1;
  s.start_line = 21;
  ddmc_location m4 = {FD_C_DEBUG, FD_M_MAIN, 4};
  assert_false(ddmc__dbg_step_stops(F->d, &s, &m4, 2));
  assert_true(ddmc__dbg_step_stops(F->d, &s, &m4, 0));
}

static void test_single_step_requests(void **state) {
  (void)state;
  /* A running thread (an IDE resumed a stale event set, then steps): accepted as libjdwp does.
   * The thread is held while the step is armed (one suspend_thread, stepping switched on, one
   * resume_thread) and runs on; the step starts where it stood, compute:5 (line 21). */
  int32_t id = step_req(FD_T_MAIN, 1, 1, 0, 0);
  assert_int_equal(atomic_load(&F->n_suspend), 1);
  assert_int_equal(atomic_load(&F->n_resume), 1);
  assert_int_equal(atomic_load(&F->step_on_running), 0);
  assert_int_equal(atomic_load(&F->stepping[FD_T_MAIN]), 1);
  assert_int_equal(atomic_load(&F->vm_suspended[FD_T_MAIN]), 0);
  assert_int_equal(ddmc_dbg_suspend_count(F->fv.vm, FD_T_MAIN), 0);
  assert_int_equal(post(FD_T_MAIN, FD_M_COMPUTE, 6, 1, 0), 0);
  assert_int_equal(events(), 0);
  assert_int_equal(post(FD_T_MAIN, FD_M_COMPUTE, 8, 1, 0), 0);
  assert_int_equal(events(), 1);
  assert_int_equal(g_comp[0].e[0].req, id);
  assert_int_equal(clear_req(DDMC_EV_SINGLE_STEP, id), 0);
  assert_int_equal(atomic_load(&F->stepping[FD_T_MAIN]), 0);
  /* a thread the VM cannot hold: its error, nothing armed */
  atomic_store(&F->fail_suspend, DDMC_JDWP_INVALID_THREAD);
  step_req(FD_T_WORKER, 1, 1, 0, DDMC_JDWP_INVALID_THREAD);
  assert_int_equal(atomic_load(&F->stepping[FD_T_WORKER]), 0);
  atomic_store(&F->fail_suspend, 0);
  assert_int_equal(run_id(11, 2, tid(FD_T_MAIN), NULL), 0);
  /* bad size / depth, no Step modifier */
  step_req(FD_T_MAIN, 2, 1, 0, DDMC_JDWP_ILLEGAL_ARGUMENT);
  step_req(FD_T_MAIN, 1, 3, 0, DDMC_JDWP_ILLEGAL_ARGUMENT);
  assert_int_equal(set_req(DDMC_EV_SINGLE_STEP, 0, NULL, 0, NULL), DDMC_JDWP_ILLEGAL_ARGUMENT);
  /* LINE OVER from compute:5 (line 21, depth 1) */
  id = step_req(FD_T_MAIN, 1, 1, 0, 0);
  assert_int_equal(atomic_load(&F->stepping[FD_T_MAIN]), 1);
  step_req(FD_T_MAIN, 1, 1, 0, DDMC_JDWP_DUPLICATE);
  /* the thread runs (the debugger resumes it) and reports instructions */
  assert_int_equal(run_id(11, 3, tid(FD_T_MAIN), NULL), 0);
  assert_int_equal(post(FD_T_MAIN, FD_M_COMPUTE, 6, 1, 0), 0);
  assert_int_equal(post(FD_T_MAIN, FD_M_INIT, 0, 2, DDMC_POST_METHOD_ENTRY), 0); /* a call */
  assert_int_equal(post(FD_T_WORKER, FD_M_COMPUTE, 8, 1, 0), 0);                /* another thread */
  assert_int_equal(events(), 0);
  assert_int_equal(post(FD_T_MAIN, FD_M_COMPUTE, 8, 1, 0), 0);
  assert_int_equal(events(), 1);
  assert_int_equal(g_comp[0].e[0].kind, DDMC_EV_SINGLE_STEP);
  assert_int_equal(g_comp[0].e[0].req, id);
  assert_true(g_comp[0].e[0].index == 8);
  /* without a Count the request stays (JDWP, as HotSpot): the next step, from compute:8, ends
   * when the frame returns; the same location again is no new step */
  assert_int_equal(post(FD_T_MAIN, FD_M_COMPUTE, 8, 1, 0), 0);
  assert_int_equal(events(), 0);
  assert_int_equal(post(FD_T_MAIN, FD_M_COMPUTE, 0, 0, 0), 0);
  assert_int_equal(events(), 1);
  assert_int_equal(g_comp[0].e[0].req, id);
  assert_int_equal(clear_req(DDMC_EV_SINGLE_STEP, id), 0);
  assert_int_equal(atomic_load(&F->stepping[FD_T_MAIN]), 0);
  /* OUT from the Worker's compute (depth 2 of 3 frames... it steps out of frame 0) */
  assert_int_equal(run_id(11, 2, tid(FD_T_WORKER), NULL), 0);
  id = step_req(FD_T_WORKER, 1, 2, 0, 0);
  assert_int_equal(run_id(11, 3, tid(FD_T_WORKER), NULL), 0);
  assert_int_equal(post(FD_T_WORKER, FD_M_COMPUTE, 9, 2, 0), 0);
  assert_int_equal(post(FD_T_WORKER, FD_M_MAIN, 0, 3, 0), 0);
  assert_int_equal(events(), 0);
  assert_int_equal(post(FD_T_WORKER, FD_M_COMPUTE, 6, 1, 0), 0);
  assert_int_equal(events(), 1);
  /* a step with ClassExclude: no stop in an excluded class */
  assert_int_equal(clear_req(DDMC_EV_SINGLE_STEP, id), 0);
  assert_int_equal(run_id(11, 2, tid(FD_T_MAIN), NULL), 0);
  body m = {.n = 0};
  b_u8(&m, DDMC__MOD_STEP);
  b_u64(&m, tid(FD_T_MAIN));
  b_u32(&m, 0);
  b_u32(&m, 0);
  b_u8(&m, DDMC__MOD_CLASS_EXCLUDE);
  b_str(&m, "java.*");
  assert_int_equal(set_req(DDMC_EV_SINGLE_STEP, 0, &m, 2, &id), 0);
  assert_int_equal(run_id(11, 3, tid(FD_T_MAIN), NULL), 0);
  ddmc_location in_string = {FD_C_STRING, 0, 0};
  assert_int_equal(ddmc_post_location(F->fv.vm, FD_T_MAIN, &in_string, 2, 0, 0), 0);
  assert_int_equal(events(), 0);
  assert_int_equal(post(FD_T_MAIN, FD_M_INIT, 0, 2, 0), 0);
  assert_int_equal(events(), 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_step_stops, setup, teardown),
      cmocka_unit_test_setup_teardown(test_step_into_no_lines, setup, teardown),
      cmocka_unit_test_setup_teardown(test_single_step_requests, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
