/* SPDX-License-Identifier: Apache-2.0 */
/* The tests' fake bridge: a Dalvik-style debuggee behind every ddmc_vm_bridge op, answered from a
 * small static program, plus counters of what the library asked of it. The debugger layer's
 * tests and fuzzer, the profiler's tests (test_profile, test_prof_session), the JVM TI tests
 * (jvmti/jv_fixture.h), the session fuzzer and the lock-contract test (test_lockcheck) configure it
 * with fakebridge_new's flags and knobs, and test_hprof gives it a program of its own (a heap
 * known to the byte, fakebridge_new_program); a test that needs another answer adds a knob here
 * rather than a bridge of its own.
 *
 * The built-in program (see fakebridge.c for every value):
 *   classes   java.lang.Object, java.lang.String, java.lang.Thread (one int field), java.lang.ThreadGroup,
 *             java.lang.Class, java.lang.Runnable (an interface), Debug ("LDebug;", implements Runnable,
 *             5 static and 7 instance fields of types I Z J D String / I B C S F LDebug; [I, methods
 *             <init>, main, compute with line and variable tables), int[] ("[I");
 *   objects   two Debug instances, two strings, an int[5], the Class of Debug, three Thread objects,
 *             two ThreadGroups;
 *   threads   1 "main" (2 frames) and 2 "Worker" (3 frames) in group main (parent: system), and
 *             3 "JDWP", internal (never shown to a debugger);
 *   locals    per frame, typed (a this, an int, a long or a String).
 *
 * The VM half (thread enumeration through ddmc_vm_ops.for_each_thread) is the tests' fakevm; the
 * bridge is installed with ddmc_vm_set_bridge and the debugger enabled with ddmc_dbg_enable (unless
 * FAKEBRIDGE_NO_DEBUGGER), and a session without a socket (ddmc__jdwp_session fed the
 * handshake) opens the send path so events are queued and can be read back (fakebridge_events).
 *
 * The fake checks the library's promises: an op called with a value the library should have
 * rejected (an unknown class, a field index out of range, an array range past the length, a
 * second suspend_thread without a resume, a breakpoint set twice at one location, a frame depth
 * past the frame count) counts in bad_calls; tests expect 0. */
#ifndef DDMC_TEST_FAKEBRIDGE_H
#define DDMC_TEST_FAKEBRIDGE_H

#include <pthread.h>
#include <stdatomic.h>

#include "ddmc/debugger.h"
#include "fakevm.h"

/* Class handles (ddmc_class). */
enum {
  FD_C_OBJECT = 0x100,
  FD_C_STRING,
  FD_C_THREAD,
  FD_C_GROUP,
  FD_C_CLASS,
  FD_C_RUNNABLE,
  FD_C_DEBUG,
  FD_C_INT_ARRAY,
  FD_C_END
};
#define FD_NCLASSES (FD_C_END - FD_C_OBJECT)

/* Object references (ddmc_ref). Strings made by CreateString follow FD_O_END. */
enum {
  FD_O_DEBUG = 0x5000, /* x = 42, next = FD_O_DEBUG2, arr = FD_O_ARR */
  FD_O_DEBUG2,         /* x = 7, next = null */
  FD_O_STR,            /* "h\xc3\xa9llo" (5 chars, 6 bytes) */
  FD_O_LABEL,          /* "label" */
  FD_O_ARR,            /* int[5] {10, 20, 30, 40, 50} */
  FD_O_CLASS_DEBUG,    /* the java.lang.Class of Debug */
  FD_O_THREAD_MAIN,
  FD_O_THREAD_WORKER,
  FD_O_THREAD_JDWP,
  FD_O_GROUP_SYSTEM,
  FD_O_GROUP_MAIN,
  FD_O_END
};
#define FD_MAX_OBJECTS 48
/* Objects a test adds (fakebridge_add): FD_O_EXTRA, FD_O_EXTRA + 1, ... */
#define FD_O_EXTRA ((ddmc_ref)0x100000)

/* DDM thread ids. */
enum { FD_T_MAIN = 1, FD_T_WORKER = 2, FD_T_JDWP = 3, FD_NTHREADS = 3 };

/* Methods of Debug. */
enum { FD_M_INIT = 0, FD_M_MAIN = 1, FD_M_COMPUTE = 2, FD_NMETHODS = 3 };

