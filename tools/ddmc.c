/* SPDX-License-Identifier: Apache-2.0 */
/* ddmc: a command-line DDM monitor (the host side ddmlib/DDMS plays), for VMs that link libddmc
 * or any other DDM-speaking VM reachable over a JDWP socket.
 *
 *   ddmc [-c HOST:PORT | -p PID [-s SERIAL] [-P ADB_PORT]] [--json] [-v] [-t MS] [--no-zlib] COMMAND [ARGS]
 *   ddmc [-s SERIAL] [-P ADB_PORT] [--json] [-v] [-t MS] ps [--watch [--duration S]]
 *
 * This file parses the options before the command and hands the rest to the command's own
 * parser: cli_commands[] below is the one list of commands (cli.h), each in tools/cmd_<name>.c.
 * Every command but ps connects, does the JDWP handshake, HELO + FEAT and (unless --no-zlib) the
 * ZLIB opt-in, runs, and disconnects. See usage() for the options and exit codes; docs/ddmc.1 is
 * the manual, kept in step with --help by tests/man/check_manpage.py. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#ifndef DDMC_TOOL_VERSION
#define DDMC_TOOL_VERSION "0"
#endif

/* `ddmc --help` order. */
const cli_cmd *const cli_commands[] = {&cmd_info, &cmd_threads, &cmd_stack, &cmd_heap,  &cmd_gc, &cmd_exit,
                                       &cmd_send, &cmd_alloc,   &cmd_trace, &cmd_hprof, &cmd_timeline, &cmd_ps};
const size_t cli_n_commands = sizeof cli_commands / sizeof cli_commands[0];

static const cli_cmd *find_command(const char *name) {
  for (size_t k = 0; k < cli_n_commands; k++)
    if (strcmp(cli_commands[k]->name, name) == 0) return cli_commands[k];
  return NULL;
}

static void usage(FILE *f) {
  fputs(
      "usage: ddmc [-c HOST:PORT | -p PID [-s SERIAL] [-P ADB_PORT]] [--json] [-v] [-t MS] [--no-zlib]\n"
      "            COMMAND [ARGS]\n"
      "\n"
      "A DDM monitor: connects to a VM's JDWP socket (-agentlib:jdwp=transport=dt_socket,...)\n"
      "and speaks the host side of DDM, as Android's DDMS/ddmlib does.\n"
      "\n"
      "Commands:\n",
      f);
  for (size_t k = 0; k < cli_n_commands; k++) fputs(cli_commands[k]->summary, f);
  fputs(
      "\n"
      "Options (before the command):\n"
      "  -c, --connect HOST:PORT  VM to talk to (default 127.0.0.1:8700; [v6addr]:port works)\n"
      "  -p, --pid PID            instead: process PID through the local adb server (jdwp:PID)\n"
      "  -s, --serial SERIAL      the adb device (default: the only one)\n"
      "  -P, --adb-port PORT      the adb server's port (default $ANDROID_ADB_SERVER_PORT or 5037)\n"
      "      --json               one JSON document on stdout, for scripts (errors too)\n"
      "  -v, --verbose            wire statistics on stderr at the end; -vv logs every chunk\n"
      "  -t, --timeout MS         connect, handshake and per-request timeout (default 5000);\n"
      "                           for ps, the bound of the whole listing\n"
      "      --no-zlib            do not opt in to ZLIB-compressed chunks (default: opt in)\n"
      "  -h, --help               this text (ddmc COMMAND --help: that command's own)\n"
      "      --version            the version\n"
      "\n"
      "Exit codes:\n"
      "  0   success\n"
      "  1   other error: the connection was lost, a file could not be written, ...\n"
      "  2   cannot connect (connection refused, unknown host, connect timeout)\n"
      "  3   the peer is not a JDWP VM (bad or no handshake answer), not DDM-aware, or broke\n"
      "      the protocol (ps: the adb server sent a malformed track-jdwp list)\n"
      "  4   the VM completed the handshake but did not answer (HELO or a request) in time\n"
      "  5   the VM answered with a FAIL chunk (e.g. stack of a thread that does not exist)\n"
      "  64  usage error\n"
      "\n"
      "Environment: ANDROID_ADB_SERVER_PORT, the adb server's port when -P is not given.\n"
      "See ddmc(1).\n",
      f);
}

/* `ddmc COMMAND --help`. */
static void command_help(const cli_cmd *c) {
  fputs(c->help, stdout);
  fputs("\nOptions before the command (-c, -p, --json, -t, ...): ddmc --help; all of it: man ddmc.\n", stdout);
}

static int parse_target(opts *o, const char *t) {
  const char *colon = strrchr(t, ':');
  uint64_t port;
  if (colon == NULL) {
    /* A bare port. */
    if (cli_parse_u64(t, 65535, &port) || port == 0) return -1;
    snprintf(o->host, sizeof o->host, "127.0.0.1");
  } else {
    if (cli_parse_u64(colon + 1, 65535, &port) || port == 0) return -1;
    size_t n = (size_t)(colon - t);
    const char *h = t;
    if (n >= 2 && h[0] == '[' && h[n - 1] == ']') {
      h++;
      n -= 2;
    }
    if (n == 0 || n >= sizeof o->host) return -1;
    memcpy(o->host, h, n);
    o->host[n] = '\0';
  }
  o->port = (uint16_t)port;
  snprintf(o->target_buf, sizeof o->target_buf, strchr(o->host, ':') ? "[%s]:%u" : "%s:%u", o->host, (unsigned)o->port);
  o->target = o->target_buf;
  return 0;
}

