/* SPDX-License-Identifier: Apache-2.0 */
/* minivm's debugger interface: everything a JDWP back-end needs from the core, in minivm's own
 * terms and without libddmc (vm_bridge.c adapts it to ddmc_vm_bridge; the unit tests call it
 * directly).
 *
 * Types. A loaded class is its index in the VM + 1; an array type ("[I", "[LDebug;") is
 * MVM_TYPE_ARRAY | its index in the array-type table. Methods and fields are indexes into their
 * class's tables (fields in declaration order, statics and instance fields together). Objects are
 * minivm references (mvm_ref widened to 64 bits; 0 is null). Threads are VM thread ids.
 *
 * Threads. Reflection (types, fields, methods, lines, locals) reads immutable data and may run on
 * any thread. Functions that touch the heap may run on an interpreter thread (inside its own
 * hook) or on any other thread between mvm_dbg_enter/mvm_dbg_leave, which stop the world: the
 * accesses are then ordered with every interpreter thread's, and the collector waits. Frames and
 * locals are for threads that run no bytecode (suspended, parked, or blocked). */
#ifndef MINIVM_DEBUG_H
#define MINIVM_DEBUG_H

#include <stddef.h>
#include <stdint.h>

#include "minivm.h"

typedef uint64_t mvm_type;
#define MVM_TYPE_ARRAY ((uint64_t)1 << 32)

/* Error codes: each maps to one JDWP error in the bridge. */
enum {
  MVM_DBG_OK = 0,
  MVM_DBG_ENOTHREAD = -1,   /* no such thread (INVALID_THREAD) */
  MVM_DBG_ENOTYPE = -2,     /* INVALID_CLASS */
  MVM_DBG_ENOOBJECT = -3,   /* INVALID_OBJECT */
  MVM_DBG_ENOFRAME = -4,    /* INVALID_FRAMEID / NO_MORE_FRAMES */
  MVM_DBG_ESLOT = -5,       /* INVALID_SLOT */
  MVM_DBG_ETYPE = -6,       /* TYPE_MISMATCH */
  MVM_DBG_EABSENT = -7,     /* ABSENT_INFORMATION */
  MVM_DBG_EINDEX = -8,      /* INVALID_INDEX */
  MVM_DBG_ENOMETHOD = -9,   /* INVALID_METHODID */
  MVM_DBG_ENOFIELD = -10,   /* INVALID_FIELDID */
  MVM_DBG_ELOCATION = -11,  /* INVALID_LOCATION */
  MVM_DBG_ENOMEM = -12,     /* OUT_OF_MEMORY */
  MVM_DBG_ENOTARRAY = -13,  /* INVALID_ARRAY */
  MVM_DBG_ENOTSTRING = -14, /* INVALID_STRING */
  MVM_DBG_EFAILED = -15,    /* a call ended in a VM error (reported on stderr): INTERNAL */
  MVM_DBG_EREADONLY = -16,  /* a write to a slot the VM decodes itself: ILLEGAL_ARGUMENT */
  MVM_DBG_EOPAQUE = -17,    /* a frame the VM cannot pop or return from here: OPAQUE_FRAME */
  MVM_DBG_ENOMORE = -18     /* no frame left to return to: NO_MORE_FRAMES */
};

/* A value as a debugger sees it. tag: Z B C S I J F D (in the union), L for any reference (in
 * i, 0 = null), V for none. Registers and fields hold float and double as IEEE bits. */
typedef struct mvm_value {
  char tag;
  union {
    int64_t i;
    float f;
    double d;
  } u;
} mvm_value;

/* A code position: class, method index, instruction index. */
typedef struct mvm_loc {
  mvm_type cls;
  uint32_t method;
  uint32_t pc;
} mvm_loc;

/* Flags of the location hook. */
#define MVM_DBG_AT_BREAKPOINT 1u   /* pc holds a breakpoint */
#define MVM_DBG_METHOD_ENTRY 2u    /* pc is the first instruction of a call just made */

