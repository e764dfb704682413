/* SPDX-License-Identifier: Apache-2.0 */
/* The bytes of a heap dump while it is built: a chain of fixed-size blocks (no copy on growth,
 * streamed to the peer or written to a file from the blocks themselves), big-endian as hprof is,
 * with a sticky error and a cap on the total. Pure: no I/O, no VM. Thread: one user at a time.
 *
 * Writes check the room left in the current block and copy; only every block's worth of bytes
 * takes the slow path (a new block, and the cap). So the memory in use is at most the cap plus
 * one block, and a write past the cap sets DDMC_ETOOBIG. */
#ifndef DDMC_PROFILE_HPROF_OUT_H
#define DDMC_PROFILE_HPROF_OUT_H

#include <string.h>

#include "common.h"

#define DDMC__HPBLK_BYTES ((size_t)1 << 20)

typedef struct ddmc__prof_hpblk {
  struct ddmc__prof_hpblk *next;
  size_t len; /* bytes used; the tail's is settled by ddmc__prof_hpout_finish */
  uint8_t data[];
} ddmc__prof_hpblk;

typedef struct ddmc__prof_hpout {
  const ddmc__mem *mem;
  ddmc__prof_hpblk *head, *tail;
  uint8_t *p, *end; /* free space of the tail */
  uint64_t base;    /* bytes in the blocks before the tail */
  uint64_t max;
  int err;
  /* Where a new block comes from before the allocator, if set: a block a writer is done with
   * (hprof_file.c), so a dump written beside its build cycles through a few hot blocks instead
   * of mapping fresh memory for every MiB. NULL: none to spare. */
  ddmc__prof_hpblk *(*spare)(void *arg);
  void *spare_arg;
} ddmc__prof_hpout;

void ddmc__prof_hpout_init(ddmc__prof_hpout *o, const ddmc__mem *mem, uint64_t max);
void ddmc__prof_hpout_free(ddmc__prof_hpout *o);
/* Bytes written so far. */
static inline uint64_t ddmc__prof_hpout_pos(const ddmc__prof_hpout *o) {
  return o->tail ? o->base + (uint64_t)(o->p - o->tail->data) : 0;
}
/* Slow path: a new block with room for at least n contiguous bytes (n <= DDMC__HPBLK_BYTES).
 * Returns where they go, or NULL with err set. */
uint8_t *ddmc__prof_hpout_grow(ddmc__prof_hpout *o, size_t n);
/* n contiguous bytes (n <= DDMC__HPBLK_BYTES) to fill in; NULL once an error is set. */
static inline uint8_t *ddmc__prof_hpout_room(ddmc__prof_hpout *o, size_t n) {
  if ((size_t)(o->end - o->p) >= n) {
    uint8_t *r = o->p;
    o->p += n;
    return r;
  }
  return ddmc__prof_hpout_grow(o, n);
}
static inline void ddmc__prof_hp_u1(ddmc__prof_hpout *o, uint8_t v) {
  uint8_t *d = ddmc__prof_hpout_room(o, 1);
  if (d) d[0] = v;
}
static inline void ddmc__prof_hp_u2(ddmc__prof_hpout *o, uint16_t v) {
  uint8_t *d = ddmc__prof_hpout_room(o, 2);
  if (d) ddmc__put_u16(d, v);
}
static inline void ddmc__prof_hp_u4(ddmc__prof_hpout *o, uint32_t v) {
  uint8_t *d = ddmc__prof_hpout_room(o, 4);
  if (d) ddmc__put_u32(d, v);
}
static inline void ddmc__prof_hp_u8(ddmc__prof_hpout *o, uint64_t v) {
  uint8_t *d = ddmc__prof_hpout_room(o, 8);
  if (d) {
    ddmc__put_u32(d, (uint32_t)(v >> 32));
    ddmc__put_u32(d + 4, (uint32_t)v);
  }
}
/* Any number of bytes, across blocks. */
void ddmc__prof_hp_bytes(ddmc__prof_hpout *o, const void *p, size_t n);
/* count elements of width 1, 2, 4 or 8 bytes in the host's order, written big-endian. */
void ddmc__prof_hp_elements(ddmc__prof_hpout *o, const void *p, size_t count, unsigned width);

/* Settles the tail's length and returns the sticky error (DDMC_ETOOBIG past the cap). */
int ddmc__prof_hpout_finish(ddmc__prof_hpout *o);
/* Appends src's blocks to dst (both finished); src is left empty. */
void ddmc__prof_hpout_append(ddmc__prof_hpout *dst, ddmc__prof_hpout *src);

#endif
