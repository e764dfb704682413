/* SPDX-License-Identifier: Apache-2.0 */
/* ddmc alloc and ddmc trace (prof.h): the host side of DDM profiling, as DDMS's "Track allocations"
 * and "Start method profiling" buttons drove it, from the command line.
 *
 * alloc: REAE 1, a wait, REAL, REAE 0; the report (ddmlib's layout, host/prof.c) grouped into
 * allocation sites: the allocated class and the innermost frame.
 * trace: MPSS (or SPSS), a wait, MPSE (SPSE); the VM sends the whole .trace as one MPSE chunk
 * before its reply. The file is written as received, then parsed to report on it and, with
 * --chrome, converted to the Trace Event format (B/E events on the wall clock, per thread). */
#include "prof.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define T_REAE DDMC_HOST_FOURCC('R', 'E', 'A', 'E')
#define T_REAL DDMC_HOST_FOURCC('R', 'E', 'A', 'L')
#define T_MPSS DDMC_HOST_FOURCC('M', 'P', 'S', 'S')
#define T_MPSE DDMC_HOST_FOURCC('M', 'P', 'S', 'E')
#define T_SPSS DDMC_HOST_FOURCC('S', 'P', 'S', 'S')
#define T_SPSE DDMC_HOST_FOURCC('S', 'P', 'S', 'E')
#define T_FAIL DDMC_HOST_FOURCC('F', 'A', 'I', 'L')


static void put_be32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

static void on_sigint(int sig) {
  (void)sig;
  g_interrupted = 1;
}

/* Waits `seconds`, handling what the VM sends meanwhile; Ctrl-C (or SIGTERM) ends the wait early
 * and the command goes on to collect what there is. */
static void wait_seconds(sess *s, double seconds) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  int64_t end = mono_ms() + (int64_t)(seconds * 1000.0);
  while (!g_interrupted) {
    int64_t left = end - mono_ms();
    if (left <= 0) break;
    sess_pump(s, left > 1000 ? 1000 : (int)left, NULL);
  }
}

/* ---- alloc ------------------------------------------------------------------------------------ */

typedef struct real_reply {
  uint8_t *data;
  size_t len;
  int present;
} real_reply;

static int take_real(void *ud, const ddmc_host_packet *r) {
  real_reply *rr = ud;
  if (!r->is_ddm || r->chunk_type != T_REAL) return 0;
  rr->data = malloc(r->chunk_len ? r->chunk_len : 1);
  if (rr->data == NULL) return DDMC_ENOMEM;
  memcpy(rr->data, r->chunk, r->chunk_len);
  rr->len = r->chunk_len;
  rr->present = 1;
  return 0;
}

/* "Trace.round(Trace.java:25)", as Java prints a stack frame. */
static char *frame_text(const ddmc_host_alloc_frame *f) {
  char *cls = ddmc_host_descriptor_to_dot(f->cls);
  char buf[1024];
  if (f->line == -2)
    snprintf(buf, sizeof buf, "%s.%s(Native Method)", cls ? cls : "?", f->method);
  else if (f->file[0] == '\0')
    snprintf(buf, sizeof buf, "%s.%s(Unknown Source)", cls ? cls : "?", f->method);
  else if (f->line < 0)
    snprintf(buf, sizeof buf, "%s.%s(%s)", cls ? cls : "?", f->method, f->file);
  else
    snprintf(buf, sizeof buf, "%s.%s(%s:%d)", cls ? cls : "?", f->method, f->file, f->line);
  free(cls);
  return strdup(buf);
}

typedef struct site {
  char *cls, *where;
  uint64_t count, bytes;
} site;

static int by_key(const void *a, const void *b) {
  const site *x = a, *y = b;
  int c = strcmp(x->cls, y->cls);
  return c ? c : strcmp(x->where, y->where);
}

static int by_bytes(const void *a, const void *b) {
  const site *x = a, *y = b;
  if (x->bytes != y->bytes) return x->bytes < y->bytes ? 1 : -1;
  if (x->count != y->count) return x->count < y->count ? 1 : -1;
  return by_key(a, b);
}

