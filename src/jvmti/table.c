/* SPDX-License-Identifier: Apache-2.0 */
/* The tables an agent calls through: jvmtiInterface_1_ (slot n at index n - 1, as jvmti.h lays
 * it out), the JavaVM's JNIInvokeInterface_, and JavaVM->GetEnv, which makes environments.
 *
 * Every slot this library does not implement holds not_available, which returns
 * JVMTI_ERROR_NOT_AVAILABLE: the stub takes only the environment and ignores the rest, which
 * every C calling convention this library builds for allows (the caller pushes and pops the
 * arguments). tests/jvmti/test_jvmti_abi.c checks each implemented slot against the JDK's
 * jvmti.h offset by offset. */
#include <string.h>

#include "jvmti/funcs.h"

static jvmtiError not_available(ddmc__jv_jenv *e) {
  if (e == NULL || e->jv == NULL) return JVMTI_ERROR_INVALID_ENVIRONMENT;
  return JVMTI_ERROR_NOT_AVAILABLE;
}

#define S(n, name) [(n)-1] = (ddmc__jv_fnptr)ddmc__jv_jt_##name
static const ddmc__jv_fnptr g_impl[DDMC__JVMTI_SLOTS] = {
    S(2, SetEventNotificationMode),
    S(4, GetAllThreads),
    S(9, GetThreadInfo),
    S(5, SuspendThread),
    S(6, ResumeThread),
    S(10, GetOwnedMonitorInfo),
    S(11, GetCurrentContendedMonitor),
    S(12, RunAgentThread),
    S(13, GetTopThreadGroups),
    S(14, GetThreadGroupInfo),
    S(15, GetThreadGroupChildren),
    S(16, GetFrameCount),
    S(17, GetThreadState),
    S(18, GetCurrentThread),
    S(19, GetFrameLocation),
    S(21, GetLocalObject),
    S(22, GetLocalInt),
    S(23, GetLocalLong),
    S(24, GetLocalFloat),
    S(25, GetLocalDouble),
    S(26, SetLocalObject),
    S(27, SetLocalInt),
    S(28, SetLocalLong),
    S(29, SetLocalFloat),
    S(30, SetLocalDouble),
    S(31, CreateRawMonitor),
    S(32, DestroyRawMonitor),
    S(33, RawMonitorEnter),
    S(34, RawMonitorExit),
    S(35, RawMonitorWait),
    S(36, RawMonitorNotify),
    S(37, RawMonitorNotifyAll),
    S(38, SetBreakpoint),
    S(39, ClearBreakpoint),
    S(41, SetFieldAccessWatch),
    S(42, ClearFieldAccessWatch),
    S(43, SetFieldModificationWatch),
    S(44, ClearFieldModificationWatch),
    S(46, Allocate),
    S(47, Deallocate),
    S(48, GetClassSignature),
    S(49, GetClassStatus),
    S(50, GetSourceFileName),
    S(51, GetClassModifiers),
    S(52, GetClassMethods),
    S(53, GetClassFields),
    S(54, GetImplementedInterfaces),
    S(55, IsInterface),
    S(56, IsArrayClass),
    S(57, GetClassLoader),
    S(59, GetObjectMonitorUsage),
    S(60, GetFieldName),
    S(61, GetFieldDeclaringClass),
    S(62, GetFieldModifiers),
    S(64, GetMethodName),
    S(65, GetMethodDeclaringClass),
    S(66, GetMethodModifiers),
    S(68, GetMaxLocals),
    S(69, GetArgumentsSize),
    S(70, GetLineNumberTable),
    S(71, GetMethodLocation),
    S(72, GetLocalVariableTable),
    S(76, IsMethodNative),
    S(78, GetLoadedClasses),
    S(88, GetVersionNumber),
    S(89, GetCapabilities),
    S(91, IsMethodObsolete),
    S(92, SuspendThreadList),
    S(93, ResumeThreadList),
    S(100, GetAllStackTraces),
    S(104, GetStackTrace),
    S(122, SetEventCallbacks),
    S(123, GenerateEvents),
    S(127, DisposeEnvironment),
    S(128, GetErrorName),
    S(129, GetJLocationFormat),
    S(130, GetSystemProperties),
    S(131, GetSystemProperty),
    S(132, SetSystemProperty),
    S(133, GetPhase),
    S(138, GetTimerInfo),
    S(139, GetTime),
    S(140, GetPotentialCapabilities),
    S(142, AddCapabilities),
    S(143, RelinquishCapabilities),
    S(144, GetAvailableProcessors),
    S(147, GetEnvironmentLocalStorage),
    S(148, SetEnvironmentLocalStorage),
    S(150, SetVerboseFlag),
    S(153, GetOwnedMonitorStackDepthInfo),
    S(155, GetLocalInstance),
    /* mutate.c */
    S(80, PopFrame),
    S(81, ForceEarlyReturnObject),
    S(82, ForceEarlyReturnInt),
    S(83, ForceEarlyReturnLong),
    S(84, ForceEarlyReturnFloat),
    S(85, ForceEarlyReturnDouble),
    S(86, ForceEarlyReturnVoid),
    S(87, RedefineClasses),
    /* reflection: reflect.c */
    S(3, GetAllModules),
    S(75, GetBytecodes),
    S(90, GetSourceDebugExtension),
    S(145, GetClassVersionNumbers),
    S(146, GetConstantPool),
    /* heap: tags.c, heap.c */
    S(58, GetObjectHashCode),
    S(106, GetTag),
    S(107, SetTag),
    S(108, ForceGarbageCollection),
    S(114, GetObjectsWithTags),
    S(115, FollowReferences),
    S(116, IterateThroughHeap),
    S(154, GetObjectSize),
};
#undef S

