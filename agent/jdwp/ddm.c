/* SPDX-License-Identifier: Apache-2.0 */
/* libddmc's VM ops (ddmc_vm_ops) from JVM TI: the threads and stacks DDM shows (THST, STKL) and
 * the JDWP debugger enumerates, the JDWP thread's life, exit, the library's log lines, and who
 * the VM is for HELO. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "ja.h"

static void ti_free(void *p) {
  if (p) (*ja.ti)->Deallocate(ja.ti, (unsigned char *)p);
}

static void jdwp_thread_start(void *vd) {
  ja_mark_internal();
  (void)ja_env();
}

/* The JDWP thread stays attached: it ends at VM death at the earliest, when detaching could wait
 * for a VM that is going away. */
static void jdwp_thread_end(void *vd) {}

/* DDM EXIT: the JVM ends as System.exit(status) ends it (shutdown hooks, VMDeath, HotSpot's own
 * clean-up such as its hsperfdata file), but from a thread of its own, not the JDWP thread that
 * asks: System.exit posts VMDeath on the thread that calls it, and the agent's VMDeath stops
 * libddmc, which waits for the JDWP thread to end; on the JDWP thread that wait would be on
 * itself. The helper is a daemon, so the JVM does not wait for it; the JDWP thread returns at
 * once and answers EXIT before the connection closes. If no thread can be made, the process ends
 * at once, as the JDK's agent ends it for JDWP's VirtualMachine.Exit. */
static void *exit_main(void *arg) {
  jint status = (jint)(intptr_t)arg;
  JNIEnv *env = ja_env();
  jclass sys = env ? (*env)->FindClass(env, "java/lang/System") : NULL;
  jmethodID ex = sys ? (*env)->GetStaticMethodID(env, sys, "exit", "(I)V") : NULL;
  if (ex) (*env)->CallStaticVoidMethod(env, sys, ex, status);
  /* System.exit returned: it threw (a security manager said no) or the VM is already going. */
  if (env) (*env)->ExceptionClear(env);
  return NULL;
}

static void vm_exit(void *vd, int32_t status) {
  pthread_t t;
  pthread_attr_t a;
  pthread_attr_init(&a);
  pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
  int rc = pthread_create(&t, &a, exit_main, (void *)(intptr_t)status);
  pthread_attr_destroy(&a);
  if (rc != 0) {
    fflush(NULL);
    _exit(status);
  }
}

static ddmc_thread_status ddm_status(jint st) {
  if (!(st & JVMTI_THREAD_STATE_ALIVE)) return DDMC_THREAD_ZOMBIE;
  if (st & JVMTI_THREAD_STATE_SUSPENDED) return DDMC_THREAD_SUSPENDED;
  if (st & JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER) return DDMC_THREAD_MONITOR;
  if (st & JVMTI_THREAD_STATE_SLEEPING) return DDMC_THREAD_SLEEPING;
  if (st & JVMTI_THREAD_STATE_IN_OBJECT_WAIT) return DDMC_THREAD_WAIT;
  if (st & JVMTI_THREAD_STATE_WAITING_WITH_TIMEOUT) return DDMC_THREAD_SLEEPING;
  if (st & JVMTI_THREAD_STATE_WAITING) return DDMC_THREAD_WAIT;
  if (st & JVMTI_THREAD_STATE_IN_NATIVE) return DDMC_THREAD_NATIVE;
  return DDMC_THREAD_RUNNING;
}

/* THNM. JVM TI has no event for Thread.setName, so renames are seen where names are read: each
 * walk of the thread table (THST, the sampler, a DDM peer's thread list) compares a thread's name
 * with the one it had at the last walk and sends THNM when it changed. One slot a thread id
 * (id % NAME_SLOTS; a collision only forgets the other thread's name, never reports a false
 * rename): the id in the top bits and a hash of the name below, swapped atomically, since the
 * JDWP thread and the sampler may walk at once. */
#define NAME_SLOTS 4096
static _Atomic uint64_t g_names[NAME_SLOTS];

static void note_name(uint32_t id, const char *name) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a, cut to 32 bits below the id (ids are 32 bits) */
  for (const char *c = name; *c; c++) h = (h ^ (uint8_t)*c) * 1099511628211ull;
  uint64_t now = ((uint64_t)id << 32) | (h & 0xffffffffu);
  uint64_t was = atomic_exchange_explicit(&g_names[id % NAME_SLOTS], now, memory_order_relaxed);
  if ((was >> 32) == (uint64_t)id && was != now) ddmc_notify_thread_name(ja.vm, id, name);
}

