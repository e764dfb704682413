/* SPDX-License-Identifier: Apache-2.0 */
/* JVM TI's reflection beyond members, over the bridge's optional reflection ops: GetBytecodes
 * (can_get_bytecodes), GetConstantPool (can_get_constant_pool), GetClassVersionNumbers,
 * GetSourceDebugExtension (can_get_source_debug_extension) and GetAllModules. Each capability is
 * potential exactly when its op is there (env.c); without the op the function answers
 * MUST_POSSESS_CAPABILITY (it cannot be added) or, for those that need none, ABSENT_INFORMATION /
 * an empty list, as a JVM without the information answers.
 *
 * The VM appends into a bounded buffer (DDMC__JV_MAX_BLOB: a method's code is at most 64 KiB, a
 * class file's pool far below that bound); the agent gets an Allocate'd copy. */
#include <stdlib.h>
#include <string.h>

#include "jvmti/funcs.h"

#define SL (JVMTI_PHASE_START | JVMTI_PHASE_LIVE)
#define DDMC__JV_MAX_BLOB ((size_t)16 << 20)
#define DDMC__JV_MAX_MODULES 65536u

/* Runs op's appending into a buffer and hands its bytes over Allocate'd (NUL-terminated, so a
 * string needs nothing more). */
static jvmtiError give_blob(ddmc__jvmti *jv, ddmc_buf *b, int rc, unsigned char **out, jint *n) {
  if (rc == 0 && ddmc_buf_error(b)) rc = DDMC_JDWP_OUT_OF_MEMORY;
  if (rc == 0) {
    size_t len = ddmc_buf_len(b);
    unsigned char *p = ddmc__jv_alloc(len + 1);
    if (p == NULL) {
      rc = DDMC_JDWP_OUT_OF_MEMORY;
    } else {
      if (len) memcpy(p, b->p, len);
      p[len] = 0;
      *out = p;
      if (n) *n = (jint)len;
    }
  }
  ddmc__buf_free(b);
  return rc ? ddmc__jv_err(rc) : JVMTI_ERROR_NONE;
}

