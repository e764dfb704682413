/* SPDX-License-Identifier: Apache-2.0 */
/* Tests for the heap segment encoder (src/heap/rle.c) and the host decoder (host/heapseg.c).
 *
 * Exact byte vectors for the edges docs/protocol/ddm-wire.md §3 names (1, 255, 256, 257, 65536
 * units, sub-unit regions, chunk cap, P chains at chunk ends, new segments, bases above 4 GiB),
 * decoder rejections, and a seeded property test: random heaps encoded in both modes, decoded
 * back, and compared unit by unit and run by run. Every captured chunk lives in a malloc block of
 * exactly its length so ASan catches any decoder over-read; every chunk is also fed to the decoder
 * cut at each shorter length, all of which must be rejected. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ddmc/error.h"
#include "ddmc/vm.h"
#include "heap/rle.h"
#include "heapseg.h"

#define P DDMC__HPSG_PARTIAL
#define S_FREE DDMC__HPSG_STATE(DDMC_SOLID_FREE, DDMC_KIND_OBJECT)
#define S_OBJ DDMC__HPSG_STATE(DDMC_SOLID_HARD, DDMC_KIND_OBJECT)
#define S_ARR1 DDMC__HPSG_STATE(DDMC_SOLID_HARD, DDMC_KIND_ARRAY_1)
#define S_CLASS DDMC__HPSG_STATE(DDMC_SOLID_HARD, DDMC_KIND_CLASS)
#define S_NATIVE DDMC__HPSG_STATE(DDMC_SOLID_HARD, DDMC_KIND_NATIVE)
#define PAIRS_MAX DDMC__HPSG_PAIRS_MAX
#define FULL_LEN (DDMC__HPSG_HEADER_LEN + 2 * PAIRS_MAX) /* 16367 */

static ddmc__heap_rle g_enc; /* 16 KiB: not on the test's stack */

/* ---- capture ---------------------------------------------------------------------------------- */

typedef struct chunk {
  uint8_t *p;
  size_t len;
} chunk;

typedef struct capture {
  chunk *c;
  size_t n, cap;
  size_t fail_at; /* 1-based emit call that returns fail_rc; 0 = never */
  int fail_rc;
  size_t calls;
} capture;

static int cap_emit(void *arg, const uint8_t *payload, size_t len) {
  capture *k = arg;
  k->calls++;
  if (k->fail_at != 0 && k->calls >= k->fail_at)
    return k->fail_rc;
  assert_true(len <= DDMC__HPSG_PAYLOAD_MAX);
  if (k->n == k->cap) {
    k->cap = k->cap ? k->cap * 2 : 16;
    k->c = realloc(k->c, k->cap * sizeof *k->c);
    assert_non_null(k->c);
  }
  k->c[k->n].p = malloc(len);
  assert_non_null(k->c[k->n].p);
  memcpy(k->c[k->n].p, payload, len);
  k->c[k->n].len = len;
  k->n++;
  return 0;
}

static void cap_free(capture *k) {
  for (size_t i = 0; i < k->n; i++)
    free(k->c[i].p);
  free(k->c);
  memset(k, 0, sizeof *k);
}

typedef struct region {
  uintptr_t addr;
  size_t bytes;
  uint8_t state;
} region;

static void encode(capture *k, int merge, uintptr_t base, const region *r, size_t n) {
  ddmc__heap_rle_init(&g_enc, 1, base, merge, cap_emit, k);
  for (size_t i = 0; i < n; i++)
    assert_int_equal(ddmc__heap_rle_add(&g_enc, r[i].addr, r[i].bytes, r[i].state), 0);
  assert_int_equal(ddmc__heap_rle_finish(&g_enc), 0);
}

/* ---- decoding helpers -------------------------------------------------------------------------- */

static uint32_t get_u32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Every cut of a valid chunk is invalid: a header cut fails parse, a pair cut leaves the units
 * short (or an odd byte, or a dangling P). Each cut is copied to an exact-size block for ASan. */
static void check_every_prefix_rejected(const chunk *c) {
  for (size_t len = 0; len < c->len; len++) {
    uint8_t *cut = malloc(len ? len : 1);
    assert_non_null(cut);
    memcpy(cut, c->p, len);
    ddmc_host_heapseg seg;
    int rc = ddmc_host_heapseg_parse(cut, len, &seg);
    if (rc == 0)
      rc = ddmc_host_heapseg_decode(&seg, NULL, NULL);
    assert_int_equal(rc, DDMC_EPROTO);
    free(cut);
  }
}

/* Checks what the encoder promises about each chunk, whatever the input. */
static void check_chunk_shape(const chunk *c) {
  assert_true(c->len <= DDMC__HPSG_PAYLOAD_MAX);
  assert_true(c->len >= DDMC__HPSG_HEADER_LEN + 2); /* never an empty chunk */
  assert_int_equal((c->len - DDMC__HPSG_HEADER_LEN) % 2, 0);
  assert_int_equal(get_u32(c->p), 1);
  assert_int_equal(c->p[4], 8);
  assert_int_equal(get_u32(c->p + 9), 0);
  /* canonical chains: P pairs carry 255, the state never has U or a stray P, the last pair has no P */
  uint32_t sum = 0;
  for (size_t i = DDMC__HPSG_HEADER_LEN; i < c->len; i += 2) {
    uint8_t s = c->p[i];
    assert_int_equal(s & 0x40, 0);
    if (s & P) {
      assert_int_equal(c->p[i + 1], 255);
      assert_true(i + 2 < c->len);
      assert_int_equal(c->p[i + 2] & ~P, s & ~P);
    }
    sum += c->p[i + 1] + 1u;
  }
  assert_int_equal(sum, get_u32(c->p + 13));
}

