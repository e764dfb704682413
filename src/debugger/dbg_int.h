/* SPDX-License-Identifier: Apache-2.0 */
/* The debugger layer's private declarations: the ID registry, the wire codecs every command
 * handler uses, thread suspension, the handler shape and the state's accessors (state.h has the
 * state itself, requests.h the event requests).
 *
 * Layering: this layer is one client of the floor every client shares. It registers a service
 * for command sets 1-18 with the JDWP thread (src/jdwp/service.h) and sends through
 * src/send/send.h; it calls the VM through the bridge ddmc_vm_set_bridge installed for every
 * client (ddmc_vm_bridge), hears the VM's reports as a client of the event hub (src/hub, the
 * subscription at the bottom of events.c), and shares the VM's switches and thread suspension
 * with the other clients through src/vmctl (ddmc__ctl_*, ddmc__ctl_suspend). Nothing below it
 * includes this header.
 *
 * Threads and locks (see README.md here): the JDWP thread runs every command handler; VM threads
 * run the hub's calls into events.c. Leaf locks, never nested and never held across an op call,
 * a send or a wait for another thread: ids.lock (the registry), thr.lock (the thread table and
 * parked flags; its condition variable parks event threads), req.lock (taking the request
 * snapshot), lines.lock (the line-table cache), hold_lock (HoldEvents). One exception,
 * thr.sus_lock: every suspend-count change and the stop or release in the VM it causes
 * (ddmc__ctl_suspend: the bridge's suspend_thread / resume_thread, or JVM TI's arbiter) run under
 * it, so it is held across those calls, which wait for a VM thread to stop; a VM thread that
 * wants it declares itself parked first (bridge.thread_parking). Order: sus_lock, then thr.lock (and,
 * through the arbiter, JVM TI's susp.op). */
#ifndef DDMC_DBG_INT_H
#define DDMC_DBG_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "common.h"
#include "ddmc/debugger.h"

typedef struct ddmc__dbg ddmc__dbg;

/* ---- the registry (ids.c): wire IDs for objects and reference types.
 * An ID is (generation << 32) | (slot + 1): a slot freed by DisposeObjects or reset at disconnect
 * gets a new generation, so an old ID never names the new occupant. How objects with an ID are
 * held: strong (GC roots, ddmc_gc_visit_roots) on a VM without bridge.release_ref; weak, as the
 * JDK's agent holds them, on a VM with it: strong only while DisableCollection is in force
 * (bridge.hold_ref), and released (bridge.release_ref) when disposed or at session end. */
typedef struct ddmc__dbg_cls {
  ddmc_class handle;
  uint64_t id;     /* its referenceTypeID */
  char *signature; /* copied JNI signature */
  char *source;    /* copied source file name or NULL */
  uint8_t type_tag;
  uint8_t object_tag; /* tag of its instances: 'L' 's' '[' 't' 'g' 'c' 'l' */
  ddmc_class superclass;
  ddmc_ref class_object; /* its java.lang.Class, or 0 */
  uint32_t nfields, nmethods, ninterfaces;
} ddmc__dbg_cls;

/* The objectID for o (allocating one), 0 for null. Returns 0 on success or a JDWP error
 * (OUT_OF_MEMORY when the registry is full). Thread: any. */
int ddmc__dbg_id_of_object(ddmc__dbg *d, ddmc_ref o, uint64_t *id);
/* The object behind id, or INVALID_OBJECT. id 0 gives 0 (null) and success. Thread: any. */
int ddmc__dbg_object_of_id(ddmc__dbg *d, uint64_t id, ddmc_ref *out);
/* The class behind a referenceTypeID (or the classObjectID of its class object), with its cached
 * description. As libjdwp and JDWP's error list: INVALID_OBJECT for an unknown ID (stale, forged),
 * INVALID_CLASS for null and for the ID of an object that is no class. Thread: any. */
int ddmc__dbg_class_of_id(ddmc__dbg *d, uint64_t id, const ddmc__dbg_cls **out);
/* The cached description of c, registering it (and its referenceTypeID) on first sight.
 * Thread: any. The pointer stays valid until the session ends. */
int ddmc__dbg_cls_get(ddmc__dbg *d, ddmc_class c, const ddmc__dbg_cls **out);
/* k's dotted name ("pkg.Cls$Inner", "int[]": what ClassMatch compares) written into out when out
 * is non-NULL (room for the length + 1); returns its length, SIZE_MAX for an impossible one. */
