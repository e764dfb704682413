/* SPDX-License-Identifier: Apache-2.0 */
/* speedscope's JSON file format: the methods as shared frames, then per thread an "evented"
 * profile, its open ("O") and close ("C") events replayed from the records with the stack rules
 * of export.h, so every close names the frame on top (speedscope's importer refuses others). */
#include "export_int.h"

#include <stdlib.h>
#include <string.h>

#include "json.h"

/* Frame index of a method id: the key section's position, or after those, the position of the id
 * among the unknown ids the records use (sorted). */
typedef struct frames {
  const ddmc_host_trace *t;
  uint32_t *unknown;
  size_t nunknown;
} frames;

static int cmp_u32(const void *a, const void *b) {
  uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
  return x < y ? -1 : x > y;
}

static int frames_init(frames *f, const ddmc_host_trace *t) {
  f->t = t;
  f->nunknown = 0;
  f->unknown = malloc((t->nrecs ? t->nrecs : 1) * sizeof(*f->unknown));
  if (f->unknown == NULL) return DDMC_ENOMEM;
  for (size_t i = 0; i < t->nrecs; i++)
    if (ddmc_host_trace_method_of(t, t->recs[i].method) == NULL) f->unknown[f->nunknown++] = t->recs[i].method;
  qsort(f->unknown, f->nunknown, sizeof(*f->unknown), cmp_u32);
  size_t k = 0;
  for (size_t i = 0; i < f->nunknown; i++)
    if (k == 0 || f->unknown[k - 1] != f->unknown[i]) f->unknown[k++] = f->unknown[i];
  f->nunknown = k;
  return 0;
}

static uint32_t frame_of(const frames *f, uint32_t method) {
  const ddmc_host_trace_method *m = ddmc_host_trace_method_of(f->t, method);
  if (m) return (uint32_t)(m - f->t->methods);
  const uint32_t *u = bsearch(&method, f->unknown, f->nunknown, sizeof(*u), cmp_u32);
  return (uint32_t)(f->t->nmethods + (size_t)(u - f->unknown));
}

static void write_frames(jw *w, const frames *f) {
  char name[600];
  jw_key(w, "shared");
  jw_obj(w);
  jw_key(w, "frames");
  jw_arr(w);
  for (size_t i = 0; i < f->t->nmethods + f->nunknown; i++) {
    const ddmc_host_trace_method *m = i < f->t->nmethods ? &f->t->methods[i] : NULL;
    export_frame_name(f->t, m ? m->id : f->unknown[i - f->t->nmethods], name, sizeof name);
    jw_obj(w);
    jw_kstr(w, "name", name);
    if (m && m->file) jw_kstr(w, "file", m->file);
    if (m && m->line >= 0) jw_kint(w, "line", m->line);
    jw_close(w);
  }
  jw_close(w);
  jw_close(w);
}

/* One thread's replay: its open frames (frame index and method id) and its clock. */
typedef struct replay {
  uint32_t *frame, *method;
  size_t depth, cap;
  uint64_t at;   /* the clock, made monotonic: start + the sum of forward steps */
  uint32_t last;
  int seen;
} replay;

static void event(jw *w, const char *type, uint32_t frame, uint64_t at) {
  jw_obj(w);
  jw_kstr(w, "type", type);
  jw_kuint(w, "frame", frame);
  jw_kuint(w, "at", at);
  jw_close(w);
}

static int replay_rec(jw *w, const frames *f, replay *r, const ddmc_host_trace_rec *rec, int second) {
  uint32_t ts = second ? rec->time2 : rec->time1;
  uint32_t d = ts - r->last;
  if (!r->seen) r->at = ts;
  else if (d < 0x80000000u) r->at += d;
  if (!r->seen || d < 0x80000000u) r->last = ts;
  r->seen = 1;
  if (rec->action == 0) {
    if (r->depth == r->cap) {
      size_t cap = r->cap ? r->cap * 2 : 64;
      uint32_t *fr = realloc(r->frame, cap * sizeof(*fr));
      if (fr) r->frame = fr;
      uint32_t *me = fr ? realloc(r->method, cap * sizeof(*me)) : NULL;
      if (me == NULL) return DDMC_ENOMEM;
      r->method = me;
      r->cap = cap;
    }
    r->frame[r->depth] = frame_of(f, rec->method);
    r->method[r->depth++] = rec->method;
    event(w, "O", r->frame[r->depth - 1], r->at);
    return 0;
  }
  /* The frame this exit closes, near the top (export.h); frames above it close with it. */
  size_t k = r->depth;
  while (k > 0 && r->depth - k < 256 && r->method[k - 1] != rec->method) k--;
  if (k == 0 || r->method[k - 1] != rec->method) return 0;
  while (r->depth >= k) event(w, "C", r->frame[--r->depth], r->at);
  return 0;
}

