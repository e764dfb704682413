/* SPDX-License-Identifier: Apache-2.0 */
/* Host-side parsers for what profiling sends: the REAL allocation report and the .trace file
 * (docs/protocol/profiling.md §2.3, §4), written from that reference, not from the VM side's
 * encoders. Pure: no I/O; every length is checked against the input before it is used or
 * allocated. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ddmc_host.h"
#include "host_int.h"

/* ---- REAL ------------------------------------------------------------------------------------ */

void ddmc_host_allocs_free(ddmc_host_allocs *x) {
  if (x == NULL) return;
  for (size_t i = 0; i < x->nclasses; i++) free(x->classes[i]);
  for (size_t i = 0; i < x->nmethods; i++) free(x->methods[i]);
  for (size_t i = 0; i < x->nfiles; i++) free(x->files[i]);
  free(x->classes);
  free(x->methods);
  free(x->files);
  free(x->entries);
  free(x->pool);
  memset(x, 0, sizeof(*x));
}

/* count strings [u4 n][UTF-16BE] from r into a new array. */
static int read_table(ddmc_host__rd *r, size_t count, char ***out) {
  if (count == 0) return 0;
  char **v = calloc(count, sizeof(char *));
  if (v == NULL) return DDMC_ENOMEM;
  *out = v;
  for (size_t i = 0; i < count; i++) {
    uint32_t units = ddmc_host__u32(r);
    if (r->err || units > ddmc_host__left(r) / 2) return DDMC_EPROTO;
    int rc = ddmc_host_utf16be_to_utf8(ddmc_host__take(r, (size_t)units * 2), units, &v[i]);
    if (rc) return rc;
  }
  return 0;
}

int ddmc_host_real_parse(const uint8_t *p, size_t n, ddmc_host_allocs *out) {
  if (p == NULL || out == NULL) return DDMC_EINVAL;
  memset(out, 0, sizeof(*out));
  ddmc_host__rd r = {p, p + n, 0};
  out->header_len = ddmc_host__u8(&r);
  out->entry_len = ddmc_host__u8(&r);
  out->frame_len = ddmc_host__u8(&r);
  uint16_t count = ddmc_host__u16(&r);
  uint32_t tables = ddmc_host__u32(&r);
  uint16_t nc = ddmc_host__u16(&r), nm = ddmc_host__u16(&r), nf = ddmc_host__u16(&r);
  int rc = DDMC_EPROTO;
  if (r.err || out->header_len < 15 || out->entry_len < 9 || out->frame_len < 8 || out->header_len > n || tables > n)
    goto fail;
  ddmc_host__rd t = {p + tables, p + n, 0};
  out->nclasses = nc;
  out->nmethods = nm;
  out->nfiles = nf;
  if ((rc = read_table(&t, nc, &out->classes)) || (rc = read_table(&t, nm, &out->methods)) ||
      (rc = read_table(&t, nf, &out->files)))
    goto fail;
  /* Entries run from the header's end to the tables; each is at least entry_len bytes, which
   * bounds what may be allocated before reading them. */
  rc = DDMC_EPROTO;
  if (tables < out->header_len || (size_t)count * out->entry_len > tables - out->header_len) goto fail;
  rc = DDMC_ENOMEM;
  if (count && (out->entries = calloc(count, sizeof(*out->entries))) == NULL) goto fail;
  size_t frames_max = (tables - out->header_len) / out->frame_len;
  if (frames_max && (out->pool = calloc(frames_max, sizeof(*out->pool))) == NULL) goto fail;
  rc = DDMC_EPROTO;
  ddmc_host__rd e = {p + out->header_len, p + tables, 0};
  size_t used = 0;
  for (size_t i = 0; i < count; i++) {
    ddmc_host_alloc *a = &out->entries[i];
    const uint8_t *h = ddmc_host__take(&e, out->entry_len);
    if (h == NULL) goto fail;
    a->size = ddmc_host__get32(h);
    a->thread = ddmc_host__get16(h + 4);
    uint16_t ci = ddmc_host__get16(h + 6);
    a->depth = h[8];
    if (ci >= nc) goto fail;
    a->cls = out->classes[ci];
    if (a->depth > frames_max - used) goto fail;
    a->frames = out->pool + used;
    used += a->depth;
    for (uint8_t k = 0; k < a->depth; k++) {
      const uint8_t *f = ddmc_host__take(&e, out->frame_len);
      if (f == NULL) goto fail;
      uint16_t c = ddmc_host__get16(f), m = ddmc_host__get16(f + 2), fi = ddmc_host__get16(f + 4);
      if (c >= nc || m >= nm || fi >= nf) goto fail;
      a->frames[k] =
          (ddmc_host_alloc_frame){out->classes[c], out->methods[m], out->files[fi], (int16_t)ddmc_host__get16(f + 6)};
    }
  }
  out->count = count;
  return 0;
fail:
  ddmc_host_allocs_free(out);
  return rc;
}

