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
jvmtiError ddmc__jv_phase_ok(ddmc__jenv *e, unsigned phases);
int ddmc__jenv_has_cap(ddmc__jenv *e, int bit);

/* ---- refs.c */
int ddmc__ref_scope(ddmc__jvmti *jv, jobject h);
int ddmc__is_thread_object(ddmc__jvmti *jv, ddmc_ref obj);

/* ---- jni.c */
const ddmc__fnptr *ddmc__jni_functions(void);

/* ---- table.c */
const ddmc__fnptr *ddmc__jvmti_functions(void);
const ddmc__fnptr *ddmc__jvm_functions(void);
int ddmc__jvmti_slot_implemented(int slot);

/* ---- hub.c */
void ddmc__jv_hub_vm_start(ddmc__jvmti *jv);
void ddmc__jv_hub_vm_init(ddmc__jvmti *jv, uint32_t thread);
void ddmc__jv_hub_vm_death(ddmc__jvmti *jv, uint32_t thread);

/* ---- debug.c */
int ddmc__jenv_has_bp(ddmc__jenv *e, const ddmc_location *loc);
/* Does e watch field of c for kind (DDMC_WATCH_ACCESS or _MODIFY)? */
int ddmc__jenv_watches(ddmc__jenv *e, ddmc_class c, uint32_t field, unsigned kind);
void ddmc__jenv_clear_debug(ddmc__jenv *e);
/* After SingleStep's enables change: the VM steps exactly the threads some environment wants. */
void ddmc__jv_step_sync(ddmc__jvmti *jv);
/* A thread starts (start = 1) or ends: stepped from its start when SingleStep is on for it. */
void ddmc__jv_step_thread(ddmc__jvmti *jv, uint32_t thread, int start);

/* ---- the functions of the tables */
jvmtiError ddmc__jt_SetBreakpoint(ddmc__jenv *e, jmethodID method, jlocation location);
jvmtiError ddmc__jt_ClearBreakpoint(ddmc__jenv *e, jmethodID method, jlocation location);
jvmtiError ddmc__jt_SetFieldAccessWatch(ddmc__jenv *e, jclass klass, jfieldID field);
jvmtiError ddmc__jt_ClearFieldAccessWatch(ddmc__jenv *e, jclass klass, jfieldID field);
jvmtiError ddmc__jt_SetFieldModificationWatch(ddmc__jenv *e, jclass klass, jfieldID field);
jvmtiError ddmc__jt_ClearFieldModificationWatch(ddmc__jenv *e, jclass klass, jfieldID field);
jvmtiError ddmc__jt_GetLocalObject(ddmc__jenv *e, jthread thread, jint depth, jint slot, jobject *value_ptr);
jvmtiError ddmc__jt_GetLocalInt(ddmc__jenv *e, jthread thread, jint depth, jint slot, jint *value_ptr);
jvmtiError ddmc__jt_GetLocalLong(ddmc__jenv *e, jthread thread, jint depth, jint slot, jlong *value_ptr);
jvmtiError ddmc__jt_GetLocalFloat(ddmc__jenv *e, jthread thread, jint depth, jint slot, jfloat *value_ptr);
jvmtiError ddmc__jt_GetLocalDouble(ddmc__jenv *e, jthread thread, jint depth, jint slot, jdouble *value_ptr);
jvmtiError ddmc__jt_SetLocalObject(ddmc__jenv *e, jthread thread, jint depth, jint slot, jobject value);
jvmtiError ddmc__jt_SetLocalInt(ddmc__jenv *e, jthread thread, jint depth, jint slot, jint value);
jvmtiError ddmc__jt_SetLocalLong(ddmc__jenv *e, jthread thread, jint depth, jint slot, jlong value);
jvmtiError ddmc__jt_SetLocalFloat(ddmc__jenv *e, jthread thread, jint depth, jint slot, jfloat value);
jvmtiError ddmc__jt_SetLocalDouble(ddmc__jenv *e, jthread thread, jint depth, jint slot, jdouble value);
jvmtiError ddmc__jt_GetLocalInstance(ddmc__jenv *e, jthread thread, jint depth, jobject *value_ptr);
jvmtiError ddmc__jt_GetLoadedClasses(ddmc__jenv *e, jint *class_count_ptr, jclass **classes_ptr);
jvmtiError ddmc__jt_GetClassSignature(ddmc__jenv *e, jclass klass, char **signature_ptr, char **generic_ptr);
jvmtiError ddmc__jt_GetClassStatus(ddmc__jenv *e, jclass klass, jint *status_ptr);
jvmtiError ddmc__jt_GetSourceFileName(ddmc__jenv *e, jclass klass, char **source_name_ptr);
jvmtiError ddmc__jt_GetClassModifiers(ddmc__jenv *e, jclass klass, jint *modifiers_ptr);
jvmtiError ddmc__jt_GetClassMethods(ddmc__jenv *e, jclass klass, jint *method_count_ptr, jmethodID **methods_ptr);
jvmtiError ddmc__jt_GetClassFields(ddmc__jenv *e, jclass klass, jint *field_count_ptr, jfieldID **fields_ptr);
jvmtiError ddmc__jt_GetImplementedInterfaces(ddmc__jenv *e, jclass klass, jint *count_ptr, jclass **interfaces_ptr);
jvmtiError ddmc__jt_IsInterface(ddmc__jenv *e, jclass klass, jboolean *is_interface_ptr);
jvmtiError ddmc__jt_IsArrayClass(ddmc__jenv *e, jclass klass, jboolean *is_array_class_ptr);
jvmtiError ddmc__jt_GetClassLoader(ddmc__jenv *e, jclass klass, jobject *classloader_ptr);
jvmtiError ddmc__jt_GetMethodName(ddmc__jenv *e, jmethodID method, char **name_ptr, char **signature_ptr,
                                  char **generic_ptr);
