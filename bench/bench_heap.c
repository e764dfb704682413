/* SPDX-License-Identifier: Apache-2.0 */
/* A synthetic managed heap after marking: a fixed-seed sequence of regions (objects and free
 * gaps) in address order, the shape a mark-sweep heap of an app has.
 *
 * Mix, by region count (the figures printed next to each heap are measured, not these):
 *   ~10% free gaps: 60% 16-128 B, 35% 128-512 B, 5% 512 B-2 KiB  (about 20% of the bytes)
 *   objects: 80% plain objects 16-64 B; 10% char[] 24-96 B (strings); 5% small int[]/byte[]
 *            24-256 B; 2% arrays 256 B-4 KiB (byte[], int[], long[]); the rest 16-64 B objects,
 *            and 1 in 1000 a class object of 200-1000 B.
 * Kinds alternate as they do in a real heap (String, char[], String, ...), so merged HPSG runs
 * are short, and free gaps split runs of objects. */
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void) {
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return (uint32_t)((rng * 0x2545f4914f6cdd1dull) >> 32);
}

/* a + 8k for k uniform in [0, (b - a) / 8] */
static size_t pick(size_t a, size_t b) { return a + 8 * (rnd() % ((b - a) / 8 + 1)); }

void bheap_make(bheap *h, uint64_t bytes) {
  rng = 0x9e3779b97f4a7c15ull;
  size_t cap = (size_t)(bytes / 64) + 1024;
  h->r = malloc(cap * sizeof(uint32_t));
  h->n = 0;
  h->bytes = h->free_bytes = h->objects = 0;
  if (h->r == NULL) {
    fprintf(stderr, "bench: out of memory for the heap model\n");
    exit(2);
  }
  while (h->bytes < bytes) {
    if (h->n == cap) {
      cap *= 2;
      h->r = realloc(h->r, cap * sizeof(uint32_t));
      if (h->r == NULL) exit(2);
    }
    uint32_t u = rnd() % 1000;
    size_t sz;
    ddmc_heap_kind k = DDMC_KIND_OBJECT;
    int isfree = 0;
    if (u < 100) {
      uint32_t g = rnd() % 100;
      sz = g < 60 ? pick(16, 128) : g < 95 ? pick(128, 512) : pick(512, 2048);
      isfree = 1;
    } else {
      uint32_t o = rnd() % 1000;
      if (o < 800) {
        sz = pick(16, 64);
      } else if (o < 900) {
        sz = pick(24, 96);
        k = DDMC_KIND_ARRAY_2;
      } else if (o < 950) {
        sz = pick(24, 256);
        k = (o & 1) ? DDMC_KIND_ARRAY_4 : DDMC_KIND_ARRAY_1;
      } else if (o < 970) {
        sz = pick(256, 4096);
        k = o % 3 == 0 ? DDMC_KIND_ARRAY_1 : o % 3 == 1 ? DDMC_KIND_ARRAY_4 : DDMC_KIND_ARRAY_8;
      } else if (o == 999) {
        sz = pick(200, 1000);
        k = DDMC_KIND_CLASS;
      } else {
        sz = pick(16, 64);
      }
      h->objects++;
    }
    h->r[h->n++] = BHEAP_PACK(sz, k, isfree);
    h->bytes += sz;
    if (isfree) h->free_bytes += sz;
  }
}

size_t bheap_prefix(const bheap *h, uint64_t bytes, uint64_t *footprint) {
  uint64_t b = 0;
  size_t i = 0;
  while (i < h->n && b < bytes) b += BHEAP_BYTES(h->r[i++]);
  *footprint = b;
  return i;
}
