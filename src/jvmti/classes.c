/* SPDX-License-Identifier: Apache-2.0 */
/* Classes, methods and fields: GetLoadedClasses, GetClassSignature, GetClassStatus,
 * GetSourceFileName, GetClassModifiers, GetClassMethods, GetClassFields, IsInterface,
 * IsArrayClass, GetClassLoader, GetImplementedInterfaces; GetMethodName,
 * GetMethodDeclaringClass, GetMethodModifiers, GetMaxLocals, GetArgumentsSize,
 * GetLineNumberTable, GetMethodLocation, GetLocalVariableTable, IsMethodNative,
 * IsMethodObsolete; GetFieldName, GetFieldDeclaringClass, GetFieldModifiers. All read the
 * bridge's reflective ops (class_info, method_info, field_info, line_table, variable_table),
 * which may run on any thread. Arrays returned are Allocate'd: the agent Deallocates them. */
#include <stdlib.h>
#include <string.h>

#include "jvmti/funcs.h"

#define SL (JVMTI_PHASE_START | JVMTI_PHASE_LIVE)

/* The checks every function here starts with, in the specification's order: the phase (start or
 * live), the caller's pointers (ptrs_ok 0: NULL_POINTER), then the class, method or field, whose
 * description the bridge gives. */
static jvmtiError class_info(ddmc__jv_jenv *e, int ptrs_ok, jclass k, ddmc_class *c, ddmc_class_info *info) {
  jvmtiError rc = ddmc__jv_phase_ok(e, SL);
  if (rc) return rc;
  if (!ptrs_ok) return JVMTI_ERROR_NULL_POINTER;
  ddmc__jvmti *jv = e->jv;
  if (jv->bridge == NULL || jv->bridge->class_info == NULL) return JVMTI_ERROR_NOT_AVAILABLE;
  if (k == NULL || ddmc__jv_class_of(jv, k, c) != 0) return JVMTI_ERROR_INVALID_CLASS;
  memset(info, 0, sizeof(*info));
  rc = jv->bridge->class_info(jv->bridge_data, *c, info);
  return rc == 0 ? JVMTI_ERROR_NONE : JVMTI_ERROR_INVALID_CLASS;
}

static jvmtiError method_info(ddmc__jv_jenv *e, int ptrs_ok, jmethodID m, ddmc_class *c, uint32_t *idx,
                              ddmc_method_info *info) {
  jvmtiError rc = ddmc__jv_phase_ok(e, SL);
  if (rc) return rc;
  if (!ptrs_ok) return JVMTI_ERROR_NULL_POINTER;
  ddmc__jvmti *jv = e->jv;
  if (jv->bridge == NULL || jv->bridge->method_info == NULL) return JVMTI_ERROR_NOT_AVAILABLE;
  if (m == NULL || ddmc__jv_method_of(jv, m, c, idx) != 0) return JVMTI_ERROR_INVALID_METHODID;
  memset(info, 0, sizeof(*info));
  return jv->bridge->method_info(jv->bridge_data, *c, *idx, info) == 0 ? JVMTI_ERROR_NONE : JVMTI_ERROR_INVALID_METHODID;
}

/* Fields also name the class they are asked of (klass), checked before the field. */
static jvmtiError field_info(ddmc__jv_jenv *e, int ptrs_ok, jclass klass, jfieldID f, ddmc_class *c, uint32_t *idx,
                             ddmc_field_info *info) {
  jvmtiError rc = ddmc__jv_phase_ok(e, SL);
  if (rc) return rc;
  if (!ptrs_ok) return JVMTI_ERROR_NULL_POINTER;
  ddmc__jvmti *jv = e->jv;
  ddmc_class kc;
  if (klass == NULL || ddmc__jv_class_of(jv, klass, &kc) != 0) return JVMTI_ERROR_INVALID_CLASS;
  if (jv->bridge == NULL || jv->bridge->field_info == NULL) return JVMTI_ERROR_NOT_AVAILABLE;
  if (f == NULL || ddmc__jv_field_of(jv, f, c, idx) != 0) return JVMTI_ERROR_INVALID_FIELDID;
  memset(info, 0, sizeof(*info));
  return jv->bridge->field_info(jv->bridge_data, *c, *idx, info) == 0 ? JVMTI_ERROR_NONE : JVMTI_ERROR_INVALID_FIELDID;
}

