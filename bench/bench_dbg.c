/* SPDX-License-Identifier: Apache-2.0 */
/* The debugger figures, each against its reference in the same run:
 *
 *   1. cost of debugging support on a CPU-bound program (bench/programs/spin.mvm: a loop of
 *      integer arithmetic with a static call and a static field update per iteration, ~0.8 s) in six set-ups,
 *        (a) minivm without JDWP                       the reference
 *        (b) -agentlib:jdwp=...,suspend=n, no peer
 *        (c) a DDM-only peer (handshake, HELO, FEAT, then it reads until EOF), suspend=n: the
 *            peer connects while the program sleeps before its loop (suspend=y would hold main
 *            until a debugger resumes it, which a DDM peer never does)
 *        (d) a JDI debugger attached with no request (JdiBench idle), suspend=y
 *        (e) the same with a breakpoint in Spin.cold, which never runs (JdiBench cold)
 *        (f) the same with access and modification watchpoints on Spin.sink, which the loop never
 *            touches while it updates Spin.count every iteration (JdiBench watch; the
 *            target: <= 1.05x (d), the same debugger without a watchpoint)
 * *      run in REPS rounds, each round every set-up once in a rotated order, so drift in the
 *      machine's load hits all alike. The figure is the CPU time of the whole minivm process
 *      during the loop (all its threads, so the JDWP thread's work counts; bracketed from /proc,
 *      see sampler below), each set-up's best round against (a)'s best. The whole process's CPU
 *      time, the main thread's and the loop's own wall time (the program reads time-ms around
 *      it) are in the notes. The program sleeps 300 ms before its loop, which also lets a
 *      just-started JDI client go idle;
 *   2. breakpoint round trip: JdiBench bp resumes at each hit of BpLoop:10 (bench/programs/
 *      bploop.mvm against bench/java/BpLoop.java on HotSpot: same class, methods and lines);
 *   3. single-step round trip: JdiBench step, a line step over as jdb's `next` and IDEs do it (a
 *      step request with a count filter of 1, resume, the event, delete the request), over lines
 *      10 -> 11 -> 10 ... of the same loop; cross-CPU also JdiBench stepkeep (one request kept
 *      enabled, resumed at each event: the bare round trip) as an info row;
 *   4. JDI attach until allThreads() returns (JdiBench attach, median of ATTACH_N), minivm on
 *      bench/programs/idle.mvm against HotSpot on bench/java/Idle.java;
 *   5. method entry/exit events per second to a JDI client that resumes each (JdiBench methods),
 *      minivm beside HotSpot;
 *   6. interleaved traffic: DDM HELO round trips (p50) on the one connection a raw debugger uses to
 *      step minivm's BpLoop line by line (every event resumed at once), against the same HELOs
 *      with no debugger.
 * The JDI client is the same JVM program for both VMs, so only the VM side differs.
 * Round trips: both VMs run at once and one JdiBench takes 0.25 s turns between them; beside
 * each JDI figure a "bound" row (1 / the client's own CPU per event) and, for breakpoints, a raw
 * JDWP client in this process (no JDI) show what the client and the VM side each take.
 * Placement as in the rt section: the VM (every thread of minivm or of the JVM) on CPU 0; the
 * client (the DDM peer thread, the JDI client's JVM, the raw client) on CPU 1 ("cross-CPU") and,
 * for the round trips, on CPU 0 too ("same CPU"). BENCH_PIN=0: one unpinned run.
 * Ports are chosen by the kernel (bind to port 0, then passed on the command line); a VM is
 * known to listen once /proc/net/tcp shows the port in LISTEN, which does not disturb a
 * suspend=y VM the way a probe connection would. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#define REPS 7
#define SPIN_ITERS 16000000.0 /* ~0.75 s of loop on this machine's minivm */
#define RT_SECS 2.0           /* counting time per VM of each bp / step run (after 0.5 s of warm-up) */
#define ATTACH_N 15

/* ---- child processes */

static uint16_t free_port(void) {
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t sl = sizeof(sa);
  if (s < 0 || bind(s, (struct sockaddr *)&sa, sizeof(sa)) != 0 || getsockname(s, (struct sockaddr *)&sa, &sl) != 0) {
    fprintf(stderr, "bench: no free port: %s\n", strerror(errno));
    exit(2);
  }
  close(s);
  return ntohs(sa.sin_port);
}

/* 1 once 127.0.0.1:port (or any address) is in LISTEN in /proc/net/tcp. */
static int port_listening(uint16_t port) {
  FILE *f = fopen("/proc/net/tcp", "r");
  if (f == NULL) return 0;
  char line[512];
  int found = 0;
  while (!found && fgets(line, sizeof(line), f) != NULL) {
    unsigned addr, p, st;
    if (sscanf(line, " %*d: %x:%x %*x:%*x %x", &addr, &p, &st) == 3 && p == port && st == 0x0A) found = 1;
  }
  fclose(f);
  return found;
}

typedef struct child {
  pid_t pid;
  int out; /* read end of its stdout, or -1 */
} child;

/* Starts argv[0] with its threads on cpu (-1: anywhere). want_out: its stdout comes back
 * through a pipe, else /dev/null. stderr: /dev/null unless BENCH_VERBOSE. */
static child spawn(char *const argv[], int cpu, int want_out) {
  child c = {-1, -1};
  int p[2] = {-1, -1};
  if (want_out && pipe(p) != 0) return c;
  pid_t pid = fork();
  if (pid < 0) return c;
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (cpu >= 0) bench_pin(cpu);
    else if (bench_pinning()) { /* undo the bench thread's own pin */
      cpu_set_t all;
      CPU_ZERO(&all);
      for (int i = 0; i < CPU_SETSIZE && i < 1024; i++) CPU_SET(i, &all);
      sched_setaffinity(0, sizeof(all), &all);
    }
    int dn = open("/dev/null", O_RDWR);
    dup2(dn, 0);
    if (want_out) {
      dup2(p[1], 1);
      close(p[0]);
      close(p[1]);
    } else dup2(dn, 1);
    if (getenv("BENCH_VERBOSE") == NULL) dup2(dn, 2);
    execv(argv[0], argv);
    _exit(127);
  }
  if (want_out) {
    close(p[1]);
    c.out = p[0];
  }
  c.pid = pid;
  return c;
}

/* Reads the child's stdout until EOF or the deadline into buf (NUL-terminated), then reaps it
 * (killed at the deadline). Returns its exit status, or -1 if killed / failed. */
