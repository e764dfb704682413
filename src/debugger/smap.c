/* SPDX-License-Identifier: Apache-2.0 */
/* JSR-45 strata for stepping: VirtualMachine.SetDefaultStratum names a stratum, and a step by
 * line then moves by that stratum's lines, as libjdwp does (its SDE.c converts each method's
 * line table before a step). A debugger computes strata itself from the SMAP
 * (ReferenceType.SourceDebugExtension); only where a step ends is the back-end's business: a JSP
 * line spread over several Java lines is one line to step over. Which stratum, as libjdwp picks
 * it (tests/jdi/ReflectClient.java checks it against the JDK's agent): the default stratum when
 * the class's SMAP has a section for it, else the SMAP's own default (its third line), whatever
 * the debugger set, "Java" included; a class whose chosen stratum has no section keeps its lines.
 *
 * The SMAP (JSR-45 section 3): "SMAP", the output file, the default stratum, then per stratum
 * "*S name", "*F" (file IDs), "*L" line entries "in[#file][,repeat]:out[,increment]" (the file
 * ID sticky from the previous entry), up to "*E". A Java line J maps to the first entry whose
 * output range holds it; the stratum's line is then (file << 16) | input line, which is all
 * stepping compares (libjdwp numbers them the same way). Parsing does no I/O and reads at most
 * the SMAP's bytes once per entry converted (DDMC__MAX_SMAP bytes, DDMC__MAX_LINES entries).
 *
 * ClassPrepare's SourceNameMatch reads the SMAP too: libjdwp matches the pattern against its
 * source names (the output file and each "*F" file's name, not its path) before the class's own
 * source file, so a filter on "helloworld.jsp" sees the JSP's class prepared. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "debugger/state.h"

typedef struct smap_line {
  int64_t in, out, rep, inc, file;
} smap_line;

/* The next line of [*p, end) without its "\r\n" / "\n"; 0 at the end. */
static int next_line(const char **p, const char *end, const char **ls, size_t *ln) {
  if (*p >= end) return 0;
  const char *s = *p, *nl = memchr(s, '\n', (size_t)(end - s));
  const char *e = nl ? nl : end;
  *p = nl ? nl + 1 : end;
  if (e > s && e[-1] == '\r') e--;
  *ls = s;
  *ln = (size_t)(e - s);
  return 1;
}

static int num(const char **p, const char *e, int64_t *out) {
  int64_t v = 0;
  const char *s = *p;
  while (*p < e && **p >= '0' && **p <= '9' && v < (1 << 30)) v = v * 10 + (*(*p)++ - '0');
  *out = v;
  return *p > s;
}

/* "in[#file][,repeat]:out[,increment]"; file sticky in *file. */
static int parse_entry(const char *s, size_t n, int64_t *file, smap_line *l) {
  const char *p = s, *e = s + n;
  l->rep = l->inc = 1;
  if (!num(&p, e, &l->in)) return 0;
  if (p < e && *p == '#' && (++p, !num(&p, e, file))) return 0;
  if (p < e && *p == ',' && (++p, !num(&p, e, &l->rep))) return 0;
  if (p >= e || *p++ != ':' || !num(&p, e, &l->out)) return 0;
  if (p < e && *p == ',' && (++p, !num(&p, e, &l->inc))) return 0;
  l->file = *file;
  return 1;
}

int32_t ddmc__dbg_smap_line(const char *smap, size_t n, const char *stratum, int32_t j) {
  const char *p = smap, *end = smap + n, *ls;
  size_t ln, sl = strlen(stratum);
  int in_stratum = 0, in_lines = 0;
  int64_t file = 0;
  while (next_line(&p, end, &ls, &ln)) {
    if (ln >= 2 && ls[0] == '*') {
      if (ls[1] == 'S') {
        in_stratum = ln == sl + 3 && ls[2] == ' ' && memcmp(ls + 3, stratum, sl) == 0;
        in_lines = 0;
        file = 0;
      } else {
        in_lines = in_stratum && ls[1] == 'L';
      }
      continue;
    }
    smap_line l;
    if (!in_lines || !parse_entry(ls, ln, &file, &l)) continue;
    int64_t span = l.inc > 0 ? l.rep * l.inc : 1;
    if (j >= l.out && j < l.out + span) {
      int64_t in = l.in + (l.inc > 0 ? (j - l.out) / l.inc : 0);
      return (int32_t)(((l.file & 0x7fff) << 16) | (in & 0xffff));
    }
  }
  return -1;
}

