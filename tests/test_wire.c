/* SPDX-License-Identifier: Apache-2.0 */
/* ddmc_buf / ddmc_reader and the UTF conversions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "common.h"

static ddmc__mem g_mem;

static void test_buf_put_and_read_back(void **state) {
  (void)state;
  ddmc_buf b;
  ddmc__buf_init(&b, &g_mem, 1 << 20);
  ddmc_buf_put_u8(&b, 0x12);
  ddmc_buf_put_u16(&b, 0x3456);
  ddmc_buf_put_u32(&b, 0x789abcdeu);
  ddmc_buf_put_u64(&b, 0x0102030405060708ull);
  ddmc_buf_put_str(&b, "h\xc3\xa9\xf0\x9f\x98\x80"); /* h, e-acute, U+1F600 (a surrogate pair) */
  assert_int_equal(ddmc_buf_error(&b), 0);
  const uint8_t want[] = {0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 1, 2, 3, 4, 5, 6, 7, 8,
                          0, 0, 0, 4, 0, 'h', 0, 0xe9, 0xd8, 0x3d, 0xde, 0x00};
  assert_int_equal(ddmc_buf_len(&b), sizeof(want));
  assert_memory_equal(b.p, want, sizeof(want));

  ddmc_reader r;
  ddmc_reader_init(&r, b.p, b.len);
  assert_int_equal(ddmc_read_u8(&r), 0x12);
  assert_int_equal(ddmc_read_u16(&r), 0x3456);
  assert_int_equal(ddmc_read_u32(&r), 0x789abcdeu);
  assert_true(ddmc_read_u64(&r) == 0x0102030405060708ull);
  char s[32];
  assert_int_equal(ddmc_read_str(&r, s, sizeof(s)), 7);
  assert_string_equal(s, "h\xc3\xa9\xf0\x9f\x98\x80");
  assert_int_equal(ddmc_reader_done(&r), 0);
  assert_int_equal(ddmc_read_u8(&r), 0); /* past the end */
  assert_int_equal(r.err, DDMC_EPROTO);
  assert_int_equal(ddmc_reader_done(&r), DDMC_EPROTO);
  ddmc__buf_free(&b);
}

static void test_buf_cap_is_sticky(void **state) {
  (void)state;
  ddmc_buf b;
  ddmc__buf_init(&b, &g_mem, 6);
  assert_int_equal(ddmc_buf_put_u32(&b, 1), 0);
  assert_int_equal(ddmc_buf_put_u32(&b, 2), DDMC_ETOOBIG);
  assert_int_equal(ddmc_buf_put_u8(&b, 3), DDMC_ETOOBIG); /* would fit, but the error sticks */
  assert_int_equal(ddmc_buf_len(&b), 4);
  ddmc__buf_free(&b);
}

/* A buffer that starts on caller storage copies itself out when it outgrows it, and never frees
 * or reallocates that storage. */
static void test_buf_on_caller_storage(void **state) {
  (void)state;
  uint8_t stack[8];
  memset(stack, 0xEE, sizeof(stack));
  ddmc_buf b;
  ddmc__buf_init_on(&b, &g_mem, 1 << 20, stack, sizeof(stack));
  ddmc_buf_put_u32(&b, 0x01020304u);
  assert_ptr_equal(b.p, stack); /* fits: no allocation */
  ddmc_buf_put_str(&b, "long enough to outgrow eight bytes");
  assert_int_equal(ddmc_buf_error(&b), 0);
  assert_ptr_not_equal(b.p, stack);
  const uint8_t head[] = {1, 2, 3, 4, 0, 0, 0, 34, 0, 'l'};
  assert_memory_equal(b.p, head, sizeof(head));
  assert_int_equal(ddmc_buf_len(&b), 4 + 4 + 2 * 34);
  ddmc__buf_free(&b); /* frees the heap copy only */
  ddmc__buf_init_on(&b, &g_mem, 1 << 20, stack, sizeof(stack));
  ddmc__buf_put_chars(&b, "ab"); /* no count */
  const uint8_t ab[] = {0, 'a', 0, 'b'};
  assert_memory_equal(b.p, ab, 4);
  assert_int_equal(b.len, 4);
  ddmc__buf_free(&b);
}

/* A big reply's buffer is given back once empty (a session must not keep its largest answer):
 * only when empty, only past keep, never caller storage; written again afterwards. */
