/* SPDX-License-Identifier: Apache-2.0 */
/* The command table and dispatcher (src/debugger/table.c): an older VM's shorter bridge, and bad
 * input for every command in the table (empty, cut short, junk, extra bytes, huge counts), a
 * refused request having done nothing. */
#include "dbg_fixture.h"
#include "vm_int.h"

/* A VM built against an older, shorter ops table: the missing ops are NOT_IMPLEMENTED. */
static void test_short_ops_table(void **state) {
  (void)state;
  ddmc__dbg *d2;
  assert_int_equal(ddmc__dbg_new(F->fv.vm, &F->bridge, offsetof(ddmc_vm_bridge, set_breakpoint), &d2), 0);
  ddmc__dbg *keep = F->d;
  F->d = d2;
  /* The VM's bridge as an older VM would install it: shorter, the rest NULL. */
  ddmc_vm *vm = F->fv.vm;
  ddmc_vm_bridge saved = vm->bridge;
  size_t cut = offsetof(ddmc_vm_bridge, set_breakpoint);
  memset((char *)&vm->bridge + cut, 0, sizeof(vm->bridge) - cut);
  body m = {.n = 0};
  mod_loc(&m, FD_M_COMPUTE, 5);
  assert_int_equal(set_req(DDMC_EV_BREAKPOINT, 0, &m, 1, NULL), DDMC_JDWP_NOT_IMPLEMENTED);
  ddmc_reader r;
  assert_int_equal(run(1, 4, NULL, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 2);
  /* an ops table from before watchpoints: not offered, and said so */
  assert_int_equal(run(1, 17, NULL, &r), 0);
  assert_int_equal(ddmc_read_u8(&r), 0); /* canWatchFieldModification */
  assert_int_equal(ddmc_read_u8(&r), 0); /* canWatchFieldAccess */
  m.n = 0;
  b_u8(&m, DDMC__MOD_FIELD_ONLY);
  b_u64(&m, cid(FD_C_DEBUG));
  b_u64(&m, fid(FD_C_DEBUG, FD_F_X));
  assert_int_equal(set_req(DDMC_EV_FIELD_MODIFICATION, 0, &m, 1, NULL), DDMC_JDWP_NOT_IMPLEMENTED);
  vm->bridge = saved;
  ddmc__dbg_free(d2);
  F->d = keep;
  assert_int_equal(atomic_load(&F->n_set_bp), 0);
}

/* A valid body for each command that takes one (IDs fetched when called: Dispose resets). */
typedef void (*body_fn)(body *b);

static void bd_sig(body *b) { b_str(b, "LDebug;"); }

static void bd_exit(body *b) { b_u32(b, 0); }

static void bd_str(body *b) { b_str(b, "x"); }

static void bd_dispose(body *b) {
  b_u32(b, 1);
  b_u64(b, oid(FD_O_LABEL));
  b_u32(b, 1);
}

static void bd_class(body *b) { b_u64(b, cid(FD_C_DEBUG)); }

static void bd_class_values(body *b) {
  b_u64(b, cid(FD_C_DEBUG));
  b_u32(b, 2);
  b_u64(b, fid(FD_C_DEBUG, FD_F_COUNTER));
  b_u64(b, fid(FD_C_DEBUG, FD_F_BIG));
}

static void bd_class_set(body *b) {
  b_u64(b, cid(FD_C_DEBUG));
  b_u32(b, 2);
  b_u64(b, fid(FD_C_DEBUG, FD_F_COUNTER));
  b_u32(b, 6);
  b_u64(b, fid(FD_C_DEBUG, FD_F_BIG));
  b_u64(b, 9);
}

static void bd_method(body *b) {
  b_u64(b, cid(FD_C_DEBUG));
  b_u64(b, mid(FD_M_COMPUTE));
}

static void bd_object(body *b) { b_u64(b, oid(FD_O_DEBUG)); }

static void bd_object_values(body *b) {
  b_u64(b, oid(FD_O_DEBUG));
  b_u32(b, 2);
  b_u64(b, fid(FD_C_DEBUG, FD_F_X));
  b_u64(b, fid(FD_C_DEBUG, FD_F_C));
}

static void bd_object_set(body *b) {
  b_u64(b, oid(FD_O_DEBUG));
  b_u32(b, 2);
  b_u64(b, fid(FD_C_DEBUG, FD_F_X));
  b_u32(b, 1);
  b_u64(b, fid(FD_C_DEBUG, FD_F_C));
  b_u16(b, 'z');
}

static void bd_string(body *b) { b_u64(b, oid(FD_O_STR)); }

static void bd_thread(body *b) { b_u64(b, tid(FD_T_WORKER)); }

static void bd_frames(body *b) {
  if (thr_count(FD_T_WORKER) == 0) assert_int_equal(run_id(11, 2, tid(FD_T_WORKER), NULL), 0);
  b_u64(b, tid(FD_T_WORKER));
  b_u32(b, 0);
  b_u32(b, (uint32_t)-1);
}

static void bd_group(body *b) { b_u64(b, oid(FD_O_GROUP_MAIN)); }

static void bd_array(body *b) { b_u64(b, oid(FD_O_ARR)); }

static void bd_array_get(body *b) {
  b_u64(b, oid(FD_O_ARR));
  b_u32(b, 1);
  b_u32(b, 2);
}

static void bd_array_set(body *b) {
  b_u64(b, oid(FD_O_ARR));
  b_u32(b, 1);
  b_u32(b, 2);
  b_u32(b, 5);
  b_u32(b, 6);
}

static void bd_loader(body *b) { b_u64(b, oid(FD_O_DEBUG)); } /* not a loader: still a full body */

static void bd_event_set(body *b) {
  b_u8(b, DDMC_EV_BREAKPOINT);
  b_u8(b, 0);
  b_u32(b, 3);
  b_u8(b, DDMC__MOD_COUNT);
  b_u32(b, 2);
  b_u8(b, DDMC__MOD_CLASS_MATCH);
  b_str(b, "Deb*");
  mod_loc(b, FD_M_COMPUTE, 8);
}

static void bd_event_clear(body *b) {
  b_u8(b, DDMC_EV_BREAKPOINT);
  b_u32(b, 1);
}

static void bd_frame_thread(body *b, int suspend) {
  uint64_t w = tid(FD_T_WORKER);
  if (suspend && thr_count(FD_T_WORKER) == 0) assert_int_equal(run_id(11, 2, w, NULL), 0);
  b_u64(b, w);
  b_u64(b, frame_id(FD_T_WORKER, 1));
}

static void bd_frame_get(body *b) {
  bd_frame_thread(b, 1);
  b_u32(b, 2);
  b_u32(b, 1);
  b_u8(b, 'I');
  b_u32(b, 2);
  b_u8(b, 'J');
}

static void bd_frame_set(body *b) {
  bd_frame_thread(b, 1);
  b_u32(b, 1);
  b_u32(b, 1);
  b_u8(b, 'I');
  b_u32(b, 4);
}

static void bd_frame(body *b) { bd_frame_thread(b, 1); }

static void bd_class_object(body *b) { b_u64(b, oid(FD_O_CLASS_DEBUG)); }

/* The memory view: InstanceCounts of one class, Instances / ReferringObjects with no max. */
static void bd_instance_counts(body *b) {
  b_u32(b, 1);
  b_u64(b, cid(FD_C_DEBUG));
}
static void bd_instances(body *b) {
  bd_class(b);
  b_u32(b, 0);
}
static void bd_referrers(body *b) {
  bd_object(b);
  b_u32(b, 0);
}

static void bd_redefine(body *b) {
  b_u32(b, 1);
  b_u64(b, cid(FD_C_DEBUG));
  b_u32(b, 4);
  b_u8(b, 0xCA);
  b_u8(b, 0xFE);
  b_u8(b, 0xBA);
  b_u8(b, 0xBE);
}

static void bd_force_return(body *b) {
  uint64_t w = tid(FD_T_WORKER);
  if (thr_count(FD_T_WORKER) == 0) assert_int_equal(run_id(11, 2, w, NULL), 0);
  b_u64(b, w);
  b_u8(b, 'I');
  b_u32(b, 7);
}

static void bd_or_invoke(body *b) {
  b_u64(b, oid(FD_O_DEBUG));
  b_u64(b, tid(FD_T_WORKER));
  b_u64(b, cid(FD_C_DEBUG));
  b_u64(b, mid(FD_M_COMPUTE));
  b_u32(b, 1);
  b_u8(b, 'I');
  b_u32(b, 5);
  b_u32(b, DDMC_INVOKE_SINGLE_THREADED);
}

typedef struct cmd_body {
  uint8_t set, cmd;
  body_fn fn;
} cmd_body;

static const cmd_body kBodies[] = {
    {1, 2, bd_sig},        {1, 10, bd_exit},        {1, 11, bd_str},          {1, 14, bd_dispose},
    {2, 1, bd_class},      {2, 2, bd_class},        {2, 3, bd_class},         {2, 4, bd_class},
    {2, 5, bd_class},      {2, 6, bd_class_values}, {2, 7, bd_class},         {2, 8, bd_class},
    {2, 9, bd_class},      {2, 10, bd_class},       {2, 11, bd_class},        {2, 12, bd_class},
    {2, 13, bd_class},     {2, 14, bd_class},       {2, 15, bd_class},        {2, 17, bd_class},
    {3, 1, bd_class},      {3, 2, bd_class_set},    {6, 1, bd_method},        {6, 2, bd_method},
    {6, 4, bd_method},     {6, 5, bd_method},       {9, 1, bd_object},        {9, 2, bd_object_values},
    {9, 3, bd_object_set}, {9, 7, bd_object},       {9, 8, bd_object},        {9, 9, bd_object},
    {10, 1, bd_string},    {11, 1, bd_thread},      {11, 2, bd_thread},       {11, 3, bd_thread},
    {11, 4, bd_thread},    {11, 5, bd_thread},      {11, 6, bd_frames},       {11, 7, bd_thread},
    {11, 12, bd_thread},   {11, 15, bd_thread},     {12, 1, bd_group},        {12, 2, bd_group},
    {12, 3, bd_group},     {13, 1, bd_array},       {13, 2, bd_array_get},    {13, 3, bd_array_set},
    {14, 1, bd_loader},    {15, 1, bd_event_set},   {15, 2, bd_event_clear},  {16, 1, bd_frame_get},
    {16, 2, bd_frame_set}, {16, 3, bd_frame},       {17, 1, bd_class_object}, {3, 3, bd_ct_invoke},
    {5, 1, bd_ct_invoke},  {9, 6, bd_or_invoke},    {3, 4, bd_new_instance},  {4, 1, bd_new_array},
    {11, 10, bd_stop},     {11, 11, bd_thread},     {9, 5, bd_object},        {11, 8, bd_thread},
    {11, 9, bd_thread},    {11, 13, bd_thread},     {1, 21, bd_instance_counts}, {2, 16, bd_instances},
    {9, 10, bd_referrers}, {1, 18, bd_redefine},    {16, 4, bd_frame},        {11, 14, bd_force_return},
    {1, 19, bd_str},       {2, 18, bd_class},       {2, 19, bd_class},        {6, 3, bd_method},
    {18, 1, bd_object},    {18, 2, bd_object},
};

/* Reflection the fake VM has no op for (bridge.h): the full body answers NOT_IMPLEMENTED. */
/* The fake has no reflection ops and no heap walk (the memory view). */
static int fake_lacks_op(uint8_t set, uint8_t cmd) {
  return (set == 1 && (cmd == 19 || cmd == 21)) || (set == 2 && cmd == 16) || (set == 9 && cmd == 10) ||
         (set == 1 && cmd == 19) || (set == 2 && (cmd == 18 || cmd == 19)) || (set == 6 && cmd == 3) || set == 18;
}

static body_fn body_of(uint8_t set, uint8_t cmd) {
  for (size_t i = 0; i < sizeof(kBodies) / sizeof(kBodies[0]); i++)
    if (kBodies[i].set == set && kBodies[i].cmd == cmd) return kBodies[i].fn;
  return NULL;
}

/* Commands that take no body, and those that are not offered (their body is skipped whole). */
static int takes_nothing(uint8_t set, uint8_t cmd) {
  static const uint8_t none[][2] = {{1, 1},  {1, 3},  {1, 4},  {1, 5},  {1, 6},  {1, 7},  {1, 8}, {1, 9},
                                    {1, 12}, {1, 13}, {1, 15}, {1, 16}, {1, 17}, {1, 20}, {15, 3}};
  for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++)
    if (none[i][0] == set && none[i][1] == cmd) return 1;
  return 0;
}

