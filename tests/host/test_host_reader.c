/* SPDX-License-Identifier: Apache-2.0 */
/* host/reader.c, the reader fed bytes: adb's verdicts and messages, the JDWP handshake echo (and a
 * DDM packet that overtakes it) and packet framing, each fed in one piece and byte by byte with
 * the same items out; bad input a sticky error whose words name the bytes; the feed bound. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ddmc_host.h"

/* What a stream turned into: the items' kinds, texts and packets, concatenated as text. */
typedef struct seen {
  char log[4096];
  size_t n;
  int err;
} seen;

static void logf_(seen *s, const char *t) {
  size_t k = strlen(t);
  assert_true(s->n + k < sizeof s->log);
  memcpy(s->log + s->n, t, k + 1);
  s->n += k;
}

static void note(seen *s, ddmc_host_reader *r, const ddmc_host_item *it) {
  char b[600];
  switch (it->kind) {
    case DDMC_HOST_ITEM_OKAY:
      logf_(s, "OKAY;");
      /* What each OKAY of the ps walk leads to: another verdict, then the handshake. */
      assert_int_equal(ddmc_host_reader_expect(r, s->n < 10 ? DDMC_HOST_EXPECT_ADB_STATUS : DDMC_HOST_EXPECT_HANDSHAKE), 0);
      break;
    case DDMC_HOST_ITEM_FAIL: snprintf(b, sizeof b, "FAIL(%.*s);", (int)it->text_len, it->text); logf_(s, b); break;
    case DDMC_HOST_ITEM_MESSAGE: snprintf(b, sizeof b, "MSG(%.*s);", (int)it->text_len, it->text); logf_(s, b); break;
    case DDMC_HOST_ITEM_HANDSHAKE: logf_(s, "SHAKE;"); break;
    case DDMC_HOST_ITEM_PACKET: {
      const ddmc_host_packet *p = &it->packet;
      snprintf(b, sizeof b, "PKT(id=%u,reply=%d,err=%u,set=%u,cmd=%u,ddm=%d,type=%08x,clen=%zu);", (unsigned)p->id,
               p->is_reply, (unsigned)p->error, (unsigned)p->cmd_set, (unsigned)p->cmd, p->is_ddm,
               (unsigned)p->chunk_type, p->chunk_len);
      logf_(s, b);
      break;
    }
  }
}

/* Feeds bytes in pieces of `piece`, draining after each; returns what came out. */
static seen run(ddmc_host_expect first, const uint8_t *bytes, size_t n, size_t piece) {
  seen s;
  memset(&s, 0, sizeof s);
  ddmc_host_reader *r = NULL;
  assert_int_equal(ddmc_host_reader_new(&r, first, 0), 0);
  for (size_t off = 0; off < n && s.err == 0; off += piece) {
    size_t k = n - off < piece ? n - off : piece;
    int rc = ddmc_host_reader_feed(r, bytes + off, k);
    if (rc) {
      s.err = rc;
      break;
    }
    ddmc_host_item it;
    while ((rc = ddmc_host_reader_next(r, &it)) == 1) note(&s, r, &it);
    if (rc < 0) {
      s.err = rc;
      logf_(&s, "ERR:");
      logf_(&s, ddmc_host_reader_why(r));
      assert_int_equal(ddmc_host_reader_next(r, &it), rc); /* sticky */
      assert_int_equal(ddmc_host_reader_feed(r, "x", 1), rc);
    }
  }
  ddmc_host_reader_free(r);
  return s;
}

/* The same stream fed whole, in 3-byte pieces and byte by byte gives the same items. */
static void same_in_every_piece(ddmc_host_expect first, const uint8_t *bytes, size_t n, const char *want, int err) {
  size_t pieces[] = {n ? n : 1, 3, 1};
  for (size_t i = 0; i < 3; i++) {
    seen s = run(first, bytes, n, pieces[i]);
    assert_string_equal(s.log, want);
    assert_int_equal(s.err, err);
  }
}

