/* SPDX-License-Identifier: Apache-2.0 */
/* Method calls (src/debugger/cmd_invoke.c): InvokeMethod and NewInstance handed to the thread an
 * event parked and answered when the call ends, arguments checked against the descriptor first. */
#include "dbg_fixture.h"
#include "jdwp/service.h"
#include "jdwp/session.h"

/* The reply to request id among the packets the session has queued (error and body). */
static int find_reply(uint32_t id, uint16_t *error, uint8_t *body, size_t cap, size_t *n) {
  ddmc__jdwp_session *s = F->sess;
  for (int tries = 0; tries < 5000; tries++) {
    ddmc__jdwp_session_drain_queue(s, 0);
    ddmc_reader r;
    ddmc_reader_init(&r, s->out.p + s->out_off, s->out.len - s->out_off);
    while (ddmc_reader_left(&r) >= 11) {
      uint32_t len = ddmc_read_u32(&r), pid = ddmc_read_u32(&r);
      uint8_t flags = ddmc_read_u8(&r);
      uint16_t err = ddmc_read_u16(&r);
      if (len < 11 || len - 11 > ddmc_reader_left(&r)) break;
      const uint8_t *p = ddmc_read_bytes(&r, len - 11);
      if ((flags & 0x80) && pid == id) {
        *error = err;
        *n = len - 11 < cap ? len - 11 : cap;
        memcpy(body, p, *n);
        return 1;
      }
    }
    sleep_ms(1);
  }
  return 0;
}

/* Method calls: handed to the thread an event parked, answered by that thread when the call
 * ends (the handler returns at once), the other threads resumed for the call unless
 * single-threaded; a thread no event holds cannot make one. */
