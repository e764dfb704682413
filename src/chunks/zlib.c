/* SPDX-License-Identifier: Apache-2.0 */
/* ZLIB: the draft's compressed chunk, which no shipped host speaks
 * (docs/protocol/ddm-wire.md §4).
 *
 * The form libddmc uses, in both directions:
 *   chunk type 'ZLIB', payload [u4 compressed len][u4 inner type][u4 inner len][zlib stream]
 * where the zlib stream (RFC 1950, as zlib's compress2 writes it) is exactly 'compressed len'
 * bytes, the chunk length is 12 + compressed len, and it inflates to exactly 'inner len' bytes
 * of the inner chunk's payload.
 *
 * Opt-in: a peer that sends any ZLIB chunk has shown it understands them; from then until it
 * disconnects, outgoing chunks of at least opt.zlib_threshold bytes are compressed when that
 * makes them smaller. A peer that never sends one (ddmlib, Android Studio) never receives one.
 * Incoming inner lengths are capped at the packet cap before anything is allocated. */
#include <zlib.h>

#include "vm_int.h"

/* zlib's own allocations go through the VM's allocator too. */
static voidpf z_alloc(voidpf opaque, uInt items, uInt size) {
  return ddmc__calloc(opaque, items, size);
}
static void z_free(voidpf opaque, voidpf p) { ddmc__free(opaque, p); }

int ddmc__chunk_zlib_unwrap(const ddmc__mem *mem, const uint8_t *p, size_t n, size_t cap, uint32_t *inner_type,
                            ddmc_buf *out) {
  if (n < 12) return DDMC_EPROTO;
  uint32_t clen = ddmc__get_u32(p);
  uint32_t type = ddmc__get_u32(p + 4);
  uint32_t ilen = ddmc__get_u32(p + 8);
  if (clen != n - 12) return DDMC_EPROTO;
  if (ilen > cap) return DDMC_ETOOBIG;
  ddmc__buf_reset(out);
  uint8_t *dst = ddmc__buf_append(out, ilen);
  if (dst == NULL && ilen > 0) return out->err;
  z_stream zs = {0};
  zs.zalloc = z_alloc;
  zs.zfree = z_free;
  zs.opaque = (voidpf)mem;
  if (inflateInit(&zs) != Z_OK) return DDMC_ENOMEM;
  zs.next_in = (Bytef *)(p + 12);
  zs.avail_in = clen;
  uint8_t spare;
  zs.next_out = ilen ? dst : &spare;
  zs.avail_out = ilen;
  int zr = inflate(&zs, Z_FINISH);
  /* Exactly ilen bytes, the stream ends there, and nothing follows it. */
  int ok = zr == Z_STREAM_END && zs.avail_out == 0 && zs.avail_in == 0;
  inflateEnd(&zs);
  if (zr == Z_MEM_ERROR) return DDMC_ENOMEM;
  if (!ok) return DDMC_EPROTO;
  *inner_type = type;
  return 0;
}

int ddmc__chunk_zlib_wrap(uint32_t type, const uint8_t *p, size_t n, ddmc_buf *out) {
  if (n > UINT32_MAX) return DDMC_ETOOBIG;
  uLong bound = compressBound((uLong)n);
  size_t at = out->len;
  uint8_t *h = ddmc__buf_append(out, 12 + (size_t)bound);
  if (h == NULL) return out->err;
  z_stream zs = {0};
  zs.zalloc = z_alloc;
  zs.zfree = z_free;
  zs.opaque = (voidpf)out->mem;
  if (deflateInit(&zs, Z_BEST_SPEED) != Z_OK) {
    out->len = at;
    return DDMC_ENOMEM;
  }
  zs.next_in = (Bytef *)p;
  zs.avail_in = (uInt)n;
  zs.next_out = h + 12;
  zs.avail_out = (uInt)bound;
  int zr = deflate(&zs, Z_FINISH);
  uLong clen = zs.total_out;
  deflateEnd(&zs);
  if (zr != Z_STREAM_END) {
    out->len = at;
    return DDMC_ENOMEM;
  }
  ddmc__put_u32(h, (uint32_t)clen);
  ddmc__put_u32(h + 4, type);
  ddmc__put_u32(h + 8, (uint32_t)n);
  out->len -= (size_t)(bound - clen);
  return 0;
}
