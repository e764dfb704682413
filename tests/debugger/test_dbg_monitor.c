/* SPDX-License-Identifier: Apache-2.0 */
/* Monitors (src/debugger/cmd_monitor.c): MonitorInfo, OwnedMonitors (with frame depths),
 * CurrentContendedMonitor; the thread commands want the thread suspended. */
#include "dbg_fixture.h"

/* Monitors: who owns FD_O_DEBUG, who waits for it, what main owns (with frame depths), what
 * Worker waits for; the thread commands want the thread suspended. */
static void test_monitors(void **state) {
  (void)state;
  ddmc_reader r;
  assert_int_equal(run_id(9, 5, oid(FD_O_DEBUG), &r), 0);
  assert_true(ddmc_read_u64(&r) == tid(FD_T_MAIN));
  assert_int_equal(ddmc_read_u32(&r), 2);
  assert_int_equal(ddmc_read_u32(&r), 1); /* Worker; the internal JDWP thread is not shown */
  assert_true(ddmc_read_u64(&r) == tid(FD_T_WORKER));
  assert_int_equal(ddmc_reader_left(&r), 0);
  assert_int_equal(run_id(9, 5, oid(FD_O_STR), &r), 0); /* never locked */
  assert_true(ddmc_read_u64(&r) == 0);
  assert_int_equal(ddmc_read_u32(&r), 0);
  assert_int_equal(ddmc_read_u32(&r), 0);
  assert_int_equal(ddmc_reader_left(&r), 0);
  assert_int_equal(run_id(9, 5, 0, NULL), DDMC_JDWP_INVALID_OBJECT);
  assert_int_equal(run_id(9, 5, 0x7777777, NULL), DDMC_JDWP_INVALID_OBJECT);

  assert_int_equal(run_id(11, 8, tid(FD_T_MAIN), NULL), DDMC_JDWP_THREAD_NOT_SUSPENDED);
  assert_int_equal(run_id(11, 9, tid(FD_T_WORKER), NULL), DDMC_JDWP_THREAD_NOT_SUSPENDED);
  assert_int_equal(run_id(11, 2, tid(FD_T_MAIN), NULL), 0);
  assert_int_equal(run_id(11, 2, tid(FD_T_WORKER), NULL), 0);
  assert_int_equal(run_id(11, 8, tid(FD_T_MAIN), &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 2);
  assert_int_equal(ddmc_read_u8(&r), 'L');
  assert_true(ddmc_read_u64(&r) == oid(FD_O_DEBUG));
  assert_int_equal(ddmc_read_u8(&r), 'L');
  assert_true(ddmc_read_u64(&r) == oid(FD_O_DEBUG2));
  assert_int_equal(ddmc_reader_left(&r), 0);
  assert_int_equal(run_id(11, 13, tid(FD_T_MAIN), &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 2);
  assert_int_equal(ddmc_read_u8(&r), 'L');
  assert_true(ddmc_read_u64(&r) == oid(FD_O_DEBUG));
  assert_int_equal(ddmc_read_u32(&r), 1);
  assert_int_equal(ddmc_read_u8(&r), 'L');
  assert_true(ddmc_read_u64(&r) == oid(FD_O_DEBUG2));
  assert_int_equal(ddmc_read_u32(&r), 0);
  assert_int_equal(ddmc_reader_left(&r), 0);
  assert_int_equal(run_id(11, 8, tid(FD_T_WORKER), &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 0);
  assert_int_equal(run_id(11, 9, tid(FD_T_WORKER), &r), 0);
  assert_int_equal(ddmc_read_u8(&r), 'L');
  assert_true(ddmc_read_u64(&r) == oid(FD_O_DEBUG));
  assert_int_equal(ddmc_reader_left(&r), 0);
  assert_int_equal(run_id(11, 9, tid(FD_T_MAIN), &r), 0); /* waits for nothing: a null object */
  assert_int_equal(ddmc_read_u8(&r), 'L');
  assert_true(ddmc_read_u64(&r) == 0);
  assert_int_equal(run_id(11, 9, oid(FD_O_DEBUG), NULL), DDMC_JDWP_INVALID_THREAD);
  assert_int_equal(run_id(11, 3, tid(FD_T_MAIN), NULL), 0);
  assert_int_equal(run_id(11, 3, tid(FD_T_WORKER), NULL), 0);
  assert_int_equal(atomic_load(&F->bad_calls), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_monitors, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
