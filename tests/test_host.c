/* SPDX-License-Identifier: Apache-2.0 */
/* Tests for host/ddmc_host: the host (ddmlib) side of DDM.
 *
 * - Byte-vector tests of every chunk parser, each also fed every prefix of its input in an
 *   exact-size heap copy, so an over-read shows up under -fsanitize=address.
 * - Packet reader, handshake, request/FIFO and ZLIB tests over socketpair(): the test itself
 *   plays the VM by writing bytes into the peer end (ids are deterministic: the first request is
 *   0x40000000), with a helper thread only where the VM must react to what the host sends.
 * Every blocking call has a timeout, and each test arms alarm() as a backstop. */
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include "ddmc_host.h"
#include "monitor.h"

#define FOURCC DDMC_HOST_FOURCC
#define ID0 0x40000000u

/* ---- byte builder ---------------------------------------------------------------------------- */

typedef struct bb {
  uint8_t *d;
  size_t n, cap;
} bb;

static void bb_need(bb *b, size_t k) {
  if (b->n + k > b->cap) {
    b->cap = (b->n + k) * 2 + 64;
    b->d = realloc(b->d, b->cap);
    assert_non_null(b->d);
  }
}
static void bb_u8(bb *b, uint8_t v) {
  bb_need(b, 1);
  b->d[b->n++] = v;
}
static void bb_u16(bb *b, uint16_t v) {
  bb_u8(b, (uint8_t)(v >> 8));
  bb_u8(b, (uint8_t)v);
}
static void bb_u32(bb *b, uint32_t v) {
  bb_u16(b, (uint16_t)(v >> 16));
  bb_u16(b, (uint16_t)v);
}
static void bb_u64(bb *b, uint64_t v) {
  bb_u32(b, (uint32_t)(v >> 32));
  bb_u32(b, (uint32_t)v);
}
static void bb_bytes(bb *b, const void *p, size_t n) {
  bb_need(b, n);
  if (n) memcpy(b->d + b->n, p, n);
  b->n += n;
}
/* ASCII string as [u4 len][UTF-16BE]. */
static void bb_str(bb *b, const char *s) {
  size_t n = strlen(s);
  bb_u32(b, (uint32_t)n);
  for (size_t i = 0; i < n; i++) bb_u16(b, (uint8_t)s[i]);
}
static void bb_units(bb *b, const uint16_t *u, size_t n) {
  bb_u32(b, (uint32_t)n);
  for (size_t i = 0; i < n; i++) bb_u16(b, u[i]);
}
static void bb_free(bb *b) {
  free(b->d);
  memset(b, 0, sizeof *b);
}

/* Packets as the VM writes them. */
static void pk_chunk_cmd(bb *b, uint32_t id, uint32_t type, const void *p, size_t n) {
  bb_u32(b, (uint32_t)(19 + n));
  bb_u32(b, id);
  bb_u8(b, 0);
  bb_u8(b, 199);
  bb_u8(b, 1);
  bb_u32(b, type);
  bb_u32(b, (uint32_t)n);
  bb_bytes(b, p, n);
}
static void pk_reply(bb *b, uint32_t id, uint16_t err, const void *body, size_t n) {
  bb_u32(b, (uint32_t)(11 + n));
  bb_u32(b, id);
  bb_u8(b, 0x80);
  bb_u16(b, err);
  bb_bytes(b, body, n);
}
static void pk_chunk_reply(bb *b, uint32_t id, uint32_t type, const void *p, size_t n) {
  bb_u32(b, (uint32_t)(19 + n));
  bb_u32(b, id);
  bb_u8(b, 0x80);
  bb_u16(b, 0);
  bb_u32(b, type);
  bb_u32(b, (uint32_t)n);
  bb_bytes(b, p, n);
}

/* ---- plumbing -------------------------------------------------------------------------------- */

static int setup_alarm(void **state) {
  (void)state;
  alarm(20); /* backstop: a hung test dies instead of blocking ctest */
  return 0;
}
static int teardown_alarm(void **state) {
  (void)state;
  alarm(0);
  return 0;
}

static void pair(ddmc_host **h, int *peer) {
  int sv[2];
  assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  assert_int_equal(ddmc_host_from_fd(h, sv[0]), 0);
  *peer = sv[1];
}

static void wr(int fd, const void *p, size_t n) {
  const uint8_t *q = p;
  while (n) {
    ssize_t k = write(fd, q, n);
    if (k < 0 && errno == EINTR) continue;
    assert_true(k > 0);
    q += k;
    n -= (size_t)k;
  }
}
/* Reads exactly n bytes (peer side), bounded by alarm(). */
static void rd(int fd, void *p, size_t n) {
  uint8_t *q = p;
  while (n) {
    ssize_t k = read(fd, q, n);
    if (k < 0 && errno == EINTR) continue;
    assert_true(k > 0);
    q += k;
    n -= (size_t)k;
  }
}
static uint32_t be32(const uint8_t *p) {
  return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}