char *ddmc_host_descriptor_to_dot(const char *d) {
  size_t dims = 0;
  while (d[dims] == '[') dims++;
  const char *b = d + dims, *name = NULL;
  size_t len = strlen(b);
  static const char *const prims[][2] = {{"Z", "boolean"}, {"B", "byte"}, {"C", "char"},  {"S", "short"},
                                         {"I", "int"},     {"J", "long"}, {"F", "float"}, {"D", "double"}};
  if (len == 1 && dims > 0)
    for (size_t i = 0; i < sizeof prims / sizeof prims[0]; i++)
      if (b[0] == prims[i][0][0]) name = prims[i][1];
  size_t nlen = name ? strlen(name) : len;
  if (!name && len >= 2 && b[0] == 'L' && b[len - 1] == ';') {
    b++;
    nlen = len - 2;
  } else if (!name) {
    b = d; /* not a descriptor: as it is */
    nlen = strlen(d);
    dims = 0;
  }
  char *out = malloc(nlen + 2 * dims + 1);
  if (out == NULL) return NULL;
  const char *src = name ? name : b;
  for (size_t i = 0; i < nlen; i++) out[i] = src[i] == '/' ? '.' : src[i];
  for (size_t i = 0; i < dims; i++) memcpy(out + nlen + 2 * i, "[]", 2);
  out[nlen + 2 * dims] = '\0';
  return out;
}

/* ---- .trace ---------------------------------------------------------------------------------- */

void ddmc_host_trace_free(ddmc_host_trace *x) {
  if (x == NULL) return;
  for (size_t i = 0; i < x->nthreads; i++) free(x->threads[i].name);
  for (size_t i = 0; i < x->nmethods; i++) {
    free(x->methods[i].cls);
    free(x->methods[i].name);
    free(x->methods[i].sig);
    free(x->methods[i].file);
  }
  free(x->threads);
  free(x->methods);
  free(x->recs);
  memset(x, 0, sizeof(*x));
}

/* The next '\n'-terminated line of [*p, end) into a NUL-terminated copy; NULL at the end, or
 * without a newline (the key section must end with "*end\n"). */
static char *next_line(const uint8_t **p, const uint8_t *end) {
  const uint8_t *nl = memchr(*p, '\n', (size_t)(end - *p));
  if (nl == NULL) return NULL;
  size_t n = (size_t)(nl - *p);
  char *s = malloc(n + 1);
  if (s == NULL) return NULL;
  memcpy(s, *p, n);
  s[n] = '\0';
  *p = nl + 1;
  return s;
}

static int parse_u64(const char *s, int base, uint64_t *out) {
  if (*s == '\0' || *s == '-' || *s == '+' || *s == ' ') return -1;
  char *e;
  errno = 0;
  unsigned long long v = strtoull(s, &e, base);
  if (errno || *e != '\0') return -1;
  *out = v;
  return 0;
}

static char *dup_n(const char *s, size_t n) {
  char *d = malloc(n + 1);
  if (d) {
    memcpy(d, s, n);
    d[n] = '\0';
  }
  return d;
}

