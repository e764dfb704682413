/* See sendq.h. Load: one push per unsolicited chunk (thread events, heap dumps at GC); one take
 * per JDWP-thread wake-up. The critical section is a pointer append, so contention between VM
 * threads costs little even at millions of pushes a second. */
#include "jdwp/sendq.h"

int ddmc__sendq_init(ddmc__sendq *q, size_t cap) {
  q->head = q->tail = NULL;
  q->bytes = 0;
  q->cap = cap;
  q->open = 0;
  atomic_init(&q->approx_bytes, 0);
  atomic_init(&q->dropped, 0);
  atomic_init(&q->peak, 0);
  return pthread_mutex_init(&q->lock, NULL) == 0 ? 0 : DDMC_ENOMEM;
}

void ddmc__qpkt_free_chain(const ddmc__mem *mem, ddmc__qpkt *p) {
  while (p != NULL) {
    ddmc__qpkt *n = p->next;
    ddmc__free(mem, p);
    p = n;
  }
}

void ddmc__sendq_destroy(ddmc__sendq *q, const ddmc__mem *mem) {
  ddmc__qpkt_free_chain(mem, q->head);
  q->head = q->tail = NULL;
  pthread_mutex_destroy(&q->lock);
}

ddmc__qpkt *ddmc__qpkt_new(const ddmc__mem *mem, size_t n) {
  if (n > SIZE_MAX - sizeof(ddmc__qpkt)) return NULL;
  ddmc__qpkt *p = ddmc__malloc(mem, sizeof(ddmc__qpkt) + n);
  if (p != NULL) {
    p->next = NULL;
    p->len = n;
  }
  return p;
}

int ddmc__sendq_push(ddmc__sendq *q, ddmc__qpkt *first, ddmc__qpkt *last, size_t bytes, size_t count) {
  /* Under a stalled peer the queue stays full and every VM thread lands here: refuse without
   * taking the lock, so they do not queue up behind each other on it. */
  size_t approx = atomic_load_explicit(&q->approx_bytes, memory_order_relaxed);
  if (bytes > q->cap || approx > q->cap - bytes) {
    atomic_fetch_add_explicit(&q->dropped, count, memory_order_relaxed);
    return DDMC_EQFULL;
  }
  pthread_mutex_lock(&q->lock);
  if (!q->open) {
    pthread_mutex_unlock(&q->lock);
    return DDMC_ENOTCONN;
  }
  if (bytes > q->cap || q->bytes > q->cap - bytes) {
    pthread_mutex_unlock(&q->lock);
    atomic_fetch_add_explicit(&q->dropped, count, memory_order_relaxed);
    return DDMC_EQFULL;
  }
  last->next = NULL;
  if (q->tail) q->tail->next = first;
  else q->head = first;
  q->tail = last;
  q->bytes += bytes;
  size_t now = q->bytes;
  atomic_store_explicit(&q->approx_bytes, now, memory_order_relaxed);
  pthread_mutex_unlock(&q->lock);
  uint_fast64_t peak = atomic_load_explicit(&q->peak, memory_order_relaxed);
  while (now > peak && !atomic_compare_exchange_weak_explicit(&q->peak, &peak, now, memory_order_relaxed,
                                                               memory_order_relaxed)) {
  }
  return 0;
}

ddmc__qpkt *ddmc__sendq_take(ddmc__sendq *q, size_t *bytes) {
  pthread_mutex_lock(&q->lock);
  ddmc__qpkt *h = q->head;
  *bytes = q->bytes;
  q->head = q->tail = NULL;
  q->bytes = 0;
  atomic_store_explicit(&q->approx_bytes, 0, memory_order_relaxed);
  pthread_mutex_unlock(&q->lock);
  return h;
}

void ddmc__sendq_open(ddmc__sendq *q) {
  pthread_mutex_lock(&q->lock);
  q->open = 1;
  pthread_mutex_unlock(&q->lock);
}

void ddmc__sendq_close(ddmc__sendq *q, const ddmc__mem *mem) {
  pthread_mutex_lock(&q->lock);
  q->open = 0;
  ddmc__qpkt *h = q->head;
  q->head = q->tail = NULL;
  q->bytes = 0;
  atomic_store_explicit(&q->approx_bytes, 0, memory_order_relaxed);
  pthread_mutex_unlock(&q->lock);
  uint64_t n = 0;
  for (ddmc__qpkt *p = h; p != NULL; p = p->next) n++;
  atomic_fetch_add_explicit(&q->dropped, n, memory_order_relaxed);
  ddmc__qpkt_free_chain(mem, h);
}