static void after_command(uint8_t set, uint8_t cmd) {
  if (set == 1 && cmd == 6) fakebridge_reconnect(F); /* Dispose ended the session */
}

static void test_bad_input_every_command(void **state) {
  (void)state;
  int exits = 0, commands = 0;
  uint8_t junk[64];
  for (size_t i = 0; i < sizeof(junk); i++) junk[i] = (uint8_t)(0x5a ^ (i * 37));
  for (int set = 1; set <= 18; set++) {
    for (int cmd = 0; cmd < 32; cmd++) {
      const ddmc__dbg_cmd *c = ddmc__dbg_lookup((uint8_t)set, (uint8_t)cmd);
      if (c == NULL) {
        assert_int_equal(run_raw((uint8_t)set, (uint8_t)cmd, NULL, 0, NULL), DDMC_JDWP_NOT_IMPLEMENTED);
        continue;
      }
      commands++;
      assert_int_equal(c->set, set);
      assert_int_equal(c->cmd, cmd);
      assert_non_null(c->name);
      body_fn fn = body_of((uint8_t)set, (uint8_t)cmd);
      int none = takes_nothing((uint8_t)set, (uint8_t)cmd);
      /* Empty body. */
      int rc = run_raw((uint8_t)set, (uint8_t)cmd, NULL, 0, NULL);
      after_command((uint8_t)set, (uint8_t)cmd);
      if (none)
        assert_int_equal(rc, 0);
      else if (fn != NULL)
        assert_int_equal(rc, DDMC_JDWP_INVALID_LENGTH);
      else
        assert_int_equal(rc, DDMC_JDWP_NOT_IMPLEMENTED); /* not offered */
      /* Junk of every length up to 64 bytes: any answer, no crash, nothing the fake rejects. */
      if (!(set == 1 && cmd == 10)) {
        for (size_t n = 1; n <= sizeof(junk); n++) {
          run_raw((uint8_t)set, (uint8_t)cmd, junk, n, NULL);
          after_command((uint8_t)set, (uint8_t)cmd);
        }
      }
      if (fn == NULL) {
        /* Extra bytes after an empty request. */
        rc = run_raw((uint8_t)set, (uint8_t)cmd, junk, 3, NULL);
        after_command((uint8_t)set, (uint8_t)cmd);
        if (none) assert_int_equal(rc, DDMC_JDWP_ILLEGAL_ARGUMENT);
        continue;
      }
      /* The full body works (or answers a documented error), every prefix is an error, and
       * extra bytes are an error. */
      body b = {.n = 0};
      fn(&b);
      rc = run((uint8_t)set, (uint8_t)cmd, &b, NULL);
      after_command((uint8_t)set, (uint8_t)cmd);
      if (set == 1 && cmd == 10) exits++;
      if (set == 14 && cmd == 1)
        assert_int_equal(rc, DDMC_JDWP_INVALID_CLASS_LOADER);
      else if (set == 2 && (cmd == 12 || cmd == 17))
        assert_int_equal(rc, DDMC_JDWP_ABSENT_INFORMATION);
      else if (fake_lacks_op((uint8_t)set, (uint8_t)cmd))
        assert_int_equal(rc, DDMC_JDWP_NOT_IMPLEMENTED);
      else if ((set == 3 && (cmd == 3 || cmd == 4)) || (set == 5 && cmd == 1) || (set == 9 && cmd == 6))
        assert_int_equal(rc, DDMC_JDWP_INVALID_THREAD); /* no event holds the thread */
      else if (rc != 0)
        fail_msg("%s with a full body answered %d", c->name, rc);
      for (size_t n = 0; n < b.n; n++) {
        body t = {.n = 0};
        fn(&t);
        t.n = n;
        rc = run((uint8_t)set, (uint8_t)cmd, &t, NULL);
        after_command((uint8_t)set, (uint8_t)cmd);
        if (rc == 0) fail_msg("%s with %zu of %zu bytes answered 0", c->name, n, t.n);
        /* EventRequest.Set answers a modifier count past the bytes with ILLEGAL_ARGUMENT */
        if (rc != DDMC_JDWP_INVALID_LENGTH && rc != DDMC_JDWP_ILLEGAL_ARGUMENT)
          fail_msg("%s with %zu of %zu bytes answered %d, not INVALID_LENGTH", c->name, n, b.n, rc);
      }
      body x = {.n = 0};
      fn(&x);
      b_u32(&x, 0xdeadbeef);
      rc = run((uint8_t)set, (uint8_t)cmd, &x, NULL);
      after_command((uint8_t)set, (uint8_t)cmd);
      if (set == 1 && cmd == 10 && rc == 0) exits++;
      if (rc == 0) fail_msg("%s with 4 extra bytes answered 0", c->name);
    }
  }
  assert_true(commands >= 80);
  WAIT_FOR(atomic_load(&F->n_exit) >= exits);
  sleep_ms(10);
}

