/* SPDX-License-Identifier: Apache-2.0 */
/* ddmc alloc: the host side of DDM allocation tracking, as DDMS's "Track allocations" button drove
 * it, from the command line. REAE 1, a wait, REAL, REAE 0; the report (ddmlib's layout,
 * host/prof.c) grouped into allocation sites: the allocated class and the innermost frame. */
#include "cli.h"
#include "export.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T_REAE DDMC_HOST_FOURCC('R', 'E', 'A', 'E')
#define T_REAL DDMC_HOST_FOURCC('R', 'E', 'A', 'L')

typedef enum alloc_action { ALLOC_RUN, ALLOC_START, ALLOC_STOP, ALLOC_SHOW } alloc_action;

typedef struct alloc_args {
  alloc_action action;
  double duration; /* ALLOC_RUN: seconds to track */
  uint32_t top;    /* sites in the table */
  int keep;        /* ALLOC_RUN: leave tracking on */
  const char *pprof; /* also write the report as a pprof profile there, or NULL */
} alloc_args;

/* The report as pprof (export_pprof_allocs); the program fails when it cannot be written. */
static void write_pprof(sess *s, const char *path, const ddmc_host_allocs *al) {
  FILE *f = fopen(path, "wb");
  if (f == NULL) sess_fail(s, EXIT_ERROR, "cannot write %s: %s", path, strerror(errno));
  int rc = export_pprof_allocs(f, al);
  if (fclose(f) != 0 && rc == 0) rc = DDMC_EIO;
  if (rc) sess_fail(s, EXIT_ERROR, "cannot write %s: %s", path, ddmc_host_strerror(rc));
}

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
  if (a->pprof) write_pprof(s, a->pprof, &al);
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
    if (a->pprof) jw_kstr(&w, "pprof", a->pprof);
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
        printf("%8" PRIu64 " %12" PRIu64 "  %-36s %s\n", sites[i].count, sites[i].bytes, sess_tx(sites[i].cls),
               sess_tx(sites[i].where));
      if (nsites > show) printf("(%zu more sites; --top N shows more)\n", nsites - show);
    }
    if (a->pprof) printf("%-12s %s\n", "pprof", sess_tx(a->pprof));
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

static int alloc_run(sess *s, const alloc_args *a) {
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
  if (a->action == ALLOC_RUN) sess_wait_seconds(s, a->duration);
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

static int alloc_main(opts *o, int argc, char **argv) {
  alloc_args a = {ALLOC_RUN, 5.0, 20, 0, NULL};
  int k = 0;
  if (argc > 0 && argv[0][0] != '-') {
    if (strcmp(argv[0], "start") == 0)
      a.action = ALLOC_START;
    else if (strcmp(argv[0], "stop") == 0)
      a.action = ALLOC_STOP;
    else if (strcmp(argv[0], "show") == 0)
      a.action = ALLOC_SHOW;
    else
      cli_usage_error("alloc: unknown action '%s' (want start, stop or show)", argv[0]);
    k = 1;
  }
  for (; k < argc; k++) {
    if (strcmp(argv[k], "--duration") == 0 && a.action == ALLOC_RUN) {
      a.duration = cli_parse_seconds(k + 1 < argc ? argv[++k] : NULL, "--duration");
    } else if (strcmp(argv[k], "--top") == 0 && a.action != ALLOC_START) {
      uint64_t v;
      if (k + 1 >= argc || cli_parse_u64(argv[++k], 1000000, &v) || v == 0)
        cli_usage_error("--top needs a count (got '%s')", k < argc ? argv[k] : "");
      a.top = (uint32_t)v;
    } else if (strcmp(argv[k], "--pprof") == 0 && a.action != ALLOC_START) {
      if (k + 1 >= argc) cli_usage_error("%s needs FILE.pb", argv[k]);
      a.pprof = argv[++k];
    } else if (strcmp(argv[k], "--keep") == 0 && a.action == ALLOC_RUN) {
      a.keep = 1;
    } else {
      cli_usage_error("alloc: unexpected argument '%s'", argv[k]);
    }
  }
  sess s;
  sess_open(&s, o);
  int rc = alloc_run(&s, &a);
  sess_close(&s);
  return rc;
}

const cli_cmd cmd_alloc = {
    .name = "alloc",
    .summary =
        "  alloc [--duration S] [--top N] [--keep] [--pprof FILE.pb]\n"
        "                         track allocations for S seconds (default 5; Ctrl-C ends it), then\n"
        "                         the top allocation sites (class and innermost frame) by bytes;\n"
        "                         tracking is switched off after, unless --keep (REAE, REAL);\n"
        "                         --pprof: also the whole report as a pprof profile\n"
        "  alloc start | stop | show\n"
        "                         switch tracking on; report and switch it off; report only\n",
    .help =
        "usage: ddmc [OPTIONS] alloc [--duration S] [--top N] [--keep] [--pprof FILE.pb]\n"
        "       ddmc [OPTIONS] alloc start | stop [--top N] [--pprof FILE.pb] | show [...]\n"
        "\n"
        "Allocation tracking (REAE, REAL): on for S seconds (Ctrl-C ends the wait), then the top\n"
        "allocation sites by bytes; tracking is switched off after unless --keep. start switches it\n"
        "on; stop reports and switches it off; show reports only.\n"
        "\n"
        "Options:\n"
        "      --duration S         seconds to track (default 5)\n"
        "      --top N              sites in the table (default 20)\n"
        "      --keep               leave tracking on afterwards\n"
        "      --pprof FILE.pb      also write every allocation as a pprof profile (profile.proto:\n"
        "                           alloc_objects, alloc_space; go tool pprof, speedscope)\n",
    .run = alloc_main,
};
