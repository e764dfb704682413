/* SPDX-License-Identifier: Apache-2.0 */
/* The JNI and JVM TI types, constants and numbers the layer needs, written out here so that
 * libddmc builds without the JDK's headers. Every type has the ABI of its jni.h / jvmti.h
 * counterpart on LP64 and ILP32 Linux (jint is int, jlong is int64_t, jboolean unsigned char,
 * references and IDs are pointers); tests/jvmti/test_jvmti_abi.c compiles against the JDK's
 * headers and checks every size, offset, slot and bit used here.
 *
 * Slot numbers are the "num" of each function in the JVM TI specification: the function table
 * is an array of pointers where slot n sits at index n - 1 (slot 1 is reserved). Event numbers
 * are the specification's (VMInit 50 ... SampledObjectAlloc 86); the callback table is an array
 * of pointers where event e sits at index e - 50. */
#ifndef DDMC_JVMTI_JTYPES_H
#define DDMC_JVMTI_JTYPES_H

#include <stdint.h>

#include "jvmti/slots.h"

typedef int jint;
typedef int64_t jlong;
typedef signed char jbyte;
typedef unsigned char jboolean;
typedef unsigned short jchar;
typedef short jshort;
typedef float jfloat;
typedef double jdouble;
typedef jint jsize;
typedef jlong jlocation;

struct ddmc__jobj; /* opaque: a handle, never dereferenced by an agent */
typedef struct ddmc__jobj *jobject;
typedef jobject jclass, jthread, jthreadGroup, jstring, jthrowable, jweak;
struct ddmc__jmember;
typedef struct ddmc__jmember *jmethodID;
typedef struct ddmc__jmember *jfieldID;

typedef union jvalue {
  jboolean z;
  jbyte b;
  jchar c;
  jshort s;
  jint i;
  jlong j;
  jfloat f;
  jdouble d;
  jobject l;
} jvalue;

typedef struct ddmc__jv_rawmon *jrawMonitorID;

/* A generic code pointer: the tables hold every slot as one (ISO C converts between function
 * pointer types through a cast; each is called through the agent's own, correct type). */
typedef void (*ddmc__jv_fnptr)(void);

/* ---- JNI */
#define DDMC_JNI_OK 0
#define DDMC_JNI_ERR (-1)
#define DDMC_JNI_EDETACHED (-2)
#define DDMC_JNI_EVERSION (-3)
#define DDMC_JNI_VERSION_1_1 0x00010001
#define DDMC_JNI_VERSION_1_2 0x00010002
#define DDMC_JNI_VERSION_1_4 0x00010004
#define DDMC_JNI_VERSION_1_6 0x00010006
#define DDMC_JNI_VERSION_1_8 0x00010008
#define DDMC_JNI_VERSION_9 0x00090000
#define DDMC_JNI_VERSION_10 0x000a0000
/* What this library's JNIEnv reports (GetVersion): the JDK 17 JNI (JNI_VERSION_10). */
#define DDMC_JNI_VERSION_NOW DDMC_JNI_VERSION_10

