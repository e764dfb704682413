/* SPDX-License-Identifier: Apache-2.0 */
/* Monitor bookkeeping: thread table and heap-dump collector (see monitor.h). */
#include "monitor.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "heapseg.h"
#include "host_int.h"

#define T_THCR DDMC_HOST_FOURCC('T', 'H', 'C', 'R')
#define T_THDE DDMC_HOST_FOURCC('T', 'H', 'D', 'E')
#define T_THNM DDMC_HOST_FOURCC('T', 'H', 'N', 'M')
#define T_THST DDMC_HOST_FOURCC('T', 'H', 'S', 'T')
#define T_HPST DDMC_HOST_FOURCC('H', 'P', 'S', 'T')
#define T_HPSG DDMC_HOST_FOURCC('H', 'P', 'S', 'G')
#define T_HPSO DDMC_HOST_FOURCC('H', 'P', 'S', 'O')
#define T_HPEN DDMC_HOST_FOURCC('H', 'P', 'E', 'N')
#define T_NHST DDMC_HOST_FOURCC('N', 'H', 'S', 'T')
#define T_NHSG DDMC_HOST_FOURCC('N', 'H', 'S', 'G')
#define T_NHEN DDMC_HOST_FOURCC('N', 'H', 'E', 'N')

char *ddmc_host_fourcc_str(uint32_t type, char out[5]) {
  for (int i = 0; i < 4; i++) {
    unsigned c = (type >> (24 - 8 * i)) & 0xffu;
    out[i] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
  }
  out[4] = '\0';
  return out;
}

/* ---- threads ---------------------------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at p (1-4), or 0 if it is not one; *cp gets the code point. */
static size_t utf8_seq(const unsigned char *p, uint32_t *cp) {
  unsigned c = p[0];
  size_t n;
  uint32_t v, min;
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  if (c >= 0xc2 && c <= 0xdf) n = 2, v = c & 0x1f, min = 0x80;
  else if (c >= 0xe0 && c <= 0xef) n = 3, v = c & 0x0f, min = 0x800;
  else if (c >= 0xf0 && c <= 0xf4) n = 4, v = c & 0x07, min = 0x10000;
  else return 0;
  for (size_t i = 1; i < n; i++) {
    if ((p[i] & 0xc0) != 0x80) return 0;
    v = v << 6 | (p[i] & 0x3f);
  }
  if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)) return 0;
  *cp = v;
  return n;
}

size_t ddmc_host_term_escape(const char *in, char *out, size_t outlen) {
  const unsigned char *p = (const unsigned char *)(in ? in : "");
  size_t need = 0, at = 0;
  int full = 0;
  while (*p) {
    char esc[8];
    const char *piece = esc;
    size_t len;
    uint32_t cp;
    size_t n = utf8_seq(p, &cp);
    if (n == 0) {
      len = (size_t)snprintf(esc, sizeof esc, "\\x%02x", *p);
      n = 1;
    } else if (cp == '\n' || cp == '\r' || cp == '\t' || cp == '\\') {
      esc[0] = '\\';
      esc[1] = cp == '\n' ? 'n' : cp == '\r' ? 'r' : cp == '\t' ? 't' : '\\';
      len = 2;
    } else if (cp < 0x20 || cp == 0x7f) {
      len = (size_t)snprintf(esc, sizeof esc, "\\x%02x", (unsigned)cp);
    } else if (cp >= 0x80 && cp <= 0x9f) {
      len = (size_t)snprintf(esc, sizeof esc, "\\u%04x", (unsigned)cp);
    } else {
      piece = (const char *)p;
      len = n;
    }
    if (!full && outlen > 0 && at + len < outlen) {
      memcpy(out + at, piece, len);
      at += len;
    } else {
      full = 1;
    }
    need += len;
    p += n;
  }
  if (outlen > 0) out[at] = '\0';
  return need;
}

