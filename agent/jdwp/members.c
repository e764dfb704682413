/* SPDX-License-Identifier: Apache-2.0 */
/* Types and members from JVM TI: the bridge's for_each_class, class_info, class_interface,
 * field_info, method_info, line_table and variable_table. A class's description is built once,
 * after the class is prepared (its members are final then), and kept with its strings in one
 * block: the strings the bridge borrows stay valid as long as the class is loaded, as the bridge
 * asks. In two steps: what a listing of the classes needs (signature, status, counts) at first
 * sight, the member tables when a member is first asked (ja_members_of). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "ja.h"

static pthread_mutex_t class_lock = PTHREAD_MUTEX_INITIALIZER;

static void ti_free(void *p) {
  if (p) (*ja.ti)->Deallocate(ja.ti, (unsigned char *)p);
}

/* The description, with JVM TI's strings copied into the same block: one allocation a class
 * (100,000 classes listed kept their signatures in 100,000 small blocks besides). */
static ja_class *class_new(const char *sig, const char *generic, const char *source) {
  size_t sl = strlen(sig) + 1, gl = generic ? strlen(generic) + 1 : 0, fl = source ? strlen(source) + 1 : 0;
  ja_class *c = calloc(1, sizeof *c + sl + gl + fl);
  if (c == NULL) return NULL;
  char *p = (char *)(c + 1);
  c->sig = memcpy(p, sig, sl);
  if (generic) c->generic = memcpy(p + sl, generic, gl);
  if (source) c->source = memcpy(p + sl + gl, source, fl);
  return c;
}

/* The member counts of k (class_info gives them); the tables are made when asked
 * (ja_members_of). */
static jvmtiError count_members(JNIEnv *env, jclass k, ja_class *c) {
  jvmtiEnv *ti = ja.ti;
  jint nm = 0, nf = 0, ni = 0;
  jmethodID *ms = NULL;
  jfieldID *fs = NULL;
  jclass *is = NULL;
  jvmtiError e = JVMTI_ERROR_NONE;
  if (c->type_tag != DDMC_TYPE_ARRAY && ((e = (*ti)->GetClassMethods(ti, k, &nm, &ms)) != JVMTI_ERROR_NONE ||
                                         (e = (*ti)->GetClassFields(ti, k, &nf, &fs)) != JVMTI_ERROR_NONE ||
                                         (e = (*ti)->GetImplementedInterfaces(ti, k, &ni, &is)) != JVMTI_ERROR_NONE))
    nm = nf = ni = 0;
  for (jint i = 0; i < ni; i++) (*env)->DeleteLocalRef(env, is[i]);
  ti_free(ms);
  ti_free(fs);
  ti_free(is);
  c->nmethods = nm;
  c->nfields = nf;
  c->nif = ni;
  return e;
}

static ja_class *build(JNIEnv *env, jclass k, int *err) {
  jvmtiEnv *ti = ja.ti;
  jint st = 0, mods = 0;
  char *sig = NULL, *generic = NULL, *source = NULL;
  ja_class *c = NULL;
  jvmtiError e;
  if ((e = (*ti)->GetClassStatus(ti, k, &st)) != JVMTI_ERROR_NONE) goto done;
  jboolean is_array = JNI_FALSE, is_if = JNI_FALSE;
  (*ti)->IsArrayClass(ti, k, &is_array);
  (*ti)->IsInterface(ti, k, &is_if);
  if (!is_array && !(st & JVMTI_CLASS_STATUS_PRIMITIVE) && !(st & JVMTI_CLASS_STATUS_PREPARED)) {
    e = JVMTI_ERROR_CLASS_NOT_PREPARED;
    goto done;
  }
  if ((e = (*ti)->GetClassSignature(ti, k, &sig, &generic)) != JVMTI_ERROR_NONE) goto done;
  if (ja.caps.can_get_source_file_name && (*ti)->GetSourceFileName(ti, k, &source) != JVMTI_ERROR_NONE) source = NULL;
  if ((c = class_new(sig, generic, source)) == NULL) {
    e = JVMTI_ERROR_OUT_OF_MEMORY;
    goto done;
  }
  (*ti)->GetClassModifiers(ti, k, &mods);
  c->mods = (uint32_t)mods;
  c->type_tag = is_array ? DDMC_TYPE_ARRAY : is_if ? DDMC_TYPE_INTERFACE : DDMC_TYPE_CLASS;
  if ((e = count_members(env, k, c)) != JVMTI_ERROR_NONE) goto done;
  if (!is_if) { /* an interface's superclass is none for the bridge (JNI says Object) */
    jclass s = (*env)->GetSuperclass(env, k);
    c->super = ja_ref(env, s);
    if (s) (*env)->DeleteLocalRef(env, s);
  }
  jobject loader = NULL;
  if ((*ti)->GetClassLoader(ti, k, &loader) == JVMTI_ERROR_NONE && loader) {
    c->loader = ja_ref(env, loader);
    (*env)->DeleteLocalRef(env, loader);
  }
done:
  ti_free(sig);
  ti_free(generic);
  ti_free(source);
  if (e != JVMTI_ERROR_NONE) {
    free(c);
    *err = e == JVMTI_ERROR_INVALID_CLASS ? DDMC_JDWP_INVALID_CLASS : ja_err(e);
    return NULL;
  }
  return c;
}

