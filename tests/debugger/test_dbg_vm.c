/* SPDX-License-Identifier: Apache-2.0 */
/* VirtualMachine (command set 1, src/debugger/cmd_vm.c): version, ID sizes, classes, threads and
 * groups, capabilities, CreateString, Exit. */
#include <stdlib.h>

#include "dbg_fixture.h"

static void test_vm_commands(void **state) {
  (void)state;
  ddmc_reader r;
  assert_int_equal(run(1, 1, NULL, &r), 0);
  assert_non_null(strstr(rd_str(&r), "libddmc"));
  assert_int_equal(ddmc_read_u32(&r), 1);
  assert_int_equal(ddmc_read_u32(&r), 8);
  assert_string_equal(rd_str(&r), ddmc_version_string());
  rd_str(&r);
  assert_int_equal(ddmc_reader_done(&r), 0);

  assert_int_equal(run(1, 7, NULL, &r), 0);
  for (int i = 0; i < 5; i++) assert_int_equal(ddmc_read_u32(&r), 8);
  assert_int_equal(ddmc_reader_done(&r), 0);

  for (int generic = 0; generic < 2; generic++) {
    assert_int_equal(run(1, generic ? 20 : 3, NULL, &r), 0);
    assert_int_equal(ddmc_read_u32(&r), FD_NCLASSES);
    int seen = 0;
    for (int i = 0; i < FD_NCLASSES; i++) {
      uint8_t tag = ddmc_read_u8(&r);
      uint64_t id = ddmc_read_u64(&r);
      char *sig = rd_str(&r);
      if (generic) assert_string_equal(rd_str(&r), "");
      assert_int_equal(ddmc_read_u32(&r), 7);
      for (ddmc_class c = FD_C_OBJECT; c < FD_C_END; c++)
        if (strcmp(cls(c)->signature, sig) == 0) {
          assert_true(cls(c)->id == id);
          seen |= 1 << (c - FD_C_OBJECT);
        }
      if (strcmp(sig, "[I") == 0)
        assert_int_equal(tag, DDMC_TYPE_ARRAY);
      else if (strcmp(sig, "Ljava/lang/Runnable;") == 0)
        assert_int_equal(tag, DDMC_TYPE_INTERFACE);
      else
        assert_int_equal(tag, DDMC_TYPE_CLASS);
    }
    assert_int_equal(seen, (1 << FD_NCLASSES) - 1);
    assert_int_equal(ddmc_reader_done(&r), 0);
  }

  body b = {.n = 0};
  b_str(&b, "[I");
  assert_int_equal(run(1, 2, &b, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 1);
  assert_int_equal(ddmc_read_u8(&r), DDMC_TYPE_ARRAY);
  assert_true(ddmc_read_u64(&r) == cid(FD_C_INT_ARRAY));
  assert_int_equal(ddmc_read_u32(&r), 7);
  assert_int_equal(ddmc_reader_done(&r), 0);
  b.n = 0;
  b_str(&b, "LNope;");
  assert_int_equal(run(1, 2, &b, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 0);

  assert_int_equal(run(1, 4, NULL, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 2); /* JDWP (internal) is not shown */
  atomic_store(&F->worker_dead, 1);
  assert_int_equal(run(1, 4, NULL, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 1);
  assert_true(ddmc_read_u64(&r) == tid(FD_T_MAIN));
  atomic_store(&F->worker_dead, 0);

  assert_int_equal(run(1, 5, NULL, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 1);
  assert_true(ddmc_read_u64(&r) == oid(FD_O_GROUP_SYSTEM));
  assert_int_equal(ddmc_reader_done(&r), 0);

  assert_int_equal(run(1, 12, NULL, &r), 0);
  assert_int_equal(ddmc_reader_left(&r), 7);
  assert_int_equal(run(1, 17, NULL, &r), 0);
  assert_int_equal(ddmc_reader_left(&r), 32);
  const uint8_t *caps = ddmc_read_bytes(&r, 32);
  assert_int_equal(caps[0], 1); /* canWatchFieldModification: the fake has set_field_watch */
  assert_int_equal(caps[1], 1);
  assert_int_equal(caps[4], 1);  /* canGetOwnedMonitorInfo */
  assert_int_equal(caps[5], 1);  /* canGetCurrentContendedMonitor */
  assert_int_equal(caps[6], 1);  /* canGetMonitorInfo */
  assert_int_equal(caps[7], 1);  /* canRedefineClasses: the fake has redefine_classes */
  assert_int_equal(caps[8], 0);  /* canAddMethod: never */
  assert_int_equal(caps[9], 0);  /* canUnrestrictedlyRedefineClasses: never */
  assert_int_equal(caps[10], 1); /* canPopFrames */
  assert_int_equal(caps[20], 1); /* canForceEarlyReturn */
  assert_int_equal(caps[16], 0); /* canRequestMonitorEvents */
  assert_int_equal(caps[17], 1); /* canGetMonitorFrameInfo */
  assert_int_equal(caps[18], 1); /* canUseSourceNameFilters */
  assert_int_equal(caps[19], 0); /* canGetConstantPool (was set by mistake for 18) */

  b.n = 0;
  b_str(&b, "new \xe2\x98\x83");
  assert_int_equal(run(1, 11, &b, &r), 0);
  uint64_t s = ddmc_read_u64(&r);
  assert_int_equal(run_id(10, 1, s, &r), 0);
  assert_string_equal(rd_str(&r), "new \xe2\x98\x83");

  assert_int_equal(run(1, 13, NULL, &r), 0); /* ClassPaths */
}

/* With for_each_debuggee_thread the library lists threads by it, not by thread_info per thread:
 * the same AllThreads, and SuspendAll / ResumeAll reach the same threads. */
static void test_thread_objects(void **state) {
  (void)state;
  ddmc_reader r;
  assert_int_equal(run(1, 4, NULL, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 2); /* JDWP (internal) is not shown */
  uint64_t a = ddmc_read_u64(&r), b = ddmc_read_u64(&r);
  assert_true((a == tid(FD_T_MAIN) && b == tid(FD_T_WORKER)) || (a == tid(FD_T_WORKER) && b == tid(FD_T_MAIN)));
  assert_int_equal(ddmc_reader_done(&r), 0);
  assert_true(atomic_load(&F->n_thread_objects) >= 1);

  atomic_store(&F->worker_dead, 1);
  assert_int_equal(run(1, 4, NULL, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 1);
  assert_true(ddmc_read_u64(&r) == tid(FD_T_MAIN));
  atomic_store(&F->worker_dead, 0);

  int before = atomic_load(&F->n_thread_objects);
  assert_int_equal(run(1, 8, NULL, NULL), 0); /* Suspend */
  assert_true(atomic_load(&F->n_thread_objects) > before);
  assert_int_equal(atomic_load(&F->vm_suspended[FD_T_MAIN]), 1);
  assert_int_equal(atomic_load(&F->vm_suspended[FD_T_WORKER]), 1);
  assert_int_equal(atomic_load(&F->vm_suspended[FD_T_JDWP]), 0);
  assert_int_equal(run(1, 9, NULL, NULL), 0); /* Resume */
  assert_int_equal(atomic_load(&F->vm_suspended[FD_T_MAIN]), 0);
  assert_int_equal(atomic_load(&F->vm_suspended[FD_T_WORKER]), 0);

  assert_int_equal(run_id(11, 1, tid(FD_T_WORKER), &r), 0); /* ThreadReference.Name */
  assert_string_equal(rd_str(&r), "Worker");
}

static void redefine_body(body *b, ddmc_class c, const uint8_t *bytes, uint32_t n) {
  b->n = 0;
  b_u32(b, 1);
  b_u64(b, cid(c));
  b_u32(b, n);
  for (uint32_t i = 0; i < n; i++) b_u8(b, bytes[i]);
}

/* RedefineClasses: the VM's errors as they are, an array type and an empty class file refused
 * before the VM sees them, too many classes refused; after a redefinition the breakpoint
 * requests in the class are gone (the VM cleared them), as the JDK's agent drops them. */
static void test_redefine(void **state) {
  (void)state;
  ddmc_reader r;
  body b = {.n = 0};
  static const uint8_t good[] = {0xCA, 0xFE, 0xBA, 0xBE, 0, 0, 0, 52};
  static const uint8_t bad[] = {'n', 'o', 't', ' ', 'a', ' ', 'c', 'l'};
  b_u8(&b, DDMC_EV_BREAKPOINT);
  b_u8(&b, 0);
  b_u32(&b, 1);
  mod_loc(&b, FD_M_COMPUTE, 5);
  assert_int_equal(run(15, 1, &b, &r), 0);
  assert_true(fakebridge_has_bp(F, FD_C_DEBUG, FD_M_COMPUTE, 5));

  redefine_body(&b, FD_C_DEBUG, bad, sizeof bad);
  assert_int_equal(run(1, 18, &b, &r), DDMC_JDWP_INVALID_CLASS_FORMAT);
  assert_true(fakebridge_has_bp(F, FD_C_DEBUG, FD_M_COMPUTE, 5)); /* refused: nothing changed */
  redefine_body(&b, FD_C_INT_ARRAY, good, sizeof good);
  assert_int_equal(run(1, 18, &b, &r), DDMC_JDWP_INVALID_CLASS);
  redefine_body(&b, FD_C_DEBUG, good, 0);
  assert_int_equal(run(1, 18, &b, &r), DDMC_JDWP_INVALID_CLASS_FORMAT);
  int calls = atomic_load(&F->n_redefine);
  /* More classes than one request may name (4096), each with a whole entry. */
  size_t big = 4 + 5000 * 12;
  uint8_t *p = calloc(1, big);
  assert_non_null(p);
  ddmc__put_u32(p, 5000);
  for (int i = 0; i < 5000; i++) {
    ddmc__put_u32(p + 4 + (size_t)i * 12, (uint32_t)(cid(FD_C_DEBUG) >> 32));
    ddmc__put_u32(p + 8 + (size_t)i * 12, (uint32_t)cid(FD_C_DEBUG));
  }
  assert_int_equal(run_raw(1, 18, p, big, &r), DDMC_JDWP_ILLEGAL_ARGUMENT);
  free(p);
  assert_int_equal(atomic_load(&F->n_redefine), calls);

  redefine_body(&b, FD_C_DEBUG, good, sizeof good);
  assert_int_equal(run(1, 18, &b, &r), 0);
  assert_false(fakebridge_has_bp(F, FD_C_DEBUG, FD_M_COMPUTE, 5));
  b.n = 0;
  b_u8(&b, DDMC_EV_BREAKPOINT);
  b_u32(&b, 1);
  assert_int_equal(run(15, 2, &b, &r), 0); /* JDI's Clear of the dropped request: no error */
  /* A new breakpoint there reaches the VM again. */
  b.n = 0;
  b_u8(&b, DDMC_EV_BREAKPOINT);
  b_u8(&b, 0);
  b_u32(&b, 1);
  mod_loc(&b, FD_M_COMPUTE, 5);
  assert_int_equal(run(15, 1, &b, &r), 0);
  assert_true(fakebridge_has_bp(F, FD_C_DEBUG, FD_M_COMPUTE, 5));
}

static void test_exit(void **state) {
  (void)state;
  body b = {.n = 0};
  b_u32(&b, 3);
  assert_int_equal(run(1, 10, &b, NULL), 0);
  WAIT_FOR(atomic_load(&F->n_exit) == 1);
  assert_int_equal(atomic_load(&F->last_exit), 3);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_vm_commands, setup, teardown),
      cmocka_unit_test_setup_teardown(test_exit, setup, teardown),
      cmocka_unit_test_setup_teardown(test_redefine, setup, teardown),
      cmocka_unit_test_setup_teardown(test_thread_objects, setup_thread_objects, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
