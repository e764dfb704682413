/* SPDX-License-Identifier: Apache-2.0 */
/* Profiling for minivm: its allocations reported to libddmc's allocation tracker. Method tracing
 * and sampling need nothing here: the library turns method events on through the VM bridge
 * (vm_bridge.c), whose post calls feed the trace, and samples through the stacks ddm_bridge.c
 * already serves for STKL. ddm_bridge.c calls attach() after the debugger is attached. */
#ifndef MINIVM_PROF_BRIDGE_H
#define MINIVM_PROF_BRIDGE_H

#include <ddmc/ddmc.h>

#include "minivm.h"

/* Points minivm's allocation hook at libddmc's tracking flag; from then on every allocation made
 * while a peer tracks them is recorded with its thread's frames. Returns 0 or -1 (no memory). */
int prof_bridge_attach(ddmc_vm *d, mvm_vm *vm);

#endif