ja_class *ja_class_of(ddmc_class id, int *err) {
  ja_entry *e = ja_entry_of(id);
  jclass k = (jclass)ja_kept_obj(id); /* classes are kept entries (refs.c) */
  if (e == NULL || k == NULL) {
    *err = DDMC_JDWP_INVALID_CLASS;
    return NULL;
  }
  ja_class *c = atomic_load_explicit(&e->cls, memory_order_acquire);
  if (c) return c;
  JNIEnv *env = ja_enter();
  if (env == NULL) {
    *err = DDMC_JDWP_VM_DEAD;
    return NULL;
  }
  jclass kc = ja_known(env, JA_KNOWN_CLASS);
  if (kc == NULL || !(*env)->IsInstanceOf(env, k, kc)) {
    (*env)->ExceptionClear(env);
    ja_leave(env);
    *err = DDMC_JDWP_INVALID_CLASS;
    return NULL;
  }
  pthread_mutex_lock(&class_lock);
  c = atomic_load_explicit(&e->cls, memory_order_acquire);
  if (c == NULL) {
    c = build(env, k, err);
    if (c) atomic_store_explicit(&e->cls, c, memory_order_release);
  }
  pthread_mutex_unlock(&class_lock);
  ja_leave(env);
  return c;
}

/* The member tables of c (class k), under class_lock. The counts build took stand: a prepared
 * class's members do not change (RedefineClasses changes code, not members). */
static int make_tables(JNIEnv *env, ja_class *c, jclass k) {
  jvmtiEnv *ti = ja.ti;
  jint nm = 0, nf = 0, ni = 0;
  jmethodID *ms = NULL;
  jfieldID *fs = NULL;
  jclass *is = NULL;
  ja_tables *t = NULL;
  jvmtiError e = JVMTI_ERROR_NONE;
  if (c->type_tag != DDMC_TYPE_ARRAY && ((e = (*ti)->GetClassMethods(ti, k, &nm, &ms)) != JVMTI_ERROR_NONE ||
                                         (e = (*ti)->GetClassFields(ti, k, &nf, &fs)) != JVMTI_ERROR_NONE ||
                                         (e = (*ti)->GetImplementedInterfaces(ti, k, &ni, &is)) != JVMTI_ERROR_NONE))
    goto done;
  /* Every part's size is a multiple of 8: each starts aligned. */
  size_t mb = ((size_t)c->nmethods + 1) * sizeof(ja_method), fb = ((size_t)c->nfields + 1) * sizeof(ja_field);
  if ((t = calloc(1, sizeof *t + mb + fb + ((size_t)c->nif + 1) * sizeof(ddmc_class))) == NULL) {
    e = JVMTI_ERROR_OUT_OF_MEMORY;
    goto done;
  }
  t->methods = (ja_method *)(void *)(t + 1);
  t->fields = (ja_field *)(void *)((char *)t->methods + mb);
  t->ifs = (ddmc_class *)(void *)((char *)t->fields + fb);
  for (jint i = 0; i < nm && i < c->nmethods; i++) t->methods[i].id = ms[i];
  for (jint i = 0; i < nf && i < c->nfields; i++) t->fields[i].id = fs[i];
  for (jint i = 0; i < ni; i++) {
    if (i < c->nif) t->ifs[i] = ja_ref(env, is[i]);
    (*env)->DeleteLocalRef(env, is[i]);
  }
done:
  ti_free(ms);
  ti_free(fs);
  ti_free(is);
  if (e != JVMTI_ERROR_NONE) return ja_err(e);
  atomic_store_explicit(&c->tables, t, memory_order_release);
  return 0;
}

