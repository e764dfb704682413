/* SPDX-License-Identifier: Apache-2.0 */
/* The table of objects the agent has named (ja.h, "Names"), and the JNIEnv of any thread. */
#include <pthread.h>
#include <stdlib.h>

#include "ja.h"

#define CHUNK_BITS 12
#define CHUNK (1u << CHUNK_BITS)
#define MAX_CHUNKS 1024u /* 2^22 entries: bounded, like the library's own registry */

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static ja_entry *_Atomic chunks[MAX_CHUNKS];
/* Entries [1, next) are filled; readers take next with acquire, so an entry below it is whole. */
static atomic_uint_fast32_t next = 1;

static _Thread_local int tl_internal;
/* Set on the thread that walks the heap (heap.c) while its walk tags are valid. */
static _Thread_local int tl_walking;

void ja_set_walking(int on) { tl_walking = on; }

/* A tag this table gave out, or, on the walking thread, a walk tag. Anything else (a walk's tag
 * left by a failed walk, its marker) is not a name: the object is named afresh. */
static int is_name(jlong tag) {
  if (tag <= 0) return 0;
  if ((uint64_t)tag < atomic_load_explicit(&next, memory_order_acquire)) return 1;
  return tl_walking && (uint64_t)tag >= JA_WALK_BASE && (uint64_t)tag < JA_WALK_END;
}

ja_entry *ja_entry_of(uint64_t id) {
  if (id == 0 || id >= atomic_load_explicit(&next, memory_order_acquire)) return NULL;
  ja_entry *c = atomic_load_explicit(&chunks[id >> CHUNK_BITS], memory_order_acquire);
  return c ? &c[id & (CHUNK - 1)] : NULL;
}

jobject ja_obj(uint64_t id) {
  if (id >= JA_WALK_BASE) return tl_walking ? ja_walk_obj(id) : NULL;
  ja_entry *e = ja_entry_of(id);
  return e ? e->ref : NULL;
}

uint64_t ja_named(jobject o) {
  jlong tag = 0;
  if (o == NULL || (*ja.ti)->GetTag(ja.ti, o, &tag) != JVMTI_ERROR_NONE || !is_name(tag)) return 0;
  return (uint64_t)tag;
}

uint64_t ja_ref(JNIEnv *env, jobject o) {
  if (o == NULL) return 0;
  jlong tag = 0;
  if ((*ja.ti)->GetTag(ja.ti, o, &tag) == JVMTI_ERROR_NONE && is_name(tag)) return (uint64_t)tag;
  uint64_t id = 0;
  pthread_mutex_lock(&table_lock);
  /* Another thread may have named it since the first look. */
  if ((*ja.ti)->GetTag(ja.ti, o, &tag) == JVMTI_ERROR_NONE && is_name(tag)) {
    id = (uint64_t)tag;
    goto out;
  }
  uint32_t n = (uint32_t)atomic_load_explicit(&next, memory_order_relaxed);
  uint32_t ci = n >> CHUNK_BITS;
  if (ci >= MAX_CHUNKS) goto out;
  ja_entry *c = atomic_load_explicit(&chunks[ci], memory_order_relaxed);
  if (c == NULL) {
    c = calloc(CHUNK, sizeof *c);
    if (c == NULL) goto out;
    atomic_store_explicit(&chunks[ci], c, memory_order_release);
  }
  jobject g = (*env)->NewGlobalRef(env, o);
  if (g == NULL) goto out;
  if ((*ja.ti)->SetTag(ja.ti, o, (jlong)n) != JVMTI_ERROR_NONE) {
    (*env)->DeleteGlobalRef(env, g);
    goto out;
  }
  c[n & (CHUNK - 1)].ref = g;
  atomic_store_explicit(&next, n + 1, memory_order_release);
  id = n;
out:
  pthread_mutex_unlock(&table_lock);
  return id;
}

uint64_t ja_table_size(void) { return atomic_load_explicit(&next, memory_order_acquire); }

void ja_untag(jobject o, jlong tag) {
  jlong now = 0;
  pthread_mutex_lock(&table_lock);
  if ((*ja.ti)->GetTag(ja.ti, o, &now) == JVMTI_ERROR_NONE && now == tag) (*ja.ti)->SetTag(ja.ti, o, 0);
  pthread_mutex_unlock(&table_lock);
}

int ja_thread_is_internal(void) { return tl_internal; }
void ja_mark_internal(void) { tl_internal = 1; }

JNIEnv *ja_env(void) {
  JNIEnv *env = NULL;
  jint rc = (*ja.jvm)->GetEnv(ja.jvm, (void **)&env, JNI_VERSION_1_6);
  if (rc == JNI_OK) return env;
  if (rc != JNI_EDETACHED) return NULL;
  /* A thread of libddmc (the JDWP thread, the sampler) calling for the first time: it becomes a
   * daemon Java thread, hidden from debuggers, whose events are not reported. */
  tl_internal = 1;
  JavaVMAttachArgs args = {JNI_VERSION_1_6, (char *)"ddmc JDWP", NULL};
  if ((*ja.jvm)->AttachCurrentThreadAsDaemon(ja.jvm, (void **)&env, &args) != JNI_OK) return NULL;
  jthread self = NULL;
  if ((*ja.ti)->GetCurrentThread(ja.ti, &self) == JVMTI_ERROR_NONE && self) {
    ja_entry *e = ja_entry_of(ja_ref(env, self));
    if (e) atomic_store(&e->internal, 1);
    (*env)->DeleteLocalRef(env, self);
  }
  return env;
}

JNIEnv *ja_enter(void) {
  JNIEnv *env = ja_env();
  if (env && (*env)->PushLocalFrame(env, 32) != 0) {
    (*env)->ExceptionClear(env);
    return NULL;
  }
  return env;
}

void ja_leave(JNIEnv *env) {
  if (env) (*env)->PopLocalFrame(env, NULL);
}
