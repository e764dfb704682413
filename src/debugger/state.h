/* SPDX-License-Identifier: Apache-2.0 */
/* The debugger's state, for the files that keep it (ids.c, threads.c, events.c, step.c,
 * table.c). Command handlers use the accessors and functions of dbg_int.h instead. */
#ifndef DDMC_DBG_STATE_H
#define DDMC_DBG_STATE_H

#include "debugger/dbg_int.h"

/* ---- registry (ids.c) */
enum { DDMC__SLOT_FREE = 0, DDMC__SLOT_OBJECT = 1, DDMC__SLOT_CLASS = 2 };

typedef struct ddmc__dbg_slot {
  uint32_t gen;   /* generation of the current occupant; IDs carry it */
  uint8_t kind;   /* DDMC__SLOT_* */
  uint8_t collected; /* the VM's sweep found the object dead: out of the hash, key stale; the ID
                        answers INVALID_OBJECT until disposed or the session ends */
  int32_t pins;   /* DisableCollection less EnableCollection: held strong while above 0 */
  int32_t refs;   /* times the ID was sent (DisposeObjects counts down) */
  uint64_t key;   /* the ddmc_ref or ddmc_class */
  ddmc__dbg_cls *cls; /* DDMC__SLOT_CLASS */
  uint32_t next_free;
} ddmc__dbg_slot;

typedef struct ddmc__dbg_ids {
  pthread_mutex_t lock;
  ddmc__dbg_slot *slots DDMC_GUARDED_BY(lock); /* grows; slot i has ID (gen << 32) | (i + 1) */
  uint32_t nslots DDMC_GUARDED_BY(lock), cap DDMC_GUARDED_BY(lock);
  uint32_t free_head DDMC_GUARDED_BY(lock); /* index + 1 of the first free slot, 0 = none */
  uint32_t *hash DDMC_GUARDED_BY(lock);     /* open addressing, linear probing: slot index + 1, 0 = empty */
  uint32_t hash_cap DDMC_GUARDED_BY(lock);  /* power of two */
  uint32_t count DDMC_GUARDED_BY(lock);     /* occupied slots */
  uint32_t next_gen DDMC_GUARDED_BY(lock);
  uint32_t max_slots; /* the bound: past it, OUT_OF_MEMORY; set at init */
} ddmc__dbg_ids;

int ddmc__dbg_ids_init(ddmc__dbg_ids *ids);
/* Frees every slot and description (session end), then tells the VM through bridge.release_ref of
 * each object it held (outside the lock). Thread: JDWP thread. */
void ddmc__dbg_ids_reset(ddmc__dbg *d);
void ddmc__dbg_ids_destroy(ddmc__dbg *d);
/* ddmc_gc_visit_roots: the objects the registry holds strong (every object with an ID on a VM
 * without bridge.release_ref; only the DisableCollection'd ones on a VM with it, whose names are
 * weak); a moved reference is rehashed. GC thread. */
void ddmc__dbg_ids_visit_roots(ddmc__dbg *d, ddmc_root_visit_fn fn, void *arg);
/* ddmc_gc_sweep, on a VM with bridge.release_ref: every unpinned object the collector frees is marked
 * collected (its ID answers INVALID_OBJECT; ObjectReference.IsCollected says true). No allocation,
 * no op, only the registry's lock. GC thread, world stopped. */
void ddmc__dbg_ids_sweep(ddmc__dbg *d, ddmc_gc_is_live_fn is_live, void *arg);

/* ---- threads (threads.c) */
/* One thread's entry. Its members are guarded by the table's lock (ddmc__dbg_thrs.lock, "thr.lock"
 * below); count changes only with sus_lock held as well, and vm_suspended is sus_lock's alone. */
typedef struct ddmc__dbg_thr {
  uint32_t id;                                /* VM thread id; set when the entry is made */
  int32_t count DDMC_GUARDED_BY(thr.lock);    /* debugger suspend count (changed under sus_lock too) */
  uint32_t epoch DDMC_GUARDED_BY(thr.lock);   /* bumped when count returns to 0: frameIDs of the old epoch are dead */
  uint8_t vm_suspended DDMC_GUARDED_BY(thr.sus_lock); /* the debugger had the VM stop it (ddmc__ctl_suspend) */
  uint8_t parking DDMC_GUARDED_BY(thr.lock); /* an event raised its count and it is on its way to park: a
                                                call may be handed to it already (it takes it when it parks) */
  uint8_t parked DDMC_GUARDED_BY(thr.lock);  /* inside a ddmc_post_* call, waiting for count 0 (not while it
                                                runs a call there: it is running then, and a Suspend stops it
                                                the VM's way) */
  uint8_t dead DDMC_GUARDED_BY(thr.lock);
  uint8_t invoking DDMC_GUARDED_BY(thr.lock);      /* method calls for the debugger it is running (nested: an
                                                      event inside a call parks it again, and the debugger may
                                                      call from there) */
  ddmc_ref object DDMC_GUARDED_BY(thr.lock);       /* its java.lang.Thread, once seen */
  struct ddmc__dbg_job *job DDMC_GUARDED_BY(thr.lock); /* a method call handed to it, not yet started */
} ddmc__dbg_thr;

