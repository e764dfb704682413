/* SPDX-License-Identifier: Apache-2.0 */
/* minivm's bridge, for every client (JDWP debugging, profiling, agents): every ddmc_vm_bridge
 * op, and the VM's debugger hooks turned into ddmc_post_* calls. The VM work itself (reflection,
 * values, suspension, breakpoints) is in the core (debug.c, mvm_debug.h), which builds without
 * libddmc; this file only adapts types and error codes, as Dalvik's Debugger.cpp adapted the VM to vm/jdwp.
 *
 * Names on the wire side: a ddmc_class is an mvm_type (class index + 1, or MVM_TYPE_ARRAY |
 * array-type index), a ddmc_ref an mvm_ref, a thread its VM id. Slots: JDI takes the variables
 * whose slot is below the method's argument count for its arguments, while minivm's parameters
 * are its last registers (Dalvik's convention), so slots are numbered parameters first:
 * parameter register p<k> is slot k, and register v<r> that is not a parameter is slot
 * r + nparams (Dalvik's Debugger.cpp remapped slots for the same reason).
 *
 * Threads: ops run on the JDWP thread (an attached VM thread), the reflective ones also on VM
 * threads inside their own post calls. Ops that touch the heap or a frame bracket themselves
 * with mvm_dbg_enter/leave, so the collector never runs under them. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vm_bridge.h"
#include "ddm_bridge.h"
#include "hprof_bridge.h"
#include "mvm_debug.h"

struct vm_bridge {
  ddmc_vm *d;
  mvm_vm *vm;
  atomic_int dead;              /* VM_DEATH sent */
  atomic_int monitor_events;    /* set_monitor_events: some client wants monitor events */
};

static int jdwp_error(int rc) {
  switch (rc) {
    case MVM_DBG_OK: return 0;
    case MVM_DBG_ENOTHREAD: return DDMC_JDWP_INVALID_THREAD;
    case MVM_DBG_ENOTYPE: return DDMC_JDWP_INVALID_CLASS;
    case MVM_DBG_ENOOBJECT: return DDMC_JDWP_INVALID_OBJECT;
    case MVM_DBG_ENOFRAME: return DDMC_JDWP_INVALID_FRAMEID;
    case MVM_DBG_ESLOT: return DDMC_JDWP_INVALID_SLOT;
    case MVM_DBG_ETYPE: return DDMC_JDWP_TYPE_MISMATCH;
    case MVM_DBG_EABSENT: return DDMC_JDWP_ABSENT_INFORMATION;
    case MVM_DBG_EINDEX: return DDMC_JDWP_INVALID_INDEX;
    case MVM_DBG_ENOMETHOD: return DDMC_JDWP_INVALID_METHODID;
    case MVM_DBG_ENOFIELD: return DDMC_JDWP_INVALID_FIELDID;
    case MVM_DBG_ELOCATION: return DDMC_JDWP_INVALID_LOCATION;
    case MVM_DBG_ENOMEM: return DDMC_JDWP_OUT_OF_MEMORY;
    case MVM_DBG_ENOTARRAY: return DDMC_JDWP_INVALID_ARRAY;
    case MVM_DBG_ENOTSTRING: return DDMC_JDWP_INVALID_STRING;
    case MVM_DBG_EFAILED: return DDMC_JDWP_INTERNAL;
    /* Not INVALID_FIELDID: the ID is good (GetValues reads the field); the write is what is
     * refused, which JDWP's SetValues has no closer code for. */
    case MVM_DBG_EREADONLY: return DDMC_JDWP_ILLEGAL_ARGUMENT;
    case MVM_DBG_EOPAQUE: return DDMC_JDWP_OPAQUE_FRAME;
    case MVM_DBG_ENOMORE: return DDMC_JDWP_NO_MORE_FRAMES;
    default: return DDMC_JDWP_INTERNAL;
  }
}

/* Every op gets this bridge as its vm_data (ddmc_vm_set_bridge's third argument). */
/* For the ops that visit: a visitor's non-zero return stops the walk and is not an error. */
static int visit_rc(int rc) { return rc > 0 ? 0 : jdwp_error(rc); }

static mvm_vm *VM(void *vm_data) { return ((vm_bridge *)vm_data)->vm; }

static ddmc_value to_ddmc(const mvm_value *v) {
  ddmc_value out;
  memset(&out, 0, sizeof out);
  out.tag = v->tag;
  switch (v->tag) {
    case 'F': out.u.f = v->u.f; break;
    case 'D': out.u.d = v->u.d; break;
    case 'J': out.u.j = v->u.i; break;
    case 'L': out.u.l = (ddmc_ref)v->u.i; break;
    case 'V': break;
    default: out.u.i = (int32_t)v->u.i; break;
  }
  return out;
}

static mvm_value from_ddmc(const ddmc_value *v) {
  mvm_value out;
  memset(&out, 0, sizeof out);
  out.tag = v->tag;
  switch (v->tag) {
    case 'F': out.u.f = v->u.f; break;
    case 'D': out.u.d = v->u.d; break;
    case 'J': out.u.i = v->u.j; break;
    case 'Z': case 'B': case 'C': case 'S': case 'I': out.u.i = v->u.i; break;
    default: out.tag = 'L'; out.u.i = (int64_t)v->u.l; break;   /* L s t g c l [ */
  }
  return out;
}