/* Reads one whole packet the host sent into b (peer side). */
static void rd_packet(int fd, bb *b) {
  uint8_t h[4];
  rd(fd, h, 4);
  uint32_t len = be32(h);
  assert_true(len >= 11);
  b->n = 0;
  bb_bytes(b, h, 4);
  bb_need(b, len - 4);
  rd(fd, b->d + 4, len - 4);
  b->n = len;
}
static int64_t mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
static void msleep(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Calls fn on an exact-size heap copy of every prefix of (p, n) (ASan sees any over-read) and
 * returns how many prefixes parsed with rc 0. check(k, rc, ud) may inspect the result. */
typedef int (*prefix_fn)(const uint8_t *p, size_t n, void *ud, int *rc);
static size_t each_prefix(const uint8_t *p, size_t n, prefix_fn fn, void *ud) {
  size_t ok = 0;
  for (size_t k = 0; k <= n; k++) {
    uint8_t *c = malloc(k ? k : 1);
    assert_non_null(c);
    if (k) memcpy(c, p, k);
    int rc = 0;
    fn(k ? c : NULL, k, ud, &rc);
    assert_true(rc == 0 || rc == DDMC_EPROTO);
    if (rc == 0) ok++;
    free(c);
  }
  return ok;
}

/* ---- strings --------------------------------------------------------------------------------- */

static void conv(const uint16_t *u, size_t n, const char *want) {
  uint8_t buf[64];
  for (size_t i = 0; i < n; i++) buf[2 * i] = (uint8_t)(u[i] >> 8), buf[2 * i + 1] = (uint8_t)u[i];
  char *s = NULL;
  assert_int_equal(ddmc_host_utf16be_to_utf8(n ? buf : NULL, n, &s), 0);
  assert_string_equal(s, want);
  free(s);
}

static void test_utf16_to_utf8(void **state) {
  (void)state;
  conv(NULL, 0, "");
  conv((const uint16_t[]){'m', 'a', 'i', 'n'}, 4, "main");
  conv((const uint16_t[]){0xe9, 0x4e2d}, 2, "\xc3\xa9\xe4\xb8\xad");
  conv((const uint16_t[]){0xd83d, 0xde00}, 2, "\xf0\x9f\x98\x80");         /* U+1F600 */
  conv((const uint16_t[]){'a', 0xdbff, 0xdfff}, 3, "a\xf4\x8f\xbf\xbf");   /* U+10FFFF */
  conv((const uint16_t[]){0xd83d}, 1, "\xef\xbf\xbd");                     /* lone high, end */
  conv((const uint16_t[]){0xde00, 'x'}, 2, "\xef\xbf\xbdx");               /* lone low */
  conv((const uint16_t[]){0xd83d, 'x'}, 2, "\xef\xbf\xbdx");               /* high + non-low */
  conv((const uint16_t[]){'a', 0, 'b'}, 3, "a\xef\xbf\xbd" "b");           /* NUL */
  char *s = NULL;
  assert_int_equal(ddmc_host_utf16be_to_utf8(NULL, 3, &s), DDMC_EINVAL);
}

static void test_utf8_to_utf16(void **state) {
  (void)state;
  const char *in = "a\xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80";
  uint8_t *o = NULL;
  size_t n = 0;
  assert_int_equal(ddmc_host_utf8_to_utf16be(in, &o, &n), 0);
  const uint8_t want[] = {0, 'a', 0, 0xe9, 0x4e, 0x2d, 0xd8, 0x3d, 0xde, 0x00};
  assert_int_equal(n, sizeof want);
  assert_memory_equal(o, want, n);
  char *back = NULL;
  assert_int_equal(ddmc_host_utf16be_to_utf8(o, n / 2, &back), 0);
  assert_string_equal(back, in);
  free(back);
  free(o);
  /* Bad UTF-8: truncated sequence, stray continuation, overlong, encoded surrogate. */
  assert_int_equal(ddmc_host_utf8_to_utf16be("\xe4\xb8" "x\x80\xc0\xaf\xed\xa0\x80", &o, &n), 0);
  for (size_t i = 0; i + 1 < n; i += 2) {
    uint16_t u = (uint16_t)(o[i] << 8 | o[i + 1]);
    assert_true(u == 0xfffd || u == 'x' || (u < 0xd800 || u > 0xdfff));
  }
  free(o);
}

/* ---- HELO ------------------------------------------------------------------------------------ */

static void helo_payload(bb *b, int optional_fields) {
  bb_u32(b, 1);
  bb_u32(b, 4242);
  bb_u32(b, 13);
  bb_u32(b, 3);
  const char *vm = "Dalvik v2.1.0";
  for (int i = 0; i < 13; i++) bb_u16(b, (uint8_t)vm[i]);
  bb_u16(b, 'a'), bb_u16(b, 0xd83d), bb_u16(b, 0xde00); /* "a😀" */
  if (optional_fields >= 1) bb_u32(b, 10);                 /* user id */
  if (optional_fields >= 2) bb_str(b, "64-bit (arm64)");
  if (optional_fields >= 3) bb_str(b, "CheckJNI=false");
  if (optional_fields >= 4) bb_u8(b, 1);
  if (optional_fields >= 5) bb_str(b, "com.example");
  if (optional_fields >= 6) bb_u32(b, FOURCC('A', '_', 'G', 'O'));
}

static void test_helo_all_fields(void **state) {
  (void)state;
  bb b = {0};
  helo_payload(&b, 6);
  bb_u32(&b, 0xdeadbeef); /* unknown future field: ignored */
  ddmc_host_helo x;
  assert_int_equal(ddmc_host_helo_parse(b.d, b.n, &x), 0);
  assert_int_equal(x.version, 1);
  assert_int_equal(x.pid, 4242);
  assert_string_equal(x.vm_ident, "Dalvik v2.1.0");
  assert_string_equal(x.app_name, "a\xf0\x9f\x98\x80");
  assert_int_equal(x.present, DDMC_HOST_HELO_USER_ID | DDMC_HOST_HELO_ABI | DDMC_HOST_HELO_JVM_FLAGS |
                                  DDMC_HOST_HELO_NATIVE_DEBUGGABLE | DDMC_HOST_HELO_PKG_NAME |
                                  DDMC_HOST_HELO_STAGE);
  assert_int_equal(x.user_id, 10);
  assert_string_equal(x.abi, "64-bit (arm64)");
  assert_string_equal(x.jvm_flags, "CheckJNI=false");
  assert_int_equal(x.native_debuggable, 1);
  assert_string_equal(x.pkg_name, "com.example");
  assert_int_equal(x.stage, FOURCC('A', '_', 'G', 'O'));
  assert_int_equal(x.truncated, 0);
  ddmc_host_helo_free(&x);
  ddmc_host_helo_free(&x); /* twice is fine */
  bb_free(&b);
}

static void test_helo_optional_absent(void **state) {
  (void)state;
  for (int k = 0; k <= 6; k++) {
    bb b = {0};
    helo_payload(&b, k);
    ddmc_host_helo x;
    assert_int_equal(ddmc_host_helo_parse(b.d, b.n, &x), 0);
    assert_int_equal(x.truncated, 0);
    assert_int_equal(x.present, (1u << k) - 1); /* the fields come in bit order */
    assert_string_equal(x.vm_ident, "Dalvik v2.1.0");
    if (k < 2) assert_null(x.abi);
    if (k < 5) assert_null(x.pkg_name);
    ddmc_host_helo_free(&x);
    bb_free(&b);
  }
  /* 0-length strings are valid and present. */
  bb b = {0};
  bb_u32(&b, 1), bb_u32(&b, 1), bb_u32(&b, 0), bb_u32(&b, 0);
  ddmc_host_helo x;
  assert_int_equal(ddmc_host_helo_parse(b.d, b.n, &x), 0);
  assert_string_equal(x.vm_ident, "");
  assert_string_equal(x.app_name, "");
  ddmc_host_helo_free(&x);
  bb_free(&b);
}

static int helo_prefix(const uint8_t *p, size_t n, void *ud, int *rc) {
  const ddmc_host_helo *full = ud;
  ddmc_host_helo x;
  *rc = ddmc_host_helo_parse(p, n, &x);
  if (*rc) {
    assert_null(x.vm_ident); /* left zeroed */
    return 0;
  }
  assert_int_equal(x.present & ~full->present, 0);
  assert_string_equal(x.vm_ident, full->vm_ident);
  assert_string_equal(x.app_name, full->app_name);
  if (x.present & DDMC_HOST_HELO_USER_ID) assert_int_equal(x.user_id, full->user_id);
  if (x.present & DDMC_HOST_HELO_ABI) assert_string_equal(x.abi, full->abi);
  else assert_null(x.abi);
  if (x.present & DDMC_HOST_HELO_JVM_FLAGS) assert_string_equal(x.jvm_flags, full->jvm_flags);
  if (x.present & DDMC_HOST_HELO_PKG_NAME) assert_string_equal(x.pkg_name, full->pkg_name);
  else assert_null(x.pkg_name);
  ddmc_host_helo_free(&x);
  return 0;
}

static void test_helo_every_prefix(void **state) {
  (void)state;
  bb b = {0};
  helo_payload(&b, 6);
  ddmc_host_helo full;
  assert_int_equal(ddmc_host_helo_parse(b.d, b.n, &full), 0);
  size_t mandatory = 16 + 2 * 16;
  size_t ok = each_prefix(b.d, b.n, helo_prefix, &full);
  assert_int_equal(ok, b.n + 1 - mandatory); /* every prefix from the mandatory part on parses */
  ddmc_host_helo_free(&full);

  /* A cut optional string: fields before it stay, truncated is set. */
  bb c = {0};
  helo_payload(&c, 1);
  bb_u32(&c, 5);
  bb_u16(&c, 'x');
  ddmc_host_helo x;
  assert_int_equal(ddmc_host_helo_parse(c.d, c.n, &x), 0);
  assert_int_equal(x.present, DDMC_HOST_HELO_USER_ID);
  assert_int_equal(x.truncated, 1);
  assert_null(x.abi);
  ddmc_host_helo_free(&x);
  bb_free(&c);

  /* Hostile lengths in the mandatory part. */
  bb d = {0};
  bb_u32(&d, 1), bb_u32(&d, 1), bb_u32(&d, 0xffffffffu), bb_u32(&d, 0x80000000u);
  assert_int_equal(ddmc_host_helo_parse(d.d, d.n, &x), DDMC_EPROTO);
  bb_free(&d);
  bb_free(&b);
}

/* ---- FEAT, APNM ------------------------------------------------------------------------------ */

static int feat_prefix(const uint8_t *p, size_t n, void *ud, int *rc) {
  ddmc_host_feat f;
  *rc = ddmc_host_feat_parse(p, n, &f);
  if (*rc) assert_null(f.names);
  ddmc_host_feat_free(&f);
  return 0;
}

static void test_feat(void **state) {
  (void)state;
  bb b = {0};
  bb_u32(&b, 3);
  bb_str(&b, "hprof-heap-dump");
  bb_str(&b, "");
  bb_str(&b, "method-trace-profiling-streaming");
  ddmc_host_feat f;
  assert_int_equal(ddmc_host_feat_parse(b.d, b.n, &f), 0);
  assert_int_equal(f.count, 3);
  assert_string_equal(f.names[0], "hprof-heap-dump");
  assert_string_equal(f.names[1], "");
  assert_string_equal(f.names[2], "method-trace-profiling-streaming");
  ddmc_host_feat_free(&f);
  assert_int_equal(each_prefix(b.d, b.n, feat_prefix, NULL), 1); /* only the whole thing */

  uint8_t hostile[] = {0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0};
  assert_int_equal(ddmc_host_feat_parse(hostile, sizeof hostile, &f), DDMC_EPROTO);
  uint8_t zero[] = {0, 0, 0, 0};
  assert_int_equal(ddmc_host_feat_parse(zero, 4, &f), 0);
  assert_int_equal(f.count, 0);
  ddmc_host_feat_free(&f);
  bb_free(&b);
}

static int apnm_prefix(const uint8_t *p, size_t n, void *ud, int *rc) {
  ddmc_host_apnm a;
  *rc = ddmc_host_apnm_parse(p, n, &a);
  if (*rc == 0) {
    assert_string_equal(a.name, "com.ex:svc");
    if (a.has_user_id) assert_int_equal(a.user_id, 11);
    if (a.pkg_name) assert_string_equal(a.pkg_name, "com.ex");
  } else {
    assert_null(a.name);
  }
  ddmc_host_apnm_free(&a);
  return 0;
}

static void test_apnm(void **state) {
  (void)state;
  bb b = {0};
  bb_str(&b, "com.ex:svc");
  ddmc_host_apnm a;
  assert_int_equal(ddmc_host_apnm_parse(b.d, b.n, &a), 0);
  assert_string_equal(a.name, "com.ex:svc");
  assert_int_equal(a.has_user_id, 0);
  assert_null(a.pkg_name);
  ddmc_host_apnm_free(&a);

  bb_u32(&b, 11);
  assert_int_equal(ddmc_host_apnm_parse(b.d, b.n, &a), 0);
  assert_int_equal(a.has_user_id, 1);
  assert_int_equal(a.user_id, 11);
  assert_null(a.pkg_name);
  ddmc_host_apnm_free(&a);

  bb_str(&b, "com.ex");
  assert_int_equal(ddmc_host_apnm_parse(b.d, b.n, &a), 0);
  assert_string_equal(a.pkg_name, "com.ex");
  assert_int_equal(a.truncated, 0);
  ddmc_host_apnm_free(&a);

  size_t ok = each_prefix(b.d, b.n, apnm_prefix, NULL);
  assert_int_equal(ok, b.n + 1 - (4 + 20)); /* from the end of the name on */
  bb_free(&b);
}

/* ---- small fixed chunks ---------------------------------------------------------------------- */

static void test_small_chunks(void **state) {
  (void)state;
  uint8_t r = 9;
  assert_int_equal(ddmc_host_wait_parse(NULL, 0, &r), DDMC_EPROTO);
  assert_int_equal(ddmc_host_wait_parse((const uint8_t[]){0}, 1, &r), 0);
  assert_int_equal(r, 0);
  uint32_t v = 7;
  const uint8_t four[] = {0, 0, 1, 2};
  for (size_t k = 0; k < 4; k++) {
    assert_int_equal(ddmc_host_thde_parse(four, k, &v), DDMC_EPROTO);
    assert_int_equal(ddmc_host_heapid_parse(four, k, &v), DDMC_EPROTO);
  }
  assert_int_equal(ddmc_host_thde_parse(four, 4, &v), 0);
  assert_int_equal(v, 0x102);
  assert_int_equal(ddmc_host_heapid_parse(four, 4, &v), 0);
  assert_int_equal(v, 0x102);
}

static int thname_prefix(const uint8_t *p, size_t n, void *ud, int *rc) {
  ddmc_host_thname t;
  *rc = ddmc_host_thname_parse(p, n, &t);
  if (*rc) assert_null(t.name);
  ddmc_host_thname_free(&t);
  return 0;
}

static void test_thcr_thnm(void **state) {
  (void)state;
  bb b = {0};
  bb_u32(&b, 5);
  bb_units(&b, (const uint16_t[]){'w', 0xd801, 0xdc37, 0xd801}, 4); /* "w𐐷" + lone high */
  ddmc_host_thname t;
  assert_int_equal(ddmc_host_thname_parse(b.d, b.n, &t), 0);
  assert_int_equal(t.thread_id, 5);
  assert_string_equal(t.name, "w\xf0\x90\x90\xb7\xef\xbf\xbd");
  ddmc_host_thname_free(&t);
  assert_int_equal(each_prefix(b.d, b.n, thname_prefix, NULL), 1);
  bb_free(&b);
}

static int fail_prefix(const uint8_t *p, size_t n, void *ud, int *rc) {
  ddmc_host_fail f;
  *rc = ddmc_host_fail_parse(p, n, &f);
  ddmc_host_fail_free(&f);
  return 0;
}

static void test_fail(void **state) {
  (void)state;
  bb b = {0};
  bb_u32(&b, (uint32_t)-2);
  bb_str(&b, "Stack trace unavailable");
  ddmc_host_fail f;
  assert_int_equal(ddmc_host_fail_parse(b.d, b.n, &f), 0);
  assert_int_equal(f.code, -2);
  assert_string_equal(f.msg, "Stack trace unavailable");
  ddmc_host_fail_free(&f);
  assert_int_equal(each_prefix(b.d, b.n, fail_prefix, NULL), 1);
  bb_free(&b);
}

/* ---- THST ------------------------------------------------------------------------------------ */

static void thst_payload(bb *b, uint8_t hdr, uint8_t bpe, uint16_t count) {
  bb_u8(b, hdr);
  bb_u8(b, bpe);
  bb_u16(b, count);
  for (int i = 4; i < hdr; i++) bb_u8(b, 0xee);
  for (uint16_t i = 0; i < count; i++) {
    bb_u32(b, 100 + i);
    bb_u8(b, (uint8_t)(i + 1));
    bb_u32(b, 3000 + i);
    bb_u32(b, 7 * i);
    bb_u32(b, 9 * i);
    if (bpe >= 18) bb_u8(b, (uint8_t)(i & 1));
    for (int k = 18; k < bpe; k++) bb_u8(b, 0xdd);
  }
}

static int thst_prefix(const uint8_t *p, size_t n, void *ud, int *rc) {
  ddmc_host_thst t;
  *rc = ddmc_host_thst_parse(p, n, &t);
  if (*rc) assert_null(t.entries);
  ddmc_host_thst_free(&t);
  return 0;
}

static void check_thst(const ddmc_host_thst *t, size_t count, int has_daemon) {
  assert_int_equal(t->count, count);
  for (size_t i = 0; i < count; i++) {
    assert_int_equal(t->entries[i].thread_id, 100 + i);
    assert_int_equal(t->entries[i].status, i + 1);
    assert_int_equal(t->entries[i].tid, 3000 + i);
    assert_int_equal(t->entries[i].utime, 7 * i);
    assert_int_equal(t->entries[i].stime, 9 * i);
    assert_int_equal(t->entries[i].daemon, has_daemon ? (int)(i & 1) : -1);
  }
}

static void test_thst(void **state) {
  (void)state;
  struct {
    uint8_t hdr, bpe;
    int daemon;
  } shapes[] = {{4, 18, 1}, {6, 18, 1}, {4, 22, 1}, {9, 30, 1}, {4, 17, 0}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    bb b = {0};
    thst_payload(&b, shapes[s].hdr, shapes[s].bpe, 3);
    ddmc_host_thst t;
    assert_int_equal(ddmc_host_thst_parse(b.d, b.n, &t), 0);
    check_thst(&t, 3, shapes[s].daemon);
    ddmc_host_thst_free(&t);
    assert_int_equal(each_prefix(b.d, b.n, thst_prefix, NULL), 1);
    bb_free(&b);
  }
  /* Impossible shapes and a count that does not fit. */
  bb b = {0};
  thst_payload(&b, 4, 18, 2);
  ddmc_host_thst t;
  b.d[0] = 3;
  assert_int_equal(ddmc_host_thst_parse(b.d, b.n, &t), DDMC_EPROTO);
  b.d[0] = 4, b.d[1] = 16;
  assert_int_equal(ddmc_host_thst_parse(b.d, b.n, &t), DDMC_EPROTO);
  b.d[1] = 18, b.d[2] = 0xff, b.d[3] = 0xff;
  assert_int_equal(ddmc_host_thst_parse(b.d, b.n, &t), DDMC_EPROTO);
  b.d[0] = 255, b.d[2] = 0, b.d[3] = 0;
  assert_int_equal(ddmc_host_thst_parse(b.d, b.n, &t), DDMC_EPROTO); /* header longer than data */
  b.d[0] = 4;
  assert_int_equal(ddmc_host_thst_parse(b.d, b.n, &t), 0); /* count 0 */
  assert_int_equal(t.count, 0);
  ddmc_host_thst_free(&t);
  bb_free(&b);
}

/* ---- STKL, HPIF ------------------------------------------------------------------------------ */

static int stkl_prefix(const uint8_t *p, size_t n, void *ud, int *rc) {
  ddmc_host_stkl s;
  *rc = ddmc_host_stkl_parse(p, n, &s);
  if (*rc) assert_null(s.frames);
  ddmc_host_stkl_free(&s);
  return 0;
}

static void test_stkl(void **state) {
  (void)state;
  bb b = {0};
  bb_u32(&b, 0);
  bb_u32(&b, 7);
  bb_u32(&b, 2);
  bb_str(&b, "java.lang.Thread");
  bb_str(&b, "sleep");
  bb_u32(&b, 0); /* native: no file */
  bb_u32(&b, (uint32_t)-2);
  bb_str(&b, "com.ex.Main");
  bb_str(&b, "main");
  bb_str(&b, "Main.java");
  bb_u32(&b, 42);
  ddmc_host_stkl s;
  assert_int_equal(ddmc_host_stkl_parse(b.d, b.n, &s), 0);
  assert_int_equal(s.thread_id, 7);
  assert_int_equal(s.count, 2);
  assert_string_equal(s.frames[0].class_name, "java.lang.Thread");
  assert_string_equal(s.frames[0].method, "sleep");
  assert_null(s.frames[0].file);
  assert_int_equal(s.frames[0].line, -2);
  assert_string_equal(s.frames[1].file, "Main.java");
  assert_int_equal(s.frames[1].line, 42);
  ddmc_host_stkl_free(&s);
  assert_int_equal(each_prefix(b.d, b.n, stkl_prefix, NULL), 1);
  b.d[11] = 0xff; /* count 0x000002ff: more frames than bytes */
  assert_int_equal(ddmc_host_stkl_parse(b.d, b.n, &s), DDMC_EPROTO);
  bb_free(&b);
}

static int hpif_prefix(const uint8_t *p, size_t n, void *ud, int *rc) {
  ddmc_host_hpif h;
  *rc = ddmc_host_hpif_parse(p, n, &h);
  if (*rc) assert_null(h.heaps);
  ddmc_host_hpif_free(&h);
  return 0;
}

static void test_hpif(void **state) {
  (void)state;
  bb b = {0};
  bb_u32(&b, 2);
  for (uint32_t i = 1; i <= 2; i++) {
    bb_u32(&b, i);
    bb_u64(&b, 1700000000123ull + i);
    bb_u8(&b, 1);
    bb_u32(&b, 0xfffffff0u);
    bb_u32(&b, 1 << 20);
    bb_u32(&b, 12345);
    bb_u32(&b, 67);
  }
  assert_int_equal(b.n, 4 + 2 * 29);
  ddmc_host_hpif h;
  assert_int_equal(ddmc_host_hpif_parse(b.d, b.n, &h), 0);
  assert_int_equal(h.count, 2);
  assert_int_equal(h.heaps[1].heap_id, 2);
  assert_true(h.heaps[1].timestamp_ms == 1700000000125ull);
  assert_int_equal(h.heaps[1].reason, 1);
  assert_int_equal(h.heaps[1].max_bytes, 0xfffffff0u);
  assert_int_equal(h.heaps[1].footprint, 1 << 20);
  assert_int_equal(h.heaps[1].allocated_bytes, 12345);
  assert_int_equal(h.heaps[1].allocated_objects, 67);
  ddmc_host_hpif_free(&h);
  assert_int_equal(each_prefix(b.d, b.n, hpif_prefix, NULL), 1);
  bb_free(&b);
}

/* Random bytes and random mutations of valid payloads into every parser, each in an exact-size
 * heap copy: the result must be 0 or DDMC_EPROTO, never a crash or an over-read (run under ASan). */
static uint32_t rng_state = 12345;
static uint32_t rng(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 17;
  rng_state ^= rng_state << 5;
  return rng_state;
}

static void parse_all(const uint8_t *p, size_t n) {
  int rc;
  ddmc_host_helo a;
  rc = ddmc_host_helo_parse(p, n, &a);
  assert_true(rc == 0 || rc == DDMC_EPROTO);
  ddmc_host_helo_free(&a);
  ddmc_host_feat b;
  rc = ddmc_host_feat_parse(p, n, &b);
  assert_true(rc == 0 || rc == DDMC_EPROTO);
  ddmc_host_feat_free(&b);
  ddmc_host_apnm c;
  rc = ddmc_host_apnm_parse(p, n, &c);
  assert_true(rc == 0 || rc == DDMC_EPROTO);
  ddmc_host_apnm_free(&c);
  ddmc_host_thname d;
  rc = ddmc_host_thname_parse(p, n, &d);
  assert_true(rc == 0 || rc == DDMC_EPROTO);
  ddmc_host_thname_free(&d);
  ddmc_host_fail e;
  rc = ddmc_host_fail_parse(p, n, &e);
  assert_true(rc == 0 || rc == DDMC_EPROTO);
  ddmc_host_fail_free(&e);
  ddmc_host_thst f;
  rc = ddmc_host_thst_parse(p, n, &f);
  assert_true(rc == 0 || rc == DDMC_EPROTO);
  if (rc == 0) assert_true(f.count == 0 || f.count <= n / 17);
  ddmc_host_thst_free(&f);
  ddmc_host_stkl g;
  rc = ddmc_host_stkl_parse(p, n, &g);
  assert_true(rc == 0 || rc == DDMC_EPROTO);
  ddmc_host_stkl_free(&g);
  ddmc_host_hpif hh;
  rc = ddmc_host_hpif_parse(p, n, &hh);
  assert_true(rc == 0 || rc == DDMC_EPROTO);
  ddmc_host_hpif_free(&hh);
  uint8_t r8;
  uint32_t r32;
  rc = ddmc_host_wait_parse(p, n, &r8);
  assert_true(rc == 0 || rc == DDMC_EPROTO);
  rc = ddmc_host_thde_parse(p, n, &r32);
  assert_true(rc == 0 || rc == DDMC_EPROTO);
  rc = ddmc_host_heapid_parse(p, n, &r32);
  assert_true(rc == 0 || rc == DDMC_EPROTO);
}

static void test_parsers_random(void **state) {
  (void)state;
  bb seeds[4] = {{0}};
  helo_payload(&seeds[0], 6);
  thst_payload(&seeds[1], 4, 18, 4);
  bb_u32(&seeds[2], 0), bb_u32(&seeds[2], 1), bb_u32(&seeds[2], 1);
  bb_str(&seeds[2], "C"), bb_str(&seeds[2], "m"), bb_str(&seeds[2], "F.java"), bb_u32(&seeds[2], 3);
  bb_u32(&seeds[3], 2), bb_str(&seeds[3], "a"), bb_str(&seeds[3], "bc");
  for (int iter = 0; iter < 3000; iter++) {
    size_t n;
    uint8_t *c;
    if (iter % 2) {
      n = rng() % 96;
      c = malloc(n ? n : 1);
      for (size_t i = 0; i < n; i++) {
        uint32_t r = rng();
        /* small numbers make plausible counts and lengths */
        c[i] = (uint8_t)(r % 3 == 0 ? 0 : r % 3 == 1 ? (r >> 8) % 4 : r >> 16);
      }
    } else {
      const bb *s = &seeds[rng() % 4];
      n = s->n - rng() % (s->n / 4 + 1);
      c = malloc(n ? n : 1);
      memcpy(c, s->d, n);
      for (int k = 0, m = 1 + (int)(rng() % 4); k < m && n; k++) c[rng() % n] = (uint8_t)rng();
    }
    parse_all(n ? c : NULL, n);
    free(c);
  }
  for (int i = 0; i < 4; i++) bb_free(&seeds[i]);
}

/* ---- packets: sending ------------------------------------------------------------------------ */

static void test_send_bytes(void **state) {
  (void)state;
  ddmc_host *h;
  int peer;
  pair(&h, &peer);
  uint32_t id = 0;
  assert_int_equal(ddmc_host_send_chunk(h, FOURCC('T', 'H', 'E', 'N'), "\x01", 1, &id), 0);
  assert_int_equal(id, ID0);
  bb p = {0};
  rd_packet(peer, &p);
  const uint8_t want[] = {0, 0, 0, 20, 0x40, 0, 0, 0, 0, 199, 1, 'T', 'H', 'E', 'N', 0, 0, 0, 1, 1};
  assert_int_equal(p.n, sizeof want);
  assert_memory_equal(p.d, want, sizeof want);

  assert_int_equal(ddmc_host_send_command(h, 1, 1, NULL, 0, &id), 0); /* VirtualMachine.Version */
  assert_int_equal(id, ID0 + 1);
  assert_int_equal(ddmc_host_last_id(h), ID0 + 1);
  rd_packet(peer, &p);
  const uint8_t want2[] = {0, 0, 0, 11, 0x40, 0, 0, 1, 0, 1, 1};
  assert_memory_equal(p.d, want2, 11);

  /* Its reply has >= 8 body bytes but is not DDM: the id says it answers a JDWP command. */
  bb r = {0};
  pk_reply(&r, ID0 + 1, 0, "\0\0\0\x09" "abcdefghijk", 15);
  wr(peer, r.d, r.n);
  ddmc_host_packet pkt;
  assert_int_equal(ddmc_host_recv(h, &pkt, 1000), 0);
  assert_int_equal(pkt.is_reply, 1);
  assert_int_equal(pkt.is_ddm, 0);
  assert_int_equal(pkt.body_len, 15);

  ddmc_host_stats st;
  ddmc_host_stats_get(h, &st);
  assert_int_equal(st.packets_out, 2);
  assert_int_equal(st.bytes_out, 20 + 11);
  assert_int_equal(st.packets_in, 1);
  assert_int_equal(st.bytes_in, 26);

  /* Peer gone: ECLOSED, and no SIGPIPE kills us. */
  close(peer);
  int rc = 0;
  for (int i = 0; i < 3 && rc == 0; i++) rc = ddmc_host_send_raw(h, "xxxxxxxxxxxx", 12);
  assert_int_equal(rc, DDMC_ECLOSED);
  bb_free(&p);
  bb_free(&r);
  ddmc_host_free(h);
}

static void test_from_fd_checks(void **state) {
  (void)state;
  ddmc_host *h = NULL;
  int pf[2];
  assert_int_equal(pipe(pf), 0);
  assert_int_equal(ddmc_host_from_fd(&h, pf[0]), DDMC_EINVAL);
  assert_int_equal(ddmc_host_from_fd(&h, -1), DDMC_EINVAL);
  assert_null(h);
  close(pf[0]);
  close(pf[1]);
  ddmc_host_free(NULL);
}

/* ---- packets: receiving ---------------------------------------------------------------------- */

/* Three packets: an unsolicited THCR, an empty reply and a reply with a chunk. */
static void three_packets(bb *b) {
  bb pl = {0};
  bb_u32(&pl, 3);
  bb_str(&pl, "main");
  pk_chunk_cmd(b, 0x10000001, FOURCC('T', 'H', 'C', 'R'), pl.d, pl.n);
  pk_reply(b, ID0, 0, NULL, 0);
  pk_chunk_reply(b, ID0 + 1, FOURCC('R', 'E', 'A', 'Q'), "\x01", 1);
  bb_free(&pl);
}

static void check_nth(const ddmc_host_packet *p, int i) {
  if (i == 0) {
    assert_int_equal(p->is_reply, 0);
    assert_int_equal(p->id, 0x10000001);
    assert_int_equal(p->cmd_set, 199);
    assert_int_equal(p->cmd, 1);
    assert_int_equal(p->is_ddm, 1);
    assert_int_equal(p->chunk_type, FOURCC('T', 'H', 'C', 'R'));
    ddmc_host_thname t;
    assert_int_equal(ddmc_host_thname_parse(p->chunk, p->chunk_len, &t), 0);
    assert_int_equal(t.thread_id, 3);
    assert_string_equal(t.name, "main");
    ddmc_host_thname_free(&t);
  } else if (i == 1) {
    assert_int_equal(p->is_reply, 1);
    assert_int_equal(p->id, ID0);
    assert_int_equal(p->body_len, 0);
    assert_int_equal(p->is_ddm, 0);
  } else {
    assert_int_equal(p->is_reply, 1);
    assert_int_equal(p->id, ID0 + 1);
    assert_int_equal(p->error, 0);
    assert_int_equal(p->is_ddm, 1);
    assert_int_equal(p->chunk_type, FOURCC('R', 'E', 'A', 'Q'));
    assert_int_equal(p->chunk_len, 1);
    assert_int_equal(p->chunk[0], 1);
  }
}

static void test_recv_split_every_offset(void **state) {
  (void)state;
  bb b = {0};
  three_packets(&b);
  for (size_t s = 0; s <= b.n; s++) {
    ddmc_host *h;
    int peer;
    pair(&h, &peer);
    wr(peer, b.d, s);
    int got = 0;
    ddmc_host_packet p;
    int rc;
    while ((rc = ddmc_host_recv(h, &p, 0)) == 0) check_nth(&p, got++);
    assert_int_equal(rc, DDMC_ETIMEDOUT);
    if (s < b.n) wr(peer, b.d + s, b.n - s);
    while (got < 3) {
      assert_int_equal(ddmc_host_recv(h, &p, 2000), 0);
      check_nth(&p, got++);
    }
    assert_int_equal(ddmc_host_recv(h, &p, 0), DDMC_ETIMEDOUT);
    close(peer);
    assert_int_equal(ddmc_host_recv(h, &p, 1000), DDMC_ECLOSED);
    ddmc_host_free(h);
  }
  bb_free(&b);
}

static void test_recv_byte_at_a_time(void **state) {
  (void)state;
  bb b = {0};
  three_packets(&b);
  ddmc_host *h;
  int peer;
  pair(&h, &peer);
  int got = 0;
  ddmc_host_packet p;
  for (size_t i = 0; i < b.n; i++) {
    wr(peer, b.d + i, 1);
    int rc = ddmc_host_recv(h, &p, 0);
    if (rc == 0) check_nth(&p, got++);
    else assert_int_equal(rc, DDMC_ETIMEDOUT);
  }
  assert_int_equal(got, 3);
  close(peer);
  ddmc_host_free(h);
  bb_free(&b);
}

/* Same, with a thread trickling the bytes while recv blocks. */
typedef struct trickle {
  int fd;
  const uint8_t *p;
  size_t n;
} trickle;
static void *trickle_main(void *arg) {
  trickle *t = arg;
  for (size_t i = 0; i < t->n; i++) {
    if (write(t->fd, t->p + i, 1) != 1) break;
    if (i % 7 == 0) msleep(1);
  }
  return NULL;
}

static void *bulk_writer(void *arg) {
  struct {
    int fd;
    bb *b;
  } *a = arg;
  const uint8_t *q = a->b->d;
  size_t n = a->b->n;
  while (n) {
    ssize_t k = write(a->fd, q, n < 100000 ? n : 100000);
    if (k <= 0) break;
    q += k;
    n -= (size_t)k;
  }
  return NULL;
}

static void test_recv_trickle_thread(void **state) {
  (void)state;
  bb b = {0};
  three_packets(&b);
  ddmc_host *h;
  int peer;
  pair(&h, &peer);
  trickle t = {peer, b.d, b.n};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, trickle_main, &t), 0);
  ddmc_host_packet p;
  for (int i = 0; i < 3; i++) {
    assert_int_equal(ddmc_host_recv(h, &p, 5000), 0);
    check_nth(&p, i);
  }
  pthread_join(th, NULL);
  close(peer);
  ddmc_host_free(h);
  bb_free(&b);
}

