/* SPDX-License-Identifier: Apache-2.0 */
/* Method (command set 6, src/debugger/cmd_method.c): line and variable tables, IsObsolete, and a
 * VM without the information. */
#include "dbg_fixture.h"

static void test_method_tables(void **state) {
  (void)state;
  ddmc_reader r;
  body b = {.n = 0};
  b_u64(&b, cid(FD_C_DEBUG));
  b_u64(&b, mid(FD_M_MAIN));
  assert_int_equal(run(6, 1, &b, &r), 0);
  assert_true(ddmc_read_u64(&r) == 0);
  assert_true(ddmc_read_u64(&r) == 20);
  assert_int_equal(ddmc_read_u32(&r), 5);
  static const int64_t idx[] = {0, 4, 8, 12, 16};
  for (int i = 0; i < 5; i++) {
    assert_true(ddmc_read_u64(&r) == (uint64_t)idx[i]);
    assert_int_equal(ddmc_read_u32(&r), 10 + i);
  }
  assert_int_equal(ddmc_reader_done(&r), 0);

  for (int generic = 0; generic < 2; generic++) {
    assert_int_equal(run(6, generic ? 5 : 2, &b, &r), 0);
    assert_int_equal(ddmc_read_u32(&r), 1); /* argCnt */
    assert_int_equal(ddmc_read_u32(&r), 3);
    static const char *const n[] = {"args", "i", "s"};
    static const char *const s[] = {"[Ljava/lang/String;", "I", "Ljava/lang/String;"};
    static const int64_t start[] = {0, 4, 8};
    static const uint32_t len[] = {21, 17, 13};
    for (int i = 0; i < 3; i++) {
      assert_true(ddmc_read_u64(&r) == (uint64_t)start[i]);
      assert_string_equal(rd_str(&r), n[i]);
      assert_string_equal(rd_str(&r), s[i]);
      if (generic) assert_string_equal(rd_str(&r), "");
      assert_int_equal(ddmc_read_u32(&r), len[i]);
      assert_int_equal(ddmc_read_u32(&r), (uint32_t)i);
    }
    assert_int_equal(ddmc_reader_done(&r), 0);
  }
  assert_int_equal(run(6, 4, &b, &r), 0); /* IsObsolete */
  assert_int_equal(ddmc_read_u8(&r), 0);

  atomic_store(&F->absent_info, 1);
  /* LineTable without line information: the code range and no lines, as HotSpot answers. */
  assert_int_equal(run(6, 1, &b, &r), 0);
  ddmc_read_u64(&r);
  ddmc_read_u64(&r);
  assert_int_equal(ddmc_read_u32(&r), 0);
  assert_int_equal(ddmc_reader_done(&r), 0);
  assert_int_equal(run(6, 2, &b, &r), DDMC_JDWP_ABSENT_INFORMATION);
  assert_int_equal(run(6, 5, &b, &r), DDMC_JDWP_ABSENT_INFORMATION);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_method_tables, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
