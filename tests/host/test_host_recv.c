/* SPDX-License-Identifier: Apache-2.0 */
/* host/conn.c, the packets: what the host writes, and the reader over socketpair() fed split at
 * every offset, a byte at a time, by a trickling thread, with bad lengths, bad chunks, EOF and
 * large packets. The test plays the VM by writing bytes into the peer end. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "host_fixture.h"

/* ---- packets: sending ------------------------------------------------------------------------ */

static void test_send_bytes(void **state) {
  (void)state;
  ddmc_host *h;
  int peer;
  pair(&h, &peer);
  uint32_t id = 0;
  assert_int_equal(ddmc_host_send_chunk(h, FOURCC('T', 'H', 'E', 'N'), "\x01", 1, &id), 0);
  assert_int_equal(id, ID0);
  bb p = {0};
  rd_packet(peer, &p);
  const uint8_t want[] = {0, 0, 0, 20, 0x40, 0, 0, 0, 0, 199, 1, 'T', 'H', 'E', 'N', 0, 0, 0, 1, 1};
  assert_int_equal(p.n, sizeof want);
  assert_memory_equal(p.d, want, sizeof want);

  assert_int_equal(ddmc_host_send_command(h, 1, 1, NULL, 0, &id), 0); /* VirtualMachine.Version */
  assert_int_equal(id, ID0 + 1);
  assert_int_equal(ddmc_host_last_id(h), ID0 + 1);
  rd_packet(peer, &p);
  const uint8_t want2[] = {0, 0, 0, 11, 0x40, 0, 0, 1, 0, 1, 1};
  assert_memory_equal(p.d, want2, 11);

  /* Its reply has >= 8 body bytes but is not DDM: the id says it answers a JDWP command. */
  bb r = {0};
  pk_reply(&r, ID0 + 1, 0,
           "\0\0\0\x09"
           "abcdefghijk",
           15);
  wr(peer, r.d, r.n);
  ddmc_host_packet pkt;
  assert_int_equal(ddmc_host_recv(h, &pkt, 1000), 0);
  assert_int_equal(pkt.is_reply, 1);
  assert_int_equal(pkt.is_ddm, 0);
  assert_int_equal(pkt.body_len, 15);

  ddmc_host_stats st;
  ddmc_host_stats_get(h, &st);
  assert_int_equal(st.packets_out, 2);
  assert_int_equal(st.bytes_out, 20 + 11);
  assert_int_equal(st.packets_in, 1);
  assert_int_equal(st.bytes_in, 26);

  /* Peer gone: ECLOSED, and no SIGPIPE kills us. */
  close(peer);
  int rc = 0;
  for (int i = 0; i < 3 && rc == 0; i++) rc = ddmc_host_send_raw(h, "xxxxxxxxxxxx", 12);
  assert_int_equal(rc, DDMC_ECLOSED);
  bb_free(&p);
  bb_free(&r);
  ddmc_host_free(h);
}

static void test_from_fd_checks(void **state) {
  (void)state;
  ddmc_host *h = NULL;
  int pf[2];
  assert_int_equal(pipe(pf), 0);
  assert_int_equal(ddmc_host_from_fd(&h, pf[0]), DDMC_EINVAL);
  assert_int_equal(ddmc_host_from_fd(&h, -1), DDMC_EINVAL);
  assert_null(h);
  close(pf[0]);
  close(pf[1]);
  ddmc_host_free(NULL);
}

/* ---- packets: receiving ---------------------------------------------------------------------- */

/* Three packets: an unsolicited THCR, an empty reply and a reply with a chunk. */
static void three_packets(bb *b) {
  bb pl = {0};
  bb_u32(&pl, 3);
  bb_str(&pl, "main");
  pk_chunk_cmd(b, 0x10000001, FOURCC('T', 'H', 'C', 'R'), pl.d, pl.n);
  pk_reply(b, ID0, 0, NULL, 0);
  pk_chunk_reply(b, ID0 + 1, FOURCC('R', 'E', 'A', 'Q'), "\x01", 1);
  bb_free(&pl);
}

