/* SPDX-License-Identifier: Apache-2.0 */
/* The heap-dump figure: MiB of hprof per second for a 64 MiB heap, to a
 * local file; target >= 500 MiB/s.
 *
 * The VM is in this process: a synthetic 64 MiB heap behind the three heap ops of the debugger
 * bridge (with_world_stopped, for_each_object, for_each_root) and its class and object ops, as a
 * VM answers them (a table lookup and a load per field; primitive arrays hand out their elements).
 * Half the bytes are small objects (32 bytes: a reference, an int and a long, 1 Mi of them), half
 * primitive arrays (byte[4096] and int[1024], in turn): the shape of an app heap, where arrays
 * (bitmaps, strings' data) take most bytes and small objects most of the count.
 * Figure: hprof bytes / (opening a file in $TMPDIR, building the dump with the world stopped while
 * the library's writer thread writes its finished blocks, closing it): what HPDU does, from the
 * JDWP thread (ddmc__prof_hprof_write). Reference: writing the same number of
 * bytes from one buffer to the same file (the page cache's floor). Best of REPS rounds, median in
 * the notes. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "profile/hprof.h"

#define REPS 5
#define HEAP_BYTES ((size_t)64 << 20)

enum { C_OBJECT = 1, C_CLASS, C_NODE, C_BYTES, C_INTS, NCLASSES = 5 };

typedef struct bnode {
  uint32_t next;
  int32_t value;
  int64_t stamp;
} bnode;

typedef struct hpheap {
  bnode *nodes;
  size_t nnodes;
  uint8_t *arrays; /* the arrays' elements, back to back */
  size_t narrays;
} hpheap;

static const char *const sigs[NCLASSES + 1] = {NULL, "Ljava/lang/Object;", "Ljava/lang/Class;", "Lcom/example/Node;",
                                               "[B", "[I"};
#define NODE_REF(i) ((ddmc_ref)(0x1000 + (i)))
#define ARRAY_REF(i) ((ddmc_ref)(0x4000000 + (i)))

static int b_for_each_class(void *d, ddmc_class_visit_fn fn, void *arg) {
  for (ddmc_class c = 1; c <= NCLASSES; c++)
    if (fn(arg, c)) break;
  return 0;
}
static int b_class_info(void *d, ddmc_class c, ddmc_class_info *out) {
  memset(out, 0, sizeof(*out));
  out->signature = sigs[c];
  out->superclass = c == C_OBJECT ? 0 : C_OBJECT;
  out->class_object = c <= C_NODE ? 0x100 + c : 0;
  out->nfields = c == C_NODE ? 3 : 0;
  return 0;
}
static int b_field_info(void *d, ddmc_class c, uint32_t i, ddmc_field_info *out) {
  static const char *names[] = {"next", "value", "stamp"}, *fsigs[] = {"Lcom/example/Node;", "I", "J"};
  memset(out, 0, sizeof(*out));
  out->name = names[i];
  out->signature = fsigs[i];
  return 0;
}
static int b_get_field(void *d, ddmc_ref o, ddmc_class c, uint32_t i, ddmc_value *out) {
  hpheap *h = d;
  const bnode *n = &h->nodes[o - 0x1000];
  switch (i) {
    case 0: out->tag = 'L', out->u.l = n->next ? NODE_REF(n->next - 1) : 0; break;
    case 1: out->tag = 'I', out->u.i = n->value; break;
    default: out->tag = 'J', out->u.j = n->stamp; break;
  }
  return 0;
}
static int b_array_get(void *d, ddmc_ref a, int32_t first, int32_t n, ddmc_value *out) {
  return DDMC_JDWP_INVALID_ARRAY; /* elements are handed out */
}
static int b_stopped(void *d, ddmc_stopped_fn fn, void *arg) { return fn(arg); }
static int b_for_each_object(void *d, ddmc_heap_object_visit_fn fn, void *arg) {
  hpheap *h = d;
  for (ddmc_class c = 1; c <= C_NODE; c++) {
    ddmc_heap_object o = {0x100 + c, C_CLASS, 64, DDMC_HEAP_ID_APP, -1, NULL};
    if (fn(arg, &o)) return 0;
  }
  for (size_t i = 0; i < h->nnodes; i++) {
    ddmc_heap_object o = {NODE_REF(i), C_NODE, 32, DDMC_HEAP_ID_APP, -1, NULL};
    if (fn(arg, &o)) return 0;
  }
  const uint8_t *p = h->arrays;
  for (size_t i = 0; i < h->narrays; i++, p += 4096) {
    int ints = i & 1;
    ddmc_heap_object o = {ARRAY_REF(i), ints ? C_INTS : C_BYTES, 4096 + 16, DDMC_HEAP_ID_APP, ints ? 1024 : 4096, p};
    if (fn(arg, &o)) return 0;
  }
  return 0;
}
static int b_for_each_root(void *d, ddmc_gc_root_visit_fn fn, void *arg) {
  ddmc_gc_root r = {NODE_REF(0), DDMC_GC_ROOT_JAVA_FRAME, 1, 0, 0};
  fn(arg, &r);
  return 0;
}

