/* SPDX-License-Identifier: Apache-2.0 */
/* The memory view: VirtualMachine.InstanceCounts, ReferenceType.Instances and
 * ObjectReference.ReferringObjects (canGetInstanceInfo).
 *
 * Two ways, per command: the bridge's memory view op when the VM has it (bridge.h), else the
 * library's own walk over the VM's heap ops (heap/reach.h), inside one with_world_stopped. Only
 * reachable objects count, as the JDK's agent counts them with FollowReferences: garbage the
 * collector has not freed yet is neither counted, listed nor a referrer.
 *
 * In the walk nothing is sent and no ID is handed out until the walk is over; the objects found
 * are named (ids.c, the weak IDs of every other object) before the world runs again, since
 * nothing holds them once it does. Bounds: the walk's (reach.h), DDMC__MV_MAX_CLASSES classes
 * per InstanceCounts, and what one reply may hold (each object 9 bytes). */
#include <stdlib.h>
#include <string.h>

#include "debugger/dbg_int.h"
#include "heap/reach.h"

#define DDMC__MV_MAX_CLASSES 100000
/* Instances / ReferringObjects with no max (0): at most this many, the reply's bound. */
#define DDMC__MV_MAX_LISTED ((uint32_t)1 << 22)

int ddmc__dbg_mv_supported(ddmc__dbg *d) {
  const ddmc_vm_bridge *o = ddmc__dbg_bridge(d);
  int all_ops = o->instance_counts && o->instances && o->referring_objects;
  return all_ops || ddmc__heap_reach_supported(o);
}

/* ---- the library's walk */

typedef struct kcount {
  ddmc_class cls;
  uint32_t at; /* the index in the request */
} kcount;

typedef struct mv_walk {
  ddmc__dbg *d;
  const ddmc__reach_visitor *v;
  /* InstanceCounts */
  kcount *want;
  uint32_t nwant;
  int64_t *counts;
  /* Instances, ReferringObjects */
  ddmc_class cls;
  ddmc_ref target;
  uint32_t max;
  ddmc_ref *found; /* grown as it fills, up to max */
  uint32_t foundcap;
  ddmc_buf *out; /* Instances, ReferringObjects: the reply */
  uint32_t nfound;
  ddmc_ref *seen; /* referrers found: open addressing over seencap (a power of two) */
  uint32_t seencap;
  int rc;
} mv_walk;

static int cmp_kcount(const void *a, const void *b) {
  ddmc_class x = ((const kcount *)a)->cls, y = ((const kcount *)b)->cls;
  return x < y ? -1 : x > y;
}

static int count_object(void *arg, ddmc_ref o, ddmc_class cls) {
  mv_walk *w = arg;
  uint32_t lo = 0, hi = w->nwant;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (w->want[mid].cls < cls) lo = mid + 1;
    else hi = mid;
  }
  for (; lo < w->nwant && w->want[lo].cls == cls; lo++) w->counts[w->want[lo].at]++;
  return 0;
}

static int found_add(mv_walk *w, ddmc_ref o) {
  if (w->nfound == w->foundcap) {
    uint32_t cap = w->foundcap ? w->foundcap * 2 : 256;
    if (cap > w->max) cap = w->max;
    ddmc_ref *nf = ddmc__realloc(ddmc__dbg_mem(w->d), w->found, sizeof(ddmc_ref) * cap);
    if (nf == NULL) return DDMC_JDWP_OUT_OF_MEMORY;
    w->found = nf;
    w->foundcap = cap;
  }
  w->found[w->nfound++] = o;
  return w->nfound >= w->max ? 1 : 0;
}

static int instance_object(void *arg, ddmc_ref o, ddmc_class cls) {
  mv_walk *w = arg;
  return cls == w->cls ? found_add(w, o) : 0;
}

static uint32_t rhash(ddmc_ref r) { return (uint32_t)((r * 0x9E3779B97F4A7C15ull) >> 32); }

static void seen_put(ddmc_ref *t, uint32_t cap, ddmc_ref r) {
  uint32_t j = rhash(r) & (cap - 1);
  while (t[j] != 0 && t[j] != r) j = (j + 1) & (cap - 1);
  t[j] = r;
}

/* Room for one more referrer: the set (the found ones) rehashed into twice the slots when half
 * full. */
