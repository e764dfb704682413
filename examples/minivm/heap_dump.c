/* SPDX-License-Identifier: Apache-2.0 */
/* Whole-heap enumeration for heap dumps (mvm_heap_dump.h): objects, roots, census. Everything
 * here runs with the world stopped, so it reads blocks, frames and the monitor table as the
 * collector does, taking only the leaf locks the collector takes. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "mvm_heap_dump.h"

static inline mvm_hdr *block_at(mvm_vm *vm, uint32_t unit) {
  return (mvm_hdr *)(vm->heap.base + (size_t)unit * MVM_UNIT);
}

/* The array type of an array made with an element letter only (header klass 0), per letter. */
typedef struct default_types {
  mvm_type t[128];
  uint8_t known[128];
} default_types;

static mvm_type default_array_type(mvm_vm *vm, default_types *d, char elem) {
  unsigned e = (unsigned char)elem & 127;
  if (d->known[e]) return d->t[e];
  char sig[3] = {'[', elem == 'L' ? 0 : elem, 0};
  mvm_type t = 0;
  for (uint32_t i = 0; i < vm->natypes && !t; i++)
    if (sig[1] ? !strcmp(vm->atypes[i]->sig, sig) : !strcmp(vm->atypes[i]->sig, "[Ljava/lang/Object;"))
      t = MVM_TYPE_ARRAY | i;
  d->known[e] = 1;
  d->t[e] = t;
  return t;
}

static mvm_type type_of(mvm_vm *vm, default_types *d, const mvm_hdr *h) {
  if (h->kind == MVM_BLK_CLASS) return (mvm_type)vm->class_class->index + 1;
  if (h->kind == MVM_BLK_OBJECT) return (mvm_type)mvm_deref(vm, h->klass)->aux + 1;
  if (h->klass) return MVM_TYPE_ARRAY | (h->klass - 1);
  return default_array_type(vm, d, (char)h->elem);
}

int mvm_heap_for_each_object(mvm_vm *vm, int (*fn)(void *arg, const mvm_heap_obj *o), void *arg) {
  default_types d;
  memset(&d, 0, sizeof d);
  uint32_t end = (uint32_t)(vm->heap.footprint / MVM_UNIT);
  int rc = 0;
  for (uint32_t u = 0; u < end && !rc; u += block_at(vm, u)->units) {
    mvm_hdr *h = block_at(vm, u);
    if (h->kind == MVM_BLK_FREE) continue;
    mvm_heap_obj o = {mvm_ref_of(vm, h), type_of(vm, &d, h), (size_t)h->units * MVM_UNIT, -1, 0, NULL};
    if (h->kind == MVM_BLK_ARRAY) {
      o.length = (int32_t)h->aux;
      o.elem = (char)h->elem;
      o.elements = h + 1;
    }
    rc = fn(arg, &o);
  }
  return rc;
}

typedef struct root_walk {
  int (*fn)(void *arg, const mvm_heap_root *r);
  void *arg;
  int rc;
} root_walk;

static void root(root_walk *w, uint64_t obj, mvm_root_kind k, uint32_t thread, int32_t depth, int32_t slot) {
  if (!obj || w->rc) return;
  mvm_heap_root r = {obj, k, thread, depth, slot};
  w->rc = w->fn(w->arg, &r);
}

static void debugger_root(void *arg, uint64_t *ref) {
  root_walk *w = arg;
  root(w, *ref, MVM_ROOT_DEBUGGER, 0, -1, -1);
}

/* A frame's registers: the slot a debugger uses puts the parameters (the last nparams registers)
 * first, as vm_bridge.c numbers them. */
static void frame_roots(root_walk *w, mvm_thread *t) {
  for (uint32_t f = 0; f < t->depth && !w->rc; f++) {
    const mvm_frame *fr = &t->frames[f];
    const mvm_method *m = fr->m;
    int32_t depth = (int32_t)(t->depth - 1 - f);
    uint32_t first_param = (uint32_t)(m->nregs - m->nparams);
    for (uint32_t r = 0; r < m->nregs && !w->rc; r++) {
      if (t->tags[fr->base + r] != MVM_REFTAG) continue;
      int32_t slot = r >= first_param ? (int32_t)(r - first_param) : (int32_t)(r + m->nparams);
      root(w, (uint64_t)(mvm_ref)t->regs[fr->base + r], MVM_ROOT_JAVA_FRAME, t->id, depth, slot);
    }
  }
}

