/* SPDX-License-Identifier: Apache-2.0 */
/* Heap dumps at GC time: walk + encode + queue, end to end through ddmc_gc_walk, for heaps of
 * 64 MiB, 256 MiB and 1 GiB (bench_heap.c: millions of objects, mostly 16-64 B, some arrays up to
 * 4 KiB, about 20% free), with a connected peer that asked for HPSG(1,0) (merged) and then
 * HPSO(1,1) (one run per object) and reads and discards everything.
 *   limit     memchr over a buffer as large as the heap: the memory bandwidth a walk that looked
 *             at every byte would need (the walk itself reads 4 bytes per region)
 *   encode    ddmc__heap_rle (src/heap/rle.h) called directly over the same regions, chunks counted
 *             and dropped: separates the encoder from the walk callback, the packet copies and
 *             the queue
 *   baseline  a straightforward Dalvik-style encoder (DdmHeap.cpp heap_chunk_callback /
 *             append_chunk): one pair chain per object, a room check per object, flush at 16368
 * The VM's send queue cap is raised to 512 MiB so a 1 GiB HPSO dump fits it whole (the default
 * 32 MiB cap would drop it: a dump is queued whole or not at all). The walk runs on CPU 1 (the
 * "GC thread"), the JDWP thread and the peer on CPU 0. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "bench.h"
#include "heap/rle.h"

#define HPSG FOURCC('H', 'P', 'S', 'G')
#define HPSO FOURCC('H', 'P', 'S', 'O')
#define HPST FOURCC('H', 'P', 'S', 'T')
#define HPEN FOURCC('H', 'P', 'E', 'N')
#define PKT_OVERHEAD 19u /* JDWP header + chunk header around each payload */

/* ---- the peer */

typedef struct heap_peer {
  jc c;
  pthread_t th;
  atomic_uint_fast64_t hpen, replies, dump_bytes;
} heap_peer;

static void *peer_main(void *arg) {
  heap_peer *p = arg;
  bench_pin(BENCH_CPU_SERVER);
  for (;;) {
    uint32_t len;
    const uint8_t *pk = jc_next(&p->c, &len);
    if (pk == NULL) break;
    if (pk[8] & JDWP_FLAG_REPLY) {
      atomic_fetch_add(&p->replies, 1);
      continue;
    }
    if (len < 19 || pk[9] != 199) continue;
    uint32_t t = be32(pk + 11);
    if (t == HPST || t == HPSG || t == HPSO || t == HPEN) atomic_fetch_add(&p->dump_bytes, len);
    if (t == HPEN) atomic_fetch_add(&p->hpen, 1);
  }
  return NULL;
}

static int wait_for(atomic_uint_fast64_t *v, uint64_t want) {
  for (int64_t until = bench_now_ns() + 60000000000LL; bench_now_ns() < until;) {
    if (atomic_load(v) >= want) return 0;
    bench_sleep_us(200);
  }
  return -1;
}

/* ---- encode only */

static int count_emit(void *arg, const uint8_t *p, size_t len) {
  (void)p;
  *(uint64_t *)arg += len + PKT_OVERHEAD;
  return 0;
}

static uint64_t encode_ddmc(const uint32_t *r, size_t n, uintptr_t base, int merge) {
  static ddmc__heap_rle e;
  uint64_t bytes = 0;
  ddmc__heap_rle_init(&e, 1, base, merge, count_emit, &bytes);
  uintptr_t a = base;
  for (size_t i = 0; i < n; i++) {
    uint32_t v = r[i];
    size_t b = BHEAP_BYTES(v);
    uint8_t state = BHEAP_FREE(v) ? 0 : DDMC__HPSG_STATE(DDMC_SOLID_HARD, BHEAP_KIND(v));
    ddmc__heap_rle_add(&e, a, b, state);
    a += b;
  }
  ddmc__heap_rle_finish(&e);
  return bytes;
}

/* Dalvik's encoder, restated (vm/alloc/DdmHeap.cpp): HeapChunkContext, heap_chunk_callback,
 * append_chunk, flush_hpsg_chunk. One run per object; no merging; P chains for > 256 units. */
