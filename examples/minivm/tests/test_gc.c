/* SPDX-License-Identifier: Apache-2.0 */
/* The collector: reachable objects survive with their contents, unreachable ones are reclaimed,
 * the heap does not grow under a steady allocation load, holes are reused, the walk DDM sees
 * during a collection equals the heap the sweep leaves, and running out of memory ends only
 * the thread that ran out. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"

/* What every VM keeps alive by itself once main has returned: the class objects of Object,
 * String, Thread, ThreadGroup, Class and the eight Throwables (Throwable, Exception,
 * RuntimeException, the four the VM throws and InterruptedException); the thread groups "system" and "main" and the GC
 * daemon's Thread, each with its name (a String and its byte[]). */
enum {
  BUILTIN_CLASSES = 13,
  BUILTIN_PLAIN = 3 + 3,                  /* 2 groups + 1 Thread, and their 3 name Strings */
  BUILTIN_BYTE_ARRAYS = 3,
  BUILTIN_OBJECTS = BUILTIN_CLASSES + BUILTIN_PLAIN + BUILTIN_BYTE_ARRAYS,
  /* class objects without statics: 16 each; ThreadGroup 16 + 3 * 8; Thread 16 + 6 * 8; String
   * 16 + 8; byte[] "system", "main", "GC": 16 + 8 each (rounded up to 8-byte units) */
  BUILTIN_BYTES = BUILTIN_CLASSES * 16 + 2 * 40 + 64 + 3 * 24 + 3 * 24
};

/* Node list of 100 elements, each with an int[] payload, reachable from a static; 1000 garbage
 * arrays on the way. Classes: Object, String, Node, Main = 4 class objects. */
static const char *keep_list =
    ".class Node\n.field next Node\n.field value int\n.field payload object\n"
    ".class Main\n.static head Node\n"
    ".method main\n.registers 6\n"
    "  const v0, 100\n  const v1, 0\n"
    ":build\n"
    "  new-instance v2, Node\n  iput v1, v2, Node.next\n  iput v0, v2, Node.value\n"
    "  const v3, 10\n  new-array v4, v3, int\n  const v5, 3\n  aput v0, v4, v5\n  iput v4, v2, Node.payload\n"
    "  move v1, v2\n"
    "  const v3, 10\n"
    ":junk\n  const v4, 50\n  new-array v5, v4, long\n  add-int/lit v3, v3, -1\n  if-gtz v3, :junk\n"
    "  add-int/lit v0, v0, -1\n  if-gtz v0, :build\n"
    "  sput v1, Main.head\n"
    "  const v1, 0\n  const v5, 0\n"   /* drop every register reference: only the static is left */
    "  gc\n"
    /* walk the list after the collection: values and payloads intact */
    "  sget v1, Main.head\n  const v0, 0\n"
    ":sum\n  iget v2, v1, Node.value\n  add-int v0, v0, v2\n"
    "  iget v3, v1, Node.payload\n  const v5, 3\n  aget v4, v3, v5\n  if-ne v4, v2, :bad\n"
    "  iget v1, v1, Node.next\n  if-nez v1, :sum\n"
    "  println v0\n  return-void\n"
    ":bad\n  const-string v0, \"payload corrupted\"\n  println v0\n  return-void\n"
    ".end method\n";

static void reachable_survives_unreachable_reclaimed(void **state) {
  mvm_vm *vm = t_vm(4 << 20, 1 << 20, NULL);
  t_load(vm, keep_list);
  char *out;
  assert_int_equal(t_run(vm, &out), 0);
  assert_string_equal(out, "5050\n");
  free(out);
  /* main has returned: a collection now keeps exactly the class objects, the VM's own objects
   * and what the static reaches (100 nodes + 100 payloads). */
  assert_int_equal(mvm_gc_request(vm, MVM_GC_EXPLICIT, 1), 0);
  mvm_heap_stats s;
  mvm_heap_get_stats(vm, &s);
  assert_int_equal(s.allocated_objects, BUILTIN_OBJECTS + 2 + 200);
  assert_int_equal(s.allocated_bytes, BUILTIN_BYTES + 24 + 16 + 100 * (16 + 24) + 100 * (16 + 40));
  assert_true(s.gc_count >= 2);
  mvm_vm_free(vm);
}

typedef struct walk {
  uintptr_t next;
  uint64_t live_bytes, live, regions, kinds[8];
  int gap;
} walk;

static int walk_visit(void *arg, uintptr_t addr, size_t bytes, mvm_region_kind k) {
  walk *w = arg;
  if (w->regions && addr != w->next) w->gap = 1;
  w->next = addr + bytes;
  w->regions++;
  w->kinds[k]++;
  if (k != MVM_RK_FREE) {
    w->live++;
    w->live_bytes += bytes;
  }
  return 0;
}

