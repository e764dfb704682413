/* SPDX-License-Identifier: Apache-2.0 */
/* threadwatch: a JVM TI thread and monitor watcher, written as for HotSpot (only the JDK's
 * jvmti.h / jni.h; it loads into minivm through libddmc and into java unchanged).
 *
 *   -agentpath:libthreadwatch.so[=gc][,dump]
 *
 * Counts ThreadStart / ThreadEnd by thread name, MonitorContendedEnter / Entered and
 * MonitorWait / Waited (with how many timed out) by the monitor's class. At VMInit it starts one
 * agent thread with RunAgentThread, for a java.lang.Thread made with JNI NewObject (the usual
 * HotSpot idiom); the thread sleeps on a raw monitor and wakes each time an event is counted.
 * At VMDeath it stops that thread, then prints one line per count, sorted, on stdout:
 *   threadwatch: start NAME N / end NAME N
 *   threadwatch: contended-enter CLASS N / contended-entered CLASS N
 *   threadwatch: wait CLASS N / waited CLASS N timed-out K
 *   threadwatch: agent thread ran
 * The agent thread's own start and end are not counted.
 * gc: GarbageCollectionFinish wakes the agent thread through the same raw monitor, from the
 * collector's context (raw monitors are what the specification allows there); then
 *   threadwatch: a collection woke the agent thread
 * dump: prints "threadwatch: ready" at VMInit and counts DataDumpRequest (kill -QUIT):
 *   threadwatch: data-dump request N */
#include <jvmti.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_KEYS 256

typedef struct count {
  char key[160]; /* "start NAME", "wait CLASS", ... */
  long n, timed_out;
} count;

static jvmtiEnv *jvmti;
static jrawMonitorID lock;
static count counts[MAX_KEYS];
static int ncounts;
static jobject agent_thread; /* a global ref */
static int stop, done, ran;
static long wakeups, events;
static int opt_gc, opt_dump;
static long gcs_finished, gcs_seen; /* under lock */
static int gc_woke;

static count *find(const char *kind, const char *what) {
  char key[160];
  snprintf(key, sizeof key, "%s %s", kind, what ? what : "?");
  for (int i = 0; i < ncounts; i++)
    if (!strcmp(counts[i].key, key)) return &counts[i];
  if (ncounts == MAX_KEYS) return NULL;
  snprintf(counts[ncounts].key, sizeof counts[ncounts].key, "%s", key);
  return &counts[ncounts++];
}

/* Adds one under the raw monitor and wakes the agent thread. */
static void add(const char *kind, const char *what, int timed_out) {
  (*jvmti)->RawMonitorEnter(jvmti, lock);
  count *c = find(kind, what);
  if (c) {
    c->n++;
    c->timed_out += timed_out;
  }
  events++;
  (*jvmti)->RawMonitorNotify(jvmti, lock);
  (*jvmti)->RawMonitorExit(jvmti, lock);
}

static int is_agent_thread(JNIEnv *jni, jthread t) {
  return agent_thread != NULL && (*jni)->IsSameObject(jni, t, agent_thread);
}

static void thread_event(JNIEnv *jni, jthread t, const char *kind) {
  if (is_agent_thread(jni, t)) return;
  jvmtiThreadInfo info;
  memset(&info, 0, sizeof info);
  if ((*jvmti)->GetThreadInfo(jvmti, t, &info) != JVMTI_ERROR_NONE) return;
  add(kind, info.name, 0);
  (*jvmti)->Deallocate(jvmti, (unsigned char *)info.name);
  if (info.thread_group) (*jni)->DeleteLocalRef(jni, info.thread_group);
  if (info.context_class_loader) (*jni)->DeleteLocalRef(jni, info.context_class_loader);
}

static void JNICALL on_thread_start(jvmtiEnv *e, JNIEnv *jni, jthread t) { thread_event(jni, t, "start"); }
static void JNICALL on_thread_end(jvmtiEnv *e, JNIEnv *jni, jthread t) { thread_event(jni, t, "end"); }

