/* SPDX-License-Identifier: Apache-2.0 */
/* libddmcjdwp.so's private API: a JVM TI agent that fills libddmc's VM bridge (ddmc/bridge.h)
 * from JVM TI and JNI and reports the JVM's events through ddmc_post_* (ddmc/events.h).
 *
 * Names. One table (refs.c) gives every Java object the agent shows libddmc a number, its JVM TI
 * tag: a ddmc_ref is that number, a ddmc_class is the number of the class's java.lang.Class
 * object (so class_info.class_object is the same number), and a thread's DDM id is the number of
 * its java.lang.Thread. The tag makes the mapping one-to-one: the same object always gets the
 * same number while it has one, which JDWP's object identity needs. An object's number is a slot
 * of the table and a generation (JA_SLOT_BITS): a freed slot is reused under a new generation, so
 * an old number answers as a collected object, never as the new occupant. A kept entry's number
 * is its slot, below 2^18 (never freed: no generation; threads' DDM ids stay small). Objects' entries hold a weak
 * reference (collected objects answer INVALID_OBJECT), strong while the library holds them strong
 * (the bridge's hold_ref); release_ref frees the entry, and so does a pass over the table for
 * collected objects when it fills. Classes and threads are "kept": strong, never freed, outside
 * the bound on objects (names=N in OPTIONS; agent/README.md says what a name costs).
 *
 * Threads. Ops run on the JDWP thread and the library's other threads, which the agent attaches
 * to the JVM as daemons the first time they call (ja_env), and on Java threads inside JVM TI
 * callbacks. Each op that makes JNI local references runs inside a local frame (ja_enter /
 * ja_leave): the JDWP thread never returns to Java, so nothing else would free them.
 *
 * Locks, five, none held across a call into libddmc: refs.c's table lock (a leaf), members.c's
 * class lock (a leaf but for the table's), control.c's breakpoint lock (bp_lock) and suspend.c's
 * suspension gate (sus_mu), both leaves, and ddmserver.c's lock on the registered chunk types (a leaf). The
 * ops libddmc calls under its own locks (bridge.h, "Locks:") take only these leaves.
 *
 * Files. They call one way (agent/README.md, "Files"; ctest check_layers_agent): refs.c at the
 * bottom (it also holds ja, below), agent.c at the top. */
#ifndef DDMCJDWP_JA_H
#define DDMCJDWP_JA_H

#include <jni.h>
#include <jvmti.h>
#include <stdatomic.h>
#include <stdint.h>

#include "ddmc/bridge.h"
#include "ddmc/debugger.h"
#include "ddmc/events.h"
#include "ddmc/options.h"
#include "ddmc/vm.h"

/* The agent: one per process, as JVM TI agents are. Defined in refs.c, filled by agent.c. */
typedef struct ja_agent {
  JavaVM *jvm;
  jvmtiEnv *ti;
  ddmc_vm *vm;
  ddmc_options opt;
  jvmtiCapabilities caps; /* what HotSpot granted */
  int verbose;            /* verbose=y in OPTIONS: libddmc's info and debug lines on stderr */
  uint32_t main_thread;   /* the thread VMInit ran on */
  atomic_int live;        /* VMInit seen and not yet VMDeath: events are reported */
  atomic_int announced;   /* the "Listening for transport" line was printed */
  atomic_int method_events;
} ja_agent;

extern ja_agent ja;

/* ---- refs.c: the table of objects, classes and threads */
typedef struct ja_class ja_class;
/* A thread's state, made with its name (a thread's entry is kept, so it lives as long). */
typedef struct ja_tstate {
  atomic_int stepping;      /* single-step events enabled for it */
  atomic_int parked;        /* parked by the debugger in a post call (thread_parking): in a JVM TI
                               callback, native to HotSpot, suspended to a DDM monitor */
  /* Suspension (suspend.c), under its lock: */
  int in_callback;          /* nesting depth of JVM TI callbacks it is running */
  int ti_suspended;         /* stopped by JVM TI SuspendThread */
  int gated;                /* to stop, or stopped, where its outermost callback returns */
  int world;                /* stopped for a heap walk: 1 by SuspendThread, 2 gated (suspend.c) */
  /* PopFrames (mutate.c): frames JVM TI popped but still shows until the thread runs (the frame
   * ops of threads.c skip them), and frames still to pop once it runs (its SingleStep events). */
  atomic_int hidden;
  atomic_int pops_pending;
} ja_tstate;
/* One name. Every object named has one, so it holds only what every name needs: what only a
 * class or only a thread needs hangs off it (48 bytes, where one entry for all was 88). */
