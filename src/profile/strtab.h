/* SPDX-License-Identifier: Apache-2.0 */
/* A string table as REAL carries them: each distinct string once, numbered in order of first
 * use, indexes that fit a u2. Pure: no I/O, no VM. Thread: one user at a time. */
#ifndef DDMC_PROFILE_STRTAB_H
#define DDMC_PROFILE_STRTAB_H

#include "common.h"

#define DDMC__STRTAB_MAX 65535u /* REAL's counts and indexes are u2 */

typedef struct ddmc__prof_strtab {
  const ddmc__mem *mem;
  char **v; /* copies, in index order */
  uint32_t n, cap;
  uint32_t *hash; /* open addressing: index + 1, 0 = empty */
  uint32_t hcap;  /* power of two, over twice n */
  uint32_t max;   /* at most this many strings (DDMC__STRTAB_MAX, or less for tests) */
} ddmc__prof_strtab;

void ddmc__prof_strtab_init(ddmc__prof_strtab *t, const ddmc__mem *mem, uint32_t max);
void ddmc__prof_strtab_free(ddmc__prof_strtab *t);
/* The index of s (NULL is ""), adding a copy on first use. Returns the index (>= 0), DDMC_ETOOBIG
 * when the table is full and s is new, or DDMC_ENOMEM. */
int32_t ddmc__prof_strtab_add(ddmc__prof_strtab *t, const char *s);
/* Writes every string as [u4 UTF-16 units][UTF-16BE], in index order. Returns the buf error. */
int ddmc__prof_strtab_write(const ddmc__prof_strtab *t, ddmc_buf *out);

#endif
