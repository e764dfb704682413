/* SPDX-License-Identifier: Apache-2.0 */
/* State of the thread-monitoring chunk family (chunks/thread.c), embedded in struct ddmc_vm and
 * touched only by that file. Reset when the DDM peer leaves. */
#ifndef DDMC_CHUNKS_THREAD_STATE_H
#define DDMC_CHUNKS_THREAD_STATE_H

#include <stdatomic.h>
#include <stdint.h>

/* A peer asking for THST every millisecond would cost an idle VM several percent of a CPU: the
 * periodic form is clamped to at least this interval. */
#define DDMC__THST_MIN_INTERVAL_MS 100

typedef struct ddmc__chunk_thread_state {
  atomic_int notify;          /* THEN: THCR/THDE/THNM go out */
  atomic_int thst_interval_ms;
  int64_t thst_next_due;      /* JDWP thread only */
} ddmc__chunk_thread_state;

#endif