/* Groups the records by (class, innermost frame); returns the number of sites in *out. */
static size_t make_sites(const ddmc_host_allocs *al, site **out) {
  site *v = calloc(al->count ? al->count : 1, sizeof(*v));
  if (v == NULL) return 0;
  for (size_t i = 0; i < al->count; i++) {
    const ddmc_host_alloc *a = &al->entries[i];
    v[i].cls = ddmc_host_descriptor_to_dot(a->cls);
    v[i].where = a->depth ? frame_text(&a->frames[0]) : strdup("(no frames)");
    v[i].count = 1;
    v[i].bytes = a->size;
  }
  qsort(v, al->count, sizeof(*v), by_key);
  size_t n = 0;
  for (size_t i = 0; i < al->count; i++) {
    if (n > 0 && by_key(&v[n - 1], &v[i]) == 0) {
      v[n - 1].count++;
      v[n - 1].bytes += v[i].bytes;
      free(v[i].cls);
      free(v[i].where);
    } else {
      v[n++] = v[i];
    }
  }
  qsort(v, n, sizeof(*v), by_bytes);
  *out = v;
  return n;
}

static int print_report(sess *s, const alloc_args *a, const real_reply *rr, const char *state) {
  ddmc_host_allocs al;
  int rc = ddmc_host_real_parse(rr->data, rr->len, &al);
  if (rc) sess_fail(s, EXIT_NOT_DDM, "malformed REAL report from the VM: %s", ddmc_host_strerror(rc));
  site *sites = NULL;
  size_t nsites = make_sites(&al, &sites);
  if (al.count > 0 && nsites == 0) sess_fail(s, EXIT_ERROR, "out of memory");
  uint64_t bytes = 0;
  for (size_t i = 0; i < al.count; i++) bytes += al.entries[i].size;
  size_t show = nsites < a->top ? nsites : a->top;
  int code = EXIT_OK;
  if (s->o->json) {
    jw w;
    sess_json_open(s, &w, "alloc");
    jw_kstr(&w, "tracking", state);
    jw_kuint(&w, "records", al.count);
    jw_kuint(&w, "bytes", bytes);
    jw_kuint(&w, "sites_total", nsites);
    jw_key(&w, "sites");
    jw_arr(&w);
    for (size_t i = 0; i < show; i++) {
      jw_obj(&w);
      jw_kstr(&w, "class", sites[i].cls);
      jw_kstr(&w, "site", sites[i].where);
      jw_kuint(&w, "count", sites[i].count);
      jw_kuint(&w, "bytes", sites[i].bytes);
      jw_close(&w);
    }
    jw_close(&w);
    code = sess_json_close(s, &w);
  } else {
    printf("%-12s %zu records, %" PRIu64 " bytes, %zu sites; tracking %s\n", "allocations", al.count, bytes, nsites,
           state);
    if (show > 0) {
      printf("%8s %12s  %-36s %s\n", "count", "bytes", "class", "allocated at");
      for (size_t i = 0; i < show; i++)
        printf("%8" PRIu64 " %12" PRIu64 "  %-36s %s\n", sites[i].count, sites[i].bytes, tx(sites[i].cls),
               tx(sites[i].where));
      if (nsites > show) printf("(%zu more sites; --top N shows more)\n", nsites - show);
    }
    if (fflush(stdout) != 0) code = EXIT_ERROR;
  }
  for (size_t i = 0; i < nsites; i++) {
    free(sites[i].cls);
    free(sites[i].where);
  }
  free(sites);
  ddmc_host_allocs_free(&al);
  return code;
}

int cmd_alloc(sess *s, const alloc_args *a) {
  uint8_t on = 1, off = 0;
  if (a->action == ALLOC_RUN || a->action == ALLOC_START)
    sess_request(s, "allocation tracking (REAE)", T_REAE, &on, 1, NULL, NULL);
  if (a->action == ALLOC_START) {
    if (s->o->json) {
      jw w;
      sess_json_open(s, &w, "alloc");
      jw_kstr(&w, "tracking", "on");
      return sess_json_close(s, &w);
    }
    printf("allocation tracking on\n");
    return fflush(stdout) == 0 ? EXIT_OK : EXIT_ERROR;
  }
  if (a->action == ALLOC_RUN) wait_seconds(s, a->duration);
  real_reply rr = {NULL, 0, 0};
  if (sess_request(s, "the allocation report (REAL)", T_REAL, NULL, 0, take_real, &rr) == DDMC_ENOMEM)
    sess_fail(s, EXIT_ERROR, "out of memory");
  if (!rr.present) sess_fail(s, EXIT_NOT_DDM, "the VM has no allocation tracker (empty REAL reply)");
  int keep = a->action == ALLOC_SHOW || (a->action == ALLOC_RUN && a->keep);
  if (!keep) sess_request(s, "allocation tracking off (REAE)", T_REAE, &off, 1, NULL, NULL);
  int code = print_report(s, a, &rr, keep ? "unchanged" : "off");
  free(rr.data);
  return code;
}

