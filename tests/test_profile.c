/* SPDX-License-Identifier: Apache-2.0 */
/* The pure parts of profiling, without a VM or a socket: the REAL string tables, the allocation
 * ring, the REAL encoder (read back with the host's parser, written from the spec on its own),
 * the names cache over a bridge, and the .trace key section and header. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ddmc_host.h"
#include "fakebridge.h"
#include "profile/alloc_ring.h"
#include "profile/dmtrace.h"
#include "profile/names.h"
#include "profile/strtab.h"

static ddmc__mem g_mem;

/* ---- the tests' fake bridge with synthetic classes: S(n) is "LC<n>;" in "C<n>.java" (n 0x10 has no
 * source, n 0x11 fails); method m of any class is "m<m>" with the line table {0: 100 + m, 4: 200 + m};
 * method 9 is native; method 8 has no line information; method 7's second line is 40000. */
#define S(n) (FD_C_SYNTH + (ddmc_class)(n))
static fakebridge g_fb;

static void names_init(ddmc__prof_names *n) { ddmc__prof_names_init(n, &g_mem, &g_fb.bridge, &g_fb); }

static int setup(void **state) {
  (void)state;
  ddmc__mem_init(&g_mem, NULL);
  assert_int_equal(fakebridge_new(&g_fb, FAKEBRIDGE_NO_DEBUGGER | FAKEBRIDGE_SYNTH_CLASSES), 0);
  g_fb.synth = (fd_synth){.no_source = 0x10, .fails = 0x11, .native = 9, .no_lines = 8, .wide_line = 7};
  return 0;
}

static int teardown(void **state) {
  (void)state;
  assert_int_equal(atomic_load(&g_fb.bad_calls), 0);
  fakebridge_free(&g_fb);
  return 0;
}

/* ---- string tables */

static void test_strtab(void **state) {
  (void)state;
  ddmc__prof_strtab t;
  ddmc__prof_strtab_init(&t, &g_mem, 3);
  assert_int_equal(ddmc__prof_strtab_add(&t, "Ljava/lang/String;"), 0);
  assert_int_equal(ddmc__prof_strtab_add(&t, "[I"), 1);
  assert_int_equal(ddmc__prof_strtab_add(&t, "Ljava/lang/String;"), 0); /* once */
  assert_int_equal(ddmc__prof_strtab_add(&t, NULL), 2);                 /* NULL is "" */
  assert_int_equal(ddmc__prof_strtab_add(&t, ""), 2);
  assert_int_equal(ddmc__prof_strtab_add(&t, "new"), DDMC_ETOOBIG); /* full: no fourth string */
  assert_int_equal(ddmc__prof_strtab_add(&t, "[I"), 1);             /* known ones still resolve */
  ddmc_buf b;
  ddmc__buf_init(&b, &g_mem, 1 << 20);
  assert_int_equal(ddmc__prof_strtab_write(&t, &b), 0);
  static const uint8_t want[] = {0, 0,   0, 18,  0, 'L', 0, 'j', 0, 'a', 0, 'v', 0, 'a', 0, '/', 0, 'l',
                                 0, 'a', 0, 'n', 0, 'g', 0, '/', 0, 'S', 0, 't', 0, 'r', 0, 'i', 0, 'n',
                                 0, 'g', 0, ';', 0, 0,   0, 2,   0, '[', 0, 'I', 0, 0,   0, 0};
  assert_int_equal(b.len, sizeof want);
  assert_memory_equal(b.p, want, sizeof want);
  ddmc__buf_free(&b);
  ddmc__prof_strtab_free(&t);
  /* Many strings: the hash grows, every index stays. */
  ddmc__prof_strtab_init(&t, &g_mem, DDMC__STRTAB_MAX);
  char s[32];
  for (int i = 0; i < 5000; i++) {
    snprintf(s, sizeof s, "s%d", i);
    assert_int_equal(ddmc__prof_strtab_add(&t, s), i);
  }
  for (int i = 4999; i >= 0; i -= 7) {
    snprintf(s, sizeof s, "s%d", i);
    assert_int_equal(ddmc__prof_strtab_add(&t, s), i);
  }
  ddmc__prof_strtab_free(&t);
}

