/* SPDX-License-Identifier: Apache-2.0 */
/* The JVM TI layer's private state and the calls between its files.
 *
 * One ddmc__jvmti hangs on each ddmc_vm (created by the first ddmc_agent_load); it owns the
 * JavaVM, the environments (one per GetEnv), the handle table behind every jobject, the
 * jmethodID / jfieldID table, raw monitors, the agents loaded and the system properties. It
 * reaches the VM only through the bridge every client shares (ddmc_vm_bridge, installed by
 * ddmc_vm_set_bridge), the VM's DDM ops (thread enumeration) and the switches of src/vmctl, and
 * hears the VM's reports as a client of the event hub (client.c).
 *
 * Locks (DDMC_GUARDED_BY marks what each guards). Leaves, none held while an op of the VM, an
 * agent callback or another library lock is called, so a collector that stops the world can
 * never wait for a thread that waits for one of them:
 *   jv->lock       environments' capabilities, per-thread event enables, breakpoints and
 *                  watches; properties
 *   refs.lock      the handle table (read by the collector's root visit)
 *   members.lock   the jmethodID / jfieldID table
 *   susp.lock      the suspension table
 *   each tag table's own lock (tags.c)
 *   each raw monitor's own mutex (an agent's lock, held across anything the agent does)
 * Two are held across a call: susp.op across the VM's suspend_thread / resume_thread, which wait
 * for the target to stop (a VM thread takes it parked; it comes after the debugger's sus_lock when
 * the debugger's count moves: suspend.c), and step_lock across the shared stepping switch of
 * src/vmctl, which never waits for a VM thread (never under jv->lock).
 *
 * Phases move forward only: ONLOAD (agents' Agent_OnLoad) -> START (ddmc_agent_vm_start) ->
 * LIVE (ddmc_agent_vm_init) -> DEAD (ddmc_agent_vm_death). */
#ifndef DDMC_JVMTI_INT_H
#define DDMC_JVMTI_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "common.h"
#include "jvmti/jtypes.h"
#include "jvmti/jvmti_hooks.h"

typedef struct ddmc__jvmti ddmc__jvmti;
typedef struct ddmc__jv_jenv ddmc__jv_jenv;

/* The JavaVM an agent gets: a pointer to this struct is a JavaVM * (its first member is the
 * invoke-interface table). */
typedef struct ddmc__jv_javavm {
  const ddmc__jv_fnptr *functions;
  ddmc__jvmti *jv;
} ddmc__jv_javavm;

/* A JNIEnv: one per OS thread that calls in (thread-local), first member the JNI table. */
typedef struct ddmc__jv_jnienv {
  const ddmc__jv_fnptr *functions;
  ddmc__jvmti *jv;
  jobject pending; /* a pending exception (a local ref), or NULL */
} ddmc__jv_jnienv;

/* Per-thread enables of one environment (SetEventNotificationMode with a thread). */
typedef struct ddmc__jv_thread_enable {
  uint32_t thread;
  uint8_t ev; /* event - 50 */
} ddmc__jv_thread_enable;

#define DDMC__MAX_THREAD_ENABLES 256

/* An environment's watch of a field (debug.c). */
typedef struct ddmc__jv_jwatch {
  ddmc_class cls;
  uint32_t field;
  unsigned kinds; /* DDMC_WATCH_ACCESS | _MODIFY */
} ddmc__jv_jwatch;

/* Per environment: breakpoints and watched fields at most (SetBreakpoint, Set*Watch answer
 * OUT_OF_MEMORY past them). Threads stepped for agents at most. */
#define DDMC__MAX_ENV_BPS 1024
#define DDMC__MAX_ENV_WATCHES 1024
#define DDMC__MAX_STEP_THREADS 4096
/* A class file counts its fields, methods and interfaces in a u2: a VM that answers more for one
 * class is not trusted further (what is walked or copied stops there). */
#define DDMC__JV_CLASS_COUNT_MAX 65535u
/* Superclass chains followed at most: deeper than any real hierarchy, so a VM whose class_info
 * answers a cycle cannot hold a JNI lookup forever. */
#define DDMC__JV_MAX_SUPER_DEPTH 256

