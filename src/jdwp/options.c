/* SPDX-License-Identifier: Apache-2.0 */
/* Parser for the JDWP agent flag: "-agentlib:jdwp=transport=dt_socket,address=8000,server=y".
 *
 * Follows Dalvik's and ART's rules (see docs/protocol/ddm-wire.md §6) with their bugs fixed: ports are range
 * checked, trailing junk is rejected, unknown options are errors rather than silently ignored
 * (a typo in "suspend" should not start a VM that never waits). Messages are one line, meant to
 * be printed as they are. */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static const char kAgentlib[] = "-agentlib:jdwp=";
static const char kXrun[] = "-Xrunjdwp:";

static void init_defaults(ddmc_options *o) {
  memset(o, 0, sizeof(*o));
  o->transport = DDMC_TRANSPORT_NONE;
  o->server = 1;
  o->suspend = 0;
  o->max_packet = DDMC_DEFAULT_MAX_PACKET;
  o->sendq_bytes = DDMC_DEFAULT_SENDQ_BYTES;
  o->handshake_timeout_ms = 10000;
  o->redial_max_ms = 2000;
  o->zlib_threshold = 1024;
  o->stall_timeout_ms = 30000;
  o->event_request_bytes = DDMC_DEFAULT_EVENT_REQUEST_BYTES;
  o->adb_announce = DDMC_ADB_HEX4_STREAM;
  o->max_sessions = DDMC_DEFAULT_MAX_SESSIONS;
}

/* The first release's layout: no caller can have a smaller struct. */
#define OPTIONS_V0_SIZE DDMC__OPTIONS_V03_SIZE

void ddmc_options_init_(ddmc_options *o, size_t size) {
  if (o == NULL || size < OPTIONS_V0_SIZE) return;
  ddmc_options t;
  init_defaults(&t);
  memcpy(o, &t, DDMC__MIN(size, sizeof(t)));
}

int ddmc_options_is_jdwp_flag(const char *arg) {
  return arg != NULL && (strncmp(arg, kAgentlib, sizeof(kAgentlib) - 1) == 0 ||
                         strncmp(arg, kXrun, sizeof(kXrun) - 1) == 0);
}

const char *ddmc_options_help(void) {
  return "JDWP options: -agentlib:jdwp=OPT=VALUE,... (or -Xrunjdwp:OPT=VALUE,...)\n"
         "  transport=dt_socket|dt_android_adb   required\n"
         "  address=[HOST:]PORT                  dt_socket; default host 127.0.0.1 when server=y;\n"
         "                                       PORT 0 or no address: any free port\n"
         "  server=y|n                           y: listen (default); n: connect to HOST:PORT\n"
         "  suspend=y|n                          y: wait for a debugger before running (default n)\n"
         "  timeout=MS                           a debugger must connect (listening) or answer\n"
         "                                       (dialing) within MS, else the VM ends; 0: no limit\n"
         "  allow=IP[/BITS]+...|*                server=y: only these peers may connect (default *;\n"
         "                                       the listening address is loopback unless named)\n"
         "  launch=CMD                           run CMD TRANSPORT ADDRESS when the debug service\n"
         "                                       starts (no shell; split on spaces)\n"
         "  onthrow=CLASS                        start the debug service at the first throw of CLASS\n"
         "                                       (needs launch=, as the JDK's agent does)\n"
         "  onuncaught=y|n                       start it at the first uncaught exception (needs launch=)\n"
         "  quiet=y|n                            y: the VM prints no listening line\n"
         "  sessions=N                           libddmc: peers served at once, a debugger and\n"
         "                                       monitors (default 8, 1-64; docs/sessions.md)\n"
         "  mutf8=n                              strings are standard UTF-8 (mutf8=y is refused)\n"
         "  strict=y|n, stdalloc=y|n             obsolete, accepted with a warning (as the JDK)\n"
         "Examples:\n"
         "  -agentlib:jdwp=transport=dt_socket,address=8000,server=y,suspend=n\n"
         "  -Xrunjdwp:transport=dt_socket,address=localhost:6500,server=n\n"
         "  -agentlib:jdwp=transport=dt_android_adb,server=y,suspend=n\n";
}

