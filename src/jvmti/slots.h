/* SPDX-License-Identifier: Apache-2.0 */
/* Table indexes and capability bits, free of any type so that a test can include this header
 * beside the JDK's jni.h / jvmti.h and check each number against them
 * (tests/jvmti/test_jvmti_abi.c). JVM TI function slots are written in table.c as the
 * specification numbers them (slot n at index n - 1); the test checks those through the table. */
#ifndef DDMC_JVMTI_SLOTS_H
#define DDMC_JVMTI_SLOTS_H

#define DDMC_JNI_SLOTS 235 /* reserved0 .. GetModule (index 233) + 1 spare for a newer header */

/* JNI function table indexes (the JNI specification's numbering, as in jni.h's order). */
enum {
  DDMC_JNI_GetVersion = 4,
  DDMC_JNI_FindClass = 6,
  DDMC_JNI_GetSuperclass = 10,
  DDMC_JNI_IsAssignableFrom = 11,
  DDMC_JNI_Throw = 13,
  DDMC_JNI_ThrowNew = 14,
  DDMC_JNI_ExceptionOccurred = 15,
  DDMC_JNI_ExceptionDescribe = 16,
  DDMC_JNI_ExceptionClear = 17,
  DDMC_JNI_FatalError = 18,
  DDMC_JNI_PushLocalFrame = 19,
  DDMC_JNI_PopLocalFrame = 20,
  DDMC_JNI_NewGlobalRef = 21,
  DDMC_JNI_DeleteGlobalRef = 22,
  DDMC_JNI_DeleteLocalRef = 23,
  DDMC_JNI_IsSameObject = 24,
  DDMC_JNI_NewLocalRef = 25,
  DDMC_JNI_EnsureLocalCapacity = 26,
  DDMC_JNI_AllocObject = 27,
  DDMC_JNI_NewObject = 28,
  DDMC_JNI_NewObjectV = 29,
  DDMC_JNI_NewObjectA = 30,
  DDMC_JNI_GetObjectClass = 31,
  DDMC_JNI_IsInstanceOf = 32,
  DDMC_JNI_GetMethodID = 33,
  DDMC_JNI_GetFieldID = 94,
  DDMC_JNI_GetStaticMethodID = 113,
  DDMC_JNI_GetStaticFieldID = 144,
  DDMC_JNI_NewStringUTF = 167,
  DDMC_JNI_GetStringUTFLength = 168,
  DDMC_JNI_GetStringUTFChars = 169,
  DDMC_JNI_ReleaseStringUTFChars = 170,
  DDMC_JNI_GetArrayLength = 171,
  DDMC_JNI_GetJavaVM = 219,
  DDMC_JNI_NewWeakGlobalRef = 226,
  DDMC_JNI_DeleteWeakGlobalRef = 227,
  DDMC_JNI_ExceptionCheck = 228,
  DDMC_JNI_GetObjectRefType = 232
};

/* JavaVM (JNIInvokeInterface_) indexes. */
enum {
  DDMC_JVM_DestroyJavaVM = 3,
  DDMC_JVM_AttachCurrentThread = 4,
  DDMC_JVM_DetachCurrentThread = 5,
  DDMC_JVM_GetEnv = 6,
  DDMC_JVM_AttachCurrentThreadAsDaemon = 7,
  DDMC_JVM_SLOTS = 8
};

/* Capabilities: jvmtiCapabilities is 128 bits of bit-fields in declaration order; bit n of the
 * struct (n from 0, least significant first in word n / 32) is the n-th capability. */
enum {
  DDMC_CAP_can_tag_objects = 0,
  DDMC_CAP_can_generate_field_modification_events = 1,
  DDMC_CAP_can_generate_field_access_events = 2,
  DDMC_CAP_can_get_bytecodes = 3,
  DDMC_CAP_can_get_synthetic_attribute = 4,
  DDMC_CAP_can_get_owned_monitor_info = 5,
  DDMC_CAP_can_get_current_contended_monitor = 6,
  DDMC_CAP_can_get_monitor_info = 7,
  DDMC_CAP_can_pop_frame = 8,
  DDMC_CAP_can_redefine_classes = 9,
  DDMC_CAP_can_signal_thread = 10,
  DDMC_CAP_can_get_source_file_name = 11,
  DDMC_CAP_can_get_line_numbers = 12,
  DDMC_CAP_can_get_source_debug_extension = 13,
  DDMC_CAP_can_access_local_variables = 14,
  DDMC_CAP_can_maintain_original_method_order = 15,
  DDMC_CAP_can_generate_single_step_events = 16,
  DDMC_CAP_can_generate_exception_events = 17,
  DDMC_CAP_can_generate_frame_pop_events = 18,
  DDMC_CAP_can_generate_breakpoint_events = 19,
  DDMC_CAP_can_suspend = 20,
  DDMC_CAP_can_redefine_any_class = 21,
  DDMC_CAP_can_get_current_thread_cpu_time = 22,
  DDMC_CAP_can_get_thread_cpu_time = 23,
  DDMC_CAP_can_generate_method_entry_events = 24,
  DDMC_CAP_can_generate_method_exit_events = 25,
  DDMC_CAP_can_generate_all_class_hook_events = 26,
  DDMC_CAP_can_generate_compiled_method_load_events = 27,
  DDMC_CAP_can_generate_monitor_events = 28,
  DDMC_CAP_can_generate_vm_object_alloc_events = 29,
  DDMC_CAP_can_generate_native_method_bind_events = 30,
  DDMC_CAP_can_generate_garbage_collection_events = 31,
  DDMC_CAP_can_generate_object_free_events = 32,
  DDMC_CAP_can_force_early_return = 33,
  DDMC_CAP_can_get_owned_monitor_stack_depth_info = 34,
  DDMC_CAP_can_get_constant_pool = 35,
  DDMC_CAP_can_set_native_method_prefix = 36,
  DDMC_CAP_can_retransform_classes = 37,
  DDMC_CAP_can_retransform_any_class = 38,
  DDMC_CAP_can_generate_resource_exhaustion_heap_events = 39,
  DDMC_CAP_can_generate_resource_exhaustion_threads_events = 40,
  DDMC_CAP_can_generate_early_vmstart = 41,
  DDMC_CAP_can_generate_early_class_hook_events = 42,
  DDMC_CAP_can_generate_sampled_object_alloc_events = 43,
  DDMC__CAP_COUNT = 44
};
#endif
