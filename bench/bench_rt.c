/* SPDX-License-Identifier: Apache-2.0 */
/* JDWP over loopback, one client: sequential round trips, 64 requests in flight, and connection
 * set-up, each against
 *   - the floor: a bare TCP echo thread that answers every request with a reply of exactly the
 *     size libddmc's reply has (same request bytes, same reply bytes, same client code);
 *   - OpenJDK 17's own JDWP agent (libjdwp + dt_socket) in an idle JVM.
 * Placement: the server side (the JDWP thread, the echo thread, every JVM thread) runs on CPU 0,
 * the client on CPU 1 (bench_pin; BENCH_PIN=0 turns it off). Requests: DDM HELO [u4 1] (23 bytes)
 * and VirtualMachine.Version (11 bytes), which the bench VM answers through its jdwp_command hook
 * with the same 227-byte reply OpenJDK gives; OpenJDK answers the DDM packet with
 * NOT_IMPLEMENTED (an 11-byte reply). Round trips are sampled in rounds that alternate the
 * servers, so drift in the machine's load hits every server alike. */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench.h"

#define HELO FOURCC('H', 'E', 'L', 'O')

/* ---- the floor: an echo thread with fixed request and reply sizes */

typedef struct echo {
  int lfd;
  uint16_t port;
  size_t req, rep;
  pthread_t th;
} echo;

static void *echo_main(void *arg) {
  echo *e = arg;
  bench_pin(BENCH_CPU_SERVER);
  for (;;) {
    int fd = accept(e->lfd, NULL, NULL);
    if (fd < 0) return NULL; /* listening socket shut down */
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    uint8_t hs[14];
    if (recv(fd, hs, 14, MSG_WAITALL) != 14 || send(fd, hs, 14, MSG_NOSIGNAL) != 14) {
      close(fd);
      continue;
    }
    size_t cap = 64 * 1024, have = 0;
    uint8_t *in = malloc(cap), *out = calloc(64, e->rep);
    for (size_t k = 0; k < 64; k++) {
      put_be32(out + k * e->rep, (uint32_t)e->rep);
      out[k * e->rep + 8] = JDWP_FLAG_REPLY;
    }
    for (;;) {
      ssize_t n = recv(fd, in + have, cap - have, 0);
      if (n <= 0) break;
      have += (size_t)n;
      size_t k = have / e->req;
      /* replies for every whole request received, in one send (at most 64 at a time) */
      size_t done = 0;
      while (done < k) {
        size_t m = k - done < 64 ? k - done : 64;
        for (size_t i = 0; i < m; i++) memcpy(out + i * e->rep + 4, in + (done + i) * e->req + 4, 4);
        if (jc_write_all(fd, out, m * e->rep) != 0) goto done;
        done += m;
      }
      memmove(in, in + k * e->req, have - k * e->req);
      have -= k * e->req;
    }
  done:
    free(in);
    free(out);
    close(fd);
  }
}

static void echo_start(echo *e, size_t req, size_t rep) {
  e->req = req;
  e->rep = rep;
  e->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t sl = sizeof(sa);
  if (bind(e->lfd, (struct sockaddr *)&sa, sizeof(sa)) != 0 || listen(e->lfd, 16) != 0) exit(2);
  getsockname(e->lfd, (struct sockaddr *)&sa, &sl);
  e->port = ntohs(sa.sin_port);
  pthread_create(&e->th, NULL, echo_main, e);
}

static void echo_stop(echo *e) {
  shutdown(e->lfd, SHUT_RDWR);
  pthread_join(e->th, NULL);
  close(e->lfd);
}

/* ---- one server under test, as the client sees it */

typedef struct target {
  const char *name;
  jc *c;
  uint8_t req[64];
  size_t req_len;
  uint32_t rep_len;
  double *s;
  size_t n, cap;
  int ok;
} target;

static void target_init(target *t, const char *name, jc *c, const uint8_t *req, size_t req_len) {
  memset(t, 0, sizeof(*t));
  t->name = name;
  t->c = c;
  memcpy(t->req, req, req_len);
  t->req_len = req_len;
  if (c == NULL) return;
  t->rep_len = jc_request(c, req, req_len, NULL);
  t->ok = t->rep_len != 0;
  if (!t->ok) fprintf(stderr, "bench: %s: no reply\n", name);
}

