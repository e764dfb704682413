/* SPDX-License-Identifier: Apache-2.0 */
/* The VM-side cost of ddmc_send_chunk: what a VM thread pays to report an event.
 *   no peer        the call returns DDMC_ENOTCONN; timed in bursts of 10,000 calls
 *   reading peer   a peer that sent one DDM packet and reads and discards everything; bursts of 64
 *                  calls timed, median burst / 64, with a 256 MiB queue cap so a JDWP thread that
 *                  falls behind shows up as queue growth rather than as cheap DDMC_EQFULL refusals
 *                  (counted and printed, expected 0). Two loads: every thread calling back to back
 *                  (more than the JDWP thread drains once the callers outnumber the CPUs), and
 *                  paced to 250,000 chunks/s from all threads together
 *   stalled peer   a peer that enabled thread updates (THEN 1) and never reads again, default
 *                  32 MiB cap: each thread makes 2,000,000 calls, each one timed (clock_gettime
 *                  overhead included); the queue fills, then every call is refused
 * Payload: 32 bytes (a THCR for a 12-character thread name). With 1 thread the caller runs on
 * CPU 1 and the JDWP thread and the reading peer on CPU 0; 4 and 16 threads are left to the
 * scheduler (2 CPUs). Reference: an uncontended pthread mutex lock+unlock pair in this process. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench.h"

#define TEST_TYPE FOURCC('T', 'E', 'S', 'T')
#define PAYLOAD 32

static uint8_t payload[PAYLOAD];

enum { MODE_NOPEER, MODE_PEER, MODE_PACED, MODE_STALLED };
/* MODE_PACED: every thread sends a 64-call burst, then sleeps, so that all threads together offer
 * PACED_RATE chunks per second: a load the JDWP thread keeps up with, unlike back-to-back calls. */
#define PACED_RATE 250000.0

typedef struct sender {
  ddmc_vm *vm;
  int mode, pin, nthreads;
  int64_t until;
  uint64_t calls, ok, full, notconn;
  long vcsw, ivcsw; /* context switches of this thread during its run: blocked / preempted */
  long minflt;      /* page faults taken (fresh memory for queued chunks) */
  long sleeps;      /* MODE_PACED's own sleeps, taken out of vcsw */
  bhist *h;
  pthread_barrier_t *bar;
} sender;

static void *sender_main(void *arg) {
  sender *s = arg;
  pthread_setname_np(pthread_self(), "vm-sender");
  if (s->pin) bench_pin(BENCH_CPU_CLIENT);
  pthread_barrier_wait(s->bar);
  struct rusage ru0, ru1;
  getrusage(RUSAGE_THREAD, &ru0);
  ddmc_vm *vm = s->vm;
  if (s->mode == MODE_NOPEER) {
    enum { B = 10000 };
    while (bench_now_ns() < s->until) {
      int64_t t0 = bench_now_ns();
      for (int i = 0; i < B; i++) s->notconn += ddmc_send_chunk(vm, TEST_TYPE, payload, PAYLOAD) == DDMC_ENOTCONN;
      int64_t t1 = bench_now_ns();
      bhist_add(s->h, (uint64_t)((t1 - t0) * 100 / B)); /* hundredths of a ns per call */
      s->calls += B;
    }
  } else if (s->mode == MODE_PEER || s->mode == MODE_PACED) {
    enum { B = 64 };
    int64_t period = (int64_t)(1e9 * B * s->nthreads / PACED_RATE), next = bench_now_ns();
    while (bench_now_ns() < s->until) {
      if (s->mode == MODE_PACED) {
        next += period;
        int64_t now = bench_now_ns();
        if (next > now) {
          bench_sleep_us((next - now) / 1000);
          s->sleeps++;
        }
      }
      int64_t t0 = bench_now_ns();
      for (int i = 0; i < B; i++) {
        int rc = ddmc_send_chunk(vm, TEST_TYPE, payload, PAYLOAD);
        s->ok += rc == 0;
        s->full += rc == DDMC_EQFULL;
      }
      int64_t t1 = bench_now_ns();
      bhist_add(s->h, (uint64_t)((t1 - t0) * 100 / B));
      s->calls += B;
    }
  } else {
    for (int i = 0; i < 2000000; i++) {
      int64_t t0 = bench_now_ns();
      int rc = ddmc_send_chunk(vm, TEST_TYPE, payload, PAYLOAD);
      int64_t t1 = bench_now_ns();
      bhist_add(s->h, (uint64_t)(t1 - t0));
      s->ok += rc == 0;
      s->full += rc == DDMC_EQFULL;
    }
    s->calls = 2000000;
  }
  getrusage(RUSAGE_THREAD, &ru1);
  s->vcsw = ru1.ru_nvcsw - ru0.ru_nvcsw - s->sleeps;
  if (s->vcsw < 0) s->vcsw = 0;
  s->ivcsw = ru1.ru_nivcsw - ru0.ru_nivcsw;
  s->minflt = ru1.ru_minflt - ru0.ru_minflt;
  return NULL;
}

