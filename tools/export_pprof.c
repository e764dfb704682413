/* SPDX-License-Identifier: Apache-2.0 */
/* pprof's profile.proto, encoded by hand (protobuf's wire format: varints and length-delimited
 * fields; the field numbers are profile.proto's, listed at the P_* names below). The message is
 * built in memory (sub-messages encoded first, then copied in with their length) and written at
 * the end. What goes in it: export.h. */
#include "export_int.h"

#include <stdlib.h>
#include <string.h>

/* profile.proto field numbers. */
enum {
  P_SAMPLE_TYPE = 1, P_SAMPLE = 2, P_LOCATION = 4, P_FUNCTION = 5, P_STRING_TABLE = 6, P_TIME_NANOS = 9,
  P_DURATION_NANOS = 10, P_PERIOD_TYPE = 11, P_PERIOD = 12, P_DEFAULT_SAMPLE_TYPE = 14,
  VT_TYPE = 1, VT_UNIT = 2,                                       /* ValueType */
  S_LOCATION_ID = 1, S_VALUE = 2, S_LABEL = 3,                    /* Sample */
  L_KEY = 1, L_STR = 2, L_NUM = 3,                                /* Label */
  LOC_ID = 1, LOC_LINE = 4,                                       /* Location */
  LINE_FUNCTION_ID = 1, LINE_LINE = 2,                            /* Line */
  F_ID = 1, F_NAME = 2, F_SYSTEM_NAME = 3, F_FILENAME = 4         /* Function */
};

typedef struct buf {
  uint8_t *p;
  size_t n, cap;
  int oom;
} buf;

static void put(buf *b, const void *src, size_t n) {
  if (b->oom) return;
  if (b->n + n > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (b->n + n > cap) cap *= 2;
    uint8_t *p = realloc(b->p, cap);
    if (p == NULL) {
      b->oom = 1;
      return;
    }
    b->p = p;
    b->cap = cap;
  }
  memcpy(b->p + b->n, src, n);
  b->n += n;
}

static void varint(buf *b, uint64_t v) {
  uint8_t tmp[10];
  size_t k = 0;
  do {
    tmp[k] = (uint8_t)(v & 0x7f);
    v >>= 7;
    if (v) tmp[k] |= 0x80;
    k++;
  } while (v);
  put(b, tmp, k);
}

/* A varint field (wire type 0); int64 fields take negative numbers as their 64-bit pattern. */
static void field_u(buf *b, unsigned field, uint64_t v) {
  varint(b, (uint64_t)field << 3);
  varint(b, v);
}

/* A length-delimited field (wire type 2): bytes, a string, a sub-message, a packed list. */
static void field_bytes(buf *b, unsigned field, const void *p, size_t n) {
  varint(b, ((uint64_t)field << 3) | 2);
  varint(b, n);
  put(b, p, n);
}

static void field_msg(buf *b, unsigned field, buf *sub) {
  if (sub->oom) b->oom = 1;
  field_bytes(b, field, sub->p, sub->n);
  sub->n = 0;
}

/* ---- the string table and id maps ------------------------------------------------------------ */

typedef struct strtab {
  buf *out;       /* the profile: each new string is appended as field 6 at once */
  char **s;       /* interned copies, by index */
  size_t n, cap;
  uint32_t *hash; /* index + 1, open addressing */
  size_t hcap;
  int oom;
} strtab;

static uint32_t fnv(const char *s) {
  uint32_t h = 2166136261u;
  for (; *s; s++) h = (h ^ (uint8_t)*s) * 16777619u;
  return h;
}

static int strtab_grow(strtab *t) {
  size_t hcap = t->hcap ? t->hcap * 2 : 1024;
  uint32_t *h = calloc(hcap, sizeof(*h));
  char **s = realloc(t->s, hcap / 2 * sizeof(*s));
  if (s) t->s = s;
  if (h == NULL || s == NULL) {
    free(h);
    return -1;
  }
  for (size_t i = 0; i < t->n; i++) {
    size_t j = fnv(t->s[i]) & (hcap - 1);
    while (h[j]) j = (j + 1) & (hcap - 1);
    h[j] = (uint32_t)i + 1;
  }
  free(t->hash);
  t->hash = h;
  t->hcap = hcap;
  t->cap = hcap / 2;
  return 0;
}