static void test_invoke(void **state) {
  (void)state;
  body m = {.n = 0};
  mod_loc(&m, FD_M_COMPUTE, 8);
  int32_t id;
  assert_int_equal(set_req(DDMC_EV_BREAKPOINT, 1 /* EVENT_THREAD */, &m, 1, &id), 0);
  poster p;
  start_poster(&p, FD_T_WORKER, FD_M_COMPUTE, 8, 2);
  WAIT_FOR(atomic_load(&F->parked[FD_T_WORKER]) == 1 && thr_count(FD_T_WORKER) == 1);
  events();
  assert_int_equal(run_id(11, 2, tid(FD_T_MAIN), NULL), 0); /* main suspended by command */
  assert_int_equal(thr_count(FD_T_MAIN), 1);

  /* ObjectReference.InvokeMethod compute(21) on Debug, every thread running meanwhile */
  body b = {.n = 0};
  b_u64(&b, oid(FD_O_DEBUG));
  b_u64(&b, tid(FD_T_WORKER));
  b_u64(&b, cid(FD_C_DEBUG));
  b_u64(&b, mid(FD_M_COMPUTE));
  b_u32(&b, 1);
  b_u8(&b, 'I');
  b_u32(&b, 21);
  b_u32(&b, 0);
  F->d->cur_id = 7001;
  assert_int_equal(run(9, 6, &b, NULL), DDMC__REPLY_DEFERRED);
  uint16_t err = 0xffff;
  uint8_t reply[64];
  size_t n;
  assert_true(find_reply(7001, &err, reply, sizeof reply, &n));
  assert_int_equal(err, 0);
  ddmc_reader r;
  ddmc_reader_init(&r, reply, n);
  assert_int_equal(ddmc_read_u8(&r), 'J');
  assert_true(ddmc_read_u64(&r) == 42);
  assert_int_equal(ddmc_read_u8(&r), 'L'); /* no exception */
  assert_true(ddmc_read_u64(&r) == 0);
  assert_int_equal(ddmc_reader_left(&r), 0);
  assert_int_equal(atomic_load(&F->last_invoke_thread), FD_T_WORKER);
  assert_int_equal(atomic_load(&F->n_resume), 1);  /* main ran during the call ... */
  assert_int_equal(atomic_load(&F->n_suspend), 2); /* ... and was suspended again */
  assert_int_equal(thr_count(FD_T_MAIN), 1);
  assert_int_equal(thr_count(FD_T_WORKER), 1); /* still held by its event */
  assert_int_equal(atomic_load(&p.done), 0);

  /* a call that throws, single-threaded: main stays suspended */
  b.n = 0;
  b_u64(&b, oid(FD_O_DEBUG));
  b_u64(&b, tid(FD_T_WORKER));
  b_u64(&b, cid(FD_C_DEBUG));
  b_u64(&b, mid(FD_M_COMPUTE));
  b_u32(&b, 1);
  b_u8(&b, 'I');
  b_u32(&b, (uint32_t)-1);
  b_u32(&b, DDMC_INVOKE_SINGLE_THREADED);
  F->d->cur_id = 7002;
  assert_int_equal(run(9, 6, &b, NULL), DDMC__REPLY_DEFERRED);
  assert_true(find_reply(7002, &err, reply, sizeof reply, &n));
  assert_int_equal(err, 0);
  ddmc_reader_init(&r, reply, n);
  assert_int_equal(ddmc_read_u8(&r), 'V');
  assert_int_equal(ddmc_read_u8(&r), 'L');
  assert_true(ddmc_read_u64(&r) == oid(FD_O_DEBUG2));
  assert_int_equal(atomic_load(&F->n_resume), 1);
  assert_int_equal(atomic_load(&F->last_invoke_options), DDMC_INVOKE_SINGLE_THREADED);

  /* arguments against compute's descriptor (I)J, checked before the thread is asked: too few or
   * too many is ILLEGAL_ARGUMENT, a long or an object for the int TYPE_MISMATCH */
  int calls = atomic_load(&F->n_invoke);
  static const struct {
    uint32_t n;
    uint8_t tag;
    uint64_t v;
    int want;
  } bad[] = {{0, 0, 0, DDMC_JDWP_ILLEGAL_ARGUMENT},
             {2, 'I', 1, DDMC_JDWP_ILLEGAL_ARGUMENT},
             {1, 'J', 1, DDMC_JDWP_TYPE_MISMATCH},
             {1, 's', 0, DDMC_JDWP_TYPE_MISMATCH}};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    b.n = 0;
    b_u64(&b, oid(FD_O_DEBUG));
    b_u64(&b, tid(FD_T_WORKER));
    b_u64(&b, cid(FD_C_DEBUG));
    b_u64(&b, mid(FD_M_COMPUTE));
    b_u32(&b, bad[i].n);
    for (uint32_t k = 0; k < bad[i].n; k++) {
      b_u8(&b, bad[i].tag);
      if (bad[i].tag == 'J' || bad[i].tag == 's')
        b_u64(&b, bad[i].tag == 's' ? oid(FD_O_STR) : bad[i].v);
      else
        b_u32(&b, (uint32_t)bad[i].v);
    }
    b_u32(&b, DDMC_INVOKE_SINGLE_THREADED);
    assert_int_equal(run(9, 6, &b, NULL), bad[i].want);
  }
  assert_int_equal(atomic_load(&F->n_invoke), calls); /* the thread was never asked */

  /* ClassType.InvokeMethod of the static main; of the instance compute: INVALID_METHODID */
  b.n = 0;
  bd_ct_invoke(&b);
  F->d->cur_id = 7003;
  assert_int_equal(run(3, 3, &b, NULL), DDMC__REPLY_DEFERRED);
  assert_true(find_reply(7003, &err, reply, sizeof reply, &n));
  assert_int_equal(err, 0);
  assert_int_equal(reply[0], 'V');
  b.n = 0;
  b_u64(&b, cid(FD_C_DEBUG));
  b_u64(&b, tid(FD_T_WORKER));
  b_u64(&b, mid(FD_M_COMPUTE));
  b_u32(&b, 0);
  b_u32(&b, 0);
  assert_int_equal(run(3, 3, &b, NULL), DDMC_JDWP_INVALID_METHODID);
  /* ClassType.NewInstance: Debug() on the worker; a constructor only through NewInstance */
  b.n = 0;
  bd_new_instance(&b);
  F->d->cur_id = 7004;
  assert_int_equal(run(3, 4, &b, NULL), DDMC__REPLY_DEFERRED);
  assert_true(find_reply(7004, &err, reply, sizeof reply, &n));
  assert_int_equal(err, 0);
  ddmc_reader_init(&r, reply, n);
  assert_int_equal(ddmc_read_u8(&r), 'L');
  uint64_t made = ddmc_read_u64(&r);
  assert_true(made != 0);
  assert_int_equal(ddmc_read_u8(&r), 'L'); /* no exception */
  assert_true(ddmc_read_u64(&r) == 0);
  assert_int_equal(ddmc_reader_left(&r), 0);
  assert_int_equal(atomic_load(&F->last_invoke_options) & DDMC_INVOKE_CONSTRUCT, DDMC_INVOKE_CONSTRUCT);
  assert_int_equal(run_id(9, 1, made, &r), 0); /* ObjectReference.ReferenceType */
  assert_int_equal(ddmc_read_u8(&r), DDMC_TYPE_CLASS);
  assert_true(ddmc_read_u64(&r) == cid(FD_C_DEBUG));
  assert_int_equal(ddmc_reader_left(&r), 0);
  b.n = 0; /* NewInstance of a method that is not a constructor */
  b_u64(&b, cid(FD_C_DEBUG));
  b_u64(&b, tid(FD_T_WORKER));
  b_u64(&b, mid(FD_M_MAIN));
  b_u32(&b, 0);
  b_u32(&b, 0);
  assert_int_equal(run(3, 4, &b, NULL), DDMC_JDWP_INVALID_METHODID);
  b.n = 0; /* InvokeMethod of a constructor */
  b_u64(&b, cid(FD_C_DEBUG));
  b_u64(&b, tid(FD_T_WORKER));
  b_u64(&b, mid(FD_M_INIT));
  b_u32(&b, 0);
  b_u32(&b, 0);
  assert_int_equal(run(3, 3, &b, NULL), DDMC_JDWP_INVALID_METHODID);
  b.n = 0; /* NewInstance of an array type (Debug's constructor is not one of its methods) */
  b_u64(&b, cid(FD_C_INT_ARRAY));
  b_u64(&b, tid(FD_T_WORKER));
  b_u64(&b, mid(FD_M_INIT));
  b_u32(&b, 0);
  b_u32(&b, 0);
  assert_int_equal(run(3, 4, &b, NULL), DDMC_JDWP_INVALID_METHODID);
  assert_int_equal(atomic_load(&F->n_invoke), 4);

  /* main is suspended by command, not by an event: it cannot make a call. INVALID_THREAD, as
   * HotSpot answers: JDI makes IncompatibleThreadStateException of exactly that code. */
  b.n = 0;
  b_u64(&b, cid(FD_C_DEBUG));
  b_u64(&b, tid(FD_T_MAIN));
  b_u64(&b, mid(FD_M_MAIN));
  b_u32(&b, 1);
  b_u8(&b, '[');
  b_u64(&b, 0);
  b_u32(&b, 0);
  assert_int_equal(run(3, 3, &b, NULL), DDMC_JDWP_INVALID_THREAD);
  assert_int_equal(atomic_load(&F->n_invoke), 4);

  assert_int_equal(run(1, 9, NULL, NULL), 0); /* resume all */
  pthread_join(p.th, NULL);
  assert_int_equal(thr_count(FD_T_WORKER), 0);
  assert_int_equal(thr_count(FD_T_MAIN), 0);
}

