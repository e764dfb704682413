/* SPDX-License-Identifier: Apache-2.0 */
/* The VM object: native-memory tracking, built-in classes, the GC daemon, start-up and shutdown.
 *
 * Every structure minivm keeps outside the managed heap (classes, code, threads, frames, register
 * files, monitors, names) is allocated with mvm_nalloc, which links a small header into a list so
 * the native heap can be measured and walked for DDM's NHSG, and so mvm_vm_free can release what
 * is left without knowing who owned it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

typedef struct mvm_nblock {
  struct mvm_nblock *prev, *next;
  size_t size;                 /* payload bytes */
  size_t pad;                  /* keeps the payload 16-byte aligned, as malloc's is */
} mvm_nblock;

void *mvm_nalloc(mvm_vm *vm, size_t n) {
  if (n > SIZE_MAX - sizeof(mvm_nblock)) return NULL;
  mvm_nblock *b = malloc(sizeof *b + n);
  if (!b) return NULL;
  b->size = n;
  b->prev = NULL;
  pthread_mutex_lock(&vm->native_lock);
  b->next = vm->native_head;
  if (b->next) b->next->prev = b;
  vm->native_head = b;
  vm->native_bytes += sizeof *b + n;
  vm->native_count++;
  pthread_mutex_unlock(&vm->native_lock);
  return b + 1;
}

void *mvm_ncalloc(mvm_vm *vm, size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) return NULL;
  void *p = mvm_nalloc(vm, n * size);
  if (p) memset(p, 0, n * size);
  return p;
}

char *mvm_nstrdup(mvm_vm *vm, const char *s) {
  size_t n = strlen(s) + 1;
  char *p = mvm_nalloc(vm, n);
  if (p) memcpy(p, s, n);
  return p;
}

void mvm_nfree(mvm_vm *vm, void *p) {
  if (!p) return;
  mvm_nblock *b = (mvm_nblock *)p - 1;
  pthread_mutex_lock(&vm->native_lock);
  if (b->prev) b->prev->next = b->next;
  else vm->native_head = b->next;
  if (b->next) b->next->prev = b->prev;
  vm->native_bytes -= sizeof *b + b->size;
  vm->native_count--;
  pthread_mutex_unlock(&vm->native_lock);
  free(b);
}

void mvm_native_get_stats(mvm_vm *vm, mvm_heap_stats *out) {
  memset(out, 0, sizeof *out);
  pthread_mutex_lock(&vm->native_lock);
  out->allocated_bytes = out->footprint = vm->native_bytes;
  out->allocated_objects = vm->native_count;
  uintptr_t lo = UINTPTR_MAX;
  for (mvm_nblock *b = vm->native_head; b; b = b->next)
    if ((uintptr_t)b < lo) lo = (uintptr_t)b;
  out->base = vm->native_head ? lo : 0;
  pthread_mutex_unlock(&vm->native_lock);
}

typedef struct nregion {
  uintptr_t addr;
  size_t bytes;
} nregion;

static int cmp_region(const void *x, const void *y) {
  uintptr_t a = ((const nregion *)x)->addr, b = ((const nregion *)y)->addr;
  return a < b ? -1 : a > b;
}

int mvm_native_walk(mvm_vm *vm, mvm_region_fn fn, void *arg) {
  /* Copy under the lock, visit outside it: the visitor may be slow (it encodes DDM chunks) and
   * other threads keep allocating. The list is unordered, so sort for the address-order rule. */
  pthread_mutex_lock(&vm->native_lock);
  size_t n = vm->native_count, i = 0;
  nregion *r = malloc((n ? n : 1) * sizeof *r);
  if (!r) {
    pthread_mutex_unlock(&vm->native_lock);
    return -1;
  }
  for (mvm_nblock *b = vm->native_head; b && i < n; b = b->next, i++)
    r[i] = (nregion){(uintptr_t)b, sizeof *b + b->size};
  pthread_mutex_unlock(&vm->native_lock);
  qsort(r, i, sizeof *r, cmp_region);
  int rc = 0;
  for (size_t k = 0; k < i && !rc; k++) rc = fn(arg, r[k].addr, r[k].bytes, MVM_RK_NATIVE);
  free(r);
  return rc;
}

void mvm_log(mvm_vm *vm, const char *fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  fprintf(stderr, "minivm: %s\n", line);
}

