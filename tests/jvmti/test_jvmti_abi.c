/* SPDX-License-Identifier: Apache-2.0 */
/* The library's tables against the JDK's own jvmti.h and jni.h (JDK 17), slot by slot: a wrong
 * slot order would make a real agent call the wrong function. Compiled against the JDK headers
 * only (never the library's jtypes.h); the library's tables and functions are reached through
 * their internal symbols (linked from the static library), declared here with a neutral type.
 *
 * Checked: every JVM TI function the library implements is at offsetof(jvmtiInterface_1_, F)
 * in the header and is that function in the table; every other slot is filled (the
 * NOT_AVAILABLE stub, tested by calling in test_jvmti.c); every JNI index the library uses is
 * offsetof(JNINativeInterface_, F) / sizeof(void *); the JavaVM slots; every capability bit;
 * each event's callback at (event - 50) pointers. */
#include <jni.h>
#include <jvmti.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "jvmti/slots.h"

typedef void (*fnptr)(void);
const fnptr *ddmc__jv_functions(void);
const fnptr *ddmc__jv_jni_functions(void);
const fnptr *ddmc__jv_jvm_functions(void);
int ddmc__jv_slot_implemented(int slot);
extern void ddmc__jv_jt_SetEventNotificationMode(void);
extern void ddmc__jv_jt_GetLocalObject(void);
extern void ddmc__jv_jt_GetLocalInt(void);
extern void ddmc__jv_jt_GetLocalLong(void);
extern void ddmc__jv_jt_GetLocalFloat(void);
extern void ddmc__jv_jt_GetLocalDouble(void);
extern void ddmc__jv_jt_SetLocalObject(void);
extern void ddmc__jv_jt_SetLocalInt(void);
extern void ddmc__jv_jt_SetLocalLong(void);
extern void ddmc__jv_jt_SetLocalFloat(void);
extern void ddmc__jv_jt_SetLocalDouble(void);
extern void ddmc__jv_jt_SetBreakpoint(void);
extern void ddmc__jv_jt_ClearBreakpoint(void);
extern void ddmc__jv_jt_SetFieldAccessWatch(void);
extern void ddmc__jv_jt_ClearFieldAccessWatch(void);
extern void ddmc__jv_jt_SetFieldModificationWatch(void);
extern void ddmc__jv_jt_ClearFieldModificationWatch(void);
extern void ddmc__jv_jt_GetLocalInstance(void);
/* mutate */
extern void ddmc__jv_jt_PopFrame(void);
extern void ddmc__jv_jt_ForceEarlyReturnObject(void);
extern void ddmc__jv_jt_ForceEarlyReturnInt(void);
extern void ddmc__jv_jt_ForceEarlyReturnLong(void);
extern void ddmc__jv_jt_ForceEarlyReturnFloat(void);
extern void ddmc__jv_jt_ForceEarlyReturnDouble(void);
extern void ddmc__jv_jt_ForceEarlyReturnVoid(void);
extern void ddmc__jv_jt_RedefineClasses(void);
/* threads and monitors */
extern void ddmc__jv_jt_SuspendThread(void);
extern void ddmc__jv_jt_ResumeThread(void);
extern void ddmc__jv_jt_GetOwnedMonitorInfo(void);
extern void ddmc__jv_jt_GetCurrentContendedMonitor(void);
extern void ddmc__jv_jt_RunAgentThread(void);
extern void ddmc__jv_jt_GetObjectMonitorUsage(void);
extern void ddmc__jv_jt_SuspendThreadList(void);
extern void ddmc__jv_jt_ResumeThreadList(void);
extern void ddmc__jv_jt_GetOwnedMonitorStackDepthInfo(void);
extern void ddmc__jv_jni_AllocObject(void);
extern void ddmc__jv_jni_NewObject(void);
extern void ddmc__jv_jni_NewObjectV(void);
extern void ddmc__jv_jni_NewObjectA(void);
extern void ddmc__jv_jt_GetAllThreads(void);
extern void ddmc__jv_jt_GetThreadInfo(void);
extern void ddmc__jv_jt_GetTopThreadGroups(void);
extern void ddmc__jv_jt_GetThreadGroupInfo(void);
extern void ddmc__jv_jt_GetThreadGroupChildren(void);
extern void ddmc__jv_jt_GetFrameCount(void);
extern void ddmc__jv_jt_GetThreadState(void);
extern void ddmc__jv_jt_GetCurrentThread(void);
extern void ddmc__jv_jt_GetFrameLocation(void);
extern void ddmc__jv_jt_CreateRawMonitor(void);
extern void ddmc__jv_jt_DestroyRawMonitor(void);
extern void ddmc__jv_jt_RawMonitorEnter(void);
extern void ddmc__jv_jt_RawMonitorExit(void);
extern void ddmc__jv_jt_RawMonitorWait(void);
extern void ddmc__jv_jt_RawMonitorNotify(void);
extern void ddmc__jv_jt_RawMonitorNotifyAll(void);
extern void ddmc__jv_jt_Allocate(void);
extern void ddmc__jv_jt_Deallocate(void);
extern void ddmc__jv_jt_GetClassSignature(void);
extern void ddmc__jv_jt_GetClassStatus(void);
extern void ddmc__jv_jt_GetSourceFileName(void);
extern void ddmc__jv_jt_GetClassModifiers(void);
extern void ddmc__jv_jt_GetClassMethods(void);
extern void ddmc__jv_jt_GetClassFields(void);
extern void ddmc__jv_jt_GetImplementedInterfaces(void);
extern void ddmc__jv_jt_IsInterface(void);
extern void ddmc__jv_jt_IsArrayClass(void);
extern void ddmc__jv_jt_GetClassLoader(void);
extern void ddmc__jv_jt_GetFieldName(void);
extern void ddmc__jv_jt_GetFieldDeclaringClass(void);
extern void ddmc__jv_jt_GetFieldModifiers(void);
extern void ddmc__jv_jt_GetMethodName(void);
extern void ddmc__jv_jt_GetMethodDeclaringClass(void);
extern void ddmc__jv_jt_GetMethodModifiers(void);
extern void ddmc__jv_jt_GetMaxLocals(void);
extern void ddmc__jv_jt_GetArgumentsSize(void);
extern void ddmc__jv_jt_GetLineNumberTable(void);
extern void ddmc__jv_jt_GetMethodLocation(void);
extern void ddmc__jv_jt_GetLocalVariableTable(void);
extern void ddmc__jv_jt_IsMethodNative(void);
extern void ddmc__jv_jt_GetLoadedClasses(void);
extern void ddmc__jv_jt_GetVersionNumber(void);
extern void ddmc__jv_jt_GetCapabilities(void);
extern void ddmc__jv_jt_IsMethodObsolete(void);
extern void ddmc__jv_jt_GetAllStackTraces(void);
extern void ddmc__jv_jt_GetStackTrace(void);
extern void ddmc__jv_jt_SetEventCallbacks(void);
extern void ddmc__jv_jt_GenerateEvents(void);
extern void ddmc__jv_jt_DisposeEnvironment(void);
extern void ddmc__jv_jt_GetErrorName(void);
extern void ddmc__jv_jt_GetJLocationFormat(void);
extern void ddmc__jv_jt_GetSystemProperties(void);
extern void ddmc__jv_jt_GetSystemProperty(void);
extern void ddmc__jv_jt_SetSystemProperty(void);
extern void ddmc__jv_jt_GetPhase(void);
extern void ddmc__jv_jt_GetTimerInfo(void);
extern void ddmc__jv_jt_GetTime(void);
extern void ddmc__jv_jt_GetPotentialCapabilities(void);
extern void ddmc__jv_jt_AddCapabilities(void);
extern void ddmc__jv_jt_RelinquishCapabilities(void);
extern void ddmc__jv_jt_GetAvailableProcessors(void);
extern void ddmc__jv_jt_GetEnvironmentLocalStorage(void);
extern void ddmc__jv_jt_SetEnvironmentLocalStorage(void);
extern void ddmc__jv_jt_SetVerboseFlag(void);
/* heap */
extern void ddmc__jv_jt_GetObjectHashCode(void);
extern void ddmc__jv_jt_GetTag(void);
extern void ddmc__jv_jt_SetTag(void);
extern void ddmc__jv_jt_ForceGarbageCollection(void);
extern void ddmc__jv_jt_GetObjectsWithTags(void);
extern void ddmc__jv_jt_FollowReferences(void);
extern void ddmc__jv_jt_IterateThroughHeap(void);
extern void ddmc__jv_jt_GetObjectSize(void);
extern void ddmc__jv_jt_GetAllModules(void);
extern void ddmc__jv_jt_GetBytecodes(void);
extern void ddmc__jv_jt_GetSourceDebugExtension(void);
extern void ddmc__jv_jt_GetClassVersionNumbers(void);
extern void ddmc__jv_jt_GetConstantPool(void);