/* Fields of Debug: statics first. */
enum {
  FD_F_COUNTER = 0, /* static int = 5 */
  FD_F_FLAG,        /* static boolean = true */
  FD_F_BIG,         /* static long = 1 << 40 */
  FD_F_RATIO,       /* static double = 0.25 */
  FD_F_LABEL,       /* static String = FD_O_LABEL */
  FD_F_X,           /* int */
  FD_F_B,           /* byte */
  FD_F_C,           /* char */
  FD_F_S,           /* short */
  FD_F_F,           /* float */
  FD_F_NEXT,        /* Debug */
  FD_F_ARR,         /* int[] */
  FD_NFIELDS
};
#define FD_NSTATICS 5

typedef struct fd_object {
  ddmc_ref ref;
  ddmc_class cls;
  ddmc_value fields[FD_NFIELDS]; /* Debug: by field index; Thread: [0] = priority */
  char str[64];                  /* String */
  int32_t arr[8];                /* int[] */
  int32_t arrlen;
} fd_object;

typedef struct fd_frame {
  ddmc_location loc;
  ddmc_ref this_obj;
  ddmc_value locals[4];
  int nlocals;
} fd_frame;

enum { FD_HOOK_SUSPEND = 1, FD_HOOK_INVOKE = 2 };

/* fakebridge_new flags */
#define FAKEBRIDGE_SUSPEND_Y 1u       /* the VM's options say suspend=y (VM_START suspends all) */
#define FAKEBRIDGE_NO_SESSION 2u      /* no session: nothing can be queued (post calls get DDMC_ENOTCONN) */
#define FAKEBRIDGE_NO_EXIT 4u         /* no exit op: VirtualMachine.Exit is NOT_IMPLEMENTED (fuzzers) */
#define FAKEBRIDGE_NO_DEBUGGER 8u     /* the bridge only, the debugger never enabled (f->d stays NULL) */
#define FAKEBRIDGE_THREAD_OBJECTS 16u /* the bridge has for_each_debuggee_thread (counted in n_thread_objects) */
#define FAKEBRIDGE_WEAK_NAMES 32u     /* the bridge has hold_ref / release_ref: names are weak (counted below) */
#define FAKEBRIDGE_MONITOR_EVENTS 64u /* the bridge has set_monitor_events (counted below) */
#define FAKEBRIDGE_REFLECTION 128u    /* bytecodes, constant_pool, source_debug_extension, for_each_module */
#define FAKEBRIDGE_SYNTH_CLASSES 256u /* class handles from FD_C_SYNTH up answer (see fd_synth) */
#define FAKEBRIDGE_NO_JDWP_THREAD 512u /* the VM's for_each_thread shows main and Worker only (no JDWP) */
#define FAKEBRIDGE_HEAP 1024u /* a heap: with_world_stopped, for_each_object, for_each_root, collect,
                                 object_size, object_hash (see "The heap" below) */

/* The heap (FAKEBRIDGE_HEAP; with a program of the test's, see fd_program below): for_each_object
 * shows every object of the debuggee (the program's,
 * those made since and those fakebridge_add added), last first (not in address order), each of fakebridge_object_size bytes
 * in DDMC_HEAP_ID_APP, an int[] with its elements; for_each_root shows FD_O_DEBUG as a JNI global,
 * FD_O_CLASS_DEBUG as a sticky class and each thread object as a THREAD_OBJECT of its thread.
 * for_each_object / for_each_root called outside with_world_stopped count in bad_calls;
 * object_hash is ref * 31; collect counts in n_collect. */
uint64_t fakebridge_object_size(const fd_object *o);
/* Reflection (FAKEBRIDGE_REFLECTION): every Debug method's bytecodes are fakebridge_bytecodes';
 * Debug's constant pool is FD_POOL_COUNT with the entries FD_POOL (one Utf8 "A"); its
 * SourceDebugExtension is FD_SMAP; for_each_module visits fakebridge.nmodules references from
 * FD_O_MODULE (0 unless a test sets it). Other classes: INVALID_CLASS, counted in bad_calls. */
#define FD_POOL "\x01\x00\x01" "A"
#define FD_POOL_LEN 4
#define FD_POOL_COUNT 2
#define FD_SMAP "SMAP\nDebug.java\nJSP\n*S JSP\n*F\n+ 1 a.jsp\na.jsp\n*L\n1#1,2:10\n*E\n"
#define FD_O_MODULE 0x9000
/* The bytecodes of Debug's method (code_end + 1 bytes), or NULL for another method. */
const uint8_t *fakebridge_bytecodes(uint32_t method, size_t *n);