/* Calls from the core to a debugger back-end. Any member may be NULL. */
typedef struct mvm_dbg_hooks {
  void *ud;
  /* On an interpreter thread, before it executes loc (depth = frame count - 1), when the thread
   * steps, when method events are on and loc starts a call, or when loc holds a breakpoint: one
   * call per instruction with every reason in flags. The thread is RUNNING; it may park inside
   * (mvm_dbg_parking). */
  void (*location)(void *ud, uint32_t thread, const mvm_loc *loc, int32_t depth, unsigned flags);
  /* Method events on: the method at loc (its return instruction) returns ret (tag V: none). */
  void (*method_exit)(void *ud, uint32_t thread, const mvm_loc *loc, int32_t depth, const mvm_value *ret);
  /* Method events on: the frame at loc (where the exception passed through it) is popped by an
   * exception, innermost first, before the unwinding; no method_exit comes for it. */
  void (*method_unwind)(void *ud, uint32_t thread, const mvm_loc *loc, int32_t depth);
  /* Exceptions. Asked once at each throw (the slow path) whether the two calls below are wanted:
   * keep it to one atomic read (the bridge reads ddmc_event_wanted). NULL: they are always wanted. */
  int (*exception_events)(void *ud);
  /* On the throwing thread, before the stack unwinds: loc is where exc is thrown (the throw, the
   * instruction that failed, or the invoke whose callee threw it: the top frame, depth = frame
   * count - 1) and catch_loc the handler that will take it, found by searching up the stack
   * without unwinding, or NULL when nothing does (the thread will die of it). May park. */
  void (*exception)(void *ud, uint32_t thread, const mvm_loc *loc, int32_t depth, uint64_t exc,
                    const mvm_loc *catch_loc);
  /* The stack has unwound to the handler at loc (depth: its frame), which is about to run. */
  void (*exception_catch)(void *ud, uint32_t thread, const mvm_loc *loc, int32_t depth, uint64_t exc);
  /* The thread is about to end; it is still listed (mvm_dbg_thread answers for it). */
  void (*thread_dying)(void *ud, uint32_t thread);
  /* A watched field (mvm_dbg_set_field_watch) of type is about to be read (new_value NULL) or
   * written (new_value) by the instruction at loc, in object obj (0: a static field). The thread
   * is RUNNING; it may park inside. */
  void (*field)(void *ud, uint32_t thread, const mvm_loc *loc, int32_t depth, mvm_type type, uint32_t field,
                uint64_t obj, const mvm_value *new_value);
  /* Class type was prepared at its first use on thread (its superclasses first), before its
   * <clinit> runs. The thread is RUNNING; it may park inside. */
  void (*class_prepare)(void *ud, uint32_t thread, mvm_type type);
  /* The collector, with the world stopped and while marking: calls mark for every reference
   * the back-end holds (the callee marks; *ref is not moved by minivm's collector). */
  void (*gc_roots)(void *ud, void (*mark)(void *arg, uint64_t *ref), void *arg);
  /* Monitor events (monitor.c). monitor_wants(kind) is asked first (one atomic read in the
   * bridge); then monitor reports, on the thread, at loc of its top frame: MVM_MON_CONTENDED_ENTER
   * before it blocks to enter obj's monitor, _ENTERED once it has it, _WAIT before wait() (arg:
   * the timeout in ms, 0 for ever), _WAITED after it owns the monitor again (arg: 1 if it timed
   * out). RUNNING, no VM lock held; it may park inside. */
  int (*monitor_wants)(void *ud, int kind);
  void (*monitor)(void *ud, uint32_t thread, const mvm_loc *loc, int32_t depth, int kind, uint64_t obj, int64_t arg);
} mvm_dbg_hooks;

enum { MVM_MON_CONTENDED_ENTER = 1, MVM_MON_CONTENDED_ENTERED, MVM_MON_WAIT, MVM_MON_WAITED };

/* An agent's thread (JVM TI RunAgentThread): a daemon VM thread for the unstarted Thread object
 * obj that runs no bytecode (never waited for by a stop-the-world), reports its start and end
 * through the usual hooks, and calls run(arg, id) in between. Not joined at exit. Returns 0 and
 * the id in *out, MVM_DBG_ENOOBJECT (obj is not a Thread), MVM_DBG_ENOMEM, MVM_DBG_ENOTHREAD
 * (shutting down). Any thread. */
