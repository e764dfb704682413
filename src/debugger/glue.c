/* SPDX-License-Identifier: Apache-2.0 */
/* The debugger layer's view of the core (glue.h): accessors of struct ddmc_vm (its DDM ops,
 * allocator, options and name, whether it is stopping, the bridge ddmc_vm_set_bridge installed for
 * every client and that bridge's vm_data) and the one write, the slot ddmc_dbg_enable hangs the
 * debugger in, so the rest of this layer never depends on the struct's layout. */
#include "debugger/glue.h"

#include "vm_int.h"

const ddmc_vm_ops *ddmc__dbg_vm_ops(const ddmc_vm *vm) { return &vm->ops; }
const ddmc__mem *ddmc__dbg_vm_mem(const ddmc_vm *vm) { return &vm->mem; }
const ddmc_options *ddmc__dbg_vm_options(const ddmc_vm *vm) { return &vm->opt; }
const char *ddmc__dbg_vm_name(const ddmc_vm *vm) { return vm->vm_name; }
const ddmc_vm_bridge *ddmc__dbg_vm_bridge(const ddmc_vm *vm) { return ddmc__bridge(vm); }
void *ddmc__dbg_vm_bridge_data(const ddmc_vm *vm) { return vm->bridge_data; }
int ddmc__dbg_vm_stopping(const ddmc_vm *vm) { return atomic_load(&((ddmc_vm *)vm)->stopping); }

void ddmc__dbg_vm_set_dbg(ddmc_vm *vm, struct ddmc__dbg *d, void (*destroy)(struct ddmc__dbg *d)) {
  vm->dbg_destroy = destroy;
  atomic_store_explicit(&vm->dbg, d, memory_order_release);
}