/* Synthetic classes (FAKEBRIDGE_SYNTH_CLASSES), for tests that need more classes than the program
 * has (the profiler's names cache, REAL's string tables): the class FD_C_SYNTH + n is "LC<n>;" in
 * "C<n>.java"; its method m (any number) is "m<m>" "()V" with the line table {0: 100 + m,
 * 4: 200 + m}. The knobs below (each -1: none, as fakebridge_new sets them) make exceptions. The
 * strings answered live in the fakebridge until the next call: JDWP thread only. */
#define FD_C_SYNTH ((ddmc_class)0x1000000)
typedef struct fd_synth {
  int64_t no_source;   /* this n has no source file */
  int64_t fails;       /* this n's class_info answers INVALID_CLASS (not counted as bad) */
  int64_t native;      /* this method number is native (no line table asked) */
  int64_t no_lines;    /* this method number answers ABSENT_INFORMATION for its line table */
  int64_t wide_line;   /* this method number's line at index 4 is 40000, not 200 + m */
  /* This method number is "<init>" with the descriptor ctor_sig (when not NULL): invoked with
   * DDMC_INVOKE_CONSTRUCT it makes a new object of the class (any arguments, recorded below). */
  int64_t ctor;
  const char *ctor_sig;
} fd_synth;
#define FAKEBRIDGE_BULK_SUSPEND 2048u /* the bridge has suspend_threads / resume_threads (counted below) */
#define FAKEBRIDGE_NO_ROOTS 4096u /* with FAKEBRIDGE_HEAP: no for_each_root (a VM that cannot dump its heap) */
#define FAKEBRIDGE_WRITE_HPROF 8192u /* a dumper of its own: write_hprof calls the write_hprof knob below */

/* A program of the test's own (fakebridge_new_program), for a heap known to the byte: classes
 * with a superclass chain, declared instance and static fields, objects of every kind in the
 * heaps the test names, and roots. Its class i is the handle FD_C_PROG + i. With a program,
 * for_each_class, for_each_object and for_each_root show only the program's classes, objects and
 * roots; class_info, field_info, get_field, array_get, array_length, object_class, object_size and
 * object_hash answer from the program for its classes and objects and as without it for the
 * others; every other op is the built-in program's. The program and what it points to are the
 * test's, read at every call: a test may change them (an array's length, one more object) between
 * dumps, never while the library walks the heap. */
#define FD_C_PROG ((ddmc_class)0x10000)
typedef struct fd_pfield {
  const char *name, *signature;
  uint32_t modifiers; /* DDMC_ACC_STATIC: a static, whose value is value */
  ddmc_value value;
} fd_pfield;
typedef struct fd_pclass {
  ddmc_class_info info; /* as class_info answers it, but nfields (the count below) */
  const fd_pfield *fields; /* its declared fields, statics among them: field index i is fields[i] */
  uint32_t nfields;
} fd_pclass;
typedef struct fd_pvalue { /* an instance field's value: (class declaring it, field index) */
  ddmc_class cls;
  uint32_t field;
  ddmc_value value;
} fd_pvalue;
/* An object, or repeat > 1 alike ones (refs ref .. ref + repeat - 1). for_each_object shows
 * ref, cls, size, heap_id, length and elements as they are here, the objects in the order listed;
 * object i of a repeat lives in alt_heap when alt_every > 0 and i % alt_every == 0. get_field
 * answers fields (a field read that is not there counts in bad_calls); array_get answers values
 * (an array without values, such as one whose elements for_each_object gives, counts in bad_calls
 * and answers INVALID_ARRAY: the library reads those from the walk). */
typedef struct fd_pobject {
  ddmc_ref ref;
  ddmc_class cls;
  uint64_t size;
  uint32_t heap_id;
  int32_t length;       /* arrays: the element count; -1 otherwise */
  const void *elements; /* primitive arrays: what for_each_object gives (NULL: none) */
  const ddmc_value *values; /* arrays: length values for array_get (NULL: none) */
  const fd_pvalue *fields;
  size_t nfields;
  uint32_t repeat;
  uint32_t alt_heap, alt_every;
} fd_pobject;
typedef struct fd_program {
  const fd_pclass *classes;
  uint32_t nclasses;
  const fd_pobject *objects;
  size_t nobjects;
  const ddmc_gc_root *roots; /* for_each_root's visits, in this order */
  size_t nroots;
} fd_program;

