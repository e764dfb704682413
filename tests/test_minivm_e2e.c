/* SPDX-License-Identifier: Apache-2.0 */
/* minivm end to end over dt_socket: the real binary, started with -agentlib:jdwp=..., watched by
 * the project's host module (what ddmlib does).
 *   hello    runs and exits 0
 *   zygote   HELO pid and app name, the APNM of its rename, WAIT, and release by a debugger
 *   threads  THEN + THST report every thread with the state it is in; STKL gives real frames
 *   alloc    HPIF numbers agree with the VM's own -verbose:gc counters; the HPSG dump of a GC
 *            covers exactly the footprint HPIF reports, with the kinds the program allocates */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "ddmc/ddmc.h"
#include "ddmc_host.h"
#include "heapseg.h"
#include "minivm_proc.h"

#define T(a, b, c, d) DDMC_FOURCC(a, b, c, d)
#define TMO 5000

static void test_hello_runs(void **state) {
  (void)state;
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 1);
    dup2(devnull, 2);
    execl(MINIVM_PATH, MINIVM_PATH, "-Xrunjdwp:transport=dt_socket,address=127.0.0.1:0,server=y",
          MINIVM_PROGRAMS "/hello.mvm", (char *)NULL);
    _exit(127);
  }
  int st;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 0);
  /* a bad flag: the library's message, exit status 1 */
  pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, 2);
    execl(MINIVM_PATH, MINIVM_PATH, "-agentlib:jdwp=transport=dt_socket,address=99999", MINIVM_PROGRAMS "/hello.mvm",
          (char *)NULL);
    _exit(127);
  }
  assert_int_equal(waitpid(pid, &st, 0), pid);
  assert_true(WIFEXITED(st));
  assert_int_equal(WEXITSTATUS(st), 1);
}

static void test_zygote_helo_apnm_wait(void **state) {
  (void)state;
  minivm_proc c;
  minivm_spawn(&c, "zygote", NULL);
  ddmc_host *h = minivm_attach(&c);
  ddmc_host_helo helo;
  assert_int_equal(ddmc_host_hello(h, &helo, TMO), 0);
  assert_int_equal(helo.pid, (uint32_t)c.pid);
  assert_string_equal(helo.vm_ident, "minivm v0.1");
  int renamed = strcmp(helo.app_name, "com.example.zygote") == 0;
  if (!renamed) assert_string_equal(helo.app_name, "<pre-initialized>");
  ddmc_host_helo_free(&helo);
  /* within a few seconds: the rename (APNM) and the wait for a debugger (WAIT) */
  int seen_wait = 0;
  ddmc_host_packet p;
  for (int64_t end = mono_ms() + 8000; mono_ms() < end && !(renamed && seen_wait);) {
    int rc = ddmc_host_recv(h, &p, 500);
    if (rc == DDMC_ETIMEDOUT) continue;
    assert_int_equal(rc, 0);
    if (p.chunk_type == T('A', 'P', 'N', 'M')) {
      ddmc_host_apnm ap;
      assert_int_equal(ddmc_host_apnm_parse(p.chunk, p.chunk_len, &ap), 0);
      assert_string_equal(ap.name, "com.example.zygote");
      ddmc_host_apnm_free(&ap);
      renamed = 1;
    } else if (p.chunk_type == T('W', 'A', 'I', 'T')) {
      seen_wait = 1;
    }
  }
  assert_true(renamed);
  assert_true(seen_wait);
  /* HELO now reports the new name */
  assert_int_equal(ddmc_host_hello(h, &helo, TMO), 0);
  assert_string_equal(helo.app_name, "com.example.zygote");
  ddmc_host_helo_free(&helo);
  ddmc_host_free(h);
  minivm_reap(&c);
}

/* ---- threads */

typedef struct tinfo {
  uint32_t id;
  char name[128];
  int seen[10]; /* statuses observed */
} tinfo;

static tinfo *find(tinfo *t, int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (strcmp(t[i].name, name) == 0) return &t[i];
  return NULL;
}

