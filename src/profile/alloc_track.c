/* SPDX-License-Identifier: Apache-2.0 */
/* The allocation tracker: the ring every VM thread writes one record into per allocation while a
 * peer has tracking on (REAE 1), and what turns it on and off.
 *
 * Load: every allocation of the VM while tracking is on, on any thread. The path is one
 * fetch-add on a counter of threads inside the call (so REAE 0 can free the ring once they are
 * out), one fetch-add on the ring's head, and about 4 + 2 x 16 word stores; no lock, no
 * allocation. While tracking is off the VM does not call in at all (ddmc_alloc_tracking). */
#include <sched.h>
#include <string.h>

#include "profile/alloc_ring.h"
#include "profile/prof_int.h"

ddmc__prof_alloc_ring *ddmc__prof_alloc_ring_new(const ddmc__mem *mem, uint32_t cap, uint32_t depth) {
  ddmc__prof_alloc_ring *r = ddmc__calloc(mem, 1, sizeof(*r));
  if (r == NULL) return NULL;
  r->cap = cap;
  r->depth = depth;
  r->words = DDMC__AREC_WORDS(depth);
  r->w = ddmc__calloc(mem, (size_t)cap * r->words, sizeof(uint64_t));
  if (r->w == NULL) {
    ddmc__free(mem, r);
    return NULL;
  }
  atomic_init(&r->head, 0);
  return r;
}

void ddmc__prof_alloc_ring_free(const ddmc__mem *mem, ddmc__prof_alloc_ring *r) {
  if (r == NULL) return;
  ddmc__free(mem, r->w);
  ddmc__free(mem, r);
}

/* A seqlock without fences (ThreadSanitizer has none): the fields are stored with release order,
 * so the odd seq stored before them is visible first, and read with acquire order, so the second
 * read of seq cannot move before them. Both are plain moves on x86-64. */
#define ST(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define LD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)

void ddmc__prof_alloc_ring_put(ddmc__prof_alloc_ring *r, uint64_t n, uint32_t thread, ddmc_class cls, uint64_t bytes,
                               const ddmc_location *frames, uint32_t nframes) {
  uint64_t *w = r->w + (size_t)(n & (r->cap - 1)) * r->words;
  if (nframes > r->depth) nframes = r->depth;
  __atomic_store_n(&w[0], 2 * n + 1, __ATOMIC_RELAXED);
  ST(&w[1], (uint64_t)thread | (uint64_t)nframes << 32);
  ST(&w[2], cls);
  ST(&w[3], bytes);
  for (uint32_t i = 0; i < nframes; i++) {
    int64_t ix = frames[i].index;
    int32_t ix32 = ix < INT32_MIN ? INT32_MIN : ix > INT32_MAX ? INT32_MAX : (int32_t)ix;
    ST(&w[4 + 2 * i], frames[i].cls);
    ST(&w[5 + 2 * i], (uint64_t)frames[i].method | (uint64_t)(uint32_t)ix32 << 32);
  }
  __atomic_store_n(&w[0], 2 * n + 2, __ATOMIC_RELEASE);
}

int ddmc__prof_alloc_ring_get(const ddmc__prof_alloc_ring *r, uint64_t n, ddmc__prof_alloc_rec *out) {
  const uint64_t *w = r->w + (size_t)(n & (r->cap - 1)) * r->words;
  uint64_t seq = LD(&w[0]);
  if (seq != 2 * n + 2) return 0;
  uint64_t w1 = LD(&w[1]);
  out->thread = (uint32_t)w1;
  out->nframes = (uint32_t)(w1 >> 32);
  if (out->nframes > r->depth) out->nframes = r->depth;
  out->cls = LD(&w[2]);
  out->bytes = LD(&w[3]);
  for (uint32_t i = 0; i < out->nframes; i++) {
    uint64_t mw = LD(&w[5 + 2 * i]);
    out->frames[i].cls = LD(&w[4 + 2 * i]);
    out->frames[i].method = (uint32_t)mw;
    out->frames[i].index = (int32_t)(uint32_t)(mw >> 32);
  }
  return __atomic_load_n(&w[0], __ATOMIC_RELAXED) == seq;
}

/* ---- the public call */

int ddmc_alloc_record(ddmc_vm *vm, uint32_t thread, ddmc_class cls, uint64_t bytes, const ddmc_location *frames,
                      uint32_t nframes) {
  if (vm == NULL || (frames == NULL && nframes > 0)) return DDMC_EINVAL;
  ddmc__prof *p = &vm->prof;
  /* Announce, then look: REAE 0 clears the pointer, then waits for the count (seq_cst both). */
  atomic_fetch_add(&p->alloc_busy, 1);
  ddmc__prof_alloc_ring *r = atomic_load(&p->ring);
  if (r == NULL) {
    atomic_fetch_sub_explicit(&p->alloc_busy, 1, memory_order_release);
    return DDMC_ESTATE;
  }
  uint64_t n = atomic_fetch_add_explicit(&r->head, 1, memory_order_relaxed);
  ddmc__prof_alloc_ring_put(r, n, thread, cls, bytes, frames, nframes);
  atomic_fetch_sub_explicit(&p->alloc_busy, 1, memory_order_release);
  return 0;
}

/* ---- REAE, on the JDWP thread */

int ddmc__prof_alloc_set_tracking(ddmc_vm *vm, int on) {
  ddmc__prof *p = &vm->prof;
  if (on) {
    if (atomic_load(&p->ring) != NULL) return 0; /* already on: nothing changes (Dalvik) */
    if (ddmc__bridge(vm) == NULL) return DDMC_ENOTSUP;
    ddmc__prof_alloc_ring *r = ddmc__prof_alloc_ring_new(&vm->mem, p->cfg.alloc_records, p->cfg.alloc_depth);
    if (r == NULL) return DDMC_ENOMEM;
    atomic_store(&p->ring, r);
    ddmc__hub_alloc_want(vm, DDMC__ALLOC_TRACKER, 1);
    ddmc__log(vm, DDMC_LOG_INFO, "allocation tracking on (%u records of up to %u frames)", r->cap, r->depth);
    return 0;
  }
  ddmc__hub_alloc_want(vm, DDMC__ALLOC_TRACKER, 0);
  ddmc__prof_alloc_ring *r = atomic_exchange(&p->ring, NULL);
  if (r == NULL) return 0;
  /* Threads that saw the ring may still be writing into it. They hold no lock and do a bounded
   * amount of work, so this wait is short; yielding lets a descheduled one finish. */
  while (atomic_load(&p->alloc_busy) != 0) sched_yield();
  atomic_fetch_add_explicit(&p->st_alloc, atomic_load(&r->head), memory_order_relaxed);
  ddmc__prof_alloc_ring_free(&vm->mem, r);
  ddmc__log(vm, DDMC_LOG_INFO, "allocation tracking off");
  return 0;
}

int ddmc__prof_alloc_tracking_on(const ddmc_vm *vm) { return atomic_load(&((ddmc_vm *)vm)->prof.ring) != NULL; }

uint64_t ddmc__prof_alloc_recorded(const ddmc_vm *vm) {
  ddmc__prof *p = &((ddmc_vm *)vm)->prof;
  uint64_t n = atomic_load(&p->st_alloc);
  /* Read under the busy count so REAE 0 cannot free the ring under us. */
  atomic_fetch_add(&p->alloc_busy, 1);
  ddmc__prof_alloc_ring *r = atomic_load(&p->ring);
  if (r != NULL) n += atomic_load(&r->head);
  atomic_fetch_sub(&p->alloc_busy, 1);
  return n;
}
