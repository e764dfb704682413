/* SPDX-License-Identifier: Apache-2.0 */
/* The debugger tests' shared harness (dbg_fixture.h): the fake debuggee per test, commands run
 * through ddmc__dbg_run, request bodies built byte by byte, events parsed back from the send queue. */
#include "dbg_fixture.h"

#include <time.h>

fakebridge *F;

ddmc_buf g_out;

static int setup_flags(unsigned flags) {
  F = calloc(1, sizeof(*F));
  if (F == NULL || fakebridge_new(F, flags) != 0) return -1;
  ddmc__buf_init(&g_out, ddmc__dbg_mem(F->d), (size_t)64 << 20);
  return 0;
}

int setup(void **state) {
  (void)state;
  return setup_flags(0);
}

int setup_suspend_y(void **state) {
  (void)state;
  return setup_flags(FAKEBRIDGE_SUSPEND_Y);
}

int setup_thread_objects(void **state) {
  (void)state;
  return setup_flags(FAKEBRIDGE_THREAD_OBJECTS);
}

int setup_weak_names(void **state) {
  (void)state;
  return setup_flags(FAKEBRIDGE_WEAK_NAMES);
}

int setup_monitor_events(void **state) {
  (void)state;
  return setup_flags(FAKEBRIDGE_MONITOR_EVENTS);
}

int setup_bulk_suspend(void **state) {
  (void)state;
  return setup_flags(FAKEBRIDGE_BULK_SUSPEND);
}

int teardown(void **state) {
  (void)state;
  int bad = atomic_load(&F->bad_calls);
  ddmc__buf_free(&g_out);
  fakebridge_free(F);
  free(F);
  F = NULL;
  assert_int_equal(bad, 0); /* the library never handed the VM a value it should have rejected */
  return 0;
}

void b_u8(body *b, uint8_t v) { b->p[b->n++] = v; }

void b_u16(body *b, uint16_t v) {
  ddmc__put_u16(b->p + b->n, v);
  b->n += 2;
}

void b_u32(body *b, uint32_t v) {
  ddmc__put_u32(b->p + b->n, v);
  b->n += 4;
}

void b_u64(body *b, uint64_t v) {
  b_u32(b, (uint32_t)(v >> 32));
  b_u32(b, (uint32_t)v);
}

void b_str(body *b, const char *s) {
  size_t n = strlen(s);
  b_u32(b, (uint32_t)n);
  memcpy(b->p + b->n, s, n);
  b->n += n;
}

void b_loc(body *b, uint8_t tag, uint64_t cls_id, uint32_t method, uint64_t index) {
  b_u8(b, tag);
  b_u64(b, cls_id);
  b_u64(b, cls_id == cid(FD_C_DEBUG) ? mid(method) : (uint64_t)method + 1);
  b_u64(b, index);
}

/* Runs one command; r reads the reply body. */
int run_raw(uint8_t set, uint8_t cmd, const uint8_t *p, size_t n, ddmc_reader *r) {
  ddmc__buf_reset(&g_out);
  int rc = ddmc__dbg_run(F->d, set, cmd, p, n, &g_out);
  if (r != NULL) ddmc_reader_init(r, g_out.p, g_out.len);
  return rc;
}

int run(uint8_t set, uint8_t cmd, const body *b, ddmc_reader *r) {
  return run_raw(set, cmd, b ? b->p : NULL, b ? b->n : 0, r);
}

/* A command whose body is one 8-byte ID. */
int run_id(uint8_t set, uint8_t cmd, uint64_t id, ddmc_reader *r) {
  body b = {.n = 0};
  b_u64(&b, id);
  return run(set, cmd, &b, r);
}

