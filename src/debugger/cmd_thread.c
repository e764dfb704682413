/* SPDX-License-Identifier: Apache-2.0 */
/* ThreadReference (11), ThreadGroupReference (12).
 *
 * A thread's frames are only read while the debugger holds it suspended (JDWP: otherwise
 * THREAD_NOT_SUSPENDED): a VM can then answer from a stack that cannot move under it. */
#include <string.h>

#include "debugger/dbg_int.h"

static int thread_info(ddmc__dbg *d, uint32_t t, ddmc_thread_detail *info) {
  memset(info, 0, sizeof(*info));
  int rc = DDMC__DBG_CALL(d, thread_info, t, info);
  if (rc != 0) return rc == DDMC_JDWP_INVALID_OBJECT ? DDMC_JDWP_INVALID_THREAD : rc;
  return info->internal ? DDMC_JDWP_INVALID_THREAD : 0;
}

static int tr_name(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  uint32_t t;
  ddmc_thread_detail info;
  int rc = ddmc__dbg_rd_thread(d, in, &t);
  if (rc == 0) rc = thread_info(d, t, &info);
  if (rc == 0) ddmc__dbg_wr_string(out, info.name);
  return rc;
}

static int tr_suspend(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  uint32_t t;
  int rc = ddmc__dbg_rd_thread(d, in, &t);
  if (rc == 0) rc = ddmc__dbg_rd_end(in);
  return rc != 0 ? rc : ddmc__dbg_thr_suspend(d, t);
}

static int tr_resume(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  uint32_t t;
  int rc = ddmc__dbg_rd_thread(d, in, &t);
  if (rc == 0) rc = ddmc__dbg_rd_end(in);
  return rc != 0 ? rc : ddmc__dbg_thr_resume(d, t);
}

static int tr_status(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  uint32_t t;
  ddmc_thread_detail info;
  int rc = ddmc__dbg_rd_thread(d, in, &t);
  if (rc == 0) rc = thread_info(d, t, &info);
  if (rc != 0) return rc;
  ddmc__dbg_events_settle(d);
  ddmc_buf_put_u32(out, (uint32_t)info.status);
  ddmc_buf_put_u32(out, ddmc__dbg_thr_count(d, t) > 0 ? 1 : 0); /* SUSPEND_STATUS_SUSPENDED */
  return 0;
}

static int tr_thread_group(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  uint32_t t;
  ddmc_thread_detail info;
  int rc = ddmc__dbg_rd_thread(d, in, &t);
  if (rc == 0) rc = thread_info(d, t, &info);
  if (rc != 0) return rc;
  uint64_t id;
  if ((rc = ddmc__dbg_id_of_object(d, info.group, &id)) == 0) ddmc__dbg_wr_id(out, id);
  return rc;
}

static int suspended_frames(ddmc__dbg *d, uint32_t t, int32_t *n) {
  if (ddmc__dbg_thr_count(d, t) == 0) return DDMC_JDWP_THREAD_NOT_SUSPENDED;
  *n = 0;
  int rc = DDMC__DBG_CALL(d, frame_count, t, n);
  return rc == 0 && *n < 0 ? DDMC_JDWP_INTERNAL : rc;
}

/* Frames per frame_locations call. A JVM TI stack walk starts from the top for each call, so a
 * batch smaller than the stack walks its top again for every batch (10,000 frames in batches of
 * 4,096 walked 22,000). Its 24 bytes a frame (1.5 MiB at most) stay below the reply's own 33. */
#define FRAME_BATCH 65536