static int add_thread(ddmc_host_trace *t, char *line, size_t *cap) {
  char *tab = strchr(line, '\t');
  uint64_t id;
  if (tab == NULL) return DDMC_EPROTO;
  *tab = '\0';
  if (parse_u64(line, 10, &id) || id > 0xffff) return DDMC_EPROTO;
  if (t->nthreads == *cap) {
    size_t c = *cap ? *cap * 2 : 16;
    void *v = realloc(t->threads, c * sizeof(*t->threads));
    if (v == NULL) return DDMC_ENOMEM;
    t->threads = v;
    *cap = c;
  }
  char *name = dup_n(tab + 1, strlen(tab + 1));
  if (name == NULL) return DDMC_ENOMEM;
  t->threads[t->nthreads++] = (ddmc_host_trace_thread){(uint32_t)id, name};
  return 0;
}

static int add_method(ddmc_host_trace *t, char *line, size_t *cap) {
  char *f[7];
  int nf = 0;
  for (char *s = line; nf < 7;) { /* split on tabs, empty fields kept */
    f[nf++] = s;
    char *tab = strchr(s, '\t');
    if (tab == NULL) break;
    *tab = '\0';
    s = tab + 1;
  }
  uint64_t id;
  /* The id, then 1 (name), 3 (class name sig), 4 (ART: + file) or 5 (Dalvik: + file line). */
  if (nf < 2 || nf == 3 || nf > 6 || parse_u64(f[0], 0, &id) || id > UINT32_MAX || (id & 3)) return DDMC_EPROTO;
  if (t->nmethods == *cap) {
    size_t c = *cap ? *cap * 2 : 64;
    void *v = realloc(t->methods, c * sizeof(*t->methods));
    if (v == NULL) return DDMC_ENOMEM;
    t->methods = v;
    *cap = c;
  }
  ddmc_host_trace_method *m = &t->methods[t->nmethods];
  memset(m, 0, sizeof(*m));
  m->id = (uint32_t)id;
  m->line = -1;
  t->nmethods++;
  if (nf == 2) return (m->name = dup_n(f[1], strlen(f[1]))) ? 0 : DDMC_ENOMEM;
  if (!(m->cls = dup_n(f[1], strlen(f[1]))) || !(m->name = dup_n(f[2], strlen(f[2]))) ||
      !(m->sig = dup_n(f[3], strlen(f[3]))) || (nf >= 5 && !(m->file = dup_n(f[4], strlen(f[4])))))
    return DDMC_ENOMEM;
  if (nf == 6) {
    char *e;
    errno = 0;
    long v = strtol(f[5], &e, 10);
    if (errno || *e || e == f[5] || v < INT32_MIN || v > INT32_MAX) return DDMC_EPROTO;
    m->line = (int32_t)v;
  }
  return 0;
}

static int by_id(const void *a, const void *b) {
  uint32_t x = ((const ddmc_host_trace_method *)a)->id, y = ((const ddmc_host_trace_method *)b)->id;
  return x < y ? -1 : x > y;
}

enum { SEC_VERSION, SEC_THREADS, SEC_METHODS };

static int parse_keys(ddmc_host_trace *t, const uint8_t **p, const uint8_t *end) {
  size_t tcap = 0, mcap = 0;
  int sec = -1, have_version = 0;
  for (;;) {
    char *line = next_line(p, end);
    if (line == NULL) return *p >= end || memchr(*p, '\n', (size_t)(end - *p)) == NULL ? DDMC_EPROTO : DDMC_ENOMEM;
    int rc = 0;
    if (line[0] == '*') {
      if (strcmp(line, "*version") == 0 && sec == -1)
        sec = SEC_VERSION;
      else if (strcmp(line, "*threads") == 0 && have_version)
        sec = SEC_THREADS;
      else if (strcmp(line, "*methods") == 0 && have_version)
        sec = SEC_METHODS;
      else if (strcmp(line, "*end") == 0 && have_version) {
        free(line);
        return 0;
      } else
        rc = DDMC_EPROTO;
    } else if (sec == SEC_VERSION && !have_version) {
      uint64_t v;
      rc = parse_u64(line, 0, &v) || v > 0xffff ? DDMC_EPROTO : 0;
      t->version = (uint32_t)v;
      have_version = 1;
    } else if (sec == SEC_VERSION) {
      char *eq = strchr(line, '=');
      if (eq == NULL)
        rc = DDMC_EPROTO;
      else {
        *eq = '\0';
        const char *v = eq + 1;
        if (strcmp(line, "data-file-overflow") == 0)
          t->overflow = strcmp(v, "true") == 0;
        else if (strcmp(line, "clock") == 0)
          snprintf(t->clock, sizeof t->clock, "%s", v);
        else if (strcmp(line, "elapsed-time-usec") == 0)
          rc = parse_u64(v, 10, &t->elapsed_us) ? DDMC_EPROTO : 0;
        else if (strcmp(line, "num-method-calls") == 0)
          rc = parse_u64(v, 10, &t->num_method_calls) ? DDMC_EPROTO : 0;
      }
    } else if (sec == SEC_THREADS) {
      rc = add_thread(t, line, &tcap);
    } else if (sec == SEC_METHODS) {
      rc = add_method(t, line, &mcap);
    } else {
      rc = DDMC_EPROTO;
    }
    free(line);
    if (rc) return rc;
  }
}