/* ---- Reference types */

typedef struct class_visit {
  ddmc_class_visit_fn fn;
  void *arg;
} class_visit;
static int class_adapter(void *arg, mvm_type t) {
  class_visit *v = arg;
  return v->fn(v->arg, (ddmc_class)t);
}
static int op_for_each_class(void *vm_data, ddmc_class_visit_fn fn, void *arg) {
  class_visit v = {fn, arg};
  return visit_rc(mvm_dbg_for_each_type(VM(vm_data), class_adapter, &v));
}

static int op_class_info(void *vm_data, ddmc_class c, ddmc_class_info *out) {
  mvm_type_info ti;
  int rc = mvm_dbg_type_info(VM(vm_data), c, &ti);
  if (rc) return jdwp_error(rc);
  memset(out, 0, sizeof *out);
  out->signature = ti.sig;
  out->source_file = ti.source;
  out->type_tag = ti.is_array ? DDMC_TYPE_ARRAY : DDMC_TYPE_CLASS;
  /* The debugger sees a class once it is prepared (at its first use); initialised once its
   * <clinit> has run. */
  out->status = DDMC_CLASS_VERIFIED | DDMC_CLASS_PREPARED | (ti.initialized ? DDMC_CLASS_INITIALIZED : 0) |
                (ti.error ? DDMC_CLASS_ERROR : 0);
  out->modifiers = DDMC_ACC_PUBLIC | (ti.is_array ? DDMC_ACC_FINAL | DDMC_ACC_ABSTRACT : 0);
  out->superclass = ti.super;
  out->nfields = ti.nfields;
  out->nmethods = ti.nmethods;
  out->class_object = ti.class_obj;
  return 0;
}

static int op_class_interface(void *vm_data, ddmc_class c, uint32_t index, ddmc_class *out) {
  return DDMC_JDWP_INVALID_INDEX;   /* minivm has no interfaces */
}

static int op_field_info(void *vm_data, ddmc_class c, uint32_t field, ddmc_field_info *out) {
  mvm_field_desc f;
  int rc = mvm_dbg_field(VM(vm_data), c, field, &f);
  if (rc) return jdwp_error(rc);
  /* The VM's own slots say so: private final synthetic, what a debugger shows as not the
   * program's and not to be set. */
  *out = (ddmc_field_info){.name = f.name, .signature = f.sig, .generic = NULL,
                           .modifiers = (f.is_static ? DDMC_ACC_STATIC : 0) |
                                        (f.vm_internal ? DDMC_ACC_PRIVATE | DDMC_ACC_FINAL | DDMC_ACC_SYNTHETIC : 0)};
  return 0;
}

static int op_method_info(void *vm_data, ddmc_class c, uint32_t method, ddmc_method_info *out) {
  mvm_method_desc m;
  int rc = mvm_dbg_method(VM(vm_data), c, method, &m);
  if (rc) return jdwp_error(rc);
  /* A program's methods are static (main public, as Java requires of an entry point); the
   * instance methods are Object's public built-ins and each class's public default <init>. */
  *out = (ddmc_method_info){.name = m.name,
                            .signature = m.sig,
                            .generic = NULL,
                            .modifiers = m.instance ? DDMC_ACC_PUBLIC
                                                    : DDMC_ACC_STATIC | (!strcmp(m.name, "main") ? DDMC_ACC_PUBLIC : 0),
                            .code_start = 0,
                            .code_end = (int64_t)m.ncode - 1,
                            .arg_slots = m.nparams,
                            .max_locals = m.nregs};
  return 0;
}

typedef struct line_visit {
  ddmc_line_visit_fn fn;
  void *arg;
} line_visit;
static int line_adapter(void *arg, uint32_t pc, int32_t line) {
  line_visit *v = arg;
  return v->fn(v->arg, pc, line);
}
static int op_line_table(void *vm_data, ddmc_class c, uint32_t method, ddmc_line_visit_fn fn, void *arg) {
  line_visit v = {fn, arg};
  return visit_rc(mvm_dbg_lines(VM(vm_data), c, method, line_adapter, &v));
}

static int put_insn(void *arg, const uint8_t *rec) {
  return ddmc_buf_put_bytes(arg, rec, MVM_DBG_INSN_BYTES) != 0; /* over the reply's cap: stop */
}
/* Method.Bytecodes: minivm's own encoding (README.md, "Bytecodes"), MVM_DBG_INSN_BYTES per
 * instruction, so instruction i (JDWP's code index i) is at bytes [26 i, 26 i + 26). */
static int op_bytecodes(void *vm_data, ddmc_class c, uint32_t method, ddmc_buf *out) {
  return visit_rc(mvm_dbg_code(VM(vm_data), c, method, put_insn, out));
}

