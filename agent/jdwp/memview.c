/* SPDX-License-Identifier: Apache-2.0 */
/* The bridge's memory view ops (instance_counts, instances, referring_objects) from JVM TI, as
 * the JDK's agent computes them: one FollowReferences (only reachable objects, at HotSpot's
 * safepoint: one consistent look, without stopping the threads), the objects found marked with
 * tags, then GetObjectsWithTags.
 *
 * Why not the library's own walk over heap.c's ops: that names objects by walk tags, valid only
 * during the walk, and reads every field through JNI. Why a JVM TI environment of its own per
 * call: the agent's environment keeps the table's names in its tags (refs.c); a fresh one has no
 * tags, so each call marks freely, and disposing of it drops every mark at once however many
 * there were. Memory: HotSpot's tag map (one entry per object marked), and the local references
 * of the objects handed to the library (at most max; each deleted after use). Thread: the JDWP
 * thread. */
#include <stdlib.h>
#include <string.h>

#include "ja.h"

#define MARK_TARGET 1    /* ReferringObjects: the object asked about */
#define MARK_REFERRER 2  /* ... an object that refers to it (TARGET | REFERRER: itself) */
#define MARK_SEEN (-1)   /* InstanceCounts / Instances: counted */

static jvmtiEnv *fresh_ti(void) {
  jvmtiEnv *t = NULL;
  if ((*ja.jvm)->GetEnv(ja.jvm, (void **)&t, JVMTI_VERSION_1_2) != JNI_OK || t == NULL) return NULL;
  jvmtiCapabilities c;
  memset(&c, 0, sizeof c);
  c.can_tag_objects = 1;
  if ((*t)->AddCapabilities(t, &c) != JVMTI_ERROR_NONE) {
    (*t)->DisposeEnvironment(t);
    return NULL;
  }
  return t;
}

/* ---- instance_counts */

typedef struct counting {
  int64_t *counts;
  int32_t n;
} counting;

/* Called only for untagged objects of tagged classes (the heap filter): each is counted once,
 * then marked, which filters it out of the references to it still to come. */
static jint JNICALL count_cb(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info, jlong class_tag,
                             jlong referrer_class_tag, jlong size, jlong *tag_ptr, jlong *referrer_tag_ptr,
                             jint length, void *ud) {
  counting *c = ud;
  if (class_tag > 0 && class_tag <= c->n) c->counts[class_tag - 1]++;
  *tag_ptr = MARK_SEEN;
  return JVMTI_VISIT_OBJECTS;
}

/* Tags each class with its first index + 1; first[i] is the index whose count i takes. */
static int tag_classes(jvmtiEnv *t, const ddmc_class *classes, int32_t n, int32_t *first) {
  for (int32_t i = 0; i < n; i++) {
    jobject k = ja_kept_obj(classes[i]);
    if (k == NULL) return DDMC_JDWP_INVALID_CLASS;
    jlong tag = 0;
    if ((*t)->GetTag(t, k, &tag) != JVMTI_ERROR_NONE) return DDMC_JDWP_INTERNAL;
    first[i] = tag > 0 ? (int32_t)(tag - 1) : i;
    if (tag == 0 && (*t)->SetTag(t, k, (jlong)i + 1) != JVMTI_ERROR_NONE) return DDMC_JDWP_OUT_OF_MEMORY;
  }
  return 0;
}

static int instance_counts(void *vd, const ddmc_class *classes, int32_t n, int64_t *counts) {
  int32_t *first = malloc(sizeof(int32_t) * (size_t)(n > 0 ? n : 1));
  jvmtiEnv *t = first ? fresh_ti() : NULL;
  if (t == NULL) {
    free(first);
    return DDMC_JDWP_OUT_OF_MEMORY;
  }
  memset(counts, 0, sizeof(int64_t) * (size_t)n);
  int rc = tag_classes(t, classes, n, first);
  if (rc == 0) {
    jvmtiHeapCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.heap_reference_callback = count_cb;
    counting c = {counts, n};
    jint filter = JVMTI_HEAP_FILTER_TAGGED | JVMTI_HEAP_FILTER_CLASS_UNTAGGED;
    rc = ja_err((*t)->FollowReferences(t, filter, NULL, NULL, &cb, &c));
  }
  for (int32_t i = 0; rc == 0 && i < n; i++) counts[i] = counts[first[i]];
  (*t)->DisposeEnvironment(t);
  free(first);
  return rc;
}

/* ---- instances, referring_objects: mark in the walk, then hand each marked object over */

typedef struct listing {
  int32_t max, n;
} listing;

