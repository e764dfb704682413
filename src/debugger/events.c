/* SPDX-License-Identifier: Apache-2.0 */
/* Events from VM threads: matching the session's requests, the composite packet (64/100), and
 * suspension by policy.
 *
 * One call per trigger point gathers every request that matches there into one composite, with
 * the strongest policy among them (docs/protocol/jdwp.md §2.4): a step that lands on a breakpoint is one stop. The
 * packet is built on the reporting thread and queued for the JDWP thread, the only writer of the
 * socket; nothing here waits for the network. Counts are raised before the packet is queued and
 * the thread parks after, so the debugger's Resume always finds them raised; SuspendCount and
 * Status wait out that window (ddmc__dbg_events_settle), so no reply shows a count before the
 * event that raised it. */
#include <string.h>
#include <time.h>

#include "debugger/glue.h"
#include "debugger/requests.h"
#include "hub/hub.h"
#include "send/send.h"

#define DDMC__EVENT_MAX ((size_t)1 << 20)

/* ---- entering and leaving a post call */

static ddmc__dbg *enter(ddmc_vm *vm) {
  ddmc__dbg *d = vm ? ddmc__dbg_of_vm(vm) : NULL;
  if (d == NULL) return NULL;
  /* No debugger: return before touching the shared counter. A thread that reads 0 here touches
   * nothing the session end frees; method events for a trace come through here on every call. */
  if (!atomic_load_explicit(&d->connected, memory_order_relaxed)) return NULL;
  atomic_fetch_add(&d->inflight, 1);
  if (!atomic_load(&d->connected)) {
    atomic_fetch_sub(&d->inflight, 1);
    return NULL;
  }
  return d;
}

static void leave(ddmc__dbg *d) { atomic_fetch_sub(&d->inflight, 1); }

/* An enabled request of this kind exists (ddmc_event_wanted). d outlives every post call. */
static int wants(ddmc__dbg *d, int kind) { return atomic_load_explicit(&d->want[kind], memory_order_relaxed) > 0; }

/* A post no request wants: the thread still stops here if the debugger holds it (one atomic
 * read when nothing is held). */
static int not_wanted(ddmc__dbg *d, uint32_t thread) {
  ddmc__dbg_thr_wait_resumed(d, thread);
  return atomic_load_explicit(&d->connected, memory_order_relaxed) ? 0 : DDMC_ENOTCONN;
}

/* enter() for an event of thread: first waits while the debugger holds the thread suspended. */
static ddmc__dbg *enter_thread(ddmc_vm *vm, uint32_t thread) {
  ddmc__dbg *d = vm ? ddmc__dbg_of_vm(vm) : NULL;
  if (d != NULL) ddmc__dbg_thr_wait_resumed(d, thread);
  return enter(vm);
}

void ddmc__dbg_events_settle(ddmc__dbg *d) {
  for (int i = 0; i < 100 && atomic_load(&d->raising) != 0; i++) {
    struct timespec ts = {0, 100000};
    nanosleep(&ts, NULL);
  }
}

void ddmc__dbg_events_quiesce(ddmc__dbg *d) {
  while (atomic_load(&d->inflight) != 0) {
    struct timespec ts = {0, 200000};
    nanosleep(&ts, NULL);
  }
}

/* ---- matching */

int ddmc__dbg_pattern_match(const char *pattern, const char *name) {
  size_t pl = strlen(pattern), nl = strlen(name);
  if (pl > 0 && pattern[0] == '*') return nl >= pl - 1 && memcmp(name + nl - (pl - 1), pattern + 1, pl - 1) == 0;
  if (pl > 0 && pattern[pl - 1] == '*') return nl >= pl - 1 && memcmp(name, pattern, pl - 1) == 0;
  return strcmp(pattern, name) == 0;
}

/* What happened, for the modifiers to look at. */
typedef struct basket {
  uint32_t thread;
  const ddmc_location *loc;
  int32_t depth;
  ddmc_class cls;
  ddmc_ref this_obj;
  ddmc_class exc_cls; /* EXCEPTION: the exception's class; caught: a handler takes it */
  int caught;
  ddmc_class field_cls; /* FIELD_*: the field */
  uint32_t field;
} basket;

static int loc_eq(const ddmc_location *a, const ddmc_location *b) {
  return a->cls == b->cls && a->method == b->method && a->index == b->index;
}