jvmtiError ddmc__jt_GetMethodDeclaringClass(ddmc__jenv *e, jmethodID method, jclass *declaring_class_ptr);
jvmtiError ddmc__jt_GetMethodModifiers(ddmc__jenv *e, jmethodID method, jint *modifiers_ptr);
jvmtiError ddmc__jt_GetMaxLocals(ddmc__jenv *e, jmethodID method, jint *max_ptr);
jvmtiError ddmc__jt_GetArgumentsSize(ddmc__jenv *e, jmethodID method, jint *size_ptr);
jvmtiError ddmc__jt_GetMethodLocation(ddmc__jenv *e, jmethodID method, jlocation *start_location_ptr,
                                      jlocation *end_location_ptr);
jvmtiError ddmc__jt_IsMethodNative(ddmc__jenv *e, jmethodID method, jboolean *is_native_ptr);
jvmtiError ddmc__jt_IsMethodObsolete(ddmc__jenv *e, jmethodID method, jboolean *is_obsolete_ptr);
jvmtiError ddmc__jt_GetLineNumberTable(ddmc__jenv *e, jmethodID method, jint *entry_count_ptr,
                                       ddmc__jline_entry **table_ptr);
jvmtiError ddmc__jt_GetLocalVariableTable(ddmc__jenv *e, jmethodID method, jint *entry_count_ptr,
                                          ddmc__jlocal_entry **table_ptr);
jvmtiError ddmc__jt_GetFieldName(ddmc__jenv *e, jclass klass, jfieldID field, char **name_ptr, char **signature_ptr,
                                 char **generic_ptr);
