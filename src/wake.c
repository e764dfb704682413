/* SPDX-License-Identifier: Apache-2.0 */
/* Waking the JDWP thread, and the sleeps it can be woken from. The eventfd (vm->wake_fd) is in
 * every poll set of the JDWP thread: a VM thread that queued a packet, or ddmc_vm_stop, writes it.
 * Transports block here, so they depend on this file and not on the VM object's code. */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "vm_int.h"

void ddmc__wake(ddmc_vm *vm) {
  /* One write per wake-up: publishers that find a wake already pending skip the syscall, and
   * look before they swap, so a busy period costs them a shared read, not a contended write. The
   * fence orders the caller's publish before that read (the JDWP thread clears the flag, then
   * looks at the queue): without it the read could pass the publish and the wake-up be lost. */
  atomic_thread_fence(memory_order_seq_cst);
  if (atomic_load_explicit(&vm->wake_pending, memory_order_relaxed) == 0 &&
      atomic_exchange_explicit(&vm->wake_pending, 1, memory_order_acq_rel) == 0) {
    uint64_t one = 1;
    ssize_t rc;
    do {
      rc = write(vm->wake_fd, &one, sizeof(one));
    } while (rc < 0 && errno == EINTR);
  }
}

void ddmc__wake_force(ddmc_vm *vm) {
  uint64_t one = 1;
  if (write(vm->wake_fd, &one, sizeof(one)) < 0) { /* a full eventfd still wakes it */ }
}

void ddmc__drain_wake(ddmc_vm *vm) {
  uint64_t v;
  /* Cleared before the caller looks at the queue, so a send racing with it is never missed. */
  if (read(vm->wake_fd, &v, sizeof(v)) > 0 || errno == EAGAIN) atomic_store(&vm->wake_pending, 0);
}

int ddmc__sleep_interruptible(ddmc_vm *vm, int ms) {
  int64_t deadline = ddmc__now_ms() + ms;
  while (!atomic_load(&vm->stopping)) {
    int64_t left = deadline - ddmc__now_ms();
    if (left <= 0) return 0;
    struct pollfd pfd = {.fd = vm->wake_fd, .events = POLLIN};
    if (poll(&pfd, 1, (int)left) > 0) ddmc__drain_wake(vm);
  }
  return 1;
}

int ddmc__wait_readable(ddmc_vm *vm, int fd) { return ddmc__wait_readable_until(vm, fd, -1); }

int ddmc__wait_readable_until(ddmc_vm *vm, int fd, int64_t deadline) {
  struct pollfd p[2] = {{.fd = fd, .events = POLLIN}, {.fd = vm->wake_fd, .events = POLLIN}};
  int64_t left = deadline < 0 ? -1 : deadline - ddmc__now_ms();
  if (deadline >= 0 && left <= 0) return 0;
  int rc = poll(p, 2, left > INT32_MAX ? INT32_MAX : (int)left);
  if (rc < 0) {
    if (errno != EINTR) {
      /* Cannot poll at all (ENOMEM): back off rather than spin. */
      ddmc__log(vm, DDMC_LOG_ERROR, "JDWP: poll: %s", strerror(errno));
      ddmc__sleep_interruptible(vm, 100);
    }
    return 0;
  }
  if (p[1].revents & POLLIN) ddmc__drain_wake(vm);
  return !atomic_load(&vm->stopping) && (p[0].revents & (POLLIN | POLLHUP | POLLERR));
}
