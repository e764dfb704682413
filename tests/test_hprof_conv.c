/* SPDX-License-Identifier: Apache-2.0 */
/* A VM's own hprof (1.0.2, 8-byte ids, as HotSpot writes it) into Android's 1.0.3
 * (src/profile/hprof_conv.c): a small dump known to the byte converted, read back with
 * host/hprof.c and a walker of this file; the length promised before the first byte is the
 * length given, whatever the input's and the reader's pieces; ids, names, values, a reference to
 * an object the dump left out, HotSpot's doubled LOAD CLASS; and what it refuses (every one a
 * clean DDMC_ENOTSUP): a file cut anywhere, an unknown record, an instance that does not match
 * its class, ids that do not fit, allocation failures. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ddmc_host.h"
#include "profile/hprof_conv.h"
#include "util/hsfile.h"
#include "util/memsrc.h"

/* ---- input from memory, in pieces of at most piece bytes */

static ddmc__mem mem;

/* Converts w's first n bytes; the output in *out (free it), its length *len. */
static uint64_t counts[4]; /* of the last conversion: objects, classes, roots, dangling */

static int convert(const uint8_t *p, size_t n, size_t piece, size_t cap, uint8_t **out, uint64_t *len) {
  memsrc s = {p, n, 0, piece};
  ddmc__prof_hpconv_input in = memsrc_input(&s);
  ddmc__prof_hpconv *c;
  char msg[200];
  *out = NULL;
  int rc = ddmc__prof_hpconv_open(&mem, &in, &c, len, msg, sizeof msg);
  if (rc != 0) return rc;
  uint8_t *o = malloc(*len + 16);
  size_t got = 0;
  ssize_t k;
  while ((k = ddmc__prof_hpconv_read(c, o + got, cap)) > 0) {
    got += (size_t)k;
    assert_true(got <= *len);
  }
  assert_int_equal(k, 0);
  assert_int_equal(got, *len);
  ddmc__prof_hpconv_counts(c, &counts[0], &counts[1], &counts[2], &counts[3]);
  ddmc__prof_hpconv_free(c);
  *out = o;
  return 0;
}

/* ---- reading the output: strings by id, instances' value bytes */

static uint32_t be4(const uint8_t *p) { return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3]; }

typedef struct seen {
  char names[8][32]; /* LOAD CLASS names, in order */
  int nnames, nstrings;
  uint32_t sub1, sub2, ints, subs, sub1_ref, sub2_ref, jni_ref, st, first_elem;
  int32_t sub1_a;
  uint32_t inst_bytes;
} seen;

static const uint8_t *string_of(const uint8_t *o, uint64_t n, uint32_t id, uint32_t *len) {
  for (uint64_t p = 31; p + 9 <= n;) {
    uint32_t l = be4(o + p + 5);
    if (o[p] == 0x01 && be4(o + p + 9) == id) {
      *len = l - 4;
      return o + p + 13;
    }
    p += 9 + l;
  }
  return NULL;
}

static void sub_walk(const uint8_t *o, uint64_t p, uint64_t end, seen *s) {
  while (p < end) {
    uint8_t t = o[p++];
    if (t == 0x01) {
      s->jni_ref = be4(o + p + 4);
      p += 8;
    } else if (t == 0x08) {
      p += 12;
    } else if (t == 0x05) {
      p += 4;
    } else if (t == 0x20) {
      uint32_t isize = be4(o + p + 32);
      if (isize != 0) s->inst_bytes = isize;
      uint64_t q = p + 36 + 2; /* past the constant pool's count (0) */
      uint32_t ns = (uint32_t)o[q] << 8 | o[q + 1];
      if (ns == 1) s->st = be4(o + q + 2 + 5); /* the one static, an object: name, type, value */
      q += 2 + ns * 9u;
      uint32_t ni = (uint32_t)o[q] << 8 | o[q + 1];
      p = q + 2 + ni * 5u;
    } else if (t == 0x21) {
      uint32_t id = be4(o + p), ref = be4(o + p + 16 + 4);
      if (s->sub1 == 0) {
        s->sub1 = id;
        s->sub1_ref = ref;
        s->sub1_a = (int32_t)be4(o + p + 16);
      } else {
        s->sub2 = id;
        s->sub2_ref = ref;
      }
      p += 16 + be4(o + p + 12);
    } else if (t == 0x23) {
      s->ints = be4(o + p);
      p += 13 + 4 * be4(o + p + 8);
    } else if (t == 0x22) {
      s->subs = be4(o + p);
      s->first_elem = be4(o + p + 16);
      p += 16 + 4 * be4(o + p + 8);
    } else {
      fail_msg("sub-tag 0x%02x at %llu", t, (unsigned long long)p - 1);
    }
  }
}