/* Register <-> debugger slot (see the top of the file). */
static int32_t slot_of_reg(uint32_t reg, uint16_t nregs, uint16_t nparams) {
  uint32_t first_param = (uint32_t)(nregs - nparams);
  return (int32_t)(reg >= first_param ? reg - first_param : reg + nparams);
}
static int32_t reg_of_slot(int32_t slot, uint16_t nregs, uint16_t nparams) {
  if (slot < 0 || slot >= nregs) return -1;
  return slot < nparams ? slot + (nregs - nparams) : slot - nparams;
}

typedef struct var_visit {
  ddmc_variable_visit_fn fn;
  void *arg;
  uint16_t nregs, nparams;
} var_visit;
static int var_adapter(void *arg, const mvm_local_desc *l) {
  var_visit *v = arg;
  ddmc_variable var = {.start = l->start,
                       .length = (int32_t)(l->end - l->start),
                       .slot = slot_of_reg(l->reg, v->nregs, v->nparams),
                       .name = l->name,
                       .signature = l->sig,
                       .generic = NULL};
  return v->fn(v->arg, &var);
}
static int op_variable_table(void *vm_data, ddmc_class c, uint32_t method, ddmc_variable_visit_fn fn, void *arg) {
  mvm_method_desc m;
  int rc = mvm_dbg_method(VM(vm_data), c, method, &m);
  if (rc) return jdwp_error(rc);
  var_visit v = {fn, arg, m.nregs, m.nparams};
  return visit_rc(mvm_dbg_locals(VM(vm_data), c, method, var_adapter, &v));
}

/* ---- Objects: each bracketed, so the collector does not run under it. */

static int op_object_class(void *vm_data, ddmc_ref o, ddmc_class *out) {
  mvm_vm *vm = VM(vm_data);
  mvm_type t = 0;
  mvm_dbg_enter(vm);
  int rc = mvm_dbg_object_type(vm, o, &t);
  mvm_dbg_leave(vm);
  *out = t;
  return jdwp_error(rc);
}

static int op_get_field(void *vm_data, ddmc_ref o, ddmc_class c, uint32_t field, ddmc_value *out) {
  mvm_vm *vm = VM(vm_data);
  mvm_value v;
  mvm_dbg_enter(vm);
  int rc = mvm_dbg_get_field(vm, o, c, field, &v);
  mvm_dbg_leave(vm);
  if (!rc) *out = to_ddmc(&v);
  return jdwp_error(rc);
}

static int op_set_field(void *vm_data, ddmc_ref o, ddmc_class c, uint32_t field, const ddmc_value *v) {
  mvm_vm *vm = VM(vm_data);
  mvm_value mv = from_ddmc(v);
  mvm_dbg_enter(vm);
  int rc = mvm_dbg_set_field(vm, o, c, field, &mv);
  mvm_dbg_leave(vm);
  return jdwp_error(rc);
}

static int op_string_value(void *vm_data, ddmc_ref s, ddmc_buf *out) {
  mvm_vm *vm = VM(vm_data);
  const char *p;
  size_t n;
  mvm_dbg_enter(vm);
  int rc = mvm_dbg_string(vm, s, &p, &n);
  if (!rc && ddmc_buf_put_bytes(out, p, n)) rc = MVM_DBG_ENOMEM;
  mvm_dbg_leave(vm);
  return jdwp_error(rc);
}

static int op_create_string(void *vm_data, const char *utf8, size_t n, ddmc_ref *out) {
  mvm_vm *vm = VM(vm_data);
  uint64_t s = 0;
  mvm_dbg_enter(vm);
  int rc = mvm_dbg_new_string(vm, utf8, n, &s);
  mvm_dbg_leave(vm);
  *out = s;
  return jdwp_error(rc);
}

static int op_new_array(void *vm_data, ddmc_class c, int32_t length, ddmc_ref *out) {
  mvm_vm *vm = VM(vm_data);
  uint64_t a = 0;
  mvm_dbg_enter(vm);
  int rc = mvm_dbg_new_array(vm, c, length, &a);
  mvm_dbg_leave(vm);
  *out = a;
  return jdwp_error(rc);
}

static int op_array_length(void *vm_data, ddmc_ref a, int32_t *out) {
  mvm_vm *vm = VM(vm_data);
  mvm_dbg_enter(vm);
  int rc = mvm_dbg_array_length(vm, a, out);
  mvm_dbg_leave(vm);
  return jdwp_error(rc);
}

static int op_array_get(void *vm_data, ddmc_ref a, int32_t first, int32_t n, ddmc_value *out) {
  mvm_vm *vm = VM(vm_data);
  int rc = 0;
  mvm_dbg_enter(vm);
  for (int32_t i = 0; i < n && !rc; i++) {
    mvm_value v;
    if (!(rc = mvm_dbg_array_get(vm, a, first + i, &v))) out[i] = to_ddmc(&v);
  }
  mvm_dbg_leave(vm);
  return jdwp_error(rc);
}