static void test_recv_bad_lengths(void **state) {
  (void)state;
  ddmc_host_packet p;
  for (uint32_t len = 0; len < 11; len++) {
    ddmc_host *h;
    int peer;
    pair(&h, &peer);
    uint8_t hdr[11] = {0, 0, 0, (uint8_t)len, 0, 0, 0, 1, 0, 199, 1};
    wr(peer, hdr, sizeof hdr);
    assert_int_equal(ddmc_host_recv(h, &p, 1000), DDMC_EPROTO);
    assert_int_equal(ddmc_host_recv(h, &p, 1000), DDMC_EPROTO); /* sticky */
    close(peer);
    ddmc_host_free(h);
  }
  /* Over the cap: refused from the header alone, before any allocation. */
  ddmc_host *h;
  int peer;
  pair(&h, &peer);
  assert_int_equal(ddmc_host_set_max_packet(h, 10), DDMC_EINVAL);
  assert_int_equal(ddmc_host_set_max_packet(h, 100), 0);
  bb b = {0};
  uint8_t body[81] = {0};
  pk_chunk_cmd(&b, 1, FOURCC('T', 'E', 'S', 'T'), body, 81); /* 100 bytes: fits */
  pk_chunk_cmd(&b, 2, FOURCC('T', 'E', 'S', 'T'), body, 0);
  b.d[b.n - 19 + 3] = 101;                                  /* claims 101 */
  wr(peer, b.d, b.n);
  assert_int_equal(ddmc_host_recv(h, &p, 1000), 0);
  assert_int_equal(p.length, 100);
  assert_int_equal(ddmc_host_recv(h, &p, 1000), DDMC_ETOOBIG);
  assert_int_equal(ddmc_host_recv(h, &p, 0), DDMC_ETOOBIG);
  close(peer);
  ddmc_host_free(h);

  /* Default cap against a 2 GiB claim. */
  pair(&h, &peer);
  uint8_t huge[11] = {0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 1, 0, 199, 1};
  wr(peer, huge, sizeof huge);
  assert_int_equal(ddmc_host_recv(h, &p, 1000), DDMC_ETOOBIG);
  close(peer);
  ddmc_host_free(h);

  /* Flags other than 0x00/0x80. */
  pair(&h, &peer);
  uint8_t flags[11] = {0, 0, 0, 11, 0, 0, 0, 1, 0x40, 0, 0};
  wr(peer, flags, sizeof flags);
  assert_int_equal(ddmc_host_recv(h, &p, 1000), DDMC_EPROTO);
  close(peer);
  ddmc_host_free(h);
  bb_free(&b);
}

