/* SPDX-License-Identifier: Apache-2.0 */
/* Thread list: the THEN burst (THEN [1] -> one THCR per thread, then the empty reply) and the
 * THST reply, for 1,000 and 10,000 threads, in microseconds per thread.
 * The bench VM's for_each_thread visits N synthetic threads whose OS tids cycle over 8 real,
 * idle threads of this process, so THST's per-thread read of /proc/self/task/TID/stat really
 * happens (and hits the same few tasks, as a VM's threads would hit their own).
 * Placement: the JDWP thread on CPU 0, the client on CPU 1; each time includes one round trip.
 * Reference: open + read + close of /proc/self/task/TID/stat for the same tids, per thread. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

#define THEN FOURCC('T', 'H', 'E', 'N')
#define THST FOURCC('T', 'H', 'S', 'T')
#define THCR FOURCC('T', 'H', 'C', 'R')

static double proc_read_ns(const uint32_t *tids, size_t ntids, uint32_t n) {
  char path[64], buf[512];
  int64_t t0 = bench_now_ns();
  for (uint32_t i = 0; i < n; i++) {
    snprintf(path, sizeof(path), "/proc/self/task/%u/stat", (unsigned)tids[i % ntids]);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    if (read(fd, buf, sizeof(buf) - 1) < 0) buf[0] = 0;
    close(fd);
  }
  return (double)(bench_now_ns() - t0) / n;
}

void bench_section_threads(const bench_opts *o) {
  double sc = o->scale;
  uint32_t tids[8];
  bench_idle_threads(8, tids);
  bvm b;
  memset(&b, 0, sizeof(b));
  b.pin_jdwp = 1;
  bvm_start(&b, 0);
  bench_pin(BENCH_CPU_CLIENT);
  jc c;
  jc_init(&c);
  if (jc_open(&c, b.port, bench_now_ns() + 5000000000LL) != 0) {
    fprintf(stderr, "bench: cannot reach the bench VM\n");
    exit(2);
  }
  static const uint32_t counts[] = {1000, 10000};
  for (int k = 0; k < 2; k++) {
    uint32_t n = counts[k];
    bvm_set_threads(&b, n, tids, 8);
    int reps = (int)((k == 0 ? 15 : 7) * (sc < 1 ? 0.5 : 1)) + 1;
    double *then_ns = calloc((size_t)reps, sizeof(double)), *thst_ns = calloc((size_t)reps, sizeof(double)),
           *proc_ns = calloc((size_t)reps, sizeof(double));
    uint32_t thcr_seen = 0;
    for (int r = 0; r < reps; r++) {
      uint8_t pkt[64];
      /* THEN [1]: THCR x n, then the reply (libddmc queues the burst ahead of the reply) */
      size_t len = jc_build_ddm(pkt, 0x40000100u + (uint32_t)r, THEN, "\1", 1);
      int64_t t0 = bench_now_ns();
      if (jc_write_all(c.fd, pkt, len) != 0) exit(2);
      uint32_t thcr = 0;
      for (;;) {
        uint32_t plen;
        const uint8_t *p = jc_next(&c, &plen);
        if (p == NULL) exit(2);
        if (p[8] & JDWP_FLAG_REPLY) break;
        if (plen >= 19 && be32(p + 11) == THCR) thcr++;
      }
      then_ns[r] = (double)(bench_now_ns() - t0) / n;
      thcr_seen = thcr;
      len = jc_build_ddm(pkt, 0x40000200u + (uint32_t)r, THEN, "\0", 1);
      if (jc_request(&c, pkt, len, NULL) == 0) exit(2);
      /* THST (empty request: the one-shot list) */
      len = jc_build_ddm(pkt, 0x40000300u + (uint32_t)r, THST, NULL, 0);
      t0 = bench_now_ns();
      uint32_t rl = jc_request(&c, pkt, len, NULL);
      thst_ns[r] = (double)(bench_now_ns() - t0) / n;
      if (rl < 19 + 4 + 18 * n) fprintf(stderr, "bench: THST reply too short (%u bytes)\n", rl);
      proc_ns[r] = proc_read_ns(tids, 8, n);
    }
    double then_m = bench_median(then_ns, (size_t)reps), thst_m = bench_median(thst_ns, (size_t)reps),
           proc_m = bench_median(proc_ns, (size_t)reps);
    const char *G = "Thread list";
    char pref[32];
    snprintf(pref, sizeof(pref), "%.2f us/thread", proc_m / 1e3);
    bench_row(G, bench_fmt("THEN burst (THCR x %u + reply)", n),
              bench_fmt("%.2f us/thread (%s)", then_m / 1e3, bench_time(then_m * n)),
              "open+read+close /proc/self/task/TID/stat", pref, then_m / proc_m, "-", "info");
    bench_row(G, bench_fmt("THST reply, %u threads", n),
              bench_fmt("%.2f us/thread (%s)", thst_m / 1e3, bench_time(thst_m * n)),
              "open+read+close /proc/self/task/TID/stat", pref, thst_m / proc_m, "-", "info");
    if (thcr_seen != n) bench_note("THEN burst for %u threads delivered %u THCR chunks", n, thcr_seen);
    free(then_ns);
    free(thst_ns);
    free(proc_ns);
  }
  bench_note("thread list: medians of 15 (1,000 threads) and 7 (10,000 threads) requests; each includes one "
             "cross-CPU round trip");
  jc_close(&c);
  bvm_stop(&b);
  bench_idle_threads_stop();
  free(b.names);
}