static void test_threads_states(void **state) {
  (void)state;
  minivm_proc c;
  minivm_spawn(&c, "threads", NULL);
  sleep_ms(500); /* let the program start its threads */
  ddmc_host *h = minivm_attach(&c);
  ddmc_host_packet p;
  tinfo t[64];
  int n = 0;
  /* THEN(1): a THCR for every thread, before the empty reply */
  assert_int_equal(ddmc_host_request(h, T('T', 'H', 'E', 'N'), "\1", 1, &p, TMO), 0);
  assert_int_equal(p.length, 11);
  while (ddmc_host_recv(h, &p, 200) == 0) {
    if (p.chunk_type != T('T', 'H', 'C', 'R')) continue;
    ddmc_host_thname th;
    assert_int_equal(ddmc_host_thname_parse(p.chunk, p.chunk_len, &th), 0);
    if (n < 64 && !find(t, n, th.name)) {
      memset(&t[n], 0, sizeof(t[n]));
      t[n].id = th.thread_id;
      snprintf(t[n].name, sizeof(t[n].name), "%s", th.name);
      n++;
    }
    ddmc_host_thname_free(&th);
  }
  const char *expect[] = {"main", "JDWP", "Sleeper", "Native", "Blocked-1", "Waiter-1", "Busy"};
  for (size_t i = 0; i < sizeof(expect) / sizeof(expect[0]); i++) {
    if (!find(t, n, expect[i])) print_error("no THCR for thread '%s'\n", expect[i]);
    assert_non_null(find(t, n, expect[i]));
  }
  /* THST, polled until each thread has shown the state it cycles through (at most 15 s: under
   * ASan with a parallel test, Busy's counting loop was not caught RUNNING in 3 s once) */
  for (int round = 0; round < 150; round++) {
    if (round >= 10 && find(t, n, "Sleeper")->seen[DDMC_THREAD_SLEEPING] &&
        find(t, n, "Native")->seen[DDMC_THREAD_NATIVE] && find(t, n, "Blocked-1")->seen[DDMC_THREAD_MONITOR] &&
        find(t, n, "Waiter-1")->seen[DDMC_THREAD_WAIT] && find(t, n, "Busy")->seen[DDMC_THREAD_RUNNING])
      break;
    assert_int_equal(ddmc_host_request(h, T('T', 'H', 'S', 'T'), NULL, 0, &p, TMO), 0);
    assert_int_equal(p.chunk_type, T('T', 'H', 'S', 'T'));
    ddmc_host_thst st;
    assert_int_equal(ddmc_host_thst_parse(p.chunk, p.chunk_len, &st), 0);
    assert_true(st.count >= 7);
    for (size_t i = 0; i < st.count; i++) {
      for (int k = 0; k < n; k++)
        if (t[k].id == st.entries[i].thread_id && st.entries[i].status < 10) t[k].seen[st.entries[i].status] = 1;
      /* A Worker is listed (STARTING) before its OS thread runs and has a tid. */
      if (st.entries[i].status != DDMC_THREAD_STARTING) assert_true(st.entries[i].tid > 0);
    }
    ddmc_host_thst_free(&st);
    sleep_ms(100);
  }
  assert_true(find(t, n, "Sleeper")->seen[DDMC_THREAD_SLEEPING]);
  assert_true(find(t, n, "Native")->seen[DDMC_THREAD_NATIVE]);
  assert_true(find(t, n, "Blocked-1")->seen[DDMC_THREAD_MONITOR]);
  assert_true(find(t, n, "Waiter-1")->seen[DDMC_THREAD_WAIT]);
  assert_true(find(t, n, "Busy")->seen[DDMC_THREAD_RUNNING]);
  /* STKL of main: real frames with a file and a line */
  uint8_t id[4] = {0, 0, 0, (uint8_t)find(t, n, "main")->id};
  assert_int_equal(ddmc_host_request(h, T('S', 'T', 'K', 'L'), id, 4, &p, TMO), 0);
  assert_int_equal(p.chunk_type, T('S', 'T', 'K', 'L'));
  ddmc_host_stkl sk;
  assert_int_equal(ddmc_host_stkl_parse(p.chunk, p.chunk_len, &sk), 0);
  assert_true(sk.count >= 1);
  assert_non_null(sk.frames[0].file);
  assert_true(sk.frames[0].line > 0);
  ddmc_host_stkl_free(&sk);
  /* a thread that does not exist: FAIL */
  uint8_t bad[4] = {0, 0, 0x7f, 0};
  assert_int_equal(ddmc_host_request(h, T('S', 'T', 'K', 'L'), bad, 4, &p, TMO), 0);
  assert_int_equal(p.chunk_type, T('F', 'A', 'I', 'L'));
  ddmc_host_free(h);
  minivm_reap(&c);
}

/* ---- heap */

typedef struct dump {
  uint64_t units;
  uint64_t per_kind[8];
  uint64_t free_units;
} dump;

static int count_run(void *arg, uint32_t off, uint32_t units, uint8_t state) {
  (void)off;
  dump *d = arg;
  d->units += units;
  if ((state & 7) == 0) d->free_units += units;
  else d->per_kind[(state >> 3) & 7] += units;
  return 0;
}

