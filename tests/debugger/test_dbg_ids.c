/* SPDX-License-Identifier: Apache-2.0 */
/* The ID registry (src/debugger/ids.c): one ID per object, references counted down by
 * DisposeObjects, IDs of earlier sessions, freed slots and forged values naming nothing, an ID of
 * one kind where another is due, fieldIDs and methodIDs tied to their class, the bound on slots, a
 * model of random use, a moving collector (ddmc_gc_visit_roots), and weak names on a VM with
 * release_ref (DisableCollection counted, ddmc_gc_sweep, release at dispose and session end). */
#include "dbg_fixture.h"

static void test_ids_same_object(void **state) {
  (void)state;
  ddmc_reader r;
  uint64_t a[2], b[2];
  assert_int_equal(run(1, 4, NULL, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 2);
  a[0] = ddmc_read_u64(&r);
  a[1] = ddmc_read_u64(&r);
  assert_int_equal(run(1, 4, NULL, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 2);
  b[0] = ddmc_read_u64(&r);
  b[1] = ddmc_read_u64(&r);
  assert_true(a[0] == b[0] && a[1] == b[1] && a[0] != a[1] && a[0] != 0);
  assert_true(a[0] == tid(FD_T_MAIN) && a[1] == tid(FD_T_WORKER));
  /* The same class by two commands. */
  body s = {.n = 0};
  b_str(&s, "LDebug;");
  assert_int_equal(run(1, 2, &s, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 1);
  assert_int_equal(ddmc_read_u8(&r), DDMC_TYPE_CLASS);
  assert_true(ddmc_read_u64(&r) == cid(FD_C_DEBUG));
  /* The object of a field and the one a frame's 'this' gives are one ID. */
  uint64_t debug = oid(FD_O_DEBUG);
  assert_true(oid(FD_O_DEBUG) == debug);
  assert_true(debug != oid(FD_O_DEBUG2));
}

static void dispose(uint64_t id, int32_t refs) {
  body b = {.n = 0};
  b_u32(&b, 1);
  b_u64(&b, id);
  b_u32(&b, (uint32_t)refs);
  assert_int_equal(run(1, 14, &b, NULL), 0);
}

static void test_ids_dispose(void **state) {
  (void)state;
  ddmc_reader r;
  uint64_t s = oid(FD_O_STR);
  assert_true(oid(FD_O_STR) == s); /* sent twice: two references */
  assert_int_equal(run_id(10, 1, s, &r), 0);
  assert_string_equal(rd_str(&r), "h\xc3\xa9llo");
  dispose(s, 1);
  assert_int_equal(run_id(10, 1, s, &r), 0); /* one reference left */
  dispose(s, 1);
  assert_int_equal(run_id(10, 1, s, &r), DDMC_JDWP_INVALID_OBJECT);
  assert_int_equal(run_id(9, 1, s, &r), DDMC_JDWP_INVALID_OBJECT);
  assert_int_equal(run_id(9, 9, s, &r), 0); /* IsCollected: true for a disposed ID, as the JDK answers */
  assert_int_equal(ddmc_read_u8(&r), 1);
  /* The object again: a new ID, never the old one. */
  uint64_t s2 = oid(FD_O_STR);
  assert_true(s2 != s);
  assert_int_equal(run_id(10, 1, s, &r), DDMC_JDWP_INVALID_OBJECT);
  assert_int_equal(run_id(10, 1, s2, &r), 0);
  /* DisposeObjects frees a pinned ID too, as the JDK's agent does (JDWP: "the ID is freed"). */
  uint64_t l = oid(FD_O_LABEL);
  assert_int_equal(run_id(9, 7, l, NULL), 0);
  assert_int_equal(run_id(9, 9, l, &r), 0);
  assert_int_equal(ddmc_read_u8(&r), 0);
  dispose(l, 100);
  assert_int_equal(run_id(10, 1, l, &r), DDMC_JDWP_INVALID_OBJECT);
  /* A freed ID and null: INVALID_OBJECT, as ART answers (the JDK's agent answers no error). */
  assert_int_equal(run_id(9, 8, l, NULL), DDMC_JDWP_INVALID_OBJECT);
  assert_int_equal(run_id(9, 7, 0, NULL), DDMC_JDWP_INVALID_OBJECT);
  assert_int_equal(run_id(9, 8, 0, NULL), DDMC_JDWP_INVALID_OBJECT);
  /* Disposing of unknown or negative counts is harmless. */
  dispose(0x123456789abcull, 1);
  dispose(s2, -5);
  assert_int_equal(run_id(10, 1, s2, &r), 0);
}

static void test_ids_forged(void **state) {
  (void)state;
  ddmc_reader r;
  uint64_t real = oid(FD_O_DEBUG), klass = cid(FD_C_DEBUG);
  const uint64_t forged[] = {
      0x123456789abcdef0ull,        /* random */
      1,                            /* generation 0, slot 1 */
      (uint64_t)1 << 32,            /* slot 0 */
      ((uint64_t)1 << 32) | 100000, /* slot past the end */
      real + ((uint64_t)1 << 32),   /* the right slot, a later generation */
      real - ((uint64_t)1 << 32),   /* an earlier generation */
      ~0ull,
  };
  for (size_t i = 0; i < sizeof(forged) / sizeof(forged[0]); i++) {
    assert_int_equal(run_id(9, 1, forged[i], &r), DDMC_JDWP_INVALID_OBJECT);
    assert_int_equal(run_id(10, 1, forged[i], &r), DDMC_JDWP_INVALID_OBJECT);
    assert_int_equal(run_id(13, 1, forged[i], &r), DDMC_JDWP_INVALID_OBJECT);
    assert_int_equal(run_id(11, 1, forged[i], &r), DDMC_JDWP_INVALID_OBJECT);
    int rc = run_id(2, 1, forged[i], &r);
    assert_int_equal(rc, DDMC_JDWP_INVALID_OBJECT); /* "not a known ID", as libjdwp */
    if (forged[i] != klass + ((uint64_t)1 << 32) && forged[i] != klass - ((uint64_t)1 << 32))
      assert_int_equal(run_id(2, 7, forged[i], &r), rc);
  }
  /* A class ID of an earlier generation. */
  assert_int_equal(run_id(2, 1, klass + ((uint64_t)1 << 32), &r), DDMC_JDWP_INVALID_OBJECT);
  /* null where an object is due */
  assert_int_equal(run_id(9, 1, 0, &r), DDMC_JDWP_INVALID_OBJECT);
  assert_int_equal(run_id(10, 1, 0, &r), DDMC_JDWP_INVALID_OBJECT);
  assert_int_equal(run_id(11, 1, 0, &r), DDMC_JDWP_INVALID_THREAD);
  assert_int_equal(run_id(12, 1, 0, &r), DDMC_JDWP_INVALID_THREAD_GROUP);
  assert_int_equal(run_id(2, 1, 0, &r), DDMC_JDWP_INVALID_CLASS);
}

static void test_ids_reset(void **state) {
  (void)state;
  ddmc_reader r;
  uint64_t o = oid(FD_O_DEBUG), c = cid(FD_C_DEBUG), t = tid(FD_T_MAIN), s = oid(FD_O_STR);
  assert_int_equal(run_id(11, 1, t, &r), 0);
  ddmc__dbg_reset(F->d); /* the session ends */
  fakebridge_reconnect(F);
  assert_int_equal(run_id(9, 1, o, &r), DDMC_JDWP_INVALID_OBJECT);
  assert_int_equal(run_id(2, 1, c, &r), DDMC_JDWP_INVALID_OBJECT);
  assert_int_equal(run_id(11, 1, t, &r), DDMC_JDWP_INVALID_OBJECT);
  assert_int_equal(run_id(10, 1, s, &r), DDMC_JDWP_INVALID_OBJECT);
  /* New IDs, none equal to an old one, and they work. */
  uint64_t o2 = oid(FD_O_DEBUG), c2 = cid(FD_C_DEBUG), t2 = tid(FD_T_MAIN);
  assert_true(o2 != o && c2 != c && t2 != t && o2 != s && c2 != o && t2 != o);
  assert_int_equal(run_id(11, 1, t2, &r), 0);
  assert_string_equal(rd_str(&r), "main");
  assert_int_equal(run_id(2, 1, c2, &r), 0);
  assert_string_equal(rd_str(&r), "LDebug;");
  /* The fieldID of a class from the old session. */
  uint64_t f_old = ddmc__dbg_field_id(&(ddmc__dbg_cls){.id = c}, FD_F_X);
  body b = {.n = 0};
  b_u64(&b, o2);
  b_u32(&b, 1);
  b_u64(&b, f_old);
  assert_int_equal(run(9, 2, &b, &r), DDMC_JDWP_INVALID_FIELDID);
}

static void test_ids_kind_confusion(void **state) {
  (void)state;
  ddmc_reader r;
  /* A referenceTypeID where an objectID is due: its Class object, if the VM has one... */
  assert_int_equal(run_id(9, 1, cid(FD_C_DEBUG), &r), 0);
  assert_int_equal(ddmc_read_u8(&r), DDMC_TYPE_CLASS);
  assert_true(ddmc_read_u64(&r) == cid(FD_C_CLASS));
  /* ...else INVALID_OBJECT. */
  assert_int_equal(run_id(9, 1, cid(FD_C_INT_ARRAY), &r), DDMC_JDWP_INVALID_OBJECT);
  assert_int_equal(run_id(10, 1, cid(FD_C_STRING), &r), DDMC_JDWP_INVALID_OBJECT);
  /* An objectID where a referenceTypeID is due: INVALID_CLASS, as libjdwp answers (the class of
   * a Class object excepted). */
  assert_int_equal(run_id(2, 1, oid(FD_O_STR), &r), DDMC_JDWP_INVALID_CLASS);
  assert_int_equal(run_id(2, 1, tid(FD_T_MAIN), &r), DDMC_JDWP_INVALID_CLASS);
  assert_int_equal(run_id(2, 1, oid(FD_O_ARR), &r), DDMC_JDWP_INVALID_CLASS);
  assert_int_equal(run_id(3, 1, tid(FD_T_MAIN), &r), DDMC_JDWP_INVALID_CLASS); /* ClassType.Superclass */
  assert_int_equal(run_id(2, 1, oid(FD_O_CLASS_DEBUG), &r), 0);
  assert_string_equal(rd_str(&r), "LDebug;");
  assert_int_equal(run_id(17, 1, oid(FD_O_CLASS_DEBUG), &r), 0);
  assert_int_equal(ddmc_read_u8(&r), DDMC_TYPE_CLASS);
  assert_true(ddmc_read_u64(&r) == cid(FD_C_DEBUG));
  assert_int_equal(run_id(17, 1, oid(FD_O_STR), &r), DDMC_JDWP_INVALID_OBJECT);
  /* Objects of the wrong kind. */
  assert_int_equal(run_id(11, 1, oid(FD_O_STR), &r), DDMC_JDWP_INVALID_THREAD);
  assert_int_equal(run_id(11, 1, oid(FD_O_GROUP_MAIN), &r), DDMC_JDWP_INVALID_THREAD);
  assert_int_equal(run_id(11, 1, cid(FD_C_DEBUG), &r), DDMC_JDWP_INVALID_THREAD);
  assert_int_equal(run_id(11, 1, tid(FD_T_JDWP), &r), DDMC_JDWP_INVALID_THREAD); /* internal */
  assert_int_equal(run_id(12, 1, tid(FD_T_MAIN), &r), DDMC_JDWP_INVALID_THREAD_GROUP);
  assert_int_equal(run_id(10, 1, oid(FD_O_ARR), &r), DDMC_JDWP_INVALID_STRING);
  assert_int_equal(run_id(13, 1, oid(FD_O_STR), &r), DDMC_JDWP_INVALID_ARRAY);
  assert_int_equal(run_id(14, 1, oid(FD_O_STR), &r), DDMC_JDWP_INVALID_CLASS_LOADER);
  /* A dead thread. */
  uint64_t w = tid(FD_T_WORKER);
  assert_int_equal(run_id(11, 1, w, &r), 0);
  atomic_store(&F->worker_dead, 1);
  assert_int_equal(run_id(11, 1, w, &r), DDMC_JDWP_INVALID_THREAD);
  assert_int_equal(run_id(11, 2, w, &r), DDMC_JDWP_INVALID_THREAD);
  assert_int_equal(atomic_load(&F->n_suspend), 0);
}

static void test_ids_field_confusion(void **state) {
  (void)state;
  ddmc_reader r;
  uint64_t dbg = oid(FD_O_DEBUG), th = tid(FD_T_MAIN);
  get_one_field(dbg, fid(FD_C_DEBUG, FD_F_X), 0);
  get_one_field(th, fid(FD_C_THREAD, 0), 0);
  /* A field of one class on an object of an unrelated one. */
  get_one_field(dbg, fid(FD_C_THREAD, 0), DDMC_JDWP_INVALID_FIELDID);
  get_one_field(th, fid(FD_C_DEBUG, FD_F_X), DDMC_JDWP_INVALID_FIELDID);
  get_one_field(oid(FD_O_STR), fid(FD_C_DEBUG, FD_F_NEXT), DDMC_JDWP_INVALID_FIELDID);
  /* Forged: past the class's fields, index 0, a class with no such slot, an objectID. */
  get_one_field(dbg, fid(FD_C_DEBUG, FD_NFIELDS), DDMC_JDWP_INVALID_FIELDID);
  get_one_field(dbg, fid(FD_C_DEBUG, FD_F_X) & ~0xffffffull, DDMC_JDWP_INVALID_FIELDID);
  get_one_field(dbg, fid(FD_C_DEBUG, FD_F_X) + ((uint64_t)1 << 45), DDMC_JDWP_INVALID_FIELDID);
  get_one_field(dbg, dbg, DDMC_JDWP_INVALID_FIELDID);
  get_one_field(dbg, 0x0000ffffffffffffull, DDMC_JDWP_INVALID_FIELDID);
  /* ReferenceType.GetValues: instance fields and other classes' statics are not statics of it. */
  body b = {.n = 0};
  b_u64(&b, cid(FD_C_DEBUG));
  b_u32(&b, 1);
  b_u64(&b, fid(FD_C_DEBUG, FD_F_X));
  assert_int_equal(run(2, 6, &b, &r), DDMC_JDWP_INVALID_FIELDID);
  b.n = 0;
  b_u64(&b, cid(FD_C_STRING));
  b_u32(&b, 1);
  b_u64(&b, fid(FD_C_DEBUG, FD_F_COUNTER));
  assert_int_equal(run(2, 6, &b, &r), DDMC_JDWP_INVALID_FIELDID);
  /* ClassType.SetValues of an instance field. */
  b.n = 0;
  b_u64(&b, cid(FD_C_DEBUG));
  b_u32(&b, 1);
  b_u64(&b, fid(FD_C_DEBUG, FD_F_X));
  b_u32(&b, 1);
  assert_int_equal(run(3, 2, &b, &r), DDMC_JDWP_INVALID_FIELDID);
}

static void line_table_of(uint64_t klass, uint64_t method_id, int want) {
  body b = {.n = 0};
  b_u64(&b, klass);
  b_u64(&b, method_id);
  assert_int_equal(run(6, 1, &b, NULL), want);
}

static void test_ids_method_range(void **state) {
  (void)state;
  uint64_t k = cid(FD_C_DEBUG);
  line_table_of(k, mid(0), 0);
  line_table_of(k, mid(FD_NMETHODS - 1), 0);
  line_table_of(k, 1, DDMC_JDWP_INVALID_METHODID); /* an index without its class */
  line_table_of(k, mid(0) - 1, DDMC_JDWP_INVALID_METHODID);
  line_table_of(k, mid(FD_NMETHODS), DDMC_JDWP_INVALID_METHODID);
  line_table_of(k, mid(0) ^ (uint64_t)1 << 45, DDMC_JDWP_INVALID_METHODID); /* another generation */
  line_table_of(k, ~0ull, DDMC_JDWP_INVALID_METHODID);
  line_table_of(cid(FD_C_INT_ARRAY), mid(0), DDMC_JDWP_INVALID_METHODID); /* Debug's method, another class */
  line_table_of(cid(FD_C_STRING), mid(0), DDMC_JDWP_INVALID_METHODID);
  line_table_of(oid(FD_O_STR), mid(0), DDMC_JDWP_INVALID_CLASS); /* an object: libjdwp says so too */
  /* a breakpoint in a method that is not there */
  body m = {.n = 0};
  b_u8(&m, DDMC__MOD_LOCATION_ONLY);
  b_loc(&m, DDMC_TYPE_CLASS, k, FD_NMETHODS, 0);
  assert_int_equal(set_req(DDMC_EV_BREAKPOINT, 0, &m, 1, NULL), DDMC_JDWP_INVALID_METHODID);
  assert_int_equal(atomic_load(&F->n_set_bp), 0);
}

static void test_ids_bound(void **state) {
  (void)state;
  ddmc_reader r;
  /* A small registry: room for what exists now and three more. */
  uint64_t keep = oid(FD_O_DEBUG);
  cid(FD_C_DEBUG); /* its class takes a slot too */
  F->d->ids.max_slots = F->d->ids.count + 3;
  int ok = 0, full = 0;
  for (int i = 0; i < 10; i++) {
    body b = {.n = 0};
    b_str(&b, "s");
    int rc = run(1, 11, &b, &r);
    if (rc == 0)
      ok++;
    else if (rc == DDMC_JDWP_OUT_OF_MEMORY)
      full++;
    else
      fail_msg("CreateString: %d", rc);
  }
  assert_int_equal(ok, 3);
  assert_int_equal(full, 7);
  /* Known IDs keep working; commands that need new ones say OUT_OF_MEMORY. */
  assert_int_equal(run_id(9, 1, keep, &r), 0);
  /* Disposing of one makes room for one. */
  body b = {.n = 0};
  b_str(&b, "t");
  dispose(keep, 1);
  assert_int_equal(run(1, 11, &b, &r), 0);
  assert_int_equal(run(1, 11, &b, &r), DDMC_JDWP_OUT_OF_MEMORY);
}

/* The registry against a model: random objects get IDs, are sent again, disposed of, pinned,
 * moved by a collector; every live ID names its object, every dead one names nothing, no ID is
 * ever issued twice (the hash table's deletions and growth included). */
#define MODEL_REFS 3000

static uint64_t g_model_id[MODEL_REFS];

static int32_t g_model_refs[MODEL_REFS];

static ddmc_ref g_model_ref[MODEL_REFS];

static uint64_t g_dead[20000];

static int g_ndead;

static void move_some(void *arg, ddmc_ref *ref) {
  (void)arg;
  for (int i = 0; i < MODEL_REFS; i++)
    if (g_model_ref[i] == *ref && g_model_id[i] != 0 && (i % 7) == 0) {
      *ref = g_model_ref[i] = *ref ^ 0x40000000u;
      return;
    }
}

static void test_ids_model(void **state) {
  (void)state;
  ddmc__dbg *d = F->d;
  uint64_t rng = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < MODEL_REFS; i++) g_model_ref[i] = 0x10000000u + (ddmc_ref)i * 16;
  memset(g_model_id, 0, sizeof(g_model_id));
  memset(g_model_refs, 0, sizeof(g_model_refs));
  g_ndead = 0;
  for (int step = 0; step < 60000; step++) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    int i = (int)((rng >> 8) % MODEL_REFS), op = (int)(rng % 10);
    if (op < 6) { /* send it */
      uint64_t id;
      assert_int_equal(ddmc__dbg_id_of_object(d, g_model_ref[i], &id), 0);
      if (g_model_id[i] != 0)
        assert_true(id == g_model_id[i]);
      else if (g_ndead > 0 && (step & 63) == 0)
        for (int k = 0; k < g_ndead; k++) assert_true(g_dead[k] != id);
      g_model_id[i] = id;
      g_model_refs[i]++;
    } else if (op < 9 && g_model_id[i] != 0) { /* dispose of some references */
      int32_t n = (int32_t)((rng >> 20) % 3) + 1;
      ddmc__dbg_id_release(d, g_model_id[i], n);
      g_model_refs[i] -= n;
      if (g_model_refs[i] <= 0) {
        if (g_ndead < 20000) g_dead[g_ndead++] = g_model_id[i];
        g_model_id[i] = 0;
        g_model_refs[i] = 0;
      }
    } else if (op == 9 && (step % 5000) == 0) {
      ddmc_gc_visit_roots(F->fv.vm, move_some, NULL);
    }
    if ((step % 997) == 0) { /* check everything */
      for (int k = 0; k < MODEL_REFS; k++) {
        if (g_model_id[k] == 0) continue;
        ddmc_ref o;
        assert_int_equal(ddmc__dbg_object_of_id(d, g_model_id[k], &o), 0);
        assert_true(o == g_model_ref[k]);
      }
      for (int k = 0; k < g_ndead; k += 7) {
        ddmc_ref o;
        assert_int_equal(ddmc__dbg_object_of_id(d, g_dead[k], &o), DDMC_JDWP_INVALID_OBJECT);
      }
    }
  }
}

/* Threads and thread groups need IDs: a full registry is OUT_OF_MEMORY, not the visitor's "stop"
 * (1) sent as if it were a JDWP error. */
static void test_ids_bound_threads(void **state) {
  (void)state;
  ddmc_reader r;
  uint64_t group = oid(FD_O_GROUP_MAIN);
  F->d->ids.max_slots = F->d->ids.count;
  assert_int_equal(run(1, 5, NULL, &r), DDMC_JDWP_OUT_OF_MEMORY);
  assert_int_equal(run(1, 4, NULL, &r), DDMC_JDWP_OUT_OF_MEMORY);
  assert_int_equal(run_id(12, 3, group, &r), DDMC_JDWP_OUT_OF_MEMORY);
}

/* A registry too full for some classes must not answer AllClasses with a partial list as if it
 * were complete. */
static void test_ids_bound_all_classes(void **state) {
  (void)state;
  ddmc_reader r;
  F->d->ids.max_slots = 3;
  int rc = run(1, 3, NULL, &r);
  if (rc == 0)
    assert_int_equal(ddmc_read_u32(&r), FD_NCLASSES);
  else
    assert_int_equal(rc, DDMC_JDWP_OUT_OF_MEMORY);
}

/* A moving collector: the ID follows the object. */
static void move_str(void *arg, ddmc_ref *ref) {
  (void)arg;
  if (*ref == FD_O_STR) *ref = FD_O_STR + 0x100000;
}

static void test_visit_roots(void **state) {
  (void)state;
  uint64_t s = oid(FD_O_STR), dbg = oid(FD_O_DEBUG);
  ddmc_gc_visit_roots(F->fv.vm, move_str, NULL);
  ddmc_ref o;
  assert_int_equal(ddmc__dbg_object_of_id(F->d, s, &o), 0);
  assert_true(o == FD_O_STR + 0x100000);
  assert_true(oid(FD_O_STR + 0x100000) == s);
  assert_true(oid(FD_O_DEBUG) == dbg);
  assert_true(oid(FD_O_STR) != s);
}

/* Weak names (a bridge with hold_ref / release_ref). */
static ddmc_ref g_roots[16];
static int g_nroots;

static void record_root(void *arg, ddmc_ref *ref) {
  (void)arg;
  if (g_nroots < 16) g_roots[g_nroots++] = *ref;
}

static int roots_now(void) {
  g_nroots = 0;
  ddmc_gc_visit_roots(F->fv.vm, record_root, NULL);
  return g_nroots;
}

static int all_live_but_str(void *arg, uint64_t *ref) {
  (void)arg;
  return *ref != FD_O_STR;
}

static void test_ids_weak(void **state) {
  (void)state;
  ddmc_reader r;
  uint64_t s = oid(FD_O_STR), l = oid(FD_O_LABEL), dbg = oid(FD_O_DEBUG);
  assert_int_equal(roots_now(), 0); /* weak: no object with an ID is a root */
  /* DisableCollection is counted: strong at the first, weak again at the last EnableCollection. */
  assert_int_equal(run_id(9, 7, l, NULL), 0);
  assert_int_equal(run_id(9, 7, l, NULL), 0);
  assert_int_equal(atomic_load(&F->n_hold_strong), 1);
  assert_int_equal(roots_now(), 1);
  assert_true(g_roots[0] == FD_O_LABEL);
  assert_int_equal(run_id(9, 8, l, NULL), 0);
  assert_int_equal(roots_now(), 1);
  assert_int_equal(atomic_load(&F->n_hold_weak), 0);
  assert_int_equal(run_id(9, 8, l, NULL), 0);
  assert_int_equal(atomic_load(&F->n_hold_weak), 1);
  assert_int_equal(roots_now(), 0);
  assert_int_equal(run_id(9, 8, l, NULL), 0); /* not pinned: no error, as the JDK answers */
  assert_int_equal(atomic_load(&F->n_hold_weak), 1);
  /* The collector frees the string: its ID answers INVALID_OBJECT and IsCollected true. */
  assert_int_equal(run_id(9, 9, s, &r), 0);
  assert_int_equal(ddmc_read_u8(&r), 0);
  assert_int_equal(ddmc_gc_sweep(F->fv.vm, all_live_but_str, NULL), 0);
  assert_int_equal(run_id(9, 9, s, &r), 0);
  assert_int_equal(ddmc_read_u8(&r), 1);
  assert_int_equal(run_id(10, 1, s, &r), DDMC_JDWP_INVALID_OBJECT);
  assert_int_equal(run_id(9, 7, s, NULL), DDMC_JDWP_INVALID_OBJECT);
  assert_true(oid(FD_O_STR) != s); /* a new object at that address: a new ID */
  assert_int_equal(run_id(10, 1, l, &r), 0);
  assert_string_equal(rd_str(&r), "label");
  /* Disposed of: released at once, pinned or not (the release drops the strong hold too). */
  dispose(dbg, 1);
  assert_int_equal(atomic_load(&F->n_release), 1);
  assert_true(atomic_load(&F->last_release) == FD_O_DEBUG);
  assert_int_equal(run_id(9, 7, l, NULL), 0);
  assert_int_equal(atomic_load(&F->n_hold_strong), 2);
  dispose(l, 1);
  assert_int_equal(atomic_load(&F->n_release), 2);
  assert_true(atomic_load(&F->last_release) == FD_O_LABEL);
  assert_int_equal(roots_now(), 0);
  assert_int_equal(run_id(9, 8, l, NULL), DDMC_JDWP_INVALID_OBJECT); /* disposed of: names nothing */
  assert_int_equal(atomic_load(&F->n_hold_weak), 1); /* no hold_ref for a released name */
  dispose(s, 1); /* swept: the VM freed it, nothing to release */
  assert_int_equal(atomic_load(&F->n_release), 2);
  /* Session end releases every object the registry held (the new string's ID, the threads and
   * groups the session named): once each, none the VM does not have (bad_calls). */
  uint64_t s2 = oid(FD_O_STR);
  assert_true(s2 != 0);
  int held = (int)F->d->ids.count;
  int classes = 0;
  for (uint32_t i = 0; i < F->d->ids.nslots; i++) classes += F->d->ids.slots[i].kind == DDMC__SLOT_CLASS;
  ddmc__dbg_reset(F->d);
  assert_int_equal(atomic_load(&F->n_release), 2 + held - classes);
  assert_true(atomic_load(&F->last_release) != 0);
}

/* Without release_ref every object with an ID is a root until disposed of. */
static void test_ids_strong_without_release(void **state) {
  (void)state;
  oid(FD_O_STR);
  oid(FD_O_LABEL);
  assert_int_equal(roots_now(), 2);
  assert_int_equal(ddmc_gc_sweep(F->fv.vm, all_live_but_str, NULL), 0);
  ddmc_reader r;
  assert_int_equal(run_id(10, 1, oid(FD_O_STR), &r), 0); /* not swept: it was a root */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_ids_same_object, setup, teardown),
      cmocka_unit_test_setup_teardown(test_ids_dispose, setup, teardown),
      cmocka_unit_test_setup_teardown(test_ids_forged, setup, teardown),
      cmocka_unit_test_setup_teardown(test_ids_reset, setup, teardown),
      cmocka_unit_test_setup_teardown(test_ids_kind_confusion, setup, teardown),
      cmocka_unit_test_setup_teardown(test_ids_field_confusion, setup, teardown),
      cmocka_unit_test_setup_teardown(test_ids_method_range, setup, teardown),
      cmocka_unit_test_setup_teardown(test_ids_bound, setup, teardown),
      cmocka_unit_test_setup_teardown(test_ids_model, setup, teardown),
      cmocka_unit_test_setup_teardown(test_ids_bound_threads, setup, teardown),
      cmocka_unit_test_setup_teardown(test_ids_bound_all_classes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_visit_roots, setup, teardown),
      cmocka_unit_test_setup_teardown(test_ids_weak, setup_weak_names, teardown),
      cmocka_unit_test_setup_teardown(test_ids_strong_without_release, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
