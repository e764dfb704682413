/* SPDX-License-Identifier: Apache-2.0 */
/* What the export writers share (tools/export.c); not for the commands, which use export.h. */
#ifndef DDMC_TOOLS_EXPORT_INT_H
#define DDMC_TOOLS_EXPORT_INT_H

#include "export.h"

#define EXPORT_NONE 0xffffffffu

/* Which time of a record the clock is: *second = 1 for time2, 0 for time1. DDMC_EINVAL when
 * the trace does not have that clock (export.h). */
int export_clock_pick(const ddmc_host_trace *t, export_clock c, int *second);
/* "wall" or "cpu" for what AUTO resolves to; NULL when the trace lacks the clock. */
const char *export_clock_word(const ddmc_host_trace *t, export_clock c);

/* "Class.method" for a method id, ';' made ':' and control characters '?' (export.h); an id
 * missing from the key section is "(unknown 0xID)". Always NUL-terminated, cut at cap. */
void export_frame_name(const ddmc_host_trace *t, uint32_t method, char *out, size_t cap);
/* The thread's name from the key section, cleaned the same way, or "thread ID". */
void export_thread_label(const ddmc_host_trace *t, uint32_t thread, char *out, size_t cap);

/* The call tree: node 0.. in creation order; a root per thread (method = the thread id, parent
 * EXPORT_NONE), created in the key section's thread order, then as threads first appear. */
typedef struct export_node {
  uint32_t method;
  uint32_t parent, child, next; /* indices; EXPORT_NONE for none */
  uint32_t depth;               /* 0 for a root */
  uint64_t self_us;
  uint64_t calls;
} export_node;
typedef struct export_tree {
  export_node *n;
  size_t count, cap;
  uint32_t *hash; /* (parent, method) -> index + 1, open addressing */
  size_t hcap;
} export_tree;
/* Builds the tree of t in clock (rules in export.h). 0, DDMC_EINVAL, DDMC_ENOMEM (tr then
 * zeroed). Free with export_tree_free. */
int export_tree_build(export_tree *tr, const ddmc_host_trace *t, export_clock clock);
void export_tree_free(export_tree *tr);

/* Flushes out: 0, or DDMC_EIO when it or any earlier write failed. */
int export_finish(FILE *out);

#endif
