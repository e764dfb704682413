/* SPDX-License-Identifier: Apache-2.0 */
/* The harness behind every section: see bench.h. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

/* ---- clocks and CPUs */

int64_t bench_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t bench_thread_cpu_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void bench_sleep_us(int64_t us) {
  struct timespec ts = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

int bench_pinning(void) {
  const char *e = getenv("BENCH_PIN");
  if (e != NULL && strcmp(e, "0") == 0) return 0;
  return sysconf(_SC_NPROCESSORS_ONLN) >= 2;
}

int bench_pin(int cpu) {
  if (!bench_pinning()) return 0;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof(set), &set) == 0; /* 0 = the calling thread */
}

double bench_clock_cost_ns(void) {
  enum { N = 64 };
  double v[N];
  for (int i = 0; i < N; i++) {
    int64_t t0 = bench_now_ns();
    for (int k = 0; k < 1000; k++) (void)bench_now_ns();
    v[i] = (double)(bench_now_ns() - t0) / 1000.0;
  }
  return bench_median(v, N);
}

/* ---- statistics */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

void bench_sort(double *v, size_t n) { qsort(v, n, sizeof(*v), cmp_double); }

double bench_pct(const double *s, size_t n, double p) {
  if (n == 0) return 0;
  size_t k = (size_t)(p / 100.0 * (double)n + 0.5);
  if (k > 0) k--;
  if (k >= n) k = n - 1;
  return s[k];
}

double bench_median(double *v, size_t n) {
  if (n == 0) return 0;
  bench_sort(v, n);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void bhist_add(bhist *h, uint64_t v) {
  size_t i;
  if (v < 1024) {
    i = (size_t)v;
  } else {
    int e = 63 - __builtin_clzll(v);
    i = 1024 + (size_t)(e - 10) * 64 + ((v >> (e - 6)) & 63);
    if (i >= BHIST_BUCKETS) i = BHIST_BUCKETS - 1;
  }
  h->b[i]++;
  h->n++;
  if (v > h->max) h->max = v;
}

void bhist_merge(bhist *into, const bhist *from) {
  for (size_t i = 0; i < BHIST_BUCKETS; i++) into->b[i] += from->b[i];
  into->n += from->n;
  if (from->max > into->max) into->max = from->max;
}

/* The lower bound of the bucket holding the p-th percentile. */
double bhist_pct(const bhist *h, double p) {
  if (h->n == 0) return 0;
  uint64_t want = (uint64_t)(p / 100.0 * (double)h->n + 0.5), acc = 0;
  if (want == 0) want = 1;
  for (size_t i = 0; i < BHIST_BUCKETS; i++) {
    acc += h->b[i];
    if (acc >= want) {
      if (i < 1024) return (double)i;
      size_t e = (i - 1024) / 64 + 10, sub = (i - 1024) % 64;
      return (double)(((uint64_t)1 << e) + ((uint64_t)sub << (e - 6)));
    }
  }
  return (double)h->max;
}

/* ---- rows */

const char *bench_fmt(const char *fmt, ...) {
  static __thread char slots[8][160];
  static __thread int at;
  char *s = slots[at++ & 7];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s, sizeof(slots[0]), fmt, ap);
  va_end(ap);
  return s;
}

const char *bench_time(double ns) {
  if (ns < 1000) return bench_fmt("%.*f ns", ns < 10 ? 2 : ns < 100 ? 1 : 0, ns);
  if (ns < 1e6) return bench_fmt("%.*f us", ns < 1e4 ? 2 : 1, ns / 1e3);
  if (ns < 1e9) return bench_fmt("%.*f ms", ns < 1e7 ? 2 : 1, ns / 1e6);
  return bench_fmt("%.2f s", ns / 1e9);
}

const char *bench_status(int met) { return met ? "met" : "MISSED"; }

void bench_row(const char *group, const char *figure, const char *value, const char *ref, const char *ref_value,
               double ratio, const char *target, const char *status) {
  char r[32];
  if (ratio < 0) snprintf(r, sizeof(r), "-");
  else snprintf(r, sizeof(r), "%.*fx", ratio < 10 ? 2 : 1, ratio);
  printf("ROW\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", group, figure, value, ref, ref_value, r, target, status);
  fflush(stdout);
}

