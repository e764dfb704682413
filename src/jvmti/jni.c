/* SPDX-License-Identifier: Apache-2.0 */
/* The JNI an agent needs, over the same handles and bridge as JVM TI: GetVersion, FindClass,
 * GetSuperclass, IsAssignableFrom, the exception checks, local frames, global / local / weak
 * references, IsSameObject, GetObjectClass, IsInstanceOf, Get(Static)MethodID,
 * Get(Static)FieldID, NewStringUTF, GetStringUTFLength / Chars / Release, GetArrayLength,
 * GetJavaVM, ExceptionCheck, GetObjectRefType. Every other slot is a stub that reports the
 * call once on the VM's log, leaves a pending error (ExceptionCheck says so) and returns 0 /
 * NULL: an agent that checks sees a clean failure, never a crash.
 *
 * JNIEnv is per OS thread (thread-local), as the specification requires. Java exceptions are
 * not thrown into the VM: a failed lookup leaves a pending error on the JNIEnv (no exception
 * object; ExceptionOccurred answers NULL), which ExceptionClear clears. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jvmti/funcs.h"

static _Thread_local ddmc__jv_jnienv tl_env;
static _Thread_local int tl_pending;
static _Thread_local char tl_pending_msg[160];

ddmc__jv_jnienv *ddmc__jv_jni_env(ddmc__jvmti *jv) {
  if (tl_env.jv != jv) {
    tl_env.functions = ddmc__jv_jni_functions();
    tl_env.jv = jv;
    tl_env.pending = NULL;
  }
  return &tl_env;
}

static void set_pending(const char *fmt, const char *arg) {
  tl_pending = 1;
  snprintf(tl_pending_msg, sizeof(tl_pending_msg), fmt, arg ? arg : "");
}

#define JV(env) (((ddmc__jv_jnienv *)(env))->jv)

jint ddmc__jv_jni_GetVersion(ddmc__jv_jnienv *env) { return DDMC_JNI_VERSION_NOW; }

/* "java/lang/Thread" or "[I" -> the class with that JNI signature, or 0. */
typedef struct find_class {
  ddmc__jvmti *jv;
  const char *sig;
  ddmc_class found;
} find_class;

static int find_class_visit(void *arg, ddmc_class c) {
  find_class *f = arg;
  ddmc_class_info info;
  memset(&info, 0, sizeof(info));
  if (f->jv->bridge->class_info(f->jv->bridge_data, c, &info) == 0 && info.signature && !strcmp(info.signature, f->sig)) {
    f->found = c;
    return 1;
  }
  return 0;
}

static ddmc_class class_named(ddmc__jvmti *jv, const char *name) {
  if (name == NULL || jv->bridge == NULL || jv->bridge->for_each_class == NULL || jv->bridge->class_info == NULL) return 0;
  size_t n = strlen(name);
  if (n == 0 || n > 1000) return 0;
  char sig[1004];
  if (name[0] == '[')
    memcpy(sig, name, n + 1);
  else {
    sig[0] = 'L';
    memcpy(sig + 1, name, n);
    sig[n + 1] = ';';
    sig[n + 2] = 0;
  }
  find_class f = {jv, sig, 0};
  jv->bridge->for_each_class(jv->bridge_data, find_class_visit, &f);
  return f.found;
}

jclass ddmc__jv_jni_FindClass(ddmc__jv_jnienv *env, const char *name) {
  ddmc_class c = class_named(JV(env), name);
  if (c == 0) {
    set_pending("java.lang.NoClassDefFoundError: %s", name);
    return NULL;
  }
  return ddmc__jv_class_local(JV(env), c);
}

static ddmc_class super_of(ddmc__jvmti *jv, ddmc_class c) {
  ddmc_class_info info;
  memset(&info, 0, sizeof(info));
  if (jv->bridge == NULL || jv->bridge->class_info == NULL || jv->bridge->class_info(jv->bridge_data, c, &info) != 0) return 0;
  return info.superclass;
}

jclass ddmc__jv_jni_GetSuperclass(ddmc__jv_jnienv *env, jclass sub) {
  ddmc_class c;
  if (ddmc__jv_class_of(JV(env), sub, &c) != 0) return NULL;
  ddmc_class s = super_of(JV(env), c);
  return s ? ddmc__jv_class_local(JV(env), s) : NULL;
}