int ddmc__dbg_cls_matches(ddmc__dbg *d, const ddmc__dbg_cls *k, const char *pattern) {
  char small[256];
  size_t n = ddmc__dbg_cls_dotted(k, NULL);
  if (n == SIZE_MAX) return 0;
  char *name = n < sizeof small ? small : ddmc__malloc(ddmc__dbg_mem(d), n + 1);
  if (name == NULL) return 0;
  ddmc__dbg_cls_dotted(k, name);
  int hit = ddmc__dbg_pattern_match(pattern, name);
  if (name != small) ddmc__free(ddmc__dbg_mem(d), name);
  return hit;
}

static int class_name_matches(ddmc__dbg *d, ddmc_class c, const char *pattern) {
  const ddmc__dbg_cls *k;
  return c != 0 && ddmc__dbg_cls_get(d, c, &k) == 0 && ddmc__dbg_cls_matches(d, k, pattern);
}

/* A ThreadOnly of a thread not started when it was set: the event's thread is it when its object is
 * (one thread_info per event until the thread is known, then a compare). */
static int unstarted_thread_is(ddmc__dbg *d, ddmc__dbg_mod *m, uint32_t thread) {
  uint32_t seen = atomic_load_explicit(&m->thread_seen, memory_order_relaxed);
  if (seen != 0) return seen == thread;
  ddmc_thread_detail info;
  memset(&info, 0, sizeof(info));
  if (thread == 0 || d->bridge.thread_info == NULL || d->bridge.thread_info(d->vm_data, thread, &info) != 0 ||
      info.object != m->thread_obj)
    return 0;
  atomic_store_explicit(&m->thread_seen, thread, memory_order_relaxed);
  return 1;
}

/* SourceNameMatch as libjdwp evaluates it: the class's source file, or one of the source names
 * of its SMAP (smap.c: a JSP's, a Kotlin inline function's file). The SMAP is asked for only when
 * the source file does not match; this runs on the VM thread that prepares the class, before any
 * suspension, as ReferenceType.SourceDebugExtension would on the JDWP thread. */
static int source_name_matches(ddmc__dbg *d, ddmc_class cls, const char *pattern) {
  const ddmc__dbg_cls *k;
  if (cls == 0 || ddmc__dbg_cls_get(d, cls, &k) != 0) return 0;
  if (k->source != NULL && ddmc__dbg_pattern_match(pattern, k->source)) return 1;
  if (d->bridge.source_debug_extension == NULL) return 0;
  ddmc_buf sde;
  ddmc__buf_init(&sde, d->mem, DDMC__MAX_SMAP);
  int hit = d->bridge.source_debug_extension(d->vm_data, k->handle, &sde) == 0 && !ddmc_buf_error(&sde) &&
            ddmc__dbg_smap_names_match((const char *)sde.p, ddmc_buf_len(&sde), pattern);
  ddmc__buf_free(&sde);
  return hit;
}

/* Every modifier in order; Count is spent only by events that got that far. */
static int matches(ddmc__dbg *d, ddmc__dbg_req *r, const basket *b) {
  if (atomic_load_explicit(&r->expired, memory_order_relaxed)) return 0;
  for (uint32_t i = 0; i < r->nmods; i++) {
    ddmc__dbg_mod *m = &r->mods[i];
    switch (m->kind) {
      case DDMC__MOD_COUNT: {
        int left = atomic_fetch_sub(&m->left, 1);
        if (left != 1) return 0; /* not yet (> 1), or already spent (< 1) */
        atomic_store(&r->expired, 1);
        break;
      }
      case DDMC__MOD_THREAD_ONLY:
        if (m->thread != 0 ? b->thread != m->thread : !unstarted_thread_is(d, m, b->thread)) return 0;
        break;
      case DDMC__MOD_CLASS_ONLY:
        if (!ddmc__dbg_is_subclass(d, b->cls, m->cls)) return 0;
        break;
      case DDMC__MOD_CLASS_MATCH:
        if (!class_name_matches(d, b->cls, m->pattern)) return 0;
        break;
      case DDMC__MOD_CLASS_EXCLUDE:
        if (class_name_matches(d, b->cls, m->pattern)) return 0;
        break;
      case DDMC__MOD_LOCATION_ONLY:
        if (b->loc == NULL || !loc_eq(b->loc, &m->loc)) return 0;
        break;
      case DDMC__MOD_STEP:
        if (b->loc == NULL || r->step == NULL || b->thread != m->thread ||
            !ddmc__dbg_step_stops(d, r->step, b->loc, b->depth))
          return 0;
        break;
      case DDMC__MOD_INSTANCE_ONLY:
        if (b->this_obj == 0 || b->this_obj != m->instance) return 0;
        break;
      case DDMC__MOD_SOURCE_NAME_MATCH:
        if (!source_name_matches(d, b->cls, m->pattern)) return 0;
        break;
      case DDMC__MOD_PLATFORM_THREADS_ONLY: break;
      case DDMC__MOD_EXCEPTION_ONLY:
        if (b->exc_cls == 0 || (m->cls != 0 && !ddmc__dbg_is_subclass(d, b->exc_cls, m->cls))) return 0;
        if (b->caught ? !m->caught : !m->uncaught) return 0;
        break;
      case DDMC__MOD_FIELD_ONLY:
        if (b->field_cls == 0 || b->field_cls != m->cls || b->field != m->field) return 0;
        break;
      default: return 0;
    }
  }
  /* A step request stays until cleared (JDWP): the next step starts where this one ended. Only
   * the stepping thread gets here for it, so no other thread reads what changes. */
  if (r->step != NULL && b->loc != NULL) ddmc__dbg_step_restart(d, r->step, b->loc, b->depth);
  return 1;
}

