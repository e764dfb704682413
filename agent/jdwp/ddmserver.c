/* SPDX-License-Identifier: Apache-2.0 */
/* Android's app-side DDM API on a JVM: org.apache.harmony.dalvik.ddmc.DdmServer's natives over
 * libddmc's chunk registry (ddmc/chunk.h).
 *
 * The classes (agent/java/) are built into libddmcjdwp-ddm.jar, installed next to this .so. At
 * VMInit (or attach) the agent appends that jar to the system class loader's search, so the app's
 * loader and every loader under it find Android's classes. Not the boot class path: appending to
 * it makes HotSpot give up class data sharing for every class outside the boot loader and print a
 * warning on the app's stdout. Nothing is loaded then: HotSpot binds DdmServer's natives itself
 * the first time the app calls one, looking their JNI names up in the agent libraries after the
 * class's loader (so the .so exports those two names beside Agent_*, exports.map), and the first
 * nativeRegister binds the rest from the class it is called on. Loading the jar eagerly cost an
 * app that never uses DdmServer some 130 classes (the jar and zip readers), and every class
 * loaded makes each RedefineClasses slower (HotSpot walks them all). No jar, or a VM that refuses
 * it: DdmServer works without a peer (agent/README.md).
 *
 * Dispatch, as Android's VM does it: a chunk of a type the app registered goes to the static
 * DdmServer.dispatch on the JDWP thread, which looks the handler up in its own map; null (no
 * handler now) is the empty reply, as for any unknown type. So the C registration of a type is
 * made once, the first time the app registers it, and kept: unregisterHandler only empties the
 * Java map. Keeping the entries also keeps DDM sessions whole for the app. libddmc calls a C
 * entry's disconnected only if that same entry had connected; DdmServer.broadcast tells every
 * Java handler, so it is called on the first connected and on the matching disconnected of
 * whichever entries libddmc calls (one session flag, JDWP thread only), and an app that
 * unregisters and registers again within a session still hears of its end (ART's DDM test).
 *
 * Bounds: at most JA_DDM_TYPES distinct types; a reply is copied into libddmc's reply buffer,
 * whose cap turns an oversized reply into FAIL. A handler runs Java code on the JDWP thread: a
 * handler that blocks holds up the debugger, as on Android. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ddmc/chunk.h"
#include "ja.h"

#define JA_DDM_TYPES 1024
#define JA_DDM_JAR "libddmcjdwp-ddm.jar"

static jclass server_class;  /* global reference; NULL: no DdmServer */
static jmethodID m_dispatch, m_broadcast;
static jfieldID f_type, f_data, f_offset, f_length;

static pthread_mutex_t types_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t types[JA_DDM_TYPES]; /* under types_lock: the types registered with libddmc */
static int ntypes;

static int session; /* JDWP thread only: DdmServer.broadcast(CONNECTED) was called */

/* DdmServer.broadcast's events. */
enum { DDM_CONNECTED = 1, DDM_DISCONNECTED = 2 };

/* The reply of the handler, from the Chunk it returned. */
static int chunk_reply(JNIEnv *env, jobject chunk, ddmc_chunk_type *reply_type, ddmc_buf *reply) {
  jint type = (*env)->GetIntField(env, chunk, f_type);
  jbyteArray data = (jbyteArray)(*env)->GetObjectField(env, chunk, f_data);
  jint off = (*env)->GetIntField(env, chunk, f_offset);
  jint len = (*env)->GetIntField(env, chunk, f_length);
  jsize n = data ? (*env)->GetArrayLength(env, data) : 0;
  if (off < 0 || len < 0 || off > n - len || (len > 0 && data == NULL))
    return ddmc_reply_fail(reply, reply_type, 1, "the app's chunk handler returned a Chunk with bad bounds");
  *reply_type = (ddmc_chunk_type)type;
  if (len == 0) return 0;
  jbyte *p = (*env)->GetByteArrayElements(env, data, NULL);
  if (p == NULL) {
    (*env)->ExceptionClear(env);
    return DDMC_ENOMEM;
  }
  ddmc_buf_put_bytes(reply, p + off, (size_t)len); /* over the cap: the library answers FAIL */
  (*env)->ReleaseByteArrayElements(env, data, p, JNI_ABORT);
  return 0;
}

