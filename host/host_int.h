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

#endif