static mvm_vm *hook_vm;
static walk during;
static uintptr_t during_first;
static void walk_in_gc(void *ud) {
  memset(&during, 0, sizeof during);
  mvm_heap_walk(hook_vm, walk_visit, &during);
  mvm_heap_stats s;
  mvm_heap_get_stats(hook_vm, &s);
  during_first = s.base;
}

static void walk_during_gc_equals_heap_after_sweep(void **state) {
  mvm_hooks h = {.gc_marked = walk_in_gc};
  mvm_vm *vm = hook_vm = t_vm(4 << 20, 1 << 20, &h);
  t_load(vm, keep_list);
  assert_int_equal(t_run(vm, NULL), 0);
  assert_int_equal(mvm_gc_request(vm, MVM_GC_EXPLICIT, 1), 0);
  mvm_heap_stats s;
  mvm_heap_get_stats(vm, &s);
  /* during the collection: unmarked objects already read as free */
  assert_false(during.gap);
  assert_int_equal(during.live, s.allocated_objects);
  assert_int_equal(during.live_bytes, s.allocated_bytes);
  assert_int_equal(during.next, s.base + s.footprint);
  /* after it: the same picture, kinds included */
  walk after = {0};
  mvm_heap_walk(vm, walk_visit, &after);
  assert_false(after.gap);
  assert_int_equal(after.live, during.live);
  assert_int_equal(after.kinds[MVM_RK_CLASS], BUILTIN_CLASSES + 2);
  assert_int_equal(after.kinds[MVM_RK_OBJECT], BUILTIN_PLAIN + 100);
  assert_int_equal(after.kinds[MVM_RK_ARRAY_4], 100);
  assert_int_equal(after.kinds[MVM_RK_ARRAY_8], 0);
  /* the sweep coalesces: no two free regions in a row, so never more than live + 1 of them */
  assert_true(after.kinds[MVM_RK_FREE] <= after.live + 1);
  mvm_vm_free(vm);
}

static void every_kind_in_the_walk(void **state) {
  mvm_vm *vm = t_vm(1 << 20, 0, NULL);
  t_load(vm, ".class A\n.static keep object\n.method main\n.registers 4\n"
             "  const v0, 9\n  new-array v1, v0, object\n  sput v1, A.keep\n  const v0, 3\n"
             "  new-array v2, v0, boolean\n  const v3, 0\n  aput v2, v1, v3\n"
             "  new-array v2, v0, char\n  const v3, 1\n  aput v2, v1, v3\n"
             "  new-array v2, v0, float\n  const v3, 2\n  aput v2, v1, v3\n"
             "  new-array v2, v0, double\n  const v3, 3\n  aput v2, v1, v3\n"
             "  new-instance v2, Object\n  const v3, 4\n  aput v2, v1, v3\n"
             "  return-void\n.end method\n");
  assert_int_equal(t_run(vm, NULL), 0);
  assert_int_equal(mvm_gc_request(vm, MVM_GC_EXPLICIT, 1), 0);
  walk w = {0};
  mvm_heap_walk(vm, walk_visit, &w);
  assert_int_equal(w.kinds[MVM_RK_CLASS], BUILTIN_CLASSES + 1);
  assert_int_equal(w.kinds[MVM_RK_OBJECT], BUILTIN_PLAIN + 1);
  assert_int_equal(w.kinds[MVM_RK_ARRAY_1], BUILTIN_BYTE_ARRAYS + 1);
  assert_int_equal(w.kinds[MVM_RK_ARRAY_2], 1);
  assert_int_equal(w.kinds[MVM_RK_ARRAY_4], 2);   /* float[] and the Object[] */
  assert_int_equal(w.kinds[MVM_RK_ARRAY_8], 1);
  mvm_vm_free(vm);
}

static void steady_load_does_not_grow_the_heap(void **state) {
  /* 200k short-lived objects of varying sizes (about 40 MB in all) through a 512 KiB heap */
  mvm_vm *vm = t_vm(4 << 20, 512 << 10, NULL);
  t_load(vm, ".class A\n.static keep object\n.method main\n.registers 6\n"
             "  const v0, 32\n  new-array v5, v0, object\n  sput v5, A.keep\n"
             "  const v0, 200000\n  const v2, 100\n  const v4, 32\n"
             ":loop\n  rand-int v1, v2\n  new-array v3, v1, long\n"
             "  rand-int v1, v4\n  aput v3, v5, v1\n"   /* a few survive a while */
             "  add-int/lit v0, v0, -1\n  if-gtz v0, :loop\n"
             "  return-void\n.end method\n");
  assert_int_equal(t_run(vm, NULL), 0);
  mvm_heap_stats s;
  mvm_heap_get_stats(vm, &s);
  assert_true(s.gc_count > 10);
  assert_true(s.footprint <= (1u << 20));
  mvm_vm_free(vm);
}

