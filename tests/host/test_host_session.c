/* SPDX-License-Identifier: Apache-2.0 */
/* host/conn.c, the session: handshake, request and its FIFO of unsolicited packets, ZLIB, the
 * HELO/FEAT hello, TCP connect, error strings. The test plays the VM on the peer end of a
 * socketpair(), with a helper thread only where the VM must react to what the host sends. */
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <zlib.h>

#include "host_fixture.h"

/* ---- handshake ------------------------------------------------------------------------------- */

typedef struct shaker {
  int fd;
  const char *reply[3]; /* written in turn after reading the 14 bytes, with pauses */
  size_t reply_len[3];
  int close_after;
  int ok; /* the host sent the right 14 bytes */
} shaker;
static void *shaker_main(void *arg) {
  shaker *s = arg;
  char buf[14];
  size_t got = 0;
  while (got < 14) {
    ssize_t k = read(s->fd, buf + got, 14 - got);
    if (k <= 0) return NULL;
    got += (size_t)k;
  }
  s->ok = memcmp(buf, "JDWP-Handshake", 14) == 0;
  for (int i = 0; i < 3 && s->reply[i]; i++) {
    if (write(s->fd, s->reply[i], s->reply_len[i]) < 0) break;
    sleep_ms(30);
  }
  if (s->close_after) shutdown(s->fd, SHUT_WR);
  return NULL;
}

static int run_shaker(shaker *s, int timeout_ms, ddmc_host **hout) {
  ddmc_host *h;
  pair(&h, &s->fd);
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, shaker_main, s), 0);
  int rc = ddmc_host_handshake(h, timeout_ms);
  pthread_join(th, NULL);
  *hout = h;
  return rc;
}

static void test_handshake_split(void **state) {
  (void)state;
  bb tail = {0};
  bb_bytes(&tail, "shake", 5);
  pk_chunk_cmd(&tail, 0x10000000, FOURCC('W', 'A', 'I', 'T'), "\0", 1);
  shaker s = {.reply = {"JDWP-Hand", (const char *)tail.d}, .reply_len = {9, tail.n}};
  ddmc_host *h;
  assert_int_equal(run_shaker(&s, 5000, &h), 0);
  assert_true(s.ok);
  assert_int_equal(ddmc_host_handshake(h, 0), DDMC_ESTATE);
  ddmc_host_packet p; /* the bytes after the echo were kept */
  assert_int_equal(ddmc_host_recv(h, &p, 1000), 0);
  assert_int_equal(p.chunk_type, FOURCC('W', 'A', 'I', 'T'));
  ddmc_host_stats st;
  ddmc_host_stats_get(h, &st);
  assert_int_equal(st.bytes_out, 14);
  assert_int_equal(st.bytes_in, 14 + 20);
  close(s.fd);
  ddmc_host_free(h);
  bb_free(&tail);

  /* One byte at a time. */
  static const char *one[] = {"J", "D", "W"};
  shaker s2 = {.reply = {one[0], one[1], one[2]}, .reply_len = {1, 1, 1}};
  assert_int_equal(run_shaker(&s2, 200, &h), DDMC_ETIMEDOUT); /* only "JDW" ever came */
  close(s2.fd);
  ddmc_host_free(h);
}

static void test_handshake_wrong(void **state) {
  (void)state;
  const char *http = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
  shaker s = {.reply = {http}, .reply_len = {strlen(http)}};
  ddmc_host *h;
  assert_int_equal(run_shaker(&s, 5000, &h), DDMC_EPROTO);
  ddmc_host_packet p;
  assert_int_equal(ddmc_host_recv(h, &p, 0), DDMC_EPROTO); /* unusable afterwards */
  close(s.fd);
  ddmc_host_free(h);

  /* A short wrong answer then EOF is still "not JDWP", not just "closed". */
  shaker s2 = {.reply = {"JDWX"}, .reply_len = {4}, .close_after = 1};
  assert_int_equal(run_shaker(&s2, 5000, &h), DDMC_EPROTO);
  close(s2.fd);
  ddmc_host_free(h);

  /* The right prefix, then EOF. */
  shaker s3 = {.reply = {"JDWP-Hand"}, .reply_len = {9}, .close_after = 1};
  assert_int_equal(run_shaker(&s3, 5000, &h), DDMC_ECLOSED);
  close(s3.fd);
  ddmc_host_free(h);

  /* Nothing, then EOF. */
  shaker s4 = {.close_after = 1};
  assert_int_equal(run_shaker(&s4, 5000, &h), DDMC_ECLOSED);
  close(s4.fd);
  ddmc_host_free(h);

  /* Silence. */
  shaker s5 = {0};
  int64_t t0 = mono_ms();
  assert_int_equal(run_shaker(&s5, 100, &h), DDMC_ETIMEDOUT);
  assert_true(mono_ms() - t0 < 2000);
  close(s5.fd);
  ddmc_host_free(h);
}

