/* SPDX-License-Identifier: Apache-2.0 */
/* State of the heap chunk family (chunks/heap.c), embedded in struct ddmc_vm and touched only by
 * that file. Reset when the DDM peer leaves. */
#ifndef DDMC_CHUNKS_HEAP_STATE_H
#define DDMC_CHUNKS_HEAP_STATE_H

#include <stdatomic.h>

typedef struct ddmc__chunk_heap_state {
  atomic_int hpif_when;       /* 0 never, 2 next GC, 3 every GC */
  atomic_int hpsg_when, hpsg_what, nhsg_when, nhsg_what;
} ddmc__chunk_heap_state;

#endif
