/* SPDX-License-Identifier: Apache-2.0 */
#include "fakevm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the default configuration */

static const ddmc_frame kMainStack[] = {
    {.class_name = "Main", .method_name = "loop", .file = "Main.mvm", .line = 12},
    {.class_name = "Main", .method_name = "main", .file = NULL, .line = -1},
};

static const fakevm_thread kThreads[] = {
    {.info = {.id = 1, .name = "main", .status = DDMC_THREAD_RUNNING}, .stack = kMainStack, .depth = 2},
    {.info = {.id = 2, .name = "worker \xe2\x98\x83", .status = DDMC_THREAD_SLEEPING}},
    {.info = {.id = 3,
              .name = "a-thread-name-well-over-one-hundred-and-twenty-four-characters-long-to-check-that-nothing-"
                      "truncates-it-anywhere-along-the-way-xyz",
              .status = DDMC_THREAD_WAIT,
              .daemon = 1}},
};

/* Objects, arrays, a class and a free gap, over and over. */
static const fakevm_region kManagedPattern[] = {
    {24, DDMC_KIND_OBJECT, DDMC_SOLID_HARD},  {4096, DDMC_KIND_ARRAY_1, DDMC_SOLID_HARD},
    {64, DDMC_KIND_OBJECT, DDMC_SOLID_FREE},  {256, DDMC_KIND_CLASS, DDMC_SOLID_HARD},
    {40, DDMC_KIND_ARRAY_8, DDMC_SOLID_HARD}, {3000, DDMC_KIND_ARRAY_2, DDMC_SOLID_HARD},
};
static const fakevm_region kNativePattern[] = {
    {1024, DDMC_KIND_NATIVE, DDMC_SOLID_HARD},
    {3072, DDMC_KIND_OBJECT, DDMC_SOLID_FREE},
};

const fakevm_config fakevm_default = {
    .threads = kThreads,
    .nthreads = sizeof(kThreads) / sizeof(kThreads[0]),
    .managed = {.info = {.max_bytes = 64u << 20,
                         .footprint = 1u << 20,
                         .allocated_bytes = 1u << 19,
                         .allocated_objects = 1234,
                         .base = (uintptr_t)0x7f0000000000ull}, /* above 4 GiB: addresses go out relative */
                .pattern = kManagedPattern,
                .npattern = sizeof(kManagedPattern) / sizeof(kManagedPattern[0])},
    .native = {.info = {.max_bytes = 64u << 20,
                        .footprint = 4096,
                        .allocated_bytes = 1024,
                        .allocated_objects = 1,
                        .base = 0x1000},
               .pattern = kNativePattern,
               .npattern = sizeof(kNativePattern) / sizeof(kNativePattern[0])},
};

/* ---- the hooks */

static int for_each_thread(void *d, ddmc_thread_visit_fn fn, void *arg) {
  fakevm *f = d;
  for (size_t i = 0; i < f->cfg.nthreads; i++) {
    ddmc_thread_info t = f->cfg.threads[i].info;
    const fakevm_thread *ft = &f->cfg.threads[i];
    if (t.tid == 0 && ft->cpu_user_ns == 0 && ft->cpu_system_ns == 0) t.tid = f->pid;
    int rc = fn(arg, &t);
    if (rc) return rc;
  }
  return 0;
}

static int thread_cpu_time(void *d, uint32_t id, uint64_t *user_ns, uint64_t *system_ns) {
  fakevm *f = d;
  for (size_t i = 0; i < f->cfg.nthreads; i++) {
    const fakevm_thread *t = &f->cfg.threads[i];
    if (t->info.id != id) continue;
    *user_ns = t->cpu_user_ns;
    *system_ns = t->cpu_system_ns;
    return 0;
  }
  return DDMC_ENOENT;
}

static int thread_stack(void *d, uint32_t id, ddmc_frame_visit_fn fn, void *arg) {
  fakevm *f = d;
  for (size_t i = 0; i < f->cfg.nthreads; i++) {
    const fakevm_thread *t = &f->cfg.threads[i];
    if (t->info.id != id) continue;
    if (t->stack == NULL) break;
    for (size_t k = 0; k < t->depth; k++) {
      int rc = fn(arg, &t->stack[k]);
      if (rc) return rc;
    }
    return 0;
  }
  return DDMC_ENOENT;
}

static const fakevm_heap *heap_of(const fakevm *f, int heap) {
  return heap == DDMC_HEAP_MANAGED ? &f->cfg.managed : &f->cfg.native;
}

static int heap_info(void *d, int heap, ddmc_heap_info *out) {
  *out = heap_of(d, heap)->info;
  return 0;
}

