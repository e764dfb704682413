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
#include "jdwp/service.h"
#include "send.h"

#define DDMC__MAX_SET 17
#define DDMC__MAX_CMD 32

static const ddmc__cmd *const *all_tables(void) {
  static const ddmc__cmd *const tables[] = {ddmc__cmds_vm,    ddmc__cmds_type,   ddmc__cmds_method, ddmc__cmds_object,
                                            ddmc__cmds_thread, ddmc__cmds_frame, ddmc__cmds_event,  NULL};
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

/* ---- accessors */

const ddmc_dbg_ops *ddmc__dbg_ops(const ddmc__dbg *d) { return &d->ops; }
void *ddmc__dbg_vm_data(const ddmc__dbg *d) { return d->vm_data; }
ddmc_vm *ddmc__dbg_vm(const ddmc__dbg *d) { return d->vm; }
const ddmc__mem *ddmc__dbg_mem(const ddmc__dbg *d) { return d->mem; }

/* ---- the service */

static int claims(void *ud, uint8_t set) { return set >= 1 && set <= DDMC__MAX_SET; }

int ddmc__dbg_run(ddmc__dbg *d, uint8_t set, uint8_t cmd, const uint8_t *body, size_t len, ddmc_buf *reply) {
  const ddmc__cmd *c = ddmc__dbg_lookup(set, cmd);
  if (c == NULL) return DDMC_JDWP_NOT_IMPLEMENTED;
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
  return ddmc__dbg_run(d, rq->cmd_set, rq->cmd, rq->body, rq->len, reply);
}

static void session_start(ddmc_vm *vm, void *ud) {
  ddmc__dbg *d = ud;
  d->session = ddmc__session_number(vm);
  atomic_store(&d->connected, 1);
  /* VM_START names the main thread; with suspend=y the first session's holds every thread until
   * the debugger resumes (what HotSpot does). A later peer attaches to a running VM and gets none,
   * as on HotSpot. */
  if (d->suspend_on_start && !d->started_once) ddmc__events_vm_start(d, 1);
  d->started_once = 1;
}

/* JDWP 2.7: requests cancelled (breakpoints and steps undone in the VM), every thread back to
 * count 0, IDs forgotten. VM threads inside a post call are waited out first: they may be
 * reading what is freed here. */
void ddmc__dbg_reset(ddmc__dbg *d) {
  atomic_store(&d->connected, 0);
  ddmc__events_quiesce(d);
  ddmc__reqs_clear_all(d);
  ddmc__thrs_release_all(d);
  ddmc__thrs_forget(d);
  ddmc__lines_reset(d);
  ddmc__ids_reset(d);
  pthread_mutex_lock(&d->hold_lock);
  atomic_store(&d->holding, 0);
  ddmc__buf_reset(&d->held);
  pthread_mutex_unlock(&d->hold_lock);
}

void ddmc__dbg_set_connected(ddmc__dbg *d, uint32_t session) {
  d->session = session;
  atomic_store(&d->connected, 1);
}

static void session_end(ddmc_vm *vm, void *ud) { ddmc__dbg_reset(ud); }

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

int ddmc__dbg_new(ddmc_vm *vm, const ddmc_dbg_ops *ops, size_t ops_size, ddmc__dbg **out) {
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

int ddmc_dbg_attach_(ddmc_vm *vm, const ddmc_dbg_ops *ops, size_t ops_size) {
  if (vm == NULL || ops == NULL || ops_size == 0) return DDMC_EINVAL;
  if (ddmc__vm_dbg(vm) != NULL) return DDMC_ESTATE;
  ddmc__dbg *d;
  int rc = ddmc__dbg_new(vm, ops, ops_size, &d);
  if (rc != 0) return rc;
  ddmc__service s;
  memset(&s, 0, sizeof(s));
  s.name = "debugger";
  s.claims = claims;
  s.handle = handle;
  s.session_start = session_start;
  s.session_end = session_end;
  s.ud = d;
  rc = ddmc__service_add(vm, &s);
  if (rc != 0) {
    dbg_destroy(d);
    return rc;
  }
  ddmc__vm_set_dbg(vm, d, dbg_destroy);
  return 0;
}
