/* SPDX-License-Identifier: Apache-2.0 */
/* Heap segment run-length encoder: the HPSG / HPSO / NHSG chunk payloads.
 *
 * What: turns the regions a VM reports from walk_heap (address order, free space included) into
 * finished chunk payloads of at most DDMC__HPSG_PAYLOAD_MAX bytes, each handed to an emit callback.
 * Why a separate, pure module: it runs on the GC thread with the world stopped, so it must not
 * allocate, lock or do I/O; and its output is what ddmlib parses byte by byte, so it is tested on
 * its own against exact vectors (tests/test_rle.c) and the host decoder (host/heapseg.c).
 * Load: one call per heap object, millions per dump; the common case (a small region that follows
 * the previous one) is the inline fast path below, a handful of instructions and no call.
 *
 * Chunk payload (docs/protocol/ddm-wire.md §3; Dalvik DdmHeap.cpp, ART HeapChunkContext):
 *   [u4]: heap id
 *   [u1]: allocation unit size, always 8
 *   [u4]: address of this piece's first unit, relative to the heap base, truncated to 32 bits
 *   [u4]: offset, always 0 (every piece carries its own address instead)
 *   [u4]: length of this piece in allocation units (the sum of its runs)
 *   then (state, units - 1) byte pairs:
 *   [u1]: state = P | U | K2 K1 K0 | S2 S1 S0  (P = 0x80: the run goes on in the next pair)
 *   [u1]: units - 1 of this pair
 *
 * Rules the encoder keeps (each one is what ddmlib's HeapSegment reader relies on):
 *   - bytes are rounded up to 8-byte units; a zero-byte region is ignored; no pair ever stands
 *     for zero units (Dalvik wrote a 0-unit run as 0xff, which reads as 256 units);
 *   - a run of n units is ceil(n/256) pairs: every pair but the last has P set and 255, the last
 *     has P clear and (n-1) % 256; the state repeats in every pair of the chain;
 *   - every chunk is self-contained: a P chain never crosses a chunk, the header's unit count is
 *     exactly the sum of the chunk's runs, and the header's address is that of its first run;
 *   - a region that does not start where the previous one ended (addr + units*8) begins a new
 *     segment: the current chunk is flushed and the next one carries the new address;
 *   - merge != 0 (HPSG): adjacent regions of one state become one run; merge == 0 (HPSO, NHSG):
 *     one run per region, so runs end at object boundaries;
 *   - a run that does not fit in what is left of the chunk: HPSO flushes first so the object
 *     stays one P chain; HPSG fills the chunk with a complete run and goes on in the next one (the
 *     unit map is identical and the dump is smaller). A run longer than one whole chunk can hold
 *     (DDMC__HPSG_PAIRS_MAX * 256 units, about 16 MiB) is cut into complete runs in both modes,
 *     where Dalvik dropped it with "chunk is too big to transmit".
 *
 * Addresses: the header field is 32 bits and ddmlib masks it with 0xffffffff (docs/protocol/ddm-wire.md §3), so the
 * encoder sends addr - base. A heap of up to 4 GiB above base keeps exact addresses, wherever it
 * is mapped; ddmlib's segment append (end address == next start) also needs that.
 *
 * Regions are expected to be 8-byte aligned (every allocator the VMs use is): a region that starts
 * inside the previous one's rounded-up last unit is treated as a new segment.
 *
 * Thread: any, one thread per encoder at a time. No allocation, no locks, no I/O except through
 * the emit callback, which is called only when a chunk is complete. */
#ifndef DDMC_HEAP_RLE_H
#define DDMC_HEAP_RLE_H

#include <stddef.h>
#include <stdint.h>

#define DDMC__HPSG_PAYLOAD_MAX 16368u /* 16384 - 16, Dalvik's HPSx_CHUNK_SIZE */
#define DDMC__HPSG_HEADER_LEN 17u
/* Pairs one chunk can hold: (16368 - 17) / 2 = 8175; a full chunk is 16367 bytes. */
#define DDMC__HPSG_PAIRS_MAX ((DDMC__HPSG_PAYLOAD_MAX - DDMC__HPSG_HEADER_LEN) / 2u)
#define DDMC__HPSG_UNIT 8u
#define DDMC__HPSG_PARTIAL 0x80u
#define DDMC__HPSG_STATE(solidity, kind) ((uint8_t)((((unsigned)(kind)&7u) << 3) | ((unsigned)(solidity)&7u)))