/* The quoted part of a message, control characters as \n or \xHH: a spec with a newline in it
 * must not break the promise of one line. Stops when q is full (the message is cut anyway). */
static size_t quote_visible(const char *a, size_t alen, char *q, size_t qlen) {
  size_t at = 0;
  for (size_t i = 0; i < alen && at + 5 < qlen; i++) {
    unsigned char c = (unsigned char)a[i];
    if (c == '\n') at += (size_t)snprintf(q + at, qlen - at, "\\n");
    else if (c < 0x20 || c == 0x7f) at += (size_t)snprintf(q + at, qlen - at, "\\x%02x", c);
    else q[at++] = (char)c;
  }
  q[at] = '\0';
  return at;
}

static int fail(char *err, size_t errlen, const char *fmt, const char *a, size_t alen) {
  if (err != NULL && errlen > 0) {
    char q[1024];
    size_t n = quote_visible(a, alen, q, sizeof(q));
    snprintf(err, errlen, fmt, (int)n, q);
  }
  return DDMC_EINVAL;
}

static int parse_yn(const char *v, size_t n, int *out) {
  if (n == 1 && v[0] == 'y') {
    *out = 1;
    return 0;
  }
  if (n == 1 && v[0] == 'n') {
    *out = 0;
    return 0;
  }
  return -1;
}

/* Decimal, leading zeros allowed as the JDK allows them ("08000" is 8000). Returns 0, -1 for a
 * character that is not a digit, -2 for a number past 65535 (however many leading zeros). */
static int parse_port(const char *v, size_t n, uint16_t *out) {
  if (n == 0) return -1;
  for (size_t i = 0; i < n; i++)
    if (v[i] < '0' || v[i] > '9') return -1;
  unsigned long port = 0;
  for (size_t i = 0; i < n; i++) {
    port = port * 10 + (unsigned long)(v[i] - '0');
    if (port > 0xffff) return -2; /* stops before the value can overflow */
  }
  *out = (uint16_t)port;
  return 0;
}

/* Where "[HOST]:PORT", "HOST:PORT" or "PORT" puts its host and port. The brackets let an IPv6
 * host hold colons; without them the last colon splits. Messages quote the whole address as
 * the user wrote it. */
static int split_address(const char *v, size_t n, const char **host, size_t *hostlen, const char **port, char *err,
                         size_t errlen) {
  *host = NULL;
  *hostlen = 0;
  *port = v;
  if (n > 0 && v[0] == '[') {
    const char *close = memchr(v, ']', n);
    if (close == NULL) return fail(err, errlen, "JDWP address has '[' without ']' '%.*s'", v, n);
    *host = v + 1;
    *hostlen = (size_t)(close - *host);
    *port = close + 1;
    if (*port < v + n && **port != ':')
      return fail(err, errlen, "JDWP address has junk after ']' '%.*s' (want [HOST]:PORT)", v, n);
    if (*port < v + n) ++*port;
    return 0;
  }
  for (size_t i = n; i > 0; i--) {
    if (v[i - 1] == ':') {
      *host = v;
      *hostlen = i - 1;
      *port = v + i;
      break;
    }
  }
  return 0;
}

static int parse_address(ddmc_options *o, const char *v, size_t n, char *err, size_t errlen) {
  const char *host, *port;
  size_t hostlen;
  int rc = split_address(v, n, &host, &hostlen, &port, err, errlen);
  if (rc != 0) return rc;
  size_t portlen = (size_t)(v + n - port);
  if (portlen == 0) return fail(err, errlen, "JDWP address missing port '%.*s'", v, n);
  rc = parse_port(port, portlen, &o->port);
  if (rc == -1) return fail(err, errlen, "JDWP address has junk in port field '%.*s' (want 0-65535)", port, portlen);
  if (rc == -2) return fail(err, errlen, "JDWP address port out of range '%.*s' (want 0-65535)", port, portlen);
  if (host == NULL) return 0;
  if (hostlen == 0) return fail(err, errlen, "JDWP address has an empty host '%.*s'", v, n);
  if (hostlen >= sizeof(o->host)) return fail(err, errlen, "JDWP address host too long '%.*s'", v, n);
  memcpy(o->host, host, hostlen);
  o->host[hostlen] = '\0';
  return 0;
}

