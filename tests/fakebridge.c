/* SPDX-License-Identifier: Apache-2.0 */
#include "fakebridge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "debugger/dbg_int.h"
#include "debugger/glue.h"
#include "jdwp/session.h"

/* ---- the program */

typedef struct fd_class {
  ddmc_class_info info;
} fd_class;

static const fd_class kClasses[FD_NCLASSES] = {
    [FD_C_OBJECT - FD_C_OBJECT] = {{.signature = "Ljava/lang/Object;",
                                    .source_file = "Object.java",
                                    .type_tag = DDMC_TYPE_CLASS,
                                    .status = 7,
                                    .modifiers = DDMC_ACC_PUBLIC}},
    [FD_C_STRING - FD_C_OBJECT] = {{.signature = "Ljava/lang/String;",
                                    .source_file = "String.java",
                                    .type_tag = DDMC_TYPE_CLASS,
                                    .status = 7,
                                    .modifiers = DDMC_ACC_PUBLIC | DDMC_ACC_FINAL,
                                    .superclass = FD_C_OBJECT}},
    [FD_C_THREAD - FD_C_OBJECT] = {{.signature = "Ljava/lang/Thread;",
                                    .source_file = "Thread.java",
                                    .type_tag = DDMC_TYPE_CLASS,
                                    .status = 7,
                                    .modifiers = DDMC_ACC_PUBLIC,
                                    .superclass = FD_C_OBJECT,
                                    .nfields = 1}},
    [FD_C_GROUP - FD_C_OBJECT] = {{.signature = "Ljava/lang/ThreadGroup;",
                                   .source_file = "ThreadGroup.java",
                                   .type_tag = DDMC_TYPE_CLASS,
                                   .status = 7,
                                   .modifiers = DDMC_ACC_PUBLIC,
                                   .superclass = FD_C_OBJECT}},
    [FD_C_CLASS - FD_C_OBJECT] = {{.signature = "Ljava/lang/Class;",
                                   .source_file = "Class.java",
                                   .type_tag = DDMC_TYPE_CLASS,
                                   .status = 7,
                                   .modifiers = DDMC_ACC_PUBLIC | DDMC_ACC_FINAL,
                                   .superclass = FD_C_OBJECT}},
    [FD_C_RUNNABLE - FD_C_OBJECT] = {{.signature = "Ljava/lang/Runnable;",
                                      .source_file = "Runnable.java",
                                      .type_tag = DDMC_TYPE_INTERFACE,
                                      .status = 7,
                                      .modifiers = DDMC_ACC_PUBLIC | DDMC_ACC_INTERFACE | DDMC_ACC_ABSTRACT}},
    [FD_C_DEBUG - FD_C_OBJECT] = {{.signature = "LDebug;",
                                   .source_file = "Debug.java",
                                   .type_tag = DDMC_TYPE_CLASS,
                                   .status = 7,
                                   .modifiers = DDMC_ACC_PUBLIC,
                                   .superclass = FD_C_OBJECT,
                                   .ninterfaces = 1,
                                   .nfields = FD_NFIELDS,
                                   .nmethods = FD_NMETHODS,
                                   .class_object = FD_O_CLASS_DEBUG}},
    [FD_C_INT_ARRAY - FD_C_OBJECT] = {{.signature = "[I",
                                       .type_tag = DDMC_TYPE_ARRAY,
                                       .status = 7,
                                       .modifiers = DDMC_ACC_PUBLIC | DDMC_ACC_FINAL | DDMC_ACC_ABSTRACT,
                                       .superclass = FD_C_OBJECT}},
};

static const ddmc_field_info kDebugFields[FD_NFIELDS] = {
    [FD_F_COUNTER] = {"counter", "I", NULL, DDMC_ACC_STATIC},
    [FD_F_FLAG] = {"flag", "Z", NULL, DDMC_ACC_STATIC | DDMC_ACC_PRIVATE},
    [FD_F_BIG] = {"big", "J", NULL, DDMC_ACC_STATIC},
    [FD_F_RATIO] = {"ratio", "D", NULL, DDMC_ACC_STATIC},
    [FD_F_LABEL] = {"label", "Ljava/lang/String;", NULL, DDMC_ACC_STATIC | DDMC_ACC_FINAL},
    [FD_F_X] = {"x", "I", NULL, DDMC_ACC_PUBLIC},
    [FD_F_B] = {"b", "B", NULL, 0},
    [FD_F_C] = {"c", "C", NULL, 0},
    [FD_F_S] = {"s", "S", NULL, 0},
    [FD_F_F] = {"f", "F", NULL, 0},
    [FD_F_NEXT] = {"next", "LDebug;", NULL, DDMC_ACC_PRIVATE},
    [FD_F_ARR] = {"arr", "[I", NULL, 0},
};
static const ddmc_field_info kThreadFields[1] = {{"priority", "I", NULL, DDMC_ACC_PRIVATE}};

static const ddmc_method_info kMethods[FD_NMETHODS] = {
    [FD_M_INIT] = {"<init>", "()V", NULL, DDMC_ACC_PUBLIC, 0, 3, 1, 1},
    [FD_M_MAIN] = {"main", "([Ljava/lang/String;)V", NULL, DDMC_ACC_PUBLIC | DDMC_ACC_STATIC, 0, 20, 1, 3},
    [FD_M_COMPUTE] = {"compute", "(I)J", "<T:Ljava/lang/Object;>(I)J", 0, 0, 10, 2, 4},
};

typedef struct fd_line {
  int64_t index;
  int32_t line;
} fd_line;
static const fd_line kLinesInit[] = {{0, 5}, {2, 6}};
static const fd_line kLinesMain[] = {{0, 10}, {4, 11}, {8, 12}, {12, 13}, {16, 14}};
static const fd_line kLinesCompute[] = {{0, 20}, {5, 21}, {8, 22}};
static const struct {
  const fd_line *v;
  size_t n;
} kLines[FD_NMETHODS] = {{kLinesInit, 2}, {kLinesMain, 5}, {kLinesCompute, 3}};

static const ddmc_variable kVarsInit[] = {{0, 4, 0, "this", "LDebug;", NULL}};
static const ddmc_variable kVarsMain[] = {
    {0, 21, 0, "args", "[Ljava/lang/String;", NULL},
    {4, 17, 1, "i", "I", NULL},
    {8, 13, 2, "s", "Ljava/lang/String;", NULL},
};
static const ddmc_variable kVarsCompute[] = {
    {0, 11, 0, "this", "LDebug;", NULL},
    {0, 11, 1, "n", "I", NULL},
    {5, 6, 2, "r", "J", NULL},
};
static const struct {
  const ddmc_variable *v;
  size_t n;
} kVars[FD_NMETHODS] = {{kVarsInit, 1}, {kVarsMain, 3}, {kVarsCompute, 3}};

static const fakevm_thread kThreads[FD_NTHREADS] = {
    {.info = {.id = FD_T_MAIN, .tid = 1, .name = "main", .status = DDMC_THREAD_RUNNING}},
    {.info = {.id = FD_T_WORKER, .tid = 1, .name = "Worker", .status = DDMC_THREAD_SLEEPING}},
    {.info = {.id = FD_T_JDWP, .tid = 1, .name = "JDWP", .status = DDMC_THREAD_VMWAIT, .daemon = 1}},
};

/* ---- helpers */

/* Every op gets the vm_data it was installed with (not a shim's of the library's lock check). */
static fakebridge *FD(void *vm_data) {
  fakebridge *f = vm_data;
  if (f == NULL || f->magic != FAKEBRIDGE_MAGIC) abort();
  return f;
}
static void bad(fakebridge *f) { atomic_fetch_add(&f->bad_calls, 1); }

static const ddmc_class_info *class_of(ddmc_class c) {
  return c >= FD_C_OBJECT && c < FD_C_END ? &kClasses[c - FD_C_OBJECT].info : NULL;
}

fd_object *fakebridge_object(fakebridge *f, ddmc_ref r) {
  if (r >= FD_O_EXTRA && r - FD_O_EXTRA < (ddmc_ref)f->nextra) return &f->extra[r - FD_O_EXTRA];
  for (int i = 0; i < f->nobj; i++)
    if (f->obj[i].ref == r) return &f->obj[i];
  return NULL;
}

static const ddmc_field_info *field_of(ddmc_class c, uint32_t field) {
  if (c == FD_C_DEBUG && field < FD_NFIELDS) return &kDebugFields[field];
  if (c == FD_C_THREAD && field < 1) return &kThreadFields[field];
  return NULL;
}