static int is_subclass(ddmc__jvmti *jv, ddmc_class c, ddmc_class of) {
  for (int depth = 0; c != 0 && depth < DDMC__JV_MAX_SUPER_DEPTH; depth++, c = super_of(jv, c))
    if (c == of) return 1;
  return 0;
}

jboolean ddmc__jv_jni_IsAssignableFrom(ddmc__jv_jnienv *env, jclass sub, jclass sup) {
  ddmc_class a, b;
  if (ddmc__jv_class_of(JV(env), sub, &a) != 0 || ddmc__jv_class_of(JV(env), sup, &b) != 0) return 0;
  return (jboolean)is_subclass(JV(env), a, b);
}

jint ddmc__jv_jni_Throw(ddmc__jv_jnienv *env, jthrowable obj) {
  set_pending("%s", "exception thrown by native code (not delivered: JNI Throw is not supported)");
  return DDMC_JNI_ERR;
}

jint ddmc__jv_jni_ThrowNew(ddmc__jv_jnienv *env, jclass clazz, const char *msg) {
  set_pending("%s", msg ? msg : "exception thrown by native code");
  return DDMC_JNI_ERR;
}

jthrowable ddmc__jv_jni_ExceptionOccurred(ddmc__jv_jnienv *env) { return NULL; }

void ddmc__jv_jni_ExceptionDescribe(ddmc__jv_jnienv *env) {
  if (tl_pending) fprintf(stderr, "JNI: %s\n", tl_pending_msg);
  tl_pending = 0;
}

void ddmc__jv_jni_ExceptionClear(ddmc__jv_jnienv *env) { tl_pending = 0; }

jboolean ddmc__jv_jni_ExceptionCheck(ddmc__jv_jnienv *env) { return (jboolean)(tl_pending != 0); }

void ddmc__jv_jni_FatalError(ddmc__jv_jnienv *env, const char *msg) {
  fprintf(stderr, "FATAL ERROR in native method: %s\n", msg ? msg : "");
  fflush(NULL);
  abort();
}

/* Local frames: PushLocalFrame remembers the thread's local count; PopLocalFrame frees what came
 * after (keeping result as a new local in the outer frame). At most 64 nested frames. */
static _Thread_local uint32_t tl_frames[64];
static _Thread_local int tl_nframes;

jint ddmc__jv_jni_PushLocalFrame(ddmc__jv_jnienv *env, jint capacity) {
  if (capacity < 0 || tl_nframes == 64) return DDMC_JNI_ERR;
  tl_frames[tl_nframes++] = ddmc__jv_ref_frame_push();
  return DDMC_JNI_OK;
}

jobject ddmc__jv_jni_PopLocalFrame(ddmc__jv_jnienv *env, jobject result) {
  ddmc__jv_cell c;
  int keep = result != NULL && ddmc__jv_ref_get(JV(env), result, &c) == 0;
  if (tl_nframes > 0) ddmc__jv_ref_frame_pop(JV(env), tl_frames[--tl_nframes]);
  return keep ? ddmc__jv_ref_local(JV(env), c.ref, c.cls, c.thread) : NULL;
}

static jobject copy_ref(ddmc__jv_jnienv *env, jobject obj, int scope) {
  ddmc__jv_cell c;
  if (obj == NULL || ddmc__jv_ref_get(JV(env), obj, &c) != 0) return NULL;
  return ddmc__jv_ref_new(JV(env), scope, c.ref, c.cls, c.thread);
}