static void test_recv_bad_chunk_then_continue(void **state) {
  (void)state;
  ddmc_host *h;
  int peer;
  pair(&h, &peer);
  bb b = {0};
  pk_chunk_cmd(&b, 1, FOURCC('T', 'H', 'D', 'E'), "\0\0\0\1", 4);
  b.d[18] = 5; /* chunk says 5 bytes, packet holds 4 */
  size_t first = b.n;
  pk_chunk_cmd(&b, 2, FOURCC('T', 'H', 'D', 'E'), "\0\0\0\2", 4);
  b.d[first + 15] = 0xff; /* chunk length 0xff000004: would wrap a naive offset+len check */
  /* A 199/1 command with only 4 body bytes. */
  const uint8_t shortcmd[] = {0, 0, 0, 15, 0, 0, 0, 3, 0, 199, 1, 'T', 'H', 'D', 'E'};
  bb_bytes(&b, shortcmd, sizeof shortcmd);
  pk_chunk_cmd(&b, 4, FOURCC('T', 'H', 'D', 'E'), "\0\0\0\4", 4);
  wr(peer, b.d, b.n);
  ddmc_host_packet p;
  assert_int_equal(ddmc_host_recv(h, &p, 1000), DDMC_EPROTO);
  assert_int_equal(ddmc_host_recv(h, &p, 1000), DDMC_EPROTO);
  assert_int_equal(ddmc_host_recv(h, &p, 1000), DDMC_EPROTO);
  assert_int_equal(ddmc_host_recv(h, &p, 1000), 0);
  assert_int_equal(p.id, 4);
  uint32_t tid;
  assert_int_equal(ddmc_host_thde_parse(p.chunk, p.chunk_len, &tid), 0);
  assert_int_equal(tid, 4);
  /* A chunk followed by trailing bytes: only the first chunk counts. */
  bb c = {0};
  pk_chunk_cmd(&c, 5, FOURCC('W', 'A', 'I', 'T'), "\0" "JUNK", 5);
  c.d[18] = 1;
  wr(peer, c.d, c.n);
  assert_int_equal(ddmc_host_recv(h, &p, 1000), 0);
  assert_int_equal(p.chunk_len, 1);
  assert_int_equal(p.body_len, 13);
  close(peer);
  ddmc_host_free(h);
  bb_free(&b);
  bb_free(&c);
}

