/* SPDX-License-Identifier: Apache-2.0 */
/* One peer connection as the JDWP thread sees it, and the set of them the thread serves side by
 * side (docs/sessions.md). Only the JDWP thread touches a session or the set.
 *
 * Bounds (what one peer can make the VM hold or do):
 * - out: at most DDMC__OUT_HIGH_WATER unsent bytes before the JDWP thread stops reading requests
 *   and stops draining the queue, plus one reply (DDMC__REPLY_MAX) past it; a peer that does not
 *   read cannot make the VM buffer without bound, and VM threads see DDMC_EQFULL instead of
 *   blocking.
 * - one request packet runs at most DDMC__PACKET_CHUNKS chunks and produces at most
 *   DDMC__PACKET_REPLY_BYTES of reply; the rest of a packet past either budget is answered with a
 *   single FAIL and not run. */
#ifndef DDMC_SESSION_H
#define DDMC_SESSION_H

#include "jdwp/framer.h"
#include "send/send.h"
#include "vm_int.h"

#define DDMC__OUT_HIGH_WATER ((size_t)1 << 20)
#define DDMC__REPLY_MAX ((size_t)64 << 20)
/* A session's reply and output buffers give back what they hold over this once empty. */
#define DDMC__KEEP_BYTES ((size_t)256 << 10)
/* ... once no big reply has come for this long: a debugger asking for the frames of a deep stack
 * at every step would otherwise pay for the memory's return and its faulting in again each time. */
#define DDMC__TRIM_DELAY_MS 500
#define DDMC__PACKET_CHUNKS 64
#define DDMC__PACKET_REPLY_BYTES ((size_t)1 << 20)

typedef struct ddmc__jdwp_sessions ddmc__jdwp_sessions;

typedef struct ddmc__jdwp_session {
  ddmc_vm *vm;
  ddmc__jdwp_sessions *set; /* NULL: a session on its own (fuzzers, unit tests): always the debugger */
  int fd;
  uint32_t number; /* from vm->sessions_begun at the handshake; 0 before */
  int ddm;         /* it sent a DDM packet: unsolicited chunks are for it */
  int zlib;        /* it sent a ZLIB chunk: big chunks go to it compressed */
  size_t ext_off;  /* its position in ext when ext is a batch shared with other sessions */
  uint64_t lost;   /* unsolicited packets dropped for it while its output was full */
  ddmc__jdwp_framer fr;
  ddmc_buf out;    /* bytes to write; out_off of them already written */
  size_t out_off;
  int64_t trim_at; /* a big reply went out: at this time (ms), out empty, its buffers shrink and
                      the C library trims (thread.c); 0: nothing to give back */
  ddmc_buf reply;  /* payload of the reply being built */
  ddmc_buf hbuf;   /* scratch for handler replies after the first chunk of a packet */
  ddmc_buf extra;  /* whole packets to send right after the current reply */
  ddmc_buf later;  /* whole packets queued for it while ext is being sent: they follow it */
  ddmc_buf zbuf;   /* ZLIB inflate/deflate scratch */
  ddmc__send_ext *ext; /* a batch or stream being sent: nothing else goes out until it ends */
  int shaken;
  int64_t hs_deadline;
  uint64_t sent;        /* bytes written to fd */
  uint64_t taken;       /* of those, what the peer had taken at progress_ms */
  int64_t progress_ms;  /* when the peer last took output (or none waited): a stalled peer is dropped */
  int why;              /* non-zero: the session ends at the end of the JDWP thread's turn */
  int leaving;          /* it sent VirtualMachine.Dispose: nothing more is read, it ends once its output is out */
} ddmc__jdwp_session;

/* The sessions the JDWP thread serves at once (at most ddmc_options.max_sessions, never more than
 * DDMC__SESSIONS_MAX) and the debugger seat: the session whose requests may change the VM's
 * world and which gets the debugger's events (vm->session_no names it). */
#define DDMC__SESSIONS_MAX 64
struct ddmc__jdwp_sessions {
  ddmc__jdwp_session *s[DDMC__SESSIONS_MAX];
  int n;
  int nddm;           /* sessions with ddm set: vm->ddm_active while non-zero */
  uint32_t seat;      /* the debugger seat's session number, 0: free */
  int seat_confirmed; /* the holder sent a command that changes the VM's world: it keeps the seat */
};

/* Seat rules for a non-DDM command of session s (dispatch.c): 0 when s may run it (the seat moves
 * to s when that is the rule), else a JDWP error to answer with. *as_debugger is set when s runs it
 * as the debugger (debugger_active, the VM's hook). */
int ddmc__jdwp_seat_check(ddmc__jdwp_session *s, uint8_t set, uint8_t cmd, int *as_debugger);
/* SESS's reply payload for s (docs/protocol/ddm-wire.md, "SESS"): the sessions, the seat, and
 * whether its holder is a debugger, so a monitor can say "debugger attached" beside one. */
void ddmc__jdwp_seat_describe(const ddmc__jdwp_session *s, ddmc_buf *b);
/* Gives the seat to s (services' session_start run). */
void ddmc__jdwp_seat_take(ddmc__jdwp_session *s);
/* The session numbered n in s's set (s itself when it has none), or NULL. */
ddmc__jdwp_session *ddmc__jdwp_session_find(ddmc__jdwp_session *s, uint32_t n);

/* A session on fd (fd may be -1 for a session fed by ddmc__jdwp_session_input alone: fuzzers). */
void ddmc__jdwp_session_init(ddmc__jdwp_session *s, ddmc_vm *vm, int fd);
/* Bytes from the peer: frames them and handles every complete packet. Replies accumulate in
 * s->out. Returns 0 or an error that ends the session. */
int ddmc__jdwp_session_input(ddmc__jdwp_session *s, const uint8_t *p, size_t n);
/* Ends the session: hooks (disconnected, debugger_detached) run, fd closed, memory freed. why is
 * 0 or the error that ended it (for the log). */
void ddmc__jdwp_session_end(ddmc__jdwp_session *s, int why);
static inline size_t ddmc__jdwp_session_pending(const ddmc__jdwp_session *s) { return s->out.len - s->out_off; }

/* Handles one complete packet (dispatch.c). Returns 0, or an error that ends the session. */
int ddmc__jdwp_session_packet(ddmc__jdwp_session *s, const ddmc__jdwp_packet *pkt);

/* ---- output (output.c): packets into s->out, headers written here */
/* A DDM chunk as a command (is_reply 0, a fresh id) or as the reply to id; compressed for a
 * ZLIB peer when that makes it smaller. dst is s->out or s->extra. */
int ddmc__jdwp_out_ddm(ddmc__jdwp_session *s, ddmc_buf *dst, int is_reply, uint32_t id, uint32_t type,
                       const uint8_t *payload, size_t n);
int ddmc__jdwp_out_reply(ddmc__jdwp_session *s, uint32_t id, uint16_t error, const uint8_t *payload, size_t n);
/* Moves queued packets into s->out until the queue is empty or out reaches the high-water mark.
 * With inline_only (inside a request), stops at a batch or stream, which starts only between
 * requests. Returns 0 or an error that ends the session. */
int ddmc__jdwp_session_drain_queue(ddmc__jdwp_session *s, int inline_only);
/* Drops everything still queued or in progress (the session ends). */
void ddmc__jdwp_session_drop_output(ddmc__jdwp_session *s, int why);

#endif