static int tr_frames(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  uint32_t t;
  int rc = ddmc__dbg_rd_thread(d, in, &t);
  int32_t start = (int32_t)ddmc_read_u32(in), len = (int32_t)ddmc_read_u32(in);
  if (in->err) return DDMC_JDWP_INVALID_LENGTH;
  if (rc != 0) return rc;
  int32_t n;
  if ((rc = suspended_frames(d, t, &n)) != 0) return rc;
  if (start < 0 || start > n) return DDMC_JDWP_INVALID_INDEX;
  if (len == -1) len = n - start;
  /* As libjdwp: a range past the frames from a frame that exists is INVALID_LENGTH; from past the
   * last one INVALID_INDEX (jdb asks (0, 1) of frameless threads). */
  if (len < 0 || len > n - start) return start < n ? DDMC_JDWP_INVALID_LENGTH : DDMC_JDWP_INVALID_INDEX;
  ddmc_buf_put_u32(out, (uint32_t)len);
  /* In batches of up to FRAME_BATCH through frame_locations when the VM has it: a VM that walks
   * from the top for each call (JVM TI) then walks a deep stack a few times, not once per frame. */
  int bulk = DDMC__DBG_HAS(d, frame_locations);
  ddmc_location one, *loc = bulk && len > 1 ? ddmc__calloc(ddmc__dbg_mem(d), (size_t)DDMC__MIN(len, FRAME_BATCH), sizeof(*loc)) : NULL;
  if (loc == NULL) bulk = 0;
  for (int32_t i = start; i < start + len && rc == 0;) {
    int32_t k = bulk ? DDMC__MIN(FRAME_BATCH, start + len - i) : 1;
    ddmc_location *l = bulk ? loc : &one;
    memset(l, 0, sizeof(*l) * (size_t)k);
    rc = bulk ? DDMC__DBG_CALL(d, frame_locations, t, i, k, l) : DDMC__DBG_CALL(d, frame_location, t, i, l);
    for (int32_t j = 0; j < k && rc == 0; j++, i++) {
      ddmc__dbg_wr_id(out, ddmc__dbg_frame_id(d, t, i));
      rc = ddmc__dbg_wr_location(d, out, &l[j]);
    }
  }
  ddmc__free(ddmc__dbg_mem(d), loc);
  return rc != 0 ? rc : ddmc__dbg_reply_rc(out, 0);
}

static int tr_frame_count(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  uint32_t t;
  int32_t n;
  int rc = ddmc__dbg_rd_thread(d, in, &t);
  if (rc == 0) rc = suspended_frames(d, t, &n);
  if (rc == 0) ddmc_buf_put_u32(out, (uint32_t)n);
  return rc;
}

static int tr_suspend_count(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  uint32_t t;
  int rc = ddmc__dbg_rd_thread(d, in, &t);
  if (rc == 0) ddmc__dbg_events_settle(d);
  if (rc == 0) ddmc_buf_put_u32(out, (uint32_t)ddmc__dbg_thr_count(d, t));
  return rc;
}

/* None of the objects JDWP tags apart (strings, arrays, threads, groups, class loaders, class
 * objects) is a Throwable: INVALID_CLASS, and the VM never sees them. libjdwp hands any object to
 * JVM TI's StopThread, which HotSpot does not check: the VM dies. Whether a plain object is a
 * Throwable the VM answers (bridge.stop_thread). */
static int check_throwable(ddmc__dbg *d, ddmc_ref exc) {
  ddmc_class k = 0;
  const ddmc__dbg_cls *c;
  int rc = DDMC__DBG_CALL(d, object_class, exc, &k);
  if (rc != 0) return rc == DDMC_JDWP_INVALID_CLASS ? DDMC_JDWP_INVALID_OBJECT : rc;
  if ((rc = ddmc__dbg_cls_get(d, k, &c)) != 0) return rc;
  return c->object_tag == 'L' ? 0 : DDMC_JDWP_INVALID_CLASS;
}

/* [thread][throwable]: the thread throws it as soon as it runs again (bridge.stop_thread). */
static int tr_stop(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  uint32_t t;
  ddmc_ref exc = 0;
  ddmc_thread_detail info;
  int rc = ddmc__dbg_rd_thread(d, in, &t);
  int orc = ddmc__dbg_rd_object(d, in, &exc);
  if (rc == 0) rc = orc;
  if (rc == 0) rc = ddmc__dbg_rd_end(in);
  if (rc == 0 && exc == 0) rc = DDMC_JDWP_INVALID_OBJECT;
  if (rc == 0) rc = thread_info(d, t, &info);
  if (rc == 0) rc = check_throwable(d, exc);
  return rc != 0 ? rc : DDMC__DBG_CALL(d, stop_thread, t, exc);
}

static int tr_interrupt(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  uint32_t t;
  ddmc_thread_detail info;
  int rc = ddmc__dbg_rd_thread(d, in, &t);
  if (rc == 0) rc = ddmc__dbg_rd_end(in);
  if (rc == 0) rc = thread_info(d, t, &info);
  return rc != 0 ? rc : DDMC__DBG_CALL(d, interrupt_thread, t);
}

static int tr_is_virtual(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  uint32_t t;
  int rc = ddmc__dbg_rd_thread(d, in, &t);
  if (rc == 0) ddmc_buf_put_u8(out, 0);
  return rc;
}

/* ---- ThreadGroupReference */

