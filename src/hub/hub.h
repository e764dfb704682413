/* SPDX-License-Identifier: Apache-2.0 */
/* The event hub: the one place the VM's reports (events.h: the ddmc_post_* calls, the GC hooks,
 * ddmc_alloc_object) arrive, and the clients that subscribe to them as equals: a method trace
 * (src/profile), JVM TI agents (src/jvmti), the debugger (src/debugger), the DDM heap chunks
 * (src/chunks). The hub knows its clients only through this table, as the JDWP thread knows its
 * services (jdwp/service.h); the clients know nothing of each other.
 *
 * Order. Clients are called in rank order, lowest first. A client that may park the calling
 * thread (the debugger) takes the highest rank, so every other client has seen the event before
 * the thread stops; the ranks in use are listed below, one per client.
 *
 * Threads. Clients subscribe on the VM's init thread before the VM's threads post (a client
 * created later, JVM TI at its first agent, subscribes before the VM starts running bytecode);
 * they are never removed before ddmc_vm_free. The post path reads the table with one acquire
 * load of the count and no lock. Each client's entry does its own early return (one atomic read)
 * when it is not listening. */
#ifndef DDMC_HUB_H
#define DDMC_HUB_H

#include <stdatomic.h>

#include "common.h"

/* What happened (the ddmc_post_* call that reported it). */
typedef enum ddmc__hub_what {
  DDMC__HUB_THREAD_START,
  DDMC__HUB_THREAD_DEATH,
  DDMC__HUB_CLASS_PREPARE,
  DDMC__HUB_METHOD_UNWIND, /* a frame popped by an exception */
  DDMC__HUB_EXCEPTION,     /* object: the exception; catch_loc: its handler or NULL */
  DDMC__HUB_EXCEPTION_CATCH,
  DDMC__HUB_FIELD,   /* kind: FIELD_ACCESS or FIELD_MODIFICATION (value: the new one) */
  DDMC__HUB_MONITOR, /* kind: MONITOR_*; extra: wait's timeout or waited's timed_out */
  DDMC__HUB_VM_DEATH /* extra: the caller's timeout_ms */
} ddmc__hub_what;

/* One report, borrowed for the call. Members that do not apply are 0 / NULL. */
typedef struct ddmc__hub_event {
  ddmc__hub_what what;
  int kind; /* the JDWP event kind where the report has one (ddmc_event_kind) */
  unsigned flags;
  uint32_t thread;
  const ddmc_location *loc;
  int32_t depth;
  ddmc_ref this_obj;
  ddmc_class cls; /* class prepare: the class; field: the field's class */
  uint32_t field;
  ddmc_ref object; /* exception, field's object (0: static), monitor's object */
  const ddmc_value *value;
  const ddmc_location *catch_loc;
  int64_t extra;
} ddmc__hub_event;

/* A subscriber. Any entry may be NULL. ud is the client's own state. */
typedef struct ddmc__hub_client {
  const char *name;
  int rank;
  /* A report. Returns 0 (taken), DDMC_ENOTCONN (not listening) or another DDMC_E* code. The post
   * call returns the first error, else 0 when some client took it, else DDMC_ENOTCONN. */
  int (*post)(ddmc_vm *vm, void *ud, const ddmc__hub_event *ev);
  /* The two reports a method trace makes on every call, typed so the hot path builds no event:
   * ddmc_post_location (flags: DDMC_POST_AT_BREAKPOINT, DDMC_POST_METHOD_ENTRY) and
   * ddmc_post_method_exit (ret: the return value, or NULL). Same return rule as post. */
  int (*location)(ddmc_vm *vm, void *ud, uint32_t thread, const ddmc_location *loc, int32_t depth, ddmc_ref this_obj,
                  unsigned flags);
  int (*method_exit)(ddmc_vm *vm, void *ud, uint32_t thread, const ddmc_location *loc, int32_t depth, ddmc_ref this_obj,
                     const ddmc_value *ret);
  /* Does the client want events of this JDWP kind now (ddmc_event_wanted)? */
  int (*wants)(const ddmc_vm *vm, void *ud, int kind);
  /* ddmc_gc_visit_roots: every object the client holds. GC thread. */
  void (*visit_roots)(ddmc_vm *vm, void *ud, ddmc_root_visit_fn fn, void *arg);
  void (*gc_start)(ddmc_vm *vm, void *ud);
  void (*gc_sweep)(ddmc_vm *vm, void *ud, ddmc_gc_is_live_fn is_live, void *arg);
  /* Returns 0 or a DDMC_E* code; ddmc_gc_done returns the last non-zero one. */
  int (*gc_done)(ddmc_vm *vm, void *ud);
  /* ddmc_alloc_object: one allocation the VM reports. */
  void (*alloc)(ddmc_vm *vm, void *ud, uint32_t thread, ddmc_ref obj, ddmc_class cls, uint64_t bytes, int by_vm);
} ddmc__hub_client;

