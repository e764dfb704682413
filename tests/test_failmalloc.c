/* SPDX-License-Identifier: Apache-2.0 */
/* Fault injection: a full session (start, connect, HELO, FEAT, threads, a heap dump at GC, a custom
 * handler, disconnect, stop) with the Nth allocation failing, for every N until a run needs no
 * failure. Each run must end cleanly (no crash, nothing leaked through the VM's allocator) and,
 * once allocations succeed again, the same VM must serve the next peer normally. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <stdatomic.h>
#include <unistd.h>
#include <cmocka.h>

#include "fakevm.h"
#include "util/testutil.h"

#define T(a, b, c, d) DDMC_FOURCC(a, b, c, d)

/* The fake VM: two threads, a 64 KiB heap of 64-byte runs: objects and int[], one in five free. */
static const fakevm_thread kThreads[] = {
    {.info = {.id = 1, .name = "main", .status = DDMC_THREAD_RUNNING}},
    {.info = {.id = 2,
              .name = "a rather long worker thread name, over sixty-four characters long",
              .status = DDMC_THREAD_WAIT,
              .daemon = 1}},
};
#define HEAP_BASE 0x100000u
#define HEAP_RUNS 15 /* run i at HEAP_BASE + 64 * i: kind by i % 3, solidity by i % 5 */
static fakevm_region heap_pattern[HEAP_RUNS];

static fakevm_config config(void) {
  for (uintptr_t i = 0, a = HEAP_BASE; i < HEAP_RUNS; i++, a += 64)
    heap_pattern[i] = (fakevm_region){64, (a / 64) % 3 ? DDMC_KIND_OBJECT : DDMC_KIND_ARRAY_4,
                                      (a / 64) % 5 ? DDMC_SOLID_HARD : DDMC_SOLID_FREE};
  fakevm_heap heap = {.info = {.max_bytes = 1 << 20,
                               .footprint = 65536,
                               .allocated_bytes = 4096,
                               .allocated_objects = 10,
                               .base = HEAP_BASE},
                      .pattern = heap_pattern,
                      .npattern = HEAP_RUNS};
  return (fakevm_config){.threads = kThreads, .nthreads = 2, .managed = heap, .native = heap};
}

static int mine(void *ud, ddmc_vm *vm, const ddmc_chunk *req, ddmc_chunk_type *rt, ddmc_buf *reply) {
  (void)ud;
  (void)vm;
  (void)rt;
  for (int i = 0; i < 3000; i++) ddmc_buf_put_u32(reply, (uint32_t)i); /* grows the reply buffer */
  return ddmc_buf_put_bytes(reply, req->data, req->len);
}

/* One peer session; returns 0 if everything answered as expected. */
static int session(uint16_t port, ddmc_vm *vm, int do_gc) {
  ddmc_host *h = NULL;
  int rc = ddmc_host_connect_tcp(&h, "127.0.0.1", port, 2000);
  if (rc == 0) rc = ddmc_host_handshake(h, 2000);
  ddmc_host_helo helo;
  memset(&helo, 0, sizeof(helo));
  if (rc == 0) rc = ddmc_host_hello(h, &helo, 2000);
  if (rc == 0 && (helo.pid != (uint32_t)getpid() || strcmp(helo.app_name, "app") != 0)) rc = -1;
  ddmc_host_helo_free(&helo);
  ddmc_host_packet p;
  if (rc == 0) rc = ddmc_host_request(h, T('T', 'H', 'E', 'N'), "\1", 1, &p, 2000);
  if (rc == 0) rc = ddmc_host_request(h, T('T', 'H', 'S', 'T'), NULL, 0, &p, 2000);
  if (rc == 0 && p.chunk_type != T('T', 'H', 'S', 'T')) rc = -2;
  if (rc == 0) rc = ddmc_host_request(h, T('M', 'I', 'N', 'E'), "xyz", 3, &p, 2000);
  if (rc == 0 && (p.chunk_type != T('M', 'I', 'N', 'E') || p.chunk_len != 12003)) rc = -3;
  if (rc == 0) rc = ddmc_host_request(h, T('H', 'P', 'S', 'G'), "\1\0", 2, &p, 2000);
  if (rc == 0) rc = ddmc_host_request(h, T('H', 'P', 'I', 'F'), "\3", 1, &p, 2000);
  if (rc == 0 && do_gc) {
    ddmc_gc_walk(vm); /* may fail with ENOMEM: that is the point */
    ddmc_gc_done(vm);
    /* a whole dump or none: if HPST arrives, HPEN must follow */
    int seen_st = 0, seen_en = 0;
    for (;;) {
      int r = ddmc_host_recv(h, &p, 300);
      if (r != 0) break;
      if (p.chunk_type == T('H', 'P', 'S', 'T')) seen_st = 1;
      if (p.chunk_type == T('H', 'P', 'E', 'N')) seen_en = 1;
    }
    if (seen_st != seen_en) rc = -4;
  }
  ddmc_host_free(h);
  return rc;
}