static void test_recv_eof_and_timeout(void **state) {
  (void)state;
  ddmc_host *h;
  int peer;
  pair(&h, &peer);
  ddmc_host_packet p;
  int64_t t0 = mono_ms();
  assert_int_equal(ddmc_host_recv(h, &p, 100), DDMC_ETIMEDOUT);
  int64_t dt = mono_ms() - t0;
  assert_true(dt >= 90 && dt < 2000);
  bb b = {0};
  pk_chunk_cmd(&b, 1, FOURCC('T', 'H', 'D', 'E'), "\0\0\0\1", 4);
  wr(peer, b.d, b.n - 2); /* EOF in the middle of a packet */
  close(peer);
  assert_int_equal(ddmc_host_recv(h, &p, 1000), DDMC_ECLOSED);
  assert_int_equal(ddmc_host_recv(h, &p, 1000), DDMC_ECLOSED);
  ddmc_host_close(h);
  assert_int_equal(ddmc_host_fd(h), -1);
  assert_int_equal(ddmc_host_send_chunk(h, 1, NULL, 0, NULL), DDMC_ECLOSED);
  ddmc_host_free(h);
  bb_free(&b);
}

/* A packet far bigger than the socket buffer (heap dumps are megabytes), written by a thread
 * while recv blocks, followed by a small one. */
static void test_recv_large_packet(void **state) {
  (void)state;
  ddmc_host *h;
  int peer;
  pair(&h, &peer);
  size_t n = 3u << 20;
  uint8_t *raw = malloc(n);
  assert_non_null(raw);
  for (size_t i = 0; i < n; i++) raw[i] = (uint8_t)(i * 31u);
  bb b = {0};
  pk_chunk_cmd(&b, 0x10000000, FOURCC('H', 'P', 'D', 'S'), raw, n);
  pk_chunk_cmd(&b, 0x10000001, FOURCC('W', 'A', 'I', 'T'), "\0", 1);
  pthread_t th;
  struct {
    int fd;
    bb *b;
  } arg = {peer, &b};
  assert_int_equal(pthread_create(&th, NULL, bulk_writer, &arg), 0);
  ddmc_host_packet p;
  assert_int_equal(ddmc_host_recv(h, &p, 10000), 0);
  assert_int_equal(p.chunk_type, FOURCC('H', 'P', 'D', 'S'));
  assert_int_equal(p.chunk_len, n);
  assert_memory_equal(p.chunk, raw, n);
  assert_int_equal(ddmc_host_recv(h, &p, 10000), 0);
  assert_int_equal(p.chunk_type, FOURCC('W', 'A', 'I', 'T'));
  pthread_join(th, NULL);
  close(peer);
  ddmc_host_free(h);
  free(raw);
  bb_free(&b);
}

/* ---- handshake ------------------------------------------------------------------------------- */

typedef struct shaker {
  int fd;
  const char *reply[3]; /* written in turn after reading the 14 bytes, with pauses */
  size_t reply_len[3];
  int close_after;
  int ok; /* the host sent the right 14 bytes */
} shaker;
static void *shaker_main(void *arg) {
  shaker *s = arg;
  char buf[14];
  size_t got = 0;
  while (got < 14) {
    ssize_t k = read(s->fd, buf + got, 14 - got);
    if (k <= 0) return NULL;
    got += (size_t)k;
  }
  s->ok = memcmp(buf, "JDWP-Handshake", 14) == 0;
  for (int i = 0; i < 3 && s->reply[i]; i++) {
    if (write(s->fd, s->reply[i], s->reply_len[i]) < 0) break;
    msleep(30);
  }
  if (s->close_after) shutdown(s->fd, SHUT_WR);
  return NULL;
}

