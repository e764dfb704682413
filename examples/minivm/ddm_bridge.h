/* SPDX-License-Identifier: Apache-2.0 */
/* The libddmc side of minivm: the only file besides main.c that includes a ddmc header.
 * main.c drives it in this order: is_flag/parse for each JDWP flag, hooks() before mvm_vm_new,
 * start() after the program loaded, stop() after main returned. */
#ifndef MINIVM_DDM_BRIDGE_H
#define MINIVM_DDM_BRIDGE_H

#include "minivm.h"

typedef struct ddm_bridge ddm_bridge;

/* Non-zero for "-agentlib:jdwp=..." and "-Xrunjdwp:...". */
int ddm_bridge_is_flag(const char *arg);
ddm_bridge *ddm_bridge_new(int verbose);
/* Hands arg to ddmc_options_parse. On error prints libddmc's message as-is and returns -1. */
int ddm_bridge_parse(ddm_bridge *b, const char *arg);
/* The VM hooks that forward thread, app-name, wait and GC events to libddmc. */
void ddm_bridge_hooks(ddm_bridge *b, mvm_hooks *out);
/* ddmc_vm_new, ident, the initial app name, the debugger (vm_bridge_attach), ddmc_vm_start;
 * prints where JDWP listens. The program is loaded and mvm_prepare_main done (with suspend=y a
 * debugger sees the main thread before it runs). Returns 0 or -1 (message printed). */
int ddm_bridge_start(ddm_bridge *b, mvm_vm *vm);
/* The first half of start: ddmc_vm_new, ident, the VM bridge, allocation tracking, without
 * starting JDWP (agents need the bridge; JDWP only when asked for). start calls it if not done. */
int ddm_bridge_create(ddm_bridge *b, mvm_vm *vm);
/* Hooks reach an instance that was created but will not be started (agents without JDWP). */
void ddm_bridge_publish(ddm_bridge *b);
/* The instance ddm_bridge_create made, or NULL. */
struct ddmc_vm *ddm_bridge_ddmc(const ddm_bridge *b);
/* VM_DEATH to a debugger, then stops the JDWP thread (it detaches from the VM); call right
 * before the process exits. */
void ddm_bridge_stop(ddm_bridge *b);
/* The VM given to ddm_bridge_start (the debugger ops reach it through the library's vm_data). */
mvm_vm *ddm_bridge_vm(const ddm_bridge *b);

#endif
