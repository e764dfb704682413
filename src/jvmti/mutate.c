/* SPDX-License-Identifier: Apache-2.0 */
/* RedefineClasses, PopFrame and ForceEarlyReturn* over the bridge's mutate ops (bridge.h): their
 * capabilities are potential exactly when the VM has the op (env.c). PopFrame and ForceEarlyReturn
 * want the thread suspended (by an agent or a debugger: one suspension, suspend.c) or the caller
 * itself, which the VM's op then serves from inside its own callback. */
#include <stdlib.h>

#include "jvmti/funcs.h"

/* Classes one RedefineClasses may name, as a debugger's request (src/debugger/cmd_mutate.c). */
#define DDMC__MAX_REDEFINE 4096

static jvmtiError mutate_check(ddmc__jv_jenv *e, int cap, int has_op) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_LIVE);
  if (rc) return rc;
  if (!ddmc__jv_jenv_has_cap(e, cap)) return JVMTI_ERROR_MUST_POSSESS_CAPABILITY;
  return has_op ? JVMTI_ERROR_NONE : JVMTI_ERROR_NOT_AVAILABLE;
}

/* The thread, suspended or the caller. */
static jvmtiError held_thread(ddmc__jv_jenv *e, jthread thread, uint32_t *t) {
  jvmtiError rc = ddmc__jv_thread_of(e->jv, thread, t);
  if (rc) return rc;
  return *t == ddmc__jv_self() || ddmc__jv_susp_held(e->jv, *t) ? JVMTI_ERROR_NONE : JVMTI_ERROR_THREAD_NOT_SUSPENDED;
}

jvmtiError ddmc__jv_jt_PopFrame(ddmc__jv_jenv *e, jthread thread) {
  jvmtiError rc = mutate_check(e, DDMC_CAP_can_pop_frame, e && e->jv && e->jv->bridge && e->jv->bridge->pop_frames);
  uint32_t t;
  if (rc == 0) rc = held_thread(e, thread, &t);
  return rc ? rc : ddmc__jv_err(e->jv->bridge->pop_frames(e->jv->bridge_data, t, 1));
}

static jvmtiError early_return(ddmc__jv_jenv *e, jthread thread, const ddmc_value *v) {
  jvmtiError rc =
      mutate_check(e, DDMC_CAP_can_force_early_return, e && e->jv && e->jv->bridge && e->jv->bridge->force_early_return);
  uint32_t t;
  if (rc == 0) rc = held_thread(e, thread, &t);
  return rc ? rc : ddmc__jv_err(e->jv->bridge->force_early_return(e->jv->bridge_data, t, v));
}

jvmtiError ddmc__jv_jt_ForceEarlyReturnObject(ddmc__jv_jenv *e, jthread thread, jobject value) {
  ddmc_value v = {.tag = 'L'};
  ddmc__jv_cell c;
  if (value != NULL) {
    if (e == NULL || e->jv == NULL) return JVMTI_ERROR_INVALID_ENVIRONMENT;
    if (ddmc__jv_ref_get(e->jv, value, &c) != 0) return JVMTI_ERROR_INVALID_OBJECT;
    v.u.l = c.ref;
  }
  return early_return(e, thread, &v);
}

jvmtiError ddmc__jv_jt_ForceEarlyReturnInt(ddmc__jv_jenv *e, jthread thread, jint value) {
  ddmc_value v = {.tag = 'I', .u.i = value};
  return early_return(e, thread, &v);
}

jvmtiError ddmc__jv_jt_ForceEarlyReturnLong(ddmc__jv_jenv *e, jthread thread, jlong value) {
  ddmc_value v = {.tag = 'J', .u.j = value};
  return early_return(e, thread, &v);
}

jvmtiError ddmc__jv_jt_ForceEarlyReturnFloat(ddmc__jv_jenv *e, jthread thread, jfloat value) {
  ddmc_value v = {.tag = 'F', .u.f = value};
  return early_return(e, thread, &v);
}

jvmtiError ddmc__jv_jt_ForceEarlyReturnDouble(ddmc__jv_jenv *e, jthread thread, jdouble value) {
  ddmc_value v = {.tag = 'D', .u.d = value};
  return early_return(e, thread, &v);
}

jvmtiError ddmc__jv_jt_ForceEarlyReturnVoid(ddmc__jv_jenv *e, jthread thread) {
  ddmc_value v = {.tag = 'V'};
  return early_return(e, thread, &v);
}

jvmtiError ddmc__jv_jt_RedefineClasses(ddmc__jv_jenv *e, jint count, const ddmc__jv_jclass_def *defs) {
  jvmtiError rc =
      mutate_check(e, DDMC_CAP_can_redefine_classes, e && e->jv && e->jv->bridge && e->jv->bridge->redefine_classes);
  if (rc) return rc;
  if (count < 0 || count > DDMC__MAX_REDEFINE) return JVMTI_ERROR_ILLEGAL_ARGUMENT;
  if (defs == NULL) return JVMTI_ERROR_NULL_POINTER;
  if (count == 0) return JVMTI_ERROR_NONE;
  ddmc_class *cls = calloc((size_t)count, sizeof(*cls));
  const uint8_t **bytes = calloc((size_t)count, sizeof(*bytes));
  uint32_t *lens = calloc((size_t)count, sizeof(*lens));
  if (cls == NULL || bytes == NULL || lens == NULL) rc = JVMTI_ERROR_OUT_OF_MEMORY;
  for (jint i = 0; i < count && rc == 0; i++) {
    if (defs[i].class_bytes == NULL) rc = JVMTI_ERROR_NULL_POINTER;
    else if (ddmc__jv_class_of(e->jv, defs[i].klass, &cls[i]) != 0) rc = JVMTI_ERROR_INVALID_CLASS;
    else if (defs[i].class_byte_count <= 0) rc = JVMTI_ERROR_INVALID_CLASS_FORMAT;
    bytes[i] = defs[i].class_bytes;
    lens[i] = (uint32_t)defs[i].class_byte_count;
  }
  if (rc == 0)
    rc = ddmc__jv_err(e->jv->bridge->redefine_classes(e->jv->bridge_data, (uint32_t)count, cls, bytes, lens));
  free(cls);
  free(bytes);
  free(lens);
  return rc;
}