int64_t mvm_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static struct timespec deadline_after(int64_t ms) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  ts.tv_sec += ms / 1000;
  ts.tv_nsec += (ms % 1000) * 1000000;
  if (ts.tv_nsec >= 1000000000) {
    ts.tv_sec++;
    ts.tv_nsec -= 1000000000;
  }
  return ts;
}

int mvm_sleep_ms(mvm_vm *vm, mvm_thread *t, int64_t ms) {
  struct timespec until = deadline_after(ms < 0 ? 0 : ms);
  pthread_mutex_lock(&vm->sleep_lock);
  int rc = 0;
  while (!atomic_load(&vm->shutdown) && rc != ETIMEDOUT &&
         !(t && (atomic_load(&t->interrupted) || atomic_load(&t->async_pending))))
    rc = pthread_cond_timedwait(&vm->sleep_cond, &vm->sleep_lock, &until);
  pthread_mutex_unlock(&vm->sleep_lock);
  if (atomic_load(&vm->shutdown)) return -1;
  return t && atomic_exchange(&t->interrupted, 0) ? 1 : 0;
}

void mvm_wake_sleepers(mvm_vm *vm) {
  pthread_mutex_lock(&vm->sleep_lock);
  pthread_cond_broadcast(&vm->sleep_cond);
  pthread_mutex_unlock(&vm->sleep_lock);
  mvm_monitor_wake_all(vm);
}

mvm_method *mvm_add_instance_method(mvm_vm *vm, mvm_class *c, const char *name, const char *sig, uint16_t nregs,
                                    const mvm_insn *code, uint32_t ncode) {
  mvm_method **ms = mvm_ncalloc(vm, (size_t)c->nmethods + 1, sizeof *ms);
  mvm_method *m = mvm_ncalloc(vm, 1, sizeof *m);
  if (m) {
    m->name = mvm_nstrdup(vm, name);
    m->sig = mvm_nstrdup(vm, sig);
    m->code = mvm_ncalloc(vm, ncode, sizeof *code);
  }
  if (!ms || !m || !m->name || !m->sig || !m->code) {
    if (m) {
      mvm_nfree(vm, m->name);
      mvm_nfree(vm, m->sig);
      mvm_nfree(vm, m->code);
    }
    mvm_nfree(vm, m);
    mvm_nfree(vm, ms);
    return NULL;
  }
  memcpy(m->code, code, ncode * sizeof *code);
  m->ncode = ncode;
  m->owner = c;
  m->index = c->nmethods;
  m->nregs = nregs;
  m->nparams = 1;
  m->instance = 1;
  m->ret = strchr(sig, ')')[1];
  if (c->nmethods) memcpy(ms, c->methods, c->nmethods * sizeof *ms);
  mvm_nfree(vm, c->methods);
  c->methods = ms;
  c->methods[c->nmethods++] = m;
  return m;
}

int mvm_add_default_init(mvm_vm *vm, mvm_class *c) {
  const mvm_insn ret = {.op = OP_RETURN_VOID, .line = -1};
  return mvm_add_instance_method(vm, c, "<init>", "()V", 1, &ret, 1) ? 0 : -1;
}

/* java.lang.Object's methods a debugger calls (an IDE renders objects through toString()):
 * <init>, toString (to-string: what the VM prints for any object) and hashCode (identity). This
 * is in v1, the last register. */
static int object_methods(mvm_vm *vm, mvm_class *object) {
  const mvm_insn to_string[] = {{.op = OP_TO_STRING, .a = 0, .b = 1, .nargs = 2, .line = -1},
                                {.op = OP_RETURN, .a = 0, .nargs = 1, .line = -1}};
  const mvm_insn hash[] = {{.op = OP_IDENTITY_HASH, .a = 0, .b = 1, .nargs = 2, .line = -1},
                           {.op = OP_RETURN, .a = 0, .nargs = 1, .line = -1}};
  if (mvm_add_default_init(vm, object)) return -1;
  if (!mvm_add_instance_method(vm, object, "toString", "()Ljava/lang/String;", 2, to_string, 2)) return -1;
  return mvm_add_instance_method(vm, object, "hashCode", "()I", 2, hash, 2) ? 0 : -1;
}

mvm_class *mvm_find_class(mvm_vm *vm, const char *name) {
  for (uint32_t i = 0; i < vm->nclasses; i++)
    if (!strcmp(vm->classes[i]->name, name)) return vm->classes[i];
  return NULL;
}