static ddmc_value vi(char tag, int32_t i) {
  ddmc_value v = {.tag = tag};
  v.u.i = i;
  return v;
}
static ddmc_value vl(ddmc_ref r) {
  ddmc_value v = {.tag = 'L'};
  v.u.l = r;
  return v;
}
static ddmc_value vj(int64_t j) {
  ddmc_value v = {.tag = 'J'};
  v.u.j = j;
  return v;
}

static fd_object *add_object(fakebridge *f, ddmc_ref r, ddmc_class c) {
  if (f->nobj >= FD_MAX_OBJECTS) return NULL;
  fd_object *o = &f->obj[f->nobj++];
  memset(o, 0, sizeof(*o));
  o->ref = r;
  o->cls = c;
  return o;
}

fd_object *fakebridge_add(fakebridge *f, ddmc_class cls) {
  if (f->nextra == f->extra_cap) {
    int cap = f->extra_cap ? 2 * f->extra_cap : 64;
    fd_object *nv = realloc(f->extra, sizeof(fd_object) * (size_t)cap);
    if (nv == NULL) return NULL;
    f->extra = nv;
    f->extra_cap = cap;
  }
  fd_object *o = &f->extra[f->nextra];
  memset(o, 0, sizeof(*o));
  o->ref = FD_O_EXTRA + (ddmc_ref)f->nextra++;
  o->cls = cls;
  if (cls == FD_C_DEBUG) {
    static const char tags[FD_NFIELDS] = {[FD_F_X] = 'I', [FD_F_B] = 'B', [FD_F_C] = 'C', [FD_F_S] = 'S',
                                          [FD_F_F] = 'F', [FD_F_NEXT] = 'L', [FD_F_ARR] = 'L'};
    for (int i = FD_NSTATICS; i < FD_NFIELDS; i++) o->fields[i].tag = tags[i];
  }
  return o;
}

static int thread_ok(uint32_t t) { return t == FD_T_MAIN || t == FD_T_WORKER; }

/* ---- reference types */

static int for_each_class(void *vd, ddmc_class_visit_fn fn, void *arg) {
  (void)vd;
  for (ddmc_class c = FD_C_OBJECT; c < FD_C_END; c++)
    if (fn(arg, c)) break;
  return 0;
}

/* The synthetic class c's number, or -1 when c is not one (or they are off). */
static int64_t synth_of(fakebridge *f, ddmc_class c) {
  return f->synth_on && c >= FD_C_SYNTH ? (int64_t)(c - FD_C_SYNTH) : -1;
}

static int synth_class_info(fakebridge *f, int64_t n, ddmc_class_info *out) {
  if (n == f->synth.fails) return DDMC_JDWP_INVALID_CLASS;
  snprintf(f->synth_sig, sizeof f->synth_sig, "LC%lld;", (long long)n);
  snprintf(f->synth_src, sizeof f->synth_src, "C%lld.java", (long long)n);
  memset(out, 0, sizeof(*out));
  out->signature = f->synth_sig;
  out->source_file = n == f->synth.no_source ? NULL : f->synth_src;
  out->type_tag = DDMC_TYPE_CLASS;
  out->status = 7;
  out->nmethods = f->synth.ctor >= 0 ? (int32_t)f->synth.ctor + 1 : 0;
  return 0;
}

static int class_info(void *vd, ddmc_class c, ddmc_class_info *out) {
  fakebridge *f = FD(vd);
  atomic_fetch_add(&f->n_class_info, 1);
  int64_t n = synth_of(f, c);
  if (n >= 0) return synth_class_info(f, n, out);
  const ddmc_class_info *i = class_of(c);
  if (i == NULL) {
    bad(f);
    return DDMC_JDWP_INVALID_CLASS;
  }
  *out = *i;
  return 0;
}

static int class_interface(void *vd, ddmc_class c, uint32_t index, ddmc_class *out) {
  if (c != FD_C_DEBUG || index != 0) {
    bad(FD(vd));
    return DDMC_JDWP_INVALID_CLASS;
  }
  *out = FD_C_RUNNABLE;
  return 0;
}

static int field_info(void *vd, ddmc_class c, uint32_t field, ddmc_field_info *out) {
  const ddmc_field_info *fi = field_of(c, field);
  if (fi == NULL) {
    bad(FD(vd));
    return DDMC_JDWP_INVALID_FIELDID;
  }
  *out = *fi;
  return 0;
}

static int method_info(void *vd, ddmc_class c, uint32_t method, ddmc_method_info *out) {
  fakebridge *f = FD(vd);
  atomic_fetch_add(&f->n_method_info, 1);
  if (synth_of(f, c) >= 0) {
    snprintf(f->synth_name, sizeof f->synth_name, "m%u", method);
    memset(out, 0, sizeof(*out));
    int ctor = method == f->synth.ctor && f->synth.ctor_sig != NULL;
    out->name = ctor ? "<init>" : f->synth_name;
    out->signature = ctor ? f->synth.ctor_sig : "()V";
    out->code_end = 9;
    out->modifiers = method == f->synth.native ? DDMC_ACC_NATIVE : 0;
    return 0;
  }
  if (c != FD_C_DEBUG || method >= FD_NMETHODS) {
    bad(f);
    return DDMC_JDWP_INVALID_METHODID;
  }
  *out = kMethods[method];
  return 0;
}

static int line_table(void *vd, ddmc_class c, uint32_t method, ddmc_line_visit_fn fn, void *arg) {
  fakebridge *f = FD(vd);
  atomic_fetch_add(&f->n_line_table, 1);
  if (synth_of(f, c) >= 0) {
    if (method == f->synth.no_lines) return DDMC_JDWP_ABSENT_INFORMATION;
    if (fn(arg, 0, 100 + (int32_t)method) == 0) fn(arg, 4, method == f->synth.wide_line ? 40000 : 200 + (int32_t)method);
    return 0;
  }
  if (c != FD_C_DEBUG || method >= FD_NMETHODS) {
    bad(f);
    return DDMC_JDWP_INVALID_METHODID;
  }
  if (atomic_load(&f->absent_info)) return DDMC_JDWP_ABSENT_INFORMATION;
  for (size_t i = 0; i < kLines[method].n; i++)
    if (fn(arg, kLines[method].v[i].index, kLines[method].v[i].line)) break;
  return 0;
}

static int variable_table(void *vd, ddmc_class c, uint32_t method, ddmc_variable_visit_fn fn, void *arg) {
  fakebridge *f = FD(vd);
  if (c != FD_C_DEBUG || method >= FD_NMETHODS) {
    bad(f);
    return DDMC_JDWP_INVALID_METHODID;
  }
  if (atomic_load(&f->absent_info)) return DDMC_JDWP_ABSENT_INFORMATION;
  for (size_t i = 0; i < kVars[method].n; i++)
    if (fn(arg, &kVars[method].v[i])) break;
  return 0;
}

/* ---- objects */

static int object_class(void *vd, ddmc_ref o, ddmc_class *out) {
  fakebridge *f = FD(vd);
  if (o == 0) bad(f); /* "o is never 0" */
  fd_object *ob = fakebridge_object(f, o);
  if (ob == NULL) return DDMC_JDWP_INVALID_OBJECT;
  *out = ob->cls;
  return 0;
}

/* Names (FAKEBRIDGE_WEAK_NAMES). */
static int hold_ref(void *vd, ddmc_ref o, int strong) {
  fakebridge *f = FD(vd);
  if (fakebridge_object(f, o) == NULL) return DDMC_JDWP_INVALID_OBJECT;
  atomic_fetch_add(strong ? &f->n_hold_strong : &f->n_hold_weak, 1);
  return 0;
}

static void release_ref(void *vd, ddmc_ref o) {
  fakebridge *f = FD(vd);
  if (fakebridge_object(f, o) == NULL) bad(f);
  atomic_fetch_add(&f->n_release, 1);
  atomic_store(&f->last_release, (long long)o);
}

static ddmc_value *field_slot(fakebridge *f, ddmc_ref o, ddmc_class c, uint32_t field, const ddmc_field_info **fi) {
  *fi = field_of(c, field);
  if (*fi == NULL) return NULL;
  int is_static = ((*fi)->modifiers & DDMC_ACC_STATIC) != 0;
  if (o == 0) return is_static && c == FD_C_DEBUG ? &f->statics[field] : NULL;
  if (is_static) return NULL; /* the library passes 0 for a static */
  fd_object *ob = fakebridge_object(f, o);
  if (ob == NULL || ob->cls != c) return NULL;
  return &ob->fields[field];
}

static void count_read(fakebridge *f) {
  if (atomic_load(&f->world_stopped) == 0) atomic_fetch_add(&f->n_unstopped_reads, 1);
}

