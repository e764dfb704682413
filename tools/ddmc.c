/* SPDX-License-Identifier: Apache-2.0 */
/* ddmc: a command-line DDM monitor (the host side ddmlib/DDMS plays), for VMs that link libddmc
 * or any other DDM-speaking VM reachable over a JDWP socket.
 *
 *   ddmc [-c HOST:PORT | -p PID [-s SERIAL] [-P ADB_PORT]] [--json] [-v] [-t MS] [--no-zlib] COMMAND [ARGS]
 *   ddmc [-s SERIAL] [-P ADB_PORT] [--json] [-v] [-t MS] ps [--watch [--duration S]]   (ps.c)
 *
 * Every command but ps connects, does the JDWP handshake, HELO + FEAT and (unless --no-zlib) the ZLIB
 * opt-in, runs, and disconnects. See usage() for the commands and exit codes; docs/ddmc.1 is the
 * manual, kept in step with usage() and k_cmd_help by tests/man/check_manpage.py. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ddmc_host.h"
#include "heapimg.h"
#include "heapseg.h"
#include "json.h"
#include "monitor.h"
#include "hprof.h"
#include "prof.h"
#include "ps.h"
#include "session.h"


#ifndef DDMC_TOOL_VERSION
#define DDMC_TOOL_VERSION "0"
#endif

#define T_THEN DDMC_HOST_FOURCC('T', 'H', 'E', 'N')
#define T_THST DDMC_HOST_FOURCC('T', 'H', 'S', 'T')
#define T_STKL DDMC_HOST_FOURCC('S', 'T', 'K', 'L')
#define T_HPIF DDMC_HOST_FOURCC('H', 'P', 'I', 'F')
#define T_HPGC DDMC_HOST_FOURCC('H', 'P', 'G', 'C')
#define T_HPSG DDMC_HOST_FOURCC('H', 'P', 'S', 'G')
#define T_EXIT DDMC_HOST_FOURCC('E', 'X', 'I', 'T')
#define T_FAIL DDMC_HOST_FOURCC('F', 'A', 'I', 'L')

static void usage(FILE *f) {
  fputs("usage: ddmc [-c HOST:PORT | -p PID [-s SERIAL] [-P ADB_PORT]] [--json] [-v] [-t MS] [--no-zlib]\n"
        "            COMMAND [ARGS]\n"
        "\n"
        "A DDM monitor: connects to a VM's JDWP socket (-agentlib:jdwp=transport=dt_socket,...)\n"
        "and speaks the host side of DDM, as Android's DDMS/ddmlib does.\n"
        "\n"
        "Commands:\n"
        "  info                   pid, VM, app name, user id, ABI, flags, features, debugger status\n"
        "  threads [--watch SECS] thread table (id, tid, status, daemon, utime, stime, name);\n"
        "                         --watch redraws it every second for SECS seconds or until Ctrl-C\n"
        "  stack ID               stack trace of thread ID (STKL)\n"
        "  heap                   heap summary (HPIF): max, footprint, allocated bytes and objects\n"
        "  heap --bitmap FILE.png collect (HPGC), take the segment dump (HPSG) and draw it: one\n"
        "                         pixel per 8-byte unit, coloured by kind, legend below; prints\n"
        "                         per-kind unit counts. [--max-width PX] [--dump-timeout MS]\n"
        "  gc                     ask the VM to collect (HPGC); reports the heap before and after\n"
        "  exit STATUS            ask the VM to exit with STATUS (EXIT)\n"
        "  send TYPE [HEX...] [--listen SECS]\n"
        "                         send one raw chunk (e.g. send HELO 00000001), print the reply;\n"
        "                         --listen: then the VM's unsolicited chunks for SECS seconds\n"
        "  alloc [--duration S] [--top N] [--keep]\n"
        "                         track allocations for S seconds (default 5; Ctrl-C ends it), then\n"
        "                         the top allocation sites (class and innermost frame) by bytes;\n"
        "                         tracking is switched off after, unless --keep (REAE, REAL)\n"
        "  alloc start | stop | show\n"
        "                         switch tracking on; report and switch it off; report only\n"
        "  trace [--sample US] --duration S -o FILE.trace [--chrome FILE.json] [--buffer MB]\n"
        "                         method tracing (or sampling every US microseconds) for S seconds;\n"
        "                         the VM's .trace (dmtracedump, Android Studio) is saved to FILE.trace,\n"
        "                         and with --chrome as Trace Event JSON (Perfetto, chrome://tracing);\n"
        "                         --buffer: the VM's trace buffer (default 8 MiB, as ddmlib)\n"
        "  hprof -o FILE.hprof [--standard] | hprof --device-file PATH\n"
        "                         heap dump (HPDS): Android's hprof 1.0.3 (Android Studio, Perfetto),\n"
        "                         or with --standard the 1.0.2 hprof-conv writes (MAT, VisualVM);\n"
        "                         --device-file: the VM writes PATH itself (HPDU)\n"
        "  ps [--watch [--duration S]]\n"
        "                         every JDWP process on the device (adb track-jdwp; -s, -P), each\n"
        "                         asked for HELO: pid, user id, ABI, debugger, VM, app name; --watch\n"
        "                         redraws as processes come and go (for S seconds or until Ctrl-C)\n"
        "\n"
        "Options (before the command):\n"
        "  -c, --connect HOST:PORT  VM to talk to (default 127.0.0.1:8700; [v6addr]:port works)\n"
        "  -p, --pid PID            instead: process PID through the local adb server (jdwp:PID)\n"
        "  -s, --serial SERIAL      the adb device (default: the only one)\n"
        "  -P, --adb-port PORT      the adb server's port (default $ANDROID_ADB_SERVER_PORT or 5037)\n"
        "      --json               one JSON document on stdout, for scripts (errors too)\n"
        "  -v, --verbose            wire statistics on stderr at the end; -vv logs every chunk\n"
        "  -t, --timeout MS         connect, handshake and per-request timeout (default 5000);\n"
        "                           for ps, the bound of the whole listing\n"
        "      --no-zlib            do not opt in to ZLIB-compressed chunks (default: opt in)\n"
        "  -h, --help               this text (ddmc COMMAND --help: that command's own)\n"
        "      --version            the version\n"
        "\n"
        "Exit codes:\n"
        "  0   success\n"
        "  1   other error: the connection was lost, a file could not be written, ...\n"
        "  2   cannot connect (connection refused, unknown host, connect timeout)\n"
        "  3   the peer is not a JDWP VM (bad or no handshake answer), not DDM-aware, or broke\n"
        "      the protocol (ps: the adb server sent a malformed track-jdwp list)\n"
        "  4   the VM completed the handshake but did not answer (HELO or a request) in time\n"
        "  5   the VM answered with a FAIL chunk (e.g. stack of a thread that does not exist)\n"
        "  64  usage error\n"
        "\n"
        "Environment: ANDROID_ADB_SERVER_PORT, the adb server's port when -P is not given.\n"
        "See ddmc(1).\n",
        f);
}

/* `ddmc COMMAND --help`. Each text's "Options:" lines are what docs/ddmc.1 lists for the command
 * (tests/man compares them). */
typedef struct cmd_help {
  const char *name;
  const char *text;
} cmd_help;

