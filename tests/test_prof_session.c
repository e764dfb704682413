/* SPDX-License-Identifier: Apache-2.0 */
/* Profiling over real sockets: the library in a fake VM with the fake debuggee as its reflective
 * bridge (fakebridge.c), the project's host side (host/) as the peer, and this test as the VM's
 * threads (ddmc_alloc_record, ddmc_post_location / _method_exit). Covers FEAT, REAE/REAQ/REAL
 * with the report read by the host's AllocationsParser twin, MPSS/MPSE with the data before the
 * reply, MPRS/MPRE to a file, SPSS/SPSE, and bad input: starts while on, stops while off, a buffer
 * that fills, a peer that stops reading in the middle of a transfer. Every wait is bounded. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <stdatomic.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "fakebridge.h"
#include "util/testutil.h"
#include "vm_int.h"

#define T(a, b, c, d) DDMC_FOURCC(a, b, c, d)
#define TMO 5000

/* ---- harness */

typedef struct pkt {
  uint32_t id, type;
  int is_reply;
  uint8_t *data;
  size_t len;
} pkt;

static void pkt_free(pkt *p) {
  free(p->data);
  memset(p, 0, sizeof(*p));
}

/* The fake debuggee's VM, started on a socket; stall_ms sets ddmc_options.stall_timeout_ms
 * (before the JDWP thread reads it). threads (may be NULL) replaces the fake's thread table. */
static uint16_t start_vm(fakebridge *f, int stall_ms, const fakevm_thread *threads, size_t nthreads) {
  assert_int_equal(fakebridge_new(f, FAKEBRIDGE_NO_SESSION | FAKEBRIDGE_NO_DEBUGGER) /* profiling needs no debugger */, 0);
  if (stall_ms) f->fv.vm->opt.stall_timeout_ms = stall_ms;
  if (threads) {
    f->fv.cfg.threads = threads;
    f->fv.cfg.nthreads = nthreads;
  }
  assert_int_equal(ddmc_vm_start(f->fv.vm), 0);
  return ddmc_vm_port(f->fv.vm);
}

static void stop_vm(fakebridge *f) {
  int bad = atomic_load(&f->bad_calls);
  fakebridge_free(f);
  assert_int_equal(bad, 0); /* the library never asked the bridge about something the VM did not name */
}

/* Sends one chunk and collects every packet up to and including its reply, in arrival order. */
static size_t exchange(ddmc_host *h, uint32_t type, const void *data, size_t len, pkt *out, size_t max) {
  uint32_t id;
  assert_int_equal(ddmc_host_send_chunk(h, type, data, len, &id), 0);
  size_t n = 0;
  int64_t end = mono_ms() + TMO;
  for (;;) {
    ddmc_host_packet p;
    int rc = ddmc_host_recv(h, &p, (int)(end - mono_ms() > 0 ? end - mono_ms() : 0));
    assert_int_equal(rc, 0);
    assert_true(n < max);
    pkt *q = &out[n++];
    q->id = p.id;
    q->is_reply = p.is_reply;
    q->type = p.is_ddm ? p.chunk_type : 0;
    q->len = p.is_ddm ? p.chunk_len : 0;
    q->data = malloc(q->len + 1);
    assert_non_null(q->data);
    if (q->len) memcpy(q->data, p.chunk, q->len);
    if (p.is_reply && p.id == id) return n;
  }
}

/* The reply alone (asserting nothing else arrived first). */
static pkt request(ddmc_host *h, uint32_t type, const void *data, size_t len) {
  pkt v[4];
  size_t n = exchange(h, type, data, len, v, 4);
  assert_int_equal(n, 1);
  return v[0];
}

static void expect_empty_reply(ddmc_host *h, uint32_t type, const void *data, size_t len) {
  pkt r = request(h, type, data, len);
  assert_int_equal(r.type, 0); /* the bare 11-byte success reply */
  pkt_free(&r);
}

/* A FAIL reply; returns its message (caller frees). */
static char *expect_fail(ddmc_host *h, uint32_t type, const void *data, size_t len) {
  pkt r = request(h, type, data, len);
  assert_int_equal(r.type, T('F', 'A', 'I', 'L'));
  ddmc_host_fail f;
  assert_int_equal(ddmc_host_fail_parse(r.data, r.len, &f), 0);
  pkt_free(&r);
  char *m = f.msg;
  f.msg = NULL;
  ddmc_host_fail_free(&f);
  return m;
}

static uint8_t mprq(ddmc_host *h) {
  pkt r = request(h, T('M', 'P', 'R', 'Q'), NULL, 0);
  assert_int_equal(r.type, T('M', 'P', 'R', 'Q'));
  assert_int_equal(r.len, 1);
  uint8_t m = r.data[0];
  pkt_free(&r);
  return m;
}

static void mpss(ddmc_host *h, uint32_t bytes) {
  uint8_t b[8];
  ddmc__put_u32(b, bytes);
  ddmc__put_u32(b + 4, 0);
  expect_empty_reply(h, T('M', 'P', 'S', 'S'), b, 8);
}

/* MPSE (or SPSE): the trace chunk must come first, then the empty reply. Returns the trace, or a
 * zeroed pkt when the VM sent none. */
