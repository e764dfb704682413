/* SPDX-License-Identifier: Apache-2.0 */
/* The program's own DDM chunk handlers (the ddm-* instructions) over libddmc's chunk registry:
 * what DdmServer's natives are to an Android app. ddm_bridge.c owns one and forwards the
 * ddm_* hooks of mvm_hooks to it. */
#ifndef MINIVM_DDM_HANDLERS_H
#define MINIVM_DDM_HANDLERS_H

#include <stddef.h>
#include <stdint.h>

struct ddmc_vm;
typedef struct ddm_handlers ddm_handlers;

/* NULL when out of memory. Free after the ddmc_vm it registered with is freed. */
ddm_handlers *ddm_handlers_new(void);
void ddm_handlers_free(ddm_handlers *h);
/* The mvm_hooks ddm_* contracts (minivm.h), with the VM's libddmc instance (NULL: no DDM). */
int ddm_handlers_register(ddm_handlers *h, struct ddmc_vm *vm, uint32_t type);
int ddm_handlers_accept(ddm_handlers *h, int64_t ms, uint32_t *type, uint8_t **data, size_t *len);
int ddm_handlers_reply(ddm_handlers *h, int kind, uint32_t type, const uint8_t *data, size_t len, const char *msg);
/* Wakes every accept (returns -1) and fails the request in wait, for good. Any thread. */
void ddm_handlers_shutdown(ddm_handlers *h);

#endif