/* ---- the ring */

static void test_ring(void **state) {
  (void)state;
  ddmc__prof_alloc_ring *r = ddmc__prof_alloc_ring_new(&g_mem, 4, 2);
  assert_non_null(r);
  ddmc__prof_alloc_rec rec;
  assert_false(ddmc__prof_alloc_ring_get(r, 0, &rec)); /* never written */
  ddmc_location fr[3] = {{7, 1, 12}, {8, 2, -1}, {9, 3, 0}};
  ddmc__prof_alloc_ring_put(r, 0, 5, 42, 1000, fr, 3); /* three frames into a depth of two */
  assert_true(ddmc__prof_alloc_ring_get(r, 0, &rec));
  assert_int_equal(rec.thread, 5);
  assert_int_equal(rec.cls, 42);
  assert_int_equal(rec.bytes, 1000);
  assert_int_equal(rec.nframes, 2);
  assert_int_equal(rec.frames[0].cls, 7);
  assert_int_equal(rec.frames[0].method, 1);
  assert_int_equal(rec.frames[0].index, 12);
  assert_int_equal(rec.frames[1].index, -1);
  /* An index outside 32 bits is clipped, not wrapped. */
  ddmc_location big = {1, 0, (int64_t)1 << 40};
  ddmc__prof_alloc_ring_put(r, 1, 1, 1, 1, &big, 1);
  assert_true(ddmc__prof_alloc_ring_get(r, 1, &rec));
  assert_int_equal(rec.frames[0].index, INT32_MAX);
  /* Record 4 takes record 0's slot: asking for 0 then fails, 4 succeeds. */
  ddmc__prof_alloc_ring_put(r, 4, 9, 9, 9, NULL, 0);
  assert_false(ddmc__prof_alloc_ring_get(r, 0, &rec));
  assert_true(ddmc__prof_alloc_ring_get(r, 4, &rec));
  assert_int_equal(rec.nframes, 0);
  ddmc__prof_alloc_ring_free(&g_mem, r);
}

/* ---- REAL */

static ddmc_host_allocs report(ddmc__prof_alloc_ring *r, uint32_t max) {
  ddmc__prof_names n;
  names_init(&n);
  ddmc_buf b;
  ddmc__buf_init(&b, &g_mem, (size_t)256 << 20);
  assert_int_equal(ddmc__prof_alloc_report(r, &n, &g_mem, max, &b), 0);
  ddmc__prof_names_free(&n);
  ddmc_host_allocs a;
  assert_int_equal(ddmc_host_real_parse(b.p, b.len, &a), 0);
  /* The offset of the tables is exact: the entries end there. */
  size_t entries = 0;
  for (size_t i = 0; i < a.count; i++) entries += 9 + 8u * a.entries[i].depth;
  assert_int_equal(ddmc__get_u32(b.p + 5), 15 + entries);
  ddmc__buf_free(&b);
  return a;
}

static void test_real_empty(void **state) {
  (void)state;
  ddmc__prof_names n;
  names_init(&n);
  ddmc_buf b;
  ddmc__buf_init(&b, &g_mem, 1 << 20);
  assert_int_equal(ddmc__prof_alloc_report(NULL, &n, &g_mem, 65535, &b), 0);
  static const uint8_t want[15] = {15, 9, 8, 0, 0, 0, 0, 0, 15, 0, 0, 0, 0, 0, 0};
  assert_int_equal(b.len, 15);
  assert_memory_equal(b.p, want, 15);
  ddmc__buf_free(&b);
  ddmc__prof_names_free(&n);
}

