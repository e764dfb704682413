/* SPDX-License-Identifier: Apache-2.0 */
/* See ring.h. Load: one append per unsolicited packet from any number of VM threads; the JDWP
 * thread takes everything published at each wake-up. */
#include <string.h>

#include "send/ring.h"

#define EPOCH_MASK 0xffffffu

static size_t span_of(size_t len) {
  return (sizeof(ddmc__send_rec) + len + DDMC__REC_ALIGN - 1) & ~(size_t)(DDMC__REC_ALIGN - 1);
}

int ddmc__send_ring_init(ddmc__send_ring *r, const ddmc__mem *mem, size_t size, ddmc__send_ring_drop_fn drop,
                         void *drop_arg) {
  size_t n = 4096;
  while (n < size && n < ((size_t)1 << 40)) n <<= 1;
  memset(r, 0, sizeof(*r));
  r->mem = mem;
  r->size = n;
  r->drop = drop;
  r->drop_arg = drop_arg;
  /* calloc: untouched pages cost no memory until a burst reaches them; and a zero word is what
   * "not yet published" means. */
  r->buf = ddmc__calloc(mem, 1, n);
  if (r->buf == NULL) return DDMC_ENOMEM;
  atomic_init(&r->epoch, 0);
  atomic_init(&r->head, 0);
  atomic_init(&r->tail, 0);
  atomic_init(&r->dropped, 0);
  atomic_init(&r->peak, 0);
  return 0;
}

size_t ddmc__send_ring_max_payload(const ddmc__send_ring *r) { return r->size / 4 - sizeof(ddmc__send_rec); }

static ddmc__send_rec *at(const ddmc__send_ring *r, size_t pos) {
  return (ddmc__send_rec *)(r->buf + (pos & (r->size - 1)));
}

ddmc__send_rec *ddmc__send_ring_reserve(ddmc__send_ring *r, size_t len, int *err) {
  unsigned epoch = atomic_load_explicit(&r->epoch, memory_order_acquire);
  if (!(epoch & 1)) {
    *err = DDMC_ENOTCONN;
    return NULL;
  }
  if (len > ddmc__send_ring_max_payload(r)) {
    *err = DDMC_ETOOBIG;
    return NULL;
  }
  size_t span = span_of(len), pad, h = atomic_load_explicit(&r->head, memory_order_relaxed);
  for (;;) {
    size_t t = atomic_load_explicit(&r->tail, memory_order_acquire);
    size_t off = h & (r->size - 1);
    pad = off + span > r->size ? r->size - off : 0;
    if (h + pad + span - t > r->size) {
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
  uint32_t ep = (epoch & EPOCH_MASK) << 8;
  if (pad) {
    ddmc__send_rec *p = at(r, h);
    p->len = (uint32_t)pad;
    atomic_store_explicit(&p->word, DDMC__REC_PAD | ep, memory_order_release);
  }
  ddmc__send_rec *rec = at(r, h + pad);
  rec->len = (uint32_t)len;
  rec->epoch = ep;
  return rec;
}

void ddmc__send_ring_publish(ddmc__send_ring *r, ddmc__send_rec *rec, uint32_t kind) {
  (void)r;
  atomic_store_explicit(&rec->word, kind | rec->epoch, memory_order_release);
}

static void discard(ddmc__send_ring *r, ddmc__send_rec *rec) {
  if (r->drop) r->drop(r->drop_arg, rec);
  atomic_fetch_add_explicit(&r->dropped, 1, memory_order_relaxed);
}

static void consume(ddmc__send_ring *r, size_t span) {
  memset(at(r, r->ctail), 0, span);
  r->ctail += span;
  /* Hand space back now and then even inside a long drain, so producers never see the ring
   * fuller than it is by more than an eighth. */
  if (r->ctail - atomic_load_explicit(&r->tail, memory_order_relaxed) >= r->size / 8) ddmc__send_ring_release(r);
}

void ddmc__send_ring_release(ddmc__send_ring *r) { atomic_store_explicit(&r->tail, r->ctail, memory_order_release); }

ddmc__send_rec *ddmc__send_ring_peek(ddmc__send_ring *r) {
  uint32_t want = (atomic_load_explicit(&r->epoch, memory_order_relaxed) & EPOCH_MASK) << 8;
  for (;;) {
    ddmc__send_rec *rec = at(r, r->ctail);
    uint32_t w = atomic_load_explicit(&rec->word, memory_order_acquire);
    if (w == 0) return NULL;
    if ((w & 0xff) == DDMC__REC_PAD) {
      consume(r, rec->len);
      continue;
    }
    if ((w & ~0xffu) == want) return rec;
    discard(r, rec); /* published for a session that has ended */
    consume(r, span_of(rec->len));
  }
}

void ddmc__send_ring_pop(ddmc__send_ring *r) { consume(r, span_of(at(r, r->ctail)->len)); }

/* Both are idempotent: a session that ends before its handshake closes a ring it never opened. */
void ddmc__send_ring_open(ddmc__send_ring *r) {
  if (!(atomic_load_explicit(&r->epoch, memory_order_relaxed) & 1))
    atomic_fetch_add_explicit(&r->epoch, 1, memory_order_release);
}

void ddmc__send_ring_close(ddmc__send_ring *r) {
  if (atomic_load_explicit(&r->epoch, memory_order_relaxed) & 1)
    atomic_fetch_add_explicit(&r->epoch, 1, memory_order_release);
  /* Every record now has an old epoch: peek drops them all and returns NULL at the first one
   * still being filled (dropped later, when a peek reaches it). */
  (void)ddmc__send_ring_peek(r);
  ddmc__send_ring_release(r);
}

void ddmc__send_ring_destroy(ddmc__send_ring *r) {
  if (r->buf == NULL) return;
  ddmc__send_ring_close(r);
  ddmc__free(r->mem, r->buf);
  r->buf = NULL;
}
