/* SPDX-License-Identifier: Apache-2.0 */
/* ddmc_host: the HOST side of DDM (what Android's ddmlib does), as a small static library.
 *
 * It talks to a VM over one JDWP connection: handshake, packet framing, DDM chunk requests and
 * replies, transparent inflation of ZLIB chunks, and pure parsers for the chunk payloads the VM
 * sends. It is used by the project's integration tests and by the `ddmc` command-line monitor.
 *
 * It is INTERNAL: a static library built for this repository's tools and tests, never installed
 * (no header or library under the install prefix), with no ABI or API promise; names may change
 * with any commit (host/README.md). A program outside the repository drives `ddmc` instead.
 *
 * It is written from the wire facts in docs/protocol/ddm-wire.md and links nothing from libddmc: it uses
 * only the header-only parts of include/ddmc (the DDMC_E* codes and DDMC_FOURCC), so the host
 * side can never "agree with itself" through shared code with the VM side.
 *
 * Conventions
 * - Every function that can fail returns 0 or a negative DDMC_E* code (ddmc/error.h); use
 *   ddmc_host_strerror() for a message.
 * - Timeouts are in milliseconds: < 0 waits forever, 0 only looks at what is already there.
 * - One ddmc_host handle = one connection, used by ONE thread at a time (no internal locking).
 *   Different handles are independent. The pure parsers are thread-safe (no shared state).
 * - Parsers never read outside [p, p+n). Strings on the wire are [u4 UTF-16 unit count][UTF-16BE];
 *   they come back as NUL-terminated UTF-8 (surrogate pairs combined; an unpaired surrogate or
 *   an embedded U+0000 becomes U+FFFD so the C string stays intact) allocated with malloc; each
 *   parsed struct has a *_free function that frees its members (not the struct itself) and
 *   zeroes it, and is safe to call on a zeroed struct or twice. On error a parser leaves its
 *   output zeroed: nothing to free. Bytes after the last field a parser knows are ignored (the
 *   VM may append fields, as HELO did over the years).
 */
#ifndef DDMC_HOST_H
#define DDMC_HOST_H

#include <stddef.h>
#include <stdint.h>

#include "ddmc/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* FOURCC without pulling in ddmc/chunk.h (which drags the VM headers along). Same value as
 * DDMC_FOURCC: "HELO" = 0x48454c4f. */
#define DDMC_HOST_FOURCC(a, b, c, d)                                                           \
  (((uint32_t)(uint8_t)(a) << 24) | ((uint32_t)(uint8_t)(b) << 16) | ((uint32_t)(uint8_t)(c) << 8) | \
   (uint32_t)(uint8_t)(d))

/* The JDWP handshake, both ways (docs/protocol/ddm-wire.md §1.1). */
#define DDMC_HOST_HANDSHAKE "JDWP-Handshake"
#define DDMC_HOST_HANDSHAKE_LEN 14u
/* JDWP framing constants (docs/protocol/ddm-wire.md §1.2). */
#define DDMC_HOST_HEADER_LEN 11u
#define DDMC_HOST_FLAG_REPLY 0x80u
#define DDMC_HOST_DDM_CMDSET 199u
#define DDMC_HOST_DDM_CMD 1u
/* First request id, as ddmlib (docs/protocol/ddm-wire.md §1.2); ids count up and wrap back here after 0x7fffffff so
 * they never collide with the VM's own id spaces (0x1..., 0x2..., adbconnection's 0x8...). */
#define DDMC_HOST_FIRST_ID 0x40000000u
/* Default cap on an incoming packet (header included) and on a ZLIB chunk's inflated size. */
#define DDMC_HOST_DEFAULT_MAX_PACKET (64u * 1024u * 1024u)
/* Default cap on the bytes of unsolicited packets kept while ddmc_host_request() waits. */
#define DDMC_HOST_DEFAULT_MAX_QUEUE (256u * 1024u * 1024u)
/* Default timeout for sending one packet (the peer must drain its socket meanwhile). */
#define DDMC_HOST_DEFAULT_SEND_TIMEOUT_MS 10000

/* "invalid argument", ...; "unknown error" for anything not a DDMC_E* code. Thread: any. The
 * host library keeps its own copy of the table so it does not need libddmc. */
const char *ddmc_host_strerror(int err);

/* ------------------------------------------------------------------------------------------ */
/* Connection                                                                                  */
/* ------------------------------------------------------------------------------------------ */

typedef struct ddmc_host ddmc_host; /* opaque: one JDWP connection */

/* Connects to host:port (name or numeric address, IPv4 or IPv6) with a non-blocking connect()
 * bounded by timeout_ms (< 0: the OS's own timeout). On success *out owns the socket
 * (TCP_NODELAY, close-on-exec). The handshake is NOT done: call ddmc_host_handshake().
 * Returns 0, DDMC_EINVAL (NULL out/host), DDMC_EADDR (name does not resolve), DDMC_ECONNREFUSED
 * (every address refused), DDMC_ETIMEDOUT, DDMC_EIO (other socket errors), DDMC_ENOMEM. */
int ddmc_host_connect_tcp(ddmc_host **out, const char *host, uint16_t port, int timeout_ms);