/* A request refused for its extra bytes must not have been acted upon: the debugger got an
 * error, no request ID, and cannot undo it. */
static void test_bad_input_no_effect_on_error(void **state) {
  (void)state;
  body b = {.n = 0};
  b_u8(&b, DDMC_EV_BREAKPOINT);
  b_u8(&b, 0);
  b_u32(&b, 1);
  mod_loc(&b, FD_M_COMPUTE, 8);
  b_u8(&b, 0); /* one byte too many */
  assert_int_equal(run(15, 1, &b, NULL), DDMC_JDWP_ILLEGAL_ARGUMENT);
  assert_int_equal(atomic_load(&F->n_set_bp), 0);
  assert_false(fakebridge_has_bp(F, FD_C_DEBUG, FD_M_COMPUTE, 8));

  b.n = 0;
  b_u64(&b, tid(FD_T_MAIN));
  b_u8(&b, 0);
  assert_int_equal(run(11, 2, &b, NULL), DDMC_JDWP_ILLEGAL_ARGUMENT);
  assert_int_equal(thr_count(FD_T_MAIN), 0);
  assert_int_equal(atomic_load(&F->n_suspend), 0);
}

/* Counts from the wire are checked before anything is allocated or looped over. */
static void test_bad_input_huge_counts(void **state) {
  (void)state;
  body b = {.n = 0};
  b_u64(&b, oid(FD_O_DEBUG));
  b_u32(&b, 0xffffffffu);
  assert_int_equal(run(9, 2, &b, NULL), DDMC_JDWP_INVALID_LENGTH);
  assert_int_equal(run(9, 3, &b, NULL), DDMC_JDWP_INVALID_LENGTH);
  b.n = 0;
  b_u64(&b, cid(FD_C_DEBUG));
  b_u32(&b, 0x7fffffffu);
  assert_int_equal(run(2, 6, &b, NULL), DDMC_JDWP_INVALID_LENGTH);
  assert_int_equal(run(3, 2, &b, NULL), DDMC_JDWP_INVALID_LENGTH);
  b.n = 0;
  b_u32(&b, 0x10000000u);
  assert_int_equal(run(1, 14, &b, NULL), DDMC_JDWP_INVALID_LENGTH);
  b.n = 0;
  b_u32(&b, 0xffffffffu);
  assert_int_equal(run(1, 11, &b, NULL), DDMC_JDWP_INVALID_LENGTH);
  assert_int_equal(run(1, 2, &b, NULL), DDMC_JDWP_INVALID_LENGTH);
  b.n = 0;
  b_u8(&b, DDMC_EV_BREAKPOINT);
  b_u8(&b, 0);
  b_u32(&b, 0xffffffffu);
  assert_int_equal(run(15, 1, &b, NULL), DDMC_JDWP_ILLEGAL_ARGUMENT);
  /* ArrayReference.SetValues whose count exceeds the values sent */
  b.n = 0;
  b_u64(&b, oid(FD_O_ARR));
  b_u32(&b, 0);
  b_u32(&b, 5);
  b_u32(&b, 1);
  assert_int_equal(run(13, 3, &b, NULL), DDMC_JDWP_INVALID_LENGTH);
  /* a signature longer than the reader's buffer */
  b.n = 0;
  b_u32(&b, 5000);
  memset(b.p + b.n, 'a', 2000);
  b.n += 2000;
  assert_int_equal(run(1, 2, &b, NULL), DDMC_JDWP_INVALID_LENGTH);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_short_ops_table, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bad_input_every_command, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bad_input_no_effect_on_error, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bad_input_huge_counts, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