/* ---- trace ------------------------------------------------------------------------------------ */

static int write_file(const char *path, const uint8_t *p, size_t n) {
  FILE *f = fopen(path, "wb");
  if (f == NULL) return -1;
  int ok = fwrite(p, 1, n, f) == n;
  if (fclose(f) != 0) ok = 0;
  return ok ? 0 : -1;
}

typedef struct tstack {
  uint16_t thread;
  uint32_t depth, cap;
  uint32_t *m;
  uint32_t last_ts;
} tstack;

static tstack *stack_of(tstack **v, size_t *n, uint16_t thread) {
  for (size_t i = 0; i < *n; i++)
    if ((*v)[i].thread == thread) return &(*v)[i];
  tstack *nv = realloc(*v, (*n + 1) * sizeof(**v));
  if (nv == NULL) return NULL;
  *v = nv;
  memset(&nv[*n], 0, sizeof(nv[*n]));
  nv[*n].thread = thread;
  return &nv[(*n)++];
}

static void event_name(const ddmc_host_trace *t, uint32_t id, char *out, size_t cap) {
  const ddmc_host_trace_method *m = ddmc_host_trace_method_of(t, id);
  if (m == NULL)
    snprintf(out, cap, "(unknown 0x%x)", (unsigned)id);
  else if (m->cls)
    snprintf(out, cap, "%s.%s", m->cls, m->name);
  else
    snprintf(out, cap, "%s", m->name);
}

/* Trace Event format (the JSON Perfetto's UI and chrome://tracing open): thread names as
 * metadata, then per record a B (enter) or E (exit, unroll) event at its wall time in µs. Frames
 * still open at the end are closed at their thread's last time. Returns events written or -1. */
static long write_chrome(const char *path, const ddmc_host_trace *t, uint32_t pid, const char *process) {
  FILE *f = fopen(path, "w");
  if (f == NULL) return -1;
  jw w;
  jw_init(&w, f);
  w.compact = 1;
  jw_obj(&w);
  jw_kstr(&w, "displayTimeUnit", "ms");
  jw_key(&w, "traceEvents");
  jw_arr(&w);
  long events = 0;
  jw_obj(&w);
  jw_kstr(&w, "name", "process_name");
  jw_kstr(&w, "ph", "M");
  jw_kuint(&w, "pid", pid);
  jw_key(&w, "args");
  jw_obj(&w);
  jw_kstr(&w, "name", process);
  jw_close(&w);
  jw_close(&w);
  for (size_t i = 0; i < t->nthreads; i++) {
    jw_obj(&w);
    jw_kstr(&w, "name", "thread_name");
    jw_kstr(&w, "ph", "M");
    jw_kuint(&w, "pid", pid);
    jw_kuint(&w, "tid", t->threads[i].id);
    jw_key(&w, "args");
    jw_obj(&w);
    jw_kstr(&w, "name", t->threads[i].name);
    jw_close(&w);
    jw_close(&w);
  }
  int dual = t->rec_size >= 14;
  tstack *st = NULL;
  size_t nst = 0;
  char name[600];
  long rc = 0;
  for (size_t i = 0; i < t->nrecs && rc == 0; i++) {
    const ddmc_host_trace_rec *r = &t->recs[i];
    uint32_t ts = dual ? r->time2 : r->time1;
    tstack *k = stack_of(&st, &nst, r->thread);
    if (k == NULL) {
      rc = -1;
      break;
    }
    k->last_ts = ts;
    if (r->action == 0) {
      if (k->depth == k->cap) {
        uint32_t cap = k->cap ? k->cap * 2 : 32;
        uint32_t *m = realloc(k->m, cap * sizeof(*m));
        if (m == NULL) {
          rc = -1;
          break;
        }
        k->m = m;
        k->cap = cap;
      }
      k->m[k->depth++] = r->method;
      event_name(t, r->method, name, sizeof name);
      jw_obj(&w);
      jw_kstr(&w, "name", name);
      jw_kstr(&w, "cat", "java");
      jw_kstr(&w, "ph", "B");
      jw_kuint(&w, "ts", ts);
      jw_kuint(&w, "pid", pid);
      jw_kuint(&w, "tid", r->thread);
      jw_close(&w);
      events++;
    } else if (k->depth > 0) {
      k->depth--;
      jw_obj(&w);
      jw_kstr(&w, "ph", "E");
      jw_kuint(&w, "ts", ts);
      jw_kuint(&w, "pid", pid);
      jw_kuint(&w, "tid", r->thread);
      jw_close(&w);
      events++;
    }
  }
  for (size_t i = 0; i < nst; i++) {
    for (; rc == 0 && st[i].depth > 0; st[i].depth--, events++) {
      jw_obj(&w);
      jw_kstr(&w, "ph", "E");
      jw_kuint(&w, "ts", st[i].last_ts);
      jw_kuint(&w, "pid", pid);
      jw_kuint(&w, "tid", st[i].thread);
      jw_close(&w);
    }
    free(st[i].m);
  }
  free(st);
  jw_close(&w);
  jw_close(&w);
  if (jw_end(&w) != 0) rc = -1;
  if (fclose(f) != 0) rc = -1;
  return rc == 0 ? events : -1;
}