static int finish(child *c, char *buf, size_t cap, int64_t deadline_ns, struct rusage *ru) {
  size_t have = 0;
  if (buf) buf[0] = 0;
  if (c->out >= 0) {
    for (;;) {
      int64_t left = (deadline_ns - bench_now_ns()) / 1000000;
      if (left <= 0) break;
      struct pollfd pf = {c->out, POLLIN, 0};
      int r = poll(&pf, 1, (int)(left > 1000 ? 1000 : left));
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) continue;
      char tmp[512];
      ssize_t n = read(c->out, tmp, sizeof(tmp));
      if (n <= 0) break;
      if (buf && have + 1 < cap) {
        size_t k = (size_t)n < cap - 1 - have ? (size_t)n : cap - 1 - have;
        memcpy(buf + have, tmp, k);
        have += k;
        buf[have] = 0;
      }
    }
    close(c->out);
    c->out = -1;
  }
  int st = 0, killed = 0;
  for (;;) {
    pid_t r = wait4(c->pid, &st, WNOHANG, ru);
    if (r == c->pid) break;
    if (r < 0 && errno != EINTR) return -1;
    if (bench_now_ns() > deadline_ns && !killed) {
      kill(c->pid, SIGKILL);
      killed = 1;
    }
    bench_sleep_us(2000);
  }
  c->pid = -1;
  if (killed || !WIFEXITED(st)) return -1;
  return WEXITSTATUS(st);
}

static void stop(child *c) {
  if (c->pid > 0) {
    kill(c->pid, SIGKILL);
    waitpid(c->pid, NULL, 0);
  }
  if (c->out >= 0) close(c->out);
  c->pid = -1;
  c->out = -1;
}

static int wait_listen(child *c, uint16_t port, double secs) {
  int64_t deadline = bench_now_ns() + (int64_t)(secs * 1e9);
  while (bench_now_ns() < deadline) {
    if (port_listening(port)) return 0;
    if (waitpid(c->pid, NULL, WNOHANG) == c->pid) {
      c->pid = -1;
      return -1;
    }
    bench_sleep_us(2000);
  }
  return -1;
}

/* ---- what the section needs */

typedef struct dbg_env {
  const char *minivm, *progdir, *java, *classdir;
  int have_minivm, have_jdi;
  char spin[4096], bploop[4096], idle[4096];
} dbg_env;

static char *agent(uint16_t port, int suspend) {
  return (char *)bench_fmt("-agentlib:jdwp=transport=dt_socket,server=y,suspend=%c,address=127.0.0.1:%u",
                           suspend ? 'y' : 'n', (unsigned)port);
}

/* The JDI client of set-ups (d) and (e) on cpu: java -Xint JdiBench MODE 127.0.0.1 PORT ARGS... */
static child jdi_start(const dbg_env *e, int cpu, const char *mode, uint16_t port, const char *a1, const char *a2,
                       const char *a3) {
  char portstr[8];
  snprintf(portstr, sizeof(portstr), "%u", (unsigned)port);
  char *argv[16];
  int n = 0;
  argv[n++] = (char *)e->java;
  argv[n++] = "-XX:+UseSerialGC";
  argv[n++] = "-Xshare:auto";
  /* idle and cold: no JIT, so the client's JVM has no compiler threads still busy on the other
   * CPU while the measured loop runs (on this VM a busy sibling vCPU slows CPU 0) */
  argv[n++] = "-Xint";
  argv[n++] = "-cp";
  argv[n++] = (char *)e->classdir;
  argv[n++] = "JdiBench";
  argv[n++] = (char *)mode;
  argv[n++] = "127.0.0.1";
  argv[n++] = portstr;
  if (a1) argv[n++] = (char *)a1;
  if (a2) argv[n++] = (char *)a2;
  if (a3) argv[n++] = (char *)a3;
  argv[n] = NULL;
  return spawn(argv, cpu, 1);
}

/* "RESULT mode x y" -> x (and y); -1 on anything else (the line is noted). */
static double jdi_result(const char *out, const char *mode, double *second) {
  const char *p = strstr(out, "RESULT ");
  double x = -1, y = -1;
  char m[16];
  if (p == NULL || sscanf(p, "RESULT %15s %lf %lf", m, &x, &y) < 2 || strcmp(m, mode) != 0) {
    char line[160];
    snprintf(line, sizeof(line), "%.159s", out);
    for (char *q = line; *q; q++)
      if (*q == '\n' || *q == '\t') *q = ' ';
    bench_note("JdiBench %s failed: %s", mode, line[0] ? line : "(no output)");
    return -1;
  }
  if (second) *second = y;
  return x;
}

/* ---- 1. the cost of debugging support */

enum { SET_A, SET_B, SET_C, SET_D, SET_E, SET_F, NSETS };
static const char *set_name[NSETS] = {
    "(a) minivm without JDWP",
    "(b) JDWP listening (suspend=n), no peer",
    "(c) DDM-only peer (suspend=n; handshake, HELO, FEAT; reading)",
    "(d) JDI debugger attached, no requests",
    "(e) JDI breakpoint in a method that never runs",
    "(f) JDI access + modification watchpoints on Spin.sink (the loop updates Spin.count)",
};

typedef struct ddm_peer {
  uint16_t port;
  int cpu;
  int ok;
  pthread_t th;
} ddm_peer;

static void *ddm_peer_main(void *arg) {
  ddm_peer *p = arg;
  if (p->cpu >= 0) bench_pin(p->cpu);
  jc c;
  jc_init(&c);
  uint8_t pkt[64];
  if (jc_open(&c, p->port, bench_now_ns() + 10000000000LL) == 0 &&
      jc_request(&c, pkt, jc_build_ddm(pkt, 0x40000001u, FOURCC('H', 'E', 'L', 'O'), "\0\0\0\1", 4), NULL) != 0 &&
      jc_request(&c, pkt, jc_build_ddm(pkt, 0x40000002u, FOURCC('F', 'E', 'A', 'T'), NULL, 0), NULL) != 0) {
    p->ok = 1;
    uint32_t len;
    while (jc_next(&c, &len) != NULL) { /* whatever the VM sends, until it exits */
    }
  }
  jc_close(&c);
  return NULL;
}

/* The loop's own CPU time, read from outside: a sampler thread reads, every 2 ms, the main
 * thread's state (/proc/PID/task/PID/stat) and the on-CPU nanoseconds of every thread of the VM
 * (/proc/PID/task/TID/schedstat, exact). spin.mvm sleeps before and after its loop, so the loop
 * is the longest stretch of samples with main runnable, and the samples on either side of it
 * (main asleep, its counter still) bound it exactly: startup, the attach and the exit are
 * outside, the JDWP thread's work during the loop is inside. */
typedef struct sample {
  char state;   /* main thread: R, S, ... */
  int64_t main; /* main thread's CPU ns */
  int64_t all;  /* every thread's CPU ns */
} sample;

