/* SPDX-License-Identifier: Apache-2.0 */
/* Unit test of host/monitor.c, the bookkeeping under `ddmc threads` and `ddmc heap --bitmap`:
 * thread table (THCR/THDE/THNM/THST) and heap-dump collector (HPST, HPSG..., HPEN), fed with
 * hand-built packets, malformed ones included. Plain asserts; exits non-zero on the first miss. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heapseg.h"
#include "monitor.h"

static int failures;
#define CHECK(c)                                                        \
  do {                                                                  \
    if (!(c)) {                                                         \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c); \
      failures++;                                                       \
    }                                                                   \
  } while (0)

#define FOURCC(s) DDMC_HOST_FOURCC((s)[0], (s)[1], (s)[2], (s)[3])

typedef struct buf {
  uint8_t b[4096];
  size_t n;
} buf;

static void u1(buf *x, uint8_t v) { x->b[x->n++] = v; }
static void u4(buf *x, uint32_t v) {
  for (int i = 3; i >= 0; i--) u1(x, (uint8_t)(v >> (8 * i)));
}
static void str(buf *x, const char *s) {
  u4(x, (uint32_t)strlen(s));
  for (const char *p = s; *p; p++) {
    u1(x, 0);
    u1(x, (uint8_t)*p);
  }
}

static ddmc_host_packet pkt(const char *type, const buf *x) {
  ddmc_host_packet p;
  memset(&p, 0, sizeof p);
  p.is_ddm = 1;
  p.chunk_type = FOURCC(type);
  p.chunk = x->b;
  p.chunk_len = x->n;
  return p;
}

static void test_threads(void) {
  ddmc_host_threads t;
  ddmc_host_threads_init(&t);
  ddmc_host_thread_event ev;
  uint32_t id;
  buf a = {{0}, 0}, b = {{0}, 0}, c = {{0}, 0}, d = {{0}, 0}, e = {{0}, 0};
  u4(&a, 7);
  str(&a, "seven");
  u4(&b, 3);
  str(&b, "three");
  ddmc_host_packet p = pkt("THCR", &a);
  CHECK(ddmc_host_threads_feed(&t, &p, &ev, &id) == 0 && ev == DDMC_HOST_TEV_CREATED && id == 7);
  p = pkt("THCR", &b);
  CHECK(ddmc_host_threads_feed(&t, &p, &ev, &id) == 0 && ev == DDMC_HOST_TEV_CREATED && id == 3);
  CHECK(t.count == 2 && t.v[0].id == 3 && t.v[1].id == 7); /* sorted by id */
  CHECK(strcmp(ddmc_host_threads_find(&t, 7)->name, "seven") == 0 && t.v[0].named && !t.v[0].has_stats);
  /* rename */
  u4(&c, 7);
  str(&c, "renamed");
  p = pkt("THNM", &c);
  CHECK(ddmc_host_threads_feed(&t, &p, &ev, &id) == 0 && ev == DDMC_HOST_TEV_RENAMED && id == 7);
  CHECK(strcmp(ddmc_host_threads_find(&t, 7)->name, "renamed") == 0 && t.renamed == 1);
  /* THST: ids 3 and 9 (9 unknown so far) */
  u1(&d, 4);
  u1(&d, 18);
  u1(&d, 0);
  u1(&d, 2);
  uint32_t ids[2] = {3, 9};
  for (int i = 0; i < 2; i++) {
    u4(&d, ids[i]);
    u1(&d, (uint8_t)(i ? 4 : 2));
    u4(&d, 100 + ids[i]);
    u4(&d, 11);
    u4(&d, 22);
    u1(&d, (uint8_t)i);
  }
  p = pkt("THST", &d);
  CHECK(ddmc_host_threads_feed(&t, &p, &ev, &id) == 0 && ev == DDMC_HOST_TEV_STATS);
  CHECK(t.count == 3);
  const ddmc_host_thread *x = ddmc_host_threads_find(&t, 9);
  CHECK(x && !x->named && x->name[0] == '\0' && x->has_stats && x->status == 4 && x->tid == 109 && x->daemon == 1);
  x = ddmc_host_threads_find(&t, 3);
  CHECK(x && x->in_last_thst && x->status == 2 && x->utime == 11 && x->stime == 22 && x->daemon == 0);
  CHECK(!ddmc_host_threads_find(&t, 7)->in_last_thst);
  CHECK(strcmp(ddmc_host_thread_status_name(x->status), "sleeping") == 0);
  CHECK(strcmp(ddmc_host_thread_status_name(200), "unknown") == 0);
  /* end */
  u4(&e, 3);
  p = pkt("THDE", &e);
  CHECK(ddmc_host_threads_feed(&t, &p, &ev, &id) == 0 && ev == DDMC_HOST_TEV_ENDED && id == 3);
  CHECK(t.count == 2 && ddmc_host_threads_find(&t, 3) == NULL);
  /* malformed: a THCR whose name runs past the chunk leaves the table alone */
  buf bad = {{0}, 0};
  u4(&bad, 5);
  u4(&bad, 100);
  p = pkt("THCR", &bad);
  CHECK(ddmc_host_threads_feed(&t, &p, &ev, &id) == DDMC_EPROTO && t.count == 2);
  /* other chunks are not touched */
  p = pkt("HPIF", &e);
  CHECK(ddmc_host_threads_feed(&t, &p, &ev, &id) == 0 && ev == DDMC_HOST_TEV_NONE);
  ddmc_host_threads_free(&t);
  CHECK(t.count == 0 && t.v == NULL);
  ddmc_host_threads_free(&t); /* twice is fine */
}

