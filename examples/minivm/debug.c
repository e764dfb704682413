/* SPDX-License-Identifier: Apache-2.0 */
/* Debugger support in the core: reflection over classes and methods, values of fields, array
 * elements and registers, thread suspension, breakpoints by patching, stepping and method
 * events. No libddmc here: vm_bridge.c adapts this to ddmc_vm_bridge (mvm_debug.h has the API).
 *
 * Cost when nobody debugs: nothing per instruction beyond the poll the collector already needed
 * (vm->poll, one load and a predictable branch). A breakpoint rewrites one opcode to
 * OP_BREAKPOINT, as Dalvik did after Froyo, so a method without one runs its own code; the
 * table below gives the original opcode back when a thread reaches it. Suspension reuses the
 * safepoint: a suspended thread parks there (or stays in whatever blocking state it is in,
 * because becoming RUNNING waits while susp_req is set: thread.c, mvm_set_status). */
#include <stdio.h>
#include <string.h>

#include "internal.h"

void mvm_dbg_set_hooks(mvm_vm *vm, const mvm_dbg_hooks *h) {
  if (h) vm->dbg = *h;
  else memset(&vm->dbg, 0, sizeof vm->dbg);
}

/* ---- Values */

mvm_value mvm_dbg_value_of(char sig0, int64_t raw) {
  mvm_value v;
  memset(&v, 0, sizeof v);
  v.tag = sig0 == '[' ? 'L' : sig0;
  switch (sig0) {
    case 'V': break;
    case 'Z': v.u.i = raw != 0; break;
    case 'B': v.u.i = (int8_t)raw; break;
    case 'C': v.u.i = (uint16_t)raw; break;
    case 'S': v.u.i = (int16_t)raw; break;
    case 'I': v.u.i = (int32_t)raw; break;
    case 'F': {
      uint32_t bits = (uint32_t)raw;
      memcpy(&v.u.f, &bits, sizeof bits);
      break;
    }
    case 'D': memcpy(&v.u.d, &raw, sizeof raw); break;
    case 'J': v.u.i = raw; break;
    default: v.tag = 'L'; v.u.i = (uint32_t)raw; break;
  }
  return v;
}

static int is_ref_tag(char tag) { return tag == 'L' || strchr("[stgcl", tag) != NULL; }

/* A debugger value as the raw 64 bits a register or slot of type sig0 holds. */
static int64_t raw_of(char sig0, const mvm_value *v) {
  switch (sig0) {
    case 'F': {
      uint32_t bits;
      memcpy(&bits, &v->u.f, sizeof bits);
      return bits;
    }
    case 'D': {
      int64_t raw;
      memcpy(&raw, &v->u.d, sizeof raw);
      return raw;
    }
    case 'Z': return v->u.i != 0;
    case 'B': return (int8_t)v->u.i;
    case 'C': return (uint16_t)v->u.i;
    case 'S': return (int16_t)v->u.i;
    case 'I': return (int32_t)v->u.i;
    default: return v->u.i;
  }
}

/* A reference the VM could have given out: inside the heap, on a block of a live kind. */
static mvm_hdr *block_of(mvm_vm *vm, uint64_t r) {
  if (!r || r > vm->heap.footprint / MVM_UNIT) return NULL;
  mvm_hdr *h = mvm_deref(vm, (mvm_ref)r);
  return h->kind == MVM_BLK_FREE ? NULL : h;
}

/* ---- Types */

/* A class not prepared yet is not the debugger's: unknown, as to a JVM that has not loaded it. */
static mvm_class *class_of_type(mvm_vm *vm, mvm_type t) {
  mvm_class *c = t >= 1 && t <= vm->nclasses ? vm->classes[t - 1] : NULL;
  return c && atomic_load(&c->state) != MVM_CLS_LOADED ? c : NULL;
}
static mvm_atype *atype_of(mvm_vm *vm, mvm_type t) {
  return (t & MVM_TYPE_ARRAY) && (uint32_t)t < vm->natypes ? vm->atypes[(uint32_t)t] : NULL;
}

int mvm_dbg_for_each_type(mvm_vm *vm, int (*fn)(void *arg, mvm_type t), void *arg) {
  int rc = 0;
  for (uint32_t i = 0; i < vm->nclasses && !rc; i++)
    if (class_of_type(vm, (mvm_type)i + 1)) rc = fn(arg, (mvm_type)i + 1);
  for (uint32_t i = 0; i < vm->natypes && !rc; i++) rc = fn(arg, MVM_TYPE_ARRAY | i);
  return rc;
}

int mvm_dbg_type_info(mvm_vm *vm, mvm_type t, mvm_type_info *out) {
  memset(out, 0, sizeof *out);
  mvm_class *c = class_of_type(vm, t);
  mvm_atype *a = c ? NULL : atype_of(vm, t);
  if (!c && !a) return MVM_DBG_ENOTYPE;
  int state = c ? atomic_load(&c->state) : MVM_CLS_READY;
  out->initialized = state == MVM_CLS_READY || state == MVM_CLS_ERROR;
  out->error = state == MVM_CLS_ERROR;
  const mvm_class *sup = c ? c->super : vm->object_class;
  out->super = sup ? (mvm_type)sup->index + 1 : 0;
  if (a) {
    out->sig = a->sig;
    out->is_array = 1;
    return 0;
  }
  out->sig = c->sig;
  out->source = c->builtin ? NULL : c->source;
  out->nfields = c->nfields;
  out->nmethods = c->nmethods;
  out->class_obj = c->obj;
  return 0;
}