ja_class *ja_members_of(ddmc_class id, int *err) {
  ja_class *c = ja_class_of(id, err);
  if (c == NULL || ja_tables_of(c) != NULL) return c;
  JNIEnv *env = ja_enter();
  if (env == NULL) {
    *err = DDMC_JDWP_VM_DEAD;
    return NULL;
  }
  pthread_mutex_lock(&class_lock);
  int rc = ja_tables_of(c) != NULL ? 0 : make_tables(env, c, (jclass)ja_kept_obj(id));
  pthread_mutex_unlock(&class_lock);
  ja_leave(env);
  if (rc != 0) {
    *err = rc;
    return NULL;
  }
  return c;
}

ja_method *ja_method_of(ddmc_class id, uint32_t index, int *err) {
  ja_class *c = ja_members_of(id, err);
  if (c == NULL) return NULL;
  if (index >= (uint32_t)c->nmethods) {
    *err = DDMC_JDWP_INVALID_METHODID;
    return NULL;
  }
  ja_method *m = &ja_tables_of(c)->methods[index];
  pthread_mutex_lock(&class_lock);
  if (!m->filled) {
    jvmtiEnv *ti = ja.ti;
    jvmtiError e = (*ti)->GetMethodName(ti, m->id, &m->name, &m->sig, &m->generic);
    if (e == JVMTI_ERROR_NONE) {
      (*ti)->GetMethodModifiers(ti, m->id, &m->mods);
      jboolean syn = JNI_FALSE; /* HotSpot's modifiers may leave ACC_SYNTHETIC out: ask */
      if (ja.caps.can_get_synthetic_attribute && (*ti)->IsMethodSynthetic(ti, m->id, &syn) == JVMTI_ERROR_NONE && syn)
        m->mods |= DDMC_ACC_SYNTHETIC;
      if ((*ti)->GetMethodLocation(ti, m->id, &m->start, &m->end) != JVMTI_ERROR_NONE) m->start = m->end = -1;
      if ((*ti)->GetArgumentsSize(ti, m->id, &m->args) != JVMTI_ERROR_NONE) m->args = 0;
      if ((*ti)->GetMaxLocals(ti, m->id, &m->max_locals) != JVMTI_ERROR_NONE) m->max_locals = 0;
      m->filled = 1;
    } else {
      *err = ja_err(e);
      m = NULL;
    }
  }
  pthread_mutex_unlock(&class_lock);
  return m;
}

ja_field *ja_field_of(ddmc_class id, uint32_t index, int *err) {
  ja_class *c = ja_members_of(id, err);
  if (c == NULL) return NULL;
  if (index >= (uint32_t)c->nfields) {
    *err = DDMC_JDWP_INVALID_FIELDID;
    return NULL;
  }
  ja_field *f = &ja_tables_of(c)->fields[index];
  pthread_mutex_lock(&class_lock);
  if (!f->filled) {
    jvmtiEnv *ti = ja.ti;
    jclass k = (jclass)ja_kept_obj(id);
    jvmtiError e = (*ti)->GetFieldName(ti, k, f->id, &f->name, &f->sig, &f->generic);
    if (e == JVMTI_ERROR_NONE) {
      (*ti)->GetFieldModifiers(ti, k, f->id, &f->mods);
      jboolean syn = JNI_FALSE;
      if (ja.caps.can_get_synthetic_attribute && (*ti)->IsFieldSynthetic(ti, k, f->id, &syn) == JVMTI_ERROR_NONE && syn)
        f->mods |= DDMC_ACC_SYNTHETIC;
      f->filled = 1;
    } else {
      *err = ja_err(e);
      f = NULL;
    }
  }
  pthread_mutex_unlock(&class_lock);
  return f;
}