jobject ddmc__jv_jni_NewGlobalRef(ddmc__jv_jnienv *env, jobject obj) { return copy_ref(env, obj, DDMC__CELL_GLOBAL); }
void ddmc__jv_jni_DeleteGlobalRef(ddmc__jv_jnienv *env, jobject gref) {
  ddmc__jv_ref_delete(JV(env), gref, DDMC__CELL_GLOBAL);
}
void ddmc__jv_jni_DeleteLocalRef(ddmc__jv_jnienv *env, jobject obj) {
  ddmc__jv_ref_delete(JV(env), obj, DDMC__CELL_LOCAL);
}
jobject ddmc__jv_jni_NewLocalRef(ddmc__jv_jnienv *env, jobject ref) { return copy_ref(env, ref, DDMC__CELL_LOCAL); }
jweak ddmc__jv_jni_NewWeakGlobalRef(ddmc__jv_jnienv *env, jobject obj) { return copy_ref(env, obj, DDMC__CELL_WEAK); }
void ddmc__jv_jni_DeleteWeakGlobalRef(ddmc__jv_jnienv *env, jweak ref) {
  ddmc__jv_ref_delete(JV(env), ref, DDMC__CELL_WEAK);
}
jint ddmc__jv_jni_EnsureLocalCapacity(ddmc__jv_jnienv *env, jint capacity) { return capacity >= 0 ? 0 : DDMC_JNI_ERR; }

jboolean ddmc__jv_jni_IsSameObject(ddmc__jv_jnienv *env, jobject a, jobject b) {
  ddmc__jv_cell ca, cb;
  int va = a != NULL && ddmc__jv_ref_get(JV(env), a, &ca) == 0;
  int vb = b != NULL && ddmc__jv_ref_get(JV(env), b, &cb) == 0;
  if (!va || !vb) return (jboolean)(!va && !vb);
  if (ca.cls != 0 || cb.cls != 0) return (jboolean)(ca.cls == cb.cls);
  return (jboolean)(ca.ref == cb.ref);
}

jint ddmc__jv_jni_GetObjectRefType(ddmc__jv_jnienv *env, jobject obj) {
  switch (obj ? ddmc__jv_ref_scope(JV(env), obj) : DDMC__CELL_FREE) {
    case DDMC__CELL_LOCAL: return 1;  /* JNILocalRefType */
    case DDMC__CELL_GLOBAL: return 2; /* JNIGlobalRefType */
    case DDMC__CELL_WEAK: return 3;   /* JNIWeakGlobalRefType */
    default: return 0;                /* JNIInvalidRefType */
  }
}

static ddmc_class object_class(ddmc__jvmti *jv, jobject obj) {
  ddmc__jv_cell c;
  ddmc_class k = 0;
  if (obj == NULL || ddmc__jv_ref_get(jv, obj, &c) != 0) return 0;
  if (c.cls != 0) return class_named(jv, "java/lang/Class");
  if (jv->bridge == NULL || jv->bridge->object_class == NULL || jv->bridge->object_class(jv->bridge_data, c.ref, &k) != 0) return 0;
  return k;
}

jclass ddmc__jv_jni_GetObjectClass(ddmc__jv_jnienv *env, jobject obj) {
  ddmc_class k = object_class(JV(env), obj);
  return k ? ddmc__jv_class_local(JV(env), k) : NULL;
}

jboolean ddmc__jv_jni_IsInstanceOf(ddmc__jv_jnienv *env, jobject obj, jclass clazz) {
  ddmc_class of;
  if (obj == NULL) return 1; /* null is an instance of every class (JNI) */
  if (ddmc__jv_class_of(JV(env), clazz, &of) != 0) return 0;
  return (jboolean)is_subclass(JV(env), object_class(JV(env), obj), of);
}

/* A method or field by name and signature in clazz or its superclasses. */
static struct ddmc__jmember *find_member(ddmc__jv_jnienv *env, jclass clazz, const char *name, const char *sig,
                                         int is_field, int is_static) {
  ddmc__jvmti *jv = JV(env);
  ddmc_class c;
  if (name == NULL || sig == NULL || ddmc__jv_class_of(jv, clazz, &c) != 0 || jv->bridge == NULL ||
      jv->bridge->class_info == NULL || (is_field ? !jv->bridge->field_info : !jv->bridge->method_info)) {
    set_pending("java.lang.NoSuchMethodError: %s", name);
    return NULL;
  }
  for (int depth = 0; c != 0 && depth < DDMC__JV_MAX_SUPER_DEPTH; depth++, c = super_of(jv, c)) {
    ddmc_class_info info;
    memset(&info, 0, sizeof(info));
    if (jv->bridge->class_info(jv->bridge_data, c, &info) != 0) break;
    uint32_t n = is_field ? info.nfields : info.nmethods;
    for (uint32_t i = 0; i < n; i++) {
      const char *nm = NULL, *sg = NULL;
      uint32_t mods = 0;
      if (is_field) {
        ddmc_field_info f;
        if (jv->bridge->field_info(jv->bridge_data, c, i, &f) != 0) continue;
        nm = f.name, sg = f.signature, mods = f.modifiers;
      } else {
        ddmc_method_info m;
        if (jv->bridge->method_info(jv->bridge_data, c, i, &m) != 0) continue;
        nm = m.name, sg = m.signature, mods = m.modifiers;
      }
      if (nm && sg && !strcmp(nm, name) && !strcmp(sg, sig) && ((mods & DDMC_ACC_STATIC) != 0) == is_static)
        return is_field ? ddmc__jv_field_id(jv, c, i) : ddmc__jv_method_id(jv, c, i);
    }
    if (is_static && !is_field) break; /* a static method is looked up in the class itself */
  }
  set_pending(is_field ? "java.lang.NoSuchFieldError: %s" : "java.lang.NoSuchMethodError: %s", name);
  return NULL;
}

