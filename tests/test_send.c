/* SPDX-License-Identifier: Apache-2.0 */
/* The send path (src/send/): the byte ring on its own (order, wrap-around, full, closed, many
 * producers), and through a live VM: JDWP command packets for the current and for an ended
 * session, and a 64 MiB stream that goes out in bounded pieces to a reading peer, or is dropped
 * and reported when the peer leaves halfway. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "ddmc/ddmc.h"
#include "ddmc_host.h"
#include "send/send.h"

#define TMO 5000

static const ddmc__mem *mem(void) {
  static ddmc__mem m;
  static int init;
  if (!init) {
    ddmc__mem_init(&m, NULL);
    init = 1;
  }
  return &m;
}

static int push(ddmc__send_ring *r, uint32_t a, size_t len, uint8_t fill) {
  int err;
  ddmc__send_rec *rec = ddmc__send_ring_reserve(r, len, &err);
  if (rec == NULL) return err;
  rec->a = a;
  memset(ddmc__send_rec_data(rec), fill, len);
  ddmc__send_ring_publish(r, rec, DDMC__REC_DDM);
  return 0;
}

static void test_ring_basics(void **state) {
  (void)state;
  ddmc__send_ring r;
  assert_int_equal(ddmc__send_ring_init(&r, mem(), 100, NULL, NULL), 0);
  assert_int_equal(r.size, 4096); /* rounded up */
  assert_int_equal(push(&r, 1, 10, 1), DDMC_ENOTCONN);
  ddmc__send_ring_close(&r); /* a session that ended before its handshake: closing twice is harmless */
  assert_int_equal(push(&r, 1, 10, 1), DDMC_ENOTCONN);
  ddmc__send_ring_open(&r);
  ddmc__send_ring_open(&r);
  assert_int_equal(push(&r, 1, ddmc__send_ring_max_payload(&r) + 1, 1), DDMC_ETOOBIG);
  /* Fill with 200-byte records (216 with header and padding) across several laps: each comes out
   * once, in order, with its bytes intact, padding records never surface. */
  uint32_t next_in = 0, next_out = 0;
  for (int lap = 0; lap < 50; lap++) {
    int rc;
    while ((rc = push(&r, next_in, 200, (uint8_t)next_in)) == 0) next_in++;
    assert_int_equal(rc, DDMC_EQFULL);
    ddmc__send_rec *rec;
    int took = 0;
    while ((rec = ddmc__send_ring_peek(&r)) != NULL && took++ < 7) {
      assert_int_equal(rec->a, next_out);
      assert_int_equal(rec->len, 200);
      for (int i = 0; i < 200; i++) assert_int_equal(ddmc__send_rec_data(rec)[i], (uint8_t)next_out);
      next_out++;
      ddmc__send_ring_pop(&r);
    }
    ddmc__send_ring_release(&r);
  }
  assert_true(next_in * 224 > 10 * 4096); /* ten laps of a 4 KiB ring */
  assert_true(atomic_load(&r.dropped) >= 50);
  uint64_t dropped = atomic_load(&r.dropped);
  ddmc__send_ring_close(&r);
  assert_int_equal(atomic_load(&r.dropped), dropped + (next_in - next_out));
  assert_null(ddmc__send_ring_peek(&r));
  assert_int_equal(push(&r, 1, 10, 1), DDMC_ENOTCONN);
  ddmc__send_ring_destroy(&r);
}

#define PRODUCERS 8
#define PER_PRODUCER 200000

static ddmc__send_ring g_ring;

static void *producer(void *arg) {
  uint32_t id = (uint32_t)(uintptr_t)arg;
  for (uint32_t seq = 0; seq < PER_PRODUCER;) {
    size_t len = 4 + (seq % 61); /* varying sizes: records straddle the end of the ring */
    if (push(&g_ring, id << 24 | seq, len, (uint8_t)seq) == 0) seq++;
    else sched_yield();
  }
  return NULL;
}

static void test_ring_many_producers(void **state) {
  (void)state;
  assert_int_equal(ddmc__send_ring_init(&g_ring, mem(), 16384, NULL, NULL), 0);
  ddmc__send_ring_open(&g_ring);
  pthread_t t[PRODUCERS];
  for (uintptr_t i = 0; i < PRODUCERS; i++) pthread_create(&t[i], NULL, producer, (void *)i);
  uint32_t next[PRODUCERS] = {0};
  uint64_t total = 0;
  while (total < (uint64_t)PRODUCERS * PER_PRODUCER) {
    ddmc__send_rec *rec = ddmc__send_ring_peek(&g_ring);
    if (rec == NULL) {
      sched_yield();
      continue;
    }
    uint32_t id = rec->a >> 24, seq = rec->a & 0xffffff;
    assert_true(id < PRODUCERS);
    assert_int_equal(seq, next[id]); /* each producer's records in its order, none lost or doubled */
    assert_int_equal(rec->len, 4 + (seq % 61));
    assert_int_equal(ddmc__send_rec_data(rec)[rec->len - 1], (uint8_t)seq);
    next[id]++;
    total++;
    ddmc__send_ring_pop(&g_ring);
    ddmc__send_ring_release(&g_ring);
  }
  for (int i = 0; i < PRODUCERS; i++) pthread_join(t[i], NULL);
  assert_null(ddmc__send_ring_peek(&g_ring));
  ddmc__send_ring_close(&g_ring);
  ddmc__send_ring_destroy(&g_ring);
}