static int run_shaker(shaker *s, int timeout_ms, ddmc_host **hout) {
  ddmc_host *h;
  pair(&h, &s->fd);
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, shaker_main, s), 0);
  int rc = ddmc_host_handshake(h, timeout_ms);
  pthread_join(th, NULL);
  *hout = h;
  return rc;
}

static void test_handshake_split(void **state) {
  (void)state;
  bb tail = {0};
  bb_bytes(&tail, "shake", 5);
  pk_chunk_cmd(&tail, 0x10000000, FOURCC('W', 'A', 'I', 'T'), "\0", 1);
  shaker s = {.reply = {"JDWP-Hand", (const char *)tail.d}, .reply_len = {9, tail.n}};
  ddmc_host *h;
  assert_int_equal(run_shaker(&s, 5000, &h), 0);
  assert_true(s.ok);
  assert_int_equal(ddmc_host_handshake(h, 0), DDMC_ESTATE);
  ddmc_host_packet p; /* the bytes after the echo were kept */
  assert_int_equal(ddmc_host_recv(h, &p, 1000), 0);
  assert_int_equal(p.chunk_type, FOURCC('W', 'A', 'I', 'T'));
  ddmc_host_stats st;
  ddmc_host_stats_get(h, &st);
  assert_int_equal(st.bytes_out, 14);
  assert_int_equal(st.bytes_in, 14 + 20);
  close(s.fd);
  ddmc_host_free(h);
  bb_free(&tail);

  /* One byte at a time. */
  static const char *one[] = {"J", "D", "W"};
  shaker s2 = {.reply = {one[0], one[1], one[2]}, .reply_len = {1, 1, 1}};
  assert_int_equal(run_shaker(&s2, 200, &h), DDMC_ETIMEDOUT); /* only "JDW" ever came */
  close(s2.fd);
  ddmc_host_free(h);
}

static void test_handshake_wrong(void **state) {
  (void)state;
  const char *http = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
  shaker s = {.reply = {http}, .reply_len = {strlen(http)}};
  ddmc_host *h;
  assert_int_equal(run_shaker(&s, 5000, &h), DDMC_EPROTO);
  ddmc_host_packet p;
  assert_int_equal(ddmc_host_recv(h, &p, 0), DDMC_EPROTO); /* unusable afterwards */
  close(s.fd);
  ddmc_host_free(h);

  /* A short wrong answer then EOF is still "not JDWP", not just "closed". */
  shaker s2 = {.reply = {"JDWX"}, .reply_len = {4}, .close_after = 1};
  assert_int_equal(run_shaker(&s2, 5000, &h), DDMC_EPROTO);
  close(s2.fd);
  ddmc_host_free(h);

  /* The right prefix, then EOF. */
  shaker s3 = {.reply = {"JDWP-Hand"}, .reply_len = {9}, .close_after = 1};
  assert_int_equal(run_shaker(&s3, 5000, &h), DDMC_ECLOSED);
  close(s3.fd);
  ddmc_host_free(h);

  /* Nothing, then EOF. */
  shaker s4 = {.close_after = 1};
  assert_int_equal(run_shaker(&s4, 5000, &h), DDMC_ECLOSED);
  close(s4.fd);
  ddmc_host_free(h);

  /* Silence. */
  shaker s5 = {0};
  int64_t t0 = mono_ms();
  assert_int_equal(run_shaker(&s5, 100, &h), DDMC_ETIMEDOUT);
  assert_true(mono_ms() - t0 < 2000);
  close(s5.fd);
  ddmc_host_free(h);
}

/* Dalvik can send APNM before the echo (docs/protocol/ddm-wire.md §1.1): it is kept, not an error. */
static void test_handshake_early_packet(void **state) {
  (void)state;
  bb early = {0}, after = {0};
  bb apnm = {0};
  bb_str(&apnm, "<pre-initialized>");
  bb_u32(&apnm, 0);
  pk_chunk_cmd(&early, 0x10000000, FOURCC('A', 'P', 'N', 'M'), apnm.d, apnm.n);
  bb_bytes(&early, "JDWP-Handshake", 14);
  pk_chunk_cmd(&after, 0x10000001, FOURCC('W', 'A', 'I', 'T'), "\0", 1);
  shaker s = {.reply = {(const char *)early.d, (const char *)after.d},
              .reply_len = {early.n - 6, 6}};
  /* split the echo across the two writes too */
  bb whole = {0};
  bb_bytes(&whole, early.d, early.n);
  bb_bytes(&whole, after.d, after.n);
  s.reply[0] = (const char *)whole.d;
  s.reply_len[0] = early.n - 6;
  s.reply[1] = (const char *)whole.d + early.n - 6;
  s.reply_len[1] = whole.n - (early.n - 6);
  ddmc_host *h;
  assert_int_equal(run_shaker(&s, 5000, &h), 0);
  ddmc_host_packet p;
  assert_int_equal(ddmc_host_recv(h, &p, 1000), 0);
  assert_int_equal(p.chunk_type, FOURCC('A', 'P', 'N', 'M'));
  ddmc_host_apnm a;
  assert_int_equal(ddmc_host_apnm_parse(p.chunk, p.chunk_len, &a), 0);
  assert_string_equal(a.name, "<pre-initialized>");
  ddmc_host_apnm_free(&a);
  assert_int_equal(ddmc_host_recv(h, &p, 1000), 0);
  assert_int_equal(p.chunk_type, FOURCC('W', 'A', 'I', 'T'));
  close(s.fd);
  ddmc_host_free(h);
  bb_free(&early);
  bb_free(&after);
  bb_free(&apnm);
  bb_free(&whole);
}

/* ---- request and the FIFO -------------------------------------------------------------------- */

static void test_request_keeps_unsolicited(void **state) {
  (void)state;
  ddmc_host *h;
  int peer;
  pair(&h, &peer);
  /* THEN(1): the VM sends THCR for every thread BEFORE its empty reply; an HPIF and a stray
   * reply to an unknown id come in between. */
  bb b = {0}, pl = {0};
  for (uint32_t t = 1; t <= 3; t++) {
    pl.n = 0;
    bb_u32(&pl, t);
    bb_str(&pl, t == 1 ? "main" : "worker");
    pk_chunk_cmd(&b, 0x10000000 + t, FOURCC('T', 'H', 'C', 'R'), pl.d, pl.n);
  }
  pk_reply(&b, 0x12345678, 0, NULL, 0);
  pk_reply(&b, ID0, 0, NULL, 0); /* the reply */
  pl.n = 0;
  bb_u32(&pl, 9);
  pk_chunk_cmd(&b, 0x10000009, FOURCC('T', 'H', 'D', 'E'), pl.d, pl.n);
  wr(peer, b.d, b.n);
  ddmc_host_packet r;
  assert_int_equal(ddmc_host_request(h, FOURCC('T', 'H', 'E', 'N'), "\x01", 1, &r, 2000), 0);
  assert_int_equal(r.is_reply, 1);
  assert_int_equal(r.id, ID0);
  assert_int_equal(r.body_len, 0);
  ddmc_host_packet p;
  for (uint32_t t = 1; t <= 3; t++) {
    assert_int_equal(ddmc_host_recv(h, &p, 0), 0);
    assert_int_equal(p.id, 0x10000000 + t);
    assert_int_equal(p.chunk_type, FOURCC('T', 'H', 'C', 'R'));
  }
  assert_int_equal(ddmc_host_recv(h, &p, 0), 0);
  assert_int_equal(p.id, 0x12345678);
  assert_int_equal(ddmc_host_recv(h, &p, 1000), 0);
  assert_int_equal(p.chunk_type, FOURCC('T', 'H', 'D', 'E'));
  assert_int_equal(ddmc_host_recv(h, &p, 0), DDMC_ETIMEDOUT);
  bb req = {0};
  rd_packet(peer, &req);
  assert_int_equal(be32(req.d + 4), ID0);
  assert_int_equal(be32(req.d + 11), FOURCC('T', 'H', 'E', 'N'));
  close(peer);
  ddmc_host_free(h);
  bb_free(&b);
  bb_free(&pl);
  bb_free(&req);
}

static void test_request_timeout_drops_late_reply(void **state) {
  (void)state;
  ddmc_host *h;
  int peer;
  pair(&h, &peer);
  ddmc_host_packet r;
  assert_int_equal(ddmc_host_request(h, FOURCC('H', 'P', 'G', 'C'), NULL, 0, &r, 50), DDMC_ETIMEDOUT);
  bb b = {0};
  pk_reply(&b, ID0, 0, NULL, 0);                        /* too late */
  pk_chunk_cmd(&b, 0x10000001, FOURCC('W', 'A', 'I', 'T'), "\0", 1);
  pk_chunk_reply(&b, ID0 + 1, FOURCC('R', 'E', 'A', 'Q'), "\x01", 1);
  pk_chunk_cmd(&b, 0x10000002, FOURCC('W', 'A', 'I', 'T'), "\0", 1);
  pk_reply(&b, ID0 + 2, 99, NULL, 0); /* a JDWP error reply is a reply, not an error */
  wr(peer, b.d, b.n);
  ddmc_host_packet p;
  assert_int_equal(ddmc_host_request(h, FOURCC('R', 'E', 'A', 'Q'), NULL, 0, &r, 2000), 0);
  assert_int_equal(r.chunk_type, FOURCC('R', 'E', 'A', 'Q'));
  assert_int_equal(r.chunk[0], 1);
  assert_int_equal(ddmc_host_request(h, FOURCC('X', 'X', 'X', 'X'), NULL, 0, &r, 2000), 0);
  assert_int_equal(r.error, 99);
  assert_int_equal(r.is_ddm, 0);
  assert_int_equal(ddmc_host_recv(h, &p, 0), 0);
  assert_int_equal(p.id, 0x10000001); /* the late reply to ID0 was dropped */
  assert_int_equal(ddmc_host_recv(h, &p, 0), 0);
  assert_int_equal(p.id, 0x10000002);
  assert_int_equal(ddmc_host_recv(h, &p, 0), DDMC_ETIMEDOUT);
  close(peer);
  ddmc_host_free(h);
  bb_free(&b);
}