jmethodID ddmc__jv_jni_GetMethodID(ddmc__jv_jnienv *env, jclass clazz, const char *name, const char *sig) {
  return find_member(env, clazz, name, sig, 0, 0);
}
jmethodID ddmc__jv_jni_GetStaticMethodID(ddmc__jv_jnienv *env, jclass clazz, const char *name, const char *sig) {
  return find_member(env, clazz, name, sig, 0, 1);
}
jfieldID ddmc__jv_jni_GetFieldID(ddmc__jv_jnienv *env, jclass clazz, const char *name, const char *sig) {
  return find_member(env, clazz, name, sig, 1, 0);
}
jfieldID ddmc__jv_jni_GetStaticFieldID(ddmc__jv_jnienv *env, jclass clazz, const char *name, const char *sig) {
  return find_member(env, clazz, name, sig, 1, 1);
}

jstring ddmc__jv_jni_NewStringUTF(ddmc__jv_jnienv *env, const char *utf) {
  ddmc__jvmti *jv = JV(env);
  ddmc_ref s = 0;
  if (utf == NULL) return NULL;
  size_t n = strlen(utf);
  if (jv->bridge == NULL || jv->bridge->create_string == NULL || n > ((size_t)1 << 28) ||
      jv->bridge->create_string(jv->bridge_data, utf, n, &s) != 0 || s == 0) {
    set_pending("java.lang.OutOfMemoryError: %s", "NewStringUTF");
    return NULL;
  }
  return ddmc__jv_ref_local(jv, s, 0, 0);
}

/* ---- NewObject (for RunAgentThread's java.lang.Thread, as HotSpot agents make it): the
 * constructor runs through the bridge's invoke (DDMC_INVOKE_CONSTRUCT) on the calling
 * thread, which must be a VM thread that runs bytecode (a callback's thread); an agent thread
 * gets a pending error and NULL. */

#define DDMC__MAX_ARGS 64

/* The constructor's parameters' first letters ('L' for any reference), or -1. */
static int param_letters(const char *sig, char *out) {
  int n = 0;
  if (sig == NULL || *sig++ != '(') return -1;
  while (*sig && *sig != ')') {
    if (n == DDMC__MAX_ARGS) return -1;
    out[n++] = *sig == '[' ? 'L' : *sig;
    while (*sig == '[') sig++;
    if (*sig == 'L') {
      sig = strchr(sig, ';'); /* a class name ends at its ';' */
      if (sig == NULL) return -1;
    } else if (*sig == '\0' || strchr("ZBCSIJFD", *sig) == NULL) {
      return -1;
    }
    sig++;
  }
  return *sig == ')' ? n : -1;
}

/* Checks clazz and m, and returns the constructor's class, index and parameter letters. */
static int ctor_of(ddmc__jv_jnienv *env, jclass clazz, jmethodID m, ddmc_class *c, uint32_t *index, char *letters) {
  ddmc__jvmti *jv = JV(env);
  ddmc_class k;
  ddmc_method_info mi;
  memset(&mi, 0, sizeof(mi));
  if (ddmc__jv_class_of(jv, clazz, &k) != 0 || ddmc__jv_method_of(jv, m, c, index) != 0 || jv->bridge == NULL ||
      jv->bridge->method_info == NULL || jv->bridge->method_info(jv->bridge_data, *c, *index, &mi) != 0 || mi.name == NULL ||
      strcmp(mi.name, "<init>") != 0) {
    set_pending("java.lang.IllegalArgumentException: %s", "NewObject: not a constructor");
    return -1;
  }
  int n = param_letters(mi.signature, letters);
  if (n < 0) set_pending("java.lang.IllegalArgumentException: %s", "NewObject: bad signature");
  return n;
}