static int failures;
#define CHECK(cond, ...)            \
  do {                              \
    if (!(cond)) {                  \
      fprintf(stderr, __VA_ARGS__); \
      fputc('\n', stderr);          \
      failures++;                   \
    }                               \
  } while (0)

#define SLOT(n, name)                                                                                                  \
  CHECK(offsetof(struct jvmtiInterface_1_, name) == ((n)-1) * sizeof(void *),                                          \
        "jvmti %s: slot %d, but the header has it at offset %zu", #name, n, offsetof(struct jvmtiInterface_1_, name)); \
  CHECK(t[(n)-1] == (fnptr)ddmc__jv_jt_##name, "jvmti %s: the table's slot %d holds another function", #name, n);      \
  implemented[n] = 1;

#define JNI(name, idx)                                                                               \
  CHECK(offsetof(struct JNINativeInterface_, name) == (idx) * sizeof(void *),                        \
        "jni %s: index %d, but the header has it at offset %zu", #name, idx,                         \
        offsetof(struct JNINativeInterface_, name));                                                 \
  CHECK(j[idx] != NULL, "jni %s: index %d empty", #name, idx);

#define CAP(name, bit)                                                                   \
  do {                                                                                   \
    jvmtiCapabilities c;                                                                 \
    unsigned w[4];                                                                       \
    memset(&c, 0, sizeof c);                                                             \
    c.name = 1;                                                                          \
    memcpy(w, &c, sizeof w);                                                             \
    CHECK(w[(bit) / 32] == 1u << ((bit) % 32), "capability %s is not bit %d", #name, bit); \
  } while (0);

#define EV(field, num) \
  CHECK(offsetof(jvmtiEventCallbacks, field) == (size_t)((num)-50) * sizeof(void *), "callback %s", #field);

int main(void) {
  const fnptr *t = ddmc__jv_functions();
  int implemented[200] = {0};
  int nimpl = 0;
  SLOT(2, SetEventNotificationMode)
  SLOT(4, GetAllThreads)
  SLOT(9, GetThreadInfo)
  SLOT(5, SuspendThread)
  SLOT(6, ResumeThread)
  SLOT(10, GetOwnedMonitorInfo)
  SLOT(11, GetCurrentContendedMonitor)
  SLOT(12, RunAgentThread)
  SLOT(13, GetTopThreadGroups)
  SLOT(14, GetThreadGroupInfo)
  SLOT(15, GetThreadGroupChildren)
  SLOT(16, GetFrameCount)
  SLOT(17, GetThreadState)
  SLOT(18, GetCurrentThread)
  SLOT(19, GetFrameLocation)
  SLOT(31, CreateRawMonitor)
  SLOT(32, DestroyRawMonitor)
  SLOT(33, RawMonitorEnter)
  SLOT(34, RawMonitorExit)
  SLOT(35, RawMonitorWait)
  SLOT(36, RawMonitorNotify)
  SLOT(37, RawMonitorNotifyAll)
  SLOT(46, Allocate)
  SLOT(47, Deallocate)
  SLOT(48, GetClassSignature)
  SLOT(49, GetClassStatus)
  SLOT(50, GetSourceFileName)
  SLOT(51, GetClassModifiers)
  SLOT(52, GetClassMethods)
  SLOT(53, GetClassFields)
  SLOT(54, GetImplementedInterfaces)
  SLOT(55, IsInterface)
  SLOT(56, IsArrayClass)
  SLOT(57, GetClassLoader)
  SLOT(59, GetObjectMonitorUsage)
  SLOT(60, GetFieldName)
  SLOT(61, GetFieldDeclaringClass)
  SLOT(62, GetFieldModifiers)
  SLOT(64, GetMethodName)
  SLOT(65, GetMethodDeclaringClass)
  SLOT(66, GetMethodModifiers)
  SLOT(68, GetMaxLocals)
  SLOT(69, GetArgumentsSize)
  SLOT(70, GetLineNumberTable)
  SLOT(71, GetMethodLocation)
  SLOT(72, GetLocalVariableTable)
  SLOT(76, IsMethodNative)
  SLOT(78, GetLoadedClasses)
  SLOT(88, GetVersionNumber)
  SLOT(89, GetCapabilities)
  SLOT(91, IsMethodObsolete)
  SLOT(92, SuspendThreadList)
  SLOT(93, ResumeThreadList)
  SLOT(100, GetAllStackTraces)
  SLOT(104, GetStackTrace)
  SLOT(122, SetEventCallbacks)
  SLOT(123, GenerateEvents)
  SLOT(127, DisposeEnvironment)
  SLOT(128, GetErrorName)
  SLOT(129, GetJLocationFormat)
  SLOT(130, GetSystemProperties)
  SLOT(131, GetSystemProperty)
  SLOT(132, SetSystemProperty)
  SLOT(133, GetPhase)
  SLOT(138, GetTimerInfo)
  SLOT(139, GetTime)
  SLOT(140, GetPotentialCapabilities)
  SLOT(142, AddCapabilities)
  SLOT(143, RelinquishCapabilities)
  SLOT(144, GetAvailableProcessors)
  SLOT(147, GetEnvironmentLocalStorage)
  SLOT(148, SetEnvironmentLocalStorage)
  SLOT(150, SetVerboseFlag)
  SLOT(21, GetLocalObject)
  SLOT(22, GetLocalInt)
  SLOT(23, GetLocalLong)
  SLOT(24, GetLocalFloat)
  SLOT(25, GetLocalDouble)
  SLOT(26, SetLocalObject)
  SLOT(27, SetLocalInt)
  SLOT(28, SetLocalLong)
  SLOT(29, SetLocalFloat)
  SLOT(30, SetLocalDouble)
  SLOT(38, SetBreakpoint)
  SLOT(39, ClearBreakpoint)
  SLOT(41, SetFieldAccessWatch)
  SLOT(42, ClearFieldAccessWatch)
  SLOT(43, SetFieldModificationWatch)
  SLOT(44, ClearFieldModificationWatch)
  SLOT(155, GetLocalInstance)
  SLOT(80, PopFrame)
  SLOT(81, ForceEarlyReturnObject)
  SLOT(82, ForceEarlyReturnInt)
  SLOT(83, ForceEarlyReturnLong)
  SLOT(84, ForceEarlyReturnFloat)
  SLOT(85, ForceEarlyReturnDouble)
  SLOT(86, ForceEarlyReturnVoid)
  SLOT(87, RedefineClasses)
  SLOT(153, GetOwnedMonitorStackDepthInfo)
  /* heap */
  SLOT(58, GetObjectHashCode)
  SLOT(106, GetTag)
  SLOT(107, SetTag)
  SLOT(108, ForceGarbageCollection)
  SLOT(114, GetObjectsWithTags)
  SLOT(115, FollowReferences)
  SLOT(116, IterateThroughHeap)
  SLOT(154, GetObjectSize)
  /* reflection */
  SLOT(3, GetAllModules)
  SLOT(75, GetBytecodes)
  SLOT(90, GetSourceDebugExtension)
  SLOT(145, GetClassVersionNumbers)
  SLOT(146, GetConstantPool)
  /* the heap types src/jvmti/heap.h writes out: jvmtiHeapCallbacks is 16 pointers in this order,
   * jvmtiHeapReferenceInfo 64 bytes with stack_local laid out as here */
  CHECK(sizeof(jvmtiHeapCallbacks) == 16 * sizeof(void *), "jvmtiHeapCallbacks size");
  CHECK(offsetof(jvmtiHeapCallbacks, heap_reference_callback) == 1 * sizeof(void *), "heap_reference_callback");
  CHECK(offsetof(jvmtiHeapCallbacks, primitive_field_callback) == 2 * sizeof(void *), "primitive_field_callback");
  CHECK(offsetof(jvmtiHeapCallbacks, array_primitive_value_callback) == 3 * sizeof(void *), "array_primitive");
  CHECK(offsetof(jvmtiHeapCallbacks, string_primitive_value_callback) == 4 * sizeof(void *), "string_primitive");
  CHECK(sizeof(jvmtiHeapReferenceInfo) == 64, "jvmtiHeapReferenceInfo size");
  CHECK(offsetof(jvmtiHeapReferenceInfoStackLocal, thread_id) == 8 && offsetof(jvmtiHeapReferenceInfoStackLocal, depth) == 16 &&
            offsetof(jvmtiHeapReferenceInfoStackLocal, method) == 24 && offsetof(jvmtiHeapReferenceInfoStackLocal, location) == 32 &&
            offsetof(jvmtiHeapReferenceInfoStackLocal, slot) == 40,
        "jvmtiHeapReferenceInfoStackLocal layout");
  CHECK(JVMTI_HEAP_FILTER_TAGGED == 4 && JVMTI_HEAP_FILTER_CLASS_UNTAGGED == 0x20 && JVMTI_VISIT_OBJECTS == 0x100 &&
            JVMTI_VISIT_ABORT == 0x8000 && JVMTI_HEAP_REFERENCE_STACK_LOCAL == 24 && JVMTI_PRIMITIVE_TYPE_INT == 'I',
        "heap constants");
  for (int n = 0; n < 200; n++) nimpl += implemented[n];
  size_t nslots = sizeof(struct jvmtiInterface_1_) / sizeof(void *);
  CHECK(nslots == 156, "jvmtiInterface_1_ has %zu slots (JDK 17: 156)", nslots);
  CHECK(t[0] == NULL, "slot 1 is reserved");
  for (size_t n = 2; n <= nslots; n++) CHECK(t[n - 1] != NULL, "jvmti slot %zu is empty", n);
  /* Every slot the library fills is checked above: a new one without its SLOT line fails here. */
  for (int n = 1; n < 200; n++)
    CHECK(!ddmc__jv_slot_implemented(n) || implemented[n], "jvmti slot %d is implemented but not checked here", n);
  const fnptr *j = ddmc__jv_jni_functions();
  JNI(GetVersion, 4)
  JNI(FindClass, 6)
  JNI(GetSuperclass, 10)
  JNI(IsAssignableFrom, 11)
  JNI(Throw, 13)
  JNI(ThrowNew, 14)
  JNI(ExceptionOccurred, 15)
  JNI(ExceptionDescribe, 16)
  JNI(ExceptionClear, 17)
  JNI(FatalError, 18)
  JNI(PushLocalFrame, 19)
  JNI(PopLocalFrame, 20)
  JNI(NewGlobalRef, 21)
  JNI(DeleteGlobalRef, 22)
  JNI(DeleteLocalRef, 23)
  JNI(IsSameObject, 24)
  JNI(NewLocalRef, 25)
  JNI(EnsureLocalCapacity, 26)
  JNI(AllocObject, 27)
  JNI(NewObject, 28)
  JNI(NewObjectV, 29)
  JNI(NewObjectA, 30)
  JNI(GetObjectClass, 31)
  JNI(IsInstanceOf, 32)
  JNI(GetMethodID, 33)
  JNI(GetFieldID, 94)
  JNI(GetStaticMethodID, 113)
  JNI(GetStaticFieldID, 144)
  JNI(NewStringUTF, 167)
  JNI(GetStringUTFLength, 168)
  JNI(GetStringUTFChars, 169)
  JNI(ReleaseStringUTFChars, 170)
  JNI(GetArrayLength, 171)
  JNI(GetJavaVM, 219)
  JNI(NewWeakGlobalRef, 226)
  JNI(DeleteWeakGlobalRef, 227)
  JNI(ExceptionCheck, 228)
  JNI(GetObjectRefType, 232)
  JNI(AllocObject, 27)
  JNI(NewObject, 28)
  JNI(NewObjectV, 29)
  JNI(NewObjectA, 30)
  size_t njni = sizeof(struct JNINativeInterface_) / sizeof(void *);
  CHECK(njni <= DDMC_JNI_SLOTS, "JNI table of %zu slots, bigger than the library's", njni);
  for (size_t n = 4; n < njni; n++) CHECK(j[n] != NULL, "jni index %zu is empty", n);
  const fnptr *v = ddmc__jv_jvm_functions();
  CHECK(offsetof(struct JNIInvokeInterface_, DestroyJavaVM) == DDMC_JVM_DestroyJavaVM * sizeof(void *), "JavaVM DestroyJavaVM");
  CHECK(offsetof(struct JNIInvokeInterface_, AttachCurrentThread) == DDMC_JVM_AttachCurrentThread * sizeof(void *), "JavaVM AttachCurrentThread");
  CHECK(offsetof(struct JNIInvokeInterface_, DetachCurrentThread) == DDMC_JVM_DetachCurrentThread * sizeof(void *), "JavaVM DetachCurrentThread");
  CHECK(offsetof(struct JNIInvokeInterface_, GetEnv) == DDMC_JVM_GetEnv * sizeof(void *), "JavaVM GetEnv");
  CHECK(offsetof(struct JNIInvokeInterface_, AttachCurrentThreadAsDaemon) == DDMC_JVM_AttachCurrentThreadAsDaemon * sizeof(void *), "JavaVM AttachCurrentThreadAsDaemon");
  CHECK(sizeof(struct JNIInvokeInterface_) / sizeof(void *) == DDMC_JVM_SLOTS, "JavaVM slots");
  for (int n = 3; n < DDMC_JVM_SLOTS; n++) CHECK(v[n] != NULL, "JavaVM slot %d empty", n);
  CHECK(sizeof(jvmtiCapabilities) == 16, "jvmtiCapabilities is %zu bytes", sizeof(jvmtiCapabilities));
  CAP(can_tag_objects, 0)
  CAP(can_generate_field_modification_events, 1)
  CAP(can_generate_field_access_events, 2)
  CAP(can_get_bytecodes, 3)
  CAP(can_get_synthetic_attribute, 4)
  CAP(can_get_owned_monitor_info, 5)
  CAP(can_get_current_contended_monitor, 6)
  CAP(can_get_monitor_info, 7)
  CAP(can_pop_frame, 8)
  CAP(can_redefine_classes, 9)
  CAP(can_signal_thread, 10)
  CAP(can_get_source_file_name, 11)
  CAP(can_get_line_numbers, 12)
  CAP(can_get_source_debug_extension, 13)
  CAP(can_access_local_variables, 14)
  CAP(can_maintain_original_method_order, 15)
  CAP(can_generate_single_step_events, 16)
  CAP(can_generate_exception_events, 17)
  CAP(can_generate_frame_pop_events, 18)
  CAP(can_generate_breakpoint_events, 19)
  CAP(can_suspend, 20)
  CAP(can_redefine_any_class, 21)
  CAP(can_get_current_thread_cpu_time, 22)
  CAP(can_get_thread_cpu_time, 23)
  CAP(can_generate_method_entry_events, 24)
  CAP(can_generate_method_exit_events, 25)
  CAP(can_generate_all_class_hook_events, 26)
  CAP(can_generate_compiled_method_load_events, 27)
  CAP(can_generate_monitor_events, 28)
  CAP(can_generate_vm_object_alloc_events, 29)
  CAP(can_generate_native_method_bind_events, 30)
  CAP(can_generate_garbage_collection_events, 31)
  CAP(can_generate_object_free_events, 32)
  CAP(can_force_early_return, 33)
  CAP(can_get_owned_monitor_stack_depth_info, 34)
  CAP(can_get_constant_pool, 35)
  CAP(can_set_native_method_prefix, 36)
  CAP(can_retransform_classes, 37)
  CAP(can_retransform_any_class, 38)
  CAP(can_generate_resource_exhaustion_heap_events, 39)
  CAP(can_generate_resource_exhaustion_threads_events, 40)
  CAP(can_generate_early_vmstart, 41)
  CAP(can_generate_early_class_hook_events, 42)
  CAP(can_generate_sampled_object_alloc_events, 43)
  EV(VMInit, JVMTI_EVENT_VM_INIT) EV(VMDeath, JVMTI_EVENT_VM_DEATH) EV(ThreadStart, JVMTI_EVENT_THREAD_START)
  EV(ThreadEnd, JVMTI_EVENT_THREAD_END) EV(ClassLoad, JVMTI_EVENT_CLASS_LOAD) EV(ClassPrepare, JVMTI_EVENT_CLASS_PREPARE)
  EV(VMStart, JVMTI_EVENT_VM_START) EV(Exception, JVMTI_EVENT_EXCEPTION) EV(ExceptionCatch, JVMTI_EVENT_EXCEPTION_CATCH)
  EV(SingleStep, JVMTI_EVENT_SINGLE_STEP) EV(Breakpoint, JVMTI_EVENT_BREAKPOINT) EV(FieldAccess, JVMTI_EVENT_FIELD_ACCESS)
  EV(FieldModification, JVMTI_EVENT_FIELD_MODIFICATION) EV(MethodEntry, JVMTI_EVENT_METHOD_ENTRY)
  EV(MethodExit, JVMTI_EVENT_METHOD_EXIT) EV(DataDumpRequest, JVMTI_EVENT_DATA_DUMP_REQUEST)
  EV(MonitorWait, JVMTI_EVENT_MONITOR_WAIT) EV(MonitorWaited, JVMTI_EVENT_MONITOR_WAITED)
  EV(MonitorContendedEnter, JVMTI_EVENT_MONITOR_CONTENDED_ENTER)
  EV(MonitorContendedEntered, JVMTI_EVENT_MONITOR_CONTENDED_ENTERED)
  EV(GarbageCollectionStart, JVMTI_EVENT_GARBAGE_COLLECTION_START)
  EV(GarbageCollectionFinish, JVMTI_EVENT_GARBAGE_COLLECTION_FINISH) EV(ObjectFree, JVMTI_EVENT_OBJECT_FREE)
  EV(VMObjectAlloc, JVMTI_EVENT_VM_OBJECT_ALLOC)
  CHECK(JVMTI_VERSION == 0x30110000, "this JDK's JVMTI_VERSION is %x; the library reports 0x30110000", JVMTI_VERSION);
  CHECK(sizeof(jvmtiThreadInfo) == (sizeof(void *) == 8 ? 32 : 20), "jvmtiThreadInfo size %zu", sizeof(jvmtiThreadInfo));
  CHECK(sizeof(jvmtiFrameInfo) == (sizeof(void *) == 8 ? 16 : 12), "jvmtiFrameInfo size %zu", sizeof(jvmtiFrameInfo));
  CHECK(sizeof(jvmtiLineNumberEntry) == 16, "jvmtiLineNumberEntry size %zu", sizeof(jvmtiLineNumberEntry));
  CHECK(sizeof(jvmtiTimerInfo) == 32, "jvmtiTimerInfo size %zu", sizeof(jvmtiTimerInfo));
  if (failures) {
    fprintf(stderr, "%d mismatch(es) with the JDK headers\n", failures);
    return 1;
  }
  printf("%d implemented JVM TI slots, the JNI indexes, the JavaVM, %d capability bits and the callbacks match\n",
         nimpl, DDMC__CAP_COUNT);
  return 0;
}
