/* SPDX-License-Identifier: Apache-2.0 */
/* The .trace ("dmtrace") file, version 3 with both clocks, as Dalvik wrote it and dmtracedump and
 * Android Studio read it (docs/protocol/profiling.md §4). Pure encoders: no I/O, no VM.
 *
 *   text key section ('\n' line ends):
 *     *version / 3 / data-file-overflow=true|false / clock=dual / elapsed-time-usec=N /
 *     num-method-calls=N / clock-call-overhead-nsec=N / vm=dalvik
 *     *threads / "<id>\t<name>" per thread
 *     *methods / "0x<id>\t<class>\t<name>\t<signature>\t<file>\t<line>" per method (Dalvik's
 *                 five fields; the class dotted)
 *     *end
 *   binary part (little-endian), right after "*end\n":
 *     [u4 magic 0x574f4c53 "SLOW"][u2 version 3][u2 offset to the records: 32]
 *     [u8 start time, µs since the epoch][u2 record size 14][zero to offset 32]
 *     records: [u2 thread id][u4 method id | action][u4 thread-cpu µs][u4 wall µs]
 * Method ids have their low two bits clear; the action is 0 ENTER, 1 EXIT, 2 UNROLL (left by an
 * exception). Times are µs since the trace (wall) or the thread's first event (cpu). */
#ifndef DDMC_PROFILE_DMTRACE_H
#define DDMC_PROFILE_DMTRACE_H

#include "common.h"

#define DDMC__TRACE_MAGIC 0x574f4c53u
#define DDMC__TRACE_VERSION 3
#define DDMC__TRACE_HDR 32
#define DDMC__TRACE_REC 14

enum { DDMC__TR_ENTER = 0, DDMC__TR_EXIT = 1, DDMC__TR_UNROLL = 2 };

static inline void ddmc__prof_le16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}
static inline void ddmc__prof_le32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
  p[2] = (uint8_t)(v >> 16);
  p[3] = (uint8_t)(v >> 24);
}

static inline void ddmc__prof_dmtrace_rec(uint8_t *p, uint16_t tid, uint32_t method_value, uint32_t cpu_us,
                                          uint32_t wall_us) {
  ddmc__prof_le16(p, tid);
  ddmc__prof_le32(p + 2, method_value);
  ddmc__prof_le32(p + 6, cpu_us);
  ddmc__prof_le32(p + 10, wall_us);
}

typedef struct ddmc__prof_dmtrace_thread {
  uint32_t id;
  const char *name;
} ddmc__prof_dmtrace_thread;

typedef struct ddmc__prof_dmtrace_method {
  uint32_t id;     /* low two bits clear */
  const char *cls; /* dotted: "com.example.Main" */
  const char *name;
  const char *sig;  /* "(I)V" */
  const char *file; /* "" when unknown */
  int32_t line;
} ddmc__prof_dmtrace_method;

typedef struct ddmc__prof_dmtrace_info {
  int overflow;
  uint64_t elapsed_us;
  uint64_t records;
  uint32_t clock_overhead_ns;
  uint64_t start_us; /* µs since the epoch */
} ddmc__prof_dmtrace_info;

/* Appends the key section and the 32-byte binary header: what precedes the records. A tab, CR or
 * LF inside a name would break its line and becomes a space. Returns the buf error. */
int ddmc__prof_dmtrace_head(ddmc_buf *out, const ddmc__prof_dmtrace_info *info,
                            const ddmc__prof_dmtrace_thread *threads, size_t nthreads,
                            const ddmc__prof_dmtrace_method *methods, size_t nmethods);

#endif