int mvm_parse_size(const char *s, size_t *out) {
  char *end;
  errno = 0;
  if (!s || !*s || *s == '-') return -1;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s) return -1;
  unsigned shift = 0;
  switch (*end) {
    case 'k': case 'K': shift = 10; end++; break;
    case 'm': case 'M': shift = 20; end++; break;
    case 'g': case 'G': shift = 30; end++; break;
    default: break;
  }
  if (*end || !v || v > (SIZE_MAX >> shift)) return -1;
  *out = (size_t)v << shift;
  return 0;
}

/* The built-in classes, as a debugger sees them (java.lang.*). Object (for locks and plain
 * instances), String (a byte[] of UTF-8 in field "value"), Thread and ThreadGroup (every VM
 * thread has a Thread object; the fields are listed in internal.h's MVM_THREAD_F_* order),
 * Class (the class objects in the heap), and the exceptions: Throwable (MVM_THROWABLE_F_*
 * order) > Exception > RuntimeException > the four the VM throws, and Exception >
 * InterruptedException (sleep and wait, after a debugger's Interrupt). super: an index in this
 * table (each after its superclass), -1 for Object. */
static const struct builtin {
  const char *name, *sig;
  int super;
  int nfields;
  struct {
    const char *name, *sig;
  } fields[6];
} builtins[] = {
    {"Object", "Ljava/lang/Object;", -1, 0, {{0}}},
    {"String", "Ljava/lang/String;", 0, 1, {{"value", "[B"}}},
    {"Thread", "Ljava/lang/Thread;", 0, 6,
     {{"name", "Ljava/lang/String;"}, {"priority", "I"}, {"daemon", "Z"}, {"group", "Ljava/lang/ThreadGroup;"},
      {"tid", "J"}, {"target", "J"}}},
    {"ThreadGroup", "Ljava/lang/ThreadGroup;", 0, 3,
     {{"name", "Ljava/lang/String;"}, {"parent", "Ljava/lang/ThreadGroup;"}, {"maxPriority", "I"}}},
    {"Class", "Ljava/lang/Class;", 0, 0, {{0}}},
    {"Throwable", "Ljava/lang/Throwable;", 0, 2, {{"message", "Ljava/lang/String;"}, {"backtrace", "[J"}}},
    {"Exception", "Ljava/lang/Exception;", 5, 0, {{0}}},
    {"RuntimeException", "Ljava/lang/RuntimeException;", 6, 0, {{0}}},
    {"ArithmeticException", "Ljava/lang/ArithmeticException;", 7, 0, {{0}}},
    {"NullPointerException", "Ljava/lang/NullPointerException;", 7, 0, {{0}}},
    {"ArrayIndexOutOfBoundsException", "Ljava/lang/ArrayIndexOutOfBoundsException;", 7, 0, {{0}}},
    {"ClassCastException", "Ljava/lang/ClassCastException;", 7, 0, {{0}}},
    {"InterruptedException", "Ljava/lang/InterruptedException;", 6, 0, {{0}}},
};