/* ---- the composite */

typedef struct composite {
  ddmc_buf b;
  uint8_t storage[256];
  uint32_t n;
  int policy;
  int no_stop; /* report policy, suspend nobody (VM_DEATH) */
} composite;

static void comp_init(ddmc__dbg *d, composite *c) {
  ddmc__buf_init_on(&c->b, d->mem, DDMC__EVENT_MAX, c->storage, sizeof(c->storage));
  c->n = 0;
  c->policy = 0;
  c->no_stop = 0;
  ddmc_buf_put_u8(&c->b, 0);  /* policy, patched */
  ddmc_buf_put_u32(&c->b, 0); /* count, patched */
}

static void comp_event(composite *c, int kind, int32_t request, int policy) {
  ddmc_buf_put_u8(&c->b, (uint8_t)kind);
  ddmc_buf_put_u32(&c->b, (uint32_t)request);
  c->n++;
  if (policy > c->policy) c->policy = policy;
}

/* Queues a composite, or keeps it while the debugger holds events. */
static int queue_composite(ddmc__dbg *d, const uint8_t *p, size_t n) {
  if (atomic_load_explicit(&d->holding, memory_order_acquire)) {
    int rc = DDMC_ENOTCONN;
    ddmc__lock(&d->hold_lock);
    if (atomic_load(&d->holding)) {
      rc = d->held.len + 4 + n > DDMC__HELD_MAX ? DDMC_EQFULL : 0;
      if (rc == 0) {
        ddmc_buf_put_u32(&d->held, (uint32_t)n);
        ddmc_buf_put_bytes(&d->held, p, n);
        rc = d->held.err ? DDMC_ENOMEM : 0;
      }
    }
    ddmc__unlock(&d->hold_lock);
    if (rc != DDMC_ENOTCONN) return rc; /* released meanwhile: send it now */
  }
  ddmc_iov iov = {p, n};
  return ddmc__send_cmd(d->vm, d->session, 64, 100, &iov, 1);
}

void ddmc__dbg_events_hold(ddmc__dbg *d, int on) {
  ddmc__lock(&d->hold_lock);
  atomic_store(&d->holding, on);
  if (on) {
    ddmc__unlock(&d->hold_lock);
    return;
  }
  ddmc_buf held = d->held; /* take it whole; new events go straight out */
  ddmc__buf_init(&d->held, d->mem, DDMC__HELD_MAX + 64);
  ddmc__unlock(&d->hold_lock);
  ddmc_reader r;
  ddmc_reader_init(&r, held.p, held.len);
  while (ddmc_reader_left(&r) >= 4) {
    uint32_t n = ddmc_read_u32(&r);
    const uint8_t *p = ddmc_read_bytes(&r, n);
    if (p == NULL) break;
    ddmc_iov iov = {p, n};
    ddmc__send_cmd(d->vm, d->session, 64, 100, &iov, 1);
  }
  ddmc__buf_free(&held);
}

