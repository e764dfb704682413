/* SPDX-License-Identifier: Apache-2.0 */
/* Services: layers above the JDWP thread that answer whole command sets (the debugger answers
 * 1-17) and want to know when a session begins and ends. The JDWP layer knows them only through
 * this table, so nothing here includes a layer above.
 *
 * Sessions run side by side (docs/sessions.md); session_start and session_end follow the
 * debugger seat: session_start runs when a session takes it (at its handshake when the seat is
 * free: the echo is queued, the send path opens, session_start runs, and the debugger queues
 * VM_START there; only then does a VM thread waiting in ddmc_vm_start (suspend=y) wake; or later,
 * when the session is the first to change the VM's world), session_end when its holder leaves.
 * Thread: every hook runs on the JDWP thread. */
#ifndef DDMC_SERVICE_H
#define DDMC_SERVICE_H

#include "common.h"

#define DDMC__MAX_SERVICES 4 /* the debugger, the THST tick: room for two more */
/* What handle returns for a request it answers later, from another thread, with
 * ddmc__send_reply (a method call the debugger asked a VM thread to make). */
#define DDMC__REPLY_DEFERRED (-1)

typedef struct ddmc__jdwp_request {
  uint8_t cmd_set, cmd;
  uint32_t id;
  const uint8_t *body;
  size_t len;
} ddmc__jdwp_request;

typedef struct ddmc__jdwp_service {
  const char *name;
  /* Non-zero when the service answers command set `set`. */
  int (*claims)(void *ud, uint8_t set);
  /* Writes the reply body into reply and returns 0 or a JDWP error code (the reply is then
   * empty). JDWP thread. */
  int (*handle)(ddmc_vm *vm, void *ud, const ddmc__jdwp_request *rq, ddmc_buf *reply);
  void (*session_start)(ddmc_vm *vm, void *ud);
  void (*session_end)(ddmc_vm *vm, void *ud);
  /* DBGD: the debugger behind a relay (DDMS, ddmlib) left while the session goes on; drop its
   * state as at the end of a session. NULL: nothing to drop. */
  void (*detach)(ddmc_vm *vm, void *ud);
  /* Periodic work while a session is past its handshake: returns the ms until it wants to run
   * again (-1: not until something else wakes the JDWP thread). NULL: none. */
  int (*tick)(ddmc_vm *vm, void *ud, int64_t now_ms);
  void *ud;
} ddmc__jdwp_service;

/* Adds a copy of s (claims may be NULL: a service that only ticks). Before ddmc_vm_start. Returns 0, DDMC_ESTATE (started) or DDMC_ENOMEM (the
 * table is full). Thread: VM init thread. */
int ddmc__jdwp_service_add(ddmc_vm *vm, const ddmc__jdwp_service *s);

#endif