int mvm_dbg_field(mvm_vm *vm, mvm_type t, uint32_t field, mvm_field_desc *out) {
  mvm_class *c = class_of_type(vm, t);
  if (!c) return atype_of(vm, t) ? MVM_DBG_ENOFIELD : MVM_DBG_ENOTYPE;
  if (field >= c->nfields) return MVM_DBG_ENOFIELD;
  const mvm_field *f = &c->fields[field];
  *out = (mvm_field_desc){f->name, f->sig, f->is_static, f->vm_internal};
  return 0;
}

static int method_of(mvm_vm *vm, mvm_type t, uint32_t method, mvm_method **out) {
  mvm_class *c = class_of_type(vm, t);
  if (!c) return atype_of(vm, t) ? MVM_DBG_ENOMETHOD : MVM_DBG_ENOTYPE;
  if (method >= c->nmethods) return MVM_DBG_ENOMETHOD;
  *out = c->methods[method];
  return 0;
}

int mvm_dbg_method(mvm_vm *vm, mvm_type t, uint32_t method, mvm_method_desc *out) {
  mvm_method *m;
  int rc = method_of(vm, t, method, &m);
  if (rc) return rc;
  *out = (mvm_method_desc){m->name, m->sig, m->ncode, m->nregs, m->nparams, m->instance};
  return 0;
}

int mvm_dbg_lines(mvm_vm *vm, mvm_type t, uint32_t method, int (*fn)(void *arg, uint32_t pc, int32_t line),
                  void *arg) {
  mvm_method *m;
  int rc = method_of(vm, t, method, &m);
  for (uint32_t pc = 0; !rc && pc < m->ncode; pc++)
    if (pc == 0 || m->code[pc].line != m->code[pc - 1].line) rc = fn(arg, pc, m->code[pc].line);
  return rc;
}

static uint8_t *put_be(uint8_t *p, uint64_t v, int n) {
  for (int i = n - 1; i >= 0; i--, v >>= 8) p[i] = (uint8_t)v;
  return p + n;
}

/* [u1 op][u1 nargs][u2 a][u2 b][u2 c][u8 literal or branch target][u2 args[5]], big-endian:
 * what the assembler made of the line, without the resolved pointer (a method, field, class or
 * string the interpreter looks up once). */
int mvm_dbg_code(mvm_vm *vm, mvm_type t, uint32_t method, int (*fn)(void *arg, const uint8_t *rec), void *arg) {
  mvm_method *m;
  int rc = method_of(vm, t, method, &m);
  for (uint32_t pc = 0; !rc && pc < m->ncode; pc++) {
    const mvm_insn *in = &m->code[pc];
    uint8_t rec[MVM_DBG_INSN_BYTES], *p = rec;
    uint8_t op = mvm_insn_op(in);
    if (op == OP_BREAKPOINT) op = mvm_bp_original(vm, in);
    p = put_be(p, op, 1);
    p = put_be(p, in->nargs, 1);
    p = put_be(p, in->a, 2);
    p = put_be(p, in->b, 2);
    p = put_be(p, in->c, 2);
    p = put_be(p, (uint64_t)in->lit, 8);
    for (int i = 0; i < 5; i++) p = put_be(p, in->args[i], 2);
    rc = fn(arg, rec);
  }
  return rc;
}

int mvm_dbg_locals(mvm_vm *vm, mvm_type t, uint32_t method, int (*fn)(void *arg, const mvm_local_desc *l),
                   void *arg) {
  mvm_method *m;
  int rc = method_of(vm, t, method, &m);
  if (rc) return rc;
  if (!m->nlocals) return MVM_DBG_EABSENT;
  for (uint32_t i = 0; i < m->nlocals && !rc; i++) {
    const mvm_local *l = &m->locals[i];
    mvm_local_desc d = {l->start, l->end, l->reg, l->name, l->sig};
    rc = fn(arg, &d);
  }
  return rc;
}

mvm_type mvm_dbg_main_type(mvm_vm *vm) {
  for (uint32_t i = 0; i < vm->nclasses; i++)
    for (uint32_t j = 0; j < vm->classes[i]->nmethods; j++)
      if (!strcmp(vm->classes[i]->methods[j]->name, "main")) return (mvm_type)i + 1;
  return 0;
}

/* ---- Objects */

/* An attached thread (the JDWP thread) stops the world around each access: the interpreter
 * reads and writes fields, elements and registers without atomics, so the debugger's accesses
 * are ordered with theirs by the stop (every interpreter thread passes stw_lock on its way to
 * a safepoint or a blocking state), and the collector cannot run meanwhile. A debugger's
 * command touches a few values at human speed; a stop costs microseconds. An interpreter
 * thread inside its own hook needs none of it. */
void mvm_dbg_enter(mvm_vm *vm) {
  mvm_thread *self = mvm_thread_self();
  if (self && self->interp) return;
  mvm_world_stop(vm);
}

void mvm_dbg_leave(mvm_vm *vm) {
  mvm_thread *self = mvm_thread_self();
  if (self && self->interp) return;
  mvm_world_resume(vm);
}

int mvm_dbg_world_stop(mvm_vm *vm) {
  mvm_thread *self = mvm_thread_self();
  int prev = -1;
  if (self && self->interp) {
    prev = atomic_load(&self->status);
    mvm_set_status(self, MVM_TS_VMWAIT);
  }
  mvm_world_stop(vm);
  return prev;
}

void mvm_dbg_world_resume(mvm_vm *vm, int prev) {
  mvm_world_resume(vm);
  mvm_thread *self = mvm_thread_self();
  if (prev >= 0 && self) mvm_set_status(self, (mvm_status)prev);
}