/* Adopts an already-connected socket fd (e.g. the one adb forwards for jdwp:<pid>, or one end of
 * a socketpair). On success the handle owns fd and closes it in ddmc_host_close/free; on error
 * the caller still owns it. The fd's flags are left alone: all I/O uses poll() plus
 * MSG_DONTWAIT/MSG_NOSIGNAL, so a blocking fd works and a vanished peer never raises SIGPIPE.
 * Returns 0, DDMC_EINVAL (NULL out, fd < 0, or fd not a socket), DDMC_ENOMEM. */
int ddmc_host_from_fd(ddmc_host **out, int fd);

/* One request to an adb server on h (a TCP handle to it): sends [4 hex digits of length][req]
 * (req at most 255 bytes). ddmc_host_adb_send only sends (the caller reads the verdict itself,
 * as a non-blocking prober does); ddmc_host_adb_request also waits up to timeout_ms for the
 * verdict and returns 0 (OKAY), DDMC_ENOENT (FAIL: the server's message goes to err),
 * DDMC_EPROTO (not an adb server), DDMC_ETIMEDOUT, DDMC_ECLOSED, DDMC_EIO, DDMC_EINVAL. Thread:
 * the caller's. */
int ddmc_host_adb_send(ddmc_host *h, const char *req);
/* The adb host protocol's length prefix (of a request, a FAIL message, a track-jdwp list):
 * exactly 4 characters, each in [0-9a-fA-F], as adb writes them ("%04x"). No sign, no space, no
 * "0x": strtoul and sscanf("%4x") take "-004" (a length near ULONG_MAX) and " 04", so every
 * reader of a prefix goes through this one. Reads s[0..3] only (no terminator needed). Returns
 * the length, 0..65535, or -1 when the 4 characters are anything else. Thread: any; pure. */
int ddmc_host_adb_hexlen(const char *s);
int ddmc_host_adb_request(ddmc_host *h, const char *req, int timeout_ms, char *err, size_t errlen);

/* Connects through a local adb server (adb_host:adb_port, e.g. 127.0.0.1:5037) to the JDWP
 * stream of process pid on the device serial (NULL or "": the only device), as ddmlib does:
 * the adb requests host:transport:<serial> then jdwp:<pid>. The handle then needs
 * ddmc_host_handshake like a TCP one. Returns 0; DDMC_ECONNREFUSED / DDMC_ETIMEDOUT (no adb
 * server); DDMC_ENOENT (adb refused: no such device or process; its message goes to err);
 * DDMC_EPROTO (not an adb server); DDMC_EIO; DDMC_ENOMEM. Thread: the caller's. */
int ddmc_host_connect_adb(ddmc_host **out, const char *adb_host, uint16_t adb_port, const char *serial, uint32_t pid,
                          int timeout_ms, char *err, size_t errlen);

/* Closes the socket (idempotent); the handle stays valid and later I/O returns DDMC_ECLOSED.
 * Packets already received and queued can still be read with ddmc_host_recv(). */
void ddmc_host_close(ddmc_host *h);
/* Closes and frees everything, including packet memory handed out. NULL-safe. */
void ddmc_host_free(ddmc_host *h);

/* The socket, for callers that poll several connections (readable = ddmc_host_recv may have
 * work). -1 once closed. Do not write to it yourself; read from it only on a handle whose
 * recv/request/hello/handshake are never called, feeding a ddmc_host_reader (as `ddmc ps`). */
int ddmc_host_fd(const ddmc_host *h);

/* Cap on an incoming packet's length field (header included; at least 11 + 8). Also caps a ZLIB
 * chunk's inflated size. Default DDMC_HOST_DEFAULT_MAX_PACKET. Returns 0 or DDMC_EINVAL. */
int ddmc_host_set_max_packet(ddmc_host *h, uint32_t bytes);
/* Cap on the bytes of unsolicited packets ddmc_host_request()/ddmc_host_hello() keep while
 * waiting for their reply. Default DDMC_HOST_DEFAULT_MAX_QUEUE. Returns 0 or DDMC_EINVAL. */
int ddmc_host_set_max_queue(ddmc_host *h, size_t bytes);
/* While a packet of at least DDMC_HOST_PROGRESS_MIN bytes arrives (a trace, a heap dump), fn is
 * called from inside recv/request with the bytes received so far and the packet's length, header
 * included (last call: have == total). NULL turns it off. */
#define DDMC_HOST_PROGRESS_MIN (1u << 20)
void ddmc_host_set_progress(ddmc_host *h, void (*fn)(void *ud, uint64_t have, uint64_t total), void *ud);

/* How long sending one packet may block on a full socket (< 0: forever). Default
 * DDMC_HOST_DEFAULT_SEND_TIMEOUT_MS. */
void ddmc_host_set_send_timeout(ddmc_host *h, int timeout_ms);

/* Does the JDWP handshake: sends the 14 bytes "JDWP-Handshake" and reads the 14-byte echo,
 * which may arrive in pieces. Bytes after the echo are kept for packet parsing.
 *
 * Dalvik can send a DDM packet (APNM) BEFORE the echo (docs/protocol/ddm-wire.md §1.1). Whole,
 * sane-looking DDM command packets (flags 0, 199/1, 19 <= length <= max packet) found before the
 * echo are therefore kept and returned later by ddmc_host_recv() instead of failing the handshake
 * (ddmlib discards them).
 *
 * Returns 0; DDMC_EPROTO (the peer answered something else: not a JDWP VM, e.g. an HTTP server);
 * DDMC_ECLOSED (EOF before the echo); DDMC_ETIMEDOUT; DDMC_ESTATE (already done); DDMC_EIO;
 * DDMC_ENOMEM. After an error the connection is unusable: close it. */
