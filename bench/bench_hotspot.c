/* SPDX-License-Identifier: Apache-2.0 */
/* Section hotspot: libddmcjdwp.so (agent/jdwp) against the JDK's own libjdwp, side by side on the
 * same HotSpot in one run. Every figure comes from two JVMs started alike, one with
 * -agentlib:jdwp and one with -agentpath:libddmcjdwp.so (both transport=dt_socket, a free
 * loopback port, server=y); the reference column is the JDK's agent.
 *
 *   attach    JdiBench attach: ms from attach() until allThreads() returns (median of 10 each,
 *             the two VMs alternating)
 *   bp, step  JdiBench bp / step on BpLoop:10 (the dbg section's client), turns of 0.25 s alternating
 *   invoke    JdiBench invoke: BpLoop.tick(1L) invoked on a thread held at BpLoop:10 (single-threaded)
 *   pop       JdiBench pop: popFrames of tick held at BpLoop:16, resume, the breakpoint again
 *   redefine  JdiBench redefine: redefineClasses of BpLoop with its own class file, main held
 *   queries   a raw JDWP client (bench_common.c) against Many.java, which defines 10,000 classes and
 *             starts 1,000 sleeping threads: VirtualMachine.ClassesBySignature, AllClasses and
 *             AllThreads round trips (median), and InstanceCounts of 10,000 of the classes in one
 *             request (target: never slower than libjdwp)
 *   cpu       Spin.java's loop (its own ms) with no agent, each agent loaded and idle (no debugger),
 *             and each attached and idle (JdiBench idle, suspend=y so the debugger is there for the
 *             whole loop): median of 3 each; target: ours within 1.02x of what libjdwp costs.
 *
 *   thst      DDM THST (the thread table) with Many's 1,000 threads: ours only (libjdwp has no DDM)
 *   dump      DumpProg's heap (a list of 1,000,000 objects and 8,192 int[1024]: about 80 MiB of
 *             hprof): HPDU to a file through libddmcjdwp.so against the JDK's own
 *             HotSpotDiagnosticMXBean.dumpHeap of the same heap in a JVM without agent: the time
 *             of each (best of 3) as the heap's MiB per second, the heap's MiB being the size of
 *             HotSpot's file of it (Android's form of the same heap is about a fifth smaller, so
 *             each one's own file per second would count that against us), and, for information,
 *             each one's own file per second
 * Every process is pinned to CPU 0 by bench_spawn, client included: the ratios compare the agents
 * under the same conditions, not the best each could do on two CPUs.
 * BENCH_HOTSPOT_ONLY=trips|queries|dump|cpu runs one group: trips (attach to redefine), queries
 * (with thst), dump, cpu. */
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "bench.h"

#define G "hotspot"
#define REF "OpenJDK 17 libjdwp, same JVM and client"
#define HS_CLASSES "10000"
#define HS_THREADS "1000"
#define HS_SPIN 500000000.0 /* about 2.2 s of Spin's loop on HotSpot here */

typedef struct hs_env {
  const char *java, *classdir, *agent;
} hs_env;

/* A free loopback port. The JDK's agent, given port 0, listens on a new port after each session:
 * the sections with several sessions need one that stays. */
static uint16_t hs_free_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in a;
  socklen_t n = sizeof a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  uint16_t port = 0;
  if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(fd, (struct sockaddr *)&a, &n) == 0)
    port = ntohs(a.sin_port);
  if (fd >= 0) close(fd);
  return port;
}

/* A JVM running MAIN ARGS under the JDK's agent (ours == 0) or libddmcjdwp.so (ours == 1), or
 * none (ours < 0); its port once it listens (0 without an agent). */
static bchild hs_jvm(const hs_env *e, int ours, int suspend, const char *main, const char *a1, const char *a2,
                     uint16_t *port) {
  char opt[1024], o[128];
  snprintf(o, sizeof o, "transport=dt_socket,server=y,address=127.0.0.1:%u,suspend=", hs_free_port());
  if (ours > 0)
    snprintf(opt, sizeof opt, "-agentpath:%s=%s%c", e->agent, o, suspend ? 'y' : 'n');
  else
    snprintf(opt, sizeof opt, "-agentlib:jdwp=%s%c", o, suspend ? 'y' : 'n');
  char *argv[10];
  int n = 0;
  argv[n++] = (char *)e->java;
  if (ours >= 0) argv[n++] = opt;
  argv[n++] = (char *)"-cp";
  argv[n++] = (char *)e->classdir;
  argv[n++] = (char *)main;
  if (a1) argv[n++] = (char *)a1;
  if (a2) argv[n++] = (char *)a2;
  argv[n] = NULL;
  bchild c = bench_spawn(argv);
  *port = 0;
  if (ours < 0 || c.pid < 0) return c;
  char line[256];
  unsigned p = 0;
  if (bench_read_line(&c, "Listening for transport dt_socket at address: ", line, sizeof line, 30) != 0 ||
      sscanf(line, "Listening for transport dt_socket at address: %u", &p) != 1 || p == 0 || p > 65535) {
    bench_stop(&c);
    return c;
  }
  *port = (uint16_t)p;
  return c;
}

