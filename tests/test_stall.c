/* SPDX-License-Identifier: Apache-2.0 */
/* A peer that stops reading while a VM thread posts events to it: its receive
 * buffer is 4 KiB, it asks for DDM, then reads nothing. The JDWP thread must sleep while it
 * cannot make progress (its CPU, from /proc/self/task/TID/stat, stays under 5 % of a core), the
 * VM thread must go on (its sends come back DDMC_EQFULL), the stall timeout must drop the session
 * (ddmc_options.stall_timeout_ms covers queued events, not only transfers), and the VM must serve
 * the next peer. hotspot/stall_agent.py runs the same scenario on HotSpot, against the JDK's own
 * agent as well. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "fakevm.h"
#include "util/testutil.h"

#define T(a, b, c, d) DDMC_FOURCC(a, b, c, d)
#define TMO 5000
#define STALL_MS 9000 /* past the measuring window below, with a margin for a loaded machine */
#define WINDOW_MS 5000

static atomic_int stall_logged;

static void on_log(void *ud, ddmc_log_level level, const char *msg) {
  (void)ud;
  (void)level;
  if (strstr(msg, "dropping peer: it read nothing for") && strstr(msg, "while output waited"))
    atomic_store(&stall_logged, 1);
  if (getenv("DDMC_TEST_VERBOSE")) fprintf(stderr, "ddmc: %s\n", msg);
}

/* The VM thread: a chunk every 100 us, as a hot method posting events would. */
typedef struct poster {
  ddmc_vm *vm;
  atomic_int stop;
  atomic_ullong calls, full;
} poster;

static void *post_loop(void *arg) {
  poster *p = arg;
  static uint8_t payload[1024];
  while (!atomic_load(&p->stop)) {
    int rc = ddmc_send_chunk(p->vm, T('T', 'E', 'S', 'T'), payload, sizeof(payload));
    atomic_fetch_add(&p->calls, 1);
    if (rc == DDMC_EQFULL) atomic_fetch_add(&p->full, 1);
    struct timespec ts = {0, 100000};
    nanosleep(&ts, NULL);
  }
  return NULL;
}

/* The library's JDWP thread (it names itself "ddmc-jdwp"), or -1. */
static long jdwp_tid(void) {
  DIR *d = opendir("/proc/self/task");
  long found = -1;
  struct dirent *e;
  while (d != NULL && (e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[300], comm[32] = "";
    snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
    FILE *f = fopen(path, "r");
    if (f == NULL) continue;
    if (fgets(comm, sizeof(comm), f) && strcmp(comm, "ddmc-jdwp\n") == 0) found = atol(e->d_name);
    fclose(f);
  }
  if (d != NULL) closedir(d);
  return found;
}

/* utime + stime of a thread, in clock ticks (fields 14 and 15 of its stat line). */
static unsigned long long cpu_ticks(long tid) {
  char path[64], line[1024];
  snprintf(path, sizeof(path), "/proc/self/task/%ld/stat", tid);
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  size_t n = fread(line, 1, sizeof(line) - 1, f);
  fclose(f);
  line[n] = '\0';
  char *p = strrchr(line, ')'); /* the name may hold spaces */
  assert_non_null(p);
  unsigned long long ut = 0, st = 0;
  assert_int_equal(sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st), 2);
  return ut + st;
}

/* 1 if a fresh peer is served: handshake echoed and a HELO answered; 0 if it is turned away. */
static int next_peer_served(uint16_t port) {
  ddmc_host *h = NULL;
  int ok = ddmc_host_connect_tcp(&h, "127.0.0.1", port, 2000) == 0 && ddmc_host_handshake(h, 2000) == 0;
  ddmc_host_helo helo;
  memset(&helo, 0, sizeof(helo));
  ok = ok && ddmc_host_hello(h, &helo, 2000) == 0 && helo.pid == (uint32_t)getpid();
  ddmc_host_helo_free(&helo);
  ddmc_host_free(h);
  return ok;
}

static uint16_t start_vm(fakevm *f, size_t sendq_bytes) {
  fakevm_config cfg = fakevm_default;
  cfg.log = on_log;
  fakevm_init(f, &cfg);
  ddmc_options o;
  ddmc_options_init(&o);
  char err[256];
  assert_int_equal(ddmc_options_parse(&o, "transport=dt_socket,address=127.0.0.1:0,server=y", err, sizeof(err)), 0);
  o.stall_timeout_ms = STALL_MS;
  if (sendq_bytes) o.sendq_bytes = sendq_bytes;
  assert_int_equal(fakevm_new(f, &o, NULL), 0);
  assert_int_equal(ddmc_vm_start(f->vm), 0);
  return ddmc_vm_port(f->vm);
}

