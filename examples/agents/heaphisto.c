/* SPDX-License-Identifier: Apache-2.0 */
/* heaphisto: a heap histogram by class, a JVM TI agent written for HotSpot against the JDK's own
 * jvmti.h; it runs unchanged in minivm (libddmc's JVM TI).
 *
 *   java   -agentpath:/path/libheaphisto.so=classes=Histo Histo
 *   minivm -agentpath:/path/libheaphisto.so=classes=Histo histo.mvm
 *
 * At VMDeath, the way one writes it for HotSpot:
 *   1. GetLoadedClasses, and SetTag on each class (tag = its index + 1);
 *   2. IterateThroughHeap over objects whose class is tagged: each object of a class whose name
 *      starts with PREFIX (option classes=, internal form) is tagged with -(class tag), so its
 *      ObjectFree says which class it was;
 *   3. ForceGarbageCollection (garbage goes: ObjectFree for the tagged objects among it);
 *   4. IterateThroughHeap again, counting instances and bytes per class tag;
 *   5. prints, most instances first, then by name, the classes PREFIX keeps:
 *        heaphisto: 300 7200 HistoApple
 *      then "heaphisto: total N objects B bytes" (every class), "heaphisto: gc start S finish F"
 *      (every collection since Agent_OnLoad: GarbageCollectionStart / Finish) and
 *      "heaphisto: freed N CLASS" per class whose tagged objects ObjectFree reported (HotSpot may
 *      report some only after VMDeath: its ObjectFree comes from a service thread).
 * GC callbacks only count (the specification lets them call little else); ObjectFree counts per
 * class tag with atomic adds. */
#include <jvmti.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct klass {
  char *name; /* "HistoApple", "[I" */
  int keep;   /* the name starts with the prefix */
  long instances, bytes, freed;
} klass;

static jvmtiEnv *jvmti;
static char prefix[256];
static klass *classes;
static jint nclasses;
static long gc_start, gc_finish, freed_unknown;

static void check(jvmtiError err, const char *what) {
  if (err != JVMTI_ERROR_NONE) fprintf(stderr, "heaphisto: %s failed: %d\n", what, (int)err);
}

static void JNICALL on_gc_start(jvmtiEnv *env) { __atomic_add_fetch(&gc_start, 1, __ATOMIC_RELAXED); }
static void JNICALL on_gc_finish(jvmtiEnv *env) { __atomic_add_fetch(&gc_finish, 1, __ATOMIC_RELAXED); }

static void JNICALL on_object_free(jvmtiEnv *env, jlong tag) {
  jlong k = -tag - 1; /* objects carry -(class tag); class tags are index + 1 */
  klass *c = __atomic_load_n(&classes, __ATOMIC_ACQUIRE);
  if (tag < 0 && c != NULL && k >= 0 && k < nclasses)
    __atomic_add_fetch(&c[k].freed, 1, __ATOMIC_RELAXED);
  else
    __atomic_add_fetch(&freed_unknown, 1, __ATOMIC_RELAXED);
}

/* Pass 2: tag the objects of the classes the prefix keeps. */
static jint JNICALL mark_object(jlong class_tag, jlong size, jlong *tag_ptr, jint length, void *user_data) {
  if (class_tag > 0 && class_tag <= nclasses && classes[class_tag - 1].keep && *tag_ptr == 0) *tag_ptr = -class_tag;
  return JVMTI_VISIT_OBJECTS;
}

/* Pass 4: the histogram. */
static jint JNICALL count_object(jlong class_tag, jlong size, jlong *tag_ptr, jint length, void *user_data) {
  long *total = user_data;
  if (class_tag > 0 && class_tag <= nclasses) {
    classes[class_tag - 1].instances++;
    classes[class_tag - 1].bytes += (long)size;
  }
  total[0]++;
  total[1] += (long)size;
  return JVMTI_VISIT_OBJECTS;
}

static int by_count(const void *a, const void *b) {
  const klass *x = *(const klass *const *)a, *y = *(const klass *const *)b;
  if (x->instances != y->instances) return x->instances > y->instances ? -1 : 1;
  return strcmp(x->name, y->name);
}

