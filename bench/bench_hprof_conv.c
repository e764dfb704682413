/* SPDX-License-Identifier: Apache-2.0 */
/* The converter of HotSpot's hprof into Android's (src/profile/hprof_conv.c) alone: what a heap
 * dump through libddmcjdwp.so costs beyond HotSpot's own dumper.
 *
 *   ddmc_bench hpconv      converts $BENCH_HPCONV_FILE (a HotSpot hprof), or a dump of DumpProg
 *                          1,000,000 8,192 made here with HotSpotDiagnosticMXBean.dumpHeap (java
 *                          needed), REPS times through the input HPDU and HPDS use (read() into
 *                          the converter's buffer), output discarded
 *
 * Figures: the CPU time of this thread (CLOCK_THREAD_CPUTIME_ID) for the first pass (open) and
 * for the second (every byte read), median of REPS, and the output's MiB over the whole; the
 * reference is dumpHeap's own time for the same heap when the file was made here (HotSpot's
 * dumper runs on one thread, so its wall time is about its CPU time on a quiet machine). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench.h"
#include "profile/hprof.h"

#define REPS 5
#define G "hprof conversion"

/* DumpProg dumps its heap to path; dumpHeap's ms, or -1. */
static double make_file(const bench_opts *o, const char *path) {
  if (o->java == NULL || o->classdir == NULL) return -1;
  char *argv[] = {(char *)o->java, (char *)"-cp", (char *)o->classdir, (char *)"DumpProg", (char *)"1000000",
                  (char *)"8192", (char *)path, NULL};
  bchild vm = bench_spawn(argv);
  char line[128];
  double ms = -1, bytes = -1;
  if (bench_read_line(&vm, "DUMPHEAP ", line, sizeof line, 280) != 0 ||
      sscanf(line, "DUMPHEAP %lf %lf", &ms, &bytes) != 2)
    ms = -1;
  bench_stop(&vm);
  return ms;
}

typedef struct conv_run {
  double pass1_ms, pass2_ms; /* CPU */
  uint64_t out;
} conv_run;

/* One conversion of fd; 0 or -1. */
static int convert_once(int fd, uint8_t *buf, size_t cap, conv_run *r) {
  ddmc__mem mem;
  ddmc__mem_init(&mem, NULL);
  if (lseek(fd, 0, SEEK_SET) != 0) return -1;
  ddmc__prof_hpconv_input in = ddmc__prof_hpfile_input(&fd);
  ddmc__prof_hpconv *c;
  char msg[256];
  uint64_t len = 0;
  int64_t t0 = bench_thread_cpu_ns();
  int rc = ddmc__prof_hpconv_open(&mem, &in, &c, &len, msg, sizeof msg);
  int64_t t1 = bench_thread_cpu_ns();
  if (rc != 0) {
    bench_note("hpconv: %s", msg);
    return -1;
  }
  uint64_t got = 0;
  ssize_t n;
  while ((n = ddmc__prof_hpconv_read(c, buf, cap)) > 0) got += (uint64_t)n;
  int64_t t2 = bench_thread_cpu_ns();
  if (n < 0 || got != len) bench_note("hpconv: %s (%llu of %llu bytes)", ddmc__prof_hpconv_why(c),
                                      (unsigned long long)got, (unsigned long long)len);
  ddmc__prof_hpconv_free(c);
  r->pass1_ms = (double)(t1 - t0) / 1e6;
  r->pass2_ms = (double)(t2 - t1) / 1e6;
  r->out = got;
  return n < 0 || got != len ? -1 : 0;
}

static void rows(int fd, uint64_t in_bytes, double ref_ms) {
  enum { PIECE = 1 << 20 }; /* what HPDU's writer hands it */
  uint8_t *buf = malloc(PIECE);
  double p1[REPS], p2[REPS], all[REPS];
  conv_run r = {0, 0, 0};
  int ok = buf != NULL;
  for (int i = 0; i < REPS && ok; i++) {
    ok = convert_once(fd, buf, PIECE, &r) == 0;
    p1[i] = r.pass1_ms;
    p2[i] = r.pass2_ms;
    all[i] = r.pass1_ms + r.pass2_ms;
  }
  free(buf);
  if (!ok) {
    bench_row(G, "conversion of a HotSpot hprof", "n/a (failed)", "-", "-", -1, "info", "n/a");
    return;
  }
  double m1 = bench_median(p1, REPS), m2 = bench_median(p2, REPS), m = bench_median(all, REPS);
  bench_row(G,
            bench_fmt("conversion CPU of a %.0f MiB HotSpot file: pass 1 / pass 2 / all, median of %d",
                      (double)in_bytes / (1 << 20), REPS),
            bench_fmt("%.1f / %.1f / %.1f ms (%.0f MiB/s of output)", m1, m2, m, (double)r.out / (1 << 20) / (m / 1e3)),
            ref_ms > 0 ? "HotSpotDiagnosticMXBean.dumpHeap's time, same heap" : "-",
            ref_ms > 0 ? bench_fmt("%.1f ms", ref_ms) : "-", ref_ms > 0 ? m / ref_ms : -1, "info", "info");
}

void bench_section_hpconv(const bench_opts *o) {
  const char *given = getenv("BENCH_HPCONV_FILE");
  char path[256];
  double ref_ms = -1;
  if (given != NULL) {
    snprintf(path, sizeof path, "%s", given);
  } else {
    snprintf(path, sizeof path, "/tmp/ddmc-bench-hpconv-%d.hprof", (int)getpid());
    ref_ms = make_file(o, path);
  }
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (given == NULL) unlink(path);
  if (fd < 0 || fstat(fd, &st) != 0) {
    bench_row(G, "conversion of a HotSpot hprof", "n/a (no file: set BENCH_HPCONV_FILE, or java)", "-", "-", -1,
              "info", "n/a");
    if (fd >= 0) close(fd);
    return;
  }
  rows(fd, (uint64_t)st.st_size, ref_ms);
  close(fd);
}