static jobject construct(ddmc__jv_jnienv *env, ddmc_class c, uint32_t index, const ddmc_value *args, int n) {
  ddmc__jvmti *jv = JV(env);
  uint32_t self = ddmc__jv_self();
  if (jv->bridge->invoke == NULL || self == 0) {
    set_pending("java.lang.UnsupportedOperationException: %s", "NewObject outside a VM thread");
    return NULL;
  }
  ddmc_value result = {'V', {0}};
  ddmc_ref exc = 0;
  int rc = jv->bridge->invoke(jv->bridge_data, self, c, index, 0, args, n, DDMC_INVOKE_CONSTRUCT, &result, &exc);
  if (rc != 0 || exc != 0 || result.u.l == 0) {
    set_pending("java.lang.InstantiationException: %s", exc ? "the constructor threw" : "NewObject failed");
    return NULL;
  }
  return ddmc__jv_ref_local(jv, result.u.l, 0, 0);
}

static int ref_arg(ddmc__jv_jnienv *env, jobject h, ddmc_value *v) {
  ddmc__jv_cell cell;
  v->tag = 'L';
  v->u.l = 0;
  if (h == NULL) return 0;
  if (ddmc__jv_ref_get(JV(env), h, &cell) != 0) return -1;
  v->u.l = cell.ref;
  return 0;
}

/* The argument at letter t from a C variadic call: what is below int comes promoted to int, float
 * to double. */
static jvalue va_value(char t, va_list *ap) {
  jvalue v;
  memset(&v, 0, sizeof(v));
  switch (t) {
    case 'J': v.j = va_arg(*ap, jlong); break;
    case 'F': v.f = (jfloat)va_arg(*ap, double); break;
    case 'D': v.d = va_arg(*ap, double); break;
    case 'L': v.l = va_arg(*ap, jobject); break;
    default: v.i = va_arg(*ap, jint); break; /* Z B C S I */
  }
  return v;
}

/* NewObject's three forms: the arguments from a (NewObjectA) or from ap (both NULL: NewObjectA
 * without arguments, fine for a constructor that takes none). */
static jobject new_object(ddmc__jv_jnienv *env, jclass clazz, jmethodID m, const jvalue *a, va_list *ap) {
  ddmc_class c;
  uint32_t index;
  char letters[DDMC__MAX_ARGS];
  ddmc_value args[DDMC__MAX_ARGS];
  int n = ctor_of(env, clazz, m, &c, &index, letters);
  if (n < 0) return NULL;
  if (n > 0 && a == NULL && ap == NULL) {
    set_pending("java.lang.NullPointerException: %s", "NewObjectA: no arguments");
    return NULL;
  }
  for (int i = 0; i < n; i++) {
    jvalue v = a != NULL ? a[i] : va_value(letters[i], ap);
    args[i].tag = letters[i];
    switch (letters[i]) {
      case 'Z': args[i].u.i = v.z; break;
      case 'B': args[i].u.i = v.b; break;
      case 'C': args[i].u.i = v.c; break;
      case 'S': args[i].u.i = v.s; break;
      case 'J': args[i].u.j = v.j; break;
      case 'F': args[i].u.f = v.f; break;
      case 'D': args[i].u.d = v.d; break;
      case 'L':
        if (ref_arg(env, v.l, &args[i]) != 0) {
          set_pending("java.lang.IllegalArgumentException: %s", "NewObject: a stale reference");
          return NULL;
        }
        break;
      default: args[i].u.i = v.i; break;
    }
  }
  return construct(env, c, index, args, n);
}

