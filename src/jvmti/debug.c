/* SPDX-License-Identifier: Apache-2.0 */
/* The debugging functions of JVM TI: breakpoints, field watches, single stepping and local
 * variables. Each environment keeps its own breakpoints and watches (so it gets events only for
 * what it set, and DUPLICATE / NOT_FOUND mean what the specification says); the VM's switches
 * themselves are shared with a JDWP debugger and counted in src/vmctl. */
#include <string.h>

#include "jvmti/funcs.h"
#include "vmctl/switches.h"

/* ---- breakpoints */

/* Set/ClearBreakpoint's checks, in the specification's order: phase, capability, method, location. */
static jvmtiError method_loc(ddmc__jv_jenv *e, jmethodID method, jlocation location, ddmc_location *out) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_LIVE);
  if (rc) return rc;
  if (!ddmc__jv_jenv_has_cap(e, DDMC_CAP_can_generate_breakpoint_events)) return JVMTI_ERROR_MUST_POSSESS_CAPABILITY;
  ddmc__jvmti *jv = e->jv;
  ddmc_class c;
  uint32_t idx;
  if (ddmc__jv_method_of(jv, method, &c, &idx) != 0) return JVMTI_ERROR_INVALID_METHODID;
  ddmc_method_info mi;
  memset(&mi, 0, sizeof(mi));
  if (jv->bridge->method_info == NULL || jv->bridge->method_info(jv->bridge_data, c, idx, &mi) != 0)
    return JVMTI_ERROR_INVALID_METHODID;
  if (mi.code_start < 0 || location < mi.code_start || location > mi.code_end) return JVMTI_ERROR_INVALID_LOCATION;
  *out = (ddmc_location){c, idx, location};
  return JVMTI_ERROR_NONE;
}

static int find_bp(const ddmc__jv_jenv *e, const ddmc_location *loc) {
  for (uint32_t i = 0; i < e->nbps; i++)
    if (e->bps[i].cls == loc->cls && e->bps[i].method == loc->method && e->bps[i].index == loc->index) return (int)i;
  return -1;
}

int ddmc__jv_jenv_has_bp(ddmc__jv_jenv *e, const ddmc_location *loc) {
  ddmc__lock(&e->jv->lock);
  int has = find_bp(e, loc) >= 0;
  ddmc__unlock(&e->jv->lock);
  return has;
}

static jvmtiError breakpoint(ddmc__jv_jenv *e, jmethodID method, jlocation location, int on) {
  ddmc_location loc;
  jvmtiError rc = method_loc(e, method, location, &loc);
  if (rc) return rc;
  ddmc__jvmti *jv = e->jv;
  /* The environment's list changes under jv->lock, the VM's switch outside it (a leaf lock). */
  ddmc__lock(&jv->lock);
  int i = find_bp(e, &loc);
  if (on && i >= 0)
    rc = JVMTI_ERROR_DUPLICATE;
  else if (on && e->nbps == DDMC__MAX_ENV_BPS)
    rc = JVMTI_ERROR_OUT_OF_MEMORY;
  else if (on)
    e->bps[e->nbps++] = loc;
  else if (i < 0)
    rc = JVMTI_ERROR_NOT_FOUND;
  else
    e->bps[i] = e->bps[--e->nbps];
  ddmc__unlock(&jv->lock);
  if (rc) return rc;
  rc = ddmc__jv_err(ddmc__ctl_breakpoint(jv->vm, &loc, on));
  if (rc != 0 && on) { /* the VM refused: as if never asked */
    ddmc__lock(&jv->lock);
    if ((i = find_bp(e, &loc)) >= 0) e->bps[i] = e->bps[--e->nbps];
    ddmc__unlock(&jv->lock);
  }
  return rc;
}

jvmtiError ddmc__jv_jt_SetBreakpoint(ddmc__jv_jenv *e, jmethodID method, jlocation location) {
  return breakpoint(e, method, location, 1);
}

jvmtiError ddmc__jv_jt_ClearBreakpoint(ddmc__jv_jenv *e, jmethodID method, jlocation location) {
  return breakpoint(e, method, location, 0);
}

/* ---- field watches */