int ddmc_host_handshake(ddmc_host *h, int timeout_ms);

/* ------------------------------------------------------------------------------------------ */
/* Packets                                                                                     */
/* ------------------------------------------------------------------------------------------ */

/* One received packet. Every pointer in it is owned by the handle and valid until the next
 * ddmc_host_recv/request/hello on that handle, or ddmc_host_free. */
typedef struct ddmc_host_packet {
  uint32_t id;
  uint32_t length;    /* the length field as it was on the wire (header included) */
  int is_reply;       /* flags == 0x80; any flags other than 0x00/0x80 fail as DDMC_EPROTO */
  uint16_t error;     /* reply only: the JDWP error code (0 = none) */
  uint8_t cmd_set;    /* command only */
  uint8_t cmd;        /* command only */
  const uint8_t *body; /* the bytes after the 11-byte header (after inflation, see chunk_*) */
  size_t body_len;

  /* DDM view. is_ddm: the packet carries a DDM chunk, i.e. it is a command 199/1, or a reply
   * with >= 8 body bytes that does not answer a command sent with ddmc_host_send_command() (an
   * empty 11-byte reply to a DDM request has is_ddm 0). Only the first chunk is looked at and
   * bytes after it are ignored, as every shipped VM and ddmlib do (docs/protocol/ddm-wire.md §1.3); its length must
   * fit in the body, and a 199/1 command needs >= 8 body bytes, or recv fails with DDMC_EPROTO. */
  int is_ddm;
  uint32_t chunk_type;        /* e.g. DDMC_HOST_FOURCC('H','E','L','O') */
  const uint8_t *chunk;       /* payload, after the 8-byte chunk header */
  size_t chunk_len;
  /* 1 when the chunk arrived as a ZLIB chunk: chunk_type/chunk/chunk_len then describe the
   * INFLATED inner chunk, and body is rebuilt as [u4 inner type][u4 inner len][inflated]. */
  int was_compressed;
} ddmc_host_packet;

/* Sends one DDM chunk as a command packet (cmd set 199, cmd 1): header + [u4 type][u4 len][data].
 * The whole packet is written before returning (bounded by the send timeout). *id (may be NULL)
 * receives the request id; the reply echoes it. data may be NULL when len is 0.
 * Returns 0; DDMC_EINVAL; DDMC_ETOOBIG (len does not fit a u4 packet length); DDMC_ECLOSED (peer
 * gone or handle closed); DDMC_ETIMEDOUT (send timeout: part of the packet may have gone out,
 * so the connection is then unusable); DDMC_EIO. */
int ddmc_host_send_chunk(ddmc_host *h, uint32_t type, const void *data, size_t len, uint32_t *id);

/* Sends any JDWP command packet (e.g. cmd set 1 cmd 1 VirtualMachine.Version). Its reply is not
 * interpreted as DDM. Same returns as ddmc_host_send_chunk. */
int ddmc_host_send_command(ddmc_host *h, uint8_t cmd_set, uint8_t cmd, const void *data, size_t len,
                           uint32_t *id);

/* Writes n raw bytes as they are (adversarial tests: bad lengths, half packets, replies...).
 * Same returns as ddmc_host_send_chunk. */
int ddmc_host_send_raw(ddmc_host *h, const void *bytes, size_t n);

/* The id of the last packet sent with send_chunk/send_command/request/opt_in_zlib (0 if none). */
uint32_t ddmc_host_last_id(const ddmc_host *h);

/* Returns the next complete packet: first those kept by request()/hello()/handshake() (in arrival
 * order), then from the socket. Replies to requests abandoned by a timed-out request()/hello()
 * are dropped silently. Memory: see ddmc_host_packet.
 * Returns 0;
 *   DDMC_ETIMEDOUT: no complete packet within timeout_ms (partial bytes stay buffered);
 *   DDMC_ECLOSED: EOF or reset (also EOF in the middle of a packet) or handle closed;
 *   DDMC_EPROTO: length < 11, flags not 0x00/0x80 (fatal: the stream cannot be resynchronised,
 *     every later call fails the same way), or a bad chunk: a DDM chunk that does not fit its
 *     packet, a 199/1 command with < 8 body bytes, a bad ZLIB chunk (this packet is consumed and
 *     the next call goes on with the following packet);
 *   DDMC_ETOOBIG: length over the packet cap (fatal), or a ZLIB chunk whose inflated length is
 *     over the cap (packet consumed);
 *   DDMC_ENOMEM; DDMC_EIO; DDMC_EINVAL. */
int ddmc_host_recv(ddmc_host *h, ddmc_host_packet *pkt, int timeout_ms);

