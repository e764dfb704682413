/* SPDX-License-Identifier: Apache-2.0 */
/* Types shared by the minivm_core files. Not for the bridge or main.c: they use minivm.h.
 *
 * Lock order (outer first): thread_lock -> a thread's stack_lock; thread_lock -> mon_lock -> stw_lock;
 * heap.lock and native_lock are leaves. A thread never becomes RUNNING (which can block for a
 * collection) while holding mon_lock, because the collector takes mon_lock to drop dead monitors. */
#ifndef MINIVM_INTERNAL_H
#define MINIVM_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "minivm.h"
#include "mvm_debug.h"

/* A managed reference: (byte offset in the arena / 8) + 1, so 0 is null and a reference fits the
 * 4-byte slots of an object array, as Dalvik's 32-bit references did. */
typedef uint32_t mvm_ref;

enum { MVM_PRIM = 0, MVM_REFTAG = 1 };         /* register tags: the GC's precise root map */

/* Every block in the arena, free or not, starts with this 16-byte header. */
typedef struct mvm_hdr {
  uint32_t units;     /* block size in 8-byte units, header included */
  uint8_t kind;       /* MVM_BLK_* */
  uint8_t mark;       /* set by the marker, cleared by the sweep */
  uint8_t elem;       /* arrays: element type letter (Z B C S I F J D L) */
  uint8_t pad;
  uint32_t klass;     /* objects: ref of the class object; free blocks: next free block's unit
                         offset (0 ends the list: the list is address-ordered, so 0 never follows) */
  uint32_t aux;       /* arrays: length; class objects: index in vm->classes */
} mvm_hdr;

enum { MVM_BLK_FREE, MVM_BLK_OBJECT, MVM_BLK_CLASS, MVM_BLK_ARRAY };
#define MVM_UNIT 8u
#define MVM_HDR_UNITS (sizeof(mvm_hdr) / MVM_UNIT)

typedef struct mvm_field {
  char *name;
  char type;          /* Z B C S I F J D, or L for any reference */
  char *sig;          /* JNI signature of the declared type: "I", "Ljava/lang/String;", "[I" */
  int is_static;
  uint32_t slot;
  struct mvm_class *owner;      /* 8-byte slot after the header of the instance or the class object */
  _Atomic uint8_t watch;        /* MVM_WATCH_*: a debugger's watchpoints on this field */
  int vm_internal;              /* a slot the VM itself decodes (Thread.tid, Thread.target): shown to
                                   a debugger, never written by one (mvm_dbg_set_field refuses) */
} mvm_field;

typedef struct mvm_insn {
  uint8_t op;         /* patched to OP_BREAKPOINT by the debugger: read with mvm_insn_op() */
  uint8_t nargs;
  uint16_t a, b, c;
  int32_t line;
  int64_t lit;        /* literal, branch target index, or array element type */
  void *ptr;          /* resolved method, field, class or string */
  uint16_t args[5];
} mvm_insn;

/* A named register: visible for start <= pc < end (debug info from .local / .end local). */
typedef struct mvm_local {
  uint32_t start, end;
  uint16_t reg;
  char *name;
  char *sig;          /* JNI signature */
  int line;           /* of the .local, for the assembler's messages */
} mvm_local;

/* A try range of a method: an exception of type (or a subclass; NULL catches everything) thrown
 * while start <= pc < end goes to handler. Searched in declaration order, as smali's. */
typedef struct mvm_catch {
  uint32_t start, end, handler;
  struct mvm_class *type;
} mvm_catch;

typedef struct mvm_method {
  char *name;
  struct mvm_class *owner;
  uint32_t index;     /* in owner->methods */
  uint16_t nregs, nparams;
  mvm_insn *code;
  uint32_t ncode;
  char *sig;          /* JNI descriptor "(I)I": from .signature, or the default (README) */
  char ret;           /* first letter of the return type: V Z B C S I J F D L [ */
  mvm_local *locals;
  uint32_t nlocals;
  mvm_catch *catches;
  uint32_t ncatches;
  int instance;       /* takes 'this' as its first parameter: Object's built-ins and each class's
                       * implicit <init>, called only by a debugger; a program's methods are static */
} mvm_method;

/* An array type the program can create: interned by signature, never freed before the VM. An
 * array block's header holds its index + 1 in `klass` (0 for the elem letter's default). */
