/* SPDX-License-Identifier: Apache-2.0 */
/* Single stepping, decided by the library so every VM gets the same semantics (docs/protocol/jdwp.md §2.5):
 * the VM only reports each instruction a stepping thread is about to execute, with its depth.
 *
 *   OUT   ends at the first instruction after the starting frame returned;
 *   OVER  ends there too, or at the starting depth on another line (calls below are skipped);
 *   INTO  also ends at the first instruction with line information inside a call.
 * MIN steps compare instruction indexes instead of lines. A step whose location is in a class
 * the request excludes does not end there: the matcher rejects it and stepping goes on, which is
 * how "step through java.*" works.
 *
 * Line numbers come from a cache of line tables (one ops.line_table call per method), read by
 * stepping threads without a lock once built. */
#include <stdlib.h>
#include <string.h>

#include "debugger/state.h"

typedef struct line_entry {
  int64_t index;
  int32_t line;
} line_entry;

typedef struct line_table {
  ddmc_class cls;
  uint32_t method;
  uint32_t n; /* 0 with absent = 1: the method has no line information */
  int absent;
  line_entry *v; /* sorted by index */
  struct line_table *next;
} line_table;

#define DDMC__LINE_BUCKETS 256
#define DDMC__MAX_LINES 65536

struct ddmc__dbg_lines {
  pthread_mutex_t lock;
  line_table *bucket[DDMC__LINE_BUCKETS] DDMC_GUARDED_BY(lock);
};

static unsigned bucket_of(ddmc_class c, uint32_t m) {
  uint64_t x = c * 0x9e3779b97f4a7c15ull ^ m;
  return (unsigned)(x >> 56) % DDMC__LINE_BUCKETS;
}

typedef struct collect {
  const ddmc__mem *mem;
  line_entry *v;
  uint32_t n, cap;
  int err;
} collect;

static int collect_line(void *arg, int64_t index, int32_t line) {
  collect *c = arg;
  if (c->n == c->cap) {
    if (c->cap >= DDMC__MAX_LINES) return 1;
    uint32_t cap = c->cap ? c->cap * 2 : 32;
    line_entry *v = ddmc__realloc(c->mem, c->v, (size_t)cap * sizeof(*v));
    if (v == NULL) {
      c->err = 1;
      return 1;
    }
    c->v = v;
    c->cap = cap;
  }
  c->v[c->n].index = index;
  c->v[c->n].line = line;
  c->n++;
  return 0;
}

static int by_index(const void *a, const void *b) {
  const line_entry *x = a, *y = b;
  return x->index < y->index ? -1 : x->index > y->index;
}

static const line_table *table_for(ddmc__dbg *d, ddmc_class cls, uint32_t method) {
  ddmc__dbg_lines *L = d->lines;
  if (L == NULL) return NULL;
  unsigned b = bucket_of(cls, method);
  ddmc__lock(&L->lock);
  line_table *t = L->bucket[b];
  while (t != NULL && !(t->cls == cls && t->method == method)) t = t->next;
  ddmc__unlock(&L->lock);
  if (t != NULL) return t;

  collect c = {d->mem, NULL, 0, 0, 0};
  int rc =
      d->ops.line_table ? d->ops.line_table(d->vm_data, cls, method, collect_line, &c) : DDMC_JDWP_ABSENT_INFORMATION;
  if (c.err) {
    ddmc__free(d->mem, c.v);
    return NULL; /* no memory: unknown lines this time, try again next time */
  }
  t = ddmc__calloc(d->mem, 1, sizeof(*t));
  if (t == NULL) {
    ddmc__free(d->mem, c.v);
    return NULL;
  }
  t->cls = cls;
  t->method = method;
  t->absent = rc != 0;
  t->v = c.v;
  t->n = rc == 0 ? c.n : 0;
  if (t->n > 1) qsort(t->v, t->n, sizeof(*t->v), by_index);
  ddmc__lock(&L->lock);
  line_table *o = L->bucket[b];
  while (o != NULL && !(o->cls == cls && o->method == method)) o = o->next;
  if (o == NULL) {
    t->next = L->bucket[b];
    L->bucket[b] = t;
  }
  ddmc__unlock(&L->lock);
  if (o != NULL) { /* another thread built it first */
    ddmc__free(d->mem, t->v);
    ddmc__free(d->mem, t);
    t = o;
  }
  return t;
}

int32_t ddmc__dbg_line_of(ddmc__dbg *d, const ddmc_location *loc) {
  const line_table *t = table_for(d, loc->cls, loc->method);
  if (t == NULL || t->n == 0 || loc->index < t->v[0].index) return -1;
  uint32_t lo = 0, hi = t->n; /* the last entry whose index <= loc->index */
  while (hi - lo > 1) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (t->v[mid].index <= loc->index)
      lo = mid;
    else
      hi = mid;
  }
  return t->v[lo].line;
}

int ddmc__dbg_step_stops(ddmc__dbg *d, const ddmc__dbg_step *s, const ddmc_location *loc, int32_t depth) {
  if (depth < s->start_depth) return 1; /* the starting frame returned */
  if (s->depth == 2) return 0;          /* OUT waits for that */
  if (depth > s->start_depth) {         /* inside a call */
    if (s->depth == 1) return 0;        /* OVER */
    return s->size == 0 || ddmc__dbg_line_of(d, loc) >= 0;
  }
  if (loc->cls != s->start.cls || loc->method != s->start.method) return 1;
  if (s->size == 0) return loc->index != s->start.index;
  int32_t line = ddmc__dbg_line_of(d, loc);
  return line >= 0 && line != s->start_line;
}

void ddmc__dbg_step_restart(ddmc__dbg *d, ddmc__dbg_step *s, const ddmc_location *loc, int32_t depth) {
  s->start = *loc;
  s->start_depth = depth;
  s->start_line = ddmc__dbg_line_of(d, loc);
}

int ddmc__dbg_lines_init(ddmc__dbg *d) {
  ddmc__dbg_lines *L = ddmc__calloc(d->mem, 1, sizeof(*L));
  if (L == NULL) return DDMC_ENOMEM;
  if (pthread_mutex_init(&L->lock, NULL) != 0) {
    ddmc__free(d->mem, L);
    return DDMC_ENOMEM;
  }
  d->lines = L;
  return 0;
}

void ddmc__dbg_lines_reset(ddmc__dbg *d) {
  ddmc__dbg_lines *L = d->lines;
  if (L == NULL) return;
  ddmc__lock(&L->lock);
  for (unsigned b = 0; b < DDMC__LINE_BUCKETS; b++) {
    line_table *t = L->bucket[b];
    while (t != NULL) {
      line_table *n = t->next;
      ddmc__free(d->mem, t->v);
      ddmc__free(d->mem, t);
      t = n;
    }
    L->bucket[b] = NULL;
  }
  ddmc__unlock(&L->lock);
}

void ddmc__dbg_lines_destroy(ddmc__dbg *d) {
  if (d->lines == NULL) return;
  ddmc__dbg_lines_reset(d);
  pthread_mutex_destroy(&d->lines->lock);
  ddmc__free(d->mem, d->lines);
  d->lines = NULL;
}
