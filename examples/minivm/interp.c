/* SPDX-License-Identifier: Apache-2.0 */
/* The interpreter: one switch loop per thread, Dalvik-style registers, no C recursion for calls.
 *
 * Registers are 64-bit slots with a parallel tag byte (number or reference) that the collector
 * uses as an exact root map, so every instruction that writes a register also writes its tag,
 * and instructions that need a reference check for one: a number can never be followed as a
 * pointer. Integers are 64-bit. The thread polls for a safepoint before every instruction and
 * publishes its pc in the frame so the debugger can read a stack without stopping it.
 *
 * Exceptions: `throw`, and the VM's own null reference, index, divide-by-zero and cast errors,
 * which become objects of the built-in java.lang classes, look for a handler (.catch) up the
 * stack, report the throw and where it will be caught to the debugger, then unwind to it; one
 * that nothing catches ends the thread with Java's "Exception in thread" trace. Any other error
 * (what a verifier would refuse, out of memory, stack overflow, monitor misuse) prints the
 * message and the stack, and ends the thread. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static void report(mvm_thread *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report(mvm_thread *t, const char *fmt, ...) {
  mvm_vm *vm = t->vm;
  if (atomic_load(&vm->shutdown)) return;   /* unwinding for exit: not an error */
  char buf[4096];
  int n = snprintf(buf, sizeof buf, "minivm: thread \"%s\" (id %u) died: ", t->name, t->id);
  va_list ap;
  va_start(ap, fmt);
  n += vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
  va_end(ap);
  for (uint32_t i = t->depth; i > 0 && n < (int)sizeof buf - 2; i--) {
    const mvm_frame *f = &t->frames[i - 1];
    const mvm_method *m = f->m;
    n += snprintf(buf + n, sizeof buf - (size_t)n, "\nminivm:     at %s.%s(%s:%d)", m->owner->name,
                  m->name, m->owner->source, m->code[atomic_load(&f->pc)].line);
  }
  pthread_mutex_lock(&vm->out_lock);
  fflush(stdout);
  fprintf(stderr, "%.*s\n", (int)sizeof buf, buf);
  pthread_mutex_unlock(&vm->out_lock);
}

static int push_frame(mvm_thread *t, const mvm_method *m, int floor) {
  uint32_t base = 0;
  if (t->depth) {
    const mvm_frame *top = &t->frames[t->depth - 1];
    base = top->base + top->m->nregs;
  }
  if (t->depth == MVM_MAX_FRAMES || base + m->nregs > MVM_MAX_SLOTS) return -1;
  memset(t->regs + base, 0, m->nregs * sizeof *t->regs);
  memset(t->tags + base, MVM_PRIM, m->nregs);
  pthread_mutex_lock(&t->stack_lock);
  mvm_frame *f = &t->frames[t->depth];
  f->m = m;
  f->base = base;
  f->floor = (uint8_t)floor;
  atomic_store_explicit(&f->pc, 0, memory_order_relaxed);
  t->depth++;
  pthread_mutex_unlock(&t->stack_lock);
  return 0;
}

static void pop_frames(mvm_thread *t, uint32_t depth) {
  pthread_mutex_lock(&t->stack_lock);
  t->depth = depth;
  pthread_mutex_unlock(&t->stack_lock);
}

static int is_string(mvm_vm *vm, mvm_ref r) {
  mvm_hdr *h = mvm_deref(vm, r);
  return h->kind == MVM_BLK_OBJECT && h->klass == vm->string_class->obj;
}

/* The UTF-8 bytes of String r. */
static size_t string_bytes(mvm_vm *vm, mvm_ref r, const char **p) {
  mvm_ref v = (mvm_ref)mvm_slots(mvm_deref(vm, r))[0];
  if (!v) {
    *p = "";
    return 0;
  }
  mvm_hdr *a = mvm_deref(vm, v);
  *p = (const char *)(a + 1);
  return a->aux;
}

/* Copies String r into buf as a C string, cut at cap-1 bytes. */
static void string_copy(mvm_vm *vm, mvm_ref r, char *buf, size_t cap) {
  const char *p;
  size_t n = string_bytes(vm, r, &p);
  if (n >= cap) n = cap - 1;
  memcpy(buf, p, n);
  buf[n] = '\0';
}

static const char *elem_name(char e) {
  switch (e) {
    case 'Z': return "boolean"; case 'B': return "byte"; case 'C': return "char";
    case 'S': return "short";   case 'I': return "int";  case 'F': return "float";
    case 'J': return "long";    case 'D': return "double";
    default: return "Object";
  }
}

static void print_value(mvm_thread *t, int64_t v, uint8_t tag, int newline) {
  mvm_vm *vm = t->vm;
  char tmp[160];
  const char *p = tmp;
  size_t n;
  if (tag != MVM_REFTAG) {
    n = (size_t)snprintf(tmp, sizeof tmp, "%" PRId64, v);
  } else if (!v) {
    p = "null";
    n = 4;
  } else if (is_string(vm, (mvm_ref)v)) {
    n = string_bytes(vm, (mvm_ref)v, &p);
  } else {
    mvm_hdr *h = mvm_deref(vm, (mvm_ref)v);
    if (h->kind == MVM_BLK_ARRAY)
      n = (size_t)snprintf(tmp, sizeof tmp, "%s[%u]@%x", elem_name((char)h->elem), h->aux, (unsigned)v);
    else if (h->kind == MVM_BLK_CLASS)
      n = (size_t)snprintf(tmp, sizeof tmp, "class %s", vm->classes[h->aux]->name);
    else
      n = (size_t)snprintf(tmp, sizeof tmp, "%.100s@%x", vm->classes[mvm_deref(vm, h->klass)->aux]->name,
                           (unsigned)v);
  }
  pthread_mutex_lock(&vm->out_lock);
  fwrite(p, 1, n, stdout);
  if (newline) fputc('\n', stdout);
  pthread_mutex_unlock(&vm->out_lock);
}

/* Java's narrowing: what a store into a field or element of this type keeps. */
static int64_t narrow(char type, int64_t v) {
  switch (type) {
    case 'Z': return (uint8_t)v;
    case 'B': return (int8_t)v;
    case 'C': return (uint16_t)v;
    case 'S': return (int16_t)v;
    case 'I': case 'F': return (int32_t)v;
    default: return v;
  }
}

static int64_t load_elem(const mvm_hdr *a, uint32_t i) {
  const void *d = a + 1;
  switch (a->elem) {
    case 'Z': return ((const uint8_t *)d)[i];
    case 'B': return ((const int8_t *)d)[i];
    case 'C': return ((const uint16_t *)d)[i];
    case 'S': return ((const int16_t *)d)[i];
    case 'J': case 'D': return ((const int64_t *)d)[i];
    case 'L': return ((const uint32_t *)d)[i];
    default: return ((const int32_t *)d)[i];
  }
}

static void store_elem(mvm_hdr *a, uint32_t i, int64_t v) {
  void *d = a + 1;
  switch (a->elem) {
    case 'Z': case 'B': ((uint8_t *)d)[i] = (uint8_t)v; break;
    case 'C': case 'S': ((uint16_t *)d)[i] = (uint16_t)v; break;
    case 'J': case 'D': ((int64_t *)d)[i] = v; break;
    default: ((uint32_t *)d)[i] = (uint32_t)v; break;   /* I F L */
  }
}

