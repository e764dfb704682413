/* SPDX-License-Identifier: Apache-2.0 */
/* One trace, shared by trace.c (start, stop, the method-event path), trace_finish.c (the file's
 * head) and sampler.c (the sampling writer).
 *
 * Records go into one buffer of the size the peer asked for. Writers take regions of it with one
 * fetch-add each (a VM thread per region, so the method-event path writes its records without
 * atomics) and stop for good once the buffer is full (overflow). When the trace stops, the
 * regions' filled parts are moved together: each thread's records stay in its own order, the
 * threads' batches interleave, as in ART's files (readers sort per thread). */
#ifndef DDMC_PROFILE_TRACE_INT_H
#define DDMC_PROFILE_TRACE_INT_H

#include <pthread.h>
#include <time.h>

#include "profile/dmtrace.h"
#include "profile/prof_int.h"
#include "profile/tclock.h"

#define DDMC__TRACE_DEFAULT_BYTES ((uint32_t)8 << 20) /* ddmlib's default, and Dalvik's for 0 */
#define DDMC__TRACE_MIN_BYTES (DDMC__TRACE_HDR + DDMC__TRACE_REC)
#define DDMC__TRACE_MAX_THREADS 65536u /* record thread ids are u2 */
#define DDMC__TRACE_MAX_DEPTH 4096u    /* frames a thread's shadow stack follows */
#define DDMC__NO_METHOD UINT32_MAX     /* a frame whose method has no id: never written */

/* The method table of an instrumented trace: (class, method) -> id, lock-free. A slot is taken
 * with a CAS on state (0 free, 1 being filled, 2 ready); a method's id is its slot << 2. */
typedef struct ddmc__prof_mslot {
  _Atomic uint32_t state;
  uint32_t method;
  uint64_t cls;
} ddmc__prof_mslot;

/* A method the sampler saw, by name (ddmc_frame's strings, copied). */
typedef struct ddmc__prof_smethod {
  char *key; /* class '\0' method '\0' signature '\0' file */
  const char *cls, *name, *sig, *file;
} ddmc__prof_smethod;

struct ddmc__prof_sampler;

struct ddmc__prof_trace {
  ddmc_vm *vm;
  uint32_t gen;
  int mode;
  int fd;
  uint8_t *buf;
  size_t cap;          /* record bytes: a multiple of region */
  size_t region;       /* bytes per region, a multiple of the record size */
  _Atomic size_t next; /* the next region to hand out */
  uint32_t *fill;      /* per region: bytes written, set when its writer leaves it or at stop */
  size_t len;          /* after stop: record bytes, moved together */
  atomic_int overflow;
  ddmc__prof_tclock clock; /* the records' wall clock (tclock.h) */
  int64_t t0_ns;      /* CLOCK_MONOTONIC at start (the sampler's clock) */
  int64_t elapsed_ns; /* at stop */
  uint64_t start_us;  /* µs since the epoch, for the header */
  int64_t refresh_ns; /* thread CPU clock read interval */
  uint32_t clock_ns;  /* measured cost of one clock read */
  ddmc__prof_mslot *mslots;
  uint32_t mcap, mlimit;
  atomic_uint mcount;
  atomic_uint_fast64_t lost;
  _Atomic uint8_t *seen; /* bit per thread id: wrote a record */
  struct ddmc__prof_sampler *sampler;
  ddmc__prof_smethod *smethods; /* sampling: method id >> 2 indexes it */
  uint32_t nsmethods;
  ddmc_buf head; /* after stop: key section and binary header */
};

/* A VM thread's tracing state, kept from its first traced event until ddmc_vm_free; reset when
 * it meets a newer trace (gen). busy is its half of the handshake with stop (trace.c). */
typedef struct ddmc__prof_tframe {
  uint64_t cls;
  uint32_t method;
  uint32_t id; /* method id, or DDMC__NO_METHOD */
} ddmc__prof_tframe;

struct ddmc__prof_tthread {
  atomic_int busy;
  uint32_t gen;
  uint16_t tid;
  uint8_t *pos, *end; /* the region being written */
  size_t region_off;
  ddmc__prof_tframe *stack;
  uint32_t depth, cap;
  int64_t cpu_ns, real_ns, real_at_ns, cpu_base_ns;
  uint32_t last_wall; /* wall times never go back within a thread */
};

static inline void ddmc__prof_trace_seen(ddmc__prof_trace *tr, uint32_t tid) {
  atomic_fetch_or_explicit(&tr->seen[tid >> 3], (uint8_t)(1u << (tid & 7)), memory_order_relaxed);
}

/* trace_finish.c: builds tr->head once the writers are done (tr->len set). JDWP thread. */
int ddmc__prof_trace_build_head(ddmc_vm *vm, ddmc__prof_trace *tr);

/* sampler.c */
int ddmc__prof_sampler_start(ddmc_vm *vm, ddmc__prof_trace *tr, uint32_t interval_us);
/* Stops and joins the sampler thread; its records are in tr's buffer up to tr->len. */
void ddmc__prof_sampler_stop(ddmc__prof_trace *tr);
void ddmc__prof_sampler_free(ddmc__prof_trace *tr);

#endif