int32_t ja_field_index(ddmc_class id, jfieldID f) {
  int err;
  ja_class *c = ja_members_of(id, &err);
  if (c == NULL) return -1;
  ja_field *fs = ja_tables_of(c)->fields;
  for (jint i = 0; i < c->nfields; i++)
    if (fs[i].id == f) return i;
  return -1;
}

/* jmethodID -> (class, method index), remembered: every frame and every event names its method
 * by jmethodID, and the declaring class's lookup (GetMethodDeclaringClass, the name's lookup, a
 * search of its methods) is most of a frame's cost. Direct-mapped; fields are written and read
 * one by one (threads race on an entry), so a hit is believed only when the class it names
 * still has m at that index, which is the very fact wanted: a torn or stale entry misses. */
#define LOC_CACHE 4096
static struct {
  atomic_uintptr_t m;
  atomic_uint_fast64_t cls;
  atomic_uint idx;
} loc_cache[LOC_CACHE];

static int loc_cached(jmethodID m, ddmc_class *cls, uint32_t *idx) {
  size_t h = ((uintptr_t)m >> 3) % LOC_CACHE;
  if (atomic_load_explicit(&loc_cache[h].m, memory_order_relaxed) != (uintptr_t)m) return 0;
  ddmc_class cid = (ddmc_class)atomic_load_explicit(&loc_cache[h].cls, memory_order_relaxed);
  uint32_t i = atomic_load_explicit(&loc_cache[h].idx, memory_order_relaxed);
  ja_entry *e = cid ? ja_entry_of(cid) : NULL;
  ja_class *c = e ? atomic_load_explicit(&e->cls, memory_order_acquire) : NULL;
  ja_tables *t = c ? ja_tables_of(c) : NULL;
  if (t == NULL || i >= (uint32_t)c->nmethods || t->methods[i].id != m) return 0;
  *cls = cid;
  *idx = i;
  return 1;
}

static void loc_remember(jmethodID m, ddmc_class cls, uint32_t idx) {
  size_t h = ((uintptr_t)m >> 3) % LOC_CACHE;
  atomic_store_explicit(&loc_cache[h].m, 0, memory_order_relaxed);
  atomic_store_explicit(&loc_cache[h].cls, cls, memory_order_relaxed);
  atomic_store_explicit(&loc_cache[h].idx, idx, memory_order_relaxed);
  atomic_store_explicit(&loc_cache[h].m, (uintptr_t)m, memory_order_relaxed);
}

int ja_location(JNIEnv *env, jmethodID m, jlocation index, ddmc_location *out) {
  ddmc_class hit_cls;
  uint32_t hit_idx;
  if (loc_cached(m, &hit_cls, &hit_idx)) {
    out->cls = hit_cls;
    out->method = hit_idx;
    out->index = index;
    return 0;
  }
  jclass k = NULL;
  jvmtiError e = (*ja.ti)->GetMethodDeclaringClass(ja.ti, m, &k);
  if (e != JVMTI_ERROR_NONE) return ja_err(e);
  ddmc_class cid = ja_ref(env, k);
  (*env)->DeleteLocalRef(env, k);
  int err = 0;
  ja_class *c = ja_members_of(cid, &err);
  if (c == NULL) return err;
  ja_method *ms = ja_tables_of(c)->methods;
  for (jint i = 0; i < c->nmethods; i++) {
    if (ms[i].id == m) {
      out->cls = cid;
      out->method = (uint32_t)i;
      out->index = index;
      loc_remember(m, cid, (uint32_t)i);
      return 0;
    }
  }
  return DDMC_JDWP_INVALID_METHODID;
}

/* ---- the bridge's ops */

/* A debugger sees prepared classes and array types; primitive types are not classes to JDWP. */
static int visible(jclass k) {
  jint st = 0;
  return (*ja.ti)->GetClassStatus(ja.ti, k, &st) == JVMTI_ERROR_NONE && !(st & JVMTI_CLASS_STATUS_PRIMITIVE) &&
         ((st & JVMTI_CLASS_STATUS_ARRAY) || (st & JVMTI_CLASS_STATUS_PREPARED));
}

typedef struct visit {
  const char *sig; /* classes_named's name; NULL: every class */
  ddmc_class_visit_fn fn;
  void *arg;
} visit;

/* for_each_class's step: a class with a description was prepared (or is an array type) and
 * stays so, so no GetClassStatus for it. Non-zero: stop. */