typedef struct run {
  uint64_t unit; /* absolute unit index from the (relative) address 0 */
  uint64_t units;
  uint8_t state;
} run;

typedef struct runs {
  run *r;
  size_t n, cap;
  uint64_t base_unit; /* of the chunk being decoded */
  uint8_t *map;       /* optional per-unit state map, 0xff = not described */
  uint64_t map_units;
} runs;

static void runs_push(runs *rs, uint64_t unit, uint64_t units, uint8_t state) {
  if (rs->n == rs->cap) {
    rs->cap = rs->cap ? rs->cap * 2 : 64;
    rs->r = realloc(rs->r, rs->cap * sizeof *rs->r);
    assert_non_null(rs->r);
  }
  rs->r[rs->n++] = (run){unit, units, state};
}

static int on_run(void *arg, uint32_t unit_offset, uint32_t units, uint8_t state) {
  runs *rs = arg;
  assert_true(units >= 1);
  assert_int_equal(state & P, 0);
  uint64_t at = rs->base_unit + unit_offset;
  if (rs->map != NULL) {
    assert_true(at + units <= rs->map_units);
    for (uint64_t u = at; u < at + units; u++) {
      assert_int_equal(rs->map[u], 0xff); /* no unit described twice */
      rs->map[u] = state;
    }
  }
  runs_push(rs, at, units, state);
  return 0;
}

/* Decodes all chunks in order into rs (and its map); checks shapes and every cut on the way. */
static void decode_all(const capture *k, runs *rs, int check_prefixes) {
  for (size_t i = 0; i < k->n; i++) {
    check_chunk_shape(&k->c[i]);
    ddmc_host_heapseg seg;
    assert_int_equal(ddmc_host_heapseg_parse(k->c[i].p, k->c[i].len, &seg), 0);
    assert_int_equal(seg.addr % 8, 0);
    rs->base_unit = (seg.addr + (uint64_t)seg.offset) / 8;
    assert_int_equal(ddmc_host_heapseg_decode(&seg, on_run, rs), 0);
    if (check_prefixes)
      check_every_prefix_rejected(&k->c[i]);
  }
}

/* Joins runs that touch and share a state (what HPSG merging, and chunk cuts, hide). */
static void runs_coalesce(runs *rs) {
  size_t w = 0;
  for (size_t i = 0; i < rs->n; i++) {
    if (w > 0 && rs->r[w - 1].state == rs->r[i].state &&
        rs->r[w - 1].unit + rs->r[w - 1].units == rs->r[i].unit)
      rs->r[w - 1].units += rs->r[i].units;
    else
      rs->r[w++] = rs->r[i];
  }
  rs->n = w;
}

/* Asserts one chunk's exact bytes. */
static void expect_chunk(const chunk *c, uint32_t addr, uint32_t units, const uint8_t *pairs,
                         size_t npairs) {
  uint8_t hdr[17] = {0, 0, 0, 1, 8, (uint8_t)(addr >> 24), (uint8_t)(addr >> 16), (uint8_t)(addr >> 8),
                     (uint8_t)addr, 0, 0, 0, 0, (uint8_t)(units >> 24), (uint8_t)(units >> 16),
                     (uint8_t)(units >> 8), (uint8_t)units};
  assert_int_equal(c->len, 17 + 2 * npairs);
  assert_memory_equal(c->p, hdr, 17);
  if (npairs)
    assert_memory_equal(c->p + 17, pairs, 2 * npairs);
  check_chunk_shape(c);
  check_every_prefix_rejected(c);
}

/* ---- vectors ----------------------------------------------------------------------------------- */

static void test_state_macro(void **st) {
  (void)st;
  assert_int_equal(DDMC__HPSG_STATE(DDMC_SOLID_HARD, DDMC_KIND_ARRAY_1), 0x11);
  assert_int_equal(DDMC__HPSG_STATE(DDMC_SOLID_FREE, DDMC_KIND_OBJECT), 0x00);
  assert_int_equal(DDMC__HPSG_STATE(DDMC_SOLID_HARD, DDMC_KIND_NATIVE), 0x39);
  assert_int_equal(DDMC__HPSG_STATE(DDMC_SOLID_SWEEP, DDMC_KIND_UNKNOWN), 0x36);
  assert_int_equal(DDMC__HPSG_STATE(0xff, 0xff), 0x3f); /* never P or U */
  assert_int_equal(PAIRS_MAX, 8175);
}

/* One region of n units in each mode: ceil(n/256) pairs, P on all but the last. */
static void one_run(int merge, size_t n_units) {
  capture k = {0};
  region r = {0x1000, n_units * 8, S_OBJ};
  encode(&k, merge, 0x1000, &r, 1);
  assert_int_equal(k.n, 1);
  size_t npairs = (n_units + 255) / 256;
  uint8_t *pairs = malloc(2 * npairs);
  for (size_t i = 0; i + 1 < npairs; i++) {
    pairs[2 * i] = S_OBJ | P;
    pairs[2 * i + 1] = 255;
  }
  pairs[2 * npairs - 2] = S_OBJ;
  pairs[2 * npairs - 1] = (uint8_t)((n_units - 1) % 256);
  expect_chunk(&k.c[0], 0, (uint32_t)n_units, pairs, npairs);
  free(pairs);
  cap_free(&k);
}

static void test_run_lengths(void **st) {
  (void)st;
  static const size_t lens[] = {1, 2, 255, 256, 257, 511, 512, 513, 65536, 65537};
  for (int merge = 0; merge < 2; merge++)
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++)
      one_run(merge, lens[i]);
}

