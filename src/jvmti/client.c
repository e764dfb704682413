/* SPDX-License-Identifier: Apache-2.0 */
/* JVM TI as a client of the event hub (hub/hub.h): the VM's reports turned into the agents'
 * events (hub.c, hub_monitor.c, hub_heap.c), the objects agents hold kept alive by the
 * collector, and this layer as the arbiter of suspension shared with the debugger (suspend.c).
 * It subscribes when the first agent loads, before the VM runs bytecode. */
#include "jvmti/funcs.h"
#include "vm_int.h"

static int jv_post(ddmc_vm *vm, void *ud, const ddmc__hub_event *ev) {
  (void)ud;
  if (ddmc__jv_get(vm) == NULL) return DDMC_ENOTCONN;
  switch (ev->what) {
    case DDMC__HUB_THREAD_START: ddmc__jv_hub_thread(vm, ev->thread, 1); break;
    case DDMC__HUB_THREAD_DEATH: ddmc__jv_hub_thread(vm, ev->thread, 0); break;
    case DDMC__HUB_CLASS_PREPARE: ddmc__jv_hub_class_prepare(vm, ev->thread, ev->cls); break;
    case DDMC__HUB_METHOD_UNWIND: ddmc__jv_hub_method_exit(vm, ev->thread, ev->loc, NULL, 1); break;
    case DDMC__HUB_EXCEPTION: ddmc__jv_hub_exception(vm, ev->thread, ev->loc, ev->object, ev->catch_loc); break;
    case DDMC__HUB_EXCEPTION_CATCH: ddmc__jv_hub_exception_catch(vm, ev->thread, ev->loc, ev->object); break;
    case DDMC__HUB_FIELD: ddmc__jv_hub_field(vm, ev->thread, ev->loc, ev->cls, ev->field, ev->object, ev->value); break;
    case DDMC__HUB_MONITOR: ddmc__jv_hub_monitor(vm, ev->kind, ev->thread, ev->object, ev->extra); break;
    case DDMC__HUB_VM_DEATH: return DDMC_ENOTCONN; /* agents hear VMDeath from ddmc_agent_vm_death */
  }
  return 0;
}

static int jv_location(ddmc_vm *vm, void *ud, uint32_t thread, const ddmc_location *loc, int32_t depth,
                       ddmc_ref this_obj, unsigned flags) {
  (void)ud;
  (void)depth;
  (void)this_obj;
  if (ddmc__jv_get(vm) == NULL) return DDMC_ENOTCONN;
  ddmc__jv_hub_location(vm, thread, loc, flags);
  return 0;
}

static int jv_method_exit(ddmc_vm *vm, void *ud, uint32_t thread, const ddmc_location *loc, int32_t depth,
                          ddmc_ref this_obj, const ddmc_value *ret) {
  (void)ud;
  (void)depth;
  (void)this_obj;
  if (ddmc__jv_get(vm) == NULL) return DDMC_ENOTCONN;
  ddmc__jv_hub_method_exit(vm, thread, loc, ret, 0);
  return 0;
}

static int jv_wants(const ddmc_vm *vm, void *ud, int kind) {
  (void)ud;
  return ddmc__jv_hub_wants(vm, kind);
}

/* Every object an agent holds a handle for. GC thread. */
static void jv_visit_roots(ddmc_vm *vm, void *ud, ddmc_root_visit_fn fn, void *arg) {
  (void)ud;
  ddmc__jvmti *jv = ddmc__jv_get(vm);
  if (jv != NULL) ddmc__jv_refs_visit(jv, fn, arg);
}

static void jv_gc_start(ddmc_vm *vm, void *ud) {
  (void)ud;
  ddmc__jv_hub_gc_start(vm);
}

static void jv_gc_sweep(ddmc_vm *vm, void *ud, ddmc_gc_is_live_fn is_live, void *arg) {
  (void)ud;
  ddmc__jv_hub_gc_sweep(vm, is_live, arg);
}

static int jv_gc_done(ddmc_vm *vm, void *ud) {
  (void)ud;
  ddmc__jv_hub_gc_done(vm);
  return 0;
}

static void jv_alloc(ddmc_vm *vm, void *ud, uint32_t thread, ddmc_ref obj, ddmc_class cls, uint64_t bytes, int by_vm) {
  (void)ud;
  ddmc__jv_hub_alloc(vm, thread, obj, cls, bytes, by_vm);
}

int ddmc__jv_subscribe(ddmc_vm *vm) {
  static const ddmc__hub_client client = {
      .name = "JVM TI",
      .rank = DDMC__HUB_RANK_AGENTS,
      .post = jv_post,
      .location = jv_location,
      .method_exit = jv_method_exit,
      .wants = jv_wants,
      .visit_roots = jv_visit_roots,
      .gc_start = jv_gc_start,
      .gc_sweep = jv_gc_sweep,
      .gc_done = jv_gc_done,
      .alloc = jv_alloc,
  };
  int rc = ddmc__hub_subscribe(vm, &client, NULL, NULL, NULL);
  if (rc == DDMC_EEXIST) rc = 0;
  if (rc == 0) vm->ctl.suspend_arbiter = ddmc__jv_susp_debugger;
  return rc;
}
