/* SPDX-License-Identifier: Apache-2.0 */
/* The JDWP debugger: command sets 1-18 and the composite Event 64/100, answered by the library for
 * any JDWP debugger (jdb, IntelliJ, Eclipse) through the VM bridge (bridge.h), with the events the
 * VM's threads report (events.h).
 *
 * The split is Dalvik's (vm/jdwp kept apart from vm/Debugger.cpp): libddmc owns the protocol, the
 * IDs on the wire, event requests and their modifiers, suspend counts, stepping by line, and the
 * clean-up at disconnect. The VM answers typed questions about its classes, objects, threads and
 * frames, patches its code for breakpoints, and reports what its threads do.
 *
 * IDs. On a VM whose bridge has release_ref (bridge.h), objects with an ID are held as the JDK's
 * agent holds them: weakly, strong only while ObjectReference.DisableCollection is in force,
 * released when disposed of (VirtualMachine.DisposeObjects) or at disconnect; one the collector
 * frees answers INVALID_OBJECT. On a VM without it every object with an ID is held (a root,
 * ddmc_gc_visit_roots, events.h) until the debugger disposes of it or disconnects (Dalvik's
 * choice). IDs are never reused within a session either way.
 *
 * Suspension. A VM thread whose event asks for suspension is parked inside the post call
 * (thread_parking tells the VM) until the debugger resumes it; threads the debugger suspends by
 * command are stopped by the VM's own suspend_thread. */
#ifndef DDMC_DEBUGGER_H
#define DDMC_DEBUGGER_H

#include <stdint.h>

#include "bridge.h"
#include "events.h"
#include "export.h"
#include "vm.h"

DDMC_BEGIN_DECLS

/* Answers command sets 1-18 through the bridge (ddmc_vm_set_bridge first); anything the debugger
 * does not handle still reaches ddmc_vm_ops.jdwp_command. Before ddmc_vm_start. Returns 0,
 * DDMC_ENOMEM, DDMC_ESTATE (no bridge, started, or twice). Thread: the VM's init thread. */
DDMC_EXTERN int ddmc_dbg_enable(ddmc_vm *vm);

/* Non-zero while a debugger is connected (a JDWP peer past the handshake). Thread: any. */
DDMC_EXTERN int ddmc_dbg_active(const ddmc_vm *vm);

/* Debugger suspend count of a thread (0 when no debugger), for a VM that wants to show it.
 * Thread: any. */
DDMC_EXTERN int ddmc_dbg_suspend_count(ddmc_vm *vm, uint32_t thread);

DDMC_END_DECLS

#endif