static int for_each_thread(void *vd, ddmc_thread_visit_fn fn, void *arg) {
  JNIEnv *env = ja_enter();
  if (env == NULL) return 0;
  jint n = 0;
  jthread *ts = NULL;
  int rc = 0;
  if ((*ja.ti)->GetAllThreads(ja.ti, &n, &ts) == JVMTI_ERROR_NONE) {
    for (jint i = 0; i < n; i++) {
      uint32_t id = (uint32_t)ja_ref(env, ts[i]);
      ja_tstate *e = ja_tstate_of(id);
      jvmtiThreadInfo info;
      jint st = 0;
      memset(&info, 0, sizeof info);
      if (rc == 0 && e && !ja_is_internal(id) &&
          (*ja.ti)->GetThreadInfo(ja.ti, ts[i], &info) == JVMTI_ERROR_NONE) {
        (*ja.ti)->GetThreadState(ja.ti, ts[i], &st);
        ddmc_thread_status status = atomic_load_explicit(&e->parked, memory_order_relaxed) && (st & JVMTI_THREAD_STATE_ALIVE)
                                        ? DDMC_THREAD_SUSPENDED
                                        : ddm_status(st);
        ddmc_thread_info t = {id, 0, info.name ? info.name : "", status, info.is_daemon};
        note_name(id, t.name);
        rc = fn(arg, &t);
        ti_free(info.name);
        if (info.thread_group) (*env)->DeleteLocalRef(env, info.thread_group);
        if (info.context_class_loader) (*env)->DeleteLocalRef(env, info.context_class_loader);
      }
      (*env)->DeleteLocalRef(env, ts[i]);
    }
    ti_free(ts);
  }
  ja_leave(env);
  return rc;
}

/* "Ljava/lang/String;" as "java.lang.String" into out. */
static void class_name(const char *sig, char *out, size_t n) {
  if (sig[0] == 'L') sig++;
  size_t k = 0;
  for (; *sig && *sig != ';' && k + 1 < n; sig++) out[k++] = *sig == '/' ? '.' : *sig;
  out[k] = 0;
}

static int32_t line_of(jmethodID m, jlocation l) {
  jint n = 0;
  jvmtiLineNumberEntry *t = NULL;
  int32_t line = -1;
  jlocation best = -1;
  if (l < 0 || (*ja.ti)->GetLineNumberTable(ja.ti, m, &n, &t) != JVMTI_ERROR_NONE) return -1;
  for (jint i = 0; i < n; i++) {
    if (t[i].start_location <= l && t[i].start_location >= best) {
      best = t[i].start_location;
      line = t[i].line_number;
    }
  }
  ti_free(t);
  return line;
}

static int thread_stack(void *vd, uint32_t id, ddmc_frame_visit_fn fn, void *arg) {
  jthread t = ja_thread(id);
  if (t == NULL) return DDMC_ENOENT;
  JNIEnv *env = ja_enter();
  if (env == NULL) return DDMC_ENOENT;
  jvmtiFrameInfo frames[128];
  jint n = 0;
  int rc = 0;
  if ((*ja.ti)->GetStackTrace(ja.ti, t, 0, 128, frames, &n) != JVMTI_ERROR_NONE) n = 0;
  for (jint i = 0; i < n && rc == 0; i++) {
    jclass k = NULL;
    char *csig = NULL, *src = NULL, *mname = NULL, *msig = NULL, cname[512];
    if ((*ja.ti)->GetMethodDeclaringClass(ja.ti, frames[i].method, &k) != JVMTI_ERROR_NONE) continue;
    (*ja.ti)->GetClassSignature(ja.ti, k, &csig, NULL);
    if (ja.caps.can_get_source_file_name) (*ja.ti)->GetSourceFileName(ja.ti, k, &src);
    (*ja.ti)->GetMethodName(ja.ti, frames[i].method, &mname, &msig, NULL);
    class_name(csig ? csig : "?", cname, sizeof cname);
    ddmc_frame f = {cname, mname ? mname : "?", src, line_of(frames[i].method, frames[i].location), msig};
    rc = fn(arg, &f);
    ti_free(csig);
    ti_free(src);
    ti_free(mname);
    ti_free(msig);
    (*env)->DeleteLocalRef(env, k);
  }
  ja_leave(env);
  return rc;
}

static void log_line(void *vd, ddmc_log_level level, const char *msg) {
  /* The JDK's agent announces its port on stdout with this line; launchers and IDEs wait for it,
   * so this agent prints the same, and as it does, not with quiet=y nor with launch= (the
   * launched command gets the address instead). */
  if (!strncmp(msg, "JDWP listening on ", 18) && ja.opt.transport == DDMC_TRANSPORT_SOCKET && !ja.opt.quiet &&
      !ja.opt.launch[0] && !atomic_exchange(&ja.announced, 1)) {
    const char *port = strrchr(msg, ':');
    printf("Listening for transport dt_socket at address: %s\n", port ? port + 1 : "?");
    fflush(stdout);
  }
  if (ja.verbose || level >= DDMC_LOG_WARN) fprintf(stderr, "ddmcjdwp: %s\n", msg);
}