static void walk(const uint8_t *o, uint64_t n, seen *s) {
  memset(s, 0, sizeof(*s));
  for (uint64_t p = 31; p + 9 <= n;) {
    uint32_t l = be4(o + p + 5);
    if (o[p] == 0x01) s->nstrings++;
    if (o[p] == 0x02 && s->nnames < 8) {
      uint32_t sl = 0;
      const uint8_t *str = string_of(o, n, be4(o + p + 9 + 12), &sl);
      assert_non_null(str);
      snprintf(s->names[s->nnames++], 32, "%.*s", (int)sl, (const char *)str);
    }
    if (o[p] == 0x1C) sub_walk(o, p + 9, p + 9 + l, s);
    p += 9 + l;
  }
}

static void converts(void **state) {
  (void)state;
  static hsfile w;
  hsfile_make(&w);
  uint8_t *o;
  uint64_t len;
  assert_int_equal(convert(w.b, w.n, SIZE_MAX, SIZE_MAX, &o, &len), 0);
  assert_int_equal(counts[0], 4);
  assert_int_equal(counts[1], 4);
  assert_int_equal(counts[2], 3);
  assert_int_equal(counts[3], 1); /* the reference to the object the dump left out */
  ddmc_host_hprof_info info;
  assert_int_equal(ddmc_host_hprof_scan(o, len, &info), 0);
  assert_true(info.android);
  assert_int_equal(info.id_size, 4);
  assert_int_equal(info.timestamp_ms, 1700000000000ull);
  assert_int_equal(info.load_classes, 4); /* the doubled one once */
  assert_int_equal(info.classes, 4);
  assert_int_equal(info.instances, 2);
  assert_int_equal(info.object_arrays, 1);
  assert_int_equal(info.primitive_arrays, 1);
  assert_int_equal(info.roots, 3);
  assert_int_equal(info.segments, 2);
  seen s;
  walk(o, len, &s);
  assert_int_equal(s.nnames, 4);
  assert_string_equal(s.names[0], "java.lang.Object");
  assert_string_equal(s.names[1], "Sub");
  assert_string_equal(s.names[2], "int[]");
  assert_string_equal(s.names[3], "Sub[]");
  assert_int_equal(s.nstrings, 11); /* all but the one nothing names */
  assert_int_equal(s.sub1_a, 7);
  assert_true(s.sub1 != 0 && s.sub2 != 0 && s.sub1 != s.sub2 && s.sub1 < 0xF0000000u && s.sub2 < 0xF0000000u);
  assert_int_equal(s.sub1_ref, s.sub2);
  assert_int_equal(s.sub2_ref, 0); /* the object the dump left out */
  assert_int_equal(s.first_elem, s.sub1);
  assert_int_equal(s.st, s.sub1);
  assert_int_equal(s.jni_ref, 0);
  assert_int_equal(s.inst_bytes, 4 + 4 + 8);
  /* The same bytes whatever the input's pieces and the reader's */
  static const size_t pieces[] = {1, 3, 7, 64, 1000};
  for (size_t i = 0; i < sizeof pieces / sizeof pieces[0]; i++) {
    uint8_t *o2;
    uint64_t len2;
    assert_int_equal(convert(w.b, w.n, pieces[i], pieces[i] + 1, &o2, &len2), 0);
    assert_int_equal(len2, len);
    assert_memory_equal(o2, o, len);
    free(o2);
  }
  free(o);
}

static void refuses_cut_files(void **state) {
  (void)state;
  static hsfile w;
  hsfile_make(&w);
  for (size_t n = 0; n < w.n; n++) {
    uint8_t *o;
    uint64_t len;
    assert_int_equal(convert(w.b, n, 5, 100, &o, &len), DDMC_ENOTSUP);
  }
}