static void wait_idle(ddmc_vm *vm) {
  for (int i = 0; i < 300 && ddmc_vm_is_connected(vm); i++) sleep_ms(5);
}

static void test_every_allocation_fails_once(void **state) {
  (void)state;
  failer f;
  ddmc_allocator a = failer_allocator(&f);
  fakevm_config cfg = config();
  fakevm fv;
  ddmc_chunk_handler h = {.handle = mine};
  long total = -1;
  int failed_sessions = 0;
  for (long n = 1; n < 100000; n++) {
    failer_arm(&f, n);
    ddmc_options o;
    ddmc_options_init(&o);
    assert_int_equal(ddmc_options_parse(&o, "transport=dt_socket,address=127.0.0.1:0,server=y", NULL, 0), 0);
    fakevm_init(&fv, &cfg);
    int rc = fakevm_new(&fv, &o, &a);
    ddmc_vm *vm = fv.vm;
    if (rc == 0) rc = ddmc_vm_add_feature(vm, "f");
    if (rc == 0) {
      rc = ddmc_notify_app_name(vm, "app", "pkg", 0); /* stored; no peer yet */
      if (rc == DDMC_ENOTCONN) rc = 0;
    }
    if (rc == 0) rc = ddmc_register_handler(vm, T('M', 'I', 'N', 'E'), &h, NULL);
    if (rc == 0) rc = ddmc_vm_start(vm);
    if (rc != 0) {
      assert_int_equal(rc, DDMC_ENOMEM); /* the only way set-up may fail here */
      fakevm_stop(&fv);
    } else {
      uint16_t port = ddmc_vm_port(vm);
      if (session(port, vm, 1) != 0) failed_sessions++;
      wait_idle(vm);
      /* allocations work again: the next peer is served normally */
      atomic_store(&f.fail_at, 0);
      int ok = session(port, vm, 0);
      if (ok != 0) print_error("n=%ld: the session after the failure did not work: %d\n", n, ok);
      assert_int_equal(ok, 0);
      fakevm_stop(&fv);
    }
    if (atomic_load(&f.live) != 0) print_error("n=%ld: %ld blocks leaked\n", n, atomic_load(&f.live));
    assert_int_equal(atomic_load(&f.live), 0);
    if (getenv("FAILMALLOC_VERBOSE"))
      print_message("n=%ld count=%ld failed=%ld\n", n, atomic_load(&f.count), atomic_load(&f.failed));
    if (atomic_load(&f.failed) == 0) { /* the whole run needed fewer than n allocations */
      total = n - 1;
      break;
    }
  }
  print_message("failmalloc: %ld allocation points, each failed once; %d sessions saw the failure\n", total,
                failed_sessions);
  assert_true(total > 20);
  assert_true(failed_sessions > 0);
}

int main(void) {
  alarm(600);
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_every_allocation_fails_once)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
