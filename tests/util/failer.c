/* SPDX-License-Identifier: Apache-2.0 */
/* A ddmc_allocator that fails the Nth allocation (zlib's infcover.c, nghttp2's failmalloc_test.c):
 * the tests run a whole session with N = 1, 2, ... until a run meets no failure, and each run must
 * end in a clean error with nothing left allocated. */
#include <stdlib.h>

#include "testutil.h"

/* 1 if this allocation is the one to fail (counted either way). */
static int fails_now(failer *f) {
  if (atomic_fetch_add(&f->count, 1) + 1 == atomic_load(&f->fail_at)) {
    atomic_fetch_add(&f->failed, 1);
    return 1;
  }
  return 0;
}

static void *f_malloc(void *ud, size_t n) {
  failer *f = ud;
  if (fails_now(f)) return NULL;
  void *p = malloc(n);
  if (p) atomic_fetch_add(&f->live, 1);
  return p;
}

static void *f_realloc(void *ud, void *p, size_t n) {
  failer *f = ud;
  if (fails_now(f)) return NULL;
  void *q = realloc(p, n);
  if (q && p == NULL) atomic_fetch_add(&f->live, 1);
  return q;
}

static void f_free(void *ud, void *p) {
  failer *f = ud;
  if (p) atomic_fetch_sub(&f->live, 1);
  free(p);
}

ddmc_allocator failer_allocator(failer *f) {
  ddmc_allocator a = {f, f_malloc, f_realloc, f_free};
  return a;
}

void failer_arm(failer *f, long fail_at) {
  atomic_init(&f->count, 0);
  atomic_init(&f->fail_at, fail_at);
  atomic_init(&f->failed, 0);
  atomic_init(&f->live, 0);
}