static int op_array_set(void *vm_data, ddmc_ref a, int32_t first, int32_t n, const ddmc_value *v) {
  mvm_vm *vm = VM(vm_data);
  int rc = 0;
  mvm_dbg_enter(vm);
  for (int32_t i = 0; i < n && !rc; i++) {
    mvm_value mv = from_ddmc(&v[i]);
    rc = mvm_dbg_array_set(vm, a, first + i, &mv);
  }
  mvm_dbg_leave(vm);
  return jdwp_error(rc);
}

/* ---- Threads */

static int jdwp_status(mvm_status s) {
  switch (s) {
    case MVM_TS_ZOMBIE: return DDMC_TS_ZOMBIE;
    case MVM_TS_SLEEPING: return DDMC_TS_SLEEPING;
    case MVM_TS_MONITOR: return DDMC_TS_MONITOR;
    case MVM_TS_WAIT: case MVM_TS_VMWAIT: return DDMC_TS_WAIT;
    /* Suspension is the debugger's own count, not a status; native code and a thread not yet
     * running its first instruction read as running, as on a JVM. */
    case MVM_TS_RUNNING: case MVM_TS_SUSPENDED: case MVM_TS_NATIVE:
    case MVM_TS_INITIALIZING: case MVM_TS_STARTING: return DDMC_TS_RUNNING;
  }
  return DDMC_TS_RUNNING;
}

static int op_thread_info(void *vm_data, uint32_t thread, ddmc_thread_detail *out) {
  /* The name is borrowed until the op returns; a VM thread may ask at the same time. */
  static _Thread_local char name[256];
  mvm_dbg_thread t;
  int rc = mvm_dbg_thread_get(VM(vm_data), thread, &t, name, sizeof name);
  if (rc) return jdwp_error(rc);
  *out = (ddmc_thread_detail){.object = t.obj,
                                .group = t.group,
                                .name = name,
                                .status = jdwp_status(t.status),
                                .internal = t.internal || !t.obj};
  return 0;
}

typedef struct group_visit {
  ddmc_group_visit_fn fn;
  void *arg;
} group_visit;
static int group_adapter(void *arg, uint64_t group, uint64_t parent, const char *name) {
  group_visit *v = arg;
  return v->fn(v->arg, group, parent, name);
}
static int op_for_each_group(void *vm_data, ddmc_group_visit_fn fn, void *arg) {
  group_visit v = {fn, arg};
  return visit_rc(mvm_dbg_groups(VM(vm_data), group_adapter, &v));
}

static int op_main_thread(void *vm_data, uint32_t *out) {
  *out = 1;   /* mvm_prepare_main made it before ddmc_vm_start */
  return 0;
}

static int op_suspend_thread(void *vm_data, uint32_t thread) {
  return jdwp_error(mvm_dbg_suspend(VM(vm_data), thread));
}
static int op_resume_thread(void *vm_data, uint32_t thread) {
  return jdwp_error(mvm_dbg_resume(VM(vm_data), thread));
}
static void op_thread_parking(void *vm_data, uint32_t thread, int parked) {
  mvm_dbg_parking(VM(vm_data), parked);   /* always the calling thread */
}

/* ---- Frames */

static int op_frame_count(void *vm_data, uint32_t thread, int32_t *out) {
  return jdwp_error(mvm_dbg_frame_count(VM(vm_data), thread, out));
}

static int op_frame_location(void *vm_data, uint32_t thread, int32_t depth, ddmc_location *out) {
  mvm_loc loc;
  int rc = mvm_dbg_frame(VM(vm_data), thread, depth, &loc);
  if (!rc) *out = (ddmc_location){.cls = loc.cls, .method = loc.method, .index = loc.pc};
  return jdwp_error(rc);
}

static int op_frame_this(void *vm_data, uint32_t thread, int32_t depth, ddmc_ref *out) {
  mvm_vm *vm = VM(vm_data);
  mvm_loc loc;
  mvm_method_desc m;
  mvm_value v = {.tag = 'L'};
  *out = 0;
  int rc = mvm_dbg_frame(vm, thread, depth, &loc);
  if (!rc) rc = mvm_dbg_method(vm, loc.cls, loc.method, &m);
  /* 'this' is the first parameter: register nregs - nparams (0 for a static method) */
  if (!rc && m.instance) rc = mvm_dbg_get_local(vm, thread, depth, m.nregs - m.nparams, 'L', &v);
  if (!rc) *out = (ddmc_ref)v.u.i;
  return jdwp_error(rc);
}

/* The register behind a debugger slot of frame depth. */
static int frame_reg(mvm_vm *vm, uint32_t thread, int32_t depth, int32_t slot, int32_t *reg) {
  mvm_loc loc;
  mvm_method_desc m;
  int rc = mvm_dbg_frame(vm, thread, depth, &loc);
  if (!rc) rc = mvm_dbg_method(vm, loc.cls, loc.method, &m);
  if (rc) return rc;
  *reg = reg_of_slot(slot, m.nregs, m.nparams);
  return *reg < 0 ? MVM_DBG_ESLOT : 0;
}

