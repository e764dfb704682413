/* SPDX-License-Identifier: Apache-2.0 */
/* ddmc_bench SECTION... [--java PATH] [--classdir DIR] [--scale X] [--minivm PATH] [--programs DIR]
 * Sections: rt send threads heap mem dbg prof hprof hpconv jvmti hotspot scale (or all). Prints ROW/NOTE lines (see bench.h); bench/run.sh
 * runs each section in its own process and prints the table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

int main(int argc, char **argv) {
  bench_opts o = {NULL, NULL, 1.0, NULL, NULL};
  const char *sections[8];
  int ns = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--java") == 0 && i + 1 < argc) o.java = argv[++i];
    else if (strcmp(argv[i], "--classdir") == 0 && i + 1 < argc) o.classdir = argv[++i];
    else if (strcmp(argv[i], "--scale") == 0 && i + 1 < argc) o.scale = atof(argv[++i]);
    else if (strcmp(argv[i], "--minivm") == 0 && i + 1 < argc) o.minivm = argv[++i];
    else if (strcmp(argv[i], "--programs") == 0 && i + 1 < argc) o.progdir = argv[++i];
    else if (ns < 8) sections[ns++] = argv[i];
  }
  if (ns == 0) {
    fprintf(stderr, "usage: %s rt|send|threads|heap|mem|dbg|prof|hprof|hpconv|jvmti|hotspot|scale|all... [--java PATH] [--classdir DIR] [--scale X] [--minivm PATH] [--programs DIR]\n", argv[0]);
    return 2;
  }
  if (o.scale <= 0) o.scale = 1.0;
  for (int i = 0; i < ns; i++) {
    int all = strcmp(sections[i], "all") == 0;
    int known = 0;
    if (all || strcmp(sections[i], "rt") == 0) bench_section_rt(&o), known = 1;
    if (all || strcmp(sections[i], "send") == 0) bench_section_send(&o), known = 1;
    if (all || strcmp(sections[i], "threads") == 0) bench_section_threads(&o), known = 1;
    if (all || strcmp(sections[i], "heap") == 0) bench_section_heap(&o), known = 1;
    if (all || strcmp(sections[i], "mem") == 0) bench_section_mem(&o), known = 1;
    if (all || strcmp(sections[i], "dbg") == 0) bench_section_dbg(&o), known = 1;
    if (all || strcmp(sections[i], "prof") == 0) bench_section_prof(&o), known = 1;
    if (all || strcmp(sections[i], "hprof") == 0) bench_section_hprof(&o), known = 1;
    if (all || strcmp(sections[i], "hpconv") == 0) bench_section_hpconv(&o), known = 1;
    if (all || strcmp(sections[i], "jvmti") == 0) bench_section_jvmti(&o), known = 1;
    if (all || strcmp(sections[i], "hotspot") == 0) bench_section_hotspot(&o), known = 1;
    if (all || strcmp(sections[i], "scale") == 0) bench_section_scale(&o), known = 1;
    if (strcmp(sections[i], "prof-helo") == 0) bench_section_prof_helo(&o), known = 1;
    if (strcmp(sections[i], "prof-send") == 0) bench_section_prof_send(&o), known = 1;
    if (!known) {
      fprintf(stderr, "unknown section '%s'\n", sections[i]);
      return 2;
    }
  }
  return 0;
}