static void test_real_entries(void **state) {
  (void)state;
  ddmc__prof_alloc_ring *r = ddmc__prof_alloc_ring_new(&g_mem, 4, 16);
  ddmc_location fr[4] = {{S(0x20), 3, 5}, {S(0x20), 9, -1}, {S(0x10), 8, 2}, {S(0x20), 7, 6}};
  for (uint64_t k = 0; k < 10; k++) ddmc__prof_alloc_ring_put(r, k, 1 + (uint32_t)k, S(0x20 + k % 2), 8 * k, fr, 4);
  atomic_store(&r->head, 10);
  atomic_store(&g_fb.n_class_info, 0);
  atomic_store(&g_fb.n_method_info, 0);
  atomic_store(&g_fb.n_line_table, 0);
  ddmc_host_allocs a = report(r, 65535);
  assert_int_equal(a.count, 4); /* the ring keeps the newest 4, newest first */
  for (size_t i = 0; i < 4; i++) {
    uint64_t k = 9 - i;
    assert_int_equal(a.entries[i].thread, 1 + k);
    assert_int_equal(a.entries[i].size, 8 * k);
    assert_string_equal(a.entries[i].cls, k % 2 ? "LC33;" : "LC32;");
    assert_int_equal(a.entries[i].depth, 4);
    const ddmc_host_alloc_frame *f = a.entries[i].frames;
    assert_string_equal(f[0].cls, "LC32;");
    assert_string_equal(f[0].method, "m3");
    assert_string_equal(f[0].file, "C32.java");
    assert_int_equal(f[0].line, 203);   /* index 5: the entry at 4 */
    assert_int_equal(f[1].line, -2);    /* native */
    assert_string_equal(f[2].file, ""); /* no source file */
    assert_int_equal(f[2].line, -1);    /* no line information */
    assert_int_equal(f[3].line, 32767); /* 40000 clipped, as Dalvik */
  }
  /* Each class and method asked once, whatever the number of frames naming it. */
  assert_int_equal(atomic_load(&g_fb.n_class_info), 3);
  assert_int_equal(atomic_load(&g_fb.n_method_info), 4);
  assert_int_equal(atomic_load(&g_fb.n_line_table), 3); /* not for the native method */
  assert_int_equal(a.nclasses, 3);
  assert_int_equal(a.nmethods, 4);
  assert_int_equal(a.nfiles, 2);
  ddmc_host_allocs_free(&a);
  /* A cap on the entries. */
  a = report(r, 2);
  assert_int_equal(a.count, 2);
  assert_int_equal(a.entries[1].thread, 9);
  ddmc_host_allocs_free(&a);
  ddmc__prof_alloc_ring_free(&g_mem, r);
}

/* More distinct names than a u2 table holds: the report stops before the entry that would need a
 * 65536th class string, and what it holds is consistent. */
static void test_real_tables_full(void **state) {
  (void)state;
  uint32_t cap = 8192;
  ddmc__prof_alloc_ring *r = ddmc__prof_alloc_ring_new(&g_mem, cap, 16);
  ddmc_location fr[16];
  for (uint64_t k = 0; k < cap; k++) {
    for (int i = 0; i < 16; i++) fr[i] = (ddmc_location){S(0x1000 + k * 16 + (uint64_t)i), 0, 0};
    ddmc__prof_alloc_ring_put(r, k, 1, S(0x100000 + k), 16, fr, 16);
  }
  atomic_store(&r->head, cap);
  ddmc_host_allocs a = report(r, 65535);
  assert_int_equal(a.count, 65535 / 17); /* 17 new class strings per entry */
  assert_true(a.nclasses <= 65535);
  assert_int_equal(a.entries[0].size, 16);
  assert_string_equal(a.entries[0].cls, "LC1056767;"); /* 0x100000 + 8191 */
  ddmc_host_allocs_free(&a);
  ddmc__prof_alloc_ring_free(&g_mem, r);
}

/* ---- names */