static void test_buf_shrink(void **state) {
  (void)state;
  ddmc_buf b;
  ddmc__buf_init(&b, &g_mem, 4 << 20);
  assert_non_null(ddmc__buf_append(&b, 1 << 20));
  assert_int_equal(ddmc__buf_shrink(&b, 256 << 10), 0); /* not empty */
  ddmc__buf_reset(&b);
  assert_true(b.cap >= 1 << 20);
  assert_int_equal(ddmc__buf_shrink(&b, 256 << 10), 1);
  assert_null(b.p);
  assert_int_equal(b.cap, 0);
  ddmc_buf_put_u32(&b, 7);
  assert_int_equal(ddmc_buf_error(&b), 0);
  assert_int_equal(b.len, 4);
  ddmc__buf_reset(&b);
  assert_int_equal(ddmc__buf_shrink(&b, 256 << 10), 0); /* small: kept */
  assert_non_null(b.p);
  ddmc__buf_free(&b);
  uint8_t stack[16];
  ddmc__buf_init_on(&b, &g_mem, 1 << 20, stack, sizeof(stack));
  assert_int_equal(ddmc__buf_shrink(&b, 0), 0); /* caller storage */
  assert_ptr_equal(b.p, stack);
}

static void test_reader_str_bounds(void **state) {
  (void)state;
  /* claims 0x7fffffff units with 2 bytes behind it */
  const uint8_t bad[] = {0x7f, 0xff, 0xff, 0xff, 0, 'a'};
  ddmc_reader r;
  ddmc_reader_init(&r, bad, sizeof(bad));
  char s[8];
  assert_int_equal(ddmc_read_str(&r, s, sizeof(s)), DDMC_EPROTO);
  /* too small an output buffer: consumed, prefix on a character boundary */
  const uint8_t ok[] = {0, 0, 0, 3, 0, 'a', 0, 0xe9, 0, 'c'};
  ddmc_reader_init(&r, ok, sizeof(ok));
  char t[3];
  assert_int_equal(ddmc_read_str(&r, t, sizeof(t)), DDMC_ETOOBIG);
  assert_string_equal(t, "a");
  assert_int_equal(ddmc_reader_done(&r), 0);
}

static void test_utf8_invalid_becomes_replacement(void **state) {
  (void)state;
  uint8_t out[32];
  /* stray continuation, overlong '/', truncated 3-byte, encoded surrogate */
  const char in[] = "\x80" "\xc0\xaf" "\xe2\x82" "\xed\xa0\x80" "z";
  size_t n = ddmc__utf8_to_utf16be(in, strlen(in), out);
  assert_true(n >= 4);
  for (size_t i = 0; i + 1 < n; i++) assert_int_equal(ddmc__get_u16(out + 2 * i), 0xFFFD);
  assert_int_equal(ddmc__get_u16(out + 2 * (n - 1)), 'z');
  /* unpaired surrogates from the wire */
  const uint8_t w[] = {0xd8, 0x00, 0, 'x', 0xdc, 0x00};
  char s[16];
  ddmc__utf16be_to_utf8(w, 3, s, sizeof(s));
  assert_string_equal(s, "\xef\xbf\xbdx\xef\xbf\xbd");
}

static void test_errors_and_version(void **state) {
  (void)state;
  assert_string_equal(ddmc_strerror(DDMC_EQFULL), "send queue full; chunk dropped");
  assert_string_equal(ddmc_err_name(DDMC_EPROTO), "EPROTO");
  assert_string_equal(ddmc_strerror(12345), "unknown error");
  assert_string_equal(ddmc_strerror(0), "success");
  assert_true(DDMC_EINVAL < 0 && DDMC_ECLOSED < 0);
  assert_int_equal(ddmc_version(), DDMC_VERSION_HEX);
  char t[5];
  assert_string_equal(ddmc_chunk_type_str(DDMC_FOURCC('H', 'P', 'S', 'G'), t), "HPSG");
  assert_string_equal(ddmc_chunk_type_str(0x41000142u, t), "A??B");
}

int main(void) {
  ddmc__mem_init(&g_mem, NULL);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_buf_put_and_read_back),
      cmocka_unit_test(test_buf_cap_is_sticky),
      cmocka_unit_test(test_buf_on_caller_storage),
      cmocka_unit_test(test_buf_shrink),
      cmocka_unit_test(test_reader_str_bounds),
      cmocka_unit_test(test_utf8_invalid_becomes_replacement),
      cmocka_unit_test(test_errors_and_version),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