typedef struct ja_entry {
  jobject ref;              /* global reference (kept, or held strong), else weak global */
  _Atomic uint32_t gen;     /* generation of the number naming it; 0: free */
  uint32_t spare_gen;       /* the generation its next occupant gets (under the lock) */
  uint32_t next_free;       /* free list: slot + 1 (under the lock) */
  int32_t holds;            /* the library's strong holds (hold_ref), under the lock */
  uint8_t kept;             /* a class or a thread: strong and never freed */
  uint8_t strong;           /* ref is a global reference (kept or holds > 0), under the lock */
  /* A thread of the agent or of libddmc, never shown to a debugger. Here, not in ts: a listing of
   * 10,000 threads reads it of each, and a second cache line per thread was a seventh of it. */
  _Atomic uint8_t internal;
  _Atomic(ja_class *) cls;  /* members.c's description, once the object is used as a class */
  ja_tstate *ts;            /* a thread's state; NULL for any other object */
} ja_entry;

/* Numbers: objects' (generation << JA_SLOT_BITS) | slot, generation >= 1; kept entries' the slot
 * (below 2^18); at most JA_MAX_SLOTS slots. */
#define JA_SLOT_BITS 22
#define JA_MAX_SLOTS (1u << JA_SLOT_BITS)

/* The number of o (0 for NULL): made on first sight. 0 also when the table is full (the bound on
 * objects, names=N, or JA_MAX_SLOTS) or JVM TI refuses the tag: a caller that gets 0 for a
 * non-NULL o answers OUT_OF_MEMORY, never null. Thread: any attached thread. */
uint64_t ja_ref(JNIEnv *env, jobject o);
/* ja_ref of each of the n threads of a GetAllThreads into ids (0 for one that cannot be named).
 * Thread: any attached thread. */
void ja_ref_threads(JNIEnv *env, const jthread *ts, jint n, uint32_t *ids);
/* The number of o if it has one already, else 0 (never names it). Thread: any attached thread. */
uint64_t ja_named(jobject o);
/* The entry of a number this table gave out and has not freed, or NULL. Thread: any. Only a
 * kept entry (class, thread) stays valid after the call; an object's may be freed by then. */
ja_entry *ja_entry_of(uint64_t id);
/* The state of the thread id names, or NULL when id names no thread. Thread: any; it stays valid
 * for the life of the process. */
ja_tstate *ja_tstate_of(uint64_t id);
/* Is id a thread of the agent or of libddmc (ja_set_internal)? Thread: any. */
int ja_is_internal(uint64_t id);
void ja_set_internal(uint64_t id);
/* A local reference to id's object (a kept entry's global reference itself), NULL when id names
 * nothing or its object was collected. In a local frame (ja_enter): the caller's frame frees it. */
jobject ja_obj(uint64_t id);
/* The global reference of a kept entry (class, thread), or NULL. Thread: any. */
jobject ja_kept_obj(uint64_t id);
/* The bridge's hold_ref / release_ref (values.c installs them). Thread: any attached. */
int ja_hold(JNIEnv *env, uint64_t id, int strong);
void ja_release(JNIEnv *env, uint64_t id);
/* names=N: the bound on objects' entries (classes and threads apart); -1 if out of range. */
int ja_set_max_names(uint64_t n);
/* The slot of a number in use, or UINT32_MAX; the number in use at a slot, or 0 (heap.c). */
uint32_t ja_slot_of(uint64_t id);
uint64_t ja_id_of_slot(uint32_t slot);

/* Heap walks (heap.c) name every object the table has not named by a walk tag in
 * [JA_WALK_BASE, JA_WALK_END), above every number of the table and below 0xF0000000 (hprof ids
 * are 4 bytes): valid on the walking thread only, for the length of the walk, and without a
 * global reference. ja_ref and ja_obj answer them on that thread. While a walk runs, new names
 * take fresh slots (at or above the ends ja_table_ends gave when it began), never freed ones. */
#define JA_WALK_BASE 0xC0000000ull
#define JA_WALK_END (JA_WALK_BASE + (1ull << 25))
/* The walking thread lends the table its walk's objects, objs[tag - JA_WALK_BASE] for n tags,
 * for the length of the walk (the walk owns them; refs.c only reads them on that thread), and
 * takes them back with ja_walk_lend(NULL, 0). */
void ja_walk_lend(jobject *objs, jint n);
/* Clears o's tag if it is still tag, under the table's lock (a thread that named o meanwhile
 * keeps its name). */
