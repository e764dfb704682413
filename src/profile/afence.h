/* SPDX-License-Identifier: Apache-2.0 */
/* Asymmetric fences for the trace's handshake with stop (trace.c).
 *
 * Every traced call runs the VM thread's side of the handshake twice, and a full barrier there
 * (the exchange it used) cost about 6 ns each where this was measured: a fifth of a traced call.
 * Stop runs once a trace. So the barrier moves to stop's side: membarrier(2) makes every running
 * thread of the process execute a full barrier before it returns, and the VM thread's side needs
 * only to keep the compiler from reordering its store and load. Where membarrier is missing (not
 * Linux, an old kernel, a seccomp filter) both sides keep the full barrier. */
#ifndef DDMC_PROFILE_AFENCE_H
#define DDMC_PROFILE_AFENCE_H

#include <stdatomic.h>

/* 1 once the heavy side works in this process; never goes back to 0. */
extern atomic_int ddmc__prof_afence_on;

/* Registers the process for membarrier once (later calls return at once). Call before a VM thread
 * may take the light side, on the thread that will call ddmc__prof_afence_heavy. */
void ddmc__prof_afence_init(void);

/* The light side: store 1 to *flag, then loads after it are ordered after the store. */
static inline void ddmc__prof_afence_set(atomic_int *flag) {
  if (atomic_load_explicit(&ddmc__prof_afence_on, memory_order_relaxed)) {
    atomic_store_explicit(flag, 1, memory_order_relaxed);
    atomic_signal_fence(memory_order_seq_cst);
  } else {
    atomic_exchange(flag, 1);
  }
}

/* The heavy side: stores before it are visible to every thread's later loads, and every thread's
 * stores before its last light side are visible to loads after it. */
void ddmc__prof_afence_heavy(void);

#endif
