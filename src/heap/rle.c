/* SPDX-License-Identifier: Apache-2.0 */
/* Heap segment run-length encoder, slow path: new segments, long runs, full chunks, flushing.
 * The wire layout and the rules are in rle.h; the per-object fast path is inline there. This file
 * runs about once per state change (HPSG) or per 8175 objects / long object (HPSO), so it favours
 * clarity over speed. */
#include "heap/rle.h"

#include <assert.h>
#include <string.h>

#define RLE_NO_STATE 0x80u /* never equal to a state with P masked off: keeps the HPSG fast path off */

static uint8_t *rle__put_u32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
  return p + 4;
}

static int rle__chunk_empty(const ddmc__heap_rle *e) {
  return e->p == e->buf + DDMC__HPSG_HEADER_LEN;
}

/* Turns both fast paths off for good: every later add reaches the slow path and its error check. */
static void rle__fail(ddmc__heap_rle *e, int rc) {
  e->err = rc;
  e->lim = e->buf;
  e->run_state = RLE_NO_STATE;
  e->run_units = 0;
}

/* Sends the current chunk if it has any run, and starts an empty one. The header is written last
 * because its unit count is only known now (Dalvik patched a 0x55555555 placeholder). */
static int rle__flush(ddmc__heap_rle *e) {
  if (rle__chunk_empty(e))
    return 0;
  size_t len = (size_t)(e->p - e->buf);
  assert(len <= DDMC__HPSG_PAYLOAD_MAX && e->units > 0);
  uint8_t *h = e->buf;
  h = rle__put_u32(h, e->heap_id);        /* [u4] heap id */
  *h++ = DDMC__HPSG_UNIT;                 /* [u1] allocation unit */
  /* [u4] address of the first run, relative to base so that heaps mapped above 4 GiB survive
   * the 32-bit field (ddmlib masks it to 32 bits anyway) */
  h = rle__put_u32(h, (uint32_t)(e->chunk_addr - e->base));
  h = rle__put_u32(h, 0);                 /* [u4] offset: each piece has its own address */
  rle__put_u32(h, e->units);              /* [u4] units in this piece = sum of its runs */
  e->p = e->buf + DDMC__HPSG_HEADER_LEN;
  e->units = 0;
  int rc = e->fn(e->arg, e->buf, len);
  if (rc != 0)
    rle__fail(e, rc);
  return rc;
}

/* Writes a run of units (> 0) starting at addr as complete P chains, flushing as chunks fill.
 * A chain never crosses a chunk: ddmlib would parse a chunk ending in P as truncated, and the
 * header's unit count could not match. */
static int rle__put_run(ddmc__heap_rle *e, uintptr_t addr, size_t units, uint8_t state) {
  while (units > 0) {
    size_t room = (size_t)(e->buf + DDMC__HPSG_PAYLOAD_MAX - e->p) / 2;
    size_t need = (units - 1) / 256 + 1;
    size_t n = units;
    if (need > room) {
      /* Flush first when the chunk is full, or (HPSO) when the whole object would fit a fresh
       * chunk: HPSO runs stand for objects, so keep each one in one chain where possible. */
      if (!rle__chunk_empty(e) && (room == 0 || (!e->merge && need <= DDMC__HPSG_PAIRS_MAX))) {
        int rc = rle__flush(e);
        if (rc != 0)
          return rc;
        continue;
      }
      n = room * 256; /* cut: a complete run that fills the chunk, the rest goes on after */
    }
    if (rle__chunk_empty(e))
      e->chunk_addr = addr;
    uint8_t *p = e->p;
    size_t left = n;
    while (left > 256) {
      p[0] = (uint8_t)(state | DDMC__HPSG_PARTIAL);
      p[1] = 255;
      p += 2;
      left -= 256;
    }
    p[0] = state;
    p[1] = (uint8_t)(left - 1);
    e->p = p + 2;
    e->units += (uint32_t)n; /* n <= 8175 * 256: fits */
    addr += (uintptr_t)n << 3;
    units -= n;
  }
  return 0;
}

void ddmc__heap_rle_init(ddmc__heap_rle *e, uint32_t heap_id, uintptr_t base, int merge, ddmc__heap_rle_emit_fn fn,
                    void *arg) {
  e->p = e->buf + DDMC__HPSG_HEADER_LEN;
  e->lim = e->buf; /* the first region goes through the slow path, which sets up the segment */
  e->next = base;
  e->run_units = 0;
  e->units = 0;
  e->run_state = RLE_NO_STATE;
  e->merge = merge != 0;
  e->err = 0;
  e->heap_id = heap_id;
  e->base = base;
  e->chunk_addr = base;
  e->fn = fn;
  e->arg = arg;
}

/* HPSG: writes the pending run (which ends at next) into the chunk and clears it. */
static int rle__put_pending(ddmc__heap_rle *e) {
  size_t n = e->run_units;
  uint8_t state = e->run_state;
  e->run_units = 0;
  e->run_state = RLE_NO_STATE;
  if (n == 0)
    return 0;
  return rle__put_run(e, e->next - ((uintptr_t)n << 3), n, state);
}

int ddmc__heap_rle_add_slow(ddmc__heap_rle *e, uintptr_t addr, size_t units, uint8_t state) {
  if (e->err != 0)
    return e->err;
  if (units == 0)
    return 0; /* nothing to describe, and no reason to start a segment */
  int rc = 0;
  if (e->merge) {
    rc = rle__put_pending(e);
    if (rc == 0 && addr != e->next)
      rc = rle__flush(e); /* new segment: the next chunk carries its own address */
    if (rc != 0)
      return rc;
    e->run_state = state;
    e->run_units = units;
  } else {
    if (addr != e->next)
      rc = rle__flush(e);
    if (rc == 0)
      rc = rle__put_run(e, addr, units, state);
    if (rc != 0)
      return rc;
  }
  /* The fast path may write pairs only into a chunk that has its first run, hence its address:
   * HPSO just wrote one; HPSG after a new segment or a flush holds only a pending run, so its next
   * state change comes back here and put_run sets chunk_addr. p < lim: room for one more pair. */
  e->lim = rle__chunk_empty(e) ? e->buf : e->buf + DDMC__HPSG_PAYLOAD_MAX - 1;
  e->next = addr + ((uintptr_t)units << 3);
  return 0;
}

int ddmc__heap_rle_finish(ddmc__heap_rle *e) {
  if (e->err != 0)
    return e->err;
  int rc = rle__put_pending(e);
  if (rc == 0)
    rc = rle__flush(e);
  if (rc != 0)
    return rc;
  e->lim = e->buf;
  return 0;
}
