/* SPDX-License-Identifier: Apache-2.0 */
/* JVM TI agents (agent_bridge.c). main.c drives it in this order: is_flag/add for each
 * -agentpath / -agentlib argument; load() once the libddmc instance exists (ddm_bridge_create),
 * before JDWP starts; vm_init() on the main thread before the program runs; vm_death() when it
 * has ended; unload(); then exit(). */
#ifndef MINIVM_AGENT_BRIDGE_H
#define MINIVM_AGENT_BRIDGE_H

#include <stdint.h>

struct ddmc_vm;
typedef struct agent_bridge agent_bridge;

/* Non-zero for -agentpath:... and -agentlib:... other than -agentlib:jdwp. */
int agent_bridge_is_flag(const char *arg);
agent_bridge *agent_bridge_new(void);
/* Parses one flag (no I/O). -1 with a message on stderr. */
int agent_bridge_add(agent_bridge *a, const char *arg);
int agent_bridge_count(const agent_bridge *a);
/* Sets the system properties, then loads each agent in order (Agent_OnLoad). -1 with the
 * library's one-line reason on stderr ("could not load agent library ...", "... has no
 * Agent_OnLoad", "... Agent_OnLoad returned 3"). */
int agent_bridge_load(agent_bridge *a, struct ddmc_vm *d);
/* VMStart and VMInit, on the thread that runs main (VM thread main_thread). */
void agent_bridge_vm_init(agent_bridge *a, uint32_t main_thread);
/* VMDeath, then the dead phase. */
void agent_bridge_vm_death(agent_bridge *a, uint32_t thread);
/* Agent_OnUnload of each agent. */
void agent_bridge_unload(agent_bridge *a);

/* SIGQUIT sends DataDumpRequest to agents (a pipe and a helper thread; after agent_bridge_vm_init). */
void agent_bridge_watch_sigquit(agent_bridge *a);

#endif
