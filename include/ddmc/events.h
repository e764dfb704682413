/* SPDX-License-Identifier: Apache-2.0 */
/* The event hub: what a VM's threads report, once, for every client. Each call fans out to the
 * clients that listen (a method trace, JVM TI agents, the debugger, in that order: the debugger's
 * part may park the thread) and costs one atomic read per client when none does.
 *
 * Threads: each call is made by the VM thread the event happens on (the GC hooks by the VM's
 * collector). None waits for the network or takes a lock the JDWP thread holds while doing I/O.
 * A call whose matching debugger request says so parks the calling thread inside the call until
 * the debugger resumes it (or leaves); the bridge's thread_parking op tells the VM.
 *
 * Returns 0 (delivered, or nothing listened), DDMC_ENOTCONN (no debugger), DDMC_EQFULL, DDMC_ENOMEM
 * or DDMC_EINVAL, unless a call says otherwise. A VM may ignore them: an event nobody could take is
 * not the VM's error. */
#ifndef DDMC_EVENTS_H
#define DDMC_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#include "bridge.h"
#include "export.h"
#include "vm.h"

DDMC_BEGIN_DECLS

/* Event kinds (EventRequest.Set eventKind, Event.Composite). */
typedef enum ddmc_event_kind {
  DDMC_EV_SINGLE_STEP = 1,
  DDMC_EV_BREAKPOINT = 2,
  DDMC_EV_FRAME_POP = 3,
  DDMC_EV_EXCEPTION = 4,
  DDMC_EV_USER_DEFINED = 5,
  DDMC_EV_THREAD_START = 6,
  DDMC_EV_THREAD_DEATH = 7,
  DDMC_EV_CLASS_PREPARE = 8,
  DDMC_EV_CLASS_UNLOAD = 9,
  DDMC_EV_CLASS_LOAD = 10,
  DDMC_EV_FIELD_ACCESS = 20,
  DDMC_EV_FIELD_MODIFICATION = 21,
  DDMC_EV_EXCEPTION_CATCH = 30,
  DDMC_EV_METHOD_ENTRY = 40,
  DDMC_EV_METHOD_EXIT = 41,
  DDMC_EV_METHOD_EXIT_WITH_RETURN_VALUE = 42,
  DDMC_EV_MONITOR_CONTENDED_ENTER = 43,
  DDMC_EV_MONITOR_CONTENDED_ENTERED = 44,
  DDMC_EV_MONITOR_WAIT = 45,
  DDMC_EV_MONITOR_WAITED = 46,
  DDMC_EV_VM_START = 90,
  DDMC_EV_VM_DEATH = 99
} ddmc_event_kind;

/* Non-zero while some client (a debugger's enabled request, an agent's enabled event, a method
 * trace for the method events) wants events of this kind. One atomic read per client: a VM checks
 * it before doing the work an event would need. VM_START and VM_DEATH are always wanted while a
 * debugger is connected. Thread: any. */
DDMC_EXTERN int ddmc_event_wanted(const ddmc_vm *vm, ddmc_event_kind kind);

DDMC_EXTERN int ddmc_post_thread_start(ddmc_vm *vm, uint32_t thread);
DDMC_EXTERN int ddmc_post_thread_death(ddmc_vm *vm, uint32_t thread);
/* The class is prepared (its fields and methods are final). thread: the thread that caused it. */
DDMC_EXTERN int ddmc_post_class_prepare(ddmc_vm *vm, uint32_t thread, ddmc_class c);

/* Flags for ddmc_post_location. */
#define DDMC_POST_AT_BREAKPOINT 1u /* loc carries a breakpoint the library set */
#define DDMC_POST_METHOD_ENTRY 2u  /* loc is the first instruction of its method */
/* Before the thread executes the instruction at loc, at frame depth depth (frame count - 1).
 * One call per instruction gathers BREAKPOINT, SINGLE_STEP and METHOD_ENTRY into one composite,
 * as JDI expects. this_obj: the frame's 'this' or 0 (for InstanceOnly). */
DDMC_EXTERN int ddmc_post_location(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, int32_t depth,
                                       ddmc_ref this_obj, unsigned flags);