/* Dalvik can send APNM before the echo (docs/protocol/ddm-wire.md §1.1): it is kept, not an error. */
static void test_handshake_early_packet(void **state) {
  (void)state;
  bb early = {0}, after = {0};
  bb apnm = {0};
  bb_str(&apnm, "<pre-initialized>");
  bb_u32(&apnm, 0);
  pk_chunk_cmd(&early, 0x10000000, FOURCC('A', 'P', 'N', 'M'), apnm.d, apnm.n);
  bb_bytes(&early, "JDWP-Handshake", 14);
  pk_chunk_cmd(&after, 0x10000001, FOURCC('W', 'A', 'I', 'T'), "\0", 1);
  shaker s = {.reply = {(const char *)early.d, (const char *)after.d}, .reply_len = {early.n - 6, 6}};
  /* split the echo across the two writes too */
  bb whole = {0};
  bb_bytes(&whole, early.d, early.n);
  bb_bytes(&whole, after.d, after.n);
  s.reply[0] = (const char *)whole.d;
  s.reply_len[0] = early.n - 6;
  s.reply[1] = (const char *)whole.d + early.n - 6;
  s.reply_len[1] = whole.n - (early.n - 6);
  ddmc_host *h;
  assert_int_equal(run_shaker(&s, 5000, &h), 0);
  ddmc_host_packet p;
  assert_int_equal(ddmc_host_recv(h, &p, 1000), 0);
  assert_int_equal(p.chunk_type, FOURCC('A', 'P', 'N', 'M'));
  ddmc_host_apnm a;
  assert_int_equal(ddmc_host_apnm_parse(p.chunk, p.chunk_len, &a), 0);
  assert_string_equal(a.name, "<pre-initialized>");
  ddmc_host_apnm_free(&a);
  assert_int_equal(ddmc_host_recv(h, &p, 1000), 0);
  assert_int_equal(p.chunk_type, FOURCC('W', 'A', 'I', 'T'));
  close(s.fd);
  ddmc_host_free(h);
  bb_free(&early);
  bb_free(&after);
  bb_free(&apnm);
  bb_free(&whole);
}

/* ---- request and the FIFO -------------------------------------------------------------------- */