jvmtiError ddmc__jt_GetFieldDeclaringClass(ddmc__jenv *e, jclass klass, jfieldID field, jclass *declaring_class_ptr);
jvmtiError ddmc__jt_GetFieldModifiers(ddmc__jenv *e, jclass klass, jfieldID field, jint *modifiers_ptr);
jvmtiError ddmc__jt_Allocate(ddmc__jenv *e, jlong size, unsigned char **mem_ptr);
jvmtiError ddmc__jt_Deallocate(ddmc__jenv *e, unsigned char *mem);
jvmtiError ddmc__jt_GetPhase(ddmc__jenv *e, jint *phase_ptr);
jvmtiError ddmc__jt_GetVersionNumber(ddmc__jenv *e, jint *version_ptr);
jvmtiError ddmc__jt_GetJLocationFormat(ddmc__jenv *e, jint *format_ptr);
jvmtiError ddmc__jt_GetErrorName(ddmc__jenv *e, jvmtiError error, char **name_ptr);
jvmtiError ddmc__jt_GetPotentialCapabilities(ddmc__jenv *e, ddmc__caps *capabilities_ptr);
jvmtiError ddmc__jt_AddCapabilities(ddmc__jenv *e, const ddmc__caps *capabilities_ptr);
jvmtiError ddmc__jt_RelinquishCapabilities(ddmc__jenv *e, const ddmc__caps *capabilities_ptr);
jvmtiError ddmc__jt_GetCapabilities(ddmc__jenv *e, ddmc__caps *capabilities_ptr);
jvmtiError ddmc__jt_SetEventNotificationMode(ddmc__jenv *e, jint mode, jint event_type, jthread event_thread, ...);
jvmtiError ddmc__jt_SetEventCallbacks(ddmc__jenv *e, const ddmc__fnptr *callbacks, jint size_of_callbacks);
jvmtiError ddmc__jt_GenerateEvents(ddmc__jenv *e, jint event_type);
jvmtiError ddmc__jt_GetEnvironmentLocalStorage(ddmc__jenv *e, void **data_ptr);
jvmtiError ddmc__jt_SetEnvironmentLocalStorage(ddmc__jenv *e, const void *data);
jvmtiError ddmc__jt_DisposeEnvironment(ddmc__jenv *e);
jvmtiError ddmc__jt_GetSystemProperties(ddmc__jenv *e, jint *count_ptr, char ***property_ptr);
jvmtiError ddmc__jt_GetSystemProperty(ddmc__jenv *e, const char *property, char **value_ptr);
jvmtiError ddmc__jt_SetSystemProperty(ddmc__jenv *e, const char *property, const char *value_ptr);
jvmtiError ddmc__jt_GetTimerInfo(ddmc__jenv *e, ddmc__jtimer_info *info_ptr);
jvmtiError ddmc__jt_GetTime(ddmc__jenv *e, jlong *nanos_ptr);
jvmtiError ddmc__jt_GetAvailableProcessors(ddmc__jenv *e, jint *processor_count_ptr);
jvmtiError ddmc__jt_SetVerboseFlag(ddmc__jenv *e, jint flag, jboolean value);
jint ddmc__jni_GetVersion(ddmc__jnienv *env);
jclass ddmc__jni_FindClass(ddmc__jnienv *env, const char *name);
jclass ddmc__jni_GetSuperclass(ddmc__jnienv *env, jclass sub);
jboolean ddmc__jni_IsAssignableFrom(ddmc__jnienv *env, jclass sub, jclass sup);
jint ddmc__jni_Throw(ddmc__jnienv *env, jthrowable obj);
jint ddmc__jni_ThrowNew(ddmc__jnienv *env, jclass clazz, const char *msg);
jthrowable ddmc__jni_ExceptionOccurred(ddmc__jnienv *env);
void ddmc__jni_ExceptionDescribe(ddmc__jnienv *env);
void ddmc__jni_ExceptionClear(ddmc__jnienv *env);
jboolean ddmc__jni_ExceptionCheck(ddmc__jnienv *env);
void ddmc__jni_FatalError(ddmc__jnienv *env, const char *msg);
jint ddmc__jni_PushLocalFrame(ddmc__jnienv *env, jint capacity);
jobject ddmc__jni_PopLocalFrame(ddmc__jnienv *env, jobject result);
jobject ddmc__jni_NewGlobalRef(ddmc__jnienv *env, jobject obj);
void ddmc__jni_DeleteGlobalRef(ddmc__jnienv *env, jobject gref);
void ddmc__jni_DeleteLocalRef(ddmc__jnienv *env, jobject obj);
jobject ddmc__jni_NewLocalRef(ddmc__jnienv *env, jobject ref);
jweak ddmc__jni_NewWeakGlobalRef(ddmc__jnienv *env, jobject obj);
void ddmc__jni_DeleteWeakGlobalRef(ddmc__jnienv *env, jweak ref);
jint ddmc__jni_EnsureLocalCapacity(ddmc__jnienv *env, jint capacity);
jboolean ddmc__jni_IsSameObject(ddmc__jnienv *env, jobject a, jobject b);
jint ddmc__jni_GetObjectRefType(ddmc__jnienv *env, jobject obj);
jclass ddmc__jni_GetObjectClass(ddmc__jnienv *env, jobject obj);
jboolean ddmc__jni_IsInstanceOf(ddmc__jnienv *env, jobject obj, jclass clazz);
jmethodID ddmc__jni_GetMethodID(ddmc__jnienv *env, jclass clazz, const char *name, const char *sig);
jmethodID ddmc__jni_GetStaticMethodID(ddmc__jnienv *env, jclass clazz, const char *name, const char *sig);
jfieldID ddmc__jni_GetFieldID(ddmc__jnienv *env, jclass clazz, const char *name, const char *sig);
jfieldID ddmc__jni_GetStaticFieldID(ddmc__jnienv *env, jclass clazz, const char *name, const char *sig);
jstring ddmc__jni_NewStringUTF(ddmc__jnienv *env, const char *utf);
jsize ddmc__jni_GetStringUTFLength(ddmc__jnienv *env, jstring str);
const char *ddmc__jni_GetStringUTFChars(ddmc__jnienv *env, jstring str, jboolean *isCopy);
void ddmc__jni_ReleaseStringUTFChars(ddmc__jnienv *env, jstring str, const char *chars);
jsize ddmc__jni_GetArrayLength(ddmc__jnienv *env, jobject array);
jint ddmc__jni_GetJavaVM(ddmc__jnienv *env, void **vm);
jvmtiError ddmc__jt_CreateRawMonitor(ddmc__jenv *e, const char *name, jrawMonitorID *monitor_ptr);
jvmtiError ddmc__jt_DestroyRawMonitor(ddmc__jenv *e, jrawMonitorID m);
jvmtiError ddmc__jt_RawMonitorEnter(ddmc__jenv *e, jrawMonitorID m);
jvmtiError ddmc__jt_RawMonitorExit(ddmc__jenv *e, jrawMonitorID m);
jvmtiError ddmc__jt_RawMonitorWait(ddmc__jenv *e, jrawMonitorID m, jlong millis);
jvmtiError ddmc__jt_RawMonitorNotify(ddmc__jenv *e, jrawMonitorID m);
jvmtiError ddmc__jt_RawMonitorNotifyAll(ddmc__jenv *e, jrawMonitorID m);
jvmtiError ddmc__jt_GetAllThreads(ddmc__jenv *e, jint *threads_count_ptr, jthread **threads_ptr);
jvmtiError ddmc__jt_GetThreadInfo(ddmc__jenv *e, jthread thread, ddmc__jthread_info *info_ptr);
jvmtiError ddmc__jt_GetThreadState(ddmc__jenv *e, jthread thread, jint *thread_state_ptr);
jvmtiError ddmc__jt_GetCurrentThread(ddmc__jenv *e, jthread *thread_ptr);
jvmtiError ddmc__jt_GetTopThreadGroups(ddmc__jenv *e, jint *group_count_ptr, jthreadGroup **groups_ptr);
jvmtiError ddmc__jt_GetThreadGroupInfo(ddmc__jenv *e, jthreadGroup group, ddmc__jgroup_info *info_ptr);
jvmtiError ddmc__jt_GetThreadGroupChildren(ddmc__jenv *e, jthreadGroup group, jint *thread_count_ptr,
                                           jthread **threads_ptr, jint *group_count_ptr, jthreadGroup **groups_ptr);
