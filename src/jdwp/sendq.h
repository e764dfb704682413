/* The bounded queue between VM threads and the JDWP thread.
 *
 * VM threads (thread start/exit, app name, GC heap dumps) push complete JDWP packets; only the
 * JDWP thread takes them and writes to the socket, so no VM thread ever waits on a peer. Pushing
 * takes no lock at all (a Vyukov multi-producer single-consumer list: one atomic exchange), so a
 * VM thread preempted in the middle of a push cannot hold up the others; the byte cap is an atomic
 * reservation. The queue is open only while a peer session is live: pushing to a closed queue
 * returns DDMC_ENOTCONN, pushing past the cap DDMC_EQFULL, both at once. */
#ifndef DDMC_SENDQ_H
#define DDMC_SENDQ_H

#include <stdatomic.h>

#include "common.h"

typedef struct ddmc__qpkt {
  _Atomic(struct ddmc__qpkt *) next;
  size_t len;            /* bytes in data: one whole JDWP packet */
  uint8_t data[];
} ddmc__qpkt;

static inline ddmc__qpkt *ddmc__qpkt_next(const ddmc__qpkt *p) {
  return atomic_load_explicit(&((ddmc__qpkt *)p)->next, memory_order_acquire);
}
static inline void ddmc__qpkt_link(ddmc__qpkt *p, ddmc__qpkt *next) {
  atomic_store_explicit(&p->next, next, memory_order_relaxed);
}

typedef struct ddmc__sendq {
  _Atomic(ddmc__qpkt *) tail;  /* producers swap themselves in here */
  ddmc__qpkt *head;            /* consumer only */
  ddmc__qpkt *stub;            /* keeps the list non-empty */
  const ddmc__mem *mem;
  size_t cap;
  atomic_size_t bytes;         /* reserved by producers, released by the consumer */
  atomic_int open;
  atomic_int pushers;          /* producers between their open check and their link */
  atomic_uint_fast64_t dropped;
  atomic_uint_fast64_t peak;
} ddmc__sendq;

int ddmc__sendq_init(ddmc__sendq *q, const ddmc__mem *mem, size_t cap);
void ddmc__sendq_destroy(ddmc__sendq *q);
/* Allocates a node for an n-byte packet (not yet queued). */
ddmc__qpkt *ddmc__qpkt_new(const ddmc__mem *mem, size_t n);
/* Queues the chain first..last (linked with ddmc__qpkt_link; bytes = total, count = nodes) as
 * one unit: all of it or none. On success the queue owns the nodes; on failure the caller still
 * does. Returns 0, DDMC_ENOTCONN (closed), DDMC_EQFULL (over the cap; counted as count drops).
 * Thread: any; lock-free. */
int ddmc__sendq_push(ddmc__sendq *q, ddmc__qpkt *first, ddmc__qpkt *last, size_t bytes, size_t count);
/* Takes what is queued, in order (JDWP thread). Returns a chain or NULL; *bytes gets its size. */
ddmc__qpkt *ddmc__sendq_take(ddmc__sendq *q, size_t *bytes);
/* Opens for a new session (JDWP thread). */
void ddmc__sendq_open(ddmc__sendq *q);
/* Closes, waits out producers caught mid-push, and frees what is still queued (counted as
 * dropped). JDWP thread. */
void ddmc__sendq_close(ddmc__sendq *q);
void ddmc__qpkt_free_chain(const ddmc__mem *mem, ddmc__qpkt *p);

#endif