static mvm_type type_of_block(mvm_vm *vm, const mvm_hdr *h) {
  if (h->kind == MVM_BLK_CLASS) return (mvm_type)vm->class_class->index + 1;
  if (h->kind == MVM_BLK_OBJECT) return (mvm_type)mvm_deref(vm, h->klass)->aux + 1;
  if (h->klass) return MVM_TYPE_ARRAY | (h->klass - 1);
  /* An array made with an element letter only: that letter's default type. */
  char sig[3] = {'[', h->elem == 'L' ? 0 : (char)h->elem, 0};
  for (uint32_t i = 0; i < vm->natypes; i++)
    if (sig[1] ? !strcmp(vm->atypes[i]->sig, sig) : !strcmp(vm->atypes[i]->sig, "[Ljava/lang/Object;"))
      return MVM_TYPE_ARRAY | i;
  return 0;
}

int mvm_dbg_ref_in_heap(mvm_vm *vm, uint64_t ref) {
  /* The footprint only grows: a racy read errs on the safe side. */
  return ref != 0 && ref <= vm->heap.footprint / MVM_UNIT;
}

int mvm_dbg_object_type(mvm_vm *vm, uint64_t obj, mvm_type *out) {
  mvm_hdr *h = block_of(vm, obj);
  if (!h) return MVM_DBG_ENOOBJECT;
  *out = type_of_block(vm, h);
  return *out ? 0 : MVM_DBG_ENOOBJECT;
}

/* The slot of field in obj (or in the class object for a static), checked against obj's class. */
static int field_slot(mvm_vm *vm, uint64_t obj, mvm_type t, uint32_t field, mvm_field **fl, int64_t **slot) {
  mvm_class *c = class_of_type(vm, t);
  if (!c) return atype_of(vm, t) ? MVM_DBG_ENOFIELD : MVM_DBG_ENOTYPE;
  if (field >= c->nfields) return MVM_DBG_ENOFIELD;
  *fl = &c->fields[field];
  if ((*fl)->is_static != (obj == 0)) return MVM_DBG_ENOFIELD;
  mvm_hdr *h = obj ? block_of(vm, obj) : mvm_deref(vm, c->obj);
  if (!h) return MVM_DBG_ENOOBJECT;
  /* An instance field of c lives in instances of c and of its subclasses, at the same slot. */
  if (obj && (h->kind != MVM_BLK_OBJECT ||
              (h->klass != c->obj && !mvm_is_subclass(vm->classes[mvm_deref(vm, h->klass)->aux], c))))
    return MVM_DBG_ENOFIELD;
  *slot = &mvm_slots(h)[(*fl)->slot];
  return 0;
}

int mvm_dbg_get_field(mvm_vm *vm, uint64_t obj, mvm_type t, uint32_t field, mvm_value *out) {
  mvm_field *fl;
  int64_t *slot;
  int rc = field_slot(vm, obj, t, field, &fl, &slot);
  if (!rc) *out = mvm_dbg_value_of(fl->sig[0], *slot);
  return rc;
}

int mvm_dbg_set_field(mvm_vm *vm, uint64_t obj, mvm_type t, uint32_t field, const mvm_value *v) {
  mvm_field *fl;
  int64_t *slot;
  int rc = field_slot(vm, obj, t, field, &fl, &slot);
  if (rc) return rc;
  /* Thread.target names a method by index and Thread.tid a thread: the VM trusts what it wrote
   * there, so a debugger's value (well typed, any long) would be decoded unchecked. */
  if (fl->vm_internal) return MVM_DBG_EREADONLY;
  if ((fl->type == 'L') != is_ref_tag(v->tag)) return MVM_DBG_ETYPE;
  if (fl->type == 'L' && v->u.i && !block_of(vm, (uint64_t)v->u.i)) return MVM_DBG_ENOOBJECT;
  *slot = fl->type == 'L' ? (int64_t)(uint32_t)v->u.i : raw_of(fl->type, v);
  return 0;
}

int mvm_dbg_string(mvm_vm *vm, uint64_t s, const char **p, size_t *n) {
  mvm_hdr *h = block_of(vm, s);
  if (!h) return MVM_DBG_ENOOBJECT;
  if (h->kind != MVM_BLK_OBJECT || h->klass != vm->string_class->obj) return MVM_DBG_ENOTSTRING;
  mvm_ref bytes = (mvm_ref)mvm_slots(h)[0];
  mvm_hdr *a = bytes ? mvm_deref(vm, bytes) : NULL;
  *p = a ? (const char *)(a + 1) : "";
  *n = a ? a->aux : 0;
  return 0;
}

int mvm_dbg_new_string(mvm_vm *vm, const char *utf8, size_t n, uint64_t *out) {
  mvm_thread *self = mvm_thread_self();
  mvm_ref s = self && self->interp ? mvm_new_string(self, utf8, n) : mvm_new_string_vm(vm, utf8, n);
  if (!s) return MVM_DBG_ENOMEM;
  /* Held until the next new string, so it survives until the caller has pinned it. */
  if (self) self->pins[MVM_PIN_DBG] = s;
  *out = s;
  return 0;
}

static mvm_hdr *array_of(mvm_vm *vm, uint64_t a, int *rc) {
  mvm_hdr *h = block_of(vm, a);
  *rc = !h ? MVM_DBG_ENOOBJECT : h->kind != MVM_BLK_ARRAY ? MVM_DBG_ENOTARRAY : 0;
  return *rc ? NULL : h;
}

int mvm_dbg_array_length(mvm_vm *vm, uint64_t a, int32_t *out) {
  int rc;
  mvm_hdr *h = array_of(vm, a, &rc);
  if (h) *out = (int32_t)h->aux;
  return rc;
}