typedef struct mvm_atype {
  char *sig;          /* "[I", "[Ljava/lang/String;", "[[I" */
  char elem;          /* element letter as arrays store it (L for any reference) */
} mvm_atype;

typedef struct mvm_class {
  char *name;
  char *sig;          /* JNI signature: "LDebug;", built-ins "Ljava/lang/String;" */
  char *source;       /* file reported in stack frames */
  int builtin;        /* Object, String, Thread, ThreadGroup, Class, the Throwables: no source for a debugger */
  struct mvm_class *super;  /* NULL only for Object */
  char *super_name;   /* .super as written, until the assembler links it */
  mvm_field *fields;  /* declared here (inherited instance fields are the superclass's) */
  uint32_t nfields, ninstance, nstatic;   /* ninstance counts inherited slots too: they come first */
  uint32_t *iref, niref;   /* instance slots holding references: what the marker follows */
  uint32_t *sref, nsref;   /* same for statics */
  mvm_method **methods;
  uint32_t nmethods;
  uint32_t index;
  mvm_ref obj;        /* the class object in the heap (holds the statics) */
  _Atomic int state;  /* MVM_CLS_*: a program's classes start LOADED, the built-ins READY */
  struct mvm_thread *init_thread;   /* INITIALIZING: the thread running <clinit> (class_lock) */
} mvm_class;

/* Life of a class (classinit.c). A debugger sees a class from PREPARED on. */
enum { MVM_CLS_LOADED, MVM_CLS_PREPARED, MVM_CLS_INITIALIZING, MVM_CLS_READY, MVM_CLS_ERROR };

typedef struct mvm_frame {
  const mvm_method *m;
  _Atomic uint32_t pc;     /* written by the owner each instruction, read by thread_stack */
  uint32_t base;           /* first register in the thread's register file */
  uint8_t floor;           /* the first frame of an mvm_interp call: its caller is C (never popped) */
} mvm_frame;

#define MVM_MAX_FRAMES 256
#define MVM_MAX_SLOTS 8192
#define MVM_PINS 7
/* ARG: a start argument; STR: a string's bytes; DBG: the debugger's last new string (on the
 * thread that made it); TMP: an object between two allocations; EXC: the exception being thrown,
 * then caught until move-exception takes it (or, after mvm_interp returned -1 to a caller deeper
 * than the thread's first frame, the exception nothing caught). */
/* ASYNC: an exception a debugger's ThreadReference.Stop left for the thread to throw (set with the
 * world stopped, async_pending up); DBGX: the exception of the debugger's last method call. */
enum { MVM_PIN_ARG = 0, MVM_PIN_STR = 1, MVM_PIN_DBG = 2, MVM_PIN_TMP = 3, MVM_PIN_EXC = 4, MVM_PIN_ASYNC = 5,
       MVM_PIN_DBGX = 6 };
/* Instance slots of the built-in Thread and ThreadGroup objects (vm.c, builtins[]). */
enum { MVM_THREAD_F_NAME, MVM_THREAD_F_PRIORITY, MVM_THREAD_F_DAEMON, MVM_THREAD_F_GROUP, MVM_THREAD_F_TID,
       MVM_THREAD_F_TARGET };
enum { MVM_GROUP_F_NAME, MVM_GROUP_F_PARENT, MVM_GROUP_F_MAXPRI };
/* Instance slots of java.lang.Throwable (every exception class inherits them first): the message
 * String, and the stack where it was first thrown, a long[] of two per frame, innermost first:
 * (class index << 32 | method index), pc. */
enum { MVM_THROWABLE_F_MESSAGE, MVM_THROWABLE_F_BACKTRACE };
/* Array types every VM has (index + 1 in vm->atypes, as array headers store them). */
enum { MVM_ATYPE_BYTES = 1, MVM_ATYPE_STRINGS = 2 };

