/* SPDX-License-Identifier: Apache-2.0 */
/* Sessions (src/debugger/session.c, table.c): a disconnect releases everything and the next
 * session starts clean, suspend=y's VM_START, a relay's DBGD and Dispose, and out of memory at
 * every allocation of ddmc_dbg_enable and of a session touching every part of the layer. */
#include "dbg_fixture.h"
#include "jdwp/session.h"

/* Disconnect: parked threads leave, breakpoints cleared in the VM, steps and method events off,
 * every count 0, the VM's suspensions undone. */
static void test_reset_releases_everything(void **state) {
  (void)state;
  body m = {.n = 0};
  mod_loc(&m, FD_M_COMPUTE, 8);
  assert_int_equal(set_req(DDMC_EV_BREAKPOINT, 1, &m, 1, NULL), 0);
  assert_int_equal(set_req(DDMC_EV_BREAKPOINT, 0, &m, 1, NULL), 0);
  body m2 = {.n = 0};
  mod_loc(&m2, FD_M_MAIN, 4);
  assert_int_equal(set_req(DDMC_EV_BREAKPOINT, 0, &m2, 1, NULL), 0);
  assert_int_equal(set_req(DDMC_EV_METHOD_EXIT, 0, NULL, 0, NULL), 0);
  assert_int_equal(run_id(11, 2, tid(FD_T_MAIN), NULL), 0);
  assert_int_equal(run_id(11, 2, tid(FD_T_MAIN), NULL), 0);
  step_req(FD_T_MAIN, 1, 1, 0, 0);
  assert_int_equal(atomic_load(&F->stepping[FD_T_MAIN]), 1);
  poster p;
  start_poster(&p, FD_T_WORKER, FD_M_COMPUTE, 8, 2);
  WAIT_FOR(thr_count(FD_T_WORKER) == 1 && atomic_load(&F->parked[FD_T_WORKER]) == 1);
  sleep_ms(10);
  assert_int_equal(atomic_load(&p.done), 0);

  ddmc__dbg_reset(F->d);
  pthread_join(p.th, NULL);
  assert_int_equal(thr_count(FD_T_MAIN), 0);
  assert_int_equal(thr_count(FD_T_WORKER), 0);
  assert_int_equal(atomic_load(&F->n_clear_bp), 2);
  assert_int_equal(F->nbps, 0);
  assert_int_equal(atomic_load(&F->stepping[FD_T_MAIN]), 0);
  assert_int_equal(atomic_load(&F->method_events), 0);
  assert_int_equal(atomic_load(&F->vm_suspended[FD_T_MAIN]), 0);
  assert_int_equal(atomic_load(&F->n_resume), 1);
  assert_false(ddmc_event_wanted(F->fv.vm, DDMC_EV_BREAKPOINT));
  /* the next session starts clean: request IDs, counts */
  fakebridge_reconnect(F);
  m.n = 0;
  mod_loc(&m, FD_M_COMPUTE, 8); /* IDs of this session */
  int32_t id;
  assert_int_equal(set_req(DDMC_EV_BREAKPOINT, 0, &m, 1, &id), 0);
  assert_int_equal(id, 1);
  assert_int_equal(atomic_load(&F->n_set_bp), 3);
}

/* suspend=y: the session's VM_START suspends every thread, names main. */
static void test_vm_start_suspend_y(void **state) {
  (void)state;
  assert_int_equal(events(), 1);
  assert_int_equal(g_comp[0].policy, 2);
  assert_int_equal(g_comp[0].n, 1);
  assert_int_equal(g_comp[0].e[0].kind, DDMC_EV_VM_START);
  assert_true(g_comp[0].e[0].thread == tid(FD_T_MAIN));
  assert_int_equal(thr_count(FD_T_MAIN), 1);
  assert_int_equal(thr_count(FD_T_WORKER), 1);
  assert_int_equal(atomic_load(&F->n_suspend), 2);
  assert_int_equal(run(1, 9, NULL, NULL), 0);
  assert_int_equal(atomic_load(&F->n_resume), 2);
}

/* A relay (ddmlib) keeps the connection when its debugger leaves: DBGD drops the debugger's
 * state as a disconnect would (breakpoints cleared, threads resumed), and the next debugger on
 * the same connection, after DBGD or VirtualMachine.Dispose, gets its events. */