static pkt stop_trace(ddmc_host *h, uint32_t type) {
  pkt v[8];
  size_t n = exchange(h, type, NULL, 0, v, 8);
  pkt data = {0};
  for (size_t i = 0; i + 1 < n; i++) {
    if (!v[i].is_reply && v[i].type == T('M', 'P', 'S', 'E')) {
      assert_null(data.data); /* one trace per stop */
      data = v[i];
      memset(&v[i], 0, sizeof(v[i]));
    }
    pkt_free(&v[i]);
  }
  assert_int_equal(v[n - 1].type, 0); /* then the empty reply */
  pkt_free(&v[n - 1]);
  return data;
}

/* ---- the VM's side: events of thread t */

static void enter(fakebridge *f, uint32_t t, uint32_t method, int32_t depth) {
  ddmc_location l = {FD_C_DEBUG, method, 0};
  ddmc_post_location(f->fv.vm, t, &l, depth, 0, DDMC_POST_METHOD_ENTRY);
}

static void leave(fakebridge *f, uint32_t t, uint32_t method, int32_t depth) {
  ddmc_location l = {FD_C_DEBUG, method, 3};
  ddmc_value v = {.tag = 'V'};
  ddmc_post_method_exit(f->fv.vm, t, &l, depth, 0, &v);
}

/* One "round": main (depth 0) calls compute twice (depth 1), the second compute calls <init>. */
static void round_of_calls(fakebridge *f, uint32_t t) {
  enter(f, t, FD_M_MAIN, 0);
  enter(f, t, FD_M_COMPUTE, 1);
  leave(f, t, FD_M_COMPUTE, 1);
  enter(f, t, FD_M_COMPUTE, 1);
  enter(f, t, FD_M_INIT, 2);
  leave(f, t, FD_M_INIT, 2);
  leave(f, t, FD_M_COMPUTE, 1);
  leave(f, t, FD_M_MAIN, 0);
}

static const char *method_name(const ddmc_host_trace *tr, uint32_t id) {
  const ddmc_host_trace_method *m = ddmc_host_trace_method_of(tr, id);
  assert_non_null(m);
  return m->name;
}

/* ---- FEAT */

static void test_feat(void **state) {
  (void)state;
  fakebridge f;
  uint16_t port = start_vm(&f, 0, NULL, 0);
  ddmc_host *h = peer_connect(port);
  ddmc_host_helo helo;
  assert_int_equal(ddmc_host_hello(h, &helo, TMO), 0);
  /* The VM bridge names methods and switches method events: tracing; the VM lists threads
   * and stacks: sampling. No hprof: not implemented. */
  assert_int_equal(helo.n_features, 3);
  assert_string_equal(helo.features[0], "method-trace-profiling");
  assert_string_equal(helo.features[1], "method-trace-profiling-streaming");
  assert_string_equal(helo.features[2], "method-sample-profiling");
  ddmc_host_helo_free(&helo);
  ddmc_host_free(h);
  stop_vm(&f);
}

/* ---- allocations */

static void record(fakebridge *f, uint32_t thread, ddmc_class cls, uint64_t bytes, int native_top) {
  ddmc_location fr[3] = {
      {FD_C_DEBUG, FD_M_COMPUTE, native_top ? -1 : 6}, {FD_C_DEBUG, FD_M_MAIN, 13}, {FD_C_DEBUG, FD_M_INIT, 1}};
  assert_int_equal(ddmc_alloc_record(f->fv.vm, thread, cls, bytes, fr, 3), 0);
}

static ddmc_host_allocs real(ddmc_host *h) {
  pkt r = request(h, T('R', 'E', 'A', 'L'), NULL, 0);
  assert_int_equal(r.type, T('R', 'E', 'A', 'L'));
  ddmc_host_allocs a;
  assert_int_equal(ddmc_host_real_parse(r.data, r.len, &a), 0);
  assert_int_equal(a.header_len, 15);
  assert_int_equal(a.entry_len, 9);
  assert_int_equal(a.frame_len, 8);
  pkt_free(&r);
  return a;
}

static uint8_t reaq(ddmc_host *h) {
  pkt r = request(h, T('R', 'E', 'A', 'Q'), NULL, 0);
  assert_int_equal(r.type, T('R', 'E', 'A', 'Q'));
  assert_int_equal(r.len, 1);
  uint8_t v = r.data[0];
  pkt_free(&r);
  return v;
}

