/* SPDX-License-Identifier: Apache-2.0 */
/* A tiny streaming JSON writer for ddmc --json: objects, arrays, strings, numbers, booleans.
 *
 * The writer tracks nesting itself, so callers never place commas: jw_key() then one value inside
 * an object, values only inside an array. Strings are escaped per RFC 8259 (", \, control
 * characters) and forced to valid UTF-8 (each invalid byte becomes U+FFFD), so whatever a VM or a
 * command line hands us, the output parses. U+2028/U+2029 are escaped too, for consumers that
 * embed the document in JavaScript. Output is pretty-printed with two-space indents; the
 * document ends with a newline (jw_end). Nesting deeper than JW_MAX_DEPTH is a programming error
 * (asserted). No allocation; I/O errors are sticky in the FILE. */
#ifndef DDMC_TOOLS_JSON_H
#define DDMC_TOOLS_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define JW_MAX_DEPTH 32

typedef struct jw {
  FILE *f;
  int depth;
  int after_key;                       /* a key was written; the next value follows it */
  unsigned char n_items[JW_MAX_DEPTH]; /* 0 = empty container so far (saturates at 1) */
  char closer[JW_MAX_DEPTH];
  int compact;                         /* set after jw_init: no newlines or indents (big files) */
} jw;

void jw_init(jw *w, FILE *f);
void jw_obj(jw *w);      /* { */
void jw_arr(jw *w);      /* [ */
void jw_close(jw *w);    /* } or ] */
void jw_key(jw *w, const char *k);
void jw_str(jw *w, const char *s); /* NULL writes null */
void jw_strn(jw *w, const char *s, size_t n);
void jw_int(jw *w, int64_t v);
void jw_uint(jw *w, uint64_t v);
void jw_bool(jw *w, int v);
void jw_null(jw *w);
void jw_double(jw *w, double v); /* non-finite values write null */
/* Writes the final newline and flushes; returns 0, or -1 if the stream had an error. */
int jw_end(jw *w);

/* key + value shorthands */
void jw_kstr(jw *w, const char *k, const char *s);
void jw_kint(jw *w, const char *k, int64_t v);
void jw_kuint(jw *w, const char *k, uint64_t v);
void jw_kbool(jw *w, const char *k, int v);

#endif
