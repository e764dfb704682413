/* SPDX-License-Identifier: Apache-2.0 */
/* minivm [options] PROGRAM.mvm [args]: the command line, then load, start JDWP, run, exit. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_bridge.h"
#include "ddm_bridge.h"
#include "minivm.h"

static void usage(FILE *f) {
  fputs("usage: minivm [options] PROGRAM.mvm [args...]\n"
        "options:\n"
        "  -agentlib:jdwp=OPTS    start JDWP/DDM, e.g. transport=dt_socket,address=8000,server=y\n"
        "  -agentpath:LIB[=OPTS]  load a JVM TI agent library (Agent_OnLoad gets OPTS)\n"
        "  -agentlib:NAME[=OPTS]  the same for libNAME.so, found in $MINIVM_AGENT_PATH, then\n"
        "                         beside minivm, then by the dynamic linker\n"
        "  -Xrunjdwp:OPTS         the same (-agentlib:jdwp=help lists the options)\n"
        "  -XmxSIZE               maximum managed heap (k/m/g suffix; default 16m)\n"
        "  -XmsSIZE               initial heap footprint (default 2m or -Xmx if smaller)\n"
        "  -verbose:gc            one line per collection on stderr\n"
        "  -verbose:jdwp          libddmc's info and debug messages too\n"
        "  --help                 this text\n",
        f);
}

int main(int argc, char **argv) {
  mvm_config cfg = {0};
  int verbose_jdwp = 0, i;
  const char **jdwp = calloc((size_t)argc, sizeof *jdwp);
  int njdwp = 0;
  agent_bridge *agents = NULL;
  for (i = 1; i < argc && argv[i][0] == '-'; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--help") || !strcmp(a, "-help") || !strcmp(a, "-h")) {
      usage(stdout);
      return 0;
    } else if (ddm_bridge_is_flag(a)) {
      jdwp[njdwp++] = a;   /* parsed below, once -verbose:jdwp is known */
    } else if (agent_bridge_is_flag(a)) {
      if (!agents && !(agents = agent_bridge_new())) return 1;
      if (agent_bridge_add(agents, a)) return 1;
    } else if (!strncmp(a, "-Xmx", 4) || !strncmp(a, "-Xms", 4)) {
      if (mvm_parse_size(a + 4, a[3] == 'x' ? &cfg.heap_max : &cfg.heap_start)) {
        fprintf(stderr, "minivm: bad heap size in '%s' (use e.g. 64m, 512k, 1g)\n", a);
        return 1;
      }
    } else if (!strncmp(a, "-verbose:", 9)) {
      char *list = strdup(a + 9);
      for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        if (!strcmp(tok, "gc")) cfg.verbose_gc = 1;
        else if (!strcmp(tok, "jdwp")) verbose_jdwp = 1;
        else fprintf(stderr, "minivm: ignoring -verbose:%s\n", tok);
      }
      free(list);
    } else if (!strcmp(a, "-Xdebug")) {
      /* accepted and ignored, as Dalvik did */
    } else {
      fprintf(stderr, "minivm: unknown option '%s' (try --help)\n", a);
      return 1;
    }
  }
  if (i >= argc) {
    usage(stderr);
    return 1;
  }
  const char *program = argv[i++];

  ddm_bridge *bridge = NULL;
  if (njdwp || agent_bridge_count(agents)) {
    bridge = ddm_bridge_new(verbose_jdwp);
    for (int k = 0; k < njdwp; k++)
      if (!bridge || ddm_bridge_parse(bridge, jdwp[k])) return 1;
  }
  free(jdwp);

  /* Whole lines reach a pipe as they are printed, even while other threads keep running. */
  setvbuf(stdout, NULL, _IOLBF, 0);
  mvm_hooks hooks = {0};
  if (bridge) ddm_bridge_hooks(bridge, &hooks);
  char err[512];
  mvm_vm *vm = mvm_vm_new(&cfg, &hooks, err, sizeof err);
  if (!vm) {
    fprintf(stderr, "minivm: %s\n", err);
    return 1;
  }
  /* Load before JDWP starts, so a bad program fails fast and a debugger never sees it. */
  if (mvm_load_file(vm, program, err, sizeof err)) {
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  /* The main thread exists before JDWP starts: with suspend=y the debugger's VM_START names it
   * and holds it before its first instruction. */
  if (mvm_prepare_main(vm)) return 1;
  /* Agents load into the libddmc instance (the VM bridge they are built on) before JDWP
   * starts; without -agentlib:jdwp the instance is never started. */
  if (agent_bridge_count(agents)) {
    if (ddm_bridge_create(bridge, vm) || agent_bridge_load(agents, ddm_bridge_ddmc(bridge))) return 1;
    if (!njdwp) ddm_bridge_publish(bridge);
  }
  if (njdwp && ddm_bridge_start(bridge, vm)) return 1;
  agent_bridge_watch_sigquit(agents); /* kill -QUIT: DataDumpRequest, as on HotSpot (once live) */
  agent_bridge_vm_init(agents, 1); /* VMStart, VMInit: the live phase, before main's first instruction */
  int status = mvm_run_main(vm, argc - i, argv + i);
  agent_bridge_vm_death(agents, 1);
  if (bridge) ddm_bridge_stop(bridge);
  if (agents) {
    /* Agent_OnUnload, then exit(): agents' buffered output (stdio, C++ streams, their atexit
     * handlers) is flushed, as a JVM's exit does. */
    agent_bridge_unload(agents);
    fflush(NULL);
    exit(status);
  }
  /* Daemon threads may still run, as in Java: the VM is not freed under them, and _exit skips
   * atexit work that could race with them. */
  fflush(NULL);
  _exit(status);
}