static size_t packet(uint8_t *b, uint32_t id, uint8_t flags, uint8_t set, uint8_t cmd, const char *type,
                     const void *data, uint32_t dlen) {
  uint32_t len = 11 + (type ? 8 : 0) + dlen;
  uint8_t h[19] = {(uint8_t)(len >> 24), (uint8_t)(len >> 16), (uint8_t)(len >> 8), (uint8_t)len,
                   (uint8_t)(id >> 24),  (uint8_t)(id >> 16),  (uint8_t)(id >> 8),  (uint8_t)id,
                   flags,                set,                  cmd};
  size_t k = 11;
  if (type) {
    memcpy(h + 11, type, 4);
    h[15] = (uint8_t)(dlen >> 24), h[16] = (uint8_t)(dlen >> 16), h[17] = (uint8_t)(dlen >> 8), h[18] = (uint8_t)dlen;
    k = 19;
  }
  memcpy(b, h, k);
  if (dlen) memcpy(b + k, data, dlen);
  return k + dlen;
}

/* The walk `ddmc ps` makes: OKAY (transport), OKAY (jdwp:PID), an APNM that overtakes the echo,
 * the echo, a HELO reply and a WAIT command. */
static void test_ps_walk(void **state) {
  (void)state;
  uint8_t b[512];
  size_t n = 0;
  memcpy(b + n, "OKAYOKAY", 8), n += 8;
  n += packet(b + n, 7, 0, 199, 1, "APNM", "\0\0\0\0", 4);
  memcpy(b + n, "JDWP-Handshake", 14), n += 14;
  n += packet(b + n, 0x40000000, 0x80, 0, 0, "HELO", "0123456789", 10);
  n += packet(b + n, 9, 0, 199, 1, "WAIT", "\1", 1);
  n += packet(b + n, 10, 0x80, 0, 0, NULL, NULL, 0); /* an empty reply: not DDM */
  same_in_every_piece(DDMC_HOST_EXPECT_ADB_STATUS, b, n,
                      "OKAY;OKAY;PKT(id=7,reply=0,err=0,set=199,cmd=1,ddm=1,type=41504e4d,clen=4);SHAKE;"
                      "PKT(id=1073741824,reply=1,err=0,set=0,cmd=0,ddm=1,type=48454c4f,clen=10);"
                      "PKT(id=9,reply=0,err=0,set=199,cmd=1,ddm=1,type=57414954,clen=1);"
                      "PKT(id=10,reply=1,err=0,set=0,cmd=0,ddm=0,type=00000000,clen=0);",
                      0);
}

static void test_adb_fail_and_messages(void **state) {
  (void)state;
  static const char fail[] = "FAIL0010device not found";
  same_in_every_piece(DDMC_HOST_EXPECT_ADB_STATUS, (const uint8_t *)fail, strlen(fail), "FAIL(device not found);", 0);
  static const char msgs[] = "000a4242\n4243\n0000000A4244\n4245\n";
  same_in_every_piece(DDMC_HOST_EXPECT_ADB_MESSAGES, (const uint8_t *)msgs, strlen(msgs),
                      "MSG(4242\n4243\n);MSG();MSG(4244\n4245\n);", 0);
  /* An incomplete message is no item, and no error. */
  same_in_every_piece(DDMC_HOST_EXPECT_ADB_MESSAGES, (const uint8_t *)"000a4242", 8, "", 0);
}

