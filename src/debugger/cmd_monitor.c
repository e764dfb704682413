/* SPDX-License-Identifier: Apache-2.0 */
/* Who holds which monitor: ObjectReference.MonitorInfo (9/5), ThreadReference.OwnedMonitors
 * (11/8), CurrentContendedMonitor (11/9) and OwnedMonitorsStackDepthInfo (11/13), through the
 * VM's monitor ops. IDE thread views ask these to show which thread holds the lock another one
 * waits for; jdb's `lock` and `threadlocks` print them.
 *
 * The thread commands need the thread suspended (THREAD_NOT_SUSPENDED otherwise), as JVM TI's
 * GetOwnedMonitorInfo does on HotSpot: a running thread's monitors change under the answer. A
 * reply lists at most DDMC__MON_MAX entries; a VM with more cannot grow one reply without bound. */
#include <string.h>

#include "debugger/dbg_int.h"

#define DDMC__MON_MAX 10000

typedef struct waiters {
  ddmc__dbg *d;
  ddmc_buf *out;
  uint32_t n;
} waiters;

/* A waiter the debugger may see: internal threads (the JDWP thread) are left out. */
static int put_waiter(void *arg, uint32_t thread) {
  waiters *w = arg;
  uint64_t id;
  if (ddmc__dbg_thr_id(w->d, thread, &id) != 0) return 0;
  ddmc__dbg_wr_id(w->out, id);
  return ++w->n >= DDMC__MON_MAX;
}

/* [object] -> [threadID owner][int entryCount][int n][threadID waiter]* */
static int or_monitor_info(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  ddmc_ref o = 0;
  int rc = ddmc__dbg_rd_object(d, in, &o);
  if (rc == 0) rc = ddmc__dbg_rd_end(in);
  if (rc == 0 && o == 0) rc = DDMC_JDWP_INVALID_OBJECT;
  if (rc != 0) return rc;
  if (!DDMC__DBG_HAS(d, monitor_info)) return DDMC_JDWP_NOT_IMPLEMENTED;
  /* The waiters arrive before the owner is known: owner and counts are patched in after. */
  size_t at = ddmc_buf_len(out);
  ddmc__dbg_wr_id(out, 0);
  ddmc_buf_put_u32(out, 0);
  ddmc_buf_put_u32(out, 0);
  waiters w = {d, out, 0};
  uint32_t owner = 0;
  int32_t count = 0;
  if ((rc = DDMC__DBG_CALL(d, monitor_info, o, &owner, &count, put_waiter, &w)) != 0) return rc;
  uint64_t owner_id = 0;
  if (owner != 0 && ddmc__dbg_thr_id(d, owner, &owner_id) != 0) owner_id = 0;
  if (ddmc_buf_error(out) != 0 || at + 16 > ddmc_buf_len(out)) return DDMC_JDWP_OUT_OF_MEMORY;
  ddmc__put_u32(out->p + at, (uint32_t)(owner_id >> 32));
  ddmc__put_u32(out->p + at + 4, (uint32_t)owner_id);
  ddmc__put_u32(out->p + at + 8, (uint32_t)(owner_id != 0 && count > 0 ? count : 0));
  ddmc__put_u32(out->p + at + 12, w.n);
  return 0;
}

typedef struct owned {
  ddmc__dbg *d;
  ddmc_buf *out;
  uint32_t n;
  int depths;
  int err;
} owned;

static int put_owned(void *arg, ddmc_ref obj, int32_t depth) {
  owned *w = arg;
  if (obj == 0) return 0;
  if ((w->err = ddmc__dbg_wr_tagged_object(w->d, w->out, obj)) != 0) return 1;
  if (w->depths) ddmc_buf_put_u32(w->out, (uint32_t)(depth < 0 ? -1 : depth));
  return ++w->n >= DDMC__MON_MAX;
}

static int rd_suspended(ddmc__dbg *d, ddmc_reader *in, uint32_t *t) {
  int rc = ddmc__dbg_rd_thread(d, in, t);
  if (rc == 0) rc = ddmc__dbg_rd_end(in);
  if (rc == 0 && ddmc__dbg_thr_count(d, *t) == 0) rc = DDMC_JDWP_THREAD_NOT_SUSPENDED;
  return rc;
}

/* [thread] -> [int n]([tagged-objectID] [int depth]?)* */
static int owned_monitors(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out, int depths) {
  uint32_t t;
  int rc = rd_suspended(d, in, &t);
  if (rc != 0) return rc;
  owned w = {d, out, 0, depths, 0};
  size_t at = ddmc__dbg_count_begin(out);
  rc = DDMC__DBG_CALL(d, owned_monitors, t, put_owned, &w);
  if (rc == 0) rc = w.err;
  ddmc__dbg_count_end(out, at, w.n);
  return ddmc__dbg_reply_rc(out, rc);
}

static int tr_owned_monitors(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) { return owned_monitors(d, in, out, 0); }

static int tr_owned_monitors_depth(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  return owned_monitors(d, in, out, 1);
}

/* [thread] -> [tagged-objectID] (null: none) */
static int tr_contended_monitor(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  uint32_t t;
  int rc = rd_suspended(d, in, &t);
  if (rc != 0) return rc;
  ddmc_ref o = 0;
  if ((rc = DDMC__DBG_CALL(d, contended_monitor, t, &o)) != 0) return rc;
  if (o != 0) return ddmc__dbg_wr_tagged_object(d, out, o);
  ddmc_buf_put_u8(out, 'L');
  ddmc__dbg_wr_id(out, 0);
  return ddmc__dbg_reply_rc(out, 0);
}

const ddmc__dbg_cmd ddmc__dbg_cmds_monitor[] = {
    {9, 5, or_monitor_info, "ObjectReference.MonitorInfo", NULL},
    {11, 8, tr_owned_monitors, "ThreadReference.OwnedMonitors", NULL},
    {11, 9, tr_contended_monitor, "ThreadReference.CurrentContendedMonitor", NULL},
    {11, 13, tr_owned_monitors_depth, "ThreadReference.OwnedMonitorsStackDepthInfo", NULL},
    {0, 0, NULL, NULL, NULL},
};
