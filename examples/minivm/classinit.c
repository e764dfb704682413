/* SPDX-License-Identifier: Apache-2.0 */
/* Lazy class preparation and initialisation, as a JVM does it: a program class is loaded (parsed,
 * linked) with the program, but prepared (shown to a debugger, with a ClassPrepare event from the
 * thread that caused it) and initialised (its <clinit> run) only at its first active use: a
 * static call, a static field read or write, a new instance, or a thread started on one of its
 * methods. The entry point's class is prepared before the VM starts and initialised on the main
 * thread before main.
 *
 * Protocol (JLS 12.4.2, simplified): the first thread to find a class PREPARED marks it
 * INITIALIZING with itself as owner and runs <clinit> without a lock; another thread that needs
 * the class meanwhile waits (as VMWAIT, so the collector and the debugger may stop the world);
 * the owner itself goes on (a <clinit> that calls its own class's methods). A <clinit> that
 * throws leaves the class in ERROR, and later uses fail with NoClassDefFoundError. */
#include <string.h>

#include "internal.h"

static const mvm_method *clinit_of(const mvm_class *c) {
  for (uint32_t j = 0; j < c->nmethods; j++)
    if (!strcmp(c->methods[j]->name, "<clinit>") && c->methods[j]->nparams == 0) return c->methods[j];
  return NULL;
}

void mvm_class_mark_prepared(mvm_vm *vm, mvm_class *c) {
  (void)vm;
  for (; c; c = c->super) {
    int want = MVM_CLS_LOADED;
    atomic_compare_exchange_strong(&c->state, &want, MVM_CLS_PREPARED);
  }
}

/* LOADED -> PREPARED for c and its superclasses (outermost first), each with its event. */
static void prepare(mvm_thread *t, mvm_class *c) {
  mvm_vm *vm = t->vm;
  if (c->super && atomic_load(&c->super->state) == MVM_CLS_LOADED) prepare(t, c->super);
  int want = MVM_CLS_LOADED;
  if (!atomic_compare_exchange_strong(&c->state, &want, MVM_CLS_PREPARED)) return;
  /* The winner reports it; the event may park this thread (RUNNING: the hook's business). */
  if (vm->dbg.class_prepare) vm->dbg.class_prepare(vm->dbg.ud, t->id, (mvm_type)c->index + 1);
}

int mvm_class_init_slow(mvm_thread *t, mvm_class *c) {
  mvm_vm *vm = t->vm;
  if (atomic_load(&c->state) == MVM_CLS_LOADED) prepare(t, c);
  if (atomic_load(&vm->shutdown)) return -1;
  /* The superclass first (JLS 12.4.2 step 7). */
  if (c->super && atomic_load_explicit(&c->super->state, memory_order_acquire) != MVM_CLS_READY) {
    int r = mvm_class_init_slow(t, c->super);
    if (r) return r;
  }
  int waited = 0;
  pthread_mutex_lock(&vm->class_lock);
  for (;;) {
    int s = atomic_load(&c->state);
    if (s == MVM_CLS_READY || (s == MVM_CLS_INITIALIZING && c->init_thread == t)) {
      pthread_mutex_unlock(&vm->class_lock);
      if (waited) mvm_set_status(t, MVM_TS_RUNNING);
      return 0;
    }
    if (s == MVM_CLS_ERROR) {
      pthread_mutex_unlock(&vm->class_lock);
      if (waited) mvm_set_status(t, MVM_TS_RUNNING);
      return 2;
    }
    if (s == MVM_CLS_PREPARED) break;
    if (atomic_load(&vm->shutdown)) {
      pthread_mutex_unlock(&vm->class_lock);
      if (waited) mvm_set_status(t, MVM_TS_RUNNING);
      return -1;
    }
    if (!waited) {
      /* Never become RUNNING (which may wait for a collection) while holding class_lock. */
      pthread_mutex_unlock(&vm->class_lock);
      mvm_set_status(t, MVM_TS_VMWAIT);
      waited = 1;
      pthread_mutex_lock(&vm->class_lock);
      continue;
    }
    pthread_cond_wait(&vm->class_cond, &vm->class_lock);
  }
  c->init_thread = t;
  atomic_store(&c->state, MVM_CLS_INITIALIZING);
  pthread_mutex_unlock(&vm->class_lock);
  if (waited) mvm_set_status(t, MVM_TS_RUNNING);

  const mvm_method *m = clinit_of(c);
  int r = m ? mvm_interp(t, m, NULL, NULL, 0) : 0;

  pthread_mutex_lock(&vm->class_lock);
  c->init_thread = NULL;
  atomic_store_explicit(&c->state, r ? MVM_CLS_ERROR : MVM_CLS_READY, memory_order_release);
  pthread_cond_broadcast(&vm->class_cond);
  pthread_mutex_unlock(&vm->class_lock);
  return r ? 1 : 0;
}

void mvm_class_wake_all(mvm_vm *vm) {
  pthread_mutex_lock(&vm->class_lock);
  pthread_cond_broadcast(&vm->class_cond);
  pthread_mutex_unlock(&vm->class_lock);
}
