/* SPDX-License-Identifier: Apache-2.0 */
/* ddmc timeline: several VMs watched side by side for S seconds, written as one Trace Event JSON
 * file (export_perfetto: Perfetto's UI, chrome://tracing) with a process per VM. Every interval
 * each VM is asked for its thread states (THST) and heap info (HPIF 1); HPIF 3 makes it also send
 * one after each GC, which marks the GC on the timeline. THEN 1 names the threads. */
#include "cli.h"
#include "export.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <sys/socket.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define T_THST DDMC_HOST_FOURCC('T', 'H', 'S', 'T')
#define T_THEN DDMC_HOST_FOURCC('T', 'H', 'E', 'N')
#define T_HPIF DDMC_HOST_FOURCC('H', 'P', 'I', 'F')
#define TL_MAX_VMS 64

/* What one VM gave, in growing arrays; thst entries are owned (parsed THST tables). */
typedef struct tl_vm {
  opts o; /* the session points at it: the array of tl_vm never moves */
  sess s;
  export_thst_snap *thst;
  size_t nthst, cthst;
  export_heap_snap *heap;
  size_t nheap, cheap;
  export_gc *gcs;
  size_t ngcs, cgcs;
  export_thread_name *names; /* the latest name of every thread seen, names owned */
  size_t nnames, cnames;
} tl_vm;

typedef struct tl_args {
  double duration;
  uint32_t interval_ms;
  const char *out;
  const char *vms[TL_MAX_VMS]; /* --vm targets; none: the global target */
  size_t nvms;
  int adb; /* --adb: every process adb's track-jdwp lists */
} tl_args;

static uint64_t real_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Room for one more element of size sz in *v (n used, *cap allocated); the program fails on OOM. */
static void *grow(sess *s, void *v, size_t n, size_t *cap, size_t sz) {
  if (n < *cap) return v;
  size_t c = *cap ? *cap * 2 : 64;
  void *nv = realloc(v, c * sz);
  if (nv == NULL) sess_fail(s, EXIT_ERROR, "out of memory");
  *cap = c;
  return nv;
}

static void on_hpif(void *ud, const ddmc_host_heap_info *h) {
  tl_vm *vm = ud;
  uint64_t now = real_us();
  vm->heap = grow(&vm->s, vm->heap, vm->nheap, &vm->cheap, sizeof(*vm->heap));
  vm->heap[vm->nheap++] = (export_heap_snap){now, *h};
  if (h->reason != 3) return; /* EVERY_GC: this one follows a collection */
  vm->gcs = grow(&vm->s, vm->gcs, vm->ngcs, &vm->cgcs, sizeof(*vm->gcs));
  vm->gcs[vm->ngcs++] = (export_gc){now, 0};
}

static void on_thread(void *ud, ddmc_host_thread_event ev, uint32_t id, const char *name) {
  tl_vm *vm = ud;
  if (name == NULL || (ev != DDMC_HOST_TEV_CREATED && ev != DDMC_HOST_TEV_RENAMED)) return;
  size_t i = 0;
  while (i < vm->nnames && vm->names[i].id != id) i++;
  if (i == vm->nnames) {
    vm->names = grow(&vm->s, vm->names, vm->nnames, &vm->cnames, sizeof(*vm->names));
    vm->names[vm->nnames++] = (export_thread_name){id, NULL};
  }
  char *copy = strdup(name);
  if (copy == NULL) sess_fail(&vm->s, EXIT_ERROR, "out of memory");
  free((char *)vm->names[i].name);
  vm->names[i].name = copy;
}

static int take_thst(void *ud, const ddmc_host_packet *r) {
  tl_vm *vm = ud;
  if (!r->is_ddm || r->chunk_type != T_THST) return -1;
  ddmc_host_thst st;
  int rc = ddmc_host_thst_parse(r->chunk, r->chunk_len, &st);
  if (rc) sess_fail(&vm->s, EXIT_NOT_DDM, "malformed THST reply: %s", ddmc_host_strerror(rc));
  vm->thst = grow(&vm->s, vm->thst, vm->nthst, &vm->cthst, sizeof(*vm->thst));
  vm->thst[vm->nthst++] = (export_thst_snap){real_us(), st.entries, st.count};
  return 0;
}