static int find_watch(const ddmc__jv_jenv *e, ddmc_class c, uint32_t field) {
  for (uint32_t i = 0; i < e->nwatches; i++)
    if (e->watches[i].cls == c && e->watches[i].field == field) return (int)i;
  return -1;
}

int ddmc__jv_jenv_watches(ddmc__jv_jenv *e, ddmc_class c, uint32_t field, unsigned kind) {
  ddmc__lock(&e->jv->lock);
  int i = find_watch(e, c, field);
  int has = i >= 0 && (e->watches[i].kinds & kind) != 0;
  ddmc__unlock(&e->jv->lock);
  return has;
}

static jvmtiError watch(ddmc__jv_jenv *e, jclass klass, jfieldID field, unsigned kind, int on) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_LIVE);
  if (rc) return rc;
  int cap = kind == DDMC_WATCH_ACCESS ? DDMC_CAP_can_generate_field_access_events
                                          : DDMC_CAP_can_generate_field_modification_events;
  if (!ddmc__jv_jenv_has_cap(e, cap)) return JVMTI_ERROR_MUST_POSSESS_CAPABILITY;
  ddmc__jvmti *jv = e->jv;
  ddmc_class k, fc;
  uint32_t idx;
  if (ddmc__jv_class_of(jv, klass, &k) != 0) return JVMTI_ERROR_INVALID_CLASS;
  if (ddmc__jv_field_of(jv, field, &fc, &idx) != 0 || fc != k) return JVMTI_ERROR_INVALID_FIELDID;
  ddmc__lock(&jv->lock);
  int i = find_watch(e, k, idx);
  if (on) {
    if (i >= 0 && (e->watches[i].kinds & kind)) {
      rc = JVMTI_ERROR_DUPLICATE;
    } else if (i < 0 && e->nwatches == DDMC__MAX_ENV_WATCHES) {
      rc = JVMTI_ERROR_OUT_OF_MEMORY;
    } else {
      if (i < 0) {
        i = (int)e->nwatches++;
        e->watches[i] = (ddmc__jv_jwatch){k, idx, 0};
      }
      e->watches[i].kinds |= kind;
    }
  } else if (i < 0 || !(e->watches[i].kinds & kind)) {
    rc = JVMTI_ERROR_NOT_FOUND;
  } else if ((e->watches[i].kinds &= ~kind) == 0) {
    e->watches[i] = e->watches[--e->nwatches];
  }
  ddmc__unlock(&jv->lock);
  if (rc) return rc;
  rc = ddmc__jv_err(ddmc__ctl_field_watch(jv->vm, k, idx, kind, on));
  if (rc != 0 && on) { /* the VM refused: as if never asked */
    ddmc__lock(&jv->lock);
    if ((i = find_watch(e, k, idx)) >= 0 && (e->watches[i].kinds &= ~kind) == 0)
      e->watches[i] = e->watches[--e->nwatches];
    ddmc__unlock(&jv->lock);
  }
  return rc;
}

jvmtiError ddmc__jv_jt_SetFieldAccessWatch(ddmc__jv_jenv *e, jclass klass, jfieldID field) {
  return watch(e, klass, field, DDMC_WATCH_ACCESS, 1);
}
jvmtiError ddmc__jv_jt_ClearFieldAccessWatch(ddmc__jv_jenv *e, jclass klass, jfieldID field) {
  return watch(e, klass, field, DDMC_WATCH_ACCESS, 0);
}
jvmtiError ddmc__jv_jt_SetFieldModificationWatch(ddmc__jv_jenv *e, jclass klass, jfieldID field) {
  return watch(e, klass, field, DDMC_WATCH_MODIFY, 1);
}
jvmtiError ddmc__jv_jt_ClearFieldModificationWatch(ddmc__jv_jenv *e, jclass klass, jfieldID field) {
  return watch(e, klass, field, DDMC_WATCH_MODIFY, 0);
}