static int get_field(void *vd, ddmc_ref o, ddmc_class c, uint32_t field, ddmc_value *out) {
  fakebridge *f = FD(vd);
  count_read(f);
  int rc = atomic_load(&f->fail_get_field);
  if (rc != 0) return rc;
  const ddmc_field_info *fi;
  ddmc_value *v = field_slot(f, o, c, field, &fi);
  if (v == NULL) {
    bad(f);
    return DDMC_JDWP_INVALID_FIELDID;
  }
  *out = *v;
  return 0;
}

static int set_field(void *vd, ddmc_ref o, ddmc_class c, uint32_t field, const ddmc_value *val) {
  fakebridge *f = FD(vd);
  const ddmc_field_info *fi;
  ddmc_value *v = field_slot(f, o, c, field, &fi);
  if (v == NULL) {
    bad(f);
    return DDMC_JDWP_INVALID_FIELDID;
  }
  char want = fi->signature[0] == '[' ? 'L' : fi->signature[0];
  if (val->tag != want) return DDMC_JDWP_TYPE_MISMATCH;
  if (want == 'L' && val->u.l != 0) { /* the object must fit the field's type */
    fd_object *ob = fakebridge_object(f, val->u.l);
    ddmc_class need = fi->signature[0] == '['                 ? FD_C_INT_ARRAY
                      : strcmp(fi->signature, "LDebug;") == 0 ? FD_C_DEBUG
                                                              : FD_C_STRING;
    if (ob == NULL || ob->cls != need) return DDMC_JDWP_TYPE_MISMATCH;
  }
  *v = *val;
  return 0;
}

static int string_value(void *vd, ddmc_ref s, ddmc_buf *out) {
  fakebridge *f = FD(vd);
  fd_object *ob = fakebridge_object(f, s);
  if (ob == NULL || ob->cls != FD_C_STRING) {
    bad(f);
    return DDMC_JDWP_INVALID_STRING;
  }
  return ddmc_buf_put_bytes(out, ob->str, strlen(ob->str)) ? DDMC_JDWP_OUT_OF_MEMORY : 0;
}

static int create_string(void *vd, const char *utf8, size_t n, ddmc_ref *out) {
  fakebridge *f = FD(vd);
  ddmc_ref r = FD_O_END + (ddmc_ref)f->nobj;
  fd_object *ob = add_object(f, r, FD_C_STRING);
  if (ob == NULL) return DDMC_JDWP_OUT_OF_MEMORY;
  if (n > sizeof(ob->str) - 1) n = sizeof(ob->str) - 1;
  memcpy(ob->str, utf8, n);
  ob->str[n] = '\0';
  *out = r;
  return 0;
}

static fd_object *array_of(fakebridge *f, ddmc_ref a) {
  fd_object *ob = fakebridge_object(f, a);
  if (ob == NULL || ob->cls != FD_C_INT_ARRAY) {
    bad(f);
    return NULL;
  }
  return ob;
}

static int array_length(void *vd, ddmc_ref a, int32_t *out) {
  fd_object *ob = array_of(FD(vd), a);
  if (ob == NULL) return DDMC_JDWP_INVALID_ARRAY;
  *out = ob->arrlen;
  return 0;
}

static int array_get(void *vd, ddmc_ref a, int32_t first, int32_t n, ddmc_value *out) {
  fakebridge *f = FD(vd);
  count_read(f);
  fd_object *ob = array_of(f, a);
  if (ob == NULL) return DDMC_JDWP_INVALID_ARRAY;
  if (first < 0 || n < 0 || first > ob->arrlen || n > ob->arrlen - first) {
    bad(f);
    return DDMC_JDWP_INVALID_INDEX;
  }
  for (int32_t i = 0; i < n; i++) out[i] = vi('I', ob->arr[first + i]);
  return 0;
}

static int array_set(void *vd, ddmc_ref a, int32_t first, int32_t n, const ddmc_value *v) {
  fakebridge *f = FD(vd);
  fd_object *ob = array_of(f, a);
  if (ob == NULL) return DDMC_JDWP_INVALID_ARRAY;
  if (first < 0 || n < 0 || first > ob->arrlen || n > ob->arrlen - first) {
    bad(f);
    return DDMC_JDWP_INVALID_INDEX;
  }
  for (int32_t i = 0; i < n; i++)
    if (v[i].tag != 'I') return DDMC_JDWP_TYPE_MISMATCH;
  for (int32_t i = 0; i < n; i++) ob->arr[first + i] = v[i].u.i;
  return 0;
}

/* ---- threads */

static int thread_info(void *vd, uint32_t t, ddmc_thread_detail *out) {
  fakebridge *f = FD(vd);
  switch (t) {
    case FD_T_MAIN:
      *out = (ddmc_thread_detail){FD_O_THREAD_MAIN, FD_O_GROUP_MAIN, "main", DDMC_TS_RUNNING, 0};
      return 0;
    case FD_T_WORKER:
      if (atomic_load(&f->worker_dead)) return DDMC_JDWP_INVALID_THREAD;
      *out = (ddmc_thread_detail){FD_O_THREAD_WORKER, FD_O_GROUP_MAIN, "Worker", DDMC_TS_SLEEPING, 0};
      return 0;
    case FD_T_JDWP:
      *out = (ddmc_thread_detail){FD_O_THREAD_JDWP, FD_O_GROUP_SYSTEM, "JDWP", DDMC_TS_RUNNING, 1};
      return 0;
    default: return DDMC_JDWP_INVALID_THREAD;
  }
}

/* The threads thread_info shows (JDWP, internal, left out), with the objects it gives. */
static int for_each_debuggee_thread(void *vd, ddmc_thread_object_visit_fn fn, void *arg) {
  fakebridge *f = FD(vd);
  atomic_fetch_add(&f->n_thread_objects, 1);
  if (fn(arg, FD_T_MAIN, FD_O_THREAD_MAIN)) return 0;
  if (!atomic_load(&f->worker_dead)) fn(arg, FD_T_WORKER, FD_O_THREAD_WORKER);
  return 0;
}

static int for_each_group(void *vd, ddmc_group_visit_fn fn, void *arg) {
  (void)vd;
  if (fn(arg, FD_O_GROUP_SYSTEM, 0, "system")) return 0;
  fn(arg, FD_O_GROUP_MAIN, FD_O_GROUP_SYSTEM, "main");
  return 0;
}

static int main_thread(void *vd, uint32_t *out) {
  (void)vd;
  *out = FD_T_MAIN;
  return 0;
}

static int suspend_thread(void *vd, uint32_t t) {
  fakebridge *f = FD(vd);
  atomic_fetch_add(&f->n_suspend, 1);
  if (!thread_ok(t) || atomic_load(&f->vm_suspended[t])) {
    bad(f);
    return DDMC_JDWP_INVALID_THREAD;
  }
  int rc = atomic_load(&f->fail_suspend);
  if (rc != 0) return rc;
  if (f->hook) f->hook(f->hook_arg, FD_HOOK_SUSPEND, t);
  atomic_store(&f->vm_suspended[t], 1);
  return 0;
}

static int resume_thread(void *vd, uint32_t t) {
  fakebridge *f = FD(vd);
  atomic_fetch_add(&f->n_resume, 1);
  if (!thread_ok(t) || !atomic_load(&f->vm_suspended[t])) {
    bad(f);
    return DDMC_JDWP_INVALID_THREAD;
  }
  atomic_store(&f->vm_suspended[t], 0);
  return 0;
}

static int suspend_threads(void *vd, const uint32_t *ts, uint32_t n, int *errs) {
  fakebridge *f = FD(vd);
  atomic_fetch_add(&f->n_suspend_list, 1);
  atomic_store(&f->last_list_n, (int)n);
  int fail = atomic_load(&f->fail_suspend);
  for (uint32_t i = 0; i < n; i++) {
    atomic_store(&f->fail_suspend, i == 0 ? fail : 0);
    errs[i] = suspend_thread(vd, ts[i]);
  }
  atomic_store(&f->fail_suspend, 0);
  return 0;
}

static int resume_threads(void *vd, const uint32_t *ts, uint32_t n, int *errs) {
  fakebridge *f = FD(vd);
  atomic_fetch_add(&f->n_resume_list, 1);
  atomic_store(&f->last_list_n, (int)n);
  for (uint32_t i = 0; i < n; i++) errs[i] = resume_thread(vd, ts[i]);
  return 0;
}

static void thread_parking(void *vd, uint32_t t, int parked) {
  fakebridge *f = FD(vd);
  if (!thread_ok(t)) {
    bad(f);
    return;
  }
  atomic_fetch_add(parked ? &f->n_park : &f->n_unpark, 1);
  atomic_store(&f->parked[t], parked);
}

/* ---- frames */

