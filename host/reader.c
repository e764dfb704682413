/* SPDX-License-Identifier: Apache-2.0 */
/* The reader fed bytes (ddmc_host.h, "A reader fed bytes"): adb's verdicts and length-prefixed
 * messages, the JDWP handshake echo and packet framing, with the I/O left to the caller. The
 * blocking connection (conn.c) and `ddmc ps` (tools/cmd_ps.c) share its rules: one packet view
 * (ddmc_host__packet_view), one header check, one reading of a length prefix. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddmc_host.h"
#include "host_int.h"

#define HANDSHAKE DDMC_HOST_HANDSHAKE
#define HANDSHAKE_LEN DDMC_HOST_HANDSHAKE_LEN
#define ADB_ITEM_MAX (4u + 65535u)

struct ddmc_host_reader {
  ddmc_host_expect want;
  uint32_t max_packet;
  uint8_t *buf; /* fed bytes; [pos, len) not yet taken */
  size_t cap, pos, len;
  char *text; /* FAIL's message or a message's body, NUL-terminated (ADB_ITEM_MAX bytes) */
  int err;    /* sticky */
  char why[200];
};

int ddmc_host__check_header(const uint8_t *p, uint32_t max_packet, uint32_t *len) {
  *len = ddmc_host__get32(p);
  if (*len < DDMC_HOST_HEADER_LEN) return DDMC_EPROTO;
  if (*len > max_packet) return DDMC_ETOOBIG;
  /* Only 0x00 (command) and 0x80 (reply) exist; anything else after a handshake that passed is
   * most likely not JDWP at all. */
  if (p[8] != 0 && p[8] != DDMC_HOST_FLAG_REPLY) return DDMC_EPROTO;
  return 0;
}

int ddmc_host__packet_view(const uint8_t *d, uint32_t len, int reply_is_ddm, ddmc_host_packet *pkt) {
  memset(pkt, 0, sizeof *pkt);
  pkt->length = len;
  pkt->id = ddmc_host__get32(d + 4);
  pkt->is_reply = (d[8] & DDMC_HOST_FLAG_REPLY) != 0;
  pkt->body = d + DDMC_HOST_HEADER_LEN;
  pkt->body_len = len - DDMC_HOST_HEADER_LEN;
  if (pkt->is_reply) {
    pkt->error = ddmc_host__get16(d + 9);
    pkt->is_ddm = reply_is_ddm && pkt->body_len >= 8;
  } else {
    pkt->cmd_set = d[9];
    pkt->cmd = d[10];
    pkt->is_ddm = pkt->cmd_set == DDMC_HOST_DDM_CMDSET && pkt->cmd == DDMC_HOST_DDM_CMD;
    if (pkt->is_ddm && pkt->body_len < 8) goto bad;
  }
  if (pkt->is_ddm) {
    uint32_t clen = ddmc_host__get32(pkt->body + 4);
    /* Written so it cannot wrap: the chunk must fit in what follows its 8-byte header. */
    if (clen > pkt->body_len - 8) goto bad;
    pkt->chunk_type = ddmc_host__get32(pkt->body);
    pkt->chunk = pkt->body + 8;
    pkt->chunk_len = clen;
  }
  return 0;
bad:
  memset(pkt, 0, sizeof *pkt);
  return DDMC_EPROTO;
}

int ddmc_host__early_ddm_packet(const uint8_t *p, size_t avail, uint32_t max_packet, uint32_t *len) {
  if (avail < DDMC_HOST_HEADER_LEN) return -1;
  *len = ddmc_host__get32(p);
  return *len >= DDMC_HOST_HEADER_LEN + 8 && *len <= max_packet && p[8] == 0 && p[9] == DDMC_HOST_DDM_CMDSET &&
         p[10] == DDMC_HOST_DDM_CMD;
}

/* "-004" (2d 30 30 34): 4 bytes as text (a byte outside printable ASCII, or '\', as '.') and hex. */
static const char *show4(const uint8_t *u, char out[40]) {
  char q[5];
  for (int i = 0; i < 4; i++) q[i] = u[i] >= 0x20 && u[i] < 0x7f && u[i] != '\\' ? (char)u[i] : '.';
  q[4] = '\0';
  snprintf(out, 40, "\"%s\" (%02x %02x %02x %02x)", q, u[0], u[1], u[2], u[3]);
  return out;
}