static void test_alloc_tracking(void **state) {
  (void)state;
  fakebridge f;
  uint16_t port = start_vm(&f, 0, NULL, 0);
  ddmc_host *h = peer_connect(port);
  const int *flag = ddmc_alloc_tracking_flag(f.fv.vm);
  assert_false(ddmc_alloc_tracking(flag));

  /* Off: REAQ 0, REAL the empty 15-byte report, and a record is refused. */
  assert_int_equal(reaq(h), 0);
  ddmc_host_allocs a = real(h);
  assert_int_equal(a.count, 0);
  assert_int_equal(a.nclasses + a.nmethods + a.nfiles, 0);
  ddmc_host_allocs_free(&a);
  ddmc_location one = {FD_C_DEBUG, FD_M_MAIN, 0};
  assert_int_equal(ddmc_alloc_record(f.fv.vm, 1, FD_C_STRING, 24, &one, 1), DDMC_ESTATE);

  uint8_t on = 1, off = 0;
  expect_empty_reply(h, T('R', 'E', 'A', 'E'), &on, 1);
  assert_true(ddmc_alloc_tracking(flag));
  assert_int_equal(reaq(h), 1);
  record(&f, 1, FD_C_STRING, 24, 0);
  record(&f, 2, FD_C_INT_ARRAY, 64, 1);
  /* REAE 1 while on changes nothing: the records stay. */
  expect_empty_reply(h, T('R', 'E', 'A', 'E'), &on, 1);
  record(&f, 1, FD_C_DEBUG, 40, 0);

  a = real(h);
  assert_int_equal(a.count, 3);
  /* Newest first, classes as descriptors, frames resolved through the bridge. */
  assert_string_equal(a.entries[0].cls, "LDebug;");
  assert_int_equal(a.entries[0].size, 40);
  assert_int_equal(a.entries[0].thread, 1);
  assert_string_equal(a.entries[1].cls, "[I");
  assert_int_equal(a.entries[1].thread, 2);
  assert_string_equal(a.entries[2].cls, "Ljava/lang/String;");
  assert_int_equal(a.entries[2].size, 24);
  for (size_t i = 0; i < 3; i++) {
    const ddmc_host_alloc *e = &a.entries[i];
    assert_int_equal(e->depth, 3);
    assert_string_equal(e->frames[0].cls, "LDebug;");
    assert_string_equal(e->frames[0].method, "compute");
    assert_string_equal(e->frames[0].file, "Debug.java");
    assert_string_equal(e->frames[1].method, "main");
    assert_string_equal(e->frames[2].method, "<init>");
    /* compute's lines: 20 from index 0, 21 from 5, 22 from 8; main's 13 from 12; <init>'s 5. */
    assert_int_equal(e->frames[0].line, i == 1 ? -2 : 21);
    assert_int_equal(e->frames[1].line, 13);
    assert_int_equal(e->frames[2].line, 5);
  }
  /* Each string once: LDebug; [I Ljava/lang/String;, three methods, one file. */
  assert_int_equal(a.nclasses, 3);
  assert_int_equal(a.nmethods, 3);
  assert_int_equal(a.nfiles, 1);
  ddmc_host_allocs_free(&a);
  /* REAL leaves tracking on. */
  assert_int_equal(reaq(h), 1);

  /* Without line information every frame's line is -1 (native ones still -2). */
  atomic_store(&f.absent_info, 1);
  a = real(h);
  assert_int_equal(a.entries[0].frames[0].line, -1);
  assert_int_equal(a.entries[1].frames[0].line, -2);
  ddmc_host_allocs_free(&a);
  atomic_store(&f.absent_info, 0);

  /* Off drops the records. */
  expect_empty_reply(h, T('R', 'E', 'A', 'E'), &off, 1);
  assert_false(ddmc_alloc_tracking(flag));
  assert_int_equal(reaq(h), 0);
  a = real(h);
  assert_int_equal(a.count, 0);
  ddmc_host_allocs_free(&a);
  ddmc_prof_stats st;
  ddmc_prof_get_stats(f.fv.vm, &st);
  assert_int_equal(st.alloc_recorded, 3);

  /* Bad input: no payload, two bytes. */
  free(expect_fail(h, T('R', 'E', 'A', 'E'), NULL, 0));
  uint8_t two[2] = {1, 1};
  free(expect_fail(h, T('R', 'E', 'A', 'E'), two, 2));
  assert_int_equal(reaq(h), 0);
  ddmc_host_free(h);
  stop_vm(&f);
}

/* The ring keeps the newest records: 65,536 by default; a report carries at most 65,535 (u2). */
static void test_alloc_ring_wraps(void **state) {
  (void)state;
  fakebridge f;
  uint16_t port = start_vm(&f, 0, NULL, 0);
  ddmc_host *h = peer_connect(port);
  uint8_t on = 1;
  expect_empty_reply(h, T('R', 'E', 'A', 'E'), &on, 1);
  for (uint32_t i = 0; i < 70000; i++) record(&f, 1, FD_C_STRING, i, 0);
  ddmc_host_allocs a = real(h);
  assert_int_equal(a.count, 65535);
  assert_int_equal(a.entries[0].size, 69999);    /* the newest */
  assert_int_equal(a.entries[65534].size, 4465); /* 65535 back */
  ddmc_host_allocs_free(&a);
  ddmc_host_free(h);
  stop_vm(&f);
}

/* A VM without the VM bridge cannot name what it allocates or traces. */
static void test_no_bridge(void **state) {
  (void)state;
  fakevm v;
  uint16_t port = fakevm_start(&v, NULL, 0);
  ddmc_host *h = peer_connect(port);
  uint8_t on = 1;
  char *m = expect_fail(h, T('R', 'E', 'A', 'E'), &on, 1);
  assert_non_null(strstr(m, "VM bridge"));
  free(m);
  uint8_t b[8] = {0};
  m = expect_fail(h, T('M', 'P', 'S', 'S'), b, 8);
  assert_non_null(strstr(m, "not supported"));
  free(m);
  assert_int_equal(mprq(h), 0);
  ddmc_host_free(h);
  fakevm_stop(&v);
}

/* ---- method tracing */