/* ---- JVM TI */
typedef int jvmtiError;
enum {
  JVMTI_ERROR_NONE = 0,
  JVMTI_ERROR_INVALID_THREAD = 10,
  JVMTI_ERROR_INVALID_THREAD_GROUP = 11,
  JVMTI_ERROR_INVALID_PRIORITY = 12,
  JVMTI_ERROR_THREAD_NOT_SUSPENDED = 13,
  JVMTI_ERROR_THREAD_SUSPENDED = 14,
  JVMTI_ERROR_THREAD_NOT_ALIVE = 15,
  JVMTI_ERROR_INVALID_OBJECT = 20,
  JVMTI_ERROR_INVALID_CLASS = 21,
  JVMTI_ERROR_CLASS_NOT_PREPARED = 22,
  JVMTI_ERROR_INVALID_METHODID = 23,
  JVMTI_ERROR_INVALID_LOCATION = 24,
  JVMTI_ERROR_INVALID_FIELDID = 25,
  JVMTI_ERROR_INVALID_MODULE = 26,
  JVMTI_ERROR_NO_MORE_FRAMES = 31,
  JVMTI_ERROR_OPAQUE_FRAME = 32,
  JVMTI_ERROR_TYPE_MISMATCH = 34,
  JVMTI_ERROR_INVALID_SLOT = 35,
  JVMTI_ERROR_DUPLICATE = 40,
  JVMTI_ERROR_NOT_FOUND = 41,
  JVMTI_ERROR_INVALID_MONITOR = 50,
  JVMTI_ERROR_NOT_MONITOR_OWNER = 51,
  JVMTI_ERROR_INTERRUPT = 52,
  JVMTI_ERROR_INVALID_CLASS_FORMAT = 60,
  JVMTI_ERROR_CIRCULAR_CLASS_DEFINITION = 61,
  JVMTI_ERROR_FAILS_VERIFICATION = 62,
  JVMTI_ERROR_UNSUPPORTED_REDEFINITION_METHOD_ADDED = 63,
  JVMTI_ERROR_UNSUPPORTED_REDEFINITION_SCHEMA_CHANGED = 64,
  JVMTI_ERROR_INVALID_TYPESTATE = 65,
  JVMTI_ERROR_UNSUPPORTED_REDEFINITION_HIERARCHY_CHANGED = 66,
  JVMTI_ERROR_UNSUPPORTED_REDEFINITION_METHOD_DELETED = 67,
  JVMTI_ERROR_UNSUPPORTED_VERSION = 68,
  JVMTI_ERROR_NAMES_DONT_MATCH = 69,
  JVMTI_ERROR_UNSUPPORTED_REDEFINITION_CLASS_MODIFIERS_CHANGED = 70,
  JVMTI_ERROR_UNSUPPORTED_REDEFINITION_METHOD_MODIFIERS_CHANGED = 71,
  JVMTI_ERROR_UNSUPPORTED_REDEFINITION_CLASS_ATTRIBUTE_CHANGED = 72,
  JVMTI_ERROR_UNMODIFIABLE_CLASS = 79,
  JVMTI_ERROR_UNMODIFIABLE_MODULE = 80,
  JVMTI_ERROR_NOT_AVAILABLE = 98,
  JVMTI_ERROR_MUST_POSSESS_CAPABILITY = 99,
  JVMTI_ERROR_NULL_POINTER = 100,
  JVMTI_ERROR_ABSENT_INFORMATION = 101,
  JVMTI_ERROR_INVALID_EVENT_TYPE = 102,
  JVMTI_ERROR_ILLEGAL_ARGUMENT = 103,
  JVMTI_ERROR_NATIVE_METHOD = 104,
  JVMTI_ERROR_CLASS_LOADER_UNSUPPORTED = 106,
  JVMTI_ERROR_OUT_OF_MEMORY = 110,
  JVMTI_ERROR_ACCESS_DENIED = 111,
  JVMTI_ERROR_WRONG_PHASE = 112,
  JVMTI_ERROR_INTERNAL = 113,
  JVMTI_ERROR_UNATTACHED_THREAD = 115,
  JVMTI_ERROR_INVALID_ENVIRONMENT = 116
};

/* JVMTI_VERSION of JDK 17 (0x30110000) is what GetVersionNumber reports; GetEnv accepts any
 * 1.x, 9, 11 ... 17 request (the interface only grows). */
#define DDMC_JVMTI_VERSION_INTERFACE 0x30000000
#define DDMC_JVMTI_VERSION_NOW 0x30110000

enum {
  JVMTI_PHASE_ONLOAD = 1,
  JVMTI_PHASE_PRIMORDIAL = 2,
  JVMTI_PHASE_LIVE = 4,
  JVMTI_PHASE_START = 6,
  JVMTI_PHASE_DEAD = 8
};
enum { JVMTI_DISABLE = 0, JVMTI_ENABLE = 1 };

enum {
  JVMTI_THREAD_STATE_ALIVE = 0x0001,
  JVMTI_THREAD_STATE_TERMINATED = 0x0002,
  JVMTI_THREAD_STATE_RUNNABLE = 0x0004,
  JVMTI_THREAD_STATE_WAITING_INDEFINITELY = 0x0010,
  JVMTI_THREAD_STATE_WAITING_WITH_TIMEOUT = 0x0020,
  JVMTI_THREAD_STATE_SLEEPING = 0x0040,
  JVMTI_THREAD_STATE_WAITING = 0x0080,
  JVMTI_THREAD_STATE_IN_OBJECT_WAIT = 0x0100,
  JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER = 0x0400,
  JVMTI_THREAD_STATE_SUSPENDED = 0x100000,
  JVMTI_THREAD_STATE_INTERRUPTED = 0x200000,
  JVMTI_THREAD_STATE_IN_NATIVE = 0x400000
};

enum {
  JVMTI_CLASS_STATUS_VERIFIED = 1,
  JVMTI_CLASS_STATUS_PREPARED = 2,
  JVMTI_CLASS_STATUS_INITIALIZED = 4,
  JVMTI_CLASS_STATUS_ERROR = 8,
  JVMTI_CLASS_STATUS_ARRAY = 16,
  JVMTI_CLASS_STATUS_PRIMITIVE = 32
};

enum { JVMTI_TIMER_USER_CPU = 30, JVMTI_TIMER_TOTAL_CPU = 31, JVMTI_TIMER_ELAPSED = 32 };
enum { JVMTI_THREAD_MIN_PRIORITY = 1, JVMTI_THREAD_NORM_PRIORITY = 5, JVMTI_THREAD_MAX_PRIORITY = 10 };