struct mvm_thread {
  mvm_vm *vm;
  uint32_t id;
  _Atomic pid_t tid;
  char *name;                 /* guarded by vm->thread_lock */
  int daemon;
  int interp;                 /* runs bytecode: counts for stop-the-world */
  int attached;               /* mvm_thread_attach (the JDWP thread): internal to a debugger */
  int vm_alloc;               /* >0: the VM allocates for itself (an exception it raises, a string it
                                 makes), not the program's bytecode: the allocation hook says so */
  int started;                /* past its thread-start hook; guarded by vm->thread_lock */
  _Atomic int status;
  int unsafe;                 /* counted in vm->running; guarded by vm->stw_lock */
  _Atomic int susp_req;       /* the debugger suspended it: no bytecode until resumed (set under stw_lock) */
  mvm_status park_prev;       /* status before a debugger event parked it (owner only) */
  _Atomic int stepping;       /* report every instruction to the debugger (dbg hooks) */
  _Atomic int interrupted;    /* Thread.interrupt() (a debugger's): sleep and wait throw InterruptedException */
  _Atomic int async_pending;  /* pins[MVM_PIN_ASYNC] holds an exception to throw at the next poll */
  /* PopFrames / ForceEarlyReturn (debug.c): at_poll is up while the thread waits in the
   * interpreter's poll (its frames may change there); moved: a debugger popped frames, reload
   * them; early: return early_val / early_tag from the top frame at once. */
  _Atomic int at_poll;
  _Atomic int frames_moved;
  _Atomic int early;
  int64_t early_val;
  uint8_t early_tag;
  mvm_ref obj;                /* its java.lang.Thread (a GC root) */
  mvm_ref group;              /* its ThreadGroup (a GC root until obj holds it) */

  pthread_mutex_t stack_lock; /* frame push/pop vs. thread_stack snapshots */
  mvm_frame *frames;
  uint32_t depth;
  int64_t *regs;
  uint8_t *tags;
  int64_t ret;
  uint8_t ret_tag;
  /* Roots that are not in registers: the start argument until the thread copied it, objects
   * half-built across a second allocation. Touched only by the owner or with the world stopped. */
  mvm_ref pins[MVM_PINS];     /* [MVM_PIN_ARG] start argument, [MVM_PIN_STR] a string's bytes */

  const mvm_method *entry;
  int64_t start_arg;
  uint8_t start_tag;
  pthread_t pthread;
  pthread_t self; /* pthread_self() of the thread, set before tid (mvm_thread_bind) */

  uint64_t rng;               /* rand-int state */
  int notified;               /* monitor wait bookkeeping, guarded by vm->mon_lock */
  mvm_ref blocked_on;         /* the monitor it waits to enter or waits on in wait() (mon_lock) */
  struct mvm_thread *wait_next;
  struct mvm_thread *next;    /* thread list */
};

typedef struct mvm_monitor {
  mvm_ref obj;
  mvm_thread *owner;
  uint32_t count;
  int32_t depth;               /* the owner's frame (from the outermost) that first entered it */
  pthread_cond_t enter_cond;   /* owner left */
  pthread_cond_t wait_cond;    /* notify */
  mvm_thread *waiters;
  struct mvm_monitor *next;
} mvm_monitor;

#define MVM_MON_BUCKETS 256

typedef struct mvm_heap {
  uint8_t *base;               /* mmap'd reservation of max bytes */
  size_t max, footprint;
  uint32_t free_head;          /* unit offset + 1 of the first free block, 0 = none */
  uint64_t allocated_bytes, allocated_objects;
  uint64_t gc_count;
  int marked_phase;            /* between mark and sweep: unmarked blocks read as free */
  pthread_mutex_t lock;
} mvm_heap;

struct mvm_vm {
  mvm_config cfg;
  mvm_hooks hooks;

  pthread_mutex_t native_lock;
  struct mvm_nblock *native_head;
  uint64_t native_bytes, native_count;

  mvm_heap heap;
  const int *alloc_flag;        /* never NULL: a static 0 until mvm_set_alloc_hook */
  void (*alloc_fn)(void *ud, const mvm_alloc_info *a);
  void *alloc_ud;

  mvm_class **classes;
  uint32_t nclasses, cap_classes;
  mvm_class *string_class, *object_class, *thread_class, *group_class, *class_class;
  /* java.lang.Throwable > Exception > RuntimeException > the four the VM throws itself */
  mvm_class *throwable_class, *exception_class, *runtime_exc_class, *arith_class, *npe_class, *aioobe_class,
      *cce_class, *interrupted_class;
  pthread_mutex_t class_lock;   /* class states INITIALIZING -> READY / ERROR (a leaf) */
  pthread_cond_t class_cond;    /* a class left INITIALIZING, or shutdown */
  mvm_atype **atypes;           /* interned array types; appended at load time only */
  uint32_t natypes, cap_atypes;
  mvm_ref group_system, group_main;   /* ThreadGroup objects (roots) */
  mvm_thread *main_thread;      /* made by mvm_prepare_main, run by mvm_run_main */