/* An environment's breakpoints and watches go with it (DisposeEnvironment). */
void ddmc__jv_jenv_clear_debug(ddmc__jv_jenv *e) {
  ddmc__jvmti *jv = e->jv;
  for (;;) {
    ddmc__lock(&jv->lock);
    int have = e->nbps > 0;
    ddmc_location loc = have ? e->bps[--e->nbps] : (ddmc_location){0, 0, 0};
    ddmc__unlock(&jv->lock);
    if (!have) break;
    ddmc__ctl_breakpoint(jv->vm, &loc, 0);
  }
  for (;;) {
    ddmc__lock(&jv->lock);
    int have = e->nwatches > 0;
    ddmc__jv_jwatch w = have ? e->watches[--e->nwatches] : (ddmc__jv_jwatch){0, 0, 0};
    ddmc__unlock(&jv->lock);
    if (!have) break;
    if (w.kinds & DDMC_WATCH_ACCESS) ddmc__ctl_field_watch(jv->vm, w.cls, w.field, DDMC_WATCH_ACCESS, 0);
    if (w.kinds & DDMC_WATCH_MODIFY) ddmc__ctl_field_watch(jv->vm, w.cls, w.field, DDMC_WATCH_MODIFY, 0);
  }
}

/* ---- single stepping: the VM steps a thread while some environment has SingleStep enabled
 * for it, or for every thread (then new threads too, from ThreadStart). */

typedef struct step_want {
  ddmc__jvmti *jv;
  uint32_t v[DDMC__MAX_STEP_THREADS];
  uint32_t n;
} step_want;

static int env_steps_thread(ddmc__jvmti *jv, uint32_t thread) {
  int ev = JVMTI_EVENT_SINGLE_STEP;
  for (ddmc__jv_jenv *e = atomic_load(&jv->envs); e; e = e->next)
    if (!atomic_load(&e->disposed) && ddmc__jv_jenv_enabled(e, ev, thread)) return 1;
  return 0;
}

static int add_if_stepped(void *arg, const ddmc_thread_info *t) {
  step_want *w = arg;
  if (w->n < DDMC__MAX_STEP_THREADS && env_steps_thread(w->jv, t->id)) w->v[w->n++] = t->id;
  return 0;
}

static int has(const uint32_t *v, uint32_t n, uint32_t x) {
  for (uint32_t i = 0; i < n; i++)
    if (v[i] == x) return 1;
  return 0;
}

void ddmc__jv_step_sync(ddmc__jvmti *jv) {
  if (jv->bridge == NULL || jv->bridge->set_stepping == NULL) return;
  const ddmc_vm_ops *vo = ddmc__jv_vm_ops(jv);
  step_want *w = ddmc__calloc(jv->mem, 1, sizeof(*w));
  if (w == NULL) return;
  w->jv = jv;
  if (atomic_load(&jv->want[JVMTI_EVENT_SINGLE_STEP - DDMC__JEV_FIRST]) > 0 && vo && vo->for_each_thread)
    vo->for_each_thread(ddmc__jv_vm_data(jv), add_if_stepped, w);
  /* step_lock orders the changes; the VM is told through the shared switch. */
  ddmc__lock_role(&jv->step_lock, DDMC__LOCK_SWITCHES);
  for (uint32_t i = 0; i < jv->nstep;)
    if (!has(w->v, w->n, jv->step[i])) {
      ddmc__ctl_stepping(jv->vm, jv->step[i], DDMC__ME_AGENT, 0);
      jv->step[i] = jv->step[--jv->nstep];
    } else {
      i++;
    }
  for (uint32_t i = 0; i < w->n; i++)
    if (!has(jv->step, jv->nstep, w->v[i]) && jv->nstep < DDMC__MAX_STEP_THREADS &&
        ddmc__ctl_stepping(jv->vm, w->v[i], DDMC__ME_AGENT, 1) == 0)
      jv->step[jv->nstep++] = w->v[i];
  ddmc__unlock_role(&jv->step_lock, DDMC__LOCK_SWITCHES);
  ddmc__free(jv->mem, w);
}

