/* SPDX-License-Identifier: Apache-2.0 */
/* The page's downloads (GET /api/export/NAME, run by the worker as the mailbox operation
 * "export"): what the page holds, written by the same encoders the commands use (export.h).
 *   trace.speedscope.json, trace.collapsed.txt, trace.pb   the last trace the page stopped
 *   alloc.pb                                               the last allocation report it got
 *   threads.perfetto.json                                  the thread timeline, heap samples and
 *                                                          GC marks the worker keeps
 * The first two come from the VM's own bytes (kept by ui_ops.c), so a download says exactly what
 * the page showed; the last is made from the worker's bounded histories (ui_vm.h). */
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "ui_vm_int.h"

static void set_text(ui_vm_result *r, int status, const char *msg) {
  r->status = status;
  r->ctype = "text/plain; charset=utf-8";
  r->body = strdup(msg);
  r->len = r->body ? strlen(r->body) : 0;
}

typedef enum what { W_SPEEDSCOPE, W_COLLAPSED, W_PPROF_TRACE, W_PPROF_ALLOC, W_PERFETTO } what;

static const struct {
  const char *name, *ctype;
  what w;
} k_exports[] = {
    {"trace.speedscope.json", "application/json", W_SPEEDSCOPE},
    {"trace.collapsed.txt", "text/plain; charset=utf-8", W_COLLAPSED},
    {"trace.pb", "application/octet-stream", W_PPROF_TRACE},
    {"alloc.pb", "application/octet-stream", W_PPROF_ALLOC},
    {"threads.perfetto.json", "application/json", W_PERFETTO},
};

static int write_trace(ui_vm *v, FILE *f, what w, ui_vm_result *r) {
  ddmc_host_trace tr;
  if (v->kept_trace == NULL) {
    set_text(r, 404, "no trace yet: start and stop one on the Trace page first");
    return -1;
  }
  if (ddmc_host_trace_parse(v->kept_trace, v->kept_trace_len, &tr) != 0) {
    set_text(r, 502, "the VM's trace is malformed");
    return -1;
  }
  export_clock c = v->kept_trace_clock;
  int rc = w == W_SPEEDSCOPE  ? export_speedscope(f, &tr, c, "ddmc ui trace")
           : w == W_COLLAPSED ? export_collapsed(f, &tr, c)
                              : export_pprof_trace(f, &tr, c);
  ddmc_host_trace_free(&tr);
  return rc;
}

static int write_allocs(ui_vm *v, FILE *f, ui_vm_result *r) {
  ddmc_host_allocs al;
  if (v->kept_real == NULL) {
    set_text(r, 404, "no allocations yet: get them on the Allocations page first");
    return -1;
  }
  if (ddmc_host_real_parse(v->kept_real, v->kept_real_len, &al) != 0) {
    set_text(r, 502, "the VM's allocation report is malformed");
    return -1;
  }
  int rc = export_pprof_allocs(f, &al);
  ddmc_host_allocs_free(&al);
  return rc;
}

/* The timeline's columns (oldest first) as THST snapshots: a thread's status character back to its
 * code ('?' was above 9: 10, which names no state), '.' left out. */
static void timeline_snaps(const ui_vm *v, export_thst_snap *snaps, ddmc_host_thst_entry *pool, size_t *n) {
  uint64_t cols = v->tl_n < UI_VM_TIMELINE_SAMPLES ? v->tl_n : UI_VM_TIMELINE_SAMPLES;
  size_t used = 0;
  *n = 0;
  for (uint64_t c = v->tl_n - cols; c < v->tl_n; c++) {
    size_t col = (size_t)(c % UI_VM_TIMELINE_SAMPLES), first = used;
    for (size_t i = 0; i < v->nrows; i++) {
      char ch = v->rows[i].s[col];
      if (ch == '.') continue;
      ddmc_host_thst_entry *e = &pool[used++];
      memset(e, 0, sizeof *e);
      e->thread_id = v->rows[i].id;
      e->status = (uint8_t)(ch >= '0' && ch <= '9' ? ch - '0' : 10);
      e->daemon = -1;
    }
    snaps[*n].ts_us = (uint64_t)v->tl_t[col] * 1000;
    snaps[*n].entries = pool + first;
    snaps[(*n)++].count = used - first;
  }
}

static int write_perfetto(ui_vm *v, FILE *f) {
  export_thst_snap *snaps = calloc(UI_VM_TIMELINE_SAMPLES, sizeof *snaps);
  ddmc_host_thst_entry *pool = calloc((size_t)UI_VM_TIMELINE_SAMPLES * UI_VM_TIMELINE_ROWS, sizeof *pool);
  export_thread_name *names = calloc(UI_VM_TIMELINE_ROWS, sizeof *names);
  export_heap_snap *heap = calloc(UI_VM_HEAP_SAMPLES, sizeof *heap);
  export_gc *gcs = calloc(UI_VM_GC_MARKS, sizeof *gcs);
  int rc = DDMC_ENOMEM;
  if (snaps && pool && names && heap && gcs) {
    export_vm vm = {.pid = v->helo.pid, .threads = names, .nthreads = v->nrows, .thst = snaps, .heap = heap, .gcs = gcs};
    vm.name = v->apnm_seen ? v->apnm.name : v->helo.app_name;
    for (size_t i = 0; i < v->nrows; i++) names[i] = (export_thread_name){v->rows[i].id, v->rows[i].name};
    timeline_snaps(v, snaps, pool, &vm.nthst);
    uint64_t nh = v->heap_n < UI_VM_HEAP_SAMPLES ? v->heap_n : UI_VM_HEAP_SAMPLES;
    for (uint64_t k = v->heap_n - nh; k < v->heap_n; k++) {
      const ui_heap_sample *s = &v->heap[k % UI_VM_HEAP_SAMPLES];
      heap[vm.nheap].ts_us = (uint64_t)s->t_ms * 1000;
      heap[vm.nheap].info.allocated_bytes = s->allocated;
      heap[vm.nheap].info.footprint = s->footprint;
      heap[vm.nheap].info.max_bytes = s->max;
      heap[vm.nheap++].info.allocated_objects = s->objects;
    }
    uint64_t ng = v->gc_n < UI_VM_GC_MARKS ? v->gc_n : UI_VM_GC_MARKS;
    for (uint64_t k = v->gc_n - ng; k < v->gc_n; k++) gcs[vm.ngcs++].ts_us = (uint64_t)v->gc[k % UI_VM_GC_MARKS] * 1000;
    rc = export_perfetto(f, &vm, 1);
  }
  free(snaps);
  free(pool);
  free(names);
  free(heap);
  free(gcs);
  return rc;
}

void ui_export_run(ui_vm *v, const char *name, ui_vm_result *r) {
  size_t i = 0, n = sizeof k_exports / sizeof k_exports[0];
  while (i < n && strcmp(k_exports[i].name, name) != 0) i++;
  if (i == n) {
    set_text(r, 404, "no such export");
    return;
  }
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (f == NULL) {
    set_text(r, 500, "out of memory");
    return;
  }
  what w = k_exports[i].w;
  int rc = w == W_PPROF_ALLOC ? write_allocs(v, f, r) : w == W_PERFETTO ? write_perfetto(v, f) : write_trace(v, f, w, r);
  int bad = fclose(f) != 0;
  if (rc != 0 || bad || buf == NULL) {
    free(buf);
    if (r->body == NULL) set_text(r, 500, rc == DDMC_ENOMEM ? "out of memory" : "cannot write the export");
    return;
  }
  r->status = 200;
  r->ctype = k_exports[i].ctype;
  r->body = buf;
  r->len = len;
}