  /* Debugger support (debug.c). poll is the one flag the interpreter reads per instruction:
   * non-zero while the world stops, at shutdown, while a thread is to be suspended, or while a
   * thread steps. It is recomputed under stw_lock. Method events are read at calls and returns. */
  _Atomic int poll;
  int nsusp;                    /* threads with susp_req set (stw_lock) */
  int nasync;                   /* threads with async_pending set (stw_lock) */
  _Atomic int nstepping;        /* threads with stepping set */
  _Atomic int method_events;
  mvm_dbg_hooks dbg;            /* set before any bytecode runs */
  pthread_mutex_t bp_lock;      /* the breakpoint table */
  struct mvm_bp *bps;

  pthread_mutex_t thread_lock;
  pthread_cond_t thread_cond;   /* a thread left the list */
  mvm_thread *threads;
  uint32_t next_id;
  int live_pthreads;            /* spawned threads not yet done touching the VM */

  pthread_mutex_t stw_lock;
  pthread_cond_t stw_cond;      /* running dropped to 0 */
  pthread_cond_t resume_cond;   /* the world resumed */
  _Atomic int stw_req;          /* polled at safepoints */
  int stw_active;
  int running;                  /* interpreter threads not at a safepoint */

  pthread_mutex_t mon_lock;
  mvm_monitor *mon[MVM_MON_BUCKETS];

  pthread_mutex_t gc_lock;
  pthread_cond_t gc_cond, gc_done_cond;
  int gc_pending;
  mvm_gc_reason gc_why;
  uint64_t gc_started, gc_finished;
  pthread_t gc_pthread;
  int gc_running;               /* the daemon was started */
  int gc_stop;                  /* tells the daemon to exit (after every interpreter thread) */
  mvm_thread *gc_thread;

  pthread_mutex_t sleep_lock;   /* sleep/native wait here so shutdown can wake them */
  pthread_cond_t sleep_cond;
  _Atomic int shutdown;
  _Atomic int exit_status;      /* -1 until an exit instruction ran */
  pthread_mutex_t out_lock;     /* keeps print lines whole */
};

/* The opcode of an instruction the debugger may patch concurrently (relaxed: the patch only
 * swaps one byte, and the breakpoint table gives the original back). */
static inline uint8_t mvm_insn_op(const mvm_insn *in) { return __atomic_load_n(&in->op, __ATOMIC_RELAXED); }

