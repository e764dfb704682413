/* SPDX-License-Identifier: Apache-2.0 */
#include "util/memsrc.h"

#include <string.h>

static int fill(void *arg, uint8_t *dst, size_t cap, size_t *got) {
  memsrc *s = arg;
  size_t k = s->n - s->pos < cap ? s->n - s->pos : cap;
  if (k > s->piece) k = s->piece;
  memcpy(dst, s->p + s->pos, k);
  s->pos += k;
  *got = k;
  return 0;
}

static int skip(void *arg, uint64_t n) {
  memsrc *s = arg;
  s->pos = s->pos + n > s->n ? s->n : s->pos + (size_t)n;
  return 0;
}

static int rewind_(void *arg) {
  ((memsrc *)arg)->pos = 0;
  return 0;
}

ddmc__prof_hpconv_input memsrc_input(memsrc *s) { return (ddmc__prof_hpconv_input){fill, skip, rewind_, s, NULL}; }
