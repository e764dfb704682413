/* SPDX-License-Identifier: Apache-2.0 */
/* The snapshot `ddmc ui` pushes to its pages after every poll: one compact JSON document with the
 * VM, its threads, the thread timeline and the heap history. Built once per poll by the worker,
 * whatever the number of pages watching. Its size is bounded by the histories' bounds
 * (ui_vm.h). */
#include "ui_vm_int.h"

#include <stdlib.h>
#include <string.h>

static void json_vm(jw *w, ui_vm *v) {
  jw_key(w, "vm");
  jw_obj(w);
  jw_kstr(w, "target", v->target);
  jw_kstr(w, "state", v->state);
  jw_kstr(w, "error", v->error);
  if (v->helo.vm_ident != NULL) {
    jw_kuint(w, "pid", v->helo.pid);
    jw_kstr(w, "vm_ident", v->helo.vm_ident);
    const char *app = v->apnm_seen ? v->apnm.name : v->helo.app_name;
    jw_kstr(w, "app", app);
    jw_kstr(w, "abi", v->helo.abi);
    if (v->helo.present & DDMC_HOST_HELO_USER_ID) jw_kint(w, "user", v->helo.user_id);
    jw_kuint(w, "features", v->helo.n_features);
  }
  /* We hold the VM's one debugger connection while connected; a VM that accepted the connection
   * but not the handshake has another debugger on it. */
  jw_kstr(w, "debugger", strcmp(v->state, "attached") == 0 ? "attached" : v->waiting ? "waiting" : "none");
  jw_kbool(w, "waiting", v->waiting);
  jw_kbool(w, "tracking_allocs", v->tracking_allocs);
  jw_kbool(w, "tracing", v->tracing);
  jw_close(w);
}

static void json_threads(jw *w, ui_vm *v) {
  jw_key(w, "threads");
  jw_arr(w);
  for (size_t i = 0; i < v->threads.count; i++) {
    const ddmc_host_thread *t = &v->threads.v[i];
    jw_obj(w);
    jw_kuint(w, "id", t->id);
    jw_kstr(w, "name", t->name);
    if (t->has_stats) {
      jw_kuint(w, "status", t->status);
      jw_kstr(w, "state", ddmc_host_thread_status_name(t->status));
      jw_kuint(w, "tid", t->tid);
      jw_kuint(w, "utime", t->utime);
      jw_kuint(w, "stime", t->stime);
      jw_kint(w, "daemon", t->daemon);
    } else {
      jw_kstr(w, "state", "starting");
    }
    jw_close(w);
  }
  jw_close(w);
}

/* Each row in time order, oldest first; the columns are the last min(tl_n, N) samples. */
static void json_timeline(jw *w, ui_vm *v) {
  uint64_t n = v->tl_n < UI_VM_TIMELINE_SAMPLES ? v->tl_n : UI_VM_TIMELINE_SAMPLES;
  uint64_t first = v->tl_n - n;
  char s[UI_VM_TIMELINE_SAMPLES];
  jw_key(w, "timeline");
  jw_obj(w);
  jw_kuint(w, "samples", n);
  jw_kuint(w, "period_ms", 1000);
  jw_key(w, "rows");
  jw_arr(w);
  for (size_t i = 0; i < v->nrows; i++) {
    for (uint64_t k = 0; k < n; k++) s[k] = v->rows[i].s[(first + k) % UI_VM_TIMELINE_SAMPLES];
    jw_obj(w);
    jw_kuint(w, "id", v->rows[i].id);
    jw_kstr(w, "name", v->rows[i].name);
    jw_key(w, "s");
    jw_strn(w, s, (size_t)n);
    jw_close(w);
  }
  jw_close(w);
  jw_close(w);
}

static void json_series(jw *w, ui_vm *v, const char *key, int which) {
  uint64_t n = v->heap_n < UI_VM_HEAP_SAMPLES ? v->heap_n : UI_VM_HEAP_SAMPLES;
  jw_key(w, key);
  jw_arr(w);
  for (uint64_t k = v->heap_n - n; k < v->heap_n; k++) {
    const ui_heap_sample *s = &v->heap[k % UI_VM_HEAP_SAMPLES];
    switch (which) {
      case 0: jw_double(w, (double)s->t_ms / 1000.0); break;
      case 1: jw_uint(w, s->allocated); break;
      case 2: jw_uint(w, s->footprint); break;
      case 3: jw_uint(w, s->max); break;
      default: jw_uint(w, s->objects); break;
    }
  }
  jw_close(w);
}

static void json_heap(jw *w, ui_vm *v) {
  jw_key(w, "heap");
  jw_obj(w);
  json_series(w, v, "t", 0);
  json_series(w, v, "allocated", 1);
  json_series(w, v, "footprint", 2);
  json_series(w, v, "max", 3);
  json_series(w, v, "objects", 4);
  uint64_t n = v->gc_n < UI_VM_GC_MARKS ? v->gc_n : UI_VM_GC_MARKS;
  jw_key(w, "gc");
  jw_arr(w);
  for (uint64_t k = v->gc_n - n; k < v->gc_n; k++) jw_double(w, (double)v->gc[k % UI_VM_GC_MARKS] / 1000.0);
  jw_close(w);
  jw_kuint(w, "dumps", v->dump_seq);
  jw_close(w);
}

/* --all: ps's last document as it printed it (a string the page parses: ddmc wrote it, so it is
 * JSON), the listings so far and why the last one failed, if it did. */
static void json_list(jw *w, ui_vm *v) {
  if (v->list == NULL) return;
  char err[200];
  uint64_t seq;
  char *doc = ui_list_copy(v->list, &seq, err, sizeof err);
  jw_key(w, "list");
  jw_obj(w);
  jw_kuint(w, "seq", seq);
  jw_kstr(w, "error", err);
  jw_kstr(w, "ps", doc);
  jw_kuint(w, "picked", v->pid);
  jw_close(w);
  free(doc);
}

void ui_snap_publish(ui_vm *v) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (f == NULL) return;
  jw w;
  jw_init(&w, f);
  w.compact = 1;
  jw_obj(&w);
  json_vm(&w, v);
  json_threads(&w, v);
  json_timeline(&w, v);
  json_heap(&w, v);
  json_list(&w, v);
  jw_close(&w);
  int bad = jw_end(&w) != 0;
  if (fclose(f) != 0 || bad) {
    free(buf);
    return;
  }
  pthread_mutex_lock(&v->mu);
  free(v->snap);
  v->snap = buf;
  v->snap_len = len;
  v->version++;
  pthread_cond_broadcast(&v->cv);
  pthread_mutex_unlock(&v->mu);
}