/* Runs n threads in mode; the merged histogram goes into *out. */
static long last_vcsw, last_ivcsw, last_minflt; /* of the last run_senders, all threads */

static void run_senders(ddmc_vm *vm, int n, int mode, double secs, bhist *out, uint64_t *calls, uint64_t *ok,
                        uint64_t *full) {
  sender s[16];
  pthread_t th[16];
  pthread_barrier_t bar;
  pthread_barrier_init(&bar, NULL, (unsigned)n + 1);
  for (int i = 0; i < n; i++) {
    memset(&s[i], 0, sizeof(s[i]));
    s[i].vm = vm;
    s[i].mode = mode;
    s[i].pin = n == 1;
    s[i].nthreads = n;
    s[i].h = calloc(1, sizeof(bhist));
    s[i].bar = &bar;
    pthread_create(&th[i], NULL, sender_main, &s[i]);
  }
  int64_t until = bench_now_ns() + (int64_t)(secs * 1e9) + 1000000; /* threads read it after the barrier */
  for (int i = 0; i < n; i++) s[i].until = until;
  pthread_barrier_wait(&bar);
  memset(out, 0, sizeof(*out));
  *calls = *ok = *full = 0;
  last_vcsw = last_ivcsw = last_minflt = 0;
  for (int i = 0; i < n; i++) {
    pthread_join(th[i], NULL);
    last_vcsw += s[i].vcsw;
    last_ivcsw += s[i].ivcsw;
    last_minflt += s[i].minflt;
    bhist_merge(out, s[i].h);
    *calls += s[i].calls;
    *ok += s[i].ok;
    *full += s[i].full;
    free(s[i].h);
  }
  pthread_barrier_destroy(&bar);
}

/* ---- the peers */

typedef struct reader {
  jc c;
  pthread_t th;
  atomic_uint_fast64_t bytes;
} reader;

static void *reader_main(void *arg) {
  reader *r = arg;
  pthread_setname_np(pthread_self(), "peer");
  bench_pin(BENCH_CPU_SERVER);
  static uint8_t buf[1 << 20];
  for (;;) {
    ssize_t n = recv(r->c.fd, buf, sizeof(buf), 0);
    if (n <= 0) break;
    atomic_fetch_add(&r->bytes, (uint64_t)n);
  }
  return NULL;
}

static double mutex_pair_ns(void) {
  pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
  double v[15];
  for (int k = 0; k < 15; k++) {
    int64_t t0 = bench_now_ns();
    for (int i = 0; i < 200000; i++) {
      pthread_mutex_lock(&m);
      __asm__ volatile("" ::: "memory");
      pthread_mutex_unlock(&m);
    }
    v[k] = (double)(bench_now_ns() - t0) / 200000.0;
  }
  return bench_median(v, 15);
}

static double memcpy_ns(void) {
  static uint8_t dst[PAYLOAD * 64];
  double v[15];
  for (int k = 0; k < 15; k++) {
    int64_t t0 = bench_now_ns();
    for (int i = 0; i < 200000; i++) {
      memcpy(dst + (i & 63) * PAYLOAD, payload, PAYLOAD);
      __asm__ volatile("" : : "r"(dst) : "memory");
    }
    v[k] = (double)(bench_now_ns() - t0) / 200000.0;
  }
  return bench_median(v, 15);
}

