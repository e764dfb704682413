/* SPDX-License-Identifier: Apache-2.0 */
/* The bridge's write_hprof: HotSpot's own heap dumper, HotSpotDiagnosticMXBean.dumpHeap(path,
 * true), called through JNI on the JDWP thread (on the object behind the bean, made directly, and
 * its native half, when the JDK has them where JDK 17 does). Walking the heap through JVM TI
 * costs a tag map lookup per object and per reference and ran at 0.03-0.07x the speed of this
 * dumper (bench/RESULTS.md); libddmc converts the file into Android's hprof and falls back to
 * the walk (heap.c) when this op fails, which it does on a JVM without the MXBean (the
 * jdk.management module left out, another VM). live = true: only reachable objects, after a
 * full collection, as the walk (reachable from the roots) dumps them. DDMC_JDWP_HPROF_WALK=1 in
 * the environment leaves the op out, so every dump walks the heap (agent/README.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ja.h"

/* The bean and its method, made once by the first dump (the JDWP thread only). */
static jobject bean;
static jmethodID dump_heap;

/* The native library behind dumpHeap, loaded as PlatformMBeanProviderImpl's static initializer
 * loads it but without its lambda: on the bench machine that initializer cost 11-13 ms, the first
 * invokedynamic of a JVM that had run none, inside the first dump's time (BootLoader takes no
 * lambda without a security manager). Non-zero when loaded. */
static int load_library(JNIEnv *env) {
  jclass bl = (*env)->FindClass(env, "jdk/internal/loader/BootLoader");
  jmethodID load = bl ? (*env)->GetStaticMethodID(env, bl, "loadLibrary", "(Ljava/lang/String;)V") : NULL;
  jstring name = load ? (*env)->NewStringUTF(env, "management_ext") : NULL;
  if (name != NULL) (*env)->CallStaticVoidMethod(env, bl, load, name);
  int ok = name != NULL && !(*env)->ExceptionCheck(env);
  (*env)->ExceptionClear(env);
  if (ok) return 1;
  jclass impl = (*env)->FindClass(env, "com/sun/management/internal/PlatformMBeanProviderImpl");
  (*env)->ExceptionClear(env);
  return impl != NULL;
}

/* The object behind the MXBean, made directly: ManagementFactory's lookup first sets up the whole
 * platform MBean machinery, 50-70 ms on the bench machine (bench/RESULTS.md), once per JVM and
 * inside the first dump's time. JNI checks no module exports. The dump goes through the private
 * native dumpHeap0 where there is one: dumpHeap only adds a check of the file's suffix (the
 * library names it heap.hprof) and of a security manager's permission (the agent has JVM TI's)
 * to it, and a lambda of its own, a few milliseconds more on the first call. NULL (nothing
 * pending) when a class or member is not there (another JDK's layout, jdk.management left out):
 * the MXBean is then looked up as documented. */
static jobject direct_bean(JNIEnv *env, jmethodID *dump) {
  if (!load_library(env)) return NULL;
  jclass hs = (*env)->FindClass(env, "com/sun/management/internal/HotSpotDiagnostic");
  jmethodID make = hs ? (*env)->GetMethodID(env, hs, "<init>", "()V") : NULL;
  jmethodID d = make ? (*env)->GetMethodID(env, hs, "dumpHeap0", "(Ljava/lang/String;Z)V") : NULL;
  if (d == NULL && make != NULL) {
    (*env)->ExceptionClear(env);
    d = (*env)->GetMethodID(env, hs, "dumpHeap", "(Ljava/lang/String;Z)V");
  }
  jobject b = d ? (*env)->NewObject(env, hs, make) : NULL;
  if (b == NULL || (*env)->ExceptionCheck(env)) {
    (*env)->ExceptionClear(env);
    return NULL;
  }
  *dump = d;
  return b;
}

static int find_bean(JNIEnv *env) {
  if (bean != NULL) return 0;
  jmethodID direct = NULL;
  jobject db = direct_bean(env, &direct);
  if (db != NULL) {
    bean = (*env)->NewGlobalRef(env, db);
    dump_heap = direct;
    if (bean != NULL) return 0;
  }
  jclass mf = (*env)->FindClass(env, "java/lang/management/ManagementFactory");
  jclass hs = mf ? (*env)->FindClass(env, "com/sun/management/HotSpotDiagnosticMXBean") : NULL;
  jmethodID get = hs ? (*env)->GetStaticMethodID(env, mf, "getPlatformMXBean",
                                                 "(Ljava/lang/Class;)Ljava/lang/management/PlatformManagedObject;")
                     : NULL;
  jmethodID dump = get ? (*env)->GetMethodID(env, hs, "dumpHeap", "(Ljava/lang/String;Z)V") : NULL;
  jobject b = dump ? (*env)->CallStaticObjectMethod(env, mf, get, hs) : NULL;
  if (b == NULL || (*env)->ExceptionCheck(env)) return -1;
  bean = (*env)->NewGlobalRef(env, b);
  dump_heap = dump;
  return bean != NULL ? 0 : -1;
}

/* The pending exception's toString() into msg, and cleared. */
static void exception_text(JNIEnv *env, char *msg, size_t msglen) {
  jthrowable t = (*env)->ExceptionOccurred(env);
  (*env)->ExceptionClear(env);
  snprintf(msg, msglen, "HotSpotDiagnosticMXBean.dumpHeap is not available");
  if (t == NULL) return;
  jclass oc = ja_known(env, JA_KNOWN_OBJECT);
  jmethodID ts = oc ? (*env)->GetMethodID(env, oc, "toString", "()Ljava/lang/String;") : NULL;
  jstring s = ts ? (*env)->CallObjectMethod(env, t, ts) : NULL;
  const char *c = s && !(*env)->ExceptionCheck(env) ? (*env)->GetStringUTFChars(env, s, NULL) : NULL;
  if (c != NULL) {
    snprintf(msg, msglen, "%s", c);
    (*env)->ReleaseStringUTFChars(env, s, c);
  }
  (*env)->ExceptionClear(env);
}

static int write_hprof(void *vd, const char *path, char *msg, size_t msglen) {
  (void)vd;
  JNIEnv *env = ja_enter();
  if (env == NULL) {
    snprintf(msg, msglen, "the VM is gone");
    return -1;
  }
  int rc = -1;
  if (find_bean(env) == 0) {
    jstring p = (*env)->NewStringUTF(env, path);
    if (p != NULL) (*env)->CallVoidMethod(env, bean, dump_heap, p, JNI_TRUE);
    rc = p != NULL && !(*env)->ExceptionCheck(env) ? 0 : -1;
  }
  if (rc != 0) exception_text(env, msg, msglen);
  ja_leave(env);
  return rc;
}

void ja_bridge_hdump(ddmc_vm_bridge *b) {
  const char *walk = getenv("DDMC_JDWP_HPROF_WALK");
  if (walk != NULL && strcmp(walk, "1") == 0) return;
  b->write_hprof = write_hprof;
}
