#include "fakevm.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

static const struct {
  uint32_t id;
  const char *name;
  ddmc_thread_status st;
  int daemon;
} kThreads[] = {
    {1, "main", DDMC_THREAD_RUNNING, 0},
    {2, "worker \xe2\x98\x83", DDMC_THREAD_SLEEPING, 0},
    {3, "a-thread-name-well-over-one-hundred-and-twenty-four-characters-long-to-check-that-nothing-truncates-it-"
        "anywhere-along-the-way-xyz",
     DDMC_THREAD_WAIT, 1},
};

static int for_each_thread(void *d, ddmc_thread_visit_fn fn, void *arg) {
  (void)d;
  for (size_t i = 0; i < sizeof(kThreads) / sizeof(kThreads[0]); i++) {
    ddmc_thread_info t = {kThreads[i].id, (uint32_t)getpid(), kThreads[i].name, kThreads[i].st, kThreads[i].daemon};
    int rc = fn(arg, &t);
    if (rc) return rc;
  }
  return 0;
}

static int thread_stack(void *d, uint32_t id, ddmc_frame_visit_fn fn, void *arg) {
  (void)d;
  if (id != 1) return DDMC_ENOENT;
  ddmc_frame f1 = {"Main", "loop", "Main.mvm", 12};
  ddmc_frame f2 = {"Main", "main", NULL, -1};
  int rc = fn(arg, &f1);
  return rc ? rc : fn(arg, &f2);
}

/* Heap: 1 MiB from base; a repeating pattern of objects, arrays, a class and free gaps. */
static int heap_info(void *d, int heap, ddmc_heap_info *out) {
  fakevm *f = d;
  out->max_bytes = 64u << 20;
  out->footprint = heap == DDMC_HEAP_MANAGED ? f->heap_footprint : 4096;
  out->allocated_bytes = f->heap_footprint / 2;
  out->allocated_objects = 1234;
  out->base = heap == DDMC_HEAP_MANAGED ? f->heap_base : 0x1000;
  return 0;
}

static int walk_heap(void *d, int heap, ddmc_heap_visit_fn fn, void *arg) {
  fakevm *f = d;
  if (heap == DDMC_HEAP_NATIVE) {
    int rc = fn(arg, 0x1000, 1024, DDMC_KIND_NATIVE, DDMC_SOLID_HARD);
    return rc ? rc : fn(arg, 0x1400, 3072, DDMC_KIND_OBJECT, DDMC_SOLID_FREE);
  }
  uintptr_t a = f->heap_base, end = f->heap_base + f->heap_footprint;
  static const struct {
    size_t bytes;
    ddmc_heap_kind k;
    ddmc_heap_solidity s;
  } pat[] = {{24, DDMC_KIND_OBJECT, DDMC_SOLID_HARD}, {4096, DDMC_KIND_ARRAY_1, DDMC_SOLID_HARD},
             {64, DDMC_KIND_OBJECT, DDMC_SOLID_FREE},  {256, DDMC_KIND_CLASS, DDMC_SOLID_HARD},
             {40, DDMC_KIND_ARRAY_8, DDMC_SOLID_HARD}, {3000, DDMC_KIND_ARRAY_2, DDMC_SOLID_HARD}};
  for (size_t i = 0; a < end; i++) {
    size_t b = pat[i % 6].bytes;
    if (b > end - a) b = end - a;
    int rc = fn(arg, a, b, pat[i % 6].k, pat[i % 6].s);
    if (rc) return rc;
    a += (b + 7) & ~(size_t)7;
  }
  return 0;
}