int ddmc_host_trace_parse(const uint8_t *p, size_t n, ddmc_host_trace *out) {
  if (p == NULL || out == NULL) return DDMC_EINVAL;
  memset(out, 0, sizeof(*out));
  const uint8_t *at = p, *end = p + n;
  int rc = parse_keys(out, &at, end);
  if (rc) goto fail;
  rc = DDMC_EPROTO;
  if (out->nthreads == 0 || out->nmethods == 0 || (size_t)(end - at) < 16) goto fail;
  uint32_t magic = (uint32_t)at[0] | (uint32_t)at[1] << 8 | (uint32_t)at[2] << 16 | (uint32_t)at[3] << 24;
  out->data_version = (uint16_t)(at[4] | at[5] << 8);
  uint16_t off = (uint16_t)(at[6] | at[7] << 8);
  for (int i = 7; i >= 0; i--) out->start_us = out->start_us << 8 | at[8 + i];
  if (magic != 0x574f4c53u || off < 16 || off > (size_t)(end - at)) goto fail;
  size_t tid_len = out->data_version == 1 ? 1 : 2;
  if (out->data_version == 1)
    out->rec_size = 9;
  else if (out->data_version == 2)
    out->rec_size = 10;
  else if (out->data_version == 3 && off >= 18)
    out->rec_size = (uint16_t)(at[16] | at[17] << 8);
  else
    goto fail;
  if (out->rec_size < tid_len + 8) goto fail;
  at += off;
  size_t count = (size_t)(end - at) / out->rec_size;
  out->truncated = (size_t)(end - at) % out->rec_size != 0;
  rc = DDMC_ENOMEM;
  if (count && (out->recs = calloc(count, sizeof(*out->recs))) == NULL) goto fail;
  int dual = out->rec_size >= tid_len + 12;
  for (size_t i = 0; i < count; i++, at += out->rec_size) {
    ddmc_host_trace_rec *r = &out->recs[i];
    r->thread = tid_len == 1 ? at[0] : (uint16_t)(at[0] | at[1] << 8);
    const uint8_t *q = at + tid_len;
    uint32_t mv = (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
    r->method = mv & ~3u;
    r->action = (uint8_t)(mv & 3);
    r->time1 = (uint32_t)q[4] | (uint32_t)q[5] << 8 | (uint32_t)q[6] << 16 | (uint32_t)q[7] << 24;
    if (dual) r->time2 = (uint32_t)q[8] | (uint32_t)q[9] << 8 | (uint32_t)q[10] << 16 | (uint32_t)q[11] << 24;
  }
  out->nrecs = count;
  qsort(out->methods, out->nmethods, sizeof(*out->methods), by_id);
  return 0;
fail:
  ddmc_host_trace_free(out);
  return rc;
}

const ddmc_host_trace_method *ddmc_host_trace_method_of(const ddmc_host_trace *t, uint32_t id) {
  size_t lo = 0, hi = t->nmethods;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (t->methods[mid].id == id) return &t->methods[mid];
    if (t->methods[mid].id < id)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}
