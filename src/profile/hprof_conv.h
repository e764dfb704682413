/* SPDX-License-Identifier: Apache-2.0 */
/* A VM's own hprof (Java SE's "JAVA PROFILE 1.0.1" / "1.0.2", ids of 4 or 8 bytes: what
 * HotSpot's dumper writes) rewritten into Android's 1.0.3 with 4-byte ids
 * (docs/protocol/profiling.md §6), for the bridge's write_hprof (hprof_native.c).
 *
 * Two passes over the same input. The first reads the records' heads and the heap dump's
 * sub-records but skips object contents: it learns the strings, the classes' field types, the
 * range of the object ids and which ids the dump defines, and the exact length of every output
 * segment and of the whole output, and refuses (DDMC_ENOTSUP, with why) anything it would not
 * convert faithfully (an unknown record or sub-record, an instance whose bytes are not its
 * class's fields, ids that cannot be made 4 bytes). The second produces the output, piece by
 * piece: so a 1.0.3 file of a known length can be streamed (HPDS is one chunk whose length goes
 * first) without holding it. Instances and arrays, the bulk of a dump, are read in place in the
 * input buffer by a loop of their own in each pass, and the second writes them straight into the
 * caller's buffer when they fit there (everything else goes through the output buffer).
 *
 * What changes: the magic (1.0.3), the id size (4), every id: strings are numbered 1..n in the
 * order they are first met; objects (and classes) get n + 1 + (address - lowest) >> k, k the
 * common alignment of the object ids, which must stay below 0xF0000000; stack frames keep their
 * serial numbers (which must fit 4 bytes); the names of LOAD CLASS become Android's
 * ("java.lang.String", "int[]", "java.lang.Object[][]"); a JNI global root's reference id becomes
 * 0; lengths and instance byte counts shrink by the ids' lost bytes. A reference to nothing the
 * dump defines becomes 0 (counted in dangling). Everything else is copied.
 *
 * Memory (anonymous, all of it: the input is read() into the buffer, never mapped): the input
 * buffer (1 MiB); the output buffer (64 KiB at first; at most one sub-record, 64 Ki array
 * elements or one string: a few MiB at worst); tables proportional to the strings and classes of
 * the dump (24 bytes a string in a table that grows eightfold up to 65,536 entries, 1.5 MiB,
 * and twofold beyond, kept between 3/8 and 3/4 full there: at most 64 bytes a string, 96 while
 * it grows; about 48 bytes a class, one a declared instance field, 4 a
 * segment, 24 a LOAD CLASS); and, for the objects, a bit per 8 bytes of every 2 MiB of address space that holds
 * one (32 KiB per such piece: 1/64 of the heap the dump covers when the heap is dense) and, in
 * the second pass, 8 bytes per 2 MiB of the span from the lowest object to the highest (at most
 * 1 MiB; beyond, the pieces are found through their hash table). Nothing else per object.
 * Pure: input comes through fill, no I/O of its own. Thread: one user at a time. */
#ifndef DDMC_PROFILE_HPROF_CONV_H
#define DDMC_PROFILE_HPROF_CONV_H

#include <sys/types.h>

#include "common.h"

typedef struct ddmc__prof_hpconv ddmc__prof_hpconv;

/* Reads up to cap bytes of the input at the current position into dst: *got = 0 at its end.
 * Returns 0 or an errno. rewind: back to the input's start (between the passes). growing (NULL
 * for a finished file): non-zero while the VM still writes the input, fill then waiting for more
 * rather than ending it; a heap dump record of length 0 read then is one whose length the VM
 * goes back to write when its body is done (JDK 8-11), and fails the pass with DDMC_ESTATE (the
 * caller runs it again over the finished file). */
typedef struct ddmc__prof_hpconv_input {
  int (*fill)(void *arg, uint8_t *dst, size_t cap, size_t *got);
  int (*skip)(void *arg, uint64_t n); /* n bytes forward; 0 or an errno */
  int (*rewind)(void *arg);
  void *arg;
  int (*growing)(void *arg);
} ddmc__prof_hpconv_input;

/* Runs the first pass. Returns 0 with *c (ddmc__prof_hpconv_free) ready to produce *len bytes, or
 * DDMC_ENOTSUP (the input is not something it converts), DDMC_EIO (fill failed), DDMC_ENOMEM,
 * with why in msg. */
int ddmc__prof_hpconv_open(const ddmc__mem *mem, const ddmc__prof_hpconv_input *in, ddmc__prof_hpconv **c,
                           uint64_t *len, char *msg, size_t msglen);
/* The next output bytes, at most cap: > 0 bytes, 0 at the end, or a negative DDMC_E* (the input
 * could not be read, or changed under it so that the output would not be the *len bytes
 * promised: DDMC_EIO; ddmc__prof_hpconv_why says what). */
ssize_t ddmc__prof_hpconv_read(ddmc__prof_hpconv *c, uint8_t *dst, size_t cap);
const char *ddmc__prof_hpconv_why(const ddmc__prof_hpconv *c);
/* What the dump held, for the log: objects (instances and arrays), classes, roots, references
 * to nothing the dump defines (written as 0). */
void ddmc__prof_hpconv_counts(const ddmc__prof_hpconv *c, uint64_t *objects, uint64_t *classes, uint64_t *roots,
                              uint64_t *dangling);
void ddmc__prof_hpconv_free(ddmc__prof_hpconv *c);

#endif
