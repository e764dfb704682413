/* SPDX-License-Identifier: Apache-2.0 */
/* smap.c: which stratum a step moves by and a Java line's line in it, from JSR-45 SMAPs:
 * sticky file IDs, repeat counts and increments, "\r\n" lines, strata the SMAP lacks, and
 * malformed or truncated entries (no line, never a crash); the source names ClassPrepare's
 * SourceNameMatch compares as libjdwp does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "debugger/state.h"

static const char kSmap[] =
    "SMAP\nPage.java\nJSP\n"
    "*S JSP\n*F\n+ 1 page.jsp\npage.jsp\n2 inc.jsp\n*L\n"
    "1#1:32,2\n" /* page.jsp 1 <- Java 32-33 */
    "2:34\n"     /* page.jsp 2 <- 34 (file 1, sticky) */
    "5#2,3:40\n" /* inc.jsp 5-7 <- 40-42 */
    "9,2:50,3\n" /* inc.jsp 9-10 <- 50-52, 53-55 */
    "*S Kt\r\n*F\r\n1 a.kt\r\n*L\r\n1#1,4:32\r\n"
    "*E\n";

static int32_t line(const char *stratum, int32_t j) { return ddmc__dbg_smap_line(kSmap, strlen(kSmap), stratum, j); }

static void test_lines(void **state) {
  (void)state;
  assert_int_equal(line("JSP", 32), 1 << 16 | 1);
  assert_int_equal(line("JSP", 33), 1 << 16 | 1);
  assert_int_equal(line("JSP", 34), 1 << 16 | 2);
  assert_int_equal(line("JSP", 35), -1);
  assert_int_equal(line("JSP", 41), 2 << 16 | 6);
  assert_int_equal(line("JSP", 42), 2 << 16 | 7);
  assert_int_equal(line("JSP", 43), -1);
  assert_int_equal(line("JSP", 52), 2 << 16 | 9);
  assert_int_equal(line("JSP", 53), 2 << 16 | 10);
  assert_int_equal(line("JSP", 56), -1);
  assert_int_equal(line("Kt", 34), 1 << 16 | 3); /* "\r\n" lines */
  assert_int_equal(line("Java", 32), -1);
}

static void test_pick(void **state) {
  (void)state;
  char s[16];
  size_t n = strlen(kSmap);
  assert_true(ddmc__dbg_smap_pick(kSmap, n, "Kt", s, sizeof(s)));
  assert_string_equal(s, "Kt");
  assert_true(ddmc__dbg_smap_pick(kSmap, n, "", s, sizeof(s)));
  assert_string_equal(s, "JSP"); /* the SMAP's default */
  assert_true(ddmc__dbg_smap_pick(kSmap, n, "Java", s, sizeof(s)));
  assert_string_equal(s, "JSP");
  static const char no_section[] = "SMAP\nA.java\nXYZ\n*S JSP\n*L\n1:1\n*E\n";
  assert_false(ddmc__dbg_smap_pick(no_section, strlen(no_section), "", s, sizeof(s)));
  assert_false(ddmc__dbg_smap_pick("SMAP\n", 5, "", s, sizeof(s)));
}

static void test_bad_input(void **state) {
  (void)state;
  static const char *bad[] = {
      "SMAP\nA\nJSP\n*S JSP\n*L\n#1:3\n:4\n1#:5\n1,:6\n1:\n1#1,2\n99999999999999999999:7\n*E\n",
      "SMAP\nA\nJSP\n*S JSP\n*L\n1#1:",
      "",
      "*S",
      "*S JSP\n*L\n1:2147483647,2147483647\n",
  };
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
    for (int32_t j = -1; j < 10; j++) {
      int32_t l = ddmc__dbg_smap_line(bad[i], strlen(bad[i]), "JSP", j);
      assert_true(l >= -1);
    }
  /* Each prefix of a good SMAP: any answer, read within its bytes (ASan checks). */
  for (size_t n = 0; n < sizeof(kSmap) - 1; n++) ddmc__dbg_smap_line(kSmap, n, "JSP", 41);
}

/* The output file and every stratum's file names match, exactly or by "*suffix" / "prefix*";
 * a "+" file's path does not, nor anything of an SMAP without its "*E". */
static void test_source_names(void **state) {
  (void)state;
  size_t n = strlen(kSmap);
  static const char *hit[] = {"Page.java", "*Page.java", "Page*", "page.jsp", "*.jsp", "inc.jsp", "a.kt", "*kt", "*"};
  for (size_t i = 0; i < sizeof(hit) / sizeof(hit[0]); i++) assert_true(ddmc__dbg_smap_names_match(kSmap, n, hit[i]));
  static const char *miss[] = {"page", "Page.jav", "JSP", "Kt", "1 a.kt", "*.java.x", "b*", ""};
  for (size_t i = 0; i < sizeof(miss) / sizeof(miss[0]); i++) assert_false(ddmc__dbg_smap_names_match(kSmap, n, miss[i]));
  static const char path[] = "SMAP\nX.java\nJSP\n*S JSP\n*F\n+ 0 hello.jsp\nweb/hello_path.jsp\n*L\n1:1\n*E\n";
  assert_true(ddmc__dbg_smap_names_match(path, strlen(path), "hello.jsp"));
  assert_false(ddmc__dbg_smap_names_match(path, strlen(path), "web/hello_path.jsp"));
  assert_false(ddmc__dbg_smap_names_match(path, strlen(path), "*path.jsp"));
  static const char unended[] = "SMAP\nX.java\nJSP\n*S JSP\n*F\n1 hello.jsp\n*L\n1:1\n";
  assert_false(ddmc__dbg_smap_names_match(unended, strlen(unended), "hello.jsp"));
  assert_false(ddmc__dbg_smap_names_match(unended, strlen(unended), "X.java"));
  assert_false(ddmc__dbg_smap_names_match("SMAP", 4, "*"));
  assert_false(ddmc__dbg_smap_names_match("", 0, "*"));
  /* Each prefix of a good SMAP: read within its bytes (ASan checks); only the whole one is one. */
  for (size_t k = 0; k < n - 1; k++) assert_false(ddmc__dbg_smap_names_match(kSmap, k, "a.kt"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_lines),
      cmocka_unit_test(test_pick),
      cmocka_unit_test(test_bad_input),
      cmocka_unit_test(test_source_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