/* JdiBench MODE 127.0.0.1 PORTS ARGS...: its RESULT line's numbers (up to 6), or -1. */
static int hs_jdi(const hs_env *e, const char *mode, const char *ports, const char *a1, const char *a2, const char *a3,
                  double secs, double v[6]) {
  char *argv[12];
  int n = 0;
  argv[n++] = (char *)e->java;
  argv[n++] = (char *)"-cp";
  argv[n++] = (char *)e->classdir;
  argv[n++] = (char *)"JdiBench";
  argv[n++] = (char *)mode;
  argv[n++] = (char *)"127.0.0.1";
  argv[n++] = (char *)ports;
  if (a1) argv[n++] = (char *)a1;
  if (a2) argv[n++] = (char *)a2;
  if (a3) argv[n++] = (char *)a3;
  argv[n] = NULL;
  bchild c = bench_spawn(argv);
  char line[512], want[64];
  snprintf(want, sizeof want, "RESULT %s ", mode);
  int rc = bench_read_line(&c, want, line, sizeof line, secs);
  bench_stop(&c);
  for (int i = 0; i < 6; i++) v[i] = -1;
  if (rc != 0) return -1;
  int got = sscanf(line + strlen(want), "%lf %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]);
  return got == 6 ? 0 : -1;
}

static const char *rate(double r) { return r > 0 ? bench_fmt("%.0f/s", r) : "n/a (failed)"; }

/* Higher is better for rates: the ratio is ours / theirs either way, and these rows only inform. */
static void rate_row(const char *fig, double ours, double ref) {
  bench_row(G, fig, rate(ours), REF, rate(ref), ours > 0 && ref > 0 ? ours / ref : -1, "info", "info");
}

static void time_row(const char *fig, double ours, double ref) {
  bench_row(G, fig, ours > 0 ? bench_time(ours) : "n/a (failed)", REF, ref > 0 ? bench_time(ref) : "n/a (failed)",
            ours > 0 && ref > 0 ? ours / ref : -1, "info", "info");
}

static void round_trips(const hs_env *e, double scale) {
  uint16_t pr, po;
  bchild r = hs_jvm(e, 0, 0, "BpLoop", NULL, NULL, &pr), o = hs_jvm(e, 1, 0, "BpLoop", NULL, NULL, &po);
  if (pr == 0 || po == 0) {
    bench_note("hotspot: a BpLoop JVM did not listen (JDK agent port %u, ours %u)", pr, po);
    bench_stop(&r);
    bench_stop(&o);
    return;
  }
  char ports[32], secs[16];
  snprintf(ports, sizeof ports, "%u,%u", pr, po);
  double v[6];
  if (hs_jdi(e, "attach", ports, "10", NULL, NULL, 120, v) == 0)
    time_row("JDI attach: attach() until allThreads() returns (median of 10)", v[3] * 1e6, v[0] * 1e6);
  else
    bench_note("hotspot: JdiBench attach failed");
  snprintf(secs, sizeof secs, "%.2f", 3.0 * scale);
  static const struct {
    const char *mode, *line, *fig;
  } m[] = {
      {"bp", "10", "JDI breakpoint hits/s (resume at each hit of BpLoop:10)"},
      {"step", "10", "JDI line steps/s (jdb's next: a request per step, from BpLoop:10)"},
      {"invoke", "10", "JDI invokeMethod round trips/s (BpLoop.tick(1L), single-threaded, thread held at a breakpoint)"},
      {"pop", "16", "JDI popFrames round trips/s (tick popped at BpLoop:16, resumed, the breakpoint hit again)"},
      {"redefine", "10", "JDI redefineClasses/s of one class (BpLoop, its own class file; main held at a breakpoint)"}};
  for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
    if (hs_jdi(e, m[i].mode, ports, "BpLoop", m[i].line, secs, 60 + 6 * scale, v) == 0)
      rate_row(m[i].fig, v[3], v[0]);
    else
      bench_note("hotspot: JdiBench %s failed", m[i].mode);
  }
  bench_stop(&r);
  bench_stop(&o);
}

/* Median ns of N round trips of one command with BODY. */
static double query(jc *c, uint8_t set, uint8_t cmd, const uint8_t *body, size_t n, int reps) {
  uint8_t pkt[256];
  double t[64];
  if (reps > 64) reps = 64;
  for (int i = 0; i < reps; i++) {
    size_t len = jc_build_cmd(pkt, c->next_id++, set, cmd);
    memcpy(pkt + len, body, n);
    put_be32(pkt, (uint32_t)(len + n));
    int64_t t0 = bench_now_ns();
    uint32_t got = jc_request(c, pkt, len + n, NULL);
    t[i] = (double)(bench_now_ns() - t0);
    if (got <= JDWP_HEADER) return -1; /* an error reply is a bare header */
  }
  return bench_median(t, (size_t)reps);
}

/* A DDM request on c; the reply's chunk length (0 on failure), its first payload byte in *first. */
static uint32_t ddm_request(jc *c, uint32_t type, const uint8_t *data, uint32_t n, uint8_t *first) {
  uint8_t pkt[1024];
  if (n > sizeof pkt - 64) return 0;
  size_t len = jc_build_ddm(pkt, ++c->next_id, type, data, n);
  uint32_t got = jc_request(c, pkt, len, NULL);
  if (got < JDWP_HEADER + 8) return 0;
  const uint8_t *p = c->buf + c->start - got; /* jc_next consumed it: the bytes are still there */
  if (first) *first = got > JDWP_HEADER + 8 ? p[JDWP_HEADER + 8] : 0xFF;
  return be32(p + JDWP_HEADER + 4);
}