/* Sends c (if it holds any event) and suspends by its policy. Always leaves the post call. */
static int deliver(ddmc__dbg *d, uint32_t thread, composite *c) {
  int rc = 0;
  if (c->n == 0 || c->b.err != 0) {
    rc = c->b.err ? DDMC_ENOMEM : 0;
    ddmc__buf_free(&c->b);
    leave(d);
    return rc;
  }
  c->b.p[0] = (uint8_t)c->policy;
  ddmc__put_u32(c->b.p + 1, c->n);
  int policy = c->no_stop ? DDMC__POLICY_NONE : c->policy, raising = policy != DDMC__POLICY_NONE;
  if (raising) {
    atomic_fetch_add(&d->raising, 1);
    if (d->bridge.thread_parking) d->bridge.thread_parking(d->vm_data, thread, 1);
    if (ddmc__dbg_thr_event_suspend(d, thread, policy) != 0) {
      ddmc__dbg_thr_event_undo(d, thread, policy);
      policy = DDMC__POLICY_NONE; /* report the event all the same, without stopping */
      if (d->bridge.thread_parking) d->bridge.thread_parking(d->vm_data, thread, 0);
    }
  }
  rc = queue_composite(d, c->b.p, c->b.len);
  if (raising) atomic_fetch_sub(&d->raising, 1);
  /* A thread about to park waits for the debugger's answer: wake the JDWP thread now rather than
   * leave the packet for its batching grace period (a round trip per breakpoint hit or step). */
  if (rc == 0 && policy != DDMC__POLICY_NONE) ddmc__wake_force(d->vm);
  ddmc__buf_free(&c->b);
  leave(d);
  if (policy != DDMC__POLICY_NONE) {
    if (rc != 0)
      ddmc__dbg_thr_event_undo(d, thread, policy); /* the debugger will never resume it */
    else
      ddmc__dbg_thr_park(d, thread);
    if (d->bridge.thread_parking) d->bridge.thread_parking(d->vm_data, thread, 0);
  }
  return rc;
}

/* Adds every request of kind that matches b; encode writes each event's data. */
typedef int (*encode_fn)(ddmc__dbg *d, composite *c, int kind, const void *arg);

static void collect(ddmc__dbg *d, ddmc__dbg_snap *s, int kind, const basket *b, composite *c, encode_fn enc,
                    const void *arg) {
  if (s == NULL || atomic_load_explicit(&d->want[kind], memory_order_relaxed) == 0) return;
  for (uint32_t i = 0; i < s->n; i++) {
    ddmc__dbg_req *r = s->r[i];
    if (r->kind != kind || !matches(d, r, b)) continue;
    comp_event(c, kind, r->id, r->policy);
    int rc = enc(d, c, kind, arg);
    if (rc != 0 && c->b.err == 0) {
      /* An object the registry cannot name (full): the composite would be cut short, and a null
       * in its place a wrong answer. It is not sent, and the log says so. */
      c->b.err = DDMC_ENOMEM;
      ddmc__log(d->vm, DDMC_LOG_WARN, "JDWP: event %d (request %d) not sent: JDWP error %d", kind, (int)r->id, rc);
    }
  }
}

/* ---- event data */

typedef struct loc_arg {
  uint64_t thread_id;
  const ddmc_location *loc;
  const ddmc_value *ret;
} loc_arg;

static int enc_location(ddmc__dbg *d, composite *c, int kind, const void *arg) {
  const loc_arg *a = arg;
  ddmc__dbg_wr_id(&c->b, a->thread_id);
  int rc = ddmc__dbg_wr_location(d, &c->b, a->loc);
  if (kind == DDMC_EV_METHOD_EXIT_WITH_RETURN_VALUE) {
    ddmc_value v = {'V', {0}};
    rc = ddmc__dbg_wr_value(d, &c->b, a->ret ? a->ret : &v, 1);
  }
  return rc;
}

static int enc_thread(ddmc__dbg *d, composite *c, int kind, const void *arg) {
  ddmc__dbg_wr_id(&c->b, *(const uint64_t *)arg);
  return 0;
}

static int enc_nothing(ddmc__dbg *d, composite *c, int kind, const void *arg) { return 0; }

typedef struct prep_arg {
  uint64_t thread_id;
  const ddmc__dbg_cls *cls;
  uint32_t status;
} prep_arg;

static int enc_prepare(ddmc__dbg *d, composite *c, int kind, const void *arg) {
  const prep_arg *a = arg;
  ddmc__dbg_wr_id(&c->b, a->thread_id);
  ddmc_buf_put_u8(&c->b, a->cls->type_tag);
  ddmc__dbg_wr_id(&c->b, a->cls->id);
  ddmc__dbg_wr_string(&c->b, a->cls->signature);
  ddmc_buf_put_u32(&c->b, a->status);
  return 0;
}

typedef struct exc_arg {
  uint64_t thread_id;
  const ddmc_location *loc, *catch_loc;
  ddmc_ref exception;
} exc_arg;

