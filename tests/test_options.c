/* Option parser: table-driven vectors for every accepted form and every error message class. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <cmocka.h>

#include "ddmc/ddmc.h"

typedef struct good_case {
  const char *spec;
  ddmc_transport transport;
  int server, suspend;
  const char *host;
  uint16_t port;
} good_case;

static const good_case kGood[] = {
    {"-agentlib:jdwp=transport=dt_socket,address=8000,server=y,suspend=n", DDMC_TRANSPORT_SOCKET, 1, 0, "", 8000},
    {"-Xrunjdwp:transport=dt_socket,address=localhost:6500,server=n", DDMC_TRANSPORT_SOCKET, 0, 0, "localhost", 6500},
    {"transport=dt_socket,server=y,suspend=y", DDMC_TRANSPORT_SOCKET, 1, 1, "", 0},
    {"transport=dt_socket,address=0", DDMC_TRANSPORT_SOCKET, 1, 0, "", 0},
    {"transport=dt_socket,address=127.0.0.1:65535", DDMC_TRANSPORT_SOCKET, 1, 0, "127.0.0.1", 65535},
    {"transport=dt_socket,address=[::1]:8700,server=n", DDMC_TRANSPORT_SOCKET, 0, 0, "::1", 8700},
    {"transport=dt_android_adb,server=y,suspend=n", DDMC_TRANSPORT_ADB, 1, 0, "", 0},
    {"-agentlib:jdwp=transport=dt_socket,address=8000,launch=x,onthrow=y,oncaught=z,timeout=5", DDMC_TRANSPORT_SOCKET,
     1, 0, "", 8000},
};

static void test_good(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof(kGood) / sizeof(kGood[0]); i++) {
    ddmc_options o;
    ddmc_options_init(&o);
    char err[256];
    int rc = ddmc_options_parse(&o, kGood[i].spec, err, sizeof(err));
    if (rc != 0) print_error("case %zu '%s': %s\n", i, kGood[i].spec, err);
    assert_int_equal(rc, 0);
    assert_int_equal(o.transport, kGood[i].transport);
    assert_int_equal(o.server, kGood[i].server);
    assert_int_equal(o.suspend, kGood[i].suspend);
    assert_string_equal(o.host, kGood[i].host);
    assert_int_equal(o.port, kGood[i].port);
    assert_string_equal(err, "");
  }
}

typedef struct bad_case {
  const char *spec;
  const char *needle; /* must appear in the message */
} bad_case;

static const bad_case kBad[] = {
    {"server=y,address=8000", "must specify transport"},
    {"transport=dt_shmem", "not supported"},
    {"transport=dt_socket,address=80x0", "junk in port"},
    {"transport=dt_socket,address=65536", "junk in port"},
    {"transport=dt_socket,address=99999999999", "junk in port"},
    {"transport=dt_socket,address=-1", "junk in port"},
    {"transport=dt_socket,address=host:", "missing port"},
    {"transport=dt_socket,address=:80", "empty host"},
    {"transport=dt_socket,server=n", "server=n, must specify host and port"},
    {"transport=dt_socket,server=n,address=8000", "server=n, must specify host and port"},
    {"transport=dt_socket,server=yes", "'server' must be 'y' or 'n'"},
    {"transport=dt_socket,suspend=", "'suspend' must be 'y' or 'n'"},
    {"transport=dt_socket,sospend=y", "not recognized"},
    {"transport=dt_socket,,server=y", "empty option"},
    {"transport=dt_socket,", "trailing comma"},
    {"transport", "garbage"},
    {"", "empty option list"},
    {"-agentlib:jdwp=", "empty option list"},
    {"help", "help"},
};

static void test_bad(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof(kBad) / sizeof(kBad[0]); i++) {
    ddmc_options o;
    ddmc_options_init(&o);
    o.port = 1234;
    char err[256] = "unset";
    int rc = ddmc_options_parse(&o, kBad[i].spec, err, sizeof(err));
    if (rc != DDMC_EINVAL || strstr(err, kBad[i].needle) == NULL)
      print_error("case %zu '%s': rc=%d msg='%s'\n", i, kBad[i].spec, rc, err);
    assert_int_equal(rc, DDMC_EINVAL);
    assert_non_null(strstr(err, kBad[i].needle));
    assert_null(strchr(err, '\n')); /* one line */
    assert_int_equal(o.port, 1234);  /* a failed parse leaves o alone */
  }
}

static void test_help_and_flags(void **state) {
  (void)state;
  ddmc_options o;
  ddmc_options_init(&o);
  assert_int_equal(ddmc_options_parse(&o, "-agentlib:jdwp=help", NULL, 0), DDMC_EINVAL);
  assert_int_equal(o.help, 1);
  assert_non_null(strstr(ddmc_options_help(), "-agentlib:jdwp=transport=dt_socket"));
  assert_true(ddmc_options_is_jdwp_flag("-agentlib:jdwp=transport=dt_socket"));
  assert_true(ddmc_options_is_jdwp_flag("-Xrunjdwp:transport=dt_socket"));
  assert_false(ddmc_options_is_jdwp_flag("-agentlib:hprof=x"));
  assert_false(ddmc_options_is_jdwp_flag(NULL));
  /* defaults */
  ddmc_options_init(&o);
  assert_int_equal(o.server, 1);
  assert_int_equal(o.suspend, 0);
  assert_string_equal(o.host, "");
  assert_int_equal(o.max_packet, DDMC_DEFAULT_MAX_PACKET);
  /* a small errlen truncates but stays terminated */
  char tiny[8];
  assert_int_equal(ddmc_options_parse(&o, "transport=zzz", tiny, sizeof(tiny)), DDMC_EINVAL);
  assert_int_equal(strlen(tiny), 7);
}

/* Every prefix of a valid spec parses or fails cleanly (no crash, no partial update). */
static void test_prefixes(void **state) {
  (void)state;
  const char *full = "-agentlib:jdwp=transport=dt_socket,address=127.0.0.1:8000,server=y,suspend=n";
  char buf[128];
  for (size_t n = 0; n <= strlen(full); n++) {
    memcpy(buf, full, n);
    buf[n] = '\0';
    ddmc_options o;
    ddmc_options_init(&o);
    char err[128];
    int rc = ddmc_options_parse(&o, buf, err, sizeof(err));
    assert_true(rc == 0 || rc == DDMC_EINVAL);
    if (rc != 0) assert_true(strlen(err) > 0);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_good),
      cmocka_unit_test(test_bad),
      cmocka_unit_test(test_help_and_flags),
      cmocka_unit_test(test_prefixes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