/* The index of s in the table, added (and written) when new. Index 0 is "", as pprof requires. */
static int64_t str_id(strtab *t, const char *s) {
  if (t->oom) return 0;
  if (t->n + 1 > t->cap && strtab_grow(t) != 0) {
    t->oom = 1;
    return 0;
  }
  size_t j = fnv(s) & (t->hcap - 1);
  for (; t->hash[j]; j = (j + 1) & (t->hcap - 1))
    if (strcmp(t->s[t->hash[j] - 1], s) == 0) return t->hash[j] - 1;
  char *copy = strdup(s);
  if (copy == NULL) {
    t->oom = 1;
    return 0;
  }
  t->s[t->n] = copy;
  t->hash[j] = (uint32_t)++t->n;
  field_bytes(t->out, P_STRING_TABLE, s, strlen(s));
  return (int64_t)t->n - 1;
}

static void strtab_free(strtab *t) {
  for (size_t i = 0; i < t->n; i++) free(t->s[i]);
  free(t->s);
  free(t->hash);
}

/* A map from a 64-bit key to an id 1.. (pprof ids are nonzero), for functions and locations. */
typedef struct idmap {
  uint64_t *key;
  uint32_t *id;
  size_t n, cap;
} idmap;

static uint32_t idmap_get(idmap *m, uint64_t key, int *is_new) {
  if ((m->n + 1) * 2 > m->cap) {
    size_t cap = m->cap ? m->cap * 2 : 1024;
    uint64_t *k = calloc(cap, sizeof(*k));
    uint32_t *v = calloc(cap, sizeof(*v));
    if (k == NULL || v == NULL) {
      free(k);
      free(v);
      return 0;
    }
    for (size_t i = 0; i < m->cap; i++) {
      if (!m->id[i]) continue;
      size_t j = (size_t)((m->key[i] * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
      while (v[j]) j = (j + 1) & (cap - 1);
      k[j] = m->key[i];
      v[j] = m->id[i];
    }
    free(m->key);
    free(m->id);
    m->key = k;
    m->id = v;
    m->cap = cap;
  }
  size_t j = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & (m->cap - 1);
  for (; m->id[j]; j = (j + 1) & (m->cap - 1))
    if (m->key[j] == key) {
      *is_new = 0;
      return m->id[j];
    }
  m->key[j] = key;
  m->id[j] = (uint32_t)++m->n;
  *is_new = 1;
  return m->id[j];
}

/* ---- the profile ----------------------------------------------------------------------------- */

typedef struct pp {
  buf prof;          /* the Profile message */
  buf sub, line, pk; /* scratch: a sub-message, a Line or Label inside it, a packed list */
  strtab st;
  idmap funcs, locs;
  int oom;
} pp;

static void pp_init(pp *p) {
  memset(p, 0, sizeof(*p));
  p->st.out = &p->prof;
  str_id(&p->st, "");
}

static void pp_free(pp *p) {
  free(p->prof.p);
  free(p->sub.p);
  free(p->line.p);
  free(p->pk.p);
  strtab_free(&p->st);
  free(p->funcs.key);
  free(p->funcs.id);
  free(p->locs.key);
  free(p->locs.id);
}

static void value_type(pp *p, unsigned field, const char *type, const char *unit) {
  field_u(&p->sub, VT_TYPE, (uint64_t)str_id(&p->st, type));
  field_u(&p->sub, VT_UNIT, (uint64_t)str_id(&p->st, unit));
  field_msg(&p->prof, field, &p->sub);
}

/* The location of (function name, file, line), with its function, written when first seen.
 * 0 when out of memory. */
static uint32_t location(pp *p, const char *name, const char *sysname, const char *file, int64_t line) {
  int64_t sn = str_id(&p->st, name), sf = str_id(&p->st, file ? file : "");
  int is_new;
  uint32_t fid = idmap_get(&p->funcs, ((uint64_t)sn << 32) | (uint64_t)sf, &is_new);
  if (fid == 0) return 0;
  if (is_new) {
    field_u(&p->sub, F_ID, fid);
    field_u(&p->sub, F_NAME, (uint64_t)sn);
    field_u(&p->sub, F_SYSTEM_NAME, (uint64_t)str_id(&p->st, sysname ? sysname : name));
    field_u(&p->sub, F_FILENAME, (uint64_t)sf);
    field_msg(&p->prof, P_FUNCTION, &p->sub);
  }
  uint32_t lid = idmap_get(&p->locs, ((uint64_t)fid << 32) | (uint32_t)(line < 0 ? 0 : line), &is_new);
  if (lid == 0) return 0;
  if (is_new) {
    field_u(&p->line, LINE_FUNCTION_ID, fid);
    if (line > 0) field_u(&p->line, LINE_LINE, (uint64_t)line);
    field_u(&p->sub, LOC_ID, lid);
    field_msg(&p->sub, LOC_LINE, &p->line);
    field_msg(&p->prof, P_LOCATION, &p->sub);
  }
  return lid;
}

/* A sample: locs (leaf first) and values are packed; one label, a string or a number. */
static void sample(pp *p, const uint32_t *locs, size_t nlocs, const int64_t *values, size_t nvalues) {
  for (size_t i = 0; i < nlocs; i++) varint(&p->pk, locs[i]);
  field_bytes(&p->sub, S_LOCATION_ID, p->pk.p, p->pk.n);
  if (p->pk.oom) p->oom = 1;
  p->pk.n = 0;
  for (size_t i = 0; i < nvalues; i++) varint(&p->pk, (uint64_t)values[i]);
  field_bytes(&p->sub, S_VALUE, p->pk.p, p->pk.n);
  if (p->pk.oom) p->oom = 1;
  p->pk.n = 0;
}

static void label(pp *p, const char *key, const char *str, int64_t num) {
  field_u(&p->line, L_KEY, (uint64_t)str_id(&p->st, key));
  if (str) field_u(&p->line, L_STR, (uint64_t)str_id(&p->st, str));
  else field_u(&p->line, L_NUM, (uint64_t)num);
  field_msg(&p->sub, S_LABEL, &p->line);
}

static void end_sample(pp *p) { field_msg(&p->prof, P_SAMPLE, &p->sub); }

static int pp_write(pp *p, FILE *out) {
  int oom = p->oom || p->st.oom || p->prof.oom || p->sub.oom || p->line.oom || p->pk.oom;
  if (oom) return DDMC_ENOMEM;
  if (p->prof.n && fwrite(p->prof.p, 1, p->prof.n, out) != p->prof.n) return DDMC_EIO;
  return export_finish(out);
}

/* ---- from a trace ---------------------------------------------------------------------------- */

static uint32_t method_location(pp *p, const ddmc_host_trace *t, uint32_t method) {
  char name[600], sys[1200];
  export_frame_name(t, method, name, sizeof name);
  const ddmc_host_trace_method *m = ddmc_host_trace_method_of(t, method);
  snprintf(sys, sizeof sys, "%s%s%s", name, m && m->sig ? " " : "", m && m->sig ? m->sig : "");
  return location(p, name, sys, m ? m->file : NULL, m && m->line > 0 ? m->line : 0);
}

/* One sample per node with time or calls below a root: its stack up to (not with) the thread. */
static int trace_samples(pp *p, const ddmc_host_trace *t, const export_tree *tr) {
  uint32_t *locs = NULL;
  size_t cap = 0;
  char thread[300];
  for (size_t i = 0; i < tr->count && !p->oom; i++) {
    const export_node *n = &tr->n[i];
    if (n->parent == EXPORT_NONE || (n->self_us == 0 && n->calls == 0)) continue;
    if (n->depth > cap) {
      uint32_t *l = realloc(locs, (size_t)n->depth * 2 * sizeof(*l));
      if (l == NULL) {
        p->oom = 1;
        break;
      }
      locs = l;
      cap = (size_t)n->depth * 2;
    }
    size_t k = 0;
    uint32_t j = (uint32_t)i;
    for (; tr->n[j].parent != EXPORT_NONE; j = tr->n[j].parent)
      if ((locs[k++] = method_location(p, t, tr->n[j].method)) == 0) p->oom = 1;
    int64_t v[2] = {(int64_t)n->self_us * 1000, (int64_t)n->calls};
    sample(p, locs, k, v, 2);
    export_thread_label(t, tr->n[j].method, thread, sizeof thread);
    label(p, "thread", thread, 0);
    end_sample(p);
  }
  int rc = p->oom ? DDMC_ENOMEM : 0;
  free(locs);
  return rc;
}

int export_pprof_trace(FILE *out, const ddmc_host_trace *t, export_clock clock) {
  if (out == NULL || t == NULL) return DDMC_EINVAL;
  export_tree tr;
  int rc = export_tree_build(&tr, t, clock);
  if (rc) return rc;
  const char *word = export_clock_word(t, clock);
  pp p;
  pp_init(&p);
  value_type(&p, P_SAMPLE_TYPE, word, "nanoseconds");
  value_type(&p, P_SAMPLE_TYPE, "calls", "count");
  value_type(&p, P_PERIOD_TYPE, word, "nanoseconds");
  field_u(&p.prof, P_PERIOD, 1000); /* the trace's clocks count microseconds */
  field_u(&p.prof, P_TIME_NANOS, t->start_us * 1000);
  field_u(&p.prof, P_DURATION_NANOS, t->elapsed_us * 1000);
  field_u(&p.prof, P_DEFAULT_SAMPLE_TYPE, (uint64_t)str_id(&p.st, word));
  rc = trace_samples(&p, t, &tr);
  if (rc == 0) rc = pp_write(&p, out);
  pp_free(&p);
  export_tree_free(&tr);
  return rc;
}

/* ---- from an allocation report --------------------------------------------------------------- */

static uint32_t alloc_location(pp *p, const ddmc_host_alloc_frame *f) {
  char *cls = ddmc_host_descriptor_to_dot(f->cls ? f->cls : "?");
  if (cls == NULL) return 0;
  size_t n = strlen(cls) + strlen(f->method ? f->method : "?") + 2;
  char *name = malloc(n);
  uint32_t id = 0;
  if (name) {
    snprintf(name, n, "%s.%s", cls, f->method ? f->method : "?");
    id = location(p, name, NULL, f->file, f->line > 0 ? f->line : 0);
  }
  free(name);
  free(cls);
  return id;
}

int export_pprof_allocs(FILE *out, const ddmc_host_allocs *a) {
  if (out == NULL || a == NULL) return DDMC_EINVAL;
  pp p;
  pp_init(&p);
  value_type(&p, P_SAMPLE_TYPE, "alloc_objects", "count");
  value_type(&p, P_SAMPLE_TYPE, "alloc_space", "bytes");
  field_u(&p.prof, P_DEFAULT_SAMPLE_TYPE, (uint64_t)str_id(&p.st, "alloc_space"));
  uint32_t locs[256];
  for (size_t i = 0; i < a->count && !p.oom; i++) {
    const ddmc_host_alloc *e = &a->entries[i];
    for (size_t k = 0; k < e->depth; k++)
      if ((locs[k] = alloc_location(&p, &e->frames[k])) == 0) p.oom = 1;
    int64_t v[2] = {1, e->size};
    sample(&p, locs, e->depth, v, 2);
    char *cls = ddmc_host_descriptor_to_dot(e->cls ? e->cls : "?");
    if (cls == NULL) p.oom = 1;
    label(&p, "class", cls ? cls : "", 0);
    free(cls);
    label(&p, "thread", NULL, e->thread);
    end_sample(&p);
  }
  int rc = pp_write(&p, out);
  pp_free(&p);
  return rc;
}
