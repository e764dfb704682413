/* SPDX-License-Identifier: Apache-2.0 */
/* The ring of recent allocations (alloc_track.c writes it, alloc_report.c reads it).
 *
 * Record n (n counts every record since tracking was enabled) lives in slot n % cap as 64-bit
 * words, all accessed atomically (relaxed) so a reader racing with writers reads stale or mixed
 * values, never undefined ones:
 *   [0] seq      2n+1 while record n is written, 2n+2 once it is complete (0: never written)
 *   [1] thread (low 32 bits) | frame count << 32
 *   [2] class of the new object (ddmc_class)
 *   [3] size in bytes
 *   [4 + 2i] frame i's class, [5 + 2i] frame i's method (low 32) | instruction index (high 32,
 *            signed; -1 for a native frame)
 * A writer takes n with one fetch-add on head, so writers never wait for each other; a reader
 * (the REAL report) keeps a copy only if seq read 2n+2 both before and after it copied. Two
 * writers in one slot (the ring lapped a writer that was descheduled mid-record) can leave a
 * record that passes the check with fields of both: every value in it still came from the VM,
 * and the report resolves each through the bridge, which checks what it is given. */
#ifndef DDMC_PROFILE_ALLOC_RING_H
#define DDMC_PROFILE_ALLOC_RING_H

#include <stdatomic.h>

#include "common.h"

typedef struct ddmc__prof_alloc_ring {
  uint32_t cap;   /* records; a power of two */
  uint32_t depth; /* frames kept per record */
  uint32_t words; /* words per record: 4 + 2 * depth */
  _Atomic uint64_t head;
  uint64_t *w;
} ddmc__prof_alloc_ring;

#define DDMC__AREC_WORDS(depth) (4u + 2u * (depth))

/* A record as the report reads it. */
typedef struct ddmc__prof_alloc_rec {
  uint32_t thread;
  ddmc_class cls;
  uint64_t bytes;
  uint32_t nframes;
  ddmc_location frames[64];
} ddmc__prof_alloc_rec;

ddmc__prof_alloc_ring *ddmc__prof_alloc_ring_new(const ddmc__mem *mem, uint32_t cap, uint32_t depth);
void ddmc__prof_alloc_ring_free(const ddmc__mem *mem, ddmc__prof_alloc_ring *r);
/* Writes record n (the caller took n from head). Thread: any. */
void ddmc__prof_alloc_ring_put(ddmc__prof_alloc_ring *r, uint64_t n, uint32_t thread, ddmc_class cls, uint64_t bytes,
                               const ddmc_location *frames, uint32_t nframes);
/* Copies record n if it is complete and still there. Returns 1 if *out holds it, else 0. */
int ddmc__prof_alloc_ring_get(const ddmc__prof_alloc_ring *r, uint64_t n, ddmc__prof_alloc_rec *out);

/* The REAL payload for the records of r (NULL: tracking off, an empty report), newest first,
 * names resolved through names. Stops early (a shorter report) when a string table would pass
 * 65535 strings or max_entries is reached. Returns 0 or the buf/allocation error. */
struct ddmc__prof_names;
int ddmc__prof_alloc_report(const ddmc__prof_alloc_ring *r, struct ddmc__prof_names *names, const ddmc__mem *mem,
                            uint32_t max_entries, ddmc_buf *out);

#endif