static void test_stalled_event_reader(void **state) {
  (void)state;
  fakevm f;
  uint16_t port = start_vm(&f, (size_t)2 << 20); /* the queue fills in a fraction of a second */
  long tid = -1;
  for (int i = 0; i < 500 && (tid = jdwp_tid()) < 0; i++) sleep_ms(10); /* it names itself once it runs */
  assert_true(tid > 0);
  ddmc_host *h = small_window_peer(port, TMO);
  ddmc_host_helo helo;
  assert_int_equal(ddmc_host_hello(h, &helo, TMO), 0); /* DDM is on: the VM's chunks go to this peer */
  ddmc_host_helo_free(&helo);
  /* From here the peer reads nothing. */
  poster p = {.vm = f.vm};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, post_loop, &p), 0);
  int64_t deadline = mono_ms() + 20000;
  while (atomic_load(&p.full) == 0 && mono_ms() < deadline) sleep_ms(10);
  assert_true(atomic_load(&p.full) > 0); /* output over its high-water mark, the queue full */
  sleep_ms(300);

  unsigned long long c0 = cpu_ticks(tid), calls0 = atomic_load(&p.calls);
  int64_t t0 = mono_ms();
  sleep_ms(WINDOW_MS);
  unsigned long long c1 = cpu_ticks(tid), calls1 = atomic_load(&p.calls);
  double pct = 100.0 * (double)(c1 - c0) / (double)sysconf(_SC_CLK_TCK) / ((double)(mono_ms() - t0) / 1000.0);
  print_message("stalled event reader: JDWP thread %.1f %% of a core over %d ms; the VM thread made %llu sends "
                "meanwhile, %llu refused with EQFULL in all\n",
                pct, WINDOW_MS, calls1 - calls0, (unsigned long long)atomic_load(&p.full));
  assert_true(pct < 5.0);
  assert_true(calls1 - calls0 > 1000); /* the VM thread never waited for the peer */
  /* Still inside the stall timeout: the session holds, and a second peer is served beside it at
   * once: the stalled one holds the queue (it is the debugger seat), not the other's requests. */
  int64_t t_next = mono_ms();
  assert_int_equal(next_peer_served(port), 1);
  assert_true(mono_ms() - t_next < 2000);

  /* The stall timeout drops the session; the next peer is served. */
  deadline = mono_ms() + STALL_MS + 20000;
  while (!atomic_load(&stall_logged) && mono_ms() < deadline) sleep_ms(250);
  assert_true(atomic_load(&stall_logged));
  assert_true(next_peer_served(port));
  /* The dropped peer, reading again, finds what was sent before the drop, then the end. */
  ddmc_host_packet pkt;
  int rc = 0;
  deadline = mono_ms() + 20000;
  while (rc != DDMC_ECLOSED && mono_ms() < deadline) rc = ddmc_host_recv(h, &pkt, 1000);
  assert_int_equal(rc, DDMC_ECLOSED);

  atomic_store(&p.stop, 1);
  pthread_join(th, NULL);
  ddmc_host_free(h);
  fakevm_stop(&f);
}

/* Waits up to TMO for a DDM chunk of type want, skipping others; 1 if it came. */
static int chunk_arrives(ddmc_host *h, uint32_t want, size_t *len) {
  int64_t deadline = mono_ms() + TMO;
  ddmc_host_packet pkt;
  while (mono_ms() < deadline) {
    if (ddmc_host_recv(h, &pkt, 500) != 0) continue;
    if (!pkt.is_reply && pkt.is_ddm && pkt.chunk_type == want) {
      if (len) *len = pkt.chunk_len;
      return 1;
    }
  }
  return 0;
}

/* Over the high-water mark with the queue empty (one chunk bigger than the mark, sent as a batch
 * of one), until the peer reads it: the wake-ups left pending while the thread was blocked must
 * be re-armed once the output is out, or the next chunk a VM thread sends waits for ever. */
static void test_reader_resumes(void **state) {
  (void)state;
  fakevm f;
  uint16_t port = start_vm(&f, 0);
  ddmc_host *h = small_window_peer(port, TMO);
  assert_int_equal(ddmc_host_set_max_packet(h, 32u << 20), 0);
  ddmc_host_helo helo;
  assert_int_equal(ddmc_host_hello(h, &helo, TMO), 0);
  ddmc_host_helo_free(&helo);
  size_t big = (size_t)16 << 20, got = 0; /* past the mark and all the socket buffers hold */
  uint8_t *data = calloc(1, big);
  assert_non_null(data);
  assert_int_equal(ddmc_send_chunk(f.vm, T('B', 'I', 'G', ' '), data, big), 0);
  free(data);
  sleep_ms(500); /* the JDWP thread is blocked on the peer */
  assert_true(chunk_arrives(h, T('B', 'I', 'G', ' '), &got));
  assert_int_equal(got, big);
  sleep_ms(100); /* the JDWP thread goes idle */
  assert_int_equal(ddmc_send_chunk(f.vm, T('L', 'A', 'S', 'T'), "x", 1), 0);
  assert_true(chunk_arrives(h, T('L', 'A', 'S', 'T'), NULL));
  ddmc_host_free(h);
  fakevm_stop(&f);
}

int main(void) {
  alarm(120);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_stalled_event_reader),
      cmocka_unit_test(test_reader_resumes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
