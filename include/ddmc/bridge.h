/* SPDX-License-Identifier: Apache-2.0 */
/* The VM bridge: one table of callbacks through which every client of the library reaches the VM:
 * the JDWP debugger (debugger.h), heap dumps, method traces and sampling (profile.h), JVM TI
 * agents (agent.h). A VM fills in what it can and installs it once with ddmc_vm_set_bridge();
 * each client works with no other client enabled. What a VM reports back (events, GC) is
 * events.h. docs/porting.md says which ops each step of a port needs.
 *
 * Names. The VM names things in its own terms and the library never dereferences them:
 *   ddmc_ref      an object (0 is null): whatever the VM uses, a pointer or a handle;
 *   ddmc_class    a loaded reference type (class, interface or array type; 0 is none);
 *   methods and fields are indexes into their class's tables (0 .. nmethods-1, 0 .. nfields-1);
 *   threads are the DDM thread ids of ddmc_thread_info.id (vm.h).
 * The library maps them to wire IDs (objectID, referenceTypeID, methodID, fieldID, frameID)
 * through its own registry: a stale or forged ID from a peer becomes an error reply, never a call
 * into the VM with a bad value. Indexes are checked against the class's counts before any op sees
 * them.
 *
 * The GC. Every object a client holds strong (an agent's global references; a debugger's IDs,
 * see release_ref) stays alive until the client lets it go: a VM's collector treats them as roots
 * by calling ddmc_gc_visit_roots (events.h) while it marks. A moving collector updates each
 * reference in place through the visitor.
 *
 * Return values. Every op returns 0 or a JDWP error code (ddmc_jdwp_error, error.h, positive),
 * which the library sends to a debugger unchanged and turns into the matching JVMTI error for an
 * agent; a NULL op makes what needs it answer NOT_IMPLEMENTED (JVM TI: NOT_AVAILABLE) and the
 * matching capability false. The for_each_* ops visit until fn returns non-zero and then return
 * 0: a stop is not an error (the library keeps its own).
 *
 * Threads. Ops run on the JDWP thread unless their comment says otherwise. The reflective ones (types and members, object_class, thread_info,
 * frame_location) may also run on a VM thread inside its own ddmc_post_* call, to match filters
 * and encode the event, and on an agent's thread for JVM TI. Ops that read or write objects
 * (fields, arrays, strings, locals) may run while the VM's threads run, unless a client suspended
 * them: the VM makes each one safe against its mutators and its collector (minivm stops the world
 * around it).
 *
 * Locks. The library calls an op with none of its own locks held, except where the op's comment
 * says "Locks:". Two locks are held across ops, each so that the library's counts and the VM's
 * state change together:
 *   - the switch lock (every client's breakpoints, field watches, stepping and method events):
 *     held across set_breakpoint, clear_breakpoint, set_field_watch, set_stepping,
 *     set_method_events and set_monitor_events;
 *   - a suspension lock (the debugger's suspend counts, JVM TI's): held across suspend_thread and
 *     resume_thread, and across the thread listing a suspension of every thread needs
 *     (for_each_debuggee_thread, thread_info, and vm.h's for_each_thread).
 * An op called under one of them must not call into the library (no ddmc_post_*, no ddmc_send_*,
 * no JVM TI function) and must not wait for another thread that may be calling into the library,
 * except as suspend_thread does: a thread inside a ddmc_post_* call already counts as stopped
 * (thread_parking), so waiting for the others to stop cannot deadlock. Debug builds of the library
 * check this contract at every call: an op called under a lock its comment does not name aborts
 * with the op's name. */
#ifndef DDMC_BRIDGE_H
#define DDMC_BRIDGE_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "export.h"
#include "vm.h"
#include "wire.h"

DDMC_BEGIN_DECLS

typedef uint64_t ddmc_ref;
typedef uint64_t ddmc_class;

/* JDWP type tags (ReferenceType), class status bits, thread status, access flags. */
enum { DDMC_TYPE_CLASS = 1, DDMC_TYPE_INTERFACE = 2, DDMC_TYPE_ARRAY = 3 };
enum { DDMC_CLASS_VERIFIED = 1, DDMC_CLASS_PREPARED = 2, DDMC_CLASS_INITIALIZED = 4, DDMC_CLASS_ERROR = 8 };
enum { DDMC_TS_ZOMBIE = 0, DDMC_TS_RUNNING = 1, DDMC_TS_SLEEPING = 2, DDMC_TS_MONITOR = 3, DDMC_TS_WAIT = 4 };
enum {
  DDMC_ACC_PUBLIC = 0x0001,
  DDMC_ACC_PRIVATE = 0x0002,
  DDMC_ACC_PROTECTED = 0x0004,
  DDMC_ACC_STATIC = 0x0008,
  DDMC_ACC_FINAL = 0x0010,
  DDMC_ACC_SYNCHRONIZED = 0x0020,
  DDMC_ACC_NATIVE = 0x0100,
  DDMC_ACC_INTERFACE = 0x0200,
  DDMC_ACC_ABSTRACT = 0x0400,
  DDMC_ACC_SYNTHETIC = 0x1000
};

/* A value. tag is a JDWP signature byte: 'Z' 'B' 'C' 'S' 'I' (in i), 'J' (j), 'F' (f), 'D' (d),
 * 'V' (none), or 'L' for any reference (in l): the library sends the most specific object tag
 * ('s' string, '[' array, 't' thread, 'g' thread group, 'c' class object, 'l' class loader)
 * from the object's class, so a VM need not work it out. */
typedef struct ddmc_value {
  char tag;
  union {
    int32_t i;
    int64_t j;
    float f;
    double d;
    ddmc_ref l;
  } u;
} ddmc_value;

/* A code position: the class, the method's index in it, and the instruction index in the units
 * the line table uses (-1 for a native method). */
typedef struct ddmc_location {
  ddmc_class cls;
  uint32_t method;
  int64_t index;
} ddmc_location;

/* Strings here are UTF-8 (modified UTF-8 for names with NUL), borrowed: they must stay valid and
 * unchanged while the class is loaded. The library copies what it keeps. */