static void target_sample(target *t, size_t warm, size_t n) {
  if (!t->ok) return;
  for (size_t i = 0; i < warm; i++) jc_request(t->c, t->req, t->req_len, NULL);
  if (t->n + n > t->cap) {
    t->cap = (t->n + n) * 2;
    t->s = realloc(t->s, t->cap * sizeof(double));
  }
  for (size_t i = 0; i < n; i++) {
    int64_t t0 = bench_now_ns();
    if (jc_request(t->c, t->req, t->req_len, NULL) == 0) {
      t->ok = 0;
      return;
    }
    t->s[t->n++] = (double)(bench_now_ns() - t0);
  }
}

/* Replies per client read in the last pipe_rate (how the server batches its answers). */
static double last_batch;

/* Requests per second with `depth` in flight on one connection for about secs seconds. Each
 * wake-up of the client reads what is there and tops the window back up with one write. */
static double pipe_rate(jc *c, const uint8_t *req, size_t req_len, int depth, double secs) {
  uint8_t *batch = malloc((size_t)depth * req_len);
  for (int i = 0; i < depth; i++) memcpy(batch + (size_t)i * req_len, req, req_len);
  if (jc_write_all(c->fd, batch, (size_t)depth * req_len) != 0) {
    free(batch);
    return 0;
  }
  int inflight = depth;
  uint64_t done = 0, reads = 0;
  int64_t t0 = bench_now_ns(), t1 = t0, end = t0 + (int64_t)(secs * 1e9);
  int failed = 0;
  for (;;) {
    if (jc_fill(c) <= 0) {
      failed = 1;
      break;
    }
    reads++;
    uint32_t len, k = 0;
    const uint8_t *p;
    while ((p = jc_next_buffered(c, &len)) != NULL)
      if (p[8] & JDWP_FLAG_REPLY) k++;
    done += k;
    inflight -= (int)k;
    t1 = bench_now_ns();
    if (t1 >= end) break;
    if (k > 0 && jc_write_all(c->fd, batch, (size_t)k * req_len) != 0) {
      failed = 1;
      break;
    }
    inflight += (int)k;
  }
  /* leave the connection quiet for the next measurement */
  while (!failed && inflight > 0) {
    uint32_t len;
    const uint8_t *p = jc_next(c, &len);
    if (p == NULL) break;
    if (p[8] & JDWP_FLAG_REPLY) inflight--;
  }
  free(batch);
  last_batch = reads ? (double)done / (double)reads : 0;
  return failed ? 0 : (double)done / ((double)(t1 - t0) / 1e9);
}

/* connect + handshake + one request + close, n times; per-cycle times into s. Returns the
 * sustained cycles per second (a JVM that re-listens after each detach makes the next connect
 * wait: that wait is part of its cycle). */
static double conn_cycles(uint16_t port, const uint8_t *req, size_t req_len, int n, double *s) {
  jc c;
  jc_init(&c);
  int64_t start = bench_now_ns();
  int i;
  for (i = 0; i < n; i++) {
    int64_t t0 = bench_now_ns();
    int rc = jc_open(&c, port, t0 + 5000000000LL);
    if (rc == 0 && jc_request(&c, req, req_len, NULL) == 0) rc = -EIO;
    if (rc != 0) {
      fprintf(stderr, "bench: connection cycle %d to port %u failed: %s\n", i, (unsigned)port, strerror(-rc));
      break;
    }
    jc_disconnect(&c);
    s[i] = (double)(bench_now_ns() - t0);
  }
  double secs = (double)(bench_now_ns() - start) / 1e9;
  jc_close(&c);
  return i == n ? (double)n / secs : 0;
}

/* ---- the wake-up floor: a one-byte pipe ping-pong between two threads, no TCP at all */

typedef struct pingpong {
  int a[2], b[2];
  int n;
} pingpong;

static void *pong_main(void *arg) {
  pingpong *p = arg;
  bench_pin(BENCH_CPU_SERVER);
  char c;
  for (int i = 0; i < p->n; i++)
    if (read(p->a[0], &c, 1) != 1 || write(p->b[1], &c, 1) != 1) break;
  return NULL;
}