void bench_note(const char *fmt, ...) {
  char s[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(s, sizeof(s), fmt, ap);
  va_end(ap);
  printf("NOTE\t%s\n", s);
  fflush(stdout);
}

/* ---- raw JDWP client */

int jc_write_all(int fd, const void *p, size_t n) {
  const uint8_t *b = p;
  while (n > 0) {
    ssize_t w = send(fd, b, n, MSG_NOSIGNAL);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -errno;
    }
    b += w;
    n -= (size_t)w;
  }
  return 0;
}

void jc_init(jc *c) {
  memset(c, 0, sizeof(*c));
  c->fd = -1;
  c->next_id = 0x40000000u;
}

int jc_connect(jc *c, uint16_t port, int64_t deadline_ns) {
  jc_disconnect(c);
  struct sockaddr_in sa;
  memset(&sa, 0, sizeof(sa));
  sa.sin_family = AF_INET;
  sa.sin_port = htons(port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  for (;;) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -errno;
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
      int one = 1;
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      /* a server that never answers fails the run instead of hanging it */
      struct timeval tv = {30, 0};
      setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
      c->fd = fd;
      break;
    }
    int e = errno;
    close(fd);
    if (e != ECONNREFUSED || bench_now_ns() > deadline_ns) return -e;
  }
  if (c->buf == NULL) {
    c->cap = 1 << 20;
    c->buf = malloc(c->cap);
    if (c->buf == NULL) return -ENOMEM;
  }
  return 0;
}

void jc_disconnect(jc *c) {
  if (c->fd >= 0) close(c->fd);
  c->fd = -1;
  c->start = c->len = 0;
}

void jc_close(jc *c) {
  jc_disconnect(c);
  free(c->buf);
  c->buf = NULL;
  c->start = c->len = c->cap = 0;
}

ssize_t jc_fill(jc *c) {
  if (c->start > 0 && (c->start == c->len || c->cap - c->len < 65536)) {
    memmove(c->buf, c->buf + c->start, c->len - c->start);
    c->len -= c->start;
    c->start = 0;
  }
  if (c->cap - c->len < 4096) {
    size_t cap = c->cap * 2;
    uint8_t *nb = realloc(c->buf, cap);
    if (nb == NULL) return -ENOMEM;
    c->buf = nb;
    c->cap = cap;
  }
  for (;;) {
    ssize_t n = recv(c->fd, c->buf + c->len, c->cap - c->len, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n > 0) c->len += (size_t)n;
    return n < 0 ? -errno : n;
  }
}

int jc_handshake(jc *c) {
  static const char hs[] = "JDWP-Handshake";
  int rc = jc_write_all(c->fd, hs, 14);
  if (rc != 0) return rc;
  while (c->len - c->start < 14) {
    ssize_t n = jc_fill(c);
    if (n <= 0) return n == 0 ? -ECONNRESET : (int)n;
  }
  if (memcmp(c->buf + c->start, hs, 14) != 0) return -EPROTO;
  c->start += 14;
  return 0;
}

int jc_open(jc *c, uint16_t port, int64_t deadline_ns) {
  for (;;) {
    int rc = jc_connect(c, port, deadline_ns);
    if (rc == 0) rc = jc_handshake(c);
    if (rc == 0) return 0;
    jc_disconnect(c);
    if ((rc != -ECONNRESET && rc != -ECONNREFUSED && rc != -EPIPE) || bench_now_ns() > deadline_ns) return rc;
  }
}

const uint8_t *jc_next_buffered(jc *c, uint32_t *len) {
  size_t avail = c->len - c->start;
  if (avail < JDWP_HEADER) return NULL;
  const uint8_t *p = c->buf + c->start;
  uint32_t n = be32(p);
  if (n < JDWP_HEADER || avail < n) return NULL;
  c->start += n;
  *len = n;
  return p;
}

const uint8_t *jc_next(jc *c, uint32_t *len) {
  for (;;) {
    size_t avail = c->len - c->start;
    if (avail >= JDWP_HEADER) {
      uint32_t n = be32(c->buf + c->start);
      if (n < JDWP_HEADER) return NULL;
      if (n > c->cap) { /* a packet larger than the buffer: grow once */
        size_t cap = c->cap;
        while (cap < (size_t)n + 65536) cap *= 2;
        uint8_t *nb = realloc(c->buf, cap);
        if (nb == NULL) return NULL;
        c->buf = nb;
        c->cap = cap;
      }
      if (avail >= n) {
        const uint8_t *p = c->buf + c->start;
        c->start += n;
        *len = n;
        return p;
      }
    }
    if (jc_fill(c) <= 0) return NULL;
  }
}