static fd_frame *frame_of(fakebridge *f, uint32_t t, int32_t depth) {
  if (!thread_ok(t) || depth < 0 || depth >= f->nframes[t]) {
    bad(f);
    return NULL;
  }
  return &f->frames[t][depth];
}

static int frame_count(void *vd, uint32_t t, int32_t *out) {
  fakebridge *f = FD(vd);
  if (!thread_ok(t)) {
    bad(f);
    return DDMC_JDWP_INVALID_THREAD;
  }
  *out = f->nframes[t];
  return 0;
}

static int frame_location(void *vd, uint32_t t, int32_t depth, ddmc_location *out) {
  fd_frame *fr = frame_of(FD(vd), t, depth);
  if (fr == NULL) return DDMC_JDWP_INVALID_FRAMEID;
  *out = fr->loc;
  return 0;
}

static int frame_this(void *vd, uint32_t t, int32_t depth, ddmc_ref *out) {
  fd_frame *fr = frame_of(FD(vd), t, depth);
  if (fr == NULL) return DDMC_JDWP_INVALID_FRAMEID;
  *out = fr->this_obj;
  return 0;
}

static int get_local(void *vd, uint32_t t, int32_t depth, int32_t slot, char tag, ddmc_value *out) {
  fd_frame *fr = frame_of(FD(vd), t, depth);
  if (fr == NULL) return DDMC_JDWP_INVALID_FRAMEID;
  if (slot < 0 || slot >= fr->nlocals) return DDMC_JDWP_INVALID_SLOT;
  if (fr->locals[slot].tag != tag) return DDMC_JDWP_TYPE_MISMATCH;
  *out = fr->locals[slot];
  return 0;
}

static int set_local(void *vd, uint32_t t, int32_t depth, int32_t slot, const ddmc_value *v) {
  fd_frame *fr = frame_of(FD(vd), t, depth);
  if (fr == NULL) return DDMC_JDWP_INVALID_FRAMEID;
  if (slot < 0 || slot >= fr->nlocals) return DDMC_JDWP_INVALID_SLOT;
  if (fr->locals[slot].tag != v->tag) return DDMC_JDWP_TYPE_MISMATCH;
  fr->locals[slot] = *v;
  return 0;
}

/* ---- execution control */

static int loc_valid(const ddmc_location *l) {
  return l->cls == FD_C_DEBUG && l->method < FD_NMETHODS && l->index >= kMethods[l->method].code_start &&
         l->index <= kMethods[l->method].code_end;
}

static int bp_find(fakebridge *f, const ddmc_location *l) {
  for (int i = 0; i < f->nbps; i++)
    if (f->bps[i].cls == l->cls && f->bps[i].method == l->method && f->bps[i].index == l->index) return i;
  return -1;
}

static int set_breakpoint(void *vd, const ddmc_location *loc) {
  fakebridge *f = FD(vd);
  atomic_fetch_add(&f->n_set_bp, 1);
  pthread_mutex_lock(&f->bp_lock);
  int rc = 0;
  if (!loc_valid(loc) || bp_find(f, loc) >= 0) {
    bad(f);
    rc = DDMC_JDWP_INVALID_LOCATION;
  } else if (f->nbps == (int)(sizeof(f->bps) / sizeof(f->bps[0]))) {
    rc = DDMC_JDWP_OUT_OF_MEMORY;
  } else {
    f->bps[f->nbps++] = *loc;
  }
  pthread_mutex_unlock(&f->bp_lock);
  return rc;
}

static int clear_breakpoint(void *vd, const ddmc_location *loc) {
  fakebridge *f = FD(vd);
  atomic_fetch_add(&f->n_clear_bp, 1);
  pthread_mutex_lock(&f->bp_lock);
  int i = bp_find(f, loc), rc = 0;
  if (i < 0) {
    bad(f);
    rc = DDMC_JDWP_INVALID_LOCATION;
  } else {
    f->bps[i] = f->bps[--f->nbps];
  }
  pthread_mutex_unlock(&f->bp_lock);
  return rc;
}

int fakebridge_has_bp(fakebridge *f, ddmc_class cls, uint32_t method, int64_t index) {
  ddmc_location l = {cls, method, index};
  pthread_mutex_lock(&f->bp_lock);
  int found = bp_find(f, &l) >= 0;
  pthread_mutex_unlock(&f->bp_lock);
  return found;
}

static int set_stepping(void *vd, uint32_t t, int on) {
  fakebridge *f = FD(vd);
  atomic_fetch_add(&f->n_set_step, 1);
  if (!thread_ok(t)) {
    bad(f);
    return DDMC_JDWP_INVALID_THREAD;
  }
  if (on && !atomic_load(&f->vm_suspended[t]) && !atomic_load(&f->parked[t])) atomic_fetch_add(&f->step_on_running, 1);
  atomic_store(&f->stepping[t], on);
  return 0;
}

static int set_method_events(void *vd, int on) {
  fakebridge *f = FD(vd);
  atomic_fetch_add(&f->n_method_events, 1);
  atomic_store(&f->method_events, on);
  return 0;
}

static void set_monitor_events(void *vd, int on) {
  fakebridge *f = FD(vd);
  atomic_fetch_add(&f->n_monitor_events, 1);
  if (atomic_exchange(&f->monitor_events, on) == on) atomic_fetch_add(&f->bad_calls, 1); /* not a change */
}

static int set_field_watch(void *vd, ddmc_class c, uint32_t field, unsigned watch) {
  fakebridge *f = FD(vd);
  if (c != FD_C_DEBUG || field >= 16 || watch > 3) {
    atomic_fetch_add(&f->bad_calls, 1);
    return DDMC_JDWP_INVALID_FIELDID;
  }
  atomic_fetch_add(&f->n_field_watch, 1);
  atomic_store(&f->last_watch_field, (int)field);
  atomic_store(&f->last_watch_mask, (int)watch);
  unsigned m = atomic_load(&f->watch_masks) & ~(3u << (2 * field));
  atomic_store(&f->watch_masks, m | watch << (2 * field));
  return 0;
}

/* A synthetic class's constructor (fd_synth.ctor); its other methods cannot be invoked. */
static int synth_invoke(fakebridge *f, uint32_t thread, ddmc_class c, uint32_t method, int options, ddmc_value *result) {
  atomic_fetch_add(&f->n_invoke, 1);
  atomic_store(&f->last_invoke_thread, (int)thread);
  atomic_store(&f->last_invoke_options, options);
  if (method != f->synth.ctor || f->synth.ctor_sig == NULL || !(options & DDMC_INVOKE_CONSTRUCT) || thread == 0 ||
      thread > FD_NTHREADS) {
    bad(f);
    return DDMC_JDWP_INVALID_METHODID;
  }
  ddmc_ref r = FD_O_END + (ddmc_ref)f->nobj;
  if (add_object(f, r, c) == NULL) return DDMC_JDWP_OUT_OF_MEMORY;
  result->tag = 'L';
  result->u.l = r;
  return 0;
}

static int invoke(void *vd, uint32_t thread, ddmc_class c, uint32_t method, ddmc_ref this_obj, const ddmc_value *args,
                  int32_t nargs, int options, ddmc_value *result, ddmc_ref *exception) {
  fakebridge *f = FD(vd);
  pthread_mutex_lock(&f->bp_lock); /* invokes may run on several threads at once */
  f->last_invoke_nargs = nargs;
  if (nargs > 0) memcpy(f->last_invoke_args, args, sizeof(ddmc_value) * (size_t)(nargs < 8 ? nargs : 8));
  pthread_mutex_unlock(&f->bp_lock);
  if (synth_of(f, c) >= 0) return synth_invoke(f, thread, c, method, options, result);
  if (c != FD_C_DEBUG || method >= FD_NMETHODS || thread == 0 || thread > FD_NTHREADS || nargs < 0) {
    atomic_fetch_add(&f->bad_calls, 1);
    return DDMC_JDWP_INVALID_METHODID;
  }
  atomic_fetch_add(&f->n_invoke, 1);
  atomic_store(&f->last_invoke_thread, (int)thread);
  atomic_store(&f->last_invoke_options, options);
  if (f->hook) f->hook(f->hook_arg, FD_HOOK_INVOKE, thread);
  if ((options & DDMC_INVOKE_CONSTRUCT) != 0) {
    /* Debug() makes a new Debug (x = 0) */
    if (method != FD_M_INIT || this_obj != 0 || nargs != 0) {
      atomic_fetch_add(&f->bad_calls, 1);
      return DDMC_JDWP_INVALID_METHODID;
    }
    ddmc_ref r = FD_O_END + (ddmc_ref)f->nobj;
    if (add_object(f, r, FD_C_DEBUG) == NULL) return DDMC_JDWP_OUT_OF_MEMORY;
    result->tag = 'L';
    result->u.l = r;
    return 0;
  }
  if (method == FD_M_MAIN) {
    result->tag = 'V';
    return 0;
  }
  if (method != FD_M_COMPUTE) return DDMC_JDWP_INVALID_METHODID;
  if (this_obj == 0 || nargs != 1 || args[0].tag != 'I') return DDMC_JDWP_TYPE_MISMATCH;
  if (args[0].u.i < 0) {
    *exception = FD_O_DEBUG2;
    return 0;
  }
  result->tag = 'J';
  result->u.j = (int64_t)args[0].u.i * 2;
  return 0;
}

