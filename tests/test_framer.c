/* SPDX-License-Identifier: Apache-2.0 */
/* Handshake and framing vectors, each fed whole, one byte at a time, and split at every offset. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "jdwp/framer.h"

static ddmc__mem g_mem;

typedef struct result {
  int handshakes;
  int packets;
  uint32_t ids[16];
  uint8_t sets[16];
  size_t body_lens[16];
  int err;
} result;

/* Feeds data in pieces of the given sizes (0-terminated list; NULL = whole) and collects events. */
static void run(const uint8_t *data, size_t n, size_t split, size_t step, uint32_t max, result *r) {
  memset(r, 0, sizeof(*r));
  ddmc__jdwp_framer f;
  ddmc__jdwp_framer_init(&f, &g_mem, max);
  size_t off = 0;
  while (off < n && !r->err) {
    size_t piece = step ? step : (off == 0 && split ? split : n - off);
    if (piece > n - off) piece = n - off;
    assert_int_equal(ddmc__jdwp_framer_feed(&f, data + off, piece), 0);
    off += piece;
    for (;;) {
      ddmc__jdwp_packet p;
      int rc = ddmc__jdwp_framer_next(&f, &p);
      if (rc == DDMC__FRAME_NEED_MORE) break;
      if (rc < 0) {
        r->err = rc;
        break;
      }
      if (rc == DDMC__FRAME_HANDSHAKE) {
        r->handshakes++;
        continue;
      }
      assert_true(r->packets < 16);
      r->ids[r->packets] = p.id;
      r->sets[r->packets] = p.cmd_set;
      r->body_lens[r->packets] = p.body_len;
      r->packets++;
    }
  }
  ddmc__jdwp_framer_free(&f);
}

static size_t build(uint8_t *out, int handshake, int npk) {
  size_t n = 0;
  if (handshake) {
    memcpy(out, DDMC__HANDSHAKE, 14);
    n = 14;
  }
  for (int i = 0; i < npk; i++) {
    size_t body = (size_t)i * 7; /* 0, 7, 14 ... */
    uint32_t len = (uint32_t)(11 + body);
    ddmc__put_u32(out + n, len);
    ddmc__put_u32(out + n + 4, 0x40000000u + (uint32_t)i);
    out[n + 8] = i == 2 ? 0x80 : 0;
    out[n + 9] = (uint8_t)(i == 1 ? 1 : 199);
    out[n + 10] = 1;
    memset(out + n + 11, 0xAB, body);
    n += len;
  }
  return n;
}

static void check_good(const result *r, int npk) {
  assert_int_equal(r->err, 0);
  assert_int_equal(r->handshakes, 1);
  assert_int_equal(r->packets, npk);
  for (int i = 0; i < npk; i++) {
    assert_int_equal(r->ids[i], 0x40000000u + (uint32_t)i);
    assert_int_equal(r->body_lens[i], (size_t)i * 7);
  }
  assert_int_equal(r->sets[1], 1);
  assert_int_equal(r->sets[2], 0); /* packet 2 is a reply: no command set */
}

static void test_whole_bytewise_and_splits(void **state) {
  (void)state;
  uint8_t buf[512];
  size_t n = build(buf, 1, 5);
  result r;
  run(buf, n, 0, 0, 4096, &r);
  check_good(&r, 5);
  run(buf, n, 0, 1, 4096, &r);
  check_good(&r, 5);
  for (size_t split = 1; split < n; split++) {
    run(buf, n, split, 0, 4096, &r);
    check_good(&r, 5);
  }
}

static void test_bad_handshake(void **state) {
  (void)state;
  const char *bads[] = {"GET / HTTP/1.1\r\n\r\n", "JDWP-Handshakf", "jdwp-handshake", "\0\0\0\x0b"};
  for (size_t i = 0; i < 4; i++) {
    result r;
    size_t len = i == 3 ? 4 : strlen(bads[i]);
    run((const uint8_t *)bads[i], len, 0, 1, 4096, &r);
    assert_int_equal(r.err, DDMC_EPROTO);
    assert_int_equal(r.handshakes, 0);
  }
  /* A split but correct handshake followed by nothing is simply incomplete. */
  result r;
  run((const uint8_t *)"JDWP-Hand", 9, 0, 1, 4096, &r);
  assert_int_equal(r.err, 0);
  assert_int_equal(r.handshakes, 0);
}

