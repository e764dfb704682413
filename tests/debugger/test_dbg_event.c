/* SPDX-License-Identifier: Apache-2.0 */
/* Event requests and matching (src/debugger/cmd_event.c, requests.c, events.c): class patterns,
 * breakpoints counted per location and shared with an agent, modifiers (Count, ThreadOnly,
 * class filters, InstanceOnly, ExceptionOnly, FieldOnly, SourceNameMatch), composites and their
 * policy, HoldEvents, every event kind, and VM threads posting while requests change. */
#include "dbg_fixture.h"

#include <time.h>

#include "vmctl/switches.h"

static void test_pattern_match(void **state) {
  (void)state;
  assert_true(ddmc__dbg_pattern_match("java.*", "java.lang.String"));
  assert_true(ddmc__dbg_pattern_match("*String", "java.lang.String"));
  assert_true(ddmc__dbg_pattern_match("java.lang.String", "java.lang.String"));
  assert_true(ddmc__dbg_pattern_match("*", "anything"));
  assert_true(ddmc__dbg_pattern_match("*", ""));
  assert_true(ddmc__dbg_pattern_match("", ""));
  assert_true(ddmc__dbg_pattern_match("Deb*", "Debug"));
  assert_true(ddmc__dbg_pattern_match("*ebug", "Debug"));
  assert_true(ddmc__dbg_pattern_match("Debug*", "Debug"));
  assert_true(ddmc__dbg_pattern_match("*Debug", "Debug"));
  assert_false(ddmc__dbg_pattern_match("java.*", "javax.swing.JFrame"));
  assert_false(ddmc__dbg_pattern_match("java.*", "java"));
  assert_false(ddmc__dbg_pattern_match("*.String", "String"));
  assert_false(ddmc__dbg_pattern_match("a*", ""));
  assert_false(ddmc__dbg_pattern_match("Debug", "Debug2"));
  assert_false(ddmc__dbg_pattern_match("", "x"));
  assert_false(ddmc__dbg_pattern_match("*Debug", "Debu"));
}

/* ClassMatch compares the dotted name, made from the signature when asked: arrays, primitives,
 * and a name longer than the matcher's stack buffer. */
static void test_class_pattern_names(void **state) {
  (void)state;
  char sig[700];
  ddmc__dbg_cls k = {.signature = "[[Lp/Q$R;"};
  assert_true(ddmc__dbg_cls_matches(F->d, &k, "p.Q$R[][]"));
  assert_true(ddmc__dbg_cls_matches(F->d, &k, "p.*"));
  assert_false(ddmc__dbg_cls_matches(F->d, &k, "p.Q$R"));
  k.signature = "[I";
  assert_true(ddmc__dbg_cls_matches(F->d, &k, "int[]"));
  k.signature = "LDebug;";
  assert_true(ddmc__dbg_cls_matches(F->d, &k, "Debug"));
  assert_false(ddmc__dbg_cls_matches(F->d, &k, "LDebug;"));
  sig[0] = 'L';
  for (int i = 1; i < 600; i++) sig[i] = i % 10 == 0 ? '/' : 'a';
  memcpy(sig + 600, "Z;", 3);
  k.signature = sig;
  assert_true(ddmc__dbg_cls_matches(F->d, &k, "*aaaaaaaaa.aaaaaaaaaZ"));
  assert_true(ddmc__dbg_cls_matches(F->d, &k, "aaaaaaaaa.aaaa*"));
  assert_false(ddmc__dbg_cls_matches(F->d, &k, "*aaaa/aaaaZ"));
}

/* Switches shared with another client (an agent, src/vmctl): the debugger's clearing leaves the
 * other's breakpoint, watch and stepping in place; the VM is told once each way. */
static void test_switches_shared_with_agent(void **state) {
  (void)state;
  ddmc_location loc = {(ddmc_class)FD_C_DEBUG, FD_M_COMPUTE, 5};
  assert_int_equal(ddmc__ctl_breakpoint(F->fv.vm, &loc, 1), 0); /* the agent's */
  body m = {.n = 0};
  mod_loc(&m, FD_M_COMPUTE, 5);
  int32_t a;
  assert_int_equal(set_req(DDMC_EV_BREAKPOINT, 0, &m, 1, &a), 0);
  assert_int_equal(atomic_load(&F->n_set_bp), 1);
  assert_int_equal(clear_req(DDMC_EV_BREAKPOINT, a), 0);
  assert_int_equal(atomic_load(&F->n_clear_bp), 0);
  assert_true(fakebridge_has_bp(F, FD_C_DEBUG, FD_M_COMPUTE, 5));
  assert_int_equal(run(15, 3, NULL, NULL), 0); /* ClearAllBreakpoints: the debugger's only */
  assert_true(fakebridge_has_bp(F, FD_C_DEBUG, FD_M_COMPUTE, 5));
  assert_int_equal(ddmc__ctl_breakpoint(F->fv.vm, &loc, 0), 0);
  assert_int_equal(atomic_load(&F->n_clear_bp), 1);
  assert_false(fakebridge_has_bp(F, FD_C_DEBUG, FD_M_COMPUTE, 5));
  /* turning off what is not on changes nothing */
  assert_int_equal(ddmc__ctl_breakpoint(F->fv.vm, &loc, 0), 0);
  assert_int_equal(atomic_load(&F->n_clear_bp), 1);
  /* stepping: two reasons on one thread, one set_stepping each way */
  uint32_t t = FD_T_MAIN;
  int before = atomic_load(&F->n_set_step);
  assert_int_equal(ddmc__ctl_stepping(F->fv.vm, t, DDMC__ME_AGENT, 1), 0);
  assert_int_equal(ddmc__ctl_stepping(F->fv.vm, t, DDMC__ME_DEBUGGER, 1), 0);
  assert_int_equal(ddmc__ctl_stepping(F->fv.vm, t, DDMC__ME_DEBUGGER, 0), 0);
  assert_int_equal(atomic_load(&F->n_set_step), before + 1);
  assert_int_equal(ddmc__ctl_stepping(F->fv.vm, t, DDMC__ME_AGENT, 0), 0);
  assert_int_equal(atomic_load(&F->n_set_step), before + 2);
}