/* A method call the debugger asked a parked thread to make (ClassType / InterfaceType /
 * ObjectReference.InvokeMethod); answered by that thread when the call ends. */
typedef struct ddmc__dbg_job ddmc__dbg_job;
struct ddmc__dbg_job {
  /* Called by the parked thread (cmd_invoke.c): makes the call, answers, frees the job. */
  void (*run)(struct ddmc__dbg *d, uint32_t thread, ddmc__dbg_job *job);
  ddmc_class cls;
  uint32_t method;
  ddmc_ref this_obj;
  int options;
  uint32_t id, session; /* the request to answer */
  uint32_t gen;         /* d->gen when the request came: the session that asked */
  int error;            /* non-zero: the call is not made, the request is answered with this */
  int32_t own;          /* the thread's count the call took (its one resume, then the rest to 0), given back after */
  int all_taken;        /* a suspend-all in force was lifted for the call */
  int32_t nargs;
  ddmc_value args[];
};

typedef struct ddmc__dbg_thrs {
  /* Every change of a suspend count, and the stop or release in the VM it causes
   * (ddmc__ctl_suspend: bridge.suspend_thread / resume_thread, or JVM TI's arbiter when agents are
   * loaded), happens under sus_lock, so those calls never cross for one thread. It is the one
   * lock of this layer held across ops calls (the VM waits there for a thread to stop): a VM
   * thread that wants it declares itself parked first (bridge.thread_parking), so the VM never waits
   * for a thread that waits for sus_lock. Order: sus_lock, then lock (or JVM TI's susp.op). */
  pthread_mutex_t sus_lock;
  pthread_mutex_t lock;     /* the table, each entry's members, all_count */
  pthread_cond_t parked_cv; /* parked threads wait here (with lock) for their count to reach 0 */
  ddmc__dbg_thr **v DDMC_GUARDED_BY(lock); /* entries, never moved or freed during a session */
  uint32_t n DDMC_GUARDED_BY(lock), cap DDMC_GUARDED_BY(lock);
  uint32_t *hash DDMC_GUARDED_BY(lock); /* thread id -> index + 1 */
  uint32_t hash_cap DDMC_GUARDED_BY(lock);
  /* Suspend-alls in force (VirtualMachine.Suspend, events with policy ALL, less Resumes): a
   * thread first seen meanwhile starts with this count, as HotSpot's agent gives a thread that
   * starts while the VM is suspended; under lock. */
  int32_t all_count DDMC_GUARDED_BY(lock);
  /* Every thread's count plus all_count, written under lock: 0 means no thread is held, so a
   * post call (every method event of a trace) passes ddmc__dbg_thr_wait_resumed without a lock. */
  atomic_int held;
} ddmc__dbg_thrs;

int ddmc__dbg_thrs_init(ddmc__dbg_thrs *t);
void ddmc__dbg_thrs_destroy(ddmc__dbg *d);
/* Session end: every count to 0, VM-suspended threads resumed, parked ones woken. JDWP thread. */
void ddmc__dbg_thrs_release_all(ddmc__dbg *d);
/* An event with policy 1 (EVENT_THREAD) or 2 (ALL) is about to be queued by thread: counts go up
 * (and the other threads are stopped for ALL) before the debugger can see the event. The caller
 * has called bridge.thread_parking(thread, 1). Returns 0 or a JDWP error. */
int ddmc__dbg_thr_event_suspend(ddmc__dbg *d, uint32_t thread, int policy);
/* The event could not be queued: undoes ddmc__dbg_thr_event_suspend. */
void ddmc__dbg_thr_event_undo(ddmc__dbg *d, uint32_t thread, int policy);
/* Session end: forgets the thread objects learnt (their IDs die with the registry). */
void ddmc__dbg_thrs_forget(ddmc__dbg *d);
/* Waits, inside the post call, until the thread's count is back to 0 or the debugger left. */
void ddmc__dbg_thr_park(ddmc__dbg *d, uint32_t thread);
/* At the start of a post call: a thread the debugger holds suspended that the VM did not stop
 * (one that started during a suspend-all) waits here, parked, before it reports anything; its
 * event would otherwise reach the debugger while it inspects the stopped VM, and the Resume of
 * that event set would resume everything. Outside the inflight count. */
