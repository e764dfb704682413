/* SPDX-License-Identifier: Apache-2.0 */
/* ddmc trace: DDM method profiling, as DDMS's "Start method profiling" button drove it, from the
 * command line. MPSS (or SPSS), a wait, MPSE (SPSE); the VM sends the whole .trace as one MPSE
 * chunk before its reply. The file is written as received, then parsed to report on it and, with
 * --chrome, converted to the Trace Event format (B/E events on the wall clock, per thread) for
 * Perfetto's UI and chrome://tracing. */
#include "cli.h"
#include "export.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define T_MPSS DDMC_HOST_FOURCC('M', 'P', 'S', 'S')
#define T_MPSE DDMC_HOST_FOURCC('M', 'P', 'S', 'E')
#define T_SPSS DDMC_HOST_FOURCC('S', 'P', 'S', 'S')
#define T_SPSE DDMC_HOST_FOURCC('S', 'P', 'S', 'E')
#define T_FAIL DDMC_HOST_FOURCC('F', 'A', 'I', 'L')

typedef struct trace_args {
  double duration;    /* seconds */
  uint32_t sample_us; /* 0: method tracing; else sampling at this interval */
  uint32_t buffer_mb; /* buffer the VM may fill */
  const char *out;    /* FILE.trace */
  const char *chrome; /* FILE.json or NULL */
  /* The other exports (export.h), each NULL or its file, in the clock asked for. */
  const char *speedscope, *collapsed, *pprof;
  export_clock clock;
} trace_args;

/* Writes the exports asked for; the program fails on the first that cannot be written (a clock
 * the trace lacks is a failure too: --clock asked for it). */
static void write_exports(sess *s, const trace_args *a, const ddmc_host_trace *tr, const char *app) {
  const char *paths[3] = {a->speedscope, a->collapsed, a->pprof};
  for (int k = 0; k < 3; k++) {
    if (paths[k] == NULL) continue;
    FILE *f = fopen(paths[k], k == 2 ? "wb" : "w");
    if (f == NULL) sess_fail(s, EXIT_ERROR, "cannot write %s: %s", paths[k], strerror(errno));
    int rc = k == 0 ? export_speedscope(f, tr, a->clock, app)
                    : k == 1 ? export_collapsed(f, tr, a->clock) : export_pprof_trace(f, tr, a->clock);
    if (fclose(f) != 0 && rc == 0) rc = DDMC_EIO;
    if (rc == DDMC_EINVAL)
      sess_fail(s, EXIT_ERROR, "cannot write %s: the trace has no %s clock (its clock: %s)", paths[k],
                a->clock == EXPORT_CLOCK_CPU ? "thread-cpu" : "wall", tr->clock[0] ? tr->clock : "?");
    if (rc) sess_fail(s, EXIT_ERROR, "cannot write %s: %s", paths[k], ddmc_host_strerror(rc));
  }
}

/* Where the exports went: JSON members or report lines. */
static void report_exports(jw *w, const trace_args *a) {
  const char *keys[3] = {"speedscope", "collapsed", "pprof"};
  const char *paths[3] = {a->speedscope, a->collapsed, a->pprof};
  for (int k = 0; k < 3; k++) {
    if (paths[k] == NULL) continue;
    if (w)
      jw_kstr(w, keys[k], paths[k]);
    else
      printf("%-10s %s\n", keys[k], sess_tx(paths[k]));
  }
}

static void put_be32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

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
/* The metadata events: the process's name and each thread's. */
static void chrome_names(jw *w, const ddmc_host_trace *t, uint32_t pid, const char *process) {
  jw_obj(w);
  jw_kstr(w, "name", "process_name");
  jw_kstr(w, "ph", "M");
  jw_kuint(w, "pid", pid);
  jw_key(w, "args");
  jw_obj(w);
  jw_kstr(w, "name", process);
  jw_close(w);
  jw_close(w);
  for (size_t i = 0; i < t->nthreads; i++) {
    jw_obj(w);
    jw_kstr(w, "name", "thread_name");
    jw_kstr(w, "ph", "M");
    jw_kuint(w, "pid", pid);
    jw_kuint(w, "tid", t->threads[i].id);
    jw_key(w, "args");
    jw_obj(w);
    jw_kstr(w, "name", t->threads[i].name);
    jw_close(w);
    jw_close(w);
  }
}