static void test_names(void **state) {
  (void)state;
  char out[64];
  static const char *const cases[][2] = {
      {"Ljava/lang/String;", "java.lang.String"},
      {"[I", "int[]"},
      {"[[Lcom/x/Y$Z;", "com.x.Y$Z[][]"},
      {"[Z", "boolean[]"},
      {"Debug", "Debug"},
      {"I", "I"}, /* not an array: not a descriptor we turn into a primitive name */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    assert_string_equal(ddmc__prof_descriptor_to_dotted(cases[i][0], out, sizeof out), cases[i][1]);
    if (cases[i][0][0] == '[' || cases[i][0][0] == 'L') { /* the host's own version agrees */
      char *h = ddmc_host_descriptor_to_dot(cases[i][0]);
      assert_string_equal(h, cases[i][1]);
      free(h);
    }
  }
  assert_string_equal(ddmc__prof_descriptor_to_dotted("Lcom/example/VeryLong;", out, 8), "com.exa");
  ddmc__prof_names n;
  names_init(&n);
  ddmc__prof_nmethod *m = ddmc__prof_names_method(&n, S(5), 1);
  assert_non_null(m);
  assert_int_equal(ddmc__prof_names_line(m, 0), 101);
  assert_int_equal(ddmc__prof_names_line(m, 3), 101);
  assert_int_equal(ddmc__prof_names_line(m, 4), 201);
  assert_int_equal(ddmc__prof_names_line(m, 1000), 201);
  assert_int_equal(ddmc__prof_names_line(m, -1), -2);
  assert_string_equal(ddmc__prof_names_class(&n, S(0x11))->sig, "?"); /* the bridge failed */
  assert_string_equal(ddmc__prof_names_class(&n, 0)->sig, "?");    /* never asked */
  ddmc__prof_names_free(&n);
}

/* ---- the .trace head */

static void test_dmtrace_head(void **state) {
  (void)state;
  ddmc_buf b;
  ddmc__buf_init(&b, &g_mem, 1 << 20);
  ddmc__prof_dmtrace_thread th[2] = {{1, "main"}, {12, "bad\tname\nhere"}};
  ddmc__prof_dmtrace_method me[2] = {{0x10, "com.x.A", "run", "()V", "A.java", 7}, {0x24, "B", "go", "(I)J", "", 0}};
  ddmc__prof_dmtrace_info info = {1, 123456, 2, 25, 0x0102030405060708ull};
  assert_int_equal(ddmc__prof_dmtrace_head(&b, &info, th, 2, me, 2), 0);
  /* Two records after the head. */
  uint8_t *rec = ddmc__buf_append(&b, 2 * DDMC__TRACE_REC);
  ddmc__prof_dmtrace_rec(rec, 12, 0x24 | DDMC__TR_ENTER, 5, 6);
  ddmc__prof_dmtrace_rec(rec + 14, 12, 0x24 | DDMC__TR_UNROLL, 7, 0x01020304);
  ddmc_host_trace t;
  assert_int_equal(ddmc_host_trace_parse(b.p, b.len, &t), 0);
  assert_int_equal(t.version, 3);
  assert_true(t.overflow);
  assert_string_equal(t.clock, "dual");
  assert_int_equal(t.elapsed_us, 123456);
  assert_int_equal(t.num_method_calls, 2);
  assert_int_equal(t.data_version, 3);
  assert_int_equal(t.rec_size, 14);
  assert_int_equal(t.start_us, 0x0102030405060708ull);
  assert_int_equal(t.nthreads, 2);
  assert_string_equal(t.threads[1].name, "bad name here"); /* the line stays one line */
  assert_int_equal(t.nmethods, 2);
  assert_string_equal(t.methods[0].cls, "com.x.A");
  assert_int_equal(t.methods[0].line, 7);
  assert_string_equal(t.methods[1].file, "?"); /* an empty field would merge with the next */
  assert_int_equal(t.nrecs, 2);
  assert_int_equal(t.recs[1].thread, 12);
  assert_int_equal(t.recs[1].method, 0x24);
  assert_int_equal(t.recs[1].action, 2);
  assert_int_equal(t.recs[1].time1, 7);
  assert_int_equal(t.recs[1].time2, 0x01020304);
  ddmc_host_trace_free(&t);
  /* The key section as text, exactly. */
  const char *key = (const char *)b.p;
  assert_true(strncmp(key, "*version\n3\ndata-file-overflow=true\nclock=dual\n", 45) == 0);
  assert_non_null(strstr(key, "\n*methods\n0x00000010\tcom.x.A\trun\t()V\tA.java\t7\n"));
  /* A cut record: kept out, flagged. */
  assert_int_equal(ddmc_host_trace_parse(b.p, b.len - 3, &t), 0);
  assert_int_equal(t.nrecs, 1);
  assert_true(t.truncated);
  ddmc_host_trace_free(&t);
  ddmc__buf_free(&b);
}

