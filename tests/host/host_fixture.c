/* SPDX-License-Identifier: Apache-2.0 */
/* The host tests' plumbing (host_fixture.h). */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "host_fixture.h"

int setup_alarm(void **state) {
  (void)state;
  alarm(20); /* backstop: a hung test dies instead of blocking ctest */
  return 0;
}
int teardown_alarm(void **state) {
  (void)state;
  alarm(0);
  return 0;
}

void pair(ddmc_host **h, int *peer) {
  int sv[2];
  assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  assert_int_equal(ddmc_host_from_fd(h, sv[0]), 0);
  *peer = sv[1];
}

void wr(int fd, const void *p, size_t n) {
  const uint8_t *q = p;
  while (n) {
    ssize_t k = write(fd, q, n);
    if (k < 0 && errno == EINTR) continue;
    assert_true(k > 0);
    q += k;
    n -= (size_t)k;
  }
}
/* Reads exactly n bytes (peer side), bounded by alarm(). */
void rd(int fd, void *p, size_t n) {
  uint8_t *q = p;
  while (n) {
    ssize_t k = read(fd, q, n);
    if (k < 0 && errno == EINTR) continue;
    assert_true(k > 0);
    q += k;
    n -= (size_t)k;
  }
}
uint32_t be32(const uint8_t *p) {
  return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}
/* Reads one whole packet the host sent into b (peer side). */
void rd_packet(int fd, bb *b) {
  uint8_t h[4];
  rd(fd, h, 4);
  uint32_t len = be32(h);
  assert_true(len >= 11);
  b->n = 0;
  bb_bytes(b, h, 4);
  bb_need(b, len - 4);
  rd(fd, b->d + 4, len - 4);
  b->n = len;
}

size_t each_prefix(const uint8_t *p, size_t n, prefix_fn fn, void *ud) {
  size_t ok = 0;
  for (size_t k = 0; k <= n; k++) {
    uint8_t *c = malloc(k ? k : 1);
    assert_non_null(c);
    if (k) memcpy(c, p, k);
    int rc = 0;
    fn(k ? c : NULL, k, ud, &rc);
    assert_true(rc == 0 || rc == DDMC_EPROTO);
    if (rc == 0) ok++;
    free(c);
  }
  return ok;
}

void helo_payload(bb *b, int optional_fields) {
  bb_u32(b, 1);
  bb_u32(b, 4242);
  bb_u32(b, 13);
  bb_u32(b, 3);
  const char *vm = "Dalvik v2.1.0";
  for (int i = 0; i < 13; i++) bb_u16(b, (uint8_t)vm[i]);
  bb_u16(b, 'a'), bb_u16(b, 0xd83d), bb_u16(b, 0xde00); /* "a😀" */
  if (optional_fields >= 1) bb_u32(b, 10);              /* user id */
  if (optional_fields >= 2) bb_str(b, "64-bit (arm64)");
  if (optional_fields >= 3) bb_str(b, "CheckJNI=false");
  if (optional_fields >= 4) bb_u8(b, 1);
  if (optional_fields >= 5) bb_str(b, "com.example");
  if (optional_fields >= 6) bb_u32(b, FOURCC('A', '_', 'G', 'O'));
}
