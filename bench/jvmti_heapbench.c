/* SPDX-License-Identifier: Apache-2.0 */
/* The JVM TI heap benchmark's agent (bench/bench_jvmti_heap.c runs it), built against
 * the JDK's jvmti.h like the sample agents. At VMDeath it runs IterateThroughHeap REPS times over
 * the whole heap with a callback that only counts (the walk's own cost: the world stopped, every
 * object's class tag and tag looked up, one call per object), after tagging every loaded class
 * (as a histogram does), and prints
 *   heapbench: objects N best_ns B median_ns M
 * Options: reps=N (default 5). */
#include <jvmti.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int reps = 5;

static jint JNICALL count(jlong class_tag, jlong size, jlong *tag_ptr, jint length, void *user_data) {
  ++*(long *)user_data;
  return JVMTI_VISIT_OBJECTS;
}

static int cmp(const void *a, const void *b) {
  jlong x = *(const jlong *)a, y = *(const jlong *)b;
  return x < y ? -1 : x > y;
}

static void JNICALL on_vm_death(jvmtiEnv *env, JNIEnv *jni) {
  jint n = 0;
  jclass *classes = NULL;
  if ((*env)->GetLoadedClasses(env, &n, &classes) == JVMTI_ERROR_NONE) {
    for (jint i = 0; i < n; i++) (*env)->SetTag(env, classes[i], (jlong)i + 1);
    (*env)->Deallocate(env, (unsigned char *)classes);
  }
  jvmtiHeapCallbacks cb;
  memset(&cb, 0, sizeof cb);
  cb.heap_iteration_callback = count;
  jlong t[64];
  long objects = 0;
  for (int r = 0; r < reps; r++) {
    long k = 0;
    jlong t0, t1;
    (*env)->GetTime(env, &t0);
    jvmtiError err = (*env)->IterateThroughHeap(env, 0, NULL, &cb, &k);
    (*env)->GetTime(env, &t1);
    if (err != JVMTI_ERROR_NONE) {
      fprintf(stderr, "heapbench: IterateThroughHeap failed: %d\n", (int)err);
      return;
    }
    t[r] = t1 - t0;
    objects = k;
  }
  qsort(t, (size_t)reps, sizeof(jlong), cmp);
  printf("heapbench: objects %ld best_ns %lld median_ns %lld\n", objects, (long long)t[0], (long long)t[reps / 2]);
  fflush(stdout);
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved) {
  if (options && strncmp(options, "reps=", 5) == 0) reps = atoi(options + 5);
  if (reps < 1 || reps > 64) reps = 5;
  jvmtiEnv *env;
  if ((*vm)->GetEnv(vm, (void **)&env, JVMTI_VERSION_1_2) != JNI_OK) return 1;
  jvmtiCapabilities caps;
  memset(&caps, 0, sizeof caps);
  caps.can_tag_objects = 1;
  if ((*env)->AddCapabilities(env, &caps) != JVMTI_ERROR_NONE) return 1;
  jvmtiEventCallbacks cb;
  memset(&cb, 0, sizeof cb);
  cb.VMDeath = on_vm_death;
  (*env)->SetEventCallbacks(env, &cb, (jint)sizeof cb);
  (*env)->SetEventNotificationMode(env, JVMTI_ENABLE, JVMTI_EVENT_VM_DEATH, NULL);
  return 0;
}