static void test_breakpoints_counted_per_location(void **state) {
  (void)state;
  body m = {.n = 0};
  mod_loc(&m, FD_M_COMPUTE, 5);
  int32_t a, b, c;
  assert_int_equal(set_req(DDMC_EV_BREAKPOINT, 0, &m, 1, &a), 0);
  assert_int_equal(set_req(DDMC_EV_BREAKPOINT, 0, &m, 1, &b), 0);
  assert_true(a != b && a > 0 && b > 0);
  assert_int_equal(atomic_load(&F->n_set_bp), 1);
  assert_true(fakebridge_has_bp(F, FD_C_DEBUG, FD_M_COMPUTE, 5));
  assert_true(ddmc_event_wanted(F->fv.vm, DDMC_EV_BREAKPOINT));
  /* another location: its own set */
  body m2 = {.n = 0};
  mod_loc(&m2, FD_M_MAIN, 0);
  assert_int_equal(set_req(DDMC_EV_BREAKPOINT, 0, &m2, 1, &c), 0);
  assert_int_equal(atomic_load(&F->n_set_bp), 2);
  /* clearing one of two keeps it; a wrong kind or unknown id clears nothing */
  assert_int_equal(clear_req(DDMC_EV_BREAKPOINT, a), 0);
  assert_int_equal(atomic_load(&F->n_clear_bp), 0);
  assert_true(fakebridge_has_bp(F, FD_C_DEBUG, FD_M_COMPUTE, 5));
  assert_int_equal(clear_req(DDMC_EV_SINGLE_STEP, b), 0);
  assert_int_equal(clear_req(DDMC_EV_BREAKPOINT, a), 0);
  assert_int_equal(clear_req(DDMC_EV_BREAKPOINT, 9999), 0);
  assert_int_equal(atomic_load(&F->n_clear_bp), 0);
  assert_int_equal(clear_req(DDMC_EV_BREAKPOINT, b), 0);
  assert_int_equal(atomic_load(&F->n_clear_bp), 1);
  assert_false(fakebridge_has_bp(F, FD_C_DEBUG, FD_M_COMPUTE, 5));
  assert_true(fakebridge_has_bp(F, FD_C_DEBUG, FD_M_MAIN, 0));
  /* ClearAllBreakpoints */
  assert_int_equal(run(15, 3, NULL, NULL), 0);
  assert_int_equal(atomic_load(&F->n_clear_bp), 2);
  assert_int_equal(F->nbps, 0);
  assert_false(ddmc_event_wanted(F->fv.vm, DDMC_EV_BREAKPOINT));
  /* bad requests: no location, an index outside the method, a bad policy, a bad kind */
  assert_int_equal(set_req(DDMC_EV_BREAKPOINT, 0, NULL, 0, NULL), DDMC_JDWP_ILLEGAL_ARGUMENT);
  body bad = {.n = 0};
  mod_loc(&bad, FD_M_COMPUTE, 11);
  assert_int_equal(set_req(DDMC_EV_BREAKPOINT, 0, &bad, 1, NULL), DDMC_JDWP_INVALID_LOCATION);
  bad.n = 0;
  mod_loc(&bad, FD_M_COMPUTE, -1);
  assert_int_equal(set_req(DDMC_EV_BREAKPOINT, 0, &bad, 1, NULL), DDMC_JDWP_INVALID_LOCATION);
  assert_int_equal(set_req(DDMC_EV_BREAKPOINT, 3, &m, 1, NULL), DDMC_JDWP_ILLEGAL_ARGUMENT);
  assert_int_equal(set_req(77, 0, NULL, 0, NULL), DDMC_JDWP_INVALID_EVENT_TYPE);
  assert_int_equal(set_req(DDMC_EV_FIELD_ACCESS, 0, NULL, 0, NULL), DDMC_JDWP_ILLEGAL_ARGUMENT); /* no field */
  /* a watchpoint on a field ID that names no field of the class, or a field of another class */
  static const uint64_t bad_fields[3] = {0x7777777777ull, 0, 0};
  for (int i = 0; i < 3; i++) {
    bad.n = 0;
    b_u8(&bad, DDMC__MOD_FIELD_ONLY);
    b_u64(&bad, cid(FD_C_DEBUG));
    b_u64(&bad, i == 0 ? bad_fields[0] : i == 1 ? fid(FD_C_DEBUG, FD_NFIELDS) : fid(FD_C_THREAD, 0));
    assert_int_equal(set_req(i == 2 ? DDMC_EV_FIELD_MODIFICATION : DDMC_EV_FIELD_ACCESS, 0, &bad, 1, NULL),
                     DDMC_JDWP_INVALID_FIELDID);
  }
  /* a modifier the kind does not take */
  bad.n = 0;
  b_u8(&bad, DDMC__MOD_FIELD_ONLY);
  b_u64(&bad, cid(FD_C_DEBUG));
  b_u64(&bad, fid(FD_C_DEBUG, FD_F_X));
  assert_int_equal(set_req(DDMC_EV_BREAKPOINT, 0, &bad, 1, NULL), DDMC_JDWP_ILLEGAL_ARGUMENT);
  bad.n = 0;
  b_u8(&bad, DDMC__MOD_COUNT);
  b_u32(&bad, 0);
  assert_int_equal(set_req(DDMC_EV_THREAD_START, 0, &bad, 1, NULL), DDMC_JDWP_INVALID_COUNT);
  bad.n = 0;
  b_u8(&bad, DDMC__MOD_CONDITIONAL);
  b_u32(&bad, 1);
  assert_int_equal(set_req(DDMC_EV_THREAD_START, 0, &bad, 1, NULL), DDMC_JDWP_NOT_IMPLEMENTED);
  assert_int_equal(atomic_load(&F->n_set_bp), 2);
}

