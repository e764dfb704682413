/* What the rest of the library calls in the JVM TI layer, without seeing its state: the bridge
 * ddmc_dbg_attach lends, the collector's root visit, the teardown, and the hub's entries that
 * the debugger's post calls (src/debugger/events.c) make before their own work. Each entry is
 * one atomic load when no agent is loaded. */
#ifndef DDMC_JVMTI_HOOKS_H
#define DDMC_JVMTI_HOOKS_H

#include "common.h"
#include "vm_int.h"

/* Some agent is loaded (the JVM TI state exists). The post calls test this before calling into
 * the hub, so a VM without agents pays one load, not a call, per event (a method trace posts two
 * events per call). Thread: any. */
static inline int ddmc__jv_loaded(const ddmc_vm *vm) {
  return vm != NULL && atomic_load_explicit(&((ddmc_vm *)vm)->jvmti, memory_order_acquire) != NULL;
}

/* ddmc_dbg_attach: ops stays valid until ddmc_vm_free. base.c. */
void ddmc__jvmti_set_bridge(ddmc_vm *vm, const ddmc_vm_bridge *ops, void *data);
/* ddmc_gc_visit_roots: every object an agent holds a handle for. GC thread. agents.c. */
void ddmc__jvmti_visit_roots(ddmc_vm *vm, ddmc_root_visit_fn fn, void *arg);
/* ddmc_vm_free. agents.c. */
void ddmc__jvmti_destroy(ddmc_vm *vm);

/* hub.c. Does some agent want events of this JDWP kind (ddmc_event_wanted)? */
int ddmc__hub_wants(const ddmc_vm *vm, int jdwp_kind);
void ddmc__hub_thread(ddmc_vm *vm, uint32_t thread, int start);
void ddmc__hub_class_prepare(ddmc_vm *vm, uint32_t thread, ddmc_class c);
void ddmc__hub_location(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, unsigned flags);
/* by_exception: the frame was popped by an exception (JVM TI reports it, JDWP does not). */
void ddmc__hub_method_exit(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, const ddmc_value *ret,
                           int by_exception);
/* Exception (catch_loc NULL: uncaught) and ExceptionCatch (loc: the handler). */
void ddmc__hub_exception(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, ddmc_ref exc,
                         const ddmc_location *catch_loc);
void ddmc__hub_exception_catch(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, ddmc_ref exc);
/* FieldAccess (new_value NULL) or FieldModification of field of c in object (0: a static). */
void ddmc__hub_field(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, ddmc_class c, uint32_t field,
                     ddmc_ref object, const ddmc_value *new_value);

/* suspend.c. The debugger's count of thread went 0 -> 1 (suspend = 1) or back (0), and it wants
 * the VM to stop (let go of) the thread: with no agent loaded, ops' suspend_thread /
 * resume_thread at once; otherwise the VM is asked only when the agents' hold and the debugger's
 * together go from none to some or back, so a thread both suspended stays stopped until both
 * let go. Returns the op's JDWP error (NOT_IMPLEMENTED without the op). */
int ddmc__susp_debugger(ddmc_vm *vm, const ddmc_vm_bridge *ops, void *data, uint32_t thread, int suspend);
/* hub_monitor.c: monitor events for agents (the post calls' first half). */
void ddmc__hub_monitor(ddmc_vm *vm, int jdwp_kind, uint32_t thread, ddmc_ref object, int64_t arg);

/* hub_heap.c (issue 16): from ddmc_gc_done, GarbageCollectionFinish then ObjectFree. GC thread. */
void ddmc__hub_gc_done(ddmc_vm *vm);

#endif
