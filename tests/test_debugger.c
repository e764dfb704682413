/* The debugger layer (src/debugger) without a socket: commands run through ddmc__dbg_run against
 * the fake debuggee (fakedbg.c), events posted as a VM thread would and read back from the send
 * queue. Covers the ID registry, every command set's replies, bad input for every command in the
 * table, request matching and modifiers, stepping decisions, and suspend counting (parked event
 * threads included). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "debugger/requests.h"
#include "debugger/state.h"
#include "jdwp/service.h"
#include "jdwp/session.h"
#include "vmctl/switches.h"
#include "fakedbg.h"

/* ---- harness */

static fakedbg *F;
static ddmc_buf g_out;

static int setup_flags(unsigned flags) {
  F = calloc(1, sizeof(*F));
  if (F == NULL || fakedbg_new(F, flags) != 0) return -1;
  ddmc__buf_init(&g_out, ddmc__dbg_mem(F->d), (size_t)64 << 20);
  return 0;
}
static int setup(void **state) {
  (void)state;
  return setup_flags(0);
}
static int setup_suspend_y(void **state) {
  (void)state;
  return setup_flags(FAKEDBG_SUSPEND_Y);
}
static int teardown(void **state) {
  (void)state;
  int bad = atomic_load(&F->bad_calls);
  ddmc__buf_free(&g_out);
  fakedbg_free(F);
  free(F);
  F = NULL;
  assert_int_equal(bad, 0); /* the library never handed the VM a value it should have rejected */
  return 0;
}

typedef struct body {
  uint8_t p[2048];
  size_t n;
} body;

static void b_u8(body *b, uint8_t v) { b->p[b->n++] = v; }
static void b_u16(body *b, uint16_t v) {
  ddmc__put_u16(b->p + b->n, v);
  b->n += 2;
}
static void b_u32(body *b, uint32_t v) {
  ddmc__put_u32(b->p + b->n, v);
  b->n += 4;
}
static void b_u64(body *b, uint64_t v) {
  b_u32(b, (uint32_t)(v >> 32));
  b_u32(b, (uint32_t)v);
}
static void b_str(body *b, const char *s) {
  size_t n = strlen(s);
  b_u32(b, (uint32_t)n);
  memcpy(b->p + b->n, s, n);
  b->n += n;
}
static uint64_t mid(uint32_t method);
static uint64_t cid(ddmc_class c);
static void b_loc(body *b, uint8_t tag, uint64_t cls_id, uint32_t method, uint64_t index) {
  b_u8(b, tag);
  b_u64(b, cls_id);
  b_u64(b, cls_id == cid(FD_C_DEBUG) ? mid(method) : (uint64_t)method + 1);
  b_u64(b, index);
}

/* Runs one command; r reads the reply body. */
static int run_raw(uint8_t set, uint8_t cmd, const uint8_t *p, size_t n, ddmc_reader *r) {
  ddmc__buf_reset(&g_out);
  int rc = ddmc__dbg_run(F->d, set, cmd, p, n, &g_out);
  if (r != NULL) ddmc_reader_init(r, g_out.p, g_out.len);
  return rc;
}
static int run(uint8_t set, uint8_t cmd, const body *b, ddmc_reader *r) {
  return run_raw(set, cmd, b ? b->p : NULL, b ? b->n : 0, r);
}
/* A command whose body is one 8-byte ID. */
static int run_id(uint8_t set, uint8_t cmd, uint64_t id, ddmc_reader *r) {
  body b = {.n = 0};
  b_u64(&b, id);
  return run(set, cmd, &b, r);
}

static char *rd_str(ddmc_reader *r) {
  static char s[4][256];
  static int k;
  char *out = s[k++ & 3];
  uint32_t n = ddmc_read_u32(r);
  const uint8_t *p = ddmc_read_bytes(r, n);
  assert_non_null(p);
  assert_true(n < 256);
  memcpy(out, p, n);
  out[n] = '\0';
  return out;
}

static uint64_t oid(ddmc_ref o) {
  uint64_t id = 0;
  assert_int_equal(ddmc__id_of_object(F->d, o, &id), 0);
  return id;
}
static const ddmc__cls *cls(ddmc_class c) {
  const ddmc__cls *k = NULL;
  assert_int_equal(ddmc__cls_get(F->d, c, &k), 0);
  return k;
}
static uint64_t cid(ddmc_class c) { return cls(c)->id; }
/* A method of Debug (the fake's only class with methods). */
static uint64_t mid(uint32_t method) { return ddmc__method_id(cls(FD_C_DEBUG), method); }
static uint64_t fid(ddmc_class c, uint32_t index) { return ddmc__field_id(cls(c), index); }
static uint64_t tid(uint32_t t) {
  return oid(t == FD_T_MAIN ? FD_O_THREAD_MAIN : t == FD_T_WORKER ? FD_O_THREAD_WORKER : FD_O_THREAD_JDWP);
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}
#define WAIT_FOR(cond)                  \
  do {                                  \
    int waited_ = 0;                    \
    while (!(cond) && waited_ < 5000) { \
      sleep_ms(1);                      \
      waited_++;                        \
    }                                   \
    assert_true(cond);                  \
  } while (0)

/* ---- events read back */

typedef struct ev {
  uint8_t kind;
  int32_t req;
  uint64_t thread;
  uint8_t tag;
  uint64_t cls, method, index;
  uint8_t vtag; /* METHOD_EXIT_WITH_RETURN_VALUE */
  uint64_t value;
  char sig[64]; /* CLASS_PREPARE */
  uint32_t status;
  uint8_t otag; /* EXCEPTION: the exception; FIELD_*: the object (tagged) */
  uint64_t obj;
  uint8_t ctag; /* EXCEPTION: the catch location (0: not caught) */
  uint64_t ccls, cmethod, cindex;
  uint64_t fcls, field; /* FIELD_* */
} ev;
typedef struct comp {
  int policy;
  int n;
  ev e[8];
} comp;
static comp g_comp[16];
static int g_ncomp;

static void on_event(void *arg, const uint8_t *p, size_t n) {
  (void)arg;
  ddmc_reader r;
  ddmc_reader_init(&r, p, n);
  static comp scratch; /* past 16: parsed and checked, not kept */
  comp *c = g_ncomp < 16 ? &g_comp[g_ncomp] : &scratch;
  g_ncomp++;
  memset(c, 0, sizeof(*c));
  c->policy = ddmc_read_u8(&r);
  c->n = (int)ddmc_read_u32(&r);
  if (c->n < 1 || c->n > 1000) fail_msg("composite of %d events (%zu bytes, policy %d)", c->n, n, c->policy);
  for (int i = 0; i < c->n; i++) {
    ev extra;
    ev *e = i < 8 ? &c->e[i] : &extra; /* the first 8 are kept */
    e->kind = ddmc_read_u8(&r);
    e->req = (int32_t)ddmc_read_u32(&r);
    switch (e->kind) {
      case DDMC_EV_SINGLE_STEP:
      case DDMC_EV_BREAKPOINT:
      case DDMC_EV_METHOD_ENTRY:
      case DDMC_EV_METHOD_EXIT:
        e->thread = ddmc_read_u64(&r);
        e->tag = ddmc_read_u8(&r);
        e->cls = ddmc_read_u64(&r);
        e->method = ddmc_read_u64(&r);
        e->index = ddmc_read_u64(&r);
        break;
      case DDMC_EV_METHOD_EXIT_WITH_RETURN_VALUE:
        e->thread = ddmc_read_u64(&r);
        e->tag = ddmc_read_u8(&r);
        e->cls = ddmc_read_u64(&r);
        e->method = ddmc_read_u64(&r);
        e->index = ddmc_read_u64(&r);
        e->vtag = ddmc_read_u8(&r);
        if (e->vtag == 'J' || e->vtag == 'D' || e->vtag == 'L' || e->vtag == 's' || e->vtag == '[')
          e->value = ddmc_read_u64(&r);
        else if (e->vtag == 'I' || e->vtag == 'F')
          e->value = ddmc_read_u32(&r);
        else if (e->vtag != 'V')
          fail_msg("return value tag %c", e->vtag);
        break;
      case DDMC_EV_CLASS_PREPARE: {
        e->thread = ddmc_read_u64(&r);
        e->tag = ddmc_read_u8(&r);
        e->cls = ddmc_read_u64(&r);
        uint32_t n = ddmc_read_u32(&r);
        const uint8_t *p = ddmc_read_bytes(&r, n);
        assert_non_null(p);
        assert_true(n < sizeof(e->sig));
        memcpy(e->sig, p, n);
        e->status = ddmc_read_u32(&r);
        break;
      }
      case DDMC_EV_EXCEPTION:
        e->thread = ddmc_read_u64(&r);
        e->tag = ddmc_read_u8(&r);
        e->cls = ddmc_read_u64(&r);
        e->method = ddmc_read_u64(&r);
        e->index = ddmc_read_u64(&r);
        e->otag = ddmc_read_u8(&r);
        e->obj = ddmc_read_u64(&r);
        e->ctag = ddmc_read_u8(&r);
        e->ccls = ddmc_read_u64(&r);
        e->cmethod = ddmc_read_u64(&r);
        e->cindex = ddmc_read_u64(&r);
        break;
      case DDMC_EV_FIELD_ACCESS:
      case DDMC_EV_FIELD_MODIFICATION:
        e->thread = ddmc_read_u64(&r);
        e->tag = ddmc_read_u8(&r);
        e->cls = ddmc_read_u64(&r);
        e->method = ddmc_read_u64(&r);
        e->index = ddmc_read_u64(&r);
        ddmc_read_u8(&r); /* the field's type tag */
        e->fcls = ddmc_read_u64(&r);
        e->field = ddmc_read_u64(&r);
        e->otag = ddmc_read_u8(&r);
        e->obj = ddmc_read_u64(&r);
        if (e->kind == DDMC_EV_FIELD_MODIFICATION) {
          e->vtag = ddmc_read_u8(&r);
          if (e->vtag != 'I') fail_msg("new value tag %c", e->vtag);
          e->value = ddmc_read_u32(&r);
        }
        break;
      case DDMC_EV_THREAD_START:
      case DDMC_EV_THREAD_DEATH:
      case DDMC_EV_VM_START: e->thread = ddmc_read_u64(&r); break;
      case DDMC_EV_VM_DEATH: break;
      default: fail_msg("unexpected event kind %d", e->kind);
    }
  }
  assert_int_equal(ddmc_reader_done(&r), 0);
}

/* Composites queued since the last call, parsed into g_comp. */
static int events(void) {
  g_ncomp = 0;
  return fakedbg_events(F, on_event, NULL);
}

