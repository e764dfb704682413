/* SPDX-License-Identifier: Apache-2.0 */
/* A small heap dump as HotSpot's dumper writes it ("JAVA PROFILE 1.0.2", ids of 8 bytes, objects
 * at 8-byte aligned addresses, heap dump segments), known to the byte: the converter's input in
 * test_hprof_conv and the VM's own dumper's file in test_hprof. In the ddmc_testutil library.
 * Strings, LOAD CLASS (an array class twice, as HotSpot does), a STACK FRAME and TRACE, roots,
 * four classes (one with a static and three instance fields), two instances (one referring to
 * an object the dump left out), an int[] and a Sub[], HEAP DUMP END. */
#ifndef DDMC_TEST_HSFILE_H
#define DDMC_TEST_HSFILE_H

#include <stddef.h>
#include <stdint.h>

typedef struct hsfile {
  uint8_t b[8192];
  size_t n;
  size_t rec; /* where the open record's length goes */
} hsfile;

/* Input ids: strings 0x7f0000001000 + k, objects at 0x7000000 + 8 * k. */
#define S(k) (0x7f0000001000ull + (k))
#define A(k) (0x7000000ull + 8 * (uint64_t)(k))
enum { S_OBJECT = 1, S_SUB, S_INTS, S_SUBS, S_A, S_REF, S_L, S_ST, S_UNUSED, S_MAIN, S_SIG, S_FILE };
enum { A_OBJECT = 1, A_SUB, A_INTS_C, A_SUBS_C, A_SUB1 = 100, A_SUB2, A_INTS, A_SUBS, A_GONE = 5000 };

/* The file into *w (zeroed first). */
void hsfile_make(hsfile *w);
/* Appends: a byte, two, four, eight (big-endian); a string's bytes; a record's head, its length
 * filled in by hsfile_close_rec. */
void hsfile_w1(hsfile *w, uint32_t v);
void hsfile_w4(hsfile *w, uint32_t v);
void hsfile_w8(hsfile *w, uint64_t v);
void hsfile_open_rec(hsfile *w, uint32_t tag);
void hsfile_close_rec(hsfile *w);

#endif
