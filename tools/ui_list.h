/* SPDX-License-Identifier: Apache-2.0 */
/* `ddmc ui --all`: the VMs page's list, what `ddmc ps` lists, kept fresh. A thread of its own runs
 * `ddmc --json ps` (this very binary, tools/cmd_ps.c: adb's track-jdwp and a HELO probe of each
 * pid) every UI_LIST_PERIOD_MS and keeps its last document, so VMs that appear, leave, get a
 * debugger or start waiting for one show within a period plus ps's -t. The child process keeps
 * whatever ps does wrong (a malformed adb answer, a usage error) out of the server.
 *
 * Threads: ui_list_start and ui_list_stop on the main thread; ui_list_copy from any thread
 * (under the object's mutex, no I/O under it). */
#ifndef DDMC_TOOLS_UI_LIST_H
#define DDMC_TOOLS_UI_LIST_H

#include <stddef.h>
#include <stdint.h>

#include "session.h"

#define UI_LIST_PERIOD_MS 1500
/* The largest ps document kept (300 VMs take about 150 KiB); a longer one is cut and not kept. */
#define UI_LIST_MAX_BYTES (4u << 20)

typedef struct ui_list ui_list;

/* o (its adb port, serial and -t) must outlive the object. NULL when out of memory or when the
 * thread cannot start. */
ui_list *ui_list_start(const opts *o);
/* Stops the thread (a ps still running is ended with SIGTERM) and frees l. NULL: nothing. */
void ui_list_stop(ui_list *l);

/* The number of listings so far. */
uint64_t ui_list_seq(ui_list *l);
/* A malloc'd copy of the last document (NUL-terminated), NULL before the first; *seq counts the
 * listings so far and *error says why the last one failed ("" when it did not). */
char *ui_list_copy(ui_list *l, uint64_t *seq, char *error, size_t errlen);

#endif