static void check_nth(const ddmc_host_packet *p, int i) {
  if (i == 0) {
    assert_int_equal(p->is_reply, 0);
    assert_int_equal(p->id, 0x10000001);
    assert_int_equal(p->cmd_set, 199);
    assert_int_equal(p->cmd, 1);
    assert_int_equal(p->is_ddm, 1);
    assert_int_equal(p->chunk_type, FOURCC('T', 'H', 'C', 'R'));
    ddmc_host_thname t;
    assert_int_equal(ddmc_host_thname_parse(p->chunk, p->chunk_len, &t), 0);
    assert_int_equal(t.thread_id, 3);
    assert_string_equal(t.name, "main");
    ddmc_host_thname_free(&t);
  } else if (i == 1) {
    assert_int_equal(p->is_reply, 1);
    assert_int_equal(p->id, ID0);
    assert_int_equal(p->body_len, 0);
    assert_int_equal(p->is_ddm, 0);
  } else {
    assert_int_equal(p->is_reply, 1);
    assert_int_equal(p->id, ID0 + 1);
    assert_int_equal(p->error, 0);
    assert_int_equal(p->is_ddm, 1);
    assert_int_equal(p->chunk_type, FOURCC('R', 'E', 'A', 'Q'));
    assert_int_equal(p->chunk_len, 1);
    assert_int_equal(p->chunk[0], 1);
  }
}

static void test_recv_split_every_offset(void **state) {
  (void)state;
  bb b = {0};
  three_packets(&b);
  for (size_t s = 0; s <= b.n; s++) {
    ddmc_host *h;
    int peer;
    pair(&h, &peer);
    wr(peer, b.d, s);
    int got = 0;
    ddmc_host_packet p;
    int rc;
    while ((rc = ddmc_host_recv(h, &p, 0)) == 0) check_nth(&p, got++);
    assert_int_equal(rc, DDMC_ETIMEDOUT);
    if (s < b.n) wr(peer, b.d + s, b.n - s);
    while (got < 3) {
      assert_int_equal(ddmc_host_recv(h, &p, 2000), 0);
      check_nth(&p, got++);
    }
    assert_int_equal(ddmc_host_recv(h, &p, 0), DDMC_ETIMEDOUT);
    close(peer);
    assert_int_equal(ddmc_host_recv(h, &p, 1000), DDMC_ECLOSED);
    ddmc_host_free(h);
  }
  bb_free(&b);
}

static void test_recv_byte_at_a_time(void **state) {
  (void)state;
  bb b = {0};
  three_packets(&b);
  ddmc_host *h;
  int peer;
  pair(&h, &peer);
  int got = 0;
  ddmc_host_packet p;
  for (size_t i = 0; i < b.n; i++) {
    wr(peer, b.d + i, 1);
    int rc = ddmc_host_recv(h, &p, 0);
    if (rc == 0)
      check_nth(&p, got++);
    else
      assert_int_equal(rc, DDMC_ETIMEDOUT);
  }
  assert_int_equal(got, 3);
  close(peer);
  ddmc_host_free(h);
  bb_free(&b);
}

/* Same, with a thread trickling the bytes while recv blocks. */
typedef struct trickle {
  int fd;
  const uint8_t *p;
  size_t n;
} trickle;
static void *trickle_main(void *arg) {
  trickle *t = arg;
  for (size_t i = 0; i < t->n; i++) {
    if (write(t->fd, t->p + i, 1) != 1) break;
    if (i % 7 == 0) sleep_ms(1);
  }
  return NULL;
}

static void *bulk_writer(void *arg) {
  struct {
    int fd;
    bb *b;
  } *a = arg;
  const uint8_t *q = a->b->d;
  size_t n = a->b->n;
  while (n) {
    ssize_t k = write(a->fd, q, n < 100000 ? n : 100000);
    if (k <= 0) break;
    q += k;
    n -= (size_t)k;
  }
  return NULL;
}

static void test_recv_trickle_thread(void **state) {
  (void)state;
  bb b = {0};
  three_packets(&b);
  ddmc_host *h;
  int peer;
  pair(&h, &peer);
  trickle t = {peer, b.d, b.n};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, trickle_main, &t), 0);
  ddmc_host_packet p;
  for (int i = 0; i < 3; i++) {
    assert_int_equal(ddmc_host_recv(h, &p, 5000), 0);
    check_nth(&p, i);
  }
  pthread_join(th, NULL);
  close(peer);
  ddmc_host_free(h);
  bb_free(&b);
}