size_t ddmc__dbg_cls_dotted(const ddmc__dbg_cls *k, char *out);
/* Does k's dotted name match a JDWP class pattern? 0 also when the name cannot be made (no
 * memory). Thread: any. */
int ddmc__dbg_cls_matches(ddmc__dbg *d, const ddmc__dbg_cls *k, const char *pattern);
/* Does c descend from (or equal) ancestor, by superclasses? Thread: any. */
int ddmc__dbg_is_subclass(ddmc__dbg *d, ddmc_class c, ddmc_class ancestor);
/* Is c target, a subclass of it, or an implementor of it (superinterfaces too)? Thread: any; asks the
 * bridge's class_interface, a bounded number of times. */
int ddmc__dbg_is_assignable(ddmc__dbg *d, ddmc_class c, ddmc_class target);
/* DisposeObjects: drops refs reference counts of the ID; at zero the slot is freed, pinned or not
 * (as the JDK's agent does), and the VM told (bridge.release_ref, outside the lock). JDWP thread. */
void ddmc__dbg_id_release(ddmc__dbg *d, uint64_t id, int32_t refs);
/* DisableCollection: one more pin (counted); the first makes the VM hold it strong
 * (bridge.hold_ref). INVALID_OBJECT for an ID that names nothing or a collected object, the VM's
 * error when it cannot; 0 for null, as the JDK's agent answers. JDWP thread. */
int ddmc__dbg_id_disable_collection(ddmc__dbg *d, uint64_t id);
/* EnableCollection: one pin less; the last lets the VM hold it weak again. An ID that names
 * nothing or is not pinned: 0, as the JDK's agent answers. JDWP thread. */
int ddmc__dbg_id_enable_collection(ddmc__dbg *d, uint64_t id);
/* IsCollected: *out 1 when the object is gone (swept, or the VM answers INVALID_OBJECT for it)
 * or the ID names nothing (disposed, stale), as the JDK's agent answers. JDWP thread. */
int ddmc__dbg_id_is_collected(ddmc__dbg *d, uint64_t id, int *out);

/* ---- the wire (codec.c). Readers return 0 or a JDWP error, and leave the reader's sticky
 * error set on truncation: the dispatcher (table.c) answers a request that ran past its end with
 * INVALID_LENGTH and one with bytes left over with ILLEGAL_ARGUMENT, whatever the handler said. */
int ddmc__dbg_rd_object(ddmc__dbg *d, ddmc_reader *r, ddmc_ref *out);
int ddmc__dbg_rd_class(ddmc__dbg *d, ddmc_reader *r, const ddmc__dbg_cls **out);
/* A methodID of c (INVALID_METHODID when out of range); with decl, also one that c inherits
 * (*decl: the declaring class). */
int ddmc__dbg_rd_method(ddmc__dbg *d, ddmc_reader *r, const ddmc__dbg_cls *c, const ddmc__dbg_cls **decl,
                        uint32_t *out);
/* A fieldID names its declaring class too (ObjectReference.GetValues sends none):
 * (low 19 bits of the class ID's generation << 45) | (class slot + 1) << 24 | (index + 1).
 * ddmc__dbg_rd_field gives the declaring class and index; with want set, the field must be declared
 * by want or one of its superclasses (INVALID_FIELDID otherwise, as for a stale or forged ID). */
uint64_t ddmc__dbg_field_id(const ddmc__dbg_cls *c, uint32_t index);
uint64_t ddmc__dbg_method_id(const ddmc__dbg_cls *c, uint32_t index);
int ddmc__dbg_rd_field(ddmc__dbg *d, ddmc_reader *r, const ddmc__dbg_cls *want, const ddmc__dbg_cls **decl,
                       uint32_t *out);
/* The declaring class and index of a field (method 0) or method (1) ID (ids.c): INVALID_FIELDID /
 * INVALID_METHODID when the slot holds no class of that generation or the index is out of range. */
int ddmc__dbg_class_of_member_id(ddmc__dbg *d, uint64_t id, int method, const ddmc__dbg_cls **out, uint32_t *index);
/* threadID: INVALID_OBJECT for an unknown ID, INVALID_THREAD when the object is not a live
 * thread the debugger may see. */
int ddmc__dbg_rd_thread(ddmc__dbg *d, ddmc_reader *r, uint32_t *thread);
/* The JDWP tag of object o: 't' for a java.lang.Thread (or a subclass's instance), 's', '[', ...; 'L'
 * when its class says no more. */
