/* SPDX-License-Identifier: Apache-2.0 */
/* The heap half of the agents' events: the VM's GC hooks (ddmc_gc_start, ddmc_gc_sweep,
 * ddmc_gc_done, through the event hub: client.c) turned into GarbageCollectionStart / Finish and
 * ObjectFree, and the allocation hook's VM-made objects into VMObjectAlloc.
 *
 * GC callbacks run on the collector's thread with no library lock held; it is no VM thread to
 * JVM TI (GetCurrentThread: UNATTACHED_THREAD) and never parks, so a raw monitor it enters
 * cannot make it wait for the collection it is part of. ObjectFree comes after the collection,
 * from ddmc_gc_done: the sweep only moves tags aside, in space reserved when they were set. */
#include <string.h>

#include "jvmti/tags.h"

typedef void (*cb_env_only)(ddmc__jv_jenv *);
typedef void (*cb_object_free)(ddmc__jv_jenv *, jlong);
typedef void (*cb_vm_object_alloc)(ddmc__jv_jenv *, ddmc__jv_jnienv *, jthread, jobject, jclass, jlong);

static inline int wanted(ddmc__jvmti *jv, int ev) {
  return jv != NULL && atomic_load_explicit(&jv->want[ev - DDMC__JEV_FIRST], memory_order_relaxed) > 0;
}

/* Does e want ev (enabled, a callback set)? One or two atomic loads. */
static ddmc__jv_fnptr heap_callback(ddmc__jv_jenv *e, int ev) {
  int i = ev - DDMC__JEV_FIRST;
  if (atomic_load_explicit(&e->disposed, memory_order_relaxed)) return NULL;
  /* Global or for some thread: GC events belong to no thread, so either enables them. */
  if (!atomic_load_explicit(&e->global[i], memory_order_relaxed) &&
      atomic_load_explicit(&e->nthread_enables[i], memory_order_relaxed) == 0)
    return NULL;
  return atomic_load_explicit(&e->cb[i], memory_order_acquire);
}

static ddmc__jv_jenv *first_env(ddmc__jvmti *jv) { return atomic_load_explicit(&jv->envs, memory_order_acquire); }

static int live_phase(ddmc__jvmti *jv) { return atomic_load(&jv->phase) == JVMTI_PHASE_LIVE; }

/* The GC events run as no VM thread, without parking. */
typedef struct gc_scope {
  uint32_t self;
  int may_park;
} gc_scope;

static void gc_enter(gc_scope *s) {
  s->self = ddmc__jv_self();
  s->may_park = ddmc__jv_may_park();
  ddmc__jv_set_self(0);
  ddmc__jv_set_may_park(0);
}

static void gc_leave(gc_scope *s) {
  ddmc__jv_set_self(s->self);
  ddmc__jv_set_may_park(s->may_park);
}

void ddmc__jv_hub_gc_start(ddmc_vm *vm) {
  ddmc__jvmti *jv = ddmc__jv_get(vm);
  if (!wanted(jv, JVMTI_EVENT_GARBAGE_COLLECTION_START) || !live_phase(jv)) return;
  gc_scope s;
  gc_enter(&s);
  for (ddmc__jv_jenv *e = first_env(jv); e; e = e->next) {
    ddmc__jv_fnptr f = heap_callback(e, JVMTI_EVENT_GARBAGE_COLLECTION_START);
    if (f) ((cb_env_only)f)(e);
  }
  gc_leave(&s);
}

void ddmc__jv_hub_gc_sweep(ddmc_vm *vm, ddmc_gc_is_live_fn is_live, void *arg) {
  ddmc__jvmti *jv = ddmc__jv_get(vm);
  if (jv == NULL) return;
  for (ddmc__jv_jenv *e = first_env(jv); e; e = e->next) {
    ddmc__jv_tags *t = ddmc__jv_tags_of(e, 0);
    if (t == NULL) continue;
    int keep = heap_callback(e, JVMTI_EVENT_OBJECT_FREE) != NULL;
    ddmc__jv_tags_sweep(t, is_live, arg, keep);
  }
}

void ddmc__jv_hub_gc_done(ddmc_vm *vm) {
  ddmc__jvmti *jv = ddmc__jv_get(vm);
  if (jv == NULL) return;
  gc_scope s;
  gc_enter(&s);
  int finish = wanted(jv, JVMTI_EVENT_GARBAGE_COLLECTION_FINISH) && live_phase(jv);
  for (ddmc__jv_jenv *e = first_env(jv); e; e = e->next) {
    ddmc__jv_fnptr f = finish ? heap_callback(e, JVMTI_EVENT_GARBAGE_COLLECTION_FINISH) : NULL;
    if (f) ((cb_env_only)f)(e);
  }
  /* ObjectFree: each environment's waiting tags, a bounded batch at a time (no allocation). */
  for (ddmc__jv_jenv *e = first_env(jv); e; e = e->next) {
    ddmc__jv_tags *t = ddmc__jv_tags_of(e, 0);
    if (t == NULL) continue;
    jlong batch[256];
    uint32_t n;
    while ((n = ddmc__jv_tags_take_freed(t, batch, 256)) > 0) {
      ddmc__jv_fnptr f = live_phase(jv) ? heap_callback(e, JVMTI_EVENT_OBJECT_FREE) : NULL;
      for (uint32_t i = 0; f != NULL && i < n; i++) ((cb_object_free)f)(e, batch[i]);
    }
  }
  gc_leave(&s);
}

/* ---- VMObjectAlloc */

void ddmc__jv_hub_alloc(ddmc_vm *vm, uint32_t thread, ddmc_ref obj, ddmc_class cls, uint64_t bytes, int by_vm) {
  ddmc__jvmti *jv = ddmc__jv_get(vm);
  if (!by_vm || !wanted(jv, JVMTI_EVENT_VM_OBJECT_ALLOC) || !live_phase(jv)) return;
  uint32_t self = ddmc__jv_self();
  int may_park = ddmc__jv_may_park();
  uint32_t mark = ddmc__jv_ref_frame_push();
  if (thread != 0) ddmc__jv_set_self(thread);
  ddmc__jv_set_may_park(0); /* the new object is not reachable yet: no collection may run */
  ddmc__jv_jnienv *jni = ddmc__jv_jni_env(jv);
  jthread t = ddmc__jv_thread_local(jv, thread);
  jobject o = ddmc__jv_ref_local(jv, obj, 0, 0);
  jclass k = ddmc__jv_class_local(jv, cls);
  for (ddmc__jv_jenv *e = first_env(jv); e && o; e = e->next) {
    ddmc__jv_fnptr f =
        atomic_load_explicit(&e->disposed, memory_order_relaxed)
            ? NULL
            : atomic_load_explicit(&e->cb[JVMTI_EVENT_VM_OBJECT_ALLOC - DDMC__JEV_FIRST], memory_order_acquire);
    if (f && ddmc__jv_jenv_enabled(e, JVMTI_EVENT_VM_OBJECT_ALLOC, thread))
      ((cb_vm_object_alloc)f)(e, jni, t, o, k, (jlong)bytes);
  }
  ddmc__jv_ref_frame_pop(jv, mark);
  ddmc__jv_set_self(self);
  ddmc__jv_set_may_park(may_park);
}