static int op_get_local(void *vm_data, uint32_t thread, int32_t depth, int32_t slot, char tag, ddmc_value *out) {
  mvm_vm *vm = VM(vm_data);
  int32_t reg;
  mvm_value v;
  int rc = frame_reg(vm, thread, depth, slot, &reg);
  if (rc) return jdwp_error(rc);
  mvm_dbg_enter(vm);
  rc = mvm_dbg_get_local(vm, thread, depth, reg, tag, &v);
  mvm_dbg_leave(vm);
  if (!rc) *out = to_ddmc(&v);
  return jdwp_error(rc);
}

static int op_set_local(void *vm_data, uint32_t thread, int32_t depth, int32_t slot, const ddmc_value *v) {
  mvm_vm *vm = VM(vm_data);
  int32_t reg;
  int rc = frame_reg(vm, thread, depth, slot, &reg);
  if (rc) return jdwp_error(rc);
  mvm_value mv = from_ddmc(v);
  mvm_dbg_enter(vm);
  rc = mvm_dbg_set_local(vm, thread, depth, reg, &mv);
  mvm_dbg_leave(vm);
  return jdwp_error(rc);
}

/* ---- Execution control */

static int op_set_breakpoint(void *vm_data, const ddmc_location *loc) {
  if (loc->index < 0 || loc->index > UINT32_MAX) return DDMC_JDWP_INVALID_LOCATION;
  mvm_loc l = {loc->cls, loc->method, (uint32_t)loc->index};
  return jdwp_error(mvm_dbg_set_breakpoint(VM(vm_data), &l));
}
static int op_clear_breakpoint(void *vm_data, const ddmc_location *loc) {
  if (loc->index < 0 || loc->index > UINT32_MAX) return DDMC_JDWP_INVALID_LOCATION;
  mvm_loc l = {loc->cls, loc->method, (uint32_t)loc->index};
  return jdwp_error(mvm_dbg_clear_breakpoint(VM(vm_data), &l));
}
static int op_set_stepping(void *vm_data, uint32_t thread, int on) {
  return jdwp_error(mvm_dbg_set_stepping(VM(vm_data), thread, on));
}
static int op_set_method_events(void *vm_data, int on) {
  mvm_dbg_set_method_events(VM(vm_data), on);
  return 0;
}

/* Monitors: a snapshot with the world stopped, so the objects named stay alive. */
typedef struct mon_visit {
  ddmc_thread_id_visit_fn waiter;
  void *arg;
} mon_visit;
static int waiter_adapter(void *arg, uint32_t thread) {
  mon_visit *v = arg;
  return v->waiter(v->arg, thread);
}
static int op_monitor_info(void *vm_data, ddmc_ref obj, uint32_t *owner, int32_t *entry_count,
                           ddmc_thread_id_visit_fn waiter, void *arg) {
  mvm_vm *vm = VM(vm_data);
  mon_visit v = {.waiter = waiter, .arg = arg};
  mvm_dbg_enter(vm);
  mvm_type t;
  int rc = mvm_dbg_object_type(vm, obj, &t);
  if (!rc) rc = mvm_dbg_monitor_info(vm, obj, owner, entry_count, waiter_adapter, &v);
  mvm_dbg_leave(vm);
  return jdwp_error(rc);
}
/* The library's visitor names each object (object_class: a stop of its own), so the monitors are
 * collected with the world stopped and visited after; the thread is suspended, so what it owns
 * stays owned and alive. */
typedef struct owned_list {
  uint64_t obj[256];
  int32_t depth[256];
  int n;
} owned_list;
static int collect_owned(void *arg, uint64_t obj, int32_t depth) {
  owned_list *l = arg;
  l->obj[l->n] = obj;
  l->depth[l->n] = depth;
  return ++l->n == 256;
}
static int op_owned_monitors(void *vm_data, uint32_t thread, ddmc_monitor_visit_fn fn, void *arg) {
  mvm_vm *vm = VM(vm_data);
  owned_list l;
  l.n = 0;
  mvm_dbg_enter(vm);
  int rc = mvm_dbg_owned_monitors(vm, thread, collect_owned, &l);
  mvm_dbg_leave(vm);
  for (int i = 0; !rc && i < l.n; i++)
    if (fn(arg, (ddmc_ref)l.obj[i], l.depth[i])) break;
  return jdwp_error(rc);
}
static int op_contended_monitor(void *vm_data, uint32_t thread, ddmc_ref *out) {
  mvm_vm *vm = VM(vm_data);
  uint64_t o = 0;
  mvm_dbg_enter(vm);
  int rc = mvm_dbg_contended_monitor(vm, thread, &o);
  mvm_dbg_leave(vm);
  *out = (ddmc_ref)o;
  return jdwp_error(rc);
}

static int op_set_field_watch(void *vm_data, ddmc_class c, uint32_t field, unsigned watch) {
  unsigned w = (watch & DDMC_WATCH_ACCESS ? MVM_WATCH_ACCESS : 0) | (watch & DDMC_WATCH_MODIFY ? MVM_WATCH_MODIFY : 0);
  return jdwp_error(mvm_dbg_set_field_watch(VM(vm_data), (mvm_type)c, field, w));
}