static uint64_t next_rand(mvm_thread *t) {   /* xorshift64* */
  uint64_t x = t->rng;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  t->rng = x;
  return x * 2685821657736338717ull;
}

static int64_t arith(int op, int64_t x, int64_t y) {
  uint64_t ux = (uint64_t)x, uy = (uint64_t)y;   /* wrap like Java, without C's signed overflow */
  switch (op) {
    case OP_ADD: return (int64_t)(ux + uy);
    case OP_SUB: return (int64_t)(ux - uy);
    case OP_MUL: return (int64_t)(ux * uy);
    case OP_DIV: return (x == INT64_MIN && y == -1) ? x : x / y;
    case OP_REM: return (x == INT64_MIN && y == -1) ? 0 : x % y;
    case OP_AND: return x & y;
    case OP_OR: return x | y;
    case OP_XOR: return x ^ y;
    case OP_SHL: return (int64_t)(ux << (y & 63));
    default: return x >> (y & 63);   /* OP_SHR: arithmetic, as gcc and clang define it */
  }
}

static mvm_class *class_of(mvm_vm *vm, const mvm_hdr *o) { return vm->classes[mvm_deref(vm, o->klass)->aux]; }

/* Java's name of a class, from its signature: "java.lang.ArithmeticException", "Debug", "int[]". */
static const char *class_java_name(const mvm_class *c, char *buf, size_t cap) {
  const char *sig = c->sig;
  size_t n = strlen(sig);
  if (sig[0] == 'L' && n >= 2) {
    sig++;
    n -= 2;
  }
  if (n >= cap) n = cap - 1;
  for (size_t i = 0; i < n; i++) buf[i] = sig[i] == '/' ? '.' : sig[i];
  buf[n] = '\0';
  return buf;
}

/* The Java name of an object's type (arrays by element: "int[]", "Object[]"). */
static const char *java_name(mvm_vm *vm, mvm_ref r, char *buf, size_t cap) {
  mvm_hdr *h = mvm_deref(vm, r);
  if (h->kind == MVM_BLK_OBJECT) return class_java_name(class_of(vm, h), buf, cap);
  if (h->kind == MVM_BLK_CLASS) return class_java_name(vm->class_class, buf, cap);
  snprintf(buf, cap, "%s[]", elem_name((char)h->elem));
  return buf;
}

/* Object.hashCode(): blocks never move, so the reference itself, mixed, is the identity. */
static int32_t identity_hash(mvm_ref r) { return (int32_t)(((uint32_t)r * 0x9E3779B1u) >> 1); }

/* What toString() gives for o when the class does not say otherwise: "Name@hash", or for a
 * Throwable its class and message, as Throwable.toString() does. Strings are themselves. */
static void to_string_of(mvm_vm *vm, mvm_ref o, char *buf, size_t cap) {
  char name[256];
  java_name(vm, o, name, sizeof name);
  mvm_hdr *h = mvm_deref(vm, o);
  if (h->kind == MVM_BLK_OBJECT && mvm_is_subclass(class_of(vm, h), vm->throwable_class)) {
    mvm_ref msg = (mvm_ref)mvm_slots(h)[MVM_THROWABLE_F_MESSAGE];
    char text[256];
    if (msg && is_string(vm, msg)) {
      string_copy(vm, msg, text, sizeof text);
      snprintf(buf, cap, "%s: %s", name, text);
    } else {
      snprintf(buf, cap, "%s", name);
    }
    return;
  }
  snprintf(buf, cap, "%s@%x", name, (unsigned)identity_hash(o));
}

/* instance-of: an object of k or a subclass; every reference is an Object. */
static int instance_of(mvm_vm *vm, mvm_ref r, const mvm_class *k) {
  mvm_hdr *h = mvm_deref(vm, r);
  if (k == vm->object_class) return 1;
  if (h->kind == MVM_BLK_OBJECT) return mvm_is_subclass(class_of(vm, h), k);
  return h->kind == MVM_BLK_CLASS && k == vm->class_class;
}

/* The stack as it is now, into exc's backtrace (MVM_THROWABLE_F_BACKTRACE). exc is pinned: the
 * array's allocation may collect. Without memory for it the trace stays empty. */
static void fill_backtrace(mvm_thread *t, mvm_ref exc) {
  mvm_vm *vm = t->vm;
  t->vm_alloc++;
  mvm_ref arr = mvm_alloc_array(t, 'J', (int32_t)(2 * t->depth));
  t->vm_alloc--;
  if (!arr) return;
  int64_t *e = (int64_t *)(mvm_deref(vm, arr) + 1);
  for (uint32_t i = 0; i < t->depth; i++) {
    const mvm_frame *fr = &t->frames[t->depth - 1 - i];
    e[2 * i] = (int64_t)fr->m->owner->index << 32 | fr->m->index;
    e[2 * i + 1] = atomic_load_explicit(&fr->pc, memory_order_relaxed);
  }
  mvm_slots(mvm_deref(vm, exc))[MVM_THROWABLE_F_BACKTRACE] = arr;
}

/* Where an exception is caught: depth is the frame count once unwound to the handler's frame
 * (0: nothing above floor catches it), pc the handler. */
typedef struct mvm_catch_at {
  uint32_t depth, pc;
  int report;                 /* the debugger wanted this throw (for exception_catch) */
} mvm_catch_at;

/* Searches the handlers of every frame above floor, innermost first, at each frame's pc (the
 * top frame's throwing instruction, the callers' invokes), without unwinding. */
static void find_handler(mvm_thread *t, mvm_ref exc, uint32_t floor, mvm_catch_at *out) {
  mvm_vm *vm = t->vm;
  const mvm_class *c = class_of(vm, mvm_deref(vm, exc));
  *out = (mvm_catch_at){0, 0, 0};
  for (uint32_t d = t->depth; d > floor; d--) {
    const mvm_frame *fr = &t->frames[d - 1];
    uint32_t pc = atomic_load_explicit(&fr->pc, memory_order_relaxed);
    for (uint32_t i = 0; i < fr->m->ncatches; i++) {
      const mvm_catch *k = &fr->m->catches[i];
      if (pc >= k->start && pc < k->end && (!k->type || mvm_is_subclass(c, k->type))) {
        out->depth = d;
        out->pc = k->handler;
        return;
      }
    }
  }
}