/* HPIF from java.lang.Runtime: the managed heap's limit, size and use (object counts are not
 * known without a heap walk: 0). */
static int heap_info(void *vd, int heap, ddmc_heap_info *out) {
  if (heap != DDMC_HEAP_MANAGED) return DDMC_ENOENT;
  JNIEnv *env = ja_enter();
  if (env == NULL) return DDMC_ENOENT;
  int rc = DDMC_ENOENT;
  jclass rt = (*env)->FindClass(env, "java/lang/Runtime");
  jmethodID get = rt ? (*env)->GetStaticMethodID(env, rt, "getRuntime", "()Ljava/lang/Runtime;") : NULL;
  jmethodID max = rt ? (*env)->GetMethodID(env, rt, "maxMemory", "()J") : NULL;
  jmethodID total = rt ? (*env)->GetMethodID(env, rt, "totalMemory", "()J") : NULL;
  jmethodID free_ = rt ? (*env)->GetMethodID(env, rt, "freeMemory", "()J") : NULL;
  jobject r = get ? (*env)->CallStaticObjectMethod(env, rt, get) : NULL;
  if (r && max && total && free_) {
    jlong mx = (*env)->CallLongMethod(env, r, max), t = (*env)->CallLongMethod(env, r, total),
          f = (*env)->CallLongMethod(env, r, free_);
    if (!(*env)->ExceptionCheck(env)) {
      memset(out, 0, sizeof *out);
      out->max_bytes = (uint64_t)mx;
      out->footprint = (uint64_t)t;
      out->allocated_bytes = (uint64_t)(t - f);
      rc = 0;
    }
  }
  (*env)->ExceptionClear(env);
  ja_leave(env);
  return rc;
}

/* THST's CPU times (the JVM gives DDM no tid, so the library cannot read /proc): JVM TI knows one
 * total a thread, shown as utime. */
static int thread_cpu_time(void *vd, uint32_t id, uint64_t *user_ns, uint64_t *system_ns) {
  (void)vd;
  *user_ns = *system_ns = 0;
  if (!ja.caps.can_get_thread_cpu_time) return DDMC_ENOTSUP;
  jthread t = ja_thread(id);
  jlong ns = 0;
  if (t == NULL || (*ja.ti)->GetThreadCpuTime(ja.ti, t, &ns) != JVMTI_ERROR_NONE || ns < 0) return DDMC_ENOENT;
  *user_ns = (uint64_t)ns;
  return 0;
}

void ja_ddm_ops(ddmc_vm_ops *ops) {
  memset(ops, 0, sizeof *ops);
  ops->jdwp_thread_start = jdwp_thread_start;
  ops->jdwp_thread_end = jdwp_thread_end;
  ops->exit = vm_exit;
  ops->for_each_thread = for_each_thread;
  ops->thread_stack = thread_stack;
  ops->heap_info = heap_info;
  ops->request_gc = ja_request_gc;
  ops->log = log_line;
  ops->thread_cpu_time = thread_cpu_time;
}

static char *prop(const char *key) {
  char *v = NULL;
  if ((*ja.ti)->GetSystemProperty(ja.ti, key, &v) != JVMTI_ERROR_NONE) return NULL;
  return v;
}

void ja_ddm_ident(void) {
  /* os.arch is not among the VM's own properties yet at VMInit: the kernel's name for the
   * machine instead. */
  struct utsname u;
  const char *arch = uname(&u) == 0 ? u.machine : NULL;
  char *name = prop("java.vm.name"), *version = prop("java.vm.version");
  char *cmd = prop("sun.java.command");
  char vm_name[512], abi[128];
  snprintf(vm_name, sizeof vm_name, "%s %s", name ? name : "Java VM", version ? version : "");
  snprintf(abi, sizeof abi, "%d-bit (%s)", (int)(sizeof(void *) * 8), arch ? arch : "unknown");
  ddmc_vm_ident id = {vm_name, abi, "", 0, 0};
  ddmc_vm_set_ident(ja.vm, &id);
  if (cmd && cmd[0]) {
    /* The main class or jar, as DDM shows an app's name. */
    char *sp = strchr(cmd, ' ');
    if (sp) *sp = 0;
    ddmc_notify_app_name(ja.vm, cmd, NULL, 0);
  }
  ti_free(name);
  ti_free(version);
  ti_free(cmd);
}