static int seen_room(mv_walk *w) {
  if ((w->nfound + 1) * 2 <= w->seencap) return 0;
  uint32_t cap = w->seencap ? w->seencap * 2 : 64;
  ddmc_ref *t = ddmc__calloc(ddmc__dbg_mem(w->d), cap, sizeof(ddmc_ref));
  if (t == NULL) return DDMC_JDWP_OUT_OF_MEMORY;
  for (uint32_t i = 0; i < w->nfound; i++) seen_put(t, cap, w->found[i]);
  ddmc__free(ddmc__dbg_mem(w->d), w->seen);
  w->seen = t;
  w->seencap = cap;
  return 0;
}

static int referrer(void *arg, ddmc_ref from, ddmc_ref to) {
  mv_walk *w = arg;
  if (to != w->target) return 0;
  if (seen_room(w) != 0) return DDMC_JDWP_OUT_OF_MEMORY;
  uint32_t j = rhash(from) & (w->seencap - 1);
  while (w->seen[j] != 0) {
    if (w->seen[j] == from) return 0;
    j = (j + 1) & (w->seencap - 1);
  }
  w->seen[j] = from;
  return found_add(w, from);
}

/* Inside with_world_stopped: the walk, then the reply's objects named and written (out, when
 * set) while nothing can free them. */
static int mv_stopped(void *arg) {
  mv_walk *w = arg;
  const ddmc_vm_bridge *bridge = ddmc__dbg_bridge(w->d);
  w->rc = ddmc__heap_reach(ddmc__dbg_mem(w->d), bridge, ddmc__dbg_vm_data(w->d), w->v);
  if (w->out == NULL || w->rc != 0) return 0;
  ddmc_buf_put_u32(w->out, w->nfound);
  for (uint32_t i = 0; i < w->nfound && w->rc == 0; i++) w->rc = ddmc__dbg_wr_tagged_object(w->d, w->out, w->found[i]);
  return 0;
}

static int mv_run(mv_walk *w) {
  const ddmc_vm_bridge *bridge = ddmc__dbg_bridge(w->d);
  if (!ddmc__heap_reach_supported(bridge)) return DDMC_JDWP_NOT_IMPLEMENTED;
  int rc = bridge->with_world_stopped(ddmc__dbg_vm_data(w->d), mv_stopped, w);
  return rc != 0 ? rc : w->rc;
}

/* ---- VirtualMachine.InstanceCounts: [int n][referenceTypeID]* -> [int n][long count]* */

static int counts_of(ddmc__dbg *d, const ddmc_class *classes, uint32_t n, int64_t *counts) {
  const ddmc_vm_bridge *bridge = ddmc__dbg_bridge(d);
  if (bridge->instance_counts != NULL) return bridge->instance_counts(ddmc__dbg_vm_data(d), classes, (int32_t)n, counts);
  const ddmc__mem *mem = ddmc__dbg_mem(d);
  kcount *want = ddmc__calloc(mem, n, sizeof(kcount));
  if (want == NULL) return DDMC_JDWP_OUT_OF_MEMORY;
  for (uint32_t i = 0; i < n; i++) want[i] = (kcount){classes[i], i};
  qsort(want, n, sizeof(kcount), cmp_kcount);
  ddmc__reach_visitor v = {count_object, NULL, NULL};
  mv_walk w = {.d = d, .v = &v, .want = want, .nwant = n, .counts = counts};
  v.arg = &w;
  int rc = mv_run(&w);
  ddmc__free(mem, want);
  return rc;
}

static int vm_instance_counts(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  int32_t n = (int32_t)ddmc_read_u32(in);
  if (in->err) return DDMC_JDWP_INVALID_LENGTH;
  if (n < 0 || n > DDMC__MV_MAX_CLASSES) return DDMC_JDWP_ILLEGAL_ARGUMENT;
  if ((size_t)n > ddmc_reader_left(in) / 8) return DDMC_JDWP_INVALID_LENGTH;
  const ddmc__mem *mem = ddmc__dbg_mem(d);
  ddmc_class *classes = ddmc__calloc(mem, (size_t)n + 1, sizeof(ddmc_class));
  int64_t *counts = ddmc__calloc(mem, (size_t)n + 1, sizeof(int64_t));
  int rc = classes == NULL || counts == NULL ? DDMC_JDWP_OUT_OF_MEMORY : 0;
  for (int32_t i = 0; i < n && rc == 0; i++) {
    const ddmc__dbg_cls *c;
    rc = ddmc__dbg_rd_class(d, in, &c);
    if (rc == 0) classes[i] = c->handle;
  }
  if (rc == 0) rc = ddmc__dbg_rd_end(in);
  if (rc == 0 && n > 0) rc = counts_of(d, classes, (uint32_t)n, counts);
  if (rc == 0) {
    ddmc_buf_put_u32(out, (uint32_t)n);
    for (int32_t i = 0; i < n; i++) ddmc_buf_put_u64(out, (uint64_t)counts[i]);
  }
  ddmc__free(mem, classes);
  ddmc__free(mem, counts);
  return ddmc__dbg_reply_rc(out, rc);
}