static const cmd_help k_cmd_help[] = {
    {"info",
     "usage: ddmc [OPTIONS] info\n"
     "\n"
     "The VM's identity (HELO, FEAT, APNM, WAIT): pid, VM, app name, user id, package, ABI, JVM flags,\n"
     "native debuggability, features, and whether it waits for a debugger.\n"
     "\n"
     "Options: none.\n"},
    {"threads",
     "usage: ddmc [OPTIONS] threads [--watch SECS]\n"
     "\n"
     "The thread table (THEN, THST): id, Linux tid, status, daemon, utime, stime, name.\n"
     "\n"
     "Options:\n"
     "  -w, --watch SECS         redraw the table every second for SECS seconds (Ctrl-C ends it);\n"
     "                           with --json, every picture and every thread event in one document\n"},
    {"stack",
     "usage: ddmc [OPTIONS] stack ID\n"
     "\n"
     "The stack of thread ID (the id from `ddmc threads`, not the tid): STKL.\n"
     "\n"
     "Options: none.\n"},
    {"heap",
     "usage: ddmc [OPTIONS] heap [--bitmap FILE.png [--max-width PX] [--dump-timeout MS]]\n"
     "\n"
     "The heap summary (HPIF): max, footprint, allocated bytes and objects. With --bitmap, a\n"
     "collection (HPGC) and the heap segment dump (HPSG) drawn as a PNG, with per-kind unit counts.\n"
     "\n"
     "Options:\n"
     "  -b, --bitmap FILE.png    draw the heap into FILE.png (one pixel per 8-byte unit)\n"
     "      --max-width PX       widest picture, 64..65536 pixels (default 1024)\n"
     "      --dump-timeout MS    how long the dump may take (default: -t, at least 30000)\n"},
    {"gc",
     "usage: ddmc [OPTIONS] gc\n"
     "\n"
     "Ask the VM to collect (HPGC); reports the heap before and after.\n"
     "\n"
     "Options: none.\n"},
    {"exit",
     "usage: ddmc [OPTIONS] exit STATUS\n"
     "\n"
     "Ask the VM to exit with STATUS, a 32-bit integer (EXIT), and check that it went away.\n"
     "\n"
     "Options: none.\n"},
    {"send",
     "usage: ddmc [OPTIONS] send TYPE [HEX...] [--listen SECS]\n"
     "\n"
     "Send one raw chunk of type TYPE (4 characters) with the bytes HEX (spaces, ':' and '_' are\n"
     "ignored) and print the reply, e.g. ddmc send HELO 00000001.\n"
     "\n"
     "Options:\n"
     "  -l, --listen SECS        then print the unsolicited chunks the VM sends for SECS seconds\n"
     "                           (an app's DdmServer.sendChunk)\n"},
    {"alloc",
     "usage: ddmc [OPTIONS] alloc [--duration S] [--top N] [--keep]\n"
     "       ddmc [OPTIONS] alloc start | stop [--top N] | show [--top N]\n"
     "\n"
     "Allocation tracking (REAE, REAL): on for S seconds (Ctrl-C ends the wait), then the top\n"
     "allocation sites by bytes; tracking is switched off after unless --keep. start switches it\n"
     "on; stop reports and switches it off; show reports only.\n"
     "\n"
     "Options:\n"
     "      --duration S         seconds to track (default 5)\n"
     "      --top N              sites in the table (default 20)\n"
     "      --keep               leave tracking on afterwards\n"},
    {"trace",
     "usage: ddmc [OPTIONS] trace [--sample US] --duration S -o FILE.trace [--chrome FILE.json]\n"
     "                             [--buffer MB]\n"
     "\n"
     "Method tracing (MPSS, MPSE) or sampling (SPSS, SPSE) for S seconds; the VM's .trace file is\n"
     "saved as received (dmtracedump, Android Studio).\n"
     "\n"
     "Options:\n"
     "  -d, --duration S         seconds to trace (required)\n"
     "  -o, --output FILE.trace  where to save the trace (required)\n"
     "      --sample US          sample every US microseconds instead of tracing every call\n"
     "      --chrome FILE.json   also write it as Trace Event JSON (Perfetto, chrome://tracing)\n"
     "      --buffer MB          the VM's trace buffer, 1..4095 MiB (default 8, as ddmlib)\n"},
    {"hprof",
     "usage: ddmc [OPTIONS] hprof -o FILE.hprof [--standard]\n"
     "       ddmc [OPTIONS] hprof --device-file PATH\n"
     "\n"
     "A heap dump (HPDS): Android's hprof 1.0.3, checked and saved to FILE.hprof; or written by the\n"
     "VM itself to PATH (HPDU).\n"
     "\n"
     "Options:\n"
     "  -o, --output FILE.hprof  where to save the dump\n"
     "      --standard           save the standard 1.0.2 form (hprof-conv's; MAT, VisualVM)\n"
     "      --device-file PATH   the VM writes the dump to PATH on its side instead (HPDU)\n"},
    {"ps",
     "usage: ddmc [-s SERIAL] [-P ADB_PORT] [--json] [-v] [-t MS] ps [--watch [--duration S]]\n"
     "\n"
     "Every JDWP process on the device, through the local adb server (track-jdwp). Each is asked\n"
     "for HELO, all at once: pid, user id, ABI, debugger (waiting: the VM waits for one; attached:\n"
     "the VM refused the connection, another debugger holds it), VM, app name. -t MS bounds the\n"
     "whole listing (default 5000): the command ends within MS, listing every VM that has not\n"
     "answered by then as not answering (with --watch: within MS of a process appearing). -c and\n"
     "-p do not apply.\n"
     "\n"
     "Options:\n"
     "  -w, --watch              keep listening to track-jdwp and redraw as processes come and go\n"
     "  -d, --duration S         with --watch: stop after S seconds (default: at Ctrl-C)\n"},
};

/* Prints the command's help and returns 1, or returns 0 when there is no such command. */
static int command_help(const char *name) {
  for (size_t k = 0; k < sizeof k_cmd_help / sizeof k_cmd_help[0]; k++) {
    if (strcmp(k_cmd_help[k].name, name) == 0) {
      fputs(k_cmd_help[k].text, stdout);
      fputs("\nOptions before the command (-c, -p, --json, -t, ...): ddmc --help; all of it: man ddmc.\n", stdout);
      return 1;
    }
  }
  return 0;
}

static int g_json; /* --json seen: usage errors are reported as a JSON document too */
static const char *g_command;

static _Noreturn void usage_error(const char *fmt, const char *arg) {
  char msg[512];
  snprintf(msg, sizeof msg, fmt, arg);
  fprintf(stderr, "ddmc: %s\nTry 'ddmc --help'.\n", msg);
  if (g_json) {
    jw w;
    jw_init(&w, stdout);
    jw_obj(&w);
    jw_kstr(&w, "command", g_command);
    jw_kbool(&w, "ok", 0);
    jw_key(&w, "error");
    jw_obj(&w);
    jw_kint(&w, "exit", EXIT_USAGE);
    jw_kstr(&w, "message", msg);
    jw_close(&w);
    jw_close(&w);
    jw_end(&w);
  }
  exit(EXIT_USAGE);
}

static int parse_u64(const char *s, uint64_t max, uint64_t *out) {
  if (s == NULL || *s == '\0' || *s == '-' || *s == '+' || isspace((unsigned char)*s)) return -1;
  errno = 0;
  char *end;
  unsigned long long v = strtoull(s, &end, 0);
  if (errno || *end != '\0' || v > max) return -1;
  *out = v;
  return 0;
}

/* Seconds for --duration: a number in [0, one week]. */
static double parse_seconds(const char *s, const char *opt) {
  if (s == NULL) usage_error("%s needs SECONDS", opt);
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || *end || end == s || !(v >= 0) || v > 7 * 24 * 3600.0) usage_error("'%s' is not a number of seconds", s);
  return v;
}

static int parse_target(opts *o, const char *t) {
  const char *colon = strrchr(t, ':');
  uint64_t port;
  if (colon == NULL) {
    /* A bare port. */
    if (parse_u64(t, 65535, &port) || port == 0) return -1;
    snprintf(o->host, sizeof o->host, "127.0.0.1");
  } else {
    if (parse_u64(colon + 1, 65535, &port) || port == 0) return -1;
    size_t n = (size_t)(colon - t);
    const char *h = t;
    if (n >= 2 && h[0] == '[' && h[n - 1] == ']') {
      h++;
      n -= 2;
    }
    if (n == 0 || n >= sizeof o->host) return -1;
    memcpy(o->host, h, n);
    o->host[n] = '\0';
  }
  o->port = (uint16_t)port;
  snprintf(o->target_buf, sizeof o->target_buf, strchr(o->host, ':') ? "[%s]:%u" : "%s:%u", o->host,
           (unsigned)o->port);
  o->target = o->target_buf;
  return 0;
}