typedef struct sampler {
  pid_t pid;
  int cpu;
  atomic_int stop;
  sample *v;
  size_t n, cap;
  pthread_t th;
} sampler;

static int64_t schedstat_ns(const char *path) {
  FILE *f = fopen(path, "r");
  if (f == NULL) return -1;
  long long ns = -1;
  if (fscanf(f, "%lld", &ns) != 1) ns = -1;
  fclose(f);
  return ns;
}

static void *sampler_main(void *arg) {
  sampler *sp = arg;
  if (sp->cpu >= 0) bench_pin(sp->cpu);
  char path[96], buf[512];
  while (!atomic_load(&sp->stop) && sp->n < sp->cap) {
    sample x = {0, 0, 0};
    snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)sp->pid, (int)sp->pid);
    FILE *f = fopen(path, "r");
    if (f != NULL) {
      size_t k = fread(buf, 1, sizeof(buf) - 1, f);
      buf[k] = 0;
      fclose(f);
      const char *r = strrchr(buf, ')');
      if (r != NULL && r[1] == ' ') x.state = r[2];
    }
    snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", (int)sp->pid, (int)sp->pid);
    x.main = schedstat_ns(path);
    snprintf(path, sizeof(path), "/proc/%d/task", (int)sp->pid);
    DIR *d = opendir(path);
    if (d != NULL) {
      struct dirent *de;
      while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] < '0' || de->d_name[0] > '9') continue;
        snprintf(path, sizeof(path), "/proc/%d/task/%.16s/schedstat", (int)sp->pid, de->d_name);
        int64_t v = schedstat_ns(path);
        if (v > 0) x.all += v;
      }
      closedir(d);
    }
    if (x.state != 0 && x.main >= 0) sp->v[sp->n++] = x;
    bench_sleep_us(2000);
  }
  return NULL;
}

/* The loop's CPU ns (main thread and all threads) from the samples; -1 if no clean bracket. */
static int loop_cpu(const sampler *sp, double *main_ms, double *all_ms) {
  size_t best = 0, best_len = 0;
  for (size_t i = 0; i < sp->n;) {
    if (sp->v[i].state != 'R') {
      i++;
      continue;
    }
    size_t j = i;
    while (j < sp->n && sp->v[j].state == 'R') j++;
    if (j - i > best_len) best = i, best_len = j - i;
    i = j;
  }
  if (best_len < 10 || best == 0 || best + best_len >= sp->n) return -1;
  const sample *a = &sp->v[best - 1], *b = &sp->v[best + best_len];
  *main_ms = (double)(b->main - a->main) / 1e6;
  *all_ms = (double)(b->all - a->all) / 1e6;
  return 0;
}

