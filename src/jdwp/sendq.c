/* See sendq.h. Load: one push per unsolicited chunk (thread events, heap dumps at GC), from any
 * number of VM threads; one take per JDWP-thread wake-up.
 *
 * The list is Dmitry Vyukov's intrusive MPSC queue: a producer exchanges the tail pointer with
 * its last node and then links the previous tail to its first node. Between those two steps the
 * consumer sees the list end early and stops; the producer wakes the JDWP thread after linking,
 * so nothing is left behind. */
#include <sched.h>

#include "jdwp/sendq.h"

ddmc__qpkt *ddmc__qpkt_new(const ddmc__mem *mem, size_t n) {
  if (n > SIZE_MAX - sizeof(ddmc__qpkt)) return NULL;
  ddmc__qpkt *p = ddmc__malloc(mem, sizeof(ddmc__qpkt) + n);
  if (p != NULL) {
    atomic_init(&p->next, NULL);
    p->len = n;
  }
  return p;
}

void ddmc__qpkt_free_chain(const ddmc__mem *mem, ddmc__qpkt *p) {
  while (p != NULL) {
    ddmc__qpkt *n = ddmc__qpkt_next(p);
    ddmc__free(mem, p);
    p = n;
  }
}

int ddmc__sendq_init(ddmc__sendq *q, const ddmc__mem *mem, size_t cap) {
  q->mem = mem;
  q->cap = cap;
  q->stub = ddmc__qpkt_new(mem, 0);
  if (q->stub == NULL) return DDMC_ENOMEM;
  q->head = q->stub;
  atomic_init(&q->tail, q->stub);
  atomic_init(&q->bytes, 0);
  atomic_init(&q->open, 0);
  atomic_init(&q->pushers, 0);
  atomic_init(&q->dropped, 0);
  atomic_init(&q->peak, 0);
  return 0;
}

/* Links first..last in after the current tail. */
static void link_in(ddmc__sendq *q, ddmc__qpkt *first, ddmc__qpkt *last) {
  atomic_store_explicit(&last->next, NULL, memory_order_relaxed);
  ddmc__qpkt *prev = atomic_exchange_explicit(&q->tail, last, memory_order_acq_rel);
  atomic_store_explicit(&prev->next, first, memory_order_release);
}

/* Unlinks the oldest node, or returns NULL when empty (or a producer is mid-push). Consumer only. */
static ddmc__qpkt *pop(ddmc__sendq *q) {
  ddmc__qpkt *head = q->head;
  ddmc__qpkt *next = ddmc__qpkt_next(head);
  if (head == q->stub) {
    if (next == NULL) return NULL;
    q->head = head = next;
    next = ddmc__qpkt_next(head);
  }
  if (next != NULL) {
    q->head = next;
    return head;
  }
  if (head != atomic_load_explicit(&q->tail, memory_order_acquire)) return NULL; /* mid-push */
  link_in(q, q->stub, q->stub); /* head is the last node: put the stub behind it to take it */
  next = ddmc__qpkt_next(head);
  if (next != NULL) {
    q->head = next;
    return head;
  }
  return NULL;
}

int ddmc__sendq_push(ddmc__sendq *q, ddmc__qpkt *first, ddmc__qpkt *last, size_t bytes, size_t count) {
  atomic_fetch_add(&q->pushers, 1);
  if (!atomic_load(&q->open)) {
    atomic_fetch_sub(&q->pushers, 1);
    return DDMC_ENOTCONN;
  }
  size_t old = atomic_fetch_add_explicit(&q->bytes, bytes, memory_order_relaxed);
  if (bytes > q->cap || old > q->cap - bytes) {
    atomic_fetch_sub_explicit(&q->bytes, bytes, memory_order_relaxed);
    atomic_fetch_sub(&q->pushers, 1);
    atomic_fetch_add_explicit(&q->dropped, count, memory_order_relaxed);
    return DDMC_EQFULL;
  }
  link_in(q, first, last);
  atomic_fetch_sub(&q->pushers, 1);
  size_t now = old + bytes;
  uint_fast64_t peak = atomic_load_explicit(&q->peak, memory_order_relaxed);
  while (now > peak && !atomic_compare_exchange_weak_explicit(&q->peak, &peak, now, memory_order_relaxed,
                                                               memory_order_relaxed)) {
  }
  return 0;
}

ddmc__qpkt *ddmc__sendq_take(ddmc__sendq *q, size_t *bytes) {
  ddmc__qpkt *first = NULL, *last = NULL, *p;
  size_t n = 0;
  while ((p = pop(q)) != NULL) {
    ddmc__qpkt_link(p, NULL);
    if (last) ddmc__qpkt_link(last, p);
    else first = p;
    last = p;
    n += p->len;
  }
  if (n) atomic_fetch_sub_explicit(&q->bytes, n, memory_order_relaxed);
  *bytes = n;
  return first;
}

void ddmc__sendq_open(ddmc__sendq *q) { atomic_store(&q->open, 1); }

void ddmc__sendq_close(ddmc__sendq *q) {
  atomic_store(&q->open, 0);
  /* A producer that saw the queue open finishes its push in a few instructions: wait it out, so
   * nothing is linked after the drain below. */
  while (atomic_load(&q->pushers) != 0) sched_yield();
  size_t bytes;
  ddmc__qpkt *h = ddmc__sendq_take(q, &bytes);
  uint64_t n = 0;
  for (ddmc__qpkt *p = h; p != NULL; p = ddmc__qpkt_next(p)) n++;
  atomic_fetch_add_explicit(&q->dropped, n, memory_order_relaxed);
  ddmc__qpkt_free_chain(q->mem, h);
}

void ddmc__sendq_destroy(ddmc__sendq *q) {
  size_t bytes;
  ddmc__qpkt_free_chain(q->mem, ddmc__sendq_take(q, &bytes));
  ddmc__free(q->mem, q->stub);
  q->stub = NULL;
}