static void test_exact_small_vectors(void **st) {
  (void)st;
  capture k = {0};
  region r256 = {0, 256 * 8, S_ARR1};
  encode(&k, 0, 0, &r256, 1);
  expect_chunk(&k.c[0], 0, 256, (const uint8_t[]){S_ARR1, 255}, 1);
  cap_free(&k);

  region r257 = {0, 257 * 8, S_ARR1};
  encode(&k, 0, 0, &r257, 1);
  expect_chunk(&k.c[0], 0, 257, (const uint8_t[]){S_ARR1 | P, 255, S_ARR1, 0}, 2);
  cap_free(&k);

  /* a state passed with P set is the same state */
  region rp = {0, 8, S_OBJ | P};
  encode(&k, 0, 0, &rp, 1);
  expect_chunk(&k.c[0], 0, 1, (const uint8_t[]){S_OBJ, 0}, 1);
  cap_free(&k);
}

static void test_sub_unit_regions(void **st) {
  (void)st;
  for (size_t bytes = 1; bytes <= 7; bytes++) {
    for (int merge = 0; merge < 2; merge++) {
      capture k = {0};
      /* bytes round up to one unit, and the next region at +8 is contiguous with it */
      region r[] = {{0x100, bytes, S_OBJ}, {0x108, 8 + bytes, S_CLASS}, {0x118, 0, S_FREE},
                    {0x118, 8, S_FREE}};
      encode(&k, merge, 0x100, r, 4);
      assert_int_equal(k.n, 1);
      expect_chunk(&k.c[0], 0, 4, (const uint8_t[]){S_OBJ, 0, S_CLASS, 1, S_FREE, 0}, 3);
      cap_free(&k);
    }
  }
}

static void test_zero_byte_regions_ignored(void **st) {
  (void)st;
  for (int merge = 0; merge < 2; merge++) {
    capture k = {0};
    /* zero-byte regions anywhere, with any state: no run, no new segment */
    region r[] = {{0x500, 0, S_NATIVE}, {0, 0, S_OBJ},     {0, 16, S_OBJ},
                  {0x999, 0, S_FREE},   {0x10, 0, S_FREE}, {0x10, 8, S_OBJ}};
    encode(&k, merge, 0, r, 6);
    assert_int_equal(k.n, 1);
    if (merge)
      expect_chunk(&k.c[0], 0, 3, (const uint8_t[]){S_OBJ, 2}, 1);
    else
      expect_chunk(&k.c[0], 0, 3, (const uint8_t[]){S_OBJ, 1, S_OBJ, 0}, 2);
    cap_free(&k);
  }
  /* only zero-byte regions: nothing at all is sent */
  capture k = {0};
  region z = {0, 0, S_OBJ};
  encode(&k, 1, 0, &z, 1);
  assert_int_equal(k.n, 0);
  encode(&k, 0, 0, &z, 1);
  assert_int_equal(k.n, 0);
}

static void test_merge_vs_no_merge(void **st) {
  (void)st;
  capture k = {0};
  /* 100 + 100 + 100 units of one state, then a free unit, then 2 objects */
  region r[] = {{0, 800, S_OBJ}, {800, 800, S_OBJ}, {1600, 800, S_OBJ}, {2400, 8, S_FREE},
                {2408, 8, S_OBJ}, {2416, 8, S_OBJ}};
  encode(&k, 1, 0, r, 6);
  assert_int_equal(k.n, 1);
  expect_chunk(&k.c[0], 0, 303,
               (const uint8_t[]){S_OBJ | P, 255, S_OBJ, 43, S_FREE, 0, S_OBJ, 1}, 4);
  cap_free(&k);

  encode(&k, 0, 0, r, 6);
  assert_int_equal(k.n, 1);
  expect_chunk(&k.c[0], 0, 303,
               (const uint8_t[]){S_OBJ, 99, S_OBJ, 99, S_OBJ, 99, S_FREE, 0, S_OBJ, 0, S_OBJ, 0}, 6);
  cap_free(&k);
}

static void test_discontiguous_new_segment(void **st) {
  (void)st;
  for (int merge = 0; merge < 2; merge++) {
    capture k = {0};
    /* gap after 16 bytes; then a region that starts inside the previous one's rounded unit */
    region r[] = {{0x1000, 16, S_OBJ}, {0x1100, 8, S_OBJ}, {0x1108, 3, S_CLASS},
                  {0x110c, 8, S_CLASS}};
    encode(&k, merge, 0x1000, r, 4);
    assert_int_equal(k.n, 3);
    expect_chunk(&k.c[0], 0, 2, (const uint8_t[]){S_OBJ, 1}, 1);
    expect_chunk(&k.c[1], 0x100, 2, (const uint8_t[]){S_OBJ, 0, S_CLASS, 0}, 2);
    expect_chunk(&k.c[2], 0x10c, 1, (const uint8_t[]){S_CLASS, 0}, 1);
    cap_free(&k);
  }
}

static void test_base_above_4gib(void **st) {
  (void)st;
#if UINTPTR_MAX > 0xffffffffu
  const uintptr_t base = (uintptr_t)0x7f0000000000ull;
  for (int merge = 0; merge < 2; merge++) {
    capture k = {0};
    region r[] = {{base + 0x12345678, 24, S_OBJ},
                  {base + 0x12345690, 8, S_FREE},
                  {base + 0x100000040ull, 8, S_NATIVE}}; /* beyond 4 GiB of base: wraps to 0x40 */
    encode(&k, merge, base, r, 3);
    assert_int_equal(k.n, 2);
    expect_chunk(&k.c[0], 0x12345678, 4, (const uint8_t[]){S_OBJ, 2, S_FREE, 0}, 2);
    expect_chunk(&k.c[1], 0x40, 1, (const uint8_t[]){S_NATIVE, 0}, 1);
    cap_free(&k);
  }
#else
  skip();
#endif
}