/* EventRequest.Set; mods holds nmods modifiers. Returns the JDWP error; *id the request. */
static int set_req(uint8_t kind, uint8_t policy, const body *mods, uint32_t nmods, int32_t *id) {
  body b = {.n = 0};
  b_u8(&b, kind);
  b_u8(&b, policy);
  b_u32(&b, nmods);
  if (mods) {
    memcpy(b.p + b.n, mods->p, mods->n);
    b.n += mods->n;
  }
  ddmc_reader r;
  int rc = run(15, 1, &b, &r);
  if (rc == 0) {
    int32_t v = (int32_t)ddmc_read_u32(&r);
    assert_int_equal(ddmc_reader_done(&r), 0);
    if (id) *id = v;
  }
  return rc;
}
static int clear_req(uint8_t kind, int32_t id) {
  body b = {.n = 0};
  b_u8(&b, kind);
  b_u32(&b, (uint32_t)id);
  return run(15, 2, &b, NULL);
}
static void mod_loc(body *m, uint32_t method, int64_t index) {
  b_u8(m, DDMC__MOD_LOCATION_ONLY);
  b_loc(m, DDMC_TYPE_CLASS, cid(FD_C_DEBUG), method, (uint64_t)index);
}
static int post(uint32_t thread, uint32_t method, int64_t index, int32_t depth, unsigned flags) {
  ddmc_location l = {FD_C_DEBUG, method, index};
  return ddmc_post_location(F->fv.vm, thread, &l, depth, 0, flags);
}
static int thr_count(uint32_t t) { return ddmc_dbg_suspend_count(F->fv.vm, t); }

/* ================= the ID registry */

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
  assert_int_equal(run_id(9, 9, s, &r), DDMC_JDWP_INVALID_OBJECT); /* IsCollected */
  /* The object again: a new ID, never the old one. */
  uint64_t s2 = oid(FD_O_STR);
  assert_true(s2 != s);
  assert_int_equal(run_id(10, 1, s, &r), DDMC_JDWP_INVALID_OBJECT);
  assert_int_equal(run_id(10, 1, s2, &r), 0);
  /* DisableCollection keeps an ID past its last reference; EnableCollection lets it go later. */
  uint64_t l = oid(FD_O_LABEL);
  assert_int_equal(run_id(9, 7, l, NULL), 0);
  dispose(l, 100);
  assert_int_equal(run_id(10, 1, l, &r), 0);
  assert_string_equal(rd_str(&r), "label");
  assert_int_equal(run_id(9, 9, l, &r), 0);
  assert_int_equal(ddmc_read_u8(&r), 0);
  assert_int_equal(run_id(9, 8, l, NULL), 0);
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
    assert_true(rc == DDMC_JDWP_INVALID_CLASS || rc == DDMC_JDWP_INVALID_OBJECT);
    if (forged[i] != klass + ((uint64_t)1 << 32) && forged[i] != klass - ((uint64_t)1 << 32))
      assert_int_equal(run_id(2, 7, forged[i], &r), rc);
  }
  /* A class ID of an earlier generation. */
  assert_int_equal(run_id(2, 1, klass + ((uint64_t)1 << 32), &r), DDMC_JDWP_INVALID_CLASS);
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
  fakedbg_reconnect(F);
  assert_int_equal(run_id(9, 1, o, &r), DDMC_JDWP_INVALID_OBJECT);
  assert_int_equal(run_id(2, 1, c, &r), DDMC_JDWP_INVALID_CLASS);
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
  uint64_t f_old = ddmc__field_id(&(ddmc__cls){.id = c}, FD_F_X);
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
  /* An objectID where a referenceTypeID is due: INVALID_OBJECT (the class of a Class object
   * excepted). */
  assert_int_equal(run_id(2, 1, oid(FD_O_STR), &r), DDMC_JDWP_INVALID_OBJECT);
  assert_int_equal(run_id(2, 1, tid(FD_T_MAIN), &r), DDMC_JDWP_INVALID_OBJECT);
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

static void get_one_field(uint64_t obj, uint64_t field, int want) {
  body b = {.n = 0};
  b_u64(&b, obj);
  b_u32(&b, 1);
  b_u64(&b, field);
  assert_int_equal(run(9, 2, &b, NULL), want);
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
  line_table_of(oid(FD_O_STR), mid(0), DDMC_JDWP_INVALID_OBJECT);
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
      assert_int_equal(ddmc__id_of_object(d, g_model_ref[i], &id), 0);
      if (g_model_id[i] != 0)
        assert_true(id == g_model_id[i]);
      else if (g_ndead > 0 && (step & 63) == 0)
        for (int k = 0; k < g_ndead; k++) assert_true(g_dead[k] != id);
      g_model_id[i] = id;
      g_model_refs[i]++;
    } else if (op < 9 && g_model_id[i] != 0) { /* dispose of some references */
      int32_t n = (int32_t)((rng >> 20) % 3) + 1;
      ddmc__id_release(d, g_model_id[i], n);
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
        assert_int_equal(ddmc__object_of_id(d, g_model_id[k], &o), 0);
        assert_true(o == g_model_ref[k]);
      }
      for (int k = 0; k < g_ndead; k += 7) {
        ddmc_ref o;
        assert_int_equal(ddmc__object_of_id(d, g_dead[k], &o), DDMC_JDWP_INVALID_OBJECT);
      }
    }
  }
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
  const ddmc__reqs *q = F->d->req;
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

/* ================= commands */

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
  assert_int_equal(caps[7], 0);  /* canRedefineClasses */
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

