/* SPDX-License-Identifier: Apache-2.0 */
/* What the trace exports share: the clock a record is read in, frame names, and the call tree
 * (every distinct stack of every thread once, with its self time) that the collapsed and pprof
 * writers print. The rules (unmatched exits, unwinding, open frames) are in export.h. */
#include "export_int.h"

#include <stdlib.h>
#include <string.h>

int export_clock_pick(const ddmc_host_trace *t, export_clock c, int *second) {
  int dual = t->rec_size >= 14;
  int wall_only = strcmp(t->clock, "wall") == 0;
  int cpu_only = strcmp(t->clock, "thread-cpu") == 0;
  if (c == EXPORT_CLOCK_AUTO) c = (dual || !cpu_only) ? EXPORT_CLOCK_WALL : EXPORT_CLOCK_CPU;
  if (c == EXPORT_CLOCK_WALL) {
    if (!dual && cpu_only) return DDMC_EINVAL;
    *second = dual;
    return 0;
  }
  if (c != EXPORT_CLOCK_CPU || (!dual && wall_only)) return DDMC_EINVAL;
  *second = 0;
  return 0;
}

int export_clock_parse(const char *word, export_clock *out) {
  if (strcmp(word, "wall") == 0) *out = EXPORT_CLOCK_WALL;
  else if (strcmp(word, "cpu") == 0) *out = EXPORT_CLOCK_CPU;
  else if (strcmp(word, "auto") == 0) *out = EXPORT_CLOCK_AUTO;
  else return -1;
  return 0;
}

const char *export_clock_word(const ddmc_host_trace *t, export_clock c) {
  int second;
  if (export_clock_pick(t, c, &second) != 0) return NULL;
  if (c == EXPORT_CLOCK_AUTO) c = (t->rec_size >= 14 || strcmp(t->clock, "thread-cpu") != 0) ? EXPORT_CLOCK_WALL
                                                                                          : EXPORT_CLOCK_CPU;
  return c == EXPORT_CLOCK_WALL ? "wall" : "cpu";
}

static void clean_into(char *out, size_t cap, const char *s, size_t *at) {
  for (; *s && *at + 1 < cap; s++) {
    unsigned char ch = (unsigned char)*s;
    out[(*at)++] = ch == ';' ? ':' : (ch < 0x20 || ch == 0x7f) ? '?' : (char)ch;
  }
  out[*at] = 0;
}

void export_frame_name(const ddmc_host_trace *t, uint32_t method, char *out, size_t cap) {
  const ddmc_host_trace_method *m = ddmc_host_trace_method_of(t, method);
  size_t at = 0;
  out[0] = 0;
  if (m == NULL) {
    snprintf(out, cap, "(unknown 0x%x)", (unsigned)method);
    return;
  }
  if (m->cls) {
    clean_into(out, cap, m->cls, &at);
    clean_into(out, cap, ".", &at);
  }
  clean_into(out, cap, m->name ? m->name : "?", &at);
}

void export_thread_label(const ddmc_host_trace *t, uint32_t thread, char *out, size_t cap) {
  for (size_t i = 0; i < t->nthreads; i++) {
    if (t->threads[i].id == thread && t->threads[i].name && t->threads[i].name[0]) {
      size_t at = 0;
      clean_into(out, cap, t->threads[i].name, &at);
      return;
    }
  }
  snprintf(out, cap, "thread %u", (unsigned)thread);
}

/* ---- the call tree -------------------------------------------------------------------------- */

static uint32_t hash_of(uint32_t parent, uint32_t method) {
  uint64_t k = ((uint64_t)parent << 32) | method;
  k *= 0x9e3779b97f4a7c15ull;
  return (uint32_t)(k >> 32);
}

static int tree_rehash(export_tree *tr, size_t hcap) {
  uint32_t *h = calloc(hcap, sizeof(*h));
  if (h == NULL) return DDMC_ENOMEM;
  for (size_t i = 0; i < tr->count; i++) {
    const export_node *n = &tr->n[i];
    if (n->parent == EXPORT_NONE) continue;
    size_t j = hash_of(n->parent, n->method) & (hcap - 1);
    while (h[j]) j = (j + 1) & (hcap - 1);
    h[j] = (uint32_t)i + 1;
  }
  free(tr->hash);
  tr->hash = h;
  tr->hcap = hcap;
  return 0;
}

