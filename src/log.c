/* SPDX-License-Identifier: Apache-2.0 */
/* See log.h. The bucket is GCRA (one atomic timestamp), so the check costs a load and a CAS and
 * needs no lock on any thread. */
#include <stdio.h>

#include "log.h"
#include "vm_int.h"

#define EMIT_MS (1000 / DDMC__LOG_PER_SEC)
#define BURST_MS ((int64_t)EMIT_MS * DDMC__LOG_BURST)

void ddmc__logger_init(ddmc__logger *l, void (*fn)(void *, ddmc_log_level, const char *), void *ud) {
  l->fn = fn;
  l->ud = ud;
  atomic_init(&l->tat, 0);
  atomic_init(&l->suppressed, 0);
}

static int admit(ddmc__logger *l) {
  int64_t now = ddmc__now_ms();
  long long tat = atomic_load_explicit(&l->tat, memory_order_relaxed);
  for (;;) {
    long long next = (tat > now ? tat : now) + EMIT_MS;
    if (next - now > BURST_MS) return 0;
    if (atomic_compare_exchange_weak_explicit(&l->tat, &tat, next, memory_order_relaxed, memory_order_relaxed))
      return 1;
  }
}

void ddmc__logv(ddmc__logger *l, ddmc_log_level lvl, const char *fmt, va_list ap) {
  if (l->fn == NULL) return;
  if (!admit(l)) {
    atomic_fetch_add_explicit(&l->suppressed, 1, memory_order_relaxed);
    return;
  }
  char line[512];
  int n = vsnprintf(line, sizeof(line), fmt, ap);
  unsigned skipped = atomic_exchange_explicit(&l->suppressed, 0, memory_order_relaxed);
  if (skipped && n >= 0 && (size_t)n < sizeof(line))
    snprintf(line + n, sizeof(line) - (size_t)n, " (%u earlier messages suppressed)", skipped);
  l->fn(l->ud, lvl, line);
}

void ddmc__log(ddmc_vm *vm, ddmc_log_level lvl, const char *fmt, ...) {
  if (vm == NULL) return;
  va_list ap;
  va_start(ap, fmt);
  ddmc__logv(&vm->log, lvl, fmt, ap);
  va_end(ap);
}