static int new_array(void *vd, ddmc_class c, int32_t length, ddmc_ref *out) {
  fakebridge *f = FD(vd);
  if (c != FD_C_INT_ARRAY || length < 0) {
    bad(f);
    return DDMC_JDWP_INVALID_ARRAY;
  }
  if (length > (int32_t)(sizeof(f->obj[0].arr) / sizeof(f->obj[0].arr[0]))) return DDMC_JDWP_OUT_OF_MEMORY;
  ddmc_ref r = FD_O_END + (ddmc_ref)f->nobj;
  fd_object *ob = add_object(f, r, FD_C_INT_ARRAY);
  if (ob == NULL) return DDMC_JDWP_OUT_OF_MEMORY;
  ob->arrlen = length;
  *out = r;
  return 0;
}

static int interrupt_thread(void *vd, uint32_t thread) {
  fakebridge *f = FD(vd);
  if (thread == 0 || thread > FD_NTHREADS) {
    bad(f);
    return DDMC_JDWP_INVALID_THREAD;
  }
  atomic_fetch_add(&f->n_interrupt, 1);
  atomic_store(&f->last_interrupt_thread, (int)thread);
  return 0;
}

/* The fake's only "Throwable" is a Debug instance. */
static int stop_thread(void *vd, uint32_t thread, ddmc_ref exc) {
  fakebridge *f = FD(vd);
  fd_object *ob = fakebridge_object(f, exc);
  atomic_fetch_add(&f->n_stop, 1);
  if (thread == 0 || thread > FD_NTHREADS || ob == NULL) {
    bad(f);
    return DDMC_JDWP_INVALID_OBJECT;
  }
  if (ob->cls != FD_C_DEBUG) return DDMC_JDWP_INVALID_CLASS;
  atomic_store(&f->last_stop_thread, (int)thread);
  atomic_store(&f->last_stop_exc, (long long)exc);
  return 0;
}

static int redefine_classes(void *vd, uint32_t n, const ddmc_class *classes, const uint8_t *const *bytes,
                            const uint32_t *lengths) {
  fakebridge *f = FD(vd);
  atomic_fetch_add(&f->n_redefine, 1);
  for (uint32_t i = 0; i < n; i++) {
    if (classes[i] == 0 || bytes[i] == NULL) {
      bad(f);
      return DDMC_JDWP_INVALID_CLASS;
    }
    if (lengths[i] < 4 || bytes[i][0] != 0xCA || bytes[i][1] != 0xFE || bytes[i][2] != 0xBA || bytes[i][3] != 0xBE)
      return DDMC_JDWP_INVALID_CLASS_FORMAT;
  }
  return 0;
}

static int pop_frames(void *vd, uint32_t thread, int32_t n) {
  fakebridge *f = FD(vd);
  if (thread == 0 || thread > FD_NTHREADS || n < 1) {
    bad(f);
    return DDMC_JDWP_INVALID_THREAD;
  }
  atomic_store(&f->last_pop_thread, (int)thread);
  atomic_store(&f->last_pop_n, n);
  return 0;
}

static int force_early_return(void *vd, uint32_t thread, const ddmc_value *v) {
  fakebridge *f = FD(vd);
  if (thread == 0 || thread > FD_NTHREADS) {
    bad(f);
    return DDMC_JDWP_INVALID_THREAD;
  }
  atomic_store(&f->last_force_thread, (int)thread);
  atomic_store(&f->last_force_tag, v->tag);
  return 0;
}

/* Monitors: main owns FD_O_DEBUG (entered twice, by its outer frame, depth 1) and
 * FD_O_DEBUG2 (once, innermost frame); Worker waits to enter FD_O_DEBUG. */
static int monitor_info(void *vd, ddmc_ref obj, uint32_t *owner, int32_t *count, ddmc_thread_id_visit_fn waiter,
                        void *arg) {
  fakebridge *f = FD(vd);
  if (fakebridge_object(f, obj) == NULL) {
    bad(f);
    return DDMC_JDWP_INVALID_OBJECT;
  }
  *owner = 0;
  *count = 0;
  if (obj == FD_O_DEBUG || obj == FD_O_DEBUG2) {
    *owner = FD_T_MAIN;
    *count = obj == FD_O_DEBUG ? 2 : 1;
  }
  if (obj == FD_O_DEBUG) {
    waiter(arg, FD_T_WORKER);
    waiter(arg, FD_T_JDWP); /* internal: the library leaves it out */
  }
  return 0;
}

static int owned_monitors(void *vd, uint32_t thread, ddmc_monitor_visit_fn fn, void *arg) {
  fakebridge *f = FD(vd);
  if (thread == 0 || thread > FD_NTHREADS) {
    bad(f);
    return DDMC_JDWP_INVALID_THREAD;
  }
  if (thread == FD_T_MAIN && fn(arg, FD_O_DEBUG, 1) == 0) fn(arg, FD_O_DEBUG2, 0);
  return 0;
}

static int contended_monitor(void *vd, uint32_t thread, ddmc_ref *out) {
  fakebridge *f = FD(vd);
  if (thread == 0 || thread > FD_NTHREADS) {
    bad(f);
    return DDMC_JDWP_INVALID_THREAD;
  }
  *out = thread == FD_T_WORKER ? FD_O_DEBUG : 0;
  return 0;
}

static void vm_exit(void *vd, int32_t status) {
  fakebridge *f = FD(vd);
  atomic_store(&f->last_exit, status);
  atomic_fetch_add(&f->n_exit, 1);
}

/* ---- the heap (FAKEBRIDGE_HEAP) */

uint64_t fakebridge_object_size(const fd_object *o) {
  switch (o->cls) {
    case FD_C_DEBUG: return 56;
    case FD_C_STRING: return 24 + strlen(o->str);
    case FD_C_INT_ARRAY: return 16 + 4 * (uint64_t)o->arrlen;
    case FD_C_CLASS: return 64;
    default: return 32;
  }
}

static int with_world_stopped(void *vd, ddmc_stopped_fn fn, void *arg) {
  fakebridge *f = FD(vd);
  atomic_fetch_add(&f->n_stopped, 1);
  atomic_fetch_add(&f->world_stopped, 1);
  int rc = fn(arg);
  atomic_fetch_sub(&f->world_stopped, 1);
  return rc;
}

static int for_each_object(void *vd, ddmc_heap_object_visit_fn fn, void *arg) {
  fakebridge *f = FD(vd);
  if (atomic_load(&f->world_stopped) == 0) bad(f);
  for (int i = f->nobj + f->nextra - 1; i >= 0; i--) {
    const fd_object *o = i >= f->nobj ? &f->extra[i - f->nobj] : &f->obj[i];
    int arr = o->cls == FD_C_INT_ARRAY;
    ddmc_heap_object h = {o->ref, o->cls, fakebridge_object_size(o), DDMC_HEAP_ID_APP, arr ? o->arrlen : -1,
                          arr ? o->arr : NULL};
    if (fn(arg, &h)) break;
  }
  return 0;
}

static int for_each_root(void *vd, ddmc_gc_root_visit_fn fn, void *arg) {
  fakebridge *f = FD(vd);
  if (atomic_load(&f->world_stopped) == 0) bad(f);
  const ddmc_gc_root roots[] = {
      {FD_O_DEBUG, DDMC_GC_ROOT_JNI_GLOBAL, 0, -1, -1},
      {FD_O_CLASS_DEBUG, DDMC_GC_ROOT_STICKY_CLASS, 0, -1, -1},
      {FD_O_THREAD_MAIN, DDMC_GC_ROOT_THREAD_OBJECT, FD_T_MAIN, -1, -1},
      {FD_O_THREAD_WORKER, DDMC_GC_ROOT_THREAD_OBJECT, FD_T_WORKER, -1, -1},
      {FD_O_THREAD_JDWP, DDMC_GC_ROOT_THREAD_OBJECT, FD_T_JDWP, -1, -1},
  };
  for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++)
    if (fn(arg, &roots[i])) break;
  return 0;
}