/* Median ns of VirtualMachine.InstanceCounts of the first HS_CLASSES classes AllClasses lists (one
 * request of 10,000 referenceTypeIDs: every one a heap walk counts for), or -1. */
static double instance_counts(jc *c, int reps) {
  enum { WANT = 10000 };
  uint8_t head[16];
  size_t len = jc_build_cmd(head, c->next_id++, 1, 3);
  uint32_t got = jc_request(c, head, len, NULL);
  if (got <= JDWP_HEADER + 4) return -1;
  const uint8_t *p = c->buf + c->start - got + JDWP_HEADER, *end = p + (got - JDWP_HEADER);
  uint32_t n = be32(p), k = 0;
  p += 4;
  uint8_t *pkt = malloc(JDWP_HEADER + 4 + 8 * (size_t)WANT);
  if (pkt == NULL) return -1;
  for (uint32_t i = 0; i < n && k < WANT && p + 13 <= end; i++) {
    memcpy(pkt + JDWP_HEADER + 4 + 8 * (size_t)k++, p + 1, 8); /* [tag][referenceTypeID] */
    p += 13 + be32(p + 9) + 4;                                 /* [signature][status] */
  }
  double t[16], med = -1;
  if (reps > 16) reps = 16;
  int i = 0;
  for (; k == WANT && i < reps; i++) {
    len = jc_build_cmd(pkt, c->next_id++, 1, 21);
    put_be32(pkt + len, WANT);
    put_be32(pkt, (uint32_t)(len + 4 + 8 * (size_t)WANT));
    int64_t t0 = bench_now_ns();
    got = jc_request(c, pkt, len + 4 + 8 * (size_t)WANT, NULL);
    t[i] = (double)(bench_now_ns() - t0);
    if (got != JDWP_HEADER + 4 + 8 * (uint32_t)WANT) break; /* an error, or not every count */
  }
  if (k == WANT && i == reps) med = bench_median(t, (size_t)reps);
  free(pkt);
  return med;
}

static void queries(const hs_env *e) {
  double res[2][4], thst = -1;
  for (int ours = 0; ours < 2; ours++) {
    uint16_t port;
    for (int k = 0; k < 4; k++) res[ours][k] = -1;
    bchild vm = hs_jvm(e, ours, 0, "Many", HS_CLASSES, HS_THREADS, &port);
    char line[64];
    if (port == 0 || bench_read_line(&vm, "MANY ready", line, sizeof line, 60) != 0) {
      bench_note("hotspot: Many (%s) did not come up", ours ? "libddmcjdwp.so" : "libjdwp");
      bench_stop(&vm);
      continue;
    }
    jc c;
    jc_init(&c);
    if (jc_open(&c, port, bench_now_ns() + 10 * 1000000000LL) == 0) {
      static const char sig[] = "LGen5000;";
      uint8_t body[4 + sizeof sig];
      put_be32(body, sizeof sig - 1);
      memcpy(body + 4, sig, sizeof sig - 1);
      (void)query(&c, 1, 1, NULL, 0, 3); /* Version: the session is up */
      res[ours][0] = query(&c, 1, 2, body, 4 + sizeof sig - 1, 31);
      res[ours][1] = query(&c, 1, 3, NULL, 0, 11);
      res[ours][2] = query(&c, 1, 4, NULL, 0, 11);
      res[ours][3] = instance_counts(&c, 5);
      if (ours) {
        double v[11];
        int ok = 1;
        for (int i = 0; i < 11 && ok; i++) {
          int64_t t0 = bench_now_ns();
          ok = ddm_request(&c, FOURCC('T', 'H', 'S', 'T'), NULL, 0, NULL) > 0;
          v[i] = (double)(bench_now_ns() - t0);
        }
        if (ok) thst = bench_median(v, 11);
      }
      jc_disconnect(&c);
    }
    jc_close(&c);
    bench_stop(&vm);
  }
  time_row("ClassesBySignature(LGen5000;), " HS_CLASSES " classes loaded", res[1][0], res[0][0]);
  time_row("AllClasses, " HS_CLASSES " generated classes + the JDK's", res[1][1], res[0][1]);
  time_row("AllThreads, " HS_THREADS " sleeping threads", res[1][2], res[0][2]);
  bench_row(G, "InstanceCounts of 10,000 classes (Many's " HS_CLASSES " loaded; median of 5)",
            res[1][3] > 0 ? bench_time(res[1][3]) : "n/a (failed)", REF,
            res[0][3] > 0 ? bench_time(res[0][3]) : "n/a (failed)", res[1][3] > 0 && res[0][3] > 0 ? res[1][3] / res[0][3] : -1,
            "<= 1x", res[1][3] > 0 && res[0][3] > 0 ? bench_status(res[1][3] <= res[0][3]) : "n/a");
  bench_row(G, "DDM THST, " HS_THREADS " sleeping threads (libddmcjdwp.so only: libjdwp has no DDM)",
            thst > 0 ? bench_time(thst) : "n/a (failed)", "-", "-", -1, "info", "info");
}

