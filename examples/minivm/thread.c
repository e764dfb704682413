/* SPDX-License-Identifier: Apache-2.0 */
/* Threads: the registry, status changes, safepoints and stop-the-world, start/join/rename.
 *
 * Stop-the-world works like Dalvik's suspend-all, reduced to one count. An interpreter thread is
 * "unsafe" only while RUNNING; every other status (sleep, wait, monitor, native, vmwait) means it
 * does not touch the heap, so the collector need not wait for it. Becoming RUNNING blocks while
 * the world is stopped, and RUNNING threads poll vm->stw_req between instructions and park
 * (SUSPENDED) when it is set. The collector sets the flag and waits for the count to reach 0. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "internal.h"

static _Thread_local mvm_thread *self_tls;

mvm_thread *mvm_thread_self(void) { return self_tls; }

mvm_thread *mvm_thread_new(mvm_vm *vm, const char *name, int daemon, int interp) {
  mvm_thread *t = mvm_ncalloc(vm, 1, sizeof *t);
  if (!t) return NULL;
  if (!(t->name = mvm_nstrdup(vm, name))) {
    mvm_nfree(vm, t);
    return NULL;
  }
  t->vm = vm;
  t->daemon = daemon;
  t->interp = interp;
  pthread_mutex_init(&t->stack_lock, NULL);
  atomic_store(&t->status, MVM_TS_STARTING);
  return t;
}

int mvm_thread_init_stack(mvm_thread *t) {
  mvm_vm *vm = t->vm;
  t->frames = mvm_ncalloc(vm, MVM_MAX_FRAMES, sizeof *t->frames);
  t->regs = mvm_ncalloc(vm, MVM_MAX_SLOTS, sizeof *t->regs);
  t->tags = mvm_ncalloc(vm, MVM_MAX_SLOTS, sizeof *t->tags);
  t->rng = 0x9e3779b97f4a7c15ull ^ ((uint64_t)t->id << 32) ^ (uint64_t)mvm_now_ms();
  return t->frames && t->regs && t->tags ? 0 : -1;
}

void mvm_thread_free(mvm_thread *t) {
  mvm_vm *vm = t->vm;
  mvm_nfree(vm, t->frames);
  mvm_nfree(vm, t->regs);
  mvm_nfree(vm, t->tags);
  mvm_nfree(vm, t->name);
  pthread_mutex_destroy(&t->stack_lock);
  mvm_nfree(vm, t);
}

void mvm_thread_register(mvm_thread *t, mvm_status initial) {
  mvm_vm *vm = t->vm;
  atomic_store(&t->status, initial);
  pthread_mutex_lock(&vm->thread_lock);
  if (!t->id) t->id = vm->next_id++;
  /* Append, so the list (and THST) stays in creation order. */
  mvm_thread **pp = &vm->threads;
  while (*pp) pp = &(*pp)->next;
  *pp = t;
  t->next = NULL;
  pthread_mutex_unlock(&vm->thread_lock);
}

void mvm_thread_unregister(mvm_thread *t) {
  mvm_vm *vm = t->vm;
  mvm_set_status(t, MVM_TS_ZOMBIE);
  /* A debugger's requests die with the thread (they would keep vm->poll up for ever). */
  pthread_mutex_lock(&vm->stw_lock);
  if (atomic_exchange(&t->susp_req, 0)) vm->nsusp--;
  if (atomic_exchange(&t->stepping, 0)) atomic_fetch_sub(&vm->nstepping, 1);
  if (atomic_exchange(&t->async_pending, 0)) vm->nasync--;
  mvm_poll_update_locked(vm);
  pthread_mutex_unlock(&vm->stw_lock);
  pthread_mutex_lock(&vm->thread_lock);
  for (mvm_thread **pp = &vm->threads; *pp; pp = &(*pp)->next)
    if (*pp == t) {
      *pp = t->next;
      break;
    }
  pthread_cond_broadcast(&vm->thread_cond);
  pthread_mutex_unlock(&vm->thread_lock);
  if (vm->hooks.thread_end) vm->hooks.thread_end(vm->hooks.ud, t->id);
  if (self_tls == t) self_tls = NULL;
}

void mvm_thread_bind(mvm_thread *t) {
  self_tls = t;
  t->self = pthread_self();
  atomic_store(&t->tid, (pid_t)syscall(SYS_gettid)); /* publishes self */
}

