/* SPDX-License-Identifier: Apache-2.0 */
/* The debugger's table of contents and its entry: command dispatch through one static table,
 * the state's creation and teardown, and ddmc_dbg_enable, which builds the debugger over the
 * bridge ddmc_vm_set_bridge installed, registers it as a service of the JDWP thread (its session
 * hooks are in session.c) and subscribes it to the event hub (events.c).
 *
 * Dispatch: {set, cmd} -> handler, Dalvik's gHandlerMap shape. A command the table lacks in a
 * set the library claims (1-18) is NOT_IMPLEMENTED; after the handler, a request that ran past
 * its end is INVALID_LENGTH and one with bytes left over ILLEGAL_ARGUMENT, so no handler has to
 * remember to check. */
#include <pthread.h>
#include <string.h>

#include "debugger/glue.h"
#include "debugger/requests.h"
#include "jdwp/service.h"
#include "send/send.h"
#include "vmctl/switches.h"

#define DDMC__MAX_SET 18 /* ModuleReference, the last command set a debugger sends */
#define DDMC__MAX_CMD 32

/* The table of contents: every command set a debugger sends, in JDWP's order, and the file whose
 * table answers it (a file's table may serve several sets).
 * docs/jdwp-commands.md is generated from this (tests/gen_jdwp_commands.c). */
static const ddmc__dbg_cmdset kSets[] = {
    {1, "VirtualMachine", "cmd_vm.c, cmd_memview.c, cmd_mutate.c, cmd_module.c", ddmc__dbg_cmds_vm},
    {2, "ReferenceType", "cmd_type.c, cmd_memview.c, cmd_module.c", ddmc__dbg_cmds_type},
    {3, "ClassType", "cmd_type.c, cmd_invoke.c", ddmc__dbg_cmds_type},
    {4, "ArrayType", "cmd_type.c", ddmc__dbg_cmds_type},
    {5, "InterfaceType", "cmd_invoke.c", ddmc__dbg_cmds_invoke},
    {6, "Method", "cmd_method.c", ddmc__dbg_cmds_method},
    {8, "Field", "(no commands)", NULL},
    {9, "ObjectReference", "cmd_object.c, cmd_monitor.c, cmd_invoke.c, cmd_memview.c", ddmc__dbg_cmds_object},
    {10, "StringReference", "cmd_object.c", ddmc__dbg_cmds_object},
    {11, "ThreadReference", "cmd_thread.c, cmd_monitor.c, cmd_mutate.c", ddmc__dbg_cmds_thread},
    {12, "ThreadGroupReference", "cmd_thread.c", ddmc__dbg_cmds_thread},
    {13, "ArrayReference", "cmd_object.c", ddmc__dbg_cmds_object},
    {14, "ClassLoaderReference", "cmd_object.c", ddmc__dbg_cmds_object},
    {15, "EventRequest", "cmd_event.c", ddmc__dbg_cmds_event},
    {16, "StackFrame", "cmd_frame.c, cmd_mutate.c", ddmc__dbg_cmds_frame},
    {17, "ClassObjectReference", "cmd_type.c", ddmc__dbg_cmds_type},
    {18, "ModuleReference", "cmd_module.c", ddmc__dbg_cmds_module},
    {0, NULL, NULL, NULL},
};

/* Tables that add commands to sets another file answers (method calls, monitors, the memory
 * view, redefine / pop / force return, and the module commands of sets 1 and 2). */
static const ddmc__dbg_cmd *const kExtra[] = {ddmc__dbg_cmds_invoke, ddmc__dbg_cmds_monitor, ddmc__dbg_cmds_memview,
                                              ddmc__dbg_cmds_module, ddmc__dbg_cmds_mutate, NULL};

const ddmc__dbg_cmdset *ddmc__dbg_sets(void) { return kSets; }

static const ddmc__dbg_cmd *g_index[DDMC__MAX_SET + 1][DDMC__MAX_CMD];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void index_table(const ddmc__dbg_cmd *t) {
  for (const ddmc__dbg_cmd *c = t; c != NULL && c->fn != NULL; c++)
    if (c->set <= DDMC__MAX_SET && c->cmd < DDMC__MAX_CMD) g_index[c->set][c->cmd] = c;
}

static void build_index(void) {
  for (const ddmc__dbg_cmdset *s = kSets; s->name != NULL; s++) index_table(s->cmds);
  for (const ddmc__dbg_cmd *const *t = kExtra; *t != NULL; t++) index_table(*t);
}

const ddmc__dbg_cmd *ddmc__dbg_lookup(uint8_t set, uint8_t cmd) {
  pthread_once(&g_once, build_index);
  return set <= DDMC__MAX_SET && cmd < DDMC__MAX_CMD ? g_index[set][cmd] : NULL;
}

/* ---- the service */

static int claims(void *ud, uint8_t set) { return set >= 1 && set <= DDMC__MAX_SET; }

