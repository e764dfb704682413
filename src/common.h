/* SPDX-License-Identifier: Apache-2.0 */
/* Internal declarations shared by every part of the library: allocation, logging, clocks,
 * the growable buffer behind ddmc_buf, UTF conversion, and thread-safety annotations.
 * Nothing here is exported. */
#ifndef DDMC_COMMON_H
#define DDMC_COMMON_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "ddmc/ddmc.h"
#include "lock.h"

/* ddmc_options as 0.3.0 had it: a caller built against it passes this size (the rest defaults). */
#define DDMC__OPTIONS_V03_SIZE offsetof(ddmc_options, timeout_ms)

/* Names the lock that guards a field. Documentation only: clang's guarded_by cannot name a
 * sibling struct member in C (only in C++), so -Wthread-safety cannot check these. */
#define DDMC_GUARDED_BY(x)

#define DDMC__MIN(a, b) ((a) < (b) ? (a) : (b))
#define DDMC__MAX(a, b) ((a) > (b) ? (a) : (b))

/* ---- allocation (alloc.c) */
typedef struct ddmc__mem {
  ddmc_allocator a; /* every member set: NULL members were replaced by libc wrappers */
} ddmc__mem;

void ddmc__mem_init(ddmc__mem *m, const ddmc_allocator *user);
void *ddmc__malloc(const ddmc__mem *m, size_t n);
void *ddmc__calloc(const ddmc__mem *m, size_t count, size_t size); /* overflow-checked */
void *ddmc__realloc(const ddmc__mem *m, void *p, size_t n);
void ddmc__free(const ddmc__mem *m, void *p);          /* NULL-safe; keeps errno */
char *ddmc__strdup(const ddmc__mem *m, const char *s); /* NULL -> NULL */
/* Large, short-lived, written-once buffers (a heap dump's blocks): with the default allocator,
 * pages mapped up front (mmap MAP_POPULATE); with the VM's allocator, that allocator. Free with
 * ddmc__big_free and the same n. */
void *ddmc__big_alloc(const ddmc__mem *m, size_t n);
void ddmc__big_free(const ddmc__mem *m, void *p, size_t n);
/* With the default allocator on glibc, gives the heap's free pages back to the system
 * (malloc_trim): after a peer's session freed much, or after a big reply, its peak would otherwise
 * stay resident. Thread: any. */
void ddmc__mem_trim(const ddmc__mem *m);

/* ---- growable big-endian writer (wire.c); the public ddmc_buf */
struct ddmc_buf {
  const ddmc__mem *mem;
  uint8_t *p;
  size_t len, cap;
  size_t max;   /* growth past this sets DDMC_ETOOBIG */
  int err;      /* sticky */
  int borrowed; /* p is the caller's storage: copied out, never freed, on growth */
};

void ddmc__buf_init(ddmc_buf *b, const ddmc__mem *mem, size_t max);
/* Starts on caller storage (a stack array): small messages then need no allocation. */
void ddmc__buf_init_on(ddmc_buf *b, const ddmc__mem *mem, size_t max, void *storage, size_t n);
/* The UTF-16BE code units of utf8 (NULL means ""), without the [u4] count ddmc_buf_put_str adds:
 * HELO gives its two string lengths ahead of both strings. */
int ddmc__buf_put_chars(ddmc_buf *b, const char *utf8);
void ddmc__buf_reset(ddmc_buf *b); /* len = 0, err = 0; keeps the memory */
void ddmc__buf_free(ddmc_buf *b);
/* Makes room for n more bytes and returns a pointer to them (len grows), or NULL + sticky err. */
uint8_t *ddmc__buf_append(ddmc_buf *b, size_t n);
/* Drops the first n bytes. */
void ddmc__buf_consume(ddmc_buf *b, size_t n);
/* Frees an empty buffer's memory when it holds more than keep bytes (the next write allocates
 * again); returns 1 if it did. */
int ddmc__buf_shrink(ddmc_buf *b, size_t keep);

static inline void ddmc__put_u16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)(v >> 8);
  p[1] = (uint8_t)v;
}
static inline void ddmc__put_u32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}
static inline uint16_t ddmc__get_u16(const uint8_t *p) { return (uint16_t)((p[0] << 8) | p[1]); }
static inline uint32_t ddmc__get_u32(const uint8_t *p) {
  return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

/* ---- UTF conversion (utf.c) */
/* UTF-8 (n bytes) to UTF-16BE bytes, 2 per code unit; out may be NULL to measure. Invalid
 * input -> U+FFFD. Returns the number of code units. */
size_t ddmc__utf8_to_utf16be(const char *s, size_t n, uint8_t *out);
/* UTF-16BE bytes (units code units at p) to UTF-8 in out (outlen bytes, NUL-terminated when
 * outlen > 0). Returns the UTF-8 length needed, excluding the NUL. Unpaired surrogates -> U+FFFD. */
size_t ddmc__utf16be_to_utf8(const uint8_t *p, size_t units, char *out, size_t outlen);

/* ---- time (clock.c) */
int64_t ddmc__now_ms(void);  /* CLOCK_MONOTONIC */
int64_t ddmc__wall_ms(void); /* CLOCK_REALTIME, ms since the epoch */

#endif