/* Thread: JDWP thread. */
static int handle(void *ud, ddmc_vm *vm, const ddmc_chunk *req, ddmc_chunk_type *reply_type, ddmc_buf *reply) {
  (void)ud;
  (void)vm;
  if (req->len > INT32_MAX) return DDMC_ETOOBIG;
  JNIEnv *env = ja_enter();
  if (env == NULL) return DDMC_ESTATE;
  int rc;
  jbyteArray data = (*env)->NewByteArray(env, (jsize)req->len);
  if (data == NULL) {
    (*env)->ExceptionClear(env);
    rc = DDMC_ENOMEM;
  } else {
    (*env)->SetByteArrayRegion(env, data, 0, (jsize)req->len, (const jbyte *)req->data);
    jobject chunk = (*env)->CallStaticObjectMethod(env, server_class, m_dispatch, (jint)req->type, data, (jint)0,
                                                   (jint)req->len);
    if ((*env)->ExceptionCheck(env)) {
      /* DdmServer.dispatch catches the handler's exceptions: this is one it could not turn into
       * a FAIL (an OutOfMemoryError making it, a StackOverflowError...). */
      (*env)->ExceptionClear(env);
      rc = ddmc_reply_fail(reply, reply_type, 1, "the app's chunk handler failed (exception in DdmServer.dispatch)");
    } else if (chunk == NULL) {
      rc = DDMC_ENOENT; /* no handler now: the answer to an unknown type */
    } else {
      rc = chunk_reply(env, chunk, reply_type, reply);
    }
  }
  ja_leave(env);
  return rc;
}

/* Thread: JDWP thread. DdmServer.broadcast(event), once per session edge. */
static void tell(int event) {
  if (session == (event == DDM_CONNECTED)) return;
  session = event == DDM_CONNECTED;
  JNIEnv *env = ja_enter();
  if (env == NULL) return;
  (*env)->CallStaticVoidMethod(env, server_class, m_broadcast, (jint)event);
  (*env)->ExceptionClear(env);
  ja_leave(env);
}

static void on_connected(void *ud, ddmc_vm *vm) {
  (void)ud;
  (void)vm;
  tell(DDM_CONNECTED);
}

static void on_disconnected(void *ud, ddmc_vm *vm) {
  (void)ud;
  (void)vm;
  tell(DDM_DISCONNECTED);
}

/* What dispatch and broadcast need, from the DdmServer class nativeRegister is called on: before
 * any type is registered with libddmc, so the JDWP thread (which calls handle only for a
 * registered type) sees them set. Under types_lock. */
static int bind_class(JNIEnv *env, jclass cls) {
  jclass chunk = (*env)->FindClass(env, "org/apache/harmony/dalvik/ddmc/Chunk");
  if (chunk == NULL) return DDMC_ESTATE;
  m_dispatch = (*env)->GetStaticMethodID(env, cls, "dispatch", "(I[BII)Lorg/apache/harmony/dalvik/ddmc/Chunk;");
  m_broadcast = m_dispatch ? (*env)->GetStaticMethodID(env, cls, "broadcast", "(I)V") : NULL;
  f_type = m_broadcast ? (*env)->GetFieldID(env, chunk, "type", "I") : NULL;
  f_data = f_type ? (*env)->GetFieldID(env, chunk, "data", "[B") : NULL;
  f_offset = f_data ? (*env)->GetFieldID(env, chunk, "offset", "I") : NULL;
  f_length = f_offset ? (*env)->GetFieldID(env, chunk, "length", "I") : NULL;
  (*env)->DeleteLocalRef(env, chunk);
  if (f_length == NULL) {
    (*env)->ExceptionClear(env); /* the caller hears of it by nativeRegister's code */
    return DDMC_ESTATE;
  }
  server_class = (jclass)(*env)->NewGlobalRef(env, cls);
  return server_class ? 0 : DDMC_ENOMEM;
}