/* On the thread itself, which the library unparked for the call (thread_parking 0). */
static int op_invoke(void *vm_data, uint32_t thread, ddmc_class c, uint32_t method, ddmc_ref this_obj,
                     const ddmc_value *args, int32_t nargs, int options, ddmc_value *result, ddmc_ref *exception) {
  mvm_value av[256];
  if (nargs < 0 || nargs > 255) return DDMC_JDWP_ILLEGAL_ARGUMENT;
  for (int32_t i = 0; i < nargs; i++) av[i] = from_ddmc(&args[i]);
  mvm_value rv;
  uint64_t exc = 0;
  int rc = mvm_dbg_invoke(VM(vm_data), thread, c, method, this_obj, av, nargs,
                          (options & DDMC_INVOKE_CONSTRUCT) != 0, &rv, &exc);
  if (rc == 0) {
    *result = to_ddmc(&rv);
    *exception = exc;
  }
  return jdwp_error(rc);
}

static int op_interrupt_thread(void *vm_data, uint32_t thread) {
  return jdwp_error(mvm_dbg_interrupt(VM(vm_data), thread));
}

static int op_stop_thread(void *vm_data, uint32_t thread, ddmc_ref exc) {
  mvm_vm *vm = VM(vm_data);
  mvm_dbg_enter(vm);
  int rc = mvm_dbg_stop(vm, thread, exc);
  mvm_dbg_leave(vm);
  return jdwp_error(rc);
}

/* Drop Frame and Force Return (debug.c: a thread stopped in the interpreter's poll). minivm has
 * no RedefineClasses: README.md says why. */
static int op_pop_frames(void *vm_data, uint32_t thread, int32_t n) {
  mvm_vm *vm = VM(vm_data);
  mvm_dbg_enter(vm);
  int rc = mvm_dbg_pop_frames(vm, thread, n);
  mvm_dbg_leave(vm);
  return jdwp_error(rc);
}

static int op_force_early_return(void *vm_data, uint32_t thread, const ddmc_value *v) {
  mvm_vm *vm = VM(vm_data);
  mvm_value mv = from_ddmc(v);
  if (v->tag == 'V') mv.tag = 'V'; /* a void method's return */
  mvm_dbg_enter(vm);
  int rc = mvm_dbg_force_return(vm, thread, &mv);
  mvm_dbg_leave(vm);
  return jdwp_error(rc);
}

static atomic_long g_names_released, g_names_unknown, g_names_strong;

static void op_exit(void *vm_data, int32_t status) {
  /* VirtualMachine.Exit: as the DDM EXIT chunk (ddm_bridge.c, op_exit). */
  fprintf(stderr, "minivm: debugger names: %ld released, %ld unknown, %ld held strong\n",
          atomic_load(&g_names_released), atomic_load(&g_names_unknown), atomic_load(&g_names_strong));
  fflush(NULL);
  _exit(mvm_exit_status(status));
}

/* ---- names (bridge.h, hold_ref / release_ref). A ddmc_ref is the object itself: there is no
 * table to shrink, but with release_ref the library holds debugger names weakly, as the JDK's
 * agent does: the collector keeps only what a debugger pinned (DisableCollection), and
 * ddmc_gc_sweep (ddm_bridge.c's gc_sweep hook) tells the library what it frees. minivm counts
 * what the library does and prints it at VirtualMachine.Exit (examples/minivm/tests/names.py reads
 * it); a release of something outside the heap is counted as unknown and said on stderr. */
static int op_hold_ref(void *vm_data, ddmc_ref o, int strong) {
  ddmc_class c = 0;
  int rc = op_object_class(vm_data, o, &c); /* INVALID_OBJECT once freed */
  if (rc == 0 && strong) atomic_fetch_add(&g_names_strong, 1);
  return rc;
}

static void op_release_ref(void *vm_data, ddmc_ref o) {
  /* No world stop here (the session may end while the VM exits, each name released in turn):
   * only the check that o is a block of the heap's range. */
  if (!mvm_dbg_ref_in_heap(VM(vm_data), o)) {
    atomic_fetch_add(&g_names_unknown, 1);
    fprintf(stderr, "minivm: release_ref of %#llx, which is no object\n", (unsigned long long)o);
  }
  atomic_fetch_add(&g_names_released, 1);
}

/* ---- VM -> library: the core's debugger hooks */

static void on_location(void *ud, uint32_t thread, const mvm_loc *loc, int32_t depth, unsigned flags) {
  vm_bridge *b = ud;
  ddmc_location l = {.cls = loc->cls, .method = loc->method, .index = loc->pc};
  unsigned f = (flags & MVM_DBG_AT_BREAKPOINT ? DDMC_POST_AT_BREAKPOINT : 0) |
               (flags & MVM_DBG_METHOD_ENTRY ? DDMC_POST_METHOD_ENTRY : 0);
  ddmc_post_location(b->d, thread, &l, depth, 0, f);
}

static void on_method_exit(void *ud, uint32_t thread, const mvm_loc *loc, int32_t depth, const mvm_value *ret) {
  vm_bridge *b = ud;
  ddmc_location l = {.cls = loc->cls, .method = loc->method, .index = loc->pc};
  ddmc_value v = to_ddmc(ret);
  ddmc_post_method_exit(b->d, thread, &l, depth, 0, &v);
}