static int walk_heap(void *d, int heap, ddmc_heap_visit_fn fn, void *arg) {
  const fakevm_heap *h = heap_of(d, heap);
  uintptr_t a = h->info.base, end = h->info.base + (uintptr_t)h->info.footprint;
  for (size_t i = 0; h->npattern && a < end; i++) {
    const fakevm_region *r = &h->pattern[i % h->npattern];
    size_t b = r->bytes > end - a ? end - a : r->bytes;
    int rc = fn(arg, a, b, r->kind, r->solidity);
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
  int answer = atomic_load(&f->answer_jdwp);
  if (answer == 2 && !(set == 1 && cmd == 1)) return 0; /* every other command: an empty success */
  if (!answer || set != 1 || cmd != 1) return DDMC_JDWP_NOT_IMPLEMENTED;
  ddmc_buf_put_str(reply, "fakevm");
  ddmc_buf_put_u32(reply, 1);
  ddmc_buf_put_u32(reply, 8);
  return 0;
}

static void log_fn(void *d, ddmc_log_level lvl, const char *msg) {
  fakevm *f = d;
  atomic_fetch_add(&f->log_lines, 1);
  if (f->cfg.log)
    f->cfg.log(f->cfg.log_ud, lvl, msg);
  else if (f->verbose)
    fprintf(stderr, "ddmc[%d]: %s\n", (int)lvl, msg);
}

static const ddmc_vm_ops kOps = {
    .jdwp_thread_start = jstart,
    .jdwp_thread_end = jend,
    .debugger_attached = attached,
    .debugger_detached = detached,
    .jdwp_command = jdwp_command,
    .exit = on_exit_hook,
    .for_each_thread = for_each_thread,
    .thread_stack = thread_stack,
    .heap_info = heap_info,
    .walk_heap = walk_heap,
    .request_gc = request_gc,
    .log = log_fn,
    .thread_cpu_time = thread_cpu_time,
};

void fakevm_init(fakevm *f, const fakevm_config *cfg) {
  memset(f, 0, sizeof(*f));
  f->cfg = cfg ? *cfg : fakevm_default;
  f->pid = (uint32_t)getpid();
  f->verbose = getenv("DDMC_TEST_VERBOSE") != NULL;
  f->ops = kOps;
}

int fakevm_new(fakevm *f, const ddmc_options *o, const ddmc_allocator *mem) {
  return ddmc_vm_new(&f->vm, o, &f->ops, mem, f);
}

void fakevm_stop(fakevm *f) {
  ddmc_vm_free(f->vm);
  f->vm = NULL;
}

/* ---- the socket harness (cmocka, host library) */
#ifndef FAKEVM_VM_ONLY
#include <setjmp.h>
#include <stdarg.h>
#include <cmocka.h>

uint16_t fakevm_start_cfg(fakevm *f, const fakevm_config *cfg, const char *extra, int hs_timeout_ms) {
  fakevm_init(f, cfg);
  ddmc_options o;
  ddmc_options_init(&o);
  char spec[256], err[256];
  snprintf(spec, sizeof(spec), "transport=dt_socket,address=127.0.0.1:0,server=y%s%s", extra ? "," : "",
           extra ? extra : "");
  assert_int_equal(ddmc_options_parse(&o, spec, err, sizeof(err)), 0);
  if (hs_timeout_ms > 0) o.handshake_timeout_ms = hs_timeout_ms;
  if (f->cfg.sendq_bytes) o.sendq_bytes = f->cfg.sendq_bytes;
  assert_int_equal(fakevm_new(f, &o, NULL), 0);
  ddmc_vm_ident id = {
      .vm_name = "fakevm v1", .abi = "64-bit (x86_64)", .jvm_flags = "CheckJNI=false", .native_debuggable = 1};
  assert_int_equal(ddmc_vm_set_ident(f->vm, &id), 0);
  assert_int_equal(ddmc_vm_add_feature(f->vm, "feature-one"), 0);
  assert_int_equal(ddmc_vm_add_feature(f->vm, "feature-two"), 0);
  if (o.suspend) return 0; /* the caller starts it on another thread */
  assert_int_equal(ddmc_vm_start(f->vm), 0);
  uint16_t port = ddmc_vm_port(f->vm);
  assert_true(port != 0);
  return port;
}

uint16_t fakevm_start(fakevm *f, const char *extra, int hs_timeout_ms) {
  return fakevm_start_cfg(f, NULL, extra, hs_timeout_ms);
}

ddmc_host *peer_connect(uint16_t port) {
  ddmc_host *h = NULL;
  assert_int_equal(ddmc_host_connect_tcp(&h, "127.0.0.1", port, 5000), 0);
  assert_int_equal(ddmc_host_handshake(h, 5000), 0);
  return h;
}
#endif
