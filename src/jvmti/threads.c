/* SPDX-License-Identifier: Apache-2.0 */
/* Threads, thread groups and stacks: GetAllThreads, GetThreadInfo, GetThreadState,
 * GetCurrentThread, GetTopThreadGroups, GetThreadGroupInfo, GetThreadGroupChildren,
 * GetFrameCount, GetFrameLocation, GetStackTrace, GetAllStackTraces.
 *
 * Threads come from the VM's DDM op for_each_thread and the bridge's thread_info (threads the
 * VM marks internal, such as the JDWP thread, are not shown, as on a JVM). A stack is read on
 * the thread itself when it asks for its own; another thread's is read inside
 * with_world_stopped, so it cannot change under the reader. */
#include <stdlib.h>
#include <string.h>

#include "jvmti/funcs.h"

typedef struct tinfo {
  uint32_t id;
  int daemon;
} tinfo;

typedef struct thread_list {
  ddmc__jvmti *jv;
  tinfo *v;
  uint32_t n, cap;
  int oom;
} thread_list;

/* Threads one listing holds at most: a VM answering more is treated as out of memory rather than
 * letting for_each_thread grow the list without bound. */
#define DDMC__JV_MAX_LISTED_THREADS 65536u

/* Ids only: thread_info is asked after the VM's iteration (its thread-list lock) is over. */
static int collect_thread(void *arg, const ddmc_thread_info *t) {
  thread_list *l = arg;
  if (l->n == l->cap) {
    uint32_t cap = l->cap ? l->cap * 2 : 32;
    tinfo *v = cap > DDMC__JV_MAX_LISTED_THREADS ? NULL : realloc(l->v, sizeof(tinfo) * cap);
    if (v == NULL) {
      l->oom = 1;
      return 1;
    }
    l->v = v;
    l->cap = cap;
  }
  l->v[l->n++] = (tinfo){t->id, t->daemon};
  return 0;
}

static jvmtiError list_threads(ddmc__jvmti *jv, thread_list *l) {
  memset(l, 0, sizeof(*l));
  l->jv = jv;
  const ddmc_vm_ops *vo = ddmc__jv_vm_ops(jv);
  if (vo == NULL || vo->for_each_thread == NULL || jv->bridge == NULL || jv->bridge->thread_info == NULL)
    return JVMTI_ERROR_NOT_AVAILABLE;
  vo->for_each_thread(ddmc__jv_vm_data(jv), collect_thread, l);
  if (l->oom) {
    free(l->v);
    return JVMTI_ERROR_OUT_OF_MEMORY;
  }
  uint32_t k = 0; /* keep the threads an agent may see */
  for (uint32_t i = 0; i < l->n; i++) {
    ddmc_thread_detail ti;
    memset(&ti, 0, sizeof(ti));
    if (jv->bridge->thread_info(jv->bridge_data, l->v[i].id, &ti) == 0 && !ti.internal && ti.object != 0) l->v[k++] = l->v[i];
  }
  l->n = k;
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_GetAllThreads(ddmc__jv_jenv *e, jint *threads_count_ptr, jthread **threads_ptr) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_LIVE);
  if (rc) return rc;
  if (threads_count_ptr == NULL || threads_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  thread_list l;
  if ((rc = list_threads(e->jv, &l)) != 0) return rc;
  jthread *v = ddmc__jv_alloc(sizeof(jthread) * (l.n ? l.n : 1));
  uint32_t k = 0;
  for (uint32_t i = 0; v != NULL && i < l.n; i++) {
    jthread t = ddmc__jv_thread_local(e->jv, l.v[i].id);
    if (t != NULL) v[k++] = t; /* a thread that ended meanwhile is left out */
  }
  free(l.v);
  if (v == NULL) return JVMTI_ERROR_OUT_OF_MEMORY;
  *threads_count_ptr = (jint)k;
  *threads_ptr = v;
  return JVMTI_ERROR_NONE;
}

static int is_daemon(ddmc__jvmti *jv, uint32_t id) {
  thread_list l;
  if (list_threads(jv, &l) != 0) return 0;
  int d = 0;
  for (uint32_t i = 0; i < l.n; i++)
    if (l.v[i].id == id) d = l.v[i].daemon;
  free(l.v);
  return d;
}

