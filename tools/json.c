/* SPDX-License-Identifier: Apache-2.0 */
/* JSON writer (see json.h). */
#include "json.h"

#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

void jw_init(jw *w, FILE *f) {
  memset(w, 0, sizeof *w);
  w->f = f;
}

static void indent(jw *w) {
  if (w->compact) return;
  fputc('\n', w->f);
  for (int i = 0; i < w->depth; i++) fputs("  ", w->f);
}

/* Separator and indentation before any value (or key). */
static void before_value(jw *w) {
  if (w->after_key) {
    w->after_key = 0;
    return;
  }
  if (w->depth > 0) {
    /* Inside an object, values come only after a key. */
    assert(w->closer[w->depth - 1] == ']');
    if (w->n_items[w->depth - 1]) fputc(',', w->f);
    w->n_items[w->depth - 1] = 1;
    indent(w);
  }
}

static void open_container(jw *w, char open, char close) {
  before_value(w);
  assert(w->depth < JW_MAX_DEPTH);
  fputc(open, w->f);
  w->closer[w->depth] = close;
  w->n_items[w->depth] = 0;
  w->depth++;
}

void jw_obj(jw *w) { open_container(w, '{', '}'); }
void jw_arr(jw *w) { open_container(w, '[', ']'); }

void jw_close(jw *w) {
  assert(w->depth > 0 && !w->after_key);
  w->depth--;
  if (w->n_items[w->depth]) indent(w);
  fputc(w->closer[w->depth], w->f);
}

/* Length of the valid UTF-8 sequence at s (n bytes left), or 0 if the lead byte starts none.
 * Rejects overlong forms, surrogates and values past U+10FFFF (RFC 3629). */
static size_t utf8_len(const unsigned char *s, size_t n) {
  unsigned c = s[0];
  size_t len;
  unsigned lo = 0x80, hi = 0xbf;
  if (c < 0x80) return 1;
  if (c >= 0xc2 && c <= 0xdf) len = 2;
  else if (c >= 0xe0 && c <= 0xef) {
    len = 3;
    if (c == 0xe0) lo = 0xa0;
    if (c == 0xed) hi = 0x9f;
  } else if (c >= 0xf0 && c <= 0xf4) {
    len = 4;
    if (c == 0xf0) lo = 0x90;
    if (c == 0xf4) hi = 0x8f;
  } else {
    return 0;
  }
  if (n < len) return 0;
  if (s[1] < lo || s[1] > hi) return 0;
  for (size_t i = 2; i < len; i++)
    if (s[i] < 0x80 || s[i] > 0xbf) return 0;
  return len;
}

static void put_escaped(FILE *f, const char *str, size_t n) {
  const unsigned char *s = (const unsigned char *)str;
  fputc('"', f);
  size_t i = 0;
  while (i < n) {
    unsigned c = s[i];
    if (c < 0x80) {
      switch (c) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        case '\b': fputs("\\b", f); break;
        case '\f': fputs("\\f", f); break;
        default:
          if (c < 0x20 || c == 0x7f) fprintf(f, "\\u%04x", c);
          else fputc((int)c, f);
      }
      i++;
      continue;
    }
    size_t len = utf8_len(s + i, n - i);
    if (len == 0) {
      fputs("\\ufffd", f);
      i++;
    } else if (len == 3 && c == 0xe2 && s[i + 1] == 0x80 && (s[i + 2] == 0xa8 || s[i + 2] == 0xa9)) {
      fprintf(f, "\\u%04x", s[i + 2] == 0xa8 ? 0x2028u : 0x2029u);
      i += 3;
    } else {
      fwrite(s + i, 1, len, f);
      i += len;
    }
  }
  fputc('"', f);
}

void jw_key(jw *w, const char *k) {
  assert(w->depth > 0 && w->closer[w->depth - 1] == '}' && !w->after_key);
  if (w->n_items[w->depth - 1]) fputc(',', w->f);
  w->n_items[w->depth - 1] = 1;
  indent(w);
  put_escaped(w->f, k, strlen(k));
  fputs(": ", w->f);
  w->after_key = 1;
}

void jw_strn(jw *w, const char *s, size_t n) {
  before_value(w);
  put_escaped(w->f, s, n);
}

void jw_str(jw *w, const char *s) {
  if (s == NULL) {
    jw_null(w);
    return;
  }
  jw_strn(w, s, strlen(s));
}

void jw_int(jw *w, int64_t v) {
  before_value(w);
  fprintf(w->f, "%" PRId64, v);
}

void jw_uint(jw *w, uint64_t v) {
  before_value(w);
  fprintf(w->f, "%" PRIu64, v);
}

void jw_bool(jw *w, int v) {
  before_value(w);
  fputs(v ? "true" : "false", w->f);
}

void jw_null(jw *w) {
  before_value(w);
  fputs("null", w->f);
}

void jw_double(jw *w, double v) {
  if (!isfinite(v)) {
    jw_null(w);
    return;
  }
  before_value(w);
  fprintf(w->f, "%.17g", v);
}

int jw_end(jw *w) {
  assert(w->depth == 0);
  fputc('\n', w->f);
  return fflush(w->f) == 0 && !ferror(w->f) ? 0 : -1;
}

void jw_kstr(jw *w, const char *k, const char *s) {
  jw_key(w, k);
  jw_str(w, s);
}
void jw_kint(jw *w, const char *k, int64_t v) {
  jw_key(w, k);
  jw_int(w, v);
}
void jw_kuint(jw *w, const char *k, uint64_t v) {
  jw_key(w, k);
  jw_uint(w, v);
}
void jw_kbool(jw *w, const char *k, int v) {
  jw_key(w, k);
  jw_bool(w, v);
}
