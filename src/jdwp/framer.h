/* SPDX-License-Identifier: Apache-2.0 */
/* JDWP framing without I/O: bytes go in with ddmc__jdwp_framer_feed, complete packets come out of
 * ddmc__jdwp_framer_next. The handshake is the framer's first state, so a peer that starts with
 * anything else is caught at its first wrong byte.
 *
 * Length fields are checked before memory is committed to them: the buffer grows only as bytes
 * actually arrive, and a header claiming more than max_packet fails at once. */
#ifndef DDMC_FRAMER_H
#define DDMC_FRAMER_H

#include "common.h"

#define DDMC__HANDSHAKE "JDWP-Handshake"
#define DDMC__HANDSHAKE_LEN 14
#define DDMC__HEADER_LEN 11
#define DDMC__FLAG_REPLY 0x80
#define DDMC__DDM_CMDSET 199
#define DDMC__DDM_CMD 1
#define DDMC__DDM_HEADER_LEN 19 /* JDWP header + [u4 type][u4 len] */

typedef struct ddmc__jdwp_packet {
  uint32_t len; /* whole packet, header included */
  uint32_t id;
  uint8_t flags;
  uint8_t cmd_set, cmd; /* command packets */
  uint16_t error;       /* reply packets */
  const uint8_t *body;  /* len - 11 bytes; valid until the next feed/next call */
  size_t body_len;
} ddmc__jdwp_packet;

/* Parses the 11-byte header at h. Returns 0, DDMC_EPROTO (length < 11, flags not 0x00/0x80) or
 * DDMC_ETOOBIG (length > max). */
int ddmc__jdwp_header_parse(const uint8_t *h, uint32_t max, ddmc__jdwp_packet *out);

/* Writes a command header for a DDM chunk: [u4 19+n][u4 id][u1 0][u1 199][u1 1][u4 type][u4 n]. */
void ddmc__jdwp_ddm_header_write(uint8_t *p, uint32_t id, uint32_t type, uint32_t n);
/* Writes a reply header: [u4 len][u4 id][u1 0x80][u2 error]. */
void ddmc__jdwp_reply_header_write(uint8_t *p, uint32_t len, uint32_t id, uint16_t error);

enum {
  DDMC__FRAME_NEED_MORE = 0,
  DDMC__FRAME_PACKET = 1,
  DDMC__FRAME_HANDSHAKE = 2 /* the 14 bytes arrived and matched */
};

typedef struct ddmc__jdwp_framer {
  const ddmc__mem *mem;
  uint32_t max_packet;
  int shaken;        /* handshake seen */
  size_t hs_have;    /* handshake bytes matched so far */
  uint8_t *buf;
  size_t start, len, cap; /* unconsumed bytes are buf[start, len) */
  int err;           /* sticky */
} ddmc__jdwp_framer;

void ddmc__jdwp_framer_init(ddmc__jdwp_framer *f, const ddmc__mem *mem, uint32_t max_packet);
void ddmc__jdwp_framer_free(ddmc__jdwp_framer *f);
/* Copies n bytes in. Returns 0 or DDMC_ENOMEM (sticky). */
int ddmc__jdwp_framer_feed(ddmc__jdwp_framer *f, const void *p, size_t n);
/* Returns DDMC__FRAME_*, or a sticky error: DDMC_EPROTO (bad handshake, bad header),
 * DDMC_ETOOBIG (length over the cap), DDMC_ENOMEM. */
int ddmc__jdwp_framer_next(ddmc__jdwp_framer *f, ddmc__jdwp_packet *pkt);

#endif
