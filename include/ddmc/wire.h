/* SPDX-License-Identifier: Apache-2.0 */
/* Big-endian writer and reader used by chunk handlers and the VM's JDWP command hook.
 *
 * ddmc_buf is an opaque growable writer with a sticky error: a chain of put calls needs one
 * ddmc_buf_error check at the end. The library creates and owns every ddmc_buf a callback sees;
 * it is valid only for the duration of that callback. Thread: the thread of the callback. */
#ifndef DDMC_WIRE_H
#define DDMC_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "export.h"

DDMC_BEGIN_DECLS

typedef struct ddmc_buf ddmc_buf;

/* Each returns 0 or the sticky error (DDMC_ENOMEM, DDMC_ETOOBIG) and then does nothing. */
DDMC_EXTERN int ddmc_buf_put_u8(ddmc_buf *b, uint8_t v);
DDMC_EXTERN int ddmc_buf_put_u16(ddmc_buf *b, uint16_t v);
DDMC_EXTERN int ddmc_buf_put_u32(ddmc_buf *b, uint32_t v);
DDMC_EXTERN int ddmc_buf_put_u64(ddmc_buf *b, uint64_t v);
DDMC_EXTERN int ddmc_buf_put_bytes(ddmc_buf *b, const void *p, size_t n);
/* [u4 n][u2 * n]: UTF-16 code units written big-endian. */
DDMC_EXTERN int ddmc_buf_put_utf16(ddmc_buf *b, const uint16_t *s, size_t n);
/* [u4 n][u2 * n] from UTF-8 (NULL means ""); invalid sequences become U+FFFD; never truncates. */
DDMC_EXTERN int ddmc_buf_put_str(ddmc_buf *b, const char *utf8);
/* Bytes written so far. */
DDMC_EXTERN size_t ddmc_buf_len(const ddmc_buf *b);
/* First error, 0 if none. */
DDMC_EXTERN int ddmc_buf_error(const ddmc_buf *b);

/* A bounded cursor over borrowed bytes; a plain value the caller owns. A read past the end
 * returns 0 (or NULL), reads nothing and sets err = DDMC_EPROTO. */
typedef struct ddmc_reader {
  const uint8_t *p, *end;
  int err;
} ddmc_reader;

DDMC_EXTERN void ddmc_reader_init(ddmc_reader *r, const void *p, size_t n);
DDMC_EXTERN uint8_t ddmc_read_u8(ddmc_reader *r);
DDMC_EXTERN uint16_t ddmc_read_u16(ddmc_reader *r);
DDMC_EXTERN uint32_t ddmc_read_u32(ddmc_reader *r);
DDMC_EXTERN uint64_t ddmc_read_u64(ddmc_reader *r);
DDMC_EXTERN const uint8_t *ddmc_read_bytes(ddmc_reader *r, size_t n);
/* Reads [u4 n][u2 * n] and converts to UTF-8 into out (always NUL-terminated when outlen > 0).
 * Returns the UTF-8 length it needed (excluding NUL), or DDMC_EPROTO/DDMC_ETOOBIG (out too small:
 * the string is still consumed and out holds a prefix ending on a character boundary). */
DDMC_EXTERN int ddmc_read_str(ddmc_reader *r, char *out, size_t outlen);
DDMC_EXTERN size_t ddmc_reader_left(const ddmc_reader *r);
/* 0 iff no error and every byte was consumed; else DDMC_EPROTO. */
DDMC_EXTERN int ddmc_reader_done(const ddmc_reader *r);

DDMC_END_DECLS

#endif