static void test_recv_bad_lengths(void **state) {
  (void)state;
  ddmc_host_packet p;
  for (uint32_t len = 0; len < 11; len++) {
    ddmc_host *h;
    int peer;
    pair(&h, &peer);
    uint8_t hdr[11] = {0, 0, 0, (uint8_t)len, 0, 0, 0, 1, 0, 199, 1};
    wr(peer, hdr, sizeof hdr);
    assert_int_equal(ddmc_host_recv(h, &p, 1000), DDMC_EPROTO);
    assert_int_equal(ddmc_host_recv(h, &p, 1000), DDMC_EPROTO); /* sticky */
    close(peer);
    ddmc_host_free(h);
  }
  /* Over the cap: refused from the header alone, before any allocation. */
  ddmc_host *h;
  int peer;
  pair(&h, &peer);
  assert_int_equal(ddmc_host_set_max_packet(h, 10), DDMC_EINVAL);
  assert_int_equal(ddmc_host_set_max_packet(h, 100), 0);
  bb b = {0};
  uint8_t body[81] = {0};
  pk_chunk_cmd(&b, 1, FOURCC('T', 'E', 'S', 'T'), body, 81); /* 100 bytes: fits */
  pk_chunk_cmd(&b, 2, FOURCC('T', 'E', 'S', 'T'), body, 0);
  b.d[b.n - 19 + 3] = 101; /* claims 101 */
  wr(peer, b.d, b.n);
  assert_int_equal(ddmc_host_recv(h, &p, 1000), 0);
  assert_int_equal(p.length, 100);
  assert_int_equal(ddmc_host_recv(h, &p, 1000), DDMC_ETOOBIG);
  assert_int_equal(ddmc_host_recv(h, &p, 0), DDMC_ETOOBIG);
  close(peer);
  ddmc_host_free(h);

  /* Default cap against a 2 GiB claim. */
  pair(&h, &peer);
  uint8_t huge[11] = {0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 1, 0, 199, 1};
  wr(peer, huge, sizeof huge);
  assert_int_equal(ddmc_host_recv(h, &p, 1000), DDMC_ETOOBIG);
  close(peer);
  ddmc_host_free(h);

  /* Flags other than 0x00/0x80. */
  pair(&h, &peer);
  uint8_t flags[11] = {0, 0, 0, 11, 0, 0, 0, 1, 0x40, 0, 0};
  wr(peer, flags, sizeof flags);
  assert_int_equal(ddmc_host_recv(h, &p, 1000), DDMC_EPROTO);
  close(peer);
  ddmc_host_free(h);
  bb_free(&b);
}

static void test_recv_bad_chunk_then_continue(void **state) {
  (void)state;
  ddmc_host *h;
  int peer;
  pair(&h, &peer);
  bb b = {0};
  pk_chunk_cmd(&b, 1, FOURCC('T', 'H', 'D', 'E'), "\0\0\0\1", 4);
  b.d[18] = 5; /* chunk says 5 bytes, packet holds 4 */
  size_t first = b.n;
  pk_chunk_cmd(&b, 2, FOURCC('T', 'H', 'D', 'E'), "\0\0\0\2", 4);
  b.d[first + 15] = 0xff; /* chunk length 0xff000004: would wrap a naive offset+len check */
  /* A 199/1 command with only 4 body bytes. */
  const uint8_t shortcmd[] = {0, 0, 0, 15, 0, 0, 0, 3, 0, 199, 1, 'T', 'H', 'D', 'E'};
  bb_bytes(&b, shortcmd, sizeof shortcmd);
  pk_chunk_cmd(&b, 4, FOURCC('T', 'H', 'D', 'E'), "\0\0\0\4", 4);
  wr(peer, b.d, b.n);
  ddmc_host_packet p;
  assert_int_equal(ddmc_host_recv(h, &p, 1000), DDMC_EPROTO);
  assert_int_equal(ddmc_host_recv(h, &p, 1000), DDMC_EPROTO);
  assert_int_equal(ddmc_host_recv(h, &p, 1000), DDMC_EPROTO);
  assert_int_equal(ddmc_host_recv(h, &p, 1000), 0);
  assert_int_equal(p.id, 4);
  uint32_t tid;
  assert_int_equal(ddmc_host_thde_parse(p.chunk, p.chunk_len, &tid), 0);
  assert_int_equal(tid, 4);
  /* A chunk followed by trailing bytes: only the first chunk counts. */
  bb c = {0};
  pk_chunk_cmd(&c, 5, FOURCC('W', 'A', 'I', 'T'),
               "\0"
               "JUNK",
               5);
  c.d[18] = 1;
  wr(peer, c.d, c.n);
  assert_int_equal(ddmc_host_recv(h, &p, 1000), 0);
  assert_int_equal(p.chunk_len, 1);
  assert_int_equal(p.body_len, 13);
  close(peer);
  ddmc_host_free(h);
  bb_free(&b);
  bb_free(&c);
}