struct ddmc__jv_jenv {
  const ddmc__jv_fnptr *functions; /* first: a jvmtiEnv * points here */
  ddmc__jvmti *jv;
  atomic_int disposed;
  ddmc__jv_caps caps DDMC_GUARDED_BY(jv->lock); /* what this environment holds (AddCapabilities) */
  /* Callbacks, replaced whole by SetEventCallbacks under jv->lock; read by event threads with
   * one relaxed load per slot. */
  _Atomic(ddmc__jv_fnptr) cb[DDMC__JEV_COUNT];
  atomic_uchar global[DDMC__JEV_COUNT];        /* enabled for every thread */
  atomic_int nthread_enables[DDMC__JEV_COUNT]; /* entries of te[] for this event */
  ddmc__jv_thread_enable te[DDMC__MAX_THREAD_ENABLES] DDMC_GUARDED_BY(jv->lock);
  uint32_t nte DDMC_GUARDED_BY(jv->lock);
  _Atomic(void *) local_storage;
  /* What this environment set (debug.c), under jv->lock: its events come only from these. */
  ddmc_location bps[DDMC__MAX_ENV_BPS] DDMC_GUARDED_BY(jv->lock);
  uint32_t nbps DDMC_GUARDED_BY(jv->lock);
  ddmc__jv_jwatch watches[DDMC__MAX_ENV_WATCHES] DDMC_GUARDED_BY(jv->lock);
  uint32_t nwatches DDMC_GUARDED_BY(jv->lock);
  ddmc__jv_jenv *next; /* every environment ever made; freed with the VM */
  /* ---- heap (tags.c): the environment's weak tag table, made at its first SetTag (published
   * with a release store, never replaced; freed with the VM). */
  _Atomic(struct ddmc__jv_tags *) tags;
};

typedef struct ddmc__jv_agent {
  void *handle;
  char *path;
  struct ddmc__jv_agent *next;
} ddmc__jv_agent;

typedef struct ddmc__jv_prop {
  char *key, *value;
} ddmc__jv_prop;

/* ---- handles (refs.c): jobject = the index of a cell (+1) and its generation. */
enum { DDMC__CELL_FREE = 0, DDMC__CELL_LOCAL = 1, DDMC__CELL_GLOBAL = 2, DDMC__CELL_WEAK = 3 };

typedef struct ddmc__jv_cell {
  ddmc_ref ref;    /* the object (a class's class object for a class, or 0) */
  ddmc_class cls;  /* a class handle: the class it names (0: not a class handle) */
  uint32_t thread; /* a thread handle: the VM thread (0: unknown) */
  uint32_t gen;    /* bumped at each reuse: a stale handle names nothing */
  uint32_t next;   /* free list: index + 1 */
  uint8_t scope;   /* DDMC__CELL_* */
} ddmc__jv_cell;

typedef struct ddmc__jv_refs {
  pthread_mutex_t lock;
  ddmc__jv_cell *cells DDMC_GUARDED_BY(lock);
  uint32_t n DDMC_GUARDED_BY(lock), cap DDMC_GUARDED_BY(lock), free_head DDMC_GUARDED_BY(lock),
      live DDMC_GUARDED_BY(lock);
  uint32_t max; /* the bound: past it a new handle is NULL (OUT_OF_MEMORY) */
} ddmc__jv_refs;

/* ---- methods and fields (members.c): jmethodID / jfieldID = index (+1) << 1 | is_field. */
typedef struct ddmc__jv_member {
  ddmc_class cls;
  uint32_t index;
  uint8_t is_field;
} ddmc__jv_member;

typedef struct ddmc__jv_members {
  pthread_mutex_t lock;
  ddmc__jv_member *v DDMC_GUARDED_BY(lock);
  uint32_t n DDMC_GUARDED_BY(lock), cap DDMC_GUARDED_BY(lock);
  uint32_t *hash DDMC_GUARDED_BY(lock); /* index + 1, open addressing */
  uint32_t hash_cap DDMC_GUARDED_BY(lock);
} ddmc__jv_members;

/* ---- suspension (suspend.c): the one place the VM's suspend_thread / resume_thread are called
 * once agents are loaded, for agents' SuspendThread and the debugger's counts alike. Per thread:
 * agent (JVM TI suspended it: one flag, JVM TI suspension does not nest), dbg (the debugger's
 * count is above 0 and it asked the VM to stop the thread), vm (suspend_thread was called and
 * not yet undone), self (the thread suspended itself and waits in SuspendThread). The VM is asked
 * to stop a thread when the first of agent / dbg is set, to let it go when the last is cleared. */
typedef struct ddmc__jv_susp_entry {
  uint32_t thread;
  uint8_t agent, dbg, vm, self;
} ddmc__jv_susp_entry;

#define DDMC__MAX_SUSP 1024

