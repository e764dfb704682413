/* SPDX-License-Identifier: Apache-2.0 */
/* Library diagnostics through the VM's log hook, rate-limited.
 *
 * Much of what the library logs is triggered by a peer (a bad packet, a dropped session, stray
 * bytes from adbd). A peer must not be able to turn the VM's log hook into a bottleneck, or block
 * the JDWP thread on a log pipe nobody drains, by making us log without end: every message passes
 * a token bucket (a burst of DDMC__LOG_BURST, then DDMC__LOG_PER_SEC a second). What the bucket
 * refuses is counted, and the next message that passes says how many were suppressed. */
#ifndef DDMC_LOG_H
#define DDMC_LOG_H

#include <stdatomic.h>

#include "common.h"

#define DDMC__LOG_BURST 20
#define DDMC__LOG_PER_SEC 10

typedef struct ddmc__logger {
  void (*fn)(void *ud, ddmc_log_level level, const char *msg); /* NULL: logging off */
  void *ud;
  atomic_llong tat;           /* GCRA "theoretical arrival time", in ms */
  atomic_uint suppressed;
} ddmc__logger;

void ddmc__logger_init(ddmc__logger *l, void (*fn)(void *, ddmc_log_level, const char *), void *ud);
/* Thread: any; lock-free. */
void ddmc__logv(ddmc__logger *l, ddmc_log_level lvl, const char *fmt, va_list ap);

#endif
