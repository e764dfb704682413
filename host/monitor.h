/* SPDX-License-Identifier: Apache-2.0 */
/* Monitor bookkeeping on top of ddmc_host: what a DDM monitor (ddmlib's ClientData, the `ddmc`
 * tool) keeps between packets.
 *
 *  - a thread table fed by THCR / THDE / THNM (notifications after THEN 1) and THST replies;
 *  - a heap-dump collector fed by HPST, HPSG|HPSO..., HPEN (or NHST, NHSG..., NHEN) that keeps the
 *    runs, checks they do not overlap, and counts allocation units per kind;
 *  - names for thread status codes, heap kinds and chunk types.
 *
 * Everything is pure bookkeeping: no I/O. Feed functions take a packet from ddmc_host_recv (or a
 * reply from ddmc_host_request) and copy whatever they keep, so the packet may be released right
 * after. Conventions as in ddmc_host.h: 0 or a negative DDMC_E* code, *_free zeroes and is safe
 * on a zeroed struct. Thread: one thread per table/collector; no global state. */
#ifndef DDMC_HOST_MONITOR_H
#define DDMC_HOST_MONITOR_H

#include <stddef.h>
#include <stdint.h>

#include "ddmc_host.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "HELO" for DDMC_HOST_FOURCC('H','E','L','O'); a byte that is not printable ASCII becomes '?'.
 * Returns out. */
char *ddmc_host_fourcc_str(uint32_t type, char out[5]);

/* A VM-supplied string made safe for a terminal: C0 controls, DEL and backslash become \n \r \t
 * \\ or \xHH, C1 controls (U+0080..U+009F) \u00HH, bytes that are not valid UTF-8 \xHH; printable
 * UTF-8 stays as it is. A name with ESC[2J or ESC]0;...BEL can then neither clear the screen nor
 * retitle the window, and a newline cannot break a table row. Writes at most outlen bytes,
 * always NUL-terminated (outlen > 0), cutting only between escapes; returns the length the whole
 * escaped string needs (excluding the NUL), like snprintf. NULL in -> "". */
size_t ddmc_host_term_escape(const char *in, char *out, size_t outlen);

/* ---- Threads ---------------------------------------------------------------------------------- */

/* Word for a THST status code, with Dalvik's numbering (which libddmc sends and ddmlib shows):
 * 0 "zombie", 1 "running", 2 "sleeping", 3 "monitor", 4 "wait", 5 "initializing", 6 "starting",
 * 7 "native", 8 "vmwait", 9 "suspended"; anything else "unknown". Static strings. */
const char *ddmc_host_thread_status_name(unsigned status);

typedef struct ddmc_host_thread {
  uint32_t id;         /* the VM's small thread id */
  char *name;          /* malloc'd UTF-8; "" while only THST has mentioned the thread */
  int named;           /* a THCR or THNM gave the name */
  int has_stats;       /* the fields below come from a THST entry */
  int in_last_thst;    /* listed by the most recent THST applied */
  uint8_t status;      /* THST status code */
  uint32_t tid;        /* Linux tid */
  uint32_t utime, stime;
  int daemon;          /* 0/1, -1 unknown */
} ddmc_host_thread;

/* Live threads, sorted by id (THDE removes an entry). */
typedef struct ddmc_host_threads {
  ddmc_host_thread *v;
  size_t count, cap;
  uint64_t created, ended, renamed, thst_applied; /* events seen, for reports */
} ddmc_host_threads;

/* What ddmc_host_threads_feed did with a packet. */
typedef enum ddmc_host_thread_event {
  DDMC_HOST_TEV_NONE = 0,    /* not a thread chunk: untouched */
  DDMC_HOST_TEV_CREATED,     /* THCR (also for an id already known: the name is updated) */
  DDMC_HOST_TEV_ENDED,       /* THDE (also for an unknown id) */
  DDMC_HOST_TEV_RENAMED,     /* THNM */
  DDMC_HOST_TEV_STATS        /* a THST chunk (a reply or a periodic one) */
} ddmc_host_thread_event;

void ddmc_host_threads_init(ddmc_host_threads *t);
void ddmc_host_threads_free(ddmc_host_threads *t);