/* ---- output helpers ---------------------------------------------------------------------------- */

static const char *human_bytes(uint64_t b, char *buf, size_t n) {
  if (b >= 10ull << 30) snprintf(buf, n, "%.1f GiB", (double)b / (1 << 30));
  else if (b >= 10ull << 20) snprintf(buf, n, "%.1f MiB", (double)b / (1 << 20));
  else if (b >= 10ull << 10) snprintf(buf, n, "%.1f KiB", (double)b / (1 << 10));
  else snprintf(buf, n, "%llu B", (unsigned long long)b);
  return buf;
}

static void json_begin(sess *s, jw *w) {
  jw_init(w, stdout);
  jw_obj(w);
  sess_json_head(s, w, 1);
}

static int json_finish(sess *s, jw *w) {
  sess_json_wire(s, w);
  jw_close(w);
  return jw_end(w) == 0 ? EXIT_OK : EXIT_ERROR;
}

static int finish_text(sess *s) {
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "ddmc: cannot write the output: %s\n", strerror(errno));
    return EXIT_ERROR;
  }
  if (s->o->verbose) sess_print_wire(s);
  return EXIT_OK;
}

/* ---- info ------------------------------------------------------------------------------------- */

static int cmd_info(sess *s) {
  /* A WAIT goes out right after the VM's first DDM packet, and an APNM may follow late: listen a
   * little before reporting. */
  sess_pump(s, 200, NULL);
  if (s->o->json) {
    jw w;
    json_begin(s, &w);
    jw_kstr(&w, "debugger", s->waiting ? "waiting" : "not-waiting");
    return json_finish(s, &w);
  }
  const ddmc_host_helo *h = &s->helo;
  const char *app = s->apnm_seen ? s->apnm.name : h->app_name;
  printf("%-18s %u\n", "pid", (unsigned)h->pid);
  printf("%-18s %s\n", "vm", tx(h->vm_ident));
  printf("%-18s %s\n", "app name", app[0] ? tx(app) : "(none)");
  if (s->apnm_seen && s->apnm.has_user_id) printf("%-18s %d\n", "user id", (int)s->apnm.user_id);
  else if (h->present & DDMC_HOST_HELO_USER_ID) printf("%-18s %d\n", "user id", (int)h->user_id);
  const char *pkg = s->apnm_seen && s->apnm.pkg_name ? s->apnm.pkg_name : h->pkg_name;
  if (pkg && pkg[0]) printf("%-18s %s\n", "package", tx(pkg));
  if (h->abi) printf("%-18s %s\n", "abi", tx(h->abi));
  if (h->jvm_flags) printf("%-18s %s\n", "flags", tx(h->jvm_flags));
  if (h->present & DDMC_HOST_HELO_NATIVE_DEBUGGABLE)
    printf("%-18s %s\n", "native debuggable", h->native_debuggable ? "yes" : "no");
  printf("%-18s ", "features");
  if (!(h->present & DDMC_HOST_HELO_FEATURES) || h->n_features == 0) {
    printf("(none)\n");
  } else {
    for (size_t i = 0; i < h->n_features; i++) printf("%s%s", i ? ", " : "", tx(h->features[i]));
    putchar('\n');
  }
  printf("%-18s %s\n", "debugger", s->waiting ? "waiting for a debugger (WAIT)" : "not waiting");
  return finish_text(s);
}

/* ---- threads ---------------------------------------------------------------------------------- */

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
  g_events[g_n_events++] = (tevent){mono_ms() - g_watch_t0, ev, id, name ? strdup(name) : NULL};
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
            t->daemon < 0 ? "?" : t->daemon ? "yes" : "no", ut, st, t->named ? tx(t->name) : "(unnamed)");
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
      if (t->daemon < 0) jw_null(w);
      else jw_bool(w, t->daemon);
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