void ddmc__jv_step_thread(ddmc__jvmti *jv, uint32_t thread, int start) {
  /* One atomic read at each thread start and end. With no SingleStep wanted, step_sync has taken
   * every thread off (a thread that ends meanwhile is dropped at the next sync). */
  if (atomic_load_explicit(&jv->want[JVMTI_EVENT_SINGLE_STEP - DDMC__JEV_FIRST], memory_order_relaxed) == 0) return;
  ddmc__lock_role(&jv->step_lock, DDMC__LOCK_SWITCHES);
  int on = has(jv->step, jv->nstep, thread);
  if (start && !on && jv->nstep < DDMC__MAX_STEP_THREADS && env_steps_thread(jv, thread) &&
      ddmc__ctl_stepping(jv->vm, thread, DDMC__ME_AGENT, 1) == 0)
    jv->step[jv->nstep++] = thread;
  if (!start && on) {
    ddmc__ctl_stepping(jv->vm, thread, DDMC__ME_AGENT, 0);
    for (uint32_t i = 0; i < jv->nstep; i++)
      if (jv->step[i] == thread) jv->step[i] = jv->step[--jv->nstep];
  }
  ddmc__unlock_role(&jv->step_lock, DDMC__LOCK_SWITCHES);
}

/* ---- local variables: the thread is the calling one or one that is suspended (by an agent or
 * through the debugger's ThreadReference.Suspend), else THREAD_NOT_SUSPENDED, as the
 * specification says: the library never asks the VM for the frames of a running thread.
 *
 * Types are checked here, against the method's variable table, as HotSpot does: a variable
 * read or written as another type is TYPE_MISMATCH, a slot no variable holds at the frame's
 * location INVALID_SLOT; a method without a table leaves the checks to the VM. */

typedef struct var_find {
  int64_t index;
  int32_t slot;
  char type; /* the live variable's first signature letter, 0: none */
} var_find;

static int find_var(void *arg, const ddmc_variable *v) {
  var_find *f = arg;
  if (v->slot == f->slot && v->start <= f->index && f->index < v->start + v->length && v->signature)
    f->type = v->signature[0];
  return 0;
}

static int type_fits(char want, char have) {
  switch (want) {
    case 'I': return strchr("ZBCSI", have) != NULL;
    case 'L': return have == 'L' || have == '[';
    default: return want == have;
  }
}

static jvmtiError check_type(ddmc__jvmti *jv, uint32_t thread, jint depth, jint slot, char want) {
  if (thread != ddmc__jv_self() && !ddmc__jv_susp_held(jv, thread)) return JVMTI_ERROR_THREAD_NOT_SUSPENDED;
  const ddmc_vm_bridge *o = jv->bridge;
  if (o->frame_location == NULL || o->variable_table == NULL) return JVMTI_ERROR_NONE;
  ddmc_location loc;
  int rc = o->frame_location(jv->bridge_data, thread, depth, &loc);
  if (rc != 0) return ddmc__jv_err(rc);
  var_find f = {loc.index, slot, 0};
  if (o->variable_table(jv->bridge_data, loc.cls, loc.method, find_var, &f) != 0) return JVMTI_ERROR_NONE;
  if (f.type == 0) return JVMTI_ERROR_INVALID_SLOT;
  return type_fits(want, f.type) ? JVMTI_ERROR_NONE : JVMTI_ERROR_TYPE_MISMATCH;
}

static jvmtiError local_get(ddmc__jv_jenv *e, jthread thread, jint depth, jint slot, char tag, ddmc_value *out) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_LIVE);
  if (rc) return rc;
  if (!ddmc__jv_jenv_has_cap(e, DDMC_CAP_can_access_local_variables)) return JVMTI_ERROR_MUST_POSSESS_CAPABILITY;
  if (depth < 0) return JVMTI_ERROR_ILLEGAL_ARGUMENT;
  uint32_t t;
  if ((rc = ddmc__jv_thread_of(e->jv, thread, &t)) != 0) return rc;
  if ((rc = check_type(e->jv, t, depth, slot, tag)) != 0) return rc;
  memset(out, 0, sizeof(*out));
  return ddmc__jv_err(e->jv->bridge->get_local(e->jv->bridge_data, t, depth, slot, tag, out));
}

static jvmtiError local_set(ddmc__jv_jenv *e, jthread thread, jint depth, jint slot, const ddmc_value *v) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_LIVE);
  if (rc) return rc;
  if (!ddmc__jv_jenv_has_cap(e, DDMC_CAP_can_access_local_variables)) return JVMTI_ERROR_MUST_POSSESS_CAPABILITY;
  if (depth < 0) return JVMTI_ERROR_ILLEGAL_ARGUMENT;
  uint32_t t;
  if ((rc = ddmc__jv_thread_of(e->jv, thread, &t)) != 0) return rc;
  if ((rc = check_type(e->jv, t, depth, slot, v->tag)) != 0) return rc;
  return ddmc__jv_err(e->jv->bridge->set_local(e->jv->bridge_data, t, depth, slot, v));
}