void bench_section_send(const bench_opts *o) {
  double sc = o->scale;
  for (int i = 0; i < PAYLOAD; i++) payload[i] = (uint8_t)i;
  double mtx = mutex_pair_ns(), mcp = memcpy_ns();
  const char *mref = "uncontended mutex lock+unlock";
  char mval[32];
  snprintf(mval, sizeof(mval), "%s", bench_time(mtx));
  static const int threads[] = {1, 4, 16};
  const char *G = "VM-side send cost";

  /* ---- no peer */
  {
    bvm b;
    memset(&b, 0, sizeof(b));
    b.pin_jdwp = 1;
    bvm_start(&b, 0);
    for (int k = 0; k < 3; k++) {
      bhist h;
      uint64_t calls, ok, full;
      run_senders(b.vm, threads[k], MODE_NOPEER, 0.4 * sc + 0.05, &h, &calls, &ok, &full);
      double ns = bhist_pct(&h, 50) / 100.0;
      bench_row(G, bench_fmt("ddmc_send_chunk, no peer, %d thread%s", threads[k], threads[k] > 1 ? "s" : ""),
                bench_fmt("%.2f ns/call", ns), mref, mval, ns / mtx, "<= 5 ns", bench_status(ns <= 5.0));
    }
    bvm_stop(&b);
  }

  /* ---- a connected peer that reads everything */
  {
    bvm b;
    memset(&b, 0, sizeof(b));
    b.pin_jdwp = 1;
    bvm_start(&b, (size_t)256 << 20);
    reader r;
    memset(&r, 0, sizeof(r));
    jc_init(&r.c);
    uint8_t pkt[64];
    if (jc_open(&r.c, b.port, bench_now_ns() + 5000000000LL) != 0 ||
        jc_request(&r.c, pkt, jc_build_ddm(pkt, 0x40000001u, FOURCC('H', 'E', 'L', 'O'), "\0\0\0\1", 4), NULL) == 0) {
      fprintf(stderr, "bench: peer cannot reach the VM\n");
      exit(2);
    }
    pthread_create(&r.th, NULL, reader_main, &r);
    for (int pm = 0; pm < 2; pm++)
      for (int k = 0; k < 3; k++) {
        int mode = pm == 0 ? MODE_PEER : MODE_PACED;
        bhist h;
        uint64_t calls, ok, full;
        ddmc_stats st0, st;
        ddmc_vm_get_stats(b.vm, &st0);
        run_senders(b.vm, threads[k], mode, (pm ? 0.4 : 0.3) * sc + 0.05, &h, &calls, &ok, &full);
        double ns = bhist_pct(&h, 50) / 100.0, p99 = bhist_pct(&h, 99) / 100.0;
        ddmc_vm_get_stats(b.vm, &st);
        const char *how = pm == 0 ? "back to back" : "paced, 250k chunks/s in all";
        bench_row(G, bench_fmt("ddmc_send_chunk, reading peer, %d thread%s, %s", threads[k], threads[k] > 1 ? "s" : "", how),
                  bench_fmt("%.0f ns/call", ns), mref, mval, ns / mtx, "<= 300 ns", bench_status(ns <= 300.0));
        bench_note("reading peer, %d threads, %s: %.2f M calls, %.2f M queued, %llu refused (EQFULL); p99 of 64-call "
                   "bursts %.0f ns/call; queue peak so far %.1f MiB; callers blocked %ld times, preempted %ld times, "
                   "%ld page faults",
                   threads[k], how, calls / 1e6, ok / 1e6, (unsigned long long)full, p99,
                   st.bytes_queued_peak / 1048576.0, last_vcsw, last_ivcsw, last_minflt);
        /* let the JDWP thread catch up before the next run */
        for (int64_t t = bench_now_ns() + 3000000000LL; bench_now_ns() < t;) {
          uint64_t before = atomic_load(&r.bytes);
          bench_sleep_us(20000);
          if (atomic_load(&r.bytes) == before) break;
        }
      }
    shutdown(r.c.fd, SHUT_RDWR);
    pthread_join(r.th, NULL);
    jc_close(&r.c);
    bvm_stop(&b);
  }

  /* ---- a stalled peer */
  for (int k = 0; k < 2; k++) {
    int n = k == 0 ? 1 : 4;
    bvm b;
    memset(&b, 0, sizeof(b));
    b.pin_jdwp = 1;
    bvm_start(&b, 0);
    bvm_set_threads(&b, 0, NULL, 0);
    jc c;
    jc_init(&c);
    uint8_t pkt[64];
    if (jc_open(&c, b.port, bench_now_ns() + 5000000000LL) != 0 ||
        jc_request(&c, pkt, jc_build_ddm(pkt, 0x40000001u, FOURCC('T', 'H', 'E', 'N'), "\1", 1), NULL) == 0) {
      fprintf(stderr, "bench: stalled peer cannot reach the VM\n");
      exit(2);
    }
    /* from here the peer reads nothing */
    bhist h;
    uint64_t calls, ok, full;
    run_senders(b.vm, n, MODE_STALLED, 0, &h, &calls, &ok, &full);
    double p50 = bhist_pct(&h, 50), p999 = bhist_pct(&h, 99.9), mx = (double)h.max;
    bench_row(G, bench_fmt("stalled peer, %d thread%s: p99.9 call", n, n > 1 ? "s" : ""), bench_time(p999), mref, mval,
              p999 / mtx, "-", "info");
    bench_row(G, bench_fmt("stalled peer, %d thread%s: worst call", n, n > 1 ? "s" : ""), bench_time(mx), mref, mval,
              mx / mtx, "-", "info");
    bench_note("stalled peer, %d threads: %.1f M calls, %.2f M queued before the queue filled, %.1f M refused; p50 %s; "
               "the callers blocked %ld times (voluntary context switches), were preempted %ld times and took %ld "
               "page faults",
               n, calls / 1e6, ok / 1e6, full / 1e6, bench_time(p50), last_vcsw, last_ivcsw, last_minflt);
    jc_close(&c);
    bvm_stop(&b);
  }
  bench_note("send cost references: mutex lock+unlock %s, memcpy of the %d-byte payload %s, clock_gettime %s "
             "(inside every stalled-peer sample)",
             bench_time(mtx), PAYLOAD, bench_time(mcp), bench_time(bench_clock_cost_ns()));
}

