/* SPDX-License-Identifier: Apache-2.0 */
/* Collapsed stacks (flamegraph.pl's input): the call tree walked depth-first, one line per node
 * with self time, its path from the thread down. export.h has the rules. */
#include "export_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* The path of the node being visited: the names joined by ';'; off[d] is where depth d's name
 * starts (grown as the walk goes deeper). */
typedef struct path {
  char *s;
  size_t cap;
  size_t *off;
  size_t noff;
} path;

static int path_reserve(path *p, uint32_t depth, size_t need) {
  if (depth + 1 >= p->noff) {
    size_t n = p->noff ? p->noff * 2 : 64;
    while (n <= depth + 1) n *= 2;
    size_t *off = realloc(p->off, n * sizeof(*off));
    if (off == NULL) return DDMC_ENOMEM;
    p->off = off;
    p->noff = n;
  }
  if (need > p->cap) {
    size_t cap = p->cap ? p->cap : 4096;
    while (need > cap) cap *= 2;
    char *s = realloc(p->s, cap);
    if (s == NULL) return DDMC_ENOMEM;
    p->s = s;
    p->cap = cap;
  }
  return 0;
}

/* Puts node's name at its depth (cutting the path there) and prints the line if it has time. */
static int visit(FILE *out, const ddmc_host_trace *t, const export_node *n, path *p) {
  char name[600];
  if (n->parent == EXPORT_NONE)
    export_thread_label(t, n->method, name, sizeof name);
  else
    export_frame_name(t, n->method, name, sizeof name);
  size_t start = n->depth ? p->off[n->depth] : 0;
  size_t k = strlen(name);
  int rc = path_reserve(p, n->depth, start + k + 2);
  if (rc) return rc;
  memcpy(p->s + start, name, k);
  p->s[start + k] = 0;
  p->off[n->depth + 1] = start + k + 1;
  if (n->self_us && fprintf(out, "%s %" PRIu64 "\n", p->s, n->self_us) < 0) return DDMC_EIO;
  p->s[start + k] = ';';
  return 0;
}

/* Depth-first from each root: first child, else next sibling, else up until one has a sibling. */
static int walk(FILE *out, const ddmc_host_trace *t, const export_tree *tr, path *p) {
  for (size_t r = 0; r < tr->count; r++) {
    if (tr->n[r].parent != EXPORT_NONE) continue;
    uint32_t i = (uint32_t)r;
    for (;;) {
      int rc = visit(out, t, &tr->n[i], p);
      if (rc) return rc;
      if (tr->n[i].child != EXPORT_NONE) {
        i = tr->n[i].child;
        continue;
      }
      while (i != r && tr->n[i].next == EXPORT_NONE) i = tr->n[i].parent;
      if (i == r) break;
      i = tr->n[i].next;
    }
  }
  return 0;
}

int export_collapsed(FILE *out, const ddmc_host_trace *t, export_clock clock) {
  if (out == NULL || t == NULL) return DDMC_EINVAL;
  export_tree tr;
  int rc = export_tree_build(&tr, t, clock);
  if (rc) return rc;
  path p = {0};
  rc = walk(out, t, &tr, &p);
  free(p.s);
  free(p.off);
  export_tree_free(&tr);
  return rc ? rc : export_finish(out);
}
