/* SPDX-License-Identifier: Apache-2.0 */
/* ddmc threads [--watch SECS]: the thread table (THEN, THST), once or redrawn every second, with
 * the thread events seen meanwhile in the --json document. */
#include "cli.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define T_THEN DDMC_HOST_FOURCC('T', 'H', 'E', 'N')
#define T_THST DDMC_HOST_FOURCC('T', 'H', 'S', 'T')

static const char *tev_name(ddmc_host_thread_event ev) {
  switch (ev) {
    case DDMC_HOST_TEV_CREATED: return "created";
    case DDMC_HOST_TEV_ENDED: return "ended";
    case DDMC_HOST_TEV_RENAMED: return "renamed";
    case DDMC_HOST_TEV_STATS: return "stats";
    default: return "none";
  }
}

/* Thread events seen during --watch, kept for the JSON document. */
typedef struct tevent {
  int64_t t_ms;
  ddmc_host_thread_event ev;
  uint32_t id;
  char *name;
} tevent;
static tevent *g_events;
static size_t g_n_events, g_cap_events;
static int64_t g_watch_t0;

static void on_thread_event(void *ud, ddmc_host_thread_event ev, uint32_t id, const char *name) {
  (void)ud;
  if (ev == DDMC_HOST_TEV_STATS) return;
  if (g_n_events == g_cap_events) {
    size_t cap = g_cap_events ? g_cap_events * 2 : 64;
    tevent *v = realloc(g_events, cap * sizeof *v);
    if (v == NULL) return; /* events are a report extra; losing them under OOM is fine */
    g_events = v;
    g_cap_events = cap;
  }
  g_events[g_n_events++] = (tevent){sess_mono_ms() - g_watch_t0, ev, id, name ? strdup(name) : NULL};
}

static int parse_thst_reply(void *ud, const ddmc_host_packet *r) {
  sess *s = ud;
  if (!r->is_ddm || r->chunk_type != T_THST) return -1;
  int rc = ddmc_host_threads_feed(&s->threads, r, NULL, NULL);
  if (rc) sess_fail(s, EXIT_NOT_DDM, "malformed THST reply: %s", ddmc_host_strerror(rc));
  return 0;
}

static void query_thst(sess *s) {
  if (sess_request(s, "the thread status query", T_THST, NULL, 0, parse_thst_reply, s) != 0)
    sess_fail(s, EXIT_NOT_DDM, "the VM has no THST answer (empty reply): no thread support");
}

static void print_thread_table(sess *s, FILE *f) {
  fprintf(f, "%6s %8s  %-12s %-6s %7s %7s  %s\n", "ID", "TID", "STATUS", "DAEMON", "UTIME", "STIME", "NAME");
  for (size_t i = 0; i < s->threads.count; i++) {
    const ddmc_host_thread *t = &s->threads.v[i];
    char tid[16], ut[16], st[16];
    if (t->has_stats) {
      snprintf(tid, sizeof tid, "%u", (unsigned)t->tid);
      snprintf(ut, sizeof ut, "%u", (unsigned)t->utime);
      snprintf(st, sizeof st, "%u", (unsigned)t->stime);
    } else {
      snprintf(tid, sizeof tid, "-");
      snprintf(ut, sizeof ut, "-");
      snprintf(st, sizeof st, "-");
    }
    fprintf(f, "%6u %8s  %-12s %-6s %7s %7s  %s\n", (unsigned)t->id, tid,
            t->has_stats ? ddmc_host_thread_status_name(t->status) : "?",
            t->daemon < 0 ? "?"
            : t->daemon   ? "yes"
                          : "no",
            ut, st, t->named ? sess_tx(t->name) : "(unnamed)");
  }
}