/* Sends one DDM chunk and waits up to timeout_ms for the reply with that id. Packets that arrive
 * meanwhile (THCR, HPIF, APNM, replies to other ids...) are kept, in order, for later
 * ddmc_host_recv() calls; they are not parsed yet, so a bad one fails the recv that returns it,
 * not this call. On DDMC_ETIMEDOUT the id is abandoned: a late reply is dropped.
 * Returns what send_chunk and recv return, plus DDMC_EQFULL when the kept packets would exceed
 * the queue cap (nothing is lost: drain with ddmc_host_recv; the request is abandoned). A JDWP
 * error reply or a FAIL chunk is NOT an error here: look at reply->error / reply->chunk_type. */
int ddmc_host_request(ddmc_host *h, uint32_t type, const void *data, size_t len,
                      ddmc_host_packet *reply, int timeout_ms);

/* ------------------------------------------------------------------------------------------ */
/* A reader fed bytes: the protocol without the I/O                                            */
/* ------------------------------------------------------------------------------------------ */

/* What the connection calls above do, as a parser the caller feeds (as hiredis' reader or
 * nghttp2's mem_recv): the caller reads its socket however it likes (poll, an event loop, a test's
 * byte array), hands the bytes to ddmc_host_reader_feed, and takes complete items out with
 * ddmc_host_reader_next. Nothing here reads, writes or waits; the requests it answers are sent with
 * ddmc_host_adb_send / ddmc_host_send_raw / ddmc_host_send_chunk (or any writer of the same bytes).
 * `ddmc ps` drives hundreds of adb and JDWP connections in one poll() this way.
 *
 * The caller says what comes next (ddmc_host_reader_expect), because the adb host protocol does
 * not say it on the wire: after OKAY to host:transport another verdict, after OKAY to jdwp:PID the
 * JDWP handshake, after OKAY to track-jdwp length-prefixed messages. Bytes already fed for the next
 * item stay buffered across expect.
 *
 * Bounds: one item is at most 4 + 65535 bytes (adb) or the packet cap (JDWP, the reader's
 * max_packet); feed refuses (DDMC_ETOOBIG, nothing taken) bytes that would make the buffer exceed
 * one item plus DDMC_HOST_READER_FEED_MAX, so a caller that feeds at most that much between drains
 * (next until it returns 0) is never refused, and the reader never holds more. Errors are sticky:
 * after one, next returns it again and ddmc_host_reader_why says what was wrong, naming the bytes.
 *
 * Thread: one reader, one thread at a time; readers are independent. Memory: the reader's own
 * (malloc); an item's pointers are valid until the next feed/next/expect/free on that reader. */

#define DDMC_HOST_READER_FEED_MAX 65536u

typedef struct ddmc_host_reader ddmc_host_reader; /* opaque */

typedef enum ddmc_host_expect {
  DDMC_HOST_EXPECT_ADB_STATUS = 1, /* adb's verdict: OKAY, or FAIL [4 hex digits: len][message] */
  DDMC_HOST_EXPECT_ADB_MESSAGES,   /* [4 hex digits: len][body], again and again (track-jdwp) */
  DDMC_HOST_EXPECT_HANDSHAKE,      /* the 14-byte echo "JDWP-Handshake", then JDWP packets */
  DDMC_HOST_EXPECT_PACKETS         /* JDWP packets */
} ddmc_host_expect;

typedef enum ddmc_host_item_kind {
  DDMC_HOST_ITEM_OKAY = 1,  /* adb said OKAY */
  DDMC_HOST_ITEM_FAIL,      /* adb said FAIL: text is its message */
  DDMC_HOST_ITEM_MESSAGE,   /* one length-prefixed adb message: text is its body */
  DDMC_HOST_ITEM_HANDSHAKE, /* the echo arrived; packets follow (the reader expects them now) */
  DDMC_HOST_ITEM_PACKET     /* one JDWP packet */
} ddmc_host_item_kind;

typedef struct ddmc_host_item {
  ddmc_host_item_kind kind;
  const char *text; /* FAIL, MESSAGE: NUL-terminated (the wire's bytes may hold NULs: use text_len) */
  size_t text_len;
  /* PACKET: the header fields and the DDM view as ddmc_host_recv gives them, with two differences
   * that need a connection's memory: a reply of >= 8 body bytes is always viewed as DDM (the
   * caller knows which of its ids were other commands), and a ZLIB chunk is not inflated
   * (chunk_type is then DDMC_HOST_TYPE_ZLIB). */
  ddmc_host_packet packet;
} ddmc_host_item;

/* A reader expecting `first`; max_packet caps a JDWP packet (0: DDMC_HOST_DEFAULT_MAX_PACKET;
 * else at least 11 + 8). Returns 0, DDMC_EINVAL, DDMC_ENOMEM. */
int ddmc_host_reader_new(ddmc_host_reader **out, ddmc_host_expect first, uint32_t max_packet);
/* NULL-safe. */
void ddmc_host_reader_free(ddmc_host_reader *r);
/* What comes after the item just taken. Returns 0, DDMC_EINVAL, or the sticky error. */
int ddmc_host_reader_expect(ddmc_host_reader *r, ddmc_host_expect what);
/* Appends n bytes (p may be NULL when n is 0). Returns 0, DDMC_EINVAL, DDMC_ENOMEM, DDMC_ETOOBIG
 * (see Bounds: nothing taken), or the sticky error. */