const char *ddmc_host_thread_status_name(unsigned status) {
  static const char *const names[] = {"zombie", "running",      "sleeping", "monitor", "wait",
                                      "initializing", "starting", "native",   "vmwait",  "suspended"};
  return status < sizeof names / sizeof names[0] ? names[status] : "unknown";
}

void ddmc_host_threads_init(ddmc_host_threads *t) { memset(t, 0, sizeof *t); }

void ddmc_host_threads_free(ddmc_host_threads *t) {
  if (t == NULL) return;
  for (size_t i = 0; i < t->count; i++) free(t->v[i].name);
  free(t->v);
  memset(t, 0, sizeof *t);
}

/* Index of id, or of where it would go (*found = 0). */
static size_t find_slot(const ddmc_host_threads *t, uint32_t id, int *found) {
  size_t lo = 0, hi = t->count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (t->v[mid].id < id) lo = mid + 1;
    else hi = mid;
  }
  *found = lo < t->count && t->v[lo].id == id;
  return lo;
}

const ddmc_host_thread *ddmc_host_threads_find(const ddmc_host_threads *t, uint32_t id) {
  int found;
  size_t i = find_slot(t, id, &found);
  return found ? &t->v[i] : NULL;
}

/* The entry for id, inserted (unnamed, no stats) if it was not there. NULL on ENOMEM. */
static ddmc_host_thread *get_or_add(ddmc_host_threads *t, uint32_t id) {
  int found;
  size_t i = find_slot(t, id, &found);
  if (found) return &t->v[i];
  if (t->count == t->cap) {
    size_t cap = t->cap ? t->cap * 2 : 16;
    ddmc_host_thread *v = realloc(t->v, cap * sizeof *v);
    if (v == NULL) return NULL;
    t->v = v;
    t->cap = cap;
  }
  char *empty = calloc(1, 1);
  if (empty == NULL) return NULL;
  memmove(&t->v[i + 1], &t->v[i], (t->count - i) * sizeof *t->v);
  t->count++;
  ddmc_host_thread *e = &t->v[i];
  memset(e, 0, sizeof *e);
  e->id = id;
  e->name = empty;
  e->daemon = -1;
  return e;
}

static void remove_id(ddmc_host_threads *t, uint32_t id) {
  int found;
  size_t i = find_slot(t, id, &found);
  if (!found) return;
  free(t->v[i].name);
  memmove(&t->v[i], &t->v[i + 1], (t->count - i - 1) * sizeof *t->v);
  t->count--;
}

int ddmc_host_threads_apply_thst(ddmc_host_threads *t, const ddmc_host_thst *st) {
  for (size_t i = 0; i < t->count; i++) t->v[i].in_last_thst = 0;
  for (size_t k = 0; k < st->count; k++) {
    const ddmc_host_thst_entry *x = &st->entries[k];
    ddmc_host_thread *e = get_or_add(t, x->thread_id);
    if (e == NULL) return DDMC_ENOMEM;
    e->has_stats = 1;
    e->in_last_thst = 1;
    e->status = x->status;
    e->tid = x->tid;
    e->utime = x->utime;
    e->stime = x->stime;
    e->daemon = x->daemon;
  }
  t->thst_applied++;
  return 0;
}

