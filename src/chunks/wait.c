/* SPDX-License-Identifier: Apache-2.0 */
/* WAIT [u1 reason = 0]: "this VM is waiting for a debugger", and the wait itself.
 *
 * Only a debugger (a non-DDM packet) releases the wait: DDMS alone attaching must not, or
 * every app that calls waitForDebugger would run off as soon as the monitor connects. */
#include <time.h>

#include "chunks/families.h"
#include "vm_int.h"

#define CHUNK_WAIT DDMC_FOURCC('W', 'A', 'I', 'T')

static int send_wait(ddmc_vm *vm) {
  uint8_t reason = 0;
  return ddmc_send_chunk(vm, CHUNK_WAIT, &reason, 1);
}

/* A DDM peer that arrives while a thread waits hears it at once (its first DDM packet is what
 * makes it a DDM peer). */
static void wait_connected(void *ud, ddmc_vm *vm) {
  (void)ud;
  if (atomic_load(&vm->waiting)) send_wait(vm);
}

/* WAIT is VM-to-host only: one sent to us gets the empty reply any unknown chunk gets. */
static int handle_wait(void *ud, ddmc_vm *vm, const ddmc_chunk *req, ddmc_chunk_type *rtype, ddmc_buf *b) {
  (void)ud;
  (void)vm;
  (void)req;
  (void)rtype;
  (void)b;
  return 0;
}

int ddmc__chunk_wait_register(ddmc_vm *vm) {
  static const ddmc_chunk_handler h = {.handle = handle_wait, .connected = wait_connected};
  return ddmc_register_handler(vm, CHUNK_WAIT, &h, NULL);
}

int ddmc_vm_waiting_for_debugger(const ddmc_vm *vm) {
  return vm ? atomic_load(&((ddmc_vm *)vm)->waiting) : 0;
}

int ddmc_wait_for_debugger(ddmc_vm *vm, int timeout_ms) {
  if (vm == NULL) return DDMC_EINVAL;
  struct timespec deadline;
  clock_gettime(CLOCK_MONOTONIC, &deadline);
  if (timeout_ms >= 0) {
    deadline.tv_sec += timeout_ms / 1000;
    deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) {
      deadline.tv_sec++;
      deadline.tv_nsec -= 1000000000L;
    }
  }
  ddmc__lock(&vm->state_lock);
  vm->waiters++;
  atomic_store(&vm->waiting, 1);
  ddmc__unlock(&vm->state_lock);

  /* A DDM peer already there hears about it now; one that connects later hears it from the
   * dispatcher on its first DDM packet. */
  if (!atomic_load(&vm->debugger_active)) send_wait(vm);

  int rc = 0;
  ddmc__lock(&vm->state_lock);
  while (!atomic_load(&vm->debugger_active)) {
    if (atomic_load(&vm->stopping)) {
      rc = DDMC_ESTATE;
      break;
    }
    if (timeout_ms < 0) {
      pthread_cond_wait(&vm->state_cond, &vm->state_lock);
    } else if (pthread_cond_timedwait(&vm->state_cond, &vm->state_lock, &deadline) != 0 &&
               !atomic_load(&vm->debugger_active)) {
      rc = DDMC_ETIMEDOUT;
      break;
    }
  }
  if (--vm->waiters == 0) atomic_store(&vm->waiting, 0);
  ddmc__unlock(&vm->state_lock);
  return rc;
}