int mvm_dbg_start_agent_thread(mvm_vm *vm, uint64_t obj, void (*run)(void *arg, uint32_t id), void *arg,
                               uint32_t *out);

/* Installs the hooks. Before any bytecode runs (after loading, before mvm_run_main). */
void mvm_dbg_set_hooks(mvm_vm *vm, const mvm_dbg_hooks *h);

/* ---- Reflection (immutable after load; any thread). */
typedef struct mvm_type_info {
  const char *sig;          /* "LDebug;", "Ljava/lang/String;", "[I" */
  const char *source;       /* ".source" file name; NULL for built-ins and array types */
  int is_array;
  mvm_type super;           /* its superclass (.super; java.lang.Object for arrays); 0 for Object */
  uint32_t nfields, nmethods;
  uint64_t class_obj;       /* the class object in the heap (java.lang.Class); 0 for arrays */
  int initialized;          /* its <clinit> has run (always for arrays and built-ins) */
  int error;                /* its <clinit> threw */
} mvm_type_info;
typedef struct mvm_field_desc {
  const char *name, *sig;
  int is_static;
  int vm_internal; /* the VM's own slot (Thread.tid, Thread.target): readable, not writable */
} mvm_field_desc;
typedef struct mvm_method_desc {
  const char *name, *sig;
  uint32_t ncode;           /* instructions: indexes 0 .. ncode-1 */
  uint16_t nregs, nparams;  /* parameters are the last nparams registers ('this' first) */
  int instance;             /* Object's built-ins and each class's <init>; the rest are static */
} mvm_method_desc;
typedef struct mvm_local_desc {
  uint32_t start, end;      /* visible for start <= pc < end */
  uint16_t reg;             /* the slot a debugger uses is the register number */
  const char *name, *sig;
} mvm_local_desc;

int mvm_dbg_for_each_type(mvm_vm *vm, int (*fn)(void *arg, mvm_type t), void *arg);
int mvm_dbg_type_info(mvm_vm *vm, mvm_type t, mvm_type_info *out);
int mvm_dbg_field(mvm_vm *vm, mvm_type t, uint32_t field, mvm_field_desc *out);
int mvm_dbg_method(mvm_vm *vm, mvm_type t, uint32_t method, mvm_method_desc *out);
/* (pc, line) where the line changes, in pc order. */
int mvm_dbg_lines(mvm_vm *vm, mvm_type t, uint32_t method, int (*fn)(void *arg, uint32_t pc, int32_t line),
                  void *arg);
/* The method's code in minivm's own encoding (README.md, "Bytecodes"): one MVM_DBG_INSN_BYTES
 * record per instruction, in pc order, its opcode the program's even where a breakpoint is set. */
#define MVM_DBG_INSN_BYTES 26
int mvm_dbg_code(mvm_vm *vm, mvm_type t, uint32_t method, int (*fn)(void *arg, const uint8_t *rec), void *arg);
/* MVM_DBG_EABSENT when the method declares no .local. */
int mvm_dbg_locals(mvm_vm *vm, mvm_type t, uint32_t method, int (*fn)(void *arg, const mvm_local_desc *l),
                   void *arg);
/* The type of the entry point's class (the class declaring main), or 0. */
mvm_type mvm_dbg_main_type(mvm_vm *vm);

/* ---- Objects (heap: an interpreter thread, or another thread inside mvm_dbg_enter). Enter stops
 * the world (no-op on an interpreter thread); not nested, not while holding a VM lock. */
void mvm_dbg_enter(mvm_vm *vm);
void mvm_dbg_leave(mvm_vm *vm);
/* Stops the world from any thread but the GC daemon, an interpreter thread too (a JVM TI agent's
 * heap walk inside an event callback): that one counts as stopped (VMWAIT) until the resume.
 * Returns what mvm_dbg_world_resume needs (-1, or the interpreter thread's status before). */
