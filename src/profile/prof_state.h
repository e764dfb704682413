/* SPDX-License-Identifier: Apache-2.0 */
/* State of the profiling layer (src/profile), embedded in struct ddmc_vm.
 *
 * Who touches what:
 * - the JDWP thread: everything here, when it runs REAE/REAL/MPSS/... (chunks/alloc.c,
 *   chunks/trace.c) and the debugger's method-event requests;
 * - VM threads: ring, alloc_busy (ddmc_alloc_record); trace, tracing, threads and
 *   the per-thread states they point to (method events, inside ddmc_post_*);
 * - the sampler thread: the sampling trace it was started for, and the VM's thread ops.
 * Memory that VM threads may be reading is freed only after they are waited out: alloc_busy for
 * the ring, each per-thread state's busy flag for a trace (see trace.c). */
#ifndef DDMC_PROFILE_STATE_H
#define DDMC_PROFILE_STATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "ddmc/profile.h"

struct ddmc__prof_alloc_ring;
struct ddmc__prof_trace;
struct ddmc__prof_tthread;

typedef struct ddmc__prof {
  ddmc_prof_config cfg;

  /* Allocation tracking (the hook's flag is the hub's: hub/hub.h). */
  _Atomic(struct ddmc__prof_alloc_ring *) ring;
  atomic_int alloc_busy; /* VM threads inside ddmc_alloc_record */

  /* Tracing. mode is MPRQ's answer; trace is the running trace, published for VM threads while
   * it records method events; threads (allocated at the first trace, kept until ddmc_vm_free)
   * holds each VM thread's tracing state by thread id. */
  atomic_int mode;
  _Atomic(struct ddmc__prof_trace *) trace;
  struct ddmc__prof_trace *current; /* JDWP thread: the running trace (also while unpublished) */
  _Atomic(struct ddmc__prof_tthread *) *threads;
  atomic_int sending; /* a finished trace is queued or being streamed to the peer */
  atomic_uint next_gen;

  atomic_uint_fast64_t st_alloc, st_traces, st_records, st_overflows, st_lost, st_samples, st_sample_threads;

  /* Heap dumps (hprof_dump.c, chunks/hprof.c): an HPDS dump queued or being streamed. */
  atomic_int hprof_sending;
  atomic_uint_fast64_t st_hprof_dumps, st_hprof_bytes, st_hprof_failed;
} ddmc__prof;

#endif