/* Median round trip, with the calling thread wherever it is pinned now. */
static double pingpong_ns(int n) {
  pingpong p;
  p.n = n;
  if (pipe(p.a) != 0 || pipe(p.b) != 0) exit(2);
  pthread_t th;
  pthread_create(&th, NULL, pong_main, &p);
  double *v = malloc(sizeof(double) * (size_t)n);
  char c = 'x';
  for (int i = 0; i < n; i++) {
    int64_t t0 = bench_now_ns();
    if (write(p.a[1], &c, 1) != 1 || read(p.b[0], &c, 1) != 1) exit(2);
    v[i] = (double)(bench_now_ns() - t0);
  }
  pthread_join(th, NULL);
  double m = bench_median(v + n / 10, (size_t)(n - n / 10)); /* the first 10% warm up */
  free(v);
  close(p.a[0]);
  close(p.a[1]);
  close(p.b[0]);
  close(p.b[1]);
  return m;
}

static const char *rate_str(double r) {
  if (r >= 1e6) return bench_fmt("%.2f M/s", r / 1e6);
  if (r >= 1e3) return bench_fmt("%.1f k/s", r / 1e3);
  return bench_fmt("%.0f /s", r);
}

/* Every figure of this section for one placement of the client: cpu 0 shares the server's CPU,
 * cpu 1 is the other one, -1 leaves it to the scheduler. */