static void on_sigint(int sig) {
  (void)sig;
  g_interrupted = 1;
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

static int cmd_threads(sess *s, double watch) {
  s->track_threads = 1;
  g_watch_t0 = mono_ms();
  /* THEN 1: the VM sends a THCR for every live thread before its (empty) reply; they are queued
   * while we wait and dispatched right after. */
  uint8_t on = 1;
  sess_request(s, "thread notifications (THEN)", T_THEN, &on, 1, NULL, NULL);
  query_thst(s);
  if (watch < 0) {
    if (s->o->json) {
      jw w;
      json_begin(s, &w);
      jw_key(&w, "threads");
      json_threads(s->threads.v, s->threads.count, &w);
      return json_finish(s, &w);
    }
    print_thread_table(s, stdout);
    return finish_text(s);
  }

  /* --watch: like top. SIGINT ends the loop cleanly (exit 0). */
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigint;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  s->on_thread_event = on_thread_event;
  s->ud = s;
  int tty = isatty(STDOUT_FILENO);
  int64_t end = mono_ms() + (int64_t)(watch * 1000.0);
  unsigned samples = 0;
  for (;;) {
    samples++;
    if (s->o->json) {
      /* Kept until the end: the document's "vm" part must describe the VM as it is then. */
      if (!snapshot_add(&s->threads, mono_ms() - g_watch_t0)) sess_fail(s, EXIT_ERROR, "out of memory");
    } else {
      if (tty) fputs("\033[H\033[2J", stdout);
      time_t now = time(NULL);
      char hhmmss[16];
      strftime(hhmmss, sizeof hhmmss, "%H:%M:%S", localtime(&now));
      const char *app = s->apnm_seen ? s->apnm.name : s->helo.app_name;
      printf("ddmc threads  %s  pid %u  %s  %zu threads  %s  (every 1 s, %.0f s left, Ctrl-C quits)\n\n",
             s->o->target, (unsigned)s->helo.pid, app[0] ? tx(app) : "(no name)", s->threads.count, hhmmss,
             (double)(end - mono_ms()) / 1000.0 < 0 ? 0.0 : (double)(end - mono_ms()) / 1000.0);
      print_thread_table(s, stdout);
      if (!tty) putchar('\n');
      fflush(stdout);
    }
    if (g_interrupted || mono_ms() >= end) break;
    int64_t left = end - mono_ms();
    sess_pump(s, left < 1000 ? (int)left : 1000, NULL);
    /* After the last interval too: the final picture shows the final state. */
    if (!g_interrupted) query_thst(s);
  }
  if (s->o->json) {
    jw w;
    json_begin(s, &w);
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
    jw_kbool(&w, "interrupted", g_interrupted != 0);
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
    for (size_t i = 0; i < g_n_events; i++) free(g_events[i].name);
    free(g_events);
    return json_finish(s, &w);
  }
  for (size_t i = 0; i < g_n_events; i++) free(g_events[i].name);
  free(g_events);
  if (g_interrupted) fprintf(stderr, "ddmc: interrupted\n");
  return finish_text(s);
}

/* ---- stack ------------------------------------------------------------------------------------ */

typedef struct stack_ctx {
  sess *s;
  ddmc_host_stkl st;
} stack_ctx;

static int parse_stkl(void *ud, const ddmc_host_packet *r) {
  stack_ctx *c = ud;
  if (!r->is_ddm) return -1;
  if (r->chunk_type != T_STKL) return -2;
  int rc = ddmc_host_stkl_parse(r->chunk, r->chunk_len, &c->st);
  if (rc) sess_fail(c->s, EXIT_NOT_DDM, "malformed STKL reply: %s", ddmc_host_strerror(rc));
  return 0;
}

static int cmd_stack(sess *s, uint32_t id) {
  stack_ctx c = {s, {0}};
  uint8_t req[4] = {(uint8_t)(id >> 24), (uint8_t)(id >> 16), (uint8_t)(id >> 8), (uint8_t)id};
  char what[64];
  snprintf(what, sizeof what, "the stack of thread %u", (unsigned)id);
  int rc = sess_request(s, what, T_STKL, req, 4, parse_stkl, &c);
  if (rc == -1) sess_fail(s, EXIT_NOT_DDM, "the VM has no STKL answer (empty reply): no stack support");
  if (rc == -2) sess_fail(s, EXIT_NOT_DDM, "the VM answered STKL with another chunk type");
  if (s->o->json) {
    jw w;
    json_begin(s, &w);
    jw_kuint(&w, "thread_id", c.st.thread_id);
    jw_key(&w, "frames");
    jw_arr(&w);
    for (size_t i = 0; i < c.st.count; i++) {
      const ddmc_host_frame *f = &c.st.frames[i];
      jw_obj(&w);
      jw_kstr(&w, "class", f->class_name);
      jw_kstr(&w, "method", f->method);
      jw_kstr(&w, "file", f->file);
      jw_kint(&w, "line", f->line);
      jw_close(&w);
    }
    jw_close(&w);
    ddmc_host_stkl_free(&c.st);
    return json_finish(s, &w);
  }
  printf("thread %u: %zu frame%s\n", (unsigned)c.st.thread_id, c.st.count, c.st.count == 1 ? "" : "s");
  for (size_t i = 0; i < c.st.count; i++) {
    const ddmc_host_frame *f = &c.st.frames[i];
    if (f->file && f->line >= 0)
      printf("  at %s.%s(%s:%d)\n", tx(f->class_name), tx(f->method), tx(f->file), (int)f->line);
    else if (f->file) printf("  at %s.%s(%s)\n", tx(f->class_name), tx(f->method), tx(f->file));
    else printf("  at %s.%s(Unknown Source)\n", tx(f->class_name), tx(f->method));
  }
  ddmc_host_stkl_free(&c.st);
  return finish_text(s);
}

/* ---- heap ------------------------------------------------------------------------------------- */

static int g_hpif_base; /* hpif_seq before the request whose HPIF is awaited */
static int hpif_newer(sess *s) { return s->hpif_seq > g_hpif_base; }

static void json_hpif(jw *w, const char *key, const ddmc_host_heap_info *h) {
  jw_key(w, key);
  jw_obj(w);
  jw_kuint(w, "heap_id", h->heap_id);
  jw_kuint(w, "timestamp_ms", h->timestamp_ms);
  jw_kuint(w, "reason", h->reason);
  jw_kuint(w, "max_bytes", h->max_bytes);
  jw_kuint(w, "footprint", h->footprint);
  jw_kuint(w, "allocated_bytes", h->allocated_bytes);
  jw_kuint(w, "allocated_objects", h->allocated_objects);
  jw_close(w);
}

static void print_hpif(const ddmc_host_heap_info *h) {
  char a[32], b[32], c[32];
  time_t secs = (time_t)(h->timestamp_ms / 1000);
  char when[32];
  strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime(&secs));
  printf("heap %u at %s.%03u\n", (unsigned)h->heap_id, when, (unsigned)(h->timestamp_ms % 1000));
  printf("  %-18s %12" PRIu32 "  (%s)\n", "max", h->max_bytes, human_bytes(h->max_bytes, a, sizeof a));
  printf("  %-18s %12" PRIu32 "  (%s)\n", "footprint", h->footprint, human_bytes(h->footprint, b, sizeof b));
  printf("  %-18s %12" PRIu32 "  (%s, %.1f%% of the footprint)\n", "allocated bytes", h->allocated_bytes,
         human_bytes(h->allocated_bytes, c, sizeof c),
         h->footprint ? 100.0 * (double)h->allocated_bytes / (double)h->footprint : 0.0);
  printf("  %-18s %12" PRIu32 "\n", "allocated objects", h->allocated_objects);
}

/* HPIF 1: the HPIF chunk comes before the empty reply. */
static void heap_now(sess *s) {
  uint8_t when = 1;
  int seq = g_hpif_base = s->hpif_seq;
  sess_request(s, "the heap info (HPIF)", T_HPIF, &when, 1, NULL, NULL);
  if (s->hpif_seq == seq) sess_pump(s, s->o->timeout_ms, hpif_newer);
  if (s->hpif_seq == seq)
    sess_fail(s, EXIT_TIMEOUT, "the VM accepted HPIF but sent no heap info within %d ms", s->o->timeout_ms);
}

static int dump_ready(sess *s) {
  /* A complete dump, and the HPIF (reason NEXT_GC) the same collection sends after it. */
  return s->dump.state == DDMC_HOST_DUMP_DONE && s->hpif_seq > s->dump_done_seq && s->hpif.reason == 2;
}