static void *elem_at(mvm_hdr *h, int32_t i) { return (uint8_t *)(h + 1) + (size_t)i * mvm_elem_size((char)h->elem); }

int mvm_dbg_array_get(mvm_vm *vm, uint64_t a, int32_t index, mvm_value *out) {
  int rc;
  mvm_hdr *h = array_of(vm, a, &rc);
  if (!h) return rc;
  if (index < 0 || (uint32_t)index >= h->aux) return MVM_DBG_EINDEX;
  int64_t raw = 0;
  void *p = elem_at(h, index);
  switch (mvm_elem_size((char)h->elem)) {
    case 1: raw = *(uint8_t *)p; break;
    case 2: raw = *(uint16_t *)p; break;
    case 4: raw = *(uint32_t *)p; break;
    default: memcpy(&raw, p, sizeof raw); break;
  }
  *out = mvm_dbg_value_of((char)h->elem, raw);
  return 0;
}

int mvm_dbg_array_set(mvm_vm *vm, uint64_t a, int32_t index, const mvm_value *v) {
  int rc;
  mvm_hdr *h = array_of(vm, a, &rc);
  if (!h) return rc;
  if (index < 0 || (uint32_t)index >= h->aux) return MVM_DBG_EINDEX;
  if ((h->elem == 'L') != is_ref_tag(v->tag)) return MVM_DBG_ETYPE;
  if (h->elem == 'L' && v->u.i && !block_of(vm, (uint64_t)v->u.i)) return MVM_DBG_ENOOBJECT;
  int64_t raw = h->elem == 'L' ? (int64_t)(uint32_t)v->u.i : raw_of((char)h->elem, v);
  void *p = elem_at(h, index);
  switch (mvm_elem_size((char)h->elem)) {
    case 1: *(uint8_t *)p = (uint8_t)raw; break;
    case 2: *(uint16_t *)p = (uint16_t)raw; break;
    case 4: *(uint32_t *)p = (uint32_t)raw; break;
    default: memcpy(p, &raw, sizeof raw); break;
  }
  return 0;
}

/* ---- Threads */

static mvm_thread *find_locked(mvm_vm *vm, uint32_t id) {
  for (mvm_thread *t = vm->threads; t; t = t->next)
    if (t->id == id) return t;
  return NULL;
}

int mvm_dbg_thread_get(mvm_vm *vm, uint32_t id, mvm_dbg_thread *out, char *name, size_t cap) {
  pthread_mutex_lock(&vm->thread_lock);
  mvm_thread *t = find_locked(vm, id);
  if (t) {
    *out = (mvm_dbg_thread){t->obj, t->group, (mvm_status)atomic_load(&t->status), t->daemon, t->attached};
    if (name && cap) snprintf(name, cap, "%s", t->name);
  }
  pthread_mutex_unlock(&vm->thread_lock);
  return t ? 0 : MVM_DBG_ENOTHREAD;
}

int mvm_dbg_groups(mvm_vm *vm, int (*fn)(void *arg, uint64_t group, uint64_t parent, const char *name),
                   void *arg) {
  int rc = fn(arg, vm->group_system, 0, "system");
  return rc ? rc : fn(arg, vm->group_main, vm->group_system, "main");
}

int mvm_dbg_suspend(mvm_vm *vm, uint32_t id) {
  int rc = MVM_DBG_ENOTHREAD;
  pthread_mutex_lock(&vm->thread_lock);
  for (int first = 1;; first = 0) {
    mvm_thread *t = find_locked(vm, id);
    if (!t) break;
    rc = 0;
    pthread_mutex_lock(&vm->stw_lock);
    if (first && !atomic_load(&t->susp_req)) {
      atomic_store(&t->susp_req, 1);
      vm->nsusp++;
      mvm_poll_update_locked(vm);
    }
    /* Only a RUNNING interpreter thread still runs bytecode; it parks at its next poll. Every
     * other state is a stop already: leaving it waits for mvm_dbg_resume. */
    if (!t->unsafe || atomic_load(&vm->shutdown)) {
      pthread_mutex_unlock(&vm->stw_lock);
      break;
    }
    /* The thread list lock is dropped while waiting (the target needs it to exit); the thread
     * is looked up again by id afterwards, never touched after it may have been freed. */
    pthread_mutex_unlock(&vm->thread_lock);
    pthread_cond_wait(&vm->stw_cond, &vm->stw_lock);
    pthread_mutex_unlock(&vm->stw_lock);
    pthread_mutex_lock(&vm->thread_lock);
  }
  pthread_mutex_unlock(&vm->thread_lock);
  return rc;
}

int mvm_dbg_resume(mvm_vm *vm, uint32_t id) {
  pthread_mutex_lock(&vm->thread_lock);
  mvm_thread *t = find_locked(vm, id);
  if (t) {
    pthread_mutex_lock(&vm->stw_lock);
    if (atomic_load(&t->susp_req)) {
      atomic_store(&t->susp_req, 0);
      vm->nsusp--;
      mvm_poll_update_locked(vm);
      pthread_cond_broadcast(&vm->resume_cond);
    }
    pthread_mutex_unlock(&vm->stw_lock);
  }
  pthread_mutex_unlock(&vm->thread_lock);
  return t ? 0 : MVM_DBG_ENOTHREAD;
}

void mvm_dbg_parking(mvm_vm *vm, int parked) {
  mvm_thread *t = mvm_thread_self();
  if (!t || t->vm != vm) return;
  if (parked) {
    t->park_prev = (mvm_status)atomic_load(&t->status);
    mvm_set_status(t, MVM_TS_SUSPENDED);
  } else {
    mvm_set_status(t, t->park_prev);
  }
}