int ddmc_host_threads_feed(ddmc_host_threads *t, const ddmc_host_packet *pkt, ddmc_host_thread_event *ev,
                           uint32_t *id) {
  ddmc_host_thread_event dummy_ev;
  uint32_t dummy_id;
  if (ev == NULL) ev = &dummy_ev;
  if (id == NULL) id = &dummy_id;
  *ev = DDMC_HOST_TEV_NONE;
  *id = 0;
  if (t == NULL || pkt == NULL) return DDMC_EINVAL;
  if (!pkt->is_ddm) return 0;
  uint32_t type = pkt->chunk_type;
  if (type == T_THCR || type == T_THNM) {
    ddmc_host_thname n;
    int rc = ddmc_host_thname_parse(pkt->chunk, pkt->chunk_len, &n);
    if (rc) return rc;
    ddmc_host_thread *e = get_or_add(t, n.thread_id);
    if (e == NULL) {
      ddmc_host_thname_free(&n);
      return DDMC_ENOMEM;
    }
    free(e->name);
    e->name = n.name; /* ownership moves to the table */
    e->named = 1;
    *id = n.thread_id;
    if (type == T_THCR) {
      t->created++;
      *ev = DDMC_HOST_TEV_CREATED;
    } else {
      t->renamed++;
      *ev = DDMC_HOST_TEV_RENAMED;
    }
    return 0;
  }
  if (type == T_THDE) {
    uint32_t tid;
    int rc = ddmc_host_thde_parse(pkt->chunk, pkt->chunk_len, &tid);
    if (rc) return rc;
    remove_id(t, tid);
    t->ended++;
    *id = tid;
    *ev = DDMC_HOST_TEV_ENDED;
    return 0;
  }
  if (type == T_THST) {
    ddmc_host_thst st;
    int rc = ddmc_host_thst_parse(pkt->chunk, pkt->chunk_len, &st);
    if (rc) return rc;
    rc = ddmc_host_threads_apply_thst(t, &st);
    ddmc_host_thst_free(&st);
    if (rc == 0) *ev = DDMC_HOST_TEV_STATS;
    return rc;
  }
  return 0;
}

/* ---- heap dumps ------------------------------------------------------------------------------- */

const char *ddmc_host_heap_kind_name(unsigned kind) {
  static const char *const names[] = {"object", "class", "array1", "array2", "array4", "array8", "unknown", "native"};
  return kind < 8 ? names[kind] : "?";
}

void ddmc_host_heapdump_init(ddmc_host_heapdump *d, int native) {
  memset(d, 0, sizeof *d);
  d->native = native;
}

void ddmc_host_heapdump_free(ddmc_host_heapdump *d) {
  if (d == NULL) return;
  free(d->runs);
  memset(d, 0, sizeof *d);
}

static void reset_open(ddmc_host_heapdump *d) {
  d->n_runs = 0;
  d->chunks = 0;
  d->unit_size = 0;
  d->distinct = 0;
  d->first_unit = d->end_unit = d->covered_units = d->free_units = 0;
  memset(d->kind_units, 0, sizeof d->kind_units);
  memset(d->kind_runs, 0, sizeof d->kind_runs);
}

typedef struct seg_ctx {
  ddmc_host_heapdump *d;
  uint64_t base_unit; /* absolute unit of the piece's first unit */
  int oom;
} seg_ctx;

static int add_run(void *arg, uint32_t unit_offset, uint32_t units, uint8_t state) {
  seg_ctx *c = arg;
  ddmc_host_heapdump *d = c->d;
  uint64_t at = c->base_unit + unit_offset;
  /* Adjacent runs of the same state merge: an HPSG P chain or a split at a chunk boundary is one
   * stretch of memory, and the table stays small. Kind counts of runs (objects) stay exact only
   * for runs that were not merged, so count them before merging. */
  uint8_t st = state & (uint8_t)~DDMC_HOST_HEAPSEG_PARTIAL;
  if (DDMC_HOST_HEAPSEG_SOLIDITY(st) != 0) d->kind_runs[DDMC_HOST_HEAPSEG_KIND(st)]++;
  if (d->n_runs > 0) {
    ddmc_host_heap_run *last = &d->runs[d->n_runs - 1];
    if (last->state == st && last->unit + last->units == at && DDMC_HOST_HEAPSEG_SOLIDITY(st) == 0) {
      last->units += units;
      return 0;
    }
  }
  if (d->n_runs == d->cap_runs) {
    size_t cap = d->cap_runs ? d->cap_runs * 2 : 1024;
    ddmc_host_heap_run *r = realloc(d->runs, cap * sizeof *r);
    if (r == NULL) {
      c->oom = 1;
      return DDMC_ENOMEM;
    }
    d->runs = r;
    d->cap_runs = cap;
  }
  d->runs[d->n_runs++] = (ddmc_host_heap_run){at, units, st};
  return 0;
}