/* HPDU's work: open, the dump built and written beside the build (ddmc__prof_hprof_write), close. */
static int hpdu(ddmc_vm *vm, const char *path, uint64_t *len) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  ddmc__prof_hprof *h = NULL;
  char msg[256];
  int e = 0, rc = ddmc__prof_hprof_write(vm, fd, &h, &e, msg, sizeof msg);
  if (rc != 0 || e != 0) bench_note("hprof: %s", e ? strerror(e) : msg);
  if (h != NULL) *len = h->len;
  ddmc__prof_hprof_free(vm, h);
  return close(fd) != 0 || rc != 0 || e != 0 ? -1 : 0;
}

static const ddmc_vm_bridge ops_table = {.for_each_class = b_for_each_class,
                                       .class_info = b_class_info,
                                       .field_info = b_field_info,
                                       .get_field = b_get_field,
                                       .array_get = b_array_get,
                                       .with_world_stopped = b_stopped,
                                       .for_each_object = b_for_each_object,
                                       .for_each_root = b_for_each_root};

void bench_section_hprof(const bench_opts *o) {
  (void)o;
  hpheap heap;
  heap.nnodes = HEAP_BYTES / 2 / 32;
  heap.narrays = HEAP_BYTES / 2 / 4096;
  heap.nodes = calloc(heap.nnodes, sizeof(bnode));
  heap.arrays = malloc(heap.narrays * 4096);
  if (!heap.nodes || !heap.arrays) {
    bench_note("hprof: out of memory");
    free(heap.nodes);
    free(heap.arrays);
    return;
  }
  for (size_t i = 0; i < heap.nnodes; i++)
    heap.nodes[i] = (bnode){i + 1 < heap.nnodes ? (uint32_t)(i + 2) : 0, (int32_t)i, (int64_t)i * 1000003};
  for (size_t i = 0; i < heap.narrays * 4096; i++) heap.arrays[i] = (uint8_t)(i * 31);
  ddmc_options opt;
  char err[128];
  ddmc_vm_ops vops;
  memset(&vops, 0, sizeof(vops));
  ddmc_vm *vm;
  ddmc_options_init(&opt);
  int rc = ddmc_options_parse(&opt, "transport=dt_socket,address=127.0.0.1:0,server=y,suspend=n", err, sizeof err);
  if (rc == 0) rc = ddmc_vm_new(&vm, &opt, &vops, NULL, NULL);
  if (rc == 0) rc = ddmc_vm_set_bridge(vm, &ops_table, &heap);
  if (rc != 0) {
    bench_note("hprof: cannot set up the VM: %s", ddmc_strerror(rc));
    return;
  }
  const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  char path[512];
  snprintf(path, sizeof path, "%s/ddmc_bench_%d.hprof", tmp, (int)getpid());
  double rate[REPS], floor_rate[REPS], build_ms[REPS];
  uint64_t bytes = 0;
  bench_pin(BENCH_CPU_SERVER);
  for (int r = 0; r < REPS; r++) {
    int64_t t0 = bench_now_ns();
    if (hpdu(vm, path, &bytes) != 0) {
      bench_note("hprof: cannot write %s", path);
      break;
    }
    rate[r] = (double)bytes / 1048576.0 / ((double)(bench_now_ns() - t0) / 1e9);
    /* The build alone, into memory (HPDS's first half): its time, and the reference's bytes. */
    ddmc__prof_hprof *h;
    char msg[256];
    int64_t b0 = bench_now_ns();
    if (ddmc__prof_hprof_build(vm, &h, msg, sizeof msg) != 0) {
      bench_note("hprof: %s", msg);
      break;
    }
    build_ms[r] = (double)(bench_now_ns() - b0) / 1e6;
    if (h->len != bytes) bench_note("hprof: the file has %llu bytes, the dump in memory %llu",
                                    (unsigned long long)bytes, (unsigned long long)h->len);
    /* The floor: the same bytes, one buffer, one file. */
    uint8_t *flat = malloc(bytes);
    size_t at = 0;
    for (const ddmc__prof_hpblk *b = h->out.head; b; b = b->next) memcpy(flat + at, b->data, b->len), at += b->len;
    ddmc__prof_hprof_free(vm, h);
    int64_t f0 = bench_now_ns();
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int ok = fd >= 0 && write(fd, flat, bytes) == (ssize_t)bytes;
    if (fd >= 0) close(fd);
    int64_t f1 = bench_now_ns();
    free(flat);
    floor_rate[r] = ok ? (double)bytes / 1048576.0 / ((double)(f1 - f0) / 1e9) : 0;
  }
  unlink(path);
  double best = 0, best_floor = 0, best_build = 1e18;
  for (int r = 0; r < REPS; r++) {
    if (rate[r] > best) best = rate[r];
    if (floor_rate[r] > best_floor) best_floor = floor_rate[r];
    if (build_ms[r] < best_build) best_build = build_ms[r];
  }
  bench_row("hprof", "heap dump, 64 MiB heap, to a file", bench_fmt("%.0f MiB/s", best), "write() of the same bytes",
            bench_fmt("%.0f MiB/s", best_floor), best_floor > 0 ? best / best_floor : -1, ">= 500 MiB/s",
            bench_status(best >= 500));
  bench_note("hprof: %.1f MiB of hprof for %zu objects of 32 B + %zu arrays of 4 KiB; building it alone (world "
             "stopped, into memory) took %.1f ms at best; medians: %.0f MiB/s (reference %.0f MiB/s)",
             bytes / 1048576.0, heap.nnodes, heap.narrays, best_build, bench_median(rate, REPS),
             bench_median(floor_rate, REPS));
  ddmc_vm_free(vm);
  free(heap.nodes);
  free(heap.arrays);
}
