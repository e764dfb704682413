/* SPDX-License-Identifier: Apache-2.0 */
/* ddmc_vm_free's part for profiling: a trace or sampler still running is stopped (its data is
 * dropped: nobody is left to read it), the allocation ring and every thread's tracing state are
 * freed. Its own file: it sits above everything else in the layer. */
#include "profile/trace_int.h"

void ddmc__prof_destroy(ddmc_vm *vm) {
  ddmc__prof *p = &vm->prof;
  ddmc__prof_trace_free(vm, ddmc__prof_trace_stop(vm, NULL)); /* no head: nobody will read it */
  ddmc__prof_alloc_set_tracking(vm, 0);
  if (p->threads != NULL) {
    for (uint32_t i = 0; i < DDMC__TRACE_MAX_THREADS; i++) {
      struct ddmc__prof_tthread *t = atomic_load(&p->threads[i]);
      if (t == NULL) continue;
      ddmc__free(&vm->mem, t->stack);
      ddmc__free(&vm->mem, t);
    }
    ddmc__free(&vm->mem, p->threads);
    p->threads = NULL;
  }
}
