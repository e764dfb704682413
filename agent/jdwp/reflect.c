/* SPDX-License-Identifier: Apache-2.0 */
/* Reflection beyond members (members.c): a method's bytecodes, a class's constant pool, class
 * file version and SourceDebugExtension through JVM TI, and modules through JVM TI
 * (GetAllModules) and JNI (GetModule, Module.getName / getClassLoader by method IDs cached at
 * first use). The bridge calls these on the JDWP thread only, for a command: running
 * Module.getName there is safe (it is no thread inside an event callback, so the Java code cannot
 * post an event back into the agent).
 *
 * The capabilities (can_get_bytecodes, can_get_constant_pool, can_get_source_debug_extension) are
 * taken at OnLoad where HotSpot has them (agent.c): they cost nothing while unused. An op is
 * installed only when its capability was granted, so the library's capability answers follow. */
#include <string.h>

#include "ja.h"

static void ti_free(void *p) {
  if (p) (*ja.ti)->Deallocate(ja.ti, (unsigned char *)p);
}

/* The class's jclass (a kept entry's global reference), or NULL with *err. */
static jclass klass(ddmc_class c, int *err) {
  if (ja_class_of(c, err) == NULL) return NULL;
  jclass k = (jclass)ja_kept_obj(c);
  if (k == NULL) *err = DDMC_JDWP_INVALID_CLASS;
  return k;
}

static int put_ti_bytes(ddmc_buf *out, jvmtiError e, unsigned char *p, jint n) {
  if (e != JVMTI_ERROR_NONE) return ja_err(e);
  if (n > 0) ddmc_buf_put_bytes(out, p, (size_t)n);
  ti_free(p);
  return 0;
}

static int bytecodes(void *vd, ddmc_class c, uint32_t index, ddmc_buf *out) {
  int err = 0;
  ja_method *m = ja_method_of(c, index, &err);
  if (m == NULL) return err;
  jint n = 0;
  unsigned char *p = NULL;
  jvmtiError e = (*ja.ti)->GetBytecodes(ja.ti, m->id, &n, &p); /* before p and n are read */
  return put_ti_bytes(out, e, p, n);
}

static int constant_pool(void *vd, ddmc_class c, int32_t *count, ddmc_buf *out) {
  int err = 0;
  jclass k = klass(c, &err);
  if (k == NULL) return err;
  jint n = 0, len = 0;
  unsigned char *p = NULL;
  jvmtiError e = (*ja.ti)->GetConstantPool(ja.ti, k, &n, &len, &p);
  if (e == JVMTI_ERROR_NONE) *count = n;
  return put_ti_bytes(out, e, p, len);
}

static int class_file_version(void *vd, ddmc_class c, int32_t *major, int32_t *minor) {
  int err = 0;
  jclass k = klass(c, &err);
  if (k == NULL) return err;
  jint mi = 0, ma = 0;
  jvmtiError e = (*ja.ti)->GetClassVersionNumbers(ja.ti, k, &mi, &ma);
  if (e != JVMTI_ERROR_NONE) return ja_err(e);
  *major = ma;
  *minor = mi;
  return 0;
}

static int source_debug_extension(void *vd, ddmc_class c, ddmc_buf *out) {
  int err = 0;
  jclass k = klass(c, &err);
  if (k == NULL) return err;
  char *s = NULL;
  jvmtiError e = (*ja.ti)->GetSourceDebugExtension(ja.ti, k, &s);
  if (e != JVMTI_ERROR_NONE) return ja_err(e);
  ddmc_buf_put_bytes(out, s, strlen(s));
  ti_free(s);
  return 0;
}

/* ---- modules */

static jclass g_module;            /* java.lang.Module, a global reference */
static jmethodID g_name, g_loader; /* Module.getName(), Module.getClassLoader() */

/* Caches the class and method IDs on the first call (JDWP thread only, so no race). */
static int module_ids(JNIEnv *env) {
  if (g_module != NULL) return 0;
  jclass k = (*env)->FindClass(env, "java/lang/Module");
  if (k == NULL) {
    (*env)->ExceptionClear(env);
    return DDMC_JDWP_NOT_IMPLEMENTED; /* a JVM before 9 */
  }
  g_name = (*env)->GetMethodID(env, k, "getName", "()Ljava/lang/String;");
  g_loader = (*env)->GetMethodID(env, k, "getClassLoader", "()Ljava/lang/ClassLoader;");
  if (g_name == NULL || g_loader == NULL) {
    (*env)->ExceptionClear(env);
    return DDMC_JDWP_INTERNAL;
  }
  g_module = (jclass)(*env)->NewGlobalRef(env, k);
  return g_module ? 0 : DDMC_JDWP_OUT_OF_MEMORY;
}

