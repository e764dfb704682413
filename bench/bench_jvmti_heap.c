/* SPDX-License-Identifier: Apache-2.0 */
/* The JVM TI heap figure: IterateThroughHeap objects per second on a 64 MiB minivm
 * heap. minivm runs bench/programs/heap64.mvm (2,000,000 objects of 32 bytes, 61 MiB, with
 * -Xmx128m) with the jvmti_heapbench agent (bench/jvmti_heapbench.c, beside this binary), which
 * at VMDeath tags every class and times IterateThroughHeap with a counting callback, best and
 * median of 5. Figure: objects / best time. Reference: the same walk without JVM TI
 * (nothing: the figure is reported as info; the closing note of RESULTS.md says what it costs per
 * object). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

void bench_jvmti_heap(const bench_opts *o) {
  if (o->minivm == NULL || o->progdir == NULL) {
    bench_note("jvmti: no minivm (--minivm, --programs): skipped");
    return;
  }
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return;
  self[n] = 0;
  char *slash = strrchr(self, '/');
  if (slash) *slash = 0;
  char cmd[3 * PATH_MAX + 256];
  snprintf(cmd, sizeof cmd, "'%s' -Xmx128m -Xms96m -agentpath:'%s/libjvmti_heapbench.so'=reps=5 '%s/heap64.mvm' 2>&1",
           o->minivm, self, o->progdir);
  FILE *p = popen(cmd, "r");
  if (p == NULL) return;
  char line[512];
  long objects = 0;
  long long best = 0, median = 0;
  while (fgets(line, sizeof line, p))
    if (sscanf(line, "heapbench: objects %ld best_ns %lld median_ns %lld", &objects, &best, &median) == 3) break;
  pclose(p);
  if (objects <= 0 || best <= 0) {
    bench_note("jvmti: the agent printed no figure");
    return;
  }
  double rate = (double)objects / ((double)best / 1e9);
  bench_row("jvmti", "IterateThroughHeap, 64 MiB minivm heap", bench_fmt("%.1f M objects/s", rate / 1e6), "-", "-",
            -1, "-", "info");
  bench_note("jvmti: %ld objects, best %s, median %s (%.1f ns per object)", objects, bench_time((double)best),
             bench_time((double)median), (double)best / (double)objects);
}
