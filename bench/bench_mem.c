/* SPDX-License-Identifier: Apache-2.0 */
/* Resident memory the library adds to a VM process (Rss of /proc/self/smaps_rollup):
 *   idle      before and after ddmc_vm_new + set_ident + start (the JDWP thread listening)
 *   per peer  with one connected peer after a typical session (HELO, FEAT, THEN for 1,000
 *             threads, HPSG(1,0) and one 64 MiB heap dump that the peer reads to the end),
 *             against the idle figure; the peer runs in a child process so its own memory is not
 *             in this process's RSS
 *   after     once that peer has gone (what the allocator keeps)
 * Reference: one idle pthread created in the same process (its stack pages and TLS). Everything the
 * bench VM itself needs (thread names, the heap model) is allocated before the first reading. Run
 * it in a fresh process (bench/run.sh does). */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

/* Rss from /proc/self/smaps_rollup (a page-table walk: exact), else VmRSS from /proc/self/status
 * (kernel counters that are batched per CPU and can lag by tens of KiB). */
static long rss_kib(void) {
  static const struct {
    const char *path, *key;
  } src[] = {{"/proc/self/smaps_rollup", "Rss:"}, {"/proc/self/status", "VmRSS:"}};
  for (size_t i = 0; i < 2; i++) {
    FILE *f = fopen(src[i].path, "r");
    if (f == NULL) continue;
    char line[256];
    long v = -1;
    size_t kl = strlen(src[i].key);
    while (fgets(line, sizeof(line), f) != NULL)
      if (strncmp(line, src[i].key, kl) == 0) {
        v = strtol(line + kl, NULL, 10);
        break;
      }
    fclose(f);
    if (v >= 0) return v;
  }
  return -1;
}

static void settle(void) { bench_sleep_us(50000); }

static int idle_fd[2];
static void *idle_thread(void *arg) {
  (void)arg;
  char c;
  if (read(idle_fd[0], &c, 1) < 0) c = 0;
  return NULL;
}

/* The peer, in the child: a ddmlib-like session, then it reads the dump and waits to be told to go. */
static void child_peer(int in, int out) {
  uint16_t port;
  if (read(in, &port, sizeof(port)) != sizeof(port)) _exit(1);
  jc c;
  jc_init(&c);
  uint8_t pkt[64];
  if (jc_open(&c, port, bench_now_ns() + 5000000000LL) != 0) _exit(1);
  if (jc_request(&c, pkt, jc_build_ddm(pkt, 0x40000001u, FOURCC('H', 'E', 'L', 'O'), "\0\0\0\1", 4), NULL) == 0 ||
      jc_request(&c, pkt, jc_build_ddm(pkt, 0x40000002u, FOURCC('F', 'E', 'A', 'T'), NULL, 0), NULL) == 0 ||
      jc_request(&c, pkt, jc_build_ddm(pkt, 0x40000003u, FOURCC('T', 'H', 'E', 'N'), "\1", 1), NULL) == 0 ||
      jc_request(&c, pkt, jc_build_ddm(pkt, 0x40000004u, FOURCC('H', 'P', 'S', 'G'), "\1\0", 2), NULL) == 0)
    _exit(1);
  if (write(out, "r", 1) != 1) _exit(1);
  for (;;) {
    uint32_t len;
    const uint8_t *p = jc_next(&c, &len);
    if (p == NULL) _exit(1);
    if (!(p[8] & JDWP_FLAG_REPLY) && len >= 19 && be32(p + 11) == FOURCC('H', 'P', 'E', 'N')) break;
  }
  if (write(out, "d", 1) != 1) _exit(1);
  char q;
  if (read(in, &q, 1) != 1) q = 0;
  jc_close(&c);
  _exit(0);
}

typedef struct mem_result {
  long idle, thread, peer, kept, r2, r3, r4, r5, r6;
  double peak_kib;
  unsigned long long packets;
} mem_result;

