/* SPDX-License-Identifier: Apache-2.0 */
/* The ddmc_vm object: creation, start/stop, identity, and the small thread-safe getters.
 * ddmc_vm_start prepares the transport on the caller's thread (so a busy port is reported to
 * the VM's command line, not lost in a log) and then hands everything to the JDWP thread. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "chunks/families.h"
#include "jvmti/jvmti_hooks.h"
#include "profile/prof_int.h"
#include "send/send.h"

int ddmc_vm_new_(ddmc_vm **out, const ddmc_options *o, size_t options_size, const ddmc_vm_ops *ops, size_t ops_size,
                 const ddmc_allocator *mem, void *vm_data, unsigned header_version, size_t thread_info_size,
                 size_t frame_size) {
  if (out == NULL) return DDMC_EINVAL;
  *out = NULL;
  if ((header_version >> 16) != DDMC_VERSION_MAJOR) return DDMC_EVERSION;
  /* Every struct at least as big as in the first release (today's sizes), none bigger than this
   * library knows: a newer caller needs a newer library. */
  if (o == NULL || options_size < DDMC__OPTIONS_V03_SIZE || options_size > sizeof(ddmc_options) || ops_size > sizeof(ddmc_vm_ops) ||
      thread_info_size != sizeof(ddmc_thread_info) || frame_size != sizeof(ddmc_frame))
    return DDMC_EVERSION;
  if (o->transport != DDMC_TRANSPORT_SOCKET && o->transport != DDMC_TRANSPORT_ADB) return DDMC_EINVAL;

  ddmc__mem m;
  ddmc__mem_init(&m, mem);
  ddmc_vm *vm = ddmc__calloc(&m, 1, sizeof(*vm));
  if (vm == NULL) return DDMC_ENOMEM;
  vm->mem = m;
  ddmc_options_init(&vm->opt); /* an older, shorter struct leaves the appended options at their defaults */
  memcpy(&vm->opt, o, options_size);
  if (vm->opt.max_packet < 64) vm->opt.max_packet = 64;
  if (vm->opt.handshake_timeout_ms <= 0) vm->opt.handshake_timeout_ms = 10000;
  if (vm->opt.redial_max_ms < 500) vm->opt.redial_max_ms = 500;
  if (vm->opt.event_request_bytes == 0) vm->opt.event_request_bytes = DDMC_DEFAULT_EVENT_REQUEST_BYTES;
  if (ops != NULL) memcpy(&vm->ops, ops, ops_size); /* an older, shorter table leaves the rest NULL */
  vm->vm_data = vm_data;
  ddmc__logger_init(&vm->log, vm->ops.log, vm_data);
  vm->transport = o->transport == DDMC_TRANSPORT_ADB ? &ddmc__jdwp_transport_adb : &ddmc__jdwp_transport_socket;
  vm->listen_fd = -1;
  vm->pid = (uint32_t)getpid();
  atomic_init(&vm->next_id, 0x10000000u); /* Dalvik's range for VM-originated requests */
  atomic_init(&vm->last_activity, 0);

  int rc = DDMC_ENOMEM;
  int have_state = 0, have_cond = 0, have_q = 0, have_reg = 0;
  vm->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (vm->wake_fd < 0) {
    rc = DDMC_EIO;
    goto fail;
  }
  if (pthread_mutex_init(&vm->state_lock, NULL) != 0) goto fail;
  have_state = 1;
  pthread_condattr_t ca;
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  have_cond = pthread_cond_init(&vm->state_cond, &ca) == 0;
  pthread_condattr_destroy(&ca);
  if (!have_cond) goto fail;
  if (ddmc__send_ring_init(&vm->ring, &vm->mem, DDMC__MIN(vm->opt.sendq_bytes, DDMC__RING_BYTES), ddmc__send_drop,
                           vm) != 0)
    goto fail;
  have_q = 1;
  if (ddmc__chunk_registry_init(&vm->reg) != 0) goto fail;
  have_reg = 1;
  if (ddmc__chunk_appinfo_set(vm, "", "", 0) != 0) goto fail;
  ddmc__ctl_init(vm);
  for (const ddmc__chunk_family *f = ddmc__chunk_families; f->name != NULL; f++)
    if ((rc = f->add(vm)) != 0) goto fail;
  *out = vm;
  return 0;