typedef struct ddmc_class_info {
  const char *signature;   /* JNI form: "LDebug;", "[I", "[Ljava/lang/String;" */
  const char *generic;     /* generic signature, or NULL */
  const char *source_file; /* "Debug.java", or NULL: ABSENT_INFORMATION */
  uint8_t type_tag;        /* DDMC_TYPE_* */
  uint32_t status;         /* DDMC_CLASS_* bits; report at least VERIFIED|PREPARED once listed */
  uint32_t modifiers;      /* DDMC_ACC_* */
  ddmc_class superclass;   /* 0 for java.lang.Object, interfaces and primitives */
  uint32_t ninterfaces;    /* direct superinterfaces (see class_interface) */
  uint32_t nfields;        /* declared fields, static and instance */
  uint32_t nmethods;       /* declared methods */
  ddmc_ref class_object;   /* the java.lang.Class instance, or 0 */
  ddmc_ref loader;         /* 0: the boot loader */
} ddmc_class_info;

typedef struct ddmc_field_info {
  const char *name;
  const char *signature; /* "I", "Ljava/lang/String;" */
  const char *generic;   /* or NULL */
  uint32_t modifiers;    /* DDMC_ACC_STATIC for statics */
} ddmc_field_info;

typedef struct ddmc_method_info {
  const char *name;      /* "<init>" for constructors, "<clinit>" for class initialisers */
  const char *signature; /* JVM descriptor: "(I)I", "([Ljava/lang/String;)V" */
  const char *generic;   /* or NULL */
  uint32_t modifiers;    /* DDMC_ACC_STATIC, DDMC_ACC_NATIVE, ... */
  int64_t code_start;    /* first and last instruction index (-1, -1 for native) */
  int64_t code_end;
  int32_t arg_slots;  /* slots of the arguments, 'this' included (VariableTable argCnt) */
  int32_t max_locals; /* number of slots */
} ddmc_method_info;

/* One local variable: visible at index i when start <= i < start + length. */
typedef struct ddmc_variable {
  int64_t start;
  int32_t length;
  int32_t slot;
  const char *name;
  const char *signature;
  const char *generic; /* or NULL */
} ddmc_variable;

/* A thread as Java sees it (DDM knows it as ddmc_thread_info). */
typedef struct ddmc_thread_detail {
  ddmc_ref object;  /* its java.lang.Thread: its objectID is the threadID on the wire */
  ddmc_ref group;   /* its java.lang.ThreadGroup */
  const char *name; /* borrowed until the op returns */
  int status;       /* DDMC_TS_* */
  int internal;     /* non-zero: never shown to a debugger (the JDWP thread, ...) */
} ddmc_thread_detail;

/* ---- the whole heap: every object and every root, for heap dumps (HPDU/HPDS) and JVM TI
 * (IterateThroughHeap, FollowReferences, GetObjectsWithTags). */
/* One object of the heap, as for_each_object shows it. Borrowed for the visit. */
typedef struct ddmc_heap_object {
  ddmc_ref ref;     /* never 0 */
  ddmc_class cls;   /* its class: the array class for an array, java.lang.Class for a class
                       object (whose class the library finds from class_info.class_object) */
  uint64_t size;    /* bytes the VM spends on it (its shallow size), header included */
  uint32_t heap_id; /* DDMC_HEAP_ID_*: the heap it lives in */
  int32_t length;   /* arrays: the element count; -1 for any other object */
  /* Primitive arrays (optional, for speed): the length elements, packed as the Java type's size
   * (1, 2, 4 or 8 bytes), in the host's byte order; valid for the visit. NULL: the library reads
   * them with array_get. Reference arrays: always NULL (read with array_get). */
  const void *elements;
} ddmc_heap_object;

/* Heap ids as Android's hprof names them (HEAP_DUMP_INFO): "default", "app", "zygote", "image". */
enum { DDMC_HEAP_ID_DEFAULT = 0, DDMC_HEAP_ID_APP = 'A', DDMC_HEAP_ID_ZYGOTE = 'Z', DDMC_HEAP_ID_IMAGE = 'I' };

/* Why an object is a GC root: hprof's root kinds (standard and Android's), JVM TI's
 * jvmtiHeapReferenceKind roots map onto them. */
typedef enum ddmc_gc_root_kind {
  DDMC_GC_ROOT_UNKNOWN = 0,
  DDMC_GC_ROOT_JNI_GLOBAL,      /* a global reference of native code */
  DDMC_GC_ROOT_JNI_LOCAL,       /* a local reference of a native frame (thread, depth) */
  DDMC_GC_ROOT_JAVA_FRAME,      /* a local or operand of a Java frame (thread, depth, slot) */
  DDMC_GC_ROOT_NATIVE_STACK,    /* held by a thread's native stack (thread) */
  DDMC_GC_ROOT_STICKY_CLASS,    /* a class the VM never unloads (boot classes): its class object */
  DDMC_GC_ROOT_THREAD_BLOCK,    /* held by a thread's VM structure (thread) */
  DDMC_GC_ROOT_MONITOR_USED,    /* a monitor some thread holds or waits on */
  DDMC_GC_ROOT_THREAD_OBJECT,   /* a live thread's java.lang.Thread (thread) */
  DDMC_GC_ROOT_INTERNED_STRING, /* the VM's intern table */
  DDMC_GC_ROOT_FINALIZING,      /* waiting for its finalizer */
  DDMC_GC_ROOT_DEBUGGER,        /* held for a debugger (the objects with an ID, ddmc_gc_visit_roots) */
  DDMC_GC_ROOT_VM_INTERNAL,     /* held by the VM itself for any other reason */
  DDMC_GC_ROOT_JNI_MONITOR      /* a monitor entered by native code (thread, depth) */
} ddmc_gc_root_kind;

/* One root, as for_each_root shows it. An object may be a root for several reasons (one visit
 * each). Borrowed for the visit. */