/* The method at loc (the return instruction) returns ret (NULL or tag 'V' for void). */
DDMC_EXTERN int ddmc_post_method_exit(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, int32_t depth,
                                          ddmc_ref this_obj, const ddmc_value *ret);
/* Exceptions. A VM reports a throw when ddmc_event_wanted(vm, DDMC_EV_EXCEPTION) (one atomic read
 * at the throw, the slow path anyway): loc is where it is thrown (the throwing instruction, or
 * the call that raised it), before the stack unwinds; catch_loc is the handler that will take
 * it, found by searching up the stack without unwinding, or NULL when nothing catches it.
 * ExceptionOnly filters match the exception's class and its superclasses. */
DDMC_EXTERN int ddmc_post_exception(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, int32_t depth,
                                        ddmc_ref this_obj, ddmc_ref exception, const ddmc_location *catch_loc);

/* The stack has unwound to the handler at loc (depth: its frame), which is about to run: JVM TI's
 * ExceptionCatch (JDWP has no event for it). Report it after ddmc_post_exception when
 * ddmc_event_wanted(vm, DDMC_EV_EXCEPTION_CATCH) at the throw. Returns 0 or DDMC_EINVAL. */
DDMC_EXTERN int ddmc_post_exception_catch(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, int32_t depth,
                                              ddmc_ref this_obj, ddmc_ref exception);

/* A frame at loc (the instruction where the exception left it) is popped by an exception, without
 * returning. Agents get MethodExit with was_popped_by_exception; JDWP has no such event (a
 * debugger's METHOD_EXIT requests do not match). Report it, while method events are on, for each
 * frame the unwinding removes. Returns 0 or DDMC_EINVAL. */
DDMC_EXTERN int ddmc_post_method_unwind(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, int32_t depth,
                                            ddmc_ref this_obj);

/* Options of a method call (JDWP's invokeOptions). */

/* Watchpoints (see bridge op set_field_watch): before the thread reads (access) or writes
 * (modification, new_value) field of class c in object (0 for a static). */
DDMC_EXTERN int ddmc_post_field_access(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, int32_t depth,
                                           ddmc_ref this_obj, ddmc_class c, uint32_t field, ddmc_ref object);
DDMC_EXTERN int ddmc_post_field_modification(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, int32_t depth,
                                                 ddmc_ref this_obj, ddmc_class c, uint32_t field, ddmc_ref object,
                                                 const ddmc_value *new_value);

/* Monitor events (the bridge op set_monitor_events says the VM reports them), reported by the thread
 * itself, in its own state (a thread about to block reports before it blocks; one that got the
 * monitor reports before it runs bytecode again). object: the object whose monitor it is; loc
 * and depth: the instruction (monitor-enter, wait) of the top frame; this_obj: that frame's
 * 'this' or 0. A VM checks ddmc_event_wanted(vm, DDMC_EV_MONITOR_*) first (one atomic read when
 * nobody listens). They go to JVM TI agents (MonitorContendedEnter / Entered, MonitorWait /
 * Waited) and to a JDWP debugger (MONITOR_CONTENDED_ENTER 43 ... MONITOR_WAITED 46; ClassOnly
 * and the class patterns match loc's class, InstanceOnly the monitor's object), and may park
 * the thread as any event does, so call them where the thread holds no VM lock and counts as
 * stopped for the collector if it may block (a thread waiting to enter, say). Returns as the
 * other post calls; DDMC_EINVAL for a NULL loc or a 0 object. */
DDMC_EXTERN int ddmc_post_monitor_contended_enter(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc,
                                                      int32_t depth, ddmc_ref this_obj, ddmc_ref object);
DDMC_EXTERN int ddmc_post_monitor_contended_entered(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc,
                                                        int32_t depth, ddmc_ref this_obj, ddmc_ref object);
/* Before the thread waits: timeout_ms as given to wait() (0: for ever). */
DDMC_EXTERN int ddmc_post_monitor_wait(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, int32_t depth,
                                           ddmc_ref this_obj, ddmc_ref object, int64_t timeout_ms);
/* After the wait, once the thread owns the monitor again: timed_out non-zero when the time ran
 * out rather than a notify (an interrupt counts as not timed out). */
DDMC_EXTERN int ddmc_post_monitor_waited(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, int32_t depth,
                                             ddmc_ref this_obj, ddmc_ref object, int timed_out);

