/* What the debugger layer calls in the profiling layer, without seeing struct ddmc_vm: the
 * reflective bridge it lends and the method events the VM's post calls report. (The method-event
 * switch that traces share with the debugger and agents is src/vmctl's.) */
#ifndef DDMC_PROFILE_HOOKS_H
#define DDMC_PROFILE_HOOKS_H

#include "common.h"

/* ddmc_dbg_attach: ops stays valid until ddmc_vm_free, which drops it first. */
void ddmc__prof_set_bridge(ddmc_vm *vm, const ddmc_vm_bridge *ops, void *data);

/* From the debugger's post calls on a VM thread: a method entered (exit = 0) or left (1) at
 * frame depth (frame count - 1). One load when no trace runs. */
void ddmc__trace_method(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, int32_t depth, int exit);

/* JVM TI (issue 16): some agent wants VMObjectAlloc (on) or none does: the allocation flag's
 * bit 2, so the VM's allocation hook runs for it too. alloc_track.c. Thread: any. */
void ddmc__alloc_agent_wants(ddmc_vm *vm, int on);

#endif
