/* WAIT [u1 reason = 0]: "this VM is waiting for a debugger", and the wait itself.
 *
 * Only a debugger (a non-DDM packet) releases the wait: DDMS alone attaching must not, or
 * every app that calls waitForDebugger would run off as soon as the monitor connects. */
#include <time.h>

#include "vm_int.h"

#define CHUNK_WAIT DDMC_FOURCC('W', 'A', 'I', 'T')

int ddmc__send_wait(ddmc_vm *vm) {
  uint8_t reason = 0;
  return ddmc_send_chunk(vm, CHUNK_WAIT, &reason, 1);
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
  pthread_mutex_lock(&vm->state_lock);
  vm->waiters++;
  atomic_store(&vm->waiting, 1);
  pthread_mutex_unlock(&vm->state_lock);

  /* A DDM peer already there hears about it now; one that connects later hears it from the
   * dispatcher on its first DDM packet. */
  if (!atomic_load(&vm->debugger_active)) ddmc__send_wait(vm);

  int rc = 0;
  pthread_mutex_lock(&vm->state_lock);
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
  pthread_mutex_unlock(&vm->state_lock);
  return rc;
}
