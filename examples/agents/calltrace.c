/* SPDX-License-Identifier: Apache-2.0 */
/* calltrace: a JVM TI agent that counts method calls, written for HotSpot against the JDK's own
 * jvmti.h; it runs unchanged in minivm (libddmc's JVM TI).
 *
 *   java   -agentpath:/path/libcalltrace.so=classes=Hello Hello
 *   minivm -agentpath:/path/libcalltrace.so=classes=Hello hello.mvm
 *
 * Options (comma-separated): classes=PREFIX counts only methods of classes whose name starts
 * with PREFIX (internal form: "com/example/"); exits also counts MethodExit events; idle enables
 * no event but VMDeath (the benchmarks' "agent loaded, nothing enabled").
 * At VMDeath it prints one line per method, most calls first, then by name:
 *   calltrace: 177 Hello.fib(I)I
 * and a total line. MethodEntry counts calls; with exits, "calltrace: exits N" follows, which
 * must equal the entries of those methods (every call returns or is popped by an exception).
 * The table is guarded by a raw monitor: callbacks come from every thread. */
#include <jvmti.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct entry {
  jmethodID method;
  long calls;
  int counted; /* of a class the filter keeps */
  char *name;  /* "Class.method(sig)" */
} entry;

static jrawMonitorID lock;
static entry *table;
static size_t cap, used;
static char prefix[256];
static int count_exits, idle;
static long exits;

static size_t slot_of(jmethodID m) {
  size_t h = ((size_t)m * 0x9E3779B97F4A7C15ull) >> 7;
  size_t i = h & (cap - 1);
  while (table[i].method != NULL && table[i].method != m) i = (i + 1) & (cap - 1);
  return i;
}

static void grow(void) {
  entry *old = table;
  size_t n = cap;
  cap = cap ? cap * 2 : 1024;
  table = calloc(cap, sizeof(entry));
  for (size_t i = 0; i < n; i++)
    if (old[i].method) table[slot_of(old[i].method)] = old[i];
  free(old);
}

/* The method's entry, named once (with the lock held). */
static entry *lookup(jvmtiEnv *jvmti, jmethodID m) {
  if ((used + 1) * 2 > cap) grow();
  entry *e = &table[slot_of(m)];
  if (e->method == NULL) {
    e->method = m;
    used++;
    char *name = NULL, *sig = NULL, *csig = NULL;
    jclass k = NULL;
    if ((*jvmti)->GetMethodName(jvmti, m, &name, &sig, NULL) == JVMTI_ERROR_NONE &&
        (*jvmti)->GetMethodDeclaringClass(jvmti, m, &k) == JVMTI_ERROR_NONE &&
        (*jvmti)->GetClassSignature(jvmti, k, &csig, NULL) == JVMTI_ERROR_NONE) {
      /* "LHello;" -> "Hello" */
      size_t cl = strlen(csig);
      const char *cn = csig[0] == 'L' ? csig + 1 : csig;
      size_t cnl = csig[0] == 'L' && cl >= 2 ? cl - 2 : cl;
      e->counted = strncmp(cn, prefix, strlen(prefix)) == 0;
      size_t len = cnl + strlen(name) + strlen(sig) + 2;
      e->name = malloc(len + 1);
      snprintf(e->name, len + 1, "%.*s.%s%s", (int)cnl, cn, name, sig);
      for (char *p = e->name; *p && p < e->name + cnl; p++)
        if (*p == '/') *p = '.';
    }
    if (name) (*jvmti)->Deallocate(jvmti, (unsigned char *)name);
    if (sig) (*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
    if (csig) (*jvmti)->Deallocate(jvmti, (unsigned char *)csig);
  }
  return e;
}

static void JNICALL on_entry(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jmethodID method) {
  (*jvmti)->RawMonitorEnter(jvmti, lock);
  lookup(jvmti, method)->calls++;
  (*jvmti)->RawMonitorExit(jvmti, lock);
}

static void JNICALL on_exit_(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread, jmethodID method,
                             jboolean popped, jvalue value) {
  (*jvmti)->RawMonitorEnter(jvmti, lock);
  if (lookup(jvmti, method)->counted) exits++;
  (*jvmti)->RawMonitorExit(jvmti, lock);
}

static int by_calls(const void *a, const void *b) {
  const entry *x = *(const entry *const *)a, *y = *(const entry *const *)b;
  if (x->calls != y->calls) return x->calls < y->calls ? 1 : -1;
  return strcmp(x->name, y->name);
}

static void JNICALL on_death(jvmtiEnv *jvmti, JNIEnv *jni) {
  (*jvmti)->RawMonitorEnter(jvmti, lock);
  entry **v = malloc(sizeof(entry *) * (used + 1));
  size_t n = 0;
  long total = 0;
  for (size_t i = 0; i < cap; i++)
    if (table[i].method && table[i].counted && table[i].name) {
      v[n++] = &table[i];
      total += table[i].calls;
    }
  qsort(v, n, sizeof(entry *), by_calls);
  for (size_t i = 0; i < n; i++) printf("calltrace: %ld %s\n", v[i]->calls, v[i]->name);
  printf("calltrace: total %ld calls of %zu methods\n", total, n);
  if (count_exits) printf("calltrace: exits %ld\n", exits);
  free(v);
  (*jvmti)->RawMonitorExit(jvmti, lock);
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved) {
  jvmtiEnv *jvmti = NULL;
  if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_11) != JNI_OK || jvmti == NULL) {
    fprintf(stderr, "calltrace: no JVM TI 11 environment\n");
    return 1;
  }
  for (char *opt = options ? strtok(options, ",") : NULL; opt; opt = strtok(NULL, ",")) {
    if (strncmp(opt, "classes=", 8) == 0)
      snprintf(prefix, sizeof prefix, "%s", opt + 8);
    else if (strcmp(opt, "exits") == 0)
      count_exits = 1;
    else if (strcmp(opt, "idle") == 0)
      idle = 1;
    else {
      fprintf(stderr, "calltrace: unknown option '%s'\n", opt);
      return 2;
    }
  }
  jvmtiCapabilities caps;
  memset(&caps, 0, sizeof caps);
  caps.can_generate_method_entry_events = 1;
  caps.can_generate_method_exit_events = count_exits;
  jvmtiError err = (*jvmti)->AddCapabilities(jvmti, &caps);
  if (err != JVMTI_ERROR_NONE) {
    char *msg = NULL;
    (*jvmti)->GetErrorName(jvmti, err, &msg);
    fprintf(stderr, "calltrace: AddCapabilities: %s\n", msg ? msg : "?");
    return 3;
  }
  jvmtiEventCallbacks cb;
  memset(&cb, 0, sizeof cb);
  cb.MethodEntry = on_entry;
  cb.MethodExit = on_exit_;
  cb.VMDeath = on_death;
  (*jvmti)->SetEventCallbacks(jvmti, &cb, (jint)sizeof cb);
  (*jvmti)->CreateRawMonitor(jvmti, "calltrace", &lock);
  if (!idle) (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_METHOD_ENTRY, NULL);
  if (count_exits) (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_METHOD_EXIT, NULL);
  (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_DEATH, NULL);
  grow();
  return 0;
}
