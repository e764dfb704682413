/* SPDX-License-Identifier: Apache-2.0 */
/* See names.h. Load: a REAL report resolves at most 65535 x 16 frames, a trace at most its method
 * table; both hit the two hash tables here once per frame and the bridge once per distinct class
 * or method. */
#include <string.h>

#include "profile/names.h"

#define MAX_LINES (1u << 20) /* a line table longer than this is cut (its tail is never asked for) */

void ddmc__prof_names_init(ddmc__prof_names *n, const ddmc__mem *mem, const ddmc_vm_bridge *bridge, void *data) {
  memset(n, 0, sizeof(*n));
  n->mem = mem;
  n->bridge = bridge;
  n->data = data;
}

void ddmc__prof_names_free(ddmc__prof_names *n) {
  for (uint32_t i = 0; i < n->ncls; i++) {
    ddmc__prof_nclass *c = n->cls[i];
    ddmc__free(n->mem, c->sig);
    ddmc__free(n->mem, c->file);
    ddmc__free(n->mem, c);
  }
  for (uint32_t i = 0; i < n->nmeth; i++) {
    ddmc__prof_nmethod *m = n->meth[i];
    ddmc__free(n->mem, m->name);
    ddmc__free(n->mem, m->sig);
    ddmc__free(n->mem, m->lidx);
    ddmc__free(n->mem, m->lline);
    ddmc__free(n->mem, m);
  }
  ddmc__free(n->mem, n->cls);
  ddmc__free(n->mem, n->cls_hash);
  ddmc__free(n->mem, n->meth);
  ddmc__free(n->mem, n->meth_hash);
  memset(n, 0, sizeof(*n));
}

static uint32_t mix(uint64_t a, uint64_t b) {
  uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull;
  return (uint32_t)(h ^ (h >> 29));
}

/* Appends p to a vector and rehashes when over half full; key(i) gives entry i's hash. */
static int vec_push(const ddmc__mem *mem, void ***v, uint32_t *n, uint32_t *cap, uint32_t **hash, uint32_t *hcap,
                    void *p, uint32_t h, uint32_t (*key)(void *e)) {
  if (*n == *cap) {
    uint32_t c = *cap ? *cap * 2 : 64;
    void **nv = ddmc__realloc(mem, *v, (size_t)c * sizeof(void *));
    if (nv == NULL) return DDMC_ENOMEM;
    *v = nv;
    *cap = c;
  }
  if ((*n + 1) * 2 > *hcap) {
    uint32_t hc = *hcap ? *hcap * 2 : 128;
    uint32_t *nh = ddmc__calloc(mem, hc, sizeof(uint32_t));
    if (nh == NULL) return DDMC_ENOMEM;
    for (uint32_t i = 0; i < *n; i++) {
      uint32_t k = key((*v)[i]) & (hc - 1);
      while (nh[k]) k = (k + 1) & (hc - 1);
      nh[k] = i + 1;
    }
    ddmc__free(mem, *hash);
    *hash = nh;
    *hcap = hc;
  }
  uint32_t k = h & (*hcap - 1);
  while ((*hash)[k]) k = (k + 1) & (*hcap - 1);
  (*v)[*n] = p;
  (*hash)[k] = ++*n;
  return 0;
}

static uint32_t cls_key(void *e) { return mix(((ddmc__prof_nclass *)e)->c, 0); }
static uint32_t meth_key(void *e) { return mix(((ddmc__prof_nmethod *)e)->c, ((ddmc__prof_nmethod *)e)->m); }

static char *dup_or(const ddmc__mem *mem, const char *s, const char *dflt) { return ddmc__strdup(mem, s ? s : dflt); }

ddmc__prof_nclass *ddmc__prof_names_class(ddmc__prof_names *n, ddmc_class c) {
  uint32_t h = mix(c, 0);
  if (n->cls_hcap)
    for (uint32_t k = h & (n->cls_hcap - 1); n->cls_hash[k]; k = (k + 1) & (n->cls_hcap - 1))
      if (((ddmc__prof_nclass *)n->cls[n->cls_hash[k] - 1])->c == c) return n->cls[n->cls_hash[k] - 1];
  ddmc_class_info ci;
  memset(&ci, 0, sizeof(ci));
  int ok = n->bridge && n->bridge->class_info && c != 0 && n->bridge->class_info(n->data, c, &ci) == 0;
  ddmc__prof_nclass *e = ddmc__calloc(n->mem, 1, sizeof(*e));
  if (e == NULL) return NULL;
  e->c = c;
  e->idx[0] = e->idx[1] = -1;
  e->sig = dup_or(n->mem, ok ? ci.signature : NULL, "?");
  e->file = dup_or(n->mem, ok ? ci.source_file : NULL, "");
  if (e->sig == NULL || e->file == NULL ||
      vec_push(n->mem, &n->cls, &n->ncls, &n->cls_cap, &n->cls_hash, &n->cls_hcap, e, h, cls_key) != 0) {
    ddmc__free(n->mem, e->sig);
    ddmc__free(n->mem, e->file);
    ddmc__free(n->mem, e);
    return NULL;
  }
  return e;
}