static void test_request_queue_cap(void **state) {
  (void)state;
  ddmc_host *h;
  int peer;
  pair(&h, &peer);
  assert_int_equal(ddmc_host_set_max_queue(h, 30), 0);
  bb b = {0};
  pk_chunk_cmd(&b, 1, FOURCC('W', 'A', 'I', 'T'), "\0", 1);
  pk_chunk_cmd(&b, 2, FOURCC('W', 'A', 'I', 'T'), "\0", 1);
  pk_reply(&b, ID0, 0, NULL, 0);
  wr(peer, b.d, b.n);
  ddmc_host_packet r, p;
  assert_int_equal(ddmc_host_request(h, FOURCC('H', 'P', 'G', 'C'), NULL, 0, &r, 2000), DDMC_EQFULL);
  /* Nothing lost: both WAITs come out; the abandoned reply is dropped. */
  assert_int_equal(ddmc_host_recv(h, &p, 1000), 0);
  assert_int_equal(p.id, 1);
  assert_int_equal(ddmc_host_recv(h, &p, 1000), 0);
  assert_int_equal(p.id, 2);
  assert_int_equal(ddmc_host_recv(h, &p, 100), DDMC_ETIMEDOUT);
  close(peer);
  ddmc_host_free(h);
  bb_free(&b);
}

/* ---- ZLIB ------------------------------------------------------------------------------------ */

/* [u4 clen][u4 inner type][u4 inner len][zlib stream] */
static void zlib_payload(bb *out, uint32_t inner_type, const uint8_t *raw, size_t n) {
  uLongf clen = compressBound(n);
  uint8_t *c = malloc(clen);
  assert_non_null(c);
  assert_int_equal(compress2(c, &clen, raw, n, 6), Z_OK);
  bb_u32(out, (uint32_t)clen);
  bb_u32(out, inner_type);
  bb_u32(out, (uint32_t)n);
  bb_bytes(out, c, clen);
  free(c);
}

static void test_zlib_inflate(void **state) {
  (void)state;
  ddmc_host *h;
  int peer;
  pair(&h, &peer);
  size_t n = 200000;
  uint8_t *raw = malloc(n);
  for (size_t i = 0; i < n; i++) raw[i] = (uint8_t)((i / 64) % 7);
  bb z = {0}, b = {0};
  zlib_payload(&z, FOURCC('H', 'P', 'S', 'G'), raw, n);
  pk_chunk_cmd(&b, 0x10000000, DDMC_HOST_TYPE_ZLIB, z.d, z.n);
  /* An empty inner payload works too, as a reply. */
  bb z0 = {0};
  zlib_payload(&z0, FOURCC('F', 'E', 'A', 'T'), NULL, 0);
  pk_chunk_reply(&b, ID0, DDMC_HOST_TYPE_ZLIB, z0.d, z0.n);
  wr(peer, b.d, b.n);
  ddmc_host_packet p;
  assert_int_equal(ddmc_host_recv(h, &p, 2000), 0);
  assert_int_equal(p.was_compressed, 1);
  assert_int_equal(p.chunk_type, FOURCC('H', 'P', 'S', 'G'));
  assert_int_equal(p.chunk_len, n);
  assert_memory_equal(p.chunk, raw, n);
  assert_int_equal(p.body_len, n + 8);
  assert_true(p.body[0] == 'H' && p.body[3] == 'G');
  assert_int_equal(ddmc_host_recv(h, &p, 2000), 0);
  assert_int_equal(p.was_compressed, 1);
  assert_int_equal(p.chunk_type, FOURCC('F', 'E', 'A', 'T'));
  assert_int_equal(p.chunk_len, 0);
  ddmc_host_stats st;
  ddmc_host_stats_get(h, &st);
  assert_int_equal(st.zlib_chunks_in, 2);
  assert_int_equal(st.zlib_in_wire, z.n + z0.n);
  assert_int_equal(st.zlib_in_raw, n);
  assert_true(st.zlib_in_wire < st.zlib_in_raw / 10);
  close(peer);
  ddmc_host_free(h);
  free(raw);
  bb_free(&z);
  bb_free(&z0);
  bb_free(&b);
}

static void test_zlib_bad(void **state) {
  (void)state;
  ddmc_host *h;
  int peer;
  pair(&h, &peer);
  assert_int_equal(ddmc_host_set_max_packet(h, 1 << 20), 0);
  const char *text = "the quick brown fox jumps over the lazy dog, again and again and again";
  size_t tn = strlen(text);
  bb good = {0};
  zlib_payload(&good, FOURCC('T', 'E', 'S', 'T'), (const uint8_t *)text, tn);
  bb b = {0}, z = {0};
  int cases = 0;
  /* 1: compressed len != chunk len - 12 */
  z.n = 0, bb_bytes(&z, good.d, good.n), z.d[3]++;
  pk_chunk_cmd(&b, 1, DDMC_HOST_TYPE_ZLIB, z.d, z.n), cases++;
  /* 2: inner len bigger than what inflates */
  z.n = 0, bb_bytes(&z, good.d, good.n), z.d[11]++;
  pk_chunk_cmd(&b, 2, DDMC_HOST_TYPE_ZLIB, z.d, z.n), cases++;
  /* 3: inner len smaller */
  z.n = 0, bb_bytes(&z, good.d, good.n), z.d[11]--;
  pk_chunk_cmd(&b, 3, DDMC_HOST_TYPE_ZLIB, z.d, z.n), cases++;
  /* 4: corrupt stream (checksum byte) */
  z.n = 0, bb_bytes(&z, good.d, good.n), z.d[z.n - 1] ^= 0x55;
  pk_chunk_cmd(&b, 4, DDMC_HOST_TYPE_ZLIB, z.d, z.n), cases++;
  /* 5: not zlib at all */
  z.n = 0, bb_u32(&z, 4), bb_u32(&z, 1), bb_u32(&z, 4), bb_bytes(&z, "abcd", 4);
  pk_chunk_cmd(&b, 5, DDMC_HOST_TYPE_ZLIB, z.d, z.n), cases++;
  /* 6: shorter than its 12-byte header */
  pk_chunk_cmd(&b, 6, DDMC_HOST_TYPE_ZLIB, "\0\0\0\0\0\0\0\0", 8), cases++;
  /* 7: a stream with trailing garbage after its end */
  z.n = 0, bb_bytes(&z, good.d, good.n), bb_u8(&z, 0), z.d[3]++;
  pk_chunk_cmd(&b, 7, DDMC_HOST_TYPE_ZLIB, z.d, z.n), cases++;
  /* 8: inflated size over the cap -> ETOOBIG, before inflating anything */
  z.n = 0, bb_bytes(&z, good.d, good.n), z.d[8] = 0x7f;
  pk_chunk_cmd(&b, 8, DDMC_HOST_TYPE_ZLIB, z.d, z.n), cases++;
  /* then a good one */
  pk_chunk_cmd(&b, 9, DDMC_HOST_TYPE_ZLIB, good.d, good.n);
  wr(peer, b.d, b.n);
  ddmc_host_packet p;
  for (int i = 1; i <= cases; i++) {
    int rc = ddmc_host_recv(h, &p, 1000);
    assert_int_equal(rc, i == 8 ? DDMC_ETOOBIG : DDMC_EPROTO);
  }
  assert_int_equal(ddmc_host_recv(h, &p, 1000), 0);
  assert_int_equal(p.id, 9);
  assert_int_equal(p.chunk_len, tn);
  assert_memory_equal(p.chunk, text, tn);
  close(peer);
  ddmc_host_free(h);
  bb_free(&good);
  bb_free(&b);
  bb_free(&z);
}

static void test_zlib_opt_in(void **state) {
  (void)state;
  ddmc_host *h;
  int peer;
  pair(&h, &peer);
  assert_int_equal(ddmc_host_opt_in_zlib(h), 0);
  assert_int_equal(ddmc_host_last_id(h), ID0);
  bb p = {0};
  rd_packet(peer, &p);
  assert_true(p.d[9] == 199 && p.d[10] == 1);
  assert_int_equal(be32(p.d + 11), DDMC_HOST_TYPE_ZLIB);
  uint32_t chunk_len = be32(p.d + 15);
  assert_int_equal(chunk_len + 19, p.n);
  const uint8_t *z = p.d + 19;
  uint32_t clen = be32(z);
  assert_int_equal(clen, chunk_len - 12);
  assert_int_equal(be32(z + 4), FOURCC('F', 'E', 'A', 'T'));
  assert_int_equal(be32(z + 8), 0);
  uint8_t out[4];
  uLongf on = sizeof out;
  assert_int_equal(uncompress(out, &on, z + 12, clen), Z_OK);
  assert_int_equal(on, 0);
  close(peer);
  ddmc_host_free(h);
  bb_free(&p);
}

/* ---- hello ----------------------------------------------------------------------------------- */

static void feat_payload(bb *b) {
  bb_u32(b, 2);
  bb_str(b, "hprof-heap-dump");
  bb_str(b, "method-trace-profiling");
}