/* A decimal count of milliseconds, 0 to INT32_MAX. */
static int parse_ms(const char *v, size_t n, int *out) {
  if (n == 0 || n > 10) return -1;
  long long x = 0;
  for (size_t i = 0; i < n; i++) {
    if (v[i] < '0' || v[i] > '9') return -1;
    x = x * 10 + (v[i] - '0');
  }
  if (x > INT32_MAX) return -1;
  *out = (int)x;
  return 0;
}

/* One allow= entry: an IPv4 or IPv6 address (IPv6 may be in brackets), optionally /BITS. */
static int parse_allow_entry(const char *v, size_t n, struct ddmc_allow_entry *e, char *err, size_t errlen) {
  const char *slash = memchr(v, '/', n);
  size_t alen = slash ? (size_t)(slash - v) : n;
  char a[64];
  const char *ap = v;
  if (alen >= 2 && v[0] == '[' && v[alen - 1] == ']') {
    ap++;
    alen -= 2;
  }
  if (alen == 0 || alen >= sizeof(a)) return fail(err, errlen, "JDWP allow: invalid IP address '%.*s'", v, n);
  memcpy(a, ap, alen);
  a[alen] = '\0';
  memset(e, 0, sizeof(*e));
  if (inet_pton(AF_INET, a, e->addr) == 1) {
    e->family = 4;
    e->bits = 32;
  } else if (inet_pton(AF_INET6, a, e->addr) == 1) {
    e->family = 6;
    e->bits = 128;
  } else {
    return fail(err, errlen, "JDWP allow: invalid IP address '%.*s' (want numeric IPv4 or IPv6)", v, n);
  }
  if (slash != NULL) {
    int bits;
    if (parse_ms(slash + 1, (size_t)(v + n - slash - 1), &bits) != 0 || bits > e->bits)
      return fail(err, errlen, "JDWP allow: invalid netmask in '%.*s'", v, n);
    e->bits = (uint8_t)bits;
  }
  return 0;
}

/* allow=A+B+...: '*' alone allows any peer, as the JDK says ("cannot be expanded" with others). */
static int parse_allow(ddmc_options *o, const char *v, size_t n, char *err, size_t errlen) {
  o->allow_count = 0;
  if (n == 1 && v[0] == '*') return 0;
  if (n == 0) return fail(err, errlen, "JDWP allow: empty list '%.*s'", v, n);
  const char *p = v, *end = v + n;
  while (p <= end) {
    const char *plus = memchr(p, '+', (size_t)(end - p));
    size_t len = plus ? (size_t)(plus - p) : (size_t)(end - p);
    if (len == 1 && p[0] == '*') return fail(err, errlen, "JDWP allow: '*' cannot be combined with addresses '%.*s'", v, n);
    if (o->allow_count == DDMC_ALLOW_MAX) return fail(err, errlen, "JDWP allow: more than 32 entries in '%.*s'", v, n);
    int rc = parse_allow_entry(p, len, &o->allow[o->allow_count], err, errlen);
    if (rc != 0) return rc;
    o->allow_count++;
    if (plus == NULL) break;
    p = plus + 1;
  }
  return 0;
}

/* A string option's value, copied; empty or too long is an error. */
static int parse_text(const char *name, const char *v, size_t n, char *out, size_t outlen, char *err, size_t errlen) {
  char fmt[96];
  if (n == 0 || n >= outlen) {
    snprintf(fmt, sizeof(fmt), "JDWP option '%s' %s '%%.*s'", name, n == 0 ? "is empty" : "is too long");
    return fail(err, errlen, fmt, v, n);
  }
  memcpy(out, v, n);
  out[n] = '\0';
  return 0;
}