void mvm_print_uncaught(mvm_thread *t, mvm_ref exc) {
  mvm_vm *vm = t->vm;
  mvm_hdr *h = mvm_deref(vm, exc);
  int64_t *slots = mvm_slots(h);
  char cname[256];
  class_java_name(class_of(vm, h), cname, sizeof cname);
  mvm_ref msg = (mvm_ref)slots[MVM_THROWABLE_F_MESSAGE];
  const char *p = "";
  size_t n = 0;
  int has_msg = msg && is_string(vm, msg);
  if (has_msg) n = string_bytes(vm, msg, &p);
  pthread_mutex_lock(&vm->out_lock);
  fflush(stdout);
  fprintf(stderr, "Exception in thread \"%s\" %s%s%.*s\n", t->name, cname, has_msg ? ": " : "", (int)n, p);
  mvm_ref bt = (mvm_ref)slots[MVM_THROWABLE_F_BACKTRACE];
  mvm_hdr *a = bt ? mvm_deref(vm, bt) : NULL;
  for (uint32_t i = 0; a && a->kind == MVM_BLK_ARRAY && a->elem == 'J' && i + 1 < a->aux; i += 2) {
    const int64_t *e = (const int64_t *)(a + 1);
    uint32_t ci = (uint32_t)((uint64_t)e[i] >> 32), mi = (uint32_t)e[i], pc = (uint32_t)e[i + 1];
    if (ci >= vm->nclasses || mi >= vm->classes[ci]->nmethods) continue;
    const mvm_method *m = vm->classes[ci]->methods[mi];
    fprintf(stderr, "\tat %s.%s(%s:%d)\n", m->owner->name, m->name, m->owner->source,
            pc < m->ncode ? m->code[pc].line : -1);
  }
  fflush(stderr);
  pthread_mutex_unlock(&vm->out_lock);
}

/* A new exception of class c with a formatted message (a String, pinned while the object is
 * made). 0 after reporting the fatal error when there is no memory for it. */
__attribute__((noinline, cold, format(printf, 3, 4))) static mvm_ref new_exc(mvm_thread *t, mvm_class *c,
                                                                              const char *fmt, ...) {
  mvm_vm *vm = t->vm;
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  t->vm_alloc++; /* the VM raises it: JVM TI's VMObjectAlloc */
  mvm_ref s = mvm_new_string(t, msg, strlen(msg));
  t->pins[MVM_PIN_TMP] = s;
  mvm_ref e = s ? mvm_alloc_object(t, c) : 0;
  t->vm_alloc--;
  if (e) mvm_slots(mvm_deref(vm, e))[MVM_THROWABLE_F_MESSAGE] = s;
  t->pins[MVM_PIN_TMP] = 0;
  if (!e) report(t, "OutOfMemoryError: no memory for a %s (%s)", c->name, msg);
  return e;
}

/* The frames above depth keep, innermost first, each at the instruction the exception passed
 * through (the throw, or the call it came out of), are reported as ended by the exception. */
__attribute__((noinline, cold)) static void report_unwind(mvm_thread *t, uint32_t keep) {
  mvm_vm *vm = t->vm;
  for (uint32_t d = t->depth; d > keep; d--) {
    const mvm_frame *fr = &t->frames[d - 1];
    mvm_loc loc = mvm_loc_of(fr->m, atomic_load_explicit(&fr->pc, memory_order_relaxed));
    vm->dbg.method_unwind(vm->dbg.ud, t->id, &loc, (int32_t)d - 1);
  }
}

/* Throws exc at *pc of the top frame: records where (the first throw only: a rethrow keeps the
 * original trace), finds its handler without unwinding, tells the debugger (throw and catch
 * locations), then unwinds. Returns 0 with the handler's frame on top and *pc its first
 * instruction (the exception pinned for move-exception); -1 when nothing above floor catches it
 * (the frames are popped; on a thread's first frame the trace is printed) or at shutdown. */
__attribute__((noinline, cold)) static int throw_exc(mvm_thread *t, mvm_ref exc, uint32_t floor, uint32_t *pc) {
  mvm_vm *vm = t->vm;
  mvm_frame *f = &t->frames[t->depth - 1];
  mvm_catch_at at;
  t->pins[MVM_PIN_EXC] = exc;
  atomic_store_explicit(&f->pc, *pc, memory_order_relaxed);
  if (!mvm_slots(mvm_deref(vm, exc))[MVM_THROWABLE_F_BACKTRACE]) fill_backtrace(t, exc);
  find_handler(t, exc, floor, &at);
  if (vm->dbg.exception || vm->dbg.exception_catch) {
    int want = !vm->dbg.exception_events || vm->dbg.exception_events(vm->dbg.ud);
    if (want && vm->dbg.exception) {
      mvm_loc loc = mvm_loc_of(f->m, *pc), cloc;
      if (at.depth) cloc = mvm_loc_of(t->frames[at.depth - 1].m, at.pc);
      vm->dbg.exception(vm->dbg.ud, t->id, &loc, (int32_t)t->depth - 1, exc, at.depth ? &cloc : NULL);
    }
    at.report = want;
  }
  /* Method events: every frame the unwinding removes ends by the exception (JVM TI's MethodExit
   * with was_popped_by_exception; a debugger's METHOD_EXIT does not report it). */
  if (atomic_load_explicit(&vm->method_events, memory_order_relaxed) && vm->dbg.method_unwind &&
      !atomic_load(&vm->shutdown))
    report_unwind(t, at.depth ? at.depth : floor);
  if (!at.depth || atomic_load(&vm->shutdown)) {
    /* Nothing catches it: the thread dies of it (or a nested caller gets it, pinned). */
    pop_frames(t, floor);
    t->ret_tag = MVM_PRIM;
    if (!floor) {
      if (at.depth == 0 && !atomic_load(&vm->shutdown)) mvm_print_uncaught(t, exc);
      t->pins[MVM_PIN_EXC] = 0;
    }
    return -1;
  }
  pop_frames(t, at.depth);
  f = &t->frames[at.depth - 1];
  *pc = at.pc;
  atomic_store_explicit(&f->pc, at.pc, memory_order_relaxed);
  if (at.report && vm->dbg.exception_catch) {
    mvm_loc loc = mvm_loc_of(f->m, at.pc);
    vm->dbg.exception_catch(vm->dbg.ud, t->id, &loc, (int32_t)t->depth - 1, t->pins[MVM_PIN_EXC]);
    if (atomic_load(&vm->shutdown)) {
      pop_frames(t, floor);
      t->ret_tag = MVM_PRIM;
      return -1;
    }
  }
  return 0;
}

static int waitdbg(mvm_thread *t) {
  mvm_vm *vm = t->vm;
  mvm_set_status(t, MVM_TS_VMWAIT);
  /* Without a VM bridge there is nobody to wait for, as on a VM without JDWP. */
  if (vm->hooks.wait_for_debugger && !atomic_load(&vm->shutdown)) vm->hooks.wait_for_debugger(vm->hooks.ud);
  mvm_set_status(t, MVM_TS_RUNNING);
  return atomic_load(&vm->shutdown) ? -1 : 0;
}

/* poll_slow's stops, with at_poll up (a debugger may pop frames or force a return meanwhile). */
static int poll_wait(mvm_thread *t, mvm_frame *f, uint32_t pc, const mvm_insn *in, int entered) {
  mvm_vm *vm = t->vm;
  if ((atomic_load(&vm->stw_req) || atomic_load(&t->susp_req)) && mvm_safepoint(t)) return -1;
  if (atomic_load(&vm->shutdown)) return -1;
  if (atomic_load(&t->async_pending)) return 2;   /* a debugger's ThreadReference.Stop */
  if (entered) return 1;
  if (!vm->dbg.location || !atomic_load(&t->stepping)) return 0;
  mvm_loc loc = mvm_loc_of(f->m, pc);
  unsigned flags = mvm_insn_op(in) == OP_BREAKPOINT ? MVM_DBG_AT_BREAKPOINT : 0;
  vm->dbg.location(vm->dbg.ud, t->id, &loc, (int32_t)t->depth - 1, flags);
  if (atomic_load(&vm->shutdown)) return -1;
  return atomic_load(&t->async_pending) ? 2 : 1;   /* stopped while the event held it */
}