/* ---- Frames. The thread runs no bytecode (the caller made sure); the thread list lock keeps
 * it from being freed, its stack lock from a push or pop in progress. */

typedef struct frame_ref {
  mvm_thread *t;
  const mvm_frame *f;
} frame_ref;

static int lock_frame(mvm_vm *vm, uint32_t id, int32_t depth, frame_ref *out) {
  pthread_mutex_lock(&vm->thread_lock);
  mvm_thread *t = find_locked(vm, id);
  if (!t) {
    pthread_mutex_unlock(&vm->thread_lock);
    return MVM_DBG_ENOTHREAD;
  }
  pthread_mutex_lock(&t->stack_lock);
  if (depth < 0 || (uint32_t)depth >= t->depth) {
    pthread_mutex_unlock(&t->stack_lock);
    pthread_mutex_unlock(&vm->thread_lock);
    return MVM_DBG_ENOFRAME;
  }
  out->t = t;
  out->f = &t->frames[t->depth - 1 - (uint32_t)depth];
  return 0;
}

static void unlock_frame(mvm_vm *vm, frame_ref *r) {
  pthread_mutex_unlock(&r->t->stack_lock);
  pthread_mutex_unlock(&vm->thread_lock);
}

uint32_t mvm_dbg_self_frames(mvm_vm *vm, mvm_loc *out, uint32_t max) {
  (void)vm;
  mvm_thread *t = mvm_thread_self();
  if (!t || !t->interp) return 0;
  uint32_t n = 0;
  for (uint32_t i = t->depth; i > 0 && n < max; i--) {
    const mvm_frame *f = &t->frames[i - 1];
    out[n++] = mvm_loc_of(f->m, atomic_load_explicit(&f->pc, memory_order_relaxed));
  }
  return n;
}

int mvm_dbg_frame_count(mvm_vm *vm, uint32_t id, int32_t *out) {
  pthread_mutex_lock(&vm->thread_lock);
  mvm_thread *t = find_locked(vm, id);
  if (t) {
    pthread_mutex_lock(&t->stack_lock);
    *out = (int32_t)t->depth;
    pthread_mutex_unlock(&t->stack_lock);
  }
  pthread_mutex_unlock(&vm->thread_lock);
  return t ? 0 : MVM_DBG_ENOTHREAD;
}

int mvm_dbg_frame(mvm_vm *vm, uint32_t id, int32_t depth, mvm_loc *out) {
  frame_ref r;
  int rc = lock_frame(vm, id, depth, &r);
  if (rc) return rc;
  uint32_t pc = atomic_load_explicit(&r.f->pc, memory_order_relaxed);
  *out = mvm_loc_of(r.f->m, pc < r.f->m->ncode ? pc : r.f->m->ncode - 1);
  unlock_frame(vm, &r);
  return 0;
}

int mvm_dbg_get_local(mvm_vm *vm, uint32_t id, int32_t depth, int32_t slot, char tag, mvm_value *out) {
  frame_ref r;
  int rc = lock_frame(vm, id, depth, &r);
  if (rc) return rc;
  if (slot < 0 || slot >= r.f->m->nregs) {
    rc = MVM_DBG_ESLOT;
  } else {
    int64_t raw = r.t->regs[r.f->base + (uint32_t)slot];
    int is_ref = r.t->tags[r.f->base + (uint32_t)slot] == MVM_REFTAG;
    /* A number asked for as an object is a mismatch, except 0: the null a const leaves. */
    if (is_ref_tag(tag) ? (!is_ref && raw) : is_ref) rc = MVM_DBG_ETYPE;
    else if (!strchr("ZBCSIJFDL[stgcl", tag) || !tag) rc = MVM_DBG_ETYPE;
    else *out = mvm_dbg_value_of(is_ref_tag(tag) ? 'L' : tag, raw);
  }
  unlock_frame(vm, &r);
  return rc;
}

int mvm_dbg_set_local(mvm_vm *vm, uint32_t id, int32_t depth, int32_t slot, const mvm_value *v) {
  frame_ref r;
  int rc = lock_frame(vm, id, depth, &r);
  if (rc) return rc;
  if (slot < 0 || slot >= r.f->m->nregs) {
    rc = MVM_DBG_ESLOT;
  } else if (!strchr("ZBCSIJFDL[stgcl", v->tag) || !v->tag) {
    rc = MVM_DBG_ETYPE;
  } else if (is_ref_tag(v->tag) && v->u.i && !block_of(vm, (uint64_t)v->u.i)) {
    rc = MVM_DBG_ENOOBJECT;
  } else {
    uint32_t k = r.f->base + (uint32_t)slot;
    int ref = is_ref_tag(v->tag);
    r.t->regs[k] = ref ? (int64_t)(uint32_t)v->u.i : raw_of(v->tag, v);
    r.t->tags[k] = ref ? MVM_REFTAG : MVM_PRIM;
  }
  unlock_frame(vm, &r);
  return rc;
}

/* ---- Breakpoints */

static mvm_method *method_at(mvm_vm *vm, const mvm_loc *loc) {
  mvm_method *m;
  if (method_of(vm, loc->cls, loc->method, &m) || loc->pc >= m->ncode) return NULL;
  return m;
}