char *rd_str(ddmc_reader *r) {
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

uint64_t oid(ddmc_ref o) {
  uint64_t id = 0;
  assert_int_equal(ddmc__dbg_id_of_object(F->d, o, &id), 0);
  return id;
}

const ddmc__dbg_cls *cls(ddmc_class c) {
  const ddmc__dbg_cls *k = NULL;
  assert_int_equal(ddmc__dbg_cls_get(F->d, c, &k), 0);
  return k;
}

uint64_t cid(ddmc_class c) { return cls(c)->id; }

/* A method of Debug (the fake's only class with methods). */
uint64_t mid(uint32_t method) { return ddmc__dbg_method_id(cls(FD_C_DEBUG), method); }

uint64_t fid(ddmc_class c, uint32_t index) { return ddmc__dbg_field_id(cls(c), index); }

uint64_t tid(uint32_t t) {
  return oid(t == FD_T_MAIN ? FD_O_THREAD_MAIN : t == FD_T_WORKER ? FD_O_THREAD_WORKER : FD_O_THREAD_JDWP);
}

comp g_comp[16];

int g_ncomp;

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
int events(void) {
  g_ncomp = 0;
  return fakebridge_events(F, on_event, NULL);
}

int events_wait(void) {
  int got = 0;
  for (int i = 0; i < 5000 && got == 0; i++) {
    got = events();
    if (!got) sleep_ms(1);
  }
  return got;
}

/* EventRequest.Set; mods holds nmods modifiers. Returns the JDWP error; *id the request. */
int set_req(uint8_t kind, uint8_t policy, const body *mods, uint32_t nmods, int32_t *id) {
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

int clear_req(uint8_t kind, int32_t id) {
  body b = {.n = 0};
  b_u8(&b, kind);
  b_u32(&b, (uint32_t)id);
  return run(15, 2, &b, NULL);
}

void mod_loc(body *m, uint32_t method, int64_t index) {
  b_u8(m, DDMC__MOD_LOCATION_ONLY);
  b_loc(m, DDMC_TYPE_CLASS, cid(FD_C_DEBUG), method, (uint64_t)index);
}

int post(uint32_t thread, uint32_t method, int64_t index, int32_t depth, unsigned flags) {
  ddmc_location l = {FD_C_DEBUG, method, index};
  return ddmc_post_location(F->fv.vm, thread, &l, depth, 0, flags);
}

int thr_count(uint32_t t) { return ddmc_dbg_suspend_count(F->fv.vm, t); }

void get_one_field(uint64_t obj, uint64_t field, int want) {
  body b = {.n = 0};
  b_u64(&b, obj);
  b_u32(&b, 1);
  b_u64(&b, field);
  assert_int_equal(run(9, 2, &b, NULL), want);
}

int frames(uint32_t t, int32_t start, int32_t len, ddmc_reader *r) {
  body b = {.n = 0};
  b_u64(&b, tid(t));
  b_u32(&b, (uint32_t)start);
  b_u32(&b, (uint32_t)len);
  return run(11, 6, &b, r);
}

uint64_t frame_id(uint32_t t, int32_t depth) {
  ddmc_reader r;
  assert_int_equal(frames(t, depth, 1, &r), 0);
  assert_int_equal(ddmc_read_u32(&r), 1);
  return ddmc_read_u64(&r);
}

static void *post_main(void *arg) {
  poster *p = arg;
  p->rc = post(p->thread, p->method, p->index, p->depth, DDMC_POST_AT_BREAKPOINT);
  atomic_store(&p->done, 1);
  return NULL;
}

void start_poster(poster *p, uint32_t thread, uint32_t method, int64_t index, int32_t depth) {
  memset(p, 0, sizeof(*p));
  p->thread = thread;
  p->method = method;
  p->index = index;
  p->depth = depth;
  atomic_init(&p->done, 0);
  assert_int_equal(pthread_create(&p->th, NULL, post_main, p), 0);
}

int32_t step_req(uint32_t thread, int size, int depth, uint8_t policy, int want_rc) {
  body m = {.n = 0};
  b_u8(&m, DDMC__MOD_STEP);
  b_u64(&m, tid(thread));
  b_u32(&m, (uint32_t)size);
  b_u32(&m, (uint32_t)depth);
  int32_t id = 0;
  assert_int_equal(set_req(DDMC_EV_SINGLE_STEP, policy, &m, 1, &id), want_rc);
  return id;
}

void bd_ct_invoke(body *b) {
  b_u64(b, cid(FD_C_DEBUG));
  b_u64(b, tid(FD_T_WORKER));
  b_u64(b, mid(FD_M_MAIN));
  b_u32(b, 1); /* main(String[] args): args = null */
  b_u8(b, '[');
  b_u64(b, 0);
  b_u32(b, 0);
}

void bd_new_instance(body *b) {
  b_u64(b, cid(FD_C_DEBUG));
  b_u64(b, tid(FD_T_WORKER));
  b_u64(b, mid(FD_M_INIT));
  b_u32(b, 0);
  b_u32(b, 0);
}

void bd_new_array(body *b) {
  b_u64(b, cid(FD_C_INT_ARRAY));
  b_u32(b, 3);
}

void bd_stop(body *b) {
  b_u64(b, tid(FD_T_WORKER));
  b_u64(b, oid(FD_O_DEBUG2));
}
