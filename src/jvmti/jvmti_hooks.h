/* What the rest of the library calls in the JVM TI layer, without seeing its state: the bridge
 * ddmc_dbg_attach lends, the collector's root visit, the teardown, and the hub's entries that
 * the debugger's post calls (src/debugger/events.c) make before their own work. Each entry is
 * one atomic load when no agent is loaded. */
#ifndef DDMC_JVMTI_HOOKS_H
#define DDMC_JVMTI_HOOKS_H

#include "common.h"

/* ddmc_dbg_attach: ops stays valid until ddmc_vm_free. base.c. */
void ddmc__jvmti_set_bridge(ddmc_vm *vm, const ddmc_dbg_ops *ops, void *data);
/* ddmc_dbg_visit_roots: every object an agent holds a handle for. GC thread. agents.c. */
void ddmc__jvmti_visit_roots(ddmc_vm *vm, ddmc_root_visit_fn fn, void *arg);
/* ddmc_vm_free. agents.c. */
void ddmc__jvmti_destroy(ddmc_vm *vm);

/* hub.c. Does some agent want events of this JDWP kind (ddmc_dbg_wants)? */
int ddmc__hub_wants(const ddmc_vm *vm, int jdwp_kind);
void ddmc__hub_thread(ddmc_vm *vm, uint32_t thread, int start);
void ddmc__hub_class_prepare(ddmc_vm *vm, uint32_t thread, ddmc_class c);
void ddmc__hub_location(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, unsigned flags);
/* by_exception: the frame was popped by an exception (JVM TI reports it, JDWP does not). */
void ddmc__hub_method_exit(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, const ddmc_value *ret,
                           int by_exception);

/* hub_heap.c (issue 16): from ddmc_gc_done, GarbageCollectionFinish then ObjectFree. GC thread. */
void ddmc__hub_gc_done(ddmc_vm *vm);

#endif
