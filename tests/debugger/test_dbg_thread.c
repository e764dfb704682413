/* SPDX-License-Identifier: Apache-2.0 */
/* Threads (src/debugger/cmd_thread.c, threads.c): ThreadReference and ThreadGroupReference, frame
 * IDs and their epochs, Interrupt and Stop (with ArrayType.NewInstance), and suspension: debugger
 * suspend counts, event threads parked in their post call, a thread first met while the VM is
 * suspended, an event that suspends all. */
#include "dbg_fixture.h"

static void test_thread_reference(void **state) {
  (void)state;
  ddmc_reader r;
  uint64_t m = tid(FD_T_MAIN), w = tid(FD_T_WORKER);
  assert_int_equal(run_id(11, 1, m, &r), 0);
  assert_string_equal(rd_str(&r), "main");
  assert_int_equal(run_id(11, 1, w, &r), 0);
  assert_string_equal(rd_str(&r), "Worker");
  assert_int_equal(run_id(11, 4, w, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), DDMC_TS_SLEEPING);
  assert_int_equal(ddmc_read_u32(&r), 0);
  assert_int_equal(run_id(11, 5, m, &r), 0);
  assert_true(ddmc_read_u64(&r) == oid(FD_O_GROUP_MAIN));
  assert_int_equal(run_id(11, 15, m, &r), 0);
  assert_int_equal(ddmc_read_u8(&r), 0);

  /* Frames of a running thread. */
  assert_int_equal(run_id(11, 7, m, &r), DDMC_JDWP_THREAD_NOT_SUSPENDED);
  assert_int_equal(frames(FD_T_MAIN, 0, -1, &r), DDMC_JDWP_THREAD_NOT_SUSPENDED);

  assert_int_equal(run_id(11, 2, m, &r), 0);
  assert_int_equal(run_id(11, 4, m, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), DDMC_TS_RUNNING);
  assert_int_equal(ddmc_read_u32(&r), 1);
  assert_int_equal(run_id(11, 7, m, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 2);
  assert_int_equal(frames(FD_T_MAIN, 0, -1, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 2);
  uint64_t fr[2];
  static const uint32_t meth[] = {FD_M_COMPUTE, FD_M_MAIN};
  static const uint64_t index[] = {5, 12};
  for (int i = 0; i < 2; i++) {
    fr[i] = ddmc_read_u64(&r);
    assert_int_equal(ddmc_read_u8(&r), DDMC_TYPE_CLASS);
    assert_true(ddmc_read_u64(&r) == cid(FD_C_DEBUG));
    assert_true(ddmc_read_u64(&r) == mid(meth[i]));
    assert_true(ddmc_read_u64(&r) == index[i]);
  }
  assert_true(fr[0] != fr[1]);
  assert_int_equal(ddmc_reader_done(&r), 0);
  assert_int_equal(frames(FD_T_MAIN, 1, 1, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 1);
  assert_true(ddmc_read_u64(&r) == fr[1]);
  assert_int_equal(frames(FD_T_MAIN, 2, 0, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 0);
  assert_int_equal(frames(FD_T_MAIN, 3, 0, &r), DDMC_JDWP_INVALID_INDEX);
  assert_int_equal(frames(FD_T_MAIN, -1, 1, &r), DDMC_JDWP_INVALID_INDEX);
  /* a range past the frames: INVALID_LENGTH from a frame that exists, INVALID_INDEX from past the
   * last one (HotSpot's answer to jdb's (0, 1) of a frameless thread), as libjdwp answers */
  assert_int_equal(frames(FD_T_MAIN, 0, 3, &r), DDMC_JDWP_INVALID_LENGTH);
  assert_int_equal(frames(FD_T_MAIN, 1, -2, &r), DDMC_JDWP_INVALID_LENGTH);
  assert_int_equal(frames(FD_T_MAIN, 2, 1, &r), DDMC_JDWP_INVALID_INDEX);

  /* A frameID outlives neither a resume nor the same resume + suspend (the epoch). */
  body b = {.n = 0};
  b_u64(&b, m);
  b_u64(&b, fr[0]);
  assert_int_equal(run(16, 3, &b, &r), 0);
  assert_int_equal(run_id(11, 3, m, &r), 0);
  assert_int_equal(run(16, 3, &b, &r), DDMC_JDWP_THREAD_NOT_SUSPENDED);
  assert_int_equal(run_id(11, 2, m, &r), 0);
  assert_int_equal(run(16, 3, &b, &r), DDMC_JDWP_INVALID_FRAMEID);
  assert_int_equal(frames(FD_T_MAIN, 0, 1, &r), 0);
  ddmc_read_u32(&r);
  uint64_t fresh = ddmc_read_u64(&r);
  assert_true(fresh != fr[0]);
  b.n = 8;
  b_u64(&b, fresh);
  assert_int_equal(run(16, 3, &b, &r), 0);
  /* The frame of one thread on another (suspended) one: the epochs differ, or the depth is
   * checked against that thread's frames. */
  assert_int_equal(run_id(11, 2, w, &r), 0);
  b.n = 0;
  b_u64(&b, w);
  b_u64(&b, fresh);
  int rc = run(16, 3, &b, &r);
  assert_true(rc == 0 || rc == DDMC_JDWP_INVALID_FRAMEID);
  /* Forged frame IDs. */
  const uint64_t forged[] = {0, fresh + 2, fresh + 100, fresh & ~0xffffffffull, fresh | 0x80000000u, ~0ull};
  for (size_t i = 0; i < sizeof(forged) / sizeof(forged[0]); i++) {
    b.n = 0;
    b_u64(&b, m);
    b_u64(&b, forged[i]);
    assert_int_equal(run(16, 3, &b, &r), DDMC_JDWP_INVALID_FRAMEID);
  }
}

static void test_thread_groups(void **state) {
  (void)state;
  ddmc_reader r;
  uint64_t sys = oid(FD_O_GROUP_SYSTEM), mg = oid(FD_O_GROUP_MAIN);
  assert_int_equal(run_id(12, 1, sys, &r), 0);
  assert_string_equal(rd_str(&r), "system");
  assert_int_equal(run_id(12, 1, mg, &r), 0);
  assert_string_equal(rd_str(&r), "main");
  assert_int_equal(run_id(12, 2, mg, &r), 0);
  assert_true(ddmc_read_u64(&r) == sys);
  assert_int_equal(run_id(12, 2, sys, &r), 0);
  assert_true(ddmc_read_u64(&r) == 0);
  assert_int_equal(run_id(12, 3, mg, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 2);
  assert_true(ddmc_read_u64(&r) == tid(FD_T_MAIN));
  assert_true(ddmc_read_u64(&r) == tid(FD_T_WORKER));
  assert_int_equal(ddmc_read_u32(&r), 0);
  assert_int_equal(ddmc_reader_done(&r), 0);
  assert_int_equal(run_id(12, 3, sys, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 0); /* JDWP is internal */
  assert_int_equal(ddmc_read_u32(&r), 1);
  assert_true(ddmc_read_u64(&r) == mg);
  assert_int_equal(ddmc_reader_done(&r), 0);
  assert_int_equal(run_id(12, 1, oid(FD_O_DEBUG), &r), DDMC_JDWP_INVALID_THREAD_GROUP);
}

static void test_suspend_counts(void **state) {
  (void)state;
  ddmc_reader r;
  uint64_t m = tid(FD_T_MAIN), w = tid(FD_T_WORKER);
  assert_int_equal(run_id(11, 2, m, NULL), 0);
  assert_int_equal(run_id(11, 2, m, NULL), 0);
  assert_int_equal(run_id(11, 12, m, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 2);
  assert_int_equal(atomic_load(&F->n_suspend), 1);
  assert_int_equal(atomic_load(&F->vm_suspended[FD_T_MAIN]), 1);
  assert_int_equal(run_id(11, 3, m, NULL), 0);
  assert_int_equal(atomic_load(&F->n_resume), 0);
  assert_int_equal(run_id(11, 3, m, NULL), 0);
  assert_int_equal(atomic_load(&F->n_resume), 1);
  assert_int_equal(atomic_load(&F->vm_suspended[FD_T_MAIN]), 0);
  assert_int_equal(run_id(11, 3, m, NULL), 0); /* never below 0 */
  assert_int_equal(atomic_load(&F->n_resume), 1);
  assert_int_equal(run_id(11, 12, m, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 0);
  /* VirtualMachine.Suspend / Resume: every visible thread (not the internal one) */
  assert_int_equal(run(1, 8, NULL, NULL), 0);
  assert_int_equal(thr_count(FD_T_MAIN), 1);
  assert_int_equal(thr_count(FD_T_WORKER), 1);
  assert_int_equal(thr_count(FD_T_JDWP), 0);
  assert_int_equal(atomic_load(&F->n_suspend), 3);
  assert_int_equal(run_id(11, 2, m, NULL), 0);
  assert_int_equal(thr_count(FD_T_MAIN), 2);
  assert_int_equal(run(1, 9, NULL, NULL), 0);
  assert_int_equal(thr_count(FD_T_MAIN), 1);
  assert_int_equal(thr_count(FD_T_WORKER), 0);
  assert_int_equal(atomic_load(&F->vm_suspended[FD_T_WORKER]), 0);
  assert_int_equal(atomic_load(&F->vm_suspended[FD_T_MAIN]), 1);
  assert_int_equal(run(1, 9, NULL, NULL), 0);
  assert_int_equal(thr_count(FD_T_MAIN), 0);
  assert_int_equal(atomic_load(&F->n_resume), 3);
  assert_int_equal(run(1, 9, NULL, NULL), 0);
  assert_int_equal(atomic_load(&F->n_resume), 3);
  /* a VM that cannot suspend: the count stays 0 */
  atomic_store(&F->fail_suspend, DDMC_JDWP_THREAD_NOT_ALIVE);
  assert_int_equal(run_id(11, 2, w, NULL), DDMC_JDWP_THREAD_NOT_ALIVE);
  assert_int_equal(thr_count(FD_T_WORKER), 0);
  atomic_store(&F->fail_suspend, 0);
}

/* A VM with suspend_threads / resume_threads: VirtualMachine.Suspend and Resume make one call
 * for the threads whose count moves 0 -> 1 (1 -> 0), never one per thread; a thread the VM
 * could not stop keeps its count at 0, as with suspend_thread. */
static void test_suspend_all_in_bulk(void **state) {
  (void)state;
  assert_int_equal(run(1, 8, NULL, NULL), 0);
  assert_int_equal(atomic_load(&F->n_suspend_list), 1);
  assert_int_equal(atomic_load(&F->last_list_n), 2); /* main and worker, not the internal one */
  assert_int_equal(atomic_load(&F->n_suspend), 2);
  assert_int_equal(atomic_load(&F->vm_suspended[FD_T_MAIN]), 1);
  assert_int_equal(atomic_load(&F->vm_suspended[FD_T_WORKER]), 1);
  assert_int_equal(thr_count(FD_T_MAIN), 1);
  assert_int_equal(run(1, 9, NULL, NULL), 0);
  assert_int_equal(atomic_load(&F->n_resume_list), 1);
  assert_int_equal(atomic_load(&F->last_list_n), 2);
  assert_int_equal(atomic_load(&F->vm_suspended[FD_T_MAIN]), 0);
  assert_int_equal(atomic_load(&F->vm_suspended[FD_T_WORKER]), 0);
  /* main suspended by itself first: only worker is the VM's to stop, and to let go */
  assert_int_equal(run_id(11, 2, tid(FD_T_MAIN), NULL), 0);
  assert_int_equal(run(1, 8, NULL, NULL), 0);
  assert_int_equal(atomic_load(&F->last_list_n), 1);
  assert_int_equal(thr_count(FD_T_MAIN), 2);
  assert_int_equal(run(1, 9, NULL, NULL), 0);
  assert_int_equal(atomic_load(&F->last_list_n), 1);
  assert_int_equal(atomic_load(&F->vm_suspended[FD_T_MAIN]), 1);
  assert_int_equal(atomic_load(&F->vm_suspended[FD_T_WORKER]), 0);
  assert_int_equal(run_id(11, 3, tid(FD_T_MAIN), NULL), 0);
  assert_int_equal(atomic_load(&F->vm_suspended[FD_T_MAIN]), 0);
  /* the first thread of the call fails: its count goes back to 0, the other's stays 1 */
  atomic_store(&F->fail_suspend, DDMC_JDWP_THREAD_NOT_ALIVE);
  assert_int_equal(run(1, 8, NULL, NULL), DDMC_JDWP_THREAD_NOT_ALIVE);
  assert_int_equal(thr_count(FD_T_MAIN) + thr_count(FD_T_WORKER), 1);
  assert_int_equal(atomic_load(&F->vm_suspended[FD_T_MAIN]) + atomic_load(&F->vm_suspended[FD_T_WORKER]), 1);
  assert_int_equal(run(1, 9, NULL, NULL), 0);
  assert_int_equal(thr_count(FD_T_MAIN) + thr_count(FD_T_WORKER), 0);
  assert_int_equal(atomic_load(&F->vm_suspended[FD_T_MAIN]) + atomic_load(&F->vm_suspended[FD_T_WORKER]), 0);
  assert_int_equal(atomic_load(&F->n_suspend_list), 3);
  assert_int_equal(atomic_load(&F->n_resume_list), 3);
  assert_int_equal(atomic_load(&F->bad_calls), 0);
}

static void test_event_parks_thread(void **state) {
  (void)state;
  body m = {.n = 0};
  mod_loc(&m, FD_M_COMPUTE, 8);
  int32_t id;
  assert_int_equal(set_req(DDMC_EV_BREAKPOINT, 1 /* EVENT_THREAD */, &m, 1, &id), 0);
  poster p;
  start_poster(&p, FD_T_WORKER, FD_M_COMPUTE, 8, 2);
  WAIT_FOR(thr_count(FD_T_WORKER) == 1 && atomic_load(&F->parked[FD_T_WORKER]) == 1);
  int got = events_wait();
  assert_int_equal(got, 1);
  assert_int_equal(g_comp[0].policy, 1);
  assert_true(g_comp[0].e[0].thread == tid(FD_T_WORKER));
  sleep_ms(20);
  assert_int_equal(atomic_load(&p.done), 0);       /* parked */
  assert_int_equal(atomic_load(&F->n_suspend), 0); /* it stopped itself: no suspend_thread */
  assert_int_equal(thr_count(FD_T_MAIN), 0);
  /* the debugger sees it suspended, with frames */
  ddmc_reader r;
  assert_int_equal(run_id(11, 7, tid(FD_T_WORKER), &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 3);
  /* a Suspend on top: count 2; one Resume leaves it parked, the second releases it */
  assert_int_equal(run_id(11, 2, tid(FD_T_WORKER), NULL), 0);
  assert_int_equal(thr_count(FD_T_WORKER), 2);
  assert_int_equal(atomic_load(&F->n_suspend), 0);
  assert_int_equal(run_id(11, 3, tid(FD_T_WORKER), NULL), 0);
  sleep_ms(20);
  assert_int_equal(atomic_load(&p.done), 0);
  assert_int_equal(run_id(11, 3, tid(FD_T_WORKER), NULL), 0);
  pthread_join(p.th, NULL);
  assert_int_equal(p.rc, 0);
  assert_int_equal(thr_count(FD_T_WORKER), 0);
  assert_int_equal(atomic_load(&F->n_resume), 0);
  assert_int_equal(atomic_load(&F->n_park), 1);
  assert_int_equal(atomic_load(&F->n_unpark), 1);
  assert_int_equal(atomic_load(&F->parked[FD_T_WORKER]), 0);
}

/* A thread the library first meets while the VM is suspended (it started meanwhile) inherits
 * the suspend-all count, and its first event waits, parked, until the VM is resumed: an event
 * from it would reach the debugger in the middle of inspecting the stopped VM (jdb resumed that
 * event set and lost the breakpoint thread's frames). */
static void test_new_thread_waits_while_suspended(void **state) {
  (void)state;
  body m = {.n = 0};
  mod_loc(&m, FD_M_COMPUTE, 8);
  int32_t id;
  assert_int_equal(set_req(DDMC_EV_BREAKPOINT, 0 /* NONE */, &m, 1, &id), 0);
  atomic_store(&F->worker_dead, 1); /* not yet visible: VirtualMachine.Suspend cannot see it */
  assert_int_equal(run(1, 8, NULL, NULL), 0);
  atomic_store(&F->worker_dead, 0);
  poster p;
  start_poster(&p, FD_T_WORKER, FD_M_COMPUTE, 8, 2);
  WAIT_FOR(atomic_load(&F->parked[FD_T_WORKER]) == 1);
  sleep_ms(20);
  assert_int_equal(atomic_load(&p.done), 0);
  assert_int_equal(thr_count(FD_T_WORKER), 1);
  assert_int_equal(events(), 0); /* nothing reported while it is held */
  assert_int_equal(run(1, 9, NULL, NULL), 0);
  pthread_join(p.th, NULL);
  assert_int_equal(p.rc, 0);
  assert_int_equal(thr_count(FD_T_WORKER), 0);
  int got = events_wait();
  assert_int_equal(got, 1); /* reported once resumed, with policy NONE */
  assert_int_equal(g_comp[0].policy, 0);
  assert_int_equal(atomic_load(&F->parked[FD_T_WORKER]), 0);
}

static void test_event_suspend_all(void **state) {
  (void)state;
  body m = {.n = 0};
  mod_loc(&m, FD_M_COMPUTE, 8);
  assert_int_equal(set_req(DDMC_EV_BREAKPOINT, 2 /* ALL */, &m, 1, NULL), 0);
  poster p;
  start_poster(&p, FD_T_WORKER, FD_M_COMPUTE, 8, 2);
  /* Main's count can show before the VM's suspend_thread for it has run (the count is read
   * without the suspension's lock): wait for both (under TSan one CI run saw the count first). */
  WAIT_FOR(thr_count(FD_T_WORKER) == 1 && thr_count(FD_T_MAIN) == 1 && atomic_load(&F->vm_suspended[FD_T_MAIN]) == 1);
  assert_int_equal(atomic_load(&F->vm_suspended[FD_T_WORKER]), 0);
  int got = events_wait();
  assert_int_equal(got, 1);
  assert_int_equal(g_comp[0].policy, 2);
  assert_int_equal(run(1, 9, NULL, NULL), 0); /* VirtualMachine.Resume */
  pthread_join(p.th, NULL);
  assert_int_equal(thr_count(FD_T_WORKER), 0);
  assert_int_equal(thr_count(FD_T_MAIN), 0);
  assert_int_equal(atomic_load(&F->n_suspend), 1);
  assert_int_equal(atomic_load(&F->n_resume), 1);
}

/* ArrayType.NewInstance, ThreadReference.Interrupt and Stop reach their ops with checked
 * arguments; the new array gets an ID the debugger can use at once. */
static void test_new_array_interrupt_stop(void **state) {
  (void)state;
  body b = {.n = 0};
  bd_new_array(&b);
  ddmc_reader r;
  assert_int_equal(run(4, 1, &b, &r), 0);
  assert_int_equal(ddmc_read_u8(&r), '[');
  uint64_t arr = ddmc_read_u64(&r);
  assert_true(arr != 0);
  assert_int_equal(ddmc_reader_left(&r), 0);
  assert_int_equal(run_id(13, 1, arr, &r), 0); /* ArrayReference.Length */
  assert_int_equal(ddmc_read_u32(&r), 3);
  assert_int_equal(ddmc_reader_left(&r), 0);
  b.n = 0;
  b_u64(&b, cid(FD_C_INT_ARRAY));
  b_u32(&b, (uint32_t)-1);
  assert_int_equal(run(4, 1, &b, NULL), DDMC_JDWP_ILLEGAL_ARGUMENT);
  b.n = 0;
  b_u64(&b, cid(FD_C_DEBUG));
  b_u32(&b, 1);
  assert_int_equal(run(4, 1, &b, NULL), DDMC_JDWP_INVALID_ARRAY);
  b.n = 0;
  b_u64(&b, cid(FD_C_INT_ARRAY));
  b_u32(&b, 100); /* the fake VM's arrays hold 8 */
  assert_int_equal(run(4, 1, &b, NULL), DDMC_JDWP_OUT_OF_MEMORY);

  assert_int_equal(run_id(11, 11, tid(FD_T_WORKER), NULL), 0);
  assert_int_equal(atomic_load(&F->n_interrupt), 1);
  assert_int_equal(atomic_load(&F->last_interrupt_thread), FD_T_WORKER);
  assert_int_equal(run_id(11, 11, oid(FD_O_DEBUG), NULL), DDMC_JDWP_INVALID_THREAD);
  assert_int_equal(atomic_load(&F->n_interrupt), 1);

  b.n = 0;
  bd_stop(&b);
  assert_int_equal(run(11, 10, &b, NULL), 0);
  assert_int_equal(atomic_load(&F->last_stop_thread), FD_T_WORKER);
  assert_true((ddmc_ref)atomic_load(&F->last_stop_exc) == FD_O_DEBUG2);
  /* Strings, arrays, threads, groups, class objects are no Throwables: INVALID_CLASS, and the VM
   * is not asked (HotSpot's StopThread would take them, and the VM die). */
  int stops = atomic_load(&F->n_stop);
  uint64_t no_throwable[] = {oid(FD_O_STR), oid(FD_O_ARR), oid(FD_O_THREAD_MAIN), oid(FD_O_GROUP_MAIN),
                             oid(FD_O_CLASS_DEBUG), cid(FD_C_DEBUG)};
  for (size_t i = 0; i < sizeof(no_throwable) / sizeof(no_throwable[0]); i++) {
    b.n = 0;
    b_u64(&b, tid(FD_T_MAIN));
    b_u64(&b, no_throwable[i]);
    assert_int_equal(run(11, 10, &b, NULL), DDMC_JDWP_INVALID_CLASS);
  }
  assert_int_equal(atomic_load(&F->n_stop), stops);
  b.n = 0;
  b_u64(&b, tid(FD_T_MAIN));
  b_u64(&b, 0);
  assert_int_equal(run(11, 10, &b, NULL), DDMC_JDWP_INVALID_OBJECT);
  assert_int_equal(atomic_load(&F->last_stop_thread), FD_T_WORKER);
  assert_int_equal(atomic_load(&F->bad_calls), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_thread_reference, setup, teardown),
      cmocka_unit_test_setup_teardown(test_thread_groups, setup, teardown),
      cmocka_unit_test_setup_teardown(test_suspend_counts, setup, teardown),
      cmocka_unit_test_setup_teardown(test_suspend_all_in_bulk, setup_bulk_suspend, teardown),
      cmocka_unit_test_setup_teardown(test_new_thread_waits_while_suspended, setup, teardown),
      cmocka_unit_test_setup_teardown(test_new_array_interrupt_stop, setup, teardown),
      cmocka_unit_test_setup_teardown(test_event_parks_thread, setup, teardown),
      cmocka_unit_test_setup_teardown(test_event_suspend_all, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