/* The options of JDK 17's agent beyond transport, address, server and suspend. Returns 0, 1 for a
 * name it does not know, or an error. */
static int parse_jdk_option(ddmc_options *t, const char *p, size_t nlen, const char *v, size_t vlen, char *err,
                            size_t errlen) {
#define IS(name) (nlen == sizeof(name) - 1 && memcmp(p, name, nlen) == 0)
#define YN(name, field)                                                                      \
  if (parse_yn(v, vlen, &(field)) != 0)                                                      \
    return fail(err, errlen, "JDWP option '" name "' must be 'y' or 'n', not '%.*s'", v, vlen); \
  return 0
  int flag;
  if (IS("timeout")) {
    if (parse_ms(v, vlen, &t->timeout_ms) != 0)
      return fail(err, errlen, "JDWP option 'timeout' must be milliseconds (0-2147483647), not '%.*s'", v, vlen);
    return 0;
  }
  if (IS("allow")) return parse_allow(t, v, vlen, err, errlen);
  if (IS("sessions")) { /* libddmc's own (docs/sessions.md): the JDK's agent serves one peer */
    int n;
    if (parse_ms(v, vlen, &n) != 0 || n < 1 || n > 64)
      return fail(err, errlen, "JDWP option 'sessions' must be 1-64 peers served at once, not '%.*s'", v, vlen);
    t->max_sessions = n;
    return 0;
  }
  if (IS("quiet")) { YN("quiet", t->quiet); }
  if (IS("onuncaught")) { YN("onuncaught", t->onuncaught); }
  if (IS("launch")) return parse_text("launch", v, vlen, t->launch, sizeof(t->launch), err, errlen);
  if (IS("onthrow")) return parse_text("onthrow", v, vlen, t->onthrow, sizeof(t->onthrow), err, errlen);
  if (IS("mutf8")) {
    if (parse_yn(v, vlen, &flag) != 0) return fail(err, errlen, "JDWP option 'mutf8' must be 'y' or 'n', not '%.*s'", v, vlen);
    if (flag) return fail(err, errlen, "JDWP option 'mutf8=%.*s' is not supported: strings go out as standard UTF-8", v, vlen);
    return 0;
  }
  if (IS("strict") || IS("stdalloc")) {
    if (parse_yn(v, vlen, &flag) != 0) return fail(err, errlen, "JDWP option '%.*s' must be 'y' or 'n'", p, nlen);
    t->obsolete |= IS("strict") ? DDMC_OBSOLETE_STRICT : DDMC_OBSOLETE_STDALLOC;
    return 0;
  }
  if (IS("oncaught"))
    return fail(err, errlen, "JDWP option '%.*s' not recognized (the JDK's agent has onthrow= and onuncaught=)", p, nlen);
#undef YN
#undef IS
  return 1;
}

/* Rules between options, the JDK's where it has them. */
static int check_combination(const ddmc_options *t, char *err, size_t errlen) {
  if (t->transport == DDMC_TRANSPORT_NONE) return fail(err, errlen, "JDWP opts: %.*s", "must specify transport", 22);
  if (t->transport == DDMC_TRANSPORT_SOCKET && !t->server && (t->host[0] == '\0' || t->port == 0))
    return fail(err, errlen, "JDWP opts: %.*s", "when server=n, must specify host and port", 41);
  if ((t->onthrow[0] || t->onuncaught) && t->launch[0] == '\0')
    return fail(err, errlen, "JDWP opts: %.*s", "specify launch=<command line> when using onthrow or onuncaught", 62);
  if (t->allow_count > 0 && (!t->server || t->transport != DDMC_TRANSPORT_SOCKET))
    return fail(err, errlen, "JDWP opts: %.*s", "allow= applies only to transport=dt_socket with server=y", 56);
  return 0;
}

static int parse(ddmc_options *o, const char *spec, char *err, size_t errlen);