int ddmc_host_reader_feed(ddmc_host_reader *r, const void *p, size_t n);
/* Takes the next complete item: 1 (*item filled), 0 (more bytes needed), or a negative code,
 * sticky: DDMC_EPROTO (adb: not OKAY/FAIL, a length prefix that is not 4 hex digits; JDWP: bytes
 * other than the echo, other than a whole DDM command packet that overtook it as Dalvik's APNM
 * can (docs/protocol/ddm-wire.md §1.1); a length < 11, flags not 0x00/0x80, a DDM chunk that does
 * not fit its packet, a 199/1 command with < 8 body bytes), DDMC_ETOOBIG (a packet's length over
 * max_packet), DDMC_EINVAL. */
int ddmc_host_reader_next(ddmc_host_reader *r, ddmc_host_item *item);
/* After an error: what was wrong, in words that name the offending bytes (e.g. "the length prefix
 * "-004" (2d 30 30 34) is not 4 hex digits"); "" before any. Valid until the reader is freed. */
const char *ddmc_host_reader_why(const ddmc_host_reader *r);
/* Bytes fed and not yet taken as items (how far a peer got before it went quiet). */
size_t ddmc_host_reader_pending(const ddmc_host_reader *r);

/* ------------------------------------------------------------------------------------------ */
/* ZLIB chunks                                                                                 */
/* ------------------------------------------------------------------------------------------ */

/* The 2007 draft (docs/protocol/ddm-wire.md §4) describes a compressed chunk; no shipped VM or host ever
 * implemented it, so this project fixes the layout:
 *
 *   chunk type 'ZLIB', payload:
 *     [u4 compressed len]  number of zlib-stream bytes that follow the 12-byte header; must equal
 *                          the ZLIB chunk length - 12
 *     [u4 inner type]      the chunk type it stands for (e.g. 'HPSG')
 *     [u4 inner len]       the inflated payload length
 *     [compressed len bytes: one zlib stream (RFC 1950, what zlib's compress2() writes)]
 *
 * A VM may send ZLIB chunks only after the peer opted in, which a peer does by sending a ZLIB
 * chunk itself; ddmc_host_opt_in_zlib() sends one wrapping an empty FEAT request. The receiver
 * inflates; any length that does not match (compressed len vs chunk, stream end vs compressed len,
 * inflated size vs inner len) is DDMC_EPROTO, and inner len over the packet cap is DDMC_ETOOBIG.
 * ddmc_host_recv() inflates ZLIB chunks whether or not this handle opted in. */

#define DDMC_HOST_TYPE_ZLIB DDMC_HOST_FOURCC('Z', 'L', 'I', 'B')

/* Sends ZLIB{FEAT, 0 bytes} (a zlib stream of an empty input) as a DDM request. Its reply (FEAT
 * list, plain or ZLIB-wrapped, or empty) arrives like any reply: ddmc_host_last_id() gives the id
 * to match. Returns what ddmc_host_send_chunk returns, or DDMC_ENOMEM. */
int ddmc_host_opt_in_zlib(ddmc_host *h);

/* Traffic counters since the handle was made. */
typedef struct ddmc_host_stats {
  uint64_t bytes_in, bytes_out;     /* socket bytes, handshake included */
  uint64_t packets_in, packets_out; /* complete JDWP packets */
  uint64_t zlib_chunks_in;          /* ZLIB chunks inflated */
  uint64_t zlib_in_wire;            /* their ZLIB payload bytes as received (12-byte header + stream) */
  uint64_t zlib_in_raw;             /* their inflated inner payload bytes */
} ddmc_host_stats;
/* Copies the counters into *out. */
void ddmc_host_stats_get(const ddmc_host *h, ddmc_host_stats *out);

/* ------------------------------------------------------------------------------------------ */
/* Strings                                                                                     */
/* ------------------------------------------------------------------------------------------ */

/* Converts units UTF-16BE code units at p (2*units bytes, caller-checked) to a malloc'd,
 * NUL-terminated UTF-8 string in *out (caller frees). Surrogate pairs become one 4-byte sequence;
 * unpaired surrogates and U+0000 become U+FFFD. Returns 0, DDMC_EINVAL, DDMC_ENOMEM. */
int ddmc_host_utf16be_to_utf8(const uint8_t *p, size_t units, char **out);
/* The reverse, for building requests (HPDU file names, ...): *out (malloc'd, caller frees) gets
 * the UTF-16BE bytes of s, *nbytes their count (2 per unit). Invalid UTF-8 bytes become U+FFFD.
 * Returns 0, DDMC_EINVAL, DDMC_ENOMEM. */
int ddmc_host_utf8_to_utf16be(const char *s, uint8_t **out, size_t *nbytes);

/* ------------------------------------------------------------------------------------------ */
/* Chunk payload parsers (pure: no I/O, thread-safe; return 0 or DDMC_EPROTO or DDMC_ENOMEM)   */
/* ------------------------------------------------------------------------------------------ */

