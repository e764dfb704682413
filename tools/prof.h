/* SPDX-License-Identifier: Apache-2.0 */
/* ddmc's profiling commands: `alloc` (the allocation tracker: REAE, REAL) and `trace` (method
 * tracing MPSS/MPSE or sampling SPSS/SPSE, saved as a .trace file and, on request, as Trace Event
 * JSON for Perfetto's UI and chrome://tracing). */
#ifndef DDMC_TOOLS_PROF_H
#define DDMC_TOOLS_PROF_H

#include <stdint.h>

#include "session.h"

typedef enum alloc_action { ALLOC_RUN, ALLOC_START, ALLOC_STOP, ALLOC_SHOW } alloc_action;

typedef struct alloc_args {
  alloc_action action;
  double duration; /* ALLOC_RUN: seconds to track */
  uint32_t top;    /* sites in the table */
  int keep;        /* ALLOC_RUN: leave tracking on */
} alloc_args;

typedef struct trace_args {
  double duration;    /* seconds */
  uint32_t sample_us; /* 0: method tracing; else sampling at this interval */
  uint32_t buffer_mb; /* buffer the VM may fill */
  const char *out;    /* FILE.trace */
  const char *chrome; /* FILE.json or NULL */
} trace_args;

int cmd_alloc(sess *s, const alloc_args *a);
int cmd_trace(sess *s, const trace_args *a);

#endif
