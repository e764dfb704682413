/* SPDX-License-Identifier: Apache-2.0 */
/* What the debugger layer needs from the core (glue.c reads them from struct ddmc_vm; the debugger
 * slot, read on every event, inline): the VM's DDM ops (thread enumeration), its allocator,
 * identity and options, the bridge every client shares, and the slot where the debugger's state
 * hangs. */
#ifndef DDMC_DBG_GLUE_H
#define DDMC_DBG_GLUE_H

#include "common.h"
#include "jdwp/service.h"
#include "vm_int.h"

struct ddmc__dbg;

const ddmc_vm_ops *ddmc__dbg_vm_ops(const ddmc_vm *vm);
const ddmc__mem *ddmc__dbg_vm_mem(const ddmc_vm *vm);
const ddmc_options *ddmc__dbg_vm_options(const ddmc_vm *vm);
const char *ddmc__dbg_vm_name(const ddmc_vm *vm);
int ddmc__dbg_vm_stopping(const ddmc_vm *vm);
/* The bridge ddmc_vm_set_bridge installed (NULL: none), and its vm_data. */
const ddmc_vm_bridge *ddmc__dbg_vm_bridge(const ddmc_vm *vm);
void *ddmc__dbg_vm_bridge_data(const ddmc_vm *vm);
/* The debugger hung on vm by ddmc_dbg_enable (NULL: none). Thread: any (an atomic load). */
static inline struct ddmc__dbg *ddmc__dbg_of_vm(const ddmc_vm *vm) {
  return atomic_load_explicit(&((ddmc_vm *)vm)->dbg, memory_order_acquire);
}
void ddmc__dbg_vm_set_dbg(ddmc_vm *vm, struct ddmc__dbg *d, void (*destroy)(struct ddmc__dbg *d));

#endif