typedef struct ddmc__jv_susp {
  pthread_mutex_t op;   /* serialises transitions; held across suspend_thread / resume_thread */
  pthread_mutex_t lock; /* the table (a leaf) */
  pthread_cond_t cv;    /* a self-suspended thread's hold went (waited on with lock) */
  ddmc__jv_susp_entry v[DDMC__MAX_SUSP] DDMC_GUARDED_BY(lock);
  uint32_t n DDMC_GUARDED_BY(lock);
} ddmc__jv_susp;

int ddmc__jv_susp_init(ddmc__jv_susp *s);
void ddmc__jv_susp_destroy(ddmc__jv_susp *s);

struct ddmc__jvmti {
  ddmc_vm *vm;
  const ddmc__mem *mem;
  const ddmc_vm_bridge *bridge; /* the VM bridge (NULL: the VM set none) */
  void *bridge_data;
  ddmc__jv_javavm javavm;
  atomic_int phase;
  pthread_mutex_t lock;
  _Atomic(ddmc__jv_jenv *) envs; /* newest first; published whole (an env is never unlinked) */
  ddmc__jv_agent *agents;        /* in load order */
  ddmc__jv_prop *props DDMC_GUARDED_BY(lock);
  uint32_t nprops DDMC_GUARDED_BY(lock);
  /* Per event: environments that enabled it (globally or for some thread). The hub's
   * one-read test; ddmc_event_wanted answers from it too. */
  atomic_int want[DDMC__JEV_COUNT];
  atomic_int method_events_on; /* the VM's method events switched on for agents */
  atomic_int monitor_events_on; /* the VM's monitor events switched on for agents */
  /* Threads the VM steps for agents (debug.c); step_lock orders the changes and is held across
   * the shared switch (src/vmctl), never under jv->lock. */
  pthread_mutex_t step_lock;
  uint32_t step[DDMC__MAX_STEP_THREADS] DDMC_GUARDED_BY(step_lock);
  uint32_t nstep DDMC_GUARDED_BY(step_lock);
  ddmc__jv_refs refs;
  ddmc__jv_members members;
  ddmc__jv_susp susp; /* suspend.c */
};

/* ---- base.c */
ddmc__jvmti *ddmc__jv_get(const ddmc_vm *vm);
/* ---- agents.c: creates the layer's state on first use (VM init thread). */
int ddmc__jv_ensure(ddmc_vm *vm, ddmc__jvmti **out);

/* ---- env.c */
jint ddmc__jv_get_env(ddmc__jvmti *jv, void **penv, jint version);
/* Is the event on for env on thread? */
int ddmc__jv_jenv_enabled(ddmc__jv_jenv *e, int ev, uint32_t thread);
static inline int ddmc__jv_cap_has(const ddmc__jv_caps *c, int bit) { return (c->w[bit / 32] >> (bit % 32)) & 1u; }
static inline void ddmc__jv_cap_set(ddmc__jv_caps *c, int bit) { c->w[bit / 32] |= 1u << (bit % 32); }

/* Maps a JDWP error from a bridge op to the JVM TI error (same numbers for the shared ones). */
jvmtiError ddmc__jv_err(int jdwp);
/* Allocates n bytes as JVM TI's Allocate does (the agent frees with Deallocate). */
void *ddmc__jv_alloc(size_t n);
char *ddmc__jv_strdup(const char *s);

/* ---- refs.c */
int ddmc__jv_refs_init(ddmc__jv_refs *r);
void ddmc__jv_refs_destroy(ddmc__jv_refs *r, const ddmc__mem *mem);
/* A new local handle for ref (NULL for ref 0 or when full). cls / thread when known. */
jobject ddmc__jv_ref_local(ddmc__jvmti *jv, ddmc_ref ref, ddmc_class cls, uint32_t thread);
jobject ddmc__jv_ref_new(ddmc__jvmti *jv, int scope, ddmc_ref ref, ddmc_class cls, uint32_t thread);
/* What a handle names: 0 (valid cell) or JVMTI_ERROR_INVALID_OBJECT. */
int ddmc__jv_ref_get(ddmc__jvmti *jv, jobject h, ddmc__jv_cell *out);
void ddmc__jv_ref_delete(ddmc__jvmti *jv, jobject h, int scope);
/* Local frames of the calling thread: a callback's locals go when it returns. */
uint32_t ddmc__jv_ref_frame_push(void);
void ddmc__jv_ref_frame_pop(ddmc__jvmti *jv, uint32_t mark);
/* The collector's visit (ddmc_gc_visit_roots). */
void ddmc__jv_refs_visit(ddmc__jvmti *jv, ddmc_root_visit_fn fn, void *arg);
/* A class handle: the class's class object when it has one. */
jclass ddmc__jv_class_local(ddmc__jvmti *jv, ddmc_class c);
int ddmc__jv_class_of(ddmc__jvmti *jv, jclass h, ddmc_class *out);
/* The VM thread a jthread names (NULL: the calling thread). */
int ddmc__jv_thread_of(ddmc__jvmti *jv, jthread h, uint32_t *out);
jthread ddmc__jv_thread_local(ddmc__jvmti *jv, uint32_t thread);