void mvm_set_status(mvm_thread *t, mvm_status s) {
  mvm_vm *vm = t->vm;
  if (!t->interp) {
    atomic_store(&t->status, s);
    return;
  }
  int want_unsafe = s == MVM_TS_RUNNING;
  pthread_mutex_lock(&vm->stw_lock);
  if (want_unsafe && !t->unsafe) {
    /* Back to bytecode: not while the world is stopped, nor while a debugger holds the thread
     * (a thread suspended in sleep, wait or native stays out until resumed). */
    while (vm->stw_active || (t->susp_req && !atomic_load(&vm->shutdown)))
      pthread_cond_wait(&vm->resume_cond, &vm->stw_lock);
    t->unsafe = 1;
    vm->running++;
  } else if (!want_unsafe && t->unsafe) {
    t->unsafe = 0;
    /* Wakes the collector when the last one stops, and a debugger waiting for this one. */
    if (--vm->running == 0 || t->susp_req) pthread_cond_broadcast(&vm->stw_cond);
  }
  atomic_store(&t->status, s);
  pthread_mutex_unlock(&vm->stw_lock);
}

void mvm_thread_set_display_status(mvm_thread *t, mvm_status s) { atomic_store(&t->status, s); }

int mvm_safepoint(mvm_thread *t) {
  if (atomic_load(&t->vm->shutdown)) return -1;
  mvm_set_status(t, MVM_TS_SUSPENDED);
  mvm_set_status(t, MVM_TS_RUNNING);
  return atomic_load(&t->vm->shutdown) ? -1 : 0;
}

int mvm_set_async(mvm_thread *t, mvm_ref exc) {
  mvm_vm *vm = t->vm;
  pthread_mutex_lock(&vm->stw_lock);
  t->pins[MVM_PIN_ASYNC] = exc;
  if (!atomic_exchange(&t->async_pending, 1)) vm->nasync++;
  mvm_poll_update_locked(vm);
  pthread_mutex_unlock(&vm->stw_lock);
  mvm_wake_sleepers(vm);
  return 0;
}

mvm_ref mvm_take_async(mvm_thread *t) {
  mvm_vm *vm = t->vm;
  pthread_mutex_lock(&vm->stw_lock);
  mvm_ref exc = t->pins[MVM_PIN_ASYNC];
  t->pins[MVM_PIN_ASYNC] = 0;
  if (atomic_exchange(&t->async_pending, 0)) vm->nasync--;
  mvm_poll_update_locked(vm);
  pthread_mutex_unlock(&vm->stw_lock);
  return exc;
}

void mvm_poll_update_locked(mvm_vm *vm) {
  /* At shutdown the flag stays up: it is how running threads learn they must unwind. */
  /* Method events need no poll: the interpreter reports them at each call and return. */
  int on = vm->stw_active || vm->nsusp > 0 || vm->nasync > 0 || atomic_load(&vm->nstepping) > 0 ||
           atomic_load(&vm->shutdown);
  atomic_store(&vm->poll, on);
}

/* How many times the calling thread holds the world stopped: a heap dump stops it once and then
 * calls the debugger's accessors, which stop it again around each access. */
static _Thread_local int world_held;

void mvm_world_stop(mvm_vm *vm) {
  if (world_held++ > 0) return;
  pthread_mutex_lock(&vm->stw_lock);
  while (vm->stw_active) pthread_cond_wait(&vm->resume_cond, &vm->stw_lock);
  vm->stw_active = 1;
  atomic_store(&vm->stw_req, 1);
  mvm_poll_update_locked(vm);
  while (vm->running > 0) pthread_cond_wait(&vm->stw_cond, &vm->stw_lock);
  pthread_mutex_unlock(&vm->stw_lock);
}

void mvm_world_resume(mvm_vm *vm) {
  if (--world_held > 0) return;
  pthread_mutex_lock(&vm->stw_lock);
  vm->stw_active = 0;
  atomic_store(&vm->stw_req, atomic_load(&vm->shutdown));
  mvm_poll_update_locked(vm);
  pthread_cond_broadcast(&vm->resume_cond);
  pthread_mutex_unlock(&vm->stw_lock);
}

static mvm_thread *find_locked(mvm_vm *vm, uint32_t id);