/* ---- ReferenceType.Instances and ObjectReference.ReferringObjects: -> [int n][tagged objectID]* */

typedef struct op_list {
  ddmc__dbg *d;
  ddmc_buf *out;
  uint32_t n, max;
  int rc;
} op_list;

/* The VM's op found one: named and written now (JDWP thread, the world running). */
static int op_found(void *arg, ddmc_ref o) {
  op_list *l = arg;
  if (l->n >= l->max) return 1;
  l->rc = ddmc__dbg_wr_tagged_object(l->d, l->out, o);
  if (l->rc != 0) return 1;
  l->n++;
  return 0;
}

static int op_run(ddmc__dbg *d, ddmc_buf *out, int32_t max, ddmc_class c, ddmc_ref o) {
  const ddmc_vm_bridge *bridge = ddmc__dbg_bridge(d);
  op_list l = {d, out, 0, max > 0 ? (uint32_t)max : DDMC__MV_MAX_LISTED, 0};
  size_t at = ddmc__dbg_count_begin(out);
  int rc = o != 0 ? bridge->referring_objects(ddmc__dbg_vm_data(d), o, (int32_t)l.max, op_found, &l)
                  : bridge->instances(ddmc__dbg_vm_data(d), c, (int32_t)l.max, op_found, &l);
  if (rc == 1) rc = 0;
  if (rc == 0) rc = l.rc;
  ddmc__dbg_count_end(out, at, l.n);
  return ddmc__dbg_reply_rc(out, rc);
}

/* The library's walk for Instances (o == 0) or ReferringObjects (of o). */
static int walk_list(ddmc__dbg *d, ddmc_buf *out, int32_t max, ddmc_class c, ddmc_ref o) {
  const ddmc__mem *mem = ddmc__dbg_mem(d);
  mv_walk w = {.d = d, .out = out, .cls = c, .target = o};
  w.max = max > 0 ? (uint32_t)max : DDMC__MV_MAX_LISTED;
  if (w.max > DDMC__MV_MAX_LISTED) w.max = DDMC__MV_MAX_LISTED;
  ddmc__reach_visitor v = {o != 0 ? NULL : instance_object, o != 0 ? referrer : NULL, &w};
  w.v = &v;
  int rc = mv_run(&w);
  ddmc__free(mem, w.found);
  ddmc__free(mem, w.seen);
  return ddmc__dbg_reply_rc(out, rc);
}

static int type_instances(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  const ddmc__dbg_cls *c;
  int rc = ddmc__dbg_rd_class(d, in, &c);
  if (rc != 0) return rc;
  int32_t max = (int32_t)ddmc_read_u32(in);
  if ((rc = ddmc__dbg_rd_end(in)) != 0) return rc;
  if (max < 0) return DDMC_JDWP_ILLEGAL_ARGUMENT;
  if (DDMC__DBG_HAS(d, instances)) return op_run(d, out, max, c->handle, 0);
  return walk_list(d, out, max, c->handle, 0);
}

static int object_referring_objects(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  ddmc_ref o;
  int rc = ddmc__dbg_rd_object(d, in, &o);
  if (rc != 0) return rc;
  int32_t max = (int32_t)ddmc_read_u32(in);
  if ((rc = ddmc__dbg_rd_end(in)) != 0) return rc;
  if (o == 0) return DDMC_JDWP_INVALID_OBJECT;
  if (max < 0) return DDMC_JDWP_ILLEGAL_ARGUMENT;
  if (DDMC__DBG_HAS(d, referring_objects)) return op_run(d, out, max, 0, o);
  return walk_list(d, out, max, 0, o);
}

const ddmc__dbg_cmd ddmc__dbg_cmds_memview[] = {
    {1, 21, vm_instance_counts, "VirtualMachine.InstanceCounts", NULL},
    {2, 16, type_instances, "ReferenceType.Instances", NULL},
    {9, 10, object_referring_objects, "ObjectReference.ReferringObjects", NULL},
    {0, 0, NULL, NULL, NULL},
};