static void check_round_records(const ddmc_host_trace *tr, size_t from) {
  static const struct {
    uint8_t action;
    const char *name;
  } want[] = {{0, "main"},   {0, "compute"}, {1, "compute"}, {0, "compute"},
              {0, "<init>"}, {1, "<init>"},  {1, "compute"}, {1, "main"}};
  assert_true(tr->nrecs >= from + 8);
  uint32_t last_wall = 0;
  for (size_t i = 0; i < 8; i++) {
    const ddmc_host_trace_rec *r = &tr->recs[from + i];
    assert_int_equal(r->thread, 1);
    assert_int_equal(r->action, want[i].action);
    assert_string_equal(method_name(tr, r->method), want[i].name);
    assert_true(r->time2 >= last_wall); /* wall time never goes back within a thread */
    last_wall = r->time2;
  }
}

static void test_trace_stream(void **state) {
  (void)state;
  fakebridge f;
  uint16_t port = start_vm(&f, 0, NULL, 0);
  ddmc_host *h = peer_connect(port);
  assert_int_equal(mprq(h), 0);
  round_of_calls(&f, 1); /* before the trace: not recorded */
  assert_int_equal(atomic_load(&f.method_events), 0);
  mpss(h, 1 << 20);
  assert_int_equal(mprq(h), 1);
  assert_int_equal(atomic_load(&f.method_events), 1); /* the VM was told to report calls */
  for (int i = 0; i < 3; i++) round_of_calls(&f, 1);
  pkt data = stop_trace(h, T('M', 'P', 'S', 'E'));
  assert_non_null(data.data);
  assert_int_equal(atomic_load(&f.method_events), 0);
  assert_int_equal(mprq(h), 0);
  round_of_calls(&f, 1); /* after: not recorded */

  ddmc_host_trace tr;
  assert_int_equal(ddmc_host_trace_parse(data.data, data.len, &tr), 0);
  assert_int_equal(tr.version, 3);
  assert_int_equal(tr.data_version, 3);
  assert_int_equal(tr.rec_size, 14);
  assert_string_equal(tr.clock, "dual");
  assert_false(tr.overflow);
  assert_false(tr.truncated);
  assert_int_equal(tr.nrecs, 24);
  assert_int_equal(tr.num_method_calls, 24);
  for (size_t k = 0; k < 3; k++) check_round_records(&tr, 8 * k);
  /* Dalvik's method lines: dotted class, name, signature, file, the line at index 0. */
  assert_int_equal(tr.nmethods, 3);
  for (size_t i = 0; i < tr.nmethods; i++) {
    const ddmc_host_trace_method *m = &tr.methods[i];
    assert_string_equal(m->cls, "Debug");
    assert_string_equal(m->file, "Debug.java");
    if (strcmp(m->name, "compute") == 0) {
      assert_string_equal(m->sig, "(I)J");
      assert_int_equal(m->line, 20);
    }
  }
  int main_listed = 0;
  for (size_t i = 0; i < tr.nthreads; i++)
    if (tr.threads[i].id == 1 && strcmp(tr.threads[i].name, "main") == 0) main_listed = 1;
  assert_true(main_listed);
  ddmc_host_trace_free(&tr);
  pkt_free(&data);

  /* A stop with nothing running: the empty reply and no data (Dalvik). */
  pkt none = stop_trace(h, T('M', 'P', 'S', 'E'));
  assert_null(none.data);
  none = stop_trace(h, T('S', 'P', 'S', 'E'));
  assert_null(none.data);
  ddmc_host_free(h);
  stop_vm(&f);
}

/* A start while a trace runs stops that one first and delivers it, then starts the new one. */
static void test_trace_restart(void **state) {
  (void)state;
  fakebridge f;
  uint16_t port = start_vm(&f, 0, NULL, 0);
  ddmc_host *h = peer_connect(port);
  mpss(h, 1 << 20);
  round_of_calls(&f, 1);
  uint8_t b[8] = {0, 0x10, 0, 0, 0, 0, 0, 0};
  pkt v[8];
  size_t n = exchange(h, T('M', 'P', 'S', 'S'), b, 8, v, 8);
  assert_int_equal(n, 2); /* the first trace, then the empty reply */
  assert_int_equal(v[0].type, T('M', 'P', 'S', 'E'));
  assert_int_equal(v[1].type, 0);
  ddmc_host_trace tr;
  assert_int_equal(ddmc_host_trace_parse(v[0].data, v[0].len, &tr), 0);
  assert_int_equal(tr.nrecs, 8);
  ddmc_host_trace_free(&tr);
  pkt_free(&v[0]);
  pkt_free(&v[1]);
  assert_int_equal(mprq(h), 1);
  assert_int_equal(atomic_load(&f.method_events), 1);
  round_of_calls(&f, 1);
  round_of_calls(&f, 1);
  pkt data = stop_trace(h, T('M', 'P', 'S', 'E'));
  assert_int_equal(ddmc_host_trace_parse(data.data, data.len, &tr), 0);
  assert_int_equal(tr.nrecs, 16);
  check_round_records(&tr, 8);
  ddmc_host_trace_free(&tr);
  pkt_free(&data);
  ddmc_prof_stats st;
  ddmc_prof_get_stats(f.fv.vm, &st);
  assert_int_equal(st.traces, 2);
  ddmc_host_free(h);
  stop_vm(&f);
}