/* Instances: called only for untagged instances of the class (the filter and klass). */
static jint JNICALL instance_cb(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info, jlong class_tag,
                                jlong referrer_class_tag, jlong size, jlong *tag_ptr, jlong *referrer_tag_ptr,
                                jint length, void *ud) {
  listing *l = ud;
  *tag_ptr = MARK_SEEN;
  return ++l->n >= l->max ? JVMTI_VISIT_ABORT : JVMTI_VISIT_OBJECTS;
}

/* ReferringObjects: every reference; a reachable object that holds the target gets marked once.
 * Roots (no referrer) are not objects. */
static jint JNICALL referrer_cb(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info, jlong class_tag,
                                jlong referrer_class_tag, jlong size, jlong *tag_ptr, jlong *referrer_tag_ptr,
                                jint length, void *ud) {
  listing *l = ud;
  if (referrer_tag_ptr == NULL || (*tag_ptr & MARK_TARGET) == 0 || (*referrer_tag_ptr & MARK_REFERRER) != 0)
    return JVMTI_VISIT_OBJECTS;
  *referrer_tag_ptr |= MARK_REFERRER; /* the target itself when it refers to itself (same pointer) */
  return ++l->n >= l->max ? JVMTI_VISIT_ABORT : JVMTI_VISIT_OBJECTS;
}

/* The objects of t tagged with one of tags, named and given to fn (at most max). */
static int hand_over(JNIEnv *env, jvmtiEnv *t, const jlong *tags, jint ntags, int32_t max,
                     int (*fn)(void *arg, ddmc_ref o), void *arg) {
  jint n = 0;
  jobject *objs = NULL;
  jvmtiError e = (*t)->GetObjectsWithTags(t, ntags, tags, &n, &objs, NULL);
  if (e != JVMTI_ERROR_NONE) return ja_err(e);
  int rc = 0;
  for (jint i = 0; i < n; i++) {
    if (rc == 0 && i < max) {
      uint64_t id = ja_ref(env, objs[i]);
      rc = id == 0 ? DDMC_JDWP_OUT_OF_MEMORY : fn(arg, id);
    }
    (*env)->DeleteLocalRef(env, objs[i]);
  }
  (*t)->Deallocate(t, (unsigned char *)objs);
  return rc;
}

static int instances(void *vd, ddmc_class c, int32_t max, int (*fn)(void *arg, ddmc_ref o), void *arg) {
  JNIEnv *env = ja_enter();
  if (env == NULL) return DDMC_JDWP_VM_DEAD;
  jvmtiEnv *t = fresh_ti();
  jclass k = ja_kept_obj(c);
  int rc = t == NULL ? DDMC_JDWP_OUT_OF_MEMORY : k == NULL ? DDMC_JDWP_INVALID_CLASS : 0;
  if (rc == 0) {
    jvmtiHeapCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.heap_reference_callback = instance_cb;
    listing l = {max, 0};
    rc = ja_err((*t)->FollowReferences(t, JVMTI_HEAP_FILTER_TAGGED, k, NULL, &cb, &l));
    jlong seen = MARK_SEEN;
    if (rc == 0) rc = hand_over(env, t, &seen, 1, max, fn, arg);
  }
  if (t != NULL) (*t)->DisposeEnvironment(t);
  ja_leave(env);
  return rc;
}

static int referring_objects(void *vd, ddmc_ref o, int32_t max, int (*fn)(void *arg, ddmc_ref r), void *arg) {
  JNIEnv *env = ja_enter();
  if (env == NULL) return DDMC_JDWP_VM_DEAD;
  jobject target = ja_obj(o);
  jvmtiEnv *t = target != NULL ? fresh_ti() : NULL;
  int rc = target == NULL ? DDMC_JDWP_INVALID_OBJECT : t == NULL ? DDMC_JDWP_OUT_OF_MEMORY : 0;
  if (rc == 0) rc = ja_err((*t)->SetTag(t, target, MARK_TARGET));
  if (rc == 0) {
    jvmtiHeapCallbacks cb;
    memset(&cb, 0, sizeof cb);
    cb.heap_reference_callback = referrer_cb;
    listing l = {max, 0};
    rc = ja_err((*t)->FollowReferences(t, 0, NULL, NULL, &cb, &l));
    static const jlong marks[] = {MARK_REFERRER, MARK_TARGET | MARK_REFERRER};
    if (rc == 0) rc = hand_over(env, t, marks, 2, max, fn, arg);
  }
  if (t != NULL) (*t)->DisposeEnvironment(t);
  ja_leave(env);
  return rc;
}

void ja_bridge_memview(ddmc_vm_bridge *b) {
  b->instance_counts = instance_counts;
  b->instances = instances;
  b->referring_objects = referring_objects;
}
