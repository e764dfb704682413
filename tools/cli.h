/* SPDX-License-Identifier: Apache-2.0 */
/* ddmc's commands as one table, and what their argument parsers share.
 *
 * Every command is a cli_cmd in its own tools/cmd_<name>.c; ddmc.c lists them once, in
 * cli_commands[], and `ddmc --help` (its Commands section: the summaries in table order),
 * `ddmc NAME --help` (help) and the manual page check (tests/man/check_manpage.py, which reads
 * those two) come from that table. A new command: see tools/README.md.
 *
 * Usage errors end the program from here (exit 64, a JSON error document with --json), before
 * the command connects: a bad command line never touches the VM. */
#ifndef DDMC_TOOLS_CLI_H
#define DDMC_TOOLS_CLI_H

#include <stddef.h>
#include <stdint.h>

#include "session.h"

typedef struct cli_cmd {
  const char *name;
  /* Its lines in `ddmc --help`'s Commands section, each ending in '\n': "  NAME ..." first, the
   * continuation lines indented further (the manual page check takes the first word of each line
   * indented by exactly two spaces as a command). */
  const char *summary;
  /* `ddmc NAME --help`: a "usage: ddmc ..." line first; the "Options:" lines are what docs/ddmc.1
   * lists for the command (tests/man compares them). */
  const char *help;
  /* Parses args (argc of them, the words after NAME; usage errors exit through cli_usage_error),
   * runs the command and returns the exit code. o is filled by the global options. */
  int (*run)(opts *o, int argc, char **argv);
  /* The command lists every process adb knows (ps): -c and -p do not go with it, -s and -P do. */
  int lists_adb;
  /* The command may reach processes through adb itself (timeline --adb, --vm pid:PID): -s and -P
   * go with it without -p. */
  int adb_options;
} cli_cmd;

/* Every command, in `ddmc --help` order (ddmc.c); cli_n_commands entries. */
extern const cli_cmd *const cli_commands[];
extern const size_t cli_n_commands;

/* The command descriptors (tools/cmd_<name>.c). */
extern const cli_cmd cmd_info, cmd_threads, cmd_stack, cmd_heap, cmd_gc, cmd_exit, cmd_send, cmd_alloc, cmd_trace,
    cmd_hprof, cmd_ps, cmd_timeline;

/* What usage errors need to know: with json, they are reported as a JSON document too; command
 * (may be NULL) names the command in it. Set by main before any command parses. */
void cli_set_context(int json, const char *command);

/* Ends the program with a usage error: "ddmc: <fmt with arg>" and a hint on stderr, the JSON
 * error document on stdout with --json, exit 64. fmt takes one %s. */
_Noreturn void cli_usage_error(const char *fmt, const char *arg);

/* A decimal (or 0x hex) number in [0, max] into *out: 0, or -1 when s is not one (signs and
 * leading blanks refused). */
int cli_parse_u64(const char *s, uint64_t max, uint64_t *out);
/* Seconds for --duration: a number in [0, one week]; s NULL (the option ended the command line)
 * or anything else is a usage error naming opt. */
double cli_parse_seconds(const char *s, const char *opt);

/* Output pieces the commands share. cli_human_bytes writes "12.3 MiB" into buf and returns it. */
const char *cli_human_bytes(uint64_t b, char *buf, size_t n);
/* A success document: the head (command, ok, target, vm) ... cli_json_finish adds the wire
 * counters, ends it and returns EXIT_OK, or EXIT_ERROR when stdout failed. */
void cli_json_begin(sess *s, jw *w);
int cli_json_finish(sess *s, jw *w);
/* The end of a text report: flushes stdout (EXIT_ERROR when that fails), -v's wire line. */
int cli_finish_text(sess *s);

/* Heap info, shared by heap and gc (cmd_heap.c). cmd_heap_now asks for HPIF now and waits for it
 * into s->hpif (the program fails when it does not come). */
void cmd_heap_now(sess *s);
void cmd_heap_json_hpif(jw *w, const char *key, const ddmc_host_heap_info *h);
void cmd_heap_print_hpif(const ddmc_host_heap_info *h);

#endif