static void test_hello(void **state) {
  (void)state;
  for (int order = 0; order < 2; order++) {
    ddmc_host *h;
    int peer;
    pair(&h, &peer);
    bb b = {0}, helo = {0}, feat = {0};
    helo_payload(&helo, 5);
    feat_payload(&feat);
    pk_chunk_cmd(&b, 0x10000000, FOURCC('W', 'A', 'I', 'T'), "\0", 1); /* WAIT precedes */
    if (order == 0) {
      pk_chunk_reply(&b, ID0, FOURCC('H', 'E', 'L', 'O'), helo.d, helo.n);
      pk_chunk_reply(&b, ID0 + 1, FOURCC('F', 'E', 'A', 'T'), feat.d, feat.n);
    } else {
      pk_chunk_reply(&b, ID0 + 1, FOURCC('F', 'E', 'A', 'T'), feat.d, feat.n);
      pk_chunk_reply(&b, ID0, FOURCC('H', 'E', 'L', 'O'), helo.d, helo.n);
    }
    wr(peer, b.d, b.n);
    ddmc_host_helo x;
    assert_int_equal(ddmc_host_hello(h, &x, 2000), 0);
    assert_int_equal(x.pid, 4242);
    assert_string_equal(x.pkg_name, "com.example");
    assert_true(x.present & DDMC_HOST_HELO_FEATURES);
    assert_int_equal(x.n_features, 2);
    assert_string_equal(x.features[1], "method-trace-profiling");
    ddmc_host_helo_free(&x);
    ddmc_host_packet p;
    assert_int_equal(ddmc_host_recv(h, &p, 0), 0);
    assert_int_equal(p.chunk_type, FOURCC('W', 'A', 'I', 'T'));
    /* What went out: HELO [u4 1] (23 bytes) then an empty FEAT (19 bytes). */
    bb req = {0};
    rd_packet(peer, &req);
    assert_int_equal(req.n, 23);
    assert_int_equal(be32(req.d + 11), FOURCC('H', 'E', 'L', 'O'));
    assert_int_equal(be32(req.d + 19), 1);
    rd_packet(peer, &req);
    assert_int_equal(req.n, 19);
    assert_int_equal(be32(req.d + 11), FOURCC('F', 'E', 'A', 'T'));
    close(peer);
    ddmc_host_free(h);
    bb_free(&b);
    bb_free(&helo);
    bb_free(&feat);
    bb_free(&req);
  }
}

static void test_hello_not_ddm(void **state) {
  (void)state;
  for (int kind = 0; kind < 5; kind++) {
    ddmc_host *h;
    int peer;
    pair(&h, &peer);
    bb b = {0}, fail = {0}, helo = {0};
    bb_u32(&fail, 1);
    bb_str(&fail, "nope");
    helo_payload(&helo, 0);
    int want;
    if (kind == 0) { /* Dalvik without a HELO handler: empty reply */
      pk_reply(&b, ID0, 0, NULL, 0);
      pk_reply(&b, ID0 + 1, 0, NULL, 0);
      want = DDMC_ENOTSUP;
    } else if (kind == 1) { /* the draft's way to decline */
      pk_reply(&b, ID0, 99, NULL, 0);
      pk_reply(&b, ID0 + 1, 99, NULL, 0);
      want = DDMC_ENOTSUP;
    } else if (kind == 2) {
      pk_chunk_reply(&b, ID0, FOURCC('F', 'A', 'I', 'L'), fail.d, fail.n);
      want = DDMC_ENOTSUP;
    } else if (kind == 3) { /* silence */
      want = DDMC_ETIMEDOUT;
    } else { /* HELO answered, FEAT never (ART adbconnection without a handler) */
      pk_chunk_reply(&b, ID0, FOURCC('H', 'E', 'L', 'O'), helo.d, helo.n);
      want = 0;
    }
    if (b.n) wr(peer, b.d, b.n);
    ddmc_host_helo x;
    int64_t t0 = mono_ms();
    assert_int_equal(ddmc_host_hello(h, &x, 150), want);
    assert_true(mono_ms() - t0 < 2000);
    if (kind == 4) {
      assert_string_equal(x.vm_ident, "Dalvik v2.1.0");
      assert_int_equal(x.present & DDMC_HOST_HELO_FEATURES, 0);
      /* A late FEAT reply is dropped rather than surfacing as a stray packet. */
      bb late = {0};
      pk_reply(&late, ID0 + 1, 0, NULL, 0);
      pk_chunk_cmd(&late, 0x10000000, FOURCC('W', 'A', 'I', 'T'), "\0", 1);
      wr(peer, late.d, late.n);
      ddmc_host_packet p;
      assert_int_equal(ddmc_host_recv(h, &p, 1000), 0);
      assert_int_equal(p.chunk_type, FOURCC('W', 'A', 'I', 'T'));
      bb_free(&late);
    }
    ddmc_host_helo_free(&x);
    close(peer);
    ddmc_host_free(h);
    bb_free(&b);
    bb_free(&fail);
    bb_free(&helo);
  }
}

/* ---- TCP ------------------------------------------------------------------------------------- */

static void test_connect_tcp(void **state) {
  (void)state;
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  assert_true(ls >= 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  assert_int_equal(bind(ls, (struct sockaddr *)&a, sizeof a), 0);
  assert_int_equal(listen(ls, 4), 0);
  socklen_t al = sizeof a;
  assert_int_equal(getsockname(ls, (struct sockaddr *)&a, &al), 0);
  uint16_t port = ntohs(a.sin_port);
  ddmc_host *h = NULL;
  assert_int_equal(ddmc_host_connect_tcp(&h, "127.0.0.1", port, 2000), 0);
  int c = accept(ls, NULL, NULL);
  assert_true(c >= 0);
  /* Plays a VM: answers the handshake and one request. */
  wr(c, "JDWP-Handshake", 14);
  bb b = {0};
  pk_chunk_reply(&b, ID0, FOURCC('R', 'E', 'A', 'Q'), "\0", 1);
  wr(c, b.d, b.n);
  assert_int_equal(ddmc_host_handshake(h, 2000), 0);
  ddmc_host_packet r;
  assert_int_equal(ddmc_host_request(h, FOURCC('R', 'E', 'A', 'Q'), NULL, 0, &r, 2000), 0);
  assert_int_equal(r.chunk_type, FOURCC('R', 'E', 'A', 'Q'));
  char hs[14];
  rd(c, hs, 14);
  assert_memory_equal(hs, "JDWP-Handshake", 14);
  close(c);
  ddmc_host_free(h);
  close(ls);
  /* Nobody listens there any more. */
  h = NULL;
  assert_int_equal(ddmc_host_connect_tcp(&h, "127.0.0.1", port, 2000), DDMC_ECONNREFUSED);
  assert_null(h);
  assert_int_equal(ddmc_host_connect_tcp(&h, NULL, port, 2000), DDMC_EINVAL);
  bb_free(&b);
}

static void test_strerror(void **state) {
  (void)state;
  assert_string_equal(ddmc_host_strerror(DDMC_EPROTO), "peer violated the protocol");
  assert_string_equal(ddmc_host_strerror(DDMC_ECLOSED), "connection closed by peer");
  assert_string_equal(ddmc_host_strerror(12345), "unknown error");
  assert_string_equal(ddmc_host_strerror(0), "success");
}

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
      {"c1 \xc2\x9b csi", "c1 \\u009b csi"},       /* U+009B, the 8-bit CSI */
      {"bad \xff\xc3 utf8", "bad \\xff\\xc3 utf8"}, /* invalid and truncated sequences */
      {"caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x99\x82", "caf\xc3\xa9 \xe4\xb8\xad \xf0\x9f\x99\x82"},
      {"\xed\xa0\x80", "\\xed\\xa0\\x80"},       /* a UTF-16 surrogate encoded in UTF-8 */
      {"\x9b[31m", "\\x9b[31m"},                 /* a bare 8-bit CSI byte is not UTF-8 either */
      {"\xc0\x80 \xe0\x80\x80", "\\xc0\\x80 \\xe0\\x80\\x80"}, /* overlong forms (of NUL) */
      {"\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"}, /* past U+10FFFF */
      {"end \xf0\x9f\x99", "end \\xf0\\x9f\\x99"},    /* cut short by the end of the string */
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
  assert_int_equal(ddmc_host_term_escape("ab\x1b" "cd", small, sizeof(small)), 8); /* ab\x1bcd */
  assert_string_equal(small, "ab"); /* cut between escapes, never inside one */
  assert_int_equal(ddmc_host_term_escape(NULL, small, sizeof(small)), 0);
  assert_string_equal(small, "");
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup_alarm, teardown_alarm)

int main(void) {
  const struct CMUnitTest tests[] = {
      T(test_term_escape),
      T(test_utf16_to_utf8),
      T(test_utf8_to_utf16),
      T(test_helo_all_fields),
      T(test_helo_optional_absent),
      T(test_helo_every_prefix),
      T(test_feat),
      T(test_apnm),
      T(test_small_chunks),
      T(test_thcr_thnm),
      T(test_fail),
      T(test_thst),
      T(test_stkl),
      T(test_hpif),
      T(test_parsers_random),
      T(test_send_bytes),
      T(test_from_fd_checks),
      T(test_recv_split_every_offset),
      T(test_recv_byte_at_a_time),
      T(test_recv_trickle_thread),
      T(test_recv_bad_lengths),
      T(test_recv_bad_chunk_then_continue),
      T(test_recv_eof_and_timeout),
      T(test_recv_large_packet),
      T(test_handshake_split),
      T(test_handshake_wrong),
      T(test_handshake_early_packet),
      T(test_request_keeps_unsolicited),
      T(test_request_timeout_drops_late_reply),
      T(test_request_queue_cap),
      T(test_zlib_inflate),
      T(test_zlib_bad),
      T(test_zlib_opt_in),
      T(test_hello),
      T(test_hello_not_ddm),
      T(test_connect_tcp),
      T(test_strerror),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