jobject ddmc__jv_jni_NewObjectV(ddmc__jv_jnienv *env, jclass clazz, jmethodID m, va_list ap) {
  va_list copy;
  va_copy(copy, ap);
  jobject o = new_object(env, clazz, m, NULL, &copy);
  va_end(copy);
  return o;
}

jobject ddmc__jv_jni_NewObject(ddmc__jv_jnienv *env, jclass clazz, jmethodID m, ...) {
  va_list ap;
  va_start(ap, m);
  jobject o = new_object(env, clazz, m, NULL, &ap);
  va_end(ap);
  return o;
}

jobject ddmc__jv_jni_NewObjectA(ddmc__jv_jnienv *env, jclass clazz, jmethodID m, const jvalue *a) {
  return new_object(env, clazz, m, a, NULL);
}

/* AllocObject (no constructor run) is not something the bridge can do. */
jobject ddmc__jv_jni_AllocObject(ddmc__jv_jnienv *env, jclass clazz) {
  set_pending("java.lang.InstantiationException: %s", "AllocObject is not supported");
  return NULL;
}

/* The string's UTF-8 in a malloc'd copy (its length in *len), or NULL. */
static char *string_utf8(ddmc__jvmti *jv, jstring str, size_t *len) {
  ddmc__jv_cell c;
  if (str == NULL || ddmc__jv_ref_get(jv, str, &c) != 0 || c.ref == 0 || jv->bridge == NULL || !jv->bridge->string_value)
    return NULL;
  ddmc_buf b;
  ddmc__buf_init(&b, jv->mem, (size_t)1 << 28);
  char *out = NULL;
  if (jv->bridge->string_value(jv->bridge_data, c.ref, &b) == 0 && b.err == 0 && (out = malloc(b.len + 1)) != NULL) {
    if (b.len) memcpy(out, b.p, b.len);
    out[b.len] = 0;
    *len = b.len;
  }
  ddmc__buf_free(&b);
  return out;
}

jsize ddmc__jv_jni_GetStringUTFLength(ddmc__jv_jnienv *env, jstring str) {
  size_t n = 0;
  char *s = string_utf8(JV(env), str, &n);
  free(s);
  return s ? (jsize)n : 0;
}

const char *ddmc__jv_jni_GetStringUTFChars(ddmc__jv_jnienv *env, jstring str, jboolean *isCopy) {
  size_t n;
  char *s = string_utf8(JV(env), str, &n);
  if (s == NULL) set_pending("java.lang.OutOfMemoryError: %s", "GetStringUTFChars");
  if (isCopy) *isCopy = 1;
  return s;
}

void ddmc__jv_jni_ReleaseStringUTFChars(ddmc__jv_jnienv *env, jstring str, const char *chars) { free((void *)chars); }

jsize ddmc__jv_jni_GetArrayLength(ddmc__jv_jnienv *env, jobject array) {
  ddmc__jvmti *jv = JV(env);
  ddmc__jv_cell c;
  int32_t n = 0;
  if (array == NULL || ddmc__jv_ref_get(jv, array, &c) != 0 || jv->bridge == NULL || !jv->bridge->array_length ||
      jv->bridge->array_length(jv->bridge_data, c.ref, &n) != 0)
    return 0;
  return n;
}

jint ddmc__jv_jni_GetJavaVM(ddmc__jv_jnienv *env, void **vm) {
  if (vm == NULL) return DDMC_JNI_ERR;
  *vm = &JV(env)->javavm;
  return DDMC_JNI_OK;
}

/* ---- the stubs: one per slot, so the log names the function an agent called. */

/* Slots remembered as reported: the JNI table's 235, rounded up to whole words of bits. */
#define DDMC__JNI_REPORT_SLOTS 256
static _Atomic(uint64_t) g_reported[DDMC__JNI_REPORT_SLOTS / 64]; /* one report per slot */

static jlong jni_unavailable(ddmc__jv_jnienv *env, int slot) {
  if (slot >= 0 && slot < DDMC__JNI_REPORT_SLOTS) {
    uint64_t bit = (uint64_t)1 << (slot % 64);
    if (!(atomic_fetch_or(&g_reported[slot / 64], bit) & bit) && env != NULL && env->jv != NULL)
      ddmc__jv_log(env->jv, DDMC_LOG_WARN, "JNI function %d is not available in this VM", slot);
  }
  set_pending("%s", "JNI function not available in this VM");
  return 0;
}

