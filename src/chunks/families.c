/* SPDX-License-Identifier: Apache-2.0 */
/* The table of built-in chunk families (families.h). Profiling's state comes first: the
 * allocation, trace and heap-dump families stand on it. */
#include "chunks/families.h"

#include "profile/prof_int.h"


const ddmc__family ddmc__families[] = {
    {"hello", ddmc__hello_register}, {"misc", ddmc__misc_register},     {"thread", ddmc__thread_register},
    {"heap", ddmc__heap_register},   {"wait", ddmc__wait_register},     {"profiling", ddmc__prof_init},    {"trace events", ddmc__trace_subscribe},
    {"alloc", ddmc__alloc_register}, {"trace", ddmc__trace_register},   {"hprof", ddmc__hprof_register},
    {NULL, NULL},
};