/* HELO reply (docs/protocol/ddm-wire.md §2.1):
 *   [u4 version][u4 pid][u4 vmIdent len][u4 appName len][UTF-16 vmIdent][UTF-16 appName]
 *   then optional, each present only if bytes remain:
 *   [u4 userId] [u4 len][UTF-16 ABI] [u4 len][UTF-16 JVM flags] [u1 nativeDebuggable]
 *   [u4 len][UTF-16 package name] [u4 boot stage (API 34, a FOURCC)]
 * A truncated mandatory part is DDMC_EPROTO. Like ddmlib, a truncated OPTIONAL field stops
 * parsing without failing: the fields before it are kept (present bits) and `truncated` is 1. */
enum {
  DDMC_HOST_HELO_USER_ID = 1u << 0,
  DDMC_HOST_HELO_ABI = 1u << 1,
  DDMC_HOST_HELO_JVM_FLAGS = 1u << 2,
  DDMC_HOST_HELO_NATIVE_DEBUGGABLE = 1u << 3,
  DDMC_HOST_HELO_PKG_NAME = 1u << 4,
  DDMC_HOST_HELO_STAGE = 1u << 5,
  DDMC_HOST_HELO_FEATURES = 1u << 6 /* set by ddmc_host_hello() when FEAT answered */
};
typedef struct ddmc_host_helo {
  uint32_t version;
  uint32_t pid;
  char *vm_ident;          /* e.g. "Dalvik v2.1.0" */
  char *app_name;          /* may be "" or "<pre-initialized>" early on */
  unsigned present;        /* DDMC_HOST_HELO_* bits */
  int truncated;           /* an optional field was cut short */
  int32_t user_id;
  char *abi;               /* NULL unless present */
  char *jvm_flags;         /* NULL unless present */
  int native_debuggable;   /* byte == 1, like ddmlib */
  char *pkg_name;          /* NULL unless present */
  uint32_t stage;          /* FOURCC */
  /* Filled only by ddmc_host_hello(): the FEAT reply. */
  char **features;
  size_t n_features;
} ddmc_host_helo;
int ddmc_host_helo_parse(const uint8_t *p, size_t n, ddmc_host_helo *out);
void ddmc_host_helo_free(ddmc_host_helo *x);

/* FEAT reply: [u4 count] then count x ([u4 len][UTF-16]). Truncation is DDMC_EPROTO. */
typedef struct ddmc_host_feat {
  char **names; /* names[0..count), each malloc'd; the array too */
  size_t count;
} ddmc_host_feat;
int ddmc_host_feat_parse(const uint8_t *p, size_t n, ddmc_host_feat *out);
void ddmc_host_feat_free(ddmc_host_feat *x);

/* APNM (docs/protocol/ddm-wire.md §2.3): [u4 len][UTF-16 name] then optional [u4 userId], then optional
 * [u4 len][UTF-16 package name]. Optional-field truncation as for HELO. */
typedef struct ddmc_host_apnm {
  char *name;
  int has_user_id;
  int32_t user_id;
  char *pkg_name; /* NULL unless present */
  int truncated;
} ddmc_host_apnm;
int ddmc_host_apnm_parse(const uint8_t *p, size_t n, ddmc_host_apnm *out);
void ddmc_host_apnm_free(ddmc_host_apnm *x);

/* WAIT: [u1 reason] (0 = waiting for a debugger). */
int ddmc_host_wait_parse(const uint8_t *p, size_t n, uint8_t *reason);

/* SESS, libddmc's own (docs/protocol/ddm-wire.md): the sessions a VM serves side by side and its
 * debugger seat. A VM without it answers with no chunk (or a FAIL). */
typedef struct ddmc_host_sess {
  uint32_t version;  /* 1 */
  uint32_t sessions; /* open now, the asker's included */
  uint32_t max_sessions;
  uint32_t self;     /* the asker's session number */
  uint32_t seat;     /* the debugger seat's session number, 0: free */
  int debugger;      /* the seat's holder has sent JDWP commands: a debugger is attached */
  int confirmed;     /* it has changed the VM's world: the seat is its until it leaves */
} ddmc_host_sess;
int ddmc_host_sess_parse(const uint8_t *p, size_t n, ddmc_host_sess *out);

/* THCR and THNM: [u4 thread id][u4 len][UTF-16 name]. */
typedef struct ddmc_host_thname {
  uint32_t thread_id; /* the VM's small thread id, not the Linux tid */
  char *name;
} ddmc_host_thname;
int ddmc_host_thname_parse(const uint8_t *p, size_t n, ddmc_host_thname *out);
void ddmc_host_thname_free(ddmc_host_thname *x);

/* THDE: [u4 thread id]. */
int ddmc_host_thde_parse(const uint8_t *p, size_t n, uint32_t *thread_id);

/* FAIL: [u4 code][u4 len][UTF-16 message]. */
typedef struct ddmc_host_fail {
  int32_t code;
  char *msg;
} ddmc_host_fail;
int ddmc_host_fail_parse(const uint8_t *p, size_t n, ddmc_host_fail *out);
void ddmc_host_fail_free(ddmc_host_fail *x);

/* THST reply (shipped form, docs/protocol/ddm-wire.md §2.7):
 *   [u1 hdrLen][u1 bytesPerEntry][u2 count] (+ hdrLen-4 bytes skipped)
 *   per entry: [u4 id][u1 status][u4 tid][u4 utime][u4 stime][u1 daemon] (+ bytesPerEntry-18 skipped)
 * As ddmlib: hdrLen < 4 or bytesPerEntry < 17 is DDMC_EPROTO; daemon is read only when
 * bytesPerEntry >= 18 (else -1). The whole table must fit, else DDMC_EPROTO. `status` is the VM's
 * code (Dalvik ThreadStatus or JDWP status on ART; docs/protocol/ddm-wire.md §2.7). */