static int enc_exception(ddmc__dbg *d, composite *c, int kind, const void *arg) {
  const exc_arg *a = arg;
  ddmc__dbg_wr_id(&c->b, a->thread_id);
  int rc = ddmc__dbg_wr_location(d, &c->b, a->loc);
  if (rc == 0) rc = ddmc__dbg_wr_tagged_object(d, &c->b, a->exception);
  if (rc == 0 && a->catch_loc != NULL) rc = ddmc__dbg_wr_location(d, &c->b, a->catch_loc);
  if (rc == 0 && a->catch_loc == NULL) { /* not caught: an all-zero location */
    ddmc_buf_put_u8(&c->b, 0);
    ddmc__dbg_wr_id(&c->b, 0);
    ddmc__dbg_wr_id(&c->b, 0);
    ddmc_buf_put_u64(&c->b, 0);
  }
  return rc;
}

typedef struct field_arg {
  uint64_t thread_id;
  const ddmc_location *loc;
  const ddmc__dbg_cls *cls;
  uint32_t field;
  ddmc_ref object;
  const ddmc_value *value;
} field_arg;

static int enc_field(ddmc__dbg *d, composite *c, int kind, const void *arg) {
  const field_arg *a = arg;
  ddmc__dbg_wr_id(&c->b, a->thread_id);
  int rc = ddmc__dbg_wr_location(d, &c->b, a->loc);
  if (rc != 0) return rc;
  ddmc_buf_put_u8(&c->b, a->cls->type_tag);
  ddmc__dbg_wr_id(&c->b, a->cls->id);
  ddmc__dbg_wr_id(&c->b, ddmc__dbg_field_id(a->cls, a->field));
  if (a->object != 0)
    rc = ddmc__dbg_wr_tagged_object(d, &c->b, a->object);
  else { /* a static: the null object */
    ddmc_buf_put_u8(&c->b, 'L');
    ddmc__dbg_wr_id(&c->b, 0);
  }
  if (rc == 0 && kind == DDMC_EV_FIELD_MODIFICATION) rc = ddmc__dbg_wr_value(d, &c->b, a->value, 1);
  return rc;
}

/* ---- the public calls */

/* The hub's question (ddmc_event_wanted): one atomic read while no debugger is connected. */
static int dbg_wants(const ddmc_vm *vm, void *ud, int kind) {
  (void)vm;
  ddmc__dbg *d = ud;
  if (!atomic_load_explicit(&d->connected, memory_order_relaxed)) return 0;
  if (kind == DDMC_EV_VM_START || kind == DDMC_EV_VM_DEATH) return 1;
  return (unsigned)kind < DDMC__EV_KINDS && atomic_load_explicit(&d->want[kind], memory_order_relaxed) > 0;
}

int ddmc_dbg_active(const ddmc_vm *vm) {
  ddmc__dbg *d = vm ? ddmc__dbg_of_vm(vm) : NULL;
  return d != NULL && atomic_load_explicit(&d->connected, memory_order_relaxed);
}

/* The skeleton every post shares: wait while the debugger holds the thread, enter (NULL when no
 * debugger is connected), a composite and the request snapshot; then deliver what was collected. */
typedef struct post_scope {
  ddmc__dbg *d;
  uint32_t thread;
  composite c;
  ddmc__dbg_snap *s; /* NULL: no snapshot (out of memory): nothing matches */
} post_scope;

static int scope_open(post_scope *p, ddmc_vm *vm, uint32_t thread) {
  p->d = enter_thread(vm, thread);
  if (p->d == NULL) return DDMC_ENOTCONN;
  p->thread = thread;
  comp_init(p->d, &p->c);
  p->s = ddmc__dbg_snap_get(p->d);
  return 0;
}

static int scope_close(post_scope *p) {
  ddmc__dbg_snap_put(p->d, p->s);
  return deliver(p->d, p->thread, &p->c);
}

static void scope_collect(post_scope *p, int kind, const basket *b, encode_fn enc, const void *arg) {
  if (p->s != NULL) collect(p->d, p->s, kind, b, &p->c, enc, arg);
}

static int post_thread(ddmc_vm *vm, uint32_t thread, int kind) {
  post_scope p;
  if (scope_open(&p, vm, thread) != 0) return DDMC_ENOTCONN;
  uint64_t tid;
  if (wants(p.d, kind) && ddmc__dbg_thr_id(p.d, thread, &tid) == 0) {
    basket b = {.thread = thread};
    scope_collect(&p, kind, &b, enc_thread, &tid);
  }
  return scope_close(&p);
}