static int request_gc(void *d) {
  atomic_fetch_add(&((fakevm *)d)->gc_requests, 1);
  return 0;
}
static void on_exit_hook(void *d, int32_t status) {
  atomic_fetch_add(&((fakevm *)d)->exits, 1);
  atomic_store(&((fakevm *)d)->last_exit, status);
}
static void attached(void *d) { atomic_fetch_add(&((fakevm *)d)->attached, 1); }
static void detached(void *d) { atomic_fetch_add(&((fakevm *)d)->detached, 1); }
static void jstart(void *d) { atomic_fetch_add(&((fakevm *)d)->jdwp_thread_started, 1); }
static void jend(void *d) { atomic_fetch_add(&((fakevm *)d)->jdwp_thread_ended, 1); }

static int jdwp_command(void *d, uint8_t set, uint8_t cmd, const uint8_t *in, size_t n, ddmc_buf *reply) {
  fakevm *f = d;
  (void)in;
  (void)n;
  if (!f->answer_jdwp || set != 1 || cmd != 1) return DDMC_JDWP_NOT_IMPLEMENTED;
  ddmc_buf_put_str(reply, "fakevm");
  ddmc_buf_put_u32(reply, 1);
  ddmc_buf_put_u32(reply, 8);
  return 0;
}

static void log_fn(void *d, ddmc_log_level lvl, const char *msg) {
  (void)d;
  if (getenv("DDMC_TEST_VERBOSE")) fprintf(stderr, "ddmc[%d]: %s\n", (int)lvl, msg);
}

size_t fakevm_sendq_bytes;

uint16_t fakevm_start(fakevm *f, const char *extra, int hs_timeout_ms) {
  memset(f, 0, sizeof(*f));
  f->heap_base = (uintptr_t)0x7f0000000000ull; /* above 4 GiB: addresses must go out relative */
  f->heap_footprint = 1 << 20;
  ddmc_options o;
  ddmc_options_init(&o);
  char spec[256], err[256];
  snprintf(spec, sizeof(spec), "transport=dt_socket,address=127.0.0.1:0,server=y%s%s", extra ? "," : "",
           extra ? extra : "");
  assert_int_equal(ddmc_options_parse(&o, spec, err, sizeof(err)), 0);
  if (hs_timeout_ms > 0) o.handshake_timeout_ms = hs_timeout_ms;
  if (fakevm_sendq_bytes) o.sendq_bytes = fakevm_sendq_bytes;
  ddmc_vm_ops ops = {0};
  ops.for_each_thread = for_each_thread;
  ops.thread_stack = thread_stack;
  ops.heap_info = heap_info;
  ops.walk_heap = walk_heap;
  ops.request_gc = request_gc;
  ops.exit = on_exit_hook;
  ops.debugger_attached = attached;
  ops.debugger_detached = detached;
  ops.jdwp_thread_start = jstart;
  ops.jdwp_thread_end = jend;
  ops.jdwp_command = jdwp_command;
  ops.log = log_fn;
  assert_int_equal(ddmc_vm_new(&f->vm, &o, &ops, NULL, f), 0);
  ddmc_vm_ident id = {"fakevm v1", "64-bit (x86_64)", "CheckJNI=false", 1, 0};
  assert_int_equal(ddmc_vm_set_ident(f->vm, &id), 0);
  assert_int_equal(ddmc_vm_add_feature(f->vm, "feature-one"), 0);
  assert_int_equal(ddmc_vm_add_feature(f->vm, "feature-two"), 0);
  if (o.suspend) return 0; /* the caller starts it on another thread */
  assert_int_equal(ddmc_vm_start(f->vm), 0);
  uint16_t port = ddmc_vm_port(f->vm);
  assert_true(port >= DDMC_SCAN_PORT_FIRST && port <= DDMC_SCAN_PORT_LAST);
  return port;
}

void fakevm_stop(fakevm *f) {
  ddmc_vm_free(f->vm);
  f->vm = NULL;
}

ddmc_host *peer_connect(uint16_t port) {
  ddmc_host *h = NULL;
  assert_int_equal(ddmc_host_connect_tcp(&h, "127.0.0.1", port, 5000), 0);
  assert_int_equal(ddmc_host_handshake(h, 5000), 0);
  return h;
}