/* Events. */
enum {
  DDMC__JEV_FIRST = 50,
  JVMTI_EVENT_VM_INIT = 50,
  JVMTI_EVENT_VM_DEATH = 51,
  JVMTI_EVENT_THREAD_START = 52,
  JVMTI_EVENT_THREAD_END = 53,
  JVMTI_EVENT_CLASS_FILE_LOAD_HOOK = 54,
  JVMTI_EVENT_CLASS_LOAD = 55,
  JVMTI_EVENT_CLASS_PREPARE = 56,
  JVMTI_EVENT_VM_START = 57,
  JVMTI_EVENT_EXCEPTION = 58,
  JVMTI_EVENT_EXCEPTION_CATCH = 59,
  JVMTI_EVENT_SINGLE_STEP = 60,
  JVMTI_EVENT_FRAME_POP = 61,
  JVMTI_EVENT_BREAKPOINT = 62,
  JVMTI_EVENT_FIELD_ACCESS = 63,
  JVMTI_EVENT_FIELD_MODIFICATION = 64,
  JVMTI_EVENT_METHOD_ENTRY = 65,
  JVMTI_EVENT_METHOD_EXIT = 66,
  JVMTI_EVENT_NATIVE_METHOD_BIND = 67,
  JVMTI_EVENT_COMPILED_METHOD_LOAD = 68,
  JVMTI_EVENT_COMPILED_METHOD_UNLOAD = 69,
  JVMTI_EVENT_DYNAMIC_CODE_GENERATED = 70,
  JVMTI_EVENT_DATA_DUMP_REQUEST = 71,
  JVMTI_EVENT_MONITOR_WAIT = 73,
  JVMTI_EVENT_MONITOR_WAITED = 74,
  JVMTI_EVENT_MONITOR_CONTENDED_ENTER = 75,
  JVMTI_EVENT_MONITOR_CONTENDED_ENTERED = 76,
  JVMTI_EVENT_RESOURCE_EXHAUSTED = 80,
  JVMTI_EVENT_GARBAGE_COLLECTION_START = 81,
  JVMTI_EVENT_GARBAGE_COLLECTION_FINISH = 82,
  JVMTI_EVENT_OBJECT_FREE = 83,
  JVMTI_EVENT_VM_OBJECT_ALLOC = 84,
  JVMTI_EVENT_SAMPLED_OBJECT_ALLOC = 86,
  DDMC__JEV_LAST = 86,
  DDMC__JEV_COUNT = DDMC__JEV_LAST - DDMC__JEV_FIRST + 1
};

typedef struct ddmc__jv_caps {
  uint32_t w[4];
} ddmc__jv_caps;

/* Structures agents receive (layouts of jvmti.h). */
typedef struct ddmc__jv_jthread_info {
  char *name;
  jint priority;
  jboolean is_daemon;
  jthreadGroup thread_group;
  jobject context_class_loader;
} ddmc__jv_jthread_info;

typedef struct ddmc__jv_jgroup_info {
  jthreadGroup parent;
  char *name;
  jint max_priority;
  jboolean is_daemon;
} ddmc__jv_jgroup_info;

typedef struct ddmc__jv_jframe_info {
  jmethodID method;
  jlocation location;
} ddmc__jv_jframe_info;

typedef struct ddmc__jv_jstack_info {
  jthread thread;
  jint state;
  ddmc__jv_jframe_info *frame_buffer;
  jint frame_count;
} ddmc__jv_jstack_info;

/* ---- threads and monitors (suspend.c, agentthread.c, monitors.c) */
typedef struct ddmc__jv_jmonitor_usage {
  jthread owner;
  jint entry_count;
  jint waiter_count;
  jthread *waiters;
  jint notify_waiter_count;
  jthread *notify_waiters;
} ddmc__jv_jmonitor_usage;

typedef struct ddmc__jv_jmonitor_depth {
  jobject monitor;
  jint stack_depth;
} ddmc__jv_jmonitor_depth;

/* jvmtiStartFunction */
struct ddmc__jv_jenv;
struct ddmc__jv_jnienv;
typedef void (*ddmc__jv_jstart_fn)(struct ddmc__jv_jenv *jvmti, struct ddmc__jv_jnienv *jni, void *arg);

/* jvmtiClassDefinition (RedefineClasses). */
typedef struct ddmc__jv_jclass_def {
  jclass klass;
  jint class_byte_count;
  const unsigned char *class_bytes;
} ddmc__jv_jclass_def;

typedef struct ddmc__jv_jline_entry {
  jlocation start_location;
  jint line_number;
} ddmc__jv_jline_entry;

typedef struct ddmc__jv_jlocal_entry {
  jlocation start_location;
  jint length;
  char *name;
  char *signature;
  char *generic_signature;
  jint slot;
} ddmc__jv_jlocal_entry;

typedef struct ddmc__jv_jtimer_info {
  jlong max_value;
  jboolean may_skip_forward;
  jboolean may_skip_backward;
  jint kind;
  jlong reserved1;
  jlong reserved2;
} ddmc__jv_jtimer_info;

/* JavaVMAttachArgs / JavaVMInitArgs are not used: AttachCurrentThread is refused. */

#endif
