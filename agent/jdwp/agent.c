/* SPDX-License-Identifier: Apache-2.0 */
/* libddmcjdwp.so's entry points: java -agentlib:ddmcjdwp=OPTIONS or
 * -agentpath:PATH/libddmcjdwp.so=OPTIONS, OPTIONS being the JDWP option string
 * (transport=dt_socket|dt_android_adb, address, server, suspend: ddmc/options.h).
 *
 * Order. Agent_OnLoad parses the options, takes the capabilities the agent can use out of what
 * HotSpot grants, creates the ddmc_vm with the VM ops (ddm.c), installs the bridge built from
 * those capabilities (an op whose capability is missing stays NULL, so the library answers
 * NOT_IMPLEMENTED and its capability replies say no) and enables the debugger. VMInit, on the
 * thread that will run main, names that thread VM_START's and starts JDWP: with suspend=y it
 * waits there, in native code, until a debugger has connected. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddmc/profile.h"
#include "ja.h"

static void JNICALL on_vm_init(jvmtiEnv *ti, JNIEnv *env, jthread thread) {
  ja_known_init(env);
  ja.main_thread = (uint32_t)ja_ref(env, thread);
  ja_ddm_ident();
  atomic_store_explicit(&ja.live, 1, memory_order_release);
  ja_heap_start();
  ja_ddmserver_start(env);
  /* With suspend=y, VM_START stops main here: at the gate where this callback returns, before
   * its first instruction. */
  uint32_t id = ja_callback_enter(env, thread);
  int rc = ddmc_vm_start(ja.vm);
  if (rc != 0) {
    /* As the JDK's agent does when its transport cannot start: the VM does not run unobserved. */
    fprintf(stderr, "ERROR: ddmcjdwp: cannot start JDWP (%s)\n", ddmc_strerror(rc));
    fflush(NULL);
    exit(2);
  }
  ja_callback_leave(id);
}

static void JNICALL on_vm_death(jvmtiEnv *ti, JNIEnv *env) {
  ddmc_post_vm_death(ja.vm, 2000);
  atomic_store_explicit(&ja.live, 0, memory_order_release);
  /* The session ends while JVM TI still answers (breakpoints and steps are undone through it). */
  ddmc_vm_stop(ja.vm);
}

/* The capabilities the bridge can use, where HotSpot has them. Tags are the one it cannot do
 * without (ja.h, "Names"). */
static int take_capabilities(void) {
  jvmtiCapabilities pot, want;
  memset(&pot, 0, sizeof pot);
  memset(&want, 0, sizeof want);
  if ((*ja.ti)->GetPotentialCapabilities(ja.ti, &pot) != JVMTI_ERROR_NONE) return -1;
  if (!pot.can_tag_objects) return -1;
  want.can_tag_objects = 1;
#define TAKE(c) want.c = pot.c
  TAKE(can_get_source_file_name);
  TAKE(can_get_line_numbers);
  TAKE(can_access_local_variables);
  TAKE(can_maintain_original_method_order); /* JDWP lists methods in class file order */
  TAKE(can_get_synthetic_attribute);
  TAKE(can_generate_single_step_events);
  TAKE(can_generate_exception_events);
  TAKE(can_generate_breakpoint_events);
  TAKE(can_suspend);
  TAKE(can_signal_thread);
  TAKE(can_generate_method_entry_events);
  TAKE(can_generate_method_exit_events);
  TAKE(can_generate_field_access_events);
  TAKE(can_generate_field_modification_events);
  TAKE(can_get_owned_monitor_info);
  TAKE(can_get_owned_monitor_stack_depth_info);
  TAKE(can_get_current_contended_monitor);
  TAKE(can_get_monitor_info);
  TAKE(can_generate_monitor_events);
  TAKE(can_generate_sampled_object_alloc_events);
  TAKE(can_generate_garbage_collection_events); /* HPIF at the next GC (heap.c) */
  TAKE(can_get_thread_cpu_time);                /* THST's utime (ddm.c) */
  /* What libjdwp takes at OnLoad too: HotSwap, Drop Frame, Force Return (mutate.c); HotSpot
   * charges nothing for them until they are used (bench/run.sh hotspot, the idle rows). */
  TAKE(can_redefine_classes);
  TAKE(can_pop_frame);
  TAKE(can_force_early_return);
  TAKE(can_get_bytecodes);                      /* Method.Bytecodes (reflect.c) */
  TAKE(can_get_constant_pool);                  /* ReferenceType.ConstantPool */
  TAKE(can_get_source_debug_extension);         /* strata (SMAP); HotSpot keeps the attribute only with it */
#undef TAKE
  if ((*ja.ti)->AddCapabilities(ja.ti, &want) != JVMTI_ERROR_NONE) return -1;
  return (*ja.ti)->GetCapabilities(ja.ti, &ja.caps) == JVMTI_ERROR_NONE ? 0 : -1;
}