/* A changed byte at the given offset: refused, never a crash. */
static int with_byte(const hsfile *w0, size_t at, uint8_t v) {
  static hsfile w;
  w = *w0;
  w.b[at] = v;
  uint8_t *o;
  uint64_t len;
  int rc = convert(w.b, w.n, SIZE_MAX, SIZE_MAX, &o, &len);
  free(o);
  return rc;
}

static void refuses_what_it_does_not_convert(void **state) {
  (void)state;
  static hsfile w;
  hsfile_make(&w);
  assert_int_equal(with_byte(&w, 17, '3'), DDMC_ENOTSUP); /* already Android's */
  assert_int_equal(with_byte(&w, 22, 6), DDMC_ENOTSUP);   /* ids of 6 bytes */
  size_t first = 31;
  assert_int_equal(with_byte(&w, first, 0x06), DDMC_ENOTSUP); /* ALLOC SITES: not Android's */
  /* every byte of the heap's sub-records changed in turn: converted or refused, nothing else */
  for (size_t at = first; at < w.n; at++) {
    int rc = with_byte(&w, at, (uint8_t)(w.b[at] ^ 0x5A));
    assert_true(rc == 0 || rc == DDMC_ENOTSUP);
  }
}

static void refuses_ids_that_do_not_fit(void **state) {
  (void)state;
  static hsfile w;
  hsfile_make(&w);
  /* sub2 moved 2^40 bytes up: the ids would span more than 4 bytes hold */
  uint8_t pat[8], rep[8];
  for (int i = 0; i < 8; i++)
    pat[i] = (uint8_t)(A(A_SUB2) >> (56 - 8 * i)), rep[i] = (uint8_t)((A(A_SUB2) + (1ull << 40)) >> (56 - 8 * i));
  for (size_t p = 0; p + 8 <= w.n; p++)
    if (memcmp(w.b + p, pat, 8) == 0) memcpy(w.b + p, rep, 8);
  uint8_t *o;
  uint64_t len;
  assert_int_equal(convert(w.b, w.n, SIZE_MAX, SIZE_MAX, &o, &len), DDMC_ENOTSUP);
}

/* ---- a bigger file: arrays longer than one step of the converter, LOAD CLASS after the heap */

typedef struct big {
  uint8_t *b;
  size_t n;
} big;

static void b1(big *w, uint32_t v) { w->b[w->n++] = (uint8_t)v; }
static void b4(big *w, uint32_t v) {
  for (int i = 3; i >= 0; i--) b1(w, v >> (8 * i));
}
static void b8(big *w, uint64_t v) {
  b4(w, (uint32_t)(v >> 32));
  b4(w, (uint32_t)v);
}
static void brec(big *w, uint32_t tag, uint32_t len) {
  b1(w, tag);
  b4(w, 0);
  b4(w, len);
}
static void bclass(big *w, uint64_t id) { /* no fields, no statics */
  b1(w, 0x20);
  b8(w, id);
  b4(w, 1);
  for (int i = 0; i < 6; i++) b8(w, 0);
  b4(w, 0);
  for (int i = 0; i < 3; i++) b1(w, 0), b1(w, 0);
}

enum { BIG_INTS = 300000, BIG_REFS = 70000, LATE_LOADS = 3000 };

/* Object (A_OBJECT) with one instance (A_SUB1), an int[BIG_INTS] (A_INTS, element i = 7i) and an
 * Object[BIG_REFS] (A_SUBS: A_SUB1, A_GONE, 0 in turn), then LATE_LOADS LOAD CLASS records of
 * classes the dump does not hold. */
