/* SPDX-License-Identifier: Apache-2.0 */
/* The head of a finished trace: its key section (threads and methods by name) and the binary
 * header, built on the JDWP thread once no writer touches the trace.
 *
 * Threads: every thread the VM lists now (for_each_thread), plus any thread that wrote records
 * and has ended since, named "Thread-<id> (exited)" so each record's thread has a line. Methods:
 * an instrumented trace resolves its (class, method) table through the bridge here, once per
 * method; a sampled one already holds names. dmtracedump rejects a key section without a thread
 * or without a method, so an empty trace gets one placeholder line of each. */
#include <stdio.h>
#include <string.h>

#include "profile/names.h"
#include "profile/trace_int.h"

typedef struct threads_arg {
  const ddmc__mem *mem;
  ddmc__prof_dmtrace_thread *v;
  size_t n, cap;
  uint8_t *listed; /* bit per id */
  int err;
} threads_arg;

static int add_thread(threads_arg *a, uint32_t id, const char *name) {
  if (a->n == a->cap) {
    size_t cap = a->cap ? a->cap * 2 : 32;
    ddmc__prof_dmtrace_thread *v = ddmc__realloc(a->mem, a->v, cap * sizeof(*v));
    if (v == NULL) return a->err = DDMC_ENOMEM;
    a->v = v;
    a->cap = cap;
  }
  char *copy = ddmc__strdup(a->mem, name ? name : "");
  if (copy == NULL) return a->err = DDMC_ENOMEM;
  a->v[a->n++] = (ddmc__prof_dmtrace_thread){id, copy};
  a->listed[id >> 3] |= (uint8_t)(1u << (id & 7));
  return 0;
}

static int on_thread(void *arg, const ddmc_thread_info *t) {
  threads_arg *a = arg;
  if (t->id >= DDMC__TRACE_MAX_THREADS || (a->listed[t->id >> 3] & (1u << (t->id & 7)))) return 0;
  return add_thread(a, t->id, t->name) != 0;
}

typedef struct methods_arg {
  ddmc__prof_dmtrace_method *v;
  char **dotted;
  size_t n;
} methods_arg;

static int resolve_methods(ddmc_vm *vm, ddmc__prof_trace *tr, ddmc__prof_names *names, methods_arg *m) {
  uint32_t count = atomic_load(&tr->mcount), at = 0;
  m->v = ddmc__calloc(&vm->mem, count + 1, sizeof(*m->v));
  m->dotted = ddmc__calloc(&vm->mem, count + 1, sizeof(char *));
  if (m->v == NULL || m->dotted == NULL) return DDMC_ENOMEM;
  for (uint32_t i = 0; i < tr->mcap && at < count; i++) {
    if (atomic_load(&tr->mslots[i].state) != 2) continue;
    ddmc__prof_nmethod *nm = ddmc__prof_names_method(names, tr->mslots[i].cls, tr->mslots[i].method);
    if (nm == NULL) return DDMC_ENOMEM;
    char tmp[1024];
    ddmc__prof_descriptor_to_dotted(nm->cls->sig, tmp, sizeof tmp);
    if ((m->dotted[at] = ddmc__strdup(&vm->mem, tmp)) == NULL) return DDMC_ENOMEM;
    int32_t line = ddmc__prof_names_line(nm, 0);
    m->v[at] =
        (ddmc__prof_dmtrace_method){i << 2, m->dotted[at], nm->name, nm->sig, nm->cls->file, line < 0 ? 0 : line};
    m->n = ++at;
  }
  return 0;
}

int ddmc__prof_trace_build_head(ddmc_vm *vm, ddmc__prof_trace *tr) {
  threads_arg ta = {&vm->mem, NULL, 0, 0, NULL, 0};
  methods_arg ma = {NULL, NULL, 0};
  ddmc__prof_names names;
  ddmc__prof_names_init(&names, &vm->mem, ddmc__bridge(vm), vm->bridge_data);
  int rc = 0;
  if ((ta.listed = ddmc__calloc(&vm->mem, DDMC__TRACE_MAX_THREADS / 8, 1)) == NULL) rc = DDMC_ENOMEM;
  if (rc == 0 && vm->ops.for_each_thread) vm->ops.for_each_thread(vm->vm_data, on_thread, &ta);
  for (uint32_t id = 0; rc == 0 && ta.err == 0 && id < DDMC__TRACE_MAX_THREADS; id++) {
    if (!(atomic_load_explicit(&tr->seen[id >> 3], memory_order_relaxed) & (1u << (id & 7)))) continue;
    if (ta.listed[id >> 3] & (1u << (id & 7))) continue;
    char name[48];
    snprintf(name, sizeof name, "Thread-%u (exited)", id);
    add_thread(&ta, id, name);
  }
  if (rc == 0 && ta.err == 0 && ta.n == 0) add_thread(&ta, 0, "(none)");
  if (rc == 0) rc = ta.err;
  if (rc == 0 && tr->mode == DDMC_TRACE_METHODS) {
    rc = resolve_methods(vm, tr, &names, &ma);
  } else if (rc == 0) {
    if ((ma.v = ddmc__calloc(&vm->mem, tr->nsmethods + 1, sizeof(*ma.v))) == NULL) rc = DDMC_ENOMEM;
    for (uint32_t i = 0; rc == 0 && i < tr->nsmethods; i++) {
      const ddmc__prof_smethod *s = &tr->smethods[i];
      ma.v[ma.n++] = (ddmc__prof_dmtrace_method){i << 2, s->cls, s->name, s->sig, s->file, 0};
    }
  }
  if (rc == 0 && ma.n == 0) /* no method: a placeholder no record names */
    ma.v[ma.n++] = (ddmc__prof_dmtrace_method){0, "(no methods traced)", "-", "()V", "", 0};
  if (rc == 0) {
    ddmc__prof_dmtrace_info info = {atomic_load(&tr->overflow), (uint64_t)tr->elapsed_ns / 1000,
                                    tr->len / DDMC__TRACE_REC, tr->clock_ns, tr->start_us};
    ddmc__buf_reset(&tr->head);
    rc = ddmc__prof_dmtrace_head(&tr->head, &info, ta.v, ta.n, ma.v, ma.n);
  }
  for (size_t i = 0; i < ta.n; i++) ddmc__free(&vm->mem, (void *)ta.v[i].name);
  ddmc__free(&vm->mem, ta.v);
  ddmc__free(&vm->mem, ta.listed);
  if (ma.dotted)
    for (size_t i = 0; i < ma.n; i++) ddmc__free(&vm->mem, ma.dotted[i]);
  ddmc__free(&vm->mem, ma.dotted);
  ddmc__free(&vm->mem, ma.v);
  ddmc__prof_names_free(&names);
  return rc;
}