static int cmd_heap_bitmap(sess *s, const char *path, unsigned max_width, int dump_timeout_ms) {
  s->track_heap = 1;
  uint8_t hpsg_on[2] = {1, 0}, hpsg_off[2] = {0, 0}, next_gc = 2;
  int64_t t_start = mono_ms();
  sess_request(s, "heap segment dumps (HPSG 1,0)", T_HPSG, hpsg_on, 2, NULL, NULL);
  sess_request(s, "heap info at the next GC (HPIF 2)", T_HPIF, &next_gc, 1, NULL, NULL);
  s->hpif_seq = s->dump_done_seq = 0;
  s->hpif.reason = 0;
  sess_request(s, "a garbage collection (HPGC)", T_HPGC, NULL, 0, NULL, NULL);
  int got = sess_pump(s, dump_timeout_ms, dump_ready);
  /* Off again before anything can fail, so the VM stops dumping at every GC. */
  sess_request(s, "the end of heap dumps (HPSG 0,0)", T_HPSG, hpsg_off, 2, NULL, NULL);
  if (!got) {
    if (g_interrupted) sess_fail(s, EXIT_ERROR, "interrupted");
    sess_fail(s, EXIT_TIMEOUT, "no complete heap dump (HPST..HPEN + HPIF) within %d ms (%s)", dump_timeout_ms,
              s->dump.state == DDMC_HOST_DUMP_OPEN ? "a dump started but did not end"
              : s->dump.state == DDMC_HOST_DUMP_DONE ? "the dump came without its HPIF"
                                                    : "no dump started");
  }
  int64_t t_dump = mono_ms() - t_start;
  char err[300];
  heapimg_geom g;
  if (heapimg_write_png(path, &s->dump, max_width, HEAPIMG_DEFAULT_MAX_PIXELS, &g, err, sizeof err) != 0)
    sess_fail(s, EXIT_ERROR, "%s", err);

  const ddmc_host_heapdump *d = &s->dump;
  uint64_t unit = d->unit_size;
  uint64_t covered_bytes = g.units * unit;
  int matches = covered_bytes == s->hpif.footprint;
  static const int order[] = {HEAPIMG_KIND0 + 0, HEAPIMG_KIND0 + 1, HEAPIMG_KIND0 + 2, HEAPIMG_KIND0 + 3,
                              HEAPIMG_KIND0 + 4, HEAPIMG_KIND0 + 5, HEAPIMG_KIND0 + 6, HEAPIMG_KIND0 + 7,
                              HEAPIMG_FREE,      HEAPIMG_GAP};
  if (s->o->json) {
    jw w;
    json_begin(s, &w);
    json_hpif(&w, "heap", &s->hpif);
    jw_key(&w, "dump");
    jw_obj(&w);
    jw_kuint(&w, "heap_id", d->heap_id);
    jw_kstr(&w, "chunk_type", d->distinct ? "HPSO" : "HPSG");
    jw_kuint(&w, "unit_size", unit);
    jw_kuint(&w, "chunks", d->chunks);
    jw_kuint(&w, "runs", d->n_runs);
    jw_kuint(&w, "first_unit", d->first_unit);
    jw_kuint(&w, "units", g.units);
    jw_kuint(&w, "bytes", covered_bytes);
    jw_kuint(&w, "covered_units", d->covered_units);
    jw_kuint(&w, "free_units", d->free_units);
    jw_kuint(&w, "gap_units", g.gap_units);
    jw_kbool(&w, "covers_footprint", matches);
    jw_kint(&w, "elapsed_ms", t_dump);
    jw_key(&w, "kinds");
    jw_obj(&w);
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
      int ci = order[i];
      const heapimg_color *c = heapimg_color_of(ci);
      uint64_t units = ci == HEAPIMG_FREE ? d->free_units
                       : ci == HEAPIMG_GAP ? g.gap_units
                                           : d->kind_units[ci - HEAPIMG_KIND0];
      jw_key(&w, c->name);
      jw_obj(&w);
      jw_kuint(&w, "units", units);
      jw_kuint(&w, "bytes", units * unit);
      if (ci >= HEAPIMG_KIND0 && ci < HEAPIMG_KIND0 + 8) jw_kuint(&w, "runs", d->kind_runs[ci - HEAPIMG_KIND0]);
      char hex[8];
      snprintf(hex, sizeof hex, "#%02x%02x%02x", c->r, c->g, c->b);
      jw_kstr(&w, "color", hex);
      jw_kstr(&w, "label", c->label);
      jw_close(&w);
    }
    jw_close(&w);
    jw_close(&w);
    jw_key(&w, "bitmap");
    jw_obj(&w);
    jw_kstr(&w, "path", path);
    jw_kuint(&w, "width", g.width);
    jw_kuint(&w, "height", g.height);
    jw_kuint(&w, "bitmap_width", g.bitmap_width);
    jw_kuint(&w, "bitmap_rows", g.bitmap_rows);
    jw_kuint(&w, "legend_y", g.legend_y);
    jw_kuint(&w, "units_per_pixel", g.upp);
    jw_kuint(&w, "pixels", g.pixels);
    jw_close(&w);
    return json_finish(s, &w);
  }
  print_hpif(&s->hpif);
  char hb[32];
  printf("\nsegment dump: %" PRIu64 " units of %u bytes (%s) in %" PRIu64 " %s chunks, %zu runs, %.2f s\n", g.units,
         (unsigned)unit, human_bytes(covered_bytes, hb, sizeof hb), d->chunks, d->distinct ? "HPSO" : "HPSG",
         d->n_runs, (double)t_dump / 1000.0);
  if (!matches)
    printf("note: the dump covers %" PRIu64 " bytes, the footprint is %" PRIu32 " bytes\n", covered_bytes,
           s->hpif.footprint);
  int tty = isatty(STDOUT_FILENO);
  printf("\n  %s%-7s  %-24s %12s %14s %7s  %s\n", tty ? "   " : "", "COLOUR", "KIND", "UNITS", "BYTES", "SHARE",
         "RUNS");
  for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
    int ci = order[i];
    const heapimg_color *c = heapimg_color_of(ci);
    uint64_t units = ci == HEAPIMG_FREE ? d->free_units
                     : ci == HEAPIMG_GAP ? g.gap_units
                                         : d->kind_units[ci - HEAPIMG_KIND0];
    if (ci == HEAPIMG_GAP && units == 0) continue;
    char runs[24] = "";
    if (ci >= HEAPIMG_KIND0 && ci < HEAPIMG_KIND0 + 8)
      snprintf(runs, sizeof runs, "%" PRIu64, d->kind_runs[ci - HEAPIMG_KIND0]);
    /* A truecolour swatch on terminals; the hex code always. */
    if (tty) printf("  \033[48;2;%u;%u;%um  \033[0m #%02x%02x%02x", c->r, c->g, c->b, c->r, c->g, c->b);
    else printf("  #%02x%02x%02x", c->r, c->g, c->b);
    printf("  %-24s %12" PRIu64 " %14" PRIu64 " %6.2f%%  %s\n", c->label, units, units * unit,
           g.units ? 100.0 * (double)units / (double)g.units : 0.0, runs);
  }
  printf("\nwrote %s: %ux%u px, %" PRIu64 " unit%s per pixel, %u per row, legend from row %u\n", path, g.width,
         g.height, g.upp, g.upp == 1 ? "" : "s", g.bitmap_width, g.legend_y);
  return finish_text(s);
}

static int cmd_heap(sess *s, const char *bitmap, uint64_t max_width, uint64_t dump_timeout) {
  if (bitmap) {
    /* A collection on a big heap takes a while: default to the larger of 30 s and -t. */
    int dt = dump_timeout ? (int)dump_timeout : (s->o->timeout_ms > 30000 ? s->o->timeout_ms : 30000);
    return cmd_heap_bitmap(s, bitmap, (unsigned)max_width, dt);
  }
  heap_now(s);
  if (s->o->json) {
    jw w;
    json_begin(s, &w);
    json_hpif(&w, "heap", &s->hpif);
    return json_finish(s, &w);
  }
  print_hpif(&s->hpif);
  return finish_text(s);
}

/* ---- gc --------------------------------------------------------------------------------------- */

static int hpif_after_gc(sess *s) { return s->hpif_seq > 0 && s->hpif.reason == 2; }

static int cmd_gc(sess *s) {
  heap_now(s);
  ddmc_host_heap_info before = s->hpif;
  uint8_t next_gc = 2;
  sess_request(s, "heap info at the next GC (HPIF 2)", T_HPIF, &next_gc, 1, NULL, NULL);
  s->hpif_seq = 0;
  int64_t t = mono_ms();
  sess_request(s, "a garbage collection (HPGC)", T_HPGC, NULL, 0, NULL, NULL);
  int done = sess_pump(s, s->o->timeout_ms, hpif_after_gc);
  int64_t ms = mono_ms() - t;
  if (s->o->json) {
    jw w;
    json_begin(s, &w);
    jw_kbool(&w, "requested", 1);
    jw_kbool(&w, "completed", done);
    json_hpif(&w, "before", &before);
    if (done) {
      json_hpif(&w, "after", &s->hpif);
      jw_kint(&w, "freed_bytes", (int64_t)before.allocated_bytes - (int64_t)s->hpif.allocated_bytes);
      jw_kint(&w, "elapsed_ms", ms);
    }
    return json_finish(s, &w);
  }
  if (!done) {
    printf("GC requested; the VM sent no heap info after it within %d ms\n", s->o->timeout_ms);
  } else {
    char a[32], b[32], c[32], f[32];
    int64_t freed = (int64_t)before.allocated_bytes - (int64_t)s->hpif.allocated_bytes;
    printf("GC done in %.2f s: allocated %s -> %s (%s %s), objects %" PRIu32 " -> %" PRIu32 ", footprint %s\n",
           (double)ms / 1000.0, human_bytes(before.allocated_bytes, a, sizeof a),
           human_bytes(s->hpif.allocated_bytes, b, sizeof b), freed >= 0 ? "freed" : "grew by",
           human_bytes((uint64_t)(freed >= 0 ? freed : -freed), c, sizeof c), before.allocated_objects,
           s->hpif.allocated_objects, human_bytes(s->hpif.footprint, f, sizeof f));
  }
  return finish_text(s);
}

/* ---- exit ------------------------------------------------------------------------------------- */