static int visit_any(JNIEnv *env, jclass k, const visit *v) {
  uint64_t known = ja_named(k);
  ja_entry *en = known ? ja_entry_of(known) : NULL;
  ja_class *kc = en ? atomic_load(&en->cls) : NULL;
  if (kc != NULL && kc->sig != NULL && (kc->sig[0] == 'L' || kc->sig[0] == '[')) return v->fn(v->arg, known);
  ddmc_class c = visible(k) ? ja_ref(env, k) : 0;
  return c && v->fn(v->arg, c);
}

/* classes_named's step: the signature from JVM TI (as the JDK's agent compares them), and a name
 * made only for a match, so no tag lookup per class. */
static int visit_named(JNIEnv *env, jclass k, const visit *v) {
  char *s = NULL;
  if ((*ja.ti)->GetClassSignature(ja.ti, k, &s, NULL) != JVMTI_ERROR_NONE || s == NULL) return 0;
  int same = strcmp(s, v->sig) == 0;
  ti_free(s);
  ddmc_class c = same && visible(k) ? ja_ref(env, k) : 0;
  return c && v->fn(v->arg, c);
}

/* Every loaded class through v's step, until one says stop. The local references die with
 * ja_leave's frame: no DeleteLocalRef per class. */
static int walk_loaded(const visit *v) {
  JNIEnv *env = ja_enter();
  if (env == NULL) return DDMC_JDWP_VM_DEAD;
  jint n = 0;
  jclass *ks = NULL;
  jvmtiError e = (*ja.ti)->GetLoadedClasses(ja.ti, &n, &ks);
  if (e != JVMTI_ERROR_NONE) {
    ja_leave(env);
    return ja_err(e);
  }
  for (jint i = 0; i < n; i++)
    if (v->sig ? visit_named(env, ks[i], v) : visit_any(env, ks[i], v)) break;
  ti_free(ks);
  ja_leave(env);
  return 0;
}

static int for_each_class(void *vd, ddmc_class_visit_fn fn, void *arg) {
  visit v = {NULL, fn, arg};
  return walk_loaded(&v);
}

/* As for_each_class, but only the types named sig. */
static int classes_named(void *vd, const char *sig, ddmc_class_visit_fn fn, void *arg) {
  visit v = {sig, fn, arg};
  return walk_loaded(&v);
}

static int class_info(void *vd, ddmc_class id, ddmc_class_info *out) {
  int err = 0;
  ja_class *c = ja_class_of(id, &err);
  if (c == NULL) return err;
  jint st = 0;
  (*ja.ti)->GetClassStatus(ja.ti, (jclass)ja_kept_obj(id), &st);
  memset(out, 0, sizeof *out);
  out->signature = c->sig;
  out->generic = c->generic && c->generic[0] ? c->generic : NULL;
  out->source_file = c->source;
  out->type_tag = c->type_tag;
  out->status =
      (st & JVMTI_CLASS_STATUS_ARRAY)
          ? DDMC_CLASS_VERIFIED | DDMC_CLASS_PREPARED | DDMC_CLASS_INITIALIZED
          : (uint32_t)st & (DDMC_CLASS_VERIFIED | DDMC_CLASS_PREPARED | DDMC_CLASS_INITIALIZED | DDMC_CLASS_ERROR);
  out->modifiers = c->mods;
  out->superclass = c->super;
  out->ninterfaces = (uint32_t)c->nif;
  out->nfields = (uint32_t)c->nfields;
  out->nmethods = (uint32_t)c->nmethods;
  out->class_object = id;
  out->loader = c->loader;
  return 0;
}

static int class_interface(void *vd, ddmc_class id, uint32_t index, ddmc_class *out) {
  int err = 0;
  ja_class *c = ja_members_of(id, &err);
  if (c == NULL) return err;
  if (index >= (uint32_t)c->nif) return DDMC_JDWP_ILLEGAL_ARGUMENT;
  *out = ja_tables_of(c)->ifs[index];
  return 0;
}

static int field_info(void *vd, ddmc_class c, uint32_t index, ddmc_field_info *out) {
  int err = 0;
  ja_field *f = ja_field_of(c, index, &err);
  if (f == NULL) return err;
  out->name = f->name;
  out->signature = f->sig;
  out->generic = f->generic && f->generic[0] ? f->generic : NULL;
  out->modifiers = (uint32_t)f->mods;
  return 0;
}