typedef struct lines_arg {
  ddmc__prof_nmethod *m;
  const ddmc__mem *mem;
  uint32_t cap;
  int err;
} lines_arg;

static int on_line(void *arg, int64_t index, int32_t line) {
  lines_arg *a = arg;
  ddmc__prof_nmethod *m = a->m;
  if (m->nlines == MAX_LINES) return 1;
  if (m->nlines == a->cap) {
    uint32_t c = a->cap ? a->cap * 2 : 16;
    int64_t *li = ddmc__realloc(a->mem, m->lidx, (size_t)c * sizeof(*li));
    if (li == NULL) return a->err = DDMC_ENOMEM, 1;
    m->lidx = li;
    int32_t *ll = ddmc__realloc(a->mem, m->lline, (size_t)c * sizeof(*ll));
    if (ll == NULL) return a->err = DDMC_ENOMEM, 1;
    m->lline = ll;
    a->cap = c;
  }
  m->lidx[m->nlines] = index;
  m->lline[m->nlines++] = line;
  return 0;
}

ddmc__prof_nmethod *ddmc__prof_names_method(ddmc__prof_names *n, ddmc_class c, uint32_t mi) {
  uint32_t h = mix(c, mi);
  if (n->meth_hcap)
    for (uint32_t k = h & (n->meth_hcap - 1); n->meth_hash[k]; k = (k + 1) & (n->meth_hcap - 1)) {
      ddmc__prof_nmethod *e = n->meth[n->meth_hash[k] - 1];
      if (e->c == c && e->m == mi) return e;
    }
  ddmc__prof_nclass *cls = ddmc__prof_names_class(n, c);
  if (cls == NULL) return NULL;
  ddmc_method_info info;
  memset(&info, 0, sizeof(info));
  int ok = n->bridge && n->bridge->method_info && c != 0 && n->bridge->method_info(n->data, c, mi, &info) == 0;
  ddmc__prof_nmethod *e = ddmc__calloc(n->mem, 1, sizeof(*e));
  if (e == NULL) return NULL;
  e->c = c;
  e->m = mi;
  e->cls = cls;
  e->idx = -1;
  e->native = ok && (info.modifiers & DDMC_ACC_NATIVE) != 0;
  e->name = dup_or(n->mem, ok ? info.name : NULL, "?");
  e->sig = dup_or(n->mem, ok ? info.signature : NULL, "?");
  lines_arg la = {e, n->mem, 0, 0};
  if (ok && !e->native && n->bridge->line_table && n->bridge->line_table(n->data, c, mi, on_line, &la) != 0) e->nlines = 0;
  if (e->name == NULL || e->sig == NULL || la.err != 0 ||
      vec_push(n->mem, &n->meth, &n->nmeth, &n->meth_cap, &n->meth_hash, &n->meth_hcap, e, h, meth_key) != 0) {
    ddmc__free(n->mem, e->name);
    ddmc__free(n->mem, e->sig);
    ddmc__free(n->mem, e->lidx);
    ddmc__free(n->mem, e->lline);
    ddmc__free(n->mem, e);
    return NULL;
  }
  return e;
}

int32_t ddmc__prof_names_line(const ddmc__prof_nmethod *m, int64_t index) {
  if (m->native || index < 0) return -2;
  if (m->nlines == 0 || index < m->lidx[0]) return -1;
  uint32_t lo = 0, hi = m->nlines; /* the last entry with lidx <= index */
  while (hi - lo > 1) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (m->lidx[mid] <= index)
      lo = mid;
    else
      hi = mid;
  }
  return m->lline[lo];
}

static const char *prim_name(char c) {
  switch (c) {
    case 'Z': return "boolean";
    case 'B': return "byte";
    case 'C': return "char";
    case 'S': return "short";
    case 'I': return "int";
    case 'J': return "long";
    case 'F': return "float";
    case 'D': return "double";
    case 'V': return "void";
    default: return NULL;
  }
}

char *ddmc__prof_descriptor_to_dotted(const char *desc, char *out, size_t cap) {
  if (cap == 0) return out;
  size_t dims = 0;
  while (desc[dims] == '[') dims++;
  const char *base = desc + dims, *p = NULL;
  size_t blen = 0;
  size_t n = strlen(base);
  if (base[0] == 'L' && n >= 2 && base[n - 1] == ';') {
    p = base + 1;
    blen = n - 2;
  } else if (n == 1 && prim_name(base[0]) != NULL && dims > 0) {
    p = prim_name(base[0]);
    blen = strlen(p);
  } else {
    p = desc; /* not a descriptor: as it is */
    blen = strlen(desc);
    dims = 0;
  }
  size_t o = 0;
  for (size_t i = 0; i < blen && o + 1 < cap; i++) out[o++] = p[i] == '/' ? '.' : p[i];
  for (size_t i = 0; i < dims && o + 2 < cap; i++) {
    out[o++] = '[';
    out[o++] = ']';
  }
  out[o] = '\0';
  return out;
}