/* An E (end) event: the innermost open method of thread tid returned at ts. */
static void chrome_end(jw *w, uint32_t ts, uint32_t pid, uint32_t tid) {
  jw_obj(w);
  jw_kstr(w, "ph", "E");
  jw_kuint(w, "ts", ts);
  jw_kuint(w, "pid", pid);
  jw_kuint(w, "tid", tid);
  jw_close(w);
}

static int tstack_push(tstack *k, uint32_t method) {
  if (k->depth == k->cap) {
    uint32_t cap = k->cap ? k->cap * 2 : 32;
    uint32_t *m = realloc(k->m, cap * sizeof(*m));
    if (m == NULL) return -1;
    k->m = m;
    k->cap = cap;
  }
  k->m[k->depth++] = method;
  return 0;
}

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
  chrome_names(&w, t, pid, process);
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
      if (tstack_push(k, r->method) != 0) {
        rc = -1;
        break;
      }
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
      chrome_end(&w, ts, pid, r->thread);
      events++;
    }
  }
  for (size_t i = 0; i < nst; i++) {
    for (; rc == 0 && st[i].depth > 0; st[i].depth--, events++) {
      chrome_end(&w, st[i].last_ts, pid, st[i].thread);
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
    if (got_reply && sess_mono_ms() - reply_at > 2000) break; /* no data follows a reply: nothing ran */
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
      reply_at = sess_mono_ms();
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

static int trace_run(sess *s, const trace_args *a) {
  uint8_t req[12];
  put_be32(req, a->buffer_mb << 20);
  put_be32(req + 4, 0);
  put_be32(req + 8, a->sample_us);
  if (a->sample_us)
    sess_request(s, "sampling (SPSS)", T_SPSS, req, 12, NULL, NULL);
  else
    sess_request(s, "method tracing (MPSS)", T_MPSS, req, 8, NULL, NULL);
  int64_t t0 = sess_mono_ms();
  if (!s->o->json) fprintf(stderr, "ddmc: %s for %.1f s...\n", a->sample_us ? "sampling" : "tracing", a->duration);
  sess_wait_seconds(s, a->duration);
  double took = (double)(sess_mono_ms() - t0) / 1000.0;
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
  write_exports(s, a, &tr, app);
  int code = EXIT_OK;
  if (s->o->json) {
    jw w;
    sess_json_open(s, &w, "trace");
    report_exports(&w, a);
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
    printf("%-10s %s: %zu bytes, %zu records, %zu threads, %zu methods (%s clock, %.1f s)\n", "trace", sess_tx(a->out),
           len, tr.nrecs, tr.nthreads, tr.nmethods, tr.clock[0] ? tr.clock : "?", took);
    if (tr.overflow)
      printf("%-10s the VM's buffer (%u MiB) filled: recording stopped there (--buffer MB for more)\n", "overflow",
             a->buffer_mb);
    if (a->chrome) printf("%-10s %s: %ld events\n", "chrome", sess_tx(a->chrome), events);
    report_exports(NULL, a);
    if (fflush(stdout) != 0) code = EXIT_ERROR;
  }
  ddmc_host_trace_free(&tr);
  return code;
}

/* The parsed options; a usage error (exit 64) for a bad or missing one. */
static void trace_parse(int argc, char **argv, trace_args *t) {
  int have_duration = 0;
  for (int k = 0; k < argc; k++) {
    if (strcmp(argv[k], "--duration") == 0 || strcmp(argv[k], "-d") == 0) {
      t->duration = cli_parse_seconds(k + 1 < argc ? argv[++k] : NULL, "--duration");
      have_duration = 1;
    } else if (strcmp(argv[k], "--sample") == 0) {
      uint64_t v;
      if (k + 1 >= argc || cli_parse_u64(argv[++k], 60000000, &v) || v == 0)
        cli_usage_error("--sample needs an interval in microseconds, 1..60000000 (got '%s')", k < argc ? argv[k] : "");
      t->sample_us = (uint32_t)v;
    } else if (strcmp(argv[k], "-o") == 0 || strcmp(argv[k], "--output") == 0) {
      if (k + 1 >= argc) cli_usage_error("%s needs FILE.trace", argv[k]);
      t->out = argv[++k];
    } else if (strcmp(argv[k], "--chrome") == 0) {
      if (k + 1 >= argc) cli_usage_error("%s needs FILE.json", argv[k]);
      t->chrome = argv[++k];
    } else if (strcmp(argv[k], "--speedscope") == 0 || strcmp(argv[k], "--collapsed") == 0 ||
               strcmp(argv[k], "--pprof") == 0) {
      if (k + 1 >= argc) cli_usage_error("%s needs a FILE", argv[k]);
      const char **dst = argv[k][2] == 's' ? &t->speedscope : argv[k][2] == 'c' ? &t->collapsed : &t->pprof;
      *dst = argv[++k];
    } else if (strcmp(argv[k], "--clock") == 0) {
      const char *c = k + 1 < argc ? argv[++k] : "";
      if (export_clock_parse(c, &t->clock) != 0) cli_usage_error("--clock needs wall, cpu or auto (got '%s')", c);
    } else if (strcmp(argv[k], "--buffer") == 0) {
      uint64_t v;
      if (k + 1 >= argc || cli_parse_u64(argv[++k], 4095, &v) || v == 0)
        cli_usage_error("--buffer needs a size in MiB, 1..4095 (got '%s')", k < argc ? argv[k] : "");
      t->buffer_mb = (uint32_t)v;
    } else {
      cli_usage_error("trace: unexpected argument '%s'", argv[k]);
    }
  }
  if (!have_duration || t->out == NULL)
    cli_usage_error("usage: ddmc trace [--sample US] --duration S -o FILE.trace [--chrome FILE.json]%s", "");
}

static int trace_main(opts *o, int argc, char **argv) {
  trace_args t = {0, 0, 8, NULL, NULL, NULL, NULL, NULL, EXPORT_CLOCK_AUTO};
  trace_parse(argc, argv, &t);
  sess s;
  sess_open(&s, o);
  int rc = trace_run(&s, &t);
  sess_close(&s);
  return rc;
}

const cli_cmd cmd_trace = {
    .name = "trace",
    .summary =
        "  trace [--sample US] --duration S -o FILE.trace [--chrome FILE.json] [--buffer MB]\n"
        "                         method tracing (or sampling every US microseconds) for S seconds;\n"
        "                         the VM's .trace (dmtracedump, Android Studio) is saved to FILE.trace,\n"
        "                         and with --chrome as Trace Event JSON (Perfetto, chrome://tracing);\n"
        "                         --buffer: the VM's trace buffer (default 8 MiB, as ddmlib);\n"
        "                         [--speedscope F] [--collapsed F] [--pprof F] [--clock wall|cpu]:\n"
        "                         also as speedscope JSON, collapsed stacks (flamegraph.pl), pprof\n",
    .help =
        "usage: ddmc [OPTIONS] trace [--sample US] --duration S -o FILE.trace [--chrome FILE.json]\n"
        "                             [--buffer MB] [--speedscope FILE.json] [--collapsed FILE.txt]\n"
        "                             [--pprof FILE.pb] [--clock wall|cpu|auto]\n"
        "\n"
        "Method tracing (MPSS, MPSE) or sampling (SPSS, SPSE) for S seconds; the VM's .trace file is\n"
        "saved as received (dmtracedump, Android Studio).\n"
        "\n"
        "Options:\n"
        "  -d, --duration S         seconds to trace (required)\n"
        "  -o, --output FILE.trace  where to save the trace (required)\n"
        "      --sample US          sample every US microseconds instead of tracing every call\n"
        "      --chrome FILE.json   also write it as Trace Event JSON (Perfetto, chrome://tracing)\n"
        "      --buffer MB          the VM's trace buffer, 1..4095 MiB (default 8, as ddmlib)\n"
        "      --speedscope FILE.json  also write it for speedscope: an evented profile per thread\n"
        "      --collapsed FILE.txt also write it as collapsed stacks (flamegraph.pl, speedscope):\n"
        "                           the thread first, each line's number its self time in µs\n"
        "      --pprof FILE.pb      also write it as a pprof profile (profile.proto, go tool pprof)\n"
        "      --clock wall|cpu|auto  the clock of those three (default auto: wall when the trace\n"
        "                           has it, else thread CPU)\n",
    .run = trace_main,
};