/* One run of spin.mvm in set-up s: the loop's ms, or -1. *cpu_ms: the process's CPU time. */
static double spin_once(const dbg_env *e, int s, long iters, int client_cpu, double *cpu_ms, double *loop_main,
                        double *loop_all) {
  uint16_t port = free_port();
  char n[32];
  snprintf(n, sizeof(n), "%ld", iters);
  char *argv[6];
  int k = 0;
  argv[k++] = (char *)e->minivm;
  /* suspend=y holds main until a debugger resumes it (VM_START, SUSPEND_ALL), so the DDM peer
   * connects to a suspend=n VM during the program's 300 ms sleep, before the loop starts. */
  if (s != SET_A) argv[k++] = agent(port, s >= SET_D);
  argv[k++] = (char *)e->spin;
  argv[k++] = n;
  argv[k] = NULL;
  int64_t deadline = bench_now_ns() + 30000000000LL;
  child vm = spawn(argv, bench_pinning() ? BENCH_CPU_SERVER : -1, 1);
  if (vm.pid < 0) return -1;
  ddm_peer peer = {port, client_cpu, 0, 0};
  child cl = {-1, -1};
  int started_peer = 0;
  if (s >= SET_C) {
    if (wait_listen(&vm, port, 10) != 0) {
      bench_note("dbg: minivm never listened on %u (set-up %c)", (unsigned)port, 'a' + s);
      stop(&vm);
      return -1;
    }
    if (s == SET_C) started_peer = pthread_create(&peer.th, NULL, ddm_peer_main, &peer) == 0;
    else if (s == SET_D) cl = jdi_start(e, client_cpu, "idle", port, "60", NULL, NULL);
    else if (s == SET_E) cl = jdi_start(e, client_cpu, "cold", port, "Spin", "cold", "60");
    else cl = jdi_start(e, client_cpu, "watch", port, "Spin", "sink", "60");
  }
  sampler sp = {vm.pid, client_cpu, 0, NULL, 0, 16384, 0};
  sp.v = calloc(sp.cap, sizeof(*sp.v));
  int sampling = sp.v != NULL && pthread_create(&sp.th, NULL, sampler_main, &sp) == 0;
  char out[256];
  struct rusage ru;
  memset(&ru, 0, sizeof(ru));
  /* Reaped only once its output ended: the sampler reads the samples of a live process. */
  int rc = finish(&vm, out, sizeof(out), deadline, &ru);
  if (sampling) {
    atomic_store(&sp.stop, 1);
    pthread_join(sp.th, NULL);
  }
  double lmain = -1, lall = -1;
  if (!sampling || loop_cpu(&sp, &lmain, &lall) != 0) lmain = lall = -1;
  free(sp.v);
  if (started_peer) pthread_join(peer.th, NULL);
  if (cl.pid > 0) {
    char cout[512];
    finish(&cl, cout, sizeof(cout), bench_now_ns() + 20000000000LL, NULL);
    if (strstr(cout, "RESULT ") == NULL) jdi_result(cout, s == SET_D ? "idle" : s == SET_E ? "cold" : "watch", NULL);
  }
  double ms = -1;
  long cks = 0;
  const char *p = strstr(out, "SPIN ");
  if (rc != 0 || p == NULL || sscanf(p, "SPIN %lf %ld", &ms, &cks) != 2) {
    bench_note("dbg: spin.mvm in set-up %c failed (exit %d): %.60s", 'a' + s, rc, out);
    return -1;
  }
  if (s == SET_C && !peer.ok) bench_note("dbg: the DDM peer of set-up (c) did not finish its HELO/FEAT");
  *cpu_ms = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
            (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
  *loop_main = lmain;
  *loop_all = lall;
  return ms;
}

enum { M_LOOP_ALL, M_LOOP_MAIN, M_PROC, M_WALL, NMETRICS };
static const char *metric_name[NMETRICS] = {"loop CPU, all threads", "loop CPU, main thread",
                                            "process CPU (start-up, attach and exit too)", "loop wall time"};

static void cost_section(const dbg_env *e, double scale) {
  const char *G = "Debugging cost, CPU-bound minivm";
  long iters = (long)(SPIN_ITERS * scale);
  int client = bench_pinning() ? BENCH_CPU_CLIENT : -1;
  double v[NMETRICS][NSETS][REPS];
  int n[NMETRICS][NSETS];
  memset(n, 0, sizeof(n));
  int sets = e->have_jdi ? NSETS : SET_D;
  for (int r = 0; r < REPS; r++)
    for (int i = 0; i < sets; i++) {
      int s = (i + r) % sets; /* rotate the order each round */
      double x[NMETRICS] = {-1, -1, -1, -1};
      x[M_WALL] = spin_once(e, s, iters, client, &x[M_PROC], &x[M_LOOP_MAIN], &x[M_LOOP_ALL]);
      if (x[M_WALL] <= 0) continue;
      for (int m = 0; m < NMETRICS; m++)
        if (x[m] > 0) v[m][s][n[m][s]++] = x[m];
    }
  /* The figure: CPU time of the whole VM process during the loop, best round. On a shared 2-CPU
   * VM the loop's wall time also counts other tenants' turns on CPU 0 (it spread by 40% between
   * rounds at load 5); CPU time does not, and the bracket keeps the one-off attach out of it. */
  double best[NMETRICS][NSETS], med[NMETRICS][NSETS];
  for (int m = 0; m < NMETRICS; m++)
    for (int s = 0; s < NSETS; s++) {
      best[m][s] = med[m][s] = -1;
      if (n[m][s] == 0) continue;
      double tmp[REPS];
      memcpy(tmp, v[m][s], sizeof(double) * (size_t)n[m][s]);
      bench_sort(tmp, (size_t)n[m][s]);
      best[m][s] = tmp[0];
      med[m][s] = bench_pct(tmp, (size_t)n[m][s], 50);
    }
  if (best[M_LOOP_ALL][SET_A] <= 0) {
    bench_note("dbg: no run of set-up (a) gave a loop CPU time; cost rows skipped");
    return;
  }
  for (int m = 0; m < NMETRICS; m++) {
    char line[400];
    size_t k = (size_t)snprintf(line, sizeof(line), "dbg cost, %s, best (median) ms and ratio to (a):", metric_name[m]);
    for (int s = 0; s < NSETS && k < sizeof(line); s++)
      if (best[m][s] > 0 && best[m][SET_A] > 0)
        k += (size_t)snprintf(line + k, sizeof(line) - k, " %c %.1f (%.1f) %.3fx;", 'a' + s, best[m][s], med[m][s],
                              best[m][s] / best[m][SET_A]);
    bench_note("%s", line);
  }
  char ref[96];
  snprintf(ref, sizeof(ref), "%s, best of %d", set_name[SET_A], n[M_LOOP_ALL][SET_A]);
  char refv[32];
  snprintf(refv, sizeof(refv), "%.1f ms CPU", best[M_LOOP_ALL][SET_A]);
  for (int s = SET_B; s < NSETS; s++) {
    const char *fig = bench_fmt("%s: CPU time of the loop (all threads)", set_name[s]);
    double x = best[M_LOOP_ALL][s], a = best[M_LOOP_ALL][SET_A];
    if (s == SET_F) {
      /* a watchpoint on an unrelated field against the same debugger without one */
      double d = best[M_LOOP_ALL][SET_D];
      char dref[96], dv[32];
      snprintf(dref, sizeof(dref), "%s, best of %d", set_name[SET_D], n[M_LOOP_ALL][SET_D]);
      snprintf(dv, sizeof(dv), "%.1f ms CPU", d);
      if (x < 0 || d < 0)
        bench_row(G, fig, !e->have_jdi ? "n/a (no java)" : "n/a (no run completed)", dref, dv, -1, "<= 1.05x (d)", "n/a");
      else
        bench_row(G, fig, bench_fmt("%.1f ms CPU", x), dref, dv, x / d, "<= 1.05x (d)", bench_status(x <= 1.05 * d));
      continue;
    }
    if (x < 0)
      bench_row(G, fig, s >= SET_D && !e->have_jdi ? "n/a (no java)" : "n/a (no run completed)", ref, refv, -1,
                "<= 1.02x (a)", "n/a");
    else
      bench_row(G, fig, bench_fmt("%.1f ms CPU", x), ref, refv, x / a, "<= 1.02x (a)", bench_status(x <= 1.02 * a));
  }
  bench_note("dbg cost: spin.mvm, %ld iterations of a static call + 5 arithmetic ops (~%.0f ms); %d rounds, each "
             "set-up once per round in a rotated order; a row is the set-up's best round against (a)'s best; the "
             "loop is bracketed by the main thread's sleeps before and after it (schedstat of every thread, 2 ms "
             "samples)",
             iters, best[M_WALL][SET_A], REPS);
}

/* ---- 2-4. round trips and attach */

typedef enum { VM_MINIVM, VM_HOTSPOT } vm_kind;

/* Starts the target VM (suspend=n) on the server CPU and waits until it listens. */
static child target_start(const dbg_env *e, vm_kind k, const char *what, uint16_t *port) {
  *port = free_port();
  char *argv[10];
  int n = 0;
  if (k == VM_MINIVM) {
    argv[n++] = (char *)e->minivm;
    argv[n++] = agent(*port, 0);
    argv[n++] = (char *)(strcmp(what, "BpLoop") == 0 ? e->bploop : e->idle);
  } else {
    argv[n++] = (char *)e->java;
    argv[n++] = "-Xshare:auto";
    argv[n++] = agent(*port, 0);
    argv[n++] = "-cp";
    argv[n++] = (char *)e->classdir;
    argv[n++] = (char *)what;
  }
  argv[n] = NULL;
  child c = spawn(argv, bench_pinning() ? BENCH_CPU_SERVER : -1, 0);
  if (c.pid > 0 && wait_listen(&c, *port, 20) != 0) {
    bench_note("dbg: %s (%s) never listened", k == VM_MINIVM ? "minivm" : "java", what);
    stop(&c);
  }
  return c;
}

/* One JdiBench run against minivm and HotSpot side by side (fresh targets, both on the server
 * CPU; the client takes turns between them). out[0..2]: minivm's three numbers, out[3..5]:
 * HotSpot's, -1 where a VM failed (its FAIL line goes to the notes). Returns 0 if the client
 * printed its RESULT line. */
static int jdi_pair(const dbg_env *e, const char *target, int cpu, const char *mode, const char *a1, const char *a2,
                    const char *a3, double out[6]) {
  for (int i = 0; i < 6; i++) out[i] = -1;
  uint16_t pm = 0, ph = 0;
  child vm = target_start(e, VM_MINIVM, target, &pm);
  child hs = target_start(e, VM_HOTSPOT, target, &ph);
  char ports[16];
  if (vm.pid > 0 && hs.pid > 0) snprintf(ports, sizeof(ports), "%u,%u", (unsigned)pm, (unsigned)ph);
  else snprintf(ports, sizeof(ports), "%u", (unsigned)(vm.pid > 0 ? pm : ph));
  int rc = -1;
  if (vm.pid > 0 || hs.pid > 0) {
    char *argv[16];
    int n = 0;
    argv[n++] = (char *)e->java;
    argv[n++] = "-XX:+UseSerialGC";
    argv[n++] = "-Xshare:auto";
    argv[n++] = "-cp";
    argv[n++] = (char *)e->classdir;
    argv[n++] = "JdiBench";
    argv[n++] = (char *)mode;
    argv[n++] = "127.0.0.1";
    argv[n++] = ports;
    if (a1) argv[n++] = (char *)a1;
    if (a2) argv[n++] = (char *)a2;
    if (a3) argv[n++] = (char *)a3;
    argv[n] = NULL;
    child cl = spawn(argv, cpu, 1);
    char buf[2048];
    finish(&cl, buf, sizeof(buf), bench_now_ns() + 90000000000LL, NULL);
    for (char *line = strtok(buf, "\n"); line != NULL; line = strtok(NULL, "\n")) {
      if (strncmp(line, "FAIL ", 5) == 0 || strncmp(line, "ERROR ", 6) == 0) {
        unsigned p = 0;
        sscanf(line, "FAIL %u", &p);
        bench_note("JdiBench %s, %s: %.200s", mode, p == pm ? "minivm" : p == ph ? "HotSpot" : "client", line);
      }
      double v[6] = {-1, -1, -1, -1, -1, -1};
      char m[16];
      int k = sscanf(line, "RESULT %15s %lf %lf %lf %lf %lf %lf", m, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5]);
      if (k >= 4 && strcmp(m, mode) == 0) {
        rc = 0;
        if (vm.pid > 0 && hs.pid > 0) memcpy(out, v, sizeof(v));
        else memcpy(out + (vm.pid > 0 ? 0 : 3), v, 3 * sizeof(double));
      }
    }
    if (rc != 0) bench_note("JdiBench %s printed no RESULT line", mode);
  }
  stop(&vm);
  stop(&hs);
  return rc;
}