static void vm_start(tl_vm *vm) {
  uint8_t on = 1, every_gc = 3;
  sess_open(&vm->s, &vm->o);
  vm->s.track_threads = 1;
  vm->s.ud = vm;
  vm->s.on_thread_event = on_thread;
  vm->s.on_hpif = on_hpif;
  sess_request(&vm->s, "thread notifications (THEN)", T_THEN, &on, 1, NULL, NULL);
  sess_request(&vm->s, "heap info after every GC (HPIF 3)", T_HPIF, &every_gc, 1, NULL, NULL);
}

static void vm_tick(tl_vm *vm) {
  uint8_t now = 1;
  if (sess_request(&vm->s, "the thread status query", T_THST, NULL, 0, take_thst, vm) != 0)
    sess_fail(&vm->s, EXIT_NOT_DDM, "the VM has no THST answer (empty reply): no thread support");
  sess_request(&vm->s, "the heap info (HPIF)", T_HPIF, &now, 1, NULL, NULL);
}

/* A --vm word into o (a copy of the global options): HOST:PORT, [v6addr]:PORT, or pid:PID through
 * the local adb server (-s, -P as for -p). 0, or -1 when it is neither. */
static int vm_target(opts *o, const char *t) {
  uint64_t v;
  if (strncmp(t, "pid:", 4) == 0) {
    if (cli_parse_u64(t + 4, UINT32_MAX, &v) || v == 0) return -1;
    o->pid = (uint32_t)v;
    if (o->adb_port == 0) {
      const char *env = getenv("ANDROID_ADB_SERVER_PORT");
      o->adb_port = (env && cli_parse_u64(env, 65535, &v) == 0 && v) ? (uint16_t)v : 5037;
    }
    snprintf(o->target_buf, sizeof o->target_buf, "pid %u via adb 127.0.0.1:%u", (unsigned)o->pid,
             (unsigned)o->adb_port);
    o->target = o->target_buf;
    return 0;
  }
  const char *colon = strrchr(t, ':');
  if (colon == NULL || cli_parse_u64(colon + 1, 65535, &v) || v == 0) return -1;
  const char *h = t;
  size_t n = (size_t)(colon - t);
  if (n >= 2 && h[0] == '[' && h[n - 1] == ']') {
    h++;
    n -= 2;
  }
  if (n == 0 || n >= sizeof o->host) return -1;
  memcpy(o->host, h, n);
  o->host[n] = 0;
  o->port = (uint16_t)v;
  o->pid = 0;
  snprintf(o->target_buf, sizeof o->target_buf, "%s", t);
  o->target = o->target_buf;
  return 0;
}

/* The adb server's port: -P, else $ANDROID_ADB_SERVER_PORT, else 5037 (as adb). */
static uint16_t adb_port_of(const opts *o) {
  uint64_t v;
  const char *env = getenv("ANDROID_ADB_SERVER_PORT");
  if (o->adb_port) return o->adb_port;
  return (env && cli_parse_u64(env, 65535, &v) == 0 && v) ? (uint16_t)v : 5037;
}

/* track-jdwp's first message ([4 hex digits: length]["pid\n"...]) within timeout_ms into buf;
 * its length, or a negative DDMC_E*. */
static int adb_first_list(ddmc_host *h, int timeout_ms, char *buf, size_t cap) {
  size_t have = 0;
  int64_t end = sess_mono_ms() + timeout_ms;
  for (;;) {
    int hl = have >= 4 ? ddmc_host_adb_hexlen(buf) : 0;
    if (hl < 0 || (size_t)hl + 4 > cap) return DDMC_EPROTO;
    if (have >= 4 && have >= 4 + (size_t)hl) return hl;
    int64_t left = end - sess_mono_ms();
    struct pollfd pf = {ddmc_host_fd(h), POLLIN, 0};
    if (left <= 0 || poll(&pf, 1, (int)left) <= 0) return DDMC_ETIMEDOUT;
    ssize_t r = recv(pf.fd, buf + have, cap - have, MSG_DONTWAIT);
    if (r == 0) return DDMC_ECLOSED;
    if (r < 0 && errno != EAGAIN && errno != EINTR) return DDMC_EIO;
    if (r > 0) have += (size_t)r;
  }
}

