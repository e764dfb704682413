/* SPDX-License-Identifier: Apache-2.0 */
/* The class histogram `ddmc ui` shows after a heap dump: per class, the instances and their
 * shallow size (an instance's field bytes, an array's element bytes: what the dump says, without
 * the VM's object headers), from one walk of the hprof (ddmc_host_hprof_walk). Memory: three hash
 * tables, bounded by the dump's own records. */
#include "ui_hprof.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"

typedef struct slot {
  uint32_t key;
  int used;
  uint32_t ref;              /* strings: offset into the dump; classes: the name's string id */
  uint64_t count, bytes;     /* strings: length; histogram: instances, bytes */
} slot;

typedef struct table {
  slot *v;
  size_t cap, n;
  int oom;
} table;

static slot *find(table *t, uint32_t key, int add) {
  if (add && (t->n + 1) * 2 > t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 1024;
    slot *v = calloc(cap, sizeof *v);
    if (v == NULL) {
      t->oom = 1;
      return NULL;
    }
    for (size_t i = 0; i < t->cap; i++) {
      if (!t->v[i].used) continue;
      size_t h = (t->v[i].key * 2654435761u) & (cap - 1);
      while (v[h].used) h = (h + 1) & (cap - 1);
      v[h] = t->v[i];
    }
    free(t->v);
    t->v = v;
    t->cap = cap;
  }
  if (t->cap == 0) return NULL;
  size_t h = (key * 2654435761u) & (t->cap - 1);
  while (t->v[h].used) {
    if (t->v[h].key == key) return &t->v[h];
    h = (h + 1) & (t->cap - 1);
  }
  if (!add) return NULL;
  t->v[h].used = 1;
  t->v[h].key = key;
  t->n++;
  return &t->v[h];
}

typedef struct hist {
  const uint8_t *base;
  table strings, classes, counts;
} hist;

static uint32_t be32(const uint8_t *p) {
  return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

/* Primitive arrays are keyed by their type, in a range no 4-byte object id of ours reaches. */
#define PRIM_KEY(t) (0xFFFFFF00u | (t))

static void count(hist *h, uint32_t key, uint64_t bytes) {
  slot *s = find(&h->counts, key, 1);
  if (s == NULL) return;
  s->count++;
  s->bytes += bytes;
}

static void visit(void *ud, int sub, uint8_t tag, const uint8_t *b, size_t len) {
  static const uint8_t width[12] = {0, 0, 4, 0, 1, 2, 4, 8, 1, 2, 4, 8};
  hist *h = ud;
  if (!sub && tag == 0x01 && len >= 4) { /* STRING: id, UTF-8 */
    slot *s = find(&h->strings, be32(b), 1);
    if (s) {
      s->ref = (uint32_t)(b + 4 - h->base);
      s->count = len - 4;
    }
  } else if (!sub && tag == 0x02 && len >= 16) { /* LOAD CLASS: serial, class id, stack, name id */
    slot *s = find(&h->classes, be32(b + 4), 1);
    if (s) s->ref = be32(b + 12);
  } else if (sub && tag == 0x21 && len >= 16) { /* INSTANCE: id, stack, class id, length, fields */
    count(h, be32(b + 8), be32(b + 12));
  } else if (sub && tag == 0x22 && len >= 16) { /* OBJECT ARRAY: id, stack, length, class id */
    count(h, be32(b + 12), (uint64_t)be32(b + 8) * 4);
  } else if (sub && tag == 0x23 && len >= 13 && b[12] < 12) { /* PRIMITIVE ARRAY: id, stack, length, type */
    count(h, PRIM_KEY(b[12]), (uint64_t)be32(b + 8) * width[b[12]]);
  }
}

static int by_bytes(const void *a, const void *b) {
  const slot *x = *(const slot *const *)a, *y = *(const slot *const *)b;
  if (x->bytes != y->bytes) return x->bytes < y->bytes ? 1 : -1;
  return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

/* The class's name as the page shows it: dots for slashes; arrays of primitives by type. */
static void name_of(hist *h, const slot *s, char *out, size_t n) {
  static const char *const prim[12] = {"?", "?", "?", "?", "boolean[]", "char[]", "float[]", "double[]",
                                       "byte[]", "short[]", "int[]", "long[]"};
  if ((s->key & 0xFFFFFF00u) == 0xFFFFFF00u) {
    snprintf(out, n, "%s", prim[s->key & 0xFF]);
    return;
  }
  const slot *c = find(&h->classes, s->key, 0);
  const slot *str = c ? find(&h->strings, c->ref, 0) : NULL;
  if (str == NULL) {
    snprintf(out, n, "(class 0x%x)", (unsigned)s->key);
    return;
  }
  size_t len = str->count < n - 1 ? (size_t)str->count : n - 1;
  memcpy(out, h->base + str->ref, len);
  out[len] = '\0';
  for (char *p = out; *p; p++)
    if (*p == '/') *p = '.';
}

static void write_rows(hist *h, jw *w, size_t max_rows) {
  slot **rows = malloc((h->counts.n ? h->counts.n : 1) * sizeof *rows);
  size_t k = 0;
  for (size_t i = 0; rows && i < h->counts.cap; i++)
    if (h->counts.v[i].used) rows[k++] = &h->counts.v[i];
  if (rows) qsort(rows, k, sizeof *rows, by_bytes);
  jw_kuint(w, "classes", k);
  jw_key(w, "rows");
  jw_arr(w);
  for (size_t i = 0; i < k && i < max_rows; i++) {
    char name[512];
    name_of(h, rows[i], name, sizeof name);
    jw_obj(w);
    jw_kstr(w, "class", name);
    jw_kuint(w, "count", rows[i]->count);
    jw_kuint(w, "bytes", rows[i]->bytes);
    jw_close(w);
  }
  jw_close(w);
  free(rows);
}

int ui_hprof_histogram(const uint8_t *p, size_t n, FILE *out, size_t max_rows) {
  hist h;
  memset(&h, 0, sizeof h);
  h.base = p;
  int rc = ddmc_host_hprof_walk(p, n, visit, &h);
  if (rc == 0 && (h.strings.oom || h.classes.oom || h.counts.oom)) rc = DDMC_ENOMEM;
  if (rc == 0) {
    jw w;
    jw_init(&w, out);
    w.compact = 1;
    jw_obj(&w);
    jw_kuint(&w, "bytes", n);
    write_rows(&h, &w, max_rows);
    jw_close(&w);
    if (jw_end(&w) != 0) rc = DDMC_EIO;
  }
  free(h.strings.v);
  free(h.classes.v);
  free(h.counts.v);
  return rc;
}