typedef struct ddmc_host_thst_entry {
  uint32_t thread_id;
  uint8_t status;
  uint32_t tid; /* Linux tid */
  uint32_t utime, stime; /* clock ticks */
  int daemon; /* 0/1, -1 when the entry has no daemon byte */
} ddmc_host_thst_entry;
typedef struct ddmc_host_thst {
  ddmc_host_thst_entry *entries; /* malloc'd array (NULL when count is 0) */
  size_t count;
} ddmc_host_thst;
int ddmc_host_thst_parse(const uint8_t *p, size_t n, ddmc_host_thst *out);
void ddmc_host_thst_free(ddmc_host_thst *x);

/* STKL reply: [u4 0 (reserved)][u4 thread id][u4 count] then per frame
 * [str class][str method][str file (len 0 = none)][u4 line]. Truncation is DDMC_EPROTO. */
typedef struct ddmc_host_frame {
  char *class_name;
  char *method;
  char *file; /* NULL when the wire length was 0 */
  int32_t line;
} ddmc_host_frame;
typedef struct ddmc_host_stkl {
  uint32_t reserved;
  uint32_t thread_id;
  ddmc_host_frame *frames;
  size_t count;
} ddmc_host_stkl;
int ddmc_host_stkl_parse(const uint8_t *p, size_t n, ddmc_host_stkl *out);
void ddmc_host_stkl_free(ddmc_host_stkl *x);

/* HPIF (docs/protocol/ddm-wire.md §2.8): [u4 numHeaps] then per heap [u4 id][u8 timestamp ms][u1 reason][u4 max]
 * [u4 footprint][u4 allocated bytes][u4 allocated objects] (29 bytes). Truncation is DDMC_EPROTO. */
typedef struct ddmc_host_heap_info {
  uint32_t heap_id;
  uint64_t timestamp_ms; /* since the epoch */
  uint8_t reason;        /* the HPIF 'when' that caused it: 1 NOW, 2 NEXT_GC, 3 EVERY_GC */
  uint32_t max_bytes, footprint, allocated_bytes, allocated_objects;
} ddmc_host_heap_info;
typedef struct ddmc_host_hpif {
  ddmc_host_heap_info *heaps;
  size_t count;
} ddmc_host_hpif;
int ddmc_host_hpif_parse(const uint8_t *p, size_t n, ddmc_host_hpif *out);
void ddmc_host_hpif_free(ddmc_host_hpif *x);

/* HPST, HPEN, NHST, NHEN: [u4 heap id]. Heap segments (HPSG/HPSO/NHSG) are decoded by
 * host/heapseg.h (ddmc_host_heapseg_parse / ddmc_host_heapseg_decode), part of this library. */
int ddmc_host_heapid_parse(const uint8_t *p, size_t n, uint32_t *heap_id);

/* ------------------------------------------------------------------------------------------ */
/* Profiling (host/prof.c; docs/protocol/profiling.md)                                         */
/* ------------------------------------------------------------------------------------------ */

/* REAL, read exactly as ddmlib's AllocationsParser does (docs/protocol/profiling.md §2.3): the
 * three header lengths are honoured (extra header, entry and frame bytes skipped), the string
 * tables read from their offset, then the entries from the header length. Any index past its table,
 * any length past the payload is DDMC_EPROTO (ddmlib would throw and drop the client). Strings are
 * kept as sent: VM descriptors for classes ("[I", "Ljava/lang/String;"). */
typedef struct ddmc_host_alloc_frame {
  const char *cls, *method, *file; /* into the tables below */
  int16_t line;                    /* -1 unknown, -2 native */
} ddmc_host_alloc_frame;
typedef struct ddmc_host_alloc {
  uint32_t size;
  uint16_t thread;
  const char *cls;
  uint8_t depth;
  ddmc_host_alloc_frame *frames; /* depth of them, innermost first */
} ddmc_host_alloc;
typedef struct ddmc_host_allocs {
  uint8_t header_len, entry_len, frame_len;
  ddmc_host_alloc *entries; /* in the report's order: newest first */
  size_t count;
  char **classes, **methods, **files;
  size_t nclasses, nmethods, nfiles;
  ddmc_host_alloc_frame *pool;
} ddmc_host_allocs;
int ddmc_host_real_parse(const uint8_t *p, size_t n, ddmc_host_allocs *out);
void ddmc_host_allocs_free(ddmc_host_allocs *x);
/* ddmlib's descriptorToDot: "Ljava/lang/String;" -> "java.lang.String", "[[I" -> "int[][]".
 * Returns a malloc'd string or NULL. */
char *ddmc_host_descriptor_to_dot(const char *desc);

/* A .trace file (docs/protocol/profiling.md §4), read as dmtracedump reads it, more strictly: the
 * key section (*version, its number and key=value lines, *threads, *methods with 1, 3, 4 or 5
 * fields after the id, *end), then the binary header (magic checked; versions 1, 2, 3; record size
 * from the header for v3) and the records. A record cut short at the end sets `truncated`
 * (dmtracedump warns); every other deviation is DDMC_EPROTO. */