typedef struct dalvik_ctx {
  uint8_t buf[16384 - 16];
  uint8_t *p, *piece_len_field;
  size_t total_units;
  int need_header;
  uint64_t *bytes;
} dalvik_ctx;

static void dalvik_flush(dalvik_ctx *c) {
  if (c->piece_len_field == NULL) return; /* nothing written */
  put_be32(c->piece_len_field, (uint32_t)c->total_units);
  count_emit(c->bytes, c->buf, (size_t)(c->p - c->buf));
  c->p = c->buf;
  c->total_units = 0;
  c->need_header = 1;
  c->piece_len_field = NULL;
}

static void dalvik_chunk(dalvik_ctx *c, uintptr_t ptr, size_t len, uint8_t state) {
  size_t needed = (((len / 8 + 255) / 256) * 2) + 17;
  size_t left = sizeof(c->buf) - (size_t)(c->p - c->buf);
  if (left < needed) dalvik_flush(c);
  left = sizeof(c->buf) - (size_t)(c->p - c->buf);
  if (left < needed) return; /* "chunk is too big to transmit" */
  if (c->need_header) {
    put_be32(c->p, 1);
    c->p += 4;
    *c->p++ = 8;
    put_be32(c->p, (uint32_t)ptr);
    c->p += 4;
    put_be32(c->p, 0);
    c->p += 4;
    c->piece_len_field = c->p;
    put_be32(c->p, 0x55555555);
    c->p += 4;
    c->need_header = 0;
  }
  len /= 8;
  c->total_units += len;
  while (len > 256) {
    *c->p++ = state | 0x80;
    *c->p++ = 255;
    len -= 256;
  }
  *c->p++ = state;
  *c->p++ = (uint8_t)(len - 1);
}

static uint64_t encode_dalvik(const uint32_t *r, size_t n, uintptr_t base) {
  static dalvik_ctx c;
  uint64_t bytes = 0;
  c.p = c.buf;
  c.total_units = 0;
  c.need_header = 1;
  c.piece_len_field = NULL;
  c.bytes = &bytes;
  uintptr_t a = base;
  for (size_t i = 0; i < n; i++) {
    uint32_t v = r[i];
    size_t b = BHEAP_BYTES(v);
    uint8_t state = BHEAP_FREE(v) ? 0 : DDMC__HPSG_STATE(DDMC_SOLID_HARD, BHEAP_KIND(v));
    dalvik_chunk(&c, a, b, state);
    a += b;
  }
  dalvik_flush(&c);
  return bytes;
}

/* ---- the section */

typedef struct sizerow {
  uint64_t mib;
  size_t n;
  uint64_t footprint;
  double scan, walk[2], enc[2], dalvik;
  uint64_t wire[2], enc_bytes[2], dalvik_bytes;
} sizerow;

