/* SPDX-License-Identifier: Apache-2.0 */
/* A small heap dump as HotSpot writes it (hsfile.h). */
#include <string.h>

#include "util/hsfile.h"

void hsfile_w1(hsfile *w, uint32_t v) { w->b[w->n++] = (uint8_t)v; }
static void w2(hsfile *w, uint32_t v) {
  hsfile_w1(w, v >> 8);
  hsfile_w1(w, v);
}
void hsfile_w4(hsfile *w, uint32_t v) {
  w2(w, v >> 16);
  w2(w, v);
}
void hsfile_w8(hsfile *w, uint64_t v) {
  hsfile_w4(w, (uint32_t)(v >> 32));
  hsfile_w4(w, (uint32_t)v);
}
static void wstr(hsfile *w, const char *s) {
  memcpy(w->b + w->n, s, strlen(s));
  w->n += strlen(s);
}
void hsfile_open_rec(hsfile *w, uint32_t tag) {
  hsfile_w1(w, tag);
  hsfile_w4(w, 0);
  w->rec = w->n;
  hsfile_w4(w, 0);
}
void hsfile_close_rec(hsfile *w) {
  uint32_t len = (uint32_t)(w->n - w->rec - 4);
  for (int i = 0; i < 4; i++) w->b[w->rec + i] = (uint8_t)(len >> (24 - 8 * i));
}

static void strings(hsfile *w) {
  static const char *const s[] = {NULL, "java/lang/Object",     "Sub",  "[I",  "[LSub;",  "a", "ref", "l",
                                  "st", "not used by anything", "main", "()V", "Sub.java"};
  for (int k = 1; k <= S_FILE; k++) {
    hsfile_open_rec(w, 0x01);
    hsfile_w8(w, S(k));
    wstr(w, s[k]);
    hsfile_close_rec(w);
  }
}

static void load_class(hsfile *w, uint32_t serial, uint64_t cls, uint64_t name) {
  hsfile_open_rec(w, 0x02);
  hsfile_w4(w, serial);
  hsfile_w8(w, cls);
  hsfile_w4(w, 1);
  hsfile_w8(w, name);
  hsfile_close_rec(w);
}

static void class_dump(hsfile *w, uint64_t id, uint64_t super, int fields) {
  hsfile_w1(w, 0x20);
  hsfile_w8(w, id);
  hsfile_w4(w, 1);
  hsfile_w8(w, super);
  for (int i = 0; i < 5; i++) hsfile_w8(w, 0);
  hsfile_w4(w, fields ? 4 + 8 + 8 : 0); /* HotSpot's instance size: ids of 8 bytes */
  w2(w, 0);
  w2(w, fields ? 1 : 0);
  if (fields) { /* static Object st = sub1 */
    hsfile_w8(w, S(S_ST));
    hsfile_w1(w, 2);
    hsfile_w8(w, A(A_SUB1));
  }
  w2(w, fields ? 3 : 0);
  if (fields) {
    hsfile_w8(w, S(S_A));
    hsfile_w1(w, 10);
    hsfile_w8(w, S(S_REF));
    hsfile_w1(w, 2);
    hsfile_w8(w, S(S_L));
    hsfile_w1(w, 11);
  }
}

static void instance(hsfile *w, uint64_t id, int32_t a, uint64_t ref, uint64_t l) {
  hsfile_w1(w, 0x21);
  hsfile_w8(w, id);
  hsfile_w4(w, 1);
  hsfile_w8(w, A(A_SUB));
  hsfile_w4(w, 4 + 8 + 8);
  hsfile_w4(w, (uint32_t)a);
  hsfile_w8(w, ref);
  hsfile_w8(w, l);
}

static void heap(hsfile *w) {
  hsfile_open_rec(w, 0x1C);
  hsfile_w1(w, 0x01); /* JNI global, with the global ref's own id */
  hsfile_w8(w, A(A_SUB1));
  hsfile_w8(w, 0x7f00deadbeefull);
  hsfile_w1(w, 0x08); /* thread object */
  hsfile_w8(w, A(A_SUB2));
  hsfile_w4(w, 1);
  hsfile_w4(w, 1);
  hsfile_w1(w, 0x05);
  hsfile_w8(w, A(A_OBJECT));
  class_dump(w, A(A_OBJECT), 0, 0);
  class_dump(w, A(A_SUB), A(A_OBJECT), 1);
  class_dump(w, A(A_INTS_C), A(A_OBJECT), 0);
  class_dump(w, A(A_SUBS_C), A(A_OBJECT), 0);
  hsfile_close_rec(w);
  hsfile_open_rec(w, 0x1C);
  instance(w, A(A_SUB1), 7, A(A_SUB2), 0x1122334455667788ull);
  instance(w, A(A_SUB2), -1, A(A_GONE), 2); /* A_GONE: not in the dump */
  hsfile_w1(w, 0x23);
  hsfile_w8(w, A(A_INTS));
  hsfile_w4(w, 1);
  hsfile_w4(w, 3);
  hsfile_w1(w, 10);
  for (uint32_t i = 1; i <= 3; i++) hsfile_w4(w, i);
  hsfile_w1(w, 0x22);
  hsfile_w8(w, A(A_SUBS));
  hsfile_w4(w, 1);
  hsfile_w4(w, 2);
  hsfile_w8(w, A(A_SUBS_C));
  hsfile_w8(w, A(A_SUB1));
  hsfile_w8(w, 0);
  hsfile_close_rec(w);
}

void hsfile_make(hsfile *w) {
  memset(w, 0, sizeof(*w));
  wstr(w, "JAVA PROFILE 1.0.2");
  hsfile_w1(w, 0);
  hsfile_w4(w, 8);
  hsfile_w8(w, 1700000000000ull);
  strings(w);
  load_class(w, 1, A(A_OBJECT), S(S_OBJECT));
  load_class(w, 2, A(A_SUB), S(S_SUB));
  load_class(w, 3, A(A_INTS_C), S(S_INTS));
  load_class(w, 4, A(A_SUBS_C), S(S_SUBS));
  load_class(w, 5, A(A_SUBS_C), S(S_SUBS)); /* HotSpot's second LOAD CLASS of an array class */
  hsfile_open_rec(w, 0x04);
  hsfile_w8(w, 1);
  hsfile_w8(w, S(S_MAIN));
  hsfile_w8(w, S(S_SIG));
  hsfile_w8(w, S(S_FILE));
  hsfile_w4(w, 2);
  hsfile_w4(w, 10);
  hsfile_close_rec(w);
  hsfile_open_rec(w, 0x05);
  hsfile_w4(w, 1);
  hsfile_w4(w, 1);
  hsfile_w4(w, 1);
  hsfile_w8(w, 1);
  hsfile_close_rec(w);
  heap(w);
  hsfile_open_rec(w, 0x2C);
  hsfile_close_rec(w);
}
