/* SPDX-License-Identifier: Apache-2.0 */
/* See tclock.h. */
#include "profile/tclock.h"

#if DDMC__HAVE_TSC
#include <cpuid.h>

static int invariant_tsc(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u) return 0;
  if (!__get_cpuid(0x80000007u, &a, &b, &c, &d)) return 0;
  return (d >> 8) & 1u;
}
#endif

void ddmc__prof_tclock_start(ddmc__prof_tclock *c) {
  c->tsc = 0;
  c->ns_per_tick = 1.0;
  c->mono0 = ddmc__prof_mono_ns();
#if DDMC__HAVE_TSC
  if (!invariant_tsc()) return;
  uint64_t t0 = __rdtsc();
  int64_t m0 = ddmc__prof_mono_ns(), m1;
  do m1 = ddmc__prof_mono_ns();
  while (m1 - m0 < 1000000);
  uint64_t t1 = __rdtsc();
  if (t1 <= t0) return;
  c->ns_per_tick = (double)(m1 - m0) / (double)(t1 - t0);
  c->tsc0 = t1;
  c->mono0 = m1;
  c->tsc = 1;
#endif
}

double ddmc__prof_tclock_finish(const ddmc__prof_tclock *c, int64_t *elapsed_ns) {
  int64_t mono = ddmc__prof_mono_ns() - c->mono0;
  int64_t measured = ddmc__prof_tclock_ns(c);
  *elapsed_ns = mono;
  if (!c->tsc || measured <= 0) return 1.0;
  return (double)mono / (double)measured;
}