static void *thread_main(void *arg) {
  mvm_thread *t = arg;
  mvm_vm *vm = t->vm;
  mvm_thread_bind(t);
  mvm_set_status(t, MVM_TS_INITIALIZING);
  if (mvm_thread_init_stack(t)) {
    mvm_log(vm, "thread \"%s\": out of memory for its interpreter stack", t->name);
  } else {
    if (vm->hooks.thread_start) vm->hooks.thread_start(vm->hooks.ud, t->id, t->name);
    /* The parent waits for this (mvm_thread_spawn): the start is reported before it goes on. */
    pthread_mutex_lock(&vm->thread_lock);
    t->started = 1;
    pthread_cond_broadcast(&vm->thread_cond);
    pthread_mutex_unlock(&vm->thread_lock);
    mvm_set_status(t, MVM_TS_RUNNING);
    mvm_interp(t, t->entry, &t->start_arg, &t->start_tag, t->entry->nparams);
    if (vm->dbg.thread_dying) vm->dbg.thread_dying(vm->dbg.ud, t->id);
  }
  /* Like a Java thread dying of an exception, release the monitors it still holds so the
   * others do not hang on them. */
  mvm_monitor_release_all(t);
  mvm_thread_unregister(t);
  mvm_thread_free(t);
  /* Last touch of the VM: mvm_vm_free waits for this count, not just for the list, since the
   * thread still frees its own structures after leaving the list. */
  pthread_mutex_lock(&vm->thread_lock);
  vm->live_pthreads--;
  pthread_cond_broadcast(&vm->thread_cond);
  pthread_mutex_unlock(&vm->thread_lock);
  return NULL;
}

/* A Thread object's name field (a String, or 0: name keeps its default), cut to cap - 1 bytes. */
static void thread_name(mvm_ref s, mvm_vm *vm, char *name, size_t cap) {
  if (!s) return;
  mvm_ref bytes = (mvm_ref)mvm_slots(mvm_deref(vm, s))[0];
  mvm_hdr *a = bytes ? mvm_deref(vm, bytes) : NULL;
  size_t n = a ? (a->aux < cap - 1 ? a->aux : cap - 1) : 0;
  memcpy(name, a ? (const char *)(a + 1) : "", n);
  name[n] = '\0';
}

uint32_t mvm_thread_spawn(mvm_thread *parent, mvm_ref obj, const mvm_method *m, int64_t arg, uint8_t tag) {
  mvm_vm *vm = parent->vm;
  if (atomic_load(&vm->shutdown)) return 0;
  /* The parent is RUNNING from here to the register below: nothing collects, obj stays. */
  int64_t *f = mvm_slots(mvm_deref(vm, obj));
  char name[256] = "Thread";
  thread_name((mvm_ref)f[MVM_THREAD_F_NAME], vm, name, sizeof name);
  mvm_thread *t = mvm_thread_new(vm, name, f[MVM_THREAD_F_DAEMON] != 0, 1);
  if (!t) return 0;
  t->obj = obj;
  t->group = (mvm_ref)f[MVM_THREAD_F_GROUP];
  t->entry = m;
  t->start_arg = arg;
  t->start_tag = tag;
  /* The parent may drop its reference right after the start instruction. */
  if (tag == MVM_REFTAG) t->pins[MVM_PIN_ARG] = (mvm_ref)arg;
  mvm_thread_register(t, MVM_TS_STARTING);
  uint32_t id = t->id;
  f[MVM_THREAD_F_TID] = id;
  pthread_mutex_lock(&vm->thread_lock);
  vm->live_pthreads++;
  pthread_mutex_unlock(&vm->thread_lock);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  int rc = pthread_create(&t->pthread, &attr, thread_main, t);
  pthread_attr_destroy(&attr);
  if (rc) {
    f[MVM_THREAD_F_TID] = 0;
    mvm_thread_unregister(t);
    mvm_thread_free(t);
    pthread_mutex_lock(&vm->thread_lock);
    vm->live_pthreads--;
    pthread_mutex_unlock(&vm->thread_lock);
    return 0;
  }
  /* As Dalvik's dvmCreateInterpThread did, return once the new thread is under way: past its
   * thread-start hook (a debugger has its ThreadStart before the parent's next instruction, as
   * on a JVM, whatever the scheduler does), or gone. By id under the list lock: the thread may
   * have ended and freed itself meanwhile. The parent waits in VMWAIT. */
  mvm_set_status(parent, MVM_TS_VMWAIT);
  pthread_mutex_lock(&vm->thread_lock);
  for (;;) {
    mvm_thread *c = find_locked(vm, id);
    if (!c || c->started || atomic_load(&vm->shutdown)) break;
    pthread_cond_wait(&vm->thread_cond, &vm->thread_lock);
  }
  pthread_mutex_unlock(&vm->thread_lock);
  mvm_set_status(parent, MVM_TS_RUNNING);
  return id;
}

static mvm_thread *find_locked(mvm_vm *vm, uint32_t id) {
  for (mvm_thread *t = vm->threads; t; t = t->next)
    if (t->id == id) return t;
  return NULL;
}