static void test_request_keeps_unsolicited(void **state) {
  (void)state;
  ddmc_host *h;
  int peer;
  pair(&h, &peer);
  /* THEN(1): the VM sends THCR for every thread BEFORE its empty reply; an HPIF and a stray
   * reply to an unknown id come in between. */
  bb b = {0}, pl = {0};
  for (uint32_t t = 1; t <= 3; t++) {
    pl.n = 0;
    bb_u32(&pl, t);
    bb_str(&pl, t == 1 ? "main" : "worker");
    pk_chunk_cmd(&b, 0x10000000 + t, FOURCC('T', 'H', 'C', 'R'), pl.d, pl.n);
  }
  pk_reply(&b, 0x12345678, 0, NULL, 0);
  pk_reply(&b, ID0, 0, NULL, 0); /* the reply */
  pl.n = 0;
  bb_u32(&pl, 9);
  pk_chunk_cmd(&b, 0x10000009, FOURCC('T', 'H', 'D', 'E'), pl.d, pl.n);
  wr(peer, b.d, b.n);
  ddmc_host_packet r;
  assert_int_equal(ddmc_host_request(h, FOURCC('T', 'H', 'E', 'N'), "\x01", 1, &r, 2000), 0);
  assert_int_equal(r.is_reply, 1);
  assert_int_equal(r.id, ID0);
  assert_int_equal(r.body_len, 0);
  ddmc_host_packet p;
  for (uint32_t t = 1; t <= 3; t++) {
    assert_int_equal(ddmc_host_recv(h, &p, 0), 0);
    assert_int_equal(p.id, 0x10000000 + t);
    assert_int_equal(p.chunk_type, FOURCC('T', 'H', 'C', 'R'));
  }
  assert_int_equal(ddmc_host_recv(h, &p, 0), 0);
  assert_int_equal(p.id, 0x12345678);
  assert_int_equal(ddmc_host_recv(h, &p, 1000), 0);
  assert_int_equal(p.chunk_type, FOURCC('T', 'H', 'D', 'E'));
  assert_int_equal(ddmc_host_recv(h, &p, 0), DDMC_ETIMEDOUT);
  bb req = {0};
  rd_packet(peer, &req);
  assert_int_equal(be32(req.d + 4), ID0);
  assert_int_equal(be32(req.d + 11), FOURCC('T', 'H', 'E', 'N'));
  close(peer);
  ddmc_host_free(h);
  bb_free(&b);
  bb_free(&pl);
  bb_free(&req);
}

static void test_request_timeout_drops_late_reply(void **state) {
  (void)state;
  ddmc_host *h;
  int peer;
  pair(&h, &peer);
  ddmc_host_packet r;
  assert_int_equal(ddmc_host_request(h, FOURCC('H', 'P', 'G', 'C'), NULL, 0, &r, 50), DDMC_ETIMEDOUT);
  bb b = {0};
  pk_reply(&b, ID0, 0, NULL, 0); /* too late */
  pk_chunk_cmd(&b, 0x10000001, FOURCC('W', 'A', 'I', 'T'), "\0", 1);
  pk_chunk_reply(&b, ID0 + 1, FOURCC('R', 'E', 'A', 'Q'), "\x01", 1);
  pk_chunk_cmd(&b, 0x10000002, FOURCC('W', 'A', 'I', 'T'), "\0", 1);
  pk_reply(&b, ID0 + 2, 99, NULL, 0); /* a JDWP error reply is a reply, not an error */
  wr(peer, b.d, b.n);
  ddmc_host_packet p;
  assert_int_equal(ddmc_host_request(h, FOURCC('R', 'E', 'A', 'Q'), NULL, 0, &r, 2000), 0);
  assert_int_equal(r.chunk_type, FOURCC('R', 'E', 'A', 'Q'));
  assert_int_equal(r.chunk[0], 1);
  assert_int_equal(ddmc_host_request(h, FOURCC('X', 'X', 'X', 'X'), NULL, 0, &r, 2000), 0);
  assert_int_equal(r.error, 99);
  assert_int_equal(r.is_ddm, 0);
  assert_int_equal(ddmc_host_recv(h, &p, 0), 0);
  assert_int_equal(p.id, 0x10000001); /* the late reply to ID0 was dropped */
  assert_int_equal(ddmc_host_recv(h, &p, 0), 0);
  assert_int_equal(p.id, 0x10000002);
  assert_int_equal(ddmc_host_recv(h, &p, 0), DDMC_ETIMEDOUT);
  close(peer);
  ddmc_host_free(h);
  bb_free(&b);
}

static void test_request_queue_cap(void **state) {
  (void)state;
  ddmc_host *h;
  int peer;
  pair(&h, &peer);
  assert_int_equal(ddmc_host_set_max_queue(h, 30), 0);
  bb b = {0};
  pk_chunk_cmd(&b, 1, FOURCC('W', 'A', 'I', 'T'), "\0", 1);
  pk_chunk_cmd(&b, 2, FOURCC('W', 'A', 'I', 'T'), "\0", 1);
  pk_reply(&b, ID0, 0, NULL, 0);
  wr(peer, b.d, b.n);
  ddmc_host_packet r, p;
  assert_int_equal(ddmc_host_request(h, FOURCC('H', 'P', 'G', 'C'), NULL, 0, &r, 2000), DDMC_EQFULL);
  /* Nothing lost: both WAITs come out; the abandoned reply is dropped. */
  assert_int_equal(ddmc_host_recv(h, &p, 1000), 0);
  assert_int_equal(p.id, 1);
  assert_int_equal(ddmc_host_recv(h, &p, 1000), 0);
  assert_int_equal(p.id, 2);
  assert_int_equal(ddmc_host_recv(h, &p, 100), DDMC_ETIMEDOUT);
  close(peer);
  ddmc_host_free(h);
  bb_free(&b);
}