/* Sends MPSE/SPSE and collects the MPSE data chunk that precedes the reply. */
static void stop_and_collect(sess *s, uint32_t type, uint8_t **data, size_t *len) {
  uint32_t id;
  char t[5];
  int rc = ddmc_host_send_chunk(s->h, type, NULL, 0, &id);
  if (rc)
    sess_fail(s, sess_exit_code(rc), "sending %s failed: %s", ddmc_host_fourcc_str(type, t), ddmc_host_strerror(rc));
  sess_progress pr;
  sess_show_progress(s, &pr, "the trace");
  /* The transfer can be large: the per-request timeout applies to silence, not to its length. */
  int64_t idle_limit = s->o->timeout_ms < 30000 ? 30000 : s->o->timeout_ms;
  int got_reply = 0;
  int64_t reply_at = 0;
  while (*data == NULL) {
    if (got_reply && mono_ms() - reply_at > 2000) break; /* no data follows a reply: nothing ran */
    ddmc_host_packet p;
    rc = ddmc_host_recv(s->h, &p, got_reply ? 250 : (int)idle_limit);
    if (rc == DDMC_ETIMEDOUT && got_reply) continue;
    if (rc == DDMC_ETIMEDOUT)
      sess_fail(s, EXIT_TIMEOUT, "the VM sent nothing for %lld ms after %s", (long long)idle_limit,
                ddmc_host_fourcc_str(type, t));
    if (rc == DDMC_ECLOSED) sess_fail(s, EXIT_ERROR, "the VM closed the connection during the transfer");
    if (rc) sess_fail(s, sess_exit_code(rc), "receiving the trace failed: %s", ddmc_host_strerror(rc));
    if (p.is_reply && p.id == id) {
      if (p.is_ddm && p.chunk_type == T_FAIL) {
        ddmc_host_fail f;
        if (ddmc_host_fail_parse(p.chunk, p.chunk_len, &f) == 0) {
          char msg[512];
          snprintf(msg, sizeof msg, "%s", f.msg ? f.msg : "");
          ddmc_host_fail_free(&f);
          sess_fail(s, EXIT_FAIL, "the VM refused to stop the trace: %s", msg);
        }
        sess_fail(s, EXIT_FAIL, "the VM refused to stop the trace");
      }
      got_reply = 1;
      reply_at = mono_ms();
      continue;
    }
    if (!p.is_reply && p.is_ddm && p.chunk_type == T_MPSE) {
      if ((*data = malloc(p.chunk_len ? p.chunk_len : 1)) == NULL) sess_fail(s, EXIT_ERROR, "out of memory");
      memcpy(*data, p.chunk, p.chunk_len);
      *len = p.chunk_len;
      continue;
    }
    sess_dispatch(s, &p);
  }
  ddmc_host_set_progress(s->h, NULL, NULL);
  if (*data == NULL) sess_fail(s, EXIT_ERROR, "the VM sent no trace: nothing was being traced");
  /* The reply follows the data; collect it so nothing of this exchange is left queued. */
  while (!got_reply) {
    ddmc_host_packet p;
    rc = ddmc_host_recv(s->h, &p, s->o->timeout_ms);
    if (rc) break;
    if (p.is_reply && p.id == id)
      got_reply = 1;
    else
      sess_dispatch(s, &p);
  }
}