static void on_method_unwind(void *ud, uint32_t thread, const mvm_loc *loc, int32_t depth) {
  vm_bridge *b = ud;
  ddmc_location l = {.cls = loc->cls, .method = loc->method, .index = loc->pc};
  ddmc_post_method_unwind(b->d, thread, &l, depth, 0);
}

/* Exceptions: the core asks at each throw whether a debugger or an agent wants it
 * (ddmc_event_wanted is an atomic read), then reports the throw with the handler it found up the
 * stack, or none, before unwinding (ddmc_post_exception, which filters by class,
 * superclasses and caught / uncaught), and the handler once the stack has unwound to it
 * (ddmc_post_exception_catch: JVM TI's ExceptionCatch; JDWP has no such event). */
static int on_exception_events(void *ud) {
  vm_bridge *b = ud;
  return ddmc_event_wanted(b->d, DDMC_EV_EXCEPTION) || ddmc_event_wanted(b->d, DDMC_EV_EXCEPTION_CATCH);
}

static void on_exception_catch(void *ud, uint32_t thread, const mvm_loc *loc, int32_t depth, uint64_t exc) {
  vm_bridge *b = ud;
  ddmc_location l = {.cls = loc->cls, .method = loc->method, .index = loc->pc};
  ddmc_post_exception_catch(b->d, thread, &l, depth, 0, exc);
}

static void on_exception(void *ud, uint32_t thread, const mvm_loc *loc, int32_t depth, uint64_t exc,
                         const mvm_loc *catch_loc) {
  vm_bridge *b = ud;
  ddmc_location l = {.cls = loc->cls, .method = loc->method, .index = loc->pc}, c;
  if (catch_loc) c = (ddmc_location){.cls = catch_loc->cls, .method = catch_loc->method, .index = catch_loc->pc};
  ddmc_post_exception(b->d, thread, &l, depth, 0, exc, catch_loc ? &c : NULL);
}

static void on_field(void *ud, uint32_t thread, const mvm_loc *loc, int32_t depth, mvm_type type, uint32_t field,
                     uint64_t obj, const mvm_value *new_value) {
  vm_bridge *b = ud;
  ddmc_location l = {.cls = loc->cls, .method = loc->method, .index = loc->pc};
  if (new_value) {
    ddmc_value v = to_ddmc(new_value);
    ddmc_post_field_modification(b->d, thread, &l, depth, 0, (ddmc_class)type, field, obj, &v);
  } else {
    ddmc_post_field_access(b->d, thread, &l, depth, 0, (ddmc_class)type, field, obj);
  }
}

static void on_class_prepare(void *ud, uint32_t thread, mvm_type type) {
  vm_bridge *b = ud;
  if (ddmc_event_wanted(b->d, DDMC_EV_CLASS_PREPARE)) ddmc_post_class_prepare(b->d, thread, (ddmc_class)type);
}

static void on_thread_dying(void *ud, uint32_t thread) {
  vm_bridge *b = ud;
  ddmc_post_thread_death(b->d, thread);
}

/* ---- threads and monitors for agents and debuggers */

static int op_start_agent_thread(void *vm_data, ddmc_ref thread_obj, int32_t priority,
                                 void (*run)(void *arg, uint32_t thread), void *arg, uint32_t *out_thread) {
  (void)priority; /* minivm threads have no priorities */
  int rc = mvm_dbg_start_agent_thread(VM(vm_data), thread_obj, run, arg, out_thread);
  return rc == MVM_DBG_ENOOBJECT ? DDMC_JDWP_INVALID_THREAD : jdwp_error(rc);
}

/* The library's switch (bridge.h): while it is off, monitor.c's monitor_wants answers no without
 * asking the library; while on, ddmc_event_wanted picks the kinds some client wants. */
static void op_set_monitor_events(void *vm_data, int on) {
  atomic_store(&((vm_bridge *)vm_data)->monitor_events, on != 0);
}

static int mon_kind(int kind) {
  switch (kind) {
    case MVM_MON_CONTENDED_ENTER: return DDMC_EV_MONITOR_CONTENDED_ENTER;
    case MVM_MON_CONTENDED_ENTERED: return DDMC_EV_MONITOR_CONTENDED_ENTERED;
    case MVM_MON_WAIT: return DDMC_EV_MONITOR_WAIT;
    default: return DDMC_EV_MONITOR_WAITED;
  }
}

static int on_monitor_wants(void *ud, int kind) {
  vm_bridge *b = ud;
  return atomic_load(&b->monitor_events) && ddmc_event_wanted(b->d, (ddmc_event_kind)mon_kind(kind));
}

