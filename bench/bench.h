/* SPDX-License-Identifier: Apache-2.0 */
/* libddmc benchmarks: shared harness.
 *
 * What: clocks, CPU pinning, sample statistics, the result rows that bench/run.sh turns into one
 * table, a raw JDWP client (no ddmc_host: the client must cost the same against every server it
 * is compared on), the bench VM (a ddmc_vm_ops table with N synthetic threads and a synthetic
 * heap), and the OpenJDK agent launcher.
 * Why raw sockets for the client: a figure is only comparable with its reference if the client
 * side is identical, byte for byte and syscall for syscall, against libddmc, the echo floor and
 * OpenJDK's agent.
 *
 * Rows go to stdout as "ROW\t<group>\t<figure>\t<value>\t<reference>\t<ref value>\t<ratio>\t
 * <target>\t<status>", status one of met, MISSED, info, n/a. Everything else (progress, notes)
 * goes to stderr. */
#ifndef DDMC_BENCH_H
#define DDMC_BENCH_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "ddmc/ddmc.h"

/* ---- clocks and CPUs */
int64_t bench_now_ns(void);        /* CLOCK_MONOTONIC */
int64_t bench_thread_cpu_ns(void); /* CLOCK_THREAD_CPUTIME_ID */
void bench_sleep_us(int64_t us);
/* Pins the calling thread to cpu (threads it creates inherit the mask). No-op when pinning is
 * off (BENCH_PIN=0) or the machine has one CPU. Returns 1 if pinned. */
int bench_pin(int cpu);
int bench_pinning(void);           /* 1 if bench_pin pins */
/* Where the server side (VM threads, echo server, the JVM) and the client run. */
#define BENCH_CPU_SERVER 0
#define BENCH_CPU_CLIENT 1

/* A child process (a VM under test) with its stdout on a pipe. bench_spawn pins it to
 * BENCH_CPU_SERVER and sends its stderr to /dev/null (unless BENCH_VERBOSE is set); pid -1 when
 * it could not start. bench_read_line reads its stdout until a line containing want (copied to
 * line) or secs pass: 0 or -1. bench_stop kills it and reaps it. */
typedef struct bchild {
  pid_t pid;
  int out;
} bchild;
bchild bench_spawn(char *const argv[]);
int bench_read_line(bchild *c, const char *want, char *line, size_t cap, double secs);
void bench_stop(bchild *c);
/* Median clock_gettime(CLOCK_MONOTONIC) cost, for the notes. */
double bench_clock_cost_ns(void);

/* ---- statistics */
void bench_sort(double *v, size_t n);
/* p in [0, 100] over sorted v (nearest rank). */
double bench_pct(const double *sorted, size_t n, double p);
/* Median of n values (sorts v). */
double bench_median(double *v, size_t n);

/* Log-linear latency histogram: exact below 1024 ns, then 64 buckets per power of two (1.6%
 * resolution). Cheap enough to record every call of a multi-million-call run. */
#define BHIST_BUCKETS (1024 + 54 * 64)
typedef struct bhist {
  uint64_t b[BHIST_BUCKETS];
  uint64_t n, max;
} bhist;
void bhist_add(bhist *h, uint64_t ns);
void bhist_merge(bhist *into, const bhist *from);
double bhist_pct(const bhist *h, double p);

/* ---- rows */
/* ratio < 0 prints "-". */
void bench_row(const char *group, const char *figure, const char *value, const char *ref, const char *ref_value,
               double ratio, const char *target, const char *status);
const char *bench_status(int met);
/* printf into a rotating static buffer (8 slots): for building row cells inline. */
const char *bench_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Human time: "812 ns", "23.4 us", "4.12 ms", "1.20 s". */
const char *bench_time(double ns);
void bench_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- raw JDWP client: blocking socket, TCP_NODELAY, one read buffer */
typedef struct jc {
  int fd;
  uint8_t *buf;
  size_t start, len, cap;
  uint32_t next_id;
} jc;

#define JDWP_HEADER 11u
#define JDWP_FLAG_REPLY 0x80u
#define FOURCC(a, b, c, d) (((uint32_t)(a) << 24) | ((uint32_t)(b) << 16) | ((uint32_t)(c) << 8) | (uint32_t)(d))

void jc_init(jc *c);
/* Connects to 127.0.0.1:port; retries on ECONNREFUSED until deadline_ns (bench_now_ns() base)
 * without sleeping. Keeps the read buffer of an earlier connection. Returns 0 or -errno. */
int jc_connect(jc *c, uint16_t port, int64_t deadline_ns);
int jc_handshake(jc *c);
/* jc_connect + jc_handshake, retried at once while the server refuses or resets (OpenJDK's agent
 * closes its listening socket while a session runs and re-opens it after the detach). */
int jc_open(jc *c, uint16_t port, int64_t deadline_ns);
/* Closes the socket, keeps the buffer for the next jc_connect. */
void jc_disconnect(jc *c);
/* Closes and frees. */
void jc_close(jc *c);
int jc_write_all(int fd, const void *p, size_t n);
/* Next complete packet (blocking). *len gets its length; the pointer stays valid until the next
 * call. NULL at EOF or on error. */
const uint8_t *jc_next(jc *c, uint32_t *len);
/* Packets already complete in the buffer, without reading (pipelining). */
const uint8_t *jc_next_buffered(jc *c, uint32_t *len);
/* Reads once (blocking) into the buffer; returns bytes read, 0 at EOF, < 0 on error. */
ssize_t jc_fill(jc *c);
/* Writes a DDM command packet (199/1) with one chunk into out; returns its length. */
size_t jc_build_ddm(uint8_t *out, uint32_t id, uint32_t type, const void *data, uint32_t n);
/* Writes a JDWP command packet with an empty body; returns 11. */
size_t jc_build_cmd(uint8_t *out, uint32_t id, uint8_t set, uint8_t cmd);
/* Sends a packet and reads until the reply with its id (other packets are skipped and counted
 * in *others if not NULL). Returns the reply's length or 0 on error. */