int mvm_dbg_set_breakpoint(mvm_vm *vm, const mvm_loc *loc) {
  mvm_method *m = method_at(vm, loc);
  if (!m) return MVM_DBG_ELOCATION;
  pthread_mutex_lock(&vm->bp_lock);
  mvm_bp *b = vm->bps;
  while (b && !(b->m == m && b->pc == loc->pc)) b = b->next;
  if (!b && (b = mvm_ncalloc(vm, 1, sizeof *b)) != NULL) {
    *b = (mvm_bp){m, loc->pc, m->code[loc->pc].op, vm->bps};
    vm->bps = b;
    __atomic_store_n(&m->code[loc->pc].op, (uint8_t)OP_BREAKPOINT, __ATOMIC_RELEASE);
  }
  pthread_mutex_unlock(&vm->bp_lock);
  return b ? 0 : MVM_DBG_ENOMEM;
}

int mvm_dbg_clear_breakpoint(mvm_vm *vm, const mvm_loc *loc) {
  mvm_method *m = method_at(vm, loc);
  if (!m) return MVM_DBG_ELOCATION;
  pthread_mutex_lock(&vm->bp_lock);
  for (mvm_bp **pp = &vm->bps; *pp; pp = &(*pp)->next)
    if ((*pp)->m == m && (*pp)->pc == loc->pc) {
      mvm_bp *b = *pp;
      __atomic_store_n(&m->code[loc->pc].op, b->orig, __ATOMIC_RELEASE);
      *pp = b->next;
      mvm_nfree(vm, b);
      break;
    }
  pthread_mutex_unlock(&vm->bp_lock);
  return 0;
}

uint8_t mvm_bp_original(mvm_vm *vm, const mvm_insn *in) {
  pthread_mutex_lock(&vm->bp_lock);
  const mvm_bp *b = vm->bps;
  while (b && &b->m->code[b->pc] != in) b = b->next;
  /* Cleared since the thread read OP_BREAKPOINT: the instruction has its own opcode back. */
  uint8_t op = b ? b->orig : mvm_insn_op(in);
  pthread_mutex_unlock(&vm->bp_lock);
  return op;
}

void mvm_bp_clear_all(mvm_vm *vm) {
  pthread_mutex_lock(&vm->bp_lock);
  while (vm->bps) {
    mvm_bp *b = vm->bps;
    b->m->code[b->pc].op = b->orig;
    vm->bps = b->next;
    mvm_nfree(vm, b);
  }
  pthread_mutex_unlock(&vm->bp_lock);
}

/* ---- Stepping and method events */

int mvm_dbg_set_stepping(mvm_vm *vm, uint32_t id, int on) {
  pthread_mutex_lock(&vm->thread_lock);
  mvm_thread *t = find_locked(vm, id);
  if (t) {
    pthread_mutex_lock(&vm->stw_lock);
    int was = atomic_exchange(&t->stepping, on != 0);
    if (was != (on != 0)) atomic_fetch_add(&vm->nstepping, on ? 1 : -1);
    mvm_poll_update_locked(vm);
    pthread_mutex_unlock(&vm->stw_lock);
  }
  pthread_mutex_unlock(&vm->thread_lock);
  return t ? 0 : MVM_DBG_ENOTHREAD;
}

void mvm_dbg_set_method_events(mvm_vm *vm, int on) {
  pthread_mutex_lock(&vm->stw_lock);
  atomic_store(&vm->method_events, on != 0);
  mvm_poll_update_locked(vm);
  pthread_mutex_unlock(&vm->stw_lock);
}

int mvm_dbg_set_field_watch(mvm_vm *vm, mvm_type t, uint32_t field, unsigned watch) {
  mvm_class *c = class_of_type(vm, t);
  if (!c) return atype_of(vm, t) ? MVM_DBG_ENOFIELD : MVM_DBG_ENOTYPE;
  if (field >= c->nfields) return MVM_DBG_ENOFIELD;
  atomic_store(&c->fields[field].watch, (uint8_t)(watch & (MVM_WATCH_ACCESS | MVM_WATCH_MODIFY)));
  return 0;
}

/* ---- Calls, new objects, interruption (a debugger's ClassType/ObjectReference.InvokeMethod,
 * NewInstance, ArrayType.NewInstance, ThreadReference.Interrupt / Stop). */

int mvm_dbg_new_array(mvm_vm *vm, mvm_type type, int32_t length, uint64_t *out) {
  mvm_atype *a = atype_of(vm, type);
  if (!a) return class_of_type(vm, type) ? MVM_DBG_ENOTARRAY : MVM_DBG_ENOTYPE;
  if (length < 0) return MVM_DBG_EINDEX;
  char elem = a->sig[1] == '[' || a->sig[1] == 'L' ? 'L' : a->sig[1];
  mvm_thread *self = mvm_thread_self();
  mvm_ref r = self && self->interp ? mvm_alloc_array_typed(self, elem, (uint32_t)type + 1, length)
                                   : mvm_alloc_array_vm(vm, elem, (uint32_t)type + 1, length);
  if (!r) return MVM_DBG_ENOMEM;
  if (self) self->pins[MVM_PIN_DBG] = r; /* until the caller holds it, as for new strings */
  *out = r;
  return 0;
}

/* A thread that runs bytecode and has not ended, under thread_lock. */
static mvm_thread *live_locked(mvm_vm *vm, uint32_t id) {
  mvm_thread *t = find_locked(vm, id);
  return t && !t->attached && atomic_load(&t->status) != MVM_TS_ZOMBIE ? t : NULL;
}

int mvm_dbg_interrupt(mvm_vm *vm, uint32_t id) {
  pthread_mutex_lock(&vm->thread_lock);
  mvm_thread *t = live_locked(vm, id);
  if (t) atomic_store(&t->interrupted, 1);
  pthread_mutex_unlock(&vm->thread_lock);
  if (!t) return MVM_DBG_ENOTHREAD;
  mvm_wake_sleepers(vm);
  return 0;
}