void ja_untag(jobject o, jlong tag);
/* GarbageCollectionFinish (heap.c) says a collection ended: collected names are looked for only
 * after one. Thread: any, JVM TI's callback too (an atomic add). */
void ja_gc_ended(void);
/* The ends of the slots used: kept entries' [0, *kept_end) and objects' [2^18, *objects_end);
 * every slot is below *objects_end. */
void ja_table_ends(uint32_t *kept_end, uint32_t *objects_end);

/* The calling thread's JNIEnv, attaching it as a daemon (and marking it internal) when it is a
 * thread of libddmc that has not called before; NULL once the VM is gone. */
JNIEnv *ja_env(void);
/* ja_env inside a new local frame; ja_leave pops it. */
JNIEnv *ja_enter(void);
void ja_leave(JNIEnv *env);
/* Non-zero on a thread ja_env attached (the JDWP thread, the sampler): no events from it. */
int ja_thread_is_internal(void);
void ja_mark_internal(void);

/* Classes the agent tests objects against: global references made once. ja_known_init makes them
 * all, at VMInit or attach, before any event: no FindClass may run inside an event callback (it runs
 * Java code there, see refs.c). ja_known: any attached thread. */
typedef enum ja_known_class {
  JA_KNOWN_CLASS,
  JA_KNOWN_THREAD,
  JA_KNOWN_STRING,
  JA_KNOWN_THROWABLE,
  JA_KNOWN_OBJECT,
  JA_KNOWN_N
} ja_known_class;
jclass ja_known(JNIEnv *env, ja_known_class which);
void ja_known_init(JNIEnv *env);

/* A JVM TI error as the bridge's JDWP error: the two share their numbers. */
static inline int ja_err(jvmtiError e) { return (int)e; }

/* ---- members.c: classes, fields, methods, lines and variables */
typedef struct ja_method {
  jmethodID id;
  int filled;
  char *name, *sig, *generic;
  jint mods;
  jlocation start, end;
  jint args, max_locals;
} ja_method;

typedef struct ja_field {
  jfieldID id;
  int filled;
  char *name, *sig, *generic;
  jint mods;
} ja_field;

/* A class's member tables, one block (ja_members_of). */
typedef struct ja_tables {
  ddmc_class *ifs;
  ja_field *fields;
  ja_method *methods;
} ja_tables;

struct ja_class {
  char *sig, *generic, *source; /* copies of JVM TI's, in the same block; for the life of the process */
  uint8_t type_tag;
  uint32_t mods;
  ddmc_class super;
  ddmc_ref loader;
  jint nif, nfields, nmethods;
  /* The member tables, made when first asked (ja_members_of): a debugger lists every class but
   * looks inside few, and the tables of 100,000 classes held 20 MiB. Set once under members.c's
   * lock (release); ja_members_of's callers read them with ja_tables_of. */
  _Atomic(ja_tables *) tables;
};

static inline ja_tables *ja_tables_of(ja_class *c) { return atomic_load_explicit(&c->tables, memory_order_acquire); }

/* The description of class c, built on first use; NULL with *err set (INVALID_CLASS,
 * CLASS_NOT_PREPARED). */
ja_class *ja_class_of(ddmc_class c, int *err);
/* The description of class c with its member tables made; NULL with *err. */
ja_class *ja_members_of(ddmc_class c, int *err);
/* Method / field index of class c, with its details filled; NULL with *err. */
ja_method *ja_method_of(ddmc_class c, uint32_t index, int *err);
ja_field *ja_field_of(ddmc_class c, uint32_t index, int *err);
/* A JVM TI code position as the bridge's location. */
int ja_location(JNIEnv *env, jmethodID m, jlocation index, ddmc_location *out);
/* Index of field f in class c's table, or -1. */
int32_t ja_field_index(ddmc_class c, jfieldID f);
void ja_bridge_members(ddmc_vm_bridge *b);

/* ---- values.c: objects, arrays, strings and values */
/* A JNI value of JVM type letter t as a bridge value (a reference gets its number, tag 'L'): 0, or
 * OUT_OF_MEMORY when the table cannot name the object (never a null in its place). */
int ja_value_in(JNIEnv *env, char t, jvalue v, ddmc_value *out);
/* A bridge value as a JNI value of type letter t; TYPE_MISMATCH when they do not fit. */
int ja_value_out(char t, const ddmc_value *v, jvalue *out);
void ja_bridge_values(ddmc_vm_bridge *b);

/* ---- threads.c: threads, groups, frames, locals, monitors */
/* The jthread of a DDM thread id, or NULL. */
jthread ja_thread(uint32_t id);
void ja_bridge_threads(ddmc_vm_bridge *b);

