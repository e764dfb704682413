/* SPDX-License-Identifier: Apache-2.0 */
/* Option parser: table-driven vectors for every accepted form and every error message class. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

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
    {"transport=dt_socket,address=localhost:08000", DDMC_TRANSPORT_SOCKET, 1, 0, "localhost", 8000},
    {"transport=dt_socket,address=0000000000065535", DDMC_TRANSPORT_SOCKET, 1, 0, "", 65535},
    {"transport=dt_socket,address=[::1]:08000", DDMC_TRANSPORT_SOCKET, 1, 0, "::1", 8000},
    {"transport=dt_socket,address=::1:8000", DDMC_TRANSPORT_SOCKET, 1, 0, "::1", 8000}, /* the last colon splits */
    {"-agentlib:jdwp=transport=dt_socket,address=8000,launch=x,onthrow=y,timeout=5", DDMC_TRANSPORT_SOCKET, 1, 0, "",
     8000},
    {"transport=dt_socket,address=8000,allow=*,quiet=y,mutf8=n,strict=y,stdalloc=n", DDMC_TRANSPORT_SOCKET, 1, 0, "",
     8000},
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
    {"transport=dt_socket,address=65536", "port out of range"},
    {"transport=dt_socket,address=99999999999", "port out of range"},
    {"transport=dt_socket,address=-1", "junk in port"},
    {"transport=dt_socket,address=0065536", "port out of range"},
    {"transport=dt_socket,address=host:", "missing port"},
    {"transport=dt_socket,address=:80", "empty host"},
    {"transport=dt_socket,server=n", "server=n, must specify host and port"},
    {"transport=dt_socket,server=n,address=8000", "server=n, must specify host and port"},
    {"transport=dt_socket,server=yes", "'server' must be 'y' or 'n'"},
    {"transport=dt_socket,suspend=", "'suspend' must be 'y' or 'n'"},
    {"transport=dt_socket,sospend=y", "not recognized"},
    /* The JDK 17 agent's options (measured against it; docs/jdwp-options.md). */
    {"transport=dt_socket,oncaught=y", "'oncaught' not recognized (the JDK's agent has onthrow= and onuncaught=)"},
    {"transport=dt_socket,timeout=abc", "'timeout' must be milliseconds"}, /* the JDK reads it as 0 */
    {"transport=dt_socket,timeout=-5", "'timeout' must be milliseconds"},
    {"transport=dt_socket,timeout=2147483648", "'timeout' must be milliseconds"},
    {"transport=dt_socket,timeout=", "'timeout' must be milliseconds"},
    {"transport=dt_socket,onthrow=java.lang.Error", "specify launch=<command line> when using onthrow or onuncaught"},
    {"transport=dt_socket,onuncaught=y", "specify launch=<command line> when using onthrow or onuncaught"},
    {"transport=dt_socket,onuncaught=x,launch=a", "'onuncaught' must be 'y' or 'n'"},
    {"transport=dt_socket,launch=", "'launch' is empty"},
    {"transport=dt_socket,quiet=x", "'quiet' must be 'y' or 'n'"},
    {"transport=dt_socket,mutf8=y", "'mutf8=y' is not supported"},
    {"transport=dt_socket,strict=maybe", "'strict' must be 'y' or 'n'"},
    {"transport=dt_socket,allow=", "allow: empty list"},
    {"transport=dt_socket,allow=localhost", "invalid IP address 'localhost'"},
    {"transport=dt_socket,allow=300.0.0.1", "invalid IP address '300.0.0.1'"},
    {"transport=dt_socket,allow=127.0.0.1/33", "invalid netmask in '127.0.0.1/33'"},
    {"transport=dt_socket,allow=::1/129", "invalid netmask"},
    {"transport=dt_socket,allow=127.0.0.1/x", "invalid netmask"},
    {"transport=dt_socket,allow=*+127.0.0.1", "'*' cannot be combined"},
    {"transport=dt_socket,allow=127.0.0.1+", "invalid IP address"},
    {"transport=dt_socket,server=n,address=h:1,allow=127.0.0.1", "allow= applies only to transport=dt_socket with server=y"},
    {"transport=dt_android_adb,allow=127.0.0.1", "allow= applies only"},
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