static int for_each_module(void *vd, int (*fn)(void *arg, ddmc_ref m), void *arg) {
  JNIEnv *env = ja_enter();
  if (env == NULL) return DDMC_JDWP_VM_DEAD;
  jint n = 0;
  jobject *v = NULL;
  jvmtiError e = (*ja.ti)->GetAllModules(ja.ti, &n, &v);
  int rc = ja_err(e);
  for (jint i = 0; rc == 0 && i < n; i++) {
    ddmc_ref r = ja_ref(env, v[i]);
    if (r == 0)
      rc = DDMC_JDWP_OUT_OF_MEMORY;
    else if (fn(arg, r))
      break;
  }
  ti_free(v);
  ja_leave(env); /* the modules' local references go with the frame */
  return rc;
}

static int class_module(void *vd, ddmc_class c, ddmc_ref *out) {
  int err = 0;
  jclass k = klass(c, &err);
  if (k == NULL) return err;
  JNIEnv *env = ja_enter();
  if (env == NULL) return DDMC_JDWP_VM_DEAD;
  jobject m = (*env)->GetModule(env, k);
  int rc = m == NULL ? DDMC_JDWP_INTERNAL : 0;
  if (rc == 0 && (*out = ja_ref(env, m)) == 0) rc = DDMC_JDWP_OUT_OF_MEMORY;
  (*env)->ExceptionClear(env);
  ja_leave(env);
  return rc;
}

static int module_query(JNIEnv *env, jobject mod, ddmc_buf *name, ddmc_ref *loader) {
  if (name != NULL) {
    jstring s = (jstring)(*env)->CallObjectMethod(env, mod, g_name);
    if ((*env)->ExceptionCheck(env)) return DDMC_JDWP_INTERNAL;
    if (s != NULL) { /* null: the unnamed module, "" on the wire as libjdwp answers */
      const char *p = (*env)->GetStringUTFChars(env, s, NULL);
      if (p == NULL) return DDMC_JDWP_OUT_OF_MEMORY;
      ddmc_buf_put_bytes(name, p, strlen(p));
      (*env)->ReleaseStringUTFChars(env, s, p);
    }
  }
  if (loader != NULL) {
    jobject l = (*env)->CallObjectMethod(env, mod, g_loader);
    if ((*env)->ExceptionCheck(env)) return DDMC_JDWP_INTERNAL;
    *loader = ja_ref(env, l);
    if (l != NULL && *loader == 0) return DDMC_JDWP_OUT_OF_MEMORY;
  }
  return 0;
}

static int module_info(void *vd, ddmc_ref m, ddmc_buf *name, ddmc_ref *loader) {
  JNIEnv *env = ja_enter();
  if (env == NULL) return DDMC_JDWP_VM_DEAD;
  int rc = module_ids(env);
  jobject mod = rc == 0 ? ja_obj(m) : NULL;
  if (rc == 0 && mod == NULL) rc = DDMC_JDWP_INVALID_MODULE; /* collected, as libjdwp answers */
  /* An object that is no Module never reaches Java code (libjdwp calls getName on it anyway). */
  if (rc == 0 && !(*env)->IsInstanceOf(env, mod, g_module)) rc = DDMC_JDWP_INVALID_MODULE;
  if (rc == 0) rc = module_query(env, mod, name, loader);
  (*env)->ExceptionClear(env);
  ja_leave(env);
  return rc;
}

void ja_bridge_reflect(ddmc_vm_bridge *b) {
  if (ja.caps.can_get_bytecodes) b->bytecodes = bytecodes;
  if (ja.caps.can_get_constant_pool) b->constant_pool = constant_pool;
  b->class_file_version = class_file_version;
  if (ja.caps.can_get_source_debug_extension) b->source_debug_extension = source_debug_extension;
  jint v = 0;
  if ((*ja.ti)->GetVersionNumber(ja.ti, &v) == JVMTI_ERROR_NONE &&
      ((v & JVMTI_VERSION_MASK_MAJOR) >> JVMTI_VERSION_SHIFT_MAJOR) >= 9) { /* modules: JVM TI 9 */
    b->for_each_module = for_each_module;
    b->class_module = class_module;
    b->module_info = module_info;
  }
}