/* The pids adb lists now (at most max); the program fails when adb cannot say. */
static size_t adb_pids(sess *s, const opts *o, uint32_t *pids, size_t max) {
  char req[300], msg[300] = "", list[65540];
  uint16_t port = adb_port_of(o);
  int rc = ddmc_host_connect_tcp(&s->h, "127.0.0.1", port, o->timeout_ms);
  if (rc) {
    s->h = NULL;
    sess_fail(s, EXIT_CONNECT, "cannot connect to the adb server at 127.0.0.1:%u: %s", (unsigned)port,
              ddmc_host_strerror(rc));
  }
  snprintf(req, sizeof req, o->serial && *o->serial ? "host:transport:%s" : "host:transport-any",
           o->serial ? o->serial : "");
  rc = ddmc_host_adb_request(s->h, req, o->timeout_ms, msg, sizeof msg);
  if (rc == 0) rc = ddmc_host_adb_request(s->h, "track-jdwp", o->timeout_ms, msg, sizeof msg);
  int len = rc ? rc : adb_first_list(s->h, o->timeout_ms, list, sizeof list - 1);
  if (len < 0) sess_fail(s, EXIT_CONNECT, "adb at 127.0.0.1:%u gave no process list: %s%s%s", (unsigned)port,
                         ddmc_host_strerror(len), msg[0] ? ": " : "", msg);
  list[4 + len] = 0;
  size_t n = 0;
  for (char *q = list + 4, *e; *q && n < max; q = *e ? e + 1 : e) {
    unsigned long v = strtoul(q, &e, 10);
    if (e != q && v > 0 && v <= UINT32_MAX) pids[n++] = (uint32_t)v;
    while (*e && *e != '\n') e++;
  }
  ddmc_host_free(s->h);
  s->h = NULL;
  return n;
}

static void vm_free(tl_vm *vm) {
  for (size_t i = 0; i < vm->nthst; i++) free((void *)vm->thst[i].entries);
  for (size_t i = 0; i < vm->nnames; i++) free((char *)vm->names[i].name);
  free(vm->thst);
  free(vm->heap);
  free(vm->gcs);
  free(vm->names);
  sess_close(&vm->s);
}

/* Polls every VM each interval until the time is up (or Ctrl-C), waiting on each in turn. */
static void record(tl_vm *vms, size_t n, const tl_args *a) {
  sess_catch_interrupts();
  int64_t end = sess_mono_ms() + (int64_t)(a->duration * 1000.0);
  while (!sess_interrupted) {
    int64_t tick = sess_mono_ms();
    for (size_t i = 0; i < n; i++) vm_tick(&vms[i]);
    int64_t next = tick + a->interval_ms;
    if (next > end) next = end;
    for (size_t i = 0; i < n && !sess_interrupted; i++) {
      int64_t left = (next - sess_mono_ms()) / (int64_t)(n - i);
      sess_pump(&vms[i].s, left > 0 ? (int)left : 0, NULL);
    }
    if (sess_mono_ms() >= end) break;
  }
  for (size_t i = 0; i < n; i++) vm_tick(&vms[i]); /* the last snapshot closes the slices */
}