/* DDMC_JDWP_STALL_TIMEOUT_MS: ddmc_options.stall_timeout_ms (how long a peer may read nothing
 * while output waits for it; 0: for ever). From the environment, not OPTIONS: the option string is
 * the JDK's and Dalvik's, and this is libddmc's own tunable (tests shorten it). */
static int stall_timeout_from_env(ddmc_options *o) {
  const char *v = getenv("DDMC_JDWP_STALL_TIMEOUT_MS");
  if (v == NULL || v[0] == '\0') return 0;
  char *end;
  errno = 0;
  long ms = strtol(v, &end, 10);
  if (errno != 0 || *end != '\0' || ms < 0 || ms > INT_MAX) {
    fprintf(stderr, "ERROR: ddmcjdwp: DDMC_JDWP_STALL_TIMEOUT_MS '%s' is not 0-%d milliseconds\n", v, INT_MAX);
    return -1;
  }
  o->stall_timeout_ms = (int)ms;
  return 0;
}

/* DDMC_JDWP_HPROF_MAX_MB: ddmc_prof_config.hprof_max_bytes in MiB (the biggest heap dump the
 * agent builds; libddmc's default is 512 MiB, its bound 4094 MiB). From the environment for the
 * same reason as the stall timeout. */
static int hprof_max_from_env(ddmc_vm *vm) {
  const char *v = getenv("DDMC_JDWP_HPROF_MAX_MB");
  if (v == NULL || v[0] == '\0') return 0;
  char *end;
  errno = 0;
  long mb = strtol(v, &end, 10);
  ddmc_prof_config c;
  ddmc_prof_config_init(&c);
  if (errno == 0 && *end == '\0' && mb >= 1 && mb <= 4094) c.hprof_max_bytes = (uint64_t)mb << 20;
  if (c.hprof_max_bytes != (uint64_t)mb << 20 || ddmc_prof_configure(vm, &c) != 0) {
    fprintf(stderr, "ERROR: ddmcjdwp: DDMC_JDWP_HPROF_MAX_MB '%s' is not 1-4094 MiB\n", v);
    return -1;
  }
  return 0;
}

/* Set by the first Agent_OnLoad / Agent_OnAttach for good. HotSpot calls Agent_OnAttach again at
 * each `jcmd PID JVMTI.agent_load` of this file (the library is loaded once), also into a VM
 * started with -agentpath:libddmcjdwp.so; a second start would wipe the running one's state. */
static atomic_int entered;

/* The agent's own options, taken out of OPTIONS before libddmc parses the rest: names=N, the
 * bound on objects the table names at once (agent/README.md). Returns 0, or -1 with err. */
static int agent_options(const char *options, char *rest, size_t cap, char *err, size_t errcap) {
  size_t k = 0;
  rest[0] = '\0';
  for (const char *p = options; *p;) {
    const char *end = strchr(p, ',');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    if (n > 6 && strncmp(p, "names=", 6) == 0) {
      char num[24];
      char *stop = NULL;
      snprintf(num, sizeof num, "%.*s", (int)(n - 6), p + 6);
      unsigned long long v = strtoull(num, &stop, 10);
      if (n - 6 >= sizeof num || *stop != '\0' || num[0] == '-' || ja_set_max_names(v) != 0) {
        snprintf(err, errcap, "names=%.*s: a number of objects from 1 to %u", (int)(n - 6), p + 6,
                 JA_MAX_SLOTS - (1u << 18));
        return -1;
      }
    } else {
      if (k + n + 2 > cap) {
        snprintf(err, errcap, "options too long");
        return -1;
      }
      if (k) rest[k++] = ',';
      memcpy(rest + k, p, n);
      rest[k += n] = '\0';
    }
    p += n + (end ? 1 : 0);
  }
  return 0;
}