/* ---- members.c */
int ddmc__jv_members_init(ddmc__jv_members *m);
void ddmc__jv_members_destroy(ddmc__jv_members *m, const ddmc__mem *mem);
jmethodID ddmc__jv_method_id(ddmc__jvmti *jv, ddmc_class c, uint32_t index);
jfieldID ddmc__jv_field_id(ddmc__jvmti *jv, ddmc_class c, uint32_t index);
int ddmc__jv_method_of(ddmc__jvmti *jv, jmethodID m, ddmc_class *c, uint32_t *index);
int ddmc__jv_field_of(ddmc__jvmti *jv, jfieldID f, ddmc_class *c, uint32_t *index);

/* ---- jni.c */
/* The calling thread's JNIEnv for jv. */
ddmc__jv_jnienv *ddmc__jv_jni_env(ddmc__jvmti *jv);

/* ---- table.c: the jvmtiInterface_1_ table, 156 slots in JDK 17 (index = slot - 1), room for
 * a few more. */
#define DDMC__JVMTI_SLOTS 160

/* ---- base.c: the calling OS thread: which VM thread it is, for GetCurrentThread. */
void ddmc__jv_set_self(uint32_t thread);
uint32_t ddmc__jv_self(void);

/* ---- the agents' events, as the event hub hands them on (client.c calls them) */

/* hub.c. Does some agent want events of this JDWP kind (ddmc_event_wanted)? */
int ddmc__jv_hub_wants(const ddmc_vm *vm, int jdwp_kind);
void ddmc__jv_hub_thread(ddmc_vm *vm, uint32_t thread, int start);
void ddmc__jv_hub_class_prepare(ddmc_vm *vm, uint32_t thread, ddmc_class c);
void ddmc__jv_hub_location(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, unsigned flags);
/* by_exception: the frame was popped by an exception (JVM TI reports it, JDWP does not). */
void ddmc__jv_hub_method_exit(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, const ddmc_value *ret,
                           int by_exception);
/* Exception (catch_loc NULL: uncaught) and ExceptionCatch (loc: the handler). */
void ddmc__jv_hub_exception(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, ddmc_ref exc,
                         const ddmc_location *catch_loc);
void ddmc__jv_hub_exception_catch(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, ddmc_ref exc);
/* FieldAccess (new_value NULL) or FieldModification of field of c in object (0: a static). */
void ddmc__jv_hub_field(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, ddmc_class c, uint32_t field,
                     ddmc_ref object, const ddmc_value *new_value);

/* suspend.c: the suspension arbiter (vmctl/switches.h). The debugger's count of thread went
 * 0 -> 1 (suspend = 1) or back (0): the VM is asked only when the agents' hold and the
 * debugger's together go from none to some or back, so a thread both suspended stays stopped
 * until both let go. Returns the op's JDWP error (NOT_IMPLEMENTED without the op). */
int ddmc__jv_susp_debugger(ddmc_vm *vm, uint32_t thread, int suspend);
/* hub_monitor.c: monitor events for agents (the post calls' first half). */
void ddmc__jv_hub_monitor(ddmc_vm *vm, int jdwp_kind, uint32_t thread, ddmc_ref object, int64_t arg);

/* hub_heap.c: the GC hooks, as the event hub hands them on. GC thread. */
void ddmc__jv_hub_gc_start(ddmc_vm *vm);
void ddmc__jv_hub_gc_sweep(ddmc_vm *vm, ddmc_gc_is_live_fn is_live, void *arg);
/* GarbageCollectionFinish then ObjectFree. */
void ddmc__jv_hub_gc_done(ddmc_vm *vm);
/* VMObjectAlloc for an object the VM made itself (ddmc_alloc_object). The allocating thread. */
void ddmc__jv_hub_alloc(ddmc_vm *vm, uint32_t thread, ddmc_ref obj, ddmc_class cls, uint64_t bytes, int by_vm);
/* client.c: subscribes the layer to the event hub and makes it the suspension arbiter. */
int ddmc__jv_subscribe(ddmc_vm *vm);


#endif