static int post_class_prepare(ddmc_vm *vm, uint32_t thread, ddmc_class cls) {
  post_scope p;
  if (scope_open(&p, vm, thread) != 0) return DDMC_ENOTCONN;
  ddmc__dbg *d = p.d;
  prep_arg a = {0, NULL, 0};
  ddmc_class_info info;
  memset(&info, 0, sizeof(info));
  if (wants(d, DDMC_EV_CLASS_PREPARE) && ddmc__dbg_cls_get(d, cls, &a.cls) == 0 &&
      DDMC__DBG_CALL(d, class_info, cls, &info) == 0) {
    a.status = info.status;
    if (ddmc__dbg_thr_id(d, thread, &a.thread_id) != 0) a.thread_id = 0;
    basket b = {.thread = thread, .cls = cls};
    scope_collect(&p, DDMC_EV_CLASS_PREPARE, &b, enc_prepare, &a);
  }
  return scope_close(&p);
}

static int post_location(ddmc_vm *vm, void *ud, uint32_t thread, const ddmc_location *loc, int32_t depth,
                         ddmc_ref this_obj, unsigned flags) {
  ddmc__dbg *w = ud;
  /* Nothing the debugger asked for can match (a trace's method events, a DDM-only peer): no
   * shared counter, no request lock, no thread lookup, per call. */
  if (!((flags & DDMC_POST_METHOD_ENTRY) && wants(w, DDMC_EV_METHOD_ENTRY)) && !wants(w, DDMC_EV_SINGLE_STEP) &&
      !((flags & DDMC_POST_AT_BREAKPOINT) && wants(w, DDMC_EV_BREAKPOINT)))
    return not_wanted(w, thread);
  post_scope p;
  if (scope_open(&p, vm, thread) != 0) return DDMC_ENOTCONN;
  loc_arg a = {0, loc, NULL};
  basket b = {.thread = thread, .loc = loc, .depth = depth, .cls = loc->cls, .this_obj = this_obj};
  if (ddmc__dbg_thr_id(p.d, thread, &a.thread_id) == 0) {
    if (flags & DDMC_POST_METHOD_ENTRY) scope_collect(&p, DDMC_EV_METHOD_ENTRY, &b, enc_location, &a);
    scope_collect(&p, DDMC_EV_SINGLE_STEP, &b, enc_location, &a);
    if (flags & DDMC_POST_AT_BREAKPOINT) scope_collect(&p, DDMC_EV_BREAKPOINT, &b, enc_location, &a);
  }
  return scope_close(&p);
}

static int post_method_exit(ddmc_vm *vm, void *ud, uint32_t thread, const ddmc_location *loc, int32_t depth,
                            ddmc_ref this_obj, const ddmc_value *ret) {
  ddmc__dbg *w = ud;
  if (!wants(w, DDMC_EV_METHOD_EXIT) && !wants(w, DDMC_EV_METHOD_EXIT_WITH_RETURN_VALUE)) return not_wanted(w, thread);
  post_scope p;
  if (scope_open(&p, vm, thread) != 0) return DDMC_ENOTCONN;
  loc_arg a = {0, loc, ret};
  basket b = {.thread = thread, .loc = loc, .depth = depth, .cls = loc->cls, .this_obj = this_obj};
  if (ddmc__dbg_thr_id(p.d, thread, &a.thread_id) == 0) {
    scope_collect(&p, DDMC_EV_METHOD_EXIT, &b, enc_location, &a);
    scope_collect(&p, DDMC_EV_METHOD_EXIT_WITH_RETURN_VALUE, &b, enc_location, &a);
  }
  return scope_close(&p);
}

static int post_exception(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, int32_t depth, ddmc_ref this_obj,
                          ddmc_ref exception, const ddmc_location *catch_loc) {
  post_scope p;
  if (scope_open(&p, vm, thread) != 0) return DDMC_ENOTCONN;
  ddmc_class ec = 0;
  if (p.s != NULL && DDMC__DBG_CALL(p.d, object_class, exception, &ec) == 0) {
    exc_arg a = {0, loc, catch_loc, exception};
    basket b = {.thread = thread,
                .loc = loc,
                .depth = depth,
                .cls = loc->cls,
                .this_obj = this_obj,
                .exc_cls = ec,
                .caught = catch_loc != NULL};
    if (ddmc__dbg_thr_id(p.d, thread, &a.thread_id) == 0) scope_collect(&p, DDMC_EV_EXCEPTION, &b, enc_exception, &a);
  }
  return scope_close(&p);
}

