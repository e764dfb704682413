/* SPDX-License-Identifier: Apache-2.0 */
/* Every function of the layer's tables (ddmc__jt_* for jvmtiInterface_1_, ddmc__jni_* for
 * JNINativeInterface_) and the helpers the files share. Generated once from the .c files'
 * definitions, then kept by hand. */
#ifndef DDMC_JVMTI_FUNCS_H
#define DDMC_JVMTI_FUNCS_H

#include <stdarg.h>

#include "jvmti/jvmti_int.h"

/* ---- base.c: the leaf */
void ddmc__jv_set_may_park(int on);
int ddmc__jv_may_park(void);
const ddmc_vm_ops *ddmc__jv_vm_ops(ddmc__jvmti *jv);
void *ddmc__jv_vm_data(ddmc__jvmti *jv);
void ddmc__jv_log(ddmc__jvmti *jv, ddmc_log_level lvl, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* ---- env.c */
/* 0, INVALID_ENVIRONMENT or WRONG_PHASE (phases: JVMTI_PHASE_* bits). */
jvmtiError ddmc__jv_phase_ok(ddmc__jv_jenv *e, unsigned phases);
int ddmc__jv_jenv_has_cap(ddmc__jv_jenv *e, int bit);

/* ---- refs.c */
int ddmc__jv_ref_scope(ddmc__jvmti *jv, jobject h);
int ddmc__jv_is_thread_object(ddmc__jvmti *jv, ddmc_ref obj);

/* ---- jni.c */
const ddmc__jv_fnptr *ddmc__jv_jni_functions(void);

/* ---- table.c */
const ddmc__jv_fnptr *ddmc__jv_functions(void);
const ddmc__jv_fnptr *ddmc__jv_jvm_functions(void);
int ddmc__jv_slot_implemented(int slot);

/* ---- hub.c */
void ddmc__jv_hub_vm_start(ddmc__jvmti *jv);
void ddmc__jv_hub_vm_init(ddmc__jvmti *jv, uint32_t thread);
void ddmc__jv_hub_vm_death(ddmc__jvmti *jv, uint32_t thread);

/* ---- debug.c */
int ddmc__jv_jenv_has_bp(ddmc__jv_jenv *e, const ddmc_location *loc);
/* Does e watch field of c for kind (DDMC_WATCH_ACCESS or _MODIFY)? */
int ddmc__jv_jenv_watches(ddmc__jv_jenv *e, ddmc_class c, uint32_t field, unsigned kind);
void ddmc__jv_jenv_clear_debug(ddmc__jv_jenv *e);
/* After SingleStep's enables change: the VM steps exactly the threads some environment wants. */
void ddmc__jv_step_sync(ddmc__jvmti *jv);
/* A thread starts (start = 1) or ends: stepped from its start when SingleStep is on for it. */
void ddmc__jv_step_thread(ddmc__jvmti *jv, uint32_t thread, int start);

/* ---- the functions of the tables */
/* reflect.c */
jvmtiError ddmc__jv_jt_GetBytecodes(ddmc__jv_jenv *e, jmethodID method, jint *count_ptr, unsigned char **bytes_ptr);
jvmtiError ddmc__jv_jt_GetConstantPool(ddmc__jv_jenv *e, jclass klass, jint *count_ptr, jint *bytes_count_ptr,
                                       unsigned char **bytes_ptr);
jvmtiError ddmc__jv_jt_GetClassVersionNumbers(ddmc__jv_jenv *e, jclass klass, jint *minor_ptr, jint *major_ptr);
jvmtiError ddmc__jv_jt_GetSourceDebugExtension(ddmc__jv_jenv *e, jclass klass, char **source_debug_extension_ptr);
jvmtiError ddmc__jv_jt_GetAllModules(ddmc__jv_jenv *e, jint *module_count_ptr, jobject **modules_ptr);
jvmtiError ddmc__jv_jt_SetBreakpoint(ddmc__jv_jenv *e, jmethodID method, jlocation location);
jvmtiError ddmc__jv_jt_ClearBreakpoint(ddmc__jv_jenv *e, jmethodID method, jlocation location);
jvmtiError ddmc__jv_jt_SetFieldAccessWatch(ddmc__jv_jenv *e, jclass klass, jfieldID field);
jvmtiError ddmc__jv_jt_ClearFieldAccessWatch(ddmc__jv_jenv *e, jclass klass, jfieldID field);
jvmtiError ddmc__jv_jt_SetFieldModificationWatch(ddmc__jv_jenv *e, jclass klass, jfieldID field);
jvmtiError ddmc__jv_jt_ClearFieldModificationWatch(ddmc__jv_jenv *e, jclass klass, jfieldID field);
jvmtiError ddmc__jv_jt_GetLocalObject(ddmc__jv_jenv *e, jthread thread, jint depth, jint slot, jobject *value_ptr);
jvmtiError ddmc__jv_jt_GetLocalInt(ddmc__jv_jenv *e, jthread thread, jint depth, jint slot, jint *value_ptr);
jvmtiError ddmc__jv_jt_GetLocalLong(ddmc__jv_jenv *e, jthread thread, jint depth, jint slot, jlong *value_ptr);
jvmtiError ddmc__jv_jt_GetLocalFloat(ddmc__jv_jenv *e, jthread thread, jint depth, jint slot, jfloat *value_ptr);
jvmtiError ddmc__jv_jt_GetLocalDouble(ddmc__jv_jenv *e, jthread thread, jint depth, jint slot, jdouble *value_ptr);
jvmtiError ddmc__jv_jt_SetLocalObject(ddmc__jv_jenv *e, jthread thread, jint depth, jint slot, jobject value);
jvmtiError ddmc__jv_jt_SetLocalInt(ddmc__jv_jenv *e, jthread thread, jint depth, jint slot, jint value);
jvmtiError ddmc__jv_jt_SetLocalLong(ddmc__jv_jenv *e, jthread thread, jint depth, jint slot, jlong value);
jvmtiError ddmc__jv_jt_SetLocalFloat(ddmc__jv_jenv *e, jthread thread, jint depth, jint slot, jfloat value);
jvmtiError ddmc__jv_jt_SetLocalDouble(ddmc__jv_jenv *e, jthread thread, jint depth, jint slot, jdouble value);
jvmtiError ddmc__jv_jt_GetLocalInstance(ddmc__jv_jenv *e, jthread thread, jint depth, jobject *value_ptr);
jvmtiError ddmc__jv_jt_GetLoadedClasses(ddmc__jv_jenv *e, jint *class_count_ptr, jclass **classes_ptr);
jvmtiError ddmc__jv_jt_GetClassSignature(ddmc__jv_jenv *e, jclass klass, char **signature_ptr, char **generic_ptr);
jvmtiError ddmc__jv_jt_GetClassStatus(ddmc__jv_jenv *e, jclass klass, jint *status_ptr);
jvmtiError ddmc__jv_jt_GetSourceFileName(ddmc__jv_jenv *e, jclass klass, char **source_name_ptr);
jvmtiError ddmc__jv_jt_GetClassModifiers(ddmc__jv_jenv *e, jclass klass, jint *modifiers_ptr);
jvmtiError ddmc__jv_jt_GetClassMethods(ddmc__jv_jenv *e, jclass klass, jint *method_count_ptr, jmethodID **methods_ptr);
jvmtiError ddmc__jv_jt_GetClassFields(ddmc__jv_jenv *e, jclass klass, jint *field_count_ptr, jfieldID **fields_ptr);
jvmtiError ddmc__jv_jt_GetImplementedInterfaces(ddmc__jv_jenv *e, jclass klass, jint *count_ptr,
                                                jclass **interfaces_ptr);
jvmtiError ddmc__jv_jt_IsInterface(ddmc__jv_jenv *e, jclass klass, jboolean *is_interface_ptr);
jvmtiError ddmc__jv_jt_IsArrayClass(ddmc__jv_jenv *e, jclass klass, jboolean *is_array_class_ptr);
jvmtiError ddmc__jv_jt_GetClassLoader(ddmc__jv_jenv *e, jclass klass, jobject *classloader_ptr);
jvmtiError ddmc__jv_jt_GetMethodName(ddmc__jv_jenv *e, jmethodID method, char **name_ptr, char **signature_ptr,
                                     char **generic_ptr);
jvmtiError ddmc__jv_jt_GetMethodDeclaringClass(ddmc__jv_jenv *e, jmethodID method, jclass *declaring_class_ptr);
jvmtiError ddmc__jv_jt_GetMethodModifiers(ddmc__jv_jenv *e, jmethodID method, jint *modifiers_ptr);
jvmtiError ddmc__jv_jt_GetMaxLocals(ddmc__jv_jenv *e, jmethodID method, jint *max_ptr);
jvmtiError ddmc__jv_jt_GetArgumentsSize(ddmc__jv_jenv *e, jmethodID method, jint *size_ptr);
jvmtiError ddmc__jv_jt_GetMethodLocation(ddmc__jv_jenv *e, jmethodID method, jlocation *start_location_ptr,
                                         jlocation *end_location_ptr);
jvmtiError ddmc__jv_jt_IsMethodNative(ddmc__jv_jenv *e, jmethodID method, jboolean *is_native_ptr);
jvmtiError ddmc__jv_jt_IsMethodObsolete(ddmc__jv_jenv *e, jmethodID method, jboolean *is_obsolete_ptr);
jvmtiError ddmc__jv_jt_GetLineNumberTable(ddmc__jv_jenv *e, jmethodID method, jint *entry_count_ptr,
                                          ddmc__jv_jline_entry **table_ptr);
jvmtiError ddmc__jv_jt_GetLocalVariableTable(ddmc__jv_jenv *e, jmethodID method, jint *entry_count_ptr,
                                             ddmc__jv_jlocal_entry **table_ptr);
jvmtiError ddmc__jv_jt_GetFieldName(ddmc__jv_jenv *e, jclass klass, jfieldID field, char **name_ptr,
                                    char **signature_ptr, char **generic_ptr);
jvmtiError ddmc__jv_jt_GetFieldDeclaringClass(ddmc__jv_jenv *e, jclass klass, jfieldID field,
                                              jclass *declaring_class_ptr);
jvmtiError ddmc__jv_jt_GetFieldModifiers(ddmc__jv_jenv *e, jclass klass, jfieldID field, jint *modifiers_ptr);
jvmtiError ddmc__jv_jt_Allocate(ddmc__jv_jenv *e, jlong size, unsigned char **mem_ptr);
jvmtiError ddmc__jv_jt_Deallocate(ddmc__jv_jenv *e, unsigned char *mem);
jvmtiError ddmc__jv_jt_GetPhase(ddmc__jv_jenv *e, jint *phase_ptr);
jvmtiError ddmc__jv_jt_GetVersionNumber(ddmc__jv_jenv *e, jint *version_ptr);
jvmtiError ddmc__jv_jt_GetJLocationFormat(ddmc__jv_jenv *e, jint *format_ptr);
jvmtiError ddmc__jv_jt_GetErrorName(ddmc__jv_jenv *e, jvmtiError error, char **name_ptr);
jvmtiError ddmc__jv_jt_GetPotentialCapabilities(ddmc__jv_jenv *e, ddmc__jv_caps *capabilities_ptr);
jvmtiError ddmc__jv_jt_AddCapabilities(ddmc__jv_jenv *e, const ddmc__jv_caps *capabilities_ptr);
jvmtiError ddmc__jv_jt_RelinquishCapabilities(ddmc__jv_jenv *e, const ddmc__jv_caps *capabilities_ptr);
jvmtiError ddmc__jv_jt_GetCapabilities(ddmc__jv_jenv *e, ddmc__jv_caps *capabilities_ptr);
jvmtiError ddmc__jv_jt_SetEventNotificationMode(ddmc__jv_jenv *e, jint mode, jint event_type, jthread event_thread,
                                                ...);
jvmtiError ddmc__jv_jt_SetEventCallbacks(ddmc__jv_jenv *e, const ddmc__jv_fnptr *callbacks, jint size_of_callbacks);
jvmtiError ddmc__jv_jt_GenerateEvents(ddmc__jv_jenv *e, jint event_type);
jvmtiError ddmc__jv_jt_GetEnvironmentLocalStorage(ddmc__jv_jenv *e, void **data_ptr);
jvmtiError ddmc__jv_jt_SetEnvironmentLocalStorage(ddmc__jv_jenv *e, const void *data);
jvmtiError ddmc__jv_jt_DisposeEnvironment(ddmc__jv_jenv *e);
jvmtiError ddmc__jv_jt_GetSystemProperties(ddmc__jv_jenv *e, jint *count_ptr, char ***property_ptr);
jvmtiError ddmc__jv_jt_GetSystemProperty(ddmc__jv_jenv *e, const char *property, char **value_ptr);
jvmtiError ddmc__jv_jt_SetSystemProperty(ddmc__jv_jenv *e, const char *property, const char *value_ptr);
jvmtiError ddmc__jv_jt_GetTimerInfo(ddmc__jv_jenv *e, ddmc__jv_jtimer_info *info_ptr);
jvmtiError ddmc__jv_jt_GetTime(ddmc__jv_jenv *e, jlong *nanos_ptr);
jvmtiError ddmc__jv_jt_GetAvailableProcessors(ddmc__jv_jenv *e, jint *processor_count_ptr);
jvmtiError ddmc__jv_jt_SetVerboseFlag(ddmc__jv_jenv *e, jint flag, jboolean value);
jint ddmc__jv_jni_GetVersion(ddmc__jv_jnienv *env);
jclass ddmc__jv_jni_FindClass(ddmc__jv_jnienv *env, const char *name);
jclass ddmc__jv_jni_GetSuperclass(ddmc__jv_jnienv *env, jclass sub);
jboolean ddmc__jv_jni_IsAssignableFrom(ddmc__jv_jnienv *env, jclass sub, jclass sup);
jint ddmc__jv_jni_Throw(ddmc__jv_jnienv *env, jthrowable obj);
jint ddmc__jv_jni_ThrowNew(ddmc__jv_jnienv *env, jclass clazz, const char *msg);
jthrowable ddmc__jv_jni_ExceptionOccurred(ddmc__jv_jnienv *env);
void ddmc__jv_jni_ExceptionDescribe(ddmc__jv_jnienv *env);
void ddmc__jv_jni_ExceptionClear(ddmc__jv_jnienv *env);
jboolean ddmc__jv_jni_ExceptionCheck(ddmc__jv_jnienv *env);
void ddmc__jv_jni_FatalError(ddmc__jv_jnienv *env, const char *msg);
jint ddmc__jv_jni_PushLocalFrame(ddmc__jv_jnienv *env, jint capacity);
jobject ddmc__jv_jni_PopLocalFrame(ddmc__jv_jnienv *env, jobject result);
jobject ddmc__jv_jni_NewGlobalRef(ddmc__jv_jnienv *env, jobject obj);
void ddmc__jv_jni_DeleteGlobalRef(ddmc__jv_jnienv *env, jobject gref);
void ddmc__jv_jni_DeleteLocalRef(ddmc__jv_jnienv *env, jobject obj);
jobject ddmc__jv_jni_NewLocalRef(ddmc__jv_jnienv *env, jobject ref);
jweak ddmc__jv_jni_NewWeakGlobalRef(ddmc__jv_jnienv *env, jobject obj);
void ddmc__jv_jni_DeleteWeakGlobalRef(ddmc__jv_jnienv *env, jweak ref);
jint ddmc__jv_jni_EnsureLocalCapacity(ddmc__jv_jnienv *env, jint capacity);
jboolean ddmc__jv_jni_IsSameObject(ddmc__jv_jnienv *env, jobject a, jobject b);
jint ddmc__jv_jni_GetObjectRefType(ddmc__jv_jnienv *env, jobject obj);
jclass ddmc__jv_jni_GetObjectClass(ddmc__jv_jnienv *env, jobject obj);
jboolean ddmc__jv_jni_IsInstanceOf(ddmc__jv_jnienv *env, jobject obj, jclass clazz);
jmethodID ddmc__jv_jni_GetMethodID(ddmc__jv_jnienv *env, jclass clazz, const char *name, const char *sig);
jmethodID ddmc__jv_jni_GetStaticMethodID(ddmc__jv_jnienv *env, jclass clazz, const char *name, const char *sig);
jfieldID ddmc__jv_jni_GetFieldID(ddmc__jv_jnienv *env, jclass clazz, const char *name, const char *sig);
jfieldID ddmc__jv_jni_GetStaticFieldID(ddmc__jv_jnienv *env, jclass clazz, const char *name, const char *sig);
jstring ddmc__jv_jni_NewStringUTF(ddmc__jv_jnienv *env, const char *utf);
jsize ddmc__jv_jni_GetStringUTFLength(ddmc__jv_jnienv *env, jstring str);
const char *ddmc__jv_jni_GetStringUTFChars(ddmc__jv_jnienv *env, jstring str, jboolean *isCopy);
void ddmc__jv_jni_ReleaseStringUTFChars(ddmc__jv_jnienv *env, jstring str, const char *chars);
jsize ddmc__jv_jni_GetArrayLength(ddmc__jv_jnienv *env, jobject array);
jint ddmc__jv_jni_GetJavaVM(ddmc__jv_jnienv *env, void **vm);
jvmtiError ddmc__jv_jt_CreateRawMonitor(ddmc__jv_jenv *e, const char *name, jrawMonitorID *monitor_ptr);
jvmtiError ddmc__jv_jt_DestroyRawMonitor(ddmc__jv_jenv *e, jrawMonitorID m);
jvmtiError ddmc__jv_jt_RawMonitorEnter(ddmc__jv_jenv *e, jrawMonitorID m);
jvmtiError ddmc__jv_jt_RawMonitorExit(ddmc__jv_jenv *e, jrawMonitorID m);
jvmtiError ddmc__jv_jt_RawMonitorWait(ddmc__jv_jenv *e, jrawMonitorID m, jlong millis);
jvmtiError ddmc__jv_jt_RawMonitorNotify(ddmc__jv_jenv *e, jrawMonitorID m);
jvmtiError ddmc__jv_jt_RawMonitorNotifyAll(ddmc__jv_jenv *e, jrawMonitorID m);
jvmtiError ddmc__jv_jt_GetAllThreads(ddmc__jv_jenv *e, jint *threads_count_ptr, jthread **threads_ptr);
jvmtiError ddmc__jv_jt_GetThreadInfo(ddmc__jv_jenv *e, jthread thread, ddmc__jv_jthread_info *info_ptr);
jvmtiError ddmc__jv_jt_GetThreadState(ddmc__jv_jenv *e, jthread thread, jint *thread_state_ptr);
jvmtiError ddmc__jv_jt_GetCurrentThread(ddmc__jv_jenv *e, jthread *thread_ptr);
jvmtiError ddmc__jv_jt_GetTopThreadGroups(ddmc__jv_jenv *e, jint *group_count_ptr, jthreadGroup **groups_ptr);
jvmtiError ddmc__jv_jt_GetThreadGroupInfo(ddmc__jv_jenv *e, jthreadGroup group, ddmc__jv_jgroup_info *info_ptr);
jvmtiError ddmc__jv_jt_GetThreadGroupChildren(ddmc__jv_jenv *e, jthreadGroup group, jint *thread_count_ptr,
                                              jthread **threads_ptr, jint *group_count_ptr, jthreadGroup **groups_ptr);
jvmtiError ddmc__jv_jt_GetFrameCount(ddmc__jv_jenv *e, jthread thread, jint *count_ptr);
jvmtiError ddmc__jv_jt_GetStackTrace(ddmc__jv_jenv *e, jthread thread, jint start_depth, jint max_frame_count,
                                     ddmc__jv_jframe_info *frame_buffer, jint *count_ptr);
jvmtiError ddmc__jv_jt_GetFrameLocation(ddmc__jv_jenv *e, jthread thread, jint depth, jmethodID *method_ptr,
                                        jlocation *location_ptr);
jvmtiError ddmc__jv_jt_GetAllStackTraces(ddmc__jv_jenv *e, jint max_frame_count, ddmc__jv_jstack_info **stack_info_ptr,
                                         jint *thread_count_ptr);
/* ---- heap: tags.c, heap.c, hub_heap.c */
jvmtiError ddmc__jv_jt_GetTag(ddmc__jv_jenv *e, jobject object, jlong *tag_ptr);
jvmtiError ddmc__jv_jt_SetTag(ddmc__jv_jenv *e, jobject object, jlong tag);
jvmtiError ddmc__jv_jt_GetObjectsWithTags(ddmc__jv_jenv *e, jint tag_count, const jlong *tags, jint *count_ptr,
                                          jobject **object_result_ptr, jlong **tag_result_ptr);
jvmtiError ddmc__jv_jt_ForceGarbageCollection(ddmc__jv_jenv *e);
jvmtiError ddmc__jv_jt_IterateThroughHeap(ddmc__jv_jenv *e, jint heap_filter, jclass klass, const void *callbacks,
                                          const void *user_data);
jvmtiError ddmc__jv_jt_FollowReferences(ddmc__jv_jenv *e, jint heap_filter, jclass klass, jobject initial_object,
                                        const void *callbacks, const void *user_data);
jvmtiError ddmc__jv_jt_GetObjectSize(ddmc__jv_jenv *e, jobject object, jlong *size_ptr);
jvmtiError ddmc__jv_jt_GetObjectHashCode(ddmc__jv_jenv *e, jobject object, jint *hash_code_ptr);

/* ---- mutate.c: RedefineClasses, PopFrame, ForceEarlyReturn* */
jvmtiError ddmc__jv_jt_PopFrame(ddmc__jv_jenv *e, jthread thread);
jvmtiError ddmc__jv_jt_ForceEarlyReturnObject(ddmc__jv_jenv *e, jthread thread, jobject value);
jvmtiError ddmc__jv_jt_ForceEarlyReturnInt(ddmc__jv_jenv *e, jthread thread, jint value);
jvmtiError ddmc__jv_jt_ForceEarlyReturnLong(ddmc__jv_jenv *e, jthread thread, jlong value);
jvmtiError ddmc__jv_jt_ForceEarlyReturnFloat(ddmc__jv_jenv *e, jthread thread, jfloat value);
jvmtiError ddmc__jv_jt_ForceEarlyReturnDouble(ddmc__jv_jenv *e, jthread thread, jdouble value);
jvmtiError ddmc__jv_jt_ForceEarlyReturnVoid(ddmc__jv_jenv *e, jthread thread);
jvmtiError ddmc__jv_jt_RedefineClasses(ddmc__jv_jenv *e, jint count, const ddmc__jv_jclass_def *defs);

/* ---- threads and monitors: suspend.c, agentthread.c, monitors.c */
int ddmc__jv_susp_held(ddmc__jvmti *jv, uint32_t thread);
jvmtiError ddmc__jv_jt_SuspendThread(ddmc__jv_jenv *e, jthread thread);
jvmtiError ddmc__jv_jt_ResumeThread(ddmc__jv_jenv *e, jthread thread);
jvmtiError ddmc__jv_jt_SuspendThreadList(ddmc__jv_jenv *e, jint request_count, const jthread *request_list,
                                         jvmtiError *results);
jvmtiError ddmc__jv_jt_ResumeThreadList(ddmc__jv_jenv *e, jint request_count, const jthread *request_list,
                                        jvmtiError *results);
jvmtiError ddmc__jv_jt_RunAgentThread(ddmc__jv_jenv *e, jthread thread, ddmc__jv_jstart_fn proc, const void *arg,
                                      jint priority);
jvmtiError ddmc__jv_jt_GetOwnedMonitorInfo(ddmc__jv_jenv *e, jthread thread, jint *owned_monitor_count_ptr,
                                           jobject **owned_monitors_ptr);
jvmtiError ddmc__jv_jt_GetOwnedMonitorStackDepthInfo(ddmc__jv_jenv *e, jthread thread, jint *monitor_info_count_ptr,
                                                     ddmc__jv_jmonitor_depth **monitor_info_ptr);
jvmtiError ddmc__jv_jt_GetCurrentContendedMonitor(ddmc__jv_jenv *e, jthread thread, jobject *monitor_ptr);
jvmtiError ddmc__jv_jt_GetObjectMonitorUsage(ddmc__jv_jenv *e, jobject object, ddmc__jv_jmonitor_usage *info_ptr);
jobject ddmc__jv_jni_AllocObject(ddmc__jv_jnienv *env, jclass clazz);
jobject ddmc__jv_jni_NewObject(ddmc__jv_jnienv *env, jclass clazz, jmethodID m, ...);
jobject ddmc__jv_jni_NewObjectV(ddmc__jv_jnienv *env, jclass clazz, jmethodID m, va_list args);
jobject ddmc__jv_jni_NewObjectA(ddmc__jv_jnienv *env, jclass clazz, jmethodID m, const jvalue *args);

#endif