/* vm.c: tracked native memory (counted in the native heap DDM shows). Abort-free: NULL on failure. */
void *mvm_nalloc(mvm_vm *vm, size_t n);
void *mvm_ncalloc(mvm_vm *vm, size_t n, size_t size);
char *mvm_nstrdup(mvm_vm *vm, const char *s);
void mvm_nfree(mvm_vm *vm, void *p);
void mvm_log(mvm_vm *vm, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Sleeps up to ms, waking early at shutdown and, for a thread t (or NULL), when it is
 * interrupted or has an exception to throw (mvm_dbg_stop). Returns 0, 1 if t was interrupted
 * (the flag is cleared: the caller throws InterruptedException), or -1 at shutdown. */
int mvm_sleep_ms(mvm_vm *vm, mvm_thread *t, int64_t ms);
/* Wakes every sleeping and waiting thread to look at its flags again. */
void mvm_wake_sleepers(mvm_vm *vm);
/* Appends an instance method (one parameter: this, in the last of nregs registers) to c. */
mvm_method *mvm_add_instance_method(mvm_vm *vm, mvm_class *c, const char *name, const char *sig, uint16_t nregs,
                                    const mvm_insn *code, uint32_t ncode);
/* The constructor javac would write for a class without one: <init>()V, which returns. */
int mvm_add_default_init(mvm_vm *vm, mvm_class *c);
int64_t mvm_now_ms(void);
mvm_class *mvm_find_class(mvm_vm *vm, const char *name);
/* A new, unstarted java.lang.Thread (t: the interpreter thread allocating, which may collect,
 * or NULL outside the interpreter). target: (class index << 32 | method index) + 1, or 0. */
mvm_ref mvm_thread_object_new(mvm_vm *vm, mvm_thread *t, mvm_ref name, int daemon, mvm_ref group, int64_t target);
/* Gives a thread made outside the interpreter its Thread object in group. 0 or -1 (heap full). */
int mvm_thread_give_object(mvm_thread *t, mvm_ref group);
/* Sets the shutdown flag and wakes every blocking wait so interpreter threads unwind. */
void mvm_request_shutdown(mvm_vm *vm);

/* heap.c */
static inline mvm_hdr *mvm_deref(const mvm_vm *vm, mvm_ref r) {
  return (mvm_hdr *)(vm->heap.base + ((size_t)(r - 1) * MVM_UNIT));
}
static inline mvm_ref mvm_ref_of(const mvm_vm *vm, const mvm_hdr *h) {
  return (mvm_ref)(((const uint8_t *)h - vm->heap.base) / MVM_UNIT + 1);
}
static inline int64_t *mvm_slots(mvm_hdr *h) { return (int64_t *)(h + 1); }
int mvm_heap_init(mvm_vm *vm, char *err, size_t errlen);
void mvm_heap_destroy(mvm_vm *vm);
/* Allocation from an interpreter thread (t may be NULL at load time): first fit, then a
 * collection, then growth. 0 means out of memory. Zeroed payload. */
mvm_ref mvm_alloc_object(mvm_thread *t, mvm_class *c);
mvm_ref mvm_alloc_array(mvm_thread *t, char elem, int32_t length);
mvm_ref mvm_alloc_class_object(mvm_vm *vm, mvm_class *c);
mvm_ref mvm_new_string(mvm_thread *t, const char *utf8, size_t n);
/* An array of a given type (mvm_atype index + 1 in its header; 0: elem's default). */
mvm_ref mvm_alloc_array_typed(mvm_thread *t, char elem, uint32_t atype, int32_t length);
/* Allocation from a thread that is not an interpreter thread (or none): never collects. */
mvm_ref mvm_alloc_object_vm(mvm_vm *vm, mvm_class *c);
mvm_ref mvm_alloc_array_vm(mvm_vm *vm, char elem, uint32_t atype, int32_t length);
mvm_ref mvm_new_string_vm(mvm_vm *vm, const char *utf8, size_t n);
size_t mvm_elem_size(char elem);
/* The collector proper; the caller (GC daemon) has stopped the world. */
void mvm_heap_collect(mvm_vm *vm, mvm_gc_reason why);

/* thread.c */
mvm_thread *mvm_thread_new(mvm_vm *vm, const char *name, int daemon, int interp);
void mvm_thread_free(mvm_thread *t);
void mvm_thread_register(mvm_thread *t, mvm_status initial);
void mvm_thread_unregister(mvm_thread *t);
void mvm_thread_bind(mvm_thread *t);        /* sets self and OS tid */
void mvm_set_status(mvm_thread *t, mvm_status s);
/* Parks t while the world is stopped. Returns 0, or -1 when the VM is shutting down. */
int mvm_safepoint(mvm_thread *t);
/* ThreadReference.Stop: t throws exc at its next poll (set with the world stopped; exc stays a
 * root in pins[MVM_PIN_ASYNC] until then). take: the owner, at that poll. */
int mvm_set_async(mvm_thread *t, mvm_ref exc);
mvm_ref mvm_take_async(mvm_thread *t);
/* Recomputes vm->poll; caller holds stw_lock. */
void mvm_poll_update_locked(mvm_vm *vm);
void mvm_world_stop(mvm_vm *vm);
void mvm_world_resume(mvm_vm *vm);
/* Starts an interpreter thread for Thread object obj (name and daemon flag from it) running m
 * (with one argument if m takes one). Returns its id or 0. */
uint32_t mvm_thread_spawn(mvm_thread *parent, mvm_ref obj, const mvm_method *m, int64_t arg, uint8_t tag);
int mvm_thread_join(mvm_thread *self, uint32_t id);
void mvm_thread_rename(mvm_thread *t, const char *name);
/* Block until no non-daemon interpreter thread / no interpreter thread at all remains. */
void mvm_wait_nondaemon(mvm_vm *vm);
void mvm_wait_interp_exit(mvm_vm *vm);
/* Allocates the interpreter stack of t (frames, registers, tags). */
int mvm_thread_init_stack(mvm_thread *t);

/* monitor.c: each returns 0 or -1 with the error message in msg (IllegalMonitorState...). */
int mvm_monitor_enter(mvm_thread *t, mvm_ref obj);
int mvm_monitor_exit(mvm_thread *t, mvm_ref obj, const char **msg);
/* wait also returns 1 when the thread was interrupted (flag cleared; the monitor is held again). */
int mvm_monitor_wait(mvm_thread *t, mvm_ref obj, int64_t timeout_ms, const char **msg);
int mvm_monitor_notify(mvm_thread *t, mvm_ref obj, int all, const char **msg);
void mvm_monitor_release_all(mvm_thread *t);
void mvm_monitor_sweep(mvm_vm *vm);          /* world stopped, after mark */
void mvm_monitor_wake_all(mvm_vm *vm);       /* shutdown */
void mvm_monitor_free_all(mvm_vm *vm);

/* interp.c: runs m with args on t until it returns. Returns 0, or -1 after an error or an
 * exception nothing caught. Called on a thread's empty stack (its entry point, a <clinit>), an
 * uncaught exception prints Java's "Exception in thread" trace on stderr (a fatal error its
 * "minivm: thread ... died" report); called deeper (a nested call), it leaves the uncaught
 * exception in t->pins[MVM_PIN_EXC] for the caller and prints nothing. ret/ret_tag hold the result. */
int mvm_interp(mvm_thread *t, const mvm_method *m, const int64_t *args, const uint8_t *tags,
               int nargs);

/* interp.c: non-zero if class c is k or a subclass of k. */
static inline int mvm_is_subclass(const struct mvm_class *c, const struct mvm_class *k) {
  for (; c; c = c->super)
    if (c == k) return 1;
  return 0;
}
/* Prints "Exception in thread "NAME" CLASS: message" and its "\tat" lines on stderr. */
void mvm_print_uncaught(mvm_thread *t, mvm_ref exc);

/* classinit.c. Before the first active use of c (a static call or field, a new instance, a
 * thread's entry point): prepares c and its superclasses (a ClassPrepare for each, from t), then
 * runs their <clinit>s. Returns 0 (ready, or being initialised by t itself), 1 when a <clinit>
 * failed (its exception pinned in t->pins[MVM_PIN_EXC] when t->depth > 0, else already printed;
 * 0 there after a VM error), 2 when c failed to initialise before (NoClassDefFoundError), -1 at
 * shutdown. */
int mvm_class_init_slow(mvm_thread *t, mvm_class *c);
static inline int mvm_class_ready(const mvm_class *c) {
  return atomic_load_explicit(&c->state, memory_order_acquire) == MVM_CLS_READY;
}
/* c and its superclasses become PREPARED without events (the entry point's class, before start). */
void mvm_class_mark_prepared(mvm_vm *vm, mvm_class *c);
/* Shutdown: wakes threads waiting for another thread's <clinit>. */
void mvm_class_wake_all(mvm_vm *vm);

/* asm.c: adds a finished class (the built-ins too) and allocates its class object. */
int mvm_define_class(mvm_vm *vm, mvm_class *c);
/* Interns array type sig ("[I"); index into vm->atypes, or -1 (out of memory). */
int mvm_intern_atype(mvm_vm *vm, const char *sig);
/* JNI signature of a .mvm type name ("int", "String", "Debug[]") into out; 0, or -1 if malformed. */
int mvm_type_sig(const char *name, char *out, size_t cap);
void mvm_class_free(mvm_vm *vm, mvm_class *c);
typedef enum mvm_op {
#define MVM_OP(name, str, sig) name,
#include "ops.def"
#undef MVM_OP
  MVM_OP_COUNT,
  /* Not in the assembler: written over an instruction's opcode by the debugger (debug.c). */
  OP_BREAKPOINT = MVM_OP_COUNT
} mvm_op;

/* debug.c */
typedef struct mvm_bp {
  mvm_method *m;
  uint32_t pc;
  uint8_t orig;
  struct mvm_bp *next;
} mvm_bp;
/* The opcode a breakpoint at in replaced (the instruction's own if none is set any more). */
uint8_t mvm_bp_original(mvm_vm *vm, const mvm_insn *in);
/* Puts every patched opcode back (VM teardown). */
void mvm_bp_clear_all(mvm_vm *vm);
/* A raw register or slot as a debugger value of the type whose signature starts with sig0. */
mvm_value mvm_dbg_value_of(char sig0, int64_t raw);
/* Where frame f of t is, for the debugger hooks. */
static inline mvm_loc mvm_loc_of(const mvm_method *m, uint32_t pc) {
  return (mvm_loc){(mvm_type)m->owner->index + 1, m->index, pc};
}

#endif
