/* SPDX-License-Identifier: Apache-2.0 */
/* Library error codes. Thread: any. Strings are static and never NULL.
 *
 * Every function that can fail returns 0 (DDMC_OK) or one of the negative DDMC_E* values below;
 * functions that return a count return the count (>= 0) or an error. Wire-level JDWP error codes
 * (ddmc_jdwp_error) are a separate type: they go to the peer, never to the caller.
 *
 * ABI: the list is append-only. A code's value is fixed once released (DDMC_EINVAL is -999, the
 * next -998, ...); new codes go at the end of DDMC_ERRNO_MAP, never between. */
#ifndef DDMC_ERROR_H
#define DDMC_ERROR_H

#include "export.h"

DDMC_BEGIN_DECLS

#define DDMC_ERRNO_MAP(XX)                                           \
  XX(EINVAL, "invalid argument")                                     \
  XX(ENOMEM, "out of memory")                                        \
  XX(EIO, "i/o error")                                               \
  XX(ENOTCONN, "no DDM peer connected")                              \
  XX(EPROTO, "peer violated the protocol")                           \
  XX(ETOOBIG, "length over the cap")                                 \
  XX(EQFULL, "send queue full; chunk dropped")                       \
  XX(EEXIST, "handler already registered")                           \
  XX(ENOENT, "no such handler or object")                            \
  XX(ESTATE, "not valid in this state")                              \
  XX(ETIMEDOUT, "timed out")                                         \
  XX(EADDR, "bad or busy address")                                   \
  XX(EVERSION, "header/library version mismatch")                    \
  XX(ENOTSUP, "not supported by this VM")                            \
  XX(ECONNREFUSED, "connection refused")                             \
  XX(ECLOSED, "connection closed by peer")

typedef enum ddmc_error {
  DDMC_OK = 0,
  DDMC__ERR_BASE = -1000, /* keep codes clear of small negative numbers used as counts */
#define DDMC__ERR_ENUM(name, msg) DDMC_##name,
  DDMC_ERRNO_MAP(DDMC__ERR_ENUM)
#undef DDMC__ERR_ENUM
  DDMC__ERR_END
} ddmc_error;

/* "invalid argument", ... ; "unknown error" for anything not in the map. */
DDMC_EXTERN const char *ddmc_strerror(int err);
/* "EINVAL", ... ; "UNKNOWN" for anything not in the map. */
DDMC_EXTERN const char *ddmc_err_name(int err);

/* JDWP error codes: sent to a debugger in reply headers, and what the bridge's ops return
 * (bridge.h). The values are the wire's. */
typedef enum ddmc_jdwp_error {
  DDMC_JDWP_NONE = 0,
  DDMC_JDWP_INVALID_THREAD = 10,
  DDMC_JDWP_INVALID_THREAD_GROUP = 11,
  DDMC_JDWP_THREAD_NOT_SUSPENDED = 13,
  DDMC_JDWP_THREAD_SUSPENDED = 14,
  DDMC_JDWP_THREAD_NOT_ALIVE = 15,
  DDMC_JDWP_INVALID_OBJECT = 20,
  DDMC_JDWP_INVALID_CLASS = 21,
  DDMC_JDWP_CLASS_NOT_PREPARED = 22,
  DDMC_JDWP_INVALID_METHODID = 23,
  DDMC_JDWP_INVALID_LOCATION = 24,
  DDMC_JDWP_INVALID_FIELDID = 25,
  DDMC_JDWP_INVALID_FRAMEID = 30,
  DDMC_JDWP_NO_MORE_FRAMES = 31,
  DDMC_JDWP_OPAQUE_FRAME = 32,
  DDMC_JDWP_TYPE_MISMATCH = 34,
  DDMC_JDWP_INVALID_SLOT = 35,
  DDMC_JDWP_DUPLICATE = 40,
  DDMC_JDWP_NOT_FOUND = 41,
  DDMC_JDWP_INVALID_MODULE = 42,
  DDMC_JDWP_INVALID_MONITOR = 50,
  DDMC_JDWP_NOT_MONITOR_OWNER = 51,
  DDMC_JDWP_INTERRUPT = 52,
  /* RedefineClasses (bridge.h, redefine_classes) */
  DDMC_JDWP_INVALID_CLASS_FORMAT = 60,
  DDMC_JDWP_CIRCULAR_CLASS_DEFINITION = 61,
  DDMC_JDWP_FAILS_VERIFICATION = 62,
  DDMC_JDWP_ADD_METHOD_NOT_IMPLEMENTED = 63,
  DDMC_JDWP_SCHEMA_CHANGE_NOT_IMPLEMENTED = 64,
  DDMC_JDWP_INVALID_TYPESTATE = 65,
  DDMC_JDWP_HIERARCHY_CHANGE_NOT_IMPLEMENTED = 66,
  DDMC_JDWP_DELETE_METHOD_NOT_IMPLEMENTED = 67,
  DDMC_JDWP_UNSUPPORTED_VERSION = 68,
  DDMC_JDWP_NAMES_DONT_MATCH = 69,
  DDMC_JDWP_CLASS_MODIFIERS_CHANGE_NOT_IMPLEMENTED = 70,
  DDMC_JDWP_METHOD_MODIFIERS_CHANGE_NOT_IMPLEMENTED = 71,
  DDMC_JDWP_CLASS_ATTRIBUTE_CHANGE_NOT_IMPLEMENTED = 72,
  DDMC_JDWP_NOT_IMPLEMENTED = 99,
  DDMC_JDWP_NULL_POINTER = 100,
  DDMC_JDWP_ABSENT_INFORMATION = 101,
  DDMC_JDWP_INVALID_EVENT_TYPE = 102,
  DDMC_JDWP_ILLEGAL_ARGUMENT = 103,
  DDMC_JDWP_OUT_OF_MEMORY = 110,
  DDMC_JDWP_VM_DEAD = 112,
  DDMC_JDWP_INTERNAL = 113,
  DDMC_JDWP_INVALID_TAG = 500,
  DDMC_JDWP_ALREADY_INVOKING = 502,
  DDMC_JDWP_INVALID_INDEX = 503,
  DDMC_JDWP_INVALID_LENGTH = 504,
  DDMC_JDWP_INVALID_STRING = 506,
  DDMC_JDWP_INVALID_CLASS_LOADER = 507,
  DDMC_JDWP_INVALID_ARRAY = 508,
  DDMC_JDWP_NATIVE_METHOD = 511,
  DDMC_JDWP_INVALID_COUNT = 512
} ddmc_jdwp_error;

DDMC_END_DECLS

#endif