fail:
  if (have_reg) ddmc__chunk_registry_destroy(vm);
  if (have_q) ddmc__send_ring_destroy(&vm->ring);
  if (have_cond) pthread_cond_destroy(&vm->state_cond);
  if (have_state) pthread_mutex_destroy(&vm->state_lock);
  if (vm->wake_fd >= 0) close(vm->wake_fd);
  ddmc__chunk_appinfo_free_all(vm);
  ddmc__free(&m, vm);
  return rc;
}

int ddmc_vm_set_ident(ddmc_vm *vm, const ddmc_vm_ident *id) {
  if (vm == NULL || id == NULL) return DDMC_EINVAL;
  if (atomic_load(&vm->started)) return DDMC_ESTATE;
  char *n = ddmc__strdup(&vm->mem, id->vm_name ? id->vm_name : "");
  char *a = ddmc__strdup(&vm->mem, id->abi ? id->abi : "");
  char *f = ddmc__strdup(&vm->mem, id->jvm_flags ? id->jvm_flags : "");
  if (n == NULL || a == NULL || f == NULL) {
    ddmc__free(&vm->mem, n);
    ddmc__free(&vm->mem, a);
    ddmc__free(&vm->mem, f);
    return DDMC_ENOMEM;
  }
  ddmc__free(&vm->mem, vm->vm_name);
  ddmc__free(&vm->mem, vm->abi);
  ddmc__free(&vm->mem, vm->jvm_flags);
  vm->vm_name = n;
  vm->abi = a;
  vm->jvm_flags = f;
  vm->native_debuggable = id->native_debuggable;
  if (id->pid != 0) vm->pid = id->pid;
  return 0;
}

int ddmc_vm_add_feature(ddmc_vm *vm, const char *name) {
  if (vm == NULL || name == NULL) return DDMC_EINVAL;
  if (atomic_load(&vm->started)) return DDMC_ESTATE;
  char **nf = ddmc__realloc(&vm->mem, vm->features, sizeof(char *) * (size_t)(vm->nfeatures + 1));
  if (nf == NULL) return DDMC_ENOMEM;
  vm->features = nf;
  if ((nf[vm->nfeatures] = ddmc__strdup(&vm->mem, name)) == NULL) return DDMC_ENOMEM;
  vm->nfeatures++;
  return 0;
}

int ddmc_vm_start(ddmc_vm *vm) {
  if (vm == NULL) return DDMC_EINVAL;
  int expected = 0;
  if (!atomic_compare_exchange_strong(&vm->started, &expected, 1)) return DDMC_ESTATE;
  int rc = vm->opt.onthrow[0] || vm->opt.onuncaught ? ddmc__jdwp_arm(vm) : ddmc__jdwp_begin(vm);
  if (rc != 0 && rc != DDMC_ETIMEDOUT) atomic_store(&vm->started, 0);
  return rc;
}

uint16_t ddmc_vm_port(const ddmc_vm *vm) { return vm ? (uint16_t)atomic_load(&((ddmc_vm *)vm)->port) : 0; }

void ddmc_vm_stop(ddmc_vm *vm) {
  if (vm == NULL) return;
  ddmc__lock(&vm->state_lock);
  atomic_store(&vm->stopping, 1);
  pthread_cond_broadcast(&vm->state_cond);
  ddmc__unlock(&vm->state_lock);
  if (vm->thread_running) {
    /* Unconditionally, not through ddmc__wake: the JDWP thread leaves wake_pending set on
     * purpose after traffic, and a pending flag must not swallow the stop. */
    ddmc__wake_force(vm);
    pthread_join(vm->thread, NULL);
    vm->thread_running = 0;
  }
  if (atomic_load(&vm->started) && !vm->transport_down) {
    vm->transport->shutdown(vm);
    vm->transport_down = 1;
  }
}