/* A thread first seen inside a call: the frames below it come from frame_location, as ENTERs;
 * a method left without an exit event is closed with UNROLL at the next shallower event. */
static void test_trace_backfill_unroll(void **state) {
  (void)state;
  fakebridge f;
  uint16_t port = start_vm(&f, 0, NULL, 0);
  ddmc_host *h = peer_connect(port);
  mpss(h, 1 << 20);
  /* Worker (thread 2) is in compute(1) <- compute(2) <- main when tracing starts: it leaves the
   * innermost compute, which the trace never saw entered. */
  leave(&f, FD_T_WORKER, FD_M_COMPUTE, 2);
  /* It calls <init>, which throws (no exit event): the next event, compute's exit at depth 1,
   * first unrolls <init>. */
  enter(&f, FD_T_WORKER, FD_M_INIT, 2);
  leave(&f, FD_T_WORKER, FD_M_COMPUTE, 1);
  pkt data = stop_trace(h, T('M', 'P', 'S', 'E'));
  ddmc_host_trace tr;
  assert_int_equal(ddmc_host_trace_parse(data.data, data.len, &tr), 0);
  static const struct {
    uint8_t action;
    const char *name;
  } want[] = {{0, "main"},   {0, "compute"}, {0, "compute"}, {1, "compute"},
              {0, "<init>"}, {2, "<init>"},  {1, "compute"}};
  assert_int_equal(tr.nrecs, 7);
  for (size_t i = 0; i < 7; i++) {
    assert_int_equal(tr.recs[i].thread, FD_T_WORKER);
    assert_int_equal(tr.recs[i].action, want[i].action);
    assert_string_equal(method_name(&tr, tr.recs[i].method), want[i].name);
  }
  ddmc_host_trace_free(&tr);
  pkt_free(&data);
  ddmc_host_free(h);
  stop_vm(&f);
}

/* A buffer that fills: recording stops, the trace says so, and holds exactly what fitted. */
static void test_trace_overflow(void **state) {
  (void)state;
  fakebridge f;
  uint16_t port = start_vm(&f, 0, NULL, 0);
  ddmc_host *h = peer_connect(port);
  uint32_t size = 32 + 14 * 100; /* the header counts, as in Dalvik: room for 100 records */
  mpss(h, size);
  for (int i = 0; i < 50; i++) round_of_calls(&f, 1);
  assert_int_equal(mprq(h), 1); /* still "tracing" until the peer stops it, as Dalvik */
  pkt data = stop_trace(h, T('M', 'P', 'S', 'E'));
  ddmc_host_trace tr;
  assert_int_equal(ddmc_host_trace_parse(data.data, data.len, &tr), 0);
  assert_true(tr.overflow);
  assert_true(tr.nrecs > 0 && tr.nrecs <= 100);
  for (size_t k = 0; k + 8 <= tr.nrecs; k += 8) check_round_records(&tr, k); /* whole rounds, in order */
  ddmc_host_trace_free(&tr);
  pkt_free(&data);
  ddmc_prof_stats st;
  ddmc_prof_get_stats(f.fv.vm, &st);
  assert_int_equal(st.trace_overflows, 1);
  ddmc_host_free(h);
  stop_vm(&f);
}

/* MPRS/MPRE: the trace goes to a file in the VM. */
static void test_trace_file(void **state) {
  (void)state;
  fakebridge f;
  uint16_t port = start_vm(&f, 0, NULL, 0);
  ddmc_host *h = peer_connect(port);
  char dir[] = "/tmp/ddmc-test-trace-XXXXXX", path[64];
  assert_non_null(mkdtemp(dir));
  snprintf(path, sizeof path, "%s/t.trace", dir); /* the VM creates it */
  uint8_t *name;
  size_t nlen;
  assert_int_equal(ddmc_host_utf8_to_utf16be(path, &name, &nlen), 0);
  uint8_t req[512];
  ddmc__put_u32(req, 1 << 20);
  ddmc__put_u32(req + 4, 0);
  ddmc__put_u32(req + 8, (uint32_t)(nlen / 2));
  memcpy(req + 12, name, nlen);
  expect_empty_reply(h, T('M', 'P', 'R', 'S'), req, 12 + nlen);
  assert_int_equal(mprq(h), 1);
  round_of_calls(&f, 1);
  pkt r = request(h, T('M', 'P', 'R', 'E'), NULL, 0);
  assert_int_equal(r.type, T('M', 'P', 'R', 'E'));
  assert_int_equal(r.len, 1);
  assert_int_equal(r.data[0], 0);
  pkt_free(&r);
  FILE *fp = fopen(path, "rb");
  assert_non_null(fp);
  uint8_t buf[65536];
  size_t got = fread(buf, 1, sizeof buf, fp);
  fclose(fp);
  unlink(path);
  rmdir(dir);
  ddmc_host_trace tr;
  assert_int_equal(ddmc_host_trace_parse(buf, got, &tr), 0);
  assert_int_equal(tr.nrecs, 8);
  check_round_records(&tr, 0);
  ddmc_host_trace_free(&tr);

  /* MPRE with nothing running: [1]. A file the VM cannot create: FAIL with the reason. */
  r = request(h, T('M', 'P', 'R', 'E'), NULL, 0);
  assert_int_equal(r.data[0], 1);
  pkt_free(&r);
  free(name);
  assert_int_equal(ddmc_host_utf8_to_utf16be("/nonexistent-dir/x.trace", &name, &nlen), 0);
  ddmc__put_u32(req + 8, (uint32_t)(nlen / 2));
  memcpy(req + 12, name, nlen);
  char *m = expect_fail(h, T('M', 'P', 'R', 'S'), req, 12 + nlen);
  assert_non_null(strstr(m, "/nonexistent-dir/x.trace"));
  free(m);
  free(name);
  assert_int_equal(mprq(h), 0);
  /* Truncated requests. */
  free(expect_fail(h, T('M', 'P', 'R', 'S'), req, 10));
  free(expect_fail(h, T('M', 'P', 'S', 'S'), req, 4));
  free(expect_fail(h, T('S', 'P', 'S', 'S'), req, 8));
  assert_int_equal(mprq(h), 0);
  ddmc_host_free(h);
  stop_vm(&f);
}

