/* SPDX-License-Identifier: Apache-2.0 */
/* Section jvmti: what a JVM TI agent costs a VM, beside HotSpot running the same
 * agent file on the same program.
 *
 *   1. An agent loaded with no event enabled (examples/agents calltrace=idle): minivm running
 *      bench/programs/spin.mvm (a CPU-bound loop, one static call per iteration), against the
 *      same run without the agent. Target <= 1.02x.
 *   2. MethodEntry + MethodExit callbacks per call (calltrace=exits: both events, a raw-monitor
 *      protected count per call): (loop time with the agent - without) / calls, on minivm and on
 *      HotSpot with bench/java/Spin.java (the twin program; the JVM runs in interpreted mode
 *      once an agent can take method events, as every JVM TI agent of this kind makes it).
 *   3. IterateThroughHeap objects per second on a 64 MiB minivm heap (bench_jvmti_heap.c).
 *
 * Each figure is the best of REPS runs, the two kinds interleaved so drift hits both; spin prints
 * its own loop time ("SPIN <ms> <checksum>"), so start-up and agent loading are outside it. */
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define REPS 5
#define SPIN_CALLS 20000000L
#define SPIN_CALLS_AGENT 2000000L /* with method events: 10x fewer, still seconds of work */

typedef struct jenv {
  const bench_opts *o;
  char agent[4096]; /* libcalltrace.so */
} jenv;

/* One run's loop time in ms (-1: failed). java: HotSpot on Spin; else minivm on spin.mvm.
 * agent_opt: NULL for no agent. */
static double spin(const jenv *e, int java, const char *agent_opt, long calls) {
  char n[32], ap[4352], prog[4096];
  snprintf(n, sizeof n, "%ld", calls);
  if (agent_opt) snprintf(ap, sizeof ap, "-agentpath:%s=%s", e->agent, agent_opt);
  char *argv[12];
  int a = 0;
  if (java) {
    argv[a++] = (char *)e->o->java;
    argv[a++] = "-Xshare:auto";
    if (agent_opt) argv[a++] = ap;
    argv[a++] = "-cp";
    argv[a++] = (char *)e->o->classdir;
    argv[a++] = "Spin";
  } else {
    snprintf(prog, sizeof prog, "%s/spin.mvm", e->o->progdir);
    argv[a++] = (char *)e->o->minivm;
    if (agent_opt) argv[a++] = ap;
    argv[a++] = prog;
  }
  argv[a++] = n;
  argv[a] = NULL;
  bchild ch = bench_spawn(argv);
  if (ch.pid < 0) return -1;
  char line[128];
  double ms = -1;
  if (bench_read_line(&ch, "SPIN ", line, sizeof line, 240) == 0) ms = atof(line + 5);
  bench_stop(&ch);
  return ms;
}

/* Best of REPS of each, interleaved. */
static int pair(const jenv *e, int java, const char *opt_a, const char *opt_b, long calls, double *a, double *b) {
  double va[REPS], vb[REPS];
  for (int i = 0; i < REPS; i++) {
    va[i] = spin(e, java, opt_a, calls);
    vb[i] = spin(e, java, opt_b, calls);
    if (va[i] <= 0 || vb[i] <= 0) return -1;
  }
  bench_sort(va, REPS);
  bench_sort(vb, REPS);
  *a = va[0];
  *b = vb[0];
  bench_note("jvmti: %s %s: runs of %s %.0f..%.0f ms, of %s %.0f..%.0f ms", java ? "HotSpot" : "minivm",
             java ? "Spin" : "spin.mvm", opt_a ? opt_a : "no agent", va[0], va[REPS - 1], opt_b ? opt_b : "no agent",
             vb[0], vb[REPS - 1]);
  return 0;
}

void bench_section_jvmti(const bench_opts *o) {
  jenv e = {.o = o};
  if (o->minivm == NULL || o->progdir == NULL) {
    bench_row("jvmti", "idle agent, minivm spin.mvm", "n/a (no minivm)", "-", "-", -1, "<= 1.02x", "n/a");
    return;
  }
  /* The agents are built beside minivm: BUILD/examples/minivm/minivm -> BUILD/examples/agents. */
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", o->minivm);
  snprintf(e.agent, sizeof e.agent, "%s/../agents/libcalltrace.so", dirname(dir));
  bench_pin(BENCH_CPU_CLIENT); /* the VMs have CPU 0 */
  long calls = (long)(SPIN_CALLS * o->scale);
  double none, idle;
  if (pair(&e, 0, NULL, "idle", calls, &none, &idle) == 0)
    bench_row("jvmti", "agent loaded, no events: spin.mvm loop (minivm)", bench_fmt("%.0f ms", idle),
              "same loop, no agent", bench_fmt("%.0f ms", none), idle / none, "<= 1.02x",
              bench_status(idle / none <= 1.02));
  else
    bench_row("jvmti", "agent loaded, no events: spin.mvm loop (minivm)", "failed", "-", "-", -1, "<= 1.02x", "n/a");

  long acalls = (long)(SPIN_CALLS_AGENT * o->scale);
  double base, traced, per_mvm = -1, per_java = -1;
  if (pair(&e, 0, NULL, "exits", acalls, &base, &traced) == 0) per_mvm = (traced - base) * 1e6 / (double)acalls;
  if (o->java && o->classdir && pair(&e, 1, NULL, "exits", acalls, &base, &traced) == 0)
    per_java = (traced - base) * 1e6 / (double)acalls;
  bench_row("jvmti", "MethodEntry+MethodExit callbacks per call (calltrace=exits)",
            per_mvm > 0 ? bench_time(per_mvm) : "failed", "HotSpot 17, same agent file on Spin.java",
            per_java > 0 ? bench_time(per_java) : "n/a", per_mvm > 0 && per_java > 0 ? per_mvm / per_java : -1, "-",
            "info");
  bench_jvmti_heap(o); /* 3. IterateThroughHeap on a 64 MiB heap */
}