static void bad_length(uint32_t len, uint8_t flags, uint32_t max, int want) {
  uint8_t buf[14 + 11];
  memcpy(buf, DDMC__HANDSHAKE, 14);
  ddmc__put_u32(buf + 14, len);
  ddmc__put_u32(buf + 18, 1);
  buf[22] = flags;
  buf[23] = 199;
  buf[24] = 1;
  for (size_t step = 0; step <= 1; step++) {
    result r;
    run(buf, sizeof(buf), 0, step, max, &r);
    assert_int_equal(r.err, want);
    assert_int_equal(r.packets, 0);
  }
}

static void test_bad_lengths(void **state) {
  (void)state;
  bad_length(0, 0, 4096, DDMC_EPROTO);
  bad_length(10, 0, 4096, DDMC_EPROTO);
  bad_length(0xFFFFFFFFu, 0, 4096, DDMC_ETOOBIG);
  bad_length(4097, 0, 4096, DDMC_ETOOBIG);
  bad_length(11, 0x01, 4096, DDMC_EPROTO); /* flags neither command nor reply */
  bad_length(11, 0xFF, 4096, DDMC_EPROTO);
  /* exactly the cap is fine */
  uint8_t *big = calloc(1, 14 + 4096);
  memcpy(big, DDMC__HANDSHAKE, 14);
  ddmc__put_u32(big + 14, 4096);
  big[14 + 9] = 199;
  result r;
  run(big, 14 + 4096, 0, 0, 4096, &r);
  assert_int_equal(r.err, 0);
  assert_int_equal(r.packets, 1);
  assert_int_equal(r.body_lens[0], 4085);
  free(big);
}

/* The error is reported as soon as the header is complete: the framer never waits for (or
 * buffers toward) the 4 GiB a hostile length claims. */
static void test_no_alloc_for_claimed_length(void **state) {
  (void)state;
  ddmc__jdwp_framer f;
  ddmc__jdwp_framer_init(&f, &g_mem, 1 << 20);
  uint8_t hdr[11] = {0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 1, 0, 199, 1};
  assert_int_equal(ddmc__jdwp_framer_feed(&f, DDMC__HANDSHAKE, 14), 0);
  ddmc__jdwp_packet p;
  assert_int_equal(ddmc__jdwp_framer_next(&f, &p), DDMC__FRAME_HANDSHAKE);
  assert_int_equal(ddmc__jdwp_framer_feed(&f, hdr, 11), 0);
  assert_int_equal(ddmc__jdwp_framer_next(&f, &p), DDMC_ETOOBIG);
  assert_true(f.cap <= 8192);
  assert_int_equal(ddmc__jdwp_framer_next(&f, &p), DDMC_ETOOBIG); /* sticky */
  ddmc__jdwp_framer_free(&f);
}

static void test_headers(void **state) {
  (void)state;
  uint8_t h[19];
  ddmc__jdwp_ddm_header_write(h, 0x10000001u, DDMC_FOURCC('H', 'E', 'L', 'O'), 4);
  const uint8_t want[19] = {0, 0, 0, 23, 0x10, 0, 0, 1, 0, 199, 1, 'H', 'E', 'L', 'O', 0, 0, 0, 4};
  assert_memory_equal(h, want, 19);
  ddmc__jdwp_reply_header_write(h, 11, 0x40000002u, 99);
  const uint8_t want2[11] = {0, 0, 0, 11, 0x40, 0, 0, 2, 0x80, 0, 99};
  assert_memory_equal(h, want2, 11);
  ddmc__jdwp_packet p;
  assert_int_equal(ddmc__jdwp_header_parse(want2, 100, &p), 0);
  assert_int_equal(p.flags, 0x80);
  assert_int_equal(p.error, 99);
  assert_int_equal(p.id, 0x40000002u);
}

int main(void) {
  ddmc__mem_init(&g_mem, NULL);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_whole_bytewise_and_splits),
      cmocka_unit_test(test_bad_handshake),
      cmocka_unit_test(test_bad_lengths),
      cmocka_unit_test(test_no_alloc_for_claimed_length),
      cmocka_unit_test(test_headers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
