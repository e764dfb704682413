/* SPDX-License-Identifier: Apache-2.0 */
/* ReferenceType and ClassType (command sets 2 and 3, src/debugger/cmd_type.c): signatures, fields,
 * methods, static values read and set, source file, status, modifiers, interfaces, class object,
 * superclass. */
#include "dbg_fixture.h"

static void test_reference_type(void **state) {
  (void)state;
  ddmc_reader r;
  uint64_t k = cid(FD_C_DEBUG);
  assert_int_equal(run_id(2, 1, k, &r), 0);
  assert_string_equal(rd_str(&r), "LDebug;");
  assert_int_equal(ddmc_reader_done(&r), 0);
  assert_int_equal(run_id(2, 13, k, &r), 0);
  assert_string_equal(rd_str(&r), "LDebug;");
  assert_string_equal(rd_str(&r), "");

  static const char *const names[FD_NFIELDS] = {"counter", "flag", "big", "ratio", "label", "x",
                                                "b",       "c",    "s",   "f",     "next",  "arr"};
  static const char *const sigs[FD_NFIELDS] = {"I", "Z", "J",       "D", "Ljava/lang/String;", "I", "B", "C",
                                               "S", "F", "LDebug;", "[I"};
  for (int generic = 0; generic < 2; generic++) {
    assert_int_equal(run_id(2, generic ? 14 : 4, k, &r), 0);
    assert_int_equal(ddmc_read_u32(&r), FD_NFIELDS);
    for (uint32_t i = 0; i < FD_NFIELDS; i++) {
      assert_true(ddmc_read_u64(&r) == fid(FD_C_DEBUG, i));
      assert_string_equal(rd_str(&r), names[i]);
      assert_string_equal(rd_str(&r), sigs[i]);
      if (generic) rd_str(&r);
      uint32_t mods = ddmc_read_u32(&r);
      assert_int_equal((mods & DDMC_ACC_STATIC) != 0, i < FD_NSTATICS);
    }
    assert_int_equal(ddmc_reader_done(&r), 0);

    assert_int_equal(run_id(2, generic ? 15 : 5, k, &r), 0);
    assert_int_equal(ddmc_read_u32(&r), FD_NMETHODS);
    static const char *const mn[] = {"<init>", "main", "compute"};
    static const char *const ms[] = {"()V", "([Ljava/lang/String;)V", "(I)J"};
    for (uint32_t i = 0; i < FD_NMETHODS; i++) {
      assert_true(ddmc_read_u64(&r) == mid(i));
      assert_string_equal(rd_str(&r), mn[i]);
      assert_string_equal(rd_str(&r), ms[i]);
      if (generic) assert_string_equal(rd_str(&r), i == FD_M_COMPUTE ? "<T:Ljava/lang/Object;>(I)J" : "");
      ddmc_read_u32(&r);
    }
    assert_int_equal(ddmc_reader_done(&r), 0);
  }

  /* Static values, each with its tag. */
  body b = {.n = 0};
  b_u64(&b, k);
  b_u32(&b, FD_NSTATICS);
  for (uint32_t i = 0; i < FD_NSTATICS; i++) b_u64(&b, fid(FD_C_DEBUG, i));
  assert_int_equal(run(2, 6, &b, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), FD_NSTATICS);
  assert_int_equal(ddmc_read_u8(&r), 'I');
  assert_int_equal(ddmc_read_u32(&r), 5);
  assert_int_equal(ddmc_read_u8(&r), 'Z');
  assert_int_equal(ddmc_read_u8(&r), 1);
  assert_int_equal(ddmc_read_u8(&r), 'J');
  assert_true(ddmc_read_u64(&r) == (uint64_t)1 << 40);
  assert_int_equal(ddmc_read_u8(&r), 'D');
  uint64_t bits = ddmc_read_u64(&r);
  double d;
  memcpy(&d, &bits, 8);
  assert_true(d == 0.25);
  assert_int_equal(ddmc_read_u8(&r), 's');
  assert_true(ddmc_read_u64(&r) == oid(FD_O_LABEL));
  assert_int_equal(ddmc_reader_done(&r), 0);

  /* ClassType.SetValues then GetValues. */
  b.n = 0;
  b_u64(&b, k);
  b_u32(&b, 2);
  b_u64(&b, fid(FD_C_DEBUG, FD_F_COUNTER));
  b_u32(&b, 77);
  b_u64(&b, fid(FD_C_DEBUG, FD_F_FLAG));
  b_u8(&b, 0);
  assert_int_equal(run(3, 2, &b, &r), 0);
  assert_int_equal(F->statics[FD_F_COUNTER].u.i, 77);
  assert_int_equal(F->statics[FD_F_FLAG].u.i, 0);

  assert_int_equal(run_id(2, 7, k, &r), 0);
  assert_string_equal(rd_str(&r), "Debug.java");
  assert_int_equal(run_id(2, 7, cid(FD_C_INT_ARRAY), &r), DDMC_JDWP_ABSENT_INFORMATION);
  assert_int_equal(run_id(2, 9, k, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 7);
  assert_int_equal(run_id(2, 3, k, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), DDMC_ACC_PUBLIC);
  assert_int_equal(run_id(2, 10, k, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 1);
  assert_true(ddmc_read_u64(&r) == cid(FD_C_RUNNABLE));
  assert_int_equal(run_id(2, 11, k, &r), 0);
  assert_true(ddmc_read_u64(&r) == oid(FD_O_CLASS_DEBUG));
  assert_int_equal(run_id(2, 11, cid(FD_C_STRING), &r), DDMC_JDWP_NOT_IMPLEMENTED);
  assert_int_equal(run_id(2, 2, k, &r), 0);
  assert_true(ddmc_read_u64(&r) == 0); /* the boot loader */
  assert_int_equal(run_id(2, 12, k, &r), DDMC_JDWP_ABSENT_INFORMATION);
  assert_int_equal(run_id(3, 1, k, &r), 0);
  assert_true(ddmc_read_u64(&r) == cid(FD_C_OBJECT));
  assert_int_equal(run_id(3, 1, cid(FD_C_OBJECT), &r), 0);
  assert_true(ddmc_read_u64(&r) == 0);
  /* an interface has no superclass, an array's is Object (libjdwp) */
  assert_int_equal(run_id(3, 1, cid(FD_C_RUNNABLE), &r), 0);
  assert_true(ddmc_read_u64(&r) == 0);
  assert_int_equal(run_id(3, 1, cid(FD_C_INT_ARRAY), &r), 0);
  assert_true(ddmc_read_u64(&r) == cid(FD_C_OBJECT));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_reference_type, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