/* Messages quote exactly the address the user wrote, and name the actual problem. */
/* What the JDK 17 agent's options leave in the struct. */
static void test_jdk_options(void **state) {
  (void)state;
  ddmc_options o;
  ddmc_options_init(&o);
  char err[256];
  assert_int_equal(o.timeout_ms, 0);
  assert_int_equal(o.allow_count, 0);
  assert_int_equal(ddmc_options_parse(&o,
                                      "transport=dt_socket,address=0,timeout=2500,quiet=y,allow=127.0.0.2+10.1.0.0/16+[::1]"
                                      "+fe80::/10,launch=/bin/echo a  b,onthrow=java.lang.IllegalStateException,"
                                      "onuncaught=y,strict=y,stdalloc=y",
                                      err, sizeof(err)),
                   0);
  assert_int_equal(o.timeout_ms, 2500);
  assert_int_equal(o.quiet, 1);
  assert_int_equal(o.allow_count, 4);
  static const uint8_t a0[4] = {127, 0, 0, 2}, a1[4] = {10, 1, 0, 0};
  assert_int_equal(o.allow[0].family, 4);
  assert_int_equal(o.allow[0].bits, 32);
  assert_memory_equal(o.allow[0].addr, a0, 4);
  assert_int_equal(o.allow[1].bits, 16);
  assert_memory_equal(o.allow[1].addr, a1, 4);
  assert_int_equal(o.allow[2].family, 6);
  assert_int_equal(o.allow[2].bits, 128);
  assert_int_equal(o.allow[2].addr[15], 1);
  assert_int_equal(o.allow[3].bits, 10);
  assert_int_equal(o.allow[3].addr[0], 0xfe);
  assert_string_equal(o.launch, "/bin/echo a  b");
  assert_string_equal(o.onthrow, "java.lang.IllegalStateException");
  assert_int_equal(o.onuncaught, 1);
  assert_int_equal(o.obsolete, DDMC_OBSOLETE_STRICT | DDMC_OBSOLETE_STDALLOC);
  /* 32 entries fit, a 33rd is refused. */
  char spec[1024] = "transport=dt_socket,allow=";
  for (int i = 0; i < 33; i++) snprintf(spec + strlen(spec), sizeof(spec) - strlen(spec), "%s10.0.0.%d", i ? "+" : "", i);
  assert_int_equal(ddmc_options_parse(&o, spec, err, sizeof(err)), DDMC_EINVAL);
  assert_non_null(strstr(err, "more than 32 entries"));
  *strrchr(spec, '+') = '\0';
  assert_int_equal(ddmc_options_parse(&o, spec, err, sizeof(err)), 0);
  assert_int_equal(o.allow_count, 32);
  /* allow=* after a list: any peer again. */
  assert_int_equal(ddmc_options_parse(&o, "transport=dt_socket,allow=*", err, sizeof(err)), 0);
  assert_int_equal(o.allow_count, 0);
}

static void test_exact_messages(void **state) {
  (void)state;
  static const struct {
    const char *spec, *msg;
  } kCases[] = {
      {"transport=dt_socket,address=[]:8000,server=y", "JDWP address has an empty host '[]:8000'"},
      {"transport=dt_socket,address=:8000", "JDWP address has an empty host ':8000'"},
      {"transport=dt_socket,address=localhost:80x0,server=y",
       "JDWP address has junk in port field '80x0' (want 0-65535)"},
      /* Leading zeros are fine; the range still holds, whatever the zeros. */
      {"transport=dt_socket,address=localhost:0065536", "JDWP address port out of range '0065536' (want 0-65535)"},
      {"transport=dt_socket,address=65536", "JDWP address port out of range '65536' (want 0-65535)"},
      {"transport=dt_socket,address=host:", "JDWP address missing port 'host:'"},
      {"transport=dt_socket,address=[::1]", "JDWP address missing port '[::1]'"},
      {"transport=dt_socket,address=[::1]:", "JDWP address missing port '[::1]:'"},
      {"transport=dt_socket,address=[::1]8000", "JDWP address has junk after ']' '[::1]8000' (want [HOST]:PORT)"},
      {"transport=dt_socket,address=[::1:8000", "JDWP address has '[' without ']' '[::1:8000'"},
      /* Quoted text stays on one line and shows what was typed. */
      {"transport=dt_socket,sus\npend=y", "JDWP option 'sus\\npend' not recognized"},
      {"transport=dt_\x1bsocket", "JDWP transport 'dt_\\x1bsocket' not supported (want dt_socket or dt_android_adb)"},
  };
  for (size_t i = 0; i < sizeof(kCases) / sizeof(kCases[0]); i++) {
    ddmc_options o;
    ddmc_options_init(&o);
    char err[512];
    assert_int_equal(ddmc_options_parse(&o, kCases[i].spec, err, sizeof(err)), DDMC_EINVAL);
    assert_string_equal(err, kCases[i].msg);
  }
  char spec[400], want[400], host[300], err[512];
  memset(host, 'h', 256);
  host[256] = '\0';
  snprintf(spec, sizeof(spec), "transport=dt_socket,address=[%s]:8000,server=y", host);
  snprintf(want, sizeof(want), "JDWP address host too long '[%s]:8000'", host);
  ddmc_options o;
  ddmc_options_init(&o);
  assert_int_equal(ddmc_options_parse(&o, spec, err, sizeof(err)), DDMC_EINVAL);
  assert_string_equal(err, want);
}