static jvmtiError klass_of(ddmc__jv_jenv *e, jclass k, ddmc_class *c) {
  jvmtiError rc = ddmc__jv_phase_ok(e, SL);
  if (rc) return rc;
  if (e->jv->bridge == NULL) return JVMTI_ERROR_NOT_AVAILABLE;
  return k == NULL || ddmc__jv_class_of(e->jv, k, c) != 0 ? JVMTI_ERROR_INVALID_CLASS : JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_GetBytecodes(ddmc__jv_jenv *e, jmethodID method, jint *count_ptr, unsigned char **bytes_ptr) {
  jvmtiError rc = ddmc__jv_phase_ok(e, SL);
  if (rc) return rc;
  if (!ddmc__jv_jenv_has_cap(e, DDMC_CAP_can_get_bytecodes)) return JVMTI_ERROR_MUST_POSSESS_CAPABILITY;
  if (count_ptr == NULL || bytes_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  ddmc__jvmti *jv = e->jv;
  ddmc_class c;
  uint32_t idx;
  if (method == NULL || ddmc__jv_method_of(jv, method, &c, &idx) != 0) return JVMTI_ERROR_INVALID_METHODID;
  ddmc_buf b;
  ddmc__buf_init(&b, jv->mem, DDMC__JV_MAX_BLOB);
  return give_blob(jv, &b, jv->bridge->bytecodes(jv->bridge_data, c, idx, &b), bytes_ptr, count_ptr);
}

jvmtiError ddmc__jv_jt_GetConstantPool(ddmc__jv_jenv *e, jclass klass, jint *count_ptr, jint *bytes_count_ptr,
                                       unsigned char **bytes_ptr) {
  jvmtiError rc = ddmc__jv_phase_ok(e, SL);
  if (rc) return rc;
  if (!ddmc__jv_jenv_has_cap(e, DDMC_CAP_can_get_constant_pool)) return JVMTI_ERROR_MUST_POSSESS_CAPABILITY;
  ddmc_class c;
  if ((rc = klass_of(e, klass, &c)) != 0) return rc;
  if (count_ptr == NULL || bytes_count_ptr == NULL || bytes_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  ddmc__jvmti *jv = e->jv;
  int32_t count = 0;
  ddmc_buf b;
  ddmc__buf_init(&b, jv->mem, DDMC__JV_MAX_BLOB);
  rc = give_blob(jv, &b, jv->bridge->constant_pool(jv->bridge_data, c, &count, &b), bytes_ptr, bytes_count_ptr);
  if (rc == JVMTI_ERROR_NONE) *count_ptr = count;
  return rc;
}

jvmtiError ddmc__jv_jt_GetClassVersionNumbers(ddmc__jv_jenv *e, jclass klass, jint *minor_ptr, jint *major_ptr) {
  ddmc_class c;
  jvmtiError rc = klass_of(e, klass, &c);
  if (rc) return rc;
  if (minor_ptr == NULL || major_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  ddmc__jvmti *jv = e->jv;
  if (jv->bridge->class_file_version == NULL) return JVMTI_ERROR_ABSENT_INFORMATION;
  int32_t major = 0, minor = 0;
  int r = jv->bridge->class_file_version(jv->bridge_data, c, &major, &minor);
  if (r != 0) return ddmc__jv_err(r);
  *minor_ptr = minor;
  *major_ptr = major;
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_GetSourceDebugExtension(ddmc__jv_jenv *e, jclass klass, char **source_debug_extension_ptr) {
  jvmtiError rc = ddmc__jv_phase_ok(e, SL);
  if (rc) return rc;
  if (!ddmc__jv_jenv_has_cap(e, DDMC_CAP_can_get_source_debug_extension)) return JVMTI_ERROR_MUST_POSSESS_CAPABILITY;
  ddmc_class c;
  if ((rc = klass_of(e, klass, &c)) != 0) return rc;
  if (source_debug_extension_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  ddmc__jvmti *jv = e->jv;
  ddmc_buf b;
  ddmc__buf_init(&b, jv->mem, DDMC__JV_MAX_BLOB);
  return give_blob(jv, &b, jv->bridge->source_debug_extension(jv->bridge_data, c, &b),
                   (unsigned char **)source_debug_extension_ptr, NULL);
}

typedef struct module_list {
  ddmc__jvmti *jv;
  jobject *v;
  uint32_t n, cap;
  int oom;
} module_list;

static int put_module(void *arg, ddmc_ref m) {
  module_list *l = arg;
  if (l->n == l->cap) {
    jobject *v = l->cap < DDMC__JV_MAX_MODULES ? realloc(l->v, sizeof(*v) * (l->cap ? 2 * l->cap : 64)) : NULL;
    if (v == NULL) {
      l->oom = 1;
      return 1;
    }
    l->v = v;
    l->cap = l->cap ? 2 * l->cap : 64;
  }
  if ((l->v[l->n] = ddmc__jv_ref_local(l->jv, m, 0, 0)) == NULL) {
    l->oom = 1;
    return 1;
  }
  l->n++;
  return 0;
}

/* A VM without modules has none to list: an empty array, as a JVM before 9 would have. */
jvmtiError ddmc__jv_jt_GetAllModules(ddmc__jv_jenv *e, jint *module_count_ptr, jobject **modules_ptr) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_LIVE);
  if (rc) return rc;
  if (module_count_ptr == NULL || modules_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  ddmc__jvmti *jv = e->jv;
  module_list l = {jv, ddmc__jv_alloc(sizeof(jobject) * 64), 0, 64, 0};
  if (l.v == NULL) return JVMTI_ERROR_OUT_OF_MEMORY;
  int r = jv->bridge && jv->bridge->for_each_module ? jv->bridge->for_each_module(jv->bridge_data, put_module, &l) : 0;
  if (r != 0 || l.oom) {
    free(l.v);
    return l.oom ? JVMTI_ERROR_OUT_OF_MEMORY : ddmc__jv_err(r);
  }
  *module_count_ptr = (jint)l.n;
  *modules_ptr = l.v; /* malloc'd and realloc'd: Deallocate (free) releases it */
  return JVMTI_ERROR_NONE;
}
