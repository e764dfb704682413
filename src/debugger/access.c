/* SPDX-License-Identifier: Apache-2.0 */
/* Accessors of the debugger's state for the command handlers (dbg_int.h), which never see
 * struct ddmc__dbg: its copy of the bridge (DDMC__DBG_CALL calls through it), the bridge's
 * vm_data and the allocator. A leaf: every file of the layer may call it. */
#include "debugger/state.h"

const ddmc_vm_bridge *ddmc__dbg_bridge(const ddmc__dbg *d) { return &d->bridge; }
void *ddmc__dbg_vm_data(const ddmc__dbg *d) { return d->vm_data; }
const ddmc__mem *ddmc__dbg_mem(const ddmc__dbg *d) { return d->mem; }