static const char *rate_str(double r) {
  if (r >= 1e6) return bench_fmt("%.2f M/s", r / 1e6);
  if (r >= 1e4) return bench_fmt("%.1f k/s", r / 1e3);
  return bench_fmt("%.0f /s", r);
}

static void roundtrip_placement(const dbg_env *e, double scale, int cpu, const char *where, int with_keep) {
  char secs[16];
  snprintf(secs, sizeof(secs), "%.2f", 2 * RT_SECS * scale); /* both VMs share it, in turns */
  const char *ref = "OpenJDK 17 HotSpot, BpLoop.java, same client";
  struct {
    const char *mode, *group, *fig, *unit;
    int target;
  } m[4] = {{"bp", "Breakpoint", "JDI breakpoint hits/s (resume at each hit of BpLoop:10)", "hits", 1},
            {"step", "Single-step", "JDI line steps/s (jdb `next`: count-1 step over, resume, event, delete)", "steps",
             1},
            {"stepkeep", "Single-step",
             "JDI line steps/s, one step request kept (event + resume per step, no request set-up)", "steps", 0},
            {"methods", "Method entry/exit",
             "JDI method entry + exit events/s (class filter BpLoop, its thread; resume at each: tick() in and out)",
             "events", 0}};
  for (int i = 0; i < 4; i++) {
    if (i == 2 && !with_keep) continue;
    char group[96];
    snprintf(group, sizeof(group), "%s round trip, %s", m[i].group, where);
    double v[6];
    jdi_pair(e, "BpLoop", cpu, m[i].mode, "BpLoop", "10", secs, v);
    double mv = v[0], hs = v[3];
    int both = mv > 0 && hs > 0;
    bench_row(group, m[i].fig, mv > 0 ? rate_str(mv) : "n/a (failed)", ref, hs > 0 ? rate_str(hs) : "n/a (failed)",
              both ? mv / hs : -1, m[i].target ? ">= 2x HotSpot" : "-",
              !both ? "n/a" : m[i].target ? bench_status(mv >= 2 * hs) : "info");
    if (m[i].target && v[2] > 0)
      bench_row(group, "bound: 1 / (the JDI client's own CPU per event, with minivm)", rate_str(1e6 / v[2]), ref,
                hs > 0 ? rate_str(hs) : "n/a (failed)", hs > 0 ? 1e6 / v[2] / hs : -1, "-", hs > 0 ? "info" : "n/a");
    bench_note("dbg %s, %s: %.0f %s on minivm, %.0f on HotSpot, taking 0.25 s turns for %s s (after 0.5 s of "
               "warm-up on each); the JDI client's own CPU per event (all its threads): %.0f us with minivm, %.0f us "
               "with HotSpot",
               m[i].mode, where, v[1], m[i].unit, v[4], secs, v[2], v[5]);
  }
}

/* ---- raw JDWP client: the breakpoint round trip without JDI */

/* The same loop as JdiBench bp, from a raw socket in this process: set the breakpoint at
 * BpLoop:10 with IDSizes, ClassesBySignature, Methods, LineTable and EventRequest.Set, then
 * answer each BREAKPOINT event with ThreadReference.Resume at once (the reply is not waited
 * for). What JDI adds on the client (its reader thread, event queue and a blocking resume) is
 * gone, so the figure is bound by the VM side and the wake-ups. */
typedef struct raw {
  jc c;
  uint32_t id, idsz;
  uint8_t thread[8];
  int pending; /* its thread is parked at the breakpoint, to be resumed */
  long hits;
  int64_t ns;
  const char *error;
} raw;

static size_t raw_cmd(raw *r, uint8_t *out, uint8_t set, uint8_t cmd, const uint8_t *body, size_t n) {
  put_be32(out, (uint32_t)(JDWP_HEADER + n));
  put_be32(out + 4, ++r->id);
  out[8] = 0;
  out[9] = set;
  out[10] = cmd;
  if (n) memcpy(out + JDWP_HEADER, body, n);
  return JDWP_HEADER + n;
}

/* Sends a command, returns its reply's data (NULL on error; *n its length). Events that come
 * first are left alone (none is expected before the breakpoint exists). */