jvmtiError ddmc__jv_jt_GetThreadInfo(ddmc__jv_jenv *e, jthread thread, ddmc__jv_jthread_info *info_ptr) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_LIVE);
  if (rc) return rc;
  if (info_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  ddmc__jvmti *jv = e->jv;
  uint32_t id;
  if ((rc = ddmc__jv_thread_of(jv, thread, &id)) != 0) return rc;
  if (jv->bridge == NULL || jv->bridge->thread_info == NULL) return JVMTI_ERROR_NOT_AVAILABLE;
  ddmc_thread_detail ti;
  memset(&ti, 0, sizeof(ti));
  if (jv->bridge->thread_info(jv->bridge_data, id, &ti) != 0) return JVMTI_ERROR_THREAD_NOT_ALIVE;
  char *name = ddmc__jv_strdup(ti.name ? ti.name : "");
  if (name == NULL) return JVMTI_ERROR_OUT_OF_MEMORY;
  memset(info_ptr, 0, sizeof(*info_ptr));
  info_ptr->name = name;
  info_ptr->priority = JVMTI_THREAD_NORM_PRIORITY;
  info_ptr->is_daemon = (jboolean)is_daemon(jv, id);
  info_ptr->thread_group = ti.group ? ddmc__jv_ref_local(jv, ti.group, 0, 0) : NULL;
  info_ptr->context_class_loader = NULL;
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_GetThreadState(ddmc__jv_jenv *e, jthread thread, jint *thread_state_ptr) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_LIVE);
  if (rc) return rc;
  if (thread_state_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  ddmc__jvmti *jv = e->jv;
  uint32_t id;
  rc = ddmc__jv_thread_of(jv, thread, &id);
  if (rc == JVMTI_ERROR_THREAD_NOT_ALIVE) {
    /* A Thread that has ended (or never started): the specification's TERMINATED (or 0). */
    *thread_state_ptr = JVMTI_THREAD_STATE_TERMINATED;
    return JVMTI_ERROR_NONE;
  }
  if (rc) return rc;
  ddmc_thread_detail ti;
  memset(&ti, 0, sizeof(ti));
  if (jv->bridge == NULL || jv->bridge->thread_info == NULL || jv->bridge->thread_info(jv->bridge_data, id, &ti) != 0) {
    *thread_state_ptr = JVMTI_THREAD_STATE_TERMINATED;
    return JVMTI_ERROR_NONE;
  }
  jint s;
  switch (ti.status) {
    case DDMC_TS_ZOMBIE: s = JVMTI_THREAD_STATE_TERMINATED; break;
    case DDMC_TS_SLEEPING:
      s = JVMTI_THREAD_STATE_ALIVE | JVMTI_THREAD_STATE_WAITING | JVMTI_THREAD_STATE_WAITING_WITH_TIMEOUT |
          JVMTI_THREAD_STATE_SLEEPING;
      break;
    case DDMC_TS_MONITOR: s = JVMTI_THREAD_STATE_ALIVE | JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER; break;
    case DDMC_TS_WAIT:
      s = JVMTI_THREAD_STATE_ALIVE | JVMTI_THREAD_STATE_WAITING | JVMTI_THREAD_STATE_WAITING_INDEFINITELY |
          JVMTI_THREAD_STATE_IN_OBJECT_WAIT;
      break;
    default: s = JVMTI_THREAD_STATE_ALIVE | JVMTI_THREAD_STATE_RUNNABLE; break;
  }
  /* Held by an agent's SuspendThread or by the debugger's count (suspend.c; a thread the
   * debugger holds inside an event it reported is not known here). */
  if ((s & JVMTI_THREAD_STATE_ALIVE) && ddmc__jv_susp_held(jv, id)) s |= JVMTI_THREAD_STATE_SUSPENDED;
  *thread_state_ptr = s;
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_GetCurrentThread(ddmc__jv_jenv *e, jthread *thread_ptr) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_START | JVMTI_PHASE_LIVE);
  if (rc) return rc;
  if (thread_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  uint32_t id = ddmc__jv_self();
  if (id == 0) return JVMTI_ERROR_UNATTACHED_THREAD;
  *thread_ptr = ddmc__jv_thread_local(e->jv, id);
  return *thread_ptr ? JVMTI_ERROR_NONE : JVMTI_ERROR_THREAD_NOT_ALIVE;
}