static int cmd_exit(sess *s, int32_t status) {
  uint8_t req[4] = {(uint8_t)((uint32_t)status >> 24), (uint8_t)((uint32_t)status >> 16),
                    (uint8_t)((uint32_t)status >> 8), (uint8_t)status};
  ddmc_host_packet r;
  const char *result;
  int rc = ddmc_host_request(s->h, T_EXIT, req, 4, &r, s->o->timeout_ms);
  int code = EXIT_OK;
  if (rc == 0 && r.is_ddm && r.chunk_type == T_FAIL) {
    ddmc_host_fail f;
    char msg[300] = "";
    if (ddmc_host_fail_parse(r.chunk, r.chunk_len, &f) == 0) {
      snprintf(msg, sizeof msg, ": %s (FAIL code %d)", f.msg, (int)f.code); /* sess_fail escapes */
      ddmc_host_fail_free(&f);
    }
    sess_fail(s, EXIT_FAIL, "the VM refused EXIT%s", msg);
  }
  if (rc == DDMC_ECLOSED) {
    result = "closed";
  } else if (rc == 0) {
    /* Acknowledged: the connection should now close as the process goes. */
    ddmc_host_packet p;
    int64_t deadline = mono_ms() + s->o->timeout_ms;
    result = "acknowledged";
    for (;;) {
      int64_t left = deadline - mono_ms();
      if (left <= 0) break;
      int e = ddmc_host_recv(s->h, &p, (int)left);
      if (e == DDMC_ECLOSED || e == DDMC_EIO) {
        result = "closed";
        break;
      }
      if (e == DDMC_ETIMEDOUT) break;
      if (e) break;
    }
    if (strcmp(result, "closed") != 0) code = EXIT_TIMEOUT;
  } else if (rc == DDMC_ETIMEDOUT) {
    result = "no-answer";
    code = EXIT_TIMEOUT;
  } else {
    result = "error";
    code = sess_exit_code(rc);
  }
  if (s->o->json) {
    jw w;
    jw_init(&w, stdout);
    jw_obj(&w);
    sess_json_head(s, &w, code == EXIT_OK);
    jw_kint(&w, "status", status);
    jw_kstr(&w, "result", result);
    jw_kbool(&w, "exited", strcmp(result, "closed") == 0);
    jw_kint(&w, "exit_code", code);
    json_finish(s, &w);
    return code;
  }
  if (code == EXIT_OK) printf("VM %u exited (status %d requested; connection closed)\n", (unsigned)s->helo.pid, (int)status);
  else fprintf(stderr, "ddmc: EXIT %d sent, but the VM %s within %d ms\n", (int)status,
               strcmp(result, "acknowledged") == 0 ? "acknowledged it and did not exit" : "did not answer",
               s->o->timeout_ms);
  finish_text(s);
  return code;
}

/* ---- send ------------------------------------------------------------------------------------- */

static void hexdump(FILE *f, const uint8_t *p, size_t n) {
  for (size_t off = 0; off < n; off += 16) {
    fprintf(f, "  %08zx ", off);
    for (size_t i = 0; i < 16; i++) {
      if (i == 8) fputc(' ', f);
      if (off + i < n) fprintf(f, " %02x", p[off + i]);
      else fputs("   ", f);
    }
    fputs("  |", f);
    for (size_t i = 0; i < 16 && off + i < n; i++) fputc(p[off + i] >= 0x20 && p[off + i] < 0x7f ? p[off + i] : '.', f);
    fputs("|\n", f);
  }
}

static void json_hex(jw *w, const char *key, const uint8_t *p, size_t n) {
  static const char digits[] = "0123456789abcdef";
  jw_key(w, key);
  char *s = malloc(2 * n + 1);
  if (s == NULL) {
    jw_null(w);
    return;
  }
  for (size_t i = 0; i < n; i++) {
    s[2 * i] = digits[p[i] >> 4];
    s[2 * i + 1] = digits[p[i] & 15];
  }
  jw_strn(w, s, 2 * n);
  free(s);
}