static void test_relay_detach_and_next_debugger(void **state) {
  (void)state;
  body m = {.n = 0};
  mod_loc(&m, FD_M_COMPUTE, 8);
  int32_t id;
  assert_int_equal(set_req(DDMC_EV_BREAKPOINT, 0, &m, 1, &id), 0);
  assert_int_equal(run_id(11, 2, tid(FD_T_WORKER), NULL), 0);
  assert_int_equal(thr_count(FD_T_WORKER), 1);
  /* DBGD through the session, as ddmlib would send it */
  uint8_t pkt[11 + 8] = {0, 0, 0, 19, 0, 0, 0, 9, 0, 199, 1, 'D', 'B', 'G', 'D', 0, 0, 0, 0};
  assert_int_equal(ddmc__jdwp_session_input(F->sess, pkt, sizeof pkt), 0);
  assert_int_equal(atomic_load(&F->n_clear_bp), 1);
  assert_false(fakebridge_has_bp(F, FD_C_DEBUG, FD_M_COMPUTE, 8));
  assert_int_equal(thr_count(FD_T_WORKER), 0);
  assert_int_equal(atomic_load(&F->d->connected), 0);
  ddmc_location at = {FD_C_DEBUG, FD_M_COMPUTE, 8};
  assert_int_equal(ddmc_post_location(F->fv.vm, FD_T_MAIN, &at, 1, 0, DDMC_POST_AT_BREAKPOINT), DDMC_ENOTCONN);
  /* the next debugger: its first command makes the session live again */
  m.n = 0;
  mod_loc(&m, FD_M_COMPUTE, 8);
  assert_int_equal(set_req(DDMC_EV_BREAKPOINT, 0, &m, 1, &id), 0);
  assert_int_equal(atomic_load(&F->d->connected), 1);
  assert_int_equal(ddmc_post_location(F->fv.vm, FD_T_MAIN, &at, 1, 0, DDMC_POST_AT_BREAKPOINT), 0);
  assert_int_equal(events(), 1);
  assert_int_equal(g_comp[0].e[0].req, id);
  /* the same after Dispose */
  assert_int_equal(run(1, 6, NULL, NULL), 0);
  assert_int_equal(atomic_load(&F->d->connected), 0);
  assert_int_equal(atomic_load(&F->n_clear_bp), 2);
  m.n = 0; /* IDs went with the last debugger */
  mod_loc(&m, FD_M_COMPUTE, 8);
  assert_int_equal(set_req(DDMC_EV_BREAKPOINT, 0, &m, 1, &id), 0);
  assert_int_equal(ddmc_post_location(F->fv.vm, FD_T_MAIN, &at, 1, 0, DDMC_POST_AT_BREAKPOINT), 0);
  assert_int_equal(events(), 1);
  assert_int_equal(g_comp[0].e[0].req, id);
}

/* Out of memory at every allocation in turn, over a session that touches every part of the
 * layer: no crash, and nothing left allocated once the VM is freed (ASan checks the accesses). */
static uint64_t try_oid(ddmc_ref o) {
  uint64_t id = 0;
  ddmc__dbg_id_of_object(F->d, o, &id);
  return id;
}

static uint64_t try_cid(ddmc_class c) {
  const ddmc__dbg_cls *k = NULL;
  return ddmc__dbg_cls_get(F->d, c, &k) == 0 ? k->id : 0;
}

/* Every command family, a breakpoint hit, a step, HoldEvents, a disconnect; return codes are
 * whatever memory allows. */