/* n one-unit regions from 0 with states s(i). */
static void add_units(int merge, size_t n, int alternate) {
  for (size_t i = 0; i < n; i++) {
    uint8_t s = alternate ? ((i & 1) ? S_FREE : S_OBJ) : S_OBJ;
    assert_int_equal(ddmc__heap_rle_add(&g_enc, i * 8, 8, s), 0);
  }
  (void)merge;
}

static void test_chunk_cap_exact(void **st) {
  (void)st;
  for (int merge = 0; merge < 2; merge++) {
    /* exactly full: 8175 pairs, 16367 bytes, one chunk */
    capture k = {0};
    ddmc__heap_rle_init(&g_enc, 1, 0, merge, cap_emit, &k);
    add_units(merge, PAIRS_MAX, 1);
    assert_int_equal(k.n, 0); /* nothing sent before it is needed */
    assert_int_equal(ddmc__heap_rle_finish(&g_enc), 0);
    assert_int_equal(k.n, 1);
    assert_int_equal(k.c[0].len, FULL_LEN);
    check_chunk_shape(&k.c[0]);
    assert_int_equal(get_u32(k.c[0].p + 13), PAIRS_MAX);
    cap_free(&k);

    /* one more pair: a second chunk that starts where the first ended */
    ddmc__heap_rle_init(&g_enc, 1, 0, merge, cap_emit, &k);
    add_units(merge, PAIRS_MAX + 1, 1);
    assert_int_equal(ddmc__heap_rle_finish(&g_enc), 0);
    assert_int_equal(k.n, 2);
    assert_int_equal(k.c[0].len, FULL_LEN);
    uint8_t last = (PAIRS_MAX & 1) ? S_FREE : S_OBJ;
    expect_chunk(&k.c[1], PAIRS_MAX * 8, 1, (const uint8_t[]){last, 0}, 1);
    cap_free(&k);
  }
}

/* Room for one pair, then a 257-unit run (two pairs): the chain never straddles chunks. */
static void test_chain_at_chunk_end(void **st) {
  (void)st;
  const size_t n = PAIRS_MAX - 1; /* 8174 one-unit runs, alternating, S_OBJ first */
  const uint8_t s = S_CLASS;
  capture k = {0};

  /* HPSO: flush first, the object stays one chain */
  ddmc__heap_rle_init(&g_enc, 1, 0, 0, cap_emit, &k);
  add_units(0, n, 1);
  assert_int_equal(ddmc__heap_rle_add(&g_enc, n * 8, 257 * 8, s), 0);
  assert_int_equal(ddmc__heap_rle_finish(&g_enc), 0);
  assert_int_equal(k.n, 2);
  assert_int_equal(k.c[0].len, FULL_LEN - 2);
  check_chunk_shape(&k.c[0]);
  expect_chunk(&k.c[1], (uint32_t)(n * 8), 257, (const uint8_t[]){s | P, 255, s, 0}, 2);
  cap_free(&k);

  /* HPSG: the chunk is filled with a complete 256-unit run, the last unit goes on */
  ddmc__heap_rle_init(&g_enc, 1, 0, 1, cap_emit, &k);
  add_units(1, n, 1);
  assert_int_equal(ddmc__heap_rle_add(&g_enc, n * 8, 257 * 8, s), 0);
  assert_int_equal(ddmc__heap_rle_finish(&g_enc), 0);
  assert_int_equal(k.n, 2);
  assert_int_equal(k.c[0].len, FULL_LEN);
  check_chunk_shape(&k.c[0]);
  assert_int_equal(k.c[0].p[FULL_LEN - 2], s);
  assert_int_equal(k.c[0].p[FULL_LEN - 1], 255);
  assert_int_equal(get_u32(k.c[0].p + 13), n + 256);
  expect_chunk(&k.c[1], (uint32_t)((n + 256) * 8), 1, (const uint8_t[]){s, 0}, 1);
  cap_free(&k);
}

