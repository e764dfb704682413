/* SPDX-License-Identifier: Apache-2.0 */
/* minivm's bridge (the debugger's, profiling's and agents'): ddmc_vm_bridge over the core's
 * mvm_debug.h, and the core's debugger hooks turned into ddmc_post_* calls. ddm_bridge.c drives
 * it: attach() between ddmc_vm_new and ddmc_vm_start, thread_start() from its thread-start hook,
 * vm_death() at exit. */
#ifndef MINIVM_VM_BRIDGE_H
#define MINIVM_VM_BRIDGE_H

#include <stdint.h>

#include <ddmc/ddmc.h>
#include <ddmc/debugger.h>

#include "minivm.h"

typedef struct vm_bridge vm_bridge;

/* ddmc_vm_set_bridge with minivm's ops (the bridge every client uses), ddmc_dbg_enable, and
 * mvm_dbg_set_hooks. The program is loaded and its main thread prepared (mvm_prepare_main). Returns NULL after printing why. */
vm_bridge *vm_bridge_attach(ddmc_vm *d, mvm_vm *vm);
/* A program thread started (ThreadStart): from the VM's thread_start hook, on the new thread.
 * Not for main (VM_START names it) nor for attached threads. NULL-safe. */
void vm_bridge_thread_start(vm_bridge *b, uint32_t id);
/* VM_DEATH, once, before the threads are torn down (exit instruction, or main returned). */
void vm_bridge_vm_death(vm_bridge *b);

#endif
