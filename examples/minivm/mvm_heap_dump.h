/* SPDX-License-Identifier: Apache-2.0 */
/* minivm's whole-heap interface: every object, every GC root, and a census, for heap dumps
 * (hprof_bridge.c adapts them to ddmc_vm_bridge) and the unit tests, without libddmc.
 *
 * All three read the heap and the thread stacks as they are: call them with the world stopped
 * (between mvm_dbg_enter and mvm_dbg_leave on a thread outside the interpreter). Objects are
 * every block the collector has not freed: what the program still reaches and, until the next
 * collection, garbage (as Dalvik's dumps of its live bitmap did). Types are mvm_debug.h's. */
#ifndef MINIVM_HEAP_DUMP_H
#define MINIVM_HEAP_DUMP_H

#include <stddef.h>
#include <stdint.h>

#include "minivm.h"
#include "mvm_debug.h"

typedef struct mvm_heap_obj {
  uint64_t ref;
  mvm_type type;         /* its class; java.lang.Class for a class object; the array type for arrays */
  size_t bytes;          /* the block, header included */
  int32_t length;        /* arrays: elements; -1 otherwise */
  char elem;             /* arrays: Z B C S I F J D, or L; 0 otherwise */
  const void *elements;  /* arrays: packed elements in host order (references: 4-byte mvm refs) */
} mvm_heap_obj;

/* Every object in address order until fn returns non-zero (that value is returned). */
int mvm_heap_for_each_object(mvm_vm *vm, int (*fn)(void *arg, const mvm_heap_obj *o), void *arg);

typedef enum mvm_root_kind {
  MVM_ROOT_STICKY_CLASS,   /* a class object: minivm never unloads a class */
  MVM_ROOT_VM_INTERNAL,    /* the system and main ThreadGroups */
  MVM_ROOT_THREAD_OBJECT,  /* a thread's java.lang.Thread */
  MVM_ROOT_THREAD_BLOCK,   /* held by a thread's VM structure: its group until its Thread holds it,
                              pinned objects (a start argument, an exception in flight...), a result */
  MVM_ROOT_JAVA_FRAME,     /* a register of a frame that holds a reference */
  MVM_ROOT_MONITOR_USED,   /* a monitor some thread owns or waits on */
  MVM_ROOT_DEBUGGER        /* held for a debugger (the gc_roots hook) */
} mvm_root_kind;

typedef struct mvm_heap_root {
  uint64_t obj;
  mvm_root_kind kind;
  uint32_t thread;   /* thread kinds: the VM thread id; else 0 */
  int32_t depth;     /* JAVA_FRAME: frame depth, 0 innermost; else -1 */
  int32_t slot;      /* JAVA_FRAME: the register as a debugger numbers it (parameters first); else -1 */
} mvm_heap_root;

/* Every root, one call per reason, until fn returns non-zero (that value is returned). The
 * objects minivm's collector starts from; no interned strings (minivm interns none). */
int mvm_heap_for_each_root(mvm_vm *vm, int (*fn)(void *arg, const mvm_heap_root *r), void *arg);

/* The VM's own count of objects per type, by a walk of its own (not the one above): fn gets
 * each type with at least one object, in type order. For tests that check a dump against it. */
int mvm_heap_census(mvm_vm *vm, int (*fn)(void *arg, mvm_type type, uint64_t objects, uint64_t bytes), void *arg);

/* One object's size (the block, header included) and identity hash (what identity-hash gives).
 * Any thread: blocks never move and the size of a live one never changes. Returns 0, or -1 when
 * ref names no object. */
int mvm_heap_object_info(mvm_vm *vm, uint64_t ref, size_t *bytes, int32_t *hash);

#endif
