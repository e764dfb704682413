/* SPDX-License-Identifier: Apache-2.0 */
/* ddmc_buf (growable big-endian writer with a sticky error) and ddmc_reader (bounded cursor).
 * Handlers chain put calls and check once; readers never read past end and report it once. */
#include <string.h>

#include "common.h"

void ddmc__buf_init(ddmc_buf *b, const ddmc__mem *mem, size_t max) {
  b->mem = mem;
  b->p = NULL;
  b->len = b->cap = 0;
  b->max = max;
  b->err = 0;
  b->borrowed = 0;
}

void ddmc__buf_init_on(ddmc_buf *b, const ddmc__mem *mem, size_t max, void *storage, size_t n) {
  ddmc__buf_init(b, mem, max);
  b->p = storage;
  b->cap = n;
  b->borrowed = 1;
}

void ddmc__buf_reset(ddmc_buf *b) {
  b->len = 0;
  b->err = 0;
}

void ddmc__buf_free(ddmc_buf *b) {
  if (!b->borrowed) ddmc__free(b->mem, b->p);
  b->borrowed = 0;
  b->p = NULL;
  b->len = b->cap = 0;
}

uint8_t *ddmc__buf_append(ddmc_buf *b, size_t n) {
  if (b->err) return NULL;
  if (n > b->max || b->len > b->max - n) {
    b->err = DDMC_ETOOBIG;
    return NULL;
  }
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    while (cap < b->len + n) cap = cap > SIZE_MAX / 2 ? b->len + n : cap * 2;
    uint8_t *np = b->borrowed ? ddmc__malloc(b->mem, cap) : ddmc__realloc(b->mem, b->p, cap);
    if (np == NULL) {
      b->err = DDMC_ENOMEM;
      return NULL;
    }
    if (b->borrowed && b->len) memcpy(np, b->p, b->len);
    b->borrowed = 0;
    b->p = np;
    b->cap = cap;
  }
  uint8_t *r = b->p + b->len;
  b->len += n;
  return r;
}

void ddmc__buf_consume(ddmc_buf *b, size_t n) {
  if (n >= b->len) {
    b->len = 0;
    return;
  }
  memmove(b->p, b->p + n, b->len - n);
  b->len -= n;
}

int ddmc__buf_shrink(ddmc_buf *b, size_t keep) {
  if (b->borrowed || b->len != 0 || b->cap <= keep) return 0;
  ddmc__free(b->mem, b->p);
  b->p = NULL;
  b->cap = 0;
  return 1;
}

int ddmc_buf_put_u8(ddmc_buf *b, uint8_t v) {
  uint8_t *p = ddmc__buf_append(b, 1);
  if (p) *p = v;
  return b->err;
}

int ddmc_buf_put_u16(ddmc_buf *b, uint16_t v) {
  uint8_t *p = ddmc__buf_append(b, 2);
  if (p) ddmc__put_u16(p, v);
  return b->err;
}

int ddmc_buf_put_u32(ddmc_buf *b, uint32_t v) {
  uint8_t *p = ddmc__buf_append(b, 4);
  if (p) ddmc__put_u32(p, v);
  return b->err;
}

int ddmc_buf_put_u64(ddmc_buf *b, uint64_t v) {
  uint8_t *p = ddmc__buf_append(b, 8);
  if (p) {
    ddmc__put_u32(p, (uint32_t)(v >> 32));
    ddmc__put_u32(p + 4, (uint32_t)v);
  }
  return b->err;
}

int ddmc_buf_put_bytes(ddmc_buf *b, const void *src, size_t n) {
  if (n == 0) return b->err;
  uint8_t *p = ddmc__buf_append(b, n);
  if (p) memcpy(p, src, n);
  return b->err;
}