static void rt_placement(const bench_opts *o, bvm *b, bjava *j, int cpu, const char *where) {
  double sc = o->scale;
  if (cpu >= 0) bench_pin(cpu);
  char G_rt[96], G_pipe[96], G_conn[96];
  snprintf(G_rt, sizeof(G_rt), "JDWP round trip, %s", where);
  snprintf(G_pipe, sizeof(G_pipe), "Pipelined, 64 in flight, %s", where);
  snprintf(G_conn, sizeof(G_conn), "Connection set-up, %s", where);

  uint8_t helo[32], ver[16];
  size_t helo_len = jc_build_ddm(helo, 0x40000001u, HELO, "\0\0\0\1", 4);
  size_t ver_len = jc_build_cmd(ver, 0x40000002u, 1, 1);

  jc cd;
  jc_init(&cd);
  if (jc_open(&cd, b->port, bench_now_ns() + 5000000000LL) != 0) {
    fprintf(stderr, "bench: cannot reach the bench VM\n");
    exit(2);
  }
  target t_helo, t_ver;
  target_init(&t_helo, "ddmc HELO", &cd, helo, helo_len);
  target_init(&t_ver, "ddmc Version", &cd, ver, ver_len);

  echo e_helo, e_ver;
  echo_start(&e_helo, helo_len, t_helo.rep_len);
  echo_start(&e_ver, ver_len, t_ver.rep_len);
  jc ce1, ce2;
  jc_init(&ce1);
  jc_init(&ce2);
  if (jc_open(&ce1, e_helo.port, 0) != 0 || jc_open(&ce2, e_ver.port, 0) != 0) exit(2);
  target f_helo, f_ver;
  target_init(&f_helo, "floor HELO sizes", &ce1, helo, helo_len);
  target_init(&f_ver, "floor Version sizes", &ce2, ver, ver_len);

  jc cj;
  jc_init(&cj);
  int have_java = j != NULL;
  int jrc = 0;
  if (have_java && (jrc = jc_open(&cj, j->port, bench_now_ns() + 5000000000LL)) != 0) {
    fprintf(stderr, "bench: OpenJDK agent did not accept: %s\n", strerror(-jrc));
    have_java = 0;
  }
  target j_ddm, j_ver;
  target_init(&j_ddm, "OpenJDK DDM", have_java ? &cj : NULL, helo, helo_len);
  target_init(&j_ver, "OpenJDK Version", have_java ? &cj : NULL, ver, ver_len);

  /* ---- sequential round trips, in alternating rounds */
  target *all[] = {&t_helo, &f_helo, &j_ddm, &t_ver, &f_ver, &j_ver};
  enum { NT = sizeof(all) / sizeof(all[0]) };
  int rounds = 6;
  size_t per = (size_t)(3000 * sc) + 50;
  for (int r = 0; r < rounds; r++)
    for (int i = 0; i < NT; i++) {
      target *t = all[(i + r) % NT];
      target_sample(t, r == 0 ? 2000 : 200, per);
    }
  for (int i = 0; i < NT; i++) bench_sort(all[i]->s, all[i]->n);
#define P(t, p) ((t)->ok && (t)->n ? bench_pct((t)->s, (t)->n, p) : -1.0)
  struct {
    const char *fig;
    target *x, *floor_, *jdk;
    const char *jdk_name;
  } rt[] = {{"DDM HELO", &t_helo, &f_helo, &j_ddm, "OpenJDK 17 agent, same DDM packet (-> error 99)"},
            {"Version (1,1) via VM hook", &t_ver, &f_ver, &j_ver, "OpenJDK 17 agent, Version (1,1)"}};
  for (int i = 0; i < 2; i++) {
    double x50 = P(rt[i].x, 50), x99 = P(rt[i].x, 99);
    double f50 = P(rt[i].floor_, 50), f99 = P(rt[i].floor_, 99);
    double j50 = P(rt[i].jdk, 50), j99 = P(rt[i].jdk, 99);
    char fl[96];
    snprintf(fl, sizeof(fl), "loopback echo floor (%zu B -> %u B)", rt[i].x->req_len, rt[i].x->rep_len);
    bench_row(G_rt, bench_fmt("%s p50", rt[i].fig), bench_time(x50), fl, bench_time(f50), x50 / f50,
              "<= 1.30x floor", bench_status(x50 <= 1.3 * f50));
    if (j50 > 0)
      bench_row(G_rt, bench_fmt("%s p50", rt[i].fig), bench_time(x50), rt[i].jdk_name, bench_time(j50), x50 / j50,
                "<= 0.50x OpenJDK", bench_status(x50 <= 0.5 * j50));
    else
      bench_row(G_rt, bench_fmt("%s p50", rt[i].fig), bench_time(x50), rt[i].jdk_name, "n/a (no java)", -1,
                "<= 0.50x OpenJDK", "n/a");
    /* what no server can beat here: the echo floor against the same OpenJDK figure */
    bench_row(G_rt, bench_fmt("bound: echo floor p50 (%s sizes)", rt[i].fig), bench_time(f50), rt[i].jdk_name,
              j50 > 0 ? bench_time(j50) : "n/a (no java)", j50 > 0 ? f50 / j50 : -1, "-", j50 > 0 ? "info" : "n/a");
    bench_row(G_rt, bench_fmt("%s p99", rt[i].fig), bench_time(x99), fl, bench_time(f99), x99 / f99, "-", "info");
    bench_row(G_rt, bench_fmt("%s p99", rt[i].fig), bench_time(x99), rt[i].jdk_name,
              j99 > 0 ? bench_time(j99) : "n/a (no java)", j99 > 0 ? x99 / j99 : -1, "-", j99 > 0 ? "info" : "n/a");
  }
  double pp = pingpong_ns((int)(4000 * sc) + 200);
  bench_row(G_rt, "bound: thread wake-up round trip (pipe ping-pong, no TCP)", bench_time(pp),
            "loopback echo floor (23 B -> 204 B)", bench_time(P(&f_helo, 50)), pp / P(&f_helo, 50), "-", "info");
  bench_note("%s: %zu round trips per server in %d alternating rounds; replies: libddmc HELO %u B, Version %u B; "
             "OpenJDK DDM %u B, Version %u B",
             G_rt, t_helo.n, rounds, t_helo.rep_len, t_ver.rep_len, j_ddm.rep_len, j_ver.rep_len);

  /* ---- 64 in flight */
  enum { DEPTH = 64 };
  double secs = 0.5 * sc + 0.05; /* per run; PR runs per server, interleaved, median */
  enum { PR = 5 };
  double r_helo[PR] = {0}, r_fhelo[PR] = {0}, r_jddm[PR] = {0}, r_ver[PR] = {0}, r_jver[PR] = {0}, busy[PR] = {0};
  double bat[PR] = {0}, fbat[PR] = {0};
  for (int r = 0; r < PR; r++) {
    int64_t c0 = bvm_jdwp_cpu_ns(b), w0 = bench_now_ns();
    r_helo[r] = pipe_rate(&cd, helo, helo_len, DEPTH, secs);
    bat[r] = last_batch;
    busy[r] = (double)(bvm_jdwp_cpu_ns(b) - c0) / (double)(bench_now_ns() - w0);
    r_fhelo[r] = pipe_rate(&ce1, helo, helo_len, DEPTH, secs);
    fbat[r] = last_batch;
    r_ver[r] = pipe_rate(&cd, ver, ver_len, DEPTH, secs);
    if (have_java) {
      r_jddm[r] = pipe_rate(&cj, helo, helo_len, DEPTH, secs);
      r_jver[r] = pipe_rate(&cj, ver, ver_len, DEPTH, secs);
    }
  }
  double helo_rate = bench_median(r_helo, PR), fhelo = bench_median(r_fhelo, PR), ver_rate = bench_median(r_ver, PR);
  double jddm = have_java ? bench_median(r_jddm, PR) : 0, jver = have_java ? bench_median(r_jver, PR) : 0;
  double helo_busy = bench_median(busy, PR);
  bench_note("%s: the JDWP thread was on a CPU %.0f%% of the time during the HELO runs (%.0f ns of its CPU per "
             "request); the client read %.1f replies per wake-up from libddmc, %.1f from the echo floor",
             G_pipe, 100 * helo_busy, helo_busy * 1e9 / helo_rate, bench_median(bat, PR), bench_median(fbat, PR));
  bench_row(G_pipe, "DDM HELO requests/s", rate_str(helo_rate),
            bench_fmt("loopback echo floor, 64 in flight (%zu B -> %u B)", helo_len, t_helo.rep_len), rate_str(fhelo),
            helo_rate / fhelo, ">= 1.00 M/s", bench_status(helo_rate >= 1e6));
  bench_row(G_pipe, "DDM HELO requests/s", rate_str(helo_rate), "OpenJDK 17 agent, same DDM packet",
            have_java ? rate_str(jddm) : "n/a (no java)", have_java ? helo_rate / jddm : -1, ">= 8x OpenJDK",
            have_java ? bench_status(helo_rate >= 8 * jddm) : "n/a");
  bench_row(G_pipe, "Version (1,1) via VM hook requests/s", rate_str(ver_rate), "OpenJDK 17 agent, Version (1,1)",
            have_java ? rate_str(jver) : "n/a (no java)", have_java ? ver_rate / jver : -1, ">= 8x OpenJDK",
            have_java ? bench_status(ver_rate >= 8 * jver) : "n/a");
  bench_row(G_pipe, "bound: echo floor requests/s (HELO sizes)", rate_str(fhelo), "OpenJDK 17 agent, same DDM packet",
            have_java ? rate_str(jddm) : "n/a (no java)", have_java ? fhelo / jddm : -1, "-", have_java ? "info" : "n/a");

  /* ---- connection set-up: one peer at a time, so the measuring connections go first */
  jc_disconnect(&cd);
  jc_disconnect(&cj);
  jc_disconnect(&ce1); /* the echo thread serves one connection at a time too */
  for (int64_t until = bench_now_ns() + 5000000000LL; ddmc_vm_is_connected(b->vm) && bench_now_ns() < until;)
    bench_sleep_us(100);
  int nd = (int)(1500 * sc) + 20, nj = (int)(150 * sc) + 5;
  double *sd = malloc(sizeof(double) * (size_t)nd * 3), *sj = malloc(sizeof(double) * (size_t)nj * 3);
  double *sf = malloc(sizeof(double) * (size_t)nd * 3);
  double cr_d[3] = {0}, cr_j[3] = {0}, cr_f[3] = {0};
  for (int r = 0; r < 3; r++) {
    cr_d[r] = conn_cycles(b->port, helo, helo_len, nd, sd + (size_t)r * nd);
    cr_f[r] = conn_cycles(e_helo.port, helo, helo_len, nd, sf + (size_t)r * nd);
    if (have_java) cr_j[r] = conn_cycles(j->port, helo, helo_len, nj, sj + (size_t)r * nj);
  }
  double crd = bench_median(cr_d, 3), crj = have_java ? bench_median(cr_j, 3) : 0, crf = bench_median(cr_f, 3);
  double md = bench_median(sd, (size_t)nd * 3), mj = have_java ? bench_median(sj, (size_t)nj * 3) : 0;
  double mf = bench_median(sf, (size_t)nd * 3);
  char jcell[64];
  snprintf(jcell, sizeof(jcell), "%s", have_java ? bench_fmt("%s (p50 %s)", rate_str(crj), bench_time(mj)) : "n/a (no java)");
  bench_row(G_conn, "connect+handshake+HELO+close", bench_fmt("%s (p50 %s)", rate_str(crd), bench_time(md)),
            "OpenJDK 17 agent, same cycle", jcell, have_java ? crd / crj : -1, ">= 4x OpenJDK",
            have_java ? bench_status(crd >= 4 * crj) : "n/a");
  bench_row(G_conn, "connect+handshake+HELO+close", bench_fmt("%s (p50 %s)", rate_str(crd), bench_time(md)),
            "loopback echo floor, same cycle", bench_fmt("%s (p50 %s)", rate_str(crf), bench_time(mf)), crd / crf, "-",
            "info");
  bench_row(G_conn, "bound: echo floor cycles/s", rate_str(crf), "OpenJDK 17 agent, same cycle", jcell,
            have_java ? crf / crj : -1, "-", have_java ? "info" : "n/a");
  free(sf);
  free(sd);
  free(sj);

  jc_close(&cd);
  jc_close(&ce1);
  jc_close(&ce2);
  jc_close(&cj);
  echo_stop(&e_helo);
  echo_stop(&e_ver);
  for (int i = 0; i < NT; i++) free(all[i]->s);
}