/* The options before the command, into o; returns the index of the command in argv (argc when
 * there is none). --help and --version end the program here. */
static int parse_options(int argc, char **argv, opts *o, int *connect_given) {
  int i = 1;
  for (; i < argc; i++) {
    const char *a = argv[i];
    if (a[0] != '-' || strcmp(a, "-") == 0) break;
    if (strcmp(a, "--") == 0) return i + 1;
    uint64_t v;
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
      usage(stdout);
      exit(EXIT_OK);
    } else if (strcmp(a, "--version") == 0) {
      printf("ddmc %s\n", DDMC_TOOL_VERSION);
      exit(EXIT_OK);
    } else if (strcmp(a, "--json") == 0) {
      o->json = 1;
      cli_set_context(1, NULL);
    } else if (strcmp(a, "--no-zlib") == 0) {
      o->zlib = 0;
    } else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
      o->verbose++;
    } else if (strcmp(a, "-vv") == 0) {
      o->verbose += 2;
    } else if (strcmp(a, "-c") == 0 || strcmp(a, "--connect") == 0) {
      if (++i >= argc) cli_usage_error("%s needs HOST:PORT", a);
      o->target = argv[i];
      *connect_given = 1;
    } else if (strncmp(a, "--connect=", 10) == 0) {
      o->target = a + 10;
      *connect_given = 1;
    } else if (strcmp(a, "-p") == 0 || strcmp(a, "--pid") == 0) {
      if (++i >= argc || cli_parse_u64(argv[i], UINT32_MAX, &v) || v == 0) cli_usage_error("%s needs a process id", a);
      o->pid = (uint32_t)v;
    } else if (strcmp(a, "-s") == 0 || strcmp(a, "--serial") == 0) {
      if (++i >= argc) cli_usage_error("%s needs a device serial", a);
      o->serial = argv[i];
    } else if (strcmp(a, "-P") == 0 || strcmp(a, "--adb-port") == 0) {
      if (++i >= argc || cli_parse_u64(argv[i], 65535, &v) || v == 0) cli_usage_error("%s needs a port", a);
      o->adb_port = (uint16_t)v;
    } else if (strcmp(a, "-t") == 0 || strcmp(a, "--timeout") == 0) {
      if (++i >= argc || cli_parse_u64(argv[i], 3600000, &v) || v == 0)
        cli_usage_error("%s needs a timeout in milliseconds (1..3600000)", a);
      o->timeout_ms = (int)v;
    } else {
      cli_usage_error("unknown option '%s'", a);
    }
  }
  return i;
}

/* Where the command goes: -c's address, or -p's process through adb; a command that lists adb's
 * processes (ps) takes neither, only -s and -P. */
static void resolve_target(opts *o, const cli_cmd *c, int connect_given) {
  if (parse_target(o, o->target) != 0) cli_usage_error("bad address '%s' (want HOST:PORT)", o->target);
  int lists_adb = c != NULL && c->lists_adb;
  if (lists_adb && o->pid) cli_usage_error("ps lists every process: -p does not go with it%s", "");
  if (lists_adb && connect_given) cli_usage_error("ps lists the processes adb knows: -c does not go with it%s", "");
  int adb_options = c != NULL && c->adb_options; /* its own defaults: tools/cmd_timeline.c */
  if (o->pid || lists_adb) {
    if (o->adb_port == 0) {
      const char *env = getenv("ANDROID_ADB_SERVER_PORT");
      uint64_t v = 5037;
      if (env && *env && (cli_parse_u64(env, 65535, &v) || v == 0))
        cli_usage_error("bad ANDROID_ADB_SERVER_PORT '%s'", env);
      o->adb_port = (uint16_t)v;
    }
  } else if ((o->serial || o->adb_port) && !adb_options) {
    cli_usage_error("%s goes with -p PID, ps or timeline", o->serial ? "-s" : "-P");
  }
  if (o->pid) {
    snprintf(o->target_buf, sizeof o->target_buf, "pid %u via adb 127.0.0.1:%u%s%s", (unsigned)o->pid,
             (unsigned)o->adb_port, o->serial ? " device " : "", o->serial ? o->serial : "");
    o->target = o->target_buf;
  }
}

int main(int argc, char **argv) {
  opts o;
  memset(&o, 0, sizeof o);
  o.target = "127.0.0.1:8700";
  o.zlib = 1;
  o.timeout_ms = 5000;
  int connect_given = 0;
  int i = parse_options(argc, argv, &o, &connect_given);
  const cli_cmd *c = i < argc ? find_command(argv[i]) : NULL;
  resolve_target(&o, c, connect_given);
  if (i >= argc) {
    if (o.json) cli_usage_error("no command given%s", "");
    usage(stderr);
    return EXIT_USAGE;
  }
  o.command = argv[i++];
  cli_set_context(o.json, o.command);
  int nargs = argc - i;
  char **args = argv + i;
  for (int k = 0; c != NULL && k < nargs; k++) {
    if (strcmp(args[k], "--help") == 0 || strcmp(args[k], "-h") == 0) {
      command_help(c);
      return EXIT_OK;
    }
  }
  if (c == NULL) cli_usage_error("unknown command '%s'", o.command);
  return c->run(&o, nargs, args);
}