static void oom_script(void) {
  body b = {.n = 0};
  static const uint8_t plain[][2] = {{1, 1}, {1, 3}, {1, 20}, {1, 4}, {1, 5}, {1, 17}, {1, 8}, {1, 9}};
  for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) run(plain[i][0], plain[i][1], NULL, NULL);
  uint64_t k = try_cid(FD_C_DEBUG), o = try_oid(FD_O_DEBUG), t = try_oid(FD_O_THREAD_MAIN);
  run_id(2, 4, k, NULL);
  run_id(2, 15, k, NULL);
  run_id(12, 3, try_oid(FD_O_GROUP_MAIN), NULL);
  b.n = 0;
  b_u64(&b, o);
  b_u32(&b, 2);
  b_u64(&b, k ? ddmc__dbg_field_id(cls(FD_C_DEBUG), FD_F_NEXT) : 0);
  b_u64(&b, k ? ddmc__dbg_field_id(cls(FD_C_DEBUG), FD_F_LABEL) : 0);
  run(9, 2, &b, NULL);
  b.n = 0;
  b_u64(&b, k);
  b_u64(&b, mid(FD_M_MAIN));
  run(6, 1, &b, NULL);
  run(6, 5, &b, NULL);
  run_id(10, 1, try_oid(FD_O_STR), NULL);
  b.n = 0;
  b_u64(&b, try_oid(FD_O_ARR));
  b_u32(&b, 0);
  b_u32(&b, 5);
  run(13, 2, &b, NULL);
  b.n = 0;
  b_str(&b, "oom");
  run(1, 11, &b, NULL);
  /* requests and events */
  body m = {.n = 0};
  b_u8(&m, DDMC__MOD_CLASS_MATCH);
  b_str(&m, "Deb*");
  b_u8(&m, DDMC__MOD_LOCATION_ONLY);
  b_loc(&m, DDMC_TYPE_CLASS, k, FD_M_COMPUTE, 5);
  b.n = 0;
  b_u8(&b, DDMC_EV_BREAKPOINT);
  b_u8(&b, 0);
  b_u32(&b, 2);
  memcpy(b.p + b.n, m.p, m.n);
  b.n += m.n;
  run(15, 1, &b, NULL);
  run(1, 15, NULL, NULL);
  post(FD_T_MAIN, FD_M_COMPUTE, 5, 1, DDMC_POST_AT_BREAKPOINT);
  run(1, 16, NULL, NULL);
  run_id(11, 2, t, NULL);
  b.n = 0;
  b_u64(&b, t);
  b_u32(&b, 0);
  b_u32(&b, (uint32_t)-1);
  run(11, 6, &b, NULL);
  b.n = 0;
  b_u8(&b, DDMC_EV_SINGLE_STEP);
  b_u8(&b, 0);
  b_u32(&b, 1);
  b_u8(&b, DDMC__MOD_STEP);
  b_u64(&b, t);
  b_u32(&b, 1);
  b_u32(&b, 1);
  run(15, 1, &b, NULL);
  run_id(11, 3, t, NULL);
  post(FD_T_MAIN, FD_M_COMPUTE, 8, 1, 0);
  ddmc_post_thread_start(F->fv.vm, FD_T_WORKER);
  ddmc_post_class_prepare(F->fv.vm, FD_T_MAIN, FD_C_DEBUG);
  fakebridge_events(F, NULL, NULL);
  run(1, 6, NULL, NULL); /* Dispose */
  fakebridge_reconnect(F);
  run(1, 4, NULL, NULL);
}

/* ddmc_dbg_enable with each of its allocations failing in turn: DDMC_ENOMEM, nothing left. */
static void test_attach_out_of_memory(void **state) {
  (void)state;
  failer fm;
  ddmc_allocator a = failer_allocator(&fm);
  for (long n = 1;; n++) {
    failer_arm(&fm, n);
    F = calloc(1, sizeof(*F));
    assert_non_null(F);
    int rc = fakebridge_new_mem(F, FAKEBRIDGE_NO_SESSION, &a);
    fakebridge_free(F);
    free(F);
    F = NULL;
    assert_true(rc == 0 || rc == DDMC_ENOMEM);
    assert_int_equal(atomic_load(&fm.live), 0);
    if (atomic_load(&fm.failed) == 0) break;
  }
}

static void test_out_of_memory_everywhere(void **state) {
  (void)state;
  failer fm;
  ddmc_allocator a = failer_allocator(&fm);
  long total = 0;
  for (long n = 1;; n++) {
    failer_arm(&fm, n);
    F = calloc(1, sizeof(*F));
    assert_non_null(F);
    if (fakebridge_new_mem(F, 0, &a) == 0) {
      ddmc__buf_init(&g_out, ddmc__dbg_mem(F->d), (size_t)64 << 20);
      oom_script();
      ddmc__buf_free(&g_out);
    }
    int bad = atomic_load(&F->bad_calls);
    fakebridge_free(F);
    free(F);
    F = NULL;
    assert_int_equal(bad, 0);
    if (atomic_load(&fm.live) != 0) fail_msg("allocation %ld failed: %ld blocks left", n, (long)atomic_load(&fm.live));
    if (atomic_load(&fm.failed) == 0) {
      total = n - 1;
      break;
    }
  }
  if (getenv("DDMC_TEST_VERBOSE")) print_message("%ld allocations, each failed once\n", total);
  assert_true(total > 50);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_relay_detach_and_next_debugger, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reset_releases_everything, setup, teardown),
      cmocka_unit_test_setup_teardown(test_vm_start_suspend_y, setup_suspend_y, teardown),
      cmocka_unit_test(test_attach_out_of_memory),
      cmocka_unit_test(test_out_of_memory_everywhere),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