char ddmc__dbg_object_tag(ddmc__dbg *d, ddmc_ref o);
/* frameID of thread: INVALID_FRAMEID when stale (the thread ran since) or unknown;
 * THREAD_NOT_SUSPENDED when the thread is not suspended. */
int ddmc__dbg_rd_frame(ddmc__dbg *d, ddmc_reader *r, uint32_t thread, int32_t *depth);
int ddmc__dbg_rd_location(ddmc__dbg *d, ddmc_reader *r, ddmc_location *out);
/* A value: tagged when tag == 0, otherwise untagged of that signature byte. Object tags come
 * back as 'L'. */
int ddmc__dbg_rd_value(ddmc__dbg *d, ddmc_reader *r, char tag, ddmc_value *out);
/* A JDWP string: [u4 n][n bytes], copied NUL-terminated into out (cap bytes); ILLEGAL_ARGUMENT
 * when longer than cap - 1. */
int ddmc__dbg_rd_string(ddmc_reader *r, char *out, size_t cap);

void ddmc__dbg_wr_string(ddmc_buf *b, const char *s); /* NULL as "" */
void ddmc__dbg_wr_id(ddmc_buf *b, uint64_t id);       /* 8 bytes: every ID size is 8 */
/* A value, tagged or not; references get their objectID and, tagged, the specific tag. */
int ddmc__dbg_wr_value(ddmc__dbg *d, ddmc_buf *b, const ddmc_value *v, int tagged);
int ddmc__dbg_wr_tagged_object(ddmc__dbg *d, ddmc_buf *b, ddmc_ref o);
int ddmc__dbg_wr_location(ddmc__dbg *d, ddmc_buf *b, const ddmc_location *loc);
/* The value tag of a JNI type signature: its first byte, with 'L' for classes and arrays alike
 * ('V' for NULL or an empty one). */
char ddmc__dbg_sig_tag(const char *sig);
/* Size of an untagged value of this signature byte (0 for an unknown tag). */
size_t ddmc__dbg_value_size(char tag);

/* ---- threads (threads.c): the debugger's view of suspension. */
/* The thread's debugger suspend count (0 for an unknown thread). */
int ddmc__dbg_thr_count(ddmc__dbg *d, uint32_t thread);
/* (events.c) Waits (10 ms at most) for the VM threads between raising suspend counts and
 * queuing their event's packet: an event raises its counts before its packet is queued (so that
 * a Resume right after the event finds them raised), and a reply showing a count must not
 * overtake the event that raised it (JDI builds an event set from its request when the
 * packet arrives: a debugger that saw the count and cleared the request first would lose the
 * set, as libjdwp, which sends before it suspends, never lets happen). JDWP thread. */
void ddmc__dbg_events_settle(ddmc__dbg *d);
/* ThreadReference.Suspend / Resume and VirtualMachine.Suspend / Resume. JDWP thread. */
int ddmc__dbg_thr_suspend(ddmc__dbg *d, uint32_t thread);
int ddmc__dbg_thr_resume(ddmc__dbg *d, uint32_t thread);
int ddmc__dbg_thr_suspend_all(ddmc__dbg *d);
int ddmc__dbg_thr_resume_all(ddmc__dbg *d);
/* The frameID for depth of a suspended thread: (epoch << 32) | (depth + 1), the epoch moving on
 * each time the thread's count returns to 0. */
uint64_t ddmc__dbg_frame_id(ddmc__dbg *d, uint32_t thread, int32_t depth);
/* The depth a frameID names: THREAD_NOT_SUSPENDED when the thread's count is 0, INVALID_FRAMEID
 * when the ID is of an earlier epoch or malformed. The depth is not checked against the VM's
 * frame count here (ddmc__dbg_rd_frame does that). */
int ddmc__dbg_frame_check(ddmc__dbg *d, uint32_t thread, uint64_t frame_id, int32_t *depth);
/* The thread's frames changed while it stayed suspended (StackFrame.PopFrames): its epoch moves
 * on, so every frameID handed out for it dies (INVALID_FRAMEID). JDWP thread. */
void ddmc__dbg_thr_frames_moved(ddmc__dbg *d, uint32_t thread);
/* The threadID of VM thread `thread` (its java.lang.Thread's objectID): INVALID_THREAD for an
 * internal thread. Thread: any. */