int mvm_heap_for_each_root(mvm_vm *vm, int (*fn)(void *arg, const mvm_heap_root *r), void *arg) {
  root_walk w = {fn, arg, 0};
  for (uint32_t i = 0; i < vm->nclasses; i++) root(&w, vm->classes[i]->obj, MVM_ROOT_STICKY_CLASS, 0, -1, -1);
  root(&w, vm->group_system, MVM_ROOT_VM_INTERNAL, 0, -1, -1);
  root(&w, vm->group_main, MVM_ROOT_VM_INTERNAL, 0, -1, -1);
  pthread_mutex_lock(&vm->thread_lock);
  for (mvm_thread *t = vm->threads; t && !w.rc; t = t->next) {
    root(&w, t->obj, MVM_ROOT_THREAD_OBJECT, t->id, -1, -1);
    root(&w, t->group, MVM_ROOT_THREAD_BLOCK, t->id, -1, -1);
    for (int i = 0; i < MVM_PINS; i++) root(&w, t->pins[i], MVM_ROOT_THREAD_BLOCK, t->id, -1, -1);
    if (t->ret_tag == MVM_REFTAG) root(&w, (uint64_t)(mvm_ref)t->ret, MVM_ROOT_THREAD_BLOCK, t->id, -1, -1);
    frame_roots(&w, t);
  }
  pthread_mutex_unlock(&vm->thread_lock);
  pthread_mutex_lock(&vm->mon_lock);
  for (int b = 0; b < MVM_MON_BUCKETS && !w.rc; b++)
    for (mvm_monitor *m = vm->mon[b]; m && !w.rc; m = m->next)
      if (m->owner || m->waiters) root(&w, m->obj, MVM_ROOT_MONITOR_USED, 0, -1, -1);
  pthread_mutex_unlock(&vm->mon_lock);
  if (vm->dbg.gc_roots && !w.rc) vm->dbg.gc_roots(vm->dbg.ud, debugger_root, &w);
  return w.rc;
}

int mvm_heap_census(mvm_vm *vm, int (*fn)(void *arg, mvm_type type, uint64_t objects, uint64_t bytes), void *arg) {
  /* Per class by index, per array type by index. */
  uint64_t *n = calloc((size_t)(vm->nclasses + vm->natypes) * 2 + 2, sizeof *n);
  if (!n) return -1;
  uint64_t *bytes = n + vm->nclasses + vm->natypes + 1;
  default_types d;
  memset(&d, 0, sizeof d);
  uint32_t end = (uint32_t)(vm->heap.footprint / MVM_UNIT);
  for (uint32_t u = 0; u < end; u += block_at(vm, u)->units) {
    mvm_hdr *h = block_at(vm, u);
    if (h->kind == MVM_BLK_FREE) continue;
    mvm_type t = type_of(vm, &d, h);
    size_t i = (t & MVM_TYPE_ARRAY) ? vm->nclasses + (size_t)(t & 0xffffffffu) : (size_t)t - 1;
    if (!t) i = vm->nclasses + vm->natypes; /* untyped: its own line */
    n[i]++;
    bytes[i] += (uint64_t)h->units * MVM_UNIT;
  }
  int rc = 0;
  for (size_t i = 0; i < (size_t)vm->nclasses + vm->natypes && !rc; i++) {
    if (!n[i]) continue;
    mvm_type t = i < vm->nclasses ? (mvm_type)i + 1 : MVM_TYPE_ARRAY | (i - vm->nclasses);
    rc = fn(arg, t, n[i], bytes[i]);
  }
  if (!rc && n[vm->nclasses + vm->natypes]) rc = fn(arg, 0, n[vm->nclasses + vm->natypes], bytes[vm->nclasses + vm->natypes]);
  free(n);
  return rc;
}

int mvm_heap_object_info(mvm_vm *vm, uint64_t ref, size_t *bytes, int32_t *hash) {
  if (!ref || ref > vm->heap.footprint / MVM_UNIT) return -1;
  mvm_hdr *h = mvm_deref(vm, (mvm_ref)ref);
  if (h->kind == MVM_BLK_FREE) return -1;
  *bytes = (size_t)h->units * MVM_UNIT;
  *hash = (int32_t)(((uint32_t)ref * 0x9E3779B1u) >> 1); /* interp.c's identity_hash */
  return 0;
}