int mvm_dbg_world_stop(mvm_vm *vm);
void mvm_dbg_world_resume(mvm_vm *vm, int prev);
/* Non-zero when ref lies in the heap's range (an object's block or a freed one): a check without
 * the world stopped, for the debugger bridge's release_ref. Thread: any. */
int mvm_dbg_ref_in_heap(mvm_vm *vm, uint64_t ref);
int mvm_dbg_object_type(mvm_vm *vm, uint64_t obj, mvm_type *out);
/* Static field when obj is 0. */
int mvm_dbg_get_field(mvm_vm *vm, uint64_t obj, mvm_type t, uint32_t field, mvm_value *out);
int mvm_dbg_set_field(mvm_vm *vm, uint64_t obj, mvm_type t, uint32_t field, const mvm_value *v);
/* The UTF-8 bytes of a String, borrowed while it lives. */
int mvm_dbg_string(mvm_vm *vm, uint64_t s, const char **p, size_t *n);
/* A new String, kept alive until the next call (the caller pins it meanwhile). */
int mvm_dbg_new_string(mvm_vm *vm, const char *utf8, size_t n, uint64_t *out);
int mvm_dbg_array_length(mvm_vm *vm, uint64_t a, int32_t *out);
int mvm_dbg_array_get(mvm_vm *vm, uint64_t a, int32_t index, mvm_value *out);
int mvm_dbg_array_set(mvm_vm *vm, uint64_t a, int32_t index, const mvm_value *v);

/* ---- Threads. */
typedef struct mvm_dbg_thread {
  uint64_t obj;             /* its java.lang.Thread */
  uint64_t group;           /* its java.lang.ThreadGroup */
  mvm_status status;
  int daemon;
  int internal;             /* attached (the JDWP thread): hidden from a debugger */
} mvm_dbg_thread;
/* name (copied, cut at cap - 1) may be NULL. */
int mvm_dbg_thread_get(mvm_vm *vm, uint32_t id, mvm_dbg_thread *out, char *name, size_t cap);
/* "system" (parent 0), then "main" (parent system). */
int mvm_dbg_groups(mvm_vm *vm, int (*fn)(void *arg, uint64_t group, uint64_t parent, const char *name),
                   void *arg);
/* Stops thread id at its next safepoint and returns once it runs no bytecode: parked there, or
 * blocked (sleep, wait, monitor, native, VM wait, not started), from which it does not return
 * to bytecode until mvm_dbg_resume. Idempotent: one request per thread, not counted. */
int mvm_dbg_suspend(mvm_vm *vm, uint32_t id);
int mvm_dbg_resume(mvm_vm *vm, uint32_t id);
/* The calling thread parks inside a debugger call (1) or leaves it (0): while parked it counts
 * as blocked for the collector; leaving waits while the world is stopped or while it is
 * suspended. */
void mvm_dbg_parking(mvm_vm *vm, int parked);

/* The calling interpreter thread's own frames, innermost first (the pc of an outer frame is its
 * call instruction): at most max into out. No lock: only the owner changes its frames. Returns
 * how many, 0 on a thread outside the interpreter. For an allocation hook's stack. */
uint32_t mvm_dbg_self_frames(mvm_vm *vm, mvm_loc *out, uint32_t max);

/* ---- Frames (depth 0 innermost) and locals (slot = register). */
int mvm_dbg_frame_count(mvm_vm *vm, uint32_t id, int32_t *out);
int mvm_dbg_frame(mvm_vm *vm, uint32_t id, int32_t depth, mvm_loc *out);
/* tag: what the debugger asks for (Z B C S I J F D, or L [ s t g c l for references).
 * ESLOT for a register outside the method, ETYPE when the register holds a number and a
 * reference was asked for (or the opposite). */
int mvm_dbg_get_local(mvm_vm *vm, uint32_t id, int32_t depth, int32_t slot, char tag, mvm_value *out);
int mvm_dbg_set_local(mvm_vm *vm, uint32_t id, int32_t depth, int32_t slot, const mvm_value *v);