/* ---- thread groups */

typedef struct group_list {
  ddmc_ref g[64], parent[64];
  char *name[64];
  uint32_t n;
} group_list;

static int collect_group(void *arg, ddmc_ref group, ddmc_ref parent, const char *name) {
  group_list *l = arg;
  if (l->n == 64) return 1;
  l->g[l->n] = group;
  l->parent[l->n] = parent;
  l->name[l->n] = ddmc__jv_strdup(name ? name : "");
  l->n++;
  return 0;
}

static jvmtiError list_groups(ddmc__jvmti *jv, group_list *l) {
  memset(l, 0, sizeof(*l));
  if (jv->bridge == NULL || jv->bridge->for_each_group == NULL) return JVMTI_ERROR_NOT_AVAILABLE;
  jv->bridge->for_each_group(jv->bridge_data, collect_group, l);
  return JVMTI_ERROR_NONE;
}

static void free_groups(group_list *l) {
  for (uint32_t i = 0; i < l->n; i++) free(l->name[i]);
}

static int find_group(ddmc__jvmti *jv, const group_list *l, jthreadGroup h) {
  ddmc__jv_cell c;
  if (h == NULL || ddmc__jv_ref_get(jv, h, &c) != 0) return -1;
  for (uint32_t i = 0; i < l->n; i++)
    if (l->g[i] == c.ref) return (int)i;
  return -1;
}

jvmtiError ddmc__jv_jt_GetTopThreadGroups(ddmc__jv_jenv *e, jint *group_count_ptr, jthreadGroup **groups_ptr) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_LIVE);
  if (rc) return rc;
  if (group_count_ptr == NULL || groups_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  group_list l;
  if ((rc = list_groups(e->jv, &l)) != 0) return rc;
  jthreadGroup *v = ddmc__jv_alloc(sizeof(jthreadGroup) * (l.n ? l.n : 1));
  jint k = 0;
  for (uint32_t i = 0; v != NULL && i < l.n; i++)
    if (l.parent[i] == 0) v[k++] = ddmc__jv_ref_local(e->jv, l.g[i], 0, 0);
  free_groups(&l);
  if (v == NULL) return JVMTI_ERROR_OUT_OF_MEMORY;
  *group_count_ptr = k;
  *groups_ptr = v;
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_GetThreadGroupInfo(ddmc__jv_jenv *e, jthreadGroup group, ddmc__jv_jgroup_info *info_ptr) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_LIVE);
  if (rc) return rc;
  if (info_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  group_list l;
  if ((rc = list_groups(e->jv, &l)) != 0) return rc;
  int i = find_group(e->jv, &l, group);
  if (i < 0) {
    free_groups(&l);
    return JVMTI_ERROR_INVALID_THREAD_GROUP;
  }
  memset(info_ptr, 0, sizeof(*info_ptr));
  info_ptr->parent = l.parent[i] ? ddmc__jv_ref_local(e->jv, l.parent[i], 0, 0) : NULL;
  info_ptr->name = ddmc__jv_strdup(l.name[i]);
  info_ptr->max_priority = JVMTI_THREAD_MAX_PRIORITY;
  info_ptr->is_daemon = 0;
  free_groups(&l);
  return info_ptr->name ? JVMTI_ERROR_NONE : JVMTI_ERROR_OUT_OF_MEMORY;
}