/* The ranks in use. */
enum {
  DDMC__HUB_RANK_TRIGGER = 5,  /* onthrow= / onuncaught=: starts the debug service (jdwp/trigger.c) */
  DDMC__HUB_RANK_TRACE = 10,   /* a method trace: entries and exits, never parks */
  DDMC__HUB_RANK_AGENTS = 20,  /* JVM TI callbacks: may suspend the thread themselves */
  DDMC__HUB_RANK_HEAP = 30,    /* DDM heap info after a collection */
  DDMC__HUB_RANK_DEBUGGER = 40 /* may park the thread until the debugger resumes it */
};

#define DDMC__HUB_MAX_CLIENTS 8

/* Allocation hook bits (ddmc_alloc_tracking_flag): who wants the VM's allocation hook to run. */
enum { DDMC__ALLOC_TRACKER = 1, DDMC__ALLOC_AGENTS = 2 };

typedef int (*ddmc__hub_location_fn)(ddmc_vm *vm, void *ud, uint32_t thread, const ddmc_location *loc, int32_t depth,
                                     ddmc_ref this_obj, unsigned flags);
typedef int (*ddmc__hub_exit_fn)(ddmc_vm *vm, void *ud, uint32_t thread, const ddmc_location *loc, int32_t depth,
                                 ddmc_ref this_obj, const ddmc_value *ret);

typedef struct ddmc__hub {
  const ddmc__hub_client *clients[DDMC__HUB_MAX_CLIENTS];
  void *uds[DDMC__HUB_MAX_CLIENTS];
  atomic_int n; /* published after the entries it counts */
  /* The hot entries of the clients that have them, in rank order (a method trace posts two
   * reports per call: no NULL tests, no clients without them on that path). */
  ddmc__hub_location_fn loc_fn[DDMC__HUB_MAX_CLIENTS];
  void *loc_ud[DDMC__HUB_MAX_CLIENTS];
  const atomic_int *loc_gate[DDMC__HUB_MAX_CLIENTS][2];
  atomic_int nloc;
  ddmc__hub_exit_fn exit_fn[DDMC__HUB_MAX_CLIENTS];
  void *exit_ud[DDMC__HUB_MAX_CLIENTS];
  const atomic_int *exit_gate[DDMC__HUB_MAX_CLIENTS][2];
  atomic_int nexit;
  const atomic_int *gates[DDMC__HUB_MAX_CLIENTS][2]; /* by client, as ddmc__hub_subscribe got them */
  int alloc_flag; /* DDMC__ALLOC_* bits; read with __atomic builtins (ddmc_alloc_tracking) */
} ddmc__hub;

/* Adds c (static storage) with its state ud. gate_a and gate_b (each may be NULL) are counters
 * of ud's that say whether c's hot entries (location, method_exit) can take anything now: while
 * both are 0 the hub skips the call (one relaxed load each instead of a call per event) and
 * counts c as not listening. With both NULL every report reaches c. Returns 0, DDMC_ENOMEM
 * (table full), DDMC_EEXIST. Thread: the VM's init thread, before the VM's threads post. */
int ddmc__hub_subscribe(ddmc_vm *vm, const ddmc__hub_client *c, void *ud, const atomic_int *gate_a,
                        const atomic_int *gate_b);
/* Turns one DDMC__ALLOC_* bit of the allocation flag on or off. Thread: any. */
void ddmc__hub_alloc_want(ddmc_vm *vm, int bit, int on);

#endif