int ddmc_buf_put_utf16(ddmc_buf *b, const uint16_t *s, size_t n) {
  if (n > UINT32_MAX || n > (SIZE_MAX - 4) / 2) {
    if (!b->err) b->err = DDMC_ETOOBIG;
    return b->err;
  }
  uint8_t *p = ddmc__buf_append(b, 4 + 2 * n);
  if (p) {
    ddmc__put_u32(p, (uint32_t)n);
    for (size_t i = 0; i < n; i++) ddmc__put_u16(p + 4 + 2 * i, s[i]);
  }
  return b->err;
}

/* Measures, then converts straight into the buffer: one allocation at most, none for the
 * common ASCII name once the buffer has room. */
static int put_utf16(ddmc_buf *b, const char *utf8, int with_count) {
  if (utf8 == NULL) utf8 = "";
  size_t n = strlen(utf8);
  size_t units = ddmc__utf8_to_utf16be(utf8, n, NULL);
  if (units > UINT32_MAX || units > (SIZE_MAX - 4) / 2) {
    if (!b->err) b->err = DDMC_ETOOBIG;
    return b->err;
  }
  size_t head = with_count ? 4 : 0;
  uint8_t *p = ddmc__buf_append(b, head + 2 * units);
  if (p == NULL) return b->err;
  if (with_count) ddmc__put_u32(p, (uint32_t)units);
  ddmc__utf8_to_utf16be(utf8, n, p + head);
  return 0;
}

int ddmc_buf_put_str(ddmc_buf *b, const char *utf8) { return put_utf16(b, utf8, 1); }
int ddmc__buf_put_chars(ddmc_buf *b, const char *utf8) { return put_utf16(b, utf8, 0); }

size_t ddmc_buf_len(const ddmc_buf *b) { return b->len; }
int ddmc_buf_error(const ddmc_buf *b) { return b->err; }

/* ---- reader */

void ddmc_reader_init(ddmc_reader *r, const void *p, size_t n) {
  r->p = p;
  r->end = r->p + n;
  r->err = 0;
}

size_t ddmc_reader_left(const ddmc_reader *r) { return (size_t)(r->end - r->p); }

static int take(ddmc_reader *r, size_t n) {
  if (r->err || (size_t)(r->end - r->p) < n) {
    r->err = DDMC_EPROTO;
    return 0;
  }
  return 1;
}

uint8_t ddmc_read_u8(ddmc_reader *r) {
  if (!take(r, 1)) return 0;
  return *r->p++;
}

uint16_t ddmc_read_u16(ddmc_reader *r) {
  if (!take(r, 2)) return 0;
  uint16_t v = ddmc__get_u16(r->p);
  r->p += 2;
  return v;
}

uint32_t ddmc_read_u32(ddmc_reader *r) {
  if (!take(r, 4)) return 0;
  uint32_t v = ddmc__get_u32(r->p);
  r->p += 4;
  return v;
}

uint64_t ddmc_read_u64(ddmc_reader *r) {
  if (!take(r, 8)) return 0;
  uint64_t v = ((uint64_t)ddmc__get_u32(r->p) << 32) | ddmc__get_u32(r->p + 4);
  r->p += 8;
  return v;
}

const uint8_t *ddmc_read_bytes(ddmc_reader *r, size_t n) {
  if (!take(r, n)) return NULL;
  const uint8_t *p = r->p;
  r->p += n;
  return p;
}

int ddmc_read_str(ddmc_reader *r, char *out, size_t outlen) {
  uint32_t units = ddmc_read_u32(r);
  if (r->err) return r->err;
  if ((size_t)(r->end - r->p) / 2 < units) {
    r->err = DDMC_EPROTO;
    return r->err;
  }
  size_t need = ddmc__utf16be_to_utf8(r->p, units, out, outlen);
  r->p += (size_t)units * 2;
  if (need >= outlen) return DDMC_ETOOBIG;
  return need > INT32_MAX ? DDMC_ETOOBIG : (int)need;
}

int ddmc_reader_done(const ddmc_reader *r) {
  return (r->err || r->p != r->end) ? DDMC_EPROTO : 0;
}