/* Runs longer than one chunk can hold (PAIRS_MAX * 256 units, ~16 MiB): cut into complete runs. */
static void test_run_longer_than_chunk(void **st) {
  (void)st;
  const size_t maxu = (size_t)PAIRS_MAX * 256;
  for (int merge = 0; merge < 2; merge++) {
    capture k = {0};
    region r = {0, maxu * 8, S_ARR1};
    encode(&k, merge, 0, &r, 1);
    assert_int_equal(k.n, 1);
    assert_int_equal(k.c[0].len, FULL_LEN);
    check_chunk_shape(&k.c[0]);
    assert_int_equal(get_u32(k.c[0].p + 13), maxu);
    cap_free(&k);

    region r1 = {0, maxu * 8 + 1, S_ARR1}; /* + 1 byte = + 1 unit */
    encode(&k, merge, 0, &r1, 1);
    assert_int_equal(k.n, 2);
    assert_int_equal(k.c[0].len, FULL_LEN);
    check_chunk_shape(&k.c[0]);
    expect_chunk(&k.c[1], (uint32_t)(maxu * 8), 1, (const uint8_t[]){S_ARR1, 0}, 1);
    cap_free(&k);

    /* a small object first: HPSO moves the big one to a fresh chunk, HPSG fills the first */
    region r2[] = {{0, 8, S_OBJ}, {8, maxu * 8, S_ARR1}};
    encode(&k, merge, 0, r2, 2);
    assert_int_equal(k.n, 2);
    check_chunk_shape(&k.c[0]);
    check_chunk_shape(&k.c[1]);
    if (merge) {
      assert_int_equal(k.c[0].len, FULL_LEN);
      expect_chunk(&k.c[1], (uint32_t)((1 + maxu - 256) * 8), 256, (const uint8_t[]){S_ARR1, 255}, 1);
    } else {
      expect_chunk(&k.c[0], 0, 1, (const uint8_t[]){S_OBJ, 0}, 1);
      assert_int_equal(k.c[1].len, FULL_LEN);
      assert_int_equal(get_u32(k.c[1].p + 5), 8);
    }
    cap_free(&k);

    /* a small object, then one too long for any chunk: both modes fill the first chunk */
    region r3[] = {{0, 8, S_OBJ}, {8, (maxu + 1) * 8, S_ARR1}};
    encode(&k, merge, 0, r3, 2);
    assert_int_equal(k.n, 2);
    assert_int_equal(k.c[0].len, FULL_LEN);
    check_chunk_shape(&k.c[0]);
    assert_int_equal(get_u32(k.c[0].p + 13), 1 + (PAIRS_MAX - 1) * 256);
    expect_chunk(&k.c[1], (uint32_t)((1 + (PAIRS_MAX - 1) * 256) * 8), 257,
                 (const uint8_t[]){S_ARR1 | P, 255, S_ARR1, 0}, 2);
    cap_free(&k);

    /* 64 MiB in one region: 4 full chunks and a tail, contiguous addresses */
    region big = {0x40, (size_t)64 << 20, S_FREE};
    encode(&k, merge, 0, &big, 1);
    uint64_t at = 0;
    for (size_t i = 0; i < k.n; i++) {
      check_chunk_shape(&k.c[i]);
      assert_int_equal(get_u32(k.c[i].p + 5), 0x40 + at * 8);
      at += get_u32(k.c[i].p + 13);
    }
    assert_int_equal(at, ((size_t)64 << 20) / 8);
    assert_int_equal(k.n, 5);
    cap_free(&k);
  }
}

static void test_emit_abort_is_sticky(void **st) {
  (void)st;
  for (int merge = 0; merge < 2; merge++) {
    capture k = {0};
    k.fail_at = 2;
    k.fail_rc = 42;
    ddmc__heap_rle_init(&g_enc, 1, 0, merge, cap_emit, &k);
    int rc = 0;
    size_t i;
    for (i = 0; i < 3 * PAIRS_MAX && rc == 0; i++)
      rc = ddmc__heap_rle_add(&g_enc, i * 8, 8, (i & 1) ? S_FREE : S_OBJ);
    assert_int_equal(rc, 42);
    assert_int_equal(i, 2 * PAIRS_MAX + 1 + (merge ? 1 : 0)); /* HPSG writes a run one add later */
    assert_int_equal(k.n, 1);
    size_t calls = k.calls;
    assert_int_equal(ddmc__heap_rle_add(&g_enc, i * 8, 8, S_OBJ), 42);
    assert_int_equal(ddmc__heap_rle_add(&g_enc, 0x999990, 8, S_OBJ), 42);
    assert_int_equal(ddmc__heap_rle_finish(&g_enc), 42);
    assert_int_equal(k.calls, calls); /* never called again */
    cap_free(&k);

    /* failing on the flush a new segment forces */
    k.fail_at = 1;
    k.fail_rc = 9;
    ddmc__heap_rle_init(&g_enc, 1, 0, merge, cap_emit, &k);
    assert_int_equal(ddmc__heap_rle_add(&g_enc, 0, 8, S_OBJ), 0);
    assert_int_equal(ddmc__heap_rle_add(&g_enc, 0x100, 8, S_OBJ), 9);
    assert_int_equal(ddmc__heap_rle_finish(&g_enc), 9);
    assert_int_equal(k.calls, 1);
    cap_free(&k);

    /* failing when finish must flush a full chunk before the last run fits */
    k.fail_at = 1;
    k.fail_rc = 11;
    ddmc__heap_rle_init(&g_enc, 1, 0, merge, cap_emit, &k);
    add_units(merge, PAIRS_MAX + (merge ? 1 : 0), 1);
    if (!merge) /* HPSO: a long object that needs a fresh chunk */
      assert_int_equal(ddmc__heap_rle_add(&g_enc, PAIRS_MAX * 8, 300 * 8, S_CLASS), 11);
    assert_int_equal(ddmc__heap_rle_finish(&g_enc), 11);
    assert_int_equal(k.calls, 1);
    cap_free(&k);

    /* failing on the final flush */
    k.fail_at = 1;
    k.fail_rc = -5;
    ddmc__heap_rle_init(&g_enc, 1, 0, merge, cap_emit, &k);
    assert_int_equal(ddmc__heap_rle_add(&g_enc, 0, 8, S_OBJ), 0);
    assert_int_equal(ddmc__heap_rle_finish(&g_enc), -5);
    assert_int_equal(ddmc__heap_rle_finish(&g_enc), -5);
    cap_free(&k);
  }
}