size_t jc_build_ddm(uint8_t *out, uint32_t id, uint32_t type, const void *data, uint32_t n) {
  put_be32(out, JDWP_HEADER + 8 + n);
  put_be32(out + 4, id);
  out[8] = 0;
  out[9] = 199;
  out[10] = 1;
  put_be32(out + 11, type);
  put_be32(out + 15, n);
  if (n) memcpy(out + 19, data, n);
  return JDWP_HEADER + 8 + n;
}

size_t jc_build_cmd(uint8_t *out, uint32_t id, uint8_t set, uint8_t cmd) {
  put_be32(out, JDWP_HEADER);
  put_be32(out + 4, id);
  out[8] = 0;
  out[9] = set;
  out[10] = cmd;
  return JDWP_HEADER;
}

uint32_t jc_request(jc *c, const uint8_t *pkt, size_t n, uint32_t *others) {
  uint32_t id = be32(pkt + 4);
  if (jc_write_all(c->fd, pkt, n) != 0) return 0;
  for (;;) {
    uint32_t len;
    const uint8_t *p = jc_next(c, &len);
    if (p == NULL) return 0;
    if ((p[8] & JDWP_FLAG_REPLY) && be32(p + 4) == id) return len;
    if (others) (*others)++;
  }
}

/* ---- the bench VM */

/* VirtualMachine.Version, laid out as OpenJDK 17 answers it (so both replies are 227 bytes). */
#define VDESC                                                                                           \
  "Java Debug Wire Protocol (Reference Implementation) version 17.0\nJVM Debug Interface version 17.0\n" \
  "JVM version 17.0.15 (OpenJDK 64-Bit Server VM, mixed mode, sharing)"
#define VVER "17.0.15"
#define VNAME "OpenJDK 64-Bit Server VM"
#define S4(s) (uint8_t)((sizeof(s) - 1) >> 24), (uint8_t)((sizeof(s) - 1) >> 16), (uint8_t)((sizeof(s) - 1) >> 8), \
              (uint8_t)(sizeof(s) - 1)
static uint8_t version_body[4 + sizeof(VDESC) - 1 + 8 + 4 + sizeof(VVER) - 1 + 4 + sizeof(VNAME) - 1];
const size_t bvm_version_body_len = sizeof(version_body);

static void build_version_body(void) {
  uint8_t *p = version_body;
  put_be32(p, sizeof(VDESC) - 1);
  memcpy(p + 4, VDESC, sizeof(VDESC) - 1);
  p += 4 + sizeof(VDESC) - 1;
  put_be32(p, 17);
  put_be32(p + 4, 0);
  p += 8;
  put_be32(p, sizeof(VVER) - 1);
  memcpy(p + 4, VVER, sizeof(VVER) - 1);
  p += 4 + sizeof(VVER) - 1;
  put_be32(p, sizeof(VNAME) - 1);
  memcpy(p + 4, VNAME, sizeof(VNAME) - 1);
}

static void on_jdwp_thread_start(void *d) {
  bvm *b = d;
  pthread_setname_np(pthread_self(), "JDWP"); /* as a VM names it; profiles tell the threads apart */
  if (b->pin_jdwp) bench_pin(BENCH_CPU_SERVER);
  b->jdwp = pthread_self();
  atomic_store(&b->jdwp_ready, 1);
}

static int jdwp_command(void *d, uint8_t set, uint8_t cmd, const uint8_t *in, size_t n, ddmc_buf *reply) {
  (void)d;
  (void)in;
  (void)n;
  if (set != 1 || cmd != 1) return DDMC_JDWP_NOT_IMPLEMENTED;
  ddmc_buf_put_bytes(reply, version_body, sizeof(version_body));
  return 0;
}

static int for_each_thread(void *d, ddmc_thread_visit_fn fn, void *arg) {
  bvm *b = d;
  for (uint32_t i = 0; i < b->nthreads; i++) {
    ddmc_thread_info t = {i + 1, b->ntids ? b->tids[i % b->ntids] : (uint32_t)getpid(), b->names[i],
                          (i & 3) ? DDMC_THREAD_WAIT : DDMC_THREAD_RUNNING, (i & 1)};
    int rc = fn(arg, &t);
    if (rc) return rc;
  }
  return 0;
}

static int heap_info(void *d, int heap, ddmc_heap_info *out) {
  bvm *b = d;
  out->max_bytes = (uint64_t)4 << 30;
  out->footprint = heap == DDMC_HEAP_MANAGED ? b->footprint : 0;
  out->allocated_bytes = b->footprint;
  out->allocated_objects = b->nregions;
  out->base = b->base;
  return 0;
}