/* ObjectReference.InvokeMethod compute(x) on Debug by the worker. */
static void bd_compute(body *b, int32_t x, uint32_t options) {
  b->n = 0;
  b_u64(b, oid(FD_O_DEBUG));
  b_u64(b, tid(FD_T_WORKER));
  b_u64(b, cid(FD_C_DEBUG));
  b_u64(b, mid(FD_M_COMPUTE));
  b_u32(b, 1);
  b_u8(b, 'I');
  b_u32(b, (uint32_t)x);
  b_u32(b, options);
}

/* compute's reply: the long it returned, no exception. */
static void assert_compute_reply(uint32_t id, int64_t want) {
  uint16_t err = 0xffff;
  uint8_t reply[64];
  size_t n = 0;
  assert_true(find_reply(id, &err, reply, sizeof reply, &n));
  assert_int_equal(err, 0);
  ddmc_reader r;
  ddmc_reader_init(&r, reply, n);
  assert_int_equal(ddmc_read_u8(&r), 'J');
  assert_true((int64_t)ddmc_read_u64(&r) == want);
  assert_int_equal(ddmc_read_u8(&r), 'L');
  assert_true(ddmc_read_u64(&r) == 0);
}

/* A test's hold on a thread inside an op (fakebridge's hook): armed for one call at `where`. */
typedef struct holder {
  atomic_int armed, where, inside, release;
  atomic_int nested_rc; /* FD_HOOK_INVOKE with post_inside: what the nested post returned */
  int post_inside;      /* post a breakpoint from inside the call instead of waiting */
} holder;

