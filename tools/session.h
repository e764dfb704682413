/* SPDX-License-Identifier: Apache-2.0 */
/* One ddmc run's connection to a VM: connect, handshake, HELO/FEAT, ZLIB opt-in, requests, and
 * the bookkeeping of everything the VM sends on its own (APNM, WAIT, thread and heap chunks).
 *
 * Failures end the program through sess_fail(): one message on stderr ("ddmc: ..."), one JSON
 * error document on stdout with --json, and the documented exit code. Commands therefore never
 * see an error return from the sess_* calls that take no `soft` flag. */
#ifndef DDMC_TOOLS_SESSION_H
#define DDMC_TOOLS_SESSION_H

#include <signal.h>
#include <stdint.h>

#include "ddmc_host.h"
#include "json.h"
#include "monitor.h"

/* Exit codes (also in `ddmc --help`). */
enum {
  EXIT_OK = 0,
  EXIT_ERROR = 1,      /* anything else: lost connection, cannot write a file, bad reply */
  EXIT_CONNECT = 2,    /* cannot connect: refused, unknown host, connect timed out */
  EXIT_NOT_DDM = 3,    /* the peer is not a JDWP VM, not DDM-aware, or broke the protocol */
  EXIT_TIMEOUT = 4,    /* the VM did not answer in time */
  EXIT_FAIL = 5,       /* the VM answered with a FAIL chunk */
  EXIT_USAGE = 64      /* bad command line (EX_USAGE) */
};

typedef struct opts {
  const char *target;  /* "HOST:PORT", normalised */
  char target_buf[300];
  char host[256];
  uint16_t port;
  int json;
  int verbose;
  int zlib;            /* opt in to ZLIB chunks (default 1) */
  int timeout_ms;      /* connect, handshake, each request */
  uint32_t pid;        /* -p: reach this process through a local adb server instead */
  const char *serial;  /* -s: the adb device (NULL: the only one) */
  uint16_t adb_port;   /* -P: the adb server's port */
  const char *command;
} opts;

typedef struct sess {
  const opts *o;
  ddmc_host *h;
  int64_t t0_ms;
  ddmc_host_helo helo;
  int hello_done;
  /* ZLIB opt-in */
  int zlib_sent, zlib_answered;
  /* unsolicited state */
  int waiting;          /* a WAIT chunk arrived */
  int apnm_seen;
  ddmc_host_apnm apnm;  /* the latest APNM */
  ddmc_host_threads threads;
  int track_threads;    /* feed thread chunks into `threads` */
  ddmc_host_heapdump dump;
  int track_heap;       /* feed HPST/HPSG/HPEN into `dump` */
  int dump_done_seq;    /* hpif_seq when the last dump completed */
  ddmc_host_heap_info hpif; /* the latest HPIF (first heap) */
  int hpif_seq;         /* HPIF chunks seen */
  uint64_t unsolicited; /* packets handled by sess_dispatch */
  /* optional observer for thread events (watch mode) */
  void (*on_thread_event)(void *ud, ddmc_host_thread_event ev, uint32_t id, const char *name);
  void *ud;
  /* optional observer for every HPIF (its first heap), called from sess_dispatch with ud */
  void (*on_hpif)(void *ud, const ddmc_host_heap_info *h);
} sess;

/* Set by SIGINT/SIGTERM once sess_catch_interrupts (or a command's own handler) is installed. */
extern volatile sig_atomic_t sess_interrupted;

/* CLOCK_MONOTONIC in milliseconds. */
int64_t sess_mono_ms(void);

/* A string a VM sent, made safe for the terminal (JSON output has its own escaping). The results
 * live in a small pool, enough for one printf's arguments. */
const char *sess_tx(const char *str);

/* A progress line on stderr while a big transfer arrives over s (what: "the trace"): bytes so far
 * of the packet's total, the rate and the seconds left; redrawn in place on a terminal, else
 * about once a second. p must outlive the transfer. */
typedef struct sess_progress {
  const char *what;
  int64_t last_ms, first_ms;
  uint64_t first_have;
  int tty;
} sess_progress;
void sess_show_progress(sess *s, sess_progress *p, const char *what);
/* The progress line's text, "receiving the trace: 12.3 of 40.0 MiB, 2.1 MiB/s, 14 s left" (no
 * "ddmc: ", no newline), into buf (n bytes; returned): have of total bytes, elapsed_ms after a
 * first call that had first_have. The rate shows once time has passed, the seconds left after
 * 0.2 s, the time taken at the end. sess_show_progress's line is this; `ddmc ui` can show the same
 * from its own ddmc_host_set_progress callback. Pure; thread: any. */
const char *sess_progress_text(char *buf, size_t n, const char *what, uint64_t have, uint64_t total,
                               uint64_t first_have, int64_t elapsed_ms);

/* Connects, handshakes, sends HELO+FEAT and (with o->zlib) the ZLIB opt-in; fails the program on
 * any error. */
void sess_open(sess *s, const opts *o);
void sess_close(sess *s);

/* Handles one packet that is not the reply being waited for. */
void sess_dispatch(sess *s, const ddmc_host_packet *p);
/* Receives and dispatches packets for up to ms milliseconds (returns early on SIGINT, or when
 * stop(s) becomes true). Returns 1 if stop() became true. stop may be NULL. */
int sess_pump(sess *s, int ms, int (*stop)(sess *s));
/* Dispatches what has already arrived, without waiting. */
void sess_drain(sess *s);
/* SIGINT and SIGTERM set sess_interrupted from now on (Ctrl-C ends a --watch or a wait cleanly). */
void sess_catch_interrupts(void);
/* Waits `seconds`, handling what the VM sends meanwhile; Ctrl-C (or SIGTERM) ends the wait early
 * and the command goes on to collect what there is. */
void sess_wait_seconds(sess *s, double seconds);

/* Sends a DDM request and waits o->timeout_ms for its reply, then dispatches the packets that
 * arrived meanwhile. The reply is parsed by parse(ud, reply) before that (the packet is gone
 * afterwards); parse may be NULL. A FAIL reply fails the program (EXIT_FAIL) with `what` in the
 * message, a timeout with EXIT_TIMEOUT. Returns what parse returned (0 without parse). */
int sess_request(sess *s, const char *what, uint32_t type, const void *data, size_t len,
                 int (*parse)(void *ud, const ddmc_host_packet *reply), void *ud);

/* Ends the program: message on stderr (printf-style), JSON error document with --json. */
void sess_fail(sess *s, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4), noreturn));
/* Maps a DDMC_E* from the host library to an exit code, for failures after the handshake. */
int sess_exit_code(int err);

/* JSON: the common head of every document ("command", "ok", "target", "vm") and tail ("wire"). */
void sess_json_head(sess *s, jw *w, int ok);
void sess_json_vm(sess *s, jw *w);
void sess_json_wire(sess *s, jw *w);
/* A command's success document on stdout: sess_json_open writes the head and opens the object
 * under key for the command's members; sess_json_close closes it, adds the wire counters, ends
 * the document and returns the exit code (EXIT_OK, or EXIT_ERROR when stdout failed). */
void sess_json_open(sess *s, jw *w, const char *key);
int sess_json_close(sess *s, jw *w);
/* -v: one line on stderr with the wire counters. */
void sess_print_wire(sess *s);

#endif
