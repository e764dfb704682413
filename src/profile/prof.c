/* SPDX-License-Identifier: Apache-2.0 */
/* The profiling layer's own state: configuration, what the VM's bridge lets it offer (the
 * features FEAT lists), REAL's entry point and statistics. */
#include <string.h>

#include "profile/alloc_ring.h"
#include "profile/hprof.h"
#include "profile/names.h"
#include "profile/trace_int.h"

void ddmc_prof_config_init_(ddmc_prof_config *c, size_t size) {
  if (c == NULL) return;
  ddmc_prof_config d;
  memset(&d, 0, sizeof(d));
  d.alloc_records = 65536;
  d.alloc_depth = 16;
  d.trace_max_bytes = (uint32_t)64 << 20;
  d.trace_cpu_refresh_us = 100;
  d.sample_min_interval_us = 100;
  d.hprof_max_bytes = (uint64_t)512 << 20;
  memcpy(c, &d, DDMC__MIN(size, sizeof(d)));
}

int ddmc__prof_init(ddmc_vm *vm) {
  ddmc_prof_config_init(&vm->prof.cfg);
  return 0;
}

static uint32_t pow2_at_least(uint32_t v) {
  uint32_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

int ddmc_prof_configure_(ddmc_vm *vm, const ddmc_prof_config *c, size_t size) {
  if (vm == NULL || c == NULL) return DDMC_EINVAL;
  if (atomic_load(&vm->started)) return DDMC_ESTATE;
  ddmc_prof_config n = vm->prof.cfg;
  memcpy(&n, c, DDMC__MIN(size, sizeof(n))); /* members an older caller lacks keep their values */
  if (n.alloc_records == 0 || n.alloc_records > 65536 || n.alloc_depth == 0 || n.alloc_depth > 64 ||
      n.trace_max_bytes < 4096 || n.sample_min_interval_us == 0 || n.hprof_max_bytes < ((uint64_t)64 << 10) ||
      n.hprof_max_bytes > DDMC__HPROF_MAX_BYTES)
    return DDMC_EINVAL;
  /* A relative directory would move with the VM's working directory. */
  if (memchr(n.file_dir, '\0', sizeof(n.file_dir)) == NULL || (n.file_dir[0] != '\0' && n.file_dir[0] != '/'))
    return DDMC_EINVAL;
  n.alloc_records = pow2_at_least(n.alloc_records);
  vm->prof.cfg = n;
  return 0;
}

int ddmc__prof_can_trace(const ddmc_vm *vm) {
  const ddmc_vm_bridge *o = ddmc__bridge(vm);
  return o != NULL && o->set_method_events != NULL && o->class_info != NULL && o->method_info != NULL;
}

int ddmc__prof_can_sample(const ddmc_vm *vm) { return vm->ops.for_each_thread != NULL && vm->ops.thread_stack != NULL; }

void ddmc__prof_features(const ddmc_vm *vm, void (*fn)(void *arg, const char *feature), void *arg) {
  if (ddmc__prof_can_trace(vm)) {
    fn(arg, "method-trace-profiling");
    fn(arg, "method-trace-profiling-streaming");
  }
  if (ddmc__prof_can_sample(vm)) fn(arg, "method-sample-profiling");
  if (ddmc__prof_hprof_supported(vm) || ddmc__prof_hprof_native(vm)) {
    fn(arg, "hprof-heap-dump");
    fn(arg, "hprof-heap-dump-streaming");
  }
}

int ddmc__prof_alloc_real(ddmc_vm *vm, ddmc_buf *out) {
  ddmc__prof *p = &vm->prof;
  ddmc__prof_names names;
  ddmc__prof_names_init(&names, &vm->mem, ddmc__bridge(vm), vm->bridge_data);
  /* The JDWP thread is the only one that frees the ring (REAE), and it is here. */
  int rc = ddmc__prof_alloc_report(atomic_load(&p->ring), &names, &vm->mem, 65535, out);
  ddmc__prof_names_free(&names);
  return rc;
}

ddmc_trace_mode ddmc_trace_mode_now(const ddmc_vm *vm) {
  return vm ? (ddmc_trace_mode)atomic_load(&((ddmc_vm *)vm)->prof.mode) : DDMC_TRACE_OFF;
}

void ddmc_prof_get_stats_(const ddmc_vm *cvm, ddmc_prof_stats *out, size_t size) {
  if (out == NULL) return;
  ddmc_prof_stats st;
  memset(&st, 0, sizeof(st));
  if (cvm != NULL) {
    ddmc__prof *p = &((ddmc_vm *)cvm)->prof;
    st.alloc_recorded = ddmc__prof_alloc_recorded(cvm);
    st.traces = atomic_load(&p->st_traces);
    st.trace_records = atomic_load(&p->st_records);
    st.trace_overflows = atomic_load(&p->st_overflows);
    st.trace_lost = atomic_load(&p->st_lost);
    st.samples = atomic_load(&p->st_samples);
    st.sample_threads = atomic_load(&p->st_sample_threads);
    st.hprof_dumps = atomic_load(&p->st_hprof_dumps);
    st.hprof_bytes = atomic_load(&p->st_hprof_bytes);
    st.hprof_failed = atomic_load(&p->st_hprof_failed);
  }
  memcpy(out, &st, DDMC__MIN(size, sizeof(st)));
}
