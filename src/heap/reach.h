/* SPDX-License-Identifier: Apache-2.0 */
/* The objects reachable from the VM's roots and the references among them, read through the
 * bridge's heap walk (with_world_stopped, for_each_object, for_each_root) and its reflective ops
 * (for_each_class, class_info, field_info, get_field, array_get): what JDWP's memory view
 * (InstanceCounts, Instances, ReferringObjects) counts on a VM without the bridge's memory view
 * ops. Reachable as JVM TI's FollowReferences (which the JDK's agent uses) means it: from the
 * roots through instance fields, reference array elements, an object's class, and a class
 * object's loader, superclass and static fields. An object the collector has not freed yet but
 * nothing reaches is never shown, though for_each_object visits it.
 *
 * A floor layer (no client's code): the debugger uses it, and so can any other walker of
 * references. Bounds: at most DDMC__REACH_MAX_OBJECTS objects (24 bytes each, plus a mark bit
 * and a work-stack slot) and DDMC__REACH_MAX_READS values read from the VM per walk; past either
 * the walk stops with DDMC_JDWP_OUT_OF_MEMORY. Memory from the library's allocator only. */
#ifndef DDMC_HEAP_REACH_H
#define DDMC_HEAP_REACH_H

#include "common.h"
#include "ddmc/bridge.h"

#define DDMC__REACH_MAX_OBJECTS ((uint32_t)1 << 24)
#define DDMC__REACH_MAX_READS ((uint64_t)1 << 28)

typedef struct ddmc__reach_visitor {
  /* Each reachable object, once (class objects included), before its references are read.
   * Non-zero stops the walk (returned by ddmc__heap_reach unless it is 1: 1 is "done"). */
  int (*object)(void *arg, ddmc_ref o, ddmc_class cls);
  /* Each reference a reachable object from holds to an object to (repeated as often as it is
   * held); NULL when not wanted. Non-zero stops the walk as above. */
  int (*reference)(void *arg, ddmc_ref from, ddmc_ref to);
  void *arg;
} ddmc__reach_visitor;

/* Can the VM's ops walk references (the ops above are all there)? */
int ddmc__heap_reach_supported(const ddmc_vm_bridge *bridge);
/* Walks. Inside bridge->with_world_stopped, on the thread that stopped it; no I/O, no lock held but
 * what the visitor takes. Returns 0 (walked, or stopped by a visitor's 1), a visitor's other
 * value, DDMC_JDWP_OUT_OF_MEMORY (a bound above, or the allocator), or the VM's JDWP error from
 * for_each_object / for_each_class. */
int ddmc__heap_reach(const ddmc__mem *mem, const ddmc_vm_bridge *bridge, void *vm_data, const ddmc__reach_visitor *v);

#endif
