/* A tiny in-test "VM" behind ddmc_vm_ops: fixed threads, a synthetic heap, counters for every
 * hook. The integration tests drive libddmc through it from a real socket peer (ddmc_host). */
#ifndef DDMC_TEST_FAKEVM_H
#define DDMC_TEST_FAKEVM_H

#include <pthread.h>
#include <stdatomic.h>

#include "ddmc/ddmc.h"
#include "ddmc_host.h"

typedef struct fakevm {
  ddmc_vm *vm;
  atomic_int attached, detached, gc_requests, exits, last_exit, jdwp_thread_started, jdwp_thread_ended;
  int answer_jdwp; /* jdwp_command hook answers VirtualMachine.Version-ish bodies */
  /* synthetic heap: regions laid out from base */
  uintptr_t heap_base;
  size_t heap_footprint;
} fakevm;

/* Send-queue cap for the next fakevm_start (0: the library's default). */
extern size_t fakevm_sendq_bytes;

/* Starts a VM listening on 127.0.0.1 (scan 8000-8040) with the given extra option tail.
 * Returns the port. */
uint16_t fakevm_start(fakevm *f, const char *extra_opts, int handshake_timeout_ms);
void fakevm_stop(fakevm *f);
/* Connects and handshakes a host peer. */
ddmc_host *peer_connect(uint16_t port);

#endif