/* The slow path of the per-instruction poll (vm->poll is up), so that the interpreter's own
 * path has nothing of the debugger in it: stop for the collector or the debugger, then report the
 * location if this thread steps, gathering a breakpoint at the same instruction into the same
 * report. entered: the call's first instruction was reported already, with its method entry
 * (report_entry). Returns -1 to unwind (shutdown), 2 to throw the exception a debugger left
 * (mvm_take_async), 1 if the location was reported (the instruction then runs without a second
 * report), 3 when a debugger popped frames meanwhile (reload the top frame and run from its pc),
 * 4 when it forced a return of the top frame, else 0. */
__attribute__((noinline, cold)) static int poll_slow(mvm_thread *t, mvm_frame *f, uint32_t pc, const mvm_insn *in,
                                                     int entered) {
  atomic_store_explicit(&f->pc, pc, memory_order_relaxed);   /* a debugger reads the frame */
  atomic_store(&t->at_poll, 1);
  int r = poll_wait(t, f, pc, in, entered);
  atomic_store(&t->at_poll, 0);
  if (r < 0) return r;
  if (atomic_load(&t->early)) return 4;                          /* ForceEarlyReturn */
  if (atomic_exchange(&t->frames_moved, 0)) return 3;             /* PopFrames */
  return r;
}

/* Method events are on: the call just made (the top frame, at its first instruction) is
 * reported here, at the call, not by a poll of every instruction, with a breakpoint on that
 * first instruction in the same report (and the library adds a step that ends there). The
 * frame's registers hold the arguments already. Returns what poll_slow returns for a report. */
__attribute__((noinline, cold)) static int report_entry(mvm_thread *t, mvm_frame *f) {
  mvm_vm *vm = t->vm;
  if (!vm->dbg.location) return 0;
  atomic_store_explicit(&f->pc, 0, memory_order_relaxed);
  if ((atomic_load(&vm->stw_req) || atomic_load(&t->susp_req)) && mvm_safepoint(t)) return -1;
  mvm_loc loc = mvm_loc_of(f->m, 0);
  unsigned flags = MVM_DBG_METHOD_ENTRY | (mvm_insn_op(&f->m->code[0]) == OP_BREAKPOINT ? MVM_DBG_AT_BREAKPOINT : 0);
  atomic_store(&t->at_poll, 1);
  vm->dbg.location(vm->dbg.ud, t->id, &loc, (int32_t)t->depth - 1, flags);
  atomic_store(&t->at_poll, 0);
  if (atomic_load(&vm->shutdown)) return -1;
  if (atomic_load(&t->early)) return 4;
  if (atomic_exchange(&t->frames_moved, 0)) return 3;
  return atomic_load(&t->async_pending) ? 2 : 1;
}

/* Method events are on and the top frame returns (op is its return instruction): report the
 * exit with the value it returns, before the frame goes. */
__attribute__((noinline, cold)) static int report_exit(mvm_thread *t, mvm_frame *f, uint32_t pc, const mvm_insn *in,
                                                       uint8_t op) {
  mvm_vm *vm = t->vm;
  if (!vm->dbg.method_exit) return 0;
  atomic_store_explicit(&f->pc, pc, memory_order_relaxed);
  int64_t *regs = t->regs + f->base;
  mvm_value rv = mvm_dbg_value_of(op == OP_RETURN ? f->m->ret : 'V', op == OP_RETURN ? regs[in->a] : 0);
  if (in == NULL) rv = mvm_dbg_value_of(f->m->ret, t->early_val); /* a forced return (early_return) */
  else if (rv.tag == 'L' && t->tags[f->base + in->a] != MVM_REFTAG && rv.u.i) rv = mvm_dbg_value_of('J', rv.u.i);
  mvm_loc loc = mvm_loc_of(f->m, pc);
  vm->dbg.method_exit(vm->dbg.ud, t->id, &loc, (int32_t)t->depth - 1, &rv);
  return atomic_load(&vm->shutdown) ? -1 : 0;
}

/* ForceEarlyReturn: the top frame returns the debugger's value now, as its return instruction
 * would (with METHOD_EXIT when method events are on). Returns -1 to unwind, else 0. */
__attribute__((noinline, cold)) static int early_return(mvm_thread *t, mvm_frame *f, uint32_t pc) {
  atomic_store(&t->early, 0);
  if (atomic_load_explicit(&t->vm->method_events, memory_order_relaxed) && report_exit(t, f, pc, NULL, OP_RETURN_VOID) < 0)
    return -1;
  t->ret = t->early_val;
  t->ret_tag = t->early_tag;
  pop_frames(t, t->depth - 1);
  return 0;
}

/* First active use of c (not READY): prepare and initialise it above the current frame (the
 * <clinit> runs nested). Returns 0 to go on, 1 to throw t->pins[MVM_PIN_EXC], -1 to unwind. */
__attribute__((noinline, cold)) static int init_class(mvm_thread *t, mvm_class *c) {
  int r = mvm_class_init_slow(t, c);
  if (r == 1) return t->pins[MVM_PIN_EXC] ? 1 : -1;
  if (r == 2) report(t, "NoClassDefFoundError: Could not initialize class %s", c->name);
  return r ? -1 : 0;
}

/* A watched field: report the access or modification to the debugger (which may park the
 * thread) before the instruction runs. Returns 0 to go on, 2 to throw a debugger's exception
 * (ThreadReference.Stop while parked), -1 to unwind. */
__attribute__((noinline, cold)) static int watch_slow(mvm_thread *t, mvm_frame *f, uint32_t pc, const mvm_insn *in,
                                                      uint8_t op, const mvm_field *fl, mvm_ref obj) {
  mvm_vm *vm = t->vm;
  int modify = op == OP_IPUT || op == OP_SPUT;
  if (!vm->dbg.field || !(atomic_load(&fl->watch) & (modify ? MVM_WATCH_MODIFY : MVM_WATCH_ACCESS))) return 0;
  mvm_loc loc = mvm_loc_of(f->m, pc);
  mvm_value nv;
  if (modify) {
    int64_t raw = t->regs[f->base + in->a];
    nv = mvm_dbg_value_of(fl->sig[0], fl->type == 'L' ? raw : narrow(fl->type, raw));
  }
  vm->dbg.field(vm->dbg.ud, t->id, &loc, (int32_t)t->depth - 1, (mvm_type)fl->owner->index + 1,
                (uint32_t)(fl - fl->owner->fields), obj, modify ? &nv : NULL);
  if (atomic_load(&vm->shutdown)) return -1;
  return atomic_load(&t->async_pending) ? 2 : 0;
}

#define FAIL(...)        \
  do {                   \
    report(t, __VA_ARGS__); \
    goto unwind;         \
  } while (0)
/* Throws a new exception of class cls with a formatted message. */
#define THROW(cls, ...)                       \
  do {                                        \
    if (!(exc = new_exc(t, (cls), __VA_ARGS__))) goto unwind; \
    goto throw_obj;                           \
  } while (0)