static void test_count_modifier(void **state) {
  (void)state;
  body m = {.n = 0};
  b_u8(&m, DDMC__MOD_COUNT);
  b_u32(&m, 3);
  mod_loc(&m, FD_M_COMPUTE, 5);
  int32_t id;
  assert_int_equal(set_req(DDMC_EV_BREAKPOINT, 0, &m, 2, &id), 0);
  int hits[6];
  for (int i = 0; i < 6; i++) {
    assert_int_equal(post(FD_T_MAIN, FD_M_COMPUTE, 5, 1, DDMC_POST_AT_BREAKPOINT), 0);
    hits[i] = events();
  }
  assert_int_equal(hits[0] + hits[1], 0);
  assert_int_equal(hits[2], 1);
  assert_int_equal(hits[3] + hits[4] + hits[5], 0);
  /* Count after a filter: only events that passed the filter are counted. */
  m.n = 0;
  b_u8(&m, DDMC__MOD_THREAD_ONLY);
  b_u64(&m, tid(FD_T_WORKER));
  b_u8(&m, DDMC__MOD_COUNT);
  b_u32(&m, 2);
  mod_loc(&m, FD_M_COMPUTE, 8);
  assert_int_equal(set_req(DDMC_EV_BREAKPOINT, 0, &m, 3, &id), 0);
  for (int i = 0; i < 5; i++) assert_int_equal(post(FD_T_MAIN, FD_M_COMPUTE, 8, 1, DDMC_POST_AT_BREAKPOINT), 0);
  assert_int_equal(events(), 0);
  assert_int_equal(post(FD_T_WORKER, FD_M_COMPUTE, 8, 1, DDMC_POST_AT_BREAKPOINT), 0);
  assert_int_equal(events(), 0);
  assert_int_equal(post(FD_T_WORKER, FD_M_COMPUTE, 8, 1, DDMC_POST_AT_BREAKPOINT), 0);
  assert_int_equal(events(), 1);
  assert_int_equal(g_comp[0].e[0].req, id);
}

static void test_thread_only_and_composite(void **state) {
  (void)state;
  body m = {.n = 0};
  b_u8(&m, DDMC__MOD_THREAD_ONLY);
  b_u64(&m, tid(FD_T_WORKER));
  mod_loc(&m, FD_M_COMPUTE, 8);
  int32_t bp;
  assert_int_equal(set_req(DDMC_EV_BREAKPOINT, 0, &m, 2, &bp), 0);
  /* the wrong thread, the wrong location, no breakpoint flag */
  assert_int_equal(post(FD_T_MAIN, FD_M_COMPUTE, 8, 1, DDMC_POST_AT_BREAKPOINT), 0);
  assert_int_equal(post(FD_T_WORKER, FD_M_COMPUTE, 5, 1, DDMC_POST_AT_BREAKPOINT), 0);
  assert_int_equal(post(FD_T_WORKER, FD_M_COMPUTE, 8, 1, 0), 0);
  assert_int_equal(events(), 0);
  assert_int_equal(post(FD_T_WORKER, FD_M_COMPUTE, 8, 2, DDMC_POST_AT_BREAKPOINT), 0);
  assert_int_equal(events(), 1);
  const comp *c = &g_comp[0];
  assert_int_equal(c->policy, 0);
  assert_int_equal(c->n, 1);
  assert_int_equal(c->e[0].kind, DDMC_EV_BREAKPOINT);
  assert_int_equal(c->e[0].req, bp);
  assert_true(c->e[0].thread == tid(FD_T_WORKER));
  assert_int_equal(c->e[0].tag, DDMC_TYPE_CLASS);
  assert_true(c->e[0].cls == cid(FD_C_DEBUG));
  assert_true(c->e[0].method == mid(FD_M_COMPUTE));
  assert_true(c->e[0].index == 8);
  /* A second request at the same place, and a method entry: one composite of three events. */
  body m2 = {.n = 0};
  mod_loc(&m2, FD_M_COMPUTE, 8);
  int32_t bp2, me;
  assert_int_equal(set_req(DDMC_EV_BREAKPOINT, 0, &m2, 1, &bp2), 0);
  assert_int_equal(set_req(DDMC_EV_METHOD_ENTRY, 0, NULL, 0, &me), 0);
  assert_int_equal(atomic_load(&F->method_events), 1);
  assert_int_equal(post(FD_T_WORKER, FD_M_COMPUTE, 8, 2, DDMC_POST_AT_BREAKPOINT | DDMC_POST_METHOD_ENTRY), 0);
  assert_int_equal(events(), 1);
  assert_int_equal(g_comp[0].n, 3);
  int kinds = 0;
  for (int i = 0; i < 3; i++) kinds |= 1 << (g_comp[0].e[i].kind & 31);
  assert_int_equal(kinds, (1 << DDMC_EV_BREAKPOINT) | (1 << (DDMC_EV_METHOD_ENTRY & 31)));
  assert_int_equal(clear_req(DDMC_EV_METHOD_ENTRY, me), 0);
  assert_int_equal(atomic_load(&F->method_events), 0);
  /* No debugger: no event, ENOTCONN. */
  ddmc__dbg_reset(F->d);
  assert_int_equal(post(FD_T_WORKER, FD_M_COMPUTE, 8, 2, DDMC_POST_AT_BREAKPOINT), DDMC_ENOTCONN);
  assert_false(ddmc_dbg_active(F->fv.vm));
  fakebridge_reconnect(F);
  assert_true(ddmc_dbg_active(F->fv.vm));
}

/* METHOD_ENTRY with ClassMatch / ClassExclude / ClassOnly, posted in Debug and in String. */
static int entry_hits(const body *m, uint32_t nmods) {
  int32_t id;
  assert_int_equal(set_req(DDMC_EV_METHOD_ENTRY, 0, m, nmods, &id), 0);
  ddmc_location in_debug = {FD_C_DEBUG, FD_M_COMPUTE, 0}, in_string = {FD_C_STRING, 0, 0};
  assert_int_equal(ddmc_post_location(F->fv.vm, FD_T_MAIN, &in_debug, 2, 0, DDMC_POST_METHOD_ENTRY), 0);
  int hits = events() ? 1 : 0;
  assert_int_equal(ddmc_post_location(F->fv.vm, FD_T_MAIN, &in_string, 2, 0, DDMC_POST_METHOD_ENTRY), 0);
  hits |= events() ? 2 : 0;
  assert_int_equal(clear_req(DDMC_EV_METHOD_ENTRY, id), 0);
  return hits;
}

static int class_filter_hits(uint8_t mod, const char *pattern) {
  body m = {.n = 0};
  b_u8(&m, mod);
  b_str(&m, pattern);
  return entry_hits(&m, 1);
}