static void test_alloc_heap(void **state) {
  (void)state;
  minivm_proc c;
  minivm_spawn(&c, "alloc", "-Xms2m -Xmx16m -verbose:gc");
  ddmc_host *h = minivm_attach(&c);
  ddmc_host_packet p;
  assert_int_equal(ddmc_host_request(h, T('H', 'P', 'I', 'F'), "\3", 1, &p, TMO), 0);
  assert_int_equal(ddmc_host_request(h, T('H', 'P', 'S', 'G'), "\1\0", 2, &p, TMO), 0);
  assert_int_equal(ddmc_host_request(h, T('N', 'H', 'S', 'G'), "\1\0", 2, &p, TMO), 0);
  assert_int_equal(ddmc_host_request(h, T('H', 'P', 'G', 'C'), NULL, 0, &p, TMO), 0);
  assert_int_equal(p.length, 11);
  /* Collect whole GCs: HPST..HPEN, NHST..NHEN, then HPIF (sent after the collection). */
  int gcs = 0, in_dump = 0, in_native = 0;
  dump d = {0}, nd = {0};
  uint64_t seen_kinds[8] = {0};
  ddmc_host_hpif last_hpif;
  memset(&last_hpif, 0, sizeof(last_hpif));
  for (int64_t end = mono_ms() + 15000; mono_ms() < end && gcs < 3;) {
    int rc = ddmc_host_recv(h, &p, 500);
    if (rc == DDMC_ETIMEDOUT) continue;
    assert_int_equal(rc, 0);
    if (p.chunk_type == T('H', 'P', 'S', 'T')) {
      memset(&d, 0, sizeof(d));
      in_dump = 1;
    } else if (p.chunk_type == T('H', 'P', 'S', 'G')) {
      assert_true(in_dump);
      ddmc_host_heapseg seg;
      assert_int_equal(ddmc_host_heapseg_parse(p.chunk, p.chunk_len, &seg), 0);
      assert_int_equal(ddmc_host_heapseg_decode(&seg, count_run, &d), 0);
    } else if (p.chunk_type == T('H', 'P', 'E', 'N')) {
      assert_true(in_dump);
      in_dump = 0;
    } else if (p.chunk_type == T('N', 'H', 'S', 'T')) {
      memset(&nd, 0, sizeof(nd));
      in_native = 1;
    } else if (p.chunk_type == T('N', 'H', 'S', 'G')) {
      ddmc_host_heapseg seg;
      assert_int_equal(ddmc_host_heapseg_parse(p.chunk, p.chunk_len, &seg), 0);
      assert_int_equal(ddmc_host_heapseg_decode(&seg, count_run, &nd), 0);
    } else if (p.chunk_type == T('N', 'H', 'E', 'N')) {
      in_native = 0;
    } else if (p.chunk_type == T('H', 'P', 'I', 'F')) {
      ddmc_host_hpif hp;
      assert_int_equal(ddmc_host_hpif_parse(p.chunk, p.chunk_len, &hp), 0);
      assert_int_equal(hp.count, 1);
      assert_int_equal(hp.heaps[0].reason, 3);
      assert_int_equal(hp.heaps[0].max_bytes, 16u << 20);
      assert_true(hp.heaps[0].allocated_bytes <= hp.heaps[0].footprint);
      if (d.units) {
        /* the dump of this GC covers exactly the heap size HPIF reports */
        assert_int_equal(d.units * 8, hp.heaps[0].footprint);
        for (int k = 0; k < 8; k++) seen_kinds[k] += d.per_kind[k];
        gcs++;
      }
      ddmc_host_hpif_free(&last_hpif);
      last_hpif = hp;
    }
  }
  (void)in_native;
  assert_true(gcs >= 1);
  assert_true(nd.units > 0);                          /* the native heap too */
  assert_true(nd.per_kind[DDMC_KIND_NATIVE] > 0);
  assert_true(seen_kinds[DDMC_KIND_OBJECT] > 0);
  assert_true(seen_kinds[DDMC_KIND_CLASS] > 0);
  assert_true(seen_kinds[DDMC_KIND_ARRAY_1] > 0);
  assert_true(seen_kinds[DDMC_KIND_ARRAY_2] > 0);
  assert_true(seen_kinds[DDMC_KIND_ARRAY_4] > 0);
  assert_true(seen_kinds[DDMC_KIND_ARRAY_8] > 0);
  /* HPIF agrees with the VM's own counters: -verbose:gc printed "... lluK/lluK (max ...)" */
  char want[64];
  snprintf(want, sizeof(want), "free %lluK/%lluK (max 16384K)",
           (unsigned long long)(last_hpif.heaps[0].allocated_bytes >> 10),
           (unsigned long long)(last_hpif.heaps[0].footprint >> 10));
  char *log = NULL;
  for (int i = 0; i < 50; i++) {
    free(log);
    log = minivm_log(&c);
    if (log && strstr(log, want)) break;
    sleep_ms(50);
  }
  if (!log || !strstr(log, want)) print_error("no GC line with '%s' in:\n%s\n", want, log ? log : "");
  assert_non_null(strstr(log, want));
  free(log);
  ddmc_host_hpif_free(&last_hpif);
  ddmc_host_free(h);
  minivm_reap(&c);
}

int main(void) {
  alarm(170);
  signal(SIGPIPE, SIG_IGN);
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hello_runs),
      cmocka_unit_test(test_zygote_helo_apnm_wait),
      cmocka_unit_test(test_threads_states),
      cmocka_unit_test(test_alloc_heap),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
