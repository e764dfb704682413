/* SPDX-License-Identifier: Apache-2.0 */
/* minivm's allocations into libddmc's allocation tracker (REAE/REAL). The core calls on_alloc,
 * only while the library's tracking flag is up, on the allocating thread: the record names the
 * new object's type as the VM bridge does (so REAL's class names come from the same
 * reflective bridge) and the thread's frames as (class, method, pc), resolved to names and lines
 * only when a peer asks for the report. */
#include <stdlib.h>

#include "mvm_debug.h"
#include "prof_bridge.h"

#define DEPTH 16 /* libddmc's default frames per record */

typedef struct prof_bridge {
  ddmc_vm *d;
  mvm_vm *vm;
} prof_bridge;

static void on_alloc(void *ud, const mvm_alloc_info *a) {
  prof_bridge *b = ud;
  mvm_type type = 0;
  mvm_dbg_object_type(b->vm, a->obj, &type);
  mvm_loc locs[DEPTH];
  uint32_t n = mvm_dbg_self_frames(b->vm, locs, DEPTH);
  ddmc_location frames[DEPTH];
  for (uint32_t i = 0; i < n; i++) frames[i] = (ddmc_location){locs[i].cls, locs[i].method, locs[i].pc};
  ddmc_alloc_record(b->d, a->thread, (ddmc_class)type, a->bytes, frames, n);
  /* JVM TI's VMObjectAlloc for what the VM makes itself (the flag is up for agents too). */
  if (a->by_vm) ddmc_alloc_object(b->d, a->thread, a->obj, (ddmc_class)type, a->bytes, 1);
}

int prof_bridge_attach(ddmc_vm *d, mvm_vm *vm) {
  prof_bridge *b = calloc(1, sizeof *b); /* lives as long as the process, like the VM's hooks */
  if (!b) return -1;
  b->d = d;
  b->vm = vm;
  mvm_set_alloc_hook(vm, ddmc_alloc_tracking_flag(d), on_alloc, b);
  return 0;
}