static void test_class_filters(void **state) {
  (void)state;
  assert_int_equal(class_filter_hits(DDMC__MOD_CLASS_MATCH, "Deb*"), 1);
  assert_int_equal(class_filter_hits(DDMC__MOD_CLASS_MATCH, "*ebug"), 1);
  assert_int_equal(class_filter_hits(DDMC__MOD_CLASS_MATCH, "Debug"), 1);
  assert_int_equal(class_filter_hits(DDMC__MOD_CLASS_MATCH, "java.*"), 2);
  assert_int_equal(class_filter_hits(DDMC__MOD_CLASS_MATCH, "*"), 3);
  assert_int_equal(class_filter_hits(DDMC__MOD_CLASS_MATCH, "LDebug;"), 0); /* dotted names */
  assert_int_equal(class_filter_hits(DDMC__MOD_CLASS_EXCLUDE, "java.*"), 1);
  assert_int_equal(class_filter_hits(DDMC__MOD_CLASS_EXCLUDE, "*String"), 1);
  assert_int_equal(class_filter_hits(DDMC__MOD_CLASS_EXCLUDE, "*"), 0);
  assert_int_equal(class_filter_hits(DDMC__MOD_CLASS_EXCLUDE, "Nope"), 3);
  /* ClassOnly: the class or a subclass */
  body m = {.n = 0};
  b_u8(&m, DDMC__MOD_CLASS_ONLY);
  b_u64(&m, cid(FD_C_DEBUG));
  assert_int_equal(entry_hits(&m, 1), 1);
  m.n = 0;
  b_u8(&m, DDMC__MOD_CLASS_ONLY);
  b_u64(&m, cid(FD_C_OBJECT));
  assert_int_equal(entry_hits(&m, 1), 3);
  /* two filters: both must pass */
  m.n = 0;
  b_u8(&m, DDMC__MOD_CLASS_MATCH);
  b_str(&m, "*");
  b_u8(&m, DDMC__MOD_CLASS_EXCLUDE);
  b_str(&m, "java.lang.*");
  assert_int_equal(entry_hits(&m, 2), 1);
  /* a pattern too long for the library is refused, not cut */
  char big[2000];
  memset(big, 'a', sizeof(big) - 1);
  big[sizeof(big) - 1] = '\0';
  m.n = 0;
  b_u8(&m, DDMC__MOD_CLASS_MATCH);
  b_str(&m, big);
  assert_int_equal(set_req(DDMC_EV_METHOD_ENTRY, 0, &m, 1, NULL), DDMC_JDWP_ILLEGAL_ARGUMENT);
  assert_int_equal(atomic_load(&F->method_events), 0);
}

static void test_instance_only(void **state) {
  (void)state;
  body m = {.n = 0};
  b_u8(&m, DDMC__MOD_INSTANCE_ONLY);
  b_u64(&m, oid(FD_O_DEBUG2));
  mod_loc(&m, FD_M_COMPUTE, 0);
  assert_int_equal(set_req(DDMC_EV_BREAKPOINT, 0, &m, 2, NULL), 0);
  ddmc_location l = {FD_C_DEBUG, FD_M_COMPUTE, 0};
  assert_int_equal(ddmc_post_location(F->fv.vm, FD_T_MAIN, &l, 0, FD_O_DEBUG, DDMC_POST_AT_BREAKPOINT), 0);
  assert_int_equal(ddmc_post_location(F->fv.vm, FD_T_MAIN, &l, 0, 0, DDMC_POST_AT_BREAKPOINT), 0);
  assert_int_equal(events(), 0);
  assert_int_equal(ddmc_post_location(F->fv.vm, FD_T_MAIN, &l, 0, FD_O_DEBUG2, DDMC_POST_AT_BREAKPOINT), 0);
  assert_int_equal(events(), 1);
}

static void test_hold_events(void **state) {
  (void)state;
  assert_int_equal(set_req(DDMC_EV_THREAD_START, 0, NULL, 0, NULL), 0);
  assert_int_equal(run(1, 15, NULL, NULL), 0);
  assert_int_equal(ddmc_post_thread_start(F->fv.vm, FD_T_WORKER), 0);
  assert_int_equal(ddmc_post_thread_start(F->fv.vm, FD_T_MAIN), 0);
  assert_int_equal(events(), 0);
  assert_int_equal(run(1, 16, NULL, NULL), 0);
  assert_int_equal(events(), 2);
  assert_true(g_comp[0].e[0].thread == tid(FD_T_WORKER));
  assert_true(g_comp[1].e[0].thread == tid(FD_T_MAIN));
  assert_int_equal(ddmc_post_thread_start(F->fv.vm, FD_T_MAIN), 0);
  assert_int_equal(events(), 1);
  /* the internal thread is never reported */
  assert_int_equal(ddmc_post_thread_start(F->fv.vm, FD_T_JDWP), 0);
  assert_int_equal(events(), 0);
}

/* EXCEPTION: ExceptionOnly by class (and superclasses), caught / uncaught; the throw and catch
 * locations and the exception in the event, an all-zero catch location when nothing catches. */