static int fail(ddmc_host_reader *r, int err, const char *what, const uint8_t *bytes, const char *tail) {
  char shown[40] = "";
  if (bytes != NULL) show4(bytes, shown);
  snprintf(r->why, sizeof r->why, "%s%s%s", what, shown, tail);
  return r->err = err;
}

int ddmc_host_reader_new(ddmc_host_reader **out, ddmc_host_expect first, uint32_t max_packet) {
  if (out == NULL) return DDMC_EINVAL;
  *out = NULL;
  if (first < DDMC_HOST_EXPECT_ADB_STATUS || first > DDMC_HOST_EXPECT_PACKETS) return DDMC_EINVAL;
  if (max_packet == 0) max_packet = DDMC_HOST_DEFAULT_MAX_PACKET;
  if (max_packet < DDMC_HOST_HEADER_LEN + 8) return DDMC_EINVAL;
  ddmc_host_reader *r = calloc(1, sizeof *r);
  if (r == NULL) return DDMC_ENOMEM;
  r->want = first;
  r->max_packet = max_packet;
  *out = r;
  return 0;
}

void ddmc_host_reader_free(ddmc_host_reader *r) {
  if (r == NULL) return;
  free(r->buf);
  free(r->text);
  free(r);
}

int ddmc_host_reader_expect(ddmc_host_reader *r, ddmc_host_expect what) {
  if (r == NULL || what < DDMC_HOST_EXPECT_ADB_STATUS || what > DDMC_HOST_EXPECT_PACKETS) return DDMC_EINVAL;
  if (r->err) return r->err;
  r->want = what;
  return 0;
}

const char *ddmc_host_reader_why(const ddmc_host_reader *r) { return r ? r->why : ""; }

size_t ddmc_host_reader_pending(const ddmc_host_reader *r) { return r ? r->len - r->pos : 0; }

int ddmc_host_reader_feed(ddmc_host_reader *r, const void *p, size_t n) {
  if (r == NULL || (p == NULL && n > 0)) return DDMC_EINVAL;
  if (r->err) return r->err;
  size_t item = r->max_packet > ADB_ITEM_MAX ? r->max_packet : ADB_ITEM_MAX;
  size_t have = r->len - r->pos;
  if (n > item + DDMC_HOST_READER_FEED_MAX - have) return DDMC_ETOOBIG;
  if (r->pos > 0) { /* compact: what is left to the front */
    memmove(r->buf, r->buf + r->pos, have);
    r->len = have;
    r->pos = 0;
  }
  if (r->len + n > r->cap) {
    size_t cap = r->cap ? r->cap : 4096;
    while (cap < r->len + n) cap *= 2;
    uint8_t *nb = realloc(r->buf, cap);
    if (nb == NULL) return DDMC_ENOMEM;
    r->buf = nb;
    r->cap = cap;
  }
  if (n > 0) memcpy(r->buf + r->len, p, n);
  r->len += n;
  /* Give back the memory of a one-off huge packet once it is consumed. */
  if (r->len == 0 && r->cap > (1u << 20)) {
    free(r->buf);
    r->buf = NULL;
    r->cap = 0;
  }
  return 0;
}

/* The text of an adb item: len bytes at p, NUL-terminated in r->text. */
static int take_text(ddmc_host_reader *r, const uint8_t *p, size_t len, ddmc_host_item *item) {
  if (r->text == NULL && (r->text = malloc(ADB_ITEM_MAX + 1)) == NULL) return DDMC_ENOMEM;
  memcpy(r->text, p, len);
  r->text[len] = '\0';
  item->text = r->text;
  item->text_len = len;
  return 1;
}