static int write_timeline(tl_vm *vms, size_t n, const char *path) {
  export_vm ev[TL_MAX_VMS];
  for (size_t i = 0; i < n; i++) {
    const char *app = vms[i].s.apnm_seen ? vms[i].s.apnm.name : vms[i].s.helo.app_name;
    ev[i] = (export_vm){vms[i].s.helo.pid, app,         vms[i].names, vms[i].nnames, vms[i].thst,
                        vms[i].nthst,      vms[i].heap, vms[i].nheap, vms[i].gcs,    vms[i].ngcs};
  }
  FILE *f = fopen(path, "w");
  if (f == NULL) return DDMC_EIO;
  int rc = export_perfetto(f, ev, n);
  if (fclose(f) != 0 && rc == 0) rc = DDMC_EIO;
  return rc;
}

static int report(tl_vm *vms, size_t n, const tl_args *a) {
  if (vms[0].s.o->json) {
    jw w;
    sess_json_open(&vms[0].s, &w, "timeline");
    jw_kstr(&w, "file", a->out);
    jw_key(&w, "vms");
    jw_arr(&w);
    for (size_t i = 0; i < n; i++) {
      jw_obj(&w);
      jw_kstr(&w, "target", vms[i].o.target);
      jw_kuint(&w, "pid", vms[i].s.helo.pid);
      jw_kuint(&w, "thst", vms[i].nthst);
      jw_kuint(&w, "heap", vms[i].nheap);
      jw_kuint(&w, "gcs", vms[i].ngcs);
      jw_kuint(&w, "threads", vms[i].nnames);
      jw_close(&w);
    }
    jw_close(&w);
    return sess_json_close(&vms[0].s, &w);
  }
  printf("%-10s %s: %zu VM%s\n", "timeline", sess_tx(a->out), n, n == 1 ? "" : "s");
  for (size_t i = 0; i < n; i++)
    printf("%-10s %s pid %u: %zu thread snapshots, %zu heap samples, %zu GCs, %zu named threads\n", "vm",
           sess_tx(vms[i].o.target), (unsigned)vms[i].s.helo.pid, vms[i].nthst, vms[i].nheap, vms[i].ngcs,
           vms[i].nnames);
  return fflush(stdout) == 0 ? EXIT_OK : EXIT_ERROR;
}

static void timeline_parse(int argc, char **argv, tl_args *t) {
  int have_duration = 0;
  for (int k = 0; k < argc; k++) {
    if (strcmp(argv[k], "--duration") == 0 || strcmp(argv[k], "-d") == 0) {
      t->duration = cli_parse_seconds(k + 1 < argc ? argv[++k] : NULL, "--duration");
      have_duration = 1;
    } else if (strcmp(argv[k], "--interval") == 0) {
      uint64_t v;
      if (k + 1 >= argc || cli_parse_u64(argv[++k], 60000, &v) || v < 10)
        cli_usage_error("--interval needs milliseconds, 10..60000 (got '%s')", k < argc ? argv[k] : "");
      t->interval_ms = (uint32_t)v;
    } else if (strcmp(argv[k], "-o") == 0 || strcmp(argv[k], "--output") == 0) {
      if (k + 1 >= argc) cli_usage_error("%s needs FILE.json", argv[k]);
      t->out = argv[++k];
    } else if (strcmp(argv[k], "--adb") == 0) {
      t->adb = 1;
    } else if (strcmp(argv[k], "--vm") == 0) {
      if (k + 1 >= argc) cli_usage_error("%s needs HOST:PORT or pid:PID", argv[k]);
      if (t->nvms == TL_MAX_VMS) cli_usage_error("at most 64 --vm%s", "");
      opts probe;
      memset(&probe, 0, sizeof probe);
      if (vm_target(&probe, argv[k + 1]) != 0) cli_usage_error("--vm needs HOST:PORT or pid:PID (got '%s')", argv[k + 1]);
      t->vms[t->nvms++] = argv[++k];
    } else {
      cli_usage_error("timeline: unexpected argument '%s'", argv[k]);
    }
  }
  if (!have_duration || t->out == NULL)
    cli_usage_error("usage: ddmc timeline --duration S -o FILE.json [--interval MS] [--vm HOST:PORT|pid:PID]...%s", "");
  if (t->adb && t->nvms) cli_usage_error("--adb watches every process adb lists: --vm does not go with it%s", "");
}