static int collect(void *vd) {
  atomic_fetch_add(&FD(vd)->n_collect, 1);
  return 0;
}

static int object_size(void *vd, ddmc_ref o, uint64_t *out) {
  const fd_object *ob = fakebridge_object(FD(vd), o);
  if (ob == NULL) return DDMC_JDWP_INVALID_OBJECT;
  *out = fakebridge_object_size(ob);
  return 0;
}

static int object_hash(void *vd, ddmc_ref o, int32_t *out) {
  if (fakebridge_object(FD(vd), o) == NULL) return DDMC_JDWP_INVALID_OBJECT;
  *out = (int32_t)(o * 31);
  return 0;
}

/* ---- a program of the test's (fakebridge_new_program) */

static const fd_pclass *pclass(const fakebridge *f, ddmc_class c) {
  const fd_program *p = f->prog;
  return c >= FD_C_PROG && c - FD_C_PROG < p->nclasses ? &p->classes[c - FD_C_PROG] : NULL;
}

static const fd_pobject *pobject(const fakebridge *f, ddmc_ref r) {
  const fd_program *p = f->prog;
  for (size_t k = 0; r != 0 && k < p->nobjects; k++) {
    const fd_pobject *o = &p->objects[k];
    if (r >= o->ref && r - o->ref < (o->repeat > 1 ? o->repeat : 1)) return o;
  }
  return NULL;
}

/* Is c the class oc or one of its superclasses? (A chain of the program's; bounded: a cycle is
 * the test's mistake, not a hang.) */
static int p_is_a(const fakebridge *f, ddmc_class oc, ddmc_class c) {
  for (int depth = 0; oc != 0 && depth < 64; depth++) {
    if (oc == c) return 1;
    const fd_pclass *pc = pclass(f, oc);
    oc = pc != NULL ? pc->info.superclass : 0;
  }
  return 0;
}

static int p_for_each_class(void *vd, ddmc_class_visit_fn fn, void *arg) {
  fakebridge *f = FD(vd);
  for (uint32_t i = 0; i < f->prog->nclasses; i++)
    if (fn(arg, FD_C_PROG + i)) break;
  return 0;
}

static int p_class_info(void *vd, ddmc_class c, ddmc_class_info *out) {
  fakebridge *f = FD(vd);
  const fd_pclass *pc = pclass(f, c);
  if (pc == NULL) return class_info(vd, c, out);
  atomic_fetch_add(&f->n_class_info, 1);
  *out = pc->info;
  out->nfields = pc->nfields;
  return 0;
}

static int p_field_info(void *vd, ddmc_class c, uint32_t field, ddmc_field_info *out) {
  fakebridge *f = FD(vd);
  const fd_pclass *pc = pclass(f, c);
  if (pc == NULL) return field_info(vd, c, field, out);
  if (field >= pc->nfields) {
    bad(f);
    return DDMC_JDWP_INVALID_FIELDID;
  }
  const fd_pfield *pf = &pc->fields[field];
  *out = (ddmc_field_info){pf->name, pf->signature, NULL, pf->modifiers};
  return 0;
}

/* A static (o == 0) or o's instance field (c, field): the value the program gives, else NULL. */
static const ddmc_value *p_field_value(const fakebridge *f, const fd_pclass *pc, const fd_pobject *po, ddmc_ref o,
                                       ddmc_class c, uint32_t field) {
  if (field >= pc->nfields) return NULL;
  int is_static = (pc->fields[field].modifiers & DDMC_ACC_STATIC) != 0;
  if (o == 0) return is_static ? &pc->fields[field].value : NULL;
  if (is_static || po == NULL || !p_is_a(f, po->cls, c)) return NULL;
  for (size_t i = 0; i < po->nfields; i++)
    if (po->fields[i].cls == c && po->fields[i].field == field) return &po->fields[i].value;
  return NULL;
}

static int p_get_field(void *vd, ddmc_ref o, ddmc_class c, uint32_t field, ddmc_value *out) {
  fakebridge *f = FD(vd);
  const fd_pclass *pc = pclass(f, c);
  const fd_pobject *po = pobject(f, o);
  if (pc == NULL && po == NULL) return get_field(vd, o, c, field, out);
  count_read(f);
  int rc = atomic_load(&f->fail_get_field);
  if (rc != 0) return rc;
  const ddmc_value *v = pc != NULL ? p_field_value(f, pc, po, o, c, field) : NULL;
  if (v == NULL) {
    bad(f);
    return DDMC_JDWP_INVALID_FIELDID;
  }
  *out = *v;
  return 0;
}

static int p_array_get(void *vd, ddmc_ref a, int32_t first, int32_t n, ddmc_value *out) {
  fakebridge *f = FD(vd);
  const fd_pobject *po = pobject(f, a);
  if (po == NULL) return array_get(vd, a, first, n, out);
  count_read(f);
  if (po->length < 0 || po->values == NULL) {
    bad(f);
    return DDMC_JDWP_INVALID_ARRAY;
  }
  if (first < 0 || n < 0 || first > po->length || n > po->length - first) {
    bad(f);
    return DDMC_JDWP_INVALID_INDEX;
  }
  if (n > 0) memcpy(out, po->values + first, sizeof(*out) * (size_t)n);
  return 0;
}

static int p_array_length(void *vd, ddmc_ref a, int32_t *out) {
  fakebridge *f = FD(vd);
  const fd_pobject *po = pobject(f, a);
  if (po == NULL) return array_length(vd, a, out);
  if (po->length < 0) {
    bad(f);
    return DDMC_JDWP_INVALID_ARRAY;
  }
  *out = po->length;
  return 0;
}

static int p_object_class(void *vd, ddmc_ref o, ddmc_class *out) {
  const fd_pobject *po = pobject(FD(vd), o);
  if (po == NULL) return object_class(vd, o, out);
  *out = po->cls;
  return 0;
}

static int p_object_size(void *vd, ddmc_ref o, uint64_t *out) {
  const fd_pobject *po = pobject(FD(vd), o);
  if (po == NULL) return object_size(vd, o, out);
  *out = po->size;
  return 0;
}

static int p_object_hash(void *vd, ddmc_ref o, int32_t *out) {
  if (pobject(FD(vd), o) == NULL) return object_hash(vd, o, out);
  *out = (int32_t)(o * 31);
  return 0;
}

static int p_for_each_object(void *vd, ddmc_heap_object_visit_fn fn, void *arg) {
  fakebridge *f = FD(vd);
  if (atomic_load(&f->world_stopped) == 0) bad(f);
  const fd_program *p = f->prog;
  for (size_t k = 0; k < p->nobjects; k++) {
    const fd_pobject *o = &p->objects[k];
    uint32_t n = o->repeat > 1 ? o->repeat : 1;
    for (uint32_t i = 0; i < n; i++) {
      uint32_t heap = o->alt_every > 0 && i % o->alt_every == 0 ? o->alt_heap : o->heap_id;
      ddmc_heap_object h = {o->ref + i, o->cls, o->size, heap, o->length, o->elements};
      if (fn(arg, &h)) return 0;
    }
  }
  return 0;
}

static int p_for_each_root(void *vd, ddmc_gc_root_visit_fn fn, void *arg) {
  fakebridge *f = FD(vd);
  if (atomic_load(&f->world_stopped) == 0) bad(f);
  for (size_t i = 0; i < f->prog->nroots; i++)
    if (fn(arg, &f->prog->roots[i])) break;
  return 0;
}

/* With a program: its ops in place of the built-in program's (each falls back to them). */
static void add_program_ops(fakebridge *f, unsigned flags) {
  f->bridge.for_each_class = p_for_each_class;
  f->bridge.class_info = p_class_info;
  f->bridge.field_info = p_field_info;
  f->bridge.get_field = p_get_field;
  f->bridge.array_get = p_array_get;
  f->bridge.array_length = p_array_length;
  f->bridge.object_class = p_object_class;
  if (flags & FAKEBRIDGE_HEAP) {
    f->bridge.for_each_object = p_for_each_object;
    f->bridge.for_each_root = p_for_each_root;
    f->bridge.object_size = p_object_size;
    f->bridge.object_hash = p_object_hash;
  }
}

/* ---- reflection (FAKEBRIDGE_REFLECTION) */

static const uint8_t kCodeInit[] = {0x2a, 0xb7, 0x00, 0x01};                 /* aload_0; invokespecial #1 */
static const uint8_t kCodeMain[21] = {[0] = 0x03, [1] = 0x3c, [20] = 0xb1};  /* iconst_0; istore_1 ... return */
static const uint8_t kCodeCompute[11] = {[0] = 0x1b, [1] = 0x85, [10] = 0xad}; /* iload_1; i2l ... lreturn */

