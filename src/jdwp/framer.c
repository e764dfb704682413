/* SPDX-License-Identifier: Apache-2.0 */
/* JDWP framing: see framer.h. Load: every byte from the peer passes through here once; the
 * common case (many small requests in one read) parses in place without copying twice. */
#include <string.h>

#include "jdwp/framer.h"

int ddmc__jdwp_header_parse(const uint8_t *h, uint32_t max, ddmc__jdwp_packet *out) {
  uint32_t len = ddmc__get_u32(h);
  uint8_t flags = h[8];
  if (len < DDMC__HEADER_LEN) return DDMC_EPROTO;
  if (flags != 0 && flags != DDMC__FLAG_REPLY) return DDMC_EPROTO; /* likely not JDWP at all */
  if (len > max) return DDMC_ETOOBIG;
  out->len = len;
  out->id = ddmc__get_u32(h + 4);
  out->flags = flags;
  if (flags & DDMC__FLAG_REPLY) {
    out->cmd_set = out->cmd = 0;
    out->error = ddmc__get_u16(h + 9);
  } else {
    out->cmd_set = h[9];
    out->cmd = h[10];
    out->error = 0;
  }
  out->body = NULL;
  out->body_len = len - DDMC__HEADER_LEN;
  return 0;
}

void ddmc__jdwp_ddm_header_write(uint8_t *p, uint32_t id, uint32_t type, uint32_t n) {
  ddmc__put_u32(p, DDMC__DDM_HEADER_LEN + n);
  ddmc__put_u32(p + 4, id);
  p[8] = 0;
  p[9] = DDMC__DDM_CMDSET;
  p[10] = DDMC__DDM_CMD;
  ddmc__put_u32(p + 11, type);
  ddmc__put_u32(p + 15, n);
}

void ddmc__jdwp_reply_header_write(uint8_t *p, uint32_t len, uint32_t id, uint16_t error) {
  ddmc__put_u32(p, len);
  ddmc__put_u32(p + 4, id);
  p[8] = DDMC__FLAG_REPLY;
  ddmc__put_u16(p + 9, error);
}

void ddmc__jdwp_framer_init(ddmc__jdwp_framer *f, const ddmc__mem *mem, uint32_t max_packet) {
  memset(f, 0, sizeof(*f));
  f->mem = mem;
  f->max_packet = max_packet < DDMC__HEADER_LEN ? DDMC__HEADER_LEN : max_packet;
}

void ddmc__jdwp_framer_free(ddmc__jdwp_framer *f) {
  ddmc__free(f->mem, f->buf);
  f->buf = NULL;
  f->start = f->len = f->cap = 0;
}

int ddmc__jdwp_framer_feed(ddmc__jdwp_framer *f, const void *p, size_t n) {
  if (f->err) return f->err;
  if (n == 0) return 0;
  if (f->start > 0 && (f->start == f->len || f->start >= f->cap / 2)) {
    /* Reclaim consumed space before growing: the steady state needs no allocation. */
    memmove(f->buf, f->buf + f->start, f->len - f->start);
    f->len -= f->start;
    f->start = 0;
  }
  if (f->len + n > f->cap) {
    size_t cap = f->cap ? f->cap : 4096;
    while (cap < f->len + n) cap *= 2;
    uint8_t *nb = ddmc__realloc(f->mem, f->buf, cap);
    if (nb == NULL) return f->err = DDMC_ENOMEM;
    f->buf = nb;
    f->cap = cap;
  }
  memcpy(f->buf + f->len, p, n);
  f->len += n;
  return 0;
}

int ddmc__jdwp_framer_next(ddmc__jdwp_framer *f, ddmc__jdwp_packet *pkt) {
  if (f->err) return f->err;
  size_t avail = f->len - f->start;
  const uint8_t *p = f->buf + f->start;
  if (!f->shaken) {
    /* Compare byte by byte as they come: a web browser fails at its first byte, and a split
     * handshake is fine. */
    while (avail > 0 && f->hs_have < DDMC__HANDSHAKE_LEN) {
      if (*p != (uint8_t)DDMC__HANDSHAKE[f->hs_have]) return f->err = DDMC_EPROTO;
      p++;
      avail--;
      f->start++;
      f->hs_have++;
    }
    if (f->hs_have < DDMC__HANDSHAKE_LEN) return DDMC__FRAME_NEED_MORE;
    f->shaken = 1;
    return DDMC__FRAME_HANDSHAKE;
  }
  if (avail < DDMC__HEADER_LEN) return DDMC__FRAME_NEED_MORE;
  int rc = ddmc__jdwp_header_parse(p, f->max_packet, pkt);
  if (rc != 0) return f->err = rc;
  if (avail < pkt->len) return DDMC__FRAME_NEED_MORE;
  pkt->body = p + DDMC__HEADER_LEN;
  f->start += pkt->len;
  return DDMC__FRAME_PACKET;
}