/* ---- the host parsers on hand-made input (they are the tests' ddmlib and dmtracedump) */

static void test_host_real_forward_compatible(void **state) {
  (void)state;
  /* Header, entry and frame lengths larger than today's: the extra bytes are skipped, as
   * AllocationsParser does. One entry of one frame. */
  uint8_t p[128];
  size_t n = 0;
  p[n++] = 18, p[n++] = 12, p[n++] = 10;
  p[n++] = 0, p[n++] = 1; /* one entry */
  size_t off_at = n;
  n += 4;                                      /* tables' offset, below */
  p[n++] = 0, p[n++] = 1;                      /* one class */
  p[n++] = 0, p[n++] = 1;                      /* one method */
  p[n++] = 0, p[n++] = 1;                      /* one file */
  p[n++] = 0xee, p[n++] = 0xee, p[n++] = 0xee; /* header extension */
  ddmc__put_u32(p + n, 40), n += 4;
  p[n++] = 0, p[n++] = 3, p[n++] = 0, p[n++] = 0, p[n++] = 1;
  p[n++] = 0xee, p[n++] = 0xee, p[n++] = 0xee;
  p[n++] = 0, p[n++] = 0, p[n++] = 0, p[n++] = 0, p[n++] = 0, p[n++] = 0, p[n++] = 0xff, p[n++] = 0xfe;
  p[n++] = 0xee, p[n++] = 0xee;
  ddmc__put_u32(p + off_at, (uint32_t)n);
  const char *strs[3] = {"[I", "run", "R.java"};
  for (int i = 0; i < 3; i++) {
    size_t l = strlen(strs[i]);
    ddmc__put_u32(p + n, (uint32_t)l), n += 4;
    for (size_t k = 0; k < l; k++) p[n++] = 0, p[n++] = (uint8_t)strs[i][k];
  }
  ddmc_host_allocs a;
  assert_int_equal(ddmc_host_real_parse(p, n, &a), 0);
  assert_int_equal(a.count, 1);
  assert_int_equal(a.entries[0].size, 40);
  assert_int_equal(a.entries[0].thread, 3);
  assert_string_equal(a.entries[0].cls, "[I");
  assert_int_equal(a.entries[0].depth, 1);
  assert_string_equal(a.entries[0].frames[0].method, "run");
  assert_int_equal(a.entries[0].frames[0].line, -2);
  ddmc_host_allocs_free(&a);
  /* An index past its table: what makes ddmlib drop the client. */
  p[18 + 7] = 1; /* the entry's class index */
  assert_int_equal(ddmc_host_real_parse(p, n, &a), DDMC_EPROTO);
  p[18 + 7] = 0;
  ddmc__put_u32(p + off_at, 10000); /* tables past the end */
  assert_int_equal(ddmc_host_real_parse(p, n, &a), DDMC_EPROTO);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_strtab),           cmocka_unit_test(test_ring),
      cmocka_unit_test(test_real_empty),       cmocka_unit_test(test_real_entries),
      cmocka_unit_test(test_real_tables_full), cmocka_unit_test(test_names),
      cmocka_unit_test(test_dmtrace_head),     cmocka_unit_test(test_host_real_forward_compatible),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