static void monitor_event(JNIEnv *jni, jobject obj, const char *kind, int timed_out) {
  jclass k = (*jni)->GetObjectClass(jni, obj);
  char *sig = NULL;
  if (k == NULL || (*jvmti)->GetClassSignature(jvmti, k, &sig, NULL) != JVMTI_ERROR_NONE) sig = NULL;
  add(kind, sig, timed_out);
  if (sig) (*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
  if (k) (*jni)->DeleteLocalRef(jni, k);
}

static void JNICALL on_contended_enter(jvmtiEnv *e, JNIEnv *jni, jthread t, jobject obj) {
  monitor_event(jni, obj, "contended-enter", 0);
}
static void JNICALL on_contended_entered(jvmtiEnv *e, JNIEnv *jni, jthread t, jobject obj) {
  monitor_event(jni, obj, "contended-entered", 0);
}
static void JNICALL on_wait(jvmtiEnv *e, JNIEnv *jni, jthread t, jobject obj, jlong timeout) {
  monitor_event(jni, obj, "wait", 0);
}
static void JNICALL on_waited(jvmtiEnv *e, JNIEnv *jni, jthread t, jobject obj, jboolean timed_out) {
  monitor_event(jni, obj, "waited", timed_out ? 1 : 0);
}

/* The agent thread: sleeps on the raw monitor, wakes for each event counted, until VMDeath. */
static void JNICALL watcher(jvmtiEnv *e, JNIEnv *jni, void *arg) {
  (*jvmti)->RawMonitorEnter(jvmti, lock);
  ran = 1;
  (*jvmti)->RawMonitorNotifyAll(jvmti, lock); /* VMInit waits for this */
  while (!stop) {
    (*jvmti)->RawMonitorWait(jvmti, lock, 0);
    wakeups++;
    if (gcs_finished > gcs_seen) {
      gcs_seen = gcs_finished;
      gc_woke = 1;
    }
  }
  done = 1;
  (*jvmti)->RawMonitorNotifyAll(jvmti, lock);
  (*jvmti)->RawMonitorExit(jvmti, lock);
}

static void JNICALL on_vm_init(jvmtiEnv *e, JNIEnv *jni, jthread main_thread) {
  jclass tc = (*jni)->FindClass(jni, "java/lang/Thread");
  jmethodID init = tc ? (*jni)->GetMethodID(jni, tc, "<init>", "()V") : NULL;
  jobject t = init ? (*jni)->NewObject(jni, tc, init) : NULL;
  if (t == NULL) {
    (*jni)->ExceptionClear(jni);
    fprintf(stderr, "threadwatch: cannot make a java.lang.Thread\n");
    return;
  }
  agent_thread = (*jni)->NewGlobalRef(jni, t);
  jvmtiError err = (*jvmti)->RunAgentThread(jvmti, t, watcher, NULL, JVMTI_THREAD_MAX_PRIORITY);
  if (err != JVMTI_ERROR_NONE) fprintf(stderr, "threadwatch: RunAgentThread: error %d\n", (int)err);
  /* The watcher listens before the program's first instruction: a collection that finishes
   * before it first waited (and a VMDeath before it ever ran) would otherwise wake nobody. */
  (*jvmti)->RawMonitorEnter(jvmti, lock);
  for (int i = 0; err == JVMTI_ERROR_NONE && !ran && i < 100; i++) (*jvmti)->RawMonitorWait(jvmti, lock, 100);
  (*jvmti)->RawMonitorExit(jvmti, lock);
  if (opt_dump) {
    printf("threadwatch: ready\n");
    fflush(stdout);
  }
}

/* From the collector, the world stopped: no JNI, only raw monitors (and memory, storage). */
static void JNICALL on_gc_finish(jvmtiEnv *e) {
  (*jvmti)->RawMonitorEnter(jvmti, lock);
  gcs_finished++;
  (*jvmti)->RawMonitorNotify(jvmti, lock);
  (*jvmti)->RawMonitorExit(jvmti, lock);
}

static void JNICALL on_data_dump(jvmtiEnv *e) { add("data-dump", "request", 0); }

static int by_key(const void *a, const void *b) { return strcmp(((const count *)a)->key, ((const count *)b)->key); }

static void JNICALL on_vm_death(jvmtiEnv *e, JNIEnv *jni) {
  (*jvmti)->RawMonitorEnter(jvmti, lock);
  stop = 1;
  (*jvmti)->RawMonitorNotifyAll(jvmti, lock);
  for (int i = 0; ran && !done && i < 50; i++) (*jvmti)->RawMonitorWait(jvmti, lock, 100);
  qsort(counts, (size_t)ncounts, sizeof counts[0], by_key);
  for (int i = 0; i < ncounts; i++) {
    if (!strncmp(counts[i].key, "waited ", 7))
      printf("threadwatch: %s %ld timed-out %ld\n", counts[i].key, counts[i].n, counts[i].timed_out);
    else
      printf("threadwatch: %s %ld\n", counts[i].key, counts[i].n);
  }
  if (ran) printf("threadwatch: agent thread ran\n");
  if (gc_woke) printf("threadwatch: a collection woke the agent thread\n");
  fflush(stdout);
  (*jvmti)->RawMonitorExit(jvmti, lock);
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved) {
  for (char *opt = options ? strtok(options, ",") : NULL; opt; opt = strtok(NULL, ",")) {
    if (!strcmp(opt, "gc"))
      opt_gc = 1;
    else if (!strcmp(opt, "dump"))
      opt_dump = 1;
    else {
      fprintf(stderr, "threadwatch: unknown option '%s' (gc, dump)\n", opt);
      return 6;
    }
  }
  if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK) return 1;
  jvmtiCapabilities caps;
  memset(&caps, 0, sizeof caps);
  caps.can_generate_monitor_events = 1;
  caps.can_generate_garbage_collection_events = opt_gc;
  if ((*jvmti)->AddCapabilities(jvmti, &caps) != JVMTI_ERROR_NONE) {
    fprintf(stderr, "threadwatch: no monitor events in this VM\n");
    return 2;
  }
  if ((*jvmti)->CreateRawMonitor(jvmti, "threadwatch", &lock) != JVMTI_ERROR_NONE) return 3;
  jvmtiEventCallbacks cb;
  memset(&cb, 0, sizeof cb);
  cb.VMInit = on_vm_init;
  cb.VMDeath = on_vm_death;
  cb.ThreadStart = on_thread_start;
  cb.ThreadEnd = on_thread_end;
  cb.MonitorContendedEnter = on_contended_enter;
  cb.MonitorContendedEntered = on_contended_entered;
  cb.MonitorWait = on_wait;
  cb.MonitorWaited = on_waited;
  cb.GarbageCollectionFinish = on_gc_finish;
  cb.DataDumpRequest = on_data_dump;
  if ((*jvmti)->SetEventCallbacks(jvmti, &cb, (jint)sizeof cb) != JVMTI_ERROR_NONE) return 4;
  const jvmtiEvent evs[] = {JVMTI_EVENT_VM_INIT,
                            JVMTI_EVENT_VM_DEATH,
                            JVMTI_EVENT_THREAD_START,
                            JVMTI_EVENT_THREAD_END,
                            JVMTI_EVENT_MONITOR_CONTENDED_ENTER,
                            JVMTI_EVENT_MONITOR_CONTENDED_ENTERED,
                            JVMTI_EVENT_MONITOR_WAIT,
                            JVMTI_EVENT_MONITOR_WAITED};
  for (size_t i = 0; i < sizeof evs / sizeof evs[0]; i++)
    if ((*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, evs[i], NULL) != JVMTI_ERROR_NONE) return 5;
  if (opt_gc &&
      (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_GARBAGE_COLLECTION_FINISH, NULL) != 0)
    return 5;
  if (opt_dump && (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_DATA_DUMP_REQUEST, NULL) != 0)
    return 5;
  return 0;
}