static ddmc__jv_fnptr g_table[DDMC__JVMTI_SLOTS];
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void build(void) {
  for (int i = 0; i < DDMC__JVMTI_SLOTS; i++) g_table[i] = g_impl[i] ? g_impl[i] : (ddmc__jv_fnptr)not_available;
  g_table[0] = NULL; /* slot 1: reserved */
}

const ddmc__jv_fnptr *ddmc__jv_functions(void) {
  pthread_once(&g_once, build);
  return g_table;
}

int ddmc__jv_slot_implemented(int slot) { return slot >= 1 && slot <= DDMC__JVMTI_SLOTS && g_impl[slot - 1] != NULL; }

/* ---- JavaVM */

static jint jvm_DestroyJavaVM(ddmc__jv_javavm *vm) { return DDMC_JNI_ERR; /* the VM ends itself */ }

static jint jvm_AttachCurrentThread(ddmc__jv_javavm *vm, void **penv, void *args) {
  if (penv == NULL) return DDMC_JNI_ERR;
  /* A thread the VM already runs (a VM thread, an agent thread) gets its JNIEnv; a foreign
   * thread cannot join this VM (JNI_ERR). */
  if (ddmc__jv_self() == 0) {
    *penv = NULL;
    return DDMC_JNI_ERR;
  }
  *penv = ddmc__jv_jni_env(vm->jv);
  return DDMC_JNI_OK;
}

static jint jvm_DetachCurrentThread(ddmc__jv_javavm *vm) { return DDMC_JNI_OK; }

static jint jvm_GetEnv(ddmc__jv_javavm *vm, void **penv, jint version) {
  if (vm == NULL || vm->jv == NULL || penv == NULL) return DDMC_JNI_ERR;
  return ddmc__jv_get_env(vm->jv, penv, version);
}

static const ddmc__jv_fnptr g_jvm_table[DDMC_JVM_SLOTS] = {
    NULL,
    NULL,
    NULL,
    (ddmc__jv_fnptr)jvm_DestroyJavaVM,
    (ddmc__jv_fnptr)jvm_AttachCurrentThread,
    (ddmc__jv_fnptr)jvm_DetachCurrentThread,
    (ddmc__jv_fnptr)jvm_GetEnv,
    (ddmc__jv_fnptr)jvm_AttachCurrentThread, /* AttachCurrentThreadAsDaemon */
};

const ddmc__jv_fnptr *ddmc__jv_jvm_functions(void) { return g_jvm_table; }

/* GetEnv: a new jvmtiEnv for any JVM TI version this library covers (1.0 ... 17), the calling
 * thread's JNIEnv for JNI 1.1 ... 10. */
jint ddmc__jv_get_env(ddmc__jvmti *jv, void **penv, jint version) {
  *penv = NULL;
  uint32_t v = (uint32_t)version;
  if ((v & 0x70000000u) == DDMC_JVMTI_VERSION_INTERFACE) {
    uint32_t major = (v >> 16) & 0x0FFF;
    if (major < 1 || (v & 0x0FFF0000u) > (DDMC_JVMTI_VERSION_NOW & 0x0FFF0000u)) return DDMC_JNI_EVERSION;
    int phase = atomic_load(&jv->phase);
    if (phase != JVMTI_PHASE_ONLOAD && phase != JVMTI_PHASE_LIVE) return DDMC_JNI_EDETACHED; /* JVM TI: only then */
    ddmc__jv_jenv *e = ddmc__calloc(jv->mem, 1, sizeof(*e));
    if (e == NULL) return DDMC_JNI_ERR;
    e->functions = ddmc__jv_functions();
    e->jv = jv;
    ddmc__lock(&jv->lock);
    e->next = atomic_load(&jv->envs);
    atomic_store_explicit(&jv->envs, e, memory_order_release);
    ddmc__unlock(&jv->lock);
    *penv = e;
    return DDMC_JNI_OK;
  }
  switch (v) {
    case DDMC_JNI_VERSION_1_1:
    case DDMC_JNI_VERSION_1_2:
    case DDMC_JNI_VERSION_1_4:
    case DDMC_JNI_VERSION_1_6:
    case DDMC_JNI_VERSION_1_8:
    case DDMC_JNI_VERSION_9:
    case DDMC_JNI_VERSION_10: *penv = ddmc__jv_jni_env(jv); return DDMC_JNI_OK;
    default: return DDMC_JNI_EVERSION;
  }
}