/* Spin's own ms for its loop; agent < 0: none; attached: JdiBench idle holds a session throughout. */
static double spin(const hs_env *e, int agent, int attached, const char *iters) {
  uint16_t port;
  bchild vm = hs_jvm(e, agent, attached, "Spin", iters, NULL, &port);
  if (agent >= 0 && port == 0) return bench_stop(&vm), -1;
  bchild cl = {-1, -1};
  if (attached) {
    char p[8];
    snprintf(p, sizeof p, "%u", port);
    char *argv[] = {
        (char *)e->java, (char *)"-cp", (char *)e->classdir, (char *)"JdiBench", (char *)"idle", (char *)"127.0.0.1", p,
        (char *)"60",    NULL};
    cl = bench_spawn(argv);
  }
  char line[128];
  double ms = -1;
  long h;
  if (bench_read_line(&vm, "SPIN ", line, sizeof line, 60) == 0 && sscanf(line, "SPIN %lf %ld", &ms, &h) != 2) ms = -1;
  bench_stop(&cl);
  bench_stop(&vm);
  return ms;
}

static void cpu_loop(const hs_env *e, double scale) {
  char iters[32];
  snprintf(iters, sizeof iters, "%.0f", HS_SPIN * scale);
  /* config: {agent, attached}: none, libjdwp idle, ours idle, libjdwp attached, ours attached */
  static const int cfg[5][2] = {{-1, 0}, {0, 0}, {1, 0}, {0, 1}, {1, 1}};
  double v[5][3], med[5];
  for (int rep = 0; rep < 3; rep++)
    for (int i = 0; i < 5; i++) v[i][rep] = spin(e, cfg[i][0], cfg[i][1], iters);
  for (int i = 0; i < 5; i++) {
    int ok = v[i][0] > 0 && v[i][1] > 0 && v[i][2] > 0;
    med[i] = ok ? bench_median(v[i], 3) : -1;
  }
  bench_row(G, bench_fmt("Spin loop (%s iterations), no agent", iters),
            med[0] > 0 ? bench_fmt("%.0f ms", med[0]) : "n/a", "-", "-", -1, "info", "info");
  const char *what[2] = {"loaded, no debugger", "a JDI debugger attached, idle"};
  for (int k = 0; k < 2; k++) {
    double ref = med[1 + 2 * k], ours = med[2 + 2 * k], base = med[0];
    const char *fig = bench_fmt("Spin loop, agent %s (ratio: our cost over libjdwp's, each / no agent)", what[k]);
    if (ref <= 0 || ours <= 0 || base <= 0) {
      bench_row(G, fig, "n/a (failed)", REF, "-", -1, "<= 1.02x", "n/a");
      continue;
    }
    double r = (ours / base) / (ref / base);
    bench_row(G, fig, bench_fmt("%.0f ms (%.3fx none)", ours, ours / base), REF,
              bench_fmt("%.0f ms (%.3fx none)", ref, ref / base), r, "<= 1.02x", bench_status(r <= 1.02));
  }
}

/* HPDU of DumpProg's heap to path through libddmcjdwp.so: MiB/s of the file, or -1. */
/* The kB of a /proc/PID/status line (VmRSS:, VmHWM:), or -1. */
static double proc_kb(pid_t pid, const char *key) {
  char path[64], line[256];
  snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
  FILE *f = fopen(path, "r");
  double kb = -1;
  size_t n = strlen(key);
  while (f != NULL && fgets(line, sizeof line, f) != NULL)
    if (strncmp(line, key, n) == 0) kb = strtod(line + n, NULL);
  if (f != NULL) fclose(f);
  return kb;
}

static double dump_ours_sized(const hs_env *e, const char *path, const char *nodes, const char *arrays, double *hwm_kb,
                              double *ms_out);
static double dump_jdk_sized(const hs_env *e, const char *path, const char *nodes, const char *arrays, double *hwm_kb,
                             double *ms_out);

/* The rows of one dump: the heap's MiB per second, heap_bytes being HotSpot's file of it (the
 * target's row), and each one's own file per second (information). */
static void dump_rows(const char *what, double heap_bytes, double ours_ms, double ours_rate, double ref_ms,
                      double ref_rate) {
  char name[160]; /* what may be bench_fmt's, whose slots the rows reuse */
  snprintf(name, sizeof name, "%s", what);
  what = name;
  int ok = ours_ms > 0 && ref_ms > 0 && heap_bytes > 0;
  double mib = heap_bytes / (1 << 20);
  bench_row(G, bench_fmt("%s: the heap's MiB per second (HotSpot's file of it, %.0f MiB)", what, mib),
            ok ? bench_fmt("%.0f MiB/s (%.0f ms)", mib / (ours_ms / 1e3), ours_ms) : "n/a (failed)",
            "HotSpotDiagnosticMXBean.dumpHeap, same heap",
            ok ? bench_fmt("%.0f MiB/s (%.0f ms)", mib / (ref_ms / 1e3), ref_ms) : "n/a (failed)",
            ok ? ref_ms / ours_ms : -1, ">= 0.5x", ok ? bench_status(ref_ms / ours_ms >= 0.5) : "n/a");
  bench_row(G, bench_fmt("%s: each one's own file per second (Android's form is smaller)", what),
            ours_rate > 0 ? bench_fmt("%.0f MiB/s", ours_rate) : "n/a", "HotSpotDiagnosticMXBean.dumpHeap, same heap",
            ref_rate > 0 ? bench_fmt("%.0f MiB/s", ref_rate) : "n/a", ours_rate > 0 && ref_rate > 0 ? ours_rate / ref_rate : -1,
            "info", "info");
}