static void test_reference_type(void **state) {
  (void)state;
  ddmc_reader r;
  uint64_t k = cid(FD_C_DEBUG);
  assert_int_equal(run_id(2, 1, k, &r), 0);
  assert_string_equal(rd_str(&r), "LDebug;");
  assert_int_equal(ddmc_reader_done(&r), 0);
  assert_int_equal(run_id(2, 13, k, &r), 0);
  assert_string_equal(rd_str(&r), "LDebug;");
  assert_string_equal(rd_str(&r), "");

  static const char *const names[FD_NFIELDS] = {"counter", "flag", "big", "ratio", "label", "x",
                                                "b",       "c",    "s",   "f",     "next",  "arr"};
  static const char *const sigs[FD_NFIELDS] = {"I", "Z", "J",       "D", "Ljava/lang/String;", "I", "B", "C",
                                               "S", "F", "LDebug;", "[I"};
  for (int generic = 0; generic < 2; generic++) {
    assert_int_equal(run_id(2, generic ? 14 : 4, k, &r), 0);
    assert_int_equal(ddmc_read_u32(&r), FD_NFIELDS);
    for (uint32_t i = 0; i < FD_NFIELDS; i++) {
      assert_true(ddmc_read_u64(&r) == fid(FD_C_DEBUG, i));
      assert_string_equal(rd_str(&r), names[i]);
      assert_string_equal(rd_str(&r), sigs[i]);
      if (generic) rd_str(&r);
      uint32_t mods = ddmc_read_u32(&r);
      assert_int_equal((mods & DDMC_ACC_STATIC) != 0, i < FD_NSTATICS);
    }
    assert_int_equal(ddmc_reader_done(&r), 0);

    assert_int_equal(run_id(2, generic ? 15 : 5, k, &r), 0);
    assert_int_equal(ddmc_read_u32(&r), FD_NMETHODS);
    static const char *const mn[] = {"<init>", "main", "compute"};
    static const char *const ms[] = {"()V", "([Ljava/lang/String;)V", "(I)J"};
    for (uint32_t i = 0; i < FD_NMETHODS; i++) {
      assert_true(ddmc_read_u64(&r) == mid(i));
      assert_string_equal(rd_str(&r), mn[i]);
      assert_string_equal(rd_str(&r), ms[i]);
      if (generic) assert_string_equal(rd_str(&r), i == FD_M_COMPUTE ? "<T:Ljava/lang/Object;>(I)J" : "");
      ddmc_read_u32(&r);
    }
    assert_int_equal(ddmc_reader_done(&r), 0);
  }

  /* Static values, each with its tag. */
  body b = {.n = 0};
  b_u64(&b, k);
  b_u32(&b, FD_NSTATICS);
  for (uint32_t i = 0; i < FD_NSTATICS; i++) b_u64(&b, fid(FD_C_DEBUG, i));
  assert_int_equal(run(2, 6, &b, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), FD_NSTATICS);
  assert_int_equal(ddmc_read_u8(&r), 'I');
  assert_int_equal(ddmc_read_u32(&r), 5);
  assert_int_equal(ddmc_read_u8(&r), 'Z');
  assert_int_equal(ddmc_read_u8(&r), 1);
  assert_int_equal(ddmc_read_u8(&r), 'J');
  assert_true(ddmc_read_u64(&r) == (uint64_t)1 << 40);
  assert_int_equal(ddmc_read_u8(&r), 'D');
  uint64_t bits = ddmc_read_u64(&r);
  double d;
  memcpy(&d, &bits, 8);
  assert_true(d == 0.25);
  assert_int_equal(ddmc_read_u8(&r), 's');
  assert_true(ddmc_read_u64(&r) == oid(FD_O_LABEL));
  assert_int_equal(ddmc_reader_done(&r), 0);

  /* ClassType.SetValues then GetValues. */
  b.n = 0;
  b_u64(&b, k);
  b_u32(&b, 2);
  b_u64(&b, fid(FD_C_DEBUG, FD_F_COUNTER));
  b_u32(&b, 77);
  b_u64(&b, fid(FD_C_DEBUG, FD_F_FLAG));
  b_u8(&b, 0);
  assert_int_equal(run(3, 2, &b, &r), 0);
  assert_int_equal(F->statics[FD_F_COUNTER].u.i, 77);
  assert_int_equal(F->statics[FD_F_FLAG].u.i, 0);

  assert_int_equal(run_id(2, 7, k, &r), 0);
  assert_string_equal(rd_str(&r), "Debug.java");
  assert_int_equal(run_id(2, 7, cid(FD_C_INT_ARRAY), &r), DDMC_JDWP_ABSENT_INFORMATION);
  assert_int_equal(run_id(2, 9, k, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 7);
  assert_int_equal(run_id(2, 3, k, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), DDMC_ACC_PUBLIC);
  assert_int_equal(run_id(2, 10, k, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 1);
  assert_true(ddmc_read_u64(&r) == cid(FD_C_RUNNABLE));
  assert_int_equal(run_id(2, 11, k, &r), 0);
  assert_true(ddmc_read_u64(&r) == oid(FD_O_CLASS_DEBUG));
  assert_int_equal(run_id(2, 11, cid(FD_C_STRING), &r), DDMC_JDWP_NOT_IMPLEMENTED);
  assert_int_equal(run_id(2, 2, k, &r), 0);
  assert_true(ddmc_read_u64(&r) == 0); /* the boot loader */
  assert_int_equal(run_id(2, 12, k, &r), DDMC_JDWP_ABSENT_INFORMATION);
  assert_int_equal(run_id(3, 1, k, &r), 0);
  assert_true(ddmc_read_u64(&r) == cid(FD_C_OBJECT));
  assert_int_equal(run_id(3, 1, cid(FD_C_OBJECT), &r), 0);
  assert_true(ddmc_read_u64(&r) == 0);
  assert_int_equal(run_id(3, 1, cid(FD_C_RUNNABLE), &r), DDMC_JDWP_INVALID_CLASS);
}

static void test_method_tables(void **state) {
  (void)state;
  ddmc_reader r;
  body b = {.n = 0};
  b_u64(&b, cid(FD_C_DEBUG));
  b_u64(&b, mid(FD_M_MAIN));
  assert_int_equal(run(6, 1, &b, &r), 0);
  assert_true(ddmc_read_u64(&r) == 0);
  assert_true(ddmc_read_u64(&r) == 20);
  assert_int_equal(ddmc_read_u32(&r), 5);
  static const int64_t idx[] = {0, 4, 8, 12, 16};
  for (int i = 0; i < 5; i++) {
    assert_true(ddmc_read_u64(&r) == (uint64_t)idx[i]);
    assert_int_equal(ddmc_read_u32(&r), 10 + i);
  }
  assert_int_equal(ddmc_reader_done(&r), 0);

  for (int generic = 0; generic < 2; generic++) {
    assert_int_equal(run(6, generic ? 5 : 2, &b, &r), 0);
    assert_int_equal(ddmc_read_u32(&r), 1); /* argCnt */
    assert_int_equal(ddmc_read_u32(&r), 3);
    static const char *const n[] = {"args", "i", "s"};
    static const char *const s[] = {"[Ljava/lang/String;", "I", "Ljava/lang/String;"};
    static const int64_t start[] = {0, 4, 8};
    static const uint32_t len[] = {21, 17, 13};
    for (int i = 0; i < 3; i++) {
      assert_true(ddmc_read_u64(&r) == (uint64_t)start[i]);
      assert_string_equal(rd_str(&r), n[i]);
      assert_string_equal(rd_str(&r), s[i]);
      if (generic) assert_string_equal(rd_str(&r), "");
      assert_int_equal(ddmc_read_u32(&r), len[i]);
      assert_int_equal(ddmc_read_u32(&r), (uint32_t)i);
    }
    assert_int_equal(ddmc_reader_done(&r), 0);
  }
  assert_int_equal(run(6, 4, &b, &r), 0); /* IsObsolete */
  assert_int_equal(ddmc_read_u8(&r), 0);

  atomic_store(&F->absent_info, 1);
  assert_int_equal(run(6, 1, &b, &r), DDMC_JDWP_ABSENT_INFORMATION);
  assert_int_equal(run(6, 2, &b, &r), DDMC_JDWP_ABSENT_INFORMATION);
  assert_int_equal(run(6, 5, &b, &r), DDMC_JDWP_ABSENT_INFORMATION);
}

static void test_object_reference(void **state) {
  (void)state;
  ddmc_reader r;
  uint64_t o = oid(FD_O_DEBUG);
  assert_int_equal(run_id(9, 1, o, &r), 0);
  assert_int_equal(ddmc_read_u8(&r), DDMC_TYPE_CLASS);
  assert_true(ddmc_read_u64(&r) == cid(FD_C_DEBUG));
  assert_int_equal(run_id(9, 1, oid(FD_O_ARR), &r), 0);
  assert_int_equal(ddmc_read_u8(&r), DDMC_TYPE_ARRAY);
  assert_true(ddmc_read_u64(&r) == cid(FD_C_INT_ARRAY));

  body b = {.n = 0};
  b_u64(&b, o);
  b_u32(&b, FD_NFIELDS);
  for (uint32_t i = 0; i < FD_NFIELDS; i++) b_u64(&b, fid(FD_C_DEBUG, i));
  assert_int_equal(run(9, 2, &b, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), FD_NFIELDS);
  assert_int_equal(ddmc_read_u8(&r), 'I'); /* a static, through an instance */
  assert_int_equal(ddmc_read_u32(&r), 5);
  ddmc_read_bytes(&r, 2 + 9 + 9); /* Z, J, D */
  assert_int_equal(ddmc_read_u8(&r), 's');
  assert_true(ddmc_read_u64(&r) == oid(FD_O_LABEL));
  assert_int_equal(ddmc_read_u8(&r), 'I');
  assert_int_equal(ddmc_read_u32(&r), 42);
  assert_int_equal(ddmc_read_u8(&r), 'B');
  assert_int_equal(ddmc_read_u8(&r), 0xfd);
  assert_int_equal(ddmc_read_u8(&r), 'C');
  assert_int_equal(ddmc_read_u16(&r), 'A');
  assert_int_equal(ddmc_read_u8(&r), 'S');
  assert_int_equal(ddmc_read_u16(&r), (uint16_t)-300);
  assert_int_equal(ddmc_read_u8(&r), 'F');
  uint32_t fb = ddmc_read_u32(&r);
  float fv;
  memcpy(&fv, &fb, 4);
  assert_true(fv == 1.5f);
  assert_int_equal(ddmc_read_u8(&r), 'L');
  assert_true(ddmc_read_u64(&r) == oid(FD_O_DEBUG2));
  assert_int_equal(ddmc_read_u8(&r), '[');
  assert_true(ddmc_read_u64(&r) == oid(FD_O_ARR));
  assert_int_equal(ddmc_reader_done(&r), 0);

  /* SetValues: x = 99, b = 5, next = null, f = 2.5; then read back. */
  b.n = 0;
  b_u64(&b, o);
  b_u32(&b, 4);
  b_u64(&b, fid(FD_C_DEBUG, FD_F_X));
  b_u32(&b, 99);
  b_u64(&b, fid(FD_C_DEBUG, FD_F_B));
  b_u8(&b, 5);
  b_u64(&b, fid(FD_C_DEBUG, FD_F_NEXT));
  b_u64(&b, 0);
  float f25 = 2.5f;
  uint32_t f25b;
  memcpy(&f25b, &f25, 4);
  b_u64(&b, fid(FD_C_DEBUG, FD_F_F));
  b_u32(&b, f25b);
  assert_int_equal(run(9, 3, &b, &r), 0);
  fd_object *ob = fakedbg_object(F, FD_O_DEBUG);
  assert_int_equal(ob->fields[FD_F_X].u.i, 99);
  assert_int_equal(ob->fields[FD_F_B].u.i, 5);
  assert_true(ob->fields[FD_F_NEXT].u.l == 0);
  assert_true(ob->fields[FD_F_F].u.f == 2.5f);
  get_one_field(o, fid(FD_C_DEBUG, FD_F_X), 0);
  /* next = a String: the VM's TYPE_MISMATCH; next = a forged ID: INVALID_OBJECT */
  b.n = 0;
  b_u64(&b, o);
  b_u32(&b, 1);
  b_u64(&b, fid(FD_C_DEBUG, FD_F_NEXT));
  b_u64(&b, oid(FD_O_STR));
  assert_int_equal(run(9, 3, &b, &r), DDMC_JDWP_TYPE_MISMATCH);
  b.n -= 8;
  b_u64(&b, 0x777700000001ull);
  assert_int_equal(run(9, 3, &b, &r), DDMC_JDWP_INVALID_OBJECT);
  /* a value cut short */
  b.n -= 8;
  b_u32(&b, 1);
  assert_int_equal(run(9, 3, &b, &r), DDMC_JDWP_INVALID_LENGTH);

  /* StringReference.Value */
  assert_int_equal(run_id(10, 1, oid(FD_O_STR), &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 6);
  assert_memory_equal(ddmc_read_bytes(&r, 6), "h\xc3\xa9llo", 6);
  assert_int_equal(ddmc_reader_done(&r), 0);
  assert_int_equal(run_id(10, 1, o, &r), DDMC_JDWP_INVALID_STRING);
}

static int arr_get(int32_t first, int32_t n, ddmc_reader *r) {
  body b = {.n = 0};
  b_u64(&b, oid(FD_O_ARR));
  b_u32(&b, (uint32_t)first);
  b_u32(&b, (uint32_t)n);
  return run(13, 2, &b, r);
}
static int arr_set(int32_t first, int32_t n, const int32_t *v, int nv) {
  body b = {.n = 0};
  b_u64(&b, oid(FD_O_ARR));
  b_u32(&b, (uint32_t)first);
  b_u32(&b, (uint32_t)n);
  for (int i = 0; i < nv; i++) b_u32(&b, (uint32_t)v[i]);
  return run(13, 3, &b, NULL);
}

static void test_array_reference(void **state) {
  (void)state;
  ddmc_reader r;
  assert_int_equal(run_id(13, 1, oid(FD_O_ARR), &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 5);
  assert_int_equal(arr_get(1, 3, &r), 0);
  assert_int_equal(ddmc_read_u8(&r), 'I');
  assert_int_equal(ddmc_read_u32(&r), 3);
  for (int i = 0; i < 3; i++) assert_int_equal(ddmc_read_u32(&r), 20 + 10 * i);
  assert_int_equal(ddmc_reader_done(&r), 0);
  assert_int_equal(arr_get(0, 5, &r), 0);
  assert_int_equal(arr_get(5, 0, &r), 0);
  assert_int_equal(ddmc_read_u8(&r), 'I');
  assert_int_equal(ddmc_read_u32(&r), 0);
  /* bad ranges */
  const int32_t bad[][2] = {{4, 2}, {6, 0}, {-1, 1}, {0, -1}, {0, 6}, {INT32_MAX, 1}, {1, INT32_MAX}, {INT32_MIN, 0}};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    assert_int_equal(arr_get(bad[i][0], bad[i][1], &r), DDMC_JDWP_INVALID_INDEX);
    assert_int_equal(arr_set(bad[i][0], bad[i][1], NULL, 0), DDMC_JDWP_INVALID_INDEX);
  }
  const int32_t v[] = {77, 88};
  assert_int_equal(arr_set(3, 2, v, 2), 0);
  assert_int_equal(arr_get(3, 2, &r), 0);
  ddmc_read_bytes(&r, 5);
  assert_int_equal(ddmc_read_u32(&r), 77);
  assert_int_equal(ddmc_read_u32(&r), 88);
  /* fewer values than the count says */
  assert_int_equal(arr_set(0, 2, v, 1), DDMC_JDWP_INVALID_LENGTH);
  assert_int_equal(fakedbg_object(F, FD_O_ARR)->arr[0], 10);
  /* more values than the count says */
  assert_int_equal(arr_set(0, 1, v, 2), DDMC_JDWP_ILLEGAL_ARGUMENT);
  /* not an array */
  body b = {.n = 0};
  b_u64(&b, oid(FD_O_DEBUG));
  b_u32(&b, 0);
  b_u32(&b, 0);
  assert_int_equal(run(13, 2, &b, &r), DDMC_JDWP_INVALID_ARRAY);
  assert_int_equal(run(13, 3, &b, &r), DDMC_JDWP_INVALID_ARRAY);
}

static int frames(uint32_t t, int32_t start, int32_t len, ddmc_reader *r) {
  body b = {.n = 0};
  b_u64(&b, tid(t));
  b_u32(&b, (uint32_t)start);
  b_u32(&b, (uint32_t)len);
  return run(11, 6, &b, r);
}

static void test_thread_reference(void **state) {
  (void)state;
  ddmc_reader r;
  uint64_t m = tid(FD_T_MAIN), w = tid(FD_T_WORKER);
  assert_int_equal(run_id(11, 1, m, &r), 0);
  assert_string_equal(rd_str(&r), "main");
  assert_int_equal(run_id(11, 1, w, &r), 0);
  assert_string_equal(rd_str(&r), "Worker");
  assert_int_equal(run_id(11, 4, w, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), DDMC_TS_SLEEPING);
  assert_int_equal(ddmc_read_u32(&r), 0);
  assert_int_equal(run_id(11, 5, m, &r), 0);
  assert_true(ddmc_read_u64(&r) == oid(FD_O_GROUP_MAIN));
  assert_int_equal(run_id(11, 15, m, &r), 0);
  assert_int_equal(ddmc_read_u8(&r), 0);

  /* Frames of a running thread. */
  assert_int_equal(run_id(11, 7, m, &r), DDMC_JDWP_THREAD_NOT_SUSPENDED);
  assert_int_equal(frames(FD_T_MAIN, 0, -1, &r), DDMC_JDWP_THREAD_NOT_SUSPENDED);

  assert_int_equal(run_id(11, 2, m, &r), 0);
  assert_int_equal(run_id(11, 4, m, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), DDMC_TS_RUNNING);
  assert_int_equal(ddmc_read_u32(&r), 1);
  assert_int_equal(run_id(11, 7, m, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 2);
  assert_int_equal(frames(FD_T_MAIN, 0, -1, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 2);
  uint64_t fr[2];
  static const uint32_t meth[] = {FD_M_COMPUTE, FD_M_MAIN};
  static const uint64_t index[] = {5, 12};
  for (int i = 0; i < 2; i++) {
    fr[i] = ddmc_read_u64(&r);
    assert_int_equal(ddmc_read_u8(&r), DDMC_TYPE_CLASS);
    assert_true(ddmc_read_u64(&r) == cid(FD_C_DEBUG));
    assert_true(ddmc_read_u64(&r) == mid(meth[i]));
    assert_true(ddmc_read_u64(&r) == index[i]);
  }
  assert_true(fr[0] != fr[1]);
  assert_int_equal(ddmc_reader_done(&r), 0);
  assert_int_equal(frames(FD_T_MAIN, 1, 1, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 1);
  assert_true(ddmc_read_u64(&r) == fr[1]);
  assert_int_equal(frames(FD_T_MAIN, 2, 0, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 0);
  assert_int_equal(frames(FD_T_MAIN, 3, 0, &r), DDMC_JDWP_INVALID_INDEX);
  assert_int_equal(frames(FD_T_MAIN, -1, 1, &r), DDMC_JDWP_INVALID_INDEX);
  /* a range past the frames: INVALID_INDEX, as HotSpot answers jdb's (0, 1) of a frameless thread */
  assert_int_equal(frames(FD_T_MAIN, 0, 3, &r), DDMC_JDWP_INVALID_INDEX);
  assert_int_equal(frames(FD_T_MAIN, 1, -2, &r), DDMC_JDWP_INVALID_INDEX);

  /* A frameID outlives neither a resume nor the same resume + suspend (the epoch). */
  body b = {.n = 0};
  b_u64(&b, m);
  b_u64(&b, fr[0]);
  assert_int_equal(run(16, 3, &b, &r), 0);
  assert_int_equal(run_id(11, 3, m, &r), 0);
  assert_int_equal(run(16, 3, &b, &r), DDMC_JDWP_THREAD_NOT_SUSPENDED);
  assert_int_equal(run_id(11, 2, m, &r), 0);
  assert_int_equal(run(16, 3, &b, &r), DDMC_JDWP_INVALID_FRAMEID);
  assert_int_equal(frames(FD_T_MAIN, 0, 1, &r), 0);
  ddmc_read_u32(&r);
  uint64_t fresh = ddmc_read_u64(&r);
  assert_true(fresh != fr[0]);
  b.n = 8;
  b_u64(&b, fresh);
  assert_int_equal(run(16, 3, &b, &r), 0);
  /* The frame of one thread on another (suspended) one: the epochs differ, or the depth is
   * checked against that thread's frames. */
  assert_int_equal(run_id(11, 2, w, &r), 0);
  b.n = 0;
  b_u64(&b, w);
  b_u64(&b, fresh);
  int rc = run(16, 3, &b, &r);
  assert_true(rc == 0 || rc == DDMC_JDWP_INVALID_FRAMEID);
  /* Forged frame IDs. */
  const uint64_t forged[] = {0, fresh + 2, fresh + 100, fresh & ~0xffffffffull, fresh | 0x80000000u, ~0ull};
  for (size_t i = 0; i < sizeof(forged) / sizeof(forged[0]); i++) {
    b.n = 0;
    b_u64(&b, m);
    b_u64(&b, forged[i]);
    assert_int_equal(run(16, 3, &b, &r), DDMC_JDWP_INVALID_FRAMEID);
  }
}

static void test_thread_groups(void **state) {
  (void)state;
  ddmc_reader r;
  uint64_t sys = oid(FD_O_GROUP_SYSTEM), mg = oid(FD_O_GROUP_MAIN);
  assert_int_equal(run_id(12, 1, sys, &r), 0);
  assert_string_equal(rd_str(&r), "system");
  assert_int_equal(run_id(12, 1, mg, &r), 0);
  assert_string_equal(rd_str(&r), "main");
  assert_int_equal(run_id(12, 2, mg, &r), 0);
  assert_true(ddmc_read_u64(&r) == sys);
  assert_int_equal(run_id(12, 2, sys, &r), 0);
  assert_true(ddmc_read_u64(&r) == 0);
  assert_int_equal(run_id(12, 3, mg, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 2);
  assert_true(ddmc_read_u64(&r) == tid(FD_T_MAIN));
  assert_true(ddmc_read_u64(&r) == tid(FD_T_WORKER));
  assert_int_equal(ddmc_read_u32(&r), 0);
  assert_int_equal(ddmc_reader_done(&r), 0);
  assert_int_equal(run_id(12, 3, sys, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 0); /* JDWP is internal */
  assert_int_equal(ddmc_read_u32(&r), 1);
  assert_true(ddmc_read_u64(&r) == mg);
  assert_int_equal(ddmc_reader_done(&r), 0);
  assert_int_equal(run_id(12, 1, oid(FD_O_DEBUG), &r), DDMC_JDWP_INVALID_THREAD_GROUP);
}

static uint64_t frame_id(uint32_t t, int32_t depth) {
  ddmc_reader r;
  assert_int_equal(frames(t, depth, 1, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 1);
  return ddmc_read_u64(&r);
}

static int get_locals(uint32_t t, uint64_t frame, int n, const int32_t *slots, const char *tags, ddmc_reader *r) {
  body b = {.n = 0};
  b_u64(&b, tid(t));
  b_u64(&b, frame);
  b_u32(&b, (uint32_t)n);
  for (int i = 0; i < n; i++) {
    b_u32(&b, (uint32_t)slots[i]);
    b_u8(&b, (uint8_t)tags[i]);
  }
  return run(16, 1, &b, r);
}

static void test_stack_frame(void **state) {
  (void)state;
  ddmc_reader r;
  uint64_t m = tid(FD_T_MAIN);
  assert_int_equal(run_id(11, 2, m, &r), 0);
  uint64_t f0 = frame_id(FD_T_MAIN, 0), f1 = frame_id(FD_T_MAIN, 1);
  static const int32_t slots[] = {0, 1, 2};
  assert_int_equal(get_locals(FD_T_MAIN, f0, 3, slots, "LIJ", &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 3);
  assert_int_equal(ddmc_read_u8(&r), 'L');
  assert_true(ddmc_read_u64(&r) == oid(FD_O_DEBUG));
  assert_int_equal(ddmc_read_u8(&r), 'I');
  assert_int_equal(ddmc_read_u32(&r), 7);
  assert_int_equal(ddmc_read_u8(&r), 'J');
  assert_true(ddmc_read_u64(&r) == 123456789012ull);
  assert_int_equal(ddmc_reader_done(&r), 0);
  /* the debugger may name an object local with any object tag; the reply has the right one */
  assert_int_equal(get_locals(FD_T_MAIN, f1, 3, slots, "[Is", &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 3);
  assert_int_equal(ddmc_read_u8(&r), 'L');
  assert_true(ddmc_read_u64(&r) == 0);
  ddmc_read_bytes(&r, 5);
  assert_int_equal(ddmc_read_u8(&r), 's');
  assert_true(ddmc_read_u64(&r) == oid(FD_O_STR));
  /* wrong tag, bad slot, bad tag */
  assert_int_equal(get_locals(FD_T_MAIN, f0, 1, slots + 1, "J", &r), DDMC_JDWP_TYPE_MISMATCH);
  static const int32_t badslot[] = {9};
  assert_int_equal(get_locals(FD_T_MAIN, f0, 1, badslot, "I", &r), DDMC_JDWP_INVALID_SLOT);
  assert_int_equal(get_locals(FD_T_MAIN, f0, 1, slots + 1, "Q", &r), DDMC_JDWP_INVALID_TAG);
  /* SetValues: n = 8 then read back. */
  body b = {.n = 0};
  b_u64(&b, m);
  b_u64(&b, f0);
  b_u32(&b, 1);
  b_u32(&b, 1);
  b_u8(&b, 'I');
  b_u32(&b, 8);
  assert_int_equal(run(16, 2, &b, &r), 0);
  assert_int_equal(F->frames[FD_T_MAIN][0].locals[1].u.i, 8);
  b.p[b.n - 5] = 'Z'; /* the wrong type for the slot */
  b.n -= 3;
  assert_int_equal(run(16, 2, &b, &r), DDMC_JDWP_TYPE_MISMATCH);
  /* ThisObject: Debug for compute, null for static main. */
  b.n = 0;
  b_u64(&b, m);
  b_u64(&b, f0);
  assert_int_equal(run(16, 3, &b, &r), 0);
  assert_int_equal(ddmc_read_u8(&r), 'L');
  assert_true(ddmc_read_u64(&r) == oid(FD_O_DEBUG));
  b.n = 8;
  b_u64(&b, f1);
  assert_int_equal(run(16, 3, &b, &r), 0);
  assert_int_equal(ddmc_read_u8(&r), 'L');
  assert_true(ddmc_read_u64(&r) == 0);
  /* a frame past the thread's frames */
  b.n = 8;
  b_u64(&b, (f0 & ~0xffffffffull) | 3);
  assert_int_equal(run(16, 3, &b, &r), DDMC_JDWP_INVALID_FRAMEID);
  /* a frame of a thread that is not suspended */
  b.n = 0;
  b_u64(&b, tid(FD_T_WORKER));
  b_u64(&b, f0);
  assert_int_equal(run(16, 3, &b, &r), DDMC_JDWP_THREAD_NOT_SUSPENDED);
  assert_int_equal(run(16, 4, &b, &r), DDMC_JDWP_NOT_IMPLEMENTED); /* PopFrames */
}

static void test_exit(void **state) {
  (void)state;
  body b = {.n = 0};
  b_u32(&b, 3);
  assert_int_equal(run(1, 10, &b, NULL), 0);
  WAIT_FOR(atomic_load(&F->n_exit) == 1);
  assert_int_equal(atomic_load(&F->last_exit), 3);
}

/* A VM built against an older, shorter ops table: the missing ops are NOT_IMPLEMENTED. */
static void test_short_ops_table(void **state) {
  (void)state;
  ddmc__dbg *d2;
  assert_int_equal(ddmc__dbg_new(F->fv.vm, &F->ops, offsetof(ddmc_vm_bridge, set_breakpoint), &d2), 0);
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

/* ================= bad input */

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
static void bd_ct_invoke(body *b) {
  b_u64(b, cid(FD_C_DEBUG));
  b_u64(b, tid(FD_T_WORKER));
  b_u64(b, mid(FD_M_MAIN));
  b_u32(b, 1); /* main(String[] args): args = null */
  b_u8(b, '[');
  b_u64(b, 0);
  b_u32(b, 0);
}
static void bd_new_instance(body *b) {
  b_u64(b, cid(FD_C_DEBUG));
  b_u64(b, tid(FD_T_WORKER));
  b_u64(b, mid(FD_M_INIT));
  b_u32(b, 0);
  b_u32(b, 0);
}
static void bd_new_array(body *b) {
  b_u64(b, cid(FD_C_INT_ARRAY));
  b_u32(b, 3);
}
static void bd_stop(body *b) {
  b_u64(b, tid(FD_T_WORKER));
  b_u64(b, oid(FD_O_DEBUG2));
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
    {11, 9, bd_thread},    {11, 13, bd_thread},
};

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
  if (set == 1 && cmd == 6) fakedbg_reconnect(F); /* Dispose ended the session */
}

static void test_bad_input_every_command(void **state) {
  (void)state;
  int exits = 0, commands = 0;
  uint8_t junk[64];
  for (size_t i = 0; i < sizeof(junk); i++) junk[i] = (uint8_t)(0x5a ^ (i * 37));
  for (int set = 1; set <= 17; set++) {
    for (int cmd = 0; cmd < 32; cmd++) {
      const ddmc__cmd *c = ddmc__dbg_lookup((uint8_t)set, (uint8_t)cmd);
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
  assert_false(fakedbg_has_bp(F, FD_C_DEBUG, FD_M_COMPUTE, 8));

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

/* ================= requests and matching */

static void test_pattern_match(void **state) {
  (void)state;
  assert_true(ddmc__pattern_match("java.*", "java.lang.String"));
  assert_true(ddmc__pattern_match("*String", "java.lang.String"));
  assert_true(ddmc__pattern_match("java.lang.String", "java.lang.String"));
  assert_true(ddmc__pattern_match("*", "anything"));
  assert_true(ddmc__pattern_match("*", ""));
  assert_true(ddmc__pattern_match("", ""));
  assert_true(ddmc__pattern_match("Deb*", "Debug"));
  assert_true(ddmc__pattern_match("*ebug", "Debug"));
  assert_true(ddmc__pattern_match("Debug*", "Debug"));
  assert_true(ddmc__pattern_match("*Debug", "Debug"));
  assert_false(ddmc__pattern_match("java.*", "javax.swing.JFrame"));
  assert_false(ddmc__pattern_match("java.*", "java"));
  assert_false(ddmc__pattern_match("*.String", "String"));
  assert_false(ddmc__pattern_match("a*", ""));
  assert_false(ddmc__pattern_match("Debug", "Debug2"));
  assert_false(ddmc__pattern_match("", "x"));
  assert_false(ddmc__pattern_match("*Debug", "Debu"));
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
  assert_true(fakedbg_has_bp(F, FD_C_DEBUG, FD_M_COMPUTE, 5));
  assert_int_equal(run(15, 3, NULL, NULL), 0); /* ClearAllBreakpoints: the debugger's only */
  assert_true(fakedbg_has_bp(F, FD_C_DEBUG, FD_M_COMPUTE, 5));
  assert_int_equal(ddmc__ctl_breakpoint(F->fv.vm, &loc, 0), 0);
  assert_int_equal(atomic_load(&F->n_clear_bp), 1);
  assert_false(fakedbg_has_bp(F, FD_C_DEBUG, FD_M_COMPUTE, 5));
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
  assert_true(fakedbg_has_bp(F, FD_C_DEBUG, FD_M_COMPUTE, 5));
  assert_true(ddmc_event_wanted(F->fv.vm, DDMC_EV_BREAKPOINT));
  /* another location: its own set */
  body m2 = {.n = 0};
  mod_loc(&m2, FD_M_MAIN, 0);
  assert_int_equal(set_req(DDMC_EV_BREAKPOINT, 0, &m2, 1, &c), 0);
  assert_int_equal(atomic_load(&F->n_set_bp), 2);
  /* clearing one of two keeps it; a wrong kind or unknown id clears nothing */
  assert_int_equal(clear_req(DDMC_EV_BREAKPOINT, a), 0);
  assert_int_equal(atomic_load(&F->n_clear_bp), 0);
  assert_true(fakedbg_has_bp(F, FD_C_DEBUG, FD_M_COMPUTE, 5));
  assert_int_equal(clear_req(DDMC_EV_SINGLE_STEP, b), 0);
  assert_int_equal(clear_req(DDMC_EV_BREAKPOINT, a), 0);
  assert_int_equal(clear_req(DDMC_EV_BREAKPOINT, 9999), 0);
  assert_int_equal(atomic_load(&F->n_clear_bp), 0);
  assert_int_equal(clear_req(DDMC_EV_BREAKPOINT, b), 0);
  assert_int_equal(atomic_load(&F->n_clear_bp), 1);
  assert_false(fakedbg_has_bp(F, FD_C_DEBUG, FD_M_COMPUTE, 5));
  assert_true(fakedbg_has_bp(F, FD_C_DEBUG, FD_M_MAIN, 0));
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
  fakedbg_reconnect(F);
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

/* ddmc__step_stops against the fake's line table of compute: lines {0: 20, 5: 21, 8: 22}. */
static void test_step_stops(void **state) {
  (void)state;
  ddmc__dbg *d = F->d;
  ddmc__step s;
  memset(&s, 0, sizeof(s));
  s.start = (ddmc_location){FD_C_DEBUG, FD_M_COMPUTE, 5};
  s.start_depth = 1;
  s.start_line = 21;
  assert_int_equal(ddmc__line_of(d, &s.start), 21);
  ddmc_location l6 = {FD_C_DEBUG, FD_M_COMPUTE, 6}, l8 = {FD_C_DEBUG, FD_M_COMPUTE, 8},
                l0 = {FD_C_DEBUG, FD_M_COMPUTE, 0}, m4 = {FD_C_DEBUG, FD_M_MAIN, 4};
  assert_int_equal(ddmc__line_of(d, &l6), 21);
  assert_int_equal(ddmc__line_of(d, &l8), 22);
  assert_int_equal(ddmc__line_of(d, &m4), 11);
  ddmc_location before = {FD_C_DEBUG, FD_M_COMPUTE, -1};
  assert_int_equal(ddmc__line_of(d, &before), -1);
  /* LINE OVER */
  s.size = 1;
  s.depth = 1;
  assert_false(ddmc__step_stops(d, &s, &l6, 1)); /* same line */
  assert_true(ddmc__step_stops(d, &s, &l8, 1));  /* next line */
  assert_true(ddmc__step_stops(d, &s, &l0, 1));  /* a jump back to another line */
  assert_false(ddmc__step_stops(d, &s, &m4, 2)); /* inside a call */
  assert_true(ddmc__step_stops(d, &s, &m4, 0));  /* the frame returned */
  /* LINE INTO: stops inside a call with line information... */
  s.depth = 0;
  assert_true(ddmc__step_stops(d, &s, &m4, 2));
  assert_false(ddmc__step_stops(d, &s, &l6, 1));
  /* LINE OUT: only when the frame returned */
  s.depth = 2;
  assert_false(ddmc__step_stops(d, &s, &l8, 1));
  assert_false(ddmc__step_stops(d, &s, &m4, 2));
  assert_true(ddmc__step_stops(d, &s, &m4, 0));
  /* MIN: by instruction */
  s.size = 0;
  s.depth = 1;
  assert_true(ddmc__step_stops(d, &s, &l6, 1));
  assert_false(ddmc__step_stops(d, &s, &s.start, 1));
  s.depth = 0;
  assert_true(ddmc__step_stops(d, &s, &m4, 2));
  /* the same index in another method at the same depth: a different place */
  s.size = 1;
  s.depth = 1;
  ddmc_location other = {FD_C_DEBUG, FD_M_MAIN, 5};
  assert_true(ddmc__step_stops(d, &s, &other, 1));
  /* a request that stays (no Count) steps on from where it ended */
  ddmc__step_restart(d, &s, &other, 1);
  assert_false(ddmc__step_stops(d, &s, &other, 1));
  assert_true(ddmc__step_stops(d, &s, &m4, 0));
}

/* ...and INTO a method without line information does not stop there (a fresh debugger: the
 * line cache is per session). */
static void test_step_into_no_lines(void **state) {
  (void)state;
  atomic_store(&F->absent_info, 1);
  ddmc__step s;
  memset(&s, 0, sizeof(s));
  s.size = 1;
  s.depth = 0;
  s.start = (ddmc_location){FD_C_DEBUG, FD_M_COMPUTE, 5};
  s.start_depth = 1;
  s.start_line = 21;
  ddmc_location m4 = {FD_C_DEBUG, FD_M_MAIN, 4};
  assert_false(ddmc__step_stops(F->d, &s, &m4, 2));
  assert_true(ddmc__step_stops(F->d, &s, &m4, 0));
}

static int32_t step_req(uint32_t thread, int size, int depth, uint8_t policy, int want_rc) {
  body m = {.n = 0};
  b_u8(&m, DDMC__MOD_STEP);
  b_u64(&m, tid(thread));
  b_u32(&m, (uint32_t)size);
  b_u32(&m, (uint32_t)depth);
  int32_t id = 0;
  assert_int_equal(set_req(DDMC_EV_SINGLE_STEP, policy, &m, 1, &id), want_rc);
  return id;
}

static void test_single_step_requests(void **state) {
  (void)state;
  /* not suspended */
  step_req(FD_T_MAIN, 1, 1, 0, DDMC_JDWP_THREAD_NOT_SUSPENDED);
  assert_int_equal(atomic_load(&F->n_set_step), 0);
  assert_int_equal(run_id(11, 2, tid(FD_T_MAIN), NULL), 0);
  /* bad size / depth, no Step modifier */
  step_req(FD_T_MAIN, 2, 1, 0, DDMC_JDWP_ILLEGAL_ARGUMENT);
  step_req(FD_T_MAIN, 1, 3, 0, DDMC_JDWP_ILLEGAL_ARGUMENT);
  assert_int_equal(set_req(DDMC_EV_SINGLE_STEP, 0, NULL, 0, NULL), DDMC_JDWP_ILLEGAL_ARGUMENT);
  /* LINE OVER from compute:5 (line 21, depth 1) */
  int32_t id = step_req(FD_T_MAIN, 1, 1, 0, 0);
  assert_int_equal(atomic_load(&F->stepping[FD_T_MAIN]), 1);
  step_req(FD_T_MAIN, 1, 1, 0, DDMC_JDWP_DUPLICATE);
  /* the thread runs (the debugger resumes it) and reports instructions */
  assert_int_equal(run_id(11, 3, tid(FD_T_MAIN), NULL), 0);
  assert_int_equal(post(FD_T_MAIN, FD_M_COMPUTE, 6, 1, 0), 0);
  assert_int_equal(post(FD_T_MAIN, FD_M_INIT, 0, 2, DDMC_POST_METHOD_ENTRY), 0); /* a call */
  assert_int_equal(post(FD_T_WORKER, FD_M_COMPUTE, 8, 1, 0), 0);                /* another thread */
  assert_int_equal(events(), 0);
  assert_int_equal(post(FD_T_MAIN, FD_M_COMPUTE, 8, 1, 0), 0);
  assert_int_equal(events(), 1);
  assert_int_equal(g_comp[0].e[0].kind, DDMC_EV_SINGLE_STEP);
  assert_int_equal(g_comp[0].e[0].req, id);
  assert_true(g_comp[0].e[0].index == 8);
  /* without a Count the request stays (JDWP, as HotSpot): the next step, from compute:8, ends
   * when the frame returns; the same location again is no new step */
  assert_int_equal(post(FD_T_MAIN, FD_M_COMPUTE, 8, 1, 0), 0);
  assert_int_equal(events(), 0);
  assert_int_equal(post(FD_T_MAIN, FD_M_COMPUTE, 0, 0, 0), 0);
  assert_int_equal(events(), 1);
  assert_int_equal(g_comp[0].e[0].req, id);
  assert_int_equal(clear_req(DDMC_EV_SINGLE_STEP, id), 0);
  assert_int_equal(atomic_load(&F->stepping[FD_T_MAIN]), 0);
  /* OUT from the Worker's compute (depth 2 of 3 frames... it steps out of frame 0) */
  assert_int_equal(run_id(11, 2, tid(FD_T_WORKER), NULL), 0);
  id = step_req(FD_T_WORKER, 1, 2, 0, 0);
  assert_int_equal(run_id(11, 3, tid(FD_T_WORKER), NULL), 0);
  assert_int_equal(post(FD_T_WORKER, FD_M_COMPUTE, 9, 2, 0), 0);
  assert_int_equal(post(FD_T_WORKER, FD_M_MAIN, 0, 3, 0), 0);
  assert_int_equal(events(), 0);
  assert_int_equal(post(FD_T_WORKER, FD_M_COMPUTE, 6, 1, 0), 0);
  assert_int_equal(events(), 1);
  /* a step with ClassExclude: no stop in an excluded class */
  assert_int_equal(clear_req(DDMC_EV_SINGLE_STEP, id), 0);
  assert_int_equal(run_id(11, 2, tid(FD_T_MAIN), NULL), 0);
  body m = {.n = 0};
  b_u8(&m, DDMC__MOD_STEP);
  b_u64(&m, tid(FD_T_MAIN));
  b_u32(&m, 0);
  b_u32(&m, 0);
  b_u8(&m, DDMC__MOD_CLASS_EXCLUDE);
  b_str(&m, "java.*");
  assert_int_equal(set_req(DDMC_EV_SINGLE_STEP, 0, &m, 2, &id), 0);
  assert_int_equal(run_id(11, 3, tid(FD_T_MAIN), NULL), 0);
  ddmc_location in_string = {FD_C_STRING, 0, 0};
  assert_int_equal(ddmc_post_location(F->fv.vm, FD_T_MAIN, &in_string, 2, 0, 0), 0);
  assert_int_equal(events(), 0);
  assert_int_equal(post(FD_T_MAIN, FD_M_INIT, 0, 2, 0), 0);
  assert_int_equal(events(), 1);
}

/* ================= suspension */

static void test_suspend_counts(void **state) {
  (void)state;
  ddmc_reader r;
  uint64_t m = tid(FD_T_MAIN), w = tid(FD_T_WORKER);
  assert_int_equal(run_id(11, 2, m, NULL), 0);
  assert_int_equal(run_id(11, 2, m, NULL), 0);
  assert_int_equal(run_id(11, 12, m, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 2);
  assert_int_equal(atomic_load(&F->n_suspend), 1);
  assert_int_equal(atomic_load(&F->vm_suspended[FD_T_MAIN]), 1);
  assert_int_equal(run_id(11, 3, m, NULL), 0);
  assert_int_equal(atomic_load(&F->n_resume), 0);
  assert_int_equal(run_id(11, 3, m, NULL), 0);
  assert_int_equal(atomic_load(&F->n_resume), 1);
  assert_int_equal(atomic_load(&F->vm_suspended[FD_T_MAIN]), 0);
  assert_int_equal(run_id(11, 3, m, NULL), 0); /* never below 0 */
  assert_int_equal(atomic_load(&F->n_resume), 1);
  assert_int_equal(run_id(11, 12, m, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 0);
  /* VirtualMachine.Suspend / Resume: every visible thread (not the internal one) */
  assert_int_equal(run(1, 8, NULL, NULL), 0);
  assert_int_equal(thr_count(FD_T_MAIN), 1);
  assert_int_equal(thr_count(FD_T_WORKER), 1);
  assert_int_equal(thr_count(FD_T_JDWP), 0);
  assert_int_equal(atomic_load(&F->n_suspend), 3);
  assert_int_equal(run_id(11, 2, m, NULL), 0);
  assert_int_equal(thr_count(FD_T_MAIN), 2);
  assert_int_equal(run(1, 9, NULL, NULL), 0);
  assert_int_equal(thr_count(FD_T_MAIN), 1);
  assert_int_equal(thr_count(FD_T_WORKER), 0);
  assert_int_equal(atomic_load(&F->vm_suspended[FD_T_WORKER]), 0);
  assert_int_equal(atomic_load(&F->vm_suspended[FD_T_MAIN]), 1);
  assert_int_equal(run(1, 9, NULL, NULL), 0);
  assert_int_equal(thr_count(FD_T_MAIN), 0);
  assert_int_equal(atomic_load(&F->n_resume), 3);
  assert_int_equal(run(1, 9, NULL, NULL), 0);
  assert_int_equal(atomic_load(&F->n_resume), 3);
  /* a VM that cannot suspend: the count stays 0 */
  atomic_store(&F->fail_suspend, DDMC_JDWP_THREAD_NOT_ALIVE);
  assert_int_equal(run_id(11, 2, w, NULL), DDMC_JDWP_THREAD_NOT_ALIVE);
  assert_int_equal(thr_count(FD_T_WORKER), 0);
  atomic_store(&F->fail_suspend, 0);
}

typedef struct poster {
  pthread_t th;
  uint32_t thread;
  uint32_t method;
  int64_t index;
  int32_t depth;
  atomic_int done;
  int rc;
} poster;

static void *post_main(void *arg) {
  poster *p = arg;
  p->rc = post(p->thread, p->method, p->index, p->depth, DDMC_POST_AT_BREAKPOINT);
  atomic_store(&p->done, 1);
  return NULL;
}

static void start_poster(poster *p, uint32_t thread, uint32_t method, int64_t index, int32_t depth) {
  memset(p, 0, sizeof(*p));
  p->thread = thread;
  p->method = method;
  p->index = index;
  p->depth = depth;
  atomic_init(&p->done, 0);
  assert_int_equal(pthread_create(&p->th, NULL, post_main, p), 0);
}

static void test_event_parks_thread(void **state) {
  (void)state;
  body m = {.n = 0};
  mod_loc(&m, FD_M_COMPUTE, 8);
  int32_t id;
  assert_int_equal(set_req(DDMC_EV_BREAKPOINT, 1 /* EVENT_THREAD */, &m, 1, &id), 0);
  poster p;
  start_poster(&p, FD_T_WORKER, FD_M_COMPUTE, 8, 2);
  WAIT_FOR(thr_count(FD_T_WORKER) == 1 && atomic_load(&F->parked[FD_T_WORKER]) == 1);
  int got = 0;
  for (int i = 0; i < 5000 && got == 0; i++) {
    got = events();
    if (!got) sleep_ms(1);
  }
  assert_int_equal(got, 1);
  assert_int_equal(g_comp[0].policy, 1);
  assert_true(g_comp[0].e[0].thread == tid(FD_T_WORKER));
  sleep_ms(20);
  assert_int_equal(atomic_load(&p.done), 0);       /* parked */
  assert_int_equal(atomic_load(&F->n_suspend), 0); /* it stopped itself: no suspend_thread */
  assert_int_equal(thr_count(FD_T_MAIN), 0);
  /* the debugger sees it suspended, with frames */
  ddmc_reader r;
  assert_int_equal(run_id(11, 7, tid(FD_T_WORKER), &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 3);
  /* a Suspend on top: count 2; one Resume leaves it parked, the second releases it */
  assert_int_equal(run_id(11, 2, tid(FD_T_WORKER), NULL), 0);
  assert_int_equal(thr_count(FD_T_WORKER), 2);
  assert_int_equal(atomic_load(&F->n_suspend), 0);
  assert_int_equal(run_id(11, 3, tid(FD_T_WORKER), NULL), 0);
  sleep_ms(20);
  assert_int_equal(atomic_load(&p.done), 0);
  assert_int_equal(run_id(11, 3, tid(FD_T_WORKER), NULL), 0);
  pthread_join(p.th, NULL);
  assert_int_equal(p.rc, 0);
  assert_int_equal(thr_count(FD_T_WORKER), 0);
  assert_int_equal(atomic_load(&F->n_resume), 0);
  assert_int_equal(atomic_load(&F->n_park), 1);
  assert_int_equal(atomic_load(&F->n_unpark), 1);
  assert_int_equal(atomic_load(&F->parked[FD_T_WORKER]), 0);
}

/* A thread the library first meets while the VM is suspended (it started meanwhile) inherits
 * the suspend-all count, and its first event waits, parked, until the VM is resumed: an event
 * from it would reach the debugger in the middle of inspecting the stopped VM (jdb resumed that
 * event set and lost the breakpoint thread's frames). */
static void test_new_thread_waits_while_suspended(void **state) {
  (void)state;
  body m = {.n = 0};
  mod_loc(&m, FD_M_COMPUTE, 8);
  int32_t id;
  assert_int_equal(set_req(DDMC_EV_BREAKPOINT, 0 /* NONE */, &m, 1, &id), 0);
  atomic_store(&F->worker_dead, 1); /* not yet visible: VirtualMachine.Suspend cannot see it */
  assert_int_equal(run(1, 8, NULL, NULL), 0);
  atomic_store(&F->worker_dead, 0);
  poster p;
  start_poster(&p, FD_T_WORKER, FD_M_COMPUTE, 8, 2);
  WAIT_FOR(atomic_load(&F->parked[FD_T_WORKER]) == 1);
  sleep_ms(20);
  assert_int_equal(atomic_load(&p.done), 0);
  assert_int_equal(thr_count(FD_T_WORKER), 1);
  assert_int_equal(events(), 0); /* nothing reported while it is held */
  assert_int_equal(run(1, 9, NULL, NULL), 0);
  pthread_join(p.th, NULL);
  assert_int_equal(p.rc, 0);
  assert_int_equal(thr_count(FD_T_WORKER), 0);
  int got = 0;
  for (int i = 0; i < 5000 && got == 0; i++) {
    got = events();
    if (!got) sleep_ms(1);
  }
  assert_int_equal(got, 1); /* reported once resumed, with policy NONE */
  assert_int_equal(g_comp[0].policy, 0);
  assert_int_equal(atomic_load(&F->parked[FD_T_WORKER]), 0);
}

static void test_event_suspend_all(void **state) {
  (void)state;
  body m = {.n = 0};
  mod_loc(&m, FD_M_COMPUTE, 8);
  assert_int_equal(set_req(DDMC_EV_BREAKPOINT, 2 /* ALL */, &m, 1, NULL), 0);
  poster p;
  start_poster(&p, FD_T_WORKER, FD_M_COMPUTE, 8, 2);
  WAIT_FOR(thr_count(FD_T_WORKER) == 1 && thr_count(FD_T_MAIN) == 1);
  assert_int_equal(atomic_load(&F->vm_suspended[FD_T_MAIN]), 1);
  assert_int_equal(atomic_load(&F->vm_suspended[FD_T_WORKER]), 0);
  int got = 0;
  for (int i = 0; i < 5000 && got == 0; i++) {
    got = events();
    if (!got) sleep_ms(1);
  }
  assert_int_equal(got, 1);
  assert_int_equal(g_comp[0].policy, 2);
  assert_int_equal(run(1, 9, NULL, NULL), 0); /* VirtualMachine.Resume */
  pthread_join(p.th, NULL);
  assert_int_equal(thr_count(FD_T_WORKER), 0);
  assert_int_equal(thr_count(FD_T_MAIN), 0);
  assert_int_equal(atomic_load(&F->n_suspend), 1);
  assert_int_equal(atomic_load(&F->n_resume), 1);
}

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
  fakedbg_reconnect(F);
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

/* The reply to request id among the packets the session has queued (error and body). */
static int find_reply(uint32_t id, uint16_t *error, uint8_t *body, size_t cap, size_t *n) {
  ddmc__session *s = F->sess;
  for (int tries = 0; tries < 5000; tries++) {
    ddmc__session_drain_queue(s, 0);
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

/* A test's hold on a thread inside an op (fakedbg's hook): armed for one call at `where`. */
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
  WAIT_FOR(atomic_load(&F->parked[FD_T_WORKER]) == 1 && thr_count(FD_T_MAIN) == 1);
  assert_int_equal(atomic_load(&F->vm_suspended[FD_T_MAIN]), 1);
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
  fakedbg_reconnect(F);                       /* ... and another attaches */
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

/* ArrayType.NewInstance, ThreadReference.Interrupt and Stop reach their ops with checked
 * arguments; the new array gets an ID the debugger can use at once. */
static void test_new_array_interrupt_stop(void **state) {
  (void)state;
  body b = {.n = 0};
  bd_new_array(&b);
  ddmc_reader r;
  assert_int_equal(run(4, 1, &b, &r), 0);
  assert_int_equal(ddmc_read_u8(&r), '[');
  uint64_t arr = ddmc_read_u64(&r);
  assert_true(arr != 0);
  assert_int_equal(ddmc_reader_left(&r), 0);
  assert_int_equal(run_id(13, 1, arr, &r), 0); /* ArrayReference.Length */
  assert_int_equal(ddmc_read_u32(&r), 3);
  assert_int_equal(ddmc_reader_left(&r), 0);
  b.n = 0;
  b_u64(&b, cid(FD_C_INT_ARRAY));
  b_u32(&b, (uint32_t)-1);
  assert_int_equal(run(4, 1, &b, NULL), DDMC_JDWP_ILLEGAL_ARGUMENT);
  b.n = 0;
  b_u64(&b, cid(FD_C_DEBUG));
  b_u32(&b, 1);
  assert_int_equal(run(4, 1, &b, NULL), DDMC_JDWP_INVALID_ARRAY);
  b.n = 0;
  b_u64(&b, cid(FD_C_INT_ARRAY));
  b_u32(&b, 100); /* the fake VM's arrays hold 8 */
  assert_int_equal(run(4, 1, &b, NULL), DDMC_JDWP_OUT_OF_MEMORY);

  assert_int_equal(run_id(11, 11, tid(FD_T_WORKER), NULL), 0);
  assert_int_equal(atomic_load(&F->n_interrupt), 1);
  assert_int_equal(atomic_load(&F->last_interrupt_thread), FD_T_WORKER);
  assert_int_equal(run_id(11, 11, oid(FD_O_DEBUG), NULL), DDMC_JDWP_INVALID_THREAD);
  assert_int_equal(atomic_load(&F->n_interrupt), 1);

  b.n = 0;
  bd_stop(&b);
  assert_int_equal(run(11, 10, &b, NULL), 0);
  assert_int_equal(atomic_load(&F->last_stop_thread), FD_T_WORKER);
  assert_true((ddmc_ref)atomic_load(&F->last_stop_exc) == FD_O_DEBUG2);
  b.n = 0;
  b_u64(&b, tid(FD_T_MAIN));
  b_u64(&b, oid(FD_O_STR)); /* not a Throwable */
  assert_int_equal(run(11, 10, &b, NULL), DDMC_JDWP_INVALID_CLASS);
  b.n = 0;
  b_u64(&b, tid(FD_T_MAIN));
  b_u64(&b, 0);
  assert_int_equal(run(11, 10, &b, NULL), DDMC_JDWP_INVALID_OBJECT);
  assert_int_equal(atomic_load(&F->last_stop_thread), FD_T_WORKER);
  assert_int_equal(atomic_load(&F->bad_calls), 0);
}

/* Monitors: who owns FD_O_DEBUG, who waits for it, what main owns (with frame depths), what
 * Worker waits for; the thread commands want the thread suspended. */
static void test_monitors(void **state) {
  (void)state;
  ddmc_reader r;
  assert_int_equal(run_id(9, 5, oid(FD_O_DEBUG), &r), 0);
  assert_true(ddmc_read_u64(&r) == tid(FD_T_MAIN));
  assert_int_equal(ddmc_read_u32(&r), 2);
  assert_int_equal(ddmc_read_u32(&r), 1); /* Worker; the internal JDWP thread is not shown */
  assert_true(ddmc_read_u64(&r) == tid(FD_T_WORKER));
  assert_int_equal(ddmc_reader_left(&r), 0);
  assert_int_equal(run_id(9, 5, oid(FD_O_STR), &r), 0); /* never locked */
  assert_true(ddmc_read_u64(&r) == 0);
  assert_int_equal(ddmc_read_u32(&r), 0);
  assert_int_equal(ddmc_read_u32(&r), 0);
  assert_int_equal(ddmc_reader_left(&r), 0);
  assert_int_equal(run_id(9, 5, 0, NULL), DDMC_JDWP_INVALID_OBJECT);
  assert_int_equal(run_id(9, 5, 0x7777777, NULL), DDMC_JDWP_INVALID_OBJECT);

  assert_int_equal(run_id(11, 8, tid(FD_T_MAIN), NULL), DDMC_JDWP_THREAD_NOT_SUSPENDED);
  assert_int_equal(run_id(11, 9, tid(FD_T_WORKER), NULL), DDMC_JDWP_THREAD_NOT_SUSPENDED);
  assert_int_equal(run_id(11, 2, tid(FD_T_MAIN), NULL), 0);
  assert_int_equal(run_id(11, 2, tid(FD_T_WORKER), NULL), 0);
  assert_int_equal(run_id(11, 8, tid(FD_T_MAIN), &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 2);
  assert_int_equal(ddmc_read_u8(&r), 'L');
  assert_true(ddmc_read_u64(&r) == oid(FD_O_DEBUG));
  assert_int_equal(ddmc_read_u8(&r), 'L');
  assert_true(ddmc_read_u64(&r) == oid(FD_O_DEBUG2));
  assert_int_equal(ddmc_reader_left(&r), 0);
  assert_int_equal(run_id(11, 13, tid(FD_T_MAIN), &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 2);
  assert_int_equal(ddmc_read_u8(&r), 'L');
  assert_true(ddmc_read_u64(&r) == oid(FD_O_DEBUG));
  assert_int_equal(ddmc_read_u32(&r), 1);
  assert_int_equal(ddmc_read_u8(&r), 'L');
  assert_true(ddmc_read_u64(&r) == oid(FD_O_DEBUG2));
  assert_int_equal(ddmc_read_u32(&r), 0);
  assert_int_equal(ddmc_reader_left(&r), 0);
  assert_int_equal(run_id(11, 8, tid(FD_T_WORKER), &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 0);
  assert_int_equal(run_id(11, 9, tid(FD_T_WORKER), &r), 0);
  assert_int_equal(ddmc_read_u8(&r), 'L');
  assert_true(ddmc_read_u64(&r) == oid(FD_O_DEBUG));
  assert_int_equal(ddmc_reader_left(&r), 0);
  assert_int_equal(run_id(11, 9, tid(FD_T_MAIN), &r), 0); /* waits for nothing: a null object */
  assert_int_equal(ddmc_read_u8(&r), 'L');
  assert_true(ddmc_read_u64(&r) == 0);
  assert_int_equal(run_id(11, 9, oid(FD_O_DEBUG), NULL), DDMC_JDWP_INVALID_THREAD);
  assert_int_equal(run_id(11, 3, tid(FD_T_MAIN), NULL), 0);
  assert_int_equal(run_id(11, 3, tid(FD_T_WORKER), NULL), 0);
  assert_int_equal(atomic_load(&F->bad_calls), 0);
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
  assert_int_equal(ddmc__session_input(F->sess, pkt, sizeof pkt), 0);
  assert_int_equal(atomic_load(&F->n_clear_bp), 1);
  assert_false(fakedbg_has_bp(F, FD_C_DEBUG, FD_M_COMPUTE, 8));
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
  int got = 0;
  for (int i = 0; i < 5000 && got == 0; i++) {
    got = events();
    if (!got) sleep_ms(1);
  }
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
      fakedbg_reconnect(F);
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

/* Out of memory at every allocation in turn, over a session that touches every part of the
 * layer: no crash, and nothing left allocated once the VM is freed (ASan checks the accesses). */
typedef struct failmem {
  atomic_long count, fail_at, failed, live;
} failmem;
static void *fm_malloc(void *ud, size_t n) {
  failmem *m = ud;
  if (atomic_fetch_add(&m->count, 1) + 1 == atomic_load(&m->fail_at)) {
    atomic_fetch_add(&m->failed, 1);
    return NULL;
  }
  void *p = malloc(n);
  if (p) atomic_fetch_add(&m->live, 1);
  return p;
}
static void *fm_realloc(void *ud, void *p, size_t n) {
  failmem *m = ud;
  if (atomic_fetch_add(&m->count, 1) + 1 == atomic_load(&m->fail_at)) {
    atomic_fetch_add(&m->failed, 1);
    return NULL;
  }
  void *q = realloc(p, n);
  if (q && p == NULL) atomic_fetch_add(&m->live, 1);
  return q;
}
static void fm_free(void *ud, void *p) {
  failmem *m = ud;
  if (p) atomic_fetch_sub(&m->live, 1);
  free(p);
}

static uint64_t try_oid(ddmc_ref o) {
  uint64_t id = 0;
  ddmc__id_of_object(F->d, o, &id);
  return id;
}
static uint64_t try_cid(ddmc_class c) {
  const ddmc__cls *k = NULL;
  return ddmc__cls_get(F->d, c, &k) == 0 ? k->id : 0;
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
  b_u64(&b, k ? ddmc__field_id(cls(FD_C_DEBUG), FD_F_NEXT) : 0);
  b_u64(&b, k ? ddmc__field_id(cls(FD_C_DEBUG), FD_F_LABEL) : 0);
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
  fakedbg_events(F, NULL, NULL);
  run(1, 6, NULL, NULL); /* Dispose */
  fakedbg_reconnect(F);
  run(1, 4, NULL, NULL);
}

/* ddmc_dbg_enable with each of its allocations failing in turn: DDMC_ENOMEM, nothing left. */
static void test_attach_out_of_memory(void **state) {
  (void)state;
  failmem fm;
  ddmc_allocator a = {&fm, fm_malloc, fm_realloc, fm_free};
  for (long n = 1;; n++) {
    atomic_init(&fm.count, 0);
    atomic_init(&fm.fail_at, n);
    atomic_init(&fm.failed, 0);
    atomic_init(&fm.live, 0);
    F = calloc(1, sizeof(*F));
    assert_non_null(F);
    int rc = fakedbg_new_mem(F, FAKEDBG_NO_SESSION, &a);
    fakedbg_free(F);
    free(F);
    F = NULL;
    assert_true(rc == 0 || rc == DDMC_ENOMEM);
    assert_int_equal(atomic_load(&fm.live), 0);
    if (atomic_load(&fm.failed) == 0) break;
  }
}

static void test_out_of_memory_everywhere(void **state) {
  (void)state;
  failmem fm;
  ddmc_allocator a = {&fm, fm_malloc, fm_realloc, fm_free};
  long total = 0;
  for (long n = 1;; n++) {
    atomic_init(&fm.count, 0);
    atomic_init(&fm.fail_at, n);
    atomic_init(&fm.failed, 0);
    atomic_init(&fm.live, 0);
    F = calloc(1, sizeof(*F));
    assert_non_null(F);
    if (fakedbg_new_mem(F, 0, &a) == 0) {
      ddmc__buf_init(&g_out, ddmc__dbg_mem(F->d), (size_t)64 << 20);
      oom_script();
      ddmc__buf_free(&g_out);
    }
    int bad = atomic_load(&F->bad_calls);
    fakedbg_free(F);
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
  assert_int_equal(ddmc__object_of_id(F->d, s, &o), 0);
  assert_true(o == FD_O_STR + 0x100000);
  assert_true(oid(FD_O_STR + 0x100000) == s);
  assert_true(oid(FD_O_DEBUG) == dbg);
  assert_true(oid(FD_O_STR) != s);
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
      cmocka_unit_test_setup_teardown(test_request_budget, setup, teardown),
      cmocka_unit_test_setup_teardown(test_ids_model, setup, teardown),
      cmocka_unit_test_setup_teardown(test_ids_bound_threads, setup, teardown),
      cmocka_unit_test_setup_teardown(test_ids_bound_all_classes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_vm_commands, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reference_type, setup, teardown),
      cmocka_unit_test_setup_teardown(test_method_tables, setup, teardown),
      cmocka_unit_test_setup_teardown(test_object_reference, setup, teardown),
      cmocka_unit_test_setup_teardown(test_array_reference, setup, teardown),
      cmocka_unit_test_setup_teardown(test_thread_reference, setup, teardown),
      cmocka_unit_test_setup_teardown(test_thread_groups, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stack_frame, setup, teardown),
      cmocka_unit_test_setup_teardown(test_exit, setup, teardown),
      cmocka_unit_test_setup_teardown(test_short_ops_table, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bad_input_every_command, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bad_input_no_effect_on_error, setup, teardown),
      cmocka_unit_test_setup_teardown(test_bad_input_huge_counts, setup, teardown),
      cmocka_unit_test(test_pattern_match),
      cmocka_unit_test_setup_teardown(test_breakpoints_counted_per_location, setup, teardown),
      cmocka_unit_test_setup_teardown(test_switches_shared_with_agent, setup, teardown),
      cmocka_unit_test_setup_teardown(test_count_modifier, setup, teardown),
      cmocka_unit_test_setup_teardown(test_thread_only_and_composite, setup, teardown),
      cmocka_unit_test_setup_teardown(test_class_filters, setup, teardown),
      cmocka_unit_test_setup_teardown(test_instance_only, setup, teardown),
      cmocka_unit_test_setup_teardown(test_step_stops, setup, teardown),
      cmocka_unit_test_setup_teardown(test_step_into_no_lines, setup, teardown),
      cmocka_unit_test_setup_teardown(test_single_step_requests, setup, teardown),
      cmocka_unit_test_setup_teardown(test_suspend_counts, setup, teardown),
      cmocka_unit_test_setup_teardown(test_new_thread_waits_while_suspended, setup, teardown),
      cmocka_unit_test_setup_teardown(test_exception_events, setup, teardown),
      cmocka_unit_test_setup_teardown(test_relay_detach_and_next_debugger, setup, teardown),
      cmocka_unit_test_setup_teardown(test_invoke, setup, teardown),
      cmocka_unit_test_setup_teardown(test_invoke_session_ends, setup, teardown),
      cmocka_unit_test_setup_teardown(test_invoke_before_park, setup, teardown),
      cmocka_unit_test_setup_teardown(test_invoke_breakpoint_inside, setup, teardown),
      cmocka_unit_test_setup_teardown(test_monitors, setup, teardown),
      cmocka_unit_test_setup_teardown(test_new_array_interrupt_stop, setup, teardown),
      cmocka_unit_test_setup_teardown(test_field_watch, setup, teardown),
      cmocka_unit_test_setup_teardown(test_event_parks_thread, setup, teardown),
      cmocka_unit_test_setup_teardown(test_event_suspend_all, setup, teardown),
      cmocka_unit_test_setup_teardown(test_reset_releases_everything, setup, teardown),
      cmocka_unit_test_setup_teardown(test_vm_start_suspend_y, setup_suspend_y, teardown),
      cmocka_unit_test_setup_teardown(test_hold_events, setup, teardown),
      cmocka_unit_test_setup_teardown(test_visit_roots, setup, teardown),
      cmocka_unit_test_setup_teardown(test_other_events, setup, teardown),
      cmocka_unit_test_setup_teardown(test_strongest_policy, setup, teardown),
      cmocka_unit_test_setup_teardown(test_concurrent_posts, setup, teardown),
      cmocka_unit_test(test_attach_out_of_memory),
      cmocka_unit_test(test_out_of_memory_everywhere),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