static void test_reuse_after_finish(void **st) {
  (void)st;
  for (int merge = 0; merge < 2; merge++) {
    capture k = {0};
    ddmc__heap_rle_init(&g_enc, 1, 0x10000, merge, cap_emit, &k);
    assert_int_equal(ddmc__heap_rle_add(&g_enc, 0x10000, 16, S_OBJ), 0);
    assert_int_equal(ddmc__heap_rle_finish(&g_enc), 0);
    assert_int_equal(ddmc__heap_rle_finish(&g_enc), 0); /* nothing pending: no empty chunk */
    assert_int_equal(k.n, 1);
    assert_int_equal(ddmc__heap_rle_add(&g_enc, 0x10010, 8, S_OBJ), 0);
    assert_int_equal(ddmc__heap_rle_finish(&g_enc), 0);
    assert_int_equal(k.n, 2);
    expect_chunk(&k.c[0], 0, 2, (const uint8_t[]){S_OBJ, 1}, 1);
    expect_chunk(&k.c[1], 0x10, 1, (const uint8_t[]){S_OBJ, 0}, 1);
    cap_free(&k);
  }
}

/* ---- decoder rejections ------------------------------------------------------------------------ */

static int decode_bytes(const uint8_t *bytes, size_t len, runs *rs) {
  uint8_t *copy = malloc(len ? len : 1);
  assert_non_null(copy);
  memcpy(copy, bytes, len);
  ddmc_host_heapseg seg;
  int rc = ddmc_host_heapseg_parse(copy, len, &seg);
  if (rc == 0)
    rc = ddmc_host_heapseg_decode(&seg, rs ? on_run : NULL, rs);
  free(copy);
  return rc;
}

#define HDR(unit, units) 0, 0, 0, 1, (unit), 0, 0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, (units)

static void test_decoder_accepts(void **st) {
  (void)st;
  runs rs = {0};
  const uint8_t ok[] = {HDR(8, 5), S_OBJ | P, 0, S_OBJ, 1, S_FREE, 1};
  assert_int_equal(decode_bytes(ok, sizeof ok, &rs), 0);
  assert_int_equal(rs.n, 2);
  assert_int_equal(rs.r[0].unit, 0);
  assert_int_equal(rs.r[0].units, 3);
  assert_int_equal(rs.r[0].state, S_OBJ);
  assert_int_equal(rs.r[1].unit, 3);
  assert_int_equal(rs.r[1].units, 2);
  assert_int_equal(rs.r[1].state, S_FREE);

  ddmc_host_heapseg seg;
  assert_int_equal(ddmc_host_heapseg_parse(ok, sizeof ok, &seg), 0);
  assert_int_equal(seg.heap_id, 1);
  assert_int_equal(seg.unit, 8);
  assert_int_equal(seg.addr, 0x1000);
  assert_int_equal(seg.offset, 0);
  assert_int_equal(seg.units, 5);
  assert_int_equal(seg.pairs_len, 6);

  /* any non-zero unit size; an empty piece with no pairs */
  const uint8_t unit4[] = {HDR(4, 1), S_OBJ, 0};
  assert_int_equal(decode_bytes(unit4, sizeof unit4, NULL), 0);
  const uint8_t empty[] = {HDR(8, 0)};
  assert_int_equal(decode_bytes(empty, sizeof empty, NULL), 0);
  free(rs.r);
}

static int abort_run(void *arg, uint32_t off, uint32_t units, uint8_t state) {
  (void)off, (void)units, (void)state;
  int *calls = arg;
  return ++*calls == 2 ? 77 : 0;
}

static int never_run(void *arg, uint32_t off, uint32_t units, uint8_t state) {
  (void)arg, (void)off, (void)units, (void)state;
  fail_msg("callback on a rejected chunk");
  return 0;
}

static void test_decoder_rejects(void **st) {
  (void)st;
  /* truncated header, at every length */
  const uint8_t h[] = {HDR(8, 0)};
  for (size_t len = 0; len < sizeof h; len++)
    assert_int_equal(decode_bytes(h, len, NULL), DDMC_EPROTO);
  ddmc_host_heapseg seg;
  assert_int_equal(ddmc_host_heapseg_parse(NULL, 0, &seg), DDMC_EPROTO);
  assert_int_equal(ddmc_host_heapseg_parse(h, sizeof h, NULL), DDMC_EINVAL);
  assert_int_equal(ddmc_host_heapseg_decode(NULL, NULL, NULL), DDMC_EINVAL);
  assert_int_equal(ddmc_host_heapseg_parse(NULL, 17, &seg), DDMC_EINVAL);
  ddmc_host_heapseg nopairs = {1, 8, 0, 0, 1, NULL, 2};
  assert_int_equal(ddmc_host_heapseg_decode(&nopairs, NULL, NULL), DDMC_EINVAL);
  nopairs.pairs_len = 0;
  assert_int_equal(ddmc_host_heapseg_decode(&nopairs, never_run, NULL), DDMC_EPROTO);
  nopairs.units = 0;
  assert_int_equal(ddmc_host_heapseg_decode(&nopairs, never_run, NULL), 0);

  const uint8_t unit0[] = {HDR(0, 1), S_OBJ, 0};
  const uint8_t mismatch[] = {HDR(8, 2), S_OBJ | P, 0, S_FREE, 0};
  const uint8_t mismatch_u[] = {HDR(8, 2), S_OBJ | P, 0, S_OBJ | 0x40, 0};
  const uint8_t p_last[] = {HDR(8, 2), S_OBJ, 0, S_OBJ | P, 0};
  const uint8_t p_only[] = {HDR(8, 1), S_OBJ | P, 0};
  const uint8_t too_few[] = {HDR(8, 3), S_OBJ, 1};
  const uint8_t too_many[] = {HDR(8, 1), S_OBJ, 1};
  const uint8_t odd[] = {HDR(8, 1), S_OBJ, 0, S_OBJ};
  const uint8_t odd1[] = {HDR(8, 0), S_OBJ};
  const uint8_t no_pairs[] = {HDR(8, 1)};
  const struct {
    const uint8_t *p;
    size_t len;
  } bad[] = {{unit0, sizeof unit0},     {mismatch, sizeof mismatch}, {mismatch_u, sizeof mismatch_u},
             {p_last, sizeof p_last},   {p_only, sizeof p_only},     {too_few, sizeof too_few},
             {too_many, sizeof too_many}, {odd, sizeof odd},         {odd1, sizeof odd1},
             {no_pairs, sizeof no_pairs}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    uint8_t *copy = malloc(bad[i].len);
    memcpy(copy, bad[i].p, bad[i].len);
    int rc = ddmc_host_heapseg_parse(copy, bad[i].len, &seg);
    if (rc == 0)
      rc = ddmc_host_heapseg_decode(&seg, never_run, NULL);
    assert_int_equal(rc, DDMC_EPROTO);
    free(copy);
  }

  /* hostile: a whole chunk of 0xff (P chains of 256-unit pairs, dangling) and a huge unit count */
  size_t n = 17 + 2 * 60000;
  uint8_t *ff = malloc(n);
  memset(ff, 0xff, n);
  ff[4] = 8;
  assert_int_equal(decode_bytes(ff, n, NULL), DDMC_EPROTO);
  ff[n - 2] = 0x7f; /* now the chain ends: 60000 * 256 units != 0xffffffff */
  assert_int_equal(decode_bytes(ff, n, NULL), DDMC_EPROTO);
  uint32_t want = 60000u * 256u;
  ff[13] = (uint8_t)(want >> 24), ff[14] = (uint8_t)(want >> 16), ff[15] = (uint8_t)(want >> 8),
  ff[16] = (uint8_t)want;
  assert_int_equal(decode_bytes(ff, n, NULL), 0);
  free(ff);

  /* a callback's non-zero return is passed back */
  const uint8_t two[] = {HDR(8, 2), S_OBJ, 0, S_FREE, 0};
  int calls = 0;
  assert_int_equal(ddmc_host_heapseg_parse(two, sizeof two, &seg), 0);
  assert_int_equal(ddmc_host_heapseg_decode(&seg, abort_run, &calls), 77);
}