const uint8_t *fakebridge_bytecodes(uint32_t method, size_t *n) {
  static const struct {
    const uint8_t *p;
    size_t n;
  } code[FD_NMETHODS] = {{kCodeInit, sizeof kCodeInit}, {kCodeMain, sizeof kCodeMain}, {kCodeCompute, sizeof kCodeCompute}};
  if (method >= FD_NMETHODS) return NULL;
  *n = code[method].n;
  return code[method].p;
}

static int bytecodes(void *vd, ddmc_class c, uint32_t method, ddmc_buf *out) {
  size_t n = 0;
  const uint8_t *p = c == FD_C_DEBUG ? fakebridge_bytecodes(method, &n) : NULL;
  if (p == NULL) {
    bad(FD(vd));
    return DDMC_JDWP_INVALID_METHODID;
  }
  return ddmc_buf_put_bytes(out, p, n) ? DDMC_JDWP_OUT_OF_MEMORY : 0;
}

static int constant_pool(void *vd, ddmc_class c, int32_t *count, ddmc_buf *out) {
  if (c != FD_C_DEBUG) {
    bad(FD(vd));
    return DDMC_JDWP_INVALID_CLASS;
  }
  *count = FD_POOL_COUNT;
  return ddmc_buf_put_bytes(out, FD_POOL, FD_POOL_LEN) ? DDMC_JDWP_OUT_OF_MEMORY : 0;
}

static int source_debug_extension(void *vd, ddmc_class c, ddmc_buf *out) {
  if (c != FD_C_DEBUG) {
    bad(FD(vd));
    return DDMC_JDWP_INVALID_CLASS;
  }
  return ddmc_buf_put_bytes(out, FD_SMAP, strlen(FD_SMAP)) ? DDMC_JDWP_OUT_OF_MEMORY : 0;
}

static int for_each_module(void *vd, int (*fn)(void *arg, ddmc_ref m), void *arg) {
  fakebridge *f = FD(vd);
  for (int i = 0; i < f->nmodules; i++)
    if (fn(arg, FD_O_MODULE + (ddmc_ref)i)) break;
  return 0;
}

static const ddmc_vm_bridge kOps = {
    .for_each_class = for_each_class,
    .class_info = class_info,
    .class_interface = class_interface,
    .field_info = field_info,
    .method_info = method_info,
    .line_table = line_table,
    .variable_table = variable_table,
    .object_class = object_class,
    .get_field = get_field,
    .set_field = set_field,
    .string_value = string_value,
    .create_string = create_string,
    .array_length = array_length,
    .array_get = array_get,
    .array_set = array_set,
    .thread_info = thread_info,
    .for_each_group = for_each_group,
    .main_thread = main_thread,
    .suspend_thread = suspend_thread,
    .resume_thread = resume_thread,
    .thread_parking = thread_parking,
    .frame_count = frame_count,
    .frame_location = frame_location,
    .frame_this = frame_this,
    .get_local = get_local,
    .set_local = set_local,
    .set_breakpoint = set_breakpoint,
    .clear_breakpoint = clear_breakpoint,
    .set_stepping = set_stepping,
    .set_method_events = set_method_events,
    .set_field_watch = set_field_watch,
    .invoke = invoke,
    .exit = vm_exit,
    .new_array = new_array,
    .interrupt_thread = interrupt_thread,
    .stop_thread = stop_thread,
    .monitor_info = monitor_info,
    .owned_monitors = owned_monitors,
    .contended_monitor = contended_monitor,
    .redefine_classes = redefine_classes,
    .pop_frames = pop_frames,
    .force_early_return = force_early_return,
};

/* ---- set-up */

static void set_frame(fakebridge *f, uint32_t t, int depth, uint32_t method, int64_t index, ddmc_ref this_obj,
                      ddmc_value l0, ddmc_value l1, ddmc_value l2) {
  fd_frame *fr = &f->frames[t][depth];
  fr->loc = (ddmc_location){FD_C_DEBUG, method, index};
  fr->this_obj = this_obj;
  fr->locals[0] = l0;
  fr->locals[1] = l1;
  fr->locals[2] = l2;
  fr->nlocals = 3;
}

void fakebridge_reset_debuggee(fakebridge *f) {
  f->nobj = 0;
  fd_object *o = add_object(f, FD_O_DEBUG, FD_C_DEBUG);
  o->fields[FD_F_X] = vi('I', 42);
  o->fields[FD_F_B] = vi('B', -3);
  o->fields[FD_F_C] = vi('C', 'A');
  o->fields[FD_F_S] = vi('S', -300);
  o->fields[FD_F_F] = (ddmc_value){.tag = 'F', .u.f = 1.5f};
  o->fields[FD_F_NEXT] = vl(FD_O_DEBUG2);
  o->fields[FD_F_ARR] = vl(FD_O_ARR);
  o = add_object(f, FD_O_DEBUG2, FD_C_DEBUG);
  o->fields[FD_F_X] = vi('I', 7);
  o->fields[FD_F_B] = vi('B', 0);
  o->fields[FD_F_C] = vi('C', 0);
  o->fields[FD_F_S] = vi('S', 0);
  o->fields[FD_F_F] = (ddmc_value){.tag = 'F', .u.f = 0.0f};
  o->fields[FD_F_NEXT] = vl(0);
  o->fields[FD_F_ARR] = vl(0);
  o = add_object(f, FD_O_STR, FD_C_STRING);
  strcpy(o->str, "h\xc3\xa9llo");
  o = add_object(f, FD_O_LABEL, FD_C_STRING);
  strcpy(o->str, "label");
  o = add_object(f, FD_O_ARR, FD_C_INT_ARRAY);
  o->arrlen = 5;
  for (int i = 0; i < 5; i++) o->arr[i] = 10 * (i + 1);
  add_object(f, FD_O_CLASS_DEBUG, FD_C_CLASS);
  add_object(f, FD_O_THREAD_MAIN, FD_C_THREAD)->fields[0] = vi('I', 5);
  add_object(f, FD_O_THREAD_WORKER, FD_C_THREAD)->fields[0] = vi('I', 3);
  add_object(f, FD_O_THREAD_JDWP, FD_C_THREAD)->fields[0] = vi('I', 10);
  add_object(f, FD_O_GROUP_SYSTEM, FD_C_GROUP);
  add_object(f, FD_O_GROUP_MAIN, FD_C_GROUP);

  f->statics[FD_F_COUNTER] = vi('I', 5);
  f->statics[FD_F_FLAG] = vi('Z', 1);
  f->statics[FD_F_BIG] = vj((int64_t)1 << 40);
  f->statics[FD_F_RATIO] = (ddmc_value){.tag = 'D', .u.d = 0.25};
  f->statics[FD_F_LABEL] = vl(FD_O_LABEL);

  memset(f->frames, 0, sizeof(f->frames));
  memset(f->nframes, 0, sizeof(f->nframes));
  /* main: compute(7) called from main, line 21 and 13 */
  f->nframes[FD_T_MAIN] = 2;
  set_frame(f, FD_T_MAIN, 0, FD_M_COMPUTE, 5, FD_O_DEBUG, vl(FD_O_DEBUG), vi('I', 7), vj(123456789012));
  set_frame(f, FD_T_MAIN, 1, FD_M_MAIN, 12, 0, vl(0), vi('I', 3), vl(FD_O_STR));
  /* Worker: compute(1) from compute(2) from main */
  f->nframes[FD_T_WORKER] = 3;
  set_frame(f, FD_T_WORKER, 0, FD_M_COMPUTE, 8, FD_O_DEBUG2, vl(FD_O_DEBUG2), vi('I', 1), vj(1));
  set_frame(f, FD_T_WORKER, 1, FD_M_COMPUTE, 5, FD_O_DEBUG2, vl(FD_O_DEBUG2), vi('I', 2), vj(2));
  set_frame(f, FD_T_WORKER, 2, FD_M_MAIN, 16, 0, vl(0), vi('I', 9), vl(FD_O_LABEL));

  atomic_store(&f->absent_info, 0);
  atomic_store(&f->worker_dead, 0);
  atomic_store(&f->fail_suspend, 0);
  atomic_store(&f->fail_get_field, 0);
  atomic_store(&f->n_unstopped_reads, 0);
  atomic_store(&f->n_collect, 0);
  atomic_store(&f->n_stopped, 0);
  atomic_store(&f->n_class_info, 0);
  atomic_store(&f->n_method_info, 0);
  atomic_store(&f->n_line_table, 0);
  atomic_store(&f->n_suspend, 0);
  atomic_store(&f->n_resume, 0);
  atomic_store(&f->n_set_bp, 0);
  atomic_store(&f->n_clear_bp, 0);
  atomic_store(&f->n_set_step, 0);
  atomic_store(&f->step_on_running, 0);
  atomic_store(&f->n_stop, 0);
  atomic_store(&f->n_method_events, 0);
  atomic_store(&f->n_exit, 0);
  atomic_store(&f->n_park, 0);
  atomic_store(&f->n_unpark, 0);
  atomic_store(&f->bad_calls, 0);
  for (int t = 0; t <= FD_NTHREADS; t++) {
    atomic_store(&f->vm_suspended[t], 0);
    atomic_store(&f->stepping[t], 0);
    atomic_store(&f->parked[t], 0);
  }
  atomic_store(&f->method_events, 0);
  atomic_store(&f->n_monitor_events, 0);
  atomic_store(&f->monitor_events, 0);
  atomic_store(&f->n_field_watch, 0);
  atomic_store(&f->last_watch_field, 0);
  atomic_store(&f->last_watch_mask, 0);
  atomic_store(&f->watch_masks, 0);
  atomic_store(&f->n_invoke, 0);
  atomic_store(&f->last_invoke_thread, 0);
  atomic_store(&f->last_invoke_options, 0);
  atomic_store(&f->n_interrupt, 0);
  atomic_store(&f->last_interrupt_thread, 0);
  atomic_store(&f->last_stop_thread, 0);
  atomic_store(&f->last_stop_exc, 0);
  f->nbps = 0;
}