/* MPRS [size][flags][path]. */
static size_t mprs_req(uint8_t *req, size_t cap, const char *path) {
  uint8_t *name;
  size_t nlen;
  assert_int_equal(ddmc_host_utf8_to_utf16be(path, &name, &nlen), 0);
  assert_true(12 + nlen <= cap);
  ddmc__put_u32(req, 1 << 20);
  ddmc__put_u32(req + 4, 0);
  ddmc__put_u32(req + 8, (uint32_t)(nlen / 2));
  memcpy(req + 12, name, nlen);
  free(name);
  return 12 + nlen;
}

static void assert_file_is(const char *path, const char *text) {
  char got[64] = "";
  FILE *fp = fopen(path, "r");
  assert_non_null(fp);
  size_t n = fread(got, 1, sizeof got - 1, fp);
  got[n] = '\0';
  fclose(fp);
  assert_string_equal(got, text);
}

/* MPRS's file name is the peer's: only a new regular file is created, nothing blocks (a FIFO
 * used to hold the JDWP thread in open), an existing file is neither truncated nor removed, and
 * ddmc_prof_config.file_dir confines the names. */
static void test_trace_file_names(void **state) {
  (void)state;
  char dir[] = "/tmp/ddmc-test-tnames-XXXXXX", fifo[96], victim[96], link_[96], out[96], req[512];
  assert_non_null(mkdtemp(dir));
  snprintf(fifo, sizeof fifo, "%s/fifo", dir);
  snprintf(victim, sizeof victim, "%s/victim", dir);
  snprintf(link_, sizeof link_, "%s/link", dir);
  snprintf(out, sizeof out, "%s/sub", dir);
  assert_int_equal(mkfifo(fifo, 0600), 0);
  FILE *fp = fopen(victim, "w");
  assert_non_null(fp);
  fputs("precious", fp);
  fclose(fp);
  assert_int_equal(symlink(victim, link_), 0);
  assert_int_equal(mkdir(out, 0700), 0);

  fakebridge f;
  assert_int_equal(fakebridge_new(&f, FAKEBRIDGE_NO_SESSION), 0);
  ddmc_prof_config c;
  ddmc_prof_config_init(&c);
  snprintf(c.file_dir, sizeof c.file_dir, "%s", dir);
  assert_int_equal(ddmc_prof_configure(f.fv.vm, &c), 0);
  assert_int_equal(ddmc_vm_start(f.fv.vm), 0);
  ddmc_host *h = peer_connect(ddmc_vm_port(f.fv.vm));
  int64_t t0 = mono_ms();
  char *m = expect_fail(h, T('M', 'P', 'R', 'S'), req, mprs_req((uint8_t *)req, sizeof req, fifo));
  assert_true(mono_ms() - t0 < TMO);
  assert_non_null(strstr(m, "the file exists"));
  free(m);
  assert_int_equal(mprq(h), 0); /* the next request is served */
  m = expect_fail(h, T('M', 'P', 'R', 'S'), req, mprs_req((uint8_t *)req, sizeof req, victim));
  assert_non_null(strstr(m, "the file exists"));
  free(m);
  m = expect_fail(h, T('M', 'P', 'R', 'S'), req, mprs_req((uint8_t *)req, sizeof req, link_));
  assert_non_null(strstr(m, "the file exists"));
  free(m);
  assert_file_is(victim, "precious");
  char sub[128];
  snprintf(sub, sizeof sub, "%s/t.trace", out);
  m = expect_fail(h, T('M', 'P', 'R', 'S'), req, mprs_req((uint8_t *)req, sizeof req, sub));
  assert_non_null(strstr(m, "the VM writes files only directly in"));
  free(m);
  assert_int_equal(access(sub, F_OK), -1);
  assert_int_equal(mprq(h), 0);
  /* Inside the directory: traced, written. */
  char ok[128];
  snprintf(ok, sizeof ok, "%s/ok.trace", dir);
  expect_empty_reply(h, T('M', 'P', 'R', 'S'), req, mprs_req((uint8_t *)req, sizeof req, ok));
  assert_int_equal(mprq(h), 1);
  pkt r = request(h, T('M', 'P', 'R', 'E'), NULL, 0);
  assert_int_equal(r.data[0], 0);
  pkt_free(&r);
  struct stat st;
  assert_int_equal(stat(ok, &st), 0);
  assert_true(S_ISREG(st.st_mode) && st.st_size > 0);
  ddmc_host_free(h);
  stop_vm(&f);
  unlink(ok);
  unlink(fifo);
  unlink(link_);
  unlink(victim);
  rmdir(out);
  rmdir(dir);
}