/* ---- ZLIB ------------------------------------------------------------------------------------ */

/* [u4 clen][u4 inner type][u4 inner len][zlib stream] */
static void zlib_payload(bb *out, uint32_t inner_type, const uint8_t *raw, size_t n) {
  uLongf clen = compressBound(n);
  uint8_t *c = malloc(clen);
  assert_non_null(c);
  assert_int_equal(compress2(c, &clen, raw, n, 6), Z_OK);
  bb_u32(out, (uint32_t)clen);
  bb_u32(out, inner_type);
  bb_u32(out, (uint32_t)n);
  bb_bytes(out, c, clen);
  free(c);
}

static void test_zlib_inflate(void **state) {
  (void)state;
  ddmc_host *h;
  int peer;
  pair(&h, &peer);
  size_t n = 200000;
  uint8_t *raw = malloc(n);
  for (size_t i = 0; i < n; i++) raw[i] = (uint8_t)((i / 64) % 7);
  bb z = {0}, b = {0};
  zlib_payload(&z, FOURCC('H', 'P', 'S', 'G'), raw, n);
  pk_chunk_cmd(&b, 0x10000000, DDMC_HOST_TYPE_ZLIB, z.d, z.n);
  /* An empty inner payload works too, as a reply. */
  bb z0 = {0};
  zlib_payload(&z0, FOURCC('F', 'E', 'A', 'T'), NULL, 0);
  pk_chunk_reply(&b, ID0, DDMC_HOST_TYPE_ZLIB, z0.d, z0.n);
  wr(peer, b.d, b.n);
  ddmc_host_packet p;
  assert_int_equal(ddmc_host_recv(h, &p, 2000), 0);
  assert_int_equal(p.was_compressed, 1);
  assert_int_equal(p.chunk_type, FOURCC('H', 'P', 'S', 'G'));
  assert_int_equal(p.chunk_len, n);
  assert_memory_equal(p.chunk, raw, n);
  assert_int_equal(p.body_len, n + 8);
  assert_true(p.body[0] == 'H' && p.body[3] == 'G');
  assert_int_equal(ddmc_host_recv(h, &p, 2000), 0);
  assert_int_equal(p.was_compressed, 1);
  assert_int_equal(p.chunk_type, FOURCC('F', 'E', 'A', 'T'));
  assert_int_equal(p.chunk_len, 0);
  ddmc_host_stats st;
  ddmc_host_stats_get(h, &st);
  assert_int_equal(st.zlib_chunks_in, 2);
  assert_int_equal(st.zlib_in_wire, z.n + z0.n);
  assert_int_equal(st.zlib_in_raw, n);
  assert_true(st.zlib_in_wire < st.zlib_in_raw / 10);
  close(peer);
  ddmc_host_free(h);
  free(raw);
  bb_free(&z);
  bb_free(&z0);
  bb_free(&b);
}