int ddmc_options_parse_(ddmc_options *o, size_t size, const char *spec, char *err, size_t errlen) {
  if (o != NULL && size < OPTIONS_V0_SIZE) {
    if (err != NULL && errlen > 0) snprintf(err, errlen, "JDWP opts: ddmc_options from an incompatible header");
    return DDMC_EVERSION;
  }
  ddmc_options t; /* the caller's fields, the rest at their defaults */
  init_defaults(&t);
  if (o != NULL) memcpy(&t, o, DDMC__MIN(size, sizeof(t)));
  int rc = parse(o ? &t : NULL, spec, err, errlen);
  if (rc == 0 || (o != NULL && t.help)) memcpy(o, &t, DDMC__MIN(size, sizeof(t)));
  return rc;
}

static int parse(ddmc_options *o, const char *spec, char *err, size_t errlen) {
  if (err != NULL && errlen > 0) err[0] = '\0';
  if (o == NULL || spec == NULL) return fail(err, errlen, "JDWP opts: %.*s", "no options given", 16);
  if (strncmp(spec, kAgentlib, sizeof(kAgentlib) - 1) == 0) spec += sizeof(kAgentlib) - 1;
  else if (strncmp(spec, kXrun, sizeof(kXrun) - 1) == 0) spec += sizeof(kXrun) - 1;

  ddmc_options t = *o; /* o changes only when the whole spec is good */
  int saw_address = 0;
  const char *p = spec;
  if (*p == '\0') return fail(err, errlen, "JDWP opts: %.*s", "empty option list", 17);
  while (*p != '\0') {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    const char *eq = memchr(p, '=', len);
    if (len == 4 && memcmp(p, "help", 4) == 0) {
      o->help = 1;
      return fail(err, errlen, "JDWP %.*s requested", "help", 4);
    }
    if (len == 0) return fail(err, errlen, "JDWP opts: empty option in '%.*s'", spec, strlen(spec));
    if (eq == NULL) return fail(err, errlen, "JDWP opts: garbage at '%.*s' (want name=value)", p, len);
    size_t nlen = (size_t)(eq - p);
    const char *v = eq + 1;
    size_t vlen = len - nlen - 1;
#define IS(name) (nlen == sizeof(name) - 1 && memcmp(p, name, nlen) == 0)
    if (IS("transport")) {
      if (vlen == 9 && memcmp(v, "dt_socket", 9) == 0) t.transport = DDMC_TRANSPORT_SOCKET;
      else if (vlen == 14 && memcmp(v, "dt_android_adb", 14) == 0) t.transport = DDMC_TRANSPORT_ADB;
      else return fail(err, errlen, "JDWP transport '%.*s' not supported (want dt_socket or dt_android_adb)", v, vlen);
    } else if (IS("address")) {
      int rc = parse_address(&t, v, vlen, err, errlen);
      if (rc != 0) return rc;
      saw_address = 1;
    } else if (IS("server")) {
      if (parse_yn(v, vlen, &t.server) != 0)
        return fail(err, errlen, "JDWP option 'server' must be 'y' or 'n', not '%.*s'", v, vlen);
    } else if (IS("suspend")) {
      if (parse_yn(v, vlen, &t.suspend) != 0)
        return fail(err, errlen, "JDWP option 'suspend' must be 'y' or 'n', not '%.*s'", v, vlen);
    } else {
      int rc = parse_jdk_option(&t, p, nlen, v, vlen, err, errlen);
      if (rc == 1) return fail(err, errlen, "JDWP option '%.*s' not recognized", p, nlen);
      if (rc != 0) return rc;
    }
#undef IS
    p += len;
    if (*p == ',') {
      p++;
      if (*p == '\0') return fail(err, errlen, "JDWP opts: trailing comma in '%.*s'", spec, strlen(spec));
    }
  }
  int rc = check_combination(&t, err, errlen);
  if (rc != 0) return rc;
  if (!saw_address && t.transport == DDMC_TRANSPORT_SOCKET) t.port = 0;
  *o = t;
  return 0;
}
