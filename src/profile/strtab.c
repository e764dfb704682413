/* SPDX-License-Identifier: Apache-2.0 */
/* See strtab.h. Load: one table per REAL report, up to 65535 strings, each looked up once per
 * distinct (class, method) the report resolves, not once per frame. */
#include <string.h>

#include "profile/strtab.h"

void ddmc__prof_strtab_init(ddmc__prof_strtab *t, const ddmc__mem *mem, uint32_t max) {
  memset(t, 0, sizeof(*t));
  t->mem = mem;
  t->max = max > DDMC__STRTAB_MAX ? DDMC__STRTAB_MAX : max;
}

void ddmc__prof_strtab_free(ddmc__prof_strtab *t) {
  for (uint32_t i = 0; i < t->n; i++) ddmc__free(t->mem, t->v[i]);
  ddmc__free(t->mem, t->v);
  ddmc__free(t->mem, t->hash);
  memset(t, 0, sizeof(*t));
}

static uint32_t fnv1a(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++) h = (h ^ (uint8_t)*s) * 16777619u;
  return h;
}

static int grow(ddmc__prof_strtab *t) {
  if (t->n == t->cap) {
    uint32_t cap = t->cap ? t->cap * 2 : 64;
    char **v = ddmc__realloc(t->mem, t->v, (size_t)cap * sizeof(*v));
    if (v == NULL) return DDMC_ENOMEM;
    t->v = v;
    t->cap = cap;
  }
  if ((t->n + 1) * 2 <= t->hcap) return 0;
  uint32_t hcap = t->hcap ? t->hcap * 2 : 128;
  uint32_t *h = ddmc__calloc(t->mem, hcap, sizeof(*h));
  if (h == NULL) return DDMC_ENOMEM;
  for (uint32_t i = 0; i < t->n; i++) {
    uint32_t k = fnv1a(t->v[i]) & (hcap - 1);
    while (h[k] != 0) k = (k + 1) & (hcap - 1);
    h[k] = i + 1;
  }
  ddmc__free(t->mem, t->hash);
  t->hash = h;
  t->hcap = hcap;
  return 0;
}

int32_t ddmc__prof_strtab_add(ddmc__prof_strtab *t, const char *s) {
  if (s == NULL) s = "";
  uint32_t h = fnv1a(s);
  if (t->hcap) {
    for (uint32_t k = h & (t->hcap - 1); t->hash[k] != 0; k = (k + 1) & (t->hcap - 1))
      if (strcmp(t->v[t->hash[k] - 1], s) == 0) return (int32_t)(t->hash[k] - 1);
  }
  if (t->n >= t->max) return DDMC_ETOOBIG;
  int rc = grow(t);
  if (rc != 0) return rc;
  char *copy = ddmc__strdup(t->mem, s);
  if (copy == NULL) return DDMC_ENOMEM;
  uint32_t k = h & (t->hcap - 1);
  while (t->hash[k] != 0) k = (k + 1) & (t->hcap - 1);
  t->v[t->n] = copy;
  t->hash[k] = ++t->n;
  return (int32_t)(t->n - 1);
}

int ddmc__prof_strtab_write(const ddmc__prof_strtab *t, ddmc_buf *out) {
  for (uint32_t i = 0; i < t->n; i++) ddmc_buf_put_str(out, t->v[i]);
  return ddmc_buf_error(out);
}