/* Each VM's target: the --vm words, adb's pids (--adb), or the global one. */
static size_t targets(const opts *o, const tl_args *a, char words[][32], const char **w) {
  if (!a->adb) {
    for (size_t i = 0; i < a->nvms; i++) w[i] = a->vms[i];
    return a->nvms;
  }
  sess s;
  memset(&s, 0, sizeof s);
  s.o = o;
  uint32_t pids[TL_MAX_VMS];
  size_t n = adb_pids(&s, o, pids, TL_MAX_VMS);
  if (n == 0) sess_fail(&s, EXIT_CONNECT, "adb lists no JDWP process");
  for (size_t i = 0; i < n; i++) {
    snprintf(words[i], sizeof words[i], "pid:%u", (unsigned)pids[i]);
    w[i] = words[i];
  }
  return n;
}

static int timeline_main(opts *o, int argc, char **argv) {
  tl_args a;
  memset(&a, 0, sizeof a);
  a.interval_ms = 100;
  timeline_parse(argc, argv, &a);
  char words[TL_MAX_VMS][32];
  const char *w[TL_MAX_VMS];
  size_t listed = targets(o, &a, words, w), n = listed ? listed : 1;
  tl_vm *vms = calloc(n, sizeof(*vms));
  if (vms == NULL) {
    fprintf(stderr, "ddmc: out of memory\n");
    return EXIT_ERROR;
  }
  for (size_t i = 0; i < n; i++) {
    vms[i].o = *o;
    if (listed) vm_target(&vms[i].o, w[i]);
    else if (o->target == o->target_buf) vms[i].o.target = vms[i].o.target_buf; /* the copy's own */
    vm_start(&vms[i]);
  }
  if (!o->json) fprintf(stderr, "ddmc: watching %zu VM%s for %.1f s...\n", n, n == 1 ? "" : "s", a.duration);
  record(vms, n, &a);
  int rc = write_timeline(vms, n, a.out);
  if (rc) sess_fail(&vms[0].s, EXIT_ERROR, "cannot write %s: %s", a.out, rc == DDMC_EIO ? strerror(errno) : ddmc_host_strerror(rc));
  int code = report(vms, n, &a);
  for (size_t i = 0; i < n; i++) vm_free(&vms[i]);
  free(vms);
  return code;
}

const cli_cmd cmd_timeline = {
    .name = "timeline",
    .summary =
        "  timeline --duration S -o FILE.json [--interval MS] [--vm HOST:PORT|pid:PID]... [--adb]\n"
        "                         thread states, heap and GCs of one or several VMs (--adb: every\n"
        "                         process adb lists, as ps; -s, -P) over S seconds, side by side in\n"
        "                         one Trace Event JSON file (Perfetto, chrome://tracing)\n",
    .help =
        "usage: ddmc [OPTIONS] timeline --duration S -o FILE.json [--interval MS]\n"
        "                                [--vm HOST:PORT|pid:PID]... | [--adb]\n"
        "\n"
        "Watches VMs for S seconds (Ctrl-C ends it early): every interval their thread states (THST)\n"
        "and heap info (HPIF), and a mark at each GC (HPIF after every GC). Writes one Trace Event\n"
        "JSON file, a process per VM with its threads' states as slices and heap counters, that\n"
        "Perfetto's UI and chrome://tracing open. Without --vm or --adb: the VM of -c or -p. A VM\n"
        "that cannot be reached ends the command (exit 2).\n"
        "\n"
        "Options:\n"
        "  -d, --duration S         seconds to watch (required)\n"
        "  -o, --output FILE.json   where to write the timeline (required)\n"
        "      --interval MS        milliseconds between two looks, 10..60000 (default 100)\n"
        "      --vm TARGET          a VM to watch, HOST:PORT or pid:PID (adb); repeat for several\n"
        "      --adb                every JDWP process adb lists (track-jdwp, as ps), at most 64\n",
    .run = timeline_main,
    .adb_options = 1,
};