static char g_log[2048];
static void log_hook(void *ud, ddmc_log_level lvl, const char *msg) {
  (void)ud;
  (void)lvl;
  size_t n = strlen(g_log);
  snprintf(g_log + n, sizeof(g_log) - n, "%s\n", msg);
}

/* ddmc_vm_start with spec's options; what the library logged is in g_log. */
static int start_logged(const char *spec) {
  ddmc_options o;
  ddmc_options_init(&o);
  assert_int_equal(ddmc_options_parse(&o, spec, NULL, 0), 0);
  ddmc_vm_ops ops = {0};
  ops.log = log_hook;
  ddmc_vm *vm;
  g_log[0] = '\0';
  assert_int_equal(ddmc_vm_new(&vm, &o, &ops, NULL, NULL), 0);
  int rc = ddmc_vm_start(vm);
  ddmc_vm_free(vm);
  return rc;
}

/* A host that does not resolve is reported as that, with getaddrinfo's reason, not followed by
 * a listen error carrying whatever errno an earlier call left behind. */
static void test_unresolvable_host(void **state) {
  (void)state;
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE}, *res;
  int gai = getaddrinfo("no-such-host.invalid", "8000", &hints, &res);
  if (gai == 0) freeaddrinfo(res);
  assert_int_not_equal(gai, 0); /* .invalid never resolves (RFC 6761) */
  char want[300];
  snprintf(want, sizeof(want), "JDWP: cannot resolve 'no-such-host.invalid': %s\n", gai_strerror(gai));
  assert_int_equal(start_logged("transport=dt_socket,address=no-such-host.invalid:8000"), DDMC_EADDR);
  if (strstr(g_log, want) == NULL) print_error("log: %s", g_log);
  assert_non_null(strstr(g_log, want));
  assert_null(strstr(g_log, "cannot listen"));
}

/* A port in use is named as such, with the port that was asked for. */
static void test_port_in_use(void **state) {
  (void)state;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t sl = sizeof(sa);
  assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
  assert_int_equal(listen(fd, 1), 0);
  assert_int_equal(getsockname(fd, (struct sockaddr *)&sa, &sl), 0);
  unsigned port = ntohs(sa.sin_port);
  char spec[100], want[200];
  snprintf(spec, sizeof(spec), "transport=dt_socket,address=127.0.0.1:%05u", port); /* leading zeros too */
  snprintf(want, sizeof(want), "JDWP: cannot listen on 127.0.0.1:%u: %s\n", port, strerror(EADDRINUSE));
  assert_int_equal(start_logged(spec), DDMC_EADDR);
  close(fd);
  if (strstr(g_log, want) == NULL) print_error("log: %s", g_log);
  assert_non_null(strstr(g_log, want));
}

/* An address that is not this machine's fails with its reason, for a named port and for port 0. */
static void test_foreign_address(void **state) {
  (void)state;
  char want[200];
  snprintf(want, sizeof(want), "JDWP: cannot listen on 192.0.2.1:8000: %s\n", strerror(EADDRNOTAVAIL));
  assert_int_equal(start_logged("transport=dt_socket,address=192.0.2.1:8000"), DDMC_EADDR); /* TEST-NET-1 */
  if (strstr(g_log, want) == NULL) print_error("log: %s", g_log);
  assert_non_null(strstr(g_log, want));
  snprintf(want, sizeof(want), "JDWP: cannot listen on 192.0.2.1:0: %s\n", strerror(EADDRNOTAVAIL));
  assert_int_equal(start_logged("transport=dt_socket,address=192.0.2.1:0"), DDMC_EADDR);
  if (strstr(g_log, want) == NULL) print_error("log: %s", g_log);
  assert_non_null(strstr(g_log, want));
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
      cmocka_unit_test(test_good),           cmocka_unit_test(test_bad),
      cmocka_unit_test(test_exact_messages), cmocka_unit_test(test_unresolvable_host),
      cmocka_unit_test(test_port_in_use),    cmocka_unit_test(test_foreign_address),
      cmocka_unit_test(test_help_and_flags), cmocka_unit_test(test_prefixes),
      cmocka_unit_test(test_jdk_options),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