static void test_exception_events(void **state) {
  (void)state;
  body m = {.n = 0};
  b_u8(&m, DDMC__MOD_EXCEPTION_ONLY);
  b_u64(&m, cid(FD_C_OBJECT)); /* Debug descends from Object */
  b_u8(&m, 0);                 /* caught: no */
  b_u8(&m, 1);                 /* uncaught: yes */
  int32_t unc, any, str;
  assert_int_equal(set_req(DDMC_EV_EXCEPTION, 0, &m, 1, &unc), 0);
  m.n = 0;
  b_u8(&m, DDMC__MOD_EXCEPTION_ONLY);
  b_u64(&m, 0); /* any class */
  b_u8(&m, 1);
  b_u8(&m, 1);
  assert_int_equal(set_req(DDMC_EV_EXCEPTION, 0, &m, 1, &any), 0);
  m.n = 0;
  b_u8(&m, DDMC__MOD_EXCEPTION_ONLY);
  b_u64(&m, cid(FD_C_STRING)); /* not an ancestor of Debug */
  b_u8(&m, 1);
  b_u8(&m, 1);
  assert_int_equal(set_req(DDMC_EV_EXCEPTION, 0, &m, 1, &str), 0);
  ddmc_location at = {FD_C_DEBUG, FD_M_COMPUTE, 8}, handler = {FD_C_DEBUG, FD_M_MAIN, 4};
  assert_int_equal(ddmc_post_exception(F->fv.vm, FD_T_MAIN, &at, 1, FD_O_DEBUG, FD_O_DEBUG2, NULL), 0);
  assert_int_equal(ddmc_post_exception(F->fv.vm, FD_T_MAIN, &at, 1, FD_O_DEBUG, FD_O_DEBUG2, &handler), 0);
  assert_int_equal(ddmc_post_exception(F->fv.vm, FD_T_MAIN, &at, 1, 0, 0, NULL), DDMC_EINVAL);
  assert_int_equal(events(), 2);
  assert_int_equal(g_comp[0].n, 2); /* uncaught: both the Object and the any request */
  assert_int_equal(g_comp[0].e[0].kind, DDMC_EV_EXCEPTION);
  assert_int_equal(g_comp[0].e[0].req, unc);
  assert_int_equal(g_comp[0].e[1].req, any);
  assert_true(g_comp[0].e[0].thread == tid(FD_T_MAIN));
  assert_true(g_comp[0].e[0].cls == cid(FD_C_DEBUG) && g_comp[0].e[0].method == mid(FD_M_COMPUTE));
  assert_true(g_comp[0].e[0].index == 8);
  assert_int_equal(g_comp[0].e[0].otag, 'L');
  assert_true(g_comp[0].e[0].obj == oid(FD_O_DEBUG2));
  assert_int_equal(g_comp[0].e[0].ctag, 0);
  assert_true(g_comp[0].e[0].ccls == 0 && g_comp[0].e[0].cmethod == 0 && g_comp[0].e[0].cindex == 0);
  assert_int_equal(g_comp[1].n, 1); /* caught: only the any request */
  assert_int_equal(g_comp[1].e[0].req, any);
  assert_int_equal(g_comp[1].e[0].ctag, DDMC_TYPE_CLASS);
  assert_true(g_comp[1].e[0].ccls == cid(FD_C_DEBUG) && g_comp[1].e[0].cmethod == mid(FD_M_MAIN));
  assert_true(g_comp[1].e[0].cindex == 4);
  /* ExceptionOnly belongs to EXCEPTION alone */
  assert_int_equal(set_req(DDMC_EV_BREAKPOINT, 0, &m, 1, NULL), DDMC_JDWP_ILLEGAL_ARGUMENT);
}

/* A registry too full to name an event's object: the event is not sent (a composite cut short,
 * or a null in the object's place, would be a wrong answer); the next one that fits is whole. */
static void test_event_full_registry(void **state) {
  (void)state;
  body m = {.n = 0};
  int32_t any;
  assert_int_equal(set_req(DDMC_EV_EXCEPTION, 0, &m, 0, &any), 0);
  ddmc_location at = {FD_C_DEBUG, FD_M_COMPUTE, 8};
  assert_int_equal(ddmc_post_exception(F->fv.vm, FD_T_MAIN, &at, 1, 0, FD_O_DEBUG, NULL), 0);
  assert_int_equal(events(), 1); /* the thread, classes and Debug have IDs now */
  F->d->ids.max_slots = F->d->ids.count;
  ddmc_post_exception(F->fv.vm, FD_T_MAIN, &at, 1, 0, FD_O_DEBUG2, NULL);
  assert_int_equal(events(), 0);
  assert_int_equal(ddmc_post_exception(F->fv.vm, FD_T_MAIN, &at, 1, 0, FD_O_DEBUG, NULL), 0);
  assert_int_equal(events(), 1);
  assert_true(g_comp[0].e[0].obj == oid(FD_O_DEBUG));
}

/* Watchpoints: one set_field_watch per change of the kinds wanted on a field, events for that
 * field only, with the object and (modification) the new value; the capabilities say yes. */
static void test_field_watch(void **state) {
  (void)state;
  ddmc_reader r;
  assert_int_equal(run(1, 17, NULL, &r), 0); /* CapabilitiesNew */
  assert_int_equal(ddmc_read_u8(&r), 1);     /* canWatchFieldModification */
  assert_int_equal(ddmc_read_u8(&r), 1);     /* canWatchFieldAccess */
  body m = {.n = 0};
  b_u8(&m, DDMC__MOD_FIELD_ONLY);
  b_u64(&m, cid(FD_C_DEBUG));
  b_u64(&m, fid(FD_C_DEBUG, FD_F_X));
  int32_t acc, mod, mod2;
  assert_int_equal(set_req(DDMC_EV_FIELD_ACCESS, 0, &m, 1, &acc), 0);
  assert_int_equal(atomic_load(&F->n_field_watch), 1);
  assert_int_equal(atomic_load(&F->last_watch_mask), DDMC_WATCH_ACCESS);
  assert_int_equal(set_req(DDMC_EV_FIELD_MODIFICATION, 0, &m, 1, &mod), 0);
  assert_int_equal(set_req(DDMC_EV_FIELD_MODIFICATION, 0, &m, 1, &mod2), 0);
  assert_int_equal(atomic_load(&F->n_field_watch), 2); /* the second changed nothing */
  assert_int_equal(atomic_load(&F->last_watch_mask), DDMC_WATCH_ACCESS | DDMC_WATCH_MODIFY);
  assert_int_equal(atomic_load(&F->last_watch_field), FD_F_X);
  /* a field watch request must name its field */
  assert_int_equal(set_req(DDMC_EV_FIELD_ACCESS, 0, NULL, 0, NULL), DDMC_JDWP_ILLEGAL_ARGUMENT);

  ddmc_location at = {FD_C_DEBUG, FD_M_COMPUTE, 8};
  ddmc_value v = {.tag = 'I', .u.i = 99};
  assert_int_equal(ddmc_post_field_access(F->fv.vm, FD_T_MAIN, &at, 1, 0, FD_C_DEBUG, FD_F_X, FD_O_DEBUG), 0);
  assert_int_equal(ddmc_post_field_access(F->fv.vm, FD_T_MAIN, &at, 1, 0, FD_C_DEBUG, FD_F_B, FD_O_DEBUG), 0);
  assert_int_equal(ddmc_post_field_modification(F->fv.vm, FD_T_MAIN, &at, 1, 0, FD_C_DEBUG, FD_F_X, FD_O_DEBUG, &v),
                   0);
  assert_int_equal(
      ddmc_post_field_modification(F->fv.vm, FD_T_MAIN, &at, 1, 0, FD_C_DEBUG, FD_F_X, FD_O_DEBUG, NULL),
      DDMC_EINVAL);
  assert_int_equal(events(), 2); /* the other field reports nothing */
  assert_int_equal(g_comp[0].e[0].kind, DDMC_EV_FIELD_ACCESS);
  assert_int_equal(g_comp[0].e[0].req, acc);
  assert_true(g_comp[0].e[0].fcls == cid(FD_C_DEBUG) && g_comp[0].e[0].field == fid(FD_C_DEBUG, FD_F_X));
  assert_true(g_comp[0].e[0].obj == oid(FD_O_DEBUG));
  assert_int_equal(g_comp[1].n, 2);
  assert_int_equal(g_comp[1].e[0].kind, DDMC_EV_FIELD_MODIFICATION);
  assert_int_equal(g_comp[1].e[0].vtag, 'I');
  assert_true(g_comp[1].e[0].value == 99);

  assert_int_equal(clear_req(DDMC_EV_FIELD_MODIFICATION, mod), 0);
  assert_int_equal(atomic_load(&F->n_field_watch), 2); /* mod2 still wants it */
  assert_int_equal(clear_req(DDMC_EV_FIELD_MODIFICATION, mod2), 0);
  assert_int_equal(atomic_load(&F->last_watch_mask), DDMC_WATCH_ACCESS);
  ddmc__dbg_reset(F->d); /* disconnect: the last watch goes */
  assert_int_equal(atomic_load(&F->last_watch_mask), 0);
  assert_int_equal(atomic_load(&F->watch_masks), 0);
}