/* The VM is ending (normally from its exit path, before threads are torn down): VM_DEATH goes
 * out with every matching request and the call returns once it has been handed to the JDWP
 * thread (it waits up to timeout_ms for the packet to be written). Thread: any. */
DDMC_EXTERN int ddmc_post_vm_death(ddmc_vm *vm, int timeout_ms);


/* ---- GC hooks. Thread: the VM's collector, with the world stopped unless a call says otherwise.
 * Order per collection: ddmc_gc_start, mark (calling ddmc_gc_visit_roots), ddmc_gc_walk (vm.h,
 * for DDM heap segments), ddmc_gc_sweep, free, ddmc_gc_done. A VM that calls neither
 * ddmc_gc_start nor ddmc_gc_sweep has no weak tags: it must then not let agents tag objects. */

/* While marking: visits every object a client holds (the debugger's IDs, agents' global
 * references and the objects they hold), so the collector keeps them. */
DDMC_EXTERN void ddmc_gc_visit_roots(ddmc_vm *vm, ddmc_root_visit_fn fn, void *arg);

/* Call after the collection: sends HPIF if the peer asked for it at the next or every GC. With
 * JVM TI agents (agent.h) it also posts GarbageCollectionFinish, then ObjectFree for each tagged
 * object ddmc_gc_sweep dropped, on the calling thread (the world may run again by then). */
DDMC_EXTERN int ddmc_gc_done(ddmc_vm *vm);

/* World stopped, before marking: posts GarbageCollectionStart to agents that enabled it. Its
 * callbacks may only use raw monitors, Allocate / Deallocate and environment local storage (the
 * specification's rule); they run with no library lock held and never park the collector's thread
 * (it is no VM thread to them). A callback that enters a raw monitor an agent thread owns waits
 * for that thread's RawMonitorExit: agent threads are not stopped by the world, so they can
 * leave it; a VM thread never owns a raw monitor while stopped at a safepoint unless the agent
 * holds it across returning to bytecode (then the agent has made its own deadlock). Returns 0
 * (also with no agent: one atomic load) or DDMC_EINVAL. Thread: the VM's GC thread. */
DDMC_EXTERN int ddmc_gc_start(ddmc_vm *vm);
/* is_live(arg, &ref): non-zero if the collector keeps ref (and a moving collector stores its new
 * address in *ref); 0 if it will free it. */
typedef int (*ddmc_gc_is_live_fn)(void *arg, uint64_t *ref);
/* World stopped, marking done, nothing freed yet: the library asks is_live of every object an
 * agent tagged (SetTag: tags are weak) and drops the entries of dead ones, keeping their tags
 * for ObjectFree at ddmc_gc_done. No allocation, no callback into an agent, no I/O: only the
 * tag tables' own locks (leaves) and space reserved when the tags were set. Returns 0 or
 * DDMC_EINVAL. Thread: the VM's GC thread. */
DDMC_EXTERN int ddmc_gc_sweep(ddmc_vm *vm, ddmc_gc_is_live_fn is_live, void *arg);


/* ---- Allocations: JVM TI's VMObjectAlloc. The allocation flag (ddmc_alloc_tracking_flag,
 * profile.h) is also non-zero while an agent wants VMObjectAlloc events; the VM's allocation hook then calls this as well, once per allocation,
 * right after ddmc_alloc_record (whose DDMC_ESTATE then only means REAE is off): obj is the new
 * object (not reachable yet: nothing may collect until the call returns), cls its class as
 * ddmc_alloc_record names it, bytes its size, by_vm non-zero when the VM made it itself rather
 * than the program's bytecode (a string or an exception the VM creates, a class object, a
 * thread's objects...). Only by_vm objects become events; each agent's callback runs on the
 * allocating thread (thread 0: outside any VM thread), which does not park meanwhile: an
 * agent there must neither allocate nor wait for a collection. Returns 0 (also when nobody wants
 * it: one or two atomic loads) or DDMC_EINVAL. Thread: the allocating thread. */
DDMC_EXTERN int ddmc_alloc_object(ddmc_vm *vm, uint32_t thread, ddmc_ref obj, ddmc_class cls, uint64_t bytes,
                                  int by_vm);

DDMC_END_DECLS

#endif