/* A segment: heap id, unit 8, addr, offset 0, then (state, len-1) pairs for the runs given. */
static buf seg(uint32_t heap, uint32_t addr, const uint8_t *states, const uint32_t *units, int n) {
  buf x = {{0}, 0};
  uint32_t total = 0;
  for (int i = 0; i < n; i++) total += units[i];
  u4(&x, heap);
  u1(&x, 8);
  u4(&x, addr);
  u4(&x, 0);
  u4(&x, total);
  for (int i = 0; i < n; i++) {
    uint32_t left = units[i];
    while (left > 256) {
      u1(&x, (uint8_t)(states[i] | DDMC_HOST_HEAPSEG_PARTIAL));
      u1(&x, 255);
      left -= 256;
    }
    u1(&x, states[i]);
    u1(&x, (uint8_t)(left - 1));
  }
  return x;
}

#define ST(kind, solid) ((uint8_t)(((kind) << 3) | (solid)))

static void test_heapdump(void) {
  ddmc_host_heapdump d;
  ddmc_host_heapdump_init(&d, 0);
  buf id = {{0}, 0};
  u4(&id, 1);
  /* A segment before HPST is ignored. */
  uint8_t s1[] = {ST(0, 1), ST(0, 0), ST(2, 1)};
  uint32_t n1[] = {3, 600, 2};
  buf a = seg(1, 0, s1, n1, 3);
  ddmc_host_packet p = pkt("HPSG", &a);
  CHECK(ddmc_host_heapdump_feed(&d, &p) == 0 && d.state == DDMC_HOST_DUMP_IDLE);
  p = pkt("HPST", &id);
  CHECK(ddmc_host_heapdump_feed(&d, &p) == 0 && d.state == DDMC_HOST_DUMP_OPEN && d.heap_id == 1);
  /* Second piece first (addresses out of order), then the first. */
  uint8_t s2[] = {ST(5, 1), ST(1, 1)};
  uint32_t n2[] = {4, 1};
  buf b = seg(1, 605 * 8, s2, n2, 2);
  p = pkt("HPSG", &b);
  CHECK(ddmc_host_heapdump_feed(&d, &p) == 0);
  p = pkt("HPSG", &a);
  CHECK(ddmc_host_heapdump_feed(&d, &p) == 0 && d.chunks == 2);
  p = pkt("HPEN", &id);
  CHECK(ddmc_host_heapdump_feed(&d, &p) == 1 && d.state == DDMC_HOST_DUMP_DONE && d.dumps == 1);
  CHECK(d.unit_size == 8 && d.first_unit == 0 && d.end_unit == 610 && d.covered_units == 610);
  CHECK(d.free_units == 600 && d.kind_units[0] == 3 && d.kind_units[2] == 2 && d.kind_units[5] == 4 &&
        d.kind_units[1] == 1);
  CHECK(d.kind_runs[0] == 1 && d.kind_runs[5] == 1);
  for (size_t i = 1; i < d.n_runs; i++) CHECK(d.runs[i].unit >= d.runs[i - 1].unit + d.runs[i - 1].units);
  CHECK(strcmp(ddmc_host_heap_kind_name(5), "array8") == 0);

  /* A new HPST starts over; overlapping pieces are refused. */
  p = pkt("HPST", &id);
  CHECK(ddmc_host_heapdump_feed(&d, &p) == 0 && d.n_runs == 0 && d.state == DDMC_HOST_DUMP_OPEN);
  p = pkt("HPSG", &a);
  CHECK(ddmc_host_heapdump_feed(&d, &p) == 0);
  CHECK(ddmc_host_heapdump_feed(&d, &p) == 0); /* the same piece twice */
  p = pkt("HPEN", &id);
  CHECK(ddmc_host_heapdump_feed(&d, &p) == DDMC_EPROTO && d.state == DDMC_HOST_DUMP_IDLE);

  /* A segment of another heap inside the dump, or a changed unit size, is refused. */
  p = pkt("HPST", &id);
  ddmc_host_heapdump_feed(&d, &p);
  buf other = seg(2, 0, s1, n1, 3);
  p = pkt("HPSG", &other);
  CHECK(ddmc_host_heapdump_feed(&d, &p) == DDMC_EPROTO && d.state == DDMC_HOST_DUMP_IDLE);
  p = pkt("HPST", &id);
  ddmc_host_heapdump_feed(&d, &p);
  p = pkt("HPSG", &a);
  ddmc_host_heapdump_feed(&d, &p);
  buf unit16 = seg(1, 8000, s1, n1, 3);
  unit16.b[4] = 16;
  p = pkt("HPSG", &unit16);
  CHECK(ddmc_host_heapdump_feed(&d, &p) == DDMC_EPROTO);
  /* A segment whose runs do not add up is refused by the decoder. */
  p = pkt("HPST", &id);
  ddmc_host_heapdump_feed(&d, &p);
  buf shortseg = seg(1, 0, s1, n1, 3);
  shortseg.b[16] += 1; /* claims one unit more than its pairs hold */
  p = pkt("HPSG", &shortseg);
  CHECK(ddmc_host_heapdump_feed(&d, &p) == DDMC_EPROTO);
  /* Truncated header. */
  p = pkt("HPST", &id);
  ddmc_host_heapdump_feed(&d, &p);
  buf tiny = {{0}, 0};
  u4(&tiny, 1);
  p = pkt("HPSG", &tiny);
  CHECK(ddmc_host_heapdump_feed(&d, &p) == DDMC_EPROTO);
  ddmc_host_heapdump_free(&d);

  /* The native collector ignores managed-heap chunks and takes NHST/NHSG/NHEN. */
  ddmc_host_heapdump_init(&d, 1);
  p = pkt("HPST", &id);
  CHECK(ddmc_host_heapdump_feed(&d, &p) == 0 && d.state == DDMC_HOST_DUMP_IDLE);
  p = pkt("NHST", &id);
  CHECK(ddmc_host_heapdump_feed(&d, &p) == 0 && d.state == DDMC_HOST_DUMP_OPEN);
  uint8_t s3[] = {ST(7, 1)};
  uint32_t n3[] = {1000};
  buf nat = seg(1, 4096, s3, n3, 1);
  p = pkt("NHSG", &nat);
  CHECK(ddmc_host_heapdump_feed(&d, &p) == 0);
  p = pkt("NHEN", &id);
  CHECK(ddmc_host_heapdump_feed(&d, &p) == 1 && d.kind_units[7] == 1000 && d.first_unit == 512 &&
        d.end_unit == 1512);
  ddmc_host_heapdump_free(&d);
}

int main(void) {
  test_threads();
  test_heapdump();
  char t[5];
  CHECK(strcmp(ddmc_host_fourcc_str(FOURCC("HELO"), t), "HELO") == 0);
  CHECK(strcmp(ddmc_host_fourcc_str(0x01414243u, t), "?ABC") == 0);
  if (failures) {
    fprintf(stderr, "test_monitor: %d failure(s)\n", failures);
    return 1;
  }
  printf("test_monitor: ok\n");
  return 0;
}
