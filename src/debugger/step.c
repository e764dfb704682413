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
 * Line numbers come from a cache of line tables (one bridge.line_table call per method), read by
 * stepping threads without a lock once built. A class with an SMAP has its tables converted to
 * the lines of a stratum (smap.c: the default stratum SetDefaultStratum named where the SMAP has
 * it, else the SMAP's own default), as libjdwp steps; tables of an earlier default stratum stay in
 * the cache (a stepping thread may be reading one) until the session ends, never matched again. */
#include <stdio.h>
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
  uint32_t gen; /* the stratum it was made for (ddmc__dbg_lines.gen) */
  uint32_t n;   /* 0 with absent = 1: the method has no line information */
  int absent;
  line_entry *v; /* sorted by index */
  struct line_table *next;
} line_table;

#define DDMC__LINE_BUCKETS 256
#define DDMC__MAX_LINES 65536


struct ddmc__dbg_lines {
  pthread_mutex_t lock;
  line_table *bucket[DDMC__LINE_BUCKETS] DDMC_GUARDED_BY(lock);
  /* Tables of redefined classes: no longer found, freed at the session's end (a stepping thread
   * may still read one). */
  line_table *retired DDMC_GUARDED_BY(lock);
  char stratum[DDMC__MAX_STRATUM] DDMC_GUARDED_BY(lock); /* "": Java */
  uint32_t gen DDMC_GUARDED_BY(lock);                    /* moves on when stratum changes */
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

/* Converts c's Java lines to the lines of the stratum a step moves by in a class with an SMAP
 * (smap.c: the one asked for where the SMAP has it, else the SMAP's default); a class without
 * one keeps its Java lines, as under libjdwp. */
static void convert(ddmc__dbg *d, ddmc_class cls, const char *want, collect *c) {
  if (c->n == 0 || d->bridge.source_debug_extension == NULL) return;
  ddmc_buf sde;
  char stratum[DDMC__MAX_STRATUM];
  ddmc__buf_init(&sde, d->mem, DDMC__MAX_SMAP);
  if (d->bridge.source_debug_extension(d->vm_data, cls, &sde) == 0 && !ddmc_buf_error(&sde) &&
      ddmc__dbg_smap_pick((const char *)sde.p, ddmc_buf_len(&sde), want, stratum, sizeof(stratum))) {
    uint32_t out = 0;
    for (uint32_t i = 0; i < c->n; i++) {
      int32_t s = ddmc__dbg_smap_line((const char *)sde.p, ddmc_buf_len(&sde), stratum, c->v[i].line);
      if (s < 0) continue; /* no line of the stratum there: part of the line before */
      c->v[out++] = (line_entry){c->v[i].index, s};
    }
    c->n = out;
  }
  ddmc__buf_free(&sde);
}

static const line_table *table_for(ddmc__dbg *d, ddmc_class cls, uint32_t method) {
  ddmc__dbg_lines *L = d->lines;
  if (L == NULL) return NULL;
  unsigned b = bucket_of(cls, method);
  char stratum[DDMC__MAX_STRATUM];
  ddmc__lock(&L->lock);
  uint32_t gen = L->gen;
  memcpy(stratum, L->stratum, sizeof(stratum));
  line_table *t = L->bucket[b];
  while (t != NULL && !(t->cls == cls && t->method == method && t->gen == gen)) t = t->next;
  ddmc__unlock(&L->lock);
  if (t != NULL) return t;

  collect c = {d->mem, NULL, 0, 0, 0};
  int rc =
      d->bridge.line_table ? d->bridge.line_table(d->vm_data, cls, method, collect_line, &c) : DDMC_JDWP_ABSENT_INFORMATION;
  if (c.err) {
    ddmc__free(d->mem, c.v);
    return NULL; /* no memory: unknown lines this time, try again next time */
  }
  t = ddmc__calloc(d->mem, 1, sizeof(*t));
  if (t == NULL) {
    ddmc__free(d->mem, c.v);
    return NULL;
  }
  if (rc == 0 && c.n > 1) qsort(c.v, c.n, sizeof(*c.v), by_index);
  if (rc == 0) convert(d, cls, stratum, &c);
  t->cls = cls;
  t->method = method;
  t->gen = gen;
  t->absent = rc != 0;
  t->v = c.v;
  t->n = rc == 0 ? c.n : 0;
  ddmc__lock(&L->lock);
  line_table *o = L->bucket[b];
  while (o != NULL && !(o->cls == cls && o->method == method && o->gen == gen)) o = o->next;
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

void ddmc__dbg_lines_set_stratum(ddmc__dbg *d, const char *stratum) {
  ddmc__dbg_lines *L = d->lines;
  if (L == NULL) return;
  if (stratum[0] == '\0') return; /* libjdwp keeps the one it had */
  ddmc__lock(&L->lock);
  if (strcmp(L->stratum, stratum) != 0) {
    snprintf(L->stratum, sizeof(L->stratum), "%s", stratum);
    L->gen++;
  }
  ddmc__unlock(&L->lock);
}

void ddmc__dbg_lines_forget(ddmc__dbg *d, ddmc_class cls) {
  ddmc__dbg_lines *L = d->lines;
  if (L == NULL) return;
  ddmc__lock(&L->lock);
  for (unsigned b = 0; b < DDMC__LINE_BUCKETS; b++) {
    for (line_table **p = &L->bucket[b]; *p != NULL;) {
      line_table *t = *p;
      if (t->cls != cls) {
        p = &t->next;
        continue;
      }
      *p = t->next;
      t->next = L->retired;
      L->retired = t;
    }
  }
  ddmc__unlock(&L->lock);
}

static void free_chain(ddmc__dbg *d, line_table *t) {
  while (t != NULL) {
    line_table *n = t->next;
    ddmc__free(d->mem, t->v);
    ddmc__free(d->mem, t);
    t = n;
  }
}

void ddmc__dbg_lines_reset(ddmc__dbg *d) {
  ddmc__dbg_lines *L = d->lines;
  if (L == NULL) return;
  ddmc__lock(&L->lock);
  L->stratum[0] = '\0';
  L->gen++;
  free_chain(d, L->retired);
  L->retired = NULL;
  for (unsigned b = 0; b < DDMC__LINE_BUCKETS; b++) {
    free_chain(d, L->bucket[b]);
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
