/* See ring.h. Load: one append per unsolicited packet from any number of VM threads; the JDWP
 * thread takes everything published at each wake-up. */
#include <sched.h>
#include <string.h>

#include "send/ring.h"

static size_t span_of(size_t len) {
  return (sizeof(ddmc__rec) + len + DDMC__REC_ALIGN - 1) & ~(size_t)(DDMC__REC_ALIGN - 1);
}

int ddmc__ring_init(ddmc__ring *r, const ddmc__mem *mem, size_t size) {
  size_t n = 4096;
  while (n < size && n < ((size_t)1 << 40)) n <<= 1;
  memset(r, 0, sizeof(*r));
  r->mem = mem;
  r->size = n;
  /* calloc: untouched pages cost no memory until a burst reaches them; and a zero kind word is
   * what "not yet published" means. */
  r->buf = ddmc__calloc(mem, 1, n);
  if (r->buf == NULL) return DDMC_ENOMEM;
  atomic_init(&r->head, 0);
  atomic_init(&r->tail, 0);
  atomic_init(&r->open, 0);
  atomic_init(&r->pushers, 0);
  atomic_init(&r->dropped, 0);
  atomic_init(&r->peak, 0);
  return 0;
}

void ddmc__ring_destroy(ddmc__ring *r) {
  ddmc__free(r->mem, r->buf);
  r->buf = NULL;
}

size_t ddmc__ring_max_payload(const ddmc__ring *r) { return r->size / 4 - sizeof(ddmc__rec); }

static ddmc__rec *at(const ddmc__ring *r, size_t pos) { return (ddmc__rec *)(r->buf + (pos & (r->size - 1))); }

ddmc__rec *ddmc__ring_reserve(ddmc__ring *r, size_t len, int *err) {
  if (len > ddmc__ring_max_payload(r)) {
    *err = DDMC_ETOOBIG;
    return NULL;
  }
  atomic_fetch_add_explicit(&r->pushers, 1, memory_order_seq_cst);
  if (!atomic_load_explicit(&r->open, memory_order_seq_cst)) {
    atomic_fetch_sub_explicit(&r->pushers, 1, memory_order_release);
    *err = DDMC_ENOTCONN;
    return NULL;
  }
  size_t span = span_of(len), pad, h = atomic_load_explicit(&r->head, memory_order_relaxed);
  for (;;) {
    size_t t = atomic_load_explicit(&r->tail, memory_order_acquire);
    size_t off = h & (r->size - 1);
    pad = off + span > r->size ? r->size - off : 0;
    if (h + pad + span - t > r->size) {
      atomic_fetch_sub_explicit(&r->pushers, 1, memory_order_release);
      atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
      *err = DDMC_EQFULL;
      return NULL;
    }
    if (atomic_compare_exchange_weak_explicit(&r->head, &h, h + pad + span, memory_order_relaxed,
                                              memory_order_relaxed))
      break;
  }
  size_t used = h + pad + span - atomic_load_explicit(&r->tail, memory_order_relaxed);
  if (used > atomic_load_explicit(&r->peak, memory_order_relaxed)) atomic_store_explicit(&r->peak, used, memory_order_relaxed);
  if (pad) {
    ddmc__rec *p = at(r, h);
    p->len = (uint32_t)pad;
    atomic_store_explicit(&p->kind, DDMC__REC_PAD, memory_order_release);
  }
  ddmc__rec *rec = at(r, h + pad);
  rec->len = (uint32_t)len;
  return rec;
}

void ddmc__ring_publish(ddmc__ring *r, ddmc__rec *rec, uint32_t kind) {
  atomic_store_explicit(&rec->kind, kind, memory_order_release);
  atomic_fetch_sub_explicit(&r->pushers, 1, memory_order_release);
}

/* The consumer's own position is tail: nobody else writes it. */
static void release(ddmc__ring *r, size_t span) {
  size_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
  memset(at(r, t), 0, span);
  atomic_store_explicit(&r->tail, t + span, memory_order_release);
}

ddmc__rec *ddmc__ring_peek(ddmc__ring *r) {
  for (;;) {
    size_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
    ddmc__rec *rec = at(r, t);
    uint32_t kind = atomic_load_explicit(&rec->kind, memory_order_acquire);
    if (kind == 0) return NULL;
    if (kind != DDMC__REC_PAD) return rec;
    release(r, rec->len);
  }
}

void ddmc__ring_pop(ddmc__ring *r) {
  size_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
  release(r, span_of(at(r, t)->len));
}

void ddmc__ring_open(ddmc__ring *r) { atomic_store(&r->open, 1); }

void ddmc__ring_close(ddmc__ring *r, void (*drop)(void *arg, ddmc__rec *rec), void *arg) {
  atomic_store(&r->open, 0);
  /* A producer that saw the ring open publishes within a few instructions: wait it out, so
   * nothing is published after the drain below. */
  while (atomic_load(&r->pushers) != 0) sched_yield();
  ddmc__rec *rec;
  while ((rec = ddmc__ring_peek(r)) != NULL) {
    if (drop) drop(arg, rec);
    atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
    ddmc__ring_pop(r);
  }
}