int mvm_dbg_stop(mvm_vm *vm, uint32_t id, uint64_t exc) {
  mvm_hdr *h = block_of(vm, exc);
  if (!h) return MVM_DBG_ENOOBJECT;
  if (h->kind != MVM_BLK_OBJECT || !mvm_is_subclass(vm->classes[mvm_deref(vm, h->klass)->aux], vm->throwable_class))
    return MVM_DBG_ENOTYPE;
  pthread_mutex_lock(&vm->thread_lock);
  mvm_thread *t = live_locked(vm, id);
  pthread_mutex_unlock(&vm->thread_lock);
  /* The thread cannot leave the list meanwhile: the caller stopped the world or is the thread. */
  if (!t || !t->interp) return MVM_DBG_ENOTHREAD;
  return mvm_set_async(t, (mvm_ref)exc);
}

/* The first letter of each parameter type of a JNI descriptor, into out (at most cap). */
static int param_letters(const char *sig, char *out, int cap) {
  int n = 0;
  if (!sig || *sig++ != '(') return -1;
  while (*sig && *sig != ')') {
    if (n == cap) return -1;
    out[n++] = *sig == '[' ? 'L' : *sig;
    while (*sig == '[') sig++;
    if (*sig == 'L') {
      sig = strchr(sig, ';');
      if (!sig) return -1;
    }
    sig++;
  }
  return n;
}

/* new Thread() / new Thread(name) for JNI NewObject (an agent's RunAgentThread): an unstarted
 * Thread in group main, named "Thread-N" when no name is given. Runs no bytecode, so any thread
 * may ask (the world is stopped around it when the caller is not an interpreter thread). */
static int new_thread_object(mvm_vm *vm, const mvm_value *args, int nargs, mvm_value *result) {
  static _Atomic int next = 0;
  mvm_thread *self = mvm_thread_self();
  if (nargs > 1 || (nargs == 1 && !is_ref_tag(args[0].tag))) return MVM_DBG_ETYPE;
  mvm_dbg_enter(vm);
  mvm_ref name = nargs == 1 ? (mvm_ref)args[0].u.i : 0;
  int rc = 0;
  if (name && !block_of(vm, name)) rc = MVM_DBG_ENOOBJECT;
  if (!rc && !name) {
    char buf[32];
    int n = snprintf(buf, sizeof buf, "Thread-%d", atomic_fetch_add(&next, 1));
    name = mvm_new_string_vm(vm, buf, (size_t)n);
  }
  /* No collection while the world is stopped (or the interpreter thread allocates without one) */
  mvm_ref o = !rc && name ? mvm_thread_object_new(vm, NULL, name, 0, vm->group_main, 0) : 0;
  if (!rc && !o) rc = MVM_DBG_ENOMEM;
  if (o && self) self->pins[MVM_PIN_DBG] = o; /* until the caller holds it */
  mvm_dbg_leave(vm);
  if (rc) return rc;
  memset(result, 0, sizeof *result);
  result->tag = 'L';
  result->u.i = (int64_t)o;
  return 0;
}

int mvm_dbg_invoke(mvm_vm *vm, uint32_t id, mvm_type type, uint32_t method, uint64_t this_obj, const mvm_value *args,
                   int nargs, int construct, mvm_value *result, uint64_t *exc) {
  mvm_thread *t = mvm_thread_self();
  mvm_method *m;
  int rc = method_of(vm, type, method, &m);
  if (rc) return rc;
  if (construct && m->owner == vm->thread_class && m->instance && !strcmp(m->name, "<init>")) {
    *exc = 0;
    return new_thread_object(vm, args, nargs, result);
  }
  if (!t || t->id != id || !t->interp) return MVM_DBG_ENOTHREAD; /* only the thread runs its calls */
  mvm_class *c = class_of_type(vm, type);
  char letters[256];
  int declared = param_letters(m->sig, letters, (int)sizeof letters);
  if (declared < 0 || declared != m->nparams - (m->instance ? 1 : 0) || nargs != declared) return MVM_DBG_ETYPE;
  if (construct) {
    /* String, Thread, ThreadGroup and Class objects are only made by the VM (they need contents) */
    if (!m->instance || strcmp(m->name, "<init>")) return MVM_DBG_ENOMETHOD;
    if (c == vm->string_class || c == vm->thread_class || c == vm->group_class || c == vm->class_class)
      return MVM_DBG_ENOTYPE;
    if (!(this_obj = mvm_alloc_object(t, c))) return MVM_DBG_ENOMEM;
    t->pins[MVM_PIN_DBG] = (mvm_ref)this_obj;
  } else if (m->instance) {
    mvm_hdr *h = block_of(vm, this_obj);
    if (!h) return MVM_DBG_ENOOBJECT;
    mvm_type ot = type_of_block(vm, h);
    mvm_class *oc = class_of_type(vm, ot);
    if (m->owner != vm->object_class && !(oc && mvm_is_subclass(oc, m->owner))) return MVM_DBG_ETYPE;
  }
  int64_t av[257];
  uint8_t at[257];
  int k = 0;
  if (m->instance) {
    av[k] = (int64_t)this_obj;
    at[k++] = MVM_REFTAG;
  }
  for (int i = 0; i < nargs; i++, k++) {
    int ref = letters[i] == 'L';
    if (ref ? !is_ref_tag(args[i].tag) : args[i].tag != letters[i]) return MVM_DBG_ETYPE;
    if (ref && args[i].u.i && !block_of(vm, (uint64_t)args[i].u.i)) return MVM_DBG_ENOOBJECT;
    av[k] = ref ? args[i].u.i : raw_of(letters[i], &args[i]);
    at[k] = ref ? MVM_REFTAG : MVM_PRIM;
  }
  /* The call runs above the frames of the event that parked the thread: keep what the
   * interrupted instruction and the next poll expect. */
  int64_t ret = t->ret;
  uint8_t ret_tag = t->ret_tag;
  mvm_ref pending = t->pins[MVM_PIN_EXC];
  t->pins[MVM_PIN_EXC] = 0;
  int r = mvm_interp(t, m, av, at, k);
  *exc = 0;
  memset(result, 0, sizeof *result);
  result->tag = 'V';
  if (r == 0 && construct) {
    result->tag = 'L';
    result->u.i = (int64_t)this_obj;
  } else if (r == 0) {
    *result = mvm_dbg_value_of(m->ret, t->ret);
    if (result->tag == 'L' && t->ret_tag != MVM_REFTAG && t->ret) *result = mvm_dbg_value_of('J', t->ret);
    if (result->tag == 'L') t->pins[MVM_PIN_DBG] = (mvm_ref)result->u.i;
  } else if (t->pins[MVM_PIN_EXC]) {
    *exc = t->pins[MVM_PIN_EXC];
    t->pins[MVM_PIN_DBGX] = (mvm_ref)*exc; /* until the caller holds it */
  } else {
    rc = atomic_load(&vm->shutdown) ? MVM_DBG_ENOTHREAD : MVM_DBG_EFAILED; /* a VM error, reported */
  }
  t->ret = ret;
  t->ret_tag = ret_tag;
  t->pins[MVM_PIN_EXC] = pending;
  return rc;
}

