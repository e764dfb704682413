/* SPDX-License-Identifier: Apache-2.0 */
/* ddmc ui: a local web page on one VM, live. The VM side is ui_vm.c (the worker, on this thread),
 * the server ui_http.c (libmicrohttpd, its own threads), the page itself tools/ui/web/ (built
 * into the web directory with its npm packages by tools/ui/CMakeLists.txt). */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "ui_http.h"
#include "ui_list.h"
#include "ui_vm.h"

#ifndef DDMC_UI_INSTALL_WEB
#define DDMC_UI_INSTALL_WEB ""
#endif
#ifndef DDMC_UI_BUILD_WEB
#define DDMC_UI_BUILD_WEB ""
#endif

typedef struct ui_args {
  uint16_t port;       /* 0: the kernel picks */
  const char *web;     /* the web directory, NULL: found */
  double duration;     /* 0: until Ctrl-C */
  const char *url_file; /* the URL written there too (tests) */
  int all;             /* --all: every VM adb knows on the VMs page (ui_list.h) */
} ui_args;

static void ui_parse(int argc, char **argv, ui_args *a) {
  for (int k = 0; k < argc; k++) {
    uint64_t v;
    if (strcmp(argv[k], "--port") == 0) {
      if (k + 1 >= argc || cli_parse_u64(argv[++k], 65535, &v))
        cli_usage_error("--port needs a port number, 0..65535 (got '%s')", k < argc ? argv[k] : "");
      a->port = (uint16_t)v;
    } else if (strcmp(argv[k], "--web") == 0) {
      if (k + 1 >= argc) cli_usage_error("%s needs a directory", argv[k]);
      a->web = argv[++k];
    } else if (strcmp(argv[k], "--duration") == 0 || strcmp(argv[k], "-d") == 0) {
      a->duration = cli_parse_seconds(k + 1 < argc ? argv[++k] : NULL, "--duration");
    } else if (strcmp(argv[k], "--all") == 0 || strcmp(argv[k], "-a") == 0) {
      a->all = 1;
    } else if (strcmp(argv[k], "--url-file") == 0) {
      if (k + 1 >= argc) cli_usage_error("%s needs a file name", argv[k]);
      a->url_file = argv[++k];
    } else {
      cli_usage_error("ui: unknown argument '%s'", argv[k]);
    }
  }
}

