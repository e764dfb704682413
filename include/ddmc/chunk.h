/* SPDX-License-Identifier: Apache-2.0 */
/* DDM chunks: the C counterpart of ChunkHandler / DdmServer, for handler authors.
 *
 * A chunk is [u4 type][u4 length][payload] inside a JDWP packet of command set 199, command 1.
 * Handlers are registered per type. Requests are dispatched on the JDWP thread; a handler's reply
 * goes out as the JDWP reply packet. Unsolicited chunks can be sent from any thread. */
#ifndef DDMC_CHUNK_H
#define DDMC_CHUNK_H

#include <stddef.h>
#include <stdint.h>

#include "export.h"
#include "vm.h"
#include "wire.h"

DDMC_BEGIN_DECLS

typedef uint32_t ddmc_chunk_type;
#define DDMC_FOURCC(a, b, c, d) \
  (((uint32_t)(uint8_t)(a) << 24) | ((uint32_t)(uint8_t)(b) << 16) | ((uint32_t)(uint8_t)(c) << 8) | (uint32_t)(uint8_t)(d))

/* "HELO" for DDMC_FOURCC('H','E','L','O'); non-printable bytes become '?'. Returns out. */
DDMC_EXTERN char *ddmc_chunk_type_str(ddmc_chunk_type t, char out[5]);

/* A chunk as a handler sees it: data borrowed until the handler returns. */
typedef struct ddmc_chunk {
  ddmc_chunk_type type;
  const uint8_t *data;
  size_t len;
} ddmc_chunk;

typedef struct ddmc_chunk_handler {
  /* Thread: JDWP thread. *reply_type starts as req->type. Write the reply payload into reply.
   * Return 0: an empty reply buffer sends the bare 11-byte success reply, otherwise one chunk of
   * *reply_type. Return DDMC_ENOENT: the answer to a type nobody handles, the same empty reply.
   * Return another DDMC_E* error: the peer gets FAIL [code = the error][ddmc_strerror]. */
  int (*handle)(void *ud, ddmc_vm *vm, const ddmc_chunk *req, ddmc_chunk_type *reply_type,
                ddmc_buf *reply);
  /* Thread: JDWP thread. On the first DDM packet of a session (NULL: not interested), to each
   * handler registered at that moment; one registered later in the session hears neither this
   * nor disconnected (docs/ddm-chunks.md, "Sessions"). */
  void (*connected)(void *ud, ddmc_vm *vm);
  /* Thread: JDWP thread. Exactly once after each connected, when the session ends. */
  void (*disconnected)(void *ud, ddmc_vm *vm);
  /* Exactly once, after unregistration or in ddmc_vm_free; never concurrent with the others. */
  void (*destroy)(void *ud);
} ddmc_chunk_handler;

/* Registers h (copied) for type; ud is passed to every hook. Thread: any.
 * Returns 0, DDMC_EEXIST (type taken: the built-ins take HELO FEAT EXIT DBGD THEN THST STKL
 * HPIF HPGC HPSG NHSG WAIT), DDMC_EINVAL (no handle), DDMC_ENOMEM. */
DDMC_EXTERN int ddmc_register_handler_(ddmc_vm *vm, ddmc_chunk_type type, const ddmc_chunk_handler *h,
                                       size_t size, void *ud);
/* ABI: passes the caller's sizeof(ddmc_chunk_handler); hooks added later read as NULL. */
#define ddmc_register_handler(vm, type, h, ud) \
  ddmc_register_handler_((vm), (type), (h), sizeof(ddmc_chunk_handler), (ud))
/* On return no call of the handler is in flight (unless called from inside that handler, which
 * is allowed), and its destroy has run. Returns 0 or DDMC_ENOENT. Thread: any. */
DDMC_EXTERN int ddmc_unregister_handler(ddmc_vm *vm, ddmc_chunk_type type);

/* Unsolicited chunk to the peer (one chunk per packet). Copies data. Thread: any; never blocks
 * on the network. Returns 0, DDMC_ENOTCONN (no peer: one atomic read), DDMC_EQFULL (dropped and
 * counted), DDMC_ETOOBIG (over the packet cap), DDMC_ENOMEM. */
DDMC_EXTERN int ddmc_send_chunk(ddmc_vm *vm, ddmc_chunk_type type, const void *data, size_t len);

typedef struct ddmc_iov {
  const void *base;
  size_t len;
} ddmc_iov;
/* Same, with the payload gathered from iov[0..iovcnt). */
DDMC_EXTERN int ddmc_send_chunkv(ddmc_vm *vm, ddmc_chunk_type type, const ddmc_iov *iov, int iovcnt);

/* For a handler that wants to answer FAIL with its own code and message: writes
 * [u4 code][u4 n][UTF-16 msg] into reply and sets *reply_type = FAIL. Returns 0 or the buf error. */
DDMC_EXTERN int ddmc_reply_fail(ddmc_buf *reply, ddmc_chunk_type *reply_type, int32_t code,
                                const char *msg_utf8);

DDMC_END_DECLS

#endif