int ddmc__dbg_thr_id(ddmc__dbg *d, uint32_t thread, uint64_t *id);
/* The VM thread whose java.lang.Thread is o: INVALID_THREAD when o is no live thread a debugger
 * may see. Thread: any. */
int ddmc__dbg_thr_of_object(ddmc__dbg *d, ddmc_ref o, uint32_t *thread);
/* Visits the threads a debugger may see (not internal, alive) until fn returns non-zero. Returns 0
 * or a JDWP error of its own (never fn's value: a visitor keeps its errors). */
typedef int (*ddmc__dbg_thr_visit_fn)(void *arg, uint32_t thread, const ddmc_thread_detail *info);
int ddmc__dbg_thr_for_each(ddmc__dbg *d, ddmc__dbg_thr_visit_fn fn, void *arg);
/* The same threads, for a visitor that reads no more than info->object (the rest is zero): by
 * the bridge's for_each_debuggee_thread when the VM has it. */
int ddmc__dbg_thr_for_each_object(ddmc__dbg *d, ddmc__dbg_thr_visit_fn fn, void *arg);

/* ---- command handlers (cmd_*.c). One shape: read the request from in, write the reply body to
 * out, return a JDWP error (0 = success; on an error the body is dropped). JDWP thread. */
typedef int (*ddmc__dbg_cmd_fn)(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out);
typedef struct ddmc__dbg_cmd {
  uint8_t set, cmd;
  ddmc__dbg_cmd_fn fn;
  const char *name; /* "VirtualMachine.Version" */
  /* Not offered: the capability answered false that keeps a debugger from sending it (fn is then
   * ddmc__dbg_not_offered); NULL for a command that is answered. */
  const char *not_offered_behind;
} ddmc__dbg_cmd;
/* A command set: its number, its name, the files that answer it, and the table that holds most
 * of its commands (see table.c). */
typedef struct ddmc__dbg_cmdset {
  uint8_t set;
  const char *name;
  const char *files;
  const ddmc__dbg_cmd *cmds;
} ddmc__dbg_cmdset;
/* Every set, ended by a row whose name is NULL. */
const ddmc__dbg_cmdset *ddmc__dbg_sets(void);
/* Each file's entries, ended by {0}. */
extern const ddmc__dbg_cmd ddmc__dbg_cmds_vm[]; /* 1 */
extern const ddmc__dbg_cmd
    ddmc__dbg_cmds_type[]; /* 2 ReferenceType, 3 ClassType, 4 ArrayType, 5 InterfaceType, 17 ClassObjectReference */
extern const ddmc__dbg_cmd ddmc__dbg_cmds_method[]; /* 6 Method, 8 Field */
extern const ddmc__dbg_cmd
    ddmc__dbg_cmds_object[]; /* 9 ObjectReference, 10 StringReference, 13 ArrayReference, 14 ClassLoaderReference */
extern const ddmc__dbg_cmd ddmc__dbg_cmds_thread[];  /* 11 ThreadReference, 12 ThreadGroupReference */
extern const ddmc__dbg_cmd ddmc__dbg_cmds_frame[];   /* 16 StackFrame */
extern const ddmc__dbg_cmd ddmc__dbg_cmds_event[];   /* 15 EventRequest */
extern const ddmc__dbg_cmd ddmc__dbg_cmds_monitor[]; /* 9/5, 11/8, 11/9, 11/13: who holds what */
extern const ddmc__dbg_cmd ddmc__dbg_cmds_mutate[]; /* 1/18, 11/14, 16/4: redefine, force return, pop */
extern const ddmc__dbg_cmd ddmc__dbg_cmds_invoke[];  /* 3/3, 3/4, 5/1, 9/6: method calls */
extern const ddmc__dbg_cmd ddmc__dbg_cmds_memview[]; /* 1/21, 2/16, 9/10: the memory view */
/* Has the VM a memory view: its ops, or the heap ops the library walks (cmd_memview.c)? */
int ddmc__dbg_mv_supported(ddmc__dbg *d);
extern const ddmc__dbg_cmd ddmc__dbg_cmds_module[];  /* 1/22, 2/19, 18 ModuleReference */

/* ---- the state (table.c) */
/* A debugger for vm over ops (not yet a service of its JDWP thread nor a client of the hub:
 * ddmc_dbg_enable does all three). Tests and fuzzers use it to drive handlers without a socket. */
