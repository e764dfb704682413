/* The debugger as a service of the JDWP thread: command dispatch through one static table,
 * session start (VM_START) and end (every request cleared, every thread resumed, every ID
 * forgotten), and ddmc_dbg_attach.
 *
 * Dispatch: {set, cmd} -> handler, Dalvik's gHandlerMap shape. A command the table lacks in a
 * set the library claims (1-17) is NOT_IMPLEMENTED; after the handler, a request that ran past
 * its end is INVALID_LENGTH and one with bytes left over ILLEGAL_ARGUMENT, so no handler has to
 * remember to check. */
#include <pthread.h>
#include <string.h>

#include "debugger/glue.h"
#include "debugger/requests.h"
#include "jvmti/jvmti_hooks.h"
#include "profile/prof_hooks.h"
#include "jdwp/service.h"
#include "send/send.h"
#include "vmctl/switches.h"

#define DDMC__MAX_SET 17
#define DDMC__MAX_CMD 32

static const ddmc__cmd *const *all_tables(void) {
  static const ddmc__cmd *const tables[] = {
      ddmc__cmds_vm,    ddmc__cmds_type,  ddmc__cmds_method, ddmc__cmds_object,  ddmc__cmds_thread,
      ddmc__cmds_frame, ddmc__cmds_event, ddmc__cmds_invoke, ddmc__cmds_monitor, NULL};
  return tables;
}

static const ddmc__cmd *g_index[DDMC__MAX_SET + 1][DDMC__MAX_CMD];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void build_index(void) {
  for (const ddmc__cmd *const *t = all_tables(); *t != NULL; t++)
    for (const ddmc__cmd *c = *t; c->fn != NULL; c++)
      if (c->set <= DDMC__MAX_SET && c->cmd < DDMC__MAX_CMD) g_index[c->set][c->cmd] = c;
}

const ddmc__cmd *ddmc__dbg_lookup(uint8_t set, uint8_t cmd) {
  pthread_once(&g_once, build_index);
  return set <= DDMC__MAX_SET && cmd < DDMC__MAX_CMD ? g_index[set][cmd] : NULL;
}

/* ---- the service */

static int claims(void *ud, uint8_t set) { return set >= 1 && set <= DDMC__MAX_SET; }

int ddmc__dbg_run(ddmc__dbg *d, uint8_t set, uint8_t cmd, const uint8_t *body, size_t len, ddmc_buf *reply) {
  const ddmc__cmd *c = ddmc__dbg_lookup(set, cmd);
  if (c == NULL) return DDMC_JDWP_NOT_IMPLEMENTED;
  /* A debugger speaking after Dispose or DBGD in the same session: a relay (ddmlib) put a new
   * one on the connection. It starts clean, as the last one's state went at its leaving. */
  uint32_t session = ddmc__session_number(d->vm);
  if (!atomic_load(&d->connected) && session != 0) ddmc__dbg_set_connected(d, session);

  ddmc_reader r;
  ddmc_reader_init(&r, body, len);
  int err = c->fn(d, &r, reply);
  if (r.err) return DDMC_JDWP_INVALID_LENGTH;
  if (err == 0 && ddmc_reader_left(&r) > 0) return DDMC_JDWP_ILLEGAL_ARGUMENT;
  return err;
}

static int handle(ddmc_vm *vm, void *ud, const ddmc__request *rq, ddmc_buf *reply) {
  ddmc__dbg *d = ud;
  if (ddmc__vm_stopping(vm)) return DDMC_JDWP_VM_DEAD;
  d->cur_id = rq->id;
  return ddmc__dbg_run(d, rq->cmd_set, rq->cmd, rq->body, rq->len, reply);
}

static void dbg_destroy(ddmc__dbg *d) {
  if (d == NULL) return;
  ddmc__dbg_reset(d);
  ddmc__reqs_destroy(d);
  ddmc__lines_destroy(d);
  ddmc__thrs_destroy(d);
  ddmc__ids_destroy(d);
  ddmc__buf_free(&d->held);
  pthread_mutex_destroy(&d->hold_lock);
  ddmc__free(d->mem, d);
}

int ddmc__dbg_new(ddmc_vm *vm, const ddmc_vm_bridge *ops, size_t ops_size, ddmc__dbg **out) {
  const ddmc__mem *mem = ddmc__vm_mem(vm);
  ddmc__dbg *d = ddmc__calloc(mem, 1, sizeof(*d));
  if (d == NULL) return DDMC_ENOMEM;
  d->vm = vm;
  d->mem = mem;
  d->vm_data = ddmc_vm_data(vm);
  memcpy(&d->ops, ops, ops_size < sizeof(d->ops) ? ops_size : sizeof(d->ops));
  d->suspend_on_start = ddmc__vm_options(vm)->suspend;
  atomic_init(&d->connected, 0);
  atomic_init(&d->inflight, 0);
  atomic_init(&d->holding, 0);
  ddmc__buf_init(&d->held, mem, ((size_t)1 << 20) + 64);
  if (pthread_mutex_init(&d->hold_lock, NULL) != 0) {
    ddmc__free(mem, d);
    return DDMC_ENOMEM;
  }
  for (int i = 0; i < 128; i++) atomic_init(&d->want[i], 0);
  if (ddmc__ids_init(&d->ids) != 0) {
    pthread_mutex_destroy(&d->hold_lock);
    ddmc__free(mem, d);
    return DDMC_ENOMEM;
  }
  if (ddmc__thrs_init(&d->thr) != 0) {
    ddmc__ids_destroy(d);
    pthread_mutex_destroy(&d->hold_lock);
    ddmc__free(mem, d);
    return DDMC_ENOMEM;
  }
  if (ddmc__reqs_init(d) != 0 || ddmc__lines_init(d) != 0) {
    dbg_destroy(d);
    return DDMC_ENOMEM;
  }
  *out = d;
  return 0;
}

void ddmc__dbg_free(ddmc__dbg *d) { dbg_destroy(d); }

int ddmc_dbg_attach_(ddmc_vm *vm, const ddmc_vm_bridge *ops, size_t ops_size, void *vm_data) {
  if (vm == NULL || ops == NULL || ops_size == 0) return DDMC_EINVAL;
  if (ddmc__vm_dbg(vm) != NULL) return DDMC_ESTATE;
  ddmc__dbg *d;
  int rc = ddmc__dbg_new(vm, ops, ops_size, &d);
  if (rc != 0) return rc;
  d->vm_data = vm_data;
  ddmc__service s;
  memset(&s, 0, sizeof(s));
  s.name = "debugger";
  s.claims = claims;
  s.handle = handle;
  s.session_start = ddmc__dbg_session_start;
  s.session_end = ddmc__dbg_session_end;
  s.detach = ddmc__dbg_session_end;
  s.ud = d;
  rc = ddmc__service_add(vm, &s);
  if (rc != 0) {
    dbg_destroy(d);
    return rc;
  }
  ddmc__vm_set_dbg(vm, d, dbg_destroy);
  ddmc__prof_set_bridge(vm, &d->ops, vm_data);  /* the profilers name things through it too */
  ddmc__jvmti_set_bridge(vm, &d->ops, vm_data); /* and JVM TI is built on it */
  ddmc__ctl_set_bridge(vm, &d->ops, vm_data);   /* the switches they share */
  return 0;
}