static int cmp_run(const void *a, const void *b) {
  const ddmc_host_heap_run *x = a, *y = b;
  return x->unit < y->unit ? -1 : x->unit > y->unit ? 1 : 0;
}

/* Sorts, checks for overlaps and computes the totals. */
static int finish(ddmc_host_heapdump *d) {
  /* Runs nearly always arrive in address order already; qsort only if they did not. */
  for (size_t i = 1; i < d->n_runs; i++) {
    if (d->runs[i].unit < d->runs[i - 1].unit) {
      qsort(d->runs, d->n_runs, sizeof *d->runs, cmp_run);
      break;
    }
  }
  for (size_t i = 0; i < d->n_runs; i++) {
    const ddmc_host_heap_run *r = &d->runs[i];
    if (i > 0 && r->unit < d->runs[i - 1].unit + d->runs[i - 1].units) return DDMC_EPROTO;
    d->covered_units += r->units;
    if (DDMC_HOST_HEAPSEG_SOLIDITY(r->state) == 0) d->free_units += r->units;
    else d->kind_units[DDMC_HOST_HEAPSEG_KIND(r->state)] += r->units;
  }
  if (d->n_runs > 0) {
    d->first_unit = d->runs[0].unit;
    const ddmc_host_heap_run *l = &d->runs[d->n_runs - 1];
    d->end_unit = l->unit + l->units;
  }
  return 0;
}

int ddmc_host_heapdump_feed(ddmc_host_heapdump *d, const ddmc_host_packet *pkt) {
  if (d == NULL || pkt == NULL) return DDMC_EINVAL;
  if (!pkt->is_ddm) return 0;
  uint32_t t_start = d->native ? T_NHST : T_HPST;
  uint32_t t_end = d->native ? T_NHEN : T_HPEN;
  uint32_t type = pkt->chunk_type;
  int is_seg = d->native ? type == T_NHSG : (type == T_HPSG || type == T_HPSO);
  if (type != t_start && type != t_end && !is_seg) return 0;

  if (type == t_start) {
    uint32_t heap;
    int rc = ddmc_host_heapid_parse(pkt->chunk, pkt->chunk_len, &heap);
    if (rc) return rc;
    reset_open(d);
    d->heap_id = heap;
    d->state = DDMC_HOST_DUMP_OPEN;
    return 0;
  }
  if (d->state != DDMC_HOST_DUMP_OPEN) return 0; /* a stray piece of a dump we did not see start */

  int rc;
  if (type == t_end) {
    uint32_t heap;
    rc = ddmc_host_heapid_parse(pkt->chunk, pkt->chunk_len, &heap);
    if (rc == 0 && heap != d->heap_id) rc = DDMC_EPROTO;
    if (rc == 0) rc = finish(d);
    if (rc) goto fail;
    d->state = DDMC_HOST_DUMP_DONE;
    d->dumps++;
    return 1;
  }

  ddmc_host_heapseg seg;
  rc = ddmc_host_heapseg_parse(pkt->chunk, pkt->chunk_len, &seg);
  if (rc == 0 && seg.heap_id != d->heap_id) rc = DDMC_EPROTO;
  if (rc == 0 && d->unit_size != 0 && seg.unit != d->unit_size) rc = DDMC_EPROTO;
  /* The piece's byte address must be a whole number of units. */
  uint64_t start = (uint64_t)seg.addr + seg.offset;
  if (rc == 0 && start % seg.unit != 0) rc = DDMC_EPROTO;
  if (rc) goto fail;
  d->unit_size = seg.unit;
  if (type == T_HPSO) d->distinct = 1;
  seg_ctx c = {d, start / seg.unit, 0};
  rc = ddmc_host_heapseg_decode(&seg, add_run, &c);
  if (rc) goto fail;
  d->chunks++;
  return 0;

fail:
  reset_open(d);
  d->state = DDMC_HOST_DUMP_IDLE;
  return rc == DDMC_ENOMEM ? rc : (rc == DDMC_EINVAL ? DDMC_EPROTO : rc);
}