/* Receives one finished chunk payload, borrowed until it returns (the encoder reuses the buffer).
 * A non-zero return aborts the dump: the encoder keeps that value and returns it from every later
 * ddmc__heap_rle_add / ddmc__heap_rle_finish. */
typedef int (*ddmc__heap_rle_emit_fn)(void *arg, const uint8_t *payload, size_t len);

/* Caller-allocated (about 16 KiB: keep it in the VM state or a static, not a small stack).
 * All fields are private to rle.c and the inline fast path. */
typedef struct ddmc__heap_rle {
  /* hot: the fast path reads and writes only these */
  uint8_t *p;          /* next free pair slot in buf */
  uint8_t *lim;        /* fast-path pair writes allowed while p < lim; buf when they must not run */
  uintptr_t next;      /* end (rounded to units) of the last region accepted */
  size_t run_units;    /* HPSG: units of the pending run, which ends at next */
  uint32_t units;      /* units already written to the current chunk */
  uint8_t run_state;   /* HPSG: state of the pending run; 0x80 (never a masked state) = none */
  uint8_t merge;
  /* cold */
  int err;             /* first non-zero emit return; sticky */
  uint32_t heap_id;
  uintptr_t base;
  uintptr_t chunk_addr; /* address of the current chunk's first run */
  ddmc__heap_rle_emit_fn fn;
  void *arg;
  uint8_t buf[DDMC__HPSG_PAYLOAD_MAX];
} ddmc__heap_rle;

/* Starts a dump of one heap. heap_id goes into every header (1 for the managed heap); base is
 * subtracted from every address; merge selects HPSG (non-zero) or HPSO/NHSG (0). Cannot fail. */
void ddmc__heap_rle_init(ddmc__heap_rle *e, uint32_t heap_id, uintptr_t base, int merge, ddmc__heap_rle_emit_fn fn,
                    void *arg);

/* Out-of-line part of ddmc__heap_rle_add; units already rounded, state already without P. */
int ddmc__heap_rle_add_slow(ddmc__heap_rle *e, uintptr_t addr, size_t units, uint8_t state);

/* Adds the region [addr, addr + bytes) with state (DDMC__HPSG_STATE; a P bit is ignored). Regions
 * must come in address order. May call the emit callback (when a chunk fills up or a new segment
 * starts). Returns 0, or the emit callback's non-zero return (now or from an earlier call). */
static inline int ddmc__heap_rle_add(ddmc__heap_rle *e, uintptr_t addr, size_t bytes, uint8_t state) {
  /* (bytes + 7) / 8 without the overflow at SIZE_MAX */
  size_t units = (bytes >> 3) + ((bytes & 7u) != 0);
  state &= (uint8_t)~DDMC__HPSG_PARTIAL;
  if (e->merge) {
    if (addr == e->next) {
      /* HPSG: the same state continuing contiguously only lengthens the pending run */
      if (state == e->run_state) {
        e->run_units += units;
        e->next = addr + (units << 3);
        return 0;
      }
      /* another state: the pending run, if one pair and it fits, goes out here (a zero-byte
       * region must not replace it: the slow path ignores those) */
      if (e->run_units - 1 < 256 && units != 0 && e->p < e->lim) {
        e->p[0] = e->run_state;
        e->p[1] = (uint8_t)(e->run_units - 1);
        e->p += 2;
        e->units += (uint32_t)e->run_units;
        e->run_state = state;
        e->run_units = units;
        e->next = addr + (units << 3);
        return 0;
      }
    }
  } else if (addr == e->next && units - 1 < 256 && e->p < e->lim) {
    /* HPSO: one pair, room known; units - 1 < 256 also rejects 0 (it wraps) */
    e->p[0] = state;
    e->p[1] = (uint8_t)(units - 1);
    e->p += 2;
    e->units += (uint32_t)units;
    e->next = addr + (units << 3);
    return 0;
  }
  return ddmc__heap_rle_add_slow(e, addr, units, state);
}

/* Emits the pending run and the last, partly filled chunk (an empty chunk is never sent). The
 * encoder may then be reused for more regions of the same heap (they start a new chunk). Returns 0
 * or the sticky emit error. */
int ddmc__heap_rle_finish(ddmc__heap_rle *e);

#endif