uint32_t jc_request(jc *c, const uint8_t *pkt, size_t n, uint32_t *others);
static inline uint32_t be32(const uint8_t *p) {
  return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}
static inline void put_be32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24);
  p[1] = (uint8_t)(v >> 16);
  p[2] = (uint8_t)(v >> 8);
  p[3] = (uint8_t)v;
}

/* ---- the bench VM */
/* A region of the synthetic heap, packed: bits 0-2 kind, bit 3 free, bits 4-31 size in 8-byte
 * units. */
#define BHEAP_KIND(r) ((ddmc_heap_kind)((r)&7u))
#define BHEAP_FREE(r) (((r) >> 3) & 1u)
#define BHEAP_BYTES(r) ((size_t)((r) >> 4) << 3)
#define BHEAP_PACK(bytes, kind, isfree) ((uint32_t)(((bytes) >> 3) << 4) | ((isfree) ? 8u : 0u) | ((uint32_t)(kind)&7u))

typedef struct bvm {
  ddmc_vm *vm;
  uint16_t port;
  int pin_jdwp;              /* the JDWP thread pins itself to BENCH_CPU_SERVER (from jdwp_thread_start) */
  pthread_t jdwp;            /* the JDWP thread, once jdwp_ready */
  atomic_int jdwp_ready;
  /* threads: visited by for_each_thread; tid cycles over real tids so THST reads /proc */
  uint32_t nthreads;
  char (*names)[24];
  const uint32_t *tids;
  size_t ntids;
  /* heap: nregions packed regions laid out from base */
  const uint32_t *regions;
  size_t nregions;
  uintptr_t base;
  uint64_t footprint;
} bvm;

/* Starts a VM listening on 127.0.0.1 (kernel-chosen port). sendq_bytes 0 = the default. The
 * caller fills the thread/heap fields before a peer asks. Exits the process on failure. */
void bvm_start(bvm *b, size_t sendq_bytes);
void bvm_stop(bvm *b);
/* CPU time the JDWP thread has used so far (ns), or -1. */
int64_t bvm_jdwp_cpu_ns(bvm *b);
/* Fills names for n threads ("Thread-<i>", "Binder:<pid>_<i>", ...). */
void bvm_set_threads(bvm *b, uint32_t n, const uint32_t *tids, size_t ntids);
/* Length of the Version (1,1) reply body the bench VM gives: OpenJDK 17's layout and strings,
 * so both replies are the same 227 bytes. */
extern const size_t bvm_version_body_len;

/* Real threads that only sleep: their tids are what the synthetic threads point at. */
void bench_idle_threads(int n, uint32_t *tids_out);
void bench_idle_threads_stop(void);

/* ---- synthetic heap (bench_heap.c) */
typedef struct bheap {
  uint32_t *r;
  size_t n;
  uint64_t bytes, free_bytes, objects;
} bheap;
/* Regions up to at least `bytes` of heap, from a fixed seed. */
void bheap_make(bheap *h, uint64_t bytes);
/* How many leading regions make up at least `bytes`; *footprint gets their size. */
size_t bheap_prefix(const bheap *h, uint64_t bytes, uint64_t *footprint);

/* ---- OpenJDK */
typedef struct bjava {
  pid_t pid;
  uint16_t port;
} bjava;
/* Starts `java -agentlib:jdwp=...,address=127.0.0.1:PORT -cp classdir Idle`, pinned to the server
 * CPU, and waits until it accepts. Returns 0, or -1 (no java, no class dir: lines print n/a). */
int bjava_start(bjava *j, const char *java, const char *classdir);
void bjava_stop(bjava *j);

/* ---- sections */
typedef struct bench_opts {
  const char *java;     /* path or NULL */
  const char *classdir; /* where Idle.class is */
  double scale;         /* < 1 shortens every run (profiling) */
  const char *minivm;   /* the minivm executable (dbg section) or NULL */
  const char *progdir;  /* bench/programs (dbg section) or NULL */
} bench_opts;

void bench_section_rt(const bench_opts *o);      /* round trip, pipelined, connection set-up */
void bench_section_send(const bench_opts *o);    /* VM-side cost of sending */
void bench_section_threads(const bench_opts *o); /* THEN / THST */
void bench_section_heap(const bench_opts *o);    /* heap dump */
void bench_section_mem(const bench_opts *o);     /* resident memory */
void bench_section_dbg(const bench_opts *o);     /* debugger: cost, breakpoint/step round trips, attach */
void bench_section_prof(const bench_opts *o);    /* profiling: allocation tracker, tracing, sampling */
void bench_section_hprof(const bench_opts *o);   /* heap dumps (hprof) to a file */
void bench_section_hotspot(const bench_opts *o); /* libddmcjdwp.so vs libjdwp on HotSpot ($BENCH_DDMCJDWP) */
void bench_section_scale(const bench_opts *o);   /* the same, cost against program size (bench_hotspot.c) */
void bench_section_hpconv(const bench_opts *o);  /* HotSpot's hprof into Android's, the converter alone */
void bench_section_jvmti(const bench_opts *o);   /* JVM TI agents: idle cost, method events vs HotSpot, heap walk */
void bench_jvmti_heap(const bench_opts *o);      /* its heap walk part (bench_jvmti_heap.c) */
void bench_section_prof_helo(const bench_opts *o); /* profiling aids, not in the table */
void bench_section_prof_send(const bench_opts *o);

#endif