void ddmc__dbg_thr_wait_resumed(ddmc__dbg *d, uint32_t thread);
/* Hands a method call to thread, which an event suspended: parked in its post call, or about to
 * park there (its count was raised before the event was queued, so a debugger that calls the
 * instant the event arrives finds it here; the thread takes the call when it parks).
 * INVALID_THREAD otherwise, ALREADY_INVOKING while it runs one. Takes job on success. JDWP
 * thread. */
int ddmc__dbg_thr_invoke(ddmc__dbg *d, uint32_t thread, ddmc__dbg_job *job);
/* Around the call, on the invoking thread. Begin: its own count to 0 for the call (JDWP resumes
 * the thread; an event inside the call is then matched, reported and parks it like any other),
 * and, for a call that is not single-threaded, the other threads' counts down by one (those above
 * 0) and a suspend-all in force lifted. End: all of it given back, the others suspended again;
 * only if the session that asked is still the live one (job->gen): a debugger that left during the
 * call must find, and leave, every thread running. */
void ddmc__dbg_thr_invoke_begin(ddmc__dbg *d, uint32_t thread, ddmc__dbg_job *job, int all);
void ddmc__dbg_thr_invoke_end(ddmc__dbg *d, uint32_t thread, ddmc__dbg_job *job, int all);

/* ---- requests (requests.h, cmd_event.c, events.c) */
typedef struct ddmc__dbg_reqs ddmc__dbg_reqs;
typedef struct ddmc__dbg_step ddmc__dbg_step;
int ddmc__dbg_reqs_init(ddmc__dbg *d);
void ddmc__dbg_reqs_destroy(ddmc__dbg *d);
/* Session end: clears every request (breakpoints, steps, method events undone). JDWP thread. */
void ddmc__dbg_reqs_clear_all(ddmc__dbg *d);
/* After RedefineClasses of cls: its breakpoint requests are dropped (the VM cleared them), as the
 * JDK's agent does. JDWP thread. */
void ddmc__dbg_reqs_redefined(ddmc__dbg *d, ddmc_class cls);
/* After PopFrames on thread: its step request, if any, starts again from the frame the thread now
 * stands in (the one that will re-execute its call). JDWP thread, the thread suspended. */
void ddmc__dbg_reqs_popped(ddmc__dbg *d, uint32_t thread);
/* VM_START for a session that just began (SUSPEND_ALL with suspend_all). JDWP thread. */
void ddmc__dbg_events_vm_start(ddmc__dbg *d, int suspend_all);
/* HoldEvents (on) / ReleaseEvents (off: what was held is queued, in order). JDWP thread. */
void ddmc__dbg_events_hold(ddmc__dbg *d, int on);
/* Session end: waits until no VM thread is matching or encoding an event. JDWP thread. */
void ddmc__dbg_events_quiesce(ddmc__dbg *d);
/* Subscribes d to the event hub (ddmc_dbg_enable). */
int ddmc__dbg_events_subscribe(ddmc_vm *vm, ddmc__dbg *d);

/* ---- steps (step.c) */
struct ddmc__dbg_step {
  int size, depth; /* JDWP StepSize (0 MIN, 1 LINE), StepDepth (0 INTO, 1 OVER, 2 OUT) */
  ddmc_location start;
  int32_t start_depth;
  int32_t start_line;
};
/* The line of loc (-1 unknown), from a cache of line tables. Thread: any. */
int32_t ddmc__dbg_line_of(ddmc__dbg *d, const ddmc_location *loc);
/* Non-zero when a step started as s ends at loc / depth. Thread: the stepping thread. */
int ddmc__dbg_step_stops(ddmc__dbg *d, const ddmc__dbg_step *s, const ddmc_location *loc, int32_t depth);
/* After a step ended at loc / depth: the next one starts there. Thread: the stepping thread. */
void ddmc__dbg_step_restart(ddmc__dbg *d, ddmc__dbg_step *s, const ddmc_location *loc, int32_t depth);
/* After RedefineClasses of cls: its methods' cached line tables are unlinked (new lookups ask the
 * VM again) and kept until the session ends, since a stepping thread may be reading one without a
 * lock. JDWP thread. */
