/* SPDX-License-Identifier: Apache-2.0 */
/* JDWP start-up options: the tail of "-agentlib:jdwp=..." or "-Xrunjdwp:...".
 *
 * Plain data the VM owns. Parsing needs no ddmc_vm, so a VM can validate its command line
 * before it creates anything; errors come back as one line in a caller-supplied buffer. */
#ifndef DDMC_OPTIONS_H
#define DDMC_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "export.h"

DDMC_BEGIN_DECLS

typedef enum ddmc_transport {
  DDMC_TRANSPORT_NONE = 0,     /* not given yet; ddmc_options_parse rejects it */
  DDMC_TRANSPORT_SOCKET,       /* dt_socket: TCP */
  DDMC_TRANSPORT_ADB           /* dt_android_adb: adbd's @jdwp-control socket */
} ddmc_transport;

/* How dt_android_adb announces the pid to adbd. */
typedef enum ddmc_adb_announce {
  DDMC_ADB_HEX4_STREAM = 0,    /* 4 lowercase hex chars on SOCK_STREAM (Android 1.0 - 7.x) */
  DDMC_ADB_RAW32_SEQPACKET     /* raw host-order u32 pid on SOCK_SEQPACKET (Android 9 - 11) */
} ddmc_adb_announce;

#define DDMC_ALLOW_MAX 32        /* allow= entries, as many as the JDK takes */

/* Dalvik's range for address=0, which 0.3 scanned. Port 0 now takes any free port, as the JDK's
 * agent does; the names stay so that code naming them still builds (docs/versioning.md). */
#define DDMC_SCAN_PORT_FIRST 8000
#define DDMC_SCAN_PORT_LAST 8040

typedef struct ddmc_options {
  ddmc_transport transport;
  int server;                  /* 1: listen for the debugger side (server=y); 0: dial out */
  int suspend;                 /* 1: ddmc_vm_start waits until a peer completed the handshake */
  char host[256];              /* "" means 127.0.0.1 when listening; required when dialing */
  uint16_t port;               /* 0 with server=y: any free port the kernel gives (the JDK's
                                  agent's choice; ddmc_vm_port() says which) */
  int help;                    /* set when the tail said "help": print ddmc_options_help() */

  /* Tunables, not settable from the flag; ddmc_options_init sets the defaults. */
  uint32_t max_packet;         /* largest JDWP packet accepted from a peer, header included */
  size_t sendq_bytes;          /* cap on bytes queued by VM threads; over it chunks are dropped */
  int handshake_timeout_ms;    /* a peer must send its 14 handshake bytes within this */
  int redial_max_ms;           /* server=n: back-off between dial attempts grows up to this */
  size_t zlib_threshold;       /* outgoing chunks this big or bigger are compressed, if opted in */

  /* dt_android_adb */
  ddmc_adb_announce adb_announce;
  char adb_control[108];       /* "" = $DDMC_ADB_CONTROL, else "@jdwp-control"; '@' = abstract */
  uint32_t adb_allowed_uids[8];/* SO_PEERCRED uid of adbd must be one of these */
  int adb_allowed_uid_count;   /* 0 means: root (0), shell (2000) and the VM's own uid */

  /* Tunable (appended). */
  int stall_timeout_ms;        /* a peer that reads nothing for this long while output waits for
                                  it (events, replies, a large transfer such as an MPSE trace) is
                                  dropped: its session ends, what was queued for it is dropped (a
                                  transfer is counted in ddmc_stats.transfers_dropped), and the
                                  next peer is served. Default 30000; <= 0: never */
  size_t event_request_bytes;  /* bytes all live JDWP event requests of one debugger session may
                                  hold (each request, its modifiers and their patterns): an
                                  EventRequest.Set past it is refused with OUT_OF_MEMORY (110)
                                  and the session goes on. Default DDMC_DEFAULT_EVENT_REQUEST_BYTES;
                                  0 means the default */

  /* ---- appended in 0.4: the rest of the JDK's -agentlib:jdwp options (docs/jdwp-options.md) */
  int timeout_ms;              /* timeout=MS: listening, a debugger must connect within it (at
                                  start and again after each session); dialing, the peer must
                                  answer within it; else the library logs it and ends the VM
                                  (ddmc_vm_ops.exit, status 1) as the JDK ends it. 0: no limit */
  int quiet;                   /* quiet=y: the VM prints no "listening" line (the library never
                                  prints; this tells the VM's own announcement) */
  int allow_count;             /* allow=: peers a listening transport accepts; 0: any (the
                                  listening address, loopback by default, still applies) */
  struct ddmc_allow_entry {
    uint8_t family;            /* 4 or 6 */
    uint8_t bits;              /* prefix length: 32 / 128 for one address */
    uint8_t addr[16];          /* network order; IPv4 in the first 4 bytes */
  } allow[DDMC_ALLOW_MAX];
  char launch[1024];           /* launch=CMD: run when the debug service starts (at ddmc_vm_start,
                                  or at onthrow / onuncaught), with the transport name and the
                                  address appended as two arguments; split on spaces, no shell */
  char onthrow[256];           /* onthrow=CLASS (dotted or JVM form): start the debug service at
                                  the first throw of exactly this class; "" none */
  int onuncaught;              /* onuncaught=y: start it at the first uncaught exception */
  unsigned obsolete;           /* DDMC_OBSOLETE_* bits of obsolete options given (strict,
                                  stdalloc): accepted as the JDK accepts them, and warned about at
                                  ddmc_vm_start */

  /* ---- appended in 0.5: sessions side by side (docs/sessions.md) */
  int max_sessions;            /* peers served at once on a listening transport (a debugger and
                                  monitors such as ddmc threads --watch); the next one is closed
                                  before its handshake and the refusal logged. Default
                                  DDMC_DEFAULT_MAX_SESSIONS; <= 0 means the default; at most 64 */
} ddmc_options;