void bench_section_heap(const bench_opts *o) {
  double sc = o->scale;
  const uint64_t sizes_mib[3] = {64, 256, 1024};
  int nsizes = sc < 0.5 ? 2 : 3;
  bheap h;
  int64_t g0 = bench_now_ns();
  bheap_make(&h, sizes_mib[nsizes - 1] << 20);
  bench_note("heap model: %.1f M regions for %.0f MiB, %.1f M objects (mean %.0f B), %.1f%% of the bytes free; "
             "generated in %s",
             h.n / 1e6, h.bytes / 1048576.0, h.objects / 1e6,
             (double)(h.bytes - h.free_bytes) / (double)h.objects, 100.0 * (double)h.free_bytes / (double)h.bytes,
             bench_time((double)(bench_now_ns() - g0)));

  sizerow rows[3];
  memset(rows, 0, sizeof(rows));
  for (int k = 0; k < nsizes; k++) {
    rows[k].mib = sizes_mib[k];
    rows[k].n = bheap_prefix(&h, sizes_mib[k] << 20, &rows[k].footprint);
  }

  /* the limit: memchr over as many bytes as the heap */
  size_t scan_len = (size_t)rows[nsizes - 1].footprint;
  uint8_t *scan = malloc(scan_len);
  if (scan == NULL) {
    fprintf(stderr, "bench: no memory for the scan buffer\n");
    exit(2);
  }
  memset(scan, 0x5a, scan_len);
  bench_pin(BENCH_CPU_CLIENT);
  for (int k = 0; k < nsizes; k++) {
    double v[5];
    for (int r = 0; r < 5; r++) {
      int64_t t0 = bench_now_ns();
      const void *hit = memchr(scan, 0, (size_t)rows[k].footprint);
      __asm__ volatile("" : : "r"(hit) : "memory");
      v[r] = (double)(bench_now_ns() - t0);
    }
    rows[k].scan = bench_median(v, 5);
  }
  free(scan);

  /* encode only, ddmc and the Dalvik-style baseline */
  const uintptr_t base = (uintptr_t)0x7f2000000000ull;
  for (int k = 0; k < nsizes; k++) {
    int reps = k == 2 ? 3 : 5;
    double v[3][5];
    for (int r = 0; r < reps; r++) {
      for (int m = 0; m < 2; m++) {
        int64_t t0 = bench_now_ns();
        rows[k].enc_bytes[m] = encode_ddmc(h.r, rows[k].n, base, m == 0);
        v[m][r] = (double)(bench_now_ns() - t0);
      }
      int64_t t0 = bench_now_ns();
      rows[k].dalvik_bytes = encode_dalvik(h.r, rows[k].n, base);
      v[2][r] = (double)(bench_now_ns() - t0);
    }
    rows[k].enc[0] = bench_median(v[0], (size_t)reps);
    rows[k].enc[1] = bench_median(v[1], (size_t)reps);
    rows[k].dalvik = bench_median(v[2], (size_t)reps);
  }

  /* end to end through ddmc_gc_walk */
  bvm b;
  memset(&b, 0, sizeof(b));
  b.pin_jdwp = 1;
  bvm_start(&b, (size_t)512 << 20);
  heap_peer p;
  memset(&p, 0, sizeof(p));
  jc_init(&p.c);
  uint8_t pkt[64];
  if (jc_open(&p.c, b.port, bench_now_ns() + 5000000000LL) != 0 ||
      jc_request(&p.c, pkt, jc_build_ddm(pkt, 0x40000001u, HPSG, "\1\0", 2), NULL) == 0) {
    fprintf(stderr, "bench: heap peer cannot reach the VM\n");
    exit(2);
  }
  pthread_create(&p.th, NULL, peer_main, &p);
  for (int m = 0; m < 2; m++) {
    if (m == 1) { /* HPSO from now on: the reader consumes the reply */
      uint64_t before = atomic_load(&p.replies);
      jc_write_all(p.c.fd, pkt, jc_build_ddm(pkt, 0x40000002u, HPSG, "\1\1", 2));
      if (wait_for(&p.replies, before + 1) != 0) exit(2);
    }
    for (int k = 0; k < nsizes; k++) {
      b.regions = h.r;
      b.nregions = rows[k].n;
      b.footprint = rows[k].footprint;
      int reps = k == 2 ? 3 : 5;
      double v[5];
      for (int r = 0; r < reps; r++) {
        uint64_t hpen0 = atomic_load(&p.hpen), bytes0 = atomic_load(&p.dump_bytes);
        int64_t t0 = bench_now_ns();
        int rc = ddmc_gc_walk(b.vm);
        v[r] = (double)(bench_now_ns() - t0);
        if (rc != 0 || wait_for(&p.hpen, hpen0 + 1) != 0) {
          fprintf(stderr, "bench: heap dump failed: %s\n", ddmc_strerror(rc));
          exit(2);
        }
        rows[k].wire[m] = atomic_load(&p.dump_bytes) - bytes0;
      }
      rows[k].walk[m] = bench_median(v, (size_t)reps);
    }
  }
  shutdown(p.c.fd, SHUT_RDWR);
  pthread_join(p.th, NULL);
  jc_close(&p.c);
  bvm_stop(&b);

  const char *G = "Heap dump";
  const char *mode[2] = {"HPSG merged", "HPSO per object"};
  for (int k = 0; k < nsizes; k++) {
    double mib = (double)rows[k].footprint / 1048576.0;
    char sref[48], sval[48];
    snprintf(sref, sizeof(sref), "memchr scan, %.0f MiB", mib);
    snprintf(sval, sizeof(sval), "%s (%.1f GiB/s)", bench_time(rows[k].scan), mib / 1024.0 / (rows[k].scan / 1e9));
    for (int m = 0; m < 2; m++) {
      double gibs = mib / 1024.0 / (rows[k].walk[m] / 1e9);
      int met = gibs >= 1.0 && rows[k].walk[m] <= 5 * rows[k].scan;
      bench_row(G, bench_fmt("gc_walk %s, %.0f MiB (%.1f M regions)", mode[m], mib, rows[k].n / 1e6),
                bench_fmt("%s (%.2f GiB/s)", bench_time(rows[k].walk[m]), gibs), sref, sval,
                rows[k].walk[m] / rows[k].scan, ">= 1 GiB/s and <= 5x scan", bench_status(met));
    }
    char dref[48], dval[48];
    snprintf(dref, sizeof(dref), "Dalvik-style encoder, %.0f MiB", mib);
    snprintf(dval, sizeof(dval), "%s (%.2f ns/region)", bench_time(rows[k].dalvik), rows[k].dalvik / rows[k].n);
    for (int m = 0; m < 2; m++)
      bench_row(G, bench_fmt("encode only %s, %.0f MiB", mode[m], mib),
                bench_fmt("%s (%.2f ns/region, %.1f GiB/s)", bench_time(rows[k].enc[m]), rows[k].enc[m] / rows[k].n,
                          mib / 1024.0 / (rows[k].enc[m] / 1e9)),
                dref, dval, rows[k].enc[m] / rows[k].dalvik, "-", "info");
  }
  int k = nsizes > 1 ? 1 : 0; /* 256 MiB */
  double mib = (double)rows[k].footprint / 1048576.0;
  char dref[64], dval[32];
  snprintf(dref, sizeof(dref), "Dalvik-style, one run per object");
  snprintf(dval, sizeof(dval), "%.0f B/MiB", rows[k].dalvik_bytes / mib);
  for (int m = 0; m < 2; m++)
    bench_row(G, bench_fmt("%s bytes on the wire per MiB of heap (%.0f MiB)", mode[m], mib),
              bench_fmt("%.0f B/MiB", rows[k].wire[m] / mib), dref, dval,
              (double)rows[k].wire[m] / (double)rows[k].dalvik_bytes, "-", "info");
  bench_note("256 MiB heap (the closing-note figure): gc_walk HPSG %s = %.2f GiB/s, HPSO %s = %.2f GiB/s; "
             "scan %s; wire HPSG %.0f B/MiB, HPSO %.0f B/MiB",
             bench_time(rows[k].walk[0]), mib / 1024.0 / (rows[k].walk[0] / 1e9), bench_time(rows[k].walk[1]),
             mib / 1024.0 / (rows[k].walk[1] / 1e9), bench_time(rows[k].scan), rows[k].wire[0] / mib,
             rows[k].wire[1] / mib);
  for (int j = 0; j < nsizes; j++)
    if (rows[j].wire[1] != rows[j].enc_bytes[1] + 46 || rows[j].wire[0] != rows[j].enc_bytes[0] + 46)
      bench_note("%.0f MiB: wire bytes (HPSG %llu, HPSO %llu) are not the encode-only count (%llu, %llu) plus "
                 "HPST and HPEN (46 B)",
                 rows[j].footprint / 1048576.0, (unsigned long long)rows[j].wire[0],
                 (unsigned long long)rows[j].wire[1], (unsigned long long)rows[j].enc_bytes[0],
                 (unsigned long long)rows[j].enc_bytes[1]);
  bench_note("heap: bytes on the wire = the encoder's chunks + 19 B of headers each + HPST and HPEN, checked "
             "against the encode-only count at every size");
  free(h.r);
}