static int define_builtins(mvm_vm *vm) {
  for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++) {
    const struct builtin *b = &builtins[i];
    mvm_class *c = mvm_ncalloc(vm, 1, sizeof *c);
    if (!c) return -1;
    c->builtin = 1;
    c->state = MVM_CLS_READY;
    c->super = b->super >= 0 ? vm->classes[b->super] : NULL;
    uint32_t base = c->super ? c->super->ninstance : 0;
    c->ninstance = base;
    c->name = mvm_nstrdup(vm, b->name);
    c->sig = mvm_nstrdup(vm, b->sig);
    c->source = mvm_nstrdup(vm, "<builtin>");
    int ok = c->name && c->sig && c->source;
    if (ok && b->nfields) {
      c->fields = mvm_ncalloc(vm, (size_t)b->nfields, sizeof(mvm_field));
      ok = c->fields != NULL;
      for (int k = 0; ok && k < b->nfields; k++) {
        const char *sig = b->fields[k].sig;
        c->fields[k] = (mvm_field){mvm_nstrdup(vm, b->fields[k].name), sig[0] == '[' ? 'L' : sig[0],
                                   mvm_nstrdup(vm, sig), 0, base + (uint32_t)k, c, 0, 0};
        ok = c->fields[k].name && c->fields[k].sig;
        c->nfields = (uint32_t)k + 1;
        c->ninstance = base + c->nfields;
      }
    }
    /* Thread's slots the VM decodes itself (Object has no fields: field k is slot k). */
    if (ok && i == 2) c->fields[MVM_THREAD_F_TID].vm_internal = c->fields[MVM_THREAD_F_TARGET].vm_internal = 1;
    /* Object's methods; the Throwables' default constructors (a debugger's `new` of one) */
    if (ok && i == 0) ok = object_methods(vm, c) == 0;
    else if (ok && i >= 5) ok = mvm_add_default_init(vm, c) == 0;
    /* Thread's constructors, for JNI NewObject (an agent's RunAgentThread): the debugger's
     * construct path makes the object itself (debug.c, mvm_dbg_invoke) */
    else if (ok && i == 2)
      ok = mvm_add_default_init(vm, c) == 0 &&
           mvm_add_instance_method(vm, c, "<init>", "(Ljava/lang/String;)V", 2,
                                   &(const mvm_insn){.op = OP_RETURN_VOID, .line = -1}, 1) != NULL;
    if (!ok || mvm_define_class(vm, c)) {
      mvm_class_free(vm, c);
      return -1;
    }
  }
  vm->object_class = vm->classes[0];
  vm->string_class = vm->classes[1];
  vm->thread_class = vm->classes[2];
  vm->group_class = vm->classes[3];
  vm->class_class = vm->classes[4];
  vm->throwable_class = vm->classes[5];
  vm->exception_class = vm->classes[6];
  vm->runtime_exc_class = vm->classes[7];
  vm->arith_class = vm->classes[8];
  vm->npe_class = vm->classes[9];
  vm->aioobe_class = vm->classes[10];
  vm->cce_class = vm->classes[11];
  vm->interrupted_class = vm->classes[12];
  /* The array types the VM itself makes: String's bytes, main's arguments, and one per element
   * letter for new-array's defaults (an array header with type 0 means the letter's default). */
  static const char *const atypes[] = {"[B", "[Ljava/lang/String;", "[Z", "[C", "[S", "[I", "[F", "[J", "[D",
                                       "[Ljava/lang/Object;"};
  for (size_t i = 0; i < sizeof atypes / sizeof atypes[0]; i++)
    if (mvm_intern_atype(vm, atypes[i]) < 0) return -1;
  return 0;
}

static mvm_ref new_group(mvm_vm *vm, const char *name, mvm_ref parent) {
  mvm_ref s = mvm_new_string_vm(vm, name, strlen(name));
  mvm_ref g = s ? mvm_alloc_object_vm(vm, vm->group_class) : 0;
  if (!g) return 0;
  int64_t *f = mvm_slots(mvm_deref(vm, g));
  f[MVM_GROUP_F_NAME] = s;
  f[MVM_GROUP_F_PARENT] = parent;
  f[MVM_GROUP_F_MAXPRI] = 10;
  return g;
}

mvm_ref mvm_thread_object_new(mvm_vm *vm, mvm_thread *t, mvm_ref name, int daemon, mvm_ref group, int64_t target) {
  mvm_ref o = t && t->interp ? mvm_alloc_object(t, vm->thread_class) : mvm_alloc_object_vm(vm, vm->thread_class);
  if (!o) return 0;
  int64_t *f = mvm_slots(mvm_deref(vm, o));
  f[MVM_THREAD_F_NAME] = name;
  f[MVM_THREAD_F_PRIORITY] = 5;
  f[MVM_THREAD_F_DAEMON] = daemon != 0;
  f[MVM_THREAD_F_GROUP] = group;
  f[MVM_THREAD_F_TARGET] = target;
  return o;
}

/* The Thread object of a thread made outside the interpreter (main, GC, attached): the caller
 * keeps the collector out (no interpreter thread runs yet, or inside mvm_dbg_enter). */
int mvm_thread_give_object(mvm_thread *t, mvm_ref group) {
  mvm_vm *vm = t->vm;
  mvm_ref s = mvm_new_string_vm(vm, t->name, strlen(t->name));
  mvm_ref o = s ? mvm_thread_object_new(vm, NULL, s, t->daemon, group, 0) : 0;
  if (!o) return -1;
  mvm_slots(mvm_deref(vm, o))[MVM_THREAD_F_TID] = t->id;
  t->group = group;
  t->obj = o;
  return 0;
}

