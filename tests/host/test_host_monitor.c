/* SPDX-License-Identifier: Apache-2.0 */
/* host/monitor.c: what a monitor prints of the names a VM sends. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_fixture.h"
#include "monitor.h"

/* Names a VM sends reach the terminal escaped: no control sequence gets through. */
static void test_term_escape(void **state) {
  (void)state;
  static const struct {
    const char *in, *out;
  } kCases[] = {
      {"main", "main"},
      {"\x1b[2Jcleared", "\\x1b[2Jcleared"},
      {"\x1b]0;pwned\x07title", "\\x1b]0;pwned\\x07title"},
      {"two\nlines\r\t", "two\\nlines\\r\\t"},
      {"back\\slash", "back\\\\slash"},
      {"del\x7f", "del\\x7f"},
      {"c1 \xc2\x9b csi", "c1 \\u009b csi"},        /* U+009B, the 8-bit CSI */
      {"bad \xff\xc3 utf8", "bad \\xff\\xc3 utf8"}, /* invalid and truncated sequences */
      {"caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x99\x82", "caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x99\x82"},
      {"\xed\xa0\x80", "\\xed\\xa0\\x80"},                     /* a UTF-16 surrogate encoded in UTF-8 */
      {"\x9b[31m", "\\x9b[31m"},                               /* a bare 8-bit CSI byte is not UTF-8 either */
      {"\xc0\x80 \xe0\x80\x80", "\\xc0\\x80 \\xe0\\x80\\x80"}, /* overlong forms (of NUL) */
      {"\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"},            /* past U+10FFFF */
      {"end \xf0\x9f\x99", "end \\xf0\\x9f\\x99"},             /* cut short by the end of the string */
      {"", ""},
  };
  for (size_t i = 0; i < sizeof(kCases) / sizeof(kCases[0]); i++) {
    char out[128];
    size_t n = ddmc_host_term_escape(kCases[i].in, out, sizeof(out));
    if (strcmp(out, kCases[i].out) != 0) print_error("case %zu: got '%s'\n", i, out);
    assert_string_equal(out, kCases[i].out);
    assert_int_equal(n, strlen(kCases[i].out));
    for (const char *p = out; *p; p++) assert_true((unsigned char)*p >= 0x20 && *p != 0x7f);
  }
  char small[6];
  assert_int_equal(ddmc_host_term_escape("ab\x1b"
                                         "cd",
                                         small, sizeof(small)),
                   8);              /* ab\x1bcd */
  assert_string_equal(small, "ab"); /* cut between escapes, never inside one */
  assert_int_equal(ddmc_host_term_escape(NULL, small, sizeof(small)), 0);
  assert_string_equal(small, "");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      HOST_TEST(test_term_escape),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