/* HPDU of DumpProg NODES ARRAYS through libddmcjdwp.so: MiB/s of the file, or -1; the JVM's peak
 * RSS after the dump in *hwm_kb, the dump's ms in *ms_out. */
static double dump_ours_sized(const hs_env *e, const char *path, const char *nodes, const char *arrays, double *hwm_kb,
                              double *ms_out) {
  uint16_t port;
  bchild vm = hs_jvm(e, 1, 0, "DumpProg", nodes, arrays, &port);
  char line[64];
  double rate = -1;
  jc c;
  jc_init(&c);
  if (port != 0 && bench_read_line(&vm, "DUMPPROG ready", line, sizeof line, 280) == 0 &&
      jc_open(&c, port, bench_now_ns() + 10 * 1000000000LL) == 0) {
    uint8_t body[4 + 2 * 256];
    size_t n = strlen(path);
    if (n <= 256) {
      put_be32(body, (uint32_t)n);
      for (size_t i = 0; i < n; i++) body[4 + 2 * i] = 0, body[5 + 2 * i] = (uint8_t)path[i];
      unlink(path);
      uint8_t status = 0xFF;
      /* A 1 GiB dump takes minutes on a loaded machine: more than jc_open's 30 s of silence. */
      struct timeval tv = {1800, 0};
      setsockopt(c.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
      int64_t t0 = bench_now_ns();
      uint32_t got = ddm_request(&c, FOURCC('H', 'P', 'D', 'U'), body, (uint32_t)(4 + 2 * n), &status);
      double secs = (double)(bench_now_ns() - t0) / 1e9;
      struct stat st;
      if (got > 0 && status == 0 && stat(path, &st) == 0 && secs > 0) {
        rate = (double)st.st_size / (1 << 20) / secs;
        if (hwm_kb) *hwm_kb = proc_kb(vm.pid, "VmHWM:");
        if (ms_out) *ms_out = secs * 1e3;
      } else
        bench_note("hotspot: HPDU of DumpProg failed (status %u)", status);
    }
    jc_disconnect(&c);
  }
  jc_close(&c);
  bench_stop(&vm);
  unlink(path);
  return rate;
}

/* DumpProg dumping its own heap with HotSpotDiagnosticMXBean.dumpHeap, no agent: MiB/s, or -1. */
static double dump_jdk_sized(const hs_env *e, const char *path, const char *nodes, const char *arrays, double *hwm_kb,
                             double *ms_out) {
  char *argv[] = {(char *)e->java, (char *)"-cp", (char *)e->classdir, (char *)"DumpProg", (char *)nodes,
                  (char *)arrays,  (char *)path,  NULL};
  bchild vm = bench_spawn(argv);
  char line[128];
  double ms = -1, bytes = -1;
  if (bench_read_line(&vm, "DUMPHEAP ", line, sizeof line, 280) == 0 &&
      sscanf(line, "DUMPHEAP %lf %lf", &ms, &bytes) != 2)
    ms = -1;
  if (hwm_kb) *hwm_kb = proc_kb(vm.pid, "VmHWM:");
  if (ms_out) *ms_out = ms;
  bench_stop(&vm);
  unlink(path);
  return ms > 0 && bytes > 0 ? bytes / (1 << 20) / (ms / 1e3) : -1;
}

static void dumps(const hs_env *e) {
  char path[256];
  snprintf(path, sizeof path, "/tmp/ddmc-bench-dump-%d.hprof", (int)getpid());
  double ours = -1, ref = -1, ours_ms = -1, ref_ms = -1;
  for (int i = 0; i < 3; i++) {
    double ms[2] = {-1, -1};
    double a = dump_ours_sized(e, path, "1000000", "8192", NULL, &ms[0]);
    double b = dump_jdk_sized(e, path, "1000000", "8192", NULL, &ms[1]);
    if (a > ours) ours = a, ours_ms = ms[0];
    if (b > ref) ref = b, ref_ms = ms[1];
  }
  /* dumpHeap's MiB/s times its ms is its file's size: the heap's bytes. */
  dump_rows("heap dump of DumpProg (1,000,000 objects + 8,192 int[1024]) to a file", ref * (1 << 20) * ref_ms / 1e3,
            ours_ms, ours, ref_ms, ref);
}

void bench_section_hotspot(const bench_opts *o) {
  const char *agent = getenv("BENCH_DDMCJDWP");
  if (o->java == NULL || o->classdir == NULL || agent == NULL || access(agent, R_OK) != 0) {
    bench_row(G, "libddmcjdwp.so against libjdwp", "n/a (no java or no agent)", REF, "-", -1, "info", "n/a");
    return;
  }
  hs_env e = {o->java, o->classdir, agent};
  double scale = o->scale > 0 ? o->scale : 1;
  const char *only = getenv("BENCH_HOTSPOT_ONLY"); /* one of trips queries dump cpu */
  if (only == NULL || strcmp(only, "trips") == 0) round_trips(&e, scale);
  if (only == NULL || strcmp(only, "queries") == 0) queries(&e);
  if (only == NULL || strcmp(only, "dump") == 0) dumps(&e);
  if (only == NULL || strcmp(only, "cpu") == 0) cpu_loop(&e, scale);
}

/* ---- scale: how each cost grows with the program, ours and libjdwp side by side in one run
 *
 *   classes  Many N 0: AllClasses and ClassesBySignature(LGen<N/2>;) at N = 1,000 / 10,000
 *            (/ 100,000), median of 9 (every time below too); the JVM's RSS idle (before any debugger) and after the
 *            debugger has listed the classes (and 1 s after, for what the listing leaves behind)
 *   threads  Many 0 T: AllThreads, and SuspendAll + ResumeAll as one pair, at T = 100 / 1,000
 *            (/ 10,000)
 *   frames   Deep D: ThreadReference.Frames(all) of a thread D calls deep, D = 10 / 1,000 / 10,000
 *   arrays   Deep: ArrayReference.GetValues of a whole int[] of 10^3 / 10^5 / 10^6 elements
 *   dump     DumpProg sized to about 10 / 100 (/ 1,000) MiB of hprof: HPDU through
 *            libddmcjdwp.so against HotSpotDiagnosticMXBean.dumpHeap (the JDK's agent has no heap
 *            dump: the VM's own dumper is the reference), time and peak RSS
 * The sizes in brackets run with BENCH_SCALE_BIG=1 (minutes; bench/RESULTS.md has a run). Every
 * row also goes to $BENCH_SCALE_DATA (run.sh: build-bench/scale.tsv), from which
 * bench/scale_plot.py draws bench/scale.svg. */

static FILE *scale_data;
/* Each point is the median of this many requests: with 5, the smallest rows swung by 2x from run
 * to run on the shared machine. */
#define SCALE_REPS 9

/* /proc/loadavg's three averages, for the notes: these figures are taken on a shared machine. */
static const char *load_now(void) {
  FILE *f = fopen("/proc/loadavg", "r");
  double a = -1, b = -1, c = -1;
  if (f != NULL) {
    if (fscanf(f, "%lf %lf %lf", &a, &b, &c) != 3) a = b = c = -1;
    fclose(f);
  }
  return bench_fmt("%.2f %.2f %.2f (1, 5, 15 min)", a, b, c);
}

static void scale_point(const char *curve, double size, double ours, double ref, const char *unit) {
  if (scale_data != NULL) fprintf(scale_data, "%s\t%.0f\t%.6g\t%.6g\t%s\n", curve, size, ours, ref, unit);
}

/* One command, its reply's data (after the header) in *data / *n; the round trip's ns, or -1. */
static double cmd(jc *c, uint8_t set, uint8_t command, const uint8_t *body, size_t bn, const uint8_t **data,
                  uint32_t *n) {
  uint8_t pkt[512];
  if (bn > sizeof pkt - 64) return -1;
  size_t len = jc_build_cmd(pkt, c->next_id++, set, command);
  memcpy(pkt + len, body, bn);
  put_be32(pkt, (uint32_t)(len + bn));
  int64_t t0 = bench_now_ns();
  uint32_t got = jc_request(c, pkt, len + bn, NULL);
  double ns = (double)(bench_now_ns() - t0);
  if (got < JDWP_HEADER) return -1;
  const uint8_t *p = c->buf + c->start - got;
  if (p[9] != 0 || p[10] != 0) return -1; /* an error code */
  if (data) *data = p + JDWP_HEADER;
  if (n) *n = got - JDWP_HEADER;
  return ns;
}

static double median_cmd(jc *c, uint8_t set, uint8_t command, const uint8_t *body, size_t bn, int reps) {
  double t[16];
  if (reps > 16) reps = 16;
  for (int i = 0; i < reps; i++)
    if ((t[i] = cmd(c, set, command, body, bn, NULL, NULL)) < 0) return -1;
  return bench_median(t, (size_t)reps);
}

static uint64_t be64(const uint8_t *p) { return ((uint64_t)be32(p) << 32) | be32(p + 4); }

static void put_be64(uint8_t *p, uint64_t v) {
  put_be32(p, (uint32_t)(v >> 32));
  put_be32(p + 4, (uint32_t)v);
}

static void scale_row(const char *curve, const char *fig, double size, double ours, double ref) {
  time_row(fig, ours, ref);
  scale_point(curve, size, ours, ref, "ns");
}

/* A JVM of MAIN A1 A2 with agent ours, its session open once it printed READY; 0 or -1. */
static int scale_open(const hs_env *e, int ours, const char *main, const char *a1, const char *a2, const char *ready,
                      bchild *vm, jc *c) {
  uint16_t port;
  char line[64];
  *vm = hs_jvm(e, ours, 0, main, a1, a2, &port);
  jc_init(c);
  if (port == 0 || bench_read_line(vm, ready, line, sizeof line, 280) != 0 ||
      jc_open(c, port, bench_now_ns() + 30 * 1000000000LL) != 0) {
    bench_note("scale: %s %s %s (%s) did not come up", main, a1, a2 ? a2 : "", ours ? "libddmcjdwp.so" : "libjdwp");
    return -1;
  }
  (void)cmd(c, 1, 1, NULL, 0, NULL, NULL); /* Version: the session is up */
  return 0;
}

static void scale_close(bchild *vm, jc *c) {
  jc_disconnect(c);
  jc_close(c);
  bench_stop(vm);
}

static void scale_classes(const hs_env *e, int n) {
  double t[2][2], rss[2][2];
  char cls[16], sig[32];
  snprintf(cls, sizeof cls, "%d", n);
  int sn = snprintf(sig, sizeof sig, "LGen%d;", n / 2);
  for (int ours = 0; ours < 2; ours++) {
    bchild vm;
    jc c;
    t[ours][0] = t[ours][1] = rss[ours][0] = rss[ours][1] = -1;
    uint16_t port;
    char line[64];
    vm = hs_jvm(e, ours, 0, "Many", cls, "0", &port);
    jc_init(&c);
    if (port != 0 && bench_read_line(&vm, "MANY ready", line, sizeof line, 280) == 0) {
      bench_sleep_us(500000);
      rss[ours][0] = proc_kb(vm.pid, "VmRSS:");
      if (jc_open(&c, port, bench_now_ns() + 30 * 1000000000LL) == 0) {
        uint8_t body[64];
        put_be32(body, (uint32_t)sn);
        memcpy(body + 4, sig, (size_t)sn);
        (void)cmd(&c, 1, 1, NULL, 0, NULL, NULL);
        t[ours][1] = median_cmd(&c, 1, 3, NULL, 0, SCALE_REPS);
        t[ours][0] = median_cmd(&c, 1, 2, body, 4 + (size_t)sn, SCALE_REPS);
        /* What the listing leaves behind, not its peak: each agent gets a second to give its
         * reply buffers back (ours does so 0.5 s after the last big reply, src/jdwp/session.h). */
        bench_sleep_us(1000000);
        rss[ours][1] = proc_kb(vm.pid, "VmRSS:");
      }
    } else {
      bench_note("scale: Many %d 0 (%s) did not come up", n, ours ? "libddmcjdwp.so" : "libjdwp");
    }
    scale_close(&vm, &c);
  }
  scale_row("AllClasses", bench_fmt("scale: AllClasses, %d classes + the JDK's", n), n, t[1][1], t[0][1]);
  scale_row("ClassesBySignature", bench_fmt("scale: ClassesBySignature, %d classes", n), n, t[1][0], t[0][0]);
  for (int k = 0; k < 2; k++) {
    double o = rss[1][k], r = rss[0][k];
    const char *when = k ? "after AllClasses" : "idle, no debugger yet";
    bench_row(G, bench_fmt("scale: JVM RSS, %d classes, %s", n, when), o > 0 ? bench_fmt("%.0f MiB", o / 1024) : "n/a",
              REF, r > 0 ? bench_fmt("%.0f MiB", r / 1024) : "n/a", o > 0 && r > 0 ? o / r : -1, "<= 1.1x",
              o > 0 && r > 0 ? bench_status(o / r <= 1.1) : "n/a");
    scale_point(k ? "RSS after AllClasses" : "RSS idle", n, o * 1024, r * 1024, "bytes");
  }
}

static void scale_threads(const hs_env *e, int n) {
  double t[2][2];
  char th[16];
  snprintf(th, sizeof th, "%d", n);
  for (int ours = 0; ours < 2; ours++) {
    bchild vm;
    jc c;
    t[ours][0] = t[ours][1] = -1;
    if (scale_open(e, ours, "Many", "0", th, "MANY ready", &vm, &c) == 0) {
      t[ours][0] = median_cmd(&c, 1, 4, NULL, 0, SCALE_REPS);
      double v[SCALE_REPS];
      int ok = 1;
      for (int i = 0; i < SCALE_REPS && ok; i++) {
        double a = cmd(&c, 1, 8, NULL, 0, NULL, NULL), b = cmd(&c, 1, 9, NULL, 0, NULL, NULL);
        ok = a > 0 && b > 0;
        v[i] = a + b;
      }
      if (ok) t[ours][1] = bench_median(v, SCALE_REPS);
    }
    scale_close(&vm, &c);
  }
  scale_row("AllThreads", bench_fmt("scale: AllThreads, %d sleeping threads", n), n, t[1][0], t[0][0]);
  scale_row("SuspendAll+ResumeAll", bench_fmt("scale: SuspendAll + ResumeAll, %d sleeping threads", n), n, t[1][1],
            t[0][1]);
}

/* Deep's static field NAME's value (an object or thread ID), or 0. */
static uint64_t deep_static(jc *c, const char *name) {
  static const char sig[] = "LDeep;";
  uint8_t body[64];
  const uint8_t *d;
  uint32_t n;
  put_be32(body, sizeof sig - 1);
  memcpy(body + 4, sig, sizeof sig - 1);
  if (cmd(c, 1, 2, body, 4 + sizeof sig - 1, &d, &n) < 0 || n < 17 || be32(d) != 1) return 0;
  uint64_t type = be64(d + 5);
  put_be64(body, type);
  if (cmd(c, 2, 4, body, 8, &d, &n) < 0 || n < 4) return 0; /* ReferenceType.Fields */
  uint32_t count = be32(d), at = 4;
  uint64_t field = 0;
  for (uint32_t i = 0; i < count && at + 12 <= n && field == 0; i++) {
    uint64_t id = be64(d + at);
    uint32_t ln = be32(d + at + 8);
    if (at + 12 + ln > n) return 0;
    if (ln == strlen(name) && memcmp(d + at + 12, name, ln) == 0) field = id;
    at += 12 + ln;
    if (at + 4 > n) return 0;
    at += 4 + be32(d + at) + 4; /* signature, modifiers */
  }
  if (field == 0) return 0;
  put_be64(body, type);
  put_be32(body + 8, 1);
  put_be64(body + 12, field);
  if (cmd(c, 2, 6, body, 20, &d, &n) < 0 || n < 13) return 0; /* ReferenceType.GetValues */
  return be64(d + 5);
}

static void scale_deep(const hs_env *e, int depth, int elems) {
  double t[2][2];
  char a1[16], a2[16];
  snprintf(a1, sizeof a1, "%d", depth);
  snprintf(a2, sizeof a2, "%d", elems);
  for (int ours = 0; ours < 2; ours++) {
    bchild vm;
    jc c;
    t[ours][0] = t[ours][1] = -1;
    if (scale_open(e, ours, "Deep", a1, a2, "DEEP ready", &vm, &c) == 0) {
      uint64_t arr = deep_static(&c, "arr"), th = deep_static(&c, "deep");
      uint8_t body[16];
      put_be64(body, arr);
      put_be32(body + 8, 0);
      put_be32(body + 12, (uint32_t)elems);
      if (arr != 0) t[ours][1] = median_cmd(&c, 13, 2, body, 16, SCALE_REPS);
      put_be64(body, th);
      if (th != 0 && cmd(&c, 11, 2, body, 8, NULL, NULL) > 0) { /* Suspend */
        put_be32(body + 8, 0);
        put_be32(body + 12, UINT32_MAX); /* all frames */
        t[ours][0] = median_cmd(&c, 11, 6, body, 16, SCALE_REPS);
        (void)cmd(&c, 11, 3, body, 8, NULL, NULL);
      }
      if (arr == 0 || th == 0) bench_note("scale: Deep's statics not found (%s)", ours ? "libddmcjdwp.so" : "libjdwp");
    }
    scale_close(&vm, &c);
  }
  scale_row("Frames", bench_fmt("scale: ThreadReference.Frames, a thread %d calls deep", depth), depth, t[1][0],
            t[0][0]);
  scale_row("ArrayReference.GetValues", bench_fmt("scale: ArrayReference.GetValues, int[%d]", elems), elems, t[1][1],
            t[0][1]);
}

static void scale_dump(const hs_env *e, int mib) {
  char path[256], nodes[32], arrays[32];
  snprintf(path, sizeof path, "/tmp/ddmc-bench-scale-%d.hprof", (int)getpid());
  /* DumpProg 1,000,000 8,192 makes about 80 MiB of hprof. */
  snprintf(nodes, sizeof nodes, "%d", 12500 * mib);
  snprintf(arrays, sizeof arrays, "%d", 102 * mib);
  double hwm[2] = {-1, -1}, ms[2] = {-1, -1};
  double ref = dump_jdk_sized(e, path, nodes, arrays, &hwm[0], &ms[0]);
  double ours = dump_ours_sized(e, path, nodes, arrays, &hwm[1], &ms[1]);
  dump_rows(bench_fmt("scale: heap dump, DumpProg %s %s (about %d MiB of hprof)", nodes, arrays, mib),
            ref > 0 ? ref * (1 << 20) * ms[0] / 1e3 : -1, ours > 0 ? ms[1] : -1, ours, ref > 0 ? ms[0] : -1, ref);
  bench_row(G, bench_fmt("scale: heap dump, about %d MiB: the JVM's peak RSS (VmHWM) after it", mib),
            hwm[1] > 0 ? bench_fmt("%.0f MiB", hwm[1] / 1024) : "n/a", "HotSpotDiagnosticMXBean.dumpHeap, same heap",
            hwm[0] > 0 ? bench_fmt("%.0f MiB", hwm[0] / 1024) : "n/a", hwm[0] > 0 && hwm[1] > 0 ? hwm[1] / hwm[0] : -1,
            "info", "info");
  scale_point("heap dump", mib, ms[1] * 1e6, ms[0] * 1e6, "ns");
}

void bench_section_scale(const bench_opts *o) {
  const char *agent = getenv("BENCH_DDMCJDWP");
  if (o->java == NULL || o->classdir == NULL || agent == NULL || access(agent, R_OK) != 0) {
    bench_row(G, "scale: libddmcjdwp.so against libjdwp", "n/a (no java or no agent)", REF, "-", -1, "info", "n/a");
    return;
  }
  hs_env e = {o->java, o->classdir, agent};
  const char *big = getenv("BENCH_SCALE_BIG");
  int b = big != NULL && strcmp(big, "1") == 0;
  bench_note("scale: the machine's load at the start: %s", load_now());
  const char *only = getenv("BENCH_SCALE_ONLY"); /* one of classes threads deep dump */
  const char *data = getenv("BENCH_SCALE_DATA");
  scale_data = data != NULL ? fopen(data, "a") : NULL;
  static const int classes[] = {1000, 10000, 100000}, threads[] = {100, 1000, 10000}, depth[] = {10, 1000, 10000},
                   elems[] = {1000, 100000, 1000000}, mib[] = {10, 100, 1000};
  for (int i = 0; i < 3; i++) {
    if (only == NULL || strcmp(only, "classes") == 0)
      if (i < 2 || b) scale_classes(&e, classes[i]);
    if (only == NULL || strcmp(only, "threads") == 0)
      if (i < 2 || b) scale_threads(&e, threads[i]);
    if (only == NULL || strcmp(only, "deep") == 0) scale_deep(&e, depth[i], elems[i]);
    if (only == NULL || strcmp(only, "dump") == 0)
      if (i < 2 || b) scale_dump(&e, mib[i]);
  }
  bench_note("scale: the machine's load at the end: %s", load_now());
  if (scale_data != NULL) fclose(scale_data);
}