/* The GC daemon: the only thread that ever collects, so the debugger's request, an explicit gc
 * and an allocation failure all end up here, and libddmc's GC hooks always run on one thread. */
static void *gc_main(void *arg) {
  mvm_vm *vm = arg;
  mvm_thread *t = vm->gc_thread;
  mvm_thread_bind(t);
  if (vm->hooks.thread_start) vm->hooks.thread_start(vm->hooks.ud, t->id, t->name);
  pthread_mutex_lock(&vm->gc_lock);
  for (;;) {
    mvm_thread_set_display_status(t, MVM_TS_VMWAIT);
    while (!vm->gc_pending && !vm->gc_stop) pthread_cond_wait(&vm->gc_cond, &vm->gc_lock);
    if (vm->gc_stop) break;
    mvm_gc_reason why = vm->gc_why;
    vm->gc_pending = 0;
    vm->gc_started++;
    pthread_mutex_unlock(&vm->gc_lock);

    mvm_thread_set_display_status(t, MVM_TS_RUNNING);
    mvm_world_stop(vm);
    mvm_heap_collect(vm, why);
    mvm_world_resume(vm);
    /* HPIF goes out after the world resumed, as Dalvik sent it. */
    if (vm->hooks.gc_done) vm->hooks.gc_done(vm->hooks.ud);

    pthread_mutex_lock(&vm->gc_lock);
    vm->gc_finished++;
    pthread_cond_broadcast(&vm->gc_done_cond);
  }
  pthread_mutex_unlock(&vm->gc_lock);
  return NULL;
}

int mvm_gc_request(mvm_vm *vm, mvm_gc_reason why, int wait) {
  pthread_mutex_lock(&vm->gc_lock);
  if (atomic_load(&vm->shutdown) && wait) {
    pthread_mutex_unlock(&vm->gc_lock);
    return -1;
  }
  /* A collection already under way may have marked before our caller's last store: wait for
   * one that starts after this call. */
  uint64_t target = vm->gc_started + 1;
  if (!vm->gc_pending) vm->gc_why = why;
  vm->gc_pending = 1;
  pthread_cond_signal(&vm->gc_cond);
  pthread_mutex_unlock(&vm->gc_lock);
  if (!wait) return 0;

  mvm_thread *self = mvm_thread_self();
  if (self && self->interp) mvm_set_status(self, MVM_TS_VMWAIT);
  pthread_mutex_lock(&vm->gc_lock);
  while (vm->gc_finished < target && !atomic_load(&vm->shutdown))
    pthread_cond_wait(&vm->gc_done_cond, &vm->gc_lock);
  int rc = vm->gc_finished >= target ? 0 : -1;
  pthread_mutex_unlock(&vm->gc_lock);
  if (self && self->interp) mvm_set_status(self, MVM_TS_RUNNING);
  return rc;
}

static pthread_condattr_t *monotonic_attr(pthread_condattr_t *a) {
  pthread_condattr_init(a);
  pthread_condattr_setclock(a, CLOCK_MONOTONIC);
  return a;
}

