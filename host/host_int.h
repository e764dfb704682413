/* SPDX-License-Identifier: Apache-2.0 */
/* Private helpers shared by the ddmc_host sources: big-endian access (by bytes, so unaligned
 * packet fields are never dereferenced as wider integers) and a bounded reader. Not installed. */
#ifndef DDMC_HOST_INT_H
#define DDMC_HOST_INT_H

#include <stddef.h>
#include <stdint.h>

static inline uint16_t ddmc_host__get16(const uint8_t *p) {
  return (uint16_t)(((unsigned)p[0] << 8) | p[1]);
}
static inline uint32_t ddmc_host__get32(const uint8_t *p) {
  return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}
static inline uint64_t ddmc_host__get64(const uint8_t *p) {
  return ((uint64_t)ddmc_host__get32(p) << 32) | ddmc_host__get32(p + 4);
}
static inline void ddmc_host__put32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

/* Bounded cursor: a read past the end returns 0 and sets err, which then sticks, so a chain of
 * reads needs one check at the end (the ddmc_reader idea, re-done here to stay independent). */
typedef struct ddmc_host__rd {
  const uint8_t *p, *end;
  int err;
} ddmc_host__rd;

static inline size_t ddmc_host__left(const ddmc_host__rd *r) {
  return r->err ? 0 : (size_t)(r->end - r->p);
}
static inline const uint8_t *ddmc_host__take(ddmc_host__rd *r, size_t n) {
  if (r->err || (size_t)(r->end - r->p) < n) {
    r->err = 1;
    return NULL;
  }
  const uint8_t *q = r->p;
  r->p += n;
  return q;
}
static inline uint8_t ddmc_host__u8(ddmc_host__rd *r) {
  const uint8_t *q = ddmc_host__take(r, 1);
  return q ? q[0] : 0;
}
static inline uint16_t ddmc_host__u16(ddmc_host__rd *r) {
  const uint8_t *q = ddmc_host__take(r, 2);
  return q ? ddmc_host__get16(q) : 0;
}
static inline uint32_t ddmc_host__u32(ddmc_host__rd *r) {
  const uint8_t *q = ddmc_host__take(r, 4);
  return q ? ddmc_host__get32(q) : 0;
}
static inline uint64_t ddmc_host__u64(ddmc_host__rd *r) {
  const uint8_t *q = ddmc_host__take(r, 8);
  return q ? ddmc_host__get64(q) : 0;
}

/* Shared by the blocking connection (conn.c) and the reader fed bytes (reader.c): */
struct ddmc_host_packet;
/* An 11-byte header: *len set; 0, DDMC_EPROTO (length < 11, flags not 0x00/0x80), DDMC_ETOOBIG. */
int ddmc_host__check_header(const uint8_t *p, uint32_t max_packet, uint32_t *len);
/* The header fields and DDM view of the whole packet d (len bytes, header checked); a reply is
 * viewed as DDM when reply_is_ddm and it has >= 8 body bytes. Pointers into d. 0 or DDMC_EPROTO
 * (pkt zeroed). No inflation. */
int ddmc_host__packet_view(const uint8_t *d, uint32_t len, int reply_is_ddm, struct ddmc_host_packet *pkt);
/* Is p (avail bytes) the start of a whole-looking DDM command packet that overtook the handshake
 * echo? 1 (*len set), 0 (no), -1 (cannot tell yet: fewer than 11 bytes). */
int ddmc_host__early_ddm_packet(const uint8_t *p, size_t avail, uint32_t max_packet, uint32_t *len);

#endif
