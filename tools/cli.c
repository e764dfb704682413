/* SPDX-License-Identifier: Apache-2.0 */
/* What ddmc's command parsers and reports share (cli.h). */
#include "cli.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int g_json; /* --json seen: usage errors are reported as a JSON document too */
static const char *g_command;

void cli_set_context(int json, const char *command) {
  g_json = json;
  g_command = command;
}

_Noreturn void cli_usage_error(const char *fmt, const char *arg) {
  char msg[512];
  snprintf(msg, sizeof msg, fmt, arg);
  fprintf(stderr, "ddmc: %s\nTry 'ddmc --help'.\n", msg);
  if (g_json) {
    jw w;
    jw_init(&w, stdout);
    jw_obj(&w);
    jw_kstr(&w, "command", g_command);
    jw_kbool(&w, "ok", 0);
    jw_key(&w, "error");
    jw_obj(&w);
    jw_kint(&w, "exit", EXIT_USAGE);
    jw_kstr(&w, "message", msg);
    jw_close(&w);
    jw_close(&w);
    jw_end(&w);
  }
  exit(EXIT_USAGE);
}

int cli_parse_u64(const char *s, uint64_t max, uint64_t *out) {
  if (s == NULL || *s == '\0' || *s == '-' || *s == '+' || isspace((unsigned char)*s)) return -1;
  errno = 0;
  char *end;
  unsigned long long v = strtoull(s, &end, 0);
  if (errno || *end != '\0' || v > max) return -1;
  *out = v;
  return 0;
}

double cli_parse_seconds(const char *s, const char *opt) {
  if (s == NULL) cli_usage_error("%s needs SECONDS", opt);
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || *end || end == s || !(v >= 0) || v > 7 * 24 * 3600.0)
    cli_usage_error("'%s' is not a number of seconds", s);
  return v;
}

const char *cli_human_bytes(uint64_t b, char *buf, size_t n) {
  if (b >= 10ull << 30)
    snprintf(buf, n, "%.1f GiB", (double)b / (1 << 30));
  else if (b >= 10ull << 20)
    snprintf(buf, n, "%.1f MiB", (double)b / (1 << 20));
  else if (b >= 10ull << 10)
    snprintf(buf, n, "%.1f KiB", (double)b / (1 << 10));
  else
    snprintf(buf, n, "%llu B", (unsigned long long)b);
  return buf;
}

void cli_json_begin(sess *s, jw *w) {
  jw_init(w, stdout);
  jw_obj(w);
  sess_json_head(s, w, 1);
}

int cli_json_finish(sess *s, jw *w) {
  sess_json_wire(s, w);
  jw_close(w);
  return jw_end(w) == 0 ? EXIT_OK : EXIT_ERROR;
}

int cli_finish_text(sess *s) {
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "ddmc: cannot write the output: %s\n", strerror(errno));
    return EXIT_ERROR;
  }
  if (s->o->verbose) sess_print_wire(s);
  return EXIT_OK;
}
