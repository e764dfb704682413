/* SPDX-License-Identifier: Apache-2.0 */
/* The layer's leaf: what every other file of src/jvmti may call without a circle. The calling
 * thread's identity (which VM thread it runs as, whether it may park), the state's lookup on a
 * ddmc_vm, the VM's DDM ops and data, and the log. */
#include <stdarg.h>

#include "jvmti/funcs.h"
#include "vm_int.h"

/* ---- the calling thread: which VM thread it runs as, and whether it may park */

static _Thread_local uint32_t tl_self;
static _Thread_local int tl_may_park;

void ddmc__jv_set_self(uint32_t thread) { tl_self = thread; }
uint32_t ddmc__jv_self(void) { return tl_self; }
void ddmc__jv_set_may_park(int on) { tl_may_park = on; }
int ddmc__jv_may_park(void) { return tl_may_park; }

const ddmc_vm_ops *ddmc__jv_vm_ops(ddmc__jvmti *jv) { return &jv->vm->ops; }
void *ddmc__jv_vm_data(ddmc__jvmti *jv) { return jv->vm->vm_data; }

void ddmc__jv_log(ddmc__jvmti *jv, ddmc_log_level lvl, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  ddmc__logv(&jv->vm->log, lvl, fmt, ap);
  va_end(ap);
}

ddmc__jvmti *ddmc__jv_get(const ddmc_vm *vm) {
  return vm ? atomic_load_explicit(&((ddmc_vm *)vm)->jvmti, memory_order_acquire) : NULL;
}

