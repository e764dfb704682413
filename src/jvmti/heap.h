/* The heap part of JVM TI: the JDK's heap types written out (as jtypes.h does for the
 * rest: tests/jvmti/test_jvmti_abi.c checks them against jvmti.h), and the calls between
 * tags.c (the weak tag tables), heap.c (the walks) and hub_heap.c (GC events, the sweep,
 * VMObjectAlloc).
 *
 * Tags. Each environment has its own table, keyed by the VM's reference (ddmc_ref), made at its
 * first SetTag and bounded (DDMC__TAGS_MAX entries: past it SetTag answers OUT_OF_MEMORY). Its
 * entries are weak: they are no GC roots, and at each collection the VM's ddmc_gc_sweep drops
 * the entries of objects it frees (their tags wait, in space reserved with the table, for
 * ObjectFree at ddmc_gc_done). A moving collector's new addresses mark the table stale; the next
 * lookup outside the GC rehashes it (or scans it while it cannot). The table's mutex is a leaf,
 * never held across a callback or a VM op. */
#ifndef DDMC_JVMTI_HEAP_H
#define DDMC_JVMTI_HEAP_H

#include "jvmti/funcs.h"

#define DDMC__TAGS_MAX ((uint32_t)1 << 22) /* tagged objects per environment */
/* The key of a class that has no class object (a VM that gives arrays none): SetTag on its
 * jclass still works. Never swept (classes are not unloaded), never a VM reference (those stay
 * below 2^32, debugger.h). */
#define DDMC__CLASS_KEY(c) (((ddmc_ref)1 << 63) | (ddmc_ref)(c))

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

typedef struct ddmc__jref_stack_local {
  jlong thread_tag;
  jlong thread_id;
  jint depth;
  jmethodID method;
  jlocation location;
  jint slot;
} ddmc__jref_stack_local;

/* jvmtiHeapReferenceInfo: 64 bytes (its reserved member, 8 jlongs). */
typedef union ddmc__jref_info {
  jint index; /* field, array, constant_pool */
  ddmc__jref_stack_local stack_local;
  jlong reserved[8];
} ddmc__jref_info;

typedef jint (*ddmc__heap_iteration_cb)(jlong class_tag, jlong size, jlong *tag_ptr, jint length, void *user_data);
typedef jint (*ddmc__heap_reference_cb)(jint reference_kind, const ddmc__jref_info *reference_info, jlong class_tag,
                                        jlong referrer_class_tag, jlong size, jlong *tag_ptr, jlong *referrer_tag_ptr,
                                        jint length, void *user_data);
typedef jint (*ddmc__primitive_field_cb)(jint kind, const ddmc__jref_info *info, jlong object_class_tag,
                                         jlong *object_tag_ptr, jvalue value, jint value_type, void *user_data);
typedef jint (*ddmc__array_primitive_cb)(jlong class_tag, jlong size, jlong *tag_ptr, jint element_count,
                                         jint element_type, const void *elements, void *user_data);
typedef jint (*ddmc__string_primitive_cb)(jlong class_tag, jlong size, jlong *tag_ptr, const jchar *value,
                                          jint value_length, void *user_data);

/* jvmtiHeapCallbacks: 16 pointers. */
typedef struct ddmc__heap_callbacks {
  ddmc__heap_iteration_cb heap_iteration_callback;
  ddmc__heap_reference_cb heap_reference_callback;
  ddmc__primitive_field_cb primitive_field_callback;
  ddmc__array_primitive_cb array_primitive_value_callback;
  ddmc__string_primitive_cb string_primitive_value_callback;
  ddmc__fnptr reserved[11];
} ddmc__heap_callbacks;

/* ---- tags.c. Every call takes the table's lock itself. */
typedef struct ddmc__tags ddmc__tags;
/* The environment's table, made when make is non-zero (NULL: none yet, or out of memory). */
ddmc__tags *ddmc__tags_of(ddmc__jenv *e, int make);
/* 0 when ref has no tag. */
jlong ddmc__tags_get(ddmc__tags *t, ddmc_ref ref);
/* tag 0 removes. 0, or JVMTI_ERROR_OUT_OF_MEMORY (over DDMC__TAGS_MAX, or no memory). */
jvmtiError ddmc__tags_set(ddmc__tags *t, ddmc_ref ref, jlong tag);
/* Visits (ref, tag) of every entry until fn returns non-zero, under the lock: fn must not call
 * back into the table. */
void ddmc__tags_each(ddmc__tags *t, int (*fn)(void *arg, ddmc_ref ref, jlong tag), void *arg);
uint32_t ddmc__tags_count(ddmc__tags *t);
/* The GC's sweep (ddmc_gc_sweep): drops dead entries; keep_freed: keep their tags for ObjectFree. */
void ddmc__tags_sweep(ddmc__tags *t, ddmc_gc_is_live_fn is_live, void *arg, int keep_freed);
/* Takes up to max tags of freed objects (for ObjectFree); returns how many. */
uint32_t ddmc__tags_take_freed(ddmc__tags *t, jlong *out, uint32_t max);
void ddmc__tags_destroy(ddmc__tags *t);

#endif