static int next_status(ddmc_host_reader *r, const uint8_t *p, size_t avail, ddmc_host_item *item) {
  if (avail < 4) return 0;
  if (memcmp(p, "OKAY", 4) == 0) {
    r->pos += 4;
    item->kind = DDMC_HOST_ITEM_OKAY;
    return 1;
  }
  if (memcmp(p, "FAIL", 4) != 0) return fail(r, DDMC_EPROTO, "it answered ", p, ", not OKAY or FAIL");
  if (avail < 8) return 0;
  int len = ddmc_host_adb_hexlen((const char *)p + 4);
  if (len < 0) return fail(r, DDMC_EPROTO, "FAIL's length prefix ", p + 4, " is not 4 hex digits");
  if (avail < 8 + (size_t)len) return 0;
  int rc = take_text(r, p + 8, (size_t)len, item);
  if (rc < 0) return rc;
  r->pos += 8 + (size_t)len;
  item->kind = DDMC_HOST_ITEM_FAIL;
  return 1;
}

static int next_message(ddmc_host_reader *r, const uint8_t *p, size_t avail, ddmc_host_item *item) {
  if (avail < 4) return 0;
  int len = ddmc_host_adb_hexlen((const char *)p);
  if (len < 0) return fail(r, DDMC_EPROTO, "the length prefix ", p, " is not 4 hex digits");
  if (avail < 4 + (size_t)len) return 0;
  int rc = take_text(r, p + 4, (size_t)len, item);
  if (rc < 0) return rc;
  r->pos += 4 + (size_t)len;
  item->kind = DDMC_HOST_ITEM_MESSAGE;
  return 1;
}

static int next_packet(ddmc_host_reader *r, const uint8_t *p, size_t avail, ddmc_host_item *item) {
  if (avail < DDMC_HOST_HEADER_LEN) return 0;
  uint32_t len;
  int rc = ddmc_host__check_header(p, r->max_packet, &len);
  if (rc == DDMC_ETOOBIG) {
    snprintf(r->why, sizeof r->why, "a JDWP packet of %u bytes, over the cap of %u", (unsigned)len,
             (unsigned)r->max_packet);
    return r->err = rc;
  }
  if (rc) return fail(r, rc, "a JDWP header that is not one (length or flags): ", p, "");
  if (avail < len) return 0;
  if (ddmc_host__packet_view(p, len, 1, &item->packet) != 0)
    return fail(r, DDMC_EPROTO, "a DDM chunk that does not fit its packet, which starts ", p, "");
  r->pos += len;
  item->kind = DDMC_HOST_ITEM_PACKET;
  return 1;
}

static int next_echo(ddmc_host_reader *r, const uint8_t *p, size_t avail, ddmc_host_item *item) {
  size_t k = avail < HANDSHAKE_LEN ? avail : HANDSHAKE_LEN;
  if (memcmp(p, HANDSHAKE, k) == 0) {
    if (avail < HANDSHAKE_LEN) return 0;
    r->pos += HANDSHAKE_LEN;
    r->want = DDMC_HOST_EXPECT_PACKETS;
    item->kind = DDMC_HOST_ITEM_HANDSHAKE;
    return 1;
  }
  /* Not the echo: a whole DDM command packet that overtook it, or not JDWP. */
  uint32_t len = 0;
  int e = ddmc_host__early_ddm_packet(p, avail, r->max_packet, &len);
  if (e < 0) return 0;
  if (e == 0) return fail(r, DDMC_EPROTO, "not a JDWP VM: it answered ", p, " to the handshake");
  return next_packet(r, p, avail, item);
}

int ddmc_host_reader_next(ddmc_host_reader *r, ddmc_host_item *item) {
  if (r == NULL || item == NULL) return DDMC_EINVAL;
  if (r->err) return r->err;
  memset(item, 0, sizeof *item);
  const uint8_t *p = r->buf + r->pos;
  size_t avail = r->len - r->pos;
  if (avail == 0) return 0;
  switch (r->want) {
    case DDMC_HOST_EXPECT_ADB_STATUS: return next_status(r, p, avail, item);
    case DDMC_HOST_EXPECT_ADB_MESSAGES: return next_message(r, p, avail, item);
    case DDMC_HOST_EXPECT_HANDSHAKE: return next_echo(r, p, avail, item);
    default: return next_packet(r, p, avail, item);
  }
}
