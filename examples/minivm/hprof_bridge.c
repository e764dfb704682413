/* SPDX-License-Identifier: Apache-2.0 */
/* minivm's heap-dump ops (hprof_bridge.h): adapters from the core's mvm_heap_dump.h to
 * ddmc_vm_bridge. minivm has one heap, the app's ('A' in HEAP_DUMP_INFO). */
#include <stdio.h>
#include <stdlib.h>

#include <ddmc/error.h>

#include "hprof_bridge.h"
#include "mvm_heap_dump.h"

static mvm_vm *(*vm_of)(void *vm_data);

typedef struct census_out {
  mvm_vm *vm;
  FILE *f;
} census_out;

static int census_line(void *arg, mvm_type t, uint64_t objects, uint64_t bytes) {
  census_out *c = arg;
  mvm_type_info ti;
  const char *sig = t && mvm_dbg_type_info(c->vm, t, &ti) == 0 ? ti.sig : "?";
  fprintf(c->f, "%llu %llu %s\n", (unsigned long long)objects, (unsigned long long)bytes, sig);
  return 0;
}

/* Test-only (hprof_bridge.h): the VM's own count of what the dump should hold. */
static void write_census(mvm_vm *vm) {
  const char *path = getenv("MINIVM_HPROF_CENSUS");
  if (!path || !*path) return;
  census_out c = {vm, fopen(path, "w")};
  if (!c.f) {
    fprintf(stderr, "minivm: cannot write the census to %s\n", path);
    return;
  }
  if (mvm_heap_census(vm, census_line, &c)) fprintf(stderr, "minivm: census: out of memory\n");
  fclose(c.f);
}

/* Stops the world once; the object ops vm_bridge.c calls inside (get_field, array_get) stop it
 * again around each access, which the thread holding it passes straight through. */
static int op_with_world_stopped(void *vm_data, ddmc_stopped_fn fn, void *arg) {
  mvm_vm *vm = vm_of(vm_data);
  /* A JVM TI agent may walk the heap from an event callback, on an interpreter thread: it
   * counts as stopped (VMWAIT) while it holds the world, so stopping it does not wait for it. */
  int prev = mvm_dbg_world_stop(vm);
  write_census(vm);
  int rc = fn(arg);
  mvm_dbg_world_resume(vm, prev);
  return rc;
}

/* ---- JVM TI: ForceGarbageCollection, GetObjectSize, GetObjectHashCode */

static int op_collect(void *vm_data) {
  /* The GC daemon collects; the caller waits (an interpreter thread in VMWAIT meanwhile). */
  return mvm_gc_request(vm_of(vm_data), MVM_GC_EXPLICIT, 1) == 0 ? 0 : DDMC_JDWP_VM_DEAD;
}

static int op_object_size(void *vm_data, ddmc_ref o, uint64_t *out) {
  size_t bytes;
  int32_t hash;
  if (mvm_heap_object_info(vm_of(vm_data), o, &bytes, &hash)) return DDMC_JDWP_INVALID_OBJECT;
  *out = bytes;
  return 0;
}

static int op_object_hash(void *vm_data, ddmc_ref o, int32_t *out) {
  size_t bytes;
  if (mvm_heap_object_info(vm_of(vm_data), o, &bytes, out)) return DDMC_JDWP_INVALID_OBJECT;
  return 0;
}

typedef struct object_visit {
  ddmc_heap_object_visit_fn fn;
  void *arg;
} object_visit;

static int object_adapter(void *arg, const mvm_heap_obj *o) {
  object_visit *v = arg;
  ddmc_heap_object h = {.ref = o->ref,
                        .cls = (ddmc_class)o->type,
                        .size = o->bytes,
                        .heap_id = DDMC_HEAP_ID_APP,
                        .length = o->length,
                        .elements = o->elem && o->elem != 'L' ? o->elements : NULL};
  return v->fn(v->arg, &h);
}

static int op_for_each_object(void *vm_data, ddmc_heap_object_visit_fn fn, void *arg) {
  object_visit v = {fn, arg};
  mvm_heap_for_each_object(vm_of(vm_data), object_adapter, &v);
  return 0; /* a stop asked for by fn is not an error */
}

typedef struct root_visit {
  ddmc_gc_root_visit_fn fn;
  void *arg;
} root_visit;

static int root_adapter(void *arg, const mvm_heap_root *r) {
  static const ddmc_gc_root_kind kinds[] = {
      [MVM_ROOT_STICKY_CLASS] = DDMC_GC_ROOT_STICKY_CLASS,   [MVM_ROOT_VM_INTERNAL] = DDMC_GC_ROOT_VM_INTERNAL,
      [MVM_ROOT_THREAD_OBJECT] = DDMC_GC_ROOT_THREAD_OBJECT, [MVM_ROOT_THREAD_BLOCK] = DDMC_GC_ROOT_THREAD_BLOCK,
      [MVM_ROOT_JAVA_FRAME] = DDMC_GC_ROOT_JAVA_FRAME,       [MVM_ROOT_MONITOR_USED] = DDMC_GC_ROOT_MONITOR_USED,
      [MVM_ROOT_DEBUGGER] = DDMC_GC_ROOT_DEBUGGER};
  root_visit *v = arg;
  ddmc_gc_root g = {r->obj, kinds[r->kind], r->thread, r->depth, r->slot};
  return v->fn(v->arg, &g);
}

static int op_for_each_root(void *vm_data, ddmc_gc_root_visit_fn fn, void *arg) {
  root_visit v = {fn, arg};
  mvm_heap_for_each_root(vm_of(vm_data), root_adapter, &v);
  return 0;
}

void hprof_bridge_ops(ddmc_vm_bridge *bridge, mvm_vm *(*vm_of_data)(void *vm_data)) {
  vm_of = vm_of_data;
  bridge->with_world_stopped = op_with_world_stopped;
  bridge->for_each_object = op_for_each_object;
  bridge->for_each_root = op_for_each_root;
  bridge->collect = op_collect;
  bridge->object_size = op_object_size;
  bridge->object_hash = op_object_hash;
}