static const uint8_t *raw_rq(raw *r, uint8_t set, uint8_t cmd, const uint8_t *body, size_t n, uint32_t *rn) {
  uint8_t pkt[256];
  size_t k = raw_cmd(r, pkt, set, cmd, body, n);
  if (jc_write_all(r->c.fd, pkt, k) != 0) return NULL;
  for (;;) {
    uint32_t len;
    const uint8_t *p = jc_next(&r->c, &len);
    if (p == NULL) return NULL;
    if ((p[8] & JDWP_FLAG_REPLY) && be32(p + 4) == r->id) {
      if (p[9] != 0 || p[10] != 0) return NULL; /* error code */
      *rn = len - JDWP_HEADER;
      return p + JDWP_HEADER;
    }
  }
}

static uint64_t get_id(const uint8_t *p, uint32_t sz) {
  uint64_t v = 0;
  for (uint32_t i = 0; i < sz; i++) v = v << 8 | p[i];
  return v;
}

static size_t put_id(uint8_t *p, uint64_t v, uint32_t sz) {
  for (uint32_t i = 0; i < sz; i++) p[i] = (uint8_t)(v >> (8 * (sz - 1 - i)));
  return sz;
}

static int raw_setup(raw *r, uint16_t port) {
  jc_init(&r->c);
  r->id = 0;
  if (jc_open(&r->c, port, bench_now_ns() + 5000000000LL) != 0) return r->error = "connect", -1;
  struct timeval tv = {3, 0}; /* a VM that stops answering fails the figure instead of hanging it */
  setsockopt(r->c.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  uint32_t n;
  const uint8_t *p = raw_rq(r, 1, 7, NULL, 0, &n); /* IDSizes */
  if (p == NULL || n < 20) return r->error = "IDSizes", -1;
  uint32_t fsz = be32(p), msz = be32(p + 4), osz = be32(p + 8), rsz = be32(p + 12);
  if (msz > 8 || osz > 8 || rsz > 8 || fsz > 8) return r->error = "ID sizes over 8", -1;
  r->idsz = osz;
  uint8_t b[128];
  static const char sig[] = "LBpLoop;";
  put_be32(b, sizeof(sig) - 1);
  memcpy(b + 4, sig, sizeof(sig) - 1);
  uint64_t cls = 0;
  for (int64_t end = bench_now_ns() + 5000000000LL; cls == 0 && bench_now_ns() < end;) {
    p = raw_rq(r, 1, 2, b, 4 + sizeof(sig) - 1, &n); /* ClassesBySignature */
    if (p == NULL) return r->error = "ClassesBySignature", -1;
    if (be32(p) > 0) cls = get_id(p + 5, rsz);
    else bench_sleep_us(10000); /* HotSpot listens before it loads the main class */
  }
  if (cls == 0) return r->error = "BpLoop never loaded", -1;
  size_t k = put_id(b, cls, rsz);
  p = raw_rq(r, 2, 5, b, k, &n); /* ReferenceType.Methods */
  if (p == NULL) return r->error = "Methods", -1;
  uint64_t meth = 0;
  int found = 0;
  const uint8_t *q = p + 4, *end = p + n;
  for (uint32_t i = 0, cnt = be32(p); i < cnt && q + msz + 4 <= end; i++) {
    uint64_t id = get_id(q, msz);
    uint32_t nl = be32(q + msz);
    const uint8_t *name = q + msz + 4;
    if (name + nl + 4 > end) break;
    uint32_t sl = be32(name + nl);
    if (nl == 4 && memcmp(name, "main", 4) == 0) meth = id, found = 1;
    q = name + nl + 4 + sl + 4;
  }
  if (!found) return r->error = "no main", -1;
  k = put_id(b, cls, rsz);
  k += put_id(b + k, meth, msz);
  p = raw_rq(r, 6, 1, b, k, &n); /* Method.LineTable */
  if (p == NULL || n < 20) return r->error = "LineTable", -1;
  int64_t index = -1;
  for (uint32_t i = 0, cnt = be32(p + 16); i < cnt && 20 + 12 * (i + 1) <= n; i++)
    if (be32(p + 20 + 12 * i + 8) == 10) {
      index = (int64_t)get_id(p + 20 + 12 * i, 8);
      break;
    }
  if (index < 0) return r->error = "no code at line 10", -1;
  uint8_t *w = b;
  *w++ = 2; /* BREAKPOINT */
  *w++ = 1; /* SUSPEND_EVENT_THREAD */
  put_be32(w, 1);
  w += 4;
  *w++ = 7; /* LocationOnly */
  *w++ = 1; /* a class */
  w += put_id(w, cls, rsz);
  w += put_id(w, meth, msz);
  w += put_id(w, (uint64_t)index, 8);
  if (raw_rq(r, 15, 1, b, (size_t)(w - b), &n) == NULL) return r->error = "EventRequest.Set", -1;
  return 0;
}

/* Runs r's loop for one slice: resumes its parked thread, answers every hit until stop_ns, and
 * leaves the last one parked. */
static void raw_slice(raw *r, int64_t stop_ns, int count) {
  uint8_t pkt[64];
  int64_t t0 = bench_now_ns();
  if (r->pending) {
    size_t k = raw_cmd(r, pkt, 11, 3, r->thread, r->idsz);
    if (jc_write_all(r->c.fd, pkt, k) != 0) {
      r->error = "write";
      return;
    }
    r->pending = 0;
  }
  for (;;) {
    uint32_t len;
    const uint8_t *p = jc_next(&r->c, &len);
    if (p == NULL) {
      r->error = "no event within 3 s";
      return;
    }
    if (p[8] & JDWP_FLAG_REPLY) {
      if (p[9] != 0 || p[10] != 0) {
        r->error = "error reply";
        return;
      }
      continue;
    }
    /* Event.Composite: policy, count, then kind, requestID, thread, ... */
    if (p[9] != 64 || p[10] != 100 || len < JDWP_HEADER + 10 + r->idsz || p[JDWP_HEADER + 5] != 2) continue;
    memcpy(r->thread, p + JDWP_HEADER + 10, r->idsz);
    if (count) r->hits++;
    int64_t now = bench_now_ns();
    if (now >= stop_ns) {
      r->pending = 1;
      if (count) r->ns += now - t0;
      return;
    }
    size_t k = raw_cmd(r, pkt, 11, 3, r->thread, r->idsz);
    if (jc_write_all(r->c.fd, pkt, k) != 0) {
      r->error = "write";
      return;
    }
  }
}

static void raw_placement(const dbg_env *e, double scale, int cpu, const char *where) {
  uint16_t port[2];
  child vm[2];
  raw r[2];
  memset(r, 0, sizeof(r));
  vm[0] = target_start(e, VM_MINIVM, "BpLoop", &port[0]);
  vm[1] = target_start(e, VM_HOTSPOT, "BpLoop", &port[1]);
  if (cpu >= 0) bench_pin(cpu);
  for (int i = 0; i < 2; i++) {
    if (vm[i].pid < 0) r[i].error = "VM did not start";
    else if (raw_setup(&r[i], port[i]) == 0) raw_slice(&r[i], bench_now_ns() + 300000000LL, 0); /* warm-up */
  }
  int64_t end = bench_now_ns() + (int64_t)(2 * RT_SECS * scale * 1e9);
  while (bench_now_ns() < end && (r[0].error == NULL || r[1].error == NULL))
    for (int i = 0; i < 2; i++)
      if (r[i].error == NULL) raw_slice(&r[i], bench_now_ns() + 250000000LL, 1);
  if (bench_pinning()) bench_pin(BENCH_CPU_CLIENT);
  double rate[2];
  for (int i = 0; i < 2; i++) {
    rate[i] = r[i].error == NULL && r[i].ns > 0 ? (double)r[i].hits / ((double)r[i].ns / 1e9) : -1;
    if (r[i].error) bench_note("dbg raw bp, %s, %s: %s", where, i ? "HotSpot" : "minivm", r[i].error);
    jc_close(&r[i].c);
    stop(&vm[i]);
  }
  int both = rate[0] > 0 && rate[1] > 0;
  bench_row(bench_fmt("Breakpoint round trip, %s", where), "raw JDWP client (no JDI): breakpoint hits/s",
            rate[0] > 0 ? rate_str(rate[0]) : "n/a (failed)", "OpenJDK 17 HotSpot, BpLoop.java, same raw client",
            rate[1] > 0 ? rate_str(rate[1]) : "n/a (failed)", both ? rate[0] / rate[1] : -1, "-", both ? "info" : "n/a");
  bench_note("dbg raw bp, %s: %ld hits on minivm, %ld on HotSpot in 0.25 s turns (mean round trip %.1f / %.1f us)",
             where, r[0].hits, r[1].hits, rate[0] > 0 ? 1e6 / rate[0] : 0, rate[1] > 0 ? 1e6 / rate[1] : 0);
}

/* ---- interleaved traffic: DDM round trips on the connection a stepping debugger uses */

/* One HELO (199/1) round trip on r's connection, answering every debugger event that arrives
 * meanwhile with ThreadReference.Resume (the stepping debugger). Returns the round trip in us,
 * or -1. */
static double mix_helo(raw *r) {
  uint8_t body[12], pkt[64];
  put_be32(body, 0x48454c4f); /* HELO */
  put_be32(body + 4, 4);
  put_be32(body + 8, 1);
  size_t k = raw_cmd(r, pkt, 199, 1, body, sizeof(body));
  uint32_t want = r->id;
  int64_t t0 = bench_now_ns();
  if (jc_write_all(r->c.fd, pkt, k) != 0) return r->error = "write", -1;
  for (;;) {
    uint32_t len;
    const uint8_t *p = jc_next(&r->c, &len);
    if (p == NULL) return r->error = "no reply within 3 s", -1;
    if (p[8] & JDWP_FLAG_REPLY) {
      if (be32(p + 4) == want) return (double)(bench_now_ns() - t0) / 1e3;
      continue; /* a Resume's reply */
    }
    if (p[9] != 64 || p[10] != 100 || len < JDWP_HEADER + 10 + r->idsz) continue;
    memcpy(r->thread, p + JDWP_HEADER + 10, r->idsz);
    r->hits++;
    size_t n = raw_cmd(r, pkt, 11, 3, r->thread, r->idsz);
    if (jc_write_all(r->c.fd, pkt, n) != 0) return r->error = "write", -1;
  }
}

/* With a debugger: from the first breakpoint hit, a SINGLE_STEP request (line, over) on that
 * thread is kept enabled and every event resumed at once, while HELOs go back to back on the same
 * connection; without: the HELOs alone. p50 and p90 of the HELO round trips, in us. */
static int mix_run(const dbg_env *e, int debugger, double secs, double *p50, double *p90, long *steps) {
  uint16_t port;
  child vm = target_start(e, VM_MINIVM, "BpLoop", &port);
  raw r;
  memset(&r, 0, sizeof(r));
  int rc = -1;
  static double lat[200000];
  size_t n = 0;
  if (vm.pid < 0) goto out;
  if (debugger) {
    if (raw_setup(&r, port) != 0) goto out;
    uint32_t len;
    const uint8_t *p;
    do p = jc_next(&r.c, &len);
    while (p != NULL && ((p[8] & JDWP_FLAG_REPLY) || p[9] != 64 || len < JDWP_HEADER + 10 + 8));
    if (p == NULL) {
      r.error = "no breakpoint hit";
      goto out;
    }
    memcpy(r.thread, p + JDWP_HEADER + 10, r.idsz);
    uint8_t b[64], *w = b;
    *w++ = 1; /* SINGLE_STEP */
    *w++ = 1; /* SUSPEND_EVENT_THREAD */
    put_be32(w, 1);
    w += 4;
    *w++ = 10; /* Step */
    memcpy(w, r.thread, r.idsz);
    w += r.idsz;
    put_be32(w, 1); /* LINE */
    put_be32(w + 4, 1); /* OVER */
    w += 8;
    uint32_t rn;
    if (raw_rq(&r, 15, 1, b, (size_t)(w - b), &rn) == NULL) {
      r.error = "EventRequest.Set SINGLE_STEP";
      goto out;
    }
    uint8_t pkt[64];
    size_t k = raw_cmd(&r, pkt, 11, 3, r.thread, r.idsz);
    if (jc_write_all(r.c.fd, pkt, k) != 0) goto out;
  } else {
    jc_init(&r.c);
    if (jc_open(&r.c, port, bench_now_ns() + 5000000000LL) != 0) goto out;
    struct timeval tv = {3, 0};
    setsockopt(r.c.fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    r.idsz = 8;
  }
  for (int64_t warm = bench_now_ns() + 300000000LL; bench_now_ns() < warm;)
    if (mix_helo(&r) < 0) goto out;
  r.hits = 0;
  for (int64_t end = bench_now_ns() + (int64_t)(secs * 1e9); bench_now_ns() < end && n < 200000;) {
    double us = mix_helo(&r);
    if (us < 0) goto out;
    lat[n++] = us;
  }
  bench_sort(lat, n);
  *p50 = bench_pct(lat, n, 50);
  *p90 = bench_pct(lat, n, 90);
  *steps = r.hits;
  rc = n > 0 ? 0 : -1;
out:
  if (r.error) bench_note("dbg interleaved, %s: %s", debugger ? "with a stepping debugger" : "DDM only", r.error);
  jc_close(&r.c);
  if (vm.pid > 0) stop(&vm);
  return rc;
}

static void mix_section(const dbg_env *e, double scale, int cpu, const char *where) {
  if (cpu >= 0) bench_pin(cpu);
  double a50 = -1, a90 = -1, b50 = -1, b90 = -1;
  long steps = 0, none = 0;
  double secs = RT_SECS * scale;
  int okb = mix_run(e, 1, secs, &b50, &b90, &steps);
  int oka = mix_run(e, 0, secs, &a50, &a90, &none);
  if (bench_pinning()) bench_pin(BENCH_CPU_CLIENT);
  bench_row(bench_fmt("Interleaved DDM + JDWP, %s", where),
            "DDM HELO round trip p50 on the connection of a debugger stepping (events resumed at once)",
            okb == 0 ? bench_fmt("%.1f us", b50) : "n/a (failed)", "the same HELOs with no debugger",
            oka == 0 ? bench_fmt("%.1f us", a50) : "n/a (failed)", okb == 0 && oka == 0 ? b50 / a50 : -1, "-",
            okb == 0 && oka == 0 ? "info" : "n/a");
  bench_note("dbg interleaved, %s: HELO round trips p50/p90 %.1f/%.1f us with %ld line steps in %.1f s on the same "
             "connection (minivm bploop.mvm, raw client), %.1f/%.1f us without a debugger",
             where, b50, b90, steps, secs, a50, a90);
}

static void attach_section(const dbg_env *e, int cpu, const char *where) {
  char nstr[8];
  snprintf(nstr, sizeof(nstr), "%d", ATTACH_N);
  double v[6];
  jdi_pair(e, "Idle", cpu, "attach", nstr, NULL, NULL, v);
  double mv = v[0], hs = v[3];
  bench_row(bench_fmt("JDI attach, %s", where), "attach until allThreads() returns, p50",
            mv > 0 ? bench_fmt("%.2f ms", mv) : "n/a (failed)", "OpenJDK 17 HotSpot, Idle.java, same client",
            hs > 0 ? bench_fmt("%.2f ms", hs) : "n/a (failed)", mv > 0 && hs > 0 ? mv / hs : -1, "-",
            mv > 0 && hs > 0 ? "info" : "n/a");
  bench_note("dbg attach, %s: %d attach/allThreads/dispose cycles on each VM, alternating, 50 ms apart; best %.2f ms "
             "minivm, %.2f ms HotSpot",
             where, ATTACH_N, v[1], v[4]);
}

/* ---- the section */

/* "0.52 0.58 0.59" from /proc/loadavg (the 1, 5 and 15 minute load averages). */
static const char *loadavg(void) {
  static char s[64];
  s[0] = 0;
  FILE *f = fopen("/proc/loadavg", "r");
  if (f != NULL) {
    double a, b, c;
    if (fscanf(f, "%lf %lf %lf", &a, &b, &c) == 3) snprintf(s, sizeof(s), "%.2f %.2f %.2f", a, b, c);
    fclose(f);
  }
  return s;
}

void bench_section_dbg(const bench_opts *o) {
  dbg_env e;
  memset(&e, 0, sizeof(e));
  e.minivm = o->minivm;
  e.progdir = o->progdir;
  e.java = o->java;
  e.classdir = o->classdir;
  e.have_minivm = e.minivm && access(e.minivm, X_OK) == 0 && e.progdir != NULL;
  if (e.have_minivm) {
    snprintf(e.spin, sizeof(e.spin), "%s/spin.mvm", e.progdir);
    snprintf(e.bploop, sizeof(e.bploop), "%s/bploop.mvm", e.progdir);
    snprintf(e.idle, sizeof(e.idle), "%s/idle.mvm", e.progdir);
    e.have_minivm = access(e.spin, R_OK) == 0 && access(e.bploop, R_OK) == 0 && access(e.idle, R_OK) == 0;
  }
  if (!e.have_minivm) {
    bench_note("dbg: no minivm or no bench/programs (--minivm, --programs; bench/run.sh passes both): section skipped");
    return;
  }
  char cls[4096];
  snprintf(cls, sizeof(cls), "%s/JdiBench.class", e.classdir ? e.classdir : ".");
  e.have_jdi = e.java && e.classdir && access(e.java, X_OK) == 0 && access(cls, R_OK) == 0;
  snprintf(cls, sizeof(cls), "%s/BpLoop.class", e.classdir ? e.classdir : ".");
  e.have_jdi = e.have_jdi && access(cls, R_OK) == 0;
  if (!e.have_jdi) bench_note("dbg: no java or no JdiBench.class: (d), (e) and the JDI rows are n/a");
  /* This process (the DDM peer's parent, the reaper) stays off the VM's CPU. */
  if (bench_pinning()) bench_pin(BENCH_CPU_CLIENT);

  bench_note("dbg: load average at the start %s (nproc 2; other tenants count)", loadavg());
  cost_section(&e, o->scale);
  bench_note("dbg: load average after the cost runs %s", loadavg());
  if (!e.have_jdi) {
    static const char *const fig[][2] = {
        {"Breakpoint round trip", "JDI breakpoint hits/s (resume at each hit of BpLoop:10)"},
        {"Single-step round trip", "JDI line steps/s (jdb `next`: count-1 step over, resume, event, delete)"}};
    for (int i = 0; i < 2; i++)
      bench_row(fig[i][0], fig[i][1], "n/a (no java)", "OpenJDK 17 HotSpot, BpLoop.java, same client",
                "n/a (no java)", -1, ">= 2x HotSpot", "n/a");
    bench_row("JDI attach", "attach until allThreads() returns, p50", "n/a (no java)",
              "OpenJDK 17 HotSpot, Idle.java, same client", "n/a (no java)", -1, "-", "n/a");
    return;
  }
  if (bench_pinning()) {
    roundtrip_placement(&e, o->scale, BENCH_CPU_CLIENT, "cross-CPU", 1);
    raw_placement(&e, o->scale, BENCH_CPU_CLIENT, "cross-CPU");
    roundtrip_placement(&e, o->scale, BENCH_CPU_SERVER, "same CPU", 0);
    raw_placement(&e, o->scale, BENCH_CPU_SERVER, "same CPU");
    attach_section(&e, BENCH_CPU_CLIENT, "cross-CPU");
    mix_section(&e, o->scale, BENCH_CPU_CLIENT, "cross-CPU");
  } else {
    roundtrip_placement(&e, o->scale, -1, "unpinned", 1);
    raw_placement(&e, o->scale, -1, "unpinned");
    attach_section(&e, -1, "unpinned");
    mix_section(&e, o->scale, -1, "unpinned");
  }
  bench_note("dbg: load average at the end %s", loadavg());
  bench_note("dbg: the VM (minivm or every JVM thread) on CPU %d; the DDM peer and the JDI client (a JVM running "
             "bench/java/JdiBench.java, -XX:+UseSerialGC) on the CPU each group names",
             BENCH_CPU_SERVER);
}