/* Sync points: the program calls wait-for-debugger; the hook records the heap there. */
static mvm_heap_stats marks[4];
static int nmarks;
static mvm_vm *mark_vm;
static void record_stats(void *ud) {
  if (nmarks < 4) mvm_heap_get_stats(mark_vm, &marks[nmarks++]);
}

static void holes_are_reused(void **state) {
  mvm_hooks h = {.wait_for_debugger = record_stats};
  mvm_vm *vm = mark_vm = t_vm(4 << 20, 1 << 20, &h);
  nmarks = 0;
  t_load(vm, ".class A\n.static keep object\n.method main\n.registers 6\n"
             "  const v0, 200\n  new-array v5, v0, object\n  sput v5, A.keep\n"
             "  const v0, 0\n  const v2, 1008\n"   /* 1008 + 16 header = 1 KiB blocks */
             ":fill\n  new-array v3, v2, byte\n  aput v3, v5, v0\n  add-int/lit v0, v0, 1\n"
             "  const v1, 200\n  if-lt v0, v1, :fill\n"
             /* drop every other one: 100 isolated 1 KiB holes */
             "  const v0, 0\n  const v3, 0\n"
             ":drop\n  aput v3, v5, v0\n  add-int/lit v0, v0, 2\n  if-lt v0, v1, :drop\n"
             "  gc\n  wait-for-debugger\n"
             "  const v0, 0\n"
             ":refill\n  new-array v3, v2, byte\n  aput v3, v5, v0\n  add-int/lit v0, v0, 2\n"
             "  if-lt v0, v1, :refill\n"
             "  wait-for-debugger\n"
             "  return-void\n.end method\n");
  assert_int_equal(t_run(vm, NULL), 0);
  assert_int_equal(nmarks, 2);
  /* fragmented: 100 holes plus the free tail */
  assert_true(marks[0].free_blocks >= 100);
  assert_true(marks[0].largest_free < marks[0].footprint);
  /* the refill went into the holes: same footprint, the holes gone, 100 KiB more in use */
  assert_int_equal(marks[1].footprint, marks[0].footprint);
  assert_true(marks[1].free_blocks <= marks[0].free_blocks - 100);
  assert_int_equal(marks[1].allocated_bytes - marks[0].allocated_bytes, 100 * 1024);
  mvm_vm_free(vm);
}

static void out_of_memory_stops_only_that_thread(void **state) {
  mvm_vm *vm = t_vm(256 << 10, 0, NULL);
  t_load(vm, ".class A\n.method main\n.registers 4\n"
             "  const-string v0, \"Hog\"\n  start-thread v1, v0, A.hog\n  join v1\n"
             "  const-string v0, \"main survived\"\n  println v0\n  return-void\n.end method\n"
             ".method hog\n.registers 4\n"
             "  const v0, 100\n  new-array v1, v0, object\n  const v2, 0\n"   /* keeps everything */
             ":more\n  const v0, 2000\n  new-array v3, v0, long\n  aput v3, v1, v2\n"
             "  add-int/lit v2, v2, 1\n  goto :more\n.end method\n");
  char *out;
  assert_int_equal(t_run(vm, &out), 0);
  assert_string_equal(out, "main survived\n");
  free(out);
  mvm_heap_stats s;
  mvm_heap_get_stats(vm, &s);
  assert_int_equal(s.footprint, s.max_bytes);   /* it grew to -Xmx before giving up */
  /* and the hog's garbage is collectable once it died */
  assert_int_equal(mvm_gc_request(vm, MVM_GC_EXPLICIT, 1), 0);
  mvm_heap_get_stats(vm, &s);
  assert_true(s.allocated_bytes < 1024);
  mvm_vm_free(vm);
}

static void debugger_request_does_not_block(void **state) {
  mvm_vm *vm = t_vm(0, 0, NULL);
  mvm_heap_stats s;
  mvm_heap_get_stats(vm, &s);
  uint64_t before = s.gc_count;
  assert_int_equal(mvm_gc_request(vm, MVM_GC_DEBUGGER, 0), 0);
  for (int i = 0; i < 1000 && s.gc_count == before; i++) {
    usleep(10000);
    mvm_heap_get_stats(vm, &s);
  }
  assert_true(s.gc_count > before);
  mvm_vm_free(vm);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(reachable_survives_unreachable_reclaimed),
      cmocka_unit_test(walk_during_gc_equals_heap_after_sweep),
      cmocka_unit_test(every_kind_in_the_walk),
      cmocka_unit_test(steady_load_does_not_grow_the_heap),
      cmocka_unit_test(holes_are_reused),
      cmocka_unit_test(out_of_memory_stops_only_that_thread),
      cmocka_unit_test(debugger_request_does_not_block),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
