/* SPDX-License-Identifier: Apache-2.0 */
/* Heap segment chunk decoder (see heapseg.h). Two passes over the pairs: the first validates
 * the whole chunk, the second reports runs, so a caller never sees half of a chunk it must reject
 * (the monitor draws what it gets). Each pass is one linear scan; chunks are at most ~16 KiB. */
#include "heapseg.h"

#include "ddmc/error.h"

static uint32_t hs__get_u32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

int ddmc_host_heapseg_parse(const uint8_t *payload, size_t len, ddmc_host_heapseg *out) {
  if (out == NULL || (payload == NULL && len > 0))
    return DDMC_EINVAL;
  if (len < DDMC_HOST_HEAPSEG_HEADER_LEN)
    return DDMC_EPROTO;
  out->heap_id = hs__get_u32(payload);
  out->unit = payload[4];
  out->addr = hs__get_u32(payload + 5);
  out->offset = hs__get_u32(payload + 9);
  out->units = hs__get_u32(payload + 13);
  out->pairs = payload + DDMC_HOST_HEAPSEG_HEADER_LEN;
  out->pairs_len = len - DDMC_HOST_HEAPSEG_HEADER_LEN;
  if (out->unit == 0)
    return DDMC_EPROTO; /* every run would be 0 bytes long: nothing meaningful to draw */
  return 0;
}

/* Reads the run starting at *pp (a P chain counts as one run). Returns its units, or 0 for a
 * malformed chain; bounded by the chunk length, so a uint64_t cannot overflow. */
static uint64_t hs__run(const uint8_t **pp, const uint8_t *end, uint8_t *state) {
  const uint8_t *p = *pp;
  uint8_t s = p[0];
  uint64_t units = (uint64_t)p[1] + 1;
  p += 2;
  while (s & DDMC_HOST_HEAPSEG_PARTIAL) {
    if (p == end)
      return 0; /* P on the last pair: the run has no end */
    if ((p[0] & ~DDMC_HOST_HEAPSEG_PARTIAL) != (s & ~DDMC_HOST_HEAPSEG_PARTIAL))
      return 0; /* ddmlib: "State mismatch" */
    s = p[0];
    units += (uint64_t)p[1] + 1;
    p += 2;
  }
  *pp = p;
  *state = s;
  return units;
}

int ddmc_host_heapseg_decode(const ddmc_host_heapseg *seg, ddmc_host_run_fn fn, void *arg) {
  if (seg == NULL || (seg->pairs == NULL && seg->pairs_len > 0))
    return DDMC_EINVAL;
  if (seg->pairs_len % 2 != 0)
    return DDMC_EPROTO;
  if (seg->pairs_len == 0) /* also keeps NULL + 0 (undefined in C) out of the loops below */
    return seg->units == 0 ? 0 : DDMC_EPROTO;
  const uint8_t *end = seg->pairs + seg->pairs_len;
  uint64_t total = 0;
  uint8_t state = 0;
  for (const uint8_t *p = seg->pairs; p != end;) {
    uint64_t units = hs__run(&p, end, &state);
    if (units == 0)
      return DDMC_EPROTO;
    total += units; /* <= pairs_len * 128: no overflow */
    if (total > seg->units)
      return DDMC_EPROTO;
  }
  if (total != seg->units)
    return DDMC_EPROTO;
  if (fn == NULL)
    return 0;
  uint32_t at = 0;
  for (const uint8_t *p = seg->pairs; p != end;) {
    uint32_t units = (uint32_t)hs__run(&p, end, &state); /* validated above: <= seg->units */
    int rc = fn(arg, at, units, (uint8_t)(state & ~DDMC_HOST_HEAPSEG_PARTIAL));
    if (rc != 0)
      return rc;
    at += units;
  }
  return 0;
}
