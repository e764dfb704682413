/* SPDX-License-Identifier: Apache-2.0 */
/* What the core calls in the JVM TI layer: its teardown. Everything else reaches the layer through
 * the event hub (hub/hub.h), to which it subscribes when its first agent loads (client.c). */
#ifndef DDMC_JVMTI_HOOKS_H
#define DDMC_JVMTI_HOOKS_H

#include "common.h"

/* ddmc_vm_free. agents.c. */
void ddmc__jv_destroy(ddmc_vm *vm);

#endif
