/* SPDX-License-Identifier: Apache-2.0 */
/* Several VMs' thread states, GCs and heap counters as Trace Event JSON (the JSON trace format
 * Perfetto's UI and chrome://tracing open): a pid per VM, a tid per thread. export.h. */
#include "export_int.h"

#include <string.h>

#include "json.h"
#include "monitor.h"

static void meta(jw *w, const char *what, uint32_t pid, uint32_t tid, int with_tid, const char *name) {
  jw_obj(w);
  jw_kstr(w, "name", what);
  jw_kstr(w, "ph", "M");
  jw_kuint(w, "pid", pid);
  if (with_tid) jw_kuint(w, "tid", tid);
  jw_key(w, "args");
  jw_obj(w);
  jw_kstr(w, "name", name);
  jw_close(w);
  jw_close(w);
}

static const ddmc_host_thst_entry *entry_of(const export_thst_snap *s, uint32_t id) {
  for (size_t i = 0; i < s->count; i++)
    if (s->entries[i].thread_id == id) return &s->entries[i];
  return NULL;
}

/* Each run of one state of a thread over consecutive snapshots is one slice, from the snapshot
 * that first showed it to the one that showed something else (or no longer listed the thread, or
 * the last). A state seen only in the last snapshot has no length yet: left out. */
static void thread_states(jw *w, const export_vm *vm, uint32_t pid, uint64_t origin) {
  for (size_t k = 0; k < vm->nthst; k++) {
    const export_thst_snap *s = &vm->thst[k];
    for (size_t i = 0; i < s->count; i++) {
      const ddmc_host_thst_entry *e = &s->entries[i];
      const ddmc_host_thst_entry *prev = k ? entry_of(&vm->thst[k - 1], e->thread_id) : NULL;
      if (prev && prev->status == e->status) continue; /* inside a run begun earlier */
      size_t end = k + 1;
      while (end < vm->nthst) {
        const ddmc_host_thst_entry *x = entry_of(&vm->thst[end], e->thread_id);
        if (x == NULL || x->status != e->status) break;
        end++;
      }
      uint64_t t_end = vm->thst[end < vm->nthst ? end : vm->nthst - 1].ts_us;
      if (t_end <= s->ts_us) continue;
      jw_obj(w);
      jw_kstr(w, "name", ddmc_host_thread_status_name(e->status));
      jw_kstr(w, "cat", "thread_state");
      jw_kstr(w, "ph", "X");
      jw_kuint(w, "ts", s->ts_us - origin);
      jw_kuint(w, "dur", t_end - s->ts_us);
      jw_kuint(w, "pid", pid);
      jw_kuint(w, "tid", e->thread_id);
      jw_key(w, "args");
      jw_obj(w);
      jw_kuint(w, "linux_tid", e->tid);
      jw_kuint(w, "status", e->status);
      jw_close(w);
      jw_close(w);
    }
  }
}

static void heap_counters(jw *w, const export_vm *vm, uint32_t pid, uint64_t origin) {
  for (size_t k = 0; k < vm->nheap; k++) {
    const export_heap_snap *h = &vm->heap[k];
    for (int c = 0; c < 2; c++) {
      jw_obj(w);
      jw_kstr(w, "name", c ? "heap objects" : "heap bytes");
      jw_kstr(w, "ph", "C");
      jw_kuint(w, "ts", h->ts_us - origin);
      jw_kuint(w, "pid", pid);
      jw_key(w, "args");
      jw_obj(w);
      if (c) {
        jw_kuint(w, "allocated", h->info.allocated_objects);
      } else {
        jw_kuint(w, "allocated", h->info.allocated_bytes);
        jw_kuint(w, "footprint", h->info.footprint);
      }
      jw_close(w);
      jw_close(w);
    }
  }
}

static void gcs(jw *w, const export_vm *vm, uint32_t pid, uint64_t origin) {
  for (size_t k = 0; k < vm->ngcs; k++) {
    jw_obj(w);
    jw_kstr(w, "name", "GC");
    jw_kstr(w, "cat", "gc");
    jw_kstr(w, "ph", vm->gcs[k].dur_us ? "X" : "i");
    jw_kuint(w, "ts", vm->gcs[k].ts_us - origin);
    if (vm->gcs[k].dur_us)
      jw_kuint(w, "dur", vm->gcs[k].dur_us);
    else
      jw_kstr(w, "s", "t");
    jw_kuint(w, "pid", pid);
    jw_kuint(w, "tid", 0);
    jw_close(w);
  }
}

static uint64_t earliest(const export_vm *vms, size_t n) {
  uint64_t o = UINT64_MAX;
  for (size_t i = 0; i < n; i++) {
    if (vms[i].nthst && vms[i].thst[0].ts_us < o) o = vms[i].thst[0].ts_us;
    if (vms[i].nheap && vms[i].heap[0].ts_us < o) o = vms[i].heap[0].ts_us;
    for (size_t k = 0; k < vms[i].ngcs; k++)
      if (vms[i].gcs[k].ts_us < o) o = vms[i].gcs[k].ts_us;
  }
  return o == UINT64_MAX ? 0 : o;
}

int export_perfetto(FILE *out, const export_vm *vms, size_t n) {
  if (out == NULL || (vms == NULL && n)) return DDMC_EINVAL;
  uint64_t origin = earliest(vms, n);
  jw w;
  jw_init(&w, out);
  w.compact = 1;
  jw_obj(&w);
  jw_kstr(&w, "displayTimeUnit", "ms");
  jw_key(&w, "traceEvents");
  jw_arr(&w);
  for (size_t i = 0; i < n; i++) {
    const export_vm *vm = &vms[i];
    uint32_t pid = vm->pid ? vm->pid : (uint32_t)(i + 1);
    meta(&w, "process_name", pid, 0, 0, vm->name ? vm->name : "");
    meta(&w, "thread_name", pid, 0, 1, "GCs (HPIF)");
    for (size_t k = 0; k < vm->nthreads; k++)
      if (vm->threads[k].id != 0) meta(&w, "thread_name", pid, vm->threads[k].id, 1, vm->threads[k].name);
    thread_states(&w, vm, pid, origin);
    heap_counters(&w, vm, pid, origin);
    gcs(&w, vm, pid, origin);
  }
  jw_close(&w);
  jw_close(&w);
  if (jw_end(&w) != 0) return DDMC_EIO;
  return export_finish(out);
}