/* ClassPrepare with SourceNameMatch / ClassExclude, ThreadDeath, MethodExit with its value,
 * VM_DEATH (the automatic one, request 0, and a requested one). */
static void test_other_events(void **state) {
  (void)state;
  body m = {.n = 0};
  b_u8(&m, DDMC__MOD_SOURCE_NAME_MATCH);
  b_str(&m, "*.java");
  b_u8(&m, DDMC__MOD_CLASS_EXCLUDE);
  b_str(&m, "java.*");
  int32_t cp, td, mx, vd;
  assert_int_equal(set_req(DDMC_EV_CLASS_PREPARE, 0, &m, 2, &cp), 0);
  assert_int_equal(ddmc_post_class_prepare(F->fv.vm, FD_T_MAIN, FD_C_STRING), 0);
  assert_int_equal(ddmc_post_class_prepare(F->fv.vm, FD_T_MAIN, FD_C_INT_ARRAY), 0); /* no source */
  assert_int_equal(events(), 0);
  assert_int_equal(ddmc_post_class_prepare(F->fv.vm, FD_T_MAIN, FD_C_DEBUG), 0);
  assert_int_equal(events(), 1);
  assert_int_equal(g_comp[0].e[0].kind, DDMC_EV_CLASS_PREPARE);
  assert_int_equal(g_comp[0].e[0].req, cp);
  assert_true(g_comp[0].e[0].thread == tid(FD_T_MAIN));
  assert_true(g_comp[0].e[0].cls == cid(FD_C_DEBUG));
  assert_string_equal(g_comp[0].e[0].sig, "LDebug;");
  assert_int_equal(g_comp[0].e[0].status, 7);
  /* SourceNameMatch is for ClassPrepare only */
  m.n = 0;
  b_u8(&m, DDMC__MOD_SOURCE_NAME_MATCH);
  b_str(&m, "*.java");
  assert_int_equal(set_req(DDMC_EV_THREAD_START, 0, &m, 1, NULL), DDMC_JDWP_ILLEGAL_ARGUMENT);

  assert_int_equal(set_req(DDMC_EV_THREAD_DEATH, 0, NULL, 0, &td), 0);
  assert_int_equal(ddmc_post_thread_death(F->fv.vm, FD_T_WORKER), 0);
  assert_int_equal(events(), 1);
  assert_int_equal(g_comp[0].e[0].kind, DDMC_EV_THREAD_DEATH);
  assert_true(g_comp[0].e[0].thread == tid(FD_T_WORKER));

  assert_int_equal(set_req(DDMC_EV_METHOD_EXIT_WITH_RETURN_VALUE, 0, NULL, 0, &mx), 0);
  ddmc_location l = {FD_C_DEBUG, FD_M_COMPUTE, 10};
  ddmc_value ret = {.tag = 'J', .u.j = 0x123456789ll};
  assert_int_equal(ddmc_post_method_exit(F->fv.vm, FD_T_MAIN, &l, 1, FD_O_DEBUG, &ret), 0);
  ddmc_value sret = {.tag = 'L', .u.l = FD_O_STR};
  assert_int_equal(ddmc_post_method_exit(F->fv.vm, FD_T_MAIN, &l, 1, FD_O_DEBUG, &sret), 0);
  assert_int_equal(ddmc_post_method_exit(F->fv.vm, FD_T_MAIN, &l, 1, FD_O_DEBUG, NULL), 0);
  assert_int_equal(events(), 3);
  assert_int_equal(g_comp[0].e[0].kind, DDMC_EV_METHOD_EXIT_WITH_RETURN_VALUE);
  assert_int_equal(g_comp[0].e[0].vtag, 'J');
  assert_true(g_comp[0].e[0].value == 0x123456789ull);
  assert_true(g_comp[0].e[0].index == 10);
  assert_int_equal(g_comp[1].e[0].vtag, 's');
  assert_true(g_comp[1].e[0].value == oid(FD_O_STR));
  assert_int_equal(g_comp[2].e[0].vtag, 'V');
  assert_int_equal(clear_req(DDMC_EV_METHOD_EXIT_WITH_RETURN_VALUE, mx), 0);
  assert_int_equal(atomic_load(&F->method_events), 0);

  assert_int_equal(ddmc_post_vm_death(F->fv.vm, 0), 0);
  assert_int_equal(events(), 1);
  assert_int_equal(g_comp[0].n, 1);
  assert_int_equal(g_comp[0].e[0].kind, DDMC_EV_VM_DEATH);
  assert_int_equal(g_comp[0].e[0].req, 0);
  assert_int_equal(set_req(DDMC_EV_VM_DEATH, 0, NULL, 0, &vd), 0);
  assert_int_equal(ddmc_post_vm_death(F->fv.vm, 0), 0);
  assert_int_equal(events(), 1);
  assert_int_equal(g_comp[0].n, 2);
  assert_int_equal(g_comp[0].policy, 0);
}