typedef struct fakebridge {
  fakevm fv;           /* first: the ddmc_vm's vm_data is this struct */
  ddmc_vm_bridge bridge;  /* what was attached */
  struct ddmc__dbg *d; /* the library's debugger for fv.vm */
  void *sess;          /* a ddmc__jdwp_session fed by no socket, or NULL */
  uint32_t session;    /* its number */
  size_t echo_left;    /* handshake echo bytes still to skip in the session's output */

  /* The debuggee; ops of the JDWP thread change it (SetValues, CreateString). */
  fd_object obj[FD_MAX_OBJECTS];
  int nobj;
  fd_object *extra; /* fakebridge_add's, kept by fakebridge_reset_debuggee */
  int nextra, extra_cap;
  ddmc_value statics[FD_NSTATICS];
  fd_frame frames[FD_NTHREADS + 1][3]; /* by thread id */
  int nframes[FD_NTHREADS + 1];

  /* Knobs. */
  atomic_int absent_info;  /* line_table / variable_table answer ABSENT_INFORMATION */
  atomic_int worker_dead;  /* thread_info(Worker) answers INVALID_THREAD */
  atomic_int fail_suspend; /* suspend_thread answers this error when non-zero */
  atomic_int fail_get_field; /* get_field answers this error when non-zero (not counted as bad) */
  int nmodules;            /* for_each_module's count (FAKEBRIDGE_REFLECTION) */
  fd_synth synth;          /* FAKEBRIDGE_SYNTH_CLASSES' exceptions */
  int synth_on;
  char synth_sig[40], synth_src[40], synth_name[24];

  /* What the library asked for. */
  atomic_int n_class_info, n_method_info, n_line_table; /* every call, synthetic classes too */
  atomic_int n_suspend, n_resume, n_set_bp, n_clear_bp, n_set_step, n_method_events, n_exit, n_park, n_unpark;
  atomic_int last_exit;
  atomic_int bad_calls;
  atomic_int vm_suspended[FD_NTHREADS + 1]; /* by suspend_thread, until resume_thread */
  atomic_int stepping[FD_NTHREADS + 1];
  atomic_int step_on_running; /* set_stepping(on) for a thread neither suspended nor parked */
  atomic_int n_stop;          /* stop_thread calls */
  atomic_int parked[FD_NTHREADS + 1]; /* thread_parking said 1, not yet 0 */
  atomic_int method_events;
  atomic_int n_monitor_events, monitor_events; /* set_monitor_events: calls, and the last on */
  /* set_field_watch: calls, and the last field and kinds asked for. */
  atomic_int n_field_watch, last_watch_field, last_watch_mask;
  /* invoke: calls, and the last thread and options. compute(int x) returns (long)2x, or throws
   * FD_O_DEBUG2 for x < 0; main is void; <init> (with DDMC_INVOKE_CONSTRUCT) makes a new
   * Debug. new_array makes an int[] of up to 8 elements. */
  atomic_int n_invoke, last_invoke_thread, last_invoke_options;
  ddmc_value last_invoke_args[8]; /* the last invoke's first 8 arguments (written under bp_lock) */
  int last_invoke_nargs;
  /* interrupt_thread / stop_thread (stop takes a Debug instance as its "Throwable") */
  atomic_int n_interrupt, last_interrupt_thread, last_stop_thread;
  atomic_int n_thread_objects; /* for_each_debuggee_thread calls */
  atomic_int n_collect, n_stopped, world_stopped; /* the heap: collect and with_world_stopped calls, inside one */
  /* get_field and array_get calls outside with_world_stopped: a debugger's are, a heap dump's
   * never (its reads are part of one stopped walk). */
  atomic_int n_unstopped_reads;
  const fd_program *prog; /* fakebridge_new_program's, or NULL */
  /* suspend_threads / resume_threads: calls, and the threads of the last call (each one goes
   * through suspend_thread / resume_thread, counted there too; fail_suspend fails the first of a
   * suspend_threads call only). */
  atomic_int n_suspend_list, n_resume_list, last_list_n;
  /* mutate: redefine_classes (calls; a class file must start 0xCAFEBABE, else
   * INVALID_CLASS_FORMAT), pop_frames (the last thread and count), force_early_return (the last
   * thread and value tag). */
  atomic_int n_redefine, last_pop_thread, last_pop_n, last_force_thread, last_force_tag;
  /* hold_ref (strong / weak again) and release_ref calls, the last object released; a release of
   * an object the debuggee does not have, or a second one before a new ID, counts in bad_calls. */
  atomic_int n_hold_strong, n_hold_weak, n_release;
  atomic_llong last_release;
  atomic_llong last_stop_exc;
  atomic_uint watch_masks; /* bit 2*field (access) / 2*field+1 (modify) of Debug's fields */
  /* Called, when set, inside suspend_thread (FD_HOOK_SUSPEND, with the thread to stop) and inside
   * invoke (FD_HOOK_INVOKE, with the invoking thread), on the thread that calls the op: a test
   * holds a thread there, or posts an event from inside a call. */
  void (*hook)(void *arg, int where, uint32_t thread);
  void *hook_arg;
  /* write_hprof (FAKEBRIDGE_WRITE_HPROF) calls this, set before the library asks; without it the
   * op fails. */
  int (*write_hprof)(void *arg, const char *path, char *msg, size_t msglen);
  void *write_hprof_arg;
  atomic_int n_write_hprof;
  pthread_mutex_t bp_lock;
  ddmc_location bps[32];
  int nbps;
  uint32_t magic; /* FAKEBRIDGE_MAGIC: every op checks its vm_data is this fake */
} fakebridge;
#define FAKEBRIDGE_MAGIC 0xfb1d6e00u

