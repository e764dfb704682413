/* SPDX-License-Identifier: Apache-2.0 */
/* Host side of the heap segment chunks (HPSG, HPSO, NHSG): header parsing and run decoding.
 *
 * Used by the ddmc monitor tool, the tests and a fuzzer, so every input is treated as hostile:
 * no read goes past len, no count can overflow, and a malformed chunk is rejected whole before any
 * run is reported. The rules are ddmlib's (HeapSegment.java) plus the checks its own TODO lists
 * ("make sure the number of elements matches", "make sure the last element doesn't have P set").
 *
 * Payload, as src/heap/rle.h writes it:
 *   [u4]: heap id
 *   [u1]: allocation unit size in bytes (8; any non-zero value is accepted)
 *   [u4]: segment start address (32 bits; libddmc sends it relative to the heap base)
 *   [u4]: offset of this piece from that address, in bytes (libddmc and Dalvik/ART send 0)
 *   [u4]: length of this piece in allocation units
 *   then (state, units - 1) byte pairs; state = P | U | K2..K0 | S2..S0, P = 0x80 meaning the run
 *   continues in the next pair, which must carry the same state.
 *
 * Thread: any; no global state. */
#ifndef DDMC_HOST_HEAPSEG_H
#define DDMC_HOST_HEAPSEG_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DDMC_HOST_HEAPSEG_HEADER_LEN 17u
#define DDMC_HOST_HEAPSEG_PARTIAL 0x80u
#define DDMC_HOST_HEAPSEG_SOLIDITY(state) ((state)&7u)       /* ddmc_heap_solidity */
#define DDMC_HOST_HEAPSEG_KIND(state) (((state) >> 3) & 7u)  /* ddmc_heap_kind */

/* One parsed chunk. pairs points into the caller's payload (borrowed: valid as long as it is). */
typedef struct ddmc_host_heapseg {
  uint32_t heap_id;
  uint8_t unit;        /* bytes per allocation unit, never 0 */
  uint32_t addr;       /* segment start address */
  uint32_t offset;     /* bytes from addr to this piece's first unit */
  uint32_t units;      /* units this piece describes */
  const uint8_t *pairs;
  size_t pairs_len;    /* bytes, not pairs; checked by ddmc_host_heapseg_decode */
} ddmc_host_heapseg;

/* Reads the 17-byte header of payload[0..len) into out; does not look at the pairs.
 * Returns 0; DDMC_EINVAL if payload (with len > 0) or out is NULL; DDMC_EPROTO if len < 17 or the
 * unit size is 0. */
int ddmc_host_heapseg_parse(const uint8_t *payload, size_t len, ddmc_host_heapseg *out);

/* One run: unit_offset units from the start of the piece (so its address is
 * addr + offset + unit_offset * unit), units >= 1 units long, state with P cleared. A P chain is
 * one run (in HPSO, one object). A non-zero return stops decoding and is returned. */
typedef int (*ddmc_host_run_fn)(void *arg, uint32_t unit_offset, uint32_t units, uint8_t state);

/* Checks every pair of seg, then (only if all is well) calls fn, which may be NULL, for each run
 * in order. Rejected with DDMC_EPROTO: an odd number of pair bytes; a P pair that is the last one;
 * a P pair followed by a pair with another state (ddmlib: "State mismatch"); runs that add up to
 * more or fewer units than seg->units. Returns 0, DDMC_EINVAL (seg NULL), DDMC_EPROTO, or fn's
 * non-zero return. */
int ddmc_host_heapseg_decode(const ddmc_host_heapseg *seg, ddmc_host_run_fn fn, void *arg);

#ifdef __cplusplus
}
#endif

#endif
