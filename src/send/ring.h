/* The byte ring between VM threads and the JDWP thread.
 *
 * Any thread appends a record (a DDM chunk, a JDWP command such as an Event.Composite, a deferred
 * reply, or a pointer to a large payload that is sent in pieces); only the JDWP thread takes
 * records, writes the JDWP header then and puts the bytes on the socket. So no VM thread waits on
 * a peer, and a send costs one compare-and-swap and a copy into memory allocated once, not a
 * malloc and a free.
 *
 * A record is a 16-byte header and its payload, padded to 16 bytes. A producer reserves its span
 * by moving head with a CAS (skipping to the start with a padding record when the span would
 * straddle the end), fills it, and publishes it by storing a non-zero kind with release order.
 * The consumer walks from tail and stops at the first record not yet published, so records come
 * out in reservation order; it zeroes what it consumed, so a kind word it later reads as non-zero
 * can only have been published. The ring is open only while a peer session is live: appending to
 * a closed ring returns DDMC_ENOTCONN, past its size DDMC_EQFULL, both at once. */
#ifndef DDMC_SEND_RING_H
#define DDMC_SEND_RING_H

#include <stdalign.h>
#include <stdatomic.h>

#include "common.h"

enum ddmc__rec_kind {
  DDMC__REC_PAD = 1,
  DDMC__REC_DDM,    /* a = chunk type; payload = chunk data */
  DDMC__REC_CMD,    /* a = (set << 8) | cmd, b = session; payload = command data */
  DDMC__REC_REPLY,  /* a = request id, b = session, c = error; payload = reply data */
  DDMC__REC_EXT     /* b = session; payload = a pointer to a ddmc__ext (send.h) */
};

typedef struct ddmc__rec {
  _Atomic uint32_t kind; /* 0 until published */
  uint32_t len;          /* payload bytes after the header */
  uint32_t a, b;
} ddmc__rec;

#define DDMC__REC_ALIGN 16u

typedef struct ddmc__ring {
  uint8_t *buf;
  size_t size;                     /* a power of two */
  const ddmc__mem *mem;
  alignas(64) atomic_size_t head;  /* producers reserve here */
  atomic_int open;
  atomic_int pushers;              /* producers between their open check and their publish */
  alignas(64) atomic_size_t tail;  /* the consumer releases here */
  atomic_uint_fast64_t dropped;    /* records refused (full) or discarded at close */
  atomic_uint_fast64_t peak;       /* most bytes ever reserved at once */
} ddmc__ring;

/* size is rounded up to a power of two (at least 4 KiB). */
int ddmc__ring_init(ddmc__ring *r, const ddmc__mem *mem, size_t size);
void ddmc__ring_destroy(ddmc__ring *r);
/* The largest payload one record can carry; bigger ones go as DDMC__REC_EXT. */
size_t ddmc__ring_max_payload(const ddmc__ring *r);

/* Reserves a record with room for len payload bytes. On success returns the header (fill len's
 * payload at ddmc__rec_data, set a/b, then ddmc__ring_publish); otherwise NULL with *err set to
 * DDMC_ENOTCONN, DDMC_EQFULL or DDMC_ETOOBIG. Thread: any; lock-free. */
ddmc__rec *ddmc__ring_reserve(ddmc__ring *r, size_t len, int *err);
void ddmc__ring_publish(ddmc__ring *r, ddmc__rec *rec, uint32_t kind);

static inline uint8_t *ddmc__rec_data(ddmc__rec *rec) { return (uint8_t *)(rec + 1); }

/* Consumer (JDWP thread): the oldest published record, or NULL when there is none (or the oldest
 * is still being filled). ddmc__ring_pop releases it. */
ddmc__rec *ddmc__ring_peek(ddmc__ring *r);
void ddmc__ring_pop(ddmc__ring *r);
/* Opens for a new session. JDWP thread. */
void ddmc__ring_open(ddmc__ring *r);
/* Closes, waits out producers caught mid-append, and hands every record still queued to drop
 * (which may be NULL) before discarding it, counting it as dropped. JDWP thread. */
void ddmc__ring_close(ddmc__ring *r, void (*drop)(void *arg, ddmc__rec *rec), void *arg);

#endif