/* One measurement, in a process that has never touched libddmc. */
static void mem_once(mem_result *res) {
  int to_child[2], to_parent[2];
  if (pipe(to_child) != 0 || pipe(to_parent) != 0 || pipe(idle_fd) != 0) exit(2);
  pid_t pid = fork();
  if (pid == 0) {
    close(to_child[1]);
    close(to_parent[0]);
    child_peer(to_child[0], to_parent[1]);
  }
  close(to_child[0]);
  close(to_parent[1]);

  bheap h;
  bheap_make(&h, (uint64_t)64 << 20);
  bvm b;
  memset(&b, 0, sizeof(b));
  uint32_t tid = (uint32_t)getpid();
  bvm_set_threads(&b, 1000, &tid, 1);
  b.regions = h.r;
  b.nregions = h.n;
  b.footprint = h.bytes;
  /* A first thread, kept alive, so the reference is the marginal cost of one more thread with libc's
   * thread code already paged in (a joined thread's stack would be reused from glibc's cache). */
  pthread_t warm;
  pthread_create(&warm, NULL, idle_thread, NULL);
  settle();

  long r0 = rss_kib();
  pthread_t th;
  pthread_create(&th, NULL, idle_thread, NULL);
  settle();
  long r1 = rss_kib();

  long r2 = rss_kib();
  bvm_start(&b, 0);
  settle();
  long r3 = rss_kib();

  char c;
  if (write(to_child[1], &b.port, sizeof(b.port)) != sizeof(b.port) || read(to_parent[0], &c, 1) != 1) {
    fprintf(stderr, "bench: memory peer failed\n");
    exit(2);
  }
  int rc = ddmc_gc_walk(b.vm);
  if (rc != 0 || read(to_parent[0], &c, 1) != 1) {
    fprintf(stderr, "bench: memory peer's dump failed: %s\n", ddmc_strerror(rc));
    exit(2);
  }
  settle();
  long r4 = rss_kib();
  ddmc_stats st;
  ddmc_vm_get_stats(b.vm, &st);

  if (write(to_child[1], "q", 1) != 1) exit(2);
  waitpid(pid, NULL, 0);
  for (int64_t until = bench_now_ns() + 5000000000LL; ddmc_vm_is_connected(b.vm) && bench_now_ns() < until;)
    bench_sleep_us(1000);
  settle();
  long r5 = rss_kib();
  bvm_stop(&b);
  long r6 = rss_kib();

  if (write(idle_fd[1], "xx", 2) != 2) exit(2);
  pthread_join(th, NULL);
  pthread_join(warm, NULL);

  res->idle = r3 - r2;
  res->thread = r1 - r0;
  res->peer = r4 - r3;
  res->kept = r5 - r3;
  res->r2 = r2;
  res->r3 = r3;
  res->r4 = r4;
  res->r5 = r5;
  res->r6 = r6;
  res->peak_kib = st.bytes_queued_peak / 1024.0;
  res->packets = (unsigned long long)st.packets_out;
  free(h.r);
  free(b.names);
}

static double med_long(const mem_result *r, int n, size_t off) {
  double v[16];
  for (int i = 0; i < n; i++) v[i] = (double)*(const long *)((const char *)&r[i] + off);
  return bench_median(v, (size_t)n);
}

void bench_section_mem(const bench_opts *o) {
  enum { RUNS = 5 };
  int runs = o->scale < 1 ? 3 : RUNS;
  mem_result r[RUNS];
  int got = 0;
  for (int i = 0; i < runs; i++) {
    int fd[2];
    if (pipe(fd) != 0) exit(2);
    pid_t pid = fork();
    if (pid == 0) {
      close(fd[0]);
      mem_result one;
      memset(&one, 0, sizeof(one));
      mem_once(&one);
      _exit(write(fd[1], &one, sizeof(one)) == sizeof(one) ? 0 : 1);
    }
    close(fd[1]);
    if (read(fd[0], &r[got], sizeof(r[got])) == sizeof(r[got])) got++;
    close(fd[0]);
    waitpid(pid, NULL, 0);
  }
  if (got == 0) {
    bench_note("memory: every measurement process failed");
    return;
  }
  double idle = med_long(r, got, offsetof(mem_result, idle)), thread = med_long(r, got, offsetof(mem_result, thread));
  double peer = med_long(r, got, offsetof(mem_result, peer)), kept = med_long(r, got, offsetof(mem_result, kept));
  double peak_kib = r[0].peak_kib;
  const char *G = "Memory";
  char tval[32], pval[32], peerval[32];
  snprintf(tval, sizeof(tval), "%.0f KiB", thread);
  snprintf(pval, sizeof(pval), "%.0f KiB", peak_kib);
  snprintf(peerval, sizeof(peerval), "%.0f KiB", peer);
  bench_row(G, "RSS added by an idle VM (ddmc_vm_new + start)", bench_fmt("%.0f KiB", idle), "one more idle pthread",
            tval, thread > 0 ? idle / thread : -1, "-", "info");
  bench_row(G, "RSS added by one peer (HELO, FEAT, THEN x1,000, 64 MiB HPSG dump)", peerval,
            "send queue peak in that session", pval, peak_kib > 0 ? peer / peak_kib : -1, "-", "info");
  bench_row(G, "RSS still held after that peer left", bench_fmt("%.0f KiB", kept), "RSS added by the peer", peerval,
            peer > 0 ? kept / peer : -1, "-", "info");
  char idles[128] = "";
  for (int i = 0; i < got; i++)
    snprintf(idles + strlen(idles), sizeof(idles) - strlen(idles), "%s%ld", i ? "/" : "", r[i].idle);
  bench_note("memory: medians of %d fresh processes (idle VM: %s KiB); first run: Rss %ld KiB before the VM, %ld "
             "idle, %ld with the peer, %ld after it left, %ld after ddmc_vm_free; %llu packets out in the session",
             got, idles, r[0].r2, r[0].r3, r[0].r4, r[0].r5, r[0].r6, r[0].packets);
}