/* ---- sampling */

static const ddmc_frame kWorkerStack[] = {
    {.class_name = "Work", .method_name = "inner", .file = "Work.java", .line = 7, .signature = "(I)V"},
    {.class_name = "Work", .method_name = "outer", .file = "Work.java", .line = 3, .signature = "()V"},
    {.class_name = "Work", .method_name = "run", .file = "Work.java", .line = 1, .signature = "()V"},
};
static const fakevm_thread kSampled[] = {
    {.info = {.id = 1, .name = "main", .status = DDMC_THREAD_RUNNING}},
    {.info = {.id = 7, .name = "Worker", .status = DDMC_THREAD_RUNNING}, .stack = kWorkerStack, .depth = 3},
};

static void test_sampling(void **state) {
  (void)state;
  fakebridge f;
  uint16_t port = start_vm(&f, 0, kSampled, 2);
  ddmc_host *h = peer_connect(port);
  uint8_t b[12];
  ddmc__put_u32(b, 1 << 20);
  ddmc__put_u32(b + 4, 0);
  ddmc__put_u32(b + 8, 0);
  char *m = expect_fail(h, T('S', 'P', 'S', 'S'), b, 12); /* interval 0 */
  free(m);
  ddmc__put_u32(b + 8, 1000);
  expect_empty_reply(h, T('S', 'P', 'S', 'S'), b, 12);
  assert_int_equal(mprq(h), 2);
  ddmc_prof_stats st;
  for (int i = 0; i < 500; i++) { /* a few ticks */
    ddmc_prof_get_stats(f.fv.vm, &st);
    if (st.samples >= 5) break;
    sleep_ms(10);
  }
  assert_true(st.samples >= 5);
  pkt data = stop_trace(h, T('S', 'P', 'S', 'E'));
  assert_non_null(data.data);
  assert_int_equal(mprq(h), 0);
  ddmc_host_trace tr;
  assert_int_equal(ddmc_host_trace_parse(data.data, data.len, &tr), 0);
  /* The stack never changes: the first sample enters its frames, outermost first, and nothing
   * follows until SPSE, which leaves them, innermost first, so the thread gets the trace's time. */
  assert_int_equal(tr.nrecs, 6);
  static const char *const order[] = {"run", "outer", "inner", "inner", "outer", "run"};
  for (size_t i = 0; i < 6; i++) {
    assert_int_equal(tr.recs[i].thread, 7);
    assert_int_equal(tr.recs[i].action, i < 3 ? 0 : 1);
    if (i == 3) assert_true(tr.recs[3].time2 > tr.recs[2].time2); /* wall: the ticks in between */
    const ddmc_host_trace_method *mm = ddmc_host_trace_method_of(&tr, tr.recs[i].method);
    assert_non_null(mm);
    assert_string_equal(mm->name, order[i]);
    assert_string_equal(mm->cls, "Work");
    assert_string_equal(mm->file, "Work.java");
  }
  assert_string_equal(ddmc_host_trace_method_of(&tr, tr.recs[2].method)->sig, "(I)V");
  ddmc_host_trace_free(&tr);
  pkt_free(&data);
  ddmc_host_free(h);
  stop_vm(&f);
}

/* ---- a peer that stops reading in the middle of a transfer */

static void test_stalled_peer(void **state) {
  (void)state;
  fakebridge f;
  uint16_t port = start_vm(&f, 400, NULL, 0);
  ddmc_host *h = peer_connect(port);
  /* 22 MiB of trace: far more than the socket buffers hold for a peer that reads nothing. */
  mpss(h, 32 << 20);
  for (int i = 0; i < 200000; i++) round_of_calls(&f, 1); /* 1.6 million records: 22 MiB */
  uint32_t id;
  assert_int_equal(ddmc_host_send_chunk(h, T('M', 'P', 'S', 'E'), NULL, 0, &id), 0);
  /* The peer now reads nothing. Once the trace is on its way (queued behind nothing: a full queue
   * would drop it at once, which is another test), VM threads go on and are never blocked. */
  for (int i = 0; i < 500 && atomic_load(&f.fv.vm->prof.sending) == 0; i++) sleep_ms(10);
  assert_int_equal(atomic_load(&f.fv.vm->prof.sending), 1);
  hammer hm;
  hammer_start(&hm, f.fv.vm, 256);
  ddmc_stats st;
  wait_transfer_dropped(f.fv.vm, &st, 10000);
  long before = atomic_load(&hm.calls);
  sleep_ms(50);
  assert_true(atomic_load(&hm.calls) > before); /* still running */
  hammer_stop(&hm);
  assert_int_equal(st.transfers_dropped, 1);
  /* The session was ended: the stalled peer sees the connection close once it reads again
   * (after the chunks the hammer got queued before the trace, and part of the trace). */
  int closed = 0, mpse = 0;
  int64_t end = mono_ms() + 20000;
  while (!closed && mono_ms() < end) {
    ddmc_host_packet p;
    int rc = ddmc_host_recv(h, &p, TMO);
    if (rc == DDMC_ECLOSED)
      closed = 1;
    else
      assert_int_equal(rc, 0);
    if (rc == 0 && p.is_ddm && p.chunk_type == T('M', 'P', 'S', 'E')) mpse = 1;
  }
  assert_true(closed);
  assert_false(mpse); /* the trace never arrived whole */
  ddmc_host_free(h);

  /* The next transfer works. */
  h = peer_connect(port);
  mpss(h, 1 << 20);
  round_of_calls(&f, 1);
  pkt data = stop_trace(h, T('M', 'P', 'S', 'E'));
  ddmc_host_trace tr;
  assert_int_equal(ddmc_host_trace_parse(data.data, data.len, &tr), 0);
  assert_int_equal(tr.nrecs, 8);
  check_round_records(&tr, 0);
  ddmc_host_trace_free(&tr);
  pkt_free(&data);
  ddmc_vm_get_stats(f.fv.vm, &st);
  assert_int_equal(st.transfers_dropped, 1);
  ddmc_host_free(h);
  stop_vm(&f);
}