/* ---- through a live VM */

static ddmc_vm *start_vm(void) {
  ddmc_options o;
  ddmc_options_init(&o);
  assert_int_equal(ddmc_options_parse(&o, "transport=dt_socket,address=127.0.0.1:0", NULL, 0), 0);
  ddmc_vm *vm;
  assert_int_equal(ddmc_vm_new(&vm, &o, NULL, NULL, NULL), 0);
  assert_int_equal(ddmc_vm_start(vm), 0);
  return vm;
}

static ddmc_host *attach(ddmc_vm *vm) {
  ddmc_host *h = NULL;
  uint16_t port = 0;
  for (int i = 0; i < 500 && (port = ddmc_vm_port(vm)) == 0; i++) usleep(10000);
  for (int i = 0; i < 100; i++) {
    assert_int_equal(ddmc_host_connect_tcp(&h, "127.0.0.1", port, TMO), 0);
    if (ddmc_host_handshake(h, TMO) == 0) break;
    ddmc_host_free(h); /* the previous session may still be ending */
    h = NULL;
    usleep(20000);
  }
  assert_non_null(h);
  ddmc_host_helo helo; /* a DDM packet: the VM now has a DDM peer */
  assert_int_equal(ddmc_host_hello(h, &helo, TMO), 0);
  ddmc_host_helo_free(&helo);
  return h;
}

/* Reads exactly n bytes from fd. */
static int read_full(int fd, uint8_t *p, size_t n) {
  size_t got = 0;
  while (got < n) {
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    if (poll(&pfd, 1, TMO) != 1) return -1;
    ssize_t r = recv(fd, p + got, n - got, 0);
    if (r <= 0) return -1;
    got += (size_t)r;
  }
  return 0;
}

static void test_commands_for_their_session_only(void **state) {
  (void)state;
  ddmc_vm *vm = start_vm();
  /* A connection that ends before its handshake (adb's probes do this) leaves the send path
   * ready for the next peer. */
  for (int i = 0; i < 500 && ddmc_vm_port(vm) == 0; i++) usleep(10000);
  for (int i = 0; i < 3; i++) {
    ddmc_host *probe = NULL;
    assert_int_equal(ddmc_host_connect_tcp(&probe, "127.0.0.1", ddmc_vm_port(vm), TMO), 0);
    ddmc_host_free(probe);
    usleep(50000);
  }
  ddmc_host *h = attach(vm);
  uint32_t now = ddmc__send_session_number(vm);
  assert_true(now != 0);
  ddmc_iov iov = {"\2\0\0\0\1", 5};
  assert_int_equal(ddmc__send_cmd(vm, now + 7, 64, 100, &iov, 1), 0); /* another session's: dropped */
  assert_int_equal(ddmc__send_cmd(vm, now, 64, 100, &iov, 1), 0);
  assert_int_equal(ddmc__send_reply(vm, now, 0x1234, 41, NULL, 0), 0);
  uint8_t b[11 + 5 + 11];
  assert_int_equal(read_full(ddmc_host_fd(h), b, sizeof(b)), 0);
  assert_memory_equal(b, "\0\0\0\x10", 4); /* 16 bytes: the command of this session */
  assert_int_equal(b[8], 0);
  assert_int_equal(b[9], 64);
  assert_int_equal(b[10], 100);
  assert_memory_equal(b + 11, "\2\0\0\0\1", 5);
  assert_memory_equal(b + 16, "\0\0\0\x0b\0\0\x12\x34\x80\0\x29", 11); /* the reply, error 41 */
  ddmc_host_free(h);
  ddmc_vm_free(vm);
}

#define STREAM_BYTES ((uint64_t)64 << 20)

typedef struct pattern_src {
  uint64_t pos;
  atomic_int done_status, done_calls;
  size_t largest_read;
} pattern_src;

static ssize_t pattern_read(void *ud, uint8_t *dst, size_t cap) {
  pattern_src *p = ud;
  if (cap > p->largest_read) p->largest_read = cap;
  for (size_t i = 0; i < cap; i++) dst[i] = (uint8_t)((p->pos + i) * 7);
  p->pos += cap;
  return (ssize_t)cap;
}