static int init(JavaVM *jvm, const char *options, int attach) {
  char err[256];
  static char rest[4096];
  if (atomic_exchange(&entered, 1)) {
    fprintf(stderr, "ERROR: ddmcjdwp: already loaded in this VM: one agent per process\n");
    return JNI_ERR;
  }
  memset(&ja, 0, sizeof ja);
  ja.jvm = jvm;
  const char *v = getenv("DDMC_JDWP_VERBOSE");
  ja.verbose = v && v[0] && strcmp(v, "0") != 0;
  ddmc_options_init(&ja.opt);
  if (agent_options(options ? options : "", rest, sizeof rest, err, sizeof err) != 0) {
    fprintf(stderr, "ERROR: ddmcjdwp: %s\n", err);
    return JNI_ERR;
  }
  if (ddmc_options_parse(&ja.opt, rest, err, sizeof err) != 0) {
    if (ja.opt.help) {
      printf("%s", ddmc_options_help());
      fflush(stdout);
    } else {
      fprintf(stderr, "ERROR: ddmcjdwp: %s\n", err);
    }
    return JNI_ERR;
  }
  if (attach) ja.opt.suspend = 0;
  if (stall_timeout_from_env(&ja.opt) != 0) return JNI_ERR;
  if ((*jvm)->GetEnv(jvm, (void **)&ja.ti, JVMTI_VERSION_1_2) != JNI_OK || ja.ti == NULL) {
    fprintf(stderr, "ERROR: ddmcjdwp: the VM offers no JVM TI 1.2 environment\n");
    return JNI_ERR;
  }
  if (take_capabilities() != 0) {
    fprintf(stderr, "ERROR: ddmcjdwp: the VM cannot tag objects (can_tag_objects)\n");
    return JNI_ERR;
  }
  jvmtiEventCallbacks cb;
  memset(&cb, 0, sizeof cb);
  ja_events_callbacks(&cb);
  ja_heap_callbacks(&cb);
  cb.VMInit = on_vm_init;
  cb.VMDeath = on_vm_death;
  if ((*ja.ti)->SetEventCallbacks(ja.ti, &cb, (jint)sizeof cb) != JVMTI_ERROR_NONE || ja_events_enable() != 0) {
    fprintf(stderr, "ERROR: ddmcjdwp: cannot enable JVM TI events\n");
    return JNI_ERR;
  }

  ddmc_vm_ops ops;
  ja_ddm_ops(&ops);
  int rc = ddmc_vm_new(&ja.vm, &ja.opt, &ops, NULL, NULL);
  ddmc_vm_bridge b;
  memset(&b, 0, sizeof b);
  ja_bridge_members(&b);
  ja_bridge_values(&b);
  ja_bridge_threads(&b);
  ja_bridge_control(&b);
  ja_bridge_suspend(&b);
  ja_bridge_invoke(&b);
  ja_bridge_mutate(&b);
  ja_bridge_heap(&b);
  ja_bridge_hdump(&b);
  ja_bridge_memview(&b);
  ja_bridge_reflect(&b);
  if (rc == 0 && hprof_max_from_env(ja.vm) != 0) return JNI_ERR;
  if (rc == 0) ja_heap_init();
  if (rc == 0) rc = ddmc_vm_set_bridge(ja.vm, &b, NULL);
  if (rc == 0) rc = ddmc_dbg_enable(ja.vm);
  if (rc != 0) {
    fprintf(stderr, "ERROR: ddmcjdwp: %s\n", ddmc_strerror(rc));
    return JNI_ERR;
  }
  return JNI_OK;
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *jvm, char *options, void *reserved) { return init(jvm, options, 0); }

/* Loaded into a running VM (jcmd PID JVMTI.agent_load): no VMInit comes, so JDWP starts now and
 * VM_START names the thread called "main" if there is one. suspend=y cannot hold a VM that has
 * long started: it is treated as suspend=n. */
JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *jvm, char *options, void *reserved) {
  if (init(jvm, options, 1) != JNI_OK) return JNI_ERR;
  JNIEnv *env = ja_env();
  if (env) ja_known_init(env);
  jint n = 0;
  jthread *ts = NULL;
  if (env && (*ja.ti)->GetAllThreads(ja.ti, &n, &ts) == JVMTI_ERROR_NONE) {
    for (jint i = 0; i < n; i++) {
      jvmtiThreadInfo info;
      memset(&info, 0, sizeof info);
      if (!ja.main_thread && (*ja.ti)->GetThreadInfo(ja.ti, ts[i], &info) == JVMTI_ERROR_NONE && info.name &&
          !strcmp(info.name, "main"))
        ja.main_thread = (uint32_t)ja_ref(env, ts[i]);
      if (info.name) (*ja.ti)->Deallocate(ja.ti, (unsigned char *)info.name);
    }
    (*ja.ti)->Deallocate(ja.ti, (unsigned char *)ts);
  }
  ja_ddm_ident();
  atomic_store_explicit(&ja.live, 1, memory_order_release);
  ja_heap_start();
  ja_ddmserver_start(env);
  int rc = ddmc_vm_start(ja.vm);
  if (rc != 0) {
    fprintf(stderr, "ERROR: ddmcjdwp: cannot start JDWP (%s)\n", ddmc_strerror(rc));
    return JNI_ERR;
  }
  return JNI_OK;
}

JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *jvm) {}
