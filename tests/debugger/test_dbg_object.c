/* SPDX-License-Identifier: Apache-2.0 */
/* ObjectReference, StringReference and ArrayReference (command sets 9, 10 and 13,
 * src/debugger/cmd_object.c): types, field values read and set, string values, array ranges. */
#include "dbg_fixture.h"

static void test_object_reference(void **state) {
  (void)state;
  ddmc_reader r;
  uint64_t o = oid(FD_O_DEBUG);
  assert_int_equal(run_id(9, 1, o, &r), 0);
  assert_int_equal(ddmc_read_u8(&r), DDMC_TYPE_CLASS);
  assert_true(ddmc_read_u64(&r) == cid(FD_C_DEBUG));
  assert_int_equal(run_id(9, 1, oid(FD_O_ARR), &r), 0);
  assert_int_equal(ddmc_read_u8(&r), DDMC_TYPE_ARRAY);
  assert_true(ddmc_read_u64(&r) == cid(FD_C_INT_ARRAY));

  body b = {.n = 0};
  b_u64(&b, o);
  b_u32(&b, FD_NFIELDS);
  for (uint32_t i = 0; i < FD_NFIELDS; i++) b_u64(&b, fid(FD_C_DEBUG, i));
  assert_int_equal(run(9, 2, &b, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), FD_NFIELDS);
  assert_int_equal(ddmc_read_u8(&r), 'I'); /* a static, through an instance */
  assert_int_equal(ddmc_read_u32(&r), 5);
  ddmc_read_bytes(&r, 2 + 9 + 9); /* Z, J, D */
  assert_int_equal(ddmc_read_u8(&r), 's');
  assert_true(ddmc_read_u64(&r) == oid(FD_O_LABEL));
  assert_int_equal(ddmc_read_u8(&r), 'I');
  assert_int_equal(ddmc_read_u32(&r), 42);
  assert_int_equal(ddmc_read_u8(&r), 'B');
  assert_int_equal(ddmc_read_u8(&r), 0xfd);
  assert_int_equal(ddmc_read_u8(&r), 'C');
  assert_int_equal(ddmc_read_u16(&r), 'A');
  assert_int_equal(ddmc_read_u8(&r), 'S');
  assert_int_equal(ddmc_read_u16(&r), (uint16_t)-300);
  assert_int_equal(ddmc_read_u8(&r), 'F');
  uint32_t fb = ddmc_read_u32(&r);
  float fv;
  memcpy(&fv, &fb, 4);
  assert_true(fv == 1.5f);
  assert_int_equal(ddmc_read_u8(&r), 'L');
  assert_true(ddmc_read_u64(&r) == oid(FD_O_DEBUG2));
  assert_int_equal(ddmc_read_u8(&r), '[');
  assert_true(ddmc_read_u64(&r) == oid(FD_O_ARR));
  assert_int_equal(ddmc_reader_done(&r), 0);

  /* SetValues: x = 99, b = 5, next = null, f = 2.5; then read back. */
  b.n = 0;
  b_u64(&b, o);
  b_u32(&b, 4);
  b_u64(&b, fid(FD_C_DEBUG, FD_F_X));
  b_u32(&b, 99);
  b_u64(&b, fid(FD_C_DEBUG, FD_F_B));
  b_u8(&b, 5);
  b_u64(&b, fid(FD_C_DEBUG, FD_F_NEXT));
  b_u64(&b, 0);
  float f25 = 2.5f;
  uint32_t f25b;
  memcpy(&f25b, &f25, 4);
  b_u64(&b, fid(FD_C_DEBUG, FD_F_F));
  b_u32(&b, f25b);
  assert_int_equal(run(9, 3, &b, &r), 0);
  fd_object *ob = fakebridge_object(F, FD_O_DEBUG);
  assert_int_equal(ob->fields[FD_F_X].u.i, 99);
  assert_int_equal(ob->fields[FD_F_B].u.i, 5);
  assert_true(ob->fields[FD_F_NEXT].u.l == 0);
  assert_true(ob->fields[FD_F_F].u.f == 2.5f);
  get_one_field(o, fid(FD_C_DEBUG, FD_F_X), 0);
  /* next = a String: the VM's TYPE_MISMATCH; next = a forged ID: INVALID_OBJECT */
  b.n = 0;
  b_u64(&b, o);
  b_u32(&b, 1);
  b_u64(&b, fid(FD_C_DEBUG, FD_F_NEXT));
  b_u64(&b, oid(FD_O_STR));
  assert_int_equal(run(9, 3, &b, &r), DDMC_JDWP_TYPE_MISMATCH);
  b.n -= 8;
  b_u64(&b, 0x777700000001ull);
  assert_int_equal(run(9, 3, &b, &r), DDMC_JDWP_INVALID_OBJECT);
  /* a value cut short */
  b.n -= 8;
  b_u32(&b, 1);
  assert_int_equal(run(9, 3, &b, &r), DDMC_JDWP_INVALID_LENGTH);

  /* StringReference.Value */
  assert_int_equal(run_id(10, 1, oid(FD_O_STR), &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 6);
  assert_memory_equal(ddmc_read_bytes(&r, 6), "h\xc3\xa9llo", 6);
  assert_int_equal(ddmc_reader_done(&r), 0);
  assert_int_equal(run_id(10, 1, o, &r), DDMC_JDWP_INVALID_STRING);
}

static int arr_get(int32_t first, int32_t n, ddmc_reader *r) {
  body b = {.n = 0};
  b_u64(&b, oid(FD_O_ARR));
  b_u32(&b, (uint32_t)first);
  b_u32(&b, (uint32_t)n);
  return run(13, 2, &b, r);
}

static int arr_set(int32_t first, int32_t n, const int32_t *v, int nv) {
  body b = {.n = 0};
  b_u64(&b, oid(FD_O_ARR));
  b_u32(&b, (uint32_t)first);
  b_u32(&b, (uint32_t)n);
  for (int i = 0; i < nv; i++) b_u32(&b, (uint32_t)v[i]);
  return run(13, 3, &b, NULL);
}

static void test_array_reference(void **state) {
  (void)state;
  ddmc_reader r;
  assert_int_equal(run_id(13, 1, oid(FD_O_ARR), &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 5);
  assert_int_equal(arr_get(1, 3, &r), 0);
  assert_int_equal(ddmc_read_u8(&r), 'I');
  assert_int_equal(ddmc_read_u32(&r), 3);
  for (int i = 0; i < 3; i++) assert_int_equal(ddmc_read_u32(&r), 20 + 10 * i);
  assert_int_equal(ddmc_reader_done(&r), 0);
  assert_int_equal(arr_get(0, 5, &r), 0);
  assert_int_equal(arr_get(5, 0, &r), 0);
  assert_int_equal(ddmc_read_u8(&r), 'I');
  assert_int_equal(ddmc_read_u32(&r), 0);
  /* bad ranges */
  const int32_t bad[][2] = {{4, 2}, {6, 0}, {-1, 1}, {0, -1}, {0, 6}, {INT32_MAX, 1}, {1, INT32_MAX}, {INT32_MIN, 0}};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    assert_int_equal(arr_get(bad[i][0], bad[i][1], &r), DDMC_JDWP_INVALID_INDEX);
    assert_int_equal(arr_set(bad[i][0], bad[i][1], NULL, 0), DDMC_JDWP_INVALID_INDEX);
  }
  const int32_t v[] = {77, 88};
  assert_int_equal(arr_set(3, 2, v, 2), 0);
  assert_int_equal(arr_get(3, 2, &r), 0);
  ddmc_read_bytes(&r, 5);
  assert_int_equal(ddmc_read_u32(&r), 77);
  assert_int_equal(ddmc_read_u32(&r), 88);
  /* fewer values than the count says */
  assert_int_equal(arr_set(0, 2, v, 1), DDMC_JDWP_INVALID_LENGTH);
  assert_int_equal(fakebridge_object(F, FD_O_ARR)->arr[0], 10);
  /* more values than the count says */
  assert_int_equal(arr_set(0, 1, v, 2), DDMC_JDWP_ILLEGAL_ARGUMENT);
  /* not an array */
  body b = {.n = 0};
  b_u64(&b, oid(FD_O_DEBUG));
  b_u32(&b, 0);
  b_u32(&b, 0);
  assert_int_equal(run(13, 2, &b, &r), DDMC_JDWP_INVALID_ARRAY);
  assert_int_equal(run(13, 3, &b, &r), DDMC_JDWP_INVALID_ARRAY);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_object_reference, setup, teardown),
      cmocka_unit_test_setup_teardown(test_array_reference, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