static void test_recv_eof_and_timeout(void **state) {
  (void)state;
  ddmc_host *h;
  int peer;
  pair(&h, &peer);
  ddmc_host_packet p;
  int64_t t0 = mono_ms();
  assert_int_equal(ddmc_host_recv(h, &p, 100), DDMC_ETIMEDOUT);
  int64_t dt = mono_ms() - t0;
  assert_true(dt >= 90 && dt < 2000);
  bb b = {0};
  pk_chunk_cmd(&b, 1, FOURCC('T', 'H', 'D', 'E'), "\0\0\0\1", 4);
  wr(peer, b.d, b.n - 2); /* EOF in the middle of a packet */
  close(peer);
  assert_int_equal(ddmc_host_recv(h, &p, 1000), DDMC_ECLOSED);
  assert_int_equal(ddmc_host_recv(h, &p, 1000), DDMC_ECLOSED);
  ddmc_host_close(h);
  assert_int_equal(ddmc_host_fd(h), -1);
  assert_int_equal(ddmc_host_send_chunk(h, 1, NULL, 0, NULL), DDMC_ECLOSED);
  ddmc_host_free(h);
  bb_free(&b);
}

/* A packet far bigger than the socket buffer (heap dumps are megabytes), written by a thread
 * while recv blocks, followed by a small one. */
static void test_recv_large_packet(void **state) {
  (void)state;
  ddmc_host *h;
  int peer;
  pair(&h, &peer);
  size_t n = 3u << 20;
  uint8_t *raw = malloc(n);
  assert_non_null(raw);
  for (size_t i = 0; i < n; i++) raw[i] = (uint8_t)(i * 31u);
  bb b = {0};
  pk_chunk_cmd(&b, 0x10000000, FOURCC('H', 'P', 'D', 'S'), raw, n);
  pk_chunk_cmd(&b, 0x10000001, FOURCC('W', 'A', 'I', 'T'), "\0", 1);
  pthread_t th;
  struct {
    int fd;
    bb *b;
  } arg = {peer, &b};
  assert_int_equal(pthread_create(&th, NULL, bulk_writer, &arg), 0);
  ddmc_host_packet p;
  assert_int_equal(ddmc_host_recv(h, &p, 10000), 0);
  assert_int_equal(p.chunk_type, FOURCC('H', 'P', 'D', 'S'));
  assert_int_equal(p.chunk_len, n);
  assert_memory_equal(p.chunk, raw, n);
  assert_int_equal(ddmc_host_recv(h, &p, 10000), 0);
  assert_int_equal(p.chunk_type, FOURCC('W', 'A', 'I', 'T'));
  pthread_join(th, NULL);
  close(peer);
  ddmc_host_free(h);
  free(raw);
  bb_free(&b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      HOST_TEST(test_send_bytes),
      HOST_TEST(test_from_fd_checks),
      HOST_TEST(test_recv_split_every_offset),
      HOST_TEST(test_recv_byte_at_a_time),
      HOST_TEST(test_recv_trickle_thread),
      HOST_TEST(test_recv_bad_lengths),
      HOST_TEST(test_recv_bad_chunk_then_continue),
      HOST_TEST(test_recv_eof_and_timeout),
      HOST_TEST(test_recv_large_packet),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