static int post_field(ddmc_vm *vm, int kind, uint32_t thread, const ddmc_location *loc, int32_t depth,
                      ddmc_ref this_obj, ddmc_class cls, uint32_t field, ddmc_ref object, const ddmc_value *value) {
  post_scope p;
  if (scope_open(&p, vm, thread) != 0) return DDMC_ENOTCONN;
  field_arg a = {0, loc, NULL, field, object, value};
  if (ddmc__dbg_cls_get(p.d, cls, &a.cls) == 0 && field < a.cls->nfields &&
      ddmc__dbg_thr_id(p.d, thread, &a.thread_id) == 0) {
    basket b = {.thread = thread,
                .loc = loc,
                .depth = depth,
                .cls = loc->cls,
                .this_obj = this_obj,
                .field_cls = cls,
                .field = field};
    scope_collect(&p, kind, &b, enc_field, &a);
  }
  return scope_close(&p);
}

/* ---- monitor events (43-46): thread, the monitor's object (tagged), the location, then the
 * timeout (MONITOR_WAIT, long) or timed_out (MONITOR_WAITED, boolean). Agents first (the hub),
 * then the debugger. ClassOnly / ClassMatch match the location's class, InstanceOnly the
 * monitor's object, as OpenJDK's back-end filters them. */

typedef struct monitor_arg {
  uint64_t thread_id;
  const ddmc_location *loc;
  ddmc_ref object;
  int64_t extra;
} monitor_arg;

static int enc_monitor(ddmc__dbg *d, composite *c, int kind, const void *arg) {
  const monitor_arg *a = arg;
  ddmc__dbg_wr_id(&c->b, a->thread_id);
  int rc = ddmc__dbg_wr_tagged_object(d, &c->b, a->object);
  if (rc == 0) rc = ddmc__dbg_wr_location(d, &c->b, a->loc);
  if (rc == 0 && kind == DDMC_EV_MONITOR_WAIT) ddmc_buf_put_u64(&c->b, (uint64_t)a->extra);
  if (rc == 0 && kind == DDMC_EV_MONITOR_WAITED) ddmc_buf_put_u8(&c->b, a->extra != 0);
  return rc;
}

static int post_monitor(ddmc__dbg *w, ddmc_vm *vm, int kind, uint32_t thread, const ddmc_location *loc, int32_t depth,
                        ddmc_ref object, int64_t extra) {
  if (!wants(w, kind)) return not_wanted(w, thread);
  post_scope p;
  if (scope_open(&p, vm, thread) != 0) return DDMC_ENOTCONN;
  monitor_arg a = {0, loc, object, extra};
  /* Class filters of MonitorWait / MonitorWaited match the monitor's class, those of the contended
   * events the location's, as libjdwp matches them (JDWP leaves it open); a VM that cannot name the
   * monitor's class falls back on the location's. */
  ddmc_class mc = loc->cls;
  if ((kind == DDMC_EV_MONITOR_WAIT || kind == DDMC_EV_MONITOR_WAITED) && object != 0 &&
      DDMC__DBG_CALL(p.d, object_class, object, &mc) != 0)
    mc = loc->cls;
  if (ddmc__dbg_thr_id(p.d, thread, &a.thread_id) == 0) {
    basket b = {.thread = thread, .loc = loc, .depth = depth, .cls = mc, .this_obj = object};
    scope_collect(&p, kind, &b, enc_monitor, &a);
  }
  return scope_close(&p);
}

static int post_vm_death(ddmc_vm *vm, int timeout_ms) {
  ddmc__dbg *d = enter(vm);
  if (d == NULL) return DDMC_ENOTCONN;
  composite c;
  comp_init(d, &c);
  comp_event(&c, DDMC_EV_VM_DEATH, 0, DDMC__POLICY_NONE); /* the automatic one */
  basket b = {.thread = 0};
  ddmc__dbg_snap *s = ddmc__dbg_snap_get(d);
  collect(d, s, DDMC_EV_VM_DEATH, &b, &c, enc_nothing, NULL);
  ddmc__dbg_snap_put(d, s);
  /* The composite carries the policy the requests asked for, as libjdwp writes it (JDI and the
   * conformance suite check it). The dying VM suspends nobody, but with a policy other than NONE
   * it stays up until the debugger resumes it, leaves, or timeout_ms passes, as libjdwp does: a
   * debugger answers the event with VirtualMachine.Resume and expects its reply. */
  c.no_stop = 1;
  unsigned resumes = atomic_load(&d->resumes), gen = atomic_load(&d->gen);
  int rc = deliver(d, 0, &c);
  if (rc == 0 && timeout_ms != 0) ddmc__send_flush(vm, timeout_ms);
  if (rc == 0 && timeout_ms > 0 && c.policy != DDMC__POLICY_NONE) {
    int64_t deadline = ddmc__now_ms() + timeout_ms;
    while (atomic_load(&d->resumes) == resumes && atomic_load(&d->gen) == gen && atomic_load(&d->connected) &&
           ddmc__now_ms() < deadline) {
      struct timespec ts = {0, 2000000};
      nanosleep(&ts, NULL);
    }
    ddmc__send_flush(vm, timeout_ms); /* the Resume's reply */
  }
  return rc;
}

