/* SPDX-License-Identifier: Apache-2.0 */
/* A peer that stops reading, and the VM thread that keeps sending to it: what test_stress,
 * test_stall, test_sessions, test_hprof and test_prof_session build their stalls from. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <cmocka.h>

#include "ddmc_host.h"
#include "testutil.h"

static void *hammer_main(void *arg) {
  hammer *hm = arg;
  uint8_t *payload = calloc(1, hm->payload);
  while (!atomic_load(&hm->stop)) {
    int rc = ddmc_send_chunk(hm->vm, DDMC_FOURCC('T', 'E', 'S', 'T'), payload, hm->payload);
    if (rc != 0 && rc != DDMC_EQFULL && rc != DDMC_ENOTCONN) atomic_fetch_add(&hm->bad, 1);
    atomic_fetch_add(&hm->calls, 1);
  }
  free(payload);
  return NULL;
}

void hammer_start(hammer *hm, ddmc_vm *vm, size_t payload) {
  hm->vm = vm;
  hm->payload = payload;
  atomic_init(&hm->stop, 0);
  atomic_init(&hm->calls, 0);
  atomic_init(&hm->bad, 0);
  assert_int_equal(pthread_create(&hm->th, NULL, hammer_main, hm), 0);
}

void hammer_stop(hammer *hm) {
  atomic_store(&hm->stop, 1);
  pthread_join(hm->th, NULL);
  assert_int_equal(atomic_load(&hm->bad), 0);
}

void wait_transfer_dropped(ddmc_vm *vm, ddmc_stats *st, int timeout_ms) {
  int64_t end = mono_ms() + timeout_ms;
  do {
    sleep_ms(20);
    ddmc_vm_get_stats(vm, st);
  } while (st->transfers_dropped == 0 && mono_ms() < end);
}

ddmc_host *small_window_peer(uint16_t port, int timeout_ms) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  assert_true(fd >= 0);
  int rcv = 4096;
  assert_int_equal(setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv)), 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
  ddmc_host *h = NULL;
  assert_int_equal(ddmc_host_from_fd(&h, fd), 0);
  assert_int_equal(ddmc_host_handshake(h, timeout_ms), 0);
  return h;
}