/* The monitor events are a switch (bridge.h, set_monitor_events): on with the first MONITOR_*
 * request of any of the four kinds, off with the last, shared with an agent's, and off when the
 * session ends with requests left. */
static void test_monitor_events_switch(void **state) {
  (void)state;
  int32_t a, b;
  assert_int_equal(set_req(DDMC_EV_MONITOR_CONTENDED_ENTER, 0, NULL, 0, &a), 0);
  assert_int_equal(atomic_load(&F->n_monitor_events), 1);
  assert_int_equal(atomic_load(&F->monitor_events), 1);
  assert_int_equal(set_req(DDMC_EV_MONITOR_WAITED, 0, NULL, 0, &b), 0);
  assert_int_equal(atomic_load(&F->n_monitor_events), 1);
  assert_int_equal(clear_req(DDMC_EV_MONITOR_CONTENDED_ENTER, a), 0);
  assert_int_equal(atomic_load(&F->n_monitor_events), 1);
  assert_int_equal(clear_req(DDMC_EV_MONITOR_WAITED, b), 0);
  assert_int_equal(atomic_load(&F->n_monitor_events), 2);
  assert_int_equal(atomic_load(&F->monitor_events), 0);
  /* an agent's want keeps them on past the debugger's last request */
  ddmc__ctl_monitor_events(F->fv.vm, DDMC__ME_AGENT, 1);
  assert_int_equal(atomic_load(&F->n_monitor_events), 3);
  assert_int_equal(set_req(DDMC_EV_MONITOR_WAIT, 0, NULL, 0, &a), 0);
  assert_int_equal(clear_req(DDMC_EV_MONITOR_WAIT, a), 0);
  assert_int_equal(atomic_load(&F->n_monitor_events), 3);
  ddmc__ctl_monitor_events(F->fv.vm, DDMC__ME_AGENT, 0);
  assert_int_equal(atomic_load(&F->n_monitor_events), 4);
  assert_int_equal(atomic_load(&F->monitor_events), 0);
  /* other kinds leave the switch alone; the session's end clears what is left */
  assert_int_equal(set_req(DDMC_EV_THREAD_START, 0, NULL, 0, NULL), 0);
  assert_int_equal(set_req(DDMC_EV_MONITOR_CONTENDED_ENTERED, 0, NULL, 0, NULL), 0);
  assert_int_equal(atomic_load(&F->n_monitor_events), 5);
  ddmc__dbg_reset(F->d);
  assert_int_equal(atomic_load(&F->n_monitor_events), 6);
  assert_int_equal(atomic_load(&F->monitor_events), 0);
  fakebridge_reconnect(F);
}

/* Two requests at one place: one composite, the strongest policy of the two. */
static void test_strongest_policy(void **state) {
  (void)state;
  body m = {.n = 0};
  mod_loc(&m, FD_M_COMPUTE, 8);
  assert_int_equal(set_req(DDMC_EV_BREAKPOINT, 0, &m, 1, NULL), 0);
  assert_int_equal(set_req(DDMC_EV_BREAKPOINT, 1, &m, 1, NULL), 0);
  poster p;
  start_poster(&p, FD_T_WORKER, FD_M_COMPUTE, 8, 2);
  WAIT_FOR(thr_count(FD_T_WORKER) == 1);
  int got = events_wait();
  assert_int_equal(got, 1);
  assert_int_equal(g_comp[0].n, 2);
  assert_int_equal(g_comp[0].policy, 1);
  assert_int_equal(run_id(11, 3, tid(FD_T_WORKER), NULL), 0);
  pthread_join(p.th, NULL);
  assert_int_equal(thr_count(FD_T_WORKER), 0);
}

/* VM threads post while the JDWP thread changes requests, holds and releases events, suspends,
 * resumes and ends sessions (run it under TSan: scripts/test.sh's build-tsan). */
typedef struct storm {
  pthread_t th;
  uint32_t thread;
  atomic_int stop;
  atomic_int posts;
} storm;

static void *storm_main(void *arg) {
  storm *s = arg;
  for (int i = 0; !atomic_load(&s->stop); i++) {
    uint32_t m = (uint32_t)(i % FD_NMETHODS);
    post(s->thread, m, i % 4, i % 3, DDMC_POST_AT_BREAKPOINT | ((i & 7) == 0 ? DDMC_POST_METHOD_ENTRY : 0));
    if ((i & 15) == 0) ddmc_post_thread_start(F->fv.vm, s->thread);
    atomic_fetch_add(&s->posts, 1);
  }
  return NULL;
}