static void test_zlib_bad(void **state) {
  (void)state;
  ddmc_host *h;
  int peer;
  pair(&h, &peer);
  assert_int_equal(ddmc_host_set_max_packet(h, 1 << 20), 0);
  const char *text = "the quick brown fox jumps over the lazy dog, again and again and again";
  size_t tn = strlen(text);
  bb good = {0};
  zlib_payload(&good, FOURCC('T', 'E', 'S', 'T'), (const uint8_t *)text, tn);
  bb b = {0}, z = {0};
  int cases = 0;
  /* 1: compressed len != chunk len - 12 */
  z.n = 0, bb_bytes(&z, good.d, good.n), z.d[3]++;
  pk_chunk_cmd(&b, 1, DDMC_HOST_TYPE_ZLIB, z.d, z.n), cases++;
  /* 2: inner len bigger than what inflates */
  z.n = 0, bb_bytes(&z, good.d, good.n), z.d[11]++;
  pk_chunk_cmd(&b, 2, DDMC_HOST_TYPE_ZLIB, z.d, z.n), cases++;
  /* 3: inner len smaller */
  z.n = 0, bb_bytes(&z, good.d, good.n), z.d[11]--;
  pk_chunk_cmd(&b, 3, DDMC_HOST_TYPE_ZLIB, z.d, z.n), cases++;
  /* 4: corrupt stream (checksum byte) */
  z.n = 0, bb_bytes(&z, good.d, good.n), z.d[z.n - 1] ^= 0x55;
  pk_chunk_cmd(&b, 4, DDMC_HOST_TYPE_ZLIB, z.d, z.n), cases++;
  /* 5: not zlib at all */
  z.n = 0, bb_u32(&z, 4), bb_u32(&z, 1), bb_u32(&z, 4), bb_bytes(&z, "abcd", 4);
  pk_chunk_cmd(&b, 5, DDMC_HOST_TYPE_ZLIB, z.d, z.n), cases++;
  /* 6: shorter than its 12-byte header */
  pk_chunk_cmd(&b, 6, DDMC_HOST_TYPE_ZLIB, "\0\0\0\0\0\0\0\0", 8), cases++;
  /* 7: a stream with trailing garbage after its end */
  z.n = 0, bb_bytes(&z, good.d, good.n), bb_u8(&z, 0), z.d[3]++;
  pk_chunk_cmd(&b, 7, DDMC_HOST_TYPE_ZLIB, z.d, z.n), cases++;
  /* 8: inflated size over the cap -> ETOOBIG, before inflating anything */
  z.n = 0, bb_bytes(&z, good.d, good.n), z.d[8] = 0x7f;
  pk_chunk_cmd(&b, 8, DDMC_HOST_TYPE_ZLIB, z.d, z.n), cases++;
  /* then a good one */
  pk_chunk_cmd(&b, 9, DDMC_HOST_TYPE_ZLIB, good.d, good.n);
  wr(peer, b.d, b.n);
  ddmc_host_packet p;
  for (int i = 1; i <= cases; i++) {
    int rc = ddmc_host_recv(h, &p, 1000);
    assert_int_equal(rc, i == 8 ? DDMC_ETOOBIG : DDMC_EPROTO);
  }
  assert_int_equal(ddmc_host_recv(h, &p, 1000), 0);
  assert_int_equal(p.id, 9);
  assert_int_equal(p.chunk_len, tn);
  assert_memory_equal(p.chunk, text, tn);
  close(peer);
  ddmc_host_free(h);
  bb_free(&good);
  bb_free(&b);
  bb_free(&z);
}

static void test_zlib_opt_in(void **state) {
  (void)state;
  ddmc_host *h;
  int peer;
  pair(&h, &peer);
  assert_int_equal(ddmc_host_opt_in_zlib(h), 0);
  assert_int_equal(ddmc_host_last_id(h), ID0);
  bb p = {0};
  rd_packet(peer, &p);
  assert_true(p.d[9] == 199 && p.d[10] == 1);
  assert_int_equal(be32(p.d + 11), DDMC_HOST_TYPE_ZLIB);
  uint32_t chunk_len = be32(p.d + 15);
  assert_int_equal(chunk_len + 19, p.n);
  const uint8_t *z = p.d + 19;
  uint32_t clen = be32(z);
  assert_int_equal(clen, chunk_len - 12);
  assert_int_equal(be32(z + 4), FOURCC('F', 'E', 'A', 'T'));
  assert_int_equal(be32(z + 8), 0);
  uint8_t out[4];
  uLongf on = sizeof out;
  assert_int_equal(uncompress(out, &on, z + 12, clen), Z_OK);
  assert_int_equal(on, 0);
  close(peer);
  ddmc_host_free(h);
  bb_free(&p);
}

/* ---- hello ----------------------------------------------------------------------------------- */