#define SETP(r, v) (regs[r] = (v), tags[r] = MVM_PRIM)
#define SETR(r, v) (regs[r] = (int64_t)(v), tags[r] = MVM_REFTAG)
#define NUM(r)                                                            \
  do {                                                                    \
    if (tags[r] == MVM_REFTAG) FAIL("VerifyError: v%u holds a reference, not a number", (unsigned)(r)); \
  } while (0)
/* A non-null reference in register r. */
#define OBJ(r)                                                                            \
  do {                                                                                    \
    if (tags[r] != MVM_REFTAG && regs[r]) FAIL("VerifyError: v%u holds a number, not a reference", (unsigned)(r)); \
    if (!regs[r]) THROW(vm->npe_class, "v%u is null", (unsigned)(r));                    \
  } while (0)
#define OOM(bytes)                                                                                 \
  FAIL("OutOfMemoryError: failed to allocate %zu bytes (heap %" PRIu64 "K used of %zuK max)", \
       (size_t)(bytes), vm->heap.allocated_bytes >> 10, vm->heap.max >> 10)
/* Before the first active use of class c. */
#define INIT(c)                                          \
  do {                                                   \
    if (!mvm_class_ready(c)) {                           \
      int ir_ = init_class(t, (c));                      \
      if (ir_ < 0) goto unwind;                          \
      if (ir_ > 0) {                                     \
        exc = t->pins[MVM_PIN_EXC];                      \
        goto throw_obj;                                  \
      }                                                  \
    }                                                    \
  } while (0)
#define LOAD()                         \
  do {                                 \
    f = &t->frames[t->depth - 1];      \
    code = f->m->code;                 \
    regs = t->regs + f->base;          \
    tags = t->tags + f->base;          \
  } while (0)

/* ---- The program's DDM chunk handlers (ddm-* instructions, README.md): the hooks do the work
 * (ddm_bridge.c); here only registers and arrays. Each returns 0, -1 (unwind: shutdown), or 1
 * with a message in err for the thread's FAIL. */

/* A byte[] register's bytes, or NULL for null (*len 0); 1 with err if it is something else. */
static int ddm_bytes(mvm_vm *vm, const int64_t *regs, const uint8_t *tags, uint32_t r, const uint8_t **p,
                     size_t *len, char *err, size_t cap) {
  *p = NULL;
  *len = 0;
  if (!regs[r]) return 0;
  mvm_hdr *a = tags[r] == MVM_REFTAG ? mvm_deref(vm, (mvm_ref)regs[r]) : NULL;
  if (a == NULL || a->kind != MVM_BLK_ARRAY || a->elem != 'B') {
    snprintf(err, cap, "VerifyError: v%u is not a byte[]", (unsigned)r);
    return 1;
  }
  *p = (const uint8_t *)(a + 1);
  *len = a->aux;
  return 0;
}

static int ddm_insn(mvm_thread *t, int op, const mvm_insn *in, int64_t *regs, uint8_t *tags, char *err, size_t cap) {
  mvm_vm *vm = t->vm;
  const mvm_hooks *h = &vm->hooks;
  uint32_t nreg = op == OP_DDM_FAIL ? in->a : op == OP_DDM_ACCEPT ? in->c : op == OP_DDM_REGISTER ? in->b : in->a;
  if (op != OP_DDM_FAIL && tags[nreg] == MVM_REFTAG) {
    snprintf(err, cap, "VerifyError: v%u holds a reference, not a number", (unsigned)nreg);
    return 1;
  }
  const uint8_t *p;
  size_t len;
  switch (op) {
    case OP_DDM_REGISTER:
      SETP(in->a, h->ddm_register ? h->ddm_register(h->ud, (uint32_t)regs[in->b]) : -1);
      return 0;
    case OP_DDM_ACCEPT: {
      uint32_t type = 0;
      uint8_t *data = NULL;
      mvm_set_status(t, MVM_TS_VMWAIT);
      int rc = h->ddm_accept ? h->ddm_accept(h->ud, regs[in->c], &type, &data, &len) : 0;
      mvm_set_status(t, MVM_TS_RUNNING);
      if (rc < 0 || atomic_load(&vm->shutdown)) {
        free(data);
        return -1;
      }
      mvm_ref arr = 0;
      if (rc == 1) {
        arr = len > INT32_MAX ? 0 : mvm_alloc_array_typed(t, 'B', MVM_ATYPE_BYTES, (int32_t)len);
        if (arr) memcpy(mvm_deref(vm, arr) + 1, data, len);
        free(data);
        if (!arr) {
          snprintf(err, cap, "OutOfMemoryError: failed to allocate a byte[%zu] for a DDM request", len);
          if (h->ddm_reply) h->ddm_reply(h->ud, 2, 0, NULL, 0, "the program is out of memory");
          return 1;
        }
      }
      SETP(in->a, rc > 0 ? type : 0);
      SETR(in->b, arr);
      return 0;
    }
    case OP_DDM_REPLY: case OP_DDM_SEND: {
      int rc = ddm_bytes(vm, regs, tags, in->b, &p, &len, err, cap);
      if (rc) return rc;
      if (op == OP_DDM_SEND) {
        if (h->ddm_send) h->ddm_send(h->ud, (uint32_t)regs[in->a], p, len);
      } else if (h->ddm_reply) {
        h->ddm_reply(h->ud, p ? 1 : 0, (uint32_t)regs[in->a], p, len, NULL);
      }
      return 0;
    }
    default: { /* OP_DDM_FAIL */
      char msg[512] = "";
      if (regs[in->a] && (tags[in->a] != MVM_REFTAG || !is_string(vm, (mvm_ref)regs[in->a]))) {
        snprintf(err, cap, "VerifyError: v%u is not a String", (unsigned)in->a);
        return 1;
      }
      if (regs[in->a]) string_copy(vm, (mvm_ref)regs[in->a], msg, sizeof msg);
      if (h->ddm_reply) h->ddm_reply(h->ud, 2, 0, NULL, 0, msg);
      return 0;
    }
  }
}