static int method_info(void *vd, ddmc_class c, uint32_t index, ddmc_method_info *out) {
  int err = 0;
  ja_method *m = ja_method_of(c, index, &err);
  if (m == NULL) return err;
  out->name = m->name;
  out->signature = m->sig;
  out->generic = m->generic && m->generic[0] ? m->generic : NULL;
  out->modifiers = (uint32_t)m->mods;
  out->code_start = m->start;
  out->code_end = m->end;
  out->arg_slots = m->args;
  out->max_locals = m->max_locals;
  return 0;
}

static int cmp_line(const void *a, const void *b) {
  const jvmtiLineNumberEntry *x = a, *y = b;
  return x->start_location < y->start_location ? -1 : x->start_location > y->start_location;
}

static int line_table(void *vd, ddmc_class c, uint32_t index, ddmc_line_visit_fn fn, void *arg) {
  int err = 0;
  ja_method *m = ja_method_of(c, index, &err);
  if (m == NULL) return err;
  if (!ja.caps.can_get_line_numbers) return DDMC_JDWP_ABSENT_INFORMATION;
  jint n = 0;
  jvmtiLineNumberEntry *t = NULL;
  jvmtiError e = (*ja.ti)->GetLineNumberTable(ja.ti, m->id, &n, &t);
  if (e == JVMTI_ERROR_NATIVE_METHOD) return 0;
  if (e != JVMTI_ERROR_NONE) return ja_err(e);
  qsort(t, (size_t)n, sizeof *t, cmp_line); /* the class file need not keep them in order */
  for (jint i = 0; i < n; i++)
    if (fn(arg, t[i].start_location, t[i].line_number)) break;
  ti_free(t);
  return 0;
}

static int variable_table(void *vd, ddmc_class c, uint32_t index, ddmc_variable_visit_fn fn, void *arg) {
  int err = 0;
  ja_method *m = ja_method_of(c, index, &err);
  if (m == NULL) return err;
  if (!ja.caps.can_access_local_variables) return DDMC_JDWP_ABSENT_INFORMATION;
  jint n = 0;
  jvmtiLocalVariableEntry *t = NULL;
  jvmtiError e = (*ja.ti)->GetLocalVariableTable(ja.ti, m->id, &n, &t);
  if (e == JVMTI_ERROR_NATIVE_METHOD) return DDMC_JDWP_ABSENT_INFORMATION;
  if (e != JVMTI_ERROR_NONE) return ja_err(e);
  int stop = 0;
  for (jint i = 0; i < n; i++) {
    ddmc_variable v = {t[i].start_location, t[i].length, t[i].slot, t[i].name, t[i].signature, t[i].generic_signature};
    if (!stop && fn(arg, &v)) stop = 1;
    ti_free(t[i].name);
    ti_free(t[i].signature);
    ti_free(t[i].generic_signature);
  }
  ti_free(t);
  return 0;
}

void ja_bridge_members(ddmc_vm_bridge *b) {
  b->for_each_class = for_each_class;
  b->classes_named = classes_named;
  b->class_info = class_info;
  b->class_interface = class_interface;
  b->field_info = field_info;
  b->method_info = method_info;
  b->line_table = line_table;
  b->variable_table = variable_table;
}

void ja_class_redefined(ddmc_class id) {
  int err = 0;
  ja_class *c = ja_class_of(id, &err);
  if (c == NULL) return;
  jvmtiEnv *ti = ja.ti;
  pthread_mutex_lock(&class_lock);
  /* Names, signatures and modifiers cannot change (no schema change); the code can. No tables
   * yet: nothing to refresh. */
  ja_tables *t = ja_tables_of(c);
  for (jint i = 0; t != NULL && i < c->nmethods; i++) {
    ja_method *m = &t->methods[i];
    if (!m->filled) continue;
    if ((*ti)->GetMethodLocation(ti, m->id, &m->start, &m->end) != JVMTI_ERROR_NONE) m->start = m->end = -1;
    if ((*ti)->GetMaxLocals(ti, m->id, &m->max_locals) != JVMTI_ERROR_NONE) m->max_locals = 0;
  }
  pthread_mutex_unlock(&class_lock);
}
