/* SPDX-License-Identifier: Apache-2.0 */
/* The one send path for VM-originated packets. Thread: any, unless noted; none blocks on a peer.
 *
 * Everything the VM side says without being asked — DDM chunks (THCR, HPSG, WAIT...), JDWP
 * command packets (Event.Composite), replies that are sent later than their request was handled —
 * goes into the ring (ring.h); only the JDWP thread takes it out, writes the JDWP header at that
 * moment (so packet ids are in send order) and owns the socket.
 *
 * Payloads too big for one ring record, or too big to copy at all (heap dumps, method traces),
 * go as an "external" record: a batch (many chunks, built privately and queued all or nothing)
 * or a stream (one packet whose bytes a callback produces piece by piece while the socket drains).
 * Either way the sender is never blocked and the queued total stays under opt.sendq_bytes. */
#ifndef DDMC_SEND_H
#define DDMC_SEND_H

#include <sys/types.h>

#include "vm_int.h"

/* A JDWP command packet for the session numbered session (ddmc__send_session_number; 0 = whichever is
 * current when it is sent): a packet meant for a session that has ended is dropped, not sent to
 * the next peer. */
int ddmc__send_cmd(ddmc_vm *vm, uint32_t session, uint8_t set, uint8_t cmd, const ddmc_iov *iov, int iovcnt);
/* The reply to request id of session, sent after its handler returned (see DDMC__REPLY_DEFERRED). */
int ddmc__send_reply(ddmc_vm *vm, uint32_t session, uint32_t id, uint16_t error, const ddmc_iov *iov,
                     int iovcnt);
/* The number of the session in the debugger seat (docs/sessions.md), or 0 when none holds it. */
uint32_t ddmc__send_session_number(const ddmc_vm *vm);

/* Called once by the JDWP thread: its own sends skip the wake-up. */
void ddmc__send_mark_jdwp_thread(void);
/* JDWP thread: DDM chunks, batches and DDM streams it queues until the next call are for session
 * (0: every DDM session). dispatch.c sets it around each request. */
void ddmc__send_set_requester(uint32_t session);

/* Waits until everything queued so far has been written to the peer, the session ended, or
 * timeout_ms passed. Returns 0 when flushed, DDMC_ETIMEDOUT, or DDMC_ENOTCONN. Thread: any but
 * the JDWP thread. */
int ddmc__send_flush(ddmc_vm *vm, int timeout_ms);

/* ---- large payloads */

/* One packet produced in pieces. read copies the next bytes (at most cap, at least 1) to dst and
 * returns how many, or a negative error that abandons the packet (and the session: a half-sent
 * packet cannot be taken back). done is called exactly once, on the JDWP thread, with 0 when all
 * bytes went out or an error when the packet was dropped (session ended, refused). Called on the
 * JDWP thread, which is also where the source may be freed. */
typedef struct ddmc__send_source {
  ssize_t (*read)(void *ud, uint8_t *dst, size_t cap);
  void (*done)(void *ud, int status);
  void *ud;
} ddmc__send_source;

/* Queues one packet of len payload bytes that src produces: a DDM chunk of type `type` when
 * set == 0 (never compressed), otherwise a JDWP command (set, cmd). On failure src->done has been
 * called with the error. */
int ddmc__send_stream(ddmc_vm *vm, uint8_t set, uint8_t cmd, uint32_t type, uint64_t len, const ddmc__send_source *src);

/* Many DDM chunks that go into the queue as one unit (heap segments after a GC). */
typedef struct ddmc__send_batch {
  ddmc_vm *vm;
  ddmc_buf data; /* [u4 type][u4 len][payload] per chunk */
  size_t count;
} ddmc__send_batch;
void ddmc__send_batch_init(ddmc__send_batch *b, ddmc_vm *vm);
int ddmc__send_batch_add(ddmc__send_batch *b, uint32_t type, const void *data, size_t len);
int ddmc__send_batch_commit(ddmc__send_batch *b); /* queues all or nothing; frees in any case */
void ddmc__send_batch_discard(ddmc__send_batch *b);

/* ---- the consumer's view of external records (jdwp/output.c) */
typedef struct ddmc__send_ext {
  int is_batch;
  ddmc_buf batch;      /* is_batch: the chunks */
  int users;           /* sessions sending it (a batch may go to several, each at its own
                          offset); the last to finish ends it. JDWP thread */
  ddmc__send_source src; /* !is_batch */
  uint8_t set, cmd;
  uint32_t type;
  uint64_t len, sent;  /* payload bytes in all, and written to the session so far */
  int started;         /* the header is out */
  size_t charged;      /* bytes counted against opt.sendq_bytes until freed */
} ddmc__send_ext;
/* Ends an external payload: calls done (streams), frees it, returns its charge. JDWP thread. */
void ddmc__send_ext_finish(ddmc_vm *vm, ddmc__send_ext *e, int status);
/* The ring's drop callback (arg: the vm): frees what an unsent record owns. */
void ddmc__send_drop(void *vm, ddmc__send_rec *rec);

#endif