static int tree_add(export_tree *tr, uint32_t parent, uint32_t method, uint32_t *idx) {
  if (tr->count == tr->cap) {
    size_t cap = tr->cap ? tr->cap * 2 : 256;
    if (cap > EXPORT_NONE) return DDMC_ENOMEM;
    export_node *n = realloc(tr->n, cap * sizeof(*n));
    if (n == NULL) return DDMC_ENOMEM;
    tr->n = n;
    tr->cap = cap;
  }
  export_node *n = &tr->n[tr->count];
  memset(n, 0, sizeof(*n));
  n->method = method;
  n->parent = parent;
  n->child = n->next = EXPORT_NONE;
  if (parent != EXPORT_NONE) {
    n->depth = tr->n[parent].depth + 1;
    n->next = tr->n[parent].child;
    tr->n[parent].child = (uint32_t)tr->count;
  }
  *idx = (uint32_t)tr->count++;
  return 0;
}

/* The child of parent for method, made when new. */
static int tree_child(export_tree *tr, uint32_t parent, uint32_t method, uint32_t *idx) {
  if ((tr->count + 1) * 2 > tr->hcap) {
    int rc = tree_rehash(tr, tr->hcap ? tr->hcap * 2 : 1024);
    if (rc) return rc;
  }
  size_t j = hash_of(parent, method) & (tr->hcap - 1);
  for (; tr->hash[j]; j = (j + 1) & (tr->hcap - 1)) {
    const export_node *n = &tr->n[tr->hash[j] - 1];
    if (n->parent == parent && n->method == method) {
      *idx = tr->hash[j] - 1;
      return 0;
    }
  }
  int rc = tree_add(tr, parent, method, idx);
  if (rc == 0) tr->hash[j] = *idx + 1;
  return rc;
}

/* Per thread while building: where its stack stands and its last time. */
typedef struct tree_thread {
  uint32_t cur;
  uint32_t last;
  int seen;
} tree_thread;

static int root_of(export_tree *tr, tree_thread *th, uint32_t *slot, uint16_t thread) {
  if (slot[thread]) return 0;
  uint32_t idx;
  int rc = tree_add(tr, EXPORT_NONE, thread, &idx);
  if (rc) return rc;
  slot[thread] = idx + 1;
  th[thread].cur = idx;
  return 0;
}

/* The frame an exit of method closes: cur or one of its callers (bounded: an exit that matches
 * nothing near the top is dropped), never the root. EXPORT_NONE when none. */
static uint32_t exit_target(const export_tree *tr, uint32_t cur, uint32_t method) {
  for (int k = 0; k < 256 && tr->n[cur].parent != EXPORT_NONE; k++, cur = tr->n[cur].parent)
    if (tr->n[cur].method == method) return cur;
  return EXPORT_NONE;
}

static int tree_record(export_tree *tr, tree_thread *th, uint32_t *slot, const ddmc_host_trace_rec *r, int second) {
  int rc = root_of(tr, th, slot, r->thread);
  if (rc) return rc;
  tree_thread *s = &th[r->thread];
  uint32_t ts = second ? r->time2 : r->time1;
  uint32_t d = ts - s->last;
  /* A clock that went back (or wrapped twice) adds nothing rather than 4000 seconds. */
  if (s->seen && d < 0x80000000u) tr->n[s->cur].self_us += d;
  if (!s->seen || d < 0x80000000u) s->last = ts;
  s->seen = 1;
  if (r->action == 0) {
    uint32_t idx;
    if ((rc = tree_child(tr, s->cur, r->method, &idx)) != 0) return rc;
    tr->n[idx].calls++;
    s->cur = idx;
  } else {
    uint32_t at = exit_target(tr, s->cur, r->method);
    if (at != EXPORT_NONE) s->cur = tr->n[at].parent;
  }
  return 0;
}

int export_tree_build(export_tree *tr, const ddmc_host_trace *t, export_clock clock) {
  memset(tr, 0, sizeof(*tr));
  int second;
  if (export_clock_pick(t, clock, &second) != 0) return DDMC_EINVAL;
  uint32_t *slot = calloc(65536, sizeof(*slot));
  tree_thread *th = calloc(65536, sizeof(*th));
  int rc = (slot && th) ? 0 : DDMC_ENOMEM;
  /* Roots in the key section's order first, so the output follows it. */
  for (size_t i = 0; rc == 0 && i < t->nthreads; i++)
    if (t->threads[i].id <= 0xffff) rc = root_of(tr, th, slot, (uint16_t)t->threads[i].id);
  for (size_t i = 0; rc == 0 && i < t->nrecs; i++) rc = tree_record(tr, th, slot, &t->recs[i], second);
  free(slot);
  free(th);
  if (rc) export_tree_free(tr);
  return rc;
}

void export_tree_free(export_tree *tr) {
  free(tr->n);
  free(tr->hash);
  memset(tr, 0, sizeof(*tr));
}

int export_finish(FILE *out) {
  if (fflush(out) != 0 || ferror(out)) return DDMC_EIO;
  return 0;
}