static void JNICALL on_vm_death(jvmtiEnv *env, JNIEnv *jni) {
  jint n = 0;
  jclass *loaded = NULL;
  check((*env)->GetLoadedClasses(env, &n, &loaded), "GetLoadedClasses");
  klass *c = calloc((size_t)(n > 0 ? n : 1), sizeof(klass));
  if (c == NULL) return;
  for (jint i = 0; i < n; i++) {
    char *sig = NULL;
    check((*env)->SetTag(env, loaded[i], (jlong)i + 1), "SetTag");
    if ((*env)->GetClassSignature(env, loaded[i], &sig, NULL) == JVMTI_ERROR_NONE && sig != NULL) {
      size_t len = strlen(sig);
      if (sig[0] == 'L' && len >= 2 && sig[len - 1] == ';') {
        c[i].name = strndup(sig + 1, len - 2);
      } else {
        c[i].name = strdup(sig);
      }
      (*env)->Deallocate(env, (unsigned char *)sig);
    }
    if (c[i].name == NULL) c[i].name = strdup("?");
    c[i].keep = c[i].name != NULL && strncmp(c[i].name, prefix, strlen(prefix)) == 0;
  }
  nclasses = n;
  __atomic_store_n(&classes, c, __ATOMIC_RELEASE);

  jvmtiHeapCallbacks cb;
  memset(&cb, 0, sizeof cb);
  cb.heap_iteration_callback = mark_object;
  check((*env)->IterateThroughHeap(env, JVMTI_HEAP_FILTER_CLASS_UNTAGGED, NULL, &cb, NULL), "IterateThroughHeap");
  check((*env)->ForceGarbageCollection(env), "ForceGarbageCollection");

  long total[2] = {0, 0};
  cb.heap_iteration_callback = count_object;
  check((*env)->IterateThroughHeap(env, 0, NULL, &cb, total), "IterateThroughHeap");

  klass **order = calloc((size_t)(n > 0 ? n : 1), sizeof(klass *));
  if (order != NULL) {
    for (jint i = 0; i < n; i++) order[i] = &c[i];
    qsort(order, (size_t)n, sizeof(klass *), by_count);
    for (jint i = 0; i < n; i++)
      if (order[i]->keep && order[i]->instances > 0)
        printf("heaphisto: %ld %ld %s\n", order[i]->instances, order[i]->bytes, order[i]->name);
    free(order);
  }
  printf("heaphisto: total %ld objects %ld bytes\n", total[0], total[1]);
  printf("heaphisto: gc start %ld finish %ld\n", __atomic_load_n(&gc_start, __ATOMIC_RELAXED),
         __atomic_load_n(&gc_finish, __ATOMIC_RELAXED));
  for (jint i = 0; i < n; i++) {
    long f = __atomic_load_n(&c[i].freed, __ATOMIC_RELAXED);
    if (c[i].keep && f > 0) printf("heaphisto: freed %ld %s\n", f, c[i].name);
  }
  fflush(stdout);
  (*env)->Deallocate(env, (unsigned char *)loaded);
  /* classes stays: ObjectFree may still come (HotSpot's service thread). */
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved) {
  if (options != NULL && *options) {
    if (strncmp(options, "classes=", 8) != 0 || strlen(options + 8) >= sizeof prefix) {
      fprintf(stderr, "heaphisto: unknown options '%s' (expected classes=PREFIX)\n", options);
      return 2;
    }
    strcpy(prefix, options + 8);
  }
  if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK) {
    fprintf(stderr, "heaphisto: no JVM TI 1.2\n");
    return 1;
  }
  jvmtiCapabilities caps;
  memset(&caps, 0, sizeof caps);
  caps.can_tag_objects = 1;
  caps.can_generate_garbage_collection_events = 1;
  caps.can_generate_object_free_events = 1;
  jvmtiError err = (*jvmti)->AddCapabilities(jvmti, &caps);
  if (err != JVMTI_ERROR_NONE) {
    fprintf(stderr, "heaphisto: AddCapabilities failed: %d\n", (int)err);
    return 1;
  }
  jvmtiEventCallbacks cb;
  memset(&cb, 0, sizeof cb);
  cb.VMDeath = on_vm_death;
  cb.GarbageCollectionStart = on_gc_start;
  cb.GarbageCollectionFinish = on_gc_finish;
  cb.ObjectFree = on_object_free;
  check((*jvmti)->SetEventCallbacks(jvmti, &cb, (jint)sizeof cb), "SetEventCallbacks");
  check((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_DEATH, NULL), "enable VMDeath");
  check((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_GARBAGE_COLLECTION_START, NULL),
        "enable GarbageCollectionStart");
  check((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_GARBAGE_COLLECTION_FINISH, NULL),
        "enable GarbageCollectionFinish");
  check((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_OBJECT_FREE, NULL), "enable ObjectFree");
  return 0;
}