static void json_threads(const ddmc_host_thread *v, size_t count, jw *w) {
  jw_arr(w);
  for (size_t i = 0; i < count; i++) {
    const ddmc_host_thread *t = &v[i];
    jw_obj(w);
    jw_kuint(w, "id", t->id);
    jw_kstr(w, "name", t->named ? t->name : NULL);
    if (t->has_stats) {
      jw_kuint(w, "tid", t->tid);
      jw_kstr(w, "status", ddmc_host_thread_status_name(t->status));
      jw_kuint(w, "status_code", t->status);
      jw_key(w, "daemon");
      if (t->daemon < 0)
        jw_null(w);
      else
        jw_bool(w, t->daemon);
      jw_kuint(w, "utime", t->utime);
      jw_kuint(w, "stime", t->stime);
    } else {
      jw_key(w, "tid");
      jw_null(w);
      jw_key(w, "status");
      jw_null(w);
    }
    jw_close(w);
  }
  jw_close(w);
}

/* --watch --json: every picture of the table, emitted at the end. */
typedef struct snapshot {
  int64_t t_ms;
  ddmc_host_thread *v;
  size_t count;
} snapshot;
static snapshot *g_snaps;
static size_t g_n_snaps, g_cap_snaps;

static int snapshot_add(const ddmc_host_threads *t, int64_t t_ms) {
  if (g_n_snaps == g_cap_snaps) {
    size_t cap = g_cap_snaps ? 2 * g_cap_snaps : 16;
    snapshot *v = realloc(g_snaps, cap * sizeof *v);
    if (v == NULL) return 0;
    g_snaps = v;
    g_cap_snaps = cap;
  }
  snapshot *sn = &g_snaps[g_n_snaps];
  sn->t_ms = t_ms;
  sn->count = t->count;
  sn->v = calloc(t->count ? t->count : 1, sizeof *sn->v);
  if (sn->v == NULL) return 0;
  for (size_t i = 0; i < t->count; i++) {
    sn->v[i] = t->v[i];
    sn->v[i].name = strdup(t->v[i].name);
    if (sn->v[i].name == NULL) return 0;
  }
  g_n_snaps++;
  return 1;
}

static void snapshots_free(void) {
  for (size_t i = 0; i < g_n_snaps; i++) {
    for (size_t k = 0; k < g_snaps[i].count; k++) free(g_snaps[i].v[k].name);
    free(g_snaps[i].v);
  }
  free(g_snaps);
  g_snaps = NULL;
  g_n_snaps = g_cap_snaps = 0;
}

/* One --watch picture: the header line and the table, the screen cleared first on a terminal. */
static void draw_watch(sess *s, int tty, int64_t end) {
  if (tty) fputs("\033[H\033[2J", stdout);
  time_t now = time(NULL);
  char hhmmss[16];
  strftime(hhmmss, sizeof hhmmss, "%H:%M:%S", localtime(&now));
  const char *app = s->apnm_seen ? s->apnm.name : s->helo.app_name;
  printf("ddmc threads  %s  pid %u  %s  %zu threads  %s  (every 1 s, %.0f s left, Ctrl-C quits)\n\n", s->o->target,
         (unsigned)s->helo.pid, app[0] ? sess_tx(app) : "(no name)", s->threads.count, hhmmss,
         (double)(end - sess_mono_ms()) / 1000.0 < 0 ? 0.0 : (double)(end - sess_mono_ms()) / 1000.0);
  print_thread_table(s, stdout);
  if (!tty) putchar('\n');
  fflush(stdout);
}

static void free_events(void) {
  for (size_t i = 0; i < g_n_events; i++) free(g_events[i].name);
  free(g_events);
}

/* --watch --json: every picture, the last table and the thread events, in one document. */
static int watch_json(sess *s, unsigned samples) {
  jw w;
  cli_json_begin(s, &w);
  jw_key(&w, "samples");
  jw_arr(&w);
  for (size_t i = 0; i < g_n_snaps; i++) {
    jw_obj(&w);
    jw_kint(&w, "t_ms", g_snaps[i].t_ms);
    jw_key(&w, "threads");
    json_threads(g_snaps[i].v, g_snaps[i].count, &w);
    jw_close(&w);
  }
  jw_close(&w);
  snapshots_free();
  jw_kuint(&w, "sample_count", samples);
  jw_kbool(&w, "interrupted", sess_interrupted != 0);
  jw_key(&w, "threads");
  json_threads(s->threads.v, s->threads.count, &w);
  jw_key(&w, "events");
  jw_arr(&w);
  for (size_t i = 0; i < g_n_events; i++) {
    jw_obj(&w);
    jw_kint(&w, "t_ms", g_events[i].t_ms);
    jw_kstr(&w, "event", tev_name(g_events[i].ev));
    jw_kuint(&w, "id", g_events[i].id);
    jw_kstr(&w, "name", g_events[i].name);
    jw_close(&w);
  }
  jw_close(&w);
  free_events();
  return cli_json_finish(s, &w);
}