jvmtiError ddmc__jv_jt_GetLocalObject(ddmc__jv_jenv *e, jthread thread, jint depth, jint slot, jobject *value_ptr) {
  if (value_ptr == NULL) return e == NULL ? JVMTI_ERROR_INVALID_ENVIRONMENT : JVMTI_ERROR_NULL_POINTER;
  ddmc_value v;
  jvmtiError rc = local_get(e, thread, depth, slot, 'L', &v);
  if (rc == 0) *value_ptr = v.u.l ? ddmc__jv_ref_local(e->jv, v.u.l, 0, 0) : NULL;
  return rc;
}

jvmtiError ddmc__jv_jt_GetLocalInstance(ddmc__jv_jenv *e, jthread thread, jint depth, jobject *value_ptr) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_LIVE);
  if (rc) return rc;
  if (!ddmc__jv_jenv_has_cap(e, DDMC_CAP_can_access_local_variables)) return JVMTI_ERROR_MUST_POSSESS_CAPABILITY;
  if (value_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  if (depth < 0) return JVMTI_ERROR_ILLEGAL_ARGUMENT;
  uint32_t t;
  if ((rc = ddmc__jv_thread_of(e->jv, thread, &t)) != 0) return rc;
  if (e->jv->bridge->frame_this == NULL) return JVMTI_ERROR_NOT_AVAILABLE;
  ddmc_ref r = 0;
  if ((rc = ddmc__jv_err(e->jv->bridge->frame_this(e->jv->bridge_data, t, depth, &r))) != 0) return rc;
  if (r == 0) return JVMTI_ERROR_INVALID_SLOT; /* a static method's frame */
  *value_ptr = ddmc__jv_ref_local(e->jv, r, 0, 0);
  return JVMTI_ERROR_NONE;
}

#define GETTER(Name, T, tag, member)                                                                             \
  jvmtiError ddmc__jv_jt_GetLocal##Name(ddmc__jv_jenv *e, jthread thread, jint depth, jint slot, T *value_ptr) { \
    if (value_ptr == NULL) return e == NULL ? JVMTI_ERROR_INVALID_ENVIRONMENT : JVMTI_ERROR_NULL_POINTER;        \
    ddmc_value v;                                                                                                \
    jvmtiError rc = local_get(e, thread, depth, slot, tag, &v);                                                  \
    if (rc == 0) *value_ptr = (T)v.u.member;                                                                     \
    return rc;                                                                                                   \
  }
GETTER(Int, jint, 'I', i)
GETTER(Long, jlong, 'J', j)
GETTER(Float, jfloat, 'F', f)
GETTER(Double, jdouble, 'D', d)

jvmtiError ddmc__jv_jt_SetLocalObject(ddmc__jv_jenv *e, jthread thread, jint depth, jint slot, jobject value) {
  ddmc_value v = {.tag = 'L'};
  if (value != NULL) {
    if (e == NULL || e->jv == NULL) return JVMTI_ERROR_INVALID_ENVIRONMENT;
    ddmc__jv_cell c;
    if (ddmc__jv_ref_get(e->jv, value, &c) != 0) return JVMTI_ERROR_INVALID_OBJECT;
    v.u.l = c.ref;
  }
  return local_set(e, thread, depth, slot, &v);
}

#define SETTER(Name, T, t, member)                                                                          \
  jvmtiError ddmc__jv_jt_SetLocal##Name(ddmc__jv_jenv *e, jthread thread, jint depth, jint slot, T value) { \
    ddmc_value v = {.tag = t};                                                                              \
    v.u.member = value;                                                                                     \
    return local_set(e, thread, depth, slot, &v);                                                           \
  }
SETTER(Int, jint, 'I', i)
SETTER(Long, jlong, 'J', j)
SETTER(Float, jfloat, 'F', f)
SETTER(Double, jdouble, 'D', d)