static void feat_payload(bb *b) {
  bb_u32(b, 2);
  bb_str(b, "hprof-heap-dump");
  bb_str(b, "method-trace-profiling");
}

static void test_hello(void **state) {
  (void)state;
  for (int order = 0; order < 2; order++) {
    ddmc_host *h;
    int peer;
    pair(&h, &peer);
    bb b = {0}, helo = {0}, feat = {0};
    helo_payload(&helo, 5);
    feat_payload(&feat);
    pk_chunk_cmd(&b, 0x10000000, FOURCC('W', 'A', 'I', 'T'), "\0", 1); /* WAIT precedes */
    if (order == 0) {
      pk_chunk_reply(&b, ID0, FOURCC('H', 'E', 'L', 'O'), helo.d, helo.n);
      pk_chunk_reply(&b, ID0 + 1, FOURCC('F', 'E', 'A', 'T'), feat.d, feat.n);
    } else {
      pk_chunk_reply(&b, ID0 + 1, FOURCC('F', 'E', 'A', 'T'), feat.d, feat.n);
      pk_chunk_reply(&b, ID0, FOURCC('H', 'E', 'L', 'O'), helo.d, helo.n);
    }
    wr(peer, b.d, b.n);
    ddmc_host_helo x;
    assert_int_equal(ddmc_host_hello(h, &x, 2000), 0);
    assert_int_equal(x.pid, 4242);
    assert_string_equal(x.pkg_name, "com.example");
    assert_true(x.present & DDMC_HOST_HELO_FEATURES);
    assert_int_equal(x.n_features, 2);
    assert_string_equal(x.features[1], "method-trace-profiling");
    ddmc_host_helo_free(&x);
    ddmc_host_packet p;
    assert_int_equal(ddmc_host_recv(h, &p, 0), 0);
    assert_int_equal(p.chunk_type, FOURCC('W', 'A', 'I', 'T'));
    /* What went out: HELO [u4 1] (23 bytes) then an empty FEAT (19 bytes). */
    bb req = {0};
    rd_packet(peer, &req);
    assert_int_equal(req.n, 23);
    assert_int_equal(be32(req.d + 11), FOURCC('H', 'E', 'L', 'O'));
    assert_int_equal(be32(req.d + 19), 1);
    rd_packet(peer, &req);
    assert_int_equal(req.n, 19);
    assert_int_equal(be32(req.d + 11), FOURCC('F', 'E', 'A', 'T'));
    close(peer);
    ddmc_host_free(h);
    bb_free(&b);
    bb_free(&helo);
    bb_free(&feat);
    bb_free(&req);
  }
}

static void test_hello_not_ddm(void **state) {
  (void)state;
  for (int kind = 0; kind < 5; kind++) {
    ddmc_host *h;
    int peer;
    pair(&h, &peer);
    bb b = {0}, fail = {0}, helo = {0};
    bb_u32(&fail, 1);
    bb_str(&fail, "nope");
    helo_payload(&helo, 0);
    int want;
    if (kind == 0) { /* Dalvik without a HELO handler: empty reply */
      pk_reply(&b, ID0, 0, NULL, 0);
      pk_reply(&b, ID0 + 1, 0, NULL, 0);
      want = DDMC_ENOTSUP;
    } else if (kind == 1) { /* the draft's way to decline */
      pk_reply(&b, ID0, 99, NULL, 0);
      pk_reply(&b, ID0 + 1, 99, NULL, 0);
      want = DDMC_ENOTSUP;
    } else if (kind == 2) {
      pk_chunk_reply(&b, ID0, FOURCC('F', 'A', 'I', 'L'), fail.d, fail.n);
      want = DDMC_ENOTSUP;
    } else if (kind == 3) { /* silence */
      want = DDMC_ETIMEDOUT;
    } else { /* HELO answered, FEAT never (ART adbconnection without a handler) */
      pk_chunk_reply(&b, ID0, FOURCC('H', 'E', 'L', 'O'), helo.d, helo.n);
      want = 0;
    }
    if (b.n) wr(peer, b.d, b.n);
    ddmc_host_helo x;
    int64_t t0 = mono_ms();
    assert_int_equal(ddmc_host_hello(h, &x, 150), want);
    assert_true(mono_ms() - t0 < 2000);
    if (kind == 4) {
      assert_string_equal(x.vm_ident, "Dalvik v2.1.0");
      assert_int_equal(x.present & DDMC_HOST_HELO_FEATURES, 0);
      /* A late FEAT reply is dropped rather than surfacing as a stray packet. */
      bb late = {0};
      pk_reply(&late, ID0 + 1, 0, NULL, 0);
      pk_chunk_cmd(&late, 0x10000000, FOURCC('W', 'A', 'I', 'T'), "\0", 1);
      wr(peer, late.d, late.n);
      ddmc_host_packet p;
      assert_int_equal(ddmc_host_recv(h, &p, 1000), 0);
      assert_int_equal(p.chunk_type, FOURCC('W', 'A', 'I', 'T'));
      bb_free(&late);
    }
    ddmc_host_helo_free(&x);
    close(peer);
    ddmc_host_free(h);
    bb_free(&b);
    bb_free(&fail);
    bb_free(&helo);
  }
}

