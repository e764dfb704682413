/* SPDX-License-Identifier: Apache-2.0 */
/* The byte builder: the tests write the VM's side of the wire with it, byte for byte. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "testutil.h"

void bb_need(bb *b, size_t k) {
  if (b->n + k > b->cap) {
    b->cap = (b->n + k) * 2 + 64;
    b->d = realloc(b->d, b->cap);
    assert_non_null(b->d);
  }
}
void bb_u8(bb *b, uint8_t v) {
  bb_need(b, 1);
  b->d[b->n++] = v;
}
void bb_u16(bb *b, uint16_t v) {
  bb_u8(b, (uint8_t)(v >> 8));
  bb_u8(b, (uint8_t)v);
}
void bb_u32(bb *b, uint32_t v) {
  bb_u16(b, (uint16_t)(v >> 16));
  bb_u16(b, (uint16_t)v);
}
void bb_u64(bb *b, uint64_t v) {
  bb_u32(b, (uint32_t)(v >> 32));
  bb_u32(b, (uint32_t)v);
}
void bb_bytes(bb *b, const void *p, size_t n) {
  bb_need(b, n);
  if (n) memcpy(b->d + b->n, p, n);
  b->n += n;
}
void bb_str(bb *b, const char *s) {
  size_t n = strlen(s);
  bb_u32(b, (uint32_t)n);
  for (size_t i = 0; i < n; i++) bb_u16(b, (uint8_t)s[i]);
}
void bb_units(bb *b, const uint16_t *u, size_t n) {
  bb_u32(b, (uint32_t)n);
  for (size_t i = 0; i < n; i++) bb_u16(b, u[i]);
}
void bb_free(bb *b) {
  free(b->d);
  memset(b, 0, sizeof *b);
}

void pk_chunk_cmd(bb *b, uint32_t id, uint32_t type, const void *p, size_t n) {
  bb_u32(b, (uint32_t)(19 + n));
  bb_u32(b, id);
  bb_u8(b, 0);
  bb_u8(b, 199);
  bb_u8(b, 1);
  bb_u32(b, type);
  bb_u32(b, (uint32_t)n);
  bb_bytes(b, p, n);
}
void pk_reply(bb *b, uint32_t id, uint16_t err, const void *body, size_t n) {
  bb_u32(b, (uint32_t)(11 + n));
  bb_u32(b, id);
  bb_u8(b, 0x80);
  bb_u16(b, err);
  bb_bytes(b, body, n);
}
void pk_chunk_reply(bb *b, uint32_t id, uint32_t type, const void *p, size_t n) {
  bb_u32(b, (uint32_t)(19 + n));
  bb_u32(b, id);
  bb_u8(b, 0x80);
  bb_u16(b, 0);
  bb_u32(b, type);
  bb_u32(b, (uint32_t)n);
  bb_bytes(b, p, n);
}
