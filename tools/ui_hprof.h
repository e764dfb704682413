/* SPDX-License-Identifier: Apache-2.0 */
/* The class histogram of an hprof heap dump (Android's 1.0.3, 4-byte ids), for `ddmc ui`. */
#ifndef DDMC_TOOLS_UI_HPROF_H
#define DDMC_TOOLS_UI_HPROF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ddmc_host.h"

/* Writes {"bytes": N, "classes": K, "rows": [{"class", "count", "bytes"}...]} (compact JSON) to
 * out: per class its instances and their shallow size (field or element bytes), the max_rows
 * largest by bytes. Returns 0, the walk's DDMC_EPROTO for a malformed dump, DDMC_ENOMEM, or
 * DDMC_EIO when out failed. Thread: the caller's. */
int ui_hprof_histogram(const uint8_t *p, size_t n, FILE *out, size_t max_rows);

#endif
