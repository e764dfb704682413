/* The bounded queue between VM threads and the JDWP thread.
 *
 * VM threads (thread start/exit, app name, GC heap dumps) push complete JDWP packets; only the
 * JDWP thread takes them and writes to the socket, so no VM thread ever waits on a peer. The
 * queue is open only while a peer session is live; pushing to a closed queue returns
 * DDMC_ENOTCONN and pushing past the byte cap returns DDMC_EQFULL, both without blocking. The
 * lock is a leaf: nothing is called while it is held. */
#ifndef DDMC_SENDQ_H
#define DDMC_SENDQ_H

#include <pthread.h>
#include <stdatomic.h>

#include "common.h"

typedef struct ddmc__qpkt {
  struct ddmc__qpkt *next;
  size_t len;            /* bytes in data: one whole JDWP packet */
  uint8_t data[];
} ddmc__qpkt;

typedef struct ddmc__sendq {
  pthread_mutex_t lock;
  ddmc__qpkt *head DDMC_GUARDED_BY(lock);
  ddmc__qpkt *tail DDMC_GUARDED_BY(lock);
  size_t bytes DDMC_GUARDED_BY(lock);
  atomic_size_t approx_bytes; /* bytes, readable without the lock: a full queue refuses fast */
  size_t cap;
  int open DDMC_GUARDED_BY(lock);
  atomic_uint_fast64_t dropped;
  atomic_uint_fast64_t peak;
} ddmc__sendq;

int ddmc__sendq_init(ddmc__sendq *q, size_t cap);
void ddmc__sendq_destroy(ddmc__sendq *q, const ddmc__mem *mem);
/* Allocates a node for an n-byte packet (not yet queued). */
ddmc__qpkt *ddmc__qpkt_new(const ddmc__mem *mem, size_t n);
/* Queues the chain first..last (linked through next; bytes = total) as one unit: all of it or
 * none. On success the queue owns the nodes; on failure the caller still does. Returns 0,
 * DDMC_ENOTCONN (closed), DDMC_EQFULL (over the cap; counted as one drop per node). */
int ddmc__sendq_push(ddmc__sendq *q, ddmc__qpkt *first, ddmc__qpkt *last, size_t bytes, size_t count);
/* Takes everything queued (JDWP thread). Returns the chain or NULL; *bytes gets its size. */
ddmc__qpkt *ddmc__sendq_take(ddmc__sendq *q, size_t *bytes);
/* Opens for a new session. */
void ddmc__sendq_open(ddmc__sendq *q);
/* Closes and frees whatever is still queued (counted as dropped). */
void ddmc__sendq_close(ddmc__sendq *q, const ddmc__mem *mem);
void ddmc__qpkt_free_chain(const ddmc__mem *mem, ddmc__qpkt *p);

#endif
