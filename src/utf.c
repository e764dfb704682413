/* SPDX-License-Identifier: Apache-2.0 */
/* UTF-8 <-> UTF-16 for DDM strings ([u4 count][UTF-16BE units], no terminator).
 * The VM hands us UTF-8; the wire wants UTF-16. Invalid input never fails a send: it becomes
 * U+FFFD, because a thread name with a stray byte should still show up in the monitor. */
#include "common.h"

/* Decodes one code point at s[*i] (n bytes); advances *i; returns 0xFFFD for bad input. */
static uint32_t next_cp(const unsigned char *s, size_t n, size_t *i) {
  unsigned char c = s[*i];
  size_t need;
  uint32_t cp, min;
  if (c < 0x80) {
    (*i)++;
    return c;
  } else if ((c & 0xE0) == 0xC0) {
    need = 1; cp = c & 0x1F; min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    need = 2; cp = c & 0x0F; min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    need = 3; cp = c & 0x07; min = 0x10000;
  } else {
    (*i)++;
    return 0xFFFD;
  }
  if (n - *i - 1 < need) {
    (*i)++;
    return 0xFFFD;
  }
  for (size_t k = 1; k <= need; k++) {
    unsigned char cc = s[*i + k];
    if ((cc & 0xC0) != 0x80) {
      (*i)++;
      return 0xFFFD;
    }
    cp = (cp << 6) | (cc & 0x3F);
  }
  *i += need + 1;
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0xFFFD;
  return cp;
}

size_t ddmc__utf8_to_utf16be(const char *str, size_t n, uint8_t *out) {
  const unsigned char *s = (const unsigned char *)str;
  size_t i = 0, units = 0;
  while (i < n) {
    if (s[i] < 0x80) { /* ASCII, nearly every name: no decoding */
      if (out) {
        out[2 * units] = 0;
        out[2 * units + 1] = s[i];
      }
      units++;
      i++;
      continue;
    }
    uint32_t cp = next_cp(s, n, &i);
    if (cp >= 0x10000) {
      cp -= 0x10000;
      if (out) {
        ddmc__put_u16(out + 2 * units, (uint16_t)(0xD800 | (cp >> 10)));
        ddmc__put_u16(out + 2 * units + 2, (uint16_t)(0xDC00 | (cp & 0x3FF)));
      }
      units += 2;
    } else {
      if (out) ddmc__put_u16(out + 2 * units, (uint16_t)cp);
      units++;
    }
  }
  return units;
}

static size_t put_utf8(uint32_t cp, char *out, size_t outlen, size_t pos, int *full) {
  char tmp[4];
  size_t k;
  if (cp < 0x80) {
    tmp[0] = (char)cp; k = 1;
  } else if (cp < 0x800) {
    tmp[0] = (char)(0xC0 | (cp >> 6)); tmp[1] = (char)(0x80 | (cp & 0x3F)); k = 2;
  } else if (cp < 0x10000) {
    tmp[0] = (char)(0xE0 | (cp >> 12)); tmp[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
    tmp[2] = (char)(0x80 | (cp & 0x3F)); k = 3;
  } else {
    tmp[0] = (char)(0xF0 | (cp >> 18)); tmp[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    tmp[2] = (char)(0x80 | ((cp >> 6) & 0x3F)); tmp[3] = (char)(0x80 | (cp & 0x3F)); k = 4;
  }
  /* Stop at the first character that does not fit, so the prefix ends on a boundary. */
  if (!*full && out != NULL && outlen > 0 && pos + k <= outlen - 1) {
    for (size_t j = 0; j < k; j++) out[pos + j] = tmp[j];
  } else {
    *full = 1;
  }
  return k;
}

size_t ddmc__utf16be_to_utf8(const uint8_t *p, size_t units, char *out, size_t outlen) {
  size_t pos = 0, written = 0;
  int full = 0;
  for (size_t i = 0; i < units; i++) {
    uint32_t cp = ddmc__get_u16(p + 2 * i);
    if (cp >= 0xD800 && cp <= 0xDBFF && i + 1 < units) {
      uint32_t lo = ddmc__get_u16(p + 2 * (i + 1));
      if (lo >= 0xDC00 && lo <= 0xDFFF) {
        cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        i++;
      } else {
        cp = 0xFFFD;
      }
    } else if (cp >= 0xD800 && cp <= 0xDFFF) {
      cp = 0xFFFD;
    }
    size_t k = put_utf8(cp, out, outlen, pos, &full);
    if (!full) written = pos + k;
    pos += k;
  }
  if (out != NULL && outlen > 0) out[written] = '\0';
  return pos;
}