int mvm_thread_join(mvm_thread *self, uint32_t id) {
  mvm_vm *vm = self->vm;
  /* minivm has no Thread objects to wait() on, so join waits on the VM's own thread list: a VM
   * resource, hence VMWAIT rather than Java's WAIT. */
  mvm_set_status(self, MVM_TS_VMWAIT);
  pthread_mutex_lock(&vm->thread_lock);
  while (find_locked(vm, id) && !atomic_load(&vm->shutdown))
    pthread_cond_wait(&vm->thread_cond, &vm->thread_lock);
  pthread_mutex_unlock(&vm->thread_lock);
  mvm_set_status(self, MVM_TS_RUNNING);
  return atomic_load(&vm->shutdown) ? -1 : 0;
}

void mvm_thread_rename(mvm_thread *t, const char *name) {
  mvm_vm *vm = t->vm;
  char *copy = mvm_nstrdup(vm, name);
  if (!copy) return;
  pthread_mutex_lock(&vm->thread_lock);
  char *old = t->name;
  t->name = copy;
  pthread_mutex_unlock(&vm->thread_lock);
  mvm_nfree(vm, old);
  /* Only t renames t, so copy stays valid for the hook. */
  if (vm->hooks.thread_name) vm->hooks.thread_name(vm->hooks.ud, t->id, copy);
}

static void wait_until_none(mvm_vm *vm, int daemons_too) {
  pthread_mutex_lock(&vm->thread_lock);
  for (;;) {
    mvm_thread *t = vm->threads;
    while (t && !(t->interp && (daemons_too || !t->daemon))) t = t->next;
    if (!t && (!daemons_too || !vm->live_pthreads)) break;
    pthread_cond_wait(&vm->thread_cond, &vm->thread_lock);
  }
  pthread_mutex_unlock(&vm->thread_lock);
}

void mvm_wait_nondaemon(mvm_vm *vm) { wait_until_none(vm, 0); }
void mvm_wait_interp_exit(mvm_vm *vm) { wait_until_none(vm, 1); }

int mvm_for_each_thread(mvm_vm *vm, int (*fn)(void *arg, const mvm_thread_info *t), void *arg) {
  int rc = 0;
  pthread_mutex_lock(&vm->thread_lock);
  for (mvm_thread *t = vm->threads; t && !rc; t = t->next) {
    mvm_thread_info info = {t->id, atomic_load(&t->tid), t->name, (mvm_status)atomic_load(&t->status),
                            t->daemon};
    rc = fn(arg, &info);
  }
  pthread_mutex_unlock(&vm->thread_lock);
  return rc;
}

int mvm_thread_cpu_ns(mvm_vm *vm, uint32_t id, uint64_t *ns) {
  int rc = -1;
  *ns = 0;
  pthread_mutex_lock(&vm->thread_lock);
  mvm_thread *t = find_locked(vm, id);
  clockid_t clk;
  struct timespec ts;
  /* In the list and bound (tid set), the thread runs and has not returned: its pthread_t is valid. */
  if (t && atomic_load(&t->tid) != 0 && pthread_getcpuclockid(t->self, &clk) == 0 && clock_gettime(clk, &ts) == 0) {
    *ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    rc = 0;
  }
  pthread_mutex_unlock(&vm->thread_lock);
  return rc;
}

int mvm_thread_stack(mvm_vm *vm, uint32_t id, int (*fn)(void *arg, const mvm_frame_info *f),
                     void *arg) {
  typedef struct {
    const mvm_method *m;
    uint32_t pc;
  } snap;
  snap local[MVM_MAX_FRAMES];
  uint32_t n = 0;
  pthread_mutex_lock(&vm->thread_lock);
  mvm_thread *t = find_locked(vm, id);
  if (t) {
    /* Methods live as long as the VM, so (method, pc) pairs stay meaningful after we let go
     * of the thread, even if it exits meanwhile. */
    pthread_mutex_lock(&t->stack_lock);
    for (n = 0; n < t->depth; n++) {
      local[n].m = t->frames[n].m;
      local[n].pc = atomic_load_explicit(&t->frames[n].pc, memory_order_relaxed);
    }
    pthread_mutex_unlock(&t->stack_lock);
  }
  pthread_mutex_unlock(&vm->thread_lock);
  if (!t) return -1;
  int rc = 0;
  for (uint32_t i = n; i > 0 && !rc; i--) {
    const mvm_method *m = local[i - 1].m;
    uint32_t pc = local[i - 1].pc < m->ncode ? local[i - 1].pc : m->ncode - 1;
    mvm_frame_info f = {m->owner->name, m->name, m->owner->source, m->code[pc].line, m->sig};
    rc = fn(arg, &f);
  }
  return rc;
}