/* Random bytes never crash the decoder and never report runs past seg.units. */
static uint64_t g_rng;
static uint64_t rnd(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return g_rng;
}

static int bound_run(void *arg, uint32_t off, uint32_t units, uint8_t state) {
  const ddmc_host_heapseg *seg = arg;
  (void)state;
  assert_true(units >= 1 && off <= seg->units && units <= seg->units - off);
  return 0;
}

static void test_decoder_random_bytes(void **st) {
  (void)st;
  g_rng = 0x9e3779b97f4a7c15ull;
  for (int iter = 0; iter < 20000; iter++) {
    size_t len = (size_t)(rnd() % 64);
    uint8_t *b = malloc(len ? len : 1);
    for (size_t i = 0; i < len; i++)
      b[i] = (uint8_t)rnd();
    if (len >= 17 && (rnd() & 1)) { /* make some plausible */
      b[13] = b[14] = 0;
      b[15] = (uint8_t)(rnd() & 1);
    }
    ddmc_host_heapseg seg;
    if (ddmc_host_heapseg_parse(b, len, &seg) == 0)
      (void)ddmc_host_heapseg_decode(&seg, bound_run, &seg);
    free(b);
  }
}

/* ---- property test ----------------------------------------------------------------------------- */

typedef struct heap {
  region *r;
  size_t n;
  uint64_t units; /* relative address range covered, in units */
} heap;

static const uint8_t k_states[] = {S_FREE, S_OBJ, S_ARR1, S_CLASS, S_NATIVE};

/* Regions from relative 0: sizes log-uniform 8 B..1 MiB (some not unit multiples), states that
 * often repeat (so HPSG merges), a few gaps (new segments) and zero-byte regions. */
static heap make_heap(uintptr_t base, size_t n, uint64_t seed) {
  heap h = {malloc(n * sizeof(region)), 0, 0};
  g_rng = seed;
  uint64_t at = 0;
  uint8_t state = S_OBJ;
  for (size_t i = 0; i < n; i++) {
    unsigned k = 3 + (unsigned)(rnd() % 18);  /* 2^3 .. 2^20 */
    size_t bytes = ((size_t)1 << k) + (size_t)(rnd() % ((size_t)1 << k));
    if (bytes > ((size_t)1 << 20))
      bytes = (size_t)1 << 20;
    if (rnd() % 4 == 0)
      bytes -= rnd() % 8; /* not a unit multiple */
    if (rnd() % 3 == 0)
      state = k_states[rnd() % 5];
    uint64_t r = rnd() % 100;
    if (r == 0)
      at += 8 * (1 + rnd() % 5000); /* gap */
    else if (r == 1)
      bytes = 0;
    h.r[h.n++] = (region){base + (uintptr_t)at, bytes, state};
    at += 8 * ((bytes + 7) / 8);
  }
  h.units = at / 8;
  return h;
}

static uint8_t *expected_map(const heap *h, uintptr_t base) {
  uint8_t *m = malloc(h->units ? h->units : 1);
  memset(m, 0xff, h->units);
  for (size_t i = 0; i < h->n; i++) {
    uint64_t u = (h->r[i].addr - base) / 8, n = (h->r[i].bytes + 7) / 8;
    memset(m + u, h->r[i].state, n);
  }
  return m;
}

static void expected_runs(const heap *h, uintptr_t base, int merge, runs *out) {
  for (size_t i = 0; i < h->n; i++)
    if (h->r[i].bytes)
      runs_push(out, (h->r[i].addr - base) / 8, (h->r[i].bytes + 7) / 8, h->r[i].state);
  if (merge)
    runs_coalesce(out);
}