/* ---- suspend.c: suspension, the gate around callbacks, the world stopped for a heap walk */
/* Around every JVM TI callback that calls into libddmc (suspend.c, "Suspension"): returns the
 * thread's id (0: none, skip the event). */
uint32_t ja_callback_enter(JNIEnv *env, jthread t);
void ja_callback_leave(uint32_t id);
void ja_bridge_suspend(ddmc_vm_bridge *b);
/* Stops every Java thread but the caller and the agent's and libddmc's own, for a heap walk
 * (suspend.c, "Suspension"); ja_world_resume undoes exactly that. Not nested. */
int ja_world_stop(JNIEnv *env);
void ja_world_resume(void);
/* Runs fn on thread's jthread with the thread suspended through JVM TI, as PopFrame and
 * ForceEarlyReturn want: at once when it is; otherwise (a thread the library holds parked or
 * gated inside a callback, in native code) SuspendThread, fn, ResumeThread: the thread stays
 * where the library holds it. Under the suspension lock. Returns fn's error. */
jvmtiError ja_with_suspended(uint32_t thread, jvmtiError (*fn)(jthread t, void *arg), void *arg);

/* ---- control.c: breakpoints, steps, watches, method and monitor events, interrupt, stop, exit */
int ja_breakpoint_at(jmethodID m, jlocation l);
void ja_bridge_control(ddmc_vm_bridge *b);

/* ---- invoke.c: a method the debugger calls (the bridge's invoke) */
void ja_bridge_invoke(ddmc_vm_bridge *b);

/* ---- mutate.c: RedefineClasses, PopFrame, ForceEarlyReturn */
void ja_bridge_mutate(ddmc_vm_bridge *b);
/* A SingleStep of thread t while pops are pending: pops the next frame and returns 1 (the event
 * is not reported); 0 otherwise. */
int ja_pop_step(JNIEnv *env, jthread t);
/* After RedefineClasses: c's methods' code positions and sizes are read again. */
void ja_class_redefined(ddmc_class c);
/* ---- reflect.c: bytecodes, constant pool, class file version, SourceDebugExtension, modules
 * (each op only where its capability was granted) */
void ja_bridge_reflect(ddmc_vm_bridge *b);

/* ---- events.c: JVM TI callbacks feeding ddmc_post_* */
void ja_events_callbacks(jvmtiEventCallbacks *cb);
/* Events on a thread inside one of the agent's callbacks are not reported (events.c, "Re-entry"),
 * but for a method the debugger calls there: ja_events_pause before it, ja_events_unpause(its
 * result) after. Thread: the calling thread's own state. */
int ja_events_pause(void);
void ja_events_unpause(int was);
/* Enables what the agent always listens to (the rest follows the library's requests). */
int ja_events_enable(void);

/* ---- heap.c: heap walks (with_world_stopped, for_each_object, for_each_root), collect, and
 * allocation tracking from SampledObjectAlloc, ddmc_gc_done after GarbageCollectionFinish */
void ja_bridge_heap(ddmc_vm_bridge *b);
/* ---- hdump.c: heap dumps by HotSpot's own dumper (the bridge's write_hprof), unless
 * DDMC_JDWP_HPROF_WALK=1 */
void ja_bridge_hdump(ddmc_vm_bridge *b);
void ja_heap_callbacks(jvmtiEventCallbacks *cb);
/* After ddmc_vm_new: the tracker's flag. At VMInit: the thread that follows it, and the one that
 * reports the end of each collection. */
void ja_heap_init(void);
void ja_heap_start(void);
/* HPGC. */
int ja_request_gc(void *vd);

/* ---- memview.c: the memory view ops (instance_counts, instances, referring_objects) */
void ja_bridge_memview(ddmc_vm_bridge *b);

/* ---- ddm.c: the DDM ops (threads and stacks for THST / STKL, exit, log, the JDWP thread) */
void ja_ddm_ops(ddmc_vm_ops *ops);
/* Who the VM is (HELO), from its system properties; before ddmc_vm_start. */
void ja_ddm_ident(void);

/* ---- ddmserver.c: Android's org.apache.harmony.dalvik.ddmc API for the app (agent/java/) */
/* At VMInit or attach, on that thread: libddmcjdwp-ddm.jar next to the .so onto the system class
 * loader's search, DdmServer's natives bound. Without the jar it does nothing (DdmServer then has no peer). */
void ja_ddmserver_start(JNIEnv *env);

#endif
