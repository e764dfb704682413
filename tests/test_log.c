/* SPDX-License-Identifier: Apache-2.0 */
/* The library's log is rate-limited: a peer that triggers a message per byte cannot turn the VM's
 * log hook into a bottleneck; what was held back is counted in the next line that goes out. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "log.h"

static int g_lines;
static char g_last[600];

static void hook(void *ud, ddmc_log_level lvl, const char *msg) {
  (void)ud;
  (void)lvl;
  g_lines++;
  strncpy(g_last, msg, sizeof(g_last) - 1);
}

static void say(ddmc__logger *l, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  ddmc__logv(l, DDMC_LOG_WARN, fmt, ap);
  va_end(ap);
}

static void test_burst_then_rate(void **state) {
  (void)state;
  ddmc__logger l;
  ddmc__logger_init(&l, hook, NULL);
  for (int i = 0; i < 100000; i++) say(&l, "stray byte %d", i);
  assert_true(g_lines >= DDMC__LOG_BURST - 1 && g_lines <= DDMC__LOG_BURST + 1);
  usleep(350 * 1000); /* room for a few more at 10 a second */
  int before = g_lines;
  say(&l, "after the flood");
  assert_int_equal(g_lines, before + 1);
  assert_non_null(strstr(g_last, "after the flood ("));
  assert_non_null(strstr(g_last, " earlier messages suppressed)"));
  say(&l, "next");
  assert_string_equal(g_last, "next"); /* the count is reported once */
}

static void test_no_hook(void **state) {
  (void)state;
  ddmc__logger l;
  ddmc__logger_init(&l, NULL, NULL);
  say(&l, "nobody listens"); /* must not crash */
  assert_int_equal(atomic_load(&l.suppressed), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_burst_then_rate), cmocka_unit_test(test_no_hook)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