static int walk_heap(void *d, int heap, ddmc_heap_visit_fn fn, void *arg) {
  bvm *b = d;
  if (heap != DDMC_HEAP_MANAGED) return 0;
  uintptr_t a = b->base;
  const uint32_t *r = b->regions, *end = r + b->nregions;
  for (; r < end; r++) {
    uint32_t v = *r;
    size_t bytes = BHEAP_BYTES(v);
    int rc = fn(arg, a, bytes, BHEAP_KIND(v), BHEAP_FREE(v) ? DDMC_SOLID_FREE : DDMC_SOLID_HARD);
    if (rc) return rc;
    a += bytes;
  }
  return 0;
}

static void log_fn(void *d, ddmc_log_level lvl, const char *msg) {
  (void)d;
  if (getenv("BENCH_VERBOSE") || lvl >= DDMC_LOG_ERROR) fprintf(stderr, "ddmc[%d]: %s\n", (int)lvl, msg);
}

void bvm_start(bvm *b, size_t sendq_bytes) {
  if (version_body[3] == 0) build_version_body();
  b->base = (uintptr_t)0x7f2000000000ull; /* above 4 GiB, as a 64-bit VM's heap */
  ddmc_options o;
  ddmc_options_init(&o);
  char err[256];
  if (ddmc_options_parse(&o, "transport=dt_socket,address=127.0.0.1:0,server=y,suspend=n", err, sizeof(err)) != 0) {
    fprintf(stderr, "bench: options: %s\n", err);
    exit(2);
  }
  if (sendq_bytes) o.sendq_bytes = sendq_bytes;
  ddmc_vm_ops ops;
  memset(&ops, 0, sizeof(ops));
  ops.jdwp_thread_start = on_jdwp_thread_start;
  ops.jdwp_command = jdwp_command;
  ops.for_each_thread = for_each_thread;
  ops.heap_info = heap_info;
  ops.walk_heap = walk_heap;
  ops.log = log_fn;
  int rc = ddmc_vm_new(&b->vm, &o, &ops, NULL, b);
  if (rc == 0) {
    ddmc_vm_ident id = {"Dalvik v2.1.0", "64-bit (x86_64)", "CheckJNI=false", 0, 0};
    rc = ddmc_vm_set_ident(b->vm, &id);
  }
  if (rc == 0) rc = ddmc_vm_start(b->vm);
  if (rc != 0) {
    fprintf(stderr, "bench: cannot start the VM: %s\n", ddmc_strerror(rc));
    exit(2);
  }
  ddmc_notify_app_name(b->vm, "com.example.bench", "com.example.bench", 0);
  b->port = ddmc_vm_port(b->vm);
}