int mvm_interp(mvm_thread *t, const mvm_method *m, const int64_t *args, const uint8_t *atags,
               int nargs) {
  mvm_vm *vm = t->vm;
  const uint32_t floor = t->depth;
  if (!mvm_class_ready(m->owner)) {
    /* A thread's entry point, main, or a debugger's call: the method's class is used. */
    int r = mvm_class_init_slow(t, m->owner);
    if (r == 2) report(t, "NoClassDefFoundError: Could not initialize class %s", m->owner->name);
    if (r) return -1;   /* 1: the exception is pinned for a caller (or printed at a thread's base) */
  }
  if (push_frame(t, m, 1)) {
    report(t, "StackOverflowError");
    return -1;
  }
  mvm_frame *f;
  const mvm_insn *code;
  int64_t *regs;
  uint8_t *tags;
  LOAD();
  for (int i = 0; i < nargs; i++) {
    regs[m->nregs - nargs + i] = args[i];
    tags[m->nregs - nargs + i] = atags[i];
  }
  t->pins[MVM_PIN_ARG] = 0;   /* the arguments are rooted in registers now */
  uint32_t pc = 0;
  /* report_entry's result for the first instruction of a call just made (0: none): method
   * events are reported at the call and the return, so vm->poll stays down for them. */
  int entered = atomic_load_explicit(&vm->method_events, memory_order_relaxed) ? report_entry(t, f) : 0;
  char name[256];
  const char *msg;
  mvm_ref exc;                        /* the exception being thrown */
  int changed;                        /* frames_changed: 3 popped, 4 an early return */

  const mvm_insn *reported = NULL;   /* a breakpoint poll_slow has reported already */
  mvm_insn bp_copy;                   /* the instruction under a breakpoint, with its own opcode */
  for (;;) {
    /* The one check per instruction: collector, debugger suspension, stepping, method events
     * and shutdown all raise vm->poll. Breakpoints cost nothing here: they are patched in. */
    if (__builtin_expect(entered | atomic_load_explicit(&vm->poll, memory_order_acquire), 0)) {
      int r = entered;
      entered = 0;
      if (r >= 0 && atomic_load_explicit(&vm->poll, memory_order_acquire)) {
        int pr = poll_slow(t, f, pc, &code[pc], r != 0);
        if (r == 0 || pr != 1) r = pr;
      }
      if (r == 3 || r == 4) {
        changed = r;
        goto frames_changed;
      }
      if (r < 0) goto unwind;
      if (r == 2 && (exc = mvm_take_async(t)) != 0) goto throw_obj;
      reported = r == 1 && mvm_insn_op(&code[pc]) == OP_BREAKPOINT ? &code[pc] : NULL;
    }
    const mvm_insn *in = &code[pc];
    atomic_store_explicit(&f->pc, pc, memory_order_relaxed);
  dispatch:;
    const uint8_t op = mvm_insn_op(in);
    switch ((mvm_op)op) {
      case OP_NOP: break;
      case OP_CONST: SETP(in->a, in->lit); break;
      case OP_CONST_STRING: {
        mvm_ref s = mvm_new_string(t, in->ptr, strlen(in->ptr));
        if (!s) OOM(strlen(in->ptr) + 48);
        SETR(in->a, s);
        break;
      }
      case OP_MOVE: regs[in->a] = regs[in->b]; tags[in->a] = tags[in->b]; break;
      case OP_MOVE_RESULT: regs[in->a] = t->ret; tags[in->a] = t->ret_tag; t->ret_tag = MVM_PRIM; break;
      case OP_RETURN: case OP_RETURN_VOID:
        if (atomic_load_explicit(&vm->method_events, memory_order_relaxed) && report_exit(t, f, pc, in, op) < 0)
          goto unwind;
        t->ret = op == OP_RETURN ? regs[in->a] : 0;
        t->ret_tag = op == OP_RETURN ? tags[in->a] : MVM_PRIM;
        pop_frames(t, t->depth - 1);
        if (t->depth == floor) return 0;
        LOAD();
        pc = atomic_load_explicit(&f->pc, memory_order_relaxed) + 1;
        continue;
      case OP_GOTO: pc = (uint32_t)in->lit; continue;
      case OP_IF_EQ: case OP_IF_NE: case OP_IF_LT: case OP_IF_GE: case OP_IF_GT: case OP_IF_LE:
      case OP_IF_EQZ: case OP_IF_NEZ: case OP_IF_LTZ: case OP_IF_GEZ: case OP_IF_GTZ: case OP_IF_LEZ: {
        int zero = op >= OP_IF_EQZ;
        int64_t x = regs[in->a], y = zero ? 0 : regs[in->b];
        int64_t c = x < y ? -1 : x > y;
        int kind = (op - (zero ? OP_IF_EQZ : OP_IF_EQ));   /* eq ne lt ge gt le */
        static const int8_t want[6][3] = {{0, 1, 0}, {1, 0, 1}, {1, 0, 0}, {0, 1, 1}, {0, 0, 1}, {1, 1, 0}};
        if (want[kind][c + 1]) {
          pc = (uint32_t)in->lit;
          continue;
        }
        break;
      }
      case OP_ADD: case OP_SUB: case OP_MUL: case OP_DIV: case OP_REM:
      case OP_AND: case OP_OR: case OP_XOR: case OP_SHL: case OP_SHR:
        NUM(in->b);
        NUM(in->c);
        if ((op == OP_DIV || op == OP_REM) && regs[in->c] == 0) THROW(vm->arith_class, "divide by zero");
        SETP(in->a, arith(op, regs[in->b], regs[in->c]));
        break;
      case OP_ADD_LIT: case OP_SUB_LIT: case OP_MUL_LIT: case OP_DIV_LIT: case OP_REM_LIT:
      case OP_AND_LIT: case OP_OR_LIT: case OP_XOR_LIT: case OP_SHL_LIT: case OP_SHR_LIT:
        NUM(in->b);
        if ((op == OP_DIV_LIT || op == OP_REM_LIT) && in->lit == 0) THROW(vm->arith_class, "divide by zero");
        SETP(in->a, arith(op - OP_ADD_LIT + OP_ADD, regs[in->b], in->lit));
        break;
      case OP_NEG: NUM(in->b); SETP(in->a, (int64_t)(0 - (uint64_t)regs[in->b])); break;
      case OP_CMP:
        NUM(in->b);
        NUM(in->c);
        SETP(in->a, regs[in->b] < regs[in->c] ? -1 : regs[in->b] > regs[in->c]);
        break;
      case OP_RAND:
        NUM(in->b);
        if (regs[in->b] <= 0) FAIL("IllegalArgumentException: rand-int bound %" PRId64 " is not positive", regs[in->b]);
        SETP(in->a, (int64_t)(next_rand(t) % (uint64_t)regs[in->b]));
        break;
      case OP_NEW_INSTANCE: {
        mvm_class *c = in->ptr;
        INIT(c);
        mvm_ref r = mvm_alloc_object(t, c);
        if (!r) OOM(sizeof(mvm_hdr) + 8 * c->ninstance);
        SETR(in->a, r);
        break;
      }
      case OP_NEW_ARRAY: {
        NUM(in->b);
        int64_t len = regs[in->b];
        if (len < 0) FAIL("NegativeArraySizeException: %" PRId64, len);
        size_t bytes = sizeof(mvm_hdr) + (size_t)len * mvm_elem_size((char)in->lit);
        mvm_ref r = len > INT32_MAX ? 0 : mvm_alloc_array_typed(t, (char)in->lit, in->args[0], (int32_t)len);
        if (!r) OOM(bytes);
        SETR(in->a, r);
        break;
      }
      case OP_ARRAY_LENGTH: case OP_AGET: case OP_APUT: {
        uint32_t areg = in->b;
        OBJ(areg);
        mvm_hdr *a = mvm_deref(vm, (mvm_ref)regs[areg]);
        if (a->kind != MVM_BLK_ARRAY) FAIL("VerifyError: v%u is not an array", areg);
        if (op == OP_ARRAY_LENGTH) {
          SETP(in->a, a->aux);
          break;
        }
        NUM(in->c);
        int64_t i = regs[in->c];
        if (i < 0 || i >= a->aux)
          THROW(vm->aioobe_class, "Index %" PRId64 " out of bounds for length %u", i, a->aux);
        if (op == OP_AGET) {
          regs[in->a] = load_elem(a, (uint32_t)i);
          tags[in->a] = a->elem == 'L' ? MVM_REFTAG : MVM_PRIM;
        } else {
          int is_ref = tags[in->a] == MVM_REFTAG;
          if (a->elem == 'L' ? (!is_ref && regs[in->a]) : is_ref)
            FAIL("ArrayStoreException: %s into %s[]", is_ref ? "reference" : "number", elem_name((char)a->elem));
          store_elem(a, (uint32_t)i, regs[in->a]);
        }
        break;
      }
      case OP_IGET: case OP_IPUT: case OP_SGET: case OP_SPUT: {
        mvm_field *fl = in->ptr;
        mvm_hdr *o;
        if (op == OP_IGET || op == OP_IPUT) {
          OBJ(in->b);
          o = mvm_deref(vm, (mvm_ref)regs[in->b]);
          if (o->kind != MVM_BLK_OBJECT || (o->klass != fl->owner->obj && !mvm_is_subclass(class_of(vm, o), fl->owner)))
            THROW(vm->cce_class, "v%u is not a %s (field %s)", in->b, fl->owner->name, fl->name);
        } else {
          INIT(fl->owner);
          o = mvm_deref(vm, fl->owner->obj);
        }
        if (__builtin_expect(atomic_load_explicit(&fl->watch, memory_order_relaxed) != 0, 0)) {
          int wr = watch_slow(t, f, pc, in, op, fl, op == OP_IGET || op == OP_IPUT ? mvm_ref_of(vm, o) : 0);
          if (wr < 0) goto unwind;
          if (wr == 2 && (exc = mvm_take_async(t)) != 0) goto throw_obj;
        }
        int64_t *slot = &mvm_slots(o)[fl->slot];
        if (op == OP_IGET || op == OP_SGET) {
          regs[in->a] = *slot;
          tags[in->a] = fl->type == 'L' ? MVM_REFTAG : MVM_PRIM;
        } else {
          int is_ref = tags[in->a] == MVM_REFTAG;
          if (fl->type == 'L' ? (!is_ref && regs[in->a]) : is_ref)
            FAIL("VerifyError: storing a %s into %s field %s.%s", is_ref ? "reference" : "number",
                 fl->type == 'L' ? "reference" : "numeric", fl->owner->name, fl->name);
          *slot = fl->type == 'L' ? regs[in->a] : narrow(fl->type, regs[in->a]);
        }
        break;
      }
      case OP_INVOKE: {
        const mvm_method *callee = in->ptr;
        INIT(callee->owner);
        int64_t av[5];
        uint8_t at[5];
        for (int i = 0; i < in->nargs; i++) {
          av[i] = regs[in->args[i]];
          at[i] = tags[in->args[i]];
        }
        if (push_frame(t, callee, 0)) FAIL("StackOverflowError: %u frames deep", t->depth);
        LOAD();
        for (int i = 0; i < in->nargs; i++) {
          regs[callee->nregs - in->nargs + i] = av[i];
          tags[callee->nregs - in->nargs + i] = at[i];
        }
        pc = 0;
        if (atomic_load_explicit(&vm->method_events, memory_order_relaxed)) entered = report_entry(t, f);
        continue;
      }
      case OP_PRINT: case OP_PRINTLN:
        print_value(t, regs[in->a], tags[in->a], op == OP_PRINTLN);
        break;
      case OP_START_THREAD: case OP_START_DAEMON: case OP_NEW_THREAD: {
        OBJ(in->b);
        if (!is_string(vm, (mvm_ref)regs[in->b])) FAIL("VerifyError: thread name in v%u is not a String", in->b);
        string_copy(vm, (mvm_ref)regs[in->b], name, sizeof name);
        const mvm_method *target = in->ptr;
        /* A new Thread in this thread's group; the name String is rooted in its register. */
        mvm_ref obj = mvm_thread_object_new(vm, t, (mvm_ref)regs[in->b], op == OP_START_DAEMON, t->group,
                                            ((int64_t)target->owner->index << 32 | target->index) + 1);
        if (!obj) OOM(sizeof(mvm_hdr) + 48);
        if (op == OP_NEW_THREAD) {
          SETR(in->a, obj);
          break;
        }
        int has_arg = in->nargs == 3;
        uint32_t id = mvm_thread_spawn(t, obj, target, has_arg ? regs[in->c] : 0, has_arg ? tags[in->c] : MVM_PRIM);
        if (!id) FAIL("OutOfMemoryError: cannot start thread \"%s\"", name);
        SETP(in->a, id);
        break;
      }
      case OP_THREAD_SET_DAEMON: case OP_THREAD_START: {
        OBJ(in->a);
        mvm_hdr *o = mvm_deref(vm, (mvm_ref)regs[in->a]);
        if (o->kind != MVM_BLK_OBJECT || o->klass != vm->thread_class->obj)
          THROW(vm->cce_class, "v%u is not a Thread", in->a);
        int64_t *tf = mvm_slots(o);
        if (tf[MVM_THREAD_F_TID] || (op == OP_THREAD_START && !tf[MVM_THREAD_F_TARGET]))
          FAIL("IllegalThreadStateException: thread already started");
        if (op == OP_THREAD_SET_DAEMON) {
          NUM(in->b);
          tf[MVM_THREAD_F_DAEMON] = regs[in->b] != 0;
          break;
        }
        /* target is (class << 32 | method) + 1 as new-thread wrote it; checked anyway, since the
         * object's slots are memory other code can reach (JNI, a debugger's bridge). */
        int64_t target = tf[MVM_THREAD_F_TARGET] - 1;
        uint64_t ci = (uint64_t)target >> 32, mi = (uint32_t)target;
        const mvm_method *tm = target >= 0 && ci < vm->nclasses && mi < vm->classes[ci]->nmethods
                                   ? vm->classes[ci]->methods[mi] : NULL;
        if (!tm || tm->instance || tm->nparams != 0 || tm->ncode == 0)
          FAIL("IllegalThreadStateException: the Thread's target (%lld) names no method to run", (long long)target + 1);
        if (!mvm_thread_spawn(t, (mvm_ref)regs[in->a], tm, 0, MVM_PRIM)) FAIL("OutOfMemoryError: cannot start a thread");
        break;
      }
      case OP_JOIN: {
        /* A thread id, or a Thread object (unstarted: returns at once, as Java's join). */
        int64_t id = regs[in->a];
        if (tags[in->a] == MVM_REFTAG) {
          OBJ(in->a);
          mvm_hdr *o = mvm_deref(vm, (mvm_ref)id);
          if (o->kind != MVM_BLK_OBJECT || o->klass != vm->thread_class->obj)
            THROW(vm->cce_class, "v%u is not a Thread", in->a);
          id = mvm_slots(o)[MVM_THREAD_F_TID];
          if (id < 0 || id > UINT32_MAX) id = 0; /* no thread has that id: as unstarted */
        }
        if (id == t->id) FAIL("IllegalThreadStateException: a thread cannot join itself");
        if (id && mvm_thread_join(t, (uint32_t)id)) goto unwind;
        break;
      }
      case OP_CURRENT_THREAD: SETP(in->a, t->id); break;
      case OP_SET_THREAD_NAME: case OP_SET_APP_NAME:
        OBJ(in->a);
        if (!is_string(vm, (mvm_ref)regs[in->a])) FAIL("VerifyError: v%u is not a String", in->a);
        string_copy(vm, (mvm_ref)regs[in->a], name, sizeof name);
        if (op == OP_SET_THREAD_NAME) {
          mvm_thread_rename(t, name);
          /* The Thread object names the same String (the register keeps it alive until here). */
          if (t->obj) mvm_slots(mvm_deref(vm, t->obj))[MVM_THREAD_F_NAME] = regs[in->a];
        } else if (vm->hooks.app_name) {
          vm->hooks.app_name(vm->hooks.ud, name);
        }
        break;
      case OP_SLEEP: case OP_NATIVE:
        NUM(in->a);
        mvm_set_status(t, op == OP_SLEEP ? MVM_TS_SLEEPING : MVM_TS_NATIVE);
        if (mvm_sleep_ms(vm, op == OP_SLEEP ? t : NULL, regs[in->a]) == 1) {
          mvm_set_status(t, MVM_TS_RUNNING);
          THROW(vm->interrupted_class, "sleep interrupted");
        }
        mvm_set_status(t, MVM_TS_RUNNING);
        if (atomic_load(&vm->shutdown)) goto unwind;
        break;
      case OP_MONITOR_ENTER:
        OBJ(in->a);
        if (mvm_monitor_enter(t, (mvm_ref)regs[in->a])) FAIL("OutOfMemoryError: no memory for a monitor");
        break;
      case OP_MONITOR_EXIT: case OP_NOTIFY: case OP_NOTIFY_ALL: case OP_WAIT: {
        OBJ(in->a);
        mvm_ref o = (mvm_ref)regs[in->a];
        int rc;
        msg = NULL;
        if (op == OP_MONITOR_EXIT) {
          rc = mvm_monitor_exit(t, o, &msg);
        } else if (op == OP_WAIT) {
          if (in->nargs == 2) NUM(in->b);
          rc = mvm_monitor_wait(t, o, in->nargs == 2 ? regs[in->b] : 0, &msg);
        } else {
          rc = mvm_monitor_notify(t, o, op == OP_NOTIFY_ALL, &msg);
        }
        if (rc == 1) THROW(vm->interrupted_class, "wait interrupted");
        if (rc) {
          if (msg) FAIL("%s", msg);
          goto unwind;
        }
        break;
      }
      case OP_IDENTITY_HASH:
        OBJ(in->b);
        SETP(in->a, identity_hash((mvm_ref)regs[in->b]));
        break;
      case OP_TO_STRING: {
        OBJ(in->b);
        mvm_ref o = (mvm_ref)regs[in->b];
        if (!is_string(vm, o)) {
          char text[600];
          to_string_of(vm, o, text, sizeof text);
          if (!(o = mvm_new_string(t, text, strlen(text)))) OOM(strlen(text) + 48);
        }
        SETR(in->a, o);
        break;
      }
      case OP_GC:
        if (mvm_gc_request(vm, MVM_GC_EXPLICIT, 1)) goto unwind;
        break;
      case OP_WAIT_FOR_DEBUGGER:
        if (waitdbg(t)) goto unwind;
        break;
      case OP_TIME_MS: SETP(in->a, mvm_now_ms()); break;
      case OP_DDM_REGISTER: case OP_DDM_ACCEPT: case OP_DDM_REPLY: case OP_DDM_FAIL: case OP_DDM_SEND: {
        char err[160];
        int rc = ddm_insn(t, op, in, regs, tags, err, sizeof err);
        if (rc < 0) goto unwind;
        if (rc > 0) FAIL("%s", err);
        break;
      }
      case OP_EXIT:
        NUM(in->a);
        atomic_store(&vm->exit_status, mvm_exit_status(regs[in->a]));
        mvm_request_shutdown(vm);
        goto unwind;
      case OP_THROW:
        if (tags[in->a] != MVM_REFTAG && regs[in->a]) FAIL("VerifyError: v%u holds a number, not a reference", in->a);
        if (!regs[in->a]) THROW(vm->npe_class, "throw with null exception");
        if (!instance_of(vm, (mvm_ref)regs[in->a], vm->throwable_class))
          FAIL("VerifyError: v%u is not a Throwable (%s)", in->a, java_name(vm, (mvm_ref)regs[in->a], name, sizeof name));
        exc = (mvm_ref)regs[in->a];
        goto throw_obj;
      case OP_MOVE_EXCEPTION:
        SETR(in->a, t->pins[MVM_PIN_EXC]);
        t->pins[MVM_PIN_EXC] = 0;
        break;
      case OP_CHECK_CAST: case OP_INSTANCE_OF: {
        uint16_t r = op == OP_CHECK_CAST ? in->a : in->b;
        if (tags[r] != MVM_REFTAG && regs[r]) FAIL("VerifyError: v%u holds a number, not a reference", (unsigned)r);
        int is = regs[r] && instance_of(vm, (mvm_ref)regs[r], in->ptr);
        if (op == OP_INSTANCE_OF) {
          SETP(in->a, is);
        } else if (!is && regs[r]) {
          char to[160];
          THROW(vm->cce_class, "%s cannot be cast to %s", java_name(vm, (mvm_ref)regs[r], name, sizeof name),
                class_java_name(in->ptr, to, sizeof to));
        }
        break;
      }
      case OP_BREAKPOINT: {
        /* Report it unless poll_slow did (with a step or a method entry, in one report), then
         * run the instruction the breakpoint covers, from a copy with its own opcode. */
        if (reported != in && vm->dbg.location) {
          mvm_loc loc = mvm_loc_of(f->m, pc);
          atomic_store(&t->at_poll, 1);
          vm->dbg.location(vm->dbg.ud, t->id, &loc, (int32_t)t->depth - 1, MVM_DBG_AT_BREAKPOINT);
          atomic_store(&t->at_poll, 0);
          if (atomic_load(&vm->shutdown)) goto unwind;
          changed = atomic_load(&t->early) ? 4 : atomic_exchange(&t->frames_moved, 0) ? 3 : 0;
          if (changed) goto frames_changed;
          /* stopped (ThreadReference.Stop) while the breakpoint held it: throw here, as a JVM does */
          if (atomic_load(&t->async_pending) && (exc = mvm_take_async(t)) != 0) goto throw_obj;
        }
        reported = NULL;
        bp_copy = *in;
        bp_copy.op = mvm_bp_original(vm, in);
        in = &bp_copy;
        goto dispatch;
      }
    }
    pc++;
    continue;

  throw_obj:
    /* Out of line (cold), so the interpreter's own path keeps its registers: the handler's frame
     * is the top one again, at pc; or nothing caught it and the frames are gone. */
    if (throw_exc(t, exc, floor, &pc)) return -1;
    LOAD();
    reported = NULL;    continue;

  frames_changed:
    /* A debugger popped frames (3) or forced the top one to return (4) while the thread waited:
     * on from the new top frame, at its invoke again (3) or after it (4). */
    if (changed == 4 && early_return(t, f, pc) < 0) goto unwind;
    if (t->depth == floor) return 0;
    LOAD();
    pc = atomic_load_explicit(&f->pc, memory_order_relaxed) + (changed == 4);
    reported = NULL;
  }
unwind:
  pop_frames(t, floor);
  t->ret_tag = MVM_PRIM;
  return -1;
}
