/* SPDX-License-Identifier: Apache-2.0 */
/* StackFrame (command set 16, src/debugger/cmd_frame.c): locals read and set with their tags,
 * ThisObject, frames past the end or of a thread not suspended. */
#include "dbg_fixture.h"

static int get_locals(uint32_t t, uint64_t frame, int n, const int32_t *slots, const char *tags, ddmc_reader *r) {
  body b = {.n = 0};
  b_u64(&b, tid(t));
  b_u64(&b, frame);
  b_u32(&b, (uint32_t)n);
  for (int i = 0; i < n; i++) {
    b_u32(&b, (uint32_t)slots[i]);
    b_u8(&b, (uint8_t)tags[i]);
  }
  return run(16, 1, &b, r);
}

static void test_stack_frame(void **state) {
  (void)state;
  ddmc_reader r;
  uint64_t m = tid(FD_T_MAIN);
  assert_int_equal(run_id(11, 2, m, &r), 0);
  uint64_t f0 = frame_id(FD_T_MAIN, 0), f1 = frame_id(FD_T_MAIN, 1);
  static const int32_t slots[] = {0, 1, 2};
  assert_int_equal(get_locals(FD_T_MAIN, f0, 3, slots, "LIJ", &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 3);
  assert_int_equal(ddmc_read_u8(&r), 'L');
  assert_true(ddmc_read_u64(&r) == oid(FD_O_DEBUG));
  assert_int_equal(ddmc_read_u8(&r), 'I');
  assert_int_equal(ddmc_read_u32(&r), 7);
  assert_int_equal(ddmc_read_u8(&r), 'J');
  assert_true(ddmc_read_u64(&r) == 123456789012ull);
  assert_int_equal(ddmc_reader_done(&r), 0);
  /* the debugger may name an object local with any object tag; the reply has the right one */
  assert_int_equal(get_locals(FD_T_MAIN, f1, 3, slots, "[Is", &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 3);
  assert_int_equal(ddmc_read_u8(&r), 'L');
  assert_true(ddmc_read_u64(&r) == 0);
  ddmc_read_bytes(&r, 5);
  assert_int_equal(ddmc_read_u8(&r), 's');
  assert_true(ddmc_read_u64(&r) == oid(FD_O_STR));
  /* wrong tag, bad slot, bad tag */
  assert_int_equal(get_locals(FD_T_MAIN, f0, 1, slots + 1, "J", &r), DDMC_JDWP_TYPE_MISMATCH);
  static const int32_t badslot[] = {9};
  assert_int_equal(get_locals(FD_T_MAIN, f0, 1, badslot, "I", &r), DDMC_JDWP_INVALID_SLOT);
  assert_int_equal(get_locals(FD_T_MAIN, f0, 1, slots + 1, "Q", &r), DDMC_JDWP_INVALID_TAG);
  /* SetValues: n = 8 then read back. */
  body b = {.n = 0};
  b_u64(&b, m);
  b_u64(&b, f0);
  b_u32(&b, 1);
  b_u32(&b, 1);
  b_u8(&b, 'I');
  b_u32(&b, 8);
  assert_int_equal(run(16, 2, &b, &r), 0);
  assert_int_equal(F->frames[FD_T_MAIN][0].locals[1].u.i, 8);
  b.p[b.n - 5] = 'Z'; /* the wrong type for the slot */
  b.n -= 3;
  assert_int_equal(run(16, 2, &b, &r), DDMC_JDWP_TYPE_MISMATCH);
  /* ThisObject: Debug for compute, null for static main. */
  b.n = 0;
  b_u64(&b, m);
  b_u64(&b, f0);
  assert_int_equal(run(16, 3, &b, &r), 0);
  assert_int_equal(ddmc_read_u8(&r), 'L');
  assert_true(ddmc_read_u64(&r) == oid(FD_O_DEBUG));
  b.n = 8;
  b_u64(&b, f1);
  assert_int_equal(run(16, 3, &b, &r), 0);
  assert_int_equal(ddmc_read_u8(&r), 'L');
  assert_true(ddmc_read_u64(&r) == 0);
  /* a frame past the thread's frames */
  b.n = 8;
  b_u64(&b, (f0 & ~0xffffffffull) | 3);
  assert_int_equal(run(16, 3, &b, &r), DDMC_JDWP_INVALID_FRAMEID);
  /* a frame of a thread that is not suspended */
  b.n = 0;
  b_u64(&b, tid(FD_T_WORKER));
  b_u64(&b, f0);
  assert_int_equal(run(16, 3, &b, &r), DDMC_JDWP_THREAD_NOT_SUSPENDED);
  assert_int_equal(run(16, 4, &b, &r), DDMC_JDWP_THREAD_NOT_SUSPENDED); /* PopFrames */
}

/* PopFrames: the frame named and every frame above it go (the op gets their count); every frameID
 * of the thread dies, new ones are handed out for what is left. ForceEarlyReturn: a suspended
 * thread only, the value handed over as read. */
static void test_pop_and_return(void **state) {
  (void)state;
  ddmc_reader r;
  body b = {.n = 0};
  uint64_t m = tid(FD_T_MAIN);
  assert_int_equal(run_id(11, 2, m, &r), 0);
  uint64_t f0 = frame_id(FD_T_MAIN, 0), f1 = frame_id(FD_T_MAIN, 1);
  b_u64(&b, m);
  b_u64(&b, f1);
  assert_int_equal(run(16, 4, &b, &r), 0);
  assert_int_equal(atomic_load(&F->last_pop_n), 2);
  assert_int_equal(atomic_load(&F->last_pop_thread), FD_T_MAIN);
  b.n = 0;
  b_u64(&b, m);
  b_u64(&b, f0);
  assert_int_equal(run(16, 3, &b, &r), DDMC_JDWP_INVALID_FRAMEID); /* popped: its ID is dead */
  assert_true(frame_id(FD_T_MAIN, 0) != f0);
  b.n = 0;
  b_u64(&b, m);
  b_u64(&b, frame_id(FD_T_MAIN, 0));
  assert_int_equal(run(16, 3, &b, &r), 0);

  b.n = 0;
  b_u64(&b, m);
  b_u8(&b, 'J');
  b_u64(&b, 42);
  assert_int_equal(run(11, 14, &b, &r), 0);
  assert_int_equal(atomic_load(&F->last_force_tag), 'J');
  b.n = 0;
  b_u64(&b, tid(FD_T_WORKER));
  b_u8(&b, 'V');
  assert_int_equal(run(11, 14, &b, &r), DDMC_JDWP_THREAD_NOT_SUSPENDED);
  b.n = 0;
  b_u64(&b, m);
  b_u8(&b, 'Q'); /* no such tag */
  assert_int_equal(run(11, 14, &b, &r), DDMC_JDWP_INVALID_TAG);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_stack_frame, setup, teardown),
      cmocka_unit_test_setup_teardown(test_pop_and_return, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