static int has_index(const char *dir) {
  char p[1100];
  struct stat st;
  if (dir == NULL || dir[0] == '\0' || strlen(dir) > 1000) return 0;
  snprintf(p, sizeof p, "%s/index.html", dir);
  return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* --web, $DDMC_UI_WEB, the build tree's page (a ddmc run from its build), the installed one. */
static const char *find_web(const ui_args *a) {
  if (a->web) return a->web;
  const char *env = getenv("DDMC_UI_WEB");
  if (env && *env) return env;
  if (has_index(DDMC_UI_BUILD_WEB)) return DDMC_UI_BUILD_WEB;
  if (has_index(DDMC_UI_INSTALL_WEB)) return DDMC_UI_INSTALL_WEB;
  return NULL;
}

static void on_alarm(int sig) {
  (void)sig;
  sess_interrupted = 1;
}

static int write_url_file(const char *path, const char *url) {
  FILE *f = fopen(path, "w");
  if (f == NULL) return -1;
  fprintf(f, "%s\n", url);
  return fclose(f);
}

/* --all without -p: adb's port as -p would have it (-P, $ANDROID_ADB_SERVER_PORT, 5037). */
static void adb_defaults(opts *o) {
  uint64_t v = 5037;
  const char *env = getenv("ANDROID_ADB_SERVER_PORT");
  if (o->adb_port) return;
  if (env && *env && (cli_parse_u64(env, 65535, &v) || v == 0)) cli_usage_error("bad ANDROID_ADB_SERVER_PORT '%s'", env);
  o->adb_port = (uint16_t)v;
}

static int ui_main(opts *o, int argc, char **argv) {
  ui_args a = {0};
  ui_parse(argc, argv, &a);
  if (!a.all && !o->pid && (o->serial || o->adb_port)) cli_usage_error("ui: %s goes with -p PID or --all", o->serial ? "-s" : "-P");
  if (a.all) adb_defaults(o);
  const char *web = find_web(&a);
  if (web == NULL || !has_index(web)) {
    fprintf(stderr, "ddmc: no web page to serve (%s): build the ui target, or give --web DIR\n",
            web ? "no index.html there" : "none installed");
    return EXIT_ERROR;
  }
  char token[UI_HTTP_TOKEN_HEX + 1], err[300], url[128];
  if (ui_http_new_token(token) != 0) {
    fprintf(stderr, "ddmc: getrandom failed: no token\n");
    return EXIT_ERROR;
  }
  ui_vm *v = ui_vm_new(o);
  ui_list *l = v && a.all ? ui_list_start(o) : NULL;
  if (v && a.all && l == NULL) {
    fprintf(stderr, "ddmc: cannot start the VM list\n");
    ui_vm_free(v);
    return EXIT_ERROR;
  }
  ui_vm_set_list(v, l);
  uint16_t port = 0;
  ui_http *s = v ? ui_http_start(v, web, token, a.port, &port, err, sizeof err) : NULL;
  if (s == NULL) {
    fprintf(stderr, "ddmc: %s\n", v ? err : "out of memory");
    ui_list_stop(l);
    ui_vm_free(v);
    return EXIT_ERROR;
  }
  snprintf(url, sizeof url, "http://127.0.0.1:%u/?token=%s", (unsigned)port, token);
  if (a.all)
    printf("ddmc ui: %s on every VM of adb 127.0.0.1:%u%s%s\n", url, (unsigned)o->adb_port, o->pid ? ", first " : "",
           o->pid ? o->target : "");
  else
    printf("ddmc ui: %s on %s\n", url, o->target);
  fflush(stdout);
  if (a.url_file && write_url_file(a.url_file, url) != 0) fprintf(stderr, "ddmc: cannot write %s\n", a.url_file);
  signal(SIGPIPE, SIG_IGN);
  sess_catch_interrupts();
  if (a.duration > 0) {
    signal(SIGALRM, on_alarm);
    alarm(a.duration < 1 ? 1u : (unsigned)a.duration);
  }
  ui_vm_run(v, &sess_interrupted);
  ui_http_stop(s);
  ui_list_stop(l);
  ui_vm_free(v);
  return EXIT_OK;
}

const cli_cmd cmd_ui = {
    .name = "ui",
    .summary = "  ui [--all] [--port N]  a live web page on the VM (threads, heap, allocations, traces)\n",
    .help =
        "usage: ddmc [-c HOST:PORT | -p PID] [-s SERIAL] [-P ADB_PORT] ui [--all] [--port N] [--web DIR]\n"
        "                [--duration S] [--url-file FILE]\n"
        "\n"
        "Serves a web page on 127.0.0.1 only and prints its address, with a random token that\n"
        "every request must carry: open it in any browser on this machine. The page shows the\n"
        "VM, its threads live (states, a timeline, stacks), the heap over time and its map,\n"
        "the allocation tracker, and method traces or sampling as a flame graph and call tree.\n"
        "The Threads, Allocations and Trace pages download what they show as Perfetto JSON,\n"
        "pprof, speedscope JSON and collapsed stacks (the encoders of trace, alloc, timeline).\n"
        "ddmc stays connected (and reconnects when the VM comes back) until Ctrl-C.\n"
        "\n"
        "With --all the VMs page lists every VM `ddmc ps` lists on the adb device, live (VMs\n"
        "that come and go, a debugger attached, waiting for one); the VM picked there is the one\n"
        "the other pages show (-p PID: the first one shown).\n"
        "\n"
        "Options:\n"
        "  -a, --all         every VM adb knows on the VMs page, one picked at a time\n"
        "  --port N          the port to listen on (default 0: any free port)\n"
        "  --web DIR         the page's files (default $DDMC_UI_WEB, else the installed ones)\n"
        "  --duration S      stop after S seconds (default: until Ctrl-C)\n"
        "  --url-file FILE   also write the address to FILE\n",
    .run = ui_main,
    .adb_options = 1,
};