typedef struct ddmc_host_trace_thread {
  uint32_t id;
  char *name;
} ddmc_host_trace_thread;
typedef struct ddmc_host_trace_method {
  uint32_t id;
  char *cls, *name, *sig, *file; /* NULL when the line lacks the field */
  int32_t line;                  /* -1 when absent */
} ddmc_host_trace_method;
typedef struct ddmc_host_trace_rec {
  uint16_t thread;
  uint32_t method; /* id, low two bits clear */
  uint8_t action;  /* 0 enter, 1 exit, 2 unroll */
  uint32_t time1;  /* the first clock: thread CPU in a dual-clock file */
  uint32_t time2;  /* the second (wall) in a dual-clock file, else 0 */
} ddmc_host_trace_rec;
typedef struct ddmc_host_trace {
  uint32_t version;      /* from the key section */
  int overflow;          /* data-file-overflow=true */
  char clock[16];        /* "dual", "wall", "thread-cpu" or "" */
  uint64_t elapsed_us, num_method_calls;
  uint16_t data_version; /* from the binary header */
  uint64_t start_us;
  uint16_t rec_size;
  ddmc_host_trace_thread *threads;
  size_t nthreads;
  ddmc_host_trace_method *methods;
  size_t nmethods;
  ddmc_host_trace_rec *recs;
  size_t nrecs;
  int truncated;
} ddmc_host_trace;
int ddmc_host_trace_parse(const uint8_t *p, size_t n, ddmc_host_trace *out);
void ddmc_host_trace_free(ddmc_host_trace *x);
/* The method with id (binary search; methods are sorted by id when parsed), or NULL. */
const ddmc_host_trace_method *ddmc_host_trace_method_of(const ddmc_host_trace *t, uint32_t id);

/* An Android hprof heap dump (docs/protocol/profiling.md §6): "JAVA PROFILE 1.0.3", 4-byte ids,
 * records to a final HEAP DUMP END, heap sub-records walked with the lengths of §6.3. scan counts
 * what it holds (it also takes the standard 1.0.2, without Android's sub-records); any record or
 * sub-record cut short, an unknown sub-tag (0xC3 included), or bytes after HEAP DUMP END is
 * DDMC_EPROTO. */
typedef struct ddmc_host_hprof_info {
  int android; /* 1.0.3 */
  uint32_t id_size;
  uint64_t timestamp_ms;
  uint64_t strings, load_classes, segments;
  uint64_t classes, instances, object_arrays, primitive_arrays, roots, heap_infos;
} ddmc_host_hprof_info;
int ddmc_host_hprof_scan(const uint8_t *p, size_t n, ddmc_host_hprof_info *info);
/* The standard 1.0.2 form, as hprof-conv writes it (docs/protocol/profiling.md §6.4), into out (n
 * bytes: it is never longer); *out_len gets its length. Same errors as scan. */
int ddmc_host_hprof_to_standard(const uint8_t *p, size_t n, uint8_t *out, size_t *out_len);
/* The same walk, showing visit every record (sub = 0: tag, body after the 9-byte header, its
 * length; HEAP DUMP and HEAP DUMP SEGMENT records too) and, inside those, every sub-record (sub =
 * 1: tag, body after the tag byte, its length, which scan's rules have checked). The bodies point
 * into p. Same errors as scan; on an error visit has seen the records before it, so a caller drops
 * what it gathered. Thread: the caller's; no allocation. */
typedef void (*ddmc_host_hprof_visit)(void *ud, int sub, uint8_t tag, const uint8_t *body, size_t len);
int ddmc_host_hprof_walk(const uint8_t *p, size_t n, ddmc_host_hprof_visit visit, void *ud);

/* ------------------------------------------------------------------------------------------ */
/* Session helpers                                                                             */
/* ------------------------------------------------------------------------------------------ */

/* What ddmlib does first (docs/protocol/ddm-wire.md §8): sends HELO [u4 1] and FEAT, waits up to timeout_ms in total
 * for both replies, and parses them into *out (zeroed first; free with ddmc_host_helo_free even
 * after an error). Unsolicited packets meanwhile (WAIT, APNM...) are kept for ddmc_host_recv.
 * FEAT is best effort: a VM without a FEAT handler may not answer it at all (ART adbconnection
 * sends no reply when there is no data), so a missing, empty, error or FAIL FEAT reply leaves
 * DDMC_HOST_HELO_FEATURES clear, and once HELO has answered it is waited for only until the
 * deadline. Returns 0;
 *   DDMC_ENOTSUP: HELO got an empty 11-byte reply, a JDWP error reply or a FAIL chunk: the VM is
 *     not DDM-aware;
 *   DDMC_ETIMEDOUT: no HELO reply in time;
 *   DDMC_EPROTO: the HELO reply has another chunk type or a malformed payload;
 *   whatever send/recv return (DDMC_ECLOSED, DDMC_EQFULL, ...). */
int ddmc_host_hello(ddmc_host *h, ddmc_host_helo *out, int timeout_ms);

#ifdef __cplusplus
}
#endif

#endif