enum { DDMC_OBSOLETE_STRICT = 1, DDMC_OBSOLETE_STDALLOC = 2 };

#define DDMC_DEFAULT_MAX_PACKET (4u << 20)
#define DDMC_DEFAULT_SENDQ_BYTES ((size_t)32 << 20)
#define DDMC_DEFAULT_EVENT_REQUEST_BYTES ((size_t)16 << 20)
#define DDMC_DEFAULT_MAX_SESSIONS 8

/* Defaults: no transport, server=y, suspend=n, loopback, the caps above. Thread: any.
 * ABI: the macro passes sizeof(ddmc_options) as the caller's header has it; the library writes no
 * more than that (a struct that grows in a later version never overruns an older caller's). */
DDMC_EXTERN void ddmc_options_init_(ddmc_options *o, size_t size);
#define ddmc_options_init(o) ddmc_options_init_((o), sizeof(ddmc_options))

/* Parses spec into o (which ddmc_options_init must have prepared; fields the spec does not name
 * keep their values). spec is either the whole flag ("-agentlib:jdwp=..." / "-Xrunjdwp:...") or
 * just its tail ("transport=dt_socket,address=8000,server=y").
 * address is PORT, HOST:PORT or [IPV6]:PORT; PORT is decimal, leading zeros allowed as the JDK
 * allows them ("08000" is 8000), at most 65535.
 * Returns 0, or DDMC_EINVAL with a one-line message in err (if err != NULL) that quotes what was
 * written, such as "JDWP address has junk in port field 'x80' (want 0-65535)" or "JDWP address
 * port out of range '0065536' (want 0-65535)". "help" sets o->help and returns DDMC_EINVAL with
 * err = "JDWP help requested". The other options of JDK 17's agent (timeout, allow, quiet, launch,
 * onthrow, onuncaught, mutf8, and the obsolete strict and stdalloc) are parsed into the fields
 * above; what the library cannot do (mutf8=y) is refused with the reason, never ignored.
 * Thread: any. */
DDMC_EXTERN int ddmc_options_parse_(ddmc_options *o, size_t size, const char *spec, char *err, size_t errlen);
#define ddmc_options_parse(o, spec, err, errlen) ddmc_options_parse_((o), sizeof(ddmc_options), (spec), (err), (errlen))

/* Non-zero if arg starts with "-agentlib:jdwp=" or "-Xrunjdwp:". Thread: any. */
DDMC_EXTERN int ddmc_options_is_jdwp_flag(const char *arg);

/* Multi-line usage text with examples; static. Thread: any. */
DDMC_EXTERN const char *ddmc_options_help(void);

DDMC_END_DECLS

#endif