typedef struct ddmc_gc_root {
  ddmc_ref object; /* never 0 */
  ddmc_gc_root_kind kind;
  uint32_t thread; /* the thread's DDM id for the kinds that name one (above); 0 otherwise */
  int32_t depth;   /* JAVA_FRAME, JNI_LOCAL, JNI_MONITOR: the frame (0 innermost); -1 unknown */
  int32_t slot;    /* JAVA_FRAME: the local's slot as variable_table numbers it; -1 unknown */
} ddmc_gc_root;

typedef int (*ddmc_heap_object_visit_fn)(void *arg, const ddmc_heap_object *o);
typedef int (*ddmc_gc_root_visit_fn)(void *arg, const ddmc_gc_root *r);
typedef int (*ddmc_stopped_fn)(void *arg);

typedef int (*ddmc_class_visit_fn)(void *arg, ddmc_class c);
typedef int (*ddmc_line_visit_fn)(void *arg, int64_t index, int32_t line);
typedef int (*ddmc_variable_visit_fn)(void *arg, const ddmc_variable *v);
typedef int (*ddmc_group_visit_fn)(void *arg, ddmc_ref group, ddmc_ref parent, const char *name);
/* Monitors: a thread (its DDM id); an owned monitor with the frame depth that entered it. */
typedef int (*ddmc_thread_id_visit_fn)(void *arg, uint32_t thread);
/* A thread a debugger may see, with its java.lang.Thread (ddmc_thread_detail.object). */
typedef int (*ddmc_thread_object_visit_fn)(void *arg, uint32_t thread, ddmc_ref object);
typedef int (*ddmc_monitor_visit_fn)(void *arg, ddmc_ref obj, int32_t depth);
/* Roots: the callee may update *ref in place (a moving collector). */
typedef void (*ddmc_root_visit_fn)(void *arg, ddmc_ref *ref);

/* Options of a method call (JDWP's invokeOptions), for the invoke op. */
#define DDMC_INVOKE_SINGLE_THREADED 1
#define DDMC_INVOKE_NONVIRTUAL 2
/* Not a JDWP bit: ClassType.NewInstance. method is a constructor (<init>) of c; the VM allocates
 * an instance of c, calls method on it and returns the instance in *result (tag 'L'). */
#define DDMC_INVOKE_CONSTRUCT 0x100

/* Kinds of field watch, for the set_field_watch op. */
#define DDMC_WATCH_ACCESS 1u
#define DDMC_WATCH_MODIFY 2u

/* The VM's side. ddmc_vm_set_bridge passes sizeof, so a VM built against an older header keeps
 * working: members it does not have count as NULL. Grouped by subject; "VM thread" in a comment
 * means the op runs on a VM thread, otherwise on the JDWP thread (or an agent's, for JVM TI). */