jvmtiError ddmc__jv_jt_GetThreadGroupChildren(ddmc__jv_jenv *e, jthreadGroup group, jint *thread_count_ptr,
                                              jthread **threads_ptr, jint *group_count_ptr, jthreadGroup **groups_ptr) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_LIVE);
  if (rc) return rc;
  if (!thread_count_ptr || !threads_ptr || !group_count_ptr || !groups_ptr) return JVMTI_ERROR_NULL_POINTER;
  ddmc__jvmti *jv = e->jv;
  group_list g;
  if ((rc = list_groups(jv, &g)) != 0) return rc;
  int gi = find_group(jv, &g, group);
  if (gi < 0) {
    free_groups(&g);
    return JVMTI_ERROR_INVALID_THREAD_GROUP;
  }
  thread_list l;
  if ((rc = list_threads(jv, &l)) != 0) {
    free_groups(&g);
    return rc;
  }
  jthread *tv = ddmc__jv_alloc(sizeof(jthread) * (l.n ? l.n : 1));
  jthreadGroup *gv = ddmc__jv_alloc(sizeof(jthreadGroup) * (g.n ? g.n : 1));
  jint nt = 0, ng = 0;
  for (uint32_t i = 0; tv && gv && i < l.n; i++) {
    ddmc_thread_detail ti;
    memset(&ti, 0, sizeof(ti));
    if (jv->bridge->thread_info(jv->bridge_data, l.v[i].id, &ti) == 0 && ti.group == g.g[gi]) {
      jthread t = ddmc__jv_ref_local(jv, ti.object, 0, l.v[i].id);
      if (t) tv[nt++] = t;
    }
  }
  for (uint32_t i = 0; tv && gv && i < g.n; i++)
    if (g.parent[i] == g.g[gi]) gv[ng++] = ddmc__jv_ref_local(jv, g.g[i], 0, 0);
  free(l.v);
  free_groups(&g);
  if (!tv || !gv) {
    free(tv);
    free(gv);
    return JVMTI_ERROR_OUT_OF_MEMORY;
  }
  *thread_count_ptr = nt;
  *threads_ptr = tv;
  *group_count_ptr = ng;
  *groups_ptr = gv;
  return JVMTI_ERROR_NONE;
}

/* ---- stacks */

typedef struct stack_req {
  ddmc__jvmti *jv;
  uint32_t thread;
  jint start, max; /* start < 0: from the bottom (GetStackTrace's negative start_depth) */
  ddmc__jv_jframe_info *out;
  jint count, total;
  int rc;
} stack_req;

static int read_stack(void *arg) {
  stack_req *r = arg;
  ddmc__jvmti *jv = r->jv;
  int32_t n = 0;
  int rc = jv->bridge->frame_count(jv->bridge_data, r->thread, &n);
  if (rc != 0) {
    r->rc = rc == DDMC_JDWP_INVALID_THREAD ? JVMTI_ERROR_THREAD_NOT_ALIVE : ddmc__jv_err(rc);
    return 0;
  }
  r->total = n;
  if (r->out == NULL) return 0;
  jint first = r->start >= 0 ? r->start : n + r->start;
  if (first < 0 || (first >= n && !(first == 0 && n == 0))) {
    r->rc = JVMTI_ERROR_ILLEGAL_ARGUMENT;
    return 0;
  }
  for (jint d = first; d < n && r->count < r->max; d++) {
    ddmc_location loc;
    if (jv->bridge->frame_location(jv->bridge_data, r->thread, d, &loc) != 0) break;
    r->out[r->count].method = ddmc__jv_method_id(jv, loc.cls, loc.method);
    r->out[r->count].location = loc.index;
    r->count++;
  }
  return 0;
}

/* Reads thread's stack: on the thread itself, or with the world stopped. */
static jvmtiError stack_of(ddmc__jvmti *jv, stack_req *r) {
  if (jv->bridge == NULL || jv->bridge->frame_count == NULL || jv->bridge->frame_location == NULL)
    return JVMTI_ERROR_NOT_AVAILABLE;
  r->rc = 0;
  if (r->thread == ddmc__jv_self() || jv->bridge->with_world_stopped == NULL)
    read_stack(r);
  else
    jv->bridge->with_world_stopped(jv->bridge_data, read_stack, r);
  return r->rc;
}