static void on_monitor(void *ud, uint32_t thread, const mvm_loc *loc, int32_t depth, int kind, uint64_t obj,
                       int64_t arg) {
  vm_bridge *b = ud;
  ddmc_location l = {.cls = loc->cls, .method = loc->method, .index = loc->pc};
  switch (kind) {
    case MVM_MON_CONTENDED_ENTER: ddmc_post_monitor_contended_enter(b->d, thread, &l, depth, 0, obj); break;
    case MVM_MON_CONTENDED_ENTERED: ddmc_post_monitor_contended_entered(b->d, thread, &l, depth, 0, obj); break;
    case MVM_MON_WAIT: ddmc_post_monitor_wait(b->d, thread, &l, depth, 0, obj, arg); break;
    default: ddmc_post_monitor_waited(b->d, thread, &l, depth, 0, obj, (int)arg); break;
  }
}

typedef struct root_visit {
  void (*mark)(void *arg, uint64_t *ref);
  void *arg;
} root_visit;
static void root_adapter(void *arg, ddmc_ref *ref) {
  root_visit *v = arg;
  v->mark(v->arg, ref);
}
static void on_gc_roots(void *ud, void (*mark)(void *arg, uint64_t *ref), void *arg) {
  vm_bridge *b = ud;
  root_visit v = {mark, arg};
  ddmc_gc_visit_roots(b->d, root_adapter, &v);
}

void vm_bridge_thread_start(vm_bridge *b, uint32_t id) {
  mvm_dbg_thread t;
  if (!b || id == 1 || mvm_dbg_thread_get(b->vm, id, &t, NULL, 0) || t.internal) return;
  ddmc_post_thread_start(b->d, id);
}

void vm_bridge_vm_death(vm_bridge *b) {
  if (!b || atomic_exchange(&b->dead, 1)) return;
  /* The caller may be an interpreter thread (the exit instruction): it counts as parked while
   * it waits for the packet to go, so neither the collector nor the JDWP thread waits for it. */
  mvm_dbg_parking(b->vm, 1);
  ddmc_post_vm_death(b->d, 2000);
  mvm_dbg_parking(b->vm, 0);
}

vm_bridge *vm_bridge_attach(ddmc_vm *d, mvm_vm *vm) {
  static const ddmc_vm_bridge bridge = {
      .for_each_class = op_for_each_class,
      .class_info = op_class_info,
      .class_interface = op_class_interface,
      .field_info = op_field_info,
      .method_info = op_method_info,
      .line_table = op_line_table,
      .bytecodes = op_bytecodes,
      .variable_table = op_variable_table,
      .object_class = op_object_class,
      .hold_ref = op_hold_ref,
      .release_ref = op_release_ref,
      .get_field = op_get_field,
      .set_field = op_set_field,
      .string_value = op_string_value,
      .create_string = op_create_string,
      .array_length = op_array_length,
      .array_get = op_array_get,
      .array_set = op_array_set,
      .thread_info = op_thread_info,
      .for_each_group = op_for_each_group,
      .main_thread = op_main_thread,
      .suspend_thread = op_suspend_thread,
      .resume_thread = op_resume_thread,
      .thread_parking = op_thread_parking,
      .frame_count = op_frame_count,
      .frame_location = op_frame_location,
      .frame_this = op_frame_this,
      .get_local = op_get_local,
      .set_local = op_set_local,
      .set_breakpoint = op_set_breakpoint,
      .clear_breakpoint = op_clear_breakpoint,
      .set_stepping = op_set_stepping,
      .set_method_events = op_set_method_events,
      .set_field_watch = op_set_field_watch,
      .exit = op_exit,
      .invoke = op_invoke,
      .new_array = op_new_array,
      .interrupt_thread = op_interrupt_thread,
      .stop_thread = op_stop_thread,
      .monitor_info = op_monitor_info,
      .owned_monitors = op_owned_monitors,
      .contended_monitor = op_contended_monitor,
      .start_agent_thread = op_start_agent_thread,
      .set_monitor_events = op_set_monitor_events,
      .pop_frames = op_pop_frames,
      .force_early_return = op_force_early_return,
  };
  vm_bridge *b = calloc(1, sizeof *b);
  if (!b) {
    fprintf(stderr, "minivm: JDWP debugger: out of memory\n");
    return NULL;
  }
  b->d = d;
  b->vm = vm;
  ddmc_vm_bridge all = bridge;
  hprof_bridge_ops(&all, VM); /* the whole heap, for heap dumps: hprof_bridge.c */
  int rc = ddmc_vm_set_bridge(d, &all, b); /* for every client: the debugger, dumps, traces, agents */
  if (rc == 0) rc = ddmc_dbg_enable(d);
  if (rc) {
    fprintf(stderr, "minivm: JDWP debugger: %s\n", ddmc_strerror(rc));
    free(b);
    return NULL;
  }
  mvm_dbg_hooks h = {.ud = b,
                     .location = on_location,
                     .method_exit = on_method_exit,
                     .method_unwind = on_method_unwind,
                     .exception_events = on_exception_events,
                     .exception = on_exception,
                     .exception_catch = on_exception_catch,
                     .thread_dying = on_thread_dying,
                     .class_prepare = on_class_prepare,
                     .field = on_field,
                     .gc_roots = on_gc_roots,
                     .monitor_wants = on_monitor_wants,
                     .monitor = on_monitor};
  mvm_dbg_set_hooks(vm, &h);
  return b;
}