typedef struct group_find {
  ddmc_ref want;
  int found;
  ddmc_ref parent;
  const char *name; /* borrowed: copied into the reply inside the visitor */
  ddmc_buf *out;
  int put_name;
} group_find;

static int find_group(void *arg, ddmc_ref group, ddmc_ref parent, const char *name) {
  group_find *g = arg;
  if (group != g->want) return 0;
  g->found = 1;
  g->parent = parent;
  if (g->put_name) ddmc__dbg_wr_string(g->out, name);
  return 1;
}

static int rd_group(ddmc__dbg *d, ddmc_reader *in, group_find *g, ddmc_buf *out, int put_name) {
  memset(g, 0, sizeof(*g));
  int rc = ddmc__dbg_rd_object(d, in, &g->want);
  if (rc != 0) return rc;
  if (g->want == 0) return DDMC_JDWP_INVALID_THREAD_GROUP;
  g->out = out;
  g->put_name = put_name;
  if ((rc = DDMC__DBG_CALL(d, for_each_group, find_group, g)) != 0) return rc;
  return g->found ? 0 : DDMC_JDWP_INVALID_THREAD_GROUP;
}

static int tg_name(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  group_find g;
  return rd_group(d, in, &g, out, 1);
}

static int tg_parent(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  group_find g;
  int rc = rd_group(d, in, &g, out, 0);
  if (rc != 0) return rc;
  uint64_t id;
  if ((rc = ddmc__dbg_id_of_object(d, g.parent, &id)) == 0) ddmc__dbg_wr_id(out, id);
  return rc;
}

typedef struct children {
  ddmc__dbg *d;
  ddmc_buf *out;
  ddmc_ref group;
  uint32_t n;
  int err;
} children;

static int put_child_thread(void *arg, uint32_t thread, const ddmc_thread_detail *info) {
  children *c = arg;
  if (info->group != c->group) return 0;
  uint64_t id;
  if ((c->err = ddmc__dbg_id_of_object(c->d, info->object, &id)) != 0) return 1;
  ddmc__dbg_wr_id(c->out, id);
  c->n++;
  return 0;
}

static int put_child_group(void *arg, ddmc_ref group, ddmc_ref parent, const char *name) {
  children *c = arg;
  if (parent != c->group) return 0;
  uint64_t id;
  if ((c->err = ddmc__dbg_id_of_object(c->d, group, &id)) != 0) return 1;
  ddmc__dbg_wr_id(c->out, id);
  c->n++;
  return 0;
}

static int tg_children(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  group_find g;
  int rc = rd_group(d, in, &g, out, 0);
  if (rc != 0) return rc;
  children c = {d, out, g.want, 0, 0};
  size_t at = ddmc__dbg_count_begin(out);
  if ((rc = ddmc__dbg_thr_for_each(d, put_child_thread, &c)) != 0 || (rc = c.err) != 0) return rc;
  ddmc__dbg_count_end(out, at, c.n);
  c.n = 0;
  at = ddmc__dbg_count_begin(out);
  if ((rc = DDMC__DBG_CALL(d, for_each_group, put_child_group, &c)) != 0 || (rc = c.err) != 0) return rc;
  ddmc__dbg_count_end(out, at, c.n);
  return ddmc__dbg_reply_rc(out, 0);
}

const ddmc__dbg_cmd ddmc__dbg_cmds_thread[] = {
    {11, 1, tr_name, "ThreadReference.Name", NULL},
    {11, 2, tr_suspend, "ThreadReference.Suspend", NULL},
    {11, 3, tr_resume, "ThreadReference.Resume", NULL},
    {11, 4, tr_status, "ThreadReference.Status", NULL},
    {11, 5, tr_thread_group, "ThreadReference.ThreadGroup", NULL},
    {11, 6, tr_frames, "ThreadReference.Frames", NULL},
    {11, 7, tr_frame_count, "ThreadReference.FrameCount", NULL},
    {11, 10, tr_stop, "ThreadReference.Stop", NULL},
    {11, 11, tr_interrupt, "ThreadReference.Interrupt", NULL},
    {11, 12, tr_suspend_count, "ThreadReference.SuspendCount", NULL},
    {11, 15, tr_is_virtual, "ThreadReference.IsVirtual", NULL},
    {12, 1, tg_name, "ThreadGroupReference.Name", NULL},
    {12, 2, tg_parent, "ThreadGroupReference.Parent", NULL},
    {12, 3, tg_children, "ThreadGroupReference.Children", NULL},
    {0, 0, NULL, NULL, NULL},
};