/* Applies pkt if it is a DDM THCR, THDE, THNM or THST chunk (command or reply). *ev (may be
 * NULL) tells what happened and *id (may be NULL) which thread (0 for THST). Returns 0 (also for
 * packets that are not thread chunks: *ev = NONE), DDMC_EPROTO (malformed payload; the table is
 * unchanged), DDMC_ENOMEM. */
int ddmc_host_threads_feed(ddmc_host_threads *t, const ddmc_host_packet *pkt, ddmc_host_thread_event *ev,
                           uint32_t *id);

/* Applies a parsed THST: every listed thread gets its stats and in_last_thst = 1 (unknown ids are
 * added, unnamed); every other entry gets in_last_thst = 0. Returns 0 or DDMC_ENOMEM. */
int ddmc_host_threads_apply_thst(ddmc_host_threads *t, const ddmc_host_thst *st);

/* The entry for id, or NULL. */
const ddmc_host_thread *ddmc_host_threads_find(const ddmc_host_threads *t, uint32_t id);

/* ---- Heap dumps ------------------------------------------------------------------------------- */

/* Word for a heap kind (DDMC_HOST_HEAPSEG_KIND of a state byte): 0 "object", 1 "class",
 * 2 "array1" (boolean[]/byte[]), 3 "array2" (char[]/short[]), 4 "array4" (int[]/float[]/Object[]),
 * 5 "array8" (long[]/double[]), 6 "unknown", 7 "native". Static strings; "?" out of range. */
const char *ddmc_host_heap_kind_name(unsigned kind);

/* One run, in absolute units: it covers bytes [unit * unit_size, (unit + units) * unit_size) of
 * the (32-bit, usually heap-base-relative) address space the segments describe. */
typedef struct ddmc_host_heap_run {
  uint64_t unit;
  uint64_t units;
  uint8_t state;       /* P cleared; solidity 0 = free */
} ddmc_host_heap_run;

typedef enum ddmc_host_heapdump_state {
  DDMC_HOST_DUMP_IDLE = 0,   /* nothing seen yet */
  DDMC_HOST_DUMP_OPEN,       /* HPST seen, collecting */
  DDMC_HOST_DUMP_DONE        /* HPEN seen: runs sorted and checked, totals valid */
} ddmc_host_heapdump_state;

typedef struct ddmc_host_heapdump {
  int native;                 /* collects NHST/NHSG/NHEN instead of HPST/HPSG|HPSO/HPEN */
  ddmc_host_heapdump_state state;
  uint32_t heap_id;           /* from HPST */
  uint8_t unit_size;          /* bytes per unit, from the first segment (0 until then) */
  int distinct;               /* HPSO seen (one run per object) rather than HPSG */
  uint64_t chunks;            /* segment chunks in this dump */
  uint64_t dumps;             /* dumps completed since init */
  ddmc_host_heap_run *runs;   /* sorted by unit once DONE */
  size_t n_runs, cap_runs;
  /* Totals, valid once DONE. */
  uint64_t first_unit, end_unit; /* extent of all runs: [first_unit, end_unit) */
  uint64_t covered_units;     /* sum of all runs (= end - first when there are no gaps) */
  uint64_t free_units;        /* runs with solidity FREE */
  uint64_t kind_units[8];     /* non-free runs per kind */
  uint64_t kind_runs[8];      /* non-free runs per kind (objects, for HPSO or one-run-per-object VMs) */
} ddmc_host_heapdump;

void ddmc_host_heapdump_init(ddmc_host_heapdump *d, int native);
void ddmc_host_heapdump_free(ddmc_host_heapdump *d);

/* Applies pkt if it is one of this collector's chunk types. A start chunk (HPST/NHST) discards
 * whatever was collected and opens a new dump; segments are decoded with host/heapseg.h (a
 * segment before any start chunk, or after the end chunk, is ignored); the end chunk sorts the
 * runs, checks that none overlap and computes the totals.
 * Returns 1 when this packet completed a dump (state DONE), 0 otherwise (including packets that
 * are not heap chunks), DDMC_EPROTO (a malformed segment, a heap id or unit size that changes
 * within the dump, overlapping runs; the open dump is discarded and the state goes back to IDLE),
 * DDMC_ENOMEM. */
int ddmc_host_heapdump_feed(ddmc_host_heapdump *d, const ddmc_host_packet *pkt);

#ifdef __cplusplus
}
#endif

#endif