static void pattern_done(void *ud, int status) {
  pattern_src *p = ud;
  atomic_store(&p->done_status, status);
  atomic_fetch_add(&p->done_calls, 1);
}

static long rss_kib(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long v = -1;
  while (f != NULL && fgets(line, sizeof(line), f) != NULL)
    if (strncmp(line, "VmRSS:", 6) == 0) v = atol(line + 6);
  if (f) fclose(f);
  return v;
}

static void test_stream_in_pieces(void **state) {
  (void)state;
  ddmc_vm *vm = start_vm();
  ddmc_host *h = attach(vm);
  long rss0 = rss_kib();
  pattern_src p = {0};
  ddmc__send_source src = {pattern_read, pattern_done, &p};
  assert_int_equal(ddmc__send_stream(vm, 0, 0, DDMC_FOURCC('H', 'P', 'D', 'S'), STREAM_BYTES, &src), 0);
  uint8_t hdr[19];
  int fd = ddmc_host_fd(h);
  assert_int_equal(read_full(fd, hdr, sizeof(hdr)), 0);
  assert_int_equal((uint32_t)hdr[0] << 24 | hdr[1] << 16 | hdr[2] << 8 | hdr[3], 19 + STREAM_BYTES);
  assert_memory_equal(hdr + 9, "\xc7\x01HPDS", 6);
  static uint8_t buf[1 << 16];
  long rss_max = 0;
  for (uint64_t off = 0; off < STREAM_BYTES; off += sizeof(buf)) {
    assert_int_equal(read_full(fd, buf, sizeof(buf)), 0);
    for (size_t i = 0; i < sizeof(buf); i += 4093) assert_int_equal(buf[i], (uint8_t)((off + i) * 7));
    long r = rss_kib();
    if (r > rss_max) rss_max = r;
  }
  for (int i = 0; i < 500 && atomic_load(&p.done_calls) == 0; i++) usleep(1000);
  assert_int_equal(atomic_load(&p.done_calls), 1);
  assert_int_equal(atomic_load(&p.done_status), 0);
  assert_true(p.largest_read <= 64 * 1024);
  print_message("64 MiB stream: RSS %ld KiB before, at most %ld KiB during; pieces of %zu bytes\n", rss0, rss_max,
                p.largest_read);
  /* No copy of the payload anywhere: one would be 64 MiB. A few pieces may be resident at once
   * (ASan's quarantine keeps freed ones, a loaded reader lags): 16 MiB, not 8 (ASan saw 8.5). */
  assert_true(rss_max - rss0 < 16 * 1024);
  /* The session goes on. */
  ddmc_host_helo helo;
  assert_int_equal(ddmc_host_hello(h, &helo, TMO), 0);
  ddmc_host_helo_free(&helo);

  /* A peer that leaves halfway: the stream is dropped and reported, the next peer is served. */
  pattern_src q = {0};
  ddmc__send_source src2 = {pattern_read, pattern_done, &q};
  assert_int_equal(ddmc__send_stream(vm, 0, 0, DDMC_FOURCC('H', 'P', 'D', 'S'), STREAM_BYTES, &src2), 0);
  assert_int_equal(read_full(fd, buf, sizeof(buf)), 0);
  ddmc_host_free(h);
  for (int i = 0; i < 2000 && atomic_load(&q.done_calls) == 0; i++) usleep(1000);
  assert_int_equal(atomic_load(&q.done_calls), 1);
  assert_true(atomic_load(&q.done_status) != 0);
  assert_true(q.pos < STREAM_BYTES);
  h = attach(vm);
  ddmc_stats st;
  ddmc_vm_get_stats(vm, &st);
  assert_true(st.chunks_dropped >= 1);
  ddmc_host_free(h);
  ddmc_vm_free(vm);
}

static void test_stream_refused_without_peer(void **state) {
  (void)state;
  ddmc_vm *vm = start_vm();
  pattern_src p = {0};
  ddmc__send_source src = {pattern_read, pattern_done, &p};
  assert_int_equal(ddmc__send_stream(vm, 0, 0, DDMC_FOURCC('H', 'P', 'D', 'S'), 100, &src), DDMC_ENOTCONN);
  assert_int_equal(atomic_load(&p.done_calls), 1); /* done is called on failure too */
  assert_int_equal(atomic_load(&p.done_status), DDMC_ENOTCONN);
  ddmc_vm_free(vm);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_ring_basics),
      cmocka_unit_test(test_ring_many_producers),
      cmocka_unit_test(test_commands_for_their_session_only),
      cmocka_unit_test(test_stream_in_pieces),
      cmocka_unit_test(test_stream_refused_without_peer),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