void ddmc__dbg_events_vm_start(ddmc__dbg *d, int suspend_all) {
  uint32_t main_thread = 0;
  uint64_t tid = 0;
  if (DDMC__DBG_CALL(d, main_thread, &main_thread) != 0 || ddmc__dbg_thr_id(d, main_thread, &tid) != 0) {
    ddmc__log(d->vm, DDMC_LOG_WARN, "JDWP: no main thread for VM_START");
    return;
  }
  if (suspend_all) ddmc__dbg_thr_suspend_all(d);
  composite c;
  comp_init(d, &c);
  comp_event(&c, DDMC_EV_VM_START, 0, suspend_all ? DDMC__POLICY_ALL : DDMC__POLICY_NONE);
  ddmc__dbg_wr_id(&c.b, tid);
  c.b.p[0] = (uint8_t)c.policy;
  ddmc__put_u32(c.b.p + 1, c.n);
  ddmc_iov iov = {c.b.p, c.b.len};
  if (c.b.err == 0) ddmc__send_cmd(d->vm, d->session, 64, 100, &iov, 1);
  ddmc__buf_free(&c.b);
}

static void dbg_visit_roots(ddmc_vm *vm, void *ud, ddmc_root_visit_fn fn, void *arg) {
  (void)vm;
  ddmc__dbg_ids_visit_roots(ud, fn, arg);
}

static void dbg_gc_sweep(ddmc_vm *vm, void *ud, ddmc_gc_is_live_fn is_live, void *arg) {
  (void)vm;
  ddmc__dbg_ids_sweep(ud, is_live, arg);
}

/* ---- the debugger as a client of the event hub (hub/hub.h): the last to hear each report, since
 * its part may park the thread. */

static int dbg_post(ddmc_vm *vm, void *ud, const ddmc__hub_event *ev) {
  ddmc__dbg *d = ud;
  switch (ev->what) {
    case DDMC__HUB_THREAD_START:
    case DDMC__HUB_THREAD_DEATH: return post_thread(vm, ev->thread, ev->kind);
    case DDMC__HUB_CLASS_PREPARE: return post_class_prepare(vm, ev->thread, ev->cls);
    case DDMC__HUB_EXCEPTION:
      return post_exception(vm, ev->thread, ev->loc, ev->depth, ev->this_obj, ev->object, ev->catch_loc);
    case DDMC__HUB_FIELD:
      return post_field(vm, ev->kind, ev->thread, ev->loc, ev->depth, ev->this_obj, ev->cls, ev->field, ev->object,
                        ev->value);
    case DDMC__HUB_MONITOR: return post_monitor(d, vm, ev->kind, ev->thread, ev->loc, ev->depth, ev->object, ev->extra);
    case DDMC__HUB_VM_DEATH: return post_vm_death(vm, (int)ev->extra);
    case DDMC__HUB_METHOD_UNWIND:
    case DDMC__HUB_EXCEPTION_CATCH: return DDMC_ENOTCONN; /* JDWP has no such events */
  }
  return DDMC_ENOTCONN;
}

int ddmc__dbg_events_subscribe(ddmc_vm *vm, ddmc__dbg *d) {
  static const ddmc__hub_client client = {.name = "debugger",
                                          .rank = DDMC__HUB_RANK_DEBUGGER,
                                          .post = dbg_post,
                                          .location = post_location,
                                          .method_exit = post_method_exit,
                                          .wants = dbg_wants,
                                          .visit_roots = dbg_visit_roots,
                                          .gc_sweep = dbg_gc_sweep};
  /* The hot reports reach the debugger only while a request of a location kind is enabled or
   * some thread is held: a method trace's events cost it nothing otherwise. */
  return ddmc__hub_subscribe(vm, &client, d, &d->hot_wants, &d->thr.held);
}