/* For profilers: 64 DDM HELO requests in flight against the bench VM for 4 s x scale, client on
 * cpu (BENCH_PROF_CPU, default 0). `perf record -g ddmc_bench prof-helo`; the VM's thread is "JDWP".
 * BENCH_PROF_REQ=version pipelines VirtualMachine.Version instead. */
void bench_section_prof_helo(const bench_opts *o) {
  bvm b;
  memset(&b, 0, sizeof(b));
  b.pin_jdwp = 1;
  bvm_start(&b, 0);
  const char *cpu = getenv("BENCH_PROF_CPU"), *req = getenv("BENCH_PROF_REQ");
  bench_pin(cpu ? atoi(cpu) : 0);
  uint8_t pkt[32];
  size_t len = req && strcmp(req, "version") == 0 ? jc_build_cmd(pkt, 0x40000002u, 1, 1)
                                                   : jc_build_ddm(pkt, 0x40000001u, HELO, "\0\0\0\1", 4);
  jc c;
  jc_init(&c);
  if (jc_open(&c, b.port, bench_now_ns() + 5000000000LL) != 0) exit(2);
  int64_t c0 = bvm_jdwp_cpu_ns(&b), w0 = bench_now_ns();
  double r = pipe_rate(&c, pkt, len, 64, 4.0 * o->scale);
  double busy = (double)(bvm_jdwp_cpu_ns(&b) - c0) / (double)(bench_now_ns() - w0);
  fprintf(stderr, "prof: %.2f M requests/s; JDWP thread on a CPU %.0f%% of the time, %.0f ns per request\n", r / 1e6,
          100 * busy, busy * 1e9 / r);
  jc_close(&c);
  bvm_stop(&b);
}

void bench_section_rt(const bench_opts *o) {
  bvm b;
  memset(&b, 0, sizeof(b));
  b.pin_jdwp = 1;
  bvm_start(&b, 0);
  bjava j;
  int have_java = bjava_start(&j, o->java, o->classdir) == 0;
  if (!have_java) bench_note("OpenJDK lines: n/a (no java, or Idle.class missing: bench/run.sh compiles it)");
  if (bench_pinning()) {
    rt_placement(o, &b, have_java ? &j : NULL, 0, "same CPU");
    rt_placement(o, &b, have_java ? &j : NULL, 1, "cross-CPU");
  } else {
    rt_placement(o, &b, have_java ? &j : NULL, -1, "unpinned");
  }
  bench_note("placement: every server (libddmc's JDWP thread, the echo thread, all JVM threads) runs on CPU 0; "
             "'same CPU' runs the client on CPU 0 too, 'cross-CPU' on CPU 1 (sched_setaffinity). Connection set-up: "
             "the client retries connect() at once while OpenJDK's agent re-listens after each detach");
  if (have_java) bjava_stop(&j);
  bvm_stop(&b);
}
