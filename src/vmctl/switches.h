/* SPDX-License-Identifier: Apache-2.0 */
/* The VM's switches, shared by every client of the bridge: method events (the debugger, method
 * traces, agents), breakpoints, field watches and single stepping (the debugger and agents).
 *
 * Each switch is counted here, by client, and the VM is told (ddmc_vm_bridge.set_method_events,
 * set_monitor_events, set_breakpoint / clear_breakpoint, set_field_watch, set_stepping) only when
 * the first client turns it on or the last turns it off. A debugger clearing its breakpoint therefore never
 * removes an agent's at the same place, and the other way round.
 *
 * Threads: the JDWP thread (the debugger, traces) and any VM or agent thread (JVM TI). One lock
 * (role DDMC__LOCK_SWITCHES, lock.h), held across the op it causes: those ops only flip state in
 * the VM and never wait for a VM thread nor call into the library (bridge.h, "Locks"), so a
 * thread blocked here cannot hold up a stop of the world. No other library lock is taken under it
 * (JVM TI's step lock is taken before it, with the same role). */
#ifndef DDMC_VMCTL_SWITCHES_H
#define DDMC_VMCTL_SWITCHES_H

#include <pthread.h>

#include "common.h"

/* Clients (reasons a switch is on). */
enum { DDMC__ME_DEBUGGER = 1u, DDMC__ME_TRACE = 2u, DDMC__ME_AGENT = 4u };

typedef struct ddmc__ctl_bp {
  ddmc_location loc;
  uint32_t count; /* requests of every client naming it */
} ddmc__ctl_bp;

typedef struct ddmc__ctl_watch {
  ddmc_class cls;
  uint32_t field;
  uint32_t access, modify; /* counts of every client */
} ddmc__ctl_watch;

typedef struct ddmc__ctl_step {
  uint32_t thread;
  unsigned reasons; /* DDMC__ME_DEBUGGER, DDMC__ME_AGENT */
} ddmc__ctl_step;

/* At most this many distinct breakpoints, watched fields and stepping threads (each). */
#define DDMC__CTL_MAX 65536u

typedef struct ddmc__ctl {
  /* Who decides when a thread the debugger holds is stopped in the VM, when agents may hold it
   * too (JVM TI sets it when its first agent loads, before the VM runs; NULL: the debugger alone,
   * straight to the bridge). */
  int (*suspend_arbiter)(ddmc_vm *vm, uint32_t thread, int suspend);
  pthread_mutex_t lock;
  unsigned me_reasons DDMC_GUARDED_BY(lock);
  unsigned mon_reasons DDMC_GUARDED_BY(lock); /* who wants monitor events */
  ddmc__ctl_bp *bps DDMC_GUARDED_BY(lock);
  uint32_t nbps, cap_bps;
  ddmc__ctl_watch *watches DDMC_GUARDED_BY(lock);
  uint32_t nwatches, cap_watches;
  ddmc__ctl_step *steps DDMC_GUARDED_BY(lock);
  uint32_t nsteps, cap_steps;
} ddmc__ctl;

void ddmc__ctl_init(ddmc_vm *vm);
void ddmc__ctl_destroy(ddmc_vm *vm);

/* The debugger's suspend count of thread went 0 -> 1 (suspend = 1) or back (0): stop the thread
 * in the VM, or let it go, through the arbiter when there is one. Returns the bridge op's JDWP
 * error (NOT_IMPLEMENTED without it). Thread: the JDWP thread, under the debugger's sus_lock. */
int ddmc__ctl_suspend(ddmc_vm *vm, uint32_t thread, int suspend);
/* ddmc__ctl_suspend for each of threads[0, n) (n <= 65536), its result into errs[i]: one call of
 * the bridge's suspend_threads / resume_threads when the VM has it and no arbiter takes the
 * threads one by one, else one ddmc__ctl_suspend per thread. Same thread and lock rules. */
void ddmc__ctl_suspend_list(ddmc_vm *vm, const uint32_t *threads, uint32_t n, int suspend, int *errs);

/* Each returns 0 or the op's JDWP error code (NOT_IMPLEMENTED without the op, OUT_OF_MEMORY
 * past DDMC__CTL_MAX or when memory runs out). Turning off what is not on is 0. */
int ddmc__ctl_method_events(ddmc_vm *vm, unsigned reason, int on);
/* reason (DDMC__ME_DEBUGGER or _AGENT) wants monitor events (on) or no longer. The op cannot fail
 * (a VM without it offers no monitor events, so no client asks). */
void ddmc__ctl_monitor_events(ddmc_vm *vm, unsigned reason, int on);
/* One more (on) or one fewer request for a breakpoint at loc. */
int ddmc__ctl_breakpoint(ddmc_vm *vm, const ddmc_location *loc, int on);
/* One more or one fewer watch of field (kind DDMC_WATCH_ACCESS or _MODIFY). */
int ddmc__ctl_field_watch(ddmc_vm *vm, ddmc_class cls, uint32_t field, unsigned kind, int on);
/* reason wants thread stepped (on) or no longer. */
int ddmc__ctl_stepping(ddmc_vm *vm, uint32_t thread, unsigned reason, int on);

#endif