#define STUB(n) \
  static jlong jni_na_##n(ddmc__jv_jnienv *env) { return jni_unavailable(env, n); }
#define STUB10(t) \
  STUB(t##0) STUB(t##1) STUB(t##2) STUB(t##3) STUB(t##4) STUB(t##5) STUB(t##6) STUB(t##7) STUB(t##8) STUB(t##9)
STUB(0)
STUB(1)
STUB(2)
STUB(3)
STUB(4)
STUB(5) STUB(6) STUB(7) STUB(8) STUB(9) STUB10(1) STUB10(2) STUB10(3) STUB10(4) STUB10(5) STUB10(6) STUB10(7) STUB10(8)
    STUB10(9) STUB10(10) STUB10(11) STUB10(12) STUB10(13) STUB10(14) STUB10(15) STUB10(16) STUB10(17) STUB10(18)
        STUB10(19) STUB10(20) STUB10(21) STUB10(22) STUB(230) STUB(231) STUB(232) STUB(233) STUB(234)

#define REF(n) (ddmc__jv_fnptr) jni_na_##n,
#define REF10(t) REF(t##0) REF(t##1) REF(t##2) REF(t##3) REF(t##4) REF(t##5) REF(t##6) REF(t##7) REF(t##8) REF(t##9)
            static const ddmc__jv_fnptr g_stubs[DDMC_JNI_SLOTS] = {
                REF(0) REF(1) REF(2) REF(3) REF(4) REF(5) REF(6) REF(7) REF(8) REF(9) REF10(1) REF10(2) REF10(3)
                    REF10(4) REF10(5) REF10(6) REF10(7) REF10(8) REF10(9) REF10(10) REF10(11) REF10(12) REF10(13)
                        REF10(14) REF10(15) REF10(16) REF10(17) REF10(18) REF10(19) REF10(20) REF10(21) REF10(22)
                            REF(230) REF(231) REF(232) REF(233) REF(234)};

#define F(name) [DDMC_JNI_##name] = (ddmc__jv_fnptr)ddmc__jv_jni_##name
static const ddmc__jv_fnptr g_impl[DDMC_JNI_SLOTS] = {F(GetVersion),
                                                      F(FindClass),
                                                      F(GetSuperclass),
                                                      F(IsAssignableFrom),
                                                      F(Throw),
                                                      F(ThrowNew),
                                                      F(ExceptionOccurred),
                                                      F(ExceptionDescribe),
                                                      F(ExceptionClear),
                                                      F(FatalError),
                                                      F(PushLocalFrame),
                                                      F(PopLocalFrame),
                                                      F(NewGlobalRef),
                                                      F(DeleteGlobalRef),
                                                      F(DeleteLocalRef),
                                                      F(IsSameObject),
                                                      F(NewLocalRef),
                                                      F(EnsureLocalCapacity),
                                                      F(GetObjectClass),
                                                      F(IsInstanceOf),
                                                      F(GetMethodID),
                                                      F(GetFieldID),
                                                      F(GetStaticMethodID),
                                                      F(GetStaticFieldID),
                                                      F(NewStringUTF),
                                                      F(GetStringUTFLength),
                                                      F(GetStringUTFChars),
                                                      F(ReleaseStringUTFChars),
                                                      F(GetArrayLength),
                                                      F(GetJavaVM),
                                                      F(NewWeakGlobalRef),
                                                      F(DeleteWeakGlobalRef),
                                                      F(ExceptionCheck),
                                                      F(GetObjectRefType),
                                                      F(AllocObject),
                                                      F(NewObject),
                                                      F(NewObjectV),
                                                      F(NewObjectA)};
#undef F

static ddmc__jv_fnptr g_table[DDMC_JNI_SLOTS];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void build(void) {
  for (int i = 0; i < DDMC_JNI_SLOTS; i++) g_table[i] = i >= 4 && g_impl[i] ? g_impl[i] : g_stubs[i];
  g_table[0] = g_table[1] = g_table[2] = g_table[3] = NULL; /* reserved */
}

const ddmc__jv_fnptr *ddmc__jv_jni_functions(void) {
  pthread_once(&g_once, build);
  return g_table;
}