static size_t make_big(big *w) {
  w->n = 0;
  memcpy(w->b, "JAVA PROFILE 1.0.2", 19);
  w->n = 19;
  b4(w, 8);
  b8(w, 1700000000000ull);
  brec(w, 0x01, 8 + 16);
  b8(w, S(S_OBJECT));
  memcpy(w->b + w->n, "java/lang/Object", 16);
  w->n += 16;
  brec(w, 0x1C, 0);
  size_t seg = w->n;
  bclass(w, A(A_OBJECT));
  b1(w, 0x21), b8(w, A(A_SUB1)), b4(w, 1), b8(w, A(A_OBJECT)), b4(w, 0);
  b1(w, 0x23), b8(w, A(A_INTS)), b4(w, 1), b4(w, BIG_INTS), b1(w, 10);
  for (uint32_t i = 0; i < BIG_INTS; i++) b4(w, 7 * i);
  b1(w, 0x22), b8(w, A(A_SUBS)), b4(w, 1), b4(w, BIG_REFS), b8(w, A(A_OBJECT));
  for (uint32_t i = 0; i < BIG_REFS; i++) b8(w, i % 3 == 0 ? A(A_SUB1) : i % 3 == 1 ? A(A_GONE) : 0);
  uint32_t len = (uint32_t)(w->n - seg);
  for (int i = 0; i < 4; i++) w->b[seg - 4 + i] = (uint8_t)(len >> (24 - 8 * i));
  for (uint32_t i = 0; i < LATE_LOADS; i++) {
    brec(w, 0x02, 24);
    b4(w, i + 1), b8(w, A(100000 + i)), b4(w, 1), b8(w, S(S_OBJECT));
  }
  brec(w, 0x2C, 0);
  return w->n;
}

static void converts_big_arrays_and_late_classes(void **state) {
  (void)state;
  big w = {malloc(4u << 20), 0};
  assert_non_null(w.b);
  size_t n = make_big(&w);
  uint8_t *o, *o2;
  uint64_t len, len2;
  assert_int_equal(convert(w.b, n, SIZE_MAX, (size_t)1 << 20, &o, &len), 0);
  assert_int_equal(counts[0], 3);
  assert_int_equal(counts[3], (BIG_REFS + 1) / 3 + LATE_LOADS); /* A_GONE, and the classes never dumped */
  ddmc_host_hprof_info info;
  assert_int_equal(ddmc_host_hprof_scan(o, len, &info), 0);
  assert_int_equal(info.primitive_arrays, 1);
  assert_int_equal(info.object_arrays, 1);
  assert_int_equal(info.load_classes, LATE_LOADS);
  /* the arrays' elements, found by their heads (the segment starts after the header and STRING) */
  const uint8_t *ints = NULL, *refs = NULL;
  uint32_t sub1 = 0;
  for (uint64_t p = 31 + 9 + 4 + 16 + 9; p + 17 <= len && (ints == NULL || refs == NULL);) {
    uint8_t t = o[p];
    if (t == 0x20) p += 1 + 4 + 4 + 6 * 4 + 4 + 6;
    else if (t == 0x21) sub1 = be4(o + p + 1), p += 17;
    else if (t == 0x23) ints = o + p + 14, p += 14 + 4ull * BIG_INTS;
    else if (t == 0x22) refs = o + p + 17, p += 17 + 4ull * BIG_REFS;
    else fail_msg("sub-tag 0x%02x at %llu", t, (unsigned long long)p);
  }
  assert_non_null(ints);
  assert_non_null(refs);
  for (uint32_t i = 0; i < BIG_INTS; i++) assert_int_equal(be4(ints + 4 * i), 7 * i);
  for (uint32_t i = 0; i < BIG_REFS; i++) assert_int_equal(be4(refs + 4 * i), i % 3 == 0 ? sub1 : 0);
  /* the same bytes in small pieces, and into a reader's small buffer */
  assert_int_equal(convert(w.b, n, 4093, 777, &o2, &len2), 0);
  assert_int_equal(len2, len);
  assert_memory_equal(o2, o, len);
  free(o2);
  free(o);
  free(w.b);
}

/* An instance of more than 1 MiB (three classes of 50,000 long fields each, one the superclass of
 * the next): refused by the first pass, before a length is promised, not cut off in the second. */
