/* SPDX-License-Identifier: Apache-2.0 */
/* heap.c's part of JVM TI: the JDK's heap types written out (as jtypes.h does for the rest:
 * tests/jvmti/test_jvmti_abi.c checks them against jvmti.h) for IterateThroughHeap and
 * FollowReferences. The tag tables the walks read and write are in tags.h. */
#ifndef DDMC_JVMTI_HEAP_H
#define DDMC_JVMTI_HEAP_H

#include "jvmti/funcs.h"

enum {
  JVMTI_HEAP_FILTER_TAGGED = 0x4,
  JVMTI_HEAP_FILTER_UNTAGGED = 0x8,
  JVMTI_HEAP_FILTER_CLASS_TAGGED = 0x10,
  JVMTI_HEAP_FILTER_CLASS_UNTAGGED = 0x20
};
enum { JVMTI_VISIT_OBJECTS = 0x100, JVMTI_VISIT_ABORT = 0x8000 };
enum {
  JVMTI_HEAP_REFERENCE_CLASS = 1,
  JVMTI_HEAP_REFERENCE_FIELD = 2,
  JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT = 3,
  JVMTI_HEAP_REFERENCE_CLASS_LOADER = 4,
  JVMTI_HEAP_REFERENCE_INTERFACE = 7,
  JVMTI_HEAP_REFERENCE_STATIC_FIELD = 8,
  JVMTI_HEAP_REFERENCE_SUPERCLASS = 10,
  JVMTI_HEAP_REFERENCE_JNI_GLOBAL = 21,
  JVMTI_HEAP_REFERENCE_SYSTEM_CLASS = 22,
  JVMTI_HEAP_REFERENCE_MONITOR = 23,
  JVMTI_HEAP_REFERENCE_STACK_LOCAL = 24,
  JVMTI_HEAP_REFERENCE_JNI_LOCAL = 25,
  JVMTI_HEAP_REFERENCE_THREAD = 26,
  JVMTI_HEAP_REFERENCE_OTHER = 27
};

typedef struct ddmc__jv_jref_stack_local {
  jlong thread_tag;
  jlong thread_id;
  jint depth;
  jmethodID method;
  jlocation location;
  jint slot;
} ddmc__jv_jref_stack_local;

/* jvmtiHeapReferenceInfo: 64 bytes (its reserved member, 8 jlongs). */
typedef union ddmc__jv_jref_info {
  jint index; /* field, array, constant_pool */
  ddmc__jv_jref_stack_local stack_local;
  jlong reserved[8];
} ddmc__jv_jref_info;

typedef jint (*ddmc__jv_heap_iteration_cb)(jlong class_tag, jlong size, jlong *tag_ptr, jint length, void *user_data);
typedef jint (*ddmc__jv_heap_reference_cb)(jint reference_kind, const ddmc__jv_jref_info *reference_info,
                                           jlong class_tag, jlong referrer_class_tag, jlong size, jlong *tag_ptr,
                                           jlong *referrer_tag_ptr, jint length, void *user_data);
typedef jint (*ddmc__jv_primitive_field_cb)(jint kind, const ddmc__jv_jref_info *info, jlong object_class_tag,
                                            jlong *object_tag_ptr, jvalue value, jint value_type, void *user_data);
typedef jint (*ddmc__jv_array_primitive_cb)(jlong class_tag, jlong size, jlong *tag_ptr, jint element_count,
                                            jint element_type, const void *elements, void *user_data);
typedef jint (*ddmc__jv_string_primitive_cb)(jlong class_tag, jlong size, jlong *tag_ptr, const jchar *value,
                                             jint value_length, void *user_data);

/* jvmtiHeapCallbacks: 16 pointers. */
typedef struct ddmc__jv_heap_callbacks {
  ddmc__jv_heap_iteration_cb heap_iteration_callback;
  ddmc__jv_heap_reference_cb heap_reference_callback;
  ddmc__jv_primitive_field_cb primitive_field_callback;
  ddmc__jv_array_primitive_cb array_primitive_value_callback;
  ddmc__jv_string_primitive_cb string_primitive_value_callback;
  ddmc__jv_fnptr reserved[11];
} ddmc__jv_heap_callbacks;

#endif