mvm_thread *mvm_thread_attach(mvm_vm *vm, const char *name, int daemon, mvm_status status) {
  mvm_thread *t = mvm_thread_new(vm, name, daemon, 0);
  if (!t) return NULL;
  t->attached = 1;
  mvm_thread_register(t, status);
  mvm_thread_bind(t);
  /* Its Thread object (group "system"); the collector waits meanwhile. Without heap room it
   * simply has none. */
  mvm_dbg_enter(vm);
  mvm_thread_give_object(t, vm->group_system);
  mvm_dbg_leave(vm);
  if (vm->hooks.thread_start) vm->hooks.thread_start(vm->hooks.ud, t->id, t->name);
  return t;
}

void mvm_thread_detach(mvm_thread *t) {
  mvm_thread_unregister(t);
  mvm_thread_free(t);
}

/* ---- Agent threads (JVM TI RunAgentThread, through the bridge's start_agent_thread). A daemon
 * that runs no bytecode (interp = 0): a stop-the-world never waits for it, so it may block for
 * ever in an agent's raw monitor. Not counted in live_pthreads: the VM exits under it, as a JVM
 * exits under its daemon threads. */

typedef struct agent_start {
  mvm_thread *t;
  void (*run)(void *arg, uint32_t id);
  void *arg;
} agent_start;

static void *agent_main(void *p) {
  agent_start st = *(agent_start *)p;
  free(p);
  mvm_thread *t = st.t;
  mvm_vm *vm = t->vm;
  mvm_thread_bind(t);
  if (vm->hooks.thread_start) vm->hooks.thread_start(vm->hooks.ud, t->id, t->name);
  pthread_mutex_lock(&vm->thread_lock);
  t->started = 1;
  pthread_cond_broadcast(&vm->thread_cond);
  pthread_mutex_unlock(&vm->thread_lock);
  if (!atomic_load(&vm->shutdown)) st.run(st.arg, t->id);
  if (vm->dbg.thread_dying) vm->dbg.thread_dying(vm->dbg.ud, t->id);
  mvm_thread_unregister(t);
  mvm_thread_free(t);
  return NULL;
}

int mvm_dbg_start_agent_thread(mvm_vm *vm, uint64_t obj, void (*run)(void *arg, uint32_t id), void *arg,
                               uint32_t *out) {
  if (atomic_load(&vm->shutdown)) return MVM_DBG_ENOTHREAD;
  char name[256] = "agent";
  /* The Thread object's name and group, read with the world stopped (or on an interpreter thread,
   * which no collection passes meanwhile); the object is then the thread's root. */
  mvm_dbg_enter(vm);
  mvm_hdr *h = obj && obj <= vm->heap.footprint / MVM_UNIT ? mvm_deref(vm, (mvm_ref)obj) : NULL;
  if (!h || h->kind != MVM_BLK_OBJECT || mvm_deref(vm, h->klass)->aux != vm->thread_class->index) {
    mvm_dbg_leave(vm);
    return MVM_DBG_ENOOBJECT;
  }
  int64_t *f = mvm_slots(h);
  thread_name((mvm_ref)f[MVM_THREAD_F_NAME], vm, name, sizeof name);
  mvm_thread *t = f[MVM_THREAD_F_TID] ? NULL : mvm_thread_new(vm, name, 1, 0);
  agent_start *st = t ? malloc(sizeof *st) : NULL;
  if (!st) {
    int started = f[MVM_THREAD_F_TID] != 0;
    mvm_dbg_leave(vm);
    if (t) mvm_thread_free(t);
    return started ? MVM_DBG_ENOOBJECT : MVM_DBG_ENOMEM;
  }
  f[MVM_THREAD_F_DAEMON] = 1;
  t->obj = (mvm_ref)obj;
  t->group = f[MVM_THREAD_F_GROUP] ? (mvm_ref)f[MVM_THREAD_F_GROUP] : vm->group_main;
  mvm_thread_register(t, MVM_TS_NATIVE);
  f[MVM_THREAD_F_TID] = t->id;
  mvm_dbg_leave(vm);
  *st = (agent_start){t, run, arg};
  uint32_t id = t->id;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  int rc = pthread_create(&t->pthread, &attr, agent_main, st);
  pthread_attr_destroy(&attr);
  if (rc) {
    free(st);
    mvm_thread_unregister(t);
    mvm_thread_free(t);
    return MVM_DBG_ENOMEM;
  }
  *out = id;
  return 0;
}