/* DdmServer.nativeRegister: 0 (registered now or before), 1 (a type of libddmc's own) or a
 * libddmc error. Thread: any Java thread. */
JNIEXPORT jint JNICALL Java_org_apache_harmony_dalvik_ddmc_DdmServer_nativeRegister(JNIEnv *env, jclass cls, jint type) {
  pthread_mutex_lock(&types_lock);
  int rc = server_class != NULL ? 0 : bind_class(env, cls);
  int i = 0;
  while (rc == 0 && i < ntypes && types[i] != (uint32_t)type) i++;
  if (rc == 0 && i == ntypes) {
    if (ntypes == JA_DDM_TYPES) {
      rc = DDMC_ENOMEM;
    } else {
      ddmc_chunk_handler h = {handle, on_connected, on_disconnected, NULL};
      rc = ddmc_register_handler(ja.vm, (ddmc_chunk_type)type, &h, NULL);
      if (rc == 0) types[ntypes++] = (uint32_t)type;
      if (rc == DDMC_EEXIST) rc = 1;
    }
  }
  pthread_mutex_unlock(&types_lock);
  return rc;
}

/* DdmServer.nativeSendChunk: the Java side has checked the bounds; a chunk without a peer, or
 * over the queue or packet cap, is dropped (Android's sendChunk says nothing either). */
JNIEXPORT void JNICALL Java_org_apache_harmony_dalvik_ddmc_DdmServer_nativeSendChunk(JNIEnv *env, jclass cls, jint type,
                                                                                   jbyteArray data, jint off, jint len) {
  (void)cls;
  jsize n = data ? (*env)->GetArrayLength(env, data) : 0;
  if (off < 0 || len < 0 || off > n - len) return;
  jbyte *p = len > 0 ? (*env)->GetByteArrayElements(env, data, NULL) : NULL;
  if (len > 0 && p == NULL) return; /* OutOfMemoryError pending for the caller */
  int rc = ddmc_send_chunk(ja.vm, (ddmc_chunk_type)type, p ? p + off : NULL, (size_t)len);
  if (p) (*env)->ReleaseByteArrayElements(env, data, p, JNI_ABORT);
  if (rc != 0 && rc != DDMC_ENOTCONN && ja.verbose)
    fprintf(stderr, "ddmcjdwp: DdmServer.sendChunk dropped a chunk: %s\n", ddmc_strerror(rc));
}

/* The jar next to this .so, or NULL. Caller frees. */
static char *jar_path(void) {
  Dl_info info;
  if (dladdr((void *)jar_path, &info) == 0 || info.dli_fname == NULL) return NULL;
  const char *slash = strrchr(info.dli_fname, '/');
  size_t dir = slash ? (size_t)(slash - info.dli_fname) + 1 : 0;
  char *p = malloc(dir + sizeof JA_DDM_JAR);
  if (p == NULL) return NULL;
  memcpy(p, info.dli_fname, dir);
  memcpy(p + dir, JA_DDM_JAR, sizeof JA_DDM_JAR);
  if (access(p, R_OK) != 0) {
    free(p);
    return NULL;
  }
  return p;
}

void ja_ddmserver_start(JNIEnv *env) {
  (void)env;
  char *jar = jar_path();
  jvmtiError e = jar ? (*ja.ti)->AddToSystemClassLoaderSearch(ja.ti, jar) : JVMTI_ERROR_NOT_FOUND;
  if (e != JVMTI_ERROR_NONE && ja.verbose)
    fprintf(stderr, "ddmcjdwp: no org.apache.harmony.dalvik.ddmc.DdmServer for the app (%s %s)\n",
            jar ? "cannot use" : "no", jar ? jar : JA_DDM_JAR " next to the agent");
  free(jar);
}