/* *out = a copy of s (NULL stays NULL when may_be_null), or leaves out alone when out is NULL. */
static jvmtiError give_string(const char *s, char **out, int may_be_null) {
  if (out == NULL) return JVMTI_ERROR_NONE;
  if (s == NULL && may_be_null) {
    *out = NULL;
    return JVMTI_ERROR_NONE;
  }
  return (*out = ddmc__jv_strdup(s)) ? JVMTI_ERROR_NONE : JVMTI_ERROR_OUT_OF_MEMORY;
}

/* ---- classes */

typedef struct class_list {
  ddmc_class *v;
  uint32_t n, cap;
  int oom;
} class_list;

static int collect_class(void *arg, ddmc_class c) {
  class_list *l = arg;
  if (l->n == l->cap) {
    uint32_t cap = l->cap ? l->cap * 2 : 64;
    ddmc_class *v = cap > (1u << 22) ? NULL : realloc(l->v, sizeof(ddmc_class) * cap);
    if (v == NULL) {
      l->oom = 1;
      return 1;
    }
    l->v = v;
    l->cap = cap;
  }
  l->v[l->n++] = c;
  return 0;
}

jvmtiError ddmc__jv_jt_GetLoadedClasses(ddmc__jv_jenv *e, jint *class_count_ptr, jclass **classes_ptr) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_LIVE);
  if (rc) return rc;
  if (class_count_ptr == NULL || classes_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  ddmc__jvmti *jv = e->jv;
  if (jv->bridge == NULL || jv->bridge->for_each_class == NULL) return JVMTI_ERROR_NOT_AVAILABLE;
  class_list l = {NULL, 0, 0, 0};
  jv->bridge->for_each_class(jv->bridge_data, collect_class, &l);
  jclass *out = l.oom ? NULL : ddmc__jv_alloc(sizeof(jclass) * (l.n ? l.n : 1));
  uint32_t i = 0;
  for (; out != NULL && i < l.n; i++)
    if ((out[i] = ddmc__jv_class_local(jv, l.v[i])) == NULL) break;
  free(l.v);
  if (out == NULL || i < l.n) {
    while (out != NULL && i > 0) ddmc__jv_ref_delete(jv, out[--i], DDMC__CELL_LOCAL);
    free(out);
    return JVMTI_ERROR_OUT_OF_MEMORY;
  }
  *class_count_ptr = (jint)l.n;
  *classes_ptr = out;
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_GetClassSignature(ddmc__jv_jenv *e, jclass klass, char **signature_ptr, char **generic_ptr) {
  ddmc_class c;
  ddmc_class_info info;
  jvmtiError rc = class_info(e, 1, klass, &c, &info);
  if (rc) return rc;
  if (info.signature == NULL) return JVMTI_ERROR_INTERNAL;
  if ((rc = give_string(info.signature, signature_ptr, 0)) != 0) return rc;
  if ((rc = give_string(info.generic, generic_ptr, 1)) != 0) {
    if (signature_ptr) free(*signature_ptr);
    return rc;
  }
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_GetClassStatus(ddmc__jv_jenv *e, jclass klass, jint *status_ptr) {
  ddmc_class c;
  ddmc_class_info info;
  jvmtiError rc = class_info(e, status_ptr != NULL, klass, &c, &info);
  if (rc) return rc;
  jint s = (jint)(info.status & (JVMTI_CLASS_STATUS_VERIFIED | JVMTI_CLASS_STATUS_PREPARED |
                                 JVMTI_CLASS_STATUS_INITIALIZED | JVMTI_CLASS_STATUS_ERROR));
  if (info.type_tag == DDMC_TYPE_ARRAY) s = JVMTI_CLASS_STATUS_ARRAY; /* the specification: ARRAY alone */
  *status_ptr = s;
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_GetSourceFileName(ddmc__jv_jenv *e, jclass klass, char **source_name_ptr) {
  jvmtiError rc = ddmc__jv_phase_ok(e, SL);
  if (rc) return rc;
  if (!ddmc__jv_jenv_has_cap(e, DDMC_CAP_can_get_source_file_name)) return JVMTI_ERROR_MUST_POSSESS_CAPABILITY;
  if (source_name_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  ddmc_class c;
  ddmc_class_info info;
  if ((rc = class_info(e, 1, klass, &c, &info)) != 0) return rc;
  if (info.source_file == NULL) return JVMTI_ERROR_ABSENT_INFORMATION;
  return give_string(info.source_file, source_name_ptr, 0);
}

jvmtiError ddmc__jv_jt_GetClassModifiers(ddmc__jv_jenv *e, jclass klass, jint *modifiers_ptr) {
  ddmc_class c;
  ddmc_class_info info;
  jvmtiError rc = class_info(e, modifiers_ptr != NULL, klass, &c, &info);
  if (rc) return rc;
  *modifiers_ptr = (jint)info.modifiers;
  return JVMTI_ERROR_NONE;
}

/* GetClassMethods / GetClassFields: every member's ID, in declaration order (jmethodID and
 * jfieldID are the same type here, jtypes.h). */
static jvmtiError member_ids(ddmc__jv_jenv *e, jclass klass, int fields, jint *count_ptr, jmethodID **ids_ptr) {
  ddmc_class c;
  ddmc_class_info info;
  jvmtiError rc = class_info(e, count_ptr != NULL && ids_ptr != NULL, klass, &c, &info);
  if (rc) return rc;
  if (!(info.status & DDMC_CLASS_PREPARED)) return JVMTI_ERROR_CLASS_NOT_PREPARED;
  uint32_t n = fields ? info.nfields : info.nmethods;
  jmethodID *v = ddmc__jv_alloc(sizeof(*v) * (n ? n : 1));
  if (v == NULL) return JVMTI_ERROR_OUT_OF_MEMORY;
  for (uint32_t i = 0; i < n; i++) {
    v[i] = fields ? ddmc__jv_field_id(e->jv, c, i) : ddmc__jv_method_id(e->jv, c, i);
    if (v[i] == NULL) {
      free(v);
      return JVMTI_ERROR_OUT_OF_MEMORY;
    }
  }
  *count_ptr = (jint)n;
  *ids_ptr = v;
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_GetClassMethods(ddmc__jv_jenv *e, jclass klass, jint *method_count_ptr,
                                       jmethodID **methods_ptr) {
  return member_ids(e, klass, 0, method_count_ptr, methods_ptr);
}

jvmtiError ddmc__jv_jt_GetClassFields(ddmc__jv_jenv *e, jclass klass, jint *field_count_ptr, jfieldID **fields_ptr) {
  return member_ids(e, klass, 1, field_count_ptr, fields_ptr);
}

jvmtiError ddmc__jv_jt_GetImplementedInterfaces(ddmc__jv_jenv *e, jclass klass, jint *count_ptr,
                                                jclass **interfaces_ptr) {
  ddmc_class c;
  ddmc_class_info info;
  jvmtiError rc = class_info(e, !(count_ptr == NULL || interfaces_ptr == NULL), klass, &c, &info);
  if (rc) return rc;
  ddmc__jvmti *jv = e->jv;
  uint32_t n = DDMC__MIN(info.ninterfaces, DDMC__JV_CLASS_COUNT_MAX);
  jclass *v = ddmc__jv_alloc(sizeof(jclass) * (n ? n : 1));
  if (v == NULL) return JVMTI_ERROR_OUT_OF_MEMORY;
  uint32_t k = 0;
  for (uint32_t i = 0; i < n && jv->bridge->class_interface; i++) {
    ddmc_class ic = 0;
    if (jv->bridge->class_interface(jv->bridge_data, c, i, &ic) == 0 && ic != 0) v[k++] = ddmc__jv_class_local(jv, ic);
  }
  *count_ptr = (jint)k;
  *interfaces_ptr = v;
  return JVMTI_ERROR_NONE;
}

/* IsInterface / IsArrayClass: is klass of this type tag? */
static jvmtiError is_type(ddmc__jv_jenv *e, jclass klass, int type_tag, jboolean *out) {
  ddmc_class c;
  ddmc_class_info info;
  jvmtiError rc = class_info(e, out != NULL, klass, &c, &info);
  if (rc) return rc;
  *out = info.type_tag == type_tag;
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_IsInterface(ddmc__jv_jenv *e, jclass klass, jboolean *is_interface_ptr) {
  return is_type(e, klass, DDMC_TYPE_INTERFACE, is_interface_ptr);
}

jvmtiError ddmc__jv_jt_IsArrayClass(ddmc__jv_jenv *e, jclass klass, jboolean *is_array_class_ptr) {
  return is_type(e, klass, DDMC_TYPE_ARRAY, is_array_class_ptr);
}

jvmtiError ddmc__jv_jt_GetClassLoader(ddmc__jv_jenv *e, jclass klass, jobject *classloader_ptr) {
  ddmc_class c;
  ddmc_class_info info;
  jvmtiError rc = class_info(e, classloader_ptr != NULL, klass, &c, &info);
  if (rc) return rc;
  *classloader_ptr = info.loader ? ddmc__jv_ref_local(e->jv, info.loader, 0, 0) : NULL; /* NULL: the boot loader */
  return JVMTI_ERROR_NONE;
}

/* ---- methods */

jvmtiError ddmc__jv_jt_GetMethodName(ddmc__jv_jenv *e, jmethodID method, char **name_ptr, char **signature_ptr,
                                     char **generic_ptr) {
  ddmc_class c;
  uint32_t idx;
  ddmc_method_info m;
  jvmtiError rc = method_info(e, 1, method, &c, &idx, &m);
  if (rc) return rc;
  char *n = NULL, *s = NULL;
  if ((rc = give_string(m.name, name_ptr ? &n : NULL, 0)) != 0) return rc;
  if ((rc = give_string(m.signature, signature_ptr ? &s : NULL, 0)) != 0) {
    free(n);
    return rc;
  }
  if ((rc = give_string(m.generic, generic_ptr, 1)) != 0) {
    free(n);
    free(s);
    return rc;
  }
  if (name_ptr) *name_ptr = n;
  if (signature_ptr) *signature_ptr = s;
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_GetMethodDeclaringClass(ddmc__jv_jenv *e, jmethodID method, jclass *declaring_class_ptr) {
  ddmc_class c;
  uint32_t idx;
  ddmc_method_info m;
  jvmtiError rc = method_info(e, declaring_class_ptr != NULL, method, &c, &idx, &m);
  if (rc) return rc;
  if ((*declaring_class_ptr = ddmc__jv_class_local(e->jv, c)) == NULL) return JVMTI_ERROR_OUT_OF_MEMORY;
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_GetMethodModifiers(ddmc__jv_jenv *e, jmethodID method, jint *modifiers_ptr) {
  ddmc_class c;
  uint32_t idx;
  ddmc_method_info m;
  jvmtiError rc = method_info(e, modifiers_ptr != NULL, method, &c, &idx, &m);
  if (rc) return rc;
  *modifiers_ptr = (jint)m.modifiers;
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_GetMaxLocals(ddmc__jv_jenv *e, jmethodID method, jint *max_ptr) {
  ddmc_class c;
  uint32_t idx;
  ddmc_method_info m;
  jvmtiError rc = method_info(e, max_ptr != NULL, method, &c, &idx, &m);
  if (rc) return rc;
  if (m.modifiers & DDMC_ACC_NATIVE) return JVMTI_ERROR_NATIVE_METHOD;
  *max_ptr = m.max_locals;
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_GetArgumentsSize(ddmc__jv_jenv *e, jmethodID method, jint *size_ptr) {
  ddmc_class c;
  uint32_t idx;
  ddmc_method_info m;
  jvmtiError rc = method_info(e, size_ptr != NULL, method, &c, &idx, &m);
  if (rc) return rc;
  if (m.modifiers & DDMC_ACC_NATIVE) return JVMTI_ERROR_NATIVE_METHOD;
  *size_ptr = m.arg_slots;
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_GetMethodLocation(ddmc__jv_jenv *e, jmethodID method, jlocation *start_location_ptr,
                                         jlocation *end_location_ptr) {
  ddmc_class c;
  uint32_t idx;
  ddmc_method_info m;
  jvmtiError rc = method_info(e, !(start_location_ptr == NULL || end_location_ptr == NULL), method, &c, &idx, &m);
  if (rc) return rc;
  if (m.modifiers & DDMC_ACC_NATIVE) return JVMTI_ERROR_NATIVE_METHOD;
  *start_location_ptr = m.code_start;
  *end_location_ptr = m.code_end;
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_IsMethodNative(ddmc__jv_jenv *e, jmethodID method, jboolean *is_native_ptr) {
  ddmc_class c;
  uint32_t idx;
  ddmc_method_info m;
  jvmtiError rc = method_info(e, is_native_ptr != NULL, method, &c, &idx, &m);
  if (rc) return rc;
  *is_native_ptr = (m.modifiers & DDMC_ACC_NATIVE) != 0;
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_IsMethodObsolete(ddmc__jv_jenv *e, jmethodID method, jboolean *is_obsolete_ptr) {
  ddmc_class c;
  uint32_t idx;
  ddmc_method_info m;
  jvmtiError rc = method_info(e, is_obsolete_ptr != NULL, method, &c, &idx, &m);
  if (rc) return rc;
  *is_obsolete_ptr = 0; /* nothing is ever redefined */
  return JVMTI_ERROR_NONE;
}

typedef struct line_list {
  ddmc__jv_jline_entry *v;
  uint32_t n, cap;
  int oom;
} line_list;

static int collect_line(void *arg, int64_t index, int32_t line) {
  line_list *l = arg;
  if (l->n == l->cap) {
    uint32_t cap = l->cap ? l->cap * 2 : 32;
    ddmc__jv_jline_entry *v = cap > (1u << 22) ? NULL : realloc(l->v, sizeof(*v) * cap);
    if (v == NULL) {
      l->oom = 1;
      return 1;
    }
    l->v = v;
    l->cap = cap;
  }
  l->v[l->n++] = (ddmc__jv_jline_entry){index, line};
  return 0;
}

jvmtiError ddmc__jv_jt_GetLineNumberTable(ddmc__jv_jenv *e, jmethodID method, jint *entry_count_ptr,
                                          ddmc__jv_jline_entry **table_ptr) {
  jvmtiError rc = ddmc__jv_phase_ok(e, SL);
  if (rc) return rc;
  if (!ddmc__jv_jenv_has_cap(e, DDMC_CAP_can_get_line_numbers)) return JVMTI_ERROR_MUST_POSSESS_CAPABILITY;
  if (entry_count_ptr == NULL || table_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  ddmc_class c;
  uint32_t idx;
  ddmc_method_info m;
  if ((rc = method_info(e, 1, method, &c, &idx, &m)) != 0) return rc;
  if (m.modifiers & DDMC_ACC_NATIVE) return JVMTI_ERROR_NATIVE_METHOD;
  ddmc__jvmti *jv = e->jv;
  line_list l = {NULL, 0, 0, 0};
  int r = jv->bridge->line_table(jv->bridge_data, c, idx, collect_line, &l);
  if (r == 0 && l.n == 0) r = DDMC_JDWP_ABSENT_INFORMATION;
  if (r != 0 || l.oom) {
    free(l.v);
    return l.oom ? JVMTI_ERROR_OUT_OF_MEMORY : ddmc__jv_err(r);
  }
  *entry_count_ptr = (jint)l.n;
  *table_ptr = l.v; /* realloc'd: Deallocate (free) releases it */
  return JVMTI_ERROR_NONE;
}

typedef struct var_list {
  ddmc__jv_jlocal_entry *v;
  uint32_t n, cap;
  int oom;
} var_list;

/* Variable-table entries one method may list: a method has at most 65535 local slots, each used
 * by a few ranges; past this the VM's answer is not trusted (OUT_OF_MEMORY). */
#define DDMC__JV_MAX_LOCALS (1u << 20)

static int collect_var(void *arg, const ddmc_variable *var) {
  var_list *l = arg;
  if (l->n == l->cap) {
    uint32_t cap = l->cap ? l->cap * 2 : 16;
    ddmc__jv_jlocal_entry *v = cap > DDMC__JV_MAX_LOCALS ? NULL : realloc(l->v, sizeof(*v) * cap);
    if (v == NULL) {
      l->oom = 1;
      return 1;
    }
    l->v = v;
    l->cap = cap;
  }
  ddmc__jv_jlocal_entry *x = &l->v[l->n];
  x->start_location = var->start;
  x->length = var->length;
  x->slot = var->slot;
  x->name = ddmc__jv_strdup(var->name);
  x->signature = ddmc__jv_strdup(var->signature);
  x->generic_signature = var->generic ? ddmc__jv_strdup(var->generic) : NULL;
  l->n++;
  if (!x->name || !x->signature || (var->generic && !x->generic_signature)) {
    l->oom = 1;
    return 1;
  }
  return 0;
}

jvmtiError ddmc__jv_jt_GetLocalVariableTable(ddmc__jv_jenv *e, jmethodID method, jint *entry_count_ptr,
                                             ddmc__jv_jlocal_entry **table_ptr) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_LIVE);
  if (rc) return rc;
  if (!ddmc__jv_jenv_has_cap(e, DDMC_CAP_can_access_local_variables)) return JVMTI_ERROR_MUST_POSSESS_CAPABILITY;
  if (entry_count_ptr == NULL || table_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  ddmc_class c;
  uint32_t idx;
  ddmc_method_info m;
  if ((rc = method_info(e, 1, method, &c, &idx, &m)) != 0) return rc;
  if (m.modifiers & DDMC_ACC_NATIVE) return JVMTI_ERROR_NATIVE_METHOD;
  ddmc__jvmti *jv = e->jv;
  var_list l = {NULL, 0, 0, 0};
  int r = jv->bridge->variable_table(jv->bridge_data, c, idx, collect_var, &l);
  if (r != 0 || l.oom) {
    for (uint32_t i = 0; i < l.n; i++) {
      free(l.v[i].name);
      free(l.v[i].signature);
      free(l.v[i].generic_signature);
    }
    free(l.v);
    return l.oom ? JVMTI_ERROR_OUT_OF_MEMORY : ddmc__jv_err(r);
  }
  *entry_count_ptr = (jint)l.n;
  *table_ptr = l.n ? l.v : ddmc__jv_alloc(sizeof(ddmc__jv_jlocal_entry));
  return JVMTI_ERROR_NONE;
}

/* ---- fields */

jvmtiError ddmc__jv_jt_GetFieldName(ddmc__jv_jenv *e, jclass klass, jfieldID field, char **name_ptr,
                                    char **signature_ptr, char **generic_ptr) {
  ddmc_class c;
  uint32_t idx;
  ddmc_field_info f;
  jvmtiError rc = field_info(e, 1, klass, field, &c, &idx, &f);
  if (rc) return rc;
  char *n = NULL, *s = NULL;
  if ((rc = give_string(f.name, name_ptr ? &n : NULL, 0)) != 0) return rc;
  if ((rc = give_string(f.signature, signature_ptr ? &s : NULL, 0)) != 0) {
    free(n);
    return rc;
  }
  if ((rc = give_string(f.generic, generic_ptr, 1)) != 0) {
    free(n);
    free(s);
    return rc;
  }
  if (name_ptr) *name_ptr = n;
  if (signature_ptr) *signature_ptr = s;
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_GetFieldDeclaringClass(ddmc__jv_jenv *e, jclass klass, jfieldID field,
                                              jclass *declaring_class_ptr) {
  ddmc_class c;
  uint32_t idx;
  ddmc_field_info f;
  jvmtiError rc = field_info(e, declaring_class_ptr != NULL, klass, field, &c, &idx, &f);
  if (rc) return rc;
  if ((*declaring_class_ptr = ddmc__jv_class_local(e->jv, c)) == NULL) return JVMTI_ERROR_OUT_OF_MEMORY;
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_GetFieldModifiers(ddmc__jv_jenv *e, jclass klass, jfieldID field, jint *modifiers_ptr) {
  ddmc_class c;
  uint32_t idx;
  ddmc_field_info f;
  jvmtiError rc = field_info(e, modifiers_ptr != NULL, klass, field, &c, &idx, &f);
  if (rc) return rc;
  *modifiers_ptr = (jint)f.modifiers;
  return JVMTI_ERROR_NONE;
}
