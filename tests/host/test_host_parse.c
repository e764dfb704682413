/* SPDX-License-Identifier: Apache-2.0 */
/* host/parse.c: byte-vector tests of every chunk parser (and the UTF-16 conversions under
 * them), each also fed every prefix of its input in an exact-size heap copy, so an over-read shows
 * up under -fsanitize=address; then random bytes into every parser. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host_fixture.h"

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
  conv((const uint16_t[]){0xd83d, 0xde00}, 2, "\xf0\x9f\x98\x80");       /* U+1F600 */
  conv((const uint16_t[]){'a', 0xdbff, 0xdfff}, 3, "a\xf4\x8f\xbf\xbf"); /* U+10FFFF */
  conv((const uint16_t[]){0xd83d}, 1, "\xef\xbf\xbd");                   /* lone high, end */
  conv((const uint16_t[]){0xde00, 'x'}, 2, "\xef\xbf\xbdx");             /* lone low */
  conv((const uint16_t[]){0xd83d, 'x'}, 2, "\xef\xbf\xbdx");             /* high + non-low */
  conv((const uint16_t[]){'a', 0, 'b'}, 3,
       "a\xef\xbf\xbd"
       "b"); /* NUL */
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
  assert_int_equal(ddmc_host_utf8_to_utf16be("\xe4\xb8"
                                             "x\x80\xc0\xaf\xed\xa0\x80",
                                             &o, &n),
                   0);
  for (size_t i = 0; i + 1 < n; i += 2) {
    uint16_t u = (uint16_t)(o[i] << 8 | o[i + 1]);
    assert_true(u == 0xfffd || u == 'x' || (u < 0xd800 || u > 0xdfff));
  }
  free(o);
}

/* ---- HELO ------------------------------------------------------------------------------------ */

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
                                  DDMC_HOST_HELO_NATIVE_DEBUGGABLE | DDMC_HOST_HELO_PKG_NAME | DDMC_HOST_HELO_STAGE);
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
  if (x.present & DDMC_HOST_HELO_ABI)
    assert_string_equal(x.abi, full->abi);
  else
    assert_null(x.abi);
  if (x.present & DDMC_HOST_HELO_JVM_FLAGS) assert_string_equal(x.jvm_flags, full->jvm_flags);
  if (x.present & DDMC_HOST_HELO_PKG_NAME)
    assert_string_equal(x.pkg_name, full->pkg_name);
  else
    assert_null(x.pkg_name);
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

int main(void) {
  const struct CMUnitTest tests[] = {
      HOST_TEST(test_utf16_to_utf8),
      HOST_TEST(test_utf8_to_utf16),
      HOST_TEST(test_helo_all_fields),
      HOST_TEST(test_helo_optional_absent),
      HOST_TEST(test_helo_every_prefix),
      HOST_TEST(test_feat),
      HOST_TEST(test_apnm),
      HOST_TEST(test_small_chunks),
      HOST_TEST(test_thcr_thnm),
      HOST_TEST(test_fail),
      HOST_TEST(test_thst),
      HOST_TEST(test_stkl),
      HOST_TEST(test_hpif),
      HOST_TEST(test_parsers_random),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