int fakebridge_new(fakebridge *f, unsigned flags) { return fakebridge_new_vm(f, flags, NULL, NULL, NULL); }

int fakebridge_new_mem(fakebridge *f, unsigned flags, const ddmc_allocator *mem) {
  return fakebridge_new_vm(f, flags, NULL, NULL, mem);
}

static int write_hprof(void *vd, const char *path, char *msg, size_t msglen) {
  fakebridge *f = FD(vd);
  atomic_fetch_add(&f->n_write_hprof, 1);
  if (f->write_hprof == NULL) {
    snprintf(msg, msglen, "the fake has no dumper set");
    return -1;
  }
  return f->write_hprof(f->write_hprof_arg, path, msg, msglen);
}

static void add_ops(fakebridge *f, unsigned flags) {
  f->bridge = kOps;
  if (flags & FAKEBRIDGE_NO_EXIT) f->bridge.exit = NULL;
  if (flags & FAKEBRIDGE_THREAD_OBJECTS) f->bridge.for_each_debuggee_thread = for_each_debuggee_thread;
  if (flags & FAKEBRIDGE_MONITOR_EVENTS) f->bridge.set_monitor_events = set_monitor_events;
  if (flags & FAKEBRIDGE_REFLECTION) {
    f->bridge.bytecodes = bytecodes;
    f->bridge.constant_pool = constant_pool;
    f->bridge.source_debug_extension = source_debug_extension;
    f->bridge.for_each_module = for_each_module;
  }
  if (flags & FAKEBRIDGE_HEAP) {
    f->bridge.with_world_stopped = with_world_stopped;
    f->bridge.for_each_object = for_each_object;
    f->bridge.for_each_root = for_each_root;
    f->bridge.collect = collect;
    f->bridge.object_size = object_size;
    f->bridge.object_hash = object_hash;
  }
  if (flags & FAKEBRIDGE_BULK_SUSPEND) {
    f->bridge.suspend_threads = suspend_threads;
    f->bridge.resume_threads = resume_threads;
  }
  if (flags & FAKEBRIDGE_WEAK_NAMES) {
    f->bridge.hold_ref = hold_ref;
    f->bridge.release_ref = release_ref;
  }
  if (flags & FAKEBRIDGE_WRITE_HPROF) f->bridge.write_hprof = write_hprof;
  if (f->prog != NULL) add_program_ops(f, flags);
  if (flags & FAKEBRIDGE_NO_ROOTS) f->bridge.for_each_root = NULL;
}

static int new_fake(fakebridge *f, unsigned flags, const fakevm_config *vm_cfg, const ddmc_options *vm_opts,
                    const ddmc_allocator *mem, const fd_program *prog) {
  const fakevm_config own = {.threads = kThreads,
                             .nthreads = flags & FAKEBRIDGE_NO_JDWP_THREAD ? FD_NTHREADS - 1 : FD_NTHREADS};
  fakevm_init(&f->fv, vm_cfg ? vm_cfg : &own); /* zeroes f->fv only */
  memset((char *)f + sizeof(f->fv), 0, sizeof(*f) - sizeof(f->fv));
  f->magic = FAKEBRIDGE_MAGIC;
  f->prog = prog;
  pthread_mutex_init(&f->bp_lock, NULL);
  fakebridge_reset_debuggee(f);
  add_ops(f, flags);
  f->synth_on = (flags & FAKEBRIDGE_SYNTH_CLASSES) != 0;
  f->synth = (fd_synth){-1, -1, -1, -1, -1, -1, NULL};
  ddmc_options o;
  ddmc_options_init(&o);
  o.transport = DDMC_TRANSPORT_SOCKET;
  o.suspend = (flags & FAKEBRIDGE_SUSPEND_Y) != 0;
  o.sendq_bytes = 1 << 20;
  int rc = fakevm_new(&f->fv, vm_opts ? vm_opts : &o, mem);
  if (rc != 0) return rc;
  if ((rc = ddmc_vm_set_bridge(f->fv.vm, &f->bridge, ddmc_vm_data(f->fv.vm))) != 0) return rc;
  if (flags & FAKEBRIDGE_NO_DEBUGGER) return 0;
  if ((rc = ddmc_dbg_enable(f->fv.vm)) != 0) return rc;
  f->d = ddmc__dbg_of_vm(f->fv.vm);
  if (flags & FAKEBRIDGE_NO_SESSION) return 0;
  ddmc__jdwp_session *s = calloc(1, sizeof(*s));
  if (s == NULL) return DDMC_ENOMEM;
  ddmc__jdwp_session_init(s, f->fv.vm, -1);
  f->sess = s;
  f->echo_left = DDMC__HANDSHAKE_LEN;
  if ((rc = ddmc__jdwp_session_input(s, (const uint8_t *)DDMC__HANDSHAKE, DDMC__HANDSHAKE_LEN)) != 0) return rc;
  f->session = s->number;
  return 0;
}

int fakebridge_new_vm(fakebridge *f, unsigned flags, const fakevm_config *vm_cfg, const ddmc_options *vm_opts,
                      const ddmc_allocator *mem) {
  return new_fake(f, flags, vm_cfg, vm_opts, mem, NULL);
}

int fakebridge_new_program(fakebridge *f, unsigned flags, const fd_program *p, const fakevm_config *cfg,
                           const ddmc_options *o, const ddmc_allocator *mem) {
  return new_fake(f, flags, cfg, o, mem, p);
}

void fakebridge_reconnect(fakebridge *f) { ddmc__dbg_set_connected(f->d, f->session); }

int fakebridge_events(fakebridge *f, fakebridge_event_fn fn, void *arg) {
  ddmc__jdwp_session *s = f->sess;
  if (s == NULL) return 0;
  int n = 0;
  for (;;) {
    ddmc__jdwp_session_drain_queue(s, 0);
    ddmc_reader r;
    ddmc_reader_init(&r, s->out.p + s->out_off, s->out.len - s->out_off);
    size_t skip = f->echo_left < ddmc_reader_left(&r) ? f->echo_left : ddmc_reader_left(&r);
    ddmc_read_bytes(&r, skip);
    f->echo_left -= skip;
    while (ddmc_reader_left(&r) >= 11) {
      uint32_t len = ddmc_read_u32(&r);
      ddmc_read_u32(&r); /* id */
      uint8_t flags = ddmc_read_u8(&r), set = ddmc_read_u8(&r), cmd = ddmc_read_u8(&r);
      if (len < 11 || len - 11 > ddmc_reader_left(&r)) break;
      const uint8_t *p = ddmc_read_bytes(&r, len - 11);
      if (flags == 0 && set == 64 && cmd == 100) {
        if (fn) fn(arg, p, len - 11);
        n++;
      }
    }
    ddmc__buf_reset(&s->out);
    s->out_off = 0;
    if (ddmc__send_ring_peek(&f->fv.vm->ring) == NULL) break;
  }
  return n;
}

void fakebridge_free(fakebridge *f) {
  ddmc__jdwp_session *s = f->sess;
  if (s != NULL) {
    ddmc__jdwp_session_end(s, 0);
    free(s);
    f->sess = NULL;
  }
  fakevm_stop(&f->fv);
  pthread_mutex_destroy(&f->bp_lock);
  free(f->extra);
  f->extra = NULL;
  f->nextra = f->extra_cap = 0;
}