static void property_once(uintptr_t base, int merge, size_t n, uint64_t seed, capture *k_out) {
  heap h = make_heap(base, n, seed);
  capture k = {0};
  encode(&k, merge, base, h.r, h.n);
  assert_true(n < 1000 || k.n > 10); /* big enough to cross many chunk and segment boundaries */

  runs got = {0};
  got.map_units = h.units;
  got.map = malloc(h.units);
  memset(got.map, 0xff, h.units);
  decode_all(&k, &got, 0);

  uint8_t *want = expected_map(&h, base);
  assert_memory_equal(got.map, want, h.units);

  /* runs: HPSO = one per non-empty region; HPSG = maximal merges (chunk cuts undone) */
  runs exp = {0};
  expected_runs(&h, base, merge, &exp);
  if (merge) {
    /* inside a chunk, HPSG never leaves two touching runs of one state */
    size_t at = 0;
    for (size_t i = 0; i < k.n; i++) {
      ddmc_host_heapseg seg;
      assert_int_equal(ddmc_host_heapseg_parse(k.c[i].p, k.c[i].len, &seg), 0);
      for (size_t j = DDMC__HPSG_HEADER_LEN; j + 2 < k.c[i].len; j += 2)
        if (!(k.c[i].p[j] & P))
          assert_int_not_equal(k.c[i].p[j], k.c[i].p[j + 2]);
      /* and fills every chunk that the next one continues */
      if (i + 1 < k.n && get_u32(k.c[i + 1].p + 5) == seg.addr + seg.units * 8u)
        assert_int_equal(k.c[i].len, FULL_LEN);
      at += seg.units;
    }
    (void)at;
    runs_coalesce(&got);
  }
  assert_int_equal(got.n, exp.n);
  for (size_t i = 0; i < exp.n; i++) {
    assert_int_equal(got.r[i].unit, exp.r[i].unit);
    assert_int_equal(got.r[i].units, exp.r[i].units);
    assert_int_equal(got.r[i].state, exp.r[i].state);
  }

  free(exp.r);
  free(got.r);
  free(got.map);
  free(want);
  free(h.r);
  if (k_out)
    *k_out = k;
  else
    cap_free(&k);
}

static void test_property_roundtrip(void **st) {
  (void)st;
  static const uintptr_t bases[] = {0, 0x10000000u
#if UINTPTR_MAX > 0xffffffffu
                                    ,
                                    (uintptr_t)0x7f0000000000ull
#endif
  };
  for (size_t b = 0; b < sizeof bases / sizeof bases[0]; b++)
    for (int merge = 0; merge < 2; merge++)
      property_once(bases[b], merge, 4000, 0x5eed0000u + b, NULL);
}

/* HPSG output does not depend on how the VM cuts its regions: split every region at random unit
 * boundaries and the bytes are identical. */
static void test_hpsg_split_invariance(void **st) {
  (void)st;
  const uintptr_t base = 0x20000;
  heap h = make_heap(base, 3000, 0xabcdef);
  capture whole = {0}, split = {0};
  encode(&whole, 1, base, h.r, h.n);

  region *s = malloc(h.n * 8 * sizeof(region));
  size_t ns = 0;
  g_rng = 42;
  for (size_t i = 0; i < h.n; i++) {
    region r = h.r[i];
    while (r.bytes > 8 && rnd() % 2 && ns < h.n * 8 - 1) {
      size_t cut = 8 * (1 + rnd() % ((r.bytes - 1) / 8));
      s[ns++] = (region){r.addr, cut, r.state};
      r.addr += cut;
      r.bytes -= cut;
    }
    s[ns++] = r;
  }
  encode(&split, 1, base, s, ns);
  assert_true(ns > h.n);
  assert_int_equal(whole.n, split.n);
  for (size_t i = 0; i < whole.n; i++) {
    assert_int_equal(whole.c[i].len, split.c[i].len);
    assert_memory_equal(whole.c[i].p, split.c[i].p, whole.c[i].len);
  }
  free(s);
  free(h.r);
  cap_free(&whole);
  cap_free(&split);
}

/* Every chunk of a realistic dump, cut at every length, is rejected by the decoder. */
static void test_prefixes_of_real_dump(void **st) {
  (void)st;
  for (int merge = 0; merge < 2; merge++) {
    capture k;
    property_once(0x1000, merge, 300, 0x77u + (unsigned)merge, &k);
    for (size_t i = 0; i < k.n && i < 4; i++)
      check_every_prefix_rejected(&k.c[i]);
    cap_free(&k);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_state_macro),
      cmocka_unit_test(test_run_lengths),
      cmocka_unit_test(test_exact_small_vectors),
      cmocka_unit_test(test_sub_unit_regions),
      cmocka_unit_test(test_zero_byte_regions_ignored),
      cmocka_unit_test(test_merge_vs_no_merge),
      cmocka_unit_test(test_discontiguous_new_segment),
      cmocka_unit_test(test_base_above_4gib),
      cmocka_unit_test(test_chunk_cap_exact),
      cmocka_unit_test(test_chain_at_chunk_end),
      cmocka_unit_test(test_run_longer_than_chunk),
      cmocka_unit_test(test_emit_abort_is_sticky),
      cmocka_unit_test(test_reuse_after_finish),
      cmocka_unit_test(test_decoder_accepts),
      cmocka_unit_test(test_decoder_rejects),
      cmocka_unit_test(test_decoder_random_bytes),
      cmocka_unit_test(test_property_roundtrip),
      cmocka_unit_test(test_hpsg_split_invariance),
      cmocka_unit_test(test_prefixes_of_real_dump),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