jvmtiError ddmc__jt_GetFrameCount(ddmc__jenv *e, jthread thread, jint *count_ptr);
jvmtiError ddmc__jt_GetStackTrace(ddmc__jenv *e, jthread thread, jint start_depth, jint max_frame_count,
                                  ddmc__jframe_info *frame_buffer, jint *count_ptr);
jvmtiError ddmc__jt_GetFrameLocation(ddmc__jenv *e, jthread thread, jint depth, jmethodID *method_ptr,
                                     jlocation *location_ptr);
jvmtiError ddmc__jt_GetAllStackTraces(ddmc__jenv *e, jint max_frame_count, ddmc__jstack_info **stack_info_ptr,
                                      jint *thread_count_ptr);
/* ---- heap: tags.c, heap.c, hub_heap.c */
jvmtiError ddmc__jt_GetTag(ddmc__jenv *e, jobject object, jlong *tag_ptr);
jvmtiError ddmc__jt_SetTag(ddmc__jenv *e, jobject object, jlong tag);
jvmtiError ddmc__jt_GetObjectsWithTags(ddmc__jenv *e, jint tag_count, const jlong *tags, jint *count_ptr,
                                       jobject **object_result_ptr, jlong **tag_result_ptr);
jvmtiError ddmc__jt_ForceGarbageCollection(ddmc__jenv *e);
jvmtiError ddmc__jt_IterateThroughHeap(ddmc__jenv *e, jint heap_filter, jclass klass, const void *callbacks,
                                       const void *user_data);