void ddmc__dbg_lines_forget(ddmc__dbg *d, ddmc_class cls);
/* VirtualMachine.SetDefaultStratum: steps by line in a class with an SMAP move by that stratum's
 * lines from now on, where the SMAP has it (smap.c); "" changes nothing, as under libjdwp.
 * Thread: the JDWP thread. */
void ddmc__dbg_lines_set_stratum(ddmc__dbg *d, const char *stratum);
/* The line of stratum that Java line j of a class with SMAP smap (n bytes) maps to, as
 * (file ID << 16) | line, or -1 when it maps to none (smap.c). Thread: any. */
int32_t ddmc__dbg_smap_line(const char *smap, size_t n, const char *stratum, int32_t j);
/* The stratum a step in a class with SMAP smap moves by: want when the SMAP has a section for it,
 * else the SMAP's default; copied into out (cap bytes). 0 when that stratum has no section: the
 * class keeps its own lines. Thread: any. */
int ddmc__dbg_smap_pick(const char *smap, size_t n, const char *want, char *out, size_t cap);
/* ClassPrepare's SourceNameMatch as libjdwp evaluates it in a class with an SMAP: 1 when pattern
 * (requests.h's restricted form) matches one of its source names, the output file (the SMAP's
 * second line, the Java stratum's file) or a file of any stratum's "*F" section; 0 otherwise or
 * when smap is no complete SMAP ("SMAP" first, "*E" last). Thread: any. */
int ddmc__dbg_smap_names_match(const char *smap, size_t n, const char *pattern);
int ddmc__dbg_lines_init(ddmc__dbg *d);
void ddmc__dbg_lines_reset(ddmc__dbg *d);
void ddmc__dbg_lines_destroy(ddmc__dbg *d);

/* ---- sessions (session.c): the service hooks of jdwp/service.h. JDWP thread. */
void ddmc__dbg_session_start(ddmc_vm *vm, void *ud);
void ddmc__dbg_session_end(ddmc_vm *vm, void *ud);

/* ---- the whole */
typedef struct ddmc__dbg_lines ddmc__dbg_lines;

/* Composites HoldEvents keeps, in bytes: a debugger that holds events and never releases them
 * costs the VM at most this; past it a post answers DDMC_EQFULL. */
#define DDMC__HELD_MAX ((size_t)1 << 20)
#define DDMC__MAX_SMAP ((size_t)1 << 20) /* a longer SourceDebugExtension is left alone */
#define DDMC__MAX_STRATUM 256 /* SetDefaultStratum: a longer name is ILLEGAL_ARGUMENT */

/* Event kinds are below 128 (the largest, VM_DEATH, is 99): want[] has one counter for each. */
#define DDMC__EV_KINDS 128

struct ddmc__dbg {
  ddmc_vm *vm;
  ddmc_vm_bridge bridge;
  void *vm_data;
  const ddmc__mem *mem;
  atomic_int connected; /* a debugger session is live */
  atomic_uint gen;      /* moves on at every session end: a call tells whether its session lives */
  atomic_uint resumes;  /* VirtualMachine.Resume commands so far (a dying VM waits for one) */
  atomic_int inflight;  /* VM threads inside a post call, before any park: session end waits
                           for 0 before it frees what they may be reading */
  atomic_int raising;   /* posts between raising counts and queuing their packet (settle) */
  uint32_t session;     /* written by the JDWP thread at session start, before events are matched */
  uint32_t cur_id;      /* the request being handled (JDWP thread only): deferred replies name it */
  atomic_int want[DDMC__EV_KINDS]; /* enabled requests per event kind (ddmc_event_wanted) */
  /* Enabled requests of the kinds the hub's hot reports carry (single step, breakpoint, method
   * entry and exits): the hub skips the debugger's location and method-exit entries while this
   * and thr.held are both 0. */
  atomic_int hot_wants;
  ddmc__dbg_ids ids;
  ddmc__dbg_thrs thr;
  ddmc__dbg_reqs *req;
  ddmc__dbg_lines *lines;
  /* VirtualMachine.HoldEvents: composites wait here ([u4 n][n bytes] each) until released. */
  pthread_mutex_t hold_lock;
  atomic_int holding; /* written under hold_lock; read without it first, then again under it */
  ddmc_buf held DDMC_GUARDED_BY(hold_lock);
  int suspend_on_start; /* suspend=y: the first session's VM_START suspends all */
  int started_once;
};

#endif