/* --watch: like top, a picture every second for `watch` seconds. SIGINT ends the loop cleanly
 * (exit 0). */
static int watch_threads(sess *s, double watch) {
  sess_catch_interrupts();
  s->on_thread_event = on_thread_event;
  s->ud = s;
  int tty = isatty(STDOUT_FILENO);
  int64_t end = sess_mono_ms() + (int64_t)(watch * 1000.0);
  unsigned samples = 0;
  for (;;) {
    samples++;
    if (s->o->json) {
      /* Kept until the end: the document's "vm" part must describe the VM as it is then. */
      if (!snapshot_add(&s->threads, sess_mono_ms() - g_watch_t0)) sess_fail(s, EXIT_ERROR, "out of memory");
    } else {
      draw_watch(s, tty, end);
    }
    if (sess_interrupted || sess_mono_ms() >= end) break;
    int64_t left = end - sess_mono_ms();
    sess_pump(s, left < 1000 ? (int)left : 1000, NULL);
    /* After the last interval too: the final picture shows the final state. */
    if (!sess_interrupted) query_thst(s);
  }
  if (s->o->json) return watch_json(s, samples);
  free_events();
  if (sess_interrupted) fprintf(stderr, "ddmc: interrupted\n");
  return cli_finish_text(s);
}

static int threads_run(sess *s, double watch) {
  s->track_threads = 1;
  g_watch_t0 = sess_mono_ms();
  /* THEN 1: the VM sends a THCR for every live thread before its (empty) reply; they are queued
   * while we wait and dispatched right after. */
  uint8_t on = 1;
  sess_request(s, "thread notifications (THEN)", T_THEN, &on, 1, NULL, NULL);
  query_thst(s);
  if (watch >= 0) return watch_threads(s, watch);
  if (s->o->json) {
    jw w;
    cli_json_begin(s, &w);
    jw_key(&w, "threads");
    json_threads(s->threads.v, s->threads.count, &w);
    return cli_json_finish(s, &w);
  }
  print_thread_table(s, stdout);
  return cli_finish_text(s);
}

static int threads_main(opts *o, int argc, char **argv) {
  double watch = -1;
  for (int k = 0; k < argc; k++) {
    if (strcmp(argv[k], "--watch") == 0 || strcmp(argv[k], "-w") == 0) {
      if (k + 1 >= argc) cli_usage_error("%s needs SECONDS", argv[k]);
      char *end;
      errno = 0;
      watch = strtod(argv[++k], &end);
      if (errno || *end || end == argv[k] || !(watch >= 0) || watch > 7 * 24 * 3600.0)
        cli_usage_error("--watch: '%s' is not a number of seconds", argv[k]);
    } else {
      cli_usage_error("threads: unknown argument '%s'", argv[k]);
    }
  }
  sess s;
  sess_open(&s, o);
  int rc = threads_run(&s, watch);
  sess_close(&s);
  return rc;
}

const cli_cmd cmd_threads = {
    .name = "threads",
    .summary =
        "  threads [--watch SECS] thread table (id, tid, status, daemon, utime, stime, name);\n"
        "                         --watch redraws it every second for SECS seconds or until Ctrl-C\n",
    .help =
        "usage: ddmc [OPTIONS] threads [--watch SECS]\n"
        "\n"
        "The thread table (THEN, THST): id, Linux tid, status, daemon, utime, stime, name.\n"
        "\n"
        "Options:\n"
        "  -w, --watch SECS         redraw the table every second for SECS seconds (Ctrl-C ends it);\n"
        "                           with --json, every picture and every thread event in one document\n",
    .run = threads_main,
};