int ddmc__dbg_new(ddmc_vm *vm, const ddmc_vm_bridge *bridge, size_t bridge_size, ddmc__dbg **out);
void ddmc__dbg_free(ddmc__dbg *d);
/* Runs one command as the JDWP thread would (the checks of table.c included). Returns the JDWP
 * error; the reply body is in reply. */
int ddmc__dbg_run(ddmc__dbg *d, uint8_t set, uint8_t cmd, const uint8_t *body, size_t len, ddmc_buf *reply);
const ddmc__dbg_cmd *ddmc__dbg_lookup(uint8_t set, uint8_t cmd);
/* What a disconnect does (docs/protocol/jdwp.md §2.7); also VirtualMachine.Dispose. JDWP thread. */
void ddmc__dbg_reset(ddmc__dbg *d);
/* Marks a session live without a peer (tests): events are then matched and queued. */
void ddmc__dbg_set_connected(ddmc__dbg *d, uint32_t session);

/* The state's accessors for handlers, which never see struct ddmc__dbg (access.c). */
const ddmc_vm_bridge *ddmc__dbg_bridge(const ddmc__dbg *d);
void *ddmc__dbg_vm_data(const ddmc__dbg *d);
const ddmc__mem *ddmc__dbg_mem(const ddmc__dbg *d);

/* The field's description, with a non-NULL name and signature (INVALID_FIELDID otherwise);
 * codec.c. */
int ddmc__dbg_field(ddmc__dbg *d, const ddmc__dbg_cls *c, uint32_t field, ddmc_field_info *out);
/* Field values (fields.c): [count][fieldID]* answered with [count][tagged value]*, and
 * [count]([fieldID][value])* stored (all checked before any is stored). Fields of c or its
 * superclasses, of object o, or statics only when o is 0 (an instance field: INVALID_FIELDID). */
int ddmc__dbg_get_fields(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out, const ddmc__dbg_cls *c, ddmc_ref o);
int ddmc__dbg_set_fields(ddmc__dbg *d, ddmc_reader *in, const ddmc__dbg_cls *c, ddmc_ref o);
/* Reads [count] and checks it against the bytes left at min_each bytes per element: INVALID_LENGTH
 * (and the reader's error set) when the request cannot hold them. */
int ddmc__dbg_rd_count(ddmc_reader *r, size_t min_each, uint32_t *out);
/* Called by a handler right before it acts: a request with bytes left over is refused
 * (ILLEGAL_ARGUMENT) before it changed anything, one that ran short is INVALID_LENGTH. */
static inline int ddmc__dbg_rd_end(const ddmc_reader *r) {
  return r->err ? DDMC_JDWP_INVALID_LENGTH : ddmc_reader_left(r) != 0 ? DDMC_JDWP_ILLEGAL_ARGUMENT : 0;
}
/* Skips the rest of a request whose feature is not offered; NOT_IMPLEMENTED. */
int ddmc__dbg_not_offered(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out);
/* A reply that was an error on the VM's side ('out' over its cap): OUT_OF_MEMORY, else rc. */
static inline int ddmc__dbg_reply_rc(const ddmc_buf *out, int rc) {
  return rc == 0 && ddmc_buf_error(out) ? DDMC_JDWP_OUT_OF_MEMORY : rc;
}

/* A count written before the elements it counts: its offset (the buffer may move as it grows). */
static inline size_t ddmc__dbg_count_begin(ddmc_buf *out) {
  size_t at = ddmc_buf_len(out);
  ddmc_buf_put_u32(out, 0);
  return at;
}
static inline void ddmc__dbg_count_end(ddmc_buf *out, size_t at, uint32_t n) {
  if (!ddmc_buf_error(out) && at + 4 <= ddmc_buf_len(out)) ddmc__put_u32(out->p + at, n);
}

/* Calls op `name` of d with the VM's data first; NOT_IMPLEMENTED when the VM left it NULL. */
#define DDMC__DBG_CALL(d, name, ...) \
  (ddmc__dbg_bridge(d)->name ? ddmc__dbg_bridge(d)->name(ddmc__dbg_vm_data(d), __VA_ARGS__) : DDMC_JDWP_NOT_IMPLEMENTED)
#define DDMC__DBG_HAS(d, name) (ddmc__dbg_bridge(d)->name != NULL)
/* Modules are offered with all three module ops or not at all (cmd_module.c). */
#define DDMC__DBG_MODULES(d) \
  (DDMC__DBG_HAS(d, for_each_module) && DDMC__DBG_HAS(d, class_module) && DDMC__DBG_HAS(d, module_info))

#endif