int ddmc__dbg_run(ddmc__dbg *d, uint8_t set, uint8_t cmd, const uint8_t *body, size_t len, ddmc_buf *reply) {
  const ddmc__dbg_cmd *c = ddmc__dbg_lookup(set, cmd);
  if (c == NULL) return DDMC_JDWP_NOT_IMPLEMENTED;
  /* A debugger speaking after Dispose or DBGD in the same session: a relay (ddmlib) put a new
   * one on the connection. It starts clean, as the last one's state went at its leaving. */
  uint32_t session = ddmc__send_session_number(d->vm);
  if (!atomic_load(&d->connected) && session != 0) ddmc__dbg_set_connected(d, session);

  ddmc_reader r;
  ddmc_reader_init(&r, body, len);
  int err = c->fn(d, &r, reply);
  if (r.err) return DDMC_JDWP_INVALID_LENGTH;
  if (err == 0 && ddmc_reader_left(&r) > 0) return DDMC_JDWP_ILLEGAL_ARGUMENT;
  return err;
}

static int handle(ddmc_vm *vm, void *ud, const ddmc__jdwp_request *rq, ddmc_buf *reply) {
  ddmc__dbg *d = ud;
  if (ddmc__dbg_vm_stopping(vm)) return DDMC_JDWP_VM_DEAD;
  d->cur_id = rq->id;
  return ddmc__dbg_run(d, rq->cmd_set, rq->cmd, rq->body, rq->len, reply);
}

static void dbg_destroy(ddmc__dbg *d) {
  if (d == NULL) return;
  ddmc__dbg_reset(d);
  ddmc__dbg_reqs_destroy(d);
  ddmc__dbg_lines_destroy(d);
  ddmc__dbg_thrs_destroy(d);
  ddmc__dbg_ids_destroy(d);
  ddmc__buf_free(&d->held);
  pthread_mutex_destroy(&d->hold_lock);
  ddmc__free(d->mem, d);
}

int ddmc__dbg_new(ddmc_vm *vm, const ddmc_vm_bridge *bridge, size_t bridge_size, ddmc__dbg **out) {
  const ddmc__mem *mem = ddmc__dbg_vm_mem(vm);
  ddmc__dbg *d = ddmc__calloc(mem, 1, sizeof(*d));
  if (d == NULL) return DDMC_ENOMEM;
  d->vm = vm;
  d->mem = mem;
  d->vm_data = ddmc_vm_data(vm);
  memcpy(&d->bridge, bridge, bridge_size < sizeof(d->bridge) ? bridge_size : sizeof(d->bridge));
  d->suspend_on_start = ddmc__dbg_vm_options(vm)->suspend;
  atomic_init(&d->connected, 0);
  atomic_init(&d->inflight, 0);
  atomic_init(&d->raising, 0);
  atomic_init(&d->holding, 0);
  ddmc__buf_init(&d->held, mem, DDMC__HELD_MAX + 64);
  if (pthread_mutex_init(&d->hold_lock, NULL) != 0) {
    ddmc__free(mem, d);
    return DDMC_ENOMEM;
  }
  for (int i = 0; i < DDMC__EV_KINDS; i++) atomic_init(&d->want[i], 0);
  atomic_init(&d->hot_wants, 0);
  if (ddmc__dbg_ids_init(&d->ids) != 0) {
    pthread_mutex_destroy(&d->hold_lock);
    ddmc__free(mem, d);
    return DDMC_ENOMEM;
  }
  if (ddmc__dbg_thrs_init(&d->thr) != 0) {
    ddmc__dbg_ids_destroy(d);
    pthread_mutex_destroy(&d->hold_lock);
    ddmc__free(mem, d);
    return DDMC_ENOMEM;
  }
  if (ddmc__dbg_reqs_init(d) != 0 || ddmc__dbg_lines_init(d) != 0) {
    dbg_destroy(d);
    return DDMC_ENOMEM;
  }
  *out = d;
  return 0;
}

void ddmc__dbg_free(ddmc__dbg *d) { dbg_destroy(d); }

int ddmc_dbg_enable(ddmc_vm *vm) {
  if (vm == NULL) return DDMC_EINVAL;
  const ddmc_vm_bridge *bridge = ddmc__dbg_vm_bridge(vm);
  if (bridge == NULL || ddmc__dbg_of_vm(vm) != NULL) return DDMC_ESTATE;
  ddmc__dbg *d;
  int rc = ddmc__dbg_new(vm, bridge, sizeof(*bridge), &d);
  if (rc != 0) return rc;
  d->vm_data = ddmc__dbg_vm_bridge_data(vm);
  ddmc__jdwp_service s;
  memset(&s, 0, sizeof(s));
  s.name = "debugger";
  s.claims = claims;
  s.handle = handle;
  s.session_start = ddmc__dbg_session_start;
  s.session_end = ddmc__dbg_session_end;
  s.detach = ddmc__dbg_session_end;
  s.ud = d;
  rc = ddmc__jdwp_service_add(vm, &s);
  if (rc == 0) rc = ddmc__dbg_events_subscribe(vm, d);
  if (rc != 0) {
    dbg_destroy(d); /* only the service table can be full: the hub has room for every client */
    return rc;
  }
  ddmc__dbg_vm_set_dbg(vm, d, dbg_destroy);
  return 0;
}
