/* SPDX-License-Identifier: Apache-2.0 */
/* JVM TI agents: what a VM calls so that agents written for HotSpot against the JDK's jvmti.h
 * and jni.h (profilers, tracers, heap viewers) load and run in it unchanged.
 *
 * The library owns the JavaVM, the JNIEnv and jvmtiEnv function tables (slot for slot as in
 * JDK 17's headers; the library itself needs no JDK header), agent loading, phases,
 * capabilities, raw monitors, handles (jobject), jmethodID / jfieldID and event delivery. It
 * reaches the VM only through the VM bridge (ddmc_vm_bridge, bridge.h) and the VM's DDM ops,
 * and takes events from the same ddmc_post_* calls (events.h) the VM makes for a JDWP debugger:
 * one bridge and one event hub, several clients. A VM needs ddmc_vm_set_bridge (its ddmc_vm need
 * not be started, and the debugger need not be enabled: an agent works without JDWP).
 *
 * The VM's part, in order (examples/minivm/agent_bridge.c is the worked example):
 *   1. ddmc_vm_new, ddmc_vm_set_bridge (ddmc_dbg_enable and ddmc_vm_start only when JDWP is
 *      wanted);
 *   2. ddmc_agent_set_property for the properties agents read (java.vm.name, ...);
 *   3. ddmc_agent_load for each -agentpath / -agentlib, in command-line order (Agent_OnLoad runs
 *      in the OnLoad phase); a non-zero return ends start-up;
 *   4. ddmc_agent_vm_start, then ddmc_agent_vm_init on the thread that will run the program
 *      (VMStart, VMInit: the live phase) before the program's first instruction;
 *   5. the program runs; its events reach agents through ddmc_post_*;
 *   6. ddmc_agent_vm_death (VMDeath; then the dead phase), ddmc_agent_unload (Agent_OnUnload),
 *      then exit() so agents' buffered output is flushed.
 * Thread: the VM's init thread for every call here. */
#ifndef DDMC_AGENT_H
#define DDMC_AGENT_H

#include <stddef.h>
#include <stdint.h>

#include "bridge.h"
#include "export.h"
#include "vm.h"

DDMC_BEGIN_DECLS

/* One -agentpath:/path/lib.so[=options] or -agentlib:name[=options] argument. */
typedef struct ddmc_agent_flag {
  int by_path;       /* -agentpath: name is the path; -agentlib: the VM finds libNAME.so */
  int has_options;   /* "=..." was given (possibly empty) */
  char name[1024];   /* the path, or the library name */
  char options[4096];
} ddmc_agent_flag;

/* Parses one argument (no I/O). Returns 0, DDMC_ENOENT (not an agent flag: also
 * -agentlib:jdwp, which is ddmc_options_parse's), DDMC_EINVAL (no name; a '/' in an -agentlib
 * name), DDMC_ETOOBIG (name or options too long). Thread: any. */
DDMC_EXTERN int ddmc_agent_parse_flag(const char *arg, ddmc_agent_flag *out);

/* A system property agents see through GetSystemProperty(ies). Before ddmc_agent_vm_start.
 * Returns 0, DDMC_EINVAL, DDMC_ENOMEM, DDMC_ESTATE (too late). */
DDMC_EXTERN int ddmc_agent_set_property(ddmc_vm *vm, const char *key, const char *value);

/* dlopen(path), then Agent_OnLoad(vm, options, NULL) (options NULL: none given). Returns 0, or
 * DDMC_ENOENT (cannot load: dlerror's reason in err; a path with a '/' that does not name a
 * regular file, such as a FIFO, is refused before dlopen, which would wait on it forever),
 * DDMC_EINVAL (no Agent_OnLoad), DDMC_ESTATE (Agent_OnLoad returned non-zero, or the VM has
 * started), DDMC_ENOMEM. err (may be NULL) gets a one-line message naming the path and the
 * reason, to print as it is. */
DDMC_EXTERN int ddmc_agent_load(ddmc_vm *vm, const char *path, const char *options, char *err, size_t errlen);

/* Agents loaded so far (0 when none: the VM may then skip the rest). */
DDMC_EXTERN int ddmc_agent_count(const ddmc_vm *vm);

/* The start phase (VMStart), then the live phase (VMInit on thread, the VM thread that will run
 * the program, which must exist: ddmc_vm_bridge.thread_info answers for it). Returns 0 (also with
 * no agent) or DDMC_ESTATE (out of order). */
DDMC_EXTERN int ddmc_agent_vm_start(ddmc_vm *vm);
DDMC_EXTERN int ddmc_agent_vm_init(ddmc_vm *vm, uint32_t thread);
/* VMDeath on thread (the one ending the VM; 0 if none), then the dead phase: every JVM TI call
 * but the few allowed in any phase answers WRONG_PHASE. Returns 0 or DDMC_ESTATE. */
DDMC_EXTERN int ddmc_agent_vm_death(ddmc_vm *vm, uint32_t thread);
/* Agent_OnUnload of each agent that has one, in load order. The libraries stay mapped (a
 * daemon agent thread may still be in their code). */
DDMC_EXTERN void ddmc_agent_unload(ddmc_vm *vm);

/* DataDumpRequest to every agent that enabled it (HotSpot sends it on SIGQUIT), run on the
 * calling thread. Not from a signal handler: the VM's handler only records the signal (a flag, a
 * pipe) and a thread of the VM calls this later. The calling thread may be any thread (a helper
 * thread: it need not be a VM thread); it should not be a VM thread in the middle of running
 * bytecode (agents' callbacks may block). Returns 0 (sent, or nobody wanted it), DDMC_ENOTCONN
 * (no agent loaded). */
DDMC_EXTERN int ddmc_agent_data_dump(ddmc_vm *vm);

DDMC_END_DECLS

#endif
