/* SPDX-License-Identifier: Apache-2.0 */
/* A file in memory as the hprof converter's input (src/profile/hprof_conv.h), handed over in pieces
 * of at most `piece` bytes, so a test or fuzzer sees the converter cope with short reads. In the
 * ddmc_testutil library; the hprof fuzzer (tests/fuzz) compiles memsrc.c itself (no cmocka there). */
#ifndef DDMC_TEST_MEMSRC_H
#define DDMC_TEST_MEMSRC_H

#include <stddef.h>
#include <stdint.h>

#include "profile/hprof_conv.h"

typedef struct memsrc {
  const uint8_t *p; /* the file, owned by the caller; outlives the input */
  size_t n, pos;    /* its length, and the next byte to hand over */
  size_t piece;     /* at most this many bytes per fill (SIZE_MAX: all that fits) */
} memsrc;

/* The converter's input reading s (fill, skip, rewind; none fails). s must outlive it. */
ddmc__prof_hpconv_input memsrc_input(memsrc *s);

#endif