mvm_vm *mvm_vm_new(const mvm_config *cfg, const mvm_hooks *hooks, char *err, size_t errlen) {
  mvm_vm *vm = calloc(1, sizeof *vm);
  if (!vm) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  if (cfg) vm->cfg = *cfg;
  if (hooks) vm->hooks = *hooks;
  mvm_set_alloc_hook(vm, NULL, NULL, NULL);
  pthread_condattr_t ca;
  monotonic_attr(&ca);
  pthread_mutex_init(&vm->native_lock, NULL);
  pthread_mutex_init(&vm->thread_lock, NULL);
  pthread_cond_init(&vm->thread_cond, NULL);
  pthread_mutex_init(&vm->stw_lock, NULL);
  pthread_cond_init(&vm->stw_cond, NULL);
  pthread_cond_init(&vm->resume_cond, NULL);
  pthread_mutex_init(&vm->mon_lock, NULL);
  pthread_mutex_init(&vm->gc_lock, NULL);
  pthread_cond_init(&vm->gc_cond, NULL);
  pthread_cond_init(&vm->gc_done_cond, NULL);
  pthread_mutex_init(&vm->sleep_lock, NULL);
  pthread_cond_init(&vm->sleep_cond, &ca);
  pthread_mutex_init(&vm->out_lock, NULL);
  pthread_mutex_init(&vm->bp_lock, NULL);
  pthread_mutex_init(&vm->class_lock, NULL);
  pthread_cond_init(&vm->class_cond, NULL);
  pthread_condattr_destroy(&ca);
  atomic_store(&vm->exit_status, -1);
  vm->next_id = 2;   /* 1 is reserved for main */

  if (mvm_heap_init(vm, err, errlen)) goto fail;
  if (define_builtins(vm)) {
    snprintf(err, errlen, "heap too small for the built-in classes");
    goto fail;
  }
  vm->group_system = new_group(vm, "system", 0);
  vm->group_main = vm->group_system ? new_group(vm, "main", vm->group_system) : 0;
  if (!vm->group_main) {
    snprintf(err, errlen, "heap too small for the built-in objects");
    goto fail;
  }
  vm->gc_thread = mvm_thread_new(vm, "GC", 1, 0);
  if (!vm->gc_thread) {
    snprintf(err, errlen, "out of memory");
    goto fail;
  }
  mvm_thread_register(vm->gc_thread, MVM_TS_STARTING);
  if (mvm_thread_give_object(vm->gc_thread, vm->group_system)) {
    snprintf(err, errlen, "heap too small for the built-in objects");
    mvm_thread_unregister(vm->gc_thread);
    mvm_thread_free(vm->gc_thread);
    vm->gc_thread = NULL;
    goto fail;
  }
  if (pthread_create(&vm->gc_pthread, NULL, gc_main, vm)) {
    snprintf(err, errlen, "cannot start the GC thread");
    mvm_thread_unregister(vm->gc_thread);
    mvm_thread_free(vm->gc_thread);
    vm->gc_thread = NULL;
    goto fail;
  }
  vm->gc_running = 1;
  return vm;
fail:
  mvm_vm_free(vm);
  return NULL;
}

int mvm_exit_status(int64_t requested) { return requested >= 0 && requested <= 255 ? (int)requested : 1; }

void mvm_request_shutdown(mvm_vm *vm) {
  if (atomic_exchange(&vm->shutdown, 1)) return;
  if (vm->hooks.shutdown) vm->hooks.shutdown(vm->hooks.ud);
  /* poll is the "look up" flag every instruction reads; it stays up from now on. */
  atomic_store(&vm->poll, 1);
  pthread_mutex_lock(&vm->sleep_lock);
  pthread_cond_broadcast(&vm->sleep_cond);
  pthread_mutex_unlock(&vm->sleep_lock);
  pthread_mutex_lock(&vm->gc_lock);
  pthread_cond_broadcast(&vm->gc_done_cond);
  pthread_mutex_unlock(&vm->gc_lock);
  pthread_mutex_lock(&vm->thread_lock);
  pthread_cond_broadcast(&vm->thread_cond);
  pthread_mutex_unlock(&vm->thread_lock);
  pthread_mutex_lock(&vm->stw_lock);
  atomic_store(&vm->poll, 1);
  pthread_cond_broadcast(&vm->resume_cond);
  pthread_mutex_unlock(&vm->stw_lock);
  mvm_monitor_wake_all(vm);
  mvm_class_wake_all(vm);
}

void mvm_vm_free(mvm_vm *vm) {
  if (!vm) return;
  mvm_request_shutdown(vm);
  if (vm->main_thread) {   /* prepared, never run */
    mvm_thread_unregister(vm->main_thread);
    mvm_thread_free(vm->main_thread);
    vm->main_thread = NULL;
  }
  mvm_wait_interp_exit(vm);
  if (vm->gc_running) {
    pthread_mutex_lock(&vm->gc_lock);
    vm->gc_stop = 1;
    pthread_cond_broadcast(&vm->gc_cond);
    pthread_mutex_unlock(&vm->gc_lock);
    pthread_join(vm->gc_pthread, NULL);
    mvm_thread_unregister(vm->gc_thread);
    mvm_thread_free(vm->gc_thread);
  }
  mvm_monitor_free_all(vm);
  mvm_bp_clear_all(vm);
  for (uint32_t i = 0; i < vm->nclasses; i++) mvm_class_free(vm, vm->classes[i]);
  mvm_nfree(vm, vm->classes);
  for (uint32_t i = 0; i < vm->natypes; i++) {
    mvm_nfree(vm, vm->atypes[i]->sig);
    mvm_nfree(vm, vm->atypes[i]);
  }
  mvm_nfree(vm, vm->atypes);
  mvm_heap_destroy(vm);
  /* Anything still tracked belonged to a thread that never unregistered; release it anyway. */
  while (vm->native_head) mvm_nfree(vm, vm->native_head + 1);
  free(vm);
}