static void hold_hook(void *arg, int where, uint32_t thread) {
  holder *h = arg;
  if (where != atomic_load(&h->where) || !atomic_exchange(&h->armed, 0)) return;
  atomic_store(&h->inside, 1);
  if (h->post_inside) {
    /* the called code passes the breakpoint the thread stopped at */
    atomic_store(&h->nested_rc, post(thread, FD_M_COMPUTE, 8, 3, DDMC_POST_AT_BREAKPOINT));
    return;
  }
  for (int i = 0; i < 10000 && !atomic_load(&h->release); i++) sleep_ms(1); /* bounded */
}

static void hold_arm(holder *h, int where) {
  memset(h, 0, sizeof(*h));
  atomic_store(&h->where, where);
  atomic_store(&h->armed, 1);
  F->hook_arg = h;
  F->hook = hold_hook;
}

/* The debugger leaves (Dispose; the test's helper then starts a new session at once) while a call
 * that let every thread run is running: when the call ends nothing is suspended again, neither
 * the other threads nor the calling one, which goes on from its event. */
static void test_invoke_session_ends(void **state) {
  (void)state;
  body m = {.n = 0};
  mod_loc(&m, FD_M_COMPUTE, 8);
  int32_t id;
  assert_int_equal(set_req(DDMC_EV_BREAKPOINT, 2 /* ALL */, &m, 1, &id), 0);
  poster p;
  start_poster(&p, FD_T_WORKER, FD_M_COMPUTE, 8, 2);
  /* main's count is raised before the VM is asked to suspend it: wait for both */
  WAIT_FOR(atomic_load(&F->parked[FD_T_WORKER]) == 1 && thr_count(FD_T_MAIN) == 1 &&
           atomic_load(&F->vm_suspended[FD_T_MAIN]) == 1);
  events();
  holder h;
  hold_arm(&h, FD_HOOK_INVOKE);
  body b;
  bd_compute(&b, 21, 0);
  F->d->cur_id = 7101;
  assert_int_equal(run(9, 6, &b, NULL), DDMC__REPLY_DEFERRED);
  WAIT_FOR(atomic_load(&h.inside) == 1);
  assert_int_equal(atomic_load(&F->vm_suspended[FD_T_MAIN]), 0); /* running for the call */
  assert_int_equal(run(1, 6, NULL, NULL), 0); /* Dispose: the IDE is gone ... */
  fakebridge_reconnect(F);                       /* ... and another attaches */
  int suspends = atomic_load(&F->n_suspend);
  atomic_store(&h.release, 1);
  WAIT_FOR(atomic_load(&p.done) == 1); /* the caller went on from its event */
  pthread_join(p.th, NULL);
  F->hook = NULL;
  assert_int_equal(atomic_load(&F->n_suspend), suspends);
  assert_int_equal(atomic_load(&F->vm_suspended[FD_T_MAIN]), 0);
  assert_int_equal(thr_count(FD_T_MAIN), 0);
  assert_int_equal(thr_count(FD_T_WORKER), 0);
  /* the next session finds nothing held: an event of main's is not parked behind a stale count */
  assert_int_equal(ddmc_post_thread_start(F->fv.vm, FD_T_MAIN), 0);
}

/* A call sent the instant the event arrives, before the thread has parked (its count is raised
 * before the event is queued): taken, and made once the thread parks. Here the worker is held
 * inside its event's suspend-all, stopping main, with its own count raised. */
static void test_invoke_before_park(void **state) {
  (void)state;
  body m = {.n = 0};
  mod_loc(&m, FD_M_COMPUTE, 8);
  int32_t id;
  assert_int_equal(set_req(DDMC_EV_BREAKPOINT, 2 /* ALL */, &m, 1, &id), 0);
  events(); /* the session's output from here: find_reply reads it raw */
  holder h;
  hold_arm(&h, FD_HOOK_SUSPEND);
  poster p;
  start_poster(&p, FD_T_WORKER, FD_M_COMPUTE, 8, 2);
  WAIT_FOR(atomic_load(&h.inside) == 1);
  assert_int_equal(thr_count(FD_T_WORKER), 1);
  body b;
  bd_compute(&b, 21, DDMC_INVOKE_SINGLE_THREADED);
  F->d->cur_id = 7201;
  assert_int_equal(run(9, 6, &b, NULL), DDMC__REPLY_DEFERRED);
  /* a second call while the first waits for the thread */
  bd_compute(&b, 5, DDMC_INVOKE_SINGLE_THREADED);
  assert_int_equal(run(9, 6, &b, NULL), DDMC_JDWP_ALREADY_INVOKING);
  atomic_store(&h.release, 1);
  assert_compute_reply(7201, 42);
  F->hook = NULL;
  assert_int_equal(atomic_load(&F->n_invoke), 1);
  assert_int_equal(events(), 1); /* the event, which the call waited behind */
  assert_int_equal(thr_count(FD_T_WORKER), 1);
  assert_int_equal(thr_count(FD_T_MAIN), 1);
  assert_int_equal(atomic_load(&p.done), 0);
  /* a thread no event holds still cannot make a call */
  body c = {.n = 0};
  b_u64(&c, cid(FD_C_DEBUG));
  b_u64(&c, tid(FD_T_MAIN));
  b_u64(&c, mid(FD_M_MAIN));
  b_u32(&c, 1);
  b_u8(&c, '[');
  b_u64(&c, 0);
  b_u32(&c, 0);
  assert_int_equal(run(3, 3, &c, NULL), DDMC_JDWP_INVALID_THREAD);
  assert_int_equal(run(1, 9, NULL, NULL), 0);
  pthread_join(p.th, NULL);
  assert_int_equal(thr_count(FD_T_WORKER), 0);
}