/* For profilers: BENCH_PROF_THREADS (1) VM threads call ddmc_send_chunk for 3 s x scale with a
 * reading peer (BENCH_PROF_MODE=paced: 250k chunks/s in all), or with BENCH_PROF_MODE=stalled a
 * stalled one (2,000,000 calls each). Threads:
 * "vm-sender", "peer", "JDWP". */
void bench_section_prof_send(const bench_opts *o) {
  const char *m = getenv("BENCH_PROF_MODE"), *t = getenv("BENCH_PROF_THREADS");
  int stalled = m != NULL && strcmp(m, "stalled") == 0, n = t ? atoi(t) : 1;
  int paced = m != NULL && strcmp(m, "paced") == 0;
  if (n < 1 || n > 16) n = 1;
  bvm b;
  memset(&b, 0, sizeof(b));
  b.pin_jdwp = 1;
  bvm_start(&b, stalled ? 0 : (size_t)256 << 20);
  reader r;
  memset(&r, 0, sizeof(r));
  jc_init(&r.c);
  uint8_t pkt[64];
  if (jc_open(&r.c, b.port, bench_now_ns() + 5000000000LL) != 0 ||
      jc_request(&r.c, pkt, jc_build_ddm(pkt, 0x40000001u, FOURCC('T', 'H', 'E', 'N'), "\1", 1), NULL) == 0)
    exit(2);
  if (!stalled) pthread_create(&r.th, NULL, reader_main, &r);
  bhist h;
  uint64_t calls, ok, full;
  int64_t c0 = bvm_jdwp_cpu_ns(&b), w0 = bench_now_ns();
  run_senders(b.vm, n, stalled ? MODE_STALLED : paced ? MODE_PACED : MODE_PEER, 3.0 * o->scale, &h, &calls, &ok, &full);
  double busy = (double)(bvm_jdwp_cpu_ns(&b) - c0) / (double)(bench_now_ns() - w0);
  fprintf(stderr, "prof: %.2f M calls, %.2f M queued, %.2f M refused; p50 %.0f, p99 %.0f, p99.9 %.0f, max %.0f (%s); "
          "JDWP thread on a CPU %.0f%%; callers blocked %ld, preempted %ld times, %ld page faults\n", calls / 1e6, ok / 1e6, full / 1e6,
          bhist_pct(&h, 50), bhist_pct(&h, 99), bhist_pct(&h, 99.9), (double)h.max,
          stalled ? "ns per call" : "ns/100 per call, 64-call bursts", 100 * busy, last_vcsw, last_ivcsw, last_minflt);
  shutdown(r.c.fd, SHUT_RDWR);
  if (!stalled) pthread_join(r.th, NULL);
  jc_close(&r.c);
  bvm_stop(&b);
}