jvmtiError ddmc__jt_FollowReferences(ddmc__jenv *e, jint heap_filter, jclass klass, jobject initial_object,
                                     const void *callbacks, const void *user_data);
jvmtiError ddmc__jt_GetObjectSize(ddmc__jenv *e, jobject object, jlong *size_ptr);
jvmtiError ddmc__jt_GetObjectHashCode(ddmc__jenv *e, jobject object, jint *hash_code_ptr);

/* ---- threads and monitors: suspend.c, agentthread.c, monitors.c */
int ddmc__susp_held(ddmc__jvmti *jv, uint32_t thread);
jvmtiError ddmc__jt_SuspendThread(ddmc__jenv *e, jthread thread);
jvmtiError ddmc__jt_ResumeThread(ddmc__jenv *e, jthread thread);
jvmtiError ddmc__jt_SuspendThreadList(ddmc__jenv *e, jint request_count, const jthread *request_list,
                                      jvmtiError *results);
jvmtiError ddmc__jt_ResumeThreadList(ddmc__jenv *e, jint request_count, const jthread *request_list,
                                     jvmtiError *results);
jvmtiError ddmc__jt_RunAgentThread(ddmc__jenv *e, jthread thread, ddmc__jstart_fn proc, const void *arg,
                                   jint priority);
jvmtiError ddmc__jt_GetOwnedMonitorInfo(ddmc__jenv *e, jthread thread, jint *owned_monitor_count_ptr,
                                        jobject **owned_monitors_ptr);
jvmtiError ddmc__jt_GetOwnedMonitorStackDepthInfo(ddmc__jenv *e, jthread thread, jint *monitor_info_count_ptr,
                                                  ddmc__jmonitor_depth **monitor_info_ptr);
jvmtiError ddmc__jt_GetCurrentContendedMonitor(ddmc__jenv *e, jthread thread, jobject *monitor_ptr);
jvmtiError ddmc__jt_GetObjectMonitorUsage(ddmc__jenv *e, jobject object, ddmc__jmonitor_usage *info_ptr);
jobject ddmc__jni_AllocObject(ddmc__jnienv *env, jclass clazz);
jobject ddmc__jni_NewObject(ddmc__jnienv *env, jclass clazz, jmethodID m, ...);
jobject ddmc__jni_NewObjectV(ddmc__jnienv *env, jclass clazz, jmethodID m, va_list args);
jobject ddmc__jni_NewObjectA(ddmc__jnienv *env, jclass clazz, jmethodID m, const jvalue *args);


#endif
