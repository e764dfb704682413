/* SPDX-License-Identifier: Apache-2.0 */
/* The clock of method tracing's hot path: wall time in ns since the trace started.
 *
 * CLOCK_MONOTONIC costs about 26 ns a read where this was measured (kvm-clock through the vDSO),
 * and a traced call reads it twice. On x86-64 with an invariant TSC (constant rate, never
 * stopped: the kernel's constant_tsc/nonstop_tsc) the counter itself is read instead (about 11
 * ns), scaled by a rate measured against CLOCK_MONOTONIC over a millisecond at start; at stop the
 * trace rescales every wall time by the rate measured over the whole trace, so both ends agree
 * with CLOCK_MONOTONIC exactly and the calibration error does not accumulate. Elsewhere, or
 * without an invariant TSC, CLOCK_MONOTONIC. */
#ifndef DDMC_PROFILE_TCLOCK_H
#define DDMC_PROFILE_TCLOCK_H

#include <stdint.h>
#include <time.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <x86intrin.h>
#define DDMC__HAVE_TSC 1
#else
#define DDMC__HAVE_TSC 0
#endif

typedef struct ddmc__prof_tclock {
  int tsc; /* 1: TSC ticks scaled by ns_per_tick */
  uint64_t tsc0;
  int64_t mono0; /* CLOCK_MONOTONIC ns at start */
  double ns_per_tick;
} ddmc__prof_tclock;

static inline int64_t ddmc__prof_mono_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Calibrates (about 1 ms with a TSC). JDWP thread, at trace start. */
void ddmc__prof_tclock_start(ddmc__prof_tclock *c);

/* ns since start; any thread. */
static inline int64_t ddmc__prof_tclock_ns(const ddmc__prof_tclock *c) {
#if DDMC__HAVE_TSC
  if (c->tsc) return (int64_t)((double)(__rdtsc() - c->tsc0) * c->ns_per_tick);
#endif
  return ddmc__prof_mono_ns() - c->mono0;
}

/* At stop: the elapsed ns by CLOCK_MONOTONIC, and the factor that turns the times ddmc__prof_tclock_ns
 * gave into CLOCK_MONOTONIC's (1 without a TSC). */
double ddmc__prof_tclock_finish(const ddmc__prof_tclock *c, int64_t *elapsed_ns);

#endif