static void refuses_huge_instances(void **state) {
  (void)state;
  enum { FIELDS = 50000, DEPTH = 3 };
  big w = {malloc(8u << 20), 0};
  assert_non_null(w.b);
  memcpy(w.b, "JAVA PROFILE 1.0.2", 19);
  w.n = 19;
  b4(&w, 8);
  b8(&w, 1700000000000ull);
  brec(&w, 0x01, 8 + 1);
  b8(&w, S(S_L));
  b1(&w, 'l');
  brec(&w, 0x1C, 0);
  size_t seg = w.n;
  for (int k = 0; k < DEPTH; k++) {
    b1(&w, 0x20), b8(&w, A(A_OBJECT + k)), b4(&w, 1), b8(&w, k == 0 ? 0 : A(A_OBJECT + k - 1));
    for (int i = 0; i < 5; i++) b8(&w, 0);
    b4(&w, FIELDS * 8);
    b1(&w, 0), b1(&w, 0), b1(&w, 0), b1(&w, 0); /* no constants, no statics */
    b1(&w, FIELDS >> 8), b1(&w, FIELDS & 0xFF);
    for (int i = 0; i < FIELDS; i++) b8(&w, S(S_L)), b1(&w, 11);
  }
  b1(&w, 0x21), b8(&w, A(A_SUB1)), b4(&w, 1), b8(&w, A(A_OBJECT + DEPTH - 1)), b4(&w, DEPTH * FIELDS * 8);
  memset(w.b + w.n, 0, (size_t)DEPTH * FIELDS * 8);
  w.n += (size_t)DEPTH * FIELDS * 8;
  uint32_t len = (uint32_t)(w.n - seg);
  for (int i = 0; i < 4; i++) w.b[seg - 4 + i] = (uint8_t)(len >> (24 - 8 * i));
  brec(&w, 0x2C, 0);
  uint8_t *o;
  uint64_t olen;
  assert_int_equal(convert(w.b, w.n, SIZE_MAX, SIZE_MAX, &o, &olen), DDMC_ENOTSUP);
  free(w.b);
}

/* ---- allocation failures: the nth allocation fails */

static int budget;
static void *f_malloc(void *ud, size_t n) {
  (void)ud;
  return budget-- > 0 ? malloc(n) : NULL;
}
static void *f_realloc(void *ud, void *p, size_t n) {
  (void)ud;
  return budget-- > 0 ? realloc(p, n) : NULL;
}
static void f_free(void *ud, void *p) {
  (void)ud;
  free(p);
}

static void survives_allocation_failures(void **state) {
  (void)state;
  static hsfile w;
  hsfile_make(&w);
  ddmc_allocator a = {NULL, f_malloc, f_realloc, f_free};
  ddmc__mem_init(&mem, &a);
  int ok = 0;
  for (int n = 0; n < 64 && !ok; n++) {
    budget = n;
    uint8_t *o;
    uint64_t len;
    memsrc s = {w.b, w.n, 0, SIZE_MAX};
    ddmc__prof_hpconv_input in = memsrc_input(&s);
    ddmc__prof_hpconv *c;
    char msg[200];
    int rc = ddmc__prof_hpconv_open(&mem, &in, &c, &len, msg, sizeof msg);
    if (rc != 0) {
      assert_int_equal(rc, DDMC_ENOMEM);
      continue;
    }
    o = malloc(len);
    size_t got = 0;
    ssize_t k;
    while ((k = ddmc__prof_hpconv_read(c, o + got, 4096)) > 0) got += (size_t)k;
    ok = k == 0 && got == len;
    assert_true(ok || k == DDMC_ENOMEM);
    ddmc__prof_hpconv_free(c);
    free(o);
  }
  assert_true(ok);
  ddmc__mem_init(&mem, NULL);
}

/* ---- a file that changes: between the passes, or while the VM still writes it */

typedef struct twofile {
  memsrc s;
  ddmc__prof_hpconv_input base; /* memsrc's, on s */
  const uint8_t *again;         /* the file as the second pass finds it (NULL: the same) */
  size_t again_n;
  int growing;
} twofile;

static int tf_fill(void *a, uint8_t *dst, size_t cap, size_t *got) {
  twofile *t = a;
  return t->base.fill(t->base.arg, dst, cap, got);
}
static int tf_skip(void *a, uint64_t n) {
  twofile *t = a;
  return (t->base.skip)(t->base.arg, n); /* cmocka has a skip() macro */
}
static int tf_rewind(void *a) {
  twofile *t = a;
  if (t->again != NULL) t->s.p = t->again, t->s.n = t->again_n;
  return t->base.rewind(t->base.arg);
}
static int tf_growing(void *a) { return ((twofile *)a)->growing; }