/* ---- PopFrames and ForceEarlyReturn */

typedef struct held_in {
  int32_t n;
  int found;
} held_in;

static int monitor_held_in(void *arg, uint64_t obj, int32_t depth) {
  held_in *h = arg;
  (void)obj;
  if (depth < h->n) h->found = 1; /* -1: entered by no frame we know, so maybe one of them */
  return h->found;
}

/* The thread, stopped in the interpreter's poll with no monitor entered by its n innermost
 * frames; under thread_lock and its stack_lock on success. */
static int lock_at_poll(mvm_vm *vm, uint32_t id, int32_t n, mvm_thread **out) {
  held_in h = {n, 0};
  int rc = mvm_dbg_owned_monitors(vm, id, monitor_held_in, &h);
  if (rc) return rc;
  if (h.found) return MVM_DBG_EOPAQUE;
  pthread_mutex_lock(&vm->thread_lock);
  mvm_thread *t = live_locked(vm, id);
  if (!t || !t->interp) {
    pthread_mutex_unlock(&vm->thread_lock);
    return MVM_DBG_ENOTHREAD;
  }
  pthread_mutex_lock(&t->stack_lock);
  rc = !atomic_load(&t->at_poll) || atomic_load(&t->early) ? MVM_DBG_EOPAQUE : 0;
  if (!rc && (n < 1 || (uint32_t)n > t->depth)) rc = MVM_DBG_ENOFRAME;
  if (rc) {
    pthread_mutex_unlock(&t->stack_lock);
    pthread_mutex_unlock(&vm->thread_lock);
    return rc;
  }
  *out = t;
  return 0;
}

int mvm_dbg_pop_frames(mvm_vm *vm, uint32_t id, int32_t n) {
  mvm_thread *t;
  int rc = lock_at_poll(vm, id, n, &t);
  if (rc) return rc;
  if ((uint32_t)n >= t->depth) rc = MVM_DBG_ENOMORE;
  for (uint32_t i = t->depth - (uint32_t)n; !rc && i < t->depth; i++)
    if (t->frames[i].floor) rc = MVM_DBG_EOPAQUE; /* its caller is C: a <clinit>, a call, the entry */
  if (!rc) {
    /* The thread waits in its poll and reloads its top frame when it leaves (frames_moved). */
    t->depth -= (uint32_t)n;
    atomic_store(&t->frames_moved, 1);
  }
  pthread_mutex_unlock(&t->stack_lock);
  pthread_mutex_unlock(&vm->thread_lock);
  return rc;
}

/* Does a value tagged tag fit a method returning ret? */
static int fits_return(char ret, char tag) {
  if (ret == 'V' || ret == 'J' || ret == 'F' || ret == 'D') return tag == ret;
  if (ret == 'L' || ret == '[') return is_ref_tag(tag);
  return strchr("ZBCSI", tag) != NULL && tag != '\0';
}

int mvm_dbg_force_return(mvm_vm *vm, uint32_t id, const mvm_value *v) {
  mvm_thread *t;
  int rc = lock_at_poll(vm, id, 1, &t);
  if (rc) return rc;
  const mvm_frame *top = &t->frames[t->depth - 1];
  int is_ref = is_ref_tag(v->tag);
  if (!fits_return(top->m->ret, v->tag)) rc = MVM_DBG_ETYPE;
  else if (is_ref && v->u.i && !mvm_dbg_ref_in_heap(vm, (uint64_t)v->u.i)) rc = MVM_DBG_ENOOBJECT;
  if (!rc) {
    t->early_val = v->tag == 'V' ? 0 : is_ref ? (int64_t)(uint32_t)v->u.i : raw_of(top->m->ret, v);
    t->early_tag = is_ref ? MVM_REFTAG : MVM_PRIM;
    atomic_store(&t->early, 1);
  }
  pthread_mutex_unlock(&t->stack_lock);
  pthread_mutex_unlock(&vm->thread_lock);
  return rc;
}