void ddmc_vm_free(ddmc_vm *vm) {
  if (vm == NULL) return;
  ddmc_vm_stop(vm);
  ddmc__prof_destroy(vm);  /* first: a trace may still switch method events off */
  ddmc__jv_destroy(vm);
  struct ddmc__dbg *dbg = atomic_exchange(&vm->dbg, NULL);
  if (dbg != NULL && vm->dbg_destroy != NULL) vm->dbg_destroy(dbg);
  ddmc__ctl_destroy(vm); /* after every client that may still turn a switch off */
  ddmc__chunk_registry_destroy(vm);
  ddmc__send_ring_destroy(&vm->ring);
  pthread_cond_destroy(&vm->state_cond);
  pthread_mutex_destroy(&vm->state_lock);
  close(vm->wake_fd);
  ddmc__free(&vm->mem, vm->vm_name);
  ddmc__free(&vm->mem, vm->abi);
  ddmc__free(&vm->mem, vm->jvm_flags);
  for (int i = 0; i < vm->nfeatures; i++) ddmc__free(&vm->mem, vm->features[i]);
  ddmc__free(&vm->mem, vm->features);
  ddmc__chunk_appinfo_free_all(vm);
  ddmc__mem m = vm->mem;
  ddmc__free(&m, vm);
}

void *ddmc_vm_data(const ddmc_vm *vm) { return vm ? vm->vm_data : NULL; }

int ddmc_vm_is_connected(const ddmc_vm *vm) {
  return vm ? atomic_load_explicit(&((ddmc_vm *)vm)->connected, memory_order_acquire) : 0;
}

int ddmc_vm_debugger_active(const ddmc_vm *vm) { return vm ? atomic_load(&((ddmc_vm *)vm)->debugger_active) : 0; }

int64_t ddmc_vm_last_activity_ms(const ddmc_vm *vm) {
  if (vm == NULL || !atomic_load(&((ddmc_vm *)vm)->debugger_active)) return -1;
  int64_t t = atomic_load(&((ddmc_vm *)vm)->last_activity);
  if (t == 0) return 0;
  int64_t d = ddmc__now_ms() - t;
  return d > 0 ? d : 1; /* 0 means "busy": never report it for an idle debugger */
}

void ddmc_vm_get_stats_(const ddmc_vm *cvm, ddmc_stats *caller, size_t size) {
  ddmc_vm *vm = (ddmc_vm *)cvm;
  if (caller == NULL) return;
  ddmc_stats st;
  memset(&st, 0, sizeof(st));
  if (vm != NULL) {
    st.sessions = atomic_load(&vm->st_sessions);
    st.packets_in = atomic_load(&vm->st_packets_in);
    st.packets_out = atomic_load(&vm->st_packets_out);
    st.bytes_in = atomic_load(&vm->st_bytes_in);
    st.bytes_out = atomic_load(&vm->st_bytes_out);
    st.chunks_dropped = atomic_load(&vm->ring.dropped);
    st.bytes_queued_peak = atomic_load(&vm->ring.peak);
    st.protocol_errors = atomic_load(&vm->st_protocol_errors);
    st.transfers_dropped = atomic_load(&vm->st_transfers_dropped);
  }
  memcpy(caller, &st, DDMC__MIN(size, sizeof(st))); /* an older caller's smaller struct is not overrun */
}

int ddmc_vm_set_bridge_(ddmc_vm *vm, const ddmc_vm_bridge *bridge, size_t bridge_size, void *vm_data) {
  if (vm == NULL || bridge == NULL || bridge_size == 0) return DDMC_EINVAL;
  if (atomic_load(&vm->started) || vm->has_bridge || atomic_load(&vm->jvmti) != NULL) return DDMC_ESTATE;
  /* A VM built against an older header has fewer members: the rest stay NULL. */
  memset(&vm->bridge, 0, sizeof(vm->bridge));
  memcpy(&vm->bridge, bridge, DDMC__MIN(bridge_size, sizeof(vm->bridge)));
  vm->bridge_data = vm_data;
#ifdef DDMC__LOCK_CHECK
  /* Every client calls the ops through shims that check the lock contract (bridge_check.h). */
  vm->bridge_check.vm = vm->bridge;
  vm->bridge_check.vm_data = vm_data;
  ddmc__bridge_check_wrap(&vm->bridge_check, &vm->bridge);
  vm->bridge_data = &vm->bridge_check;
#endif
  vm->has_bridge = 1;
  return 0;
}