/* ---- every allocation failing in turn */

/* A request that may fail: 0 with the reply's type in *type, or the host error (the session may
 * have ended under an allocation failure). Packets before the reply are skipped. */
static int try_request(ddmc_host *h, uint32_t type, const void *data, size_t len, uint32_t *rtype) {
  uint32_t id;
  int rc = ddmc_host_send_chunk(h, type, data, len, &id);
  while (rc == 0) {
    ddmc_host_packet p;
    if ((rc = ddmc_host_recv(h, &p, TMO)) != 0) break;
    if (p.is_reply && p.id == id) {
      *rtype = p.is_ddm ? p.chunk_type : 0;
      return 0;
    }
  }
  return rc;
}

/* The whole profiling session with allocation N failing, for every N until a run meets no
 * failure: every run ends without a crash and with nothing left allocated, and the VM's answers
 * are either right or FAIL. */
static void test_prof_failmalloc(void **state) {
  (void)state;
  int clean = 0;
  int runs = 0;
  for (long n = 1; n < 20000 && !clean; n++, runs++) {
    failer fl = {0, n, 0, 0};
    ddmc_allocator a = failer_allocator(&fl);
    fakebridge f;
    int rc = fakebridge_new_mem(&f, FAKEBRIDGE_NO_SESSION, &a);
    if (rc == 0) rc = ddmc_vm_start(f.fv.vm);
    if (rc == 0) {
      ddmc_host *h = NULL;
      if (ddmc_host_connect_tcp(&h, "127.0.0.1", ddmc_vm_port(f.fv.vm), TMO) == 0 && ddmc_host_handshake(h, TMO) == 0) {
        uint8_t on = 1, off = 0, ss[8] = {0, 0x10, 0, 0, 0, 0, 0, 0},
                sp[12] = {0, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0xe8};
        uint32_t t = 0;
        int ok = try_request(h, T('R', 'E', 'A', 'E'), &on, 1, &t) == 0;
        if (ok && t == 0) record(&f, 1, FD_C_STRING, 24, 0);
        ok = ok && try_request(h, T('R', 'E', 'A', 'L'), NULL, 0, &t) == 0;
        if (ok) assert_true(t == T('R', 'E', 'A', 'L') || t == T('F', 'A', 'I', 'L'));
        ok = ok && try_request(h, T('R', 'E', 'A', 'E'), &off, 1, &t) == 0;
        ok = ok && try_request(h, T('M', 'P', 'S', 'S'), ss, 8, &t) == 0;
        if (ok && t == 0) round_of_calls(&f, 1);
        ok = ok && try_request(h, T('M', 'P', 'S', 'E'), NULL, 0, &t) == 0;
        ok = ok && try_request(h, T('S', 'P', 'S', 'S'), sp, 12, &t) == 0;
        if (ok) sleep_ms(3);
        ok = ok && try_request(h, T('S', 'P', 'S', 'E'), NULL, 0, &t) == 0;
        ddmc_host_free(h);
      } else {
        ddmc_host_free(h);
      }
    }
    stop_vm(&f);
    assert_int_equal(atomic_load(&fl.live), 0);
    clean = atomic_load(&fl.failed) == 0;
  }
  print_message("prof failmalloc: %d runs\n", runs);
  assert_true(clean); /* a run that needed no failure: every allocation site was failed once */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_feat),
      cmocka_unit_test(test_alloc_tracking),
      cmocka_unit_test(test_alloc_ring_wraps),
      cmocka_unit_test(test_no_bridge),
      cmocka_unit_test(test_trace_stream),
      cmocka_unit_test(test_trace_restart),
      cmocka_unit_test(test_trace_backfill_unroll),
      cmocka_unit_test(test_trace_overflow),
      cmocka_unit_test(test_trace_file),
      cmocka_unit_test(test_trace_file_names),
      cmocka_unit_test(test_sampling),
      cmocka_unit_test(test_stalled_peer),
      cmocka_unit_test(test_prof_failmalloc),
  };
  alarm(240);
  return cmocka_run_group_tests(tests, NULL, NULL);
}