/* Opens p (n bytes), the second pass reading again (again_n bytes) when not NULL; returns what
 * the open returned, and with 0 what the reads came to: 0 at the promised length, or the error. */
static int convert_two(const uint8_t *p, size_t n, const uint8_t *again, size_t again_n, int growing, int *open_rc) {
  twofile t;
  memset(&t, 0, sizeof t);
  t.s.p = p;
  t.s.n = n;
  t.s.piece = SIZE_MAX;
  t.base = memsrc_input(&t.s);
  t.again = again;
  t.again_n = again_n;
  t.growing = growing;
  ddmc__prof_hpconv_input in = {tf_fill, tf_skip, tf_rewind, &t, tf_growing};
  ddmc__prof_hpconv *c;
  uint64_t len;
  char msg[200];
  *open_rc = ddmc__prof_hpconv_open(&mem, &in, &c, &len, msg, sizeof msg);
  if (*open_rc != 0) return 0;
  static uint8_t o[1 << 16];
  uint64_t got = 0;
  ssize_t k;
  while ((k = ddmc__prof_hpconv_read(c, o, 100)) > 0) got += (uint64_t)k;
  if (k < 0) assert_string_equal(ddmc__prof_hpconv_why(c), "heap dump: the VM's file changed between the two passes");
  ddmc__prof_hpconv_free(c);
  return k < 0 ? (int)k : got == len ? 0 : -1;
}

/* The offset of the first record of this tag in an hprof file, and its whole length. */
static size_t record_at(const uint8_t *p, size_t n, uint8_t tag, size_t *len) {
  for (size_t at = 31; at + 9 <= n; at += 9 + be4(p + at + 5))
    if (p[at] == tag) {
      *len = 9 + be4(p + at + 5);
      return at;
    }
  fail();
  return 0;
}

static void notices_a_file_that_changes(void **state) {
  (void)state;
  static hsfile w, shorter, longer;
  hsfile_make(&w);
  int orc;
  assert_int_equal(convert_two(w.b, w.n, NULL, 0, 0, &orc), 0);
  assert_int_equal(orc, 0);
  /* The second pass finds a record less, or one more (the STACK FRAME gone, or twice): an error,
   * never an output of another length than promised. */
  size_t flen, at = record_at(w.b, w.n, 0x04, &flen);
  memcpy(shorter.b, w.b, at);
  memcpy(shorter.b + at, w.b + at + flen, w.n - at - flen);
  shorter.n = w.n - flen;
  assert_int_equal(convert_two(w.b, w.n, shorter.b, shorter.n, 0, &orc), DDMC_EIO);
  assert_int_equal(orc, 0);
  memcpy(longer.b, w.b, at + flen);
  memcpy(longer.b + at + flen, w.b + at, w.n - at);
  longer.n = w.n + flen;
  assert_int_equal(convert_two(w.b, w.n, longer.b, longer.n, 0, &orc), DDMC_EIO);
  assert_int_equal(orc, 0);
  /* Read while the VM writes it: a heap dump of length 0 is one whose length comes last (JDK
   * 8-11), so the pass stops (the caller reads the finished file again); a length written is
   * read as it is. */
  assert_int_equal(convert_two(w.b, w.n, NULL, 0, 1, &orc), 0);
  assert_int_equal(orc, 0);
  size_t slen, seg = record_at(w.b, w.n, 0x1C, &slen);
  memset(w.b + seg + 5, 0, 4);
  convert_two(w.b, w.n, NULL, 0, 1, &orc);
  assert_int_equal(orc, DDMC_ESTATE);
}

int main(void) {
  ddmc__mem_init(&mem, NULL);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(converts),
      cmocka_unit_test(refuses_cut_files),
      cmocka_unit_test(refuses_what_it_does_not_convert),
      cmocka_unit_test(refuses_ids_that_do_not_fit),
      cmocka_unit_test(converts_big_arrays_and_late_classes),
      cmocka_unit_test(refuses_huge_instances),
      cmocka_unit_test(survives_allocation_failures),
      cmocka_unit_test(notices_a_file_that_changes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