int64_t bvm_jdwp_cpu_ns(bvm *b) {
  clockid_t cid;
  struct timespec ts;
  if (!atomic_load(&b->jdwp_ready) || pthread_getcpuclockid(b->jdwp, &cid) != 0 || clock_gettime(cid, &ts) != 0)
    return -1;
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void bvm_stop(bvm *b) {
  ddmc_vm_free(b->vm);
  b->vm = NULL;
}

void bvm_set_threads(bvm *b, uint32_t n, const uint32_t *tids, size_t ntids) {
  free(b->names);
  b->names = calloc(n ? n : 1, sizeof(*b->names));
  static const char *kinds[] = {"Thread-%u", "Binder:%u_%u", "pool-1-thread-%u", "RenderThread", "FinalizerDaemon"};
  for (uint32_t i = 0; i < n; i++) {
    const char *k = kinds[i % 5];
    snprintf(b->names[i], sizeof(b->names[i]), k, i, i & 15);
  }
  b->nthreads = n;
  b->tids = tids;
  b->ntids = ntids;
}

/* ---- idle threads */

static int idle_pipe[2] = {-1, -1};
static pthread_t idle_th[64];
static int idle_n;
static atomic_uint idle_tids[64];

static void *idle_main(void *arg) {
  int i = (int)(intptr_t)arg;
  atomic_store(&idle_tids[i], (unsigned)syscall(SYS_gettid));
  char c;
  while (read(idle_pipe[0], &c, 1) < 0 && errno == EINTR) {
  }
  return NULL;
}

void bench_idle_threads(int n, uint32_t *tids) {
  if (n > 64) n = 64;
  if (pipe(idle_pipe) != 0) exit(2);
  for (int i = 0; i < n; i++) pthread_create(&idle_th[i], NULL, idle_main, (void *)(intptr_t)i);
  for (int i = 0; i < n; i++) {
    while (atomic_load(&idle_tids[i]) == 0) sched_yield();
    tids[i] = atomic_load(&idle_tids[i]);
  }
  idle_n = n;
}

void bench_idle_threads_stop(void) {
  close(idle_pipe[1]); /* EOF wakes every reader */
  for (int i = 0; i < idle_n; i++) pthread_join(idle_th[i], NULL);
  close(idle_pipe[0]);
  idle_n = 0;
}

/* ---- OpenJDK */

int bjava_start(bjava *j, const char *java, const char *classdir) {
  j->pid = -1;
  if (java == NULL || classdir == NULL || access(java, X_OK) != 0) return -1;
  char cls[4096];
  snprintf(cls, sizeof(cls), "%s/Idle.class", classdir);
  if (access(cls, R_OK) != 0) return -1;
  int s = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t sl = sizeof(sa);
  bind(s, (struct sockaddr *)&sa, sizeof(sa));
  getsockname(s, (struct sockaddr *)&sa, &sl);
  j->port = ntohs(sa.sin_port);
  close(s);
  char agent[128];
  snprintf(agent, sizeof(agent), "-agentlib:jdwp=transport=dt_socket,server=y,suspend=n,address=127.0.0.1:%u",
           (unsigned)j->port);
  pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the benchmark */
    bench_pin(BENCH_CPU_SERVER);      /* every JVM thread inherits it, like libddmc's VM side */
    int dn = open("/dev/null", O_RDWR);
    dup2(dn, 1);
    dup2(dn, 2);
    execl(java, java, "-Xshare:auto", agent, "-cp", classdir, "Idle", (char *)NULL);
    _exit(127);
  }
  j->pid = pid;
  /* Wait until it accepts, then leave: the probe connection is closed at once, and the agent
   * re-listens after each detach. */
  int64_t deadline = bench_now_ns() + 20 * 1000000000LL;
  while (bench_now_ns() < deadline) {
    jc c;
    jc_init(&c);
    int ok = jc_open(&c, j->port, bench_now_ns() + 100000000LL) == 0;
    jc_close(&c);
    if (ok) return 0;
    int st;
    if (waitpid(pid, &st, WNOHANG) == pid) break;
    bench_sleep_us(20000);
  }
  bjava_stop(j);
  return -1;
}

void bjava_stop(bjava *j) {
  if (j->pid > 0) {
    kill(j->pid, SIGKILL);
    waitpid(j->pid, NULL, 0);
  }
  j->pid = -1;
}

/* ---- child processes (bench.h) */

bchild bench_spawn(char *const argv[]) {
  bchild c = {-1, -1};
  int p[2];
  if (pipe(p) != 0) return c;
  pid_t pid = fork();
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    bench_pin(BENCH_CPU_SERVER);
    int dn = open("/dev/null", O_RDWR);
    dup2(dn, 0);
    dup2(p[1], 1);
    if (getenv("BENCH_VERBOSE") == NULL) dup2(dn, 2);
    close(p[0]);
    close(p[1]);
    execv(argv[0], argv);
    _exit(127);
  }
  close(p[1]);
  c.pid = pid;
  c.out = p[0];
  return c;
}

void bench_stop(bchild *c) {
  if (c->pid > 0) {
    kill(c->pid, SIGKILL);
    waitpid(c->pid, NULL, 0);
  }
  if (c->out >= 0) close(c->out);
  c->pid = c->out = -1;
}

int bench_read_line(bchild *c, const char *want, char *line, size_t cap, double secs) {
  char buf[4096];
  size_t have = 0;
  int64_t end = bench_now_ns() + (int64_t)(secs * 1e9);
  while (bench_now_ns() < end) {
    struct pollfd pf = {c->out, POLLIN, 0};
    if (poll(&pf, 1, 100) <= 0) continue;
    ssize_t n = read(c->out, buf + have, sizeof buf - 1 - have);
    if (n <= 0) return -1;
    have += (size_t)n;
    buf[have] = 0;
    char *at = strstr(buf, want), *nl = at ? strchr(at, '\n') : NULL;
    if (nl) {
      snprintf(line, cap, "%.*s", (int)(nl - at), at);
      return 0;
    }
    if (have == sizeof buf - 1) have = 0;
  }
  return -1;
}

