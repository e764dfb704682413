/* One peer connection as the JDWP thread sees it. Only the JDWP thread touches a session. */
#ifndef DDMC_SESSION_H
#define DDMC_SESSION_H

#include "jdwp/framer.h"
#include "vm_int.h"

/* Above this many unsent bytes the JDWP thread stops reading requests and stops draining the
 * queue: a peer that does not read cannot make the VM buffer without bound, and VM threads see
 * DDMC_EQFULL instead of blocking. */
#define DDMC__OUT_HIGH_WATER ((size_t)1 << 20)

typedef struct ddmc__session {
  ddmc_vm *vm;
  int fd;
  ddmc__framer fr;
  ddmc_buf out;    /* bytes to write; out_off of them already written */
  size_t out_off;
  ddmc_buf reply;  /* payload of the reply being built */
  ddmc_buf hbuf;   /* scratch for handler replies after the first chunk of a packet */
  ddmc_buf extra;  /* whole packets to send right after the current reply */
  ddmc_buf zbuf;   /* ZLIB inflate/deflate scratch */
  int shaken;
  int64_t hs_deadline;
} ddmc__session;

/* A session on fd (fd may be -1 for a session fed by ddmc__session_input alone: fuzzers). */
void ddmc__session_init(ddmc__session *s, ddmc_vm *vm, int fd);
/* Bytes from the peer: frames them and handles every complete packet. Replies accumulate in
 * s->out. Returns 0 or an error that ends the session. */
int ddmc__session_input(ddmc__session *s, const uint8_t *p, size_t n);
/* Ends the session: hooks (disconnected, debugger_detached) run, fd closed, memory freed. why is
 * 0 or the error that ended it (for the log). */
void ddmc__session_end(ddmc__session *s, int why);

/* Handles one complete packet (dispatch.c). Returns 0, or an error that ends the session. */
int ddmc__session_packet(ddmc__session *s, const ddmc__packet *pkt);
/* Moves queued unsolicited packets into s->out (compressing for a ZLIB peer). */
int ddmc__session_drain_queue(ddmc__session *s);
/* Appends the current DDM reply (or a bare header when there is no payload) to s->out. */
int ddmc__session_append_ddm_packet(ddmc__session *s, ddmc_buf *dst, int is_reply, uint32_t id,
                                    uint32_t type, const uint8_t *payload, size_t n);

#endif