static const mvm_method *find_main(mvm_vm *vm) {
  for (uint32_t i = 0; i < vm->nclasses; i++) {
    mvm_class *c = vm->classes[i];
    for (uint32_t j = 0; j < c->nmethods; j++)
      if (!strcmp(c->methods[j]->name, "main")) return c->methods[j];
  }
  return NULL;
}

int mvm_prepare_main(mvm_vm *vm) {
  if (vm->main_thread) return 0;
  const mvm_method *m = find_main(vm);
  if (!m || m->nparams > 1) {
    mvm_log(vm, m ? "main must take 0 or 1 (String[]) parameters" : "no class declares a method 'main'");
    return -1;
  }
  mvm_thread *t = mvm_thread_new(vm, "main", 0, 1);
  if (!t || mvm_thread_init_stack(t)) {
    if (t) mvm_thread_free(t);
    mvm_log(vm, "out of memory creating the main thread");
    return -1;
  }
  t->id = 1;
  t->entry = m;
  /* No bytecode runs yet, so nothing collects while the Thread object is made. */
  if (mvm_thread_give_object(t, vm->group_main)) {
    mvm_thread_free(t);
    mvm_log(vm, "heap too small for the main thread");
    return -1;
  }
  mvm_thread_register(t, MVM_TS_STARTING);
  vm->main_thread = t;
  /* A debugger attached before main runs (suspend=y) sees the entry point's class, as the bridge
   * promises; the rest are prepared at their first use. */
  mvm_class_mark_prepared(vm, m->owner);
  return 0;
}

int mvm_run_main(mvm_vm *vm, int argc, char **argv) {
  if (mvm_prepare_main(vm)) return 1;
  mvm_thread *t = vm->main_thread;
  const mvm_method *m = t->entry;
  /* From now on it unregisters itself, and it counts as a live pthread until its last touch of
   * the VM: mvm_vm_free from another thread waits for that (it used to free the thread under
   * the runner's mvm_thread_free, a use after free ASan caught in test_threads). */
  pthread_mutex_lock(&vm->thread_lock);
  vm->main_thread = NULL;
  vm->live_pthreads++;
  pthread_mutex_unlock(&vm->thread_lock);
  mvm_thread_bind(t);
  mvm_set_status(t, MVM_TS_INITIALIZING);
  if (vm->hooks.thread_start) vm->hooks.thread_start(vm->hooks.ud, t->id, t->name);
  /* A debugger that suspended main before it ran (suspend=y) holds it here. */
  mvm_set_status(t, MVM_TS_RUNNING);

  int64_t arg = 0;
  uint8_t tag = MVM_REFTAG;
  /* main's class (prepared by mvm_prepare_main) is initialised when main is called. */
  int rc = atomic_load(&vm->shutdown) ? -1 : 0;
  if (!rc && m->nparams == 1) {
    mvm_ref arr = mvm_alloc_array_typed(t, 'L', MVM_ATYPE_STRINGS, argc);
    t->pins[MVM_PIN_ARG] = arr;   /* the string allocations below may collect */
    for (int i = 0; arr && i < argc; i++) {
      mvm_ref s = mvm_new_string(t, argv[i], strlen(argv[i]));
      if (!s) {
        arr = 0;
        break;
      }
      ((uint32_t *)(mvm_deref(vm, arr) + 1))[i] = s;
    }
    if (!arr) {
      mvm_log(vm, "heap too small for main's arguments");
      rc = -1;
    }
    arg = arr;
  }
  if (!rc) rc = mvm_interp(t, m, &arg, &tag, m->nparams);
  if (vm->dbg.thread_dying) vm->dbg.thread_dying(vm->dbg.ud, t->id);
  mvm_monitor_release_all(t);
  mvm_thread_unregister(t);
  mvm_thread_free(t);
  mvm_wait_nondaemon(vm);
  int status = atomic_load(&vm->exit_status);
  pthread_mutex_lock(&vm->thread_lock);
  vm->live_pthreads--;
  pthread_cond_broadcast(&vm->thread_cond);
  pthread_mutex_unlock(&vm->thread_lock);
  return status >= 0 ? status : (rc ? 1 : 0);
}
