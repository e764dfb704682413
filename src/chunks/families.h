/* SPDX-License-Identifier: Apache-2.0 */
/* The built-in chunk families, in the one table ddmc_vm_new walks: each entry registers its
 * handlers (and whatever else the family needs: a hub client, a periodic tick) on a new VM. A new
 * family is one more row in families.c; the core names none of them. */
#ifndef DDMC_CHUNKS_FAMILIES_H
#define DDMC_CHUNKS_FAMILIES_H

#include "common.h"

typedef struct ddmc__chunk_family {
  const char *name;
  /* Returns 0 or a DDMC_E* code (ddmc_vm_new then fails with it). VM init thread. */
  int (*add)(ddmc_vm *vm);
} ddmc__chunk_family;

/* Ends with a row whose name is NULL. */
extern const ddmc__chunk_family ddmc__chunk_families[];

int ddmc__chunk_hello_register(ddmc_vm *vm);  /* hello.c: HELO FEAT */
int ddmc__chunk_misc_register(ddmc_vm *vm);   /* misc.c: APNM EXIT DBGD ... */
int ddmc__chunk_thread_register(ddmc_vm *vm); /* thread.c: THEN THST STKL ..., and THST's tick */
int ddmc__chunk_heap_register(ddmc_vm *vm);   /* heap.c: HPIF HPGC HPSG ..., and HPIF after a collection */
int ddmc__chunk_wait_register(ddmc_vm *vm);   /* wait.c: WAIT */
int ddmc__chunk_alloc_register(ddmc_vm *vm);  /* alloc.c: REAE REAQ REAL */
int ddmc__chunk_trace_register(ddmc_vm *vm);  /* trace.c: MPRS MPRE MPSS MPSE SPSS SPSE MPRQ */
int ddmc__chunk_hprof_register(ddmc_vm *vm);  /* hprof.c: HPDU HPDS */

#endif
