/* SPDX-License-Identifier: Apache-2.0 */
/* The table of built-in chunk families (families.h). Profiling's state comes first: the
 * allocation, trace and heap-dump families stand on it. */
#include "chunks/families.h"

#include "profile/prof_int.h"

const ddmc__chunk_family ddmc__chunk_families[] = {
    {"hello", ddmc__chunk_hello_register},
    {"misc", ddmc__chunk_misc_register},
    {"thread", ddmc__chunk_thread_register},
    {"heap", ddmc__chunk_heap_register},
    {"wait", ddmc__chunk_wait_register},
    {"profiling", ddmc__prof_init},
    {"trace events", ddmc__prof_trace_subscribe},
    {"alloc", ddmc__chunk_alloc_register},
    {"trace", ddmc__chunk_trace_register},
    {"hprof", ddmc__chunk_hprof_register},
    {NULL, NULL},
};