int cmd_trace(sess *s, const trace_args *a) {
  uint8_t req[12];
  put_be32(req, a->buffer_mb << 20);
  put_be32(req + 4, 0);
  put_be32(req + 8, a->sample_us);
  if (a->sample_us)
    sess_request(s, "sampling (SPSS)", T_SPSS, req, 12, NULL, NULL);
  else
    sess_request(s, "method tracing (MPSS)", T_MPSS, req, 8, NULL, NULL);
  int64_t t0 = mono_ms();
  if (!s->o->json) fprintf(stderr, "ddmc: %s for %.1f s...\n", a->sample_us ? "sampling" : "tracing", a->duration);
  wait_seconds(s, a->duration);
  double took = (double)(mono_ms() - t0) / 1000.0;
  uint8_t *data = NULL;
  size_t len = 0;
  stop_and_collect(s, a->sample_us ? T_SPSE : T_MPSE, &data, &len);
  if (write_file(a->out, data, len) != 0) {
    int e = errno;
    free(data);
    sess_fail(s, EXIT_ERROR, "cannot write %s: %s", a->out, strerror(e));
  }
  ddmc_host_trace tr;
  int rc = ddmc_host_trace_parse(data, len, &tr);
  free(data);
  if (rc)
    sess_fail(s, EXIT_NOT_DDM, "the VM's trace is malformed (%s); saved as it came in %s", ddmc_host_strerror(rc),
              a->out);
  long events = 0;
  const char *app = s->apnm_seen ? s->apnm.name : s->helo.app_name;
  if (a->chrome && (events = write_chrome(a->chrome, &tr, s->helo.pid, app ? app : "")) < 0) {
    int e = errno;
    ddmc_host_trace_free(&tr);
    sess_fail(s, EXIT_ERROR, "cannot write %s: %s", a->chrome, strerror(e));
  }
  int code = EXIT_OK;
  if (s->o->json) {
    jw w;
    sess_json_open(s, &w, "trace");
    jw_kstr(&w, "mode", a->sample_us ? "sampling" : "methods");
    if (a->sample_us) jw_kuint(&w, "interval_us", a->sample_us);
    jw_kstr(&w, "file", a->out);
    jw_kuint(&w, "bytes", len);
    jw_kuint(&w, "version", tr.version);
    jw_kstr(&w, "clock", tr.clock);
    jw_kuint(&w, "records", tr.nrecs);
    jw_kuint(&w, "threads", tr.nthreads);
    jw_kuint(&w, "methods", tr.nmethods);
    jw_kuint(&w, "elapsed_us", tr.elapsed_us);
    jw_kbool(&w, "overflow", tr.overflow);
    jw_close(&w);
    if (a->chrome) {
      jw_key(&w, "chrome");
      jw_obj(&w);
      jw_kstr(&w, "file", a->chrome);
      jw_kint(&w, "events", events);
      jw_close(&w);
    }
    sess_json_wire(s, &w);
    jw_close(&w);
    code = jw_end(&w) == 0 ? EXIT_OK : EXIT_ERROR;
  } else {
    printf("%-10s %s: %zu bytes, %zu records, %zu threads, %zu methods (%s clock, %.1f s)\n", "trace", tx(a->out), len,
           tr.nrecs, tr.nthreads, tr.nmethods, tr.clock[0] ? tr.clock : "?", took);
    if (tr.overflow)
      printf("%-10s the VM's buffer (%u MiB) filled: recording stopped there (--buffer MB for more)\n", "overflow",
             a->buffer_mb);
    if (a->chrome) printf("%-10s %s: %ld events\n", "chrome", tx(a->chrome), events);
    if (fflush(stdout) != 0) code = EXIT_ERROR;
  }
  ddmc_host_trace_free(&tr);
  return code;
}