/* The VM (fakevm), the debugger attached, the debuggee in its initial state and (unless
 * FAKEBRIDGE_NO_SESSION) a live session. Returns 0 or the failing call's code. f must stay put. */
int fakebridge_new(fakebridge *f, unsigned flags);
/* The same with the VM's allocator (NULL: libc). After a failure, fakebridge_free frees what was made. */
int fakebridge_new_mem(fakebridge *f, unsigned flags, const ddmc_allocator *mem);
/* The same with the VM half's own threads, heaps and hooks (cfg, NULL: the program's three
 * threads) and options (o, NULL: a socket transport with a 1 MiB send queue, suspend from the
 * flags): a test or fuzzer that needs another VM half beside the debuggee. */
int fakebridge_new_vm(fakebridge *f, unsigned flags, const fakevm_config *cfg, const ddmc_options *o,
                      const ddmc_allocator *mem);
/* The same answering from the program p (see fd_program), which must stay put and alive until
 * fakebridge_free. */
int fakebridge_new_program(fakebridge *f, unsigned flags, const fd_program *p, const fakevm_config *cfg,
                           const ddmc_options *o, const ddmc_allocator *mem);
/* Ends the session (the library's disconnect clean-up runs) and frees the VM. */
void fakebridge_free(fakebridge *f);
/* Puts the debuggee back as fakebridge_new made it (objects, statics, frames, knobs, breakpoints and
 * counters). The library's state is not touched. */
void fakebridge_reset_debuggee(fakebridge *f);
/* Marks the session live again after a ddmc__dbg_reset (VirtualMachine.Dispose). */
void fakebridge_reconnect(fakebridge *f);

/* Drains the queue and calls fn with the data of each Event.Composite (64/100) queued since the
 * last call; other packets are skipped. Returns the number of composites. JDWP thread. */
typedef void (*fakebridge_event_fn)(void *arg, const uint8_t *p, size_t n);
int fakebridge_events(fakebridge *f, fakebridge_event_fn fn, void *arg);

/* Is a breakpoint set at (cls, method, index)? */
int fakebridge_has_bp(fakebridge *f, ddmc_class cls, uint32_t method, int64_t index);

/* The debuggee's object for r, or NULL. */
fd_object *fakebridge_object(fakebridge *f, ddmc_ref r);
/* Adds an object of class cls (fields zero, of their types for Debug) to the debuggee, as
 * FD_O_EXTRA + the number added before: a heap of many objects. Set-up only (before the library
 * runs): earlier pointers from fakebridge_object to added objects may move. NULL when out of
 * memory. */
fd_object *fakebridge_add(fakebridge *f, ddmc_class cls);

#endif