static void test_bad_input(void **state) {
  (void)state;
  same_in_every_piece(DDMC_HOST_EXPECT_ADB_MESSAGES, (const uint8_t *)"-004abcd", 8,
                      "ERR:the length prefix \"-004\" (2d 30 30 34) is not 4 hex digits", DDMC_EPROTO);
  same_in_every_piece(DDMC_HOST_EXPECT_ADB_STATUS, (const uint8_t *)"FAIL 04xoops", 12,
                      "ERR:FAIL's length prefix \" 04x\" (20 30 34 78) is not 4 hex digits", DDMC_EPROTO);
  same_in_every_piece(DDMC_HOST_EXPECT_ADB_STATUS, (const uint8_t *)"HTTP/1.1", 8,
                      "ERR:it answered \"HTTP\" (48 54 54 50), not OKAY or FAIL", DDMC_EPROTO);
  static const char http[] = "HTTP/1.1 400 Bad Request\r\n\r\n";
  same_in_every_piece(DDMC_HOST_EXPECT_HANDSHAKE, (const uint8_t *)http, strlen(http),
                      "ERR:not a JDWP VM: it answered \"HTTP\" (48 54 54 50) to the handshake", DDMC_EPROTO);
  uint8_t b[64];
  size_t n = packet(b, 1, 0x40, 1, 1, NULL, NULL, 0); /* flags neither command nor reply */
  same_in_every_piece(DDMC_HOST_EXPECT_PACKETS, b, n,
                      "ERR:a JDWP header that is not one (length or flags): \"....\" (00 00 00 0b)", DDMC_EPROTO);
  n = packet(b, 1, 0, 199, 1, "HELO", "ab", 2);
  b[18] = 9; /* the chunk says 9 bytes, the packet holds 2 */
  same_in_every_piece(DDMC_HOST_EXPECT_PACKETS, b, n,
                      "ERR:a DDM chunk that does not fit its packet, which starts \"....\" (00 00 00 15)", DDMC_EPROTO);
  static const uint8_t huge[11] = {0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 1, 0, 1, 1};
  same_in_every_piece(DDMC_HOST_EXPECT_PACKETS, huge, sizeof huge,
                      "ERR:a JDWP packet of 2147483647 bytes, over the cap of 67108864", DDMC_ETOOBIG);
  /* Arguments. */
  ddmc_host_reader *r = NULL;
  assert_int_equal(ddmc_host_reader_new(&r, 0, 0), DDMC_EINVAL);
  assert_int_equal(ddmc_host_reader_new(&r, DDMC_HOST_EXPECT_PACKETS, 12), DDMC_EINVAL);
  assert_int_equal(ddmc_host_reader_new(NULL, DDMC_HOST_EXPECT_PACKETS, 0), DDMC_EINVAL);
  assert_int_equal(ddmc_host_reader_feed(NULL, "", 0), DDMC_EINVAL);
  ddmc_host_reader_free(NULL);
}

/* The buffer never holds more than one item plus DDMC_HOST_READER_FEED_MAX: a peer that streams
 * a packet's worth of bytes the caller never drains is refused, not buffered. */
static void test_bounded(void **state) {
  (void)state;
  ddmc_host_reader *r = NULL;
  assert_int_equal(ddmc_host_reader_new(&r, DDMC_HOST_EXPECT_PACKETS, 1024), 0);
  static uint8_t junk[DDMC_HOST_READER_FEED_MAX];
  assert_int_equal(ddmc_host_reader_feed(r, junk, 60000), 0); /* undrained */
  assert_int_equal(ddmc_host_reader_feed(r, junk, 60000), 0); /* 120000 < 65539 + 65536 */
  assert_int_equal(ddmc_host_reader_feed(r, junk, 20000), DDMC_ETOOBIG);
  assert_int_equal(ddmc_host_reader_pending(r), 120000);
  ddmc_host_reader_free(r);
  /* Drained between feeds, a long run of packets goes through in any size of piece. */
  assert_int_equal(ddmc_host_reader_new(&r, DDMC_HOST_EXPECT_PACKETS, 0), 0);
  uint8_t one[32];
  size_t n = packet(one, 5, 0x80, 0, 0, "FEAT", "xyz", 3);
  long items = 0;
  for (int i = 0; i < 20000; i++) {
    assert_int_equal(ddmc_host_reader_feed(r, one, n), 0);
    ddmc_host_item it;
    while (ddmc_host_reader_next(r, &it) == 1) items++;
  }
  assert_int_equal(items, 20000);
  assert_int_equal(ddmc_host_reader_pending(r), 0);
  ddmc_host_reader_free(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ps_walk),
      cmocka_unit_test(test_adb_fail_and_messages),
      cmocka_unit_test(test_bad_input),
      cmocka_unit_test(test_bounded),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