typedef struct ddmc_vm_bridge {
  /* ---- types and members */
  /* Every loaded type the debugger may see (array types too), in any order. */
  int (*for_each_class)(void *vm_data, ddmc_class_visit_fn fn, void *arg);
  int (*class_info)(void *vm_data, ddmc_class c, ddmc_class_info *out);
  int (*class_interface)(void *vm_data, ddmc_class c, uint32_t index, ddmc_class *out);
  int (*field_info)(void *vm_data, ddmc_class c, uint32_t field, ddmc_field_info *out);
  int (*method_info)(void *vm_data, ddmc_class c, uint32_t method, ddmc_method_info *out);
  /* In index order. DDMC_JDWP_ABSENT_INFORMATION when the method has no line information. */
  int (*line_table)(void *vm_data, ddmc_class c, uint32_t method, ddmc_line_visit_fn fn, void *arg);
  /* DDMC_JDWP_ABSENT_INFORMATION when the method has no variable information. */
  int (*variable_table)(void *vm_data, ddmc_class c, uint32_t method, ddmc_variable_visit_fn fn, void *arg);

  /* ---- objects, arrays and strings (JDWP thread, or a VM thread for the event paths). o is never
   * 0. */
  int (*object_class)(void *vm_data, ddmc_ref o, ddmc_class *out);
  /* Static field when o == 0. out->tag from the field's signature ('L' for any reference). */
  int (*get_field)(void *vm_data, ddmc_ref o, ddmc_class c, uint32_t field, ddmc_value *out);
  int (*set_field)(void *vm_data, ddmc_ref o, ddmc_class c, uint32_t field, const ddmc_value *v);
  /* Appends the string's characters as UTF-8 to out. */
  int (*string_value)(void *vm_data, ddmc_ref s, ddmc_buf *out);
  /* A new string, which the registry then holds. The library registers it as soon as the op
   * returns, on the same JDWP thread; the VM keeps it alive until then (for instance reachable
   * from the JDWP thread until that thread's next op call), so no collection in between frees
   * it. */
  int (*create_string)(void *vm_data, const char *utf8, size_t n, ddmc_ref *out);
  int (*array_length)(void *vm_data, ddmc_ref a, int32_t *out);
  /* Elements [first, first + n), already checked against the length. */
  int (*array_get)(void *vm_data, ddmc_ref a, int32_t first, int32_t n, ddmc_value *out);
  int (*array_set)(void *vm_data, ddmc_ref a, int32_t first, int32_t n, const ddmc_value *v);
  /* ArrayType.NewInstance: a new array of the array class c with length elements, each its
   * type's default. The VM keeps the array alive until its next new_array or create_string call
   * (by then the library holds an ID for it, a root). Thread: the JDWP thread. */
  int (*new_array)(void *vm_data, ddmc_class c, int32_t length, ddmc_ref *out);
  /* GetObjectSize: the bytes the VM spends on o (what for_each_object reports as size). Thread:
   * any; the VM makes it safe against its collector. DDMC_JDWP_INVALID_OBJECT for a bad o. */
  int (*object_size)(void *vm_data, ddmc_ref o, uint64_t *out);
  /* GetObjectHashCode: o's identity hash (what Object.hashCode() / System.identityHashCode give
   * in the VM), stable for o's lifetime. Thread: any. DDMC_JDWP_INVALID_OBJECT for a bad o. */
  int (*object_hash)(void *vm_data, ddmc_ref o, int32_t *out);

  /* ---- threads, frames and locals */
  /* Locks: may run under a suspension lock (listing threads to suspend them all). */
  int (*thread_info)(void *vm_data, uint32_t thread, ddmc_thread_detail *out);
  /* Every thread group, parents before children (parent 0 for a top-level group). */
  int (*for_each_group)(void *vm_data, ddmc_group_visit_fn fn, void *arg);
  /* Optional: every thread a debugger may see (thread_info would say internal 0), with the object
   * thread_info would give, until fn returns non-zero; returns 0 (also when fn stopped it) or a JDWP
   * error. When the library needs no more than that (AllThreads, suspending or resuming every
   * thread, finding a thread by its object) it lists threads by this op instead of for_each_thread
   * (vm.h) and thread_info per thread: worth having where per-thread queries are dear (JVM TI's look
   * each thread up in the VM's list of threads, so n of them cost n^2). Thread: the JDWP thread, or
   * a VM thread in its ddmc_post_* call (an event that suspends every thread). Locks: may run
   * under a suspension lock. */
  int (*for_each_debuggee_thread)(void *vm_data, ddmc_thread_object_visit_fn fn, void *arg);
  /* The thread VM_START names (the one that runs the program's entry point). With suspend=y,
   * VM_START goes out when the debugger connects, while the VM waits in ddmc_vm_start: the main
   * thread must then already be known (thread_info answers for it) and count as stopped, like a
   * thread in native code, so suspend_thread returns at once; it runs no bytecode until resumed.
   * Create the main thread (and prepare the entry point's class) before ddmc_vm_start. */
  int (*main_thread)(void *vm_data, uint32_t *out);
  /* Frames of a suspended thread; depth 0 is the innermost. frame_location is also called on a
   * VM thread for its own frames, inside its ddmc_post_location / _method_exit call, by a method
   * trace that first meets the thread inside a call (profile.h). */
  int (*frame_count)(void *vm_data, uint32_t thread, int32_t *out);
  int (*frame_location)(void *vm_data, uint32_t thread, int32_t depth, ddmc_location *out);
  /* 'this' of the frame, 0 for a static or native method. */
  int (*frame_this)(void *vm_data, uint32_t thread, int32_t depth, ddmc_ref *out);
  /* Slot as the variable table numbers it; tag is what the debugger asked for. INVALID_SLOT,
   * TYPE_MISMATCH, OPAQUE_FRAME as JDWP says. */
  int (*get_local)(void *vm_data, uint32_t thread, int32_t depth, int32_t slot, char tag, ddmc_value *out);
  int (*set_local)(void *vm_data, uint32_t thread, int32_t depth, int32_t slot, const ddmc_value *v);
  /* Monitors (without them the capabilities say no). The library asks the thread ops only of
   * threads a client holds suspended, so their answers cannot change underneath; monitor_info is a
   * snapshot (JDI asks it with the VM suspended). Each visitor returning non-zero ends the visit
   * early with 0. */
  /* ObjectReference.MonitorInfo: the owner of obj's monitor (0: none), how many times it has
   * entered it, and every thread waiting for it: to enter it, or in wait() until notified. */
  int (*monitor_info)(void *vm_data, ddmc_ref obj, uint32_t *owner, int32_t *entry_count,
                      ddmc_thread_id_visit_fn waiter, void *arg);
  /* The monitors thread owns, each once, with the depth of the frame that first entered it (0
   * innermost; -1 when not known, as for a monitor entered by native code). */
  int (*owned_monitors)(void *vm_data, uint32_t thread, ddmc_monitor_visit_fn fn, void *arg);
  /* The object whose monitor thread waits to enter, or waits on in wait(); 0 for none. */
  int (*contended_monitor)(void *vm_data, uint32_t thread, ddmc_ref *out);

  /* ---- execution control */
  /* Stop thread at its next safepoint, and return once it runs no more bytecode: stopped there,
   * or in sleep / wait / native / a monitor, from which it does not return to bytecode until
   * resume_thread. Called once per 0 -> 1 transition of the library's suspend count. Locks: runs
   * under a suspension lock. */
  int (*suspend_thread)(void *vm_data, uint32_t thread);
  /* Lets thread go again (once per 1 -> 0 transition). Locks: runs under a suspension lock. */
  int (*resume_thread)(void *vm_data, uint32_t thread);
  /* VM thread: the calling thread is about to park inside a ddmc_post_* call (parked = 1) or
   * has just left it (parked = 0). While parked it runs no bytecode and touches no heap: a VM
   * treats it like a thread in native code (safe for its collector). */
  void (*thread_parking)(void *vm_data, uint32_t thread, int parked);
  /* ThreadReference.Interrupt, as Thread.interrupt(): a thread sleeping or waiting wakes and
   * throws InterruptedException; otherwise its interrupted flag is set. Thread: the JDWP thread. */
  int (*interrupt_thread)(void *vm_data, uint32_t thread);
  /* ThreadReference.Stop, as Thread.stop(exc): the thread throws exc (any Throwable; else
   * DDMC_JDWP_INVALID_CLASS) at its current instruction as soon as it runs bytecode again (a
   * suspended thread: once resumed; a sleeping or waiting one is woken). The VM holds exc (a
   * root) until thrown. Thread: the JDWP thread. */
  int (*stop_thread)(void *vm_data, uint32_t thread, ddmc_ref exc);
  /* The library counts requests per location: one set per location with a breakpoint, one clear
   * when the last goes. The VM then reports the location with DDMC_POST_AT_BREAKPOINT each time a
   * thread reaches it. Locks: both run under the switch lock. */
  int (*set_breakpoint)(void *vm_data, const ddmc_location *loc);
  int (*clear_breakpoint)(void *vm_data, const ddmc_location *loc);
  /* While on, the thread calls ddmc_post_location before each instruction it executes (the
   * library decides where a step by line ends). The debugger switches it on while it holds the
   * thread suspended (a step asked for a running thread: suspend_thread, frames read, this,
   * resume_thread, as the JDK's agent does); a JVM TI agent may switch it for a running thread.
   * Locks: runs under the switch lock. */
  int (*set_stepping)(void *vm_data, uint32_t thread, int on);
  /* Watchpoints (VMs without it: the capabilities say no). The library counts requests per field:
   * watch is the set of kinds now wanted for field of c (DDMC_WATCH_ACCESS | DDMC_WATCH_MODIFY, 0
   * when none is left). While a kind is wanted the VM reports each access / modification of that
   * field with ddmc_post_field_access / _modification; other fields cost nothing. Locks: runs
   * under the switch lock. */
  int (*set_field_watch)(void *vm_data, ddmc_class c, uint32_t field, unsigned watch);
  /* While on, every thread calls ddmc_post_location with DDMC_POST_METHOD_ENTRY at the first
   * instruction of each method and ddmc_post_method_exit when a method returns. The library
   * switches it for the debugger's METHOD_ENTRY/EXIT requests and for method tracing alike, and
   * calls it only when the first of them wants it or the last stops. Locks: runs under the switch
   * lock. */
  int (*set_method_events)(void *vm_data, int on);
  /* Its presence says the VM reports the ddmc_post_monitor_* events (JDWP's
   * canRequestMonitorEvents, JVM TI's can_generate_monitor_events). The library counts who wants
   * any of them (the debugger's MONITOR_CONTENDED_ENTER/ENTERED, MONITOR_WAIT/WAITED requests, an
   * agent's SetEventNotificationMode for the four JVM TI monitor events) and calls it with on = 1
   * when the first wants them and on = 0 when the last stops, as set_method_events. While off the
   * VM need not report them (it saves its hooks at contended enters and waits); while on it
   * reports each one ddmc_event_wanted says some client wants. Thread: the JDWP thread or an
   * agent's thread. Locks: runs under the switch lock. */
  void (*set_monitor_events)(void *vm_data, int on);
  /* A method call. VM thread: the thread the client names, which an event left parked inside a
   * ddmc_post_* call, runs the call itself (the library hands it over; the JDWP thread never waits
   * for it), with thread_parking(thread, 0) around it so it may run bytecode and allocate. It
   * calls method of c on this_obj (0 for a static method) with the arguments in declaration
   * order, nonvirtually when DDMC_INVOKE_NONVIRTUAL is in options (a constructor with
   * DDMC_INVOKE_CONSTRUCT: ClassType.NewInstance), and fills *result (tag 'V' for void) or, when
   * the method throws, *exception (0 otherwise). Returns 0 or a JDWP error (INVALID_METHODID,
   * TYPE_MISMATCH for bad arguments, ...). Breakpoints and steps inside the call are reported as
   * usual, and may park the thread inside the call as any event does. */
  int (*invoke)(void *vm_data, uint32_t thread, ddmc_class c, uint32_t method, ddmc_ref this_obj,
                const ddmc_value *args, int32_t nargs, int options, ddmc_value *result, ddmc_ref *exception);
  /* JDWP's VirtualMachine.Exit: end the process at once with status, as Runtime.halt does and as
   * the JDK's agent does: no shutdown hooks, no orderly stop of the VM's threads (which the
   * debugger may hold suspended). Not vm.h's ddmc_vm_ops.exit, which asks for an orderly exit.
   * Does not return. Thread: a thread of the library's own, once the reply has been flushed to
   * the debugger. */
  void (*exit)(void *vm_data, int32_t status);

  /* ---- the heap. A VM without with_world_stopped, for_each_object and for_each_root has no heap
   * dumps (FEAT leaves out hprof-heap-dump and -streaming, HPDU/HPDS answer FAIL) and no JVM TI
   * heap walks. One walk serves hprof dumps and JVM TI (IterateThroughHeap, FollowReferences,
   * GetObjectsWithTags), so the VM writes it once.
   *
   * with_world_stopped runs fn(arg) on the calling thread with the world stopped: no thread of the
   * VM runs bytecode, allocates or collects until fn returns (threads parked, blocked or in native
   * code stay so), and returns what fn returned. Inside fn the library calls for_each_object,
   * for_each_root and the other ops of this table (class_info, field_info, get_field,
   * array_get...); they must not try to stop the world again (minivm lets the thread that holds
   * it in). Not nested. The library never does I/O to a peer inside fn: it builds what it needs in
   * bounded memory and sends it after the VM runs again. Thread: the JDWP thread (dumps), or an
   * agent's thread, including a VM thread inside an event callback, which the VM counts as stopped
   * while fn runs (as in native code); never the collector's. */
  int (*with_world_stopped)(void *vm_data, ddmc_stopped_fn fn, void *arg);
  /* Inside with_world_stopped: visits every object of the heap once, class objects included,
   * in any order, until fn returns non-zero. An object the collector has not freed yet may be
   * visited although nothing reaches it (Dalvik's dumps did the same); every reference an
   * object visited holds (fields, elements) names an object also visited, or 0. Object refs
   * must fit in 32 bits below 0xF0000000 (hprof ids are 4 bytes, as every Android tool assumes;
   * the library numbers classes without a class object from 0xF0000000): a VM with 64-bit
   * pointers passes compressed references, as ART does. */
  int (*for_each_object)(void *vm_data, ddmc_heap_object_visit_fn fn, void *arg);
  /* Inside with_world_stopped: visits every GC root (threads' Thread objects and frames' locals,
   * statics' holders, interned strings, held monitors, what the VM holds itself, the debugger's
   * objects), until fn returns non-zero. Each root's object is one for_each_object visits. */
  int (*for_each_root)(void *vm_data, ddmc_gc_root_visit_fn fn, void *arg);
  /* ForceGarbageCollection: a full collection that starts after the call; returns once it has
   * finished (the VM's GC hooks, ddmc_gc_start ... ddmc_gc_done, have run). Thread: any thread
   * but the collector's and never with the world stopped by the caller: an agent thread, the
   * JDWP thread, or a VM thread (inside an event callback, VMDeath included), which counts as
   * stopped while it waits. Returns 0, or DDMC_JDWP_VM_DEAD when the VM can no longer collect. */
  int (*collect)(void *vm_data);

  /* ---- agents */
  /* JVM TI RunAgentThread. The VM starts a new OS thread and makes it a VM thread with its own
   * id, for thread_obj (a java.lang.Thread the agent made, not started; the VM takes its name
   * from it and keeps it alive, a root, while the thread lives), then:
   *   - it is a DAEMON thread: it never keeps the VM alive, and the VM may exit while it runs;
   *   - it is visible to for_each_thread and thread_info (not internal) from before run is
   *     called until run has returned, and reports ddmc_post_thread_start on itself before
   *     run and ddmc_post_thread_death after;
   *   - it runs no bytecode, so a stop-the-world (the collector, with_world_stopped) never waits
   *     for it: it counts as a thread in native code all its life, and may block for ever (on a
   *     raw monitor, in sleep) without holding anything up; it calls no thread_parking;
   *   - it calls run(arg, thread) once (the library's trampoline: sets up the JNIEnv and calls
   *     the agent), then ends; at VM exit it is not joined (the process ends under it, as a
   *     JVM's daemon threads do).
   * priority is JVM TI's (1..10), a hint. *out_thread gets the new thread's id before run
   * starts. Returns 0, DDMC_JDWP_INVALID_THREAD (thread_obj is not an unstarted Thread),
   * DDMC_JDWP_OUT_OF_MEMORY, DDMC_JDWP_VM_DEAD (shutting down). Thread: any thread that called
   * into the library (an agent's callback or agent thread); the VM may stop the world briefly. */
  int (*start_agent_thread)(void *vm_data, ddmc_ref thread_obj, int32_t priority,
                            void (*run)(void *arg, uint32_t thread), void *arg, uint32_t *out_thread);

  /* ---- names the debugger holds (optional; a VM that names objects through a table of its
   * own fills release_ref, so that table does not grow for ever). A VM with release_ref gets the
   * JDK's semantics for debugger IDs: an object with an ID is held WEAKLY, strong only while
   * ObjectReference.DisableCollection is in force; the library calls release_ref once it holds a
   * name no more. Its collector, if it calls ddmc_gc_visit_roots, must call ddmc_gc_sweep too
   * (events.h): only pinned objects are roots then, and the sweep tells the library which of the
   * others it frees (their IDs answer INVALID_OBJECT). A VM without release_ref keeps every
   * object with an ID alive until the debugger disposes of it or leaves (roots).
   *
   * hold_ref: the library's hold on o turns strong (strong = 1: the first DisableCollection) or
   * weak again (0: the last EnableCollection). Returns 0, DDMC_JDWP_INVALID_OBJECT when o is
   * gone (the collector took it: DisableCollection answers that), or another JDWP error. A VM
   * whose collector asks ddmc_gc_visit_roots may leave it NULL: the pin already makes o a root.
   * Thread: the JDWP thread, with no library lock held; never two for one o at once. */
  int (*hold_ref)(void *vm_data, ddmc_ref o, int strong);
  /* release_ref: the library holds o no more, strong or weak: its ID was disposed of
   * (VirtualMachine.DisposeObjects to zero references, no DisableCollection left) or the session
   * ended (once for each object it held). The VM may forget the name and reuse it; a name must
   * never come back to the library naming another object while the library may still hold the
   * old one (a VM that reuses numbers puts a generation in them). Never called for an object
   * ddmc_gc_sweep reported freed. Called only with release_ref's own names: each ddmc_ref the
   * VM gave the library (a value, an event's object, a thread's object), at most once per time
   * the library started to hold it. Thread: the JDWP thread (DisposeObjects, session end), with
   * no library lock held; it must not call into the library. */
  void (*release_ref)(void *vm_data, ddmc_ref o);

  /* ---- memory view (optional, for speed): JDWP's VirtualMachine.InstanceCounts,
   * ReferenceType.Instances and ObjectReference.ReferringObjects (canGetInstanceInfo). A VM
   * without them still has the memory view when it has the heap ops above and for_each_class,
   * class_info, field_info, get_field and array_get: the library then walks the references
   * itself, inside with_world_stopped (reading every reachable object's reference fields through
   * get_field, which costs one op call a field), and names the objects it shows from the refs
   * for_each_object gave, so those must be names that stay valid after the walk (a VM whose walk
   * names are temporary, as libddmcjdwp's, fills these three). Each of them (any subset) makes
   * the library use it instead of its own walk.
   *
   * Only objects reachable from the roots count, as the JDK's agent counts them (JVM TI's
   * FollowReferences): an object nothing reaches is never counted, shown or a referrer, even
   * before the collector frees it. Instances of a class are of exactly that class (not of its
   * subclasses). Each runs one consistent look at the heap (the VM's own stop-the-world or heap
   * walk), bounded by the VM. Thread: the JDWP thread, never with the world stopped by the
   * library; no library lock held.
   *
   * instance_counts: counts[i] = the reachable instances of classes[i], for i < n (n >= 1; a class
   * may repeat). Returns 0 or a JDWP error (OUT_OF_MEMORY, VM_DEAD). */
  int (*instance_counts)(void *vm_data, const ddmc_class *classes, int32_t n, int64_t *counts);
  /* instances: fn(arg, o) for each reachable instance of c, at most max (max >= 1); after the VM's
   * walk has ended and with the world running again (fn names o: it takes the library's ID table
   * lock; o must be a durable name, as a value's). A non-zero fn ends the visit; that value is
   * returned. Else 0 or a JDWP error. */
  int (*instances)(void *vm_data, ddmc_class c, int32_t max, int (*fn)(void *arg, ddmc_ref o), void *arg);
  /* referring_objects: fn(arg, r) for each reachable object r that holds a reference to o (a
   * field, an array element, a class object's static, loader or superclass, an instance's class;
   * each referrer once, o itself if it refers to itself), at most max (max >= 1), as instances.
   * DDMC_JDWP_INVALID_OBJECT when o is gone. */
  int (*referring_objects)(void *vm_data, ddmc_ref o, int32_t max, int (*fn)(void *arg, ddmc_ref r), void *arg);
  /* ---- mutate: HotSwap, Drop Frame, Force Return (optional; each capability is true exactly
   * when its op is here: canRedefineClasses, canPopFrames, canForceEarlyReturn; JVM TI's
   * can_redefine_classes, can_pop_frame, can_force_early_return). Thread: the JDWP thread (or an
   * agent's thread for JVM TI), never with a library lock held.
   *
   * redefine_classes: replaces the definitions of n classes at once with new class files (the
   * bytes are borrowed for the call; the library has checked n and the lengths against its bounds
   * but not the bytes). The library promises neither canAddMethod nor
   * canUnrestrictedlyRedefineClasses: a definition that adds, removes or renames a method or a
   * field, or changes the class's hierarchy or modifiers, is refused with
   * SCHEMA_CHANGE_NOT_IMPLEMENTED / ADD_METHOD_NOT_IMPLEMENTED / DELETE_METHOD_NOT_IMPLEMENTED /
   * HIERARCHY_CHANGE_NOT_IMPLEMENTED / CLASS_MODIFIERS_CHANGE_NOT_IMPLEMENTED /
   * METHOD_MODIFIERS_CHANGE_NOT_IMPLEMENTED, bad bytes with INVALID_CLASS_FORMAT (or
   * UNSUPPORTED_VERSION, NAMES_DONT_MATCH, FAILS_VERIFICATION, CIRCULAR_CLASS_DEFINITION), and on
   * any error no class has changed. After success the classes keep their ddmc_class and their
   * fields' and methods' indexes; method_info, line_table and variable_table describe the new
   * code (the library drops what it cached), frames running an old body go on in it, and the VM
   * has cleared every breakpoint it had in those classes (the library forgets its breakpoint
   * requests there, as JVM TI's RedefineClasses and the JDK's agent do). */
  int (*redefine_classes)(void *vm_data, uint32_t n, const ddmc_class *classes, const uint8_t *const *bytes,
                          const uint32_t *lengths);
  /* pop_frames: pops the n innermost frames (n >= 1) of a thread the library holds suspended, so
   * that when it runs again the caller of the last one popped re-executes its call instruction
   * (its arguments evaluated anew, no exception, no monitor left held by the popped frames). Once
   * the op returns, frame_count, frame_location, frame_this and the locals show the stack without
   * them (frame depth 0 is that caller), even before the thread runs again. Errors as JVM TI's
   * PopFrame: OPAQUE_FRAME when a popped frame or the frame it returns to is native (or the VM
   * cannot pop it), NO_MORE_FRAMES when no Java frame would be left to return to,
   * THREAD_NOT_SUSPENDED, INVALID_THREAD. On an error nothing was popped. No event is reported
   * for the pop (no METHOD_EXIT, no FRAME_POP). */
  int (*pop_frames)(void *vm_data, uint32_t thread, int32_t n);
  /* force_early_return: the innermost frame of a thread the library holds suspended returns v
   * (tag 'V' for a void method; 'L' with u.l, possibly 0, for a reference) as soon as the thread
   * runs again, without executing more of its code (locks it holds by synchronized are released,
   * finally blocks do not run); METHOD_EXIT is reported as for a return. Errors as JVM TI's
   * ForceEarlyReturn*: OPAQUE_FRAME (a native frame, or the VM cannot), TYPE_MISMATCH (v does not
   * fit the method's return type), NO_MORE_FRAMES (no frame), THREAD_NOT_SUSPENDED,
   * INVALID_THREAD. */
  int (*force_early_return)(void *vm_data, uint32_t thread, const ddmc_value *v);
  /* ---- reflection: bytecodes, constant pool, modules, strata (each optional; its capability
   * is true exactly when the op is there). Thread: the JDWP thread, or an agent's thread for JVM
   * TI; never inside the VM's own iteration. Each returns 0, DDMC_JDWP_INVALID_CLASS /
   * INVALID_METHODID for a handle the VM does not know, or the error named below. */
  /* Method.Bytecodes (canGetBytecodes; JVM TI GetBytecodes): appends the code of method to out
   * exactly as the VM keeps it: a JVM the Code attribute's bytes of the class file (JVM TI may
   * give them rewritten back to the class file's form, as HotSpot does); any other VM its own
   * instruction encoding, which it documents. A native or abstract method has no code: nothing
   * appended, 0 (HotSpot and the JDK's agent answer an empty array). out has a cap; a longer
   * method sets its error (the reply is then OUT_OF_MEMORY). */
  int (*bytecodes)(void *vm_data, ddmc_class c, uint32_t method, ddmc_buf *out);
  /* ReferenceType.ConstantPool (canGetConstantPool; JVM TI GetConstantPool): *count is the
   * class file's constant_pool_count (entries + 1) and out gets the entries' bytes in the class
   * file's format, the first entry's tag first. ABSENT_INFORMATION for an array or primitive
   * type; a class the VM made without a class file (a VM of its own format) must leave the op
   * NULL. */
  int (*constant_pool)(void *vm_data, ddmc_class c, int32_t *count, ddmc_buf *out);
  /* ReferenceType.ClassFileVersion (JVM TI GetClassVersionNumbers): the class file's major and
   * minor version. ABSENT_INFORMATION for an array or primitive type. */
  int (*class_file_version)(void *vm_data, ddmc_class c, int32_t *major, int32_t *minor);
  /* ReferenceType.SourceDebugExtension (canGetSourceDebugExtension; JVM TI
   * GetSourceDebugExtension): appends the class's SourceDebugExtension attribute (UTF-8, JSR-45's
   * SMAP for a JSP or Kotlin class: the debugger computes its strata from it) to out, or returns
   * ABSENT_INFORMATION when it has none. With this op the library also answers
   * VirtualMachine.SetDefaultStratum (canSetDefaultStratum), and steps by line in a class with an
   * SMAP by the lines of a stratum, as libjdwp: so this op is also called on a stepping VM thread
   * inside its ddmc_post_location call (once per method stepped in, cached), and on the thread
   * inside ddmc_post_class_prepare when a ClassPrepare request's SourceNameMatch does not match
   * the class's source file (libjdwp matches the SMAP's source names too). */
  int (*source_debug_extension)(void *vm_data, ddmc_class c, ddmc_buf *out);
  /* Modules (JDWP 9: with all three ops VirtualMachine.Version answers 9, which is what makes a
   * JDI client ask; JVM TI GetAllModules). A module is an object on the wire (moduleID is an
   * objectID), so the VM names it by a ddmc_ref the library holds like any other object
   * (release_ref, hold_ref, roots). for_each_module visits every module the VM has defined (the
   * unnamed module of each class loader included) until fn returns non-zero; class_module gives
   * the module c belongs to (an array type: its element type's; a primitive type: java.base's);
   * module_info answers for m: when name is non-NULL, appends its name (UTF-8; nothing for an
   * unnamed module), and when loader is non-NULL, its class loader (0: the boot loader).
   * module_info returns DDMC_JDWP_INVALID_MODULE when m is not a module. The VM may run Java
   * code for module_info (the JDWP thread is no VM thread inside an event). */
  int (*for_each_module)(void *vm_data, int (*fn)(void *arg, ddmc_ref module), void *arg);
  int (*class_module)(void *vm_data, ddmc_class c, ddmc_ref *out);
  int (*module_info)(void *vm_data, ddmc_ref m, ddmc_buf *name, ddmc_ref *loader);
  /* ---- frames in bulk (optional: without it ThreadReference.Frames calls frame_location once
   * per frame, which costs a VM that walks the stack from the top for each depth (JVM TI's
   * GetFrameLocation) the square of the depth). frame_locations: the locations of frames
   * [first, first + n) of a suspended thread into out, innermost first, as frame_location gives
   * them one by one; the library asks at most 65536 at a time. Returns 0,
   * DDMC_JDWP_INVALID_THREAD, DDMC_JDWP_INVALID_FRAMEID (fewer frames than first + n), or
   * another JDWP error. Thread: the JDWP thread. */
  int (*frame_locations)(void *vm_data, uint32_t thread, int32_t first, int32_t n, ddmc_location *out);
  /* ---- heap dumps by the VM's own dumper (optional: without it, or when it fails, HPDU and HPDS
   * build the dump by walking the heap through the heap ops above). write_hprof: writes a
   * standard hprof of the heap's reachable objects ("JAVA PROFILE 1.0.1" or "1.0.2", identifiers
   * of 4 or 8 bytes, heap dump segments or one HEAP DUMP record: what HotSpot's
   * HotSpotDiagnosticMXBean.dumpHeap(path, true) writes) to path, a new file in a directory of
   * the library's own (mode 0700, removed after), and returns 0 once the file is complete, or a
   * non-zero error with a one-line reason in msg (msglen bytes, NUL-terminated). The library
   * reads the file, converts it to Android's hprof (docs/protocol/profiling.md §6: 4-byte ids,
   * class names as Android's) and deletes it; a file it cannot convert makes it fall back to the
   * walk. It starts reading, on a thread of its own, while the VM still writes: write the file
   * front to back (a heap dump record's length left 0 and written last, as JDK 8-11 do, only
   * makes it read the finished file again). Thread: the JDWP thread, never inside with_world_stopped; the VM may run Java code and
   * stop the world itself (a collection first, then its own dump). Locks: none. */
  int (*write_hprof)(void *vm_data, const char *path, char *msg, size_t msglen);
  /* ---- classes by name (optional, for speed: without it VirtualMachine.ClassesBySignature walks
   * for_each_class and compares the signature the library keeps of each type, which costs a VM
   * that names a type through a lookup of its own, as JVM TI's tags, one lookup per loaded type).
   * classes_named: calls fn for each type for_each_class would give whose JNI signature is sig
   * ("Lp/C;", "[I"; several when several loaders define the name), in any order, until fn
   * returns non-zero. Returns 0 or a JDWP error. Thread: the JDWP thread. Locks: none. */
  int (*classes_named)(void *vm_data, const char *sig, ddmc_class_visit_fn fn, void *arg);
  /* ---- suspension in bulk (optional, for speed: without them VirtualMachine.Suspend / Resume,
   * the suspend-all events and a session's end call suspend_thread / resume_thread once per
   * thread, which costs a VM whose call is dear per thread, JVM TI's SuspendThread, n of them).
   * suspend_threads: suspend_thread for each of threads[0, n) (n >= 1, at most 65536), its
   * result into errs[i]; it returns once every thread it stopped runs no more bytecode.
   * resume_threads: resume_thread for each, likewise. The library passes exactly the threads
   * that the single op would be called for (their 0 -> 1 or 1 -> 0 transitions), never one
   * twice. Returns 0 when errs[] holds the results, or an error when it did nothing at all (no
   * memory): the library then calls the single op per thread. Not called while a JVM TI agent of
   * the library holds suspensions (its arbiter takes every thread one at a time). Thread: the
   * JDWP thread, or a VM thread in its ddmc_post_* call. Locks: runs under a suspension lock. */
  int (*suspend_threads)(void *vm_data, const uint32_t *threads, uint32_t n, int *errs);
  int (*resume_threads)(void *vm_data, const uint32_t *threads, uint32_t n, int *errs);
} ddmc_vm_bridge;

/* Installs the bridge for every client: the debugger (ddmc_dbg_enable), heap dumps, method traces
 * and sampling, JVM TI agents. *bridge is copied; vm_data is handed to every op (borrowed until
 * ddmc_vm_free; it need not be the one given to ddmc_vm_new). Before ddmc_vm_start and before
 * any agent loads; once. Returns 0, DDMC_EINVAL, DDMC_ESTATE (started, or a bridge already set).
 * Thread: the VM's init thread. */
DDMC_EXTERN int ddmc_vm_set_bridge_(ddmc_vm *vm, const ddmc_vm_bridge *bridge, size_t bridge_size, void *vm_data);
#define ddmc_vm_set_bridge(vm, bridge, vm_data) ddmc_vm_set_bridge_((vm), (bridge), sizeof(ddmc_vm_bridge), (vm_data))

DDMC_END_DECLS

#endif
