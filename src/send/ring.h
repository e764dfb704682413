/* SPDX-License-Identifier: Apache-2.0 */
/* The byte ring between VM threads and the JDWP thread.
 *
 * Any thread appends a record (a DDM chunk, a JDWP command such as an Event.Composite, a deferred
 * reply, or a pointer to a large payload that is sent in pieces); only the JDWP thread takes
 * records, writes the JDWP header then and puts the bytes on the socket. So no VM thread waits on
 * a peer, and a send costs one compare-and-swap and a copy into memory allocated once, not a
 * malloc and a free.
 *
 * A record is a 24-byte header and its payload, padded to 8 bytes. A producer reserves its span
 * by moving head with a CAS (skipping to the start with a padding record when the span would
 * straddle the end), fills it, and publishes it by storing a non-zero kind word with release
 * order. The consumer walks from tail and stops at the first record not yet published, so records
 * come out in reservation order; it zeroes what it consumed, so a kind word it later reads as
 * non-zero can only have been published, and it hands space back to producers once per drain, not
 * per record, so the line producers read is not bounced on every pop.
 *
 * The ring is open only while a peer session is live: appending to a closed ring returns
 * DDMC_ENOTCONN, past its size DDMC_EQFULL, both at once. Open and closed are the parity of an
 * epoch that every record carries: a producer that saw session N open but publishes after it
 * closed leaves a record of epoch N, which the consumer drops unseen. So closing never waits for
 * producers, and producers share no counter besides head. */
#ifndef DDMC_SEND_RING_H
#define DDMC_SEND_RING_H

#include <stdalign.h>
#include <stdatomic.h>

#include "common.h"

enum ddmc__send_rec_kind {
  DDMC__REC_PAD = 1,
  DDMC__REC_DDM,   /* a = chunk type; payload = chunk data */
  DDMC__REC_CMD,   /* a = (set << 8) | cmd, b = session; payload = command data */
  DDMC__REC_REPLY, /* a = request id, b = session, c = error; payload = reply data */
  DDMC__REC_EXT    /* b = session; payload = a pointer to a ddmc__send_ext (send.h) */
};

typedef struct ddmc__send_rec {
  _Atomic uint32_t word; /* 0 until published, then kind | epoch << 8 */
  uint32_t len;          /* payload bytes after the header (PAD: the whole span) */
  uint32_t a, b, c;
  uint32_t epoch;        /* the producer's, until publish puts it in word */
} ddmc__send_rec;

#define DDMC__REC_ALIGN 8u

/* Called for each record discarded unsent (closed session, stale epoch, destroy). */
typedef void (*ddmc__send_ring_drop_fn)(void *arg, ddmc__send_rec *rec);

typedef struct ddmc__send_ring {
  uint8_t *buf;
  size_t size;                     /* a power of two */
  const ddmc__mem *mem;
  ddmc__send_ring_drop_fn drop;
  void *drop_arg;
  alignas(64) atomic_uint epoch;   /* odd: open; read by producers, written at open/close */
  alignas(64) atomic_size_t head;  /* producers reserve here */
  alignas(64) atomic_size_t tail;  /* space up to here is free again (consumer publishes) */
  size_t ctail;                    /* consumer only: what it has consumed */
  atomic_uint_fast64_t dropped;    /* records refused (full) or discarded unsent */
  atomic_uint_fast64_t peak;       /* most bytes ever reserved at once */
} ddmc__send_ring;

/* size is rounded up to a power of two (at least 4 KiB); drop may be NULL. */
int ddmc__send_ring_init(ddmc__send_ring *r, const ddmc__mem *mem, size_t size, ddmc__send_ring_drop_fn drop,
                         void *drop_arg);
/* Drops what is still queued. No producer may run any more. */
void ddmc__send_ring_destroy(ddmc__send_ring *r);
/* The largest payload one record can carry; bigger ones go as DDMC__REC_EXT. */
size_t ddmc__send_ring_max_payload(const ddmc__send_ring *r);

/* Reserves a record with room for len payload bytes. On success returns the header (fill len's
 * payload at ddmc__send_rec_data, set a/b, then ddmc__send_ring_publish); otherwise NULL with *err set to
 * DDMC_ENOTCONN, DDMC_EQFULL or DDMC_ETOOBIG. Thread: any; lock-free. */
ddmc__send_rec *ddmc__send_ring_reserve(ddmc__send_ring *r, size_t len, int *err);
void ddmc__send_ring_publish(ddmc__send_ring *r, ddmc__send_rec *rec, uint32_t kind);

static inline uint8_t *ddmc__send_rec_data(ddmc__send_rec *rec) { return (uint8_t *)(rec + 1); }
static inline uint32_t ddmc__send_rec_kind(ddmc__send_rec *rec) {
  return atomic_load_explicit(&rec->word, memory_order_relaxed) & 0xff;
}

/* Consumer (JDWP thread): the oldest published record of the open session, or NULL when there
 * is none (or the oldest is still being filled); records of an earlier session are dropped on
 * the way. ddmc__send_ring_pop consumes it; ddmc__send_ring_release hands the space consumed so far back
 * to producers (call it when done with a batch of pops). */
ddmc__send_rec *ddmc__send_ring_peek(ddmc__send_ring *r);
void ddmc__send_ring_pop(ddmc__send_ring *r);
void ddmc__send_ring_release(ddmc__send_ring *r);
/* Opens for a new session. JDWP thread. */
void ddmc__send_ring_open(ddmc__send_ring *r);
/* Closes and drops every record published so far (producers still filling one leave it to be
 * dropped later). JDWP thread. */
void ddmc__send_ring_close(ddmc__send_ring *r);

#endif
