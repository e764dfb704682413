/* SPDX-License-Identifier: Apache-2.0 */
/* Heap dumps for minivm: the three ddmc_vm_bridge that give libddmc the whole heap
 * (with_world_stopped, for_each_object, for_each_root) over the core's mvm_heap_dump.h. With
 * them libddmc answers HPDU and HPDS and lists hprof-heap-dump(-streaming) in FEAT.
 * vm_bridge.c adds them to the bridge it installs with ddmc_vm_set_bridge. */
#ifndef MINIVM_HPROF_BRIDGE_H
#define MINIVM_HPROF_BRIDGE_H

#include <ddmc/debugger.h>

#include "minivm.h"

/* Fills in the heap ops of bridge. Each gets the vm_data vm_bridge.c attaches with; vm_of turns it
 * into the VM. Test-only: with MINIVM_HPROF_CENSUS=FILE in the environment, every dump also
 * writes the VM's own census to FILE ("objects bytes signature" per line, from
 * mvm_heap_census), taken inside the same stop of the world, for tests to compare. */
void hprof_bridge_ops(ddmc_vm_bridge *bridge, mvm_vm *(*vm_of)(void *vm_data));

#endif