/* One thread's profile from its records (idx: their positions, in order). */
static int write_profile(jw *w, const frames *f, uint32_t thread, const uint32_t *idx, size_t n, int second) {
  char name[300];
  export_thread_label(f->t, thread, name, sizeof name);
  replay r;
  memset(&r, 0, sizeof r);
  jw_obj(w);
  jw_kstr(w, "type", "evented");
  jw_kstr(w, "name", name);
  jw_kstr(w, "unit", "microseconds");
  /* The start is the thread's first time: known only after the first record, so look. */
  const ddmc_host_trace_rec *first = &f->t->recs[idx[0]];
  jw_kuint(w, "startValue", second ? first->time2 : first->time1);
  jw_key(w, "events");
  jw_arr(w);
  int rc = 0;
  for (size_t i = 0; i < n && rc == 0; i++) rc = replay_rec(w, f, &r, &f->t->recs[idx[i]], second);
  while (rc == 0 && r.depth > 0) event(w, "C", r.frame[--r.depth], r.at);
  jw_close(w);
  jw_kuint(w, "endValue", r.at);
  jw_close(w);
  free(r.frame);
  free(r.method);
  return rc;
}

/* The records' positions grouped by thread, each group in record order (a counting sort):
 * group of thread k is idx[start[k] .. start[k + 1]). */
static int group_by_thread(const ddmc_host_trace *t, uint32_t **idx, uint32_t **start) {
  *idx = malloc((t->nrecs ? t->nrecs : 1) * sizeof(**idx));
  *start = calloc(65537, sizeof(**start));
  if (*idx == NULL || *start == NULL) return DDMC_ENOMEM;
  for (size_t i = 0; i < t->nrecs; i++) (*start)[t->recs[i].thread + 1]++;
  for (size_t k = 1; k <= 65536; k++) (*start)[k] += (*start)[k - 1];
  uint32_t *fill = malloc(65536 * sizeof(*fill));
  if (fill == NULL) return DDMC_ENOMEM;
  memcpy(fill, *start, 65536 * sizeof(*fill));
  for (size_t i = 0; i < t->nrecs; i++) (*idx)[fill[t->recs[i].thread]++] = (uint32_t)i;
  free(fill);
  return 0;
}

/* Threads in the key section's order first, then those only the records name. */
static int write_profiles(jw *w, const frames *f, const uint32_t *idx, const uint32_t *start, int second) {
  const ddmc_host_trace *t = f->t;
  uint8_t *done = calloc(65536, 1);
  if (done == NULL) return DDMC_ENOMEM;
  int rc = 0;
  for (size_t i = 0; rc == 0 && i <= t->nthreads + 65536; i++) {
    uint32_t th = i < t->nthreads ? t->threads[i].id : (uint32_t)(i - t->nthreads);
    if (th > 0xffff || th >= 65536 || done[th] || start[th] == start[th + 1]) continue;
    done[th] = 1;
    rc = write_profile(w, f, th, idx + start[th], start[th + 1] - start[th], second);
  }
  free(done);
  return rc;
}

int export_speedscope(FILE *out, const ddmc_host_trace *t, export_clock clock, const char *name) {
  int second;
  if (out == NULL || t == NULL || export_clock_pick(t, clock, &second) != 0) return DDMC_EINVAL;
  frames f;
  uint32_t *idx = NULL, *start = NULL;
  int rc = frames_init(&f, t);
  if (rc == 0) rc = group_by_thread(t, &idx, &start);
  if (rc == 0) {
    jw w;
    jw_init(&w, out);
    w.compact = 1;
    jw_obj(&w);
    jw_kstr(&w, "$schema", "https://www.speedscope.app/file-format-schema.json");
    jw_kstr(&w, "name", name ? name : "ddmc trace");
    jw_kstr(&w, "exporter", "ddmc");
    jw_kint(&w, "activeProfileIndex", 0);
    write_frames(&w, &f);
    jw_key(&w, "profiles");
    jw_arr(&w);
    rc = write_profiles(&w, &f, idx, start, second);
    jw_close(&w);
    jw_close(&w);
    if (jw_end(&w) != 0 && rc == 0) rc = DDMC_EIO;
  }
  free(f.unknown);
  free(idx);
  free(start);
  return rc ? rc : export_finish(out);
}