/* ---- TCP ------------------------------------------------------------------------------------- */

static void test_connect_tcp(void **state) {
  (void)state;
  int ls = socket(AF_INET, SOCK_STREAM, 0);
  assert_true(ls >= 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  assert_int_equal(bind(ls, (struct sockaddr *)&a, sizeof a), 0);
  assert_int_equal(listen(ls, 4), 0);
  socklen_t al = sizeof a;
  assert_int_equal(getsockname(ls, (struct sockaddr *)&a, &al), 0);
  uint16_t port = ntohs(a.sin_port);
  ddmc_host *h = NULL;
  assert_int_equal(ddmc_host_connect_tcp(&h, "127.0.0.1", port, 2000), 0);
  int c = accept(ls, NULL, NULL);
  assert_true(c >= 0);
  /* Plays a VM: answers the handshake and one request. */
  wr(c, "JDWP-Handshake", 14);
  bb b = {0};
  pk_chunk_reply(&b, ID0, FOURCC('R', 'E', 'A', 'Q'), "\0", 1);
  wr(c, b.d, b.n);
  assert_int_equal(ddmc_host_handshake(h, 2000), 0);
  ddmc_host_packet r;
  assert_int_equal(ddmc_host_request(h, FOURCC('R', 'E', 'A', 'Q'), NULL, 0, &r, 2000), 0);
  assert_int_equal(r.chunk_type, FOURCC('R', 'E', 'A', 'Q'));
  char hs[14];
  rd(c, hs, 14);
  assert_memory_equal(hs, "JDWP-Handshake", 14);
  close(c);
  ddmc_host_free(h);
  close(ls);
  /* Nobody listens there any more. */
  h = NULL;
  assert_int_equal(ddmc_host_connect_tcp(&h, "127.0.0.1", port, 2000), DDMC_ECONNREFUSED);
  assert_null(h);
  assert_int_equal(ddmc_host_connect_tcp(&h, NULL, port, 2000), DDMC_EINVAL);
  bb_free(&b);
}

static void test_strerror(void **state) {
  (void)state;
  assert_string_equal(ddmc_host_strerror(DDMC_EPROTO), "peer violated the protocol");
  assert_string_equal(ddmc_host_strerror(DDMC_ECLOSED), "connection closed by peer");
  assert_string_equal(ddmc_host_strerror(12345), "unknown error");
  assert_string_equal(ddmc_host_strerror(0), "success");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      HOST_TEST(test_handshake_split),
      HOST_TEST(test_handshake_wrong),
      HOST_TEST(test_handshake_early_packet),
      HOST_TEST(test_request_keeps_unsolicited),
      HOST_TEST(test_request_timeout_drops_late_reply),
      HOST_TEST(test_request_queue_cap),
      HOST_TEST(test_zlib_inflate),
      HOST_TEST(test_zlib_bad),
      HOST_TEST(test_zlib_opt_in),
      HOST_TEST(test_hello),
      HOST_TEST(test_hello_not_ddm),
      HOST_TEST(test_connect_tcp),
      HOST_TEST(test_strerror),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