/* The called code reaches a breakpoint: reported like any other event (the thread parks in it,
 * the debugger can inspect it and even make a call from there); once resumed, the first call
 * completes and its reply comes, the thread held by its first event again. */
static void test_invoke_breakpoint_inside(void **state) {
  (void)state;
  body m = {.n = 0};
  mod_loc(&m, FD_M_COMPUTE, 8);
  int32_t id;
  assert_int_equal(set_req(DDMC_EV_BREAKPOINT, 1 /* EVENT_THREAD */, &m, 1, &id), 0);
  poster p;
  start_poster(&p, FD_T_WORKER, FD_M_COMPUTE, 8, 2);
  WAIT_FOR(atomic_load(&F->parked[FD_T_WORKER]) == 1 && thr_count(FD_T_WORKER) == 1);
  assert_int_equal(events(), 1);
  holder h;
  hold_arm(&h, FD_HOOK_INVOKE);
  h.post_inside = 1;
  body b;
  bd_compute(&b, 21, DDMC_INVOKE_SINGLE_THREADED);
  F->d->cur_id = 7301;
  assert_int_equal(run(9, 6, &b, NULL), DDMC__REPLY_DEFERRED);
  int got = 0;
  for (int i = 0; i < 5000 && got == 0; i++) {
    got = events();
    if (!got) sleep_ms(1);
  }
  assert_int_equal(got, 1); /* the nested breakpoint */
  assert_true(g_comp[0].e[0].thread == tid(FD_T_WORKER));
  assert_int_equal(g_comp[0].e[0].req, id);
  WAIT_FOR(thr_count(FD_T_WORKER) == 1 && atomic_load(&F->parked[FD_T_WORKER]) == 1);
  ddmc_reader r;
  assert_int_equal(run_id(11, 7, tid(FD_T_WORKER), &r), 0); /* FrameCount: it is suspended */
  /* a call from the nested stop */
  bd_compute(&b, 5, DDMC_INVOKE_SINGLE_THREADED);
  F->d->cur_id = 7302;
  assert_int_equal(run(9, 6, &b, NULL), DDMC__REPLY_DEFERRED);
  assert_compute_reply(7302, 10);
  assert_int_equal(run_id(11, 3, tid(FD_T_WORKER), NULL), 0); /* resume the nested stop */
  assert_compute_reply(7301, 42);
  F->hook = NULL;
  assert_int_equal(atomic_load(&h.nested_rc), 0);
  WAIT_FOR(thr_count(FD_T_WORKER) == 1 && atomic_load(&F->parked[FD_T_WORKER]) == 1);
  assert_int_equal(atomic_load(&p.done), 0); /* held by its first event again */
  bd_compute(&b, 1, DDMC_INVOKE_SINGLE_THREADED); /* and can make calls again */
  F->d->cur_id = 7303;
  assert_int_equal(run(9, 6, &b, NULL), DDMC__REPLY_DEFERRED);
  assert_compute_reply(7303, 2);
  assert_int_equal(run_id(11, 3, tid(FD_T_WORKER), NULL), 0);
  pthread_join(p.th, NULL);
  assert_int_equal(p.rc, 0);
  assert_int_equal(thr_count(FD_T_WORKER), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_invoke, setup, teardown),
      cmocka_unit_test_setup_teardown(test_invoke_session_ends, setup, teardown),
      cmocka_unit_test_setup_teardown(test_invoke_before_park, setup, teardown),
      cmocka_unit_test_setup_teardown(test_invoke_breakpoint_inside, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
