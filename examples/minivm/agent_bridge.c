/* SPDX-License-Identifier: Apache-2.0 */
/* JVM TI agents in minivm: -agentpath / -agentlib, and the lifecycle calls of include/ddmc/agent.h.
 * libddmc owns JVM TI itself (tables, phases, events through the VM bridge); this file only
 * finds the libraries, passes them to ddmc_agent_load in command-line order, and tells the
 * library when the VM starts, runs the program and dies.
 *
 * -agentlib:NAME looks for libNAME.so in each directory of $MINIVM_AGENT_PATH (':'-separated),
 * then in the directory of the minivm binary, then lets the dynamic linker search
 * (LD_LIBRARY_PATH, the system's directories), as a JVM looks in its own lib directory and then
 * java.library.path. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ddmc/ddmc.h>

#include "agent_bridge.h"

struct agent_bridge {
  ddmc_agent_flag *flags;
  int n, cap;
  ddmc_vm *d;
  atomic_int live; /* LIVE_* : read by the SIGQUIT helper thread */
};

enum { LIVE_NOT_YET, LIVE, LIVE_OVER };

int agent_bridge_is_flag(const char *arg) {
  ddmc_agent_flag f;
  int rc = ddmc_agent_parse_flag(arg, &f);
  return rc != DDMC_ENOENT;
}

agent_bridge *agent_bridge_new(void) { return calloc(1, sizeof(agent_bridge)); }

int agent_bridge_add(agent_bridge *a, const char *arg) {
  if (a->n == a->cap) {
    int cap = a->cap ? a->cap * 2 : 4;
    ddmc_agent_flag *f = realloc(a->flags, sizeof(*f) * (size_t)cap);
    if (!f) {
      fprintf(stderr, "minivm: out of memory\n");
      return -1;
    }
    a->flags = f;
    a->cap = cap;
  }
  int rc = ddmc_agent_parse_flag(arg, &a->flags[a->n]);
  if (rc) {
    fprintf(stderr, "minivm: bad agent option '%s': %s\n", arg,
            rc == DDMC_ETOOBIG ? "name or options too long" : "expected -agentpath:/path/lib.so[=options] or -agentlib:name[=options]");
    return -1;
  }
  a->n++;
  return 0;
}

int agent_bridge_count(const agent_bridge *a) { return a ? a->n : 0; }

static int readable(const char *path) { return access(path, R_OK) == 0; }

/* libNAME.so on the documented path; out gets the path to dlopen (a bare file name last). */
static void find_lib(const char *name, char *out, size_t cap) {
  char file[1100];
  snprintf(file, sizeof file, "lib%s.so", name);
  const char *env = getenv("MINIVM_AGENT_PATH");
  if (env && *env) {
    char *list = strdup(env);
    for (char *save = NULL, *dir = list ? strtok_r(list, ":", &save) : NULL; dir; dir = strtok_r(NULL, ":", &save)) {
      snprintf(out, cap, "%s/%s", dir, file);
      if (readable(out)) {
        free(list);
        return;
      }
    }
    free(list);
  }
  char self[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0) {
    self[n] = 0;
    char *slash = strrchr(self, '/');
    if (slash) {
      *slash = 0;
      snprintf(out, cap, "%s/%s", self, file);
      if (readable(out)) return;
    }
  }
  snprintf(out, cap, "%s", file); /* the dynamic linker's own search */
}

static void set_properties(ddmc_vm *d) {
  static const char *const props[][2] = {
      {"java.vm.name", "minivm"},
      {"java.vm.vendor", "libddmc"},
      {"java.vm.version", "0.1"},
      {"java.vm.info", "interpreted mode"},
      {"java.vm.specification.version", "17"},
      {"java.specification.version", "17"},
      {"java.version", "17"},
      {"java.class.path", ""},
      {"java.library.path", ""},
      {"file.separator", "/"},
      {"path.separator", ":"},
      {"line.separator", "\n"},
  };
  for (size_t i = 0; i < sizeof props / sizeof props[0]; i++) ddmc_agent_set_property(d, props[i][0], props[i][1]);
  const char *env = getenv("MINIVM_AGENT_PATH");
  if (env) ddmc_agent_set_property(d, "java.library.path", env);
}

int agent_bridge_load(agent_bridge *a, ddmc_vm *d) {
  a->d = d;
  set_properties(d);
  for (int i = 0; i < a->n; i++) {
    const ddmc_agent_flag *f = &a->flags[i];
    char path[PATH_MAX + 1100];
    if (f->by_path)
      snprintf(path, sizeof path, "%s", f->name);
    else
      find_lib(f->name, path, sizeof path);
    char err[1024];
    int rc = ddmc_agent_load(d, path, f->has_options ? f->options : NULL, err, sizeof err);
    if (rc) {
      fprintf(stderr, "minivm: %s\n", err[0] ? err : ddmc_strerror(rc));
      return -1;
    }
  }
  return 0;
}

void agent_bridge_vm_init(agent_bridge *a, uint32_t main_thread) {
  if (!a || !a->d) return;
  ddmc_agent_vm_start(a->d);
  ddmc_agent_vm_init(a->d, main_thread);
  atomic_store(&a->live, LIVE);
}

void agent_bridge_vm_death(agent_bridge *a, uint32_t thread) {
  if (!a || !a->d || atomic_exchange(&a->live, LIVE_OVER) != LIVE) return;
  ddmc_agent_vm_death(a->d, thread);
}

void agent_bridge_unload(agent_bridge *a) {
  if (a && a->d) ddmc_agent_unload(a->d);
}

/* SIGQUIT -> DataDumpRequest, as HotSpot does (kill -QUIT pid). The handler only writes a byte to
 * a pipe (async-signal-safe); a helper thread reads it and calls ddmc_agent_data_dump, outside
 * any VM lock and off the interpreter threads. The helper is a plain daemon pthread: it never
 * touches the heap, so the collector never waits for it. */
static int quit_pipe[2] = {-1, -1};

static void on_sigquit(int sig) {
  (void)sig;
  int saved = errno;
  char c = 'Q';
  if (write(quit_pipe[1], &c, 1) < 0) { /* full: a dump is already pending */ }
  errno = saved;
}

static void *quit_main(void *arg) {
  agent_bridge *a = arg;
  char c;
  for (;;) {
    ssize_t n = read(quit_pipe[0], &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    /* A signal sent while VMInit's callbacks still run (an agent may say it is ready from there)
     * waits for the live phase instead of being lost. */
    while (atomic_load(&a->live) == LIVE_NOT_YET) {
      struct timespec ms = {0, 1000000};
      nanosleep(&ms, NULL);
    }
    if (atomic_load(&a->live) == LIVE) ddmc_agent_data_dump(a->d);
  }
  return NULL;
}

void agent_bridge_watch_sigquit(agent_bridge *a) {
  if (!a || !a->d || quit_pipe[0] >= 0 || pipe(quit_pipe) != 0) return;
  fcntl(quit_pipe[1], F_SETFL, O_NONBLOCK); /* the handler never blocks */
  pthread_t th;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  int rc = pthread_create(&th, &attr, quit_main, a);
  pthread_attr_destroy(&attr);
  if (rc) return;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigquit;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGQUIT, &sa, NULL);
}