static void test_concurrent_posts(void **state) {
  (void)state;
  storm st[2];
  for (int i = 0; i < 2; i++) {
    memset(&st[i], 0, sizeof(st[i]));
    st[i].thread = i == 0 ? FD_T_MAIN : FD_T_WORKER;
    assert_int_equal(pthread_create(&st[i].th, NULL, storm_main, &st[i]), 0);
  }
  WAIT_FOR(atomic_load(&st[0].posts) > 0 && atomic_load(&st[1].posts) > 0);
  int32_t ids[8] = {0};
  for (int round = 0; round < 1000; round++) {
    struct timespec ts = {0, 100000};
    nanosleep(&ts, NULL);
    int k = round % 8;
    if (ids[k] != 0) {
      assert_int_equal(clear_req(DDMC_EV_BREAKPOINT, ids[k]), 0);
      ids[k] = 0;
    } else {
      body m = {.n = 0};
      mod_loc(&m, (uint32_t)(k % FD_NMETHODS), k % 4);
      if (k & 1) {
        b_u8(&m, DDMC__MOD_COUNT);
        b_u32(&m, 2);
      }
      assert_int_equal(set_req(DDMC_EV_BREAKPOINT, (uint8_t)(round % 3), &m, (k & 1) ? 2 : 1, &ids[k]), 0);
    }
    if (round % 5 == 0) assert_int_equal(set_req(DDMC_EV_THREAD_START, 1, NULL, 0, NULL), 0);
    if (round % 7 == 0) run(1, 15, NULL, NULL);
    if (round % 7 == 3) run(1, 16, NULL, NULL);
    if (round % 11 == 0) run_id(11, 2, tid(FD_T_WORKER), NULL);
    if (round % 13 == 0) run(1, 8, NULL, NULL);
    run(1, 9, NULL, NULL); /* VirtualMachine.Resume: nobody stays parked for long */
    run(1, 9, NULL, NULL);
    events();
    if (round % 50 == 49) { /* the debugger leaves and comes back */
      ddmc__dbg_reset(F->d);
      fakebridge_reconnect(F);
      memset(ids, 0, sizeof(ids));
    }
  }
  for (int i = 0; i < 2; i++) atomic_store(&st[i].stop, 1);
  ddmc__dbg_reset(F->d); /* releases whoever is parked */
  for (int i = 0; i < 2; i++) pthread_join(st[i].th, NULL);
  events();
  if (getenv("DDMC_TEST_VERBOSE"))
    print_message("posts %d %d, parked %d times\n", atomic_load(&st[0].posts), atomic_load(&st[1].posts),
                  atomic_load(&F->n_park));
  assert_int_equal(thr_count(FD_T_MAIN) + thr_count(FD_T_WORKER), 0);
  assert_int_equal(F->nbps, 0);
  assert_int_equal(atomic_load(&F->vm_suspended[FD_T_MAIN]) + atomic_load(&F->vm_suspended[FD_T_WORKER]), 0);
  assert_int_equal(atomic_load(&F->parked[FD_T_MAIN]) + atomic_load(&F->parked[FD_T_WORKER]), 0);
}

/* Event requests hold at most ddmc_options.event_request_bytes a session (16 MiB by default):
 * CLASS_PREPARE requests of 64 ClassMatch patterns of 1 KiB each, every one within the per-item
 * caps, are refused with OUT_OF_MEMORY once the budget is spent; the session goes on, a Clear
 * makes room, and the session's end gives all of it back. */
static uint8_t *big_prepare(size_t *n) {
  enum { NMODS = 64, PLEN = 1023 };
  uint8_t *p = malloc(6 + NMODS * (5 + PLEN)), *q = p;
  assert_non_null(p);
  *q++ = DDMC_EV_CLASS_PREPARE;
  *q++ = DDMC__POLICY_NONE;
  ddmc__put_u32(q, NMODS);
  q += 4;
  for (int i = 0; i < NMODS; i++) {
    *q++ = DDMC__MOD_CLASS_MATCH;
    ddmc__put_u32(q, PLEN);
    q += 4;
    memset(q, 'a' + i % 26, PLEN);
    q[PLEN - 1] = '*';
    q += PLEN;
  }
  *n = (size_t)(q - p);
  return p;
}

static void test_request_budget(void **state) {
  (void)state;
  size_t n;
  uint8_t *p = big_prepare(&n);
  ddmc_reader r;
  int rc = 0, ok = 0;
  int32_t first = 0;
  for (int i = 0; i < 2000; i++) { /* 2000 of them: 130 MiB of patterns */
    rc = run_raw(15, 1, p, n, &r);
    if (rc != 0) break;
    int32_t id = (int32_t)ddmc_read_u32(&r);
    if (ok++ == 0) first = id;
  }
  assert_int_equal(rc, DDMC_JDWP_OUT_OF_MEMORY);
  const ddmc__dbg_reqs *q = F->d->req;
  assert_int_equal(q->n, (uint32_t)ok);
  assert_true(q->bytes <= DDMC_DEFAULT_EVENT_REQUEST_BYTES);
  assert_true(q->bytes > DDMC_DEFAULT_EVENT_REQUEST_BYTES - 2 * (q->bytes / (size_t)ok)); /* spent, not refused early */
  assert_true(q->bytes / (size_t)ok >= 64 * 1024);                                        /* the patterns are counted */
  /* Refused again; the session serves other commands, and small requests while room is left. */
  assert_int_equal(run_raw(15, 1, p, n, NULL), DDMC_JDWP_OUT_OF_MEMORY);
  assert_int_equal(run(1, 1, NULL, &r), 0); /* VirtualMachine.Version */
  /* A Clear makes room for one more. */
  assert_int_equal(clear_req(DDMC_EV_CLASS_PREPARE, first), 0);
  assert_int_equal(run_raw(15, 1, p, n, NULL), 0);
  assert_int_equal(run_raw(15, 1, p, n, NULL), DDMC_JDWP_OUT_OF_MEMORY);
  /* The session's end frees everything; the next session has the whole budget. */
  ddmc__dbg_reset(F->d);
  assert_int_equal(q->n, 0);
  assert_int_equal(q->bytes, 0);
  for (int i = 0; i < ok; i++) assert_int_equal(run_raw(15, 1, p, n, NULL), 0);
  ddmc__dbg_reset(F->d);
  free(p);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pattern_match),
      cmocka_unit_test_setup_teardown(test_class_pattern_names, setup, teardown),
      cmocka_unit_test_setup_teardown(test_request_budget, setup, teardown),
      cmocka_unit_test_setup_teardown(test_breakpoints_counted_per_location, setup, teardown),
      cmocka_unit_test_setup_teardown(test_switches_shared_with_agent, setup, teardown),
      cmocka_unit_test_setup_teardown(test_count_modifier, setup, teardown),
      cmocka_unit_test_setup_teardown(test_thread_only_and_composite, setup, teardown),
      cmocka_unit_test_setup_teardown(test_class_filters, setup, teardown),
      cmocka_unit_test_setup_teardown(test_instance_only, setup, teardown),
      cmocka_unit_test_setup_teardown(test_exception_events, setup, teardown),
      cmocka_unit_test_setup_teardown(test_event_full_registry, setup, teardown),
      cmocka_unit_test_setup_teardown(test_field_watch, setup, teardown),
      cmocka_unit_test_setup_teardown(test_hold_events, setup, teardown),
      cmocka_unit_test_setup_teardown(test_other_events, setup, teardown),
      cmocka_unit_test_setup_teardown(test_monitor_events_switch, setup_monitor_events, teardown),
      cmocka_unit_test_setup_teardown(test_strongest_policy, setup, teardown),
      cmocka_unit_test_setup_teardown(test_concurrent_posts, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