/* ---- Execution control. */
/* Patches the instruction at loc (idempotent); ELOCATION for a pc outside the method. */
int mvm_dbg_set_breakpoint(mvm_vm *vm, const mvm_loc *loc);
int mvm_dbg_clear_breakpoint(mvm_vm *vm, const mvm_loc *loc);
int mvm_dbg_set_stepping(mvm_vm *vm, uint32_t id, int on);
void mvm_dbg_set_method_events(mvm_vm *vm, int on);
/* Field watchpoints: while watch holds a kind, every read (ACCESS) or write (MODIFY) of that
 * field goes to the field hook first; an unwatched field costs one byte read per access. */
#define MVM_WATCH_ACCESS 1u
#define MVM_WATCH_MODIFY 2u
int mvm_dbg_set_field_watch(mvm_vm *vm, mvm_type t, uint32_t field, unsigned watch);

/* ---- Monitors (inside mvm_dbg_enter: a snapshot; visitors run without VM locks). */
/* The owner of obj's monitor (0: none) and its entry count, and each thread waiting to enter it
 * or waiting in wait() on it. */
int mvm_dbg_monitor_info(mvm_vm *vm, uint64_t obj, uint32_t *owner, int32_t *count,
                         int (*waiter)(void *arg, uint32_t thread), void *arg);
/* The monitors thread id owns, with the depth (0 innermost) of the frame that entered each. */
int mvm_dbg_owned_monitors(mvm_vm *vm, uint32_t id, int (*fn)(void *arg, uint64_t obj, int32_t depth), void *arg);
/* The monitor thread id waits to enter or waits on (0: none). */
int mvm_dbg_contended_monitor(mvm_vm *vm, uint32_t id, uint64_t *out);

/* ---- Calls and new objects. */
/* A new array of the array type with length default elements, kept alive until the next
 * new array or string (the caller pins it meanwhile). ENOTARRAY for a class. */
int mvm_dbg_new_array(mvm_vm *vm, mvm_type type, int32_t length, uint64_t *out);
/* On thread id itself (ENOTHREAD otherwise), from inside one of its hooks: calls method of type
 * with this_obj (instance methods) and args in declaration order. construct: method is <init>
 * and the call is on a new instance of type, which becomes the result. The result (tag V for
 * void) or the exception nothing in the call caught (*exc) stays alive until the next call.
 * ETYPE for arguments that do not match; EFAILED when the call ended in a VM error. */
int mvm_dbg_invoke(mvm_vm *vm, uint32_t id, mvm_type type, uint32_t method, uint64_t this_obj, const mvm_value *args,
                   int nargs, int construct, mvm_value *result, uint64_t *exc);
/* Thread.interrupt(): a sleeping or waiting thread wakes and throws InterruptedException;
 * otherwise the next sleep or wait does. */
int mvm_dbg_interrupt(mvm_vm *vm, uint32_t id);
/* Thread.stop(exc): the thread throws exc (a Throwable, else ENOTYPE) at its next instruction,
 * woken if it sleeps or waits. With the world stopped (mvm_dbg_enter) or on the thread. */
int mvm_dbg_stop(mvm_vm *vm, uint32_t id, uint64_t exc);
/* PopFrames / ForceEarlyReturn of a thread the debugger holds suspended at an instruction
 * boundary (stopped by a suspension or an event in the interpreter's poll; a thread suspended in
 * sleep, wait, a monitor or a VM call: MVM_DBG_EOPAQUE). pop: the n innermost frames go at once
 * (frame_count and frame show it); when the thread runs again the new top frame re-executes its
 * invoke. MVM_DBG_ENOMORE when no frame would be left, MVM_DBG_EOPAQUE when a popped frame is the
 * first of a nested interpreter call (a <clinit>, a debugger's call, the thread's entry) or entered
 * a monitor still held. force_return: the top frame returns v as soon as the thread runs
 * (MVM_DBG_ETYPE when v does not fit its return type; METHOD_EXIT reported as for a return).
 * Thread: the JDWP thread, inside mvm_dbg_enter. */
int mvm_dbg_pop_frames(mvm_vm *vm, uint32_t id, int32_t n);
int mvm_dbg_force_return(mvm_vm *vm, uint32_t id, const mvm_value *v);

#endif