jvmtiError ddmc__jv_jt_GetFrameCount(ddmc__jv_jenv *e, jthread thread, jint *count_ptr) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_LIVE);
  if (rc) return rc;
  if (count_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  stack_req r = {.jv = e->jv};
  if ((rc = ddmc__jv_thread_of(e->jv, thread, &r.thread)) != 0) return rc;
  if ((rc = stack_of(e->jv, &r)) != 0) return rc;
  *count_ptr = r.total;
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_GetStackTrace(ddmc__jv_jenv *e, jthread thread, jint start_depth, jint max_frame_count,
                                     ddmc__jv_jframe_info *frame_buffer, jint *count_ptr) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_LIVE);
  if (rc) return rc;
  if (max_frame_count < 0) return JVMTI_ERROR_ILLEGAL_ARGUMENT;
  if (frame_buffer == NULL || count_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  stack_req r = {.jv = e->jv, .start = start_depth, .max = max_frame_count, .out = frame_buffer};
  if ((rc = ddmc__jv_thread_of(e->jv, thread, &r.thread)) != 0) return rc;
  if ((rc = stack_of(e->jv, &r)) != 0) return rc;
  *count_ptr = r.count;
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_GetFrameLocation(ddmc__jv_jenv *e, jthread thread, jint depth, jmethodID *method_ptr,
                                        jlocation *location_ptr) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_LIVE);
  if (rc) return rc;
  if (depth < 0) return JVMTI_ERROR_ILLEGAL_ARGUMENT;
  if (method_ptr == NULL || location_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  ddmc__jv_jframe_info f;
  stack_req r = {.jv = e->jv, .start = depth, .max = 1, .out = &f};
  if ((rc = ddmc__jv_thread_of(e->jv, thread, &r.thread)) != 0) return rc;
  if ((rc = stack_of(e->jv, &r)) != 0) return rc == JVMTI_ERROR_ILLEGAL_ARGUMENT ? JVMTI_ERROR_NO_MORE_FRAMES : rc;
  if (r.count == 0) return JVMTI_ERROR_NO_MORE_FRAMES;
  *method_ptr = f.method;
  *location_ptr = f.location;
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_GetAllStackTraces(ddmc__jv_jenv *e, jint max_frame_count, ddmc__jv_jstack_info **stack_info_ptr,
                                         jint *thread_count_ptr) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_LIVE);
  if (rc) return rc;
  if (max_frame_count < 0) return JVMTI_ERROR_ILLEGAL_ARGUMENT;
  if (stack_info_ptr == NULL || thread_count_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  ddmc__jvmti *jv = e->jv;
  thread_list l;
  if ((rc = list_threads(jv, &l)) != 0) return rc;
  /* One block: the stack_info array, then every thread's frames (one Deallocate frees all). */
  size_t bytes =
      sizeof(ddmc__jv_jstack_info) * l.n + sizeof(ddmc__jv_jframe_info) * (size_t)l.n * (size_t)max_frame_count;
  if (l.n != 0 && (size_t)max_frame_count > ((size_t)1 << 40) / l.n) {
    free(l.v);
    return JVMTI_ERROR_OUT_OF_MEMORY;
  }
  unsigned char *block = ddmc__jv_alloc(bytes ? bytes : 1);
  if (block == NULL) {
    free(l.v);
    return JVMTI_ERROR_OUT_OF_MEMORY;
  }
  ddmc__jv_jstack_info *si = (ddmc__jv_jstack_info *)block;
  ddmc__jv_jframe_info *frames = (ddmc__jv_jframe_info *)(block + sizeof(ddmc__jv_jstack_info) * l.n);
  jint k = 0;
  for (uint32_t i = 0; i < l.n; i++) {
    stack_req r = {.jv = jv,
                   .thread = l.v[i].id,
                   .start = 0,
                   .max = max_frame_count,
                   .out = frames + (size_t)k * (size_t)max_frame_count};
    if (stack_of(jv, &r) != 0 && r.total != 0) continue;
    jthread t = ddmc__jv_thread_local(jv, l.v[i].id);
    if (t == NULL) continue;
    jint state = 0;
    ddmc__jv_jt_GetThreadState(e, t, &state);
    si[k] = (ddmc__jv_jstack_info){t, state, r.out, r.count};
    k++;
  }
  free(l.v);
  *stack_info_ptr = si;
  *thread_count_ptr = k;
  return JVMTI_ERROR_NONE;
}