static int hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* send --listen: the unsolicited DDM chunks the VM sends within listen_ms after the reply (an
 * app's DdmServer.sendChunk, say), text or JSON array; queued ones first. */
static void listen_unsolicited(sess *s, jw *w, int listen_ms) {
  if (w) {
    jw_key(w, "unsolicited");
    jw_arr(w);
  }
  int64_t deadline = mono_ms() + listen_ms;
  for (int64_t left; (left = deadline - mono_ms()) > 0;) {
    ddmc_host_packet p;
    if (ddmc_host_recv(s->h, &p, (int)left) != 0) break;
    if (p.is_reply || !p.is_ddm) continue;
    char t[5];
    ddmc_host_fourcc_str(p.chunk_type, t);
    if (w) {
      jw_obj(w);
      jw_kstr(w, "type", t);
      jw_kuint(w, "length", p.chunk_len);
      json_hex(w, "hex", p.chunk, p.chunk_len);
      jw_close(w);
    } else {
      printf("unsolicited %s, %zu bytes\n", t, p.chunk_len);
      hexdump(stdout, p.chunk, p.chunk_len);
    }
  }
  if (w) jw_close(w);
}

static int cmd_send(sess *s, const char *type_s, uint8_t *data, size_t len, int listen_ms) {
  uint32_t type = DDMC_HOST_FOURCC(type_s[0], type_s[1], type_s[2], type_s[3]);
  ddmc_host_packet r;
  int rc = ddmc_host_request(s->h, type, data, len, &r, s->o->timeout_ms);
  if (rc == DDMC_ETIMEDOUT)
    sess_fail(s, EXIT_TIMEOUT, "no reply to %s within %d ms", type_s, s->o->timeout_ms);
  if (rc == DDMC_ECLOSED) sess_fail(s, EXIT_ERROR, "the VM closed the connection (no reply to %s)", type_s);
  if (rc) sess_fail(s, sess_exit_code(rc), "sending %s failed: %s", type_s, ddmc_host_strerror(rc));
  char t[5] = "";
  int fail = 0;
  ddmc_host_fail f = {0, NULL};
  if (r.is_ddm) {
    ddmc_host_fourcc_str(r.chunk_type, t);
    if (r.chunk_type == T_FAIL && ddmc_host_fail_parse(r.chunk, r.chunk_len, &f) == 0) fail = 1;
  }
  int code = fail || (r.is_ddm && r.chunk_type == T_FAIL) ? EXIT_FAIL : EXIT_OK;
  if (s->o->json) {
    jw w;
    jw_init(&w, stdout);
    jw_obj(&w);
    sess_json_head(s, &w, code == EXIT_OK);
    jw_key(&w, "request");
    jw_obj(&w);
    jw_kstr(&w, "type", type_s);
    jw_kuint(&w, "length", len);
    json_hex(&w, "hex", data, len);
    jw_close(&w);
    jw_kuint(&w, "jdwp_error", r.error);
    jw_key(&w, "reply");
    if (r.is_ddm) {
      jw_obj(&w);
      jw_kstr(&w, "type", t);
      jw_kuint(&w, "length", r.chunk_len);
      jw_kbool(&w, "compressed", r.was_compressed);
      json_hex(&w, "hex", r.chunk, r.chunk_len);
      if (fail) {
        jw_key(&w, "fail");
        jw_obj(&w);
        jw_kint(&w, "code", f.code);
        jw_kstr(&w, "message", f.msg);
        jw_close(&w);
      }
      jw_close(&w);
    } else {
      jw_null(&w);
    }
    jw_kbool(&w, "empty", !r.is_ddm);
    ddmc_host_fail_free(&f);
    if (listen_ms > 0) listen_unsolicited(s, &w, listen_ms);
    json_finish(s, &w);
    return code;
  }
  if (r.error) {
    printf("JDWP error reply %u\n", (unsigned)r.error);
  } else if (!r.is_ddm) {
    printf("empty reply\n");
  } else {
    printf("reply %s, %zu bytes%s\n", t, r.chunk_len, r.was_compressed ? " (arrived ZLIB-compressed)" : "");
    hexdump(stdout, r.chunk, r.chunk_len);
    if (fail) printf("FAIL code %d: %s\n", (int)f.code, tx(f.msg));
  }
  ddmc_host_fail_free(&f);
  if (listen_ms > 0) listen_unsolicited(s, NULL, listen_ms);
  finish_text(s);
  if (code == EXIT_FAIL) fprintf(stderr, "ddmc: the VM answered %s with FAIL\n", type_s);
  return code;
}

/* ---- main ------------------------------------------------------------------------------------- */

int main(int argc, char **argv) {
  opts o;
  memset(&o, 0, sizeof o);
  o.target = "127.0.0.1:8700";
  o.zlib = 1;
  o.timeout_ms = 5000;
  int connect_given = 0;
  int i = 1;
  for (; i < argc; i++) {
    const char *a = argv[i];
    if (a[0] != '-' || strcmp(a, "-") == 0) break;
    if (strcmp(a, "--") == 0) {
      i++;
      break;
    }
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      return EXIT_OK;
    } else if (strcmp(a, "--version") == 0) {
      printf("ddmc %s\n", DDMC_TOOL_VERSION);
      return EXIT_OK;
    } else if (strcmp(a, "--json") == 0) {
      o.json = g_json = 1;
    } else if (strcmp(a, "--no-zlib") == 0) {
      o.zlib = 0;
    } else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
      o.verbose++;
    } else if (strcmp(a, "-vv") == 0) {
      o.verbose += 2;
    } else if (strcmp(a, "-c") == 0 || strcmp(a, "--connect") == 0) {
      if (++i >= argc) usage_error("%s needs HOST:PORT", a);
      o.target = argv[i];
      connect_given = 1;
    } else if (strncmp(a, "--connect=", 10) == 0) {
      o.target = a + 10;
      connect_given = 1;
    } else if (strcmp(a, "-p") == 0 || strcmp(a, "--pid") == 0) {
      uint64_t v;
      if (++i >= argc || parse_u64(argv[i], UINT32_MAX, &v) || v == 0) usage_error("%s needs a process id", a);
      o.pid = (uint32_t)v;
    } else if (strcmp(a, "-s") == 0 || strcmp(a, "--serial") == 0) {
      if (++i >= argc) usage_error("%s needs a device serial", a);
      o.serial = argv[i];
    } else if (strcmp(a, "-P") == 0 || strcmp(a, "--adb-port") == 0) {
      uint64_t v;
      if (++i >= argc || parse_u64(argv[i], 65535, &v) || v == 0) usage_error("%s needs a port", a);
      o.adb_port = (uint16_t)v;
    } else if (strcmp(a, "-t") == 0 || strcmp(a, "--timeout") == 0) {
      uint64_t v;
      if (++i >= argc || parse_u64(argv[i], 3600000, &v) || v == 0)
        usage_error("%s needs a timeout in milliseconds (1..3600000)", a);
      o.timeout_ms = (int)v;
    } else {
      usage_error("unknown option '%s'", a);
    }
  }
  if (parse_target(&o, o.target) != 0) usage_error("bad address '%s' (want HOST:PORT)", o.target);
  /* ps reaches the device through adb too, but every process on it rather than one. */
  int is_ps = i < argc && strcmp(argv[i], "ps") == 0;
  if (is_ps && o.pid) usage_error("ps lists every process: -p does not go with it%s", "");
  if (is_ps && connect_given) usage_error("ps lists the processes adb knows: -c does not go with it%s", "");
  if (o.pid || is_ps) {
    if (o.adb_port == 0) {
      const char *env = getenv("ANDROID_ADB_SERVER_PORT");
      uint64_t v = 5037;
      if (env && *env && (parse_u64(env, 65535, &v) || v == 0)) usage_error("bad ANDROID_ADB_SERVER_PORT '%s'", env);
      o.adb_port = (uint16_t)v;
    }
  } else if (o.serial || o.adb_port) {
    usage_error("%s goes with -p PID or ps", o.serial ? "-s" : "-P");
  }
  if (o.pid) {
    snprintf(o.target_buf, sizeof o.target_buf, "pid %u via adb 127.0.0.1:%u%s%s", (unsigned)o.pid,
             (unsigned)o.adb_port, o.serial ? " device " : "", o.serial ? o.serial : "");
    o.target = o.target_buf;
  }
  if (i >= argc) {
    if (g_json) usage_error("no command given%s", "");
    usage(stderr);
    return EXIT_USAGE;
  }
  o.command = g_command = argv[i++];
  int nargs = argc - i;
  char **args = argv + i;

  for (int k = 0; k < nargs; k++) {
    if (strcmp(args[k], "--help") == 0 || strcmp(args[k], "-h") == 0) {
      if (command_help(o.command)) return EXIT_OK;
      break;
    }
  }

  /* Validate the arguments before connecting, so a usage error never touches the VM. */
  uint64_t num = 0, max_width = HEAPIMG_DEFAULT_MAX_WIDTH, dump_timeout = 0;
  double watch = -1;
  const char *bitmap = NULL;
  uint8_t *send_data = NULL;
  int listen_ms = 0;
  size_t send_len = 0;
  alloc_args alloc = {ALLOC_RUN, 5.0, 20, 0};
  trace_args trace = {0, 0, 8, NULL, NULL};
  hprof_args hprof = {NULL, 0, NULL};
  ps_args ps = {0, -1};
  const char *cmd = o.command;
  if (strcmp(cmd, "stack") == 0) {
    if (nargs != 1 || parse_u64(args[0], UINT32_MAX, &num)) usage_error("usage: ddmc stack THREAD-ID%s", "");
  } else if (strcmp(cmd, "exit") == 0) {
    int64_t st = 0;
    char *end = NULL;
    if (nargs == 1) {
      errno = 0;
      long long v = strtoll(args[0], &end, 0);
      st = v;
      if (errno || *end || end == args[0] || v < INT32_MIN || v > INT32_MAX) nargs = -1;
    }
    if (nargs != 1) usage_error("usage: ddmc exit STATUS (a 32-bit integer)%s", "");
    num = (uint64_t)(uint32_t)(int32_t)st;
  } else if (strcmp(cmd, "send") == 0) {
    for (int k = 0; k < nargs; k++) { /* --listen SECS: anywhere, as threads' --watch */
      if (strcmp(args[k], "--listen") != 0 && strcmp(args[k], "-l") != 0) continue;
      char *end;
      long v = k + 1 < nargs ? strtol(args[k + 1], &end, 10) : -1;
      if (v < 1 || v > 3600 || *end) usage_error("send: --listen needs SECONDS (1-3600)%s", "");
      listen_ms = (int)v * 1000;
      memmove(&args[k], &args[k + 2], (size_t)(nargs - k - 2) * sizeof args[0]);
      nargs -= 2;
      break;
    }
    if (nargs < 1 || strlen(args[0]) != 4) usage_error("usage: ddmc send TYPE [HEX...]  (TYPE: 4 characters)%s", "");
    size_t digits = 0;
    for (int k = 1; k < nargs; k++) digits += strlen(args[k]);
    send_data = malloc(digits / 2 + 1);
    if (send_data == NULL) return EXIT_ERROR;
    int hi = -1;
    for (int k = 1; k < nargs; k++) {
      for (const char *p = args[k]; *p; p++) {
        if (*p == ' ' || *p == ':' || *p == '_') continue;
        int v = hexval((unsigned char)*p);
        if (v < 0) usage_error("send: '%s' is not hex", args[k]);
        if (hi < 0) hi = v;
        else {
          send_data[send_len++] = (uint8_t)(hi << 4 | v);
          hi = -1;
        }
      }
    }
    if (hi >= 0) usage_error("send: odd number of hex digits%s", "");
  } else if (strcmp(cmd, "threads") == 0) {
    for (int k = 0; k < nargs; k++) {
      if (strcmp(args[k], "--watch") == 0 || strcmp(args[k], "-w") == 0) {
        if (k + 1 >= nargs) usage_error("%s needs SECONDS", args[k]);
        char *end;
        errno = 0;
        watch = strtod(args[++k], &end);
        if (errno || *end || end == args[k] || !(watch >= 0) || watch > 7 * 24 * 3600.0)
          usage_error("--watch: '%s' is not a number of seconds", args[k]);
      } else {
        usage_error("threads: unknown argument '%s'", args[k]);
      }
    }
  } else if (strcmp(cmd, "heap") == 0) {
    for (int k = 0; k < nargs; k++) {
      if (strcmp(args[k], "--bitmap") == 0 || strcmp(args[k], "-b") == 0) {
        if (k + 1 >= nargs) usage_error("%s needs a FILE.png", args[k]);
        bitmap = args[++k];
      } else if (strcmp(args[k], "--max-width") == 0) {
        if (k + 1 >= nargs || parse_u64(args[k + 1], 65536, &max_width) || max_width < 64)
          usage_error("--max-width needs a width in pixels, 64..65536 (got '%s')", k + 1 < nargs ? args[k + 1] : "");
        k++;
      } else if (strcmp(args[k], "--dump-timeout") == 0) {
        if (k + 1 >= nargs || parse_u64(args[k + 1], 3600000, &dump_timeout) || dump_timeout == 0)
          usage_error("--dump-timeout needs milliseconds (got '%s')", k + 1 < nargs ? args[k + 1] : "");
        k++;
      } else {
        usage_error("heap: unknown argument '%s'", args[k]);
      }
    }
  } else if (strcmp(cmd, "info") == 0 || strcmp(cmd, "gc") == 0) {
    if (nargs > 0) usage_error("this command takes no arguments (got '%s')", args[0]);
  } else if (strcmp(cmd, "alloc") == 0) {
    int k = 0;
    if (nargs > 0 && args[0][0] != '-') {
      if (strcmp(args[0], "start") == 0) alloc.action = ALLOC_START;
      else if (strcmp(args[0], "stop") == 0) alloc.action = ALLOC_STOP;
      else if (strcmp(args[0], "show") == 0) alloc.action = ALLOC_SHOW;
      else usage_error("alloc: unknown action '%s' (want start, stop or show)", args[0]);
      k = 1;
    }
    for (; k < nargs; k++) {
      if (strcmp(args[k], "--duration") == 0 && alloc.action == ALLOC_RUN) {
        alloc.duration = parse_seconds(k + 1 < nargs ? args[++k] : NULL, "--duration");
      } else if (strcmp(args[k], "--top") == 0 && alloc.action != ALLOC_START) {
        uint64_t v;
        if (k + 1 >= nargs || parse_u64(args[++k], 1000000, &v) || v == 0) usage_error("--top needs a count (got '%s')", k < nargs ? args[k] : "");
        alloc.top = (uint32_t)v;
      } else if (strcmp(args[k], "--keep") == 0 && alloc.action == ALLOC_RUN) {
        alloc.keep = 1;
      } else {
        usage_error("alloc: unexpected argument '%s'", args[k]);
      }
    }
  } else if (strcmp(cmd, "trace") == 0) {
    int have_duration = 0;
    for (int k = 0; k < nargs; k++) {
      if (strcmp(args[k], "--duration") == 0 || strcmp(args[k], "-d") == 0) {
        trace.duration = parse_seconds(k + 1 < nargs ? args[++k] : NULL, "--duration");
        have_duration = 1;
      } else if (strcmp(args[k], "--sample") == 0) {
        uint64_t v;
        if (k + 1 >= nargs || parse_u64(args[++k], 60000000, &v) || v == 0)
          usage_error("--sample needs an interval in microseconds, 1..60000000 (got '%s')", k < nargs ? args[k] : "");
        trace.sample_us = (uint32_t)v;
      } else if (strcmp(args[k], "-o") == 0 || strcmp(args[k], "--output") == 0) {
        if (k + 1 >= nargs) usage_error("%s needs FILE.trace", args[k]);
        trace.out = args[++k];
      } else if (strcmp(args[k], "--chrome") == 0) {
        if (k + 1 >= nargs) usage_error("%s needs FILE.json", args[k]);
        trace.chrome = args[++k];
      } else if (strcmp(args[k], "--buffer") == 0) {
        uint64_t v;
        if (k + 1 >= nargs || parse_u64(args[++k], 4095, &v) || v == 0)
          usage_error("--buffer needs a size in MiB, 1..4095 (got '%s')", k < nargs ? args[k] : "");
        trace.buffer_mb = (uint32_t)v;
      } else {
        usage_error("trace: unexpected argument '%s'", args[k]);
      }
    }
    if (!have_duration || trace.out == NULL)
      usage_error("usage: ddmc trace [--sample US] --duration S -o FILE.trace [--chrome FILE.json]%s", "");
  } else if (strcmp(cmd, "hprof") == 0) {
    for (int k = 0; k < nargs; k++) {
      if (strcmp(args[k], "-o") == 0 || strcmp(args[k], "--output") == 0) {
        if (k + 1 >= nargs) usage_error("%s needs FILE.hprof", args[k]);
        hprof.out = args[++k];
      } else if (strcmp(args[k], "--standard") == 0) {
        hprof.standard = 1;
      } else if (strcmp(args[k], "--device-file") == 0) {
        if (k + 1 >= nargs || args[k + 1][0] == 0) usage_error("%s needs a PATH on the device", args[k]);
        hprof.device_file = args[++k];
      } else {
        usage_error("hprof: unexpected argument '%s'", args[k]);
      }
    }
    if ((hprof.out == NULL) == (hprof.device_file == NULL) || (hprof.standard && hprof.device_file))
      usage_error("usage: ddmc hprof -o FILE.hprof [--standard] | ddmc hprof --device-file PATH%s", "");
  } else if (strcmp(cmd, "ps") == 0) {
    int have_duration = 0;
    for (int k = 0; k < nargs; k++) {
      if (strcmp(args[k], "--watch") == 0 || strcmp(args[k], "-w") == 0) {
        ps.watch = 1;
      } else if (strcmp(args[k], "--duration") == 0 || strcmp(args[k], "-d") == 0) {
        ps.duration = parse_seconds(k + 1 < nargs ? args[++k] : NULL, "--duration");
        have_duration = 1;
      } else {
        usage_error("ps: unexpected argument '%s'", args[k]);
      }
    }
    if (have_duration && !ps.watch) usage_error("ps: --duration goes with --watch%s", "");
    return cmd_ps(&o, &ps);
  } else {
    usage_error("unknown command '%s'", cmd);
  }

  sess s;
  sess_open(&s, &o);
  int rc;
  if (strcmp(cmd, "info") == 0) rc = cmd_info(&s);
  else if (strcmp(cmd, "threads") == 0) rc = cmd_threads(&s, watch);
  else if (strcmp(cmd, "stack") == 0) rc = cmd_stack(&s, (uint32_t)num);
  else if (strcmp(cmd, "heap") == 0) rc = cmd_heap(&s, bitmap, max_width, dump_timeout);
  else if (strcmp(cmd, "gc") == 0) rc = cmd_gc(&s);
  else if (strcmp(cmd, "exit") == 0) rc = cmd_exit(&s, (int32_t)(uint32_t)num);
  else if (strcmp(cmd, "alloc") == 0) rc = cmd_alloc(&s, &alloc);
  else if (strcmp(cmd, "trace") == 0) rc = cmd_trace(&s, &trace);
  else if (strcmp(cmd, "hprof") == 0) rc = cmd_hprof(&s, &hprof);
  else rc = cmd_send(&s, args[0], send_data, send_len, listen_ms);
  free(send_data);
  sess_close(&s);
  return rc;
}
