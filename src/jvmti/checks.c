/* SPDX-License-Identifier: Apache-2.0 */
/* What every function of the layer checks first, and what the hub asks per event: the
 * environment and the phase, capabilities, whether an event is enabled for a thread, and the
 * bridge's answers in JVM TI's numbers. A leaf beside base.c: the function files call it, it
 * calls none of them. */
#include "jvmti/funcs.h"

#define PHASE(jv) atomic_load_explicit(&(jv)->phase, memory_order_acquire)

jvmtiError ddmc__jv_phase_ok(ddmc__jv_jenv *e, unsigned phases) {
  if (e == NULL || e->jv == NULL || atomic_load(&e->disposed)) return JVMTI_ERROR_INVALID_ENVIRONMENT;
  return (PHASE(e->jv) & (int)phases) ? JVMTI_ERROR_NONE : JVMTI_ERROR_WRONG_PHASE;
}

jvmtiError ddmc__jv_err(int jdwp) {
  /* The bridge answers in JDWP's numbers; JVM TI shares them where they mean the same. */
  switch (jdwp) {
    case 0: return JVMTI_ERROR_NONE;
    case DDMC_JDWP_NOT_IMPLEMENTED: return JVMTI_ERROR_NOT_AVAILABLE;
    case DDMC_JDWP_NULL_POINTER: return JVMTI_ERROR_NULL_POINTER;
    case DDMC_JDWP_VM_DEAD: return JVMTI_ERROR_WRONG_PHASE;
    case DDMC_JDWP_INVALID_FRAMEID: return JVMTI_ERROR_NO_MORE_FRAMES;
    case DDMC_JDWP_INVALID_INDEX: return JVMTI_ERROR_ILLEGAL_ARGUMENT;
    case DDMC_JDWP_INVALID_ARRAY:
    case DDMC_JDWP_INVALID_STRING: return JVMTI_ERROR_INVALID_OBJECT;
    case DDMC_JDWP_INVALID_THREAD:
    case DDMC_JDWP_INVALID_THREAD_GROUP:
    case DDMC_JDWP_THREAD_NOT_SUSPENDED:
    case DDMC_JDWP_THREAD_SUSPENDED:
    case DDMC_JDWP_THREAD_NOT_ALIVE:
    case DDMC_JDWP_INVALID_OBJECT:
    case DDMC_JDWP_INVALID_CLASS:
    case DDMC_JDWP_CLASS_NOT_PREPARED:
    case DDMC_JDWP_INVALID_METHODID:
    case DDMC_JDWP_INVALID_LOCATION:
    case DDMC_JDWP_INVALID_FIELDID:
    case DDMC_JDWP_NO_MORE_FRAMES:
    case DDMC_JDWP_OPAQUE_FRAME:
    case DDMC_JDWP_TYPE_MISMATCH:
    case DDMC_JDWP_INVALID_SLOT:
    case DDMC_JDWP_DUPLICATE:
    case DDMC_JDWP_NOT_FOUND:
    case DDMC_JDWP_INVALID_MONITOR:
    case DDMC_JDWP_NOT_MONITOR_OWNER:
    case DDMC_JDWP_INTERRUPT:
    case DDMC_JDWP_INVALID_CLASS_FORMAT:
    case DDMC_JDWP_CIRCULAR_CLASS_DEFINITION:
    case DDMC_JDWP_FAILS_VERIFICATION:
    case DDMC_JDWP_ADD_METHOD_NOT_IMPLEMENTED:
    case DDMC_JDWP_SCHEMA_CHANGE_NOT_IMPLEMENTED:
    case DDMC_JDWP_INVALID_TYPESTATE:
    case DDMC_JDWP_HIERARCHY_CHANGE_NOT_IMPLEMENTED:
    case DDMC_JDWP_DELETE_METHOD_NOT_IMPLEMENTED:
    case DDMC_JDWP_UNSUPPORTED_VERSION:
    case DDMC_JDWP_NAMES_DONT_MATCH:
    case DDMC_JDWP_CLASS_MODIFIERS_CHANGE_NOT_IMPLEMENTED:
    case DDMC_JDWP_METHOD_MODIFIERS_CHANGE_NOT_IMPLEMENTED:
    case DDMC_JDWP_CLASS_ATTRIBUTE_CHANGE_NOT_IMPLEMENTED:
    case DDMC_JDWP_ABSENT_INFORMATION:
    case DDMC_JDWP_ILLEGAL_ARGUMENT:
    case DDMC_JDWP_OUT_OF_MEMORY: return jdwp;
    default: return JVMTI_ERROR_INTERNAL;
  }
}

int ddmc__jv_jenv_has_cap(ddmc__jv_jenv *e, int bit) {
  ddmc__lock(&e->jv->lock);
  int has = ddmc__jv_cap_has(&e->caps, bit);
  ddmc__unlock(&e->jv->lock);
  return has;
}

int ddmc__jv_jenv_enabled(ddmc__jv_jenv *e, int ev, uint32_t thread) {
  int i = ev - DDMC__JEV_FIRST;
  if (atomic_load_explicit(&e->global[i], memory_order_relaxed)) return 1;
  if (atomic_load_explicit(&e->nthread_enables[i], memory_order_relaxed) == 0) return 0;
  int on = 0;
  ddmc__lock(&e->jv->lock);
  for (uint32_t k = 0; k < e->nte && !on; k++) on = e->te[k].ev == i && e->te[k].thread == thread;
  ddmc__unlock(&e->jv->lock);
  return on;
}