/* Is there a "*S name" section? */
static int has_section(const char *smap, size_t n, const char *name, size_t nl) {
  const char *p = smap, *end = smap + n, *ls;
  size_t ln;
  while (next_line(&p, end, &ls, &ln))
    if (ln == nl + 3 && ls[0] == '*' && ls[1] == 'S' && ls[2] == ' ' && memcmp(ls + 3, name, nl) == 0) return 1;
  return 0;
}

int ddmc__dbg_smap_pick(const char *smap, size_t n, const char *want, char *out, size_t cap) {
  const char *p = smap, *end = smap + n, *ls = NULL;
  size_t ln = 0;
  if (want[0] != '\0' && has_section(smap, n, want, strlen(want))) {
    snprintf(out, cap, "%s", want);
    return 1;
  }
  for (int i = 0; i < 3; i++) /* "SMAP", the output file, the default stratum */
    if (!next_line(&p, end, &ls, &ln)) return 0;
  if (ln == 0 || ln >= cap || !has_section(smap, n, ls, ln)) return 0;
  memcpy(out, ls, ln);
  out[ln] = '\0';
  return 1;
}

/* requests.h's restricted pattern against name[0, nl): exact, "*suffix" or "prefix*". */
static int pattern_match_n(const char *pattern, const char *name, size_t nl) {
  size_t pl = strlen(pattern);
  if (pl > 0 && pattern[0] == '*') return nl >= pl - 1 && memcmp(name + nl - (pl - 1), pattern + 1, pl - 1) == 0;
  if (pl > 0 && pattern[pl - 1] == '*') return nl >= pl - 1 && memcmp(name, pattern, pl - 1) == 0;
  return nl == pl && memcmp(name, pattern, pl) == 0;
}

static const char *skip_white(const char *s, const char *e) {
  while (s < e && (*s == ' ' || *s == '\t')) s++;
  return s;
}

/* A "*F" line "[+] id name": its name (leading blanks off, as libjdwp reads it); with "+" the
 * next line is the file's path, which libjdwp does not match, so *path_next is set. */
static int file_line_name(const char *ls, size_t ln, const char **name, size_t *nl, int *path_next) {
  const char *s = skip_white(ls, ls + ln), *e = ls + ln;
  *path_next = s < e && *s == '+';
  if (*path_next) s = skip_white(s + 1, e);
  const char *digits = s;
  while (s < e && *s >= '0' && *s <= '9') s++;
  if (s == digits) return 0;
  s = skip_white(s, e);
  *name = s;
  *nl = (size_t)(e - s);
  return 1;
}

int ddmc__dbg_smap_names_match(const char *smap, size_t n, const char *pattern) {
  const char *p = smap, *end = smap + n, *ls;
  size_t ln;
  if (!next_line(&p, end, &ls, &ln) || ln < 4 || memcmp(ls, "SMAP", 4) != 0 || n <= 4) return 0;
  if (!next_line(&p, end, &ls, &ln)) return 0;
  const char *out = skip_white(ls, ls + ln);
  int hit = pattern_match_n(pattern, out, (size_t)(ls + ln - out));
  int in_files = 0, path_next = 0;
  while (next_line(&p, end, &ls, &ln)) {
    if (ln >= 2 && ls[0] == '*') {
      if (ls[1] == 'E') return hit; /* complete: libjdwp uses only a SMAP it parsed to its end */
      in_files = ls[1] == 'F';
      path_next = 0;
      continue;
    }
    const char *name;
    size_t nl;
    if (!in_files || hit) continue;
    if (path_next) {
      path_next = 0;
      continue;
    }
    if (file_line_name(ls, ln, &name, &nl, &path_next)) hit = pattern_match_n(pattern, name, nl);
  }
  return 0;
}
