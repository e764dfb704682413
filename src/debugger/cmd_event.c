/* SPDX-License-Identifier: Apache-2.0 */
/* EventRequest (15): Set, Clear, ClearAllBreakpoints; the request list and its snapshots.
 *
 * Set checks every modifier against the event kind (a filter the server silently dropped would
 * stop the client where the user never asked), and does what the VM must do for the request
 * before answering: a breakpoint patched, a step armed, method events switched on. Clear and the
 * end of a session undo exactly that. Bounds: at most DDMC__MAX_REQUESTS requests of at most
 * DDMC__MAX_MODS modifiers, and all of them together within ddmc_options.event_request_bytes
 * (a Set past it: OUT_OF_MEMORY, nothing done). */
#include <string.h>

#include "debugger/requests.h"
#include "vmctl/switches.h"

#define DDMC__MAX_MODS 64
#define DDMC__MAX_REQUESTS 10000
#define DDMC__MAX_PATTERN 1024
/* Requests freed in a session past this make its end give memory back (ddmc__mem_trim). */
#define DDMC__TRIM_AFTER ((size_t)1 << 20)

/* Breakpoints, watched fields, stepping and method events are switches the debugger shares with
 * agents and traces (src/vmctl): each request counts there once, and the VM is told only when a
 * switch really changes. */

static int method_events(ddmc__dbg *d, int on) {
  ddmc__dbg_reqs *q = d->req;
  if (on) {
    if (q->method_events == 0) {
      int rc = ddmc__ctl_method_events(d->vm, DDMC__ME_DEBUGGER, 1);
      if (rc != 0) return rc;
    }
    q->method_events++;
  } else if (q->method_events > 0 && --q->method_events == 0) {
    ddmc__ctl_method_events(d->vm, DDMC__ME_DEBUGGER, 0);
  }
  return 0;
}

/* The monitor events are one switch too (bridge.h, set_monitor_events): on with the first MONITOR_*
 * request, off when the last goes. */
static void monitor_events(ddmc__dbg *d, int on) {
  ddmc__dbg_reqs *q = d->req;
  if (on && q->monitor_events++ == 0) ddmc__ctl_monitor_events(d->vm, DDMC__ME_DEBUGGER, 1);
  if (!on && q->monitor_events > 0 && --q->monitor_events == 0) ddmc__ctl_monitor_events(d->vm, DDMC__ME_DEBUGGER, 0);
}

static int is_monitor_kind(int kind) {
  return kind == DDMC_EV_MONITOR_CONTENDED_ENTER || kind == DDMC_EV_MONITOR_CONTENDED_ENTERED ||
         kind == DDMC_EV_MONITOR_WAIT || kind == DDMC_EV_MONITOR_WAITED;
}

static unsigned watch_kind(int kind) { return kind == DDMC_EV_FIELD_ACCESS ? DDMC_WATCH_ACCESS : DDMC_WATCH_MODIFY; }

static int is_method_kind(int kind) {
  return kind == DDMC_EV_METHOD_ENTRY || kind == DDMC_EV_METHOD_EXIT || kind == DDMC_EV_METHOD_EXIT_WITH_RETURN_VALUE;
}

/* The kinds the hub's hot reports (ddmc_post_location, ddmc_post_method_exit) carry. */
static int is_hot_kind(int kind) {
  return kind == DDMC_EV_SINGLE_STEP || kind == DDMC_EV_BREAKPOINT || is_method_kind(kind);
}

/* Undoes what Set did in the VM for r. */
static void detach(ddmc__dbg *d, ddmc__dbg_req *r) {
  if (r->bp_set) {
    ddmc__ctl_breakpoint(d->vm, &r->bp_loc, 0);
    r->bp_set = 0;
  }
  if (r->watch_set) {
    ddmc__ctl_field_watch(d->vm, r->watch_cls, r->watch_field, watch_kind(r->kind), 0);
    r->watch_set = 0;
  }
  if (r->step != NULL) {
    int others = 0;
    for (uint32_t i = 0; i < d->req->n; i++) {
      const ddmc__dbg_req *o = d->req->list[i];
      if (o != r && o->step != NULL && o->step_thread == r->step_thread) others = 1;
    }
    if (!others) ddmc__ctl_stepping(d->vm, r->step_thread, DDMC__ME_DEBUGGER, 0);
  }
  if (is_method_kind(r->kind)) method_events(d, 0);
  if (is_monitor_kind(r->kind)) monitor_events(d, 0);
  atomic_fetch_sub(&d->want[r->kind % DDMC__EV_KINDS], 1);
  if (is_hot_kind(r->kind)) atomic_fetch_sub(&d->hot_wants, 1);
}

/* ---- modifiers */

/* Which modifiers each kind accepts (docs/protocol/jdwp.md §2.5). */
static int mod_allowed(int mod, int kind) {
  int thread_kind = kind == DDMC_EV_THREAD_START || kind == DDMC_EV_THREAD_DEATH;
  int class_kind = kind == DDMC_EV_CLASS_PREPARE || kind == DDMC_EV_CLASS_UNLOAD;
  switch (mod) {
    case DDMC__MOD_COUNT: return 1;
    case DDMC__MOD_THREAD_ONLY: return kind != DDMC_EV_CLASS_UNLOAD && kind != DDMC_EV_VM_DEATH;
    case DDMC__MOD_CLASS_ONLY: return !thread_kind && kind != DDMC_EV_CLASS_UNLOAD && kind != DDMC_EV_VM_DEATH;
    case DDMC__MOD_CLASS_MATCH:
    case DDMC__MOD_CLASS_EXCLUDE: return !thread_kind && kind != DDMC_EV_VM_DEATH;
    case DDMC__MOD_LOCATION_ONLY:
      return kind == DDMC_EV_BREAKPOINT || kind == DDMC_EV_SINGLE_STEP || kind == DDMC_EV_EXCEPTION ||
             kind == DDMC_EV_FIELD_ACCESS || kind == DDMC_EV_FIELD_MODIFICATION;
    case DDMC__MOD_EXCEPTION_ONLY: return kind == DDMC_EV_EXCEPTION;
    case DDMC__MOD_FIELD_ONLY: return kind == DDMC_EV_FIELD_ACCESS || kind == DDMC_EV_FIELD_MODIFICATION;
    case DDMC__MOD_STEP: return kind == DDMC_EV_SINGLE_STEP;
    case DDMC__MOD_INSTANCE_ONLY: return !thread_kind && !class_kind && kind != DDMC_EV_VM_DEATH;
    case DDMC__MOD_SOURCE_NAME_MATCH: return kind == DDMC_EV_CLASS_PREPARE;
    case DDMC__MOD_PLATFORM_THREADS_ONLY: return thread_kind;
    default: return 0;
  }
}

static int read_pattern(ddmc__dbg *d, ddmc_reader *in, char **out) {
  char buf[DDMC__MAX_PATTERN];
  int rc = ddmc__dbg_rd_string(in, buf, sizeof(buf));
  if (rc != 0) return rc;
  *out = ddmc__strdup(d->mem, buf);
  return *out ? 0 : DDMC_JDWP_OUT_OF_MEMORY;
}

/* ThreadOnly: a running thread, or a Thread object not started yet (its events match once it
 * runs: events.c). */
static int read_thread_only(ddmc__dbg *d, ddmc_reader *in, ddmc__dbg_mod *m) {
  uint64_t id = ddmc_read_u64(in);
  if (in->err) return DDMC_JDWP_INVALID_LENGTH;
  ddmc_ref o;
  int rc = ddmc__dbg_object_of_id(d, id, &o);
  if (rc != 0) return rc;
  if (o == 0) return DDMC_JDWP_INVALID_THREAD;
  rc = ddmc__dbg_thr_of_object(d, o, &m->thread);
  if (rc != DDMC_JDWP_INVALID_THREAD || ddmc__dbg_object_tag(d, o) != 't') return rc;
  m->thread = 0;
  m->thread_obj = o;
  return 0;
}

static int read_mod(ddmc__dbg *d, ddmc_reader *in, int kind, ddmc__dbg_mod *m) {
  m->kind = ddmc_read_u8(in);
  if (in->err) return DDMC_JDWP_INVALID_LENGTH;
  if (m->kind == DDMC__MOD_CONDITIONAL) return DDMC_JDWP_NOT_IMPLEMENTED;
  if (!mod_allowed(m->kind, kind)) return DDMC_JDWP_ILLEGAL_ARGUMENT;
  const ddmc__dbg_cls *c;
  int rc = 0;
  uint64_t id;
  switch (m->kind) {
    case DDMC__MOD_COUNT: {
      int32_t n = (int32_t)ddmc_read_u32(in);
      if (in->err) return DDMC_JDWP_INVALID_LENGTH;
      if (n <= 0) return DDMC_JDWP_INVALID_COUNT;
      atomic_init(&m->left, n);
      return 0;
    }
    case DDMC__MOD_THREAD_ONLY: return read_thread_only(d, in, m);
    case DDMC__MOD_CLASS_ONLY:
      rc = ddmc__dbg_rd_class(d, in, &c);
      if (rc == 0) m->cls = c->handle;
      return rc;
    case DDMC__MOD_CLASS_MATCH:
    case DDMC__MOD_CLASS_EXCLUDE:
    case DDMC__MOD_SOURCE_NAME_MATCH: return read_pattern(d, in, &m->pattern);
    case DDMC__MOD_LOCATION_ONLY: return ddmc__dbg_rd_location(d, in, &m->loc);
    case DDMC__MOD_EXCEPTION_ONLY:
      /* 0 means any exception: read the raw ID first. */
      id = ddmc_read_u64(in);
      m->caught = ddmc_read_u8(in);
      m->uncaught = ddmc_read_u8(in);
      if (in->err) return DDMC_JDWP_INVALID_LENGTH;
      if (id != 0) {
        rc = ddmc__dbg_class_of_id(d, id, &c);
        if (rc == 0) m->cls = c->handle;
      }
      return rc;
    case DDMC__MOD_FIELD_ONLY:
      rc = ddmc__dbg_rd_class(d, in, &c);
      if (rc != 0) {
        ddmc_read_u64(in);
        return in->err ? DDMC_JDWP_INVALID_LENGTH : rc;
      }
      rc = ddmc__dbg_rd_field(d, in, c, &c, &m->field);
      if (rc == 0) m->cls = c->handle;
      return rc;
    case DDMC__MOD_STEP: {
      rc = ddmc__dbg_rd_thread(d, in, &m->thread);
      int32_t size = (int32_t)ddmc_read_u32(in), depth = (int32_t)ddmc_read_u32(in);
      if (in->err) return DDMC_JDWP_INVALID_LENGTH;
      if (rc != 0) return rc;
      if (size < 0 || size > 1 || depth < 0 || depth > 2) return DDMC_JDWP_ILLEGAL_ARGUMENT;
      m->field = (uint32_t)(size | depth << 4); /* unpacked by arm_step */
      return 0;
    }
    case DDMC__MOD_INSTANCE_ONLY: return ddmc__dbg_rd_object(d, in, &m->instance);
    case DDMC__MOD_PLATFORM_THREADS_ONLY: return 0;
    default: return DDMC_JDWP_ILLEGAL_ARGUMENT;
  }
}

/* Checks a breakpoint location against its method's code. */
static int check_location(ddmc__dbg *d, const ddmc_location *loc) {
  ddmc_method_info mi;
  memset(&mi, 0, sizeof(mi));
  int rc = DDMC__DBG_CALL(d, method_info, loc->cls, loc->method, &mi);
  if (rc != 0) return rc;
  if (mi.code_start < 0 || loc->index < mi.code_start || loc->index > mi.code_end) return DDMC_JDWP_INVALID_LOCATION;
  return 0;
}

/* SINGLE_STEP: records where the step begins and asks the VM to report each instruction. The
 * thread is suspended (ev_set holds it). */
static int arm_step(ddmc__dbg *d, ddmc__dbg_req *r, const ddmc__dbg_mod *m) {
  uint32_t thread = m->thread;
  for (uint32_t i = 0; i < d->req->n; i++) {
    const ddmc__dbg_req *o = d->req->list[i];
    if (o->step != NULL && o->step_thread == thread && !atomic_load(&o->expired)) return DDMC_JDWP_DUPLICATE;
  }
  ddmc__dbg_step *s = ddmc__calloc(d->mem, 1, sizeof(*s));
  if (s == NULL) return DDMC_JDWP_OUT_OF_MEMORY;
  s->size = (int)(m->field & 0xf);
  s->depth = (int)(m->field >> 4);
  int32_t frames = 0;
  int rc = DDMC__DBG_CALL(d, frame_count, thread, &frames);
  if (rc == 0 && frames > 0) rc = DDMC__DBG_CALL(d, frame_location, thread, 0, &s->start);
  if (rc != 0) {
    ddmc__free(d->mem, s);
    return rc;
  }
  s->start_depth = frames - 1;
  s->start_line = frames > 0 ? ddmc__dbg_line_of(d, &s->start) : -1;
  rc = ddmc__ctl_stepping(d->vm, thread, DDMC__ME_DEBUGGER, 1);
  if (rc != 0) {
    ddmc__free(d->mem, s);
    return rc;
  }
  r->step = s;
  r->step_thread = thread;
  return 0;
}

static int kind_supported(ddmc__dbg *d, int kind) {
  switch (kind) {
    case DDMC_EV_SINGLE_STEP:
    case DDMC_EV_BREAKPOINT:
    case DDMC_EV_EXCEPTION:
    case DDMC_EV_THREAD_START:
    case DDMC_EV_THREAD_DEATH:
    case DDMC_EV_CLASS_PREPARE:
    case DDMC_EV_CLASS_UNLOAD:
    case DDMC_EV_METHOD_ENTRY:
    case DDMC_EV_METHOD_EXIT:
    case DDMC_EV_METHOD_EXIT_WITH_RETURN_VALUE:
    case DDMC_EV_VM_DEATH: return 0;
    case DDMC_EV_FIELD_ACCESS:
    case DDMC_EV_FIELD_MODIFICATION: return DDMC__DBG_HAS(d, set_field_watch) ? 0 : DDMC_JDWP_NOT_IMPLEMENTED;
    case DDMC_EV_MONITOR_CONTENDED_ENTER:
    case DDMC_EV_MONITOR_CONTENDED_ENTERED:
    case DDMC_EV_MONITOR_WAIT:
    case DDMC_EV_MONITOR_WAITED: return DDMC__DBG_HAS(d, set_monitor_events) ? 0 : DDMC_JDWP_NOT_IMPLEMENTED;
    default: return DDMC_JDWP_INVALID_EVENT_TYPE;
  }
}

/* What r holds, as near as the allocator's own overhead allows (a word or two per block). */
static size_t req_bytes(const ddmc__dbg_req *r) {
  size_t n = sizeof(*r) + sizeof(ddmc__dbg_req *) + (size_t)r->nmods * sizeof(ddmc__dbg_mod);
  for (uint32_t i = 0; i < r->nmods; i++)
    if (r->mods[i].pattern != NULL) n += strlen(r->mods[i].pattern) + 1 + 2 * sizeof(void *);
  if (r->kind == DDMC_EV_SINGLE_STEP) n += sizeof(ddmc__dbg_step);
  return n;
}

/* Room for one more request in the list. */
static int reserve_slot(ddmc__dbg *d) {
  ddmc__dbg_reqs *q = d->req;
  if (q->n >= DDMC__MAX_REQUESTS) return DDMC_JDWP_OUT_OF_MEMORY;
  if (q->n < q->cap) return 0;
  uint32_t cap = q->cap ? q->cap * 2 : 16;
  ddmc__dbg_req **v = ddmc__realloc(d->mem, q->list, (size_t)cap * sizeof(*v));
  if (v == NULL) return DDMC_JDWP_OUT_OF_MEMORY;
  q->list = v;
  q->cap = cap;
  return 0;
}

/* Parses the request into *out (a new request, its modifiers read and checked against the kind,
 * the session's byte budget charged), doing nothing in the VM. On an error *out may hold a
 * partial request for the caller to put. */
static int parse_request(ddmc__dbg *d, ddmc_reader *in, ddmc__dbg_req **out) {
  ddmc__dbg_reqs *q = d->req;
  uint8_t kind = ddmc_read_u8(in), policy = ddmc_read_u8(in);
  uint32_t nmods = ddmc_read_u32(in);
  if (in->err) return DDMC_JDWP_INVALID_LENGTH;
  int rc = kind_supported(d, kind);
  if (rc != 0) return rc;
  if (policy > DDMC__POLICY_ALL) return DDMC_JDWP_ILLEGAL_ARGUMENT;
  if (nmods > DDMC__MAX_MODS || nmods > ddmc_reader_left(in)) return DDMC_JDWP_ILLEGAL_ARGUMENT;
  if ((rc = reserve_slot(d)) != 0) return rc;
  ddmc__dbg_req *r = ddmc__calloc(d->mem, 1, sizeof(*r));
  if (r == NULL) return DDMC_JDWP_OUT_OF_MEMORY;
  *out = r;
  atomic_init(&r->refs, 1);
  atomic_init(&r->expired, 0);
  r->kind = kind;
  r->policy = policy;
  r->mods = nmods ? ddmc__calloc(d->mem, nmods, sizeof(ddmc__dbg_mod)) : NULL;
  if (nmods && r->mods == NULL) return DDMC_JDWP_OUT_OF_MEMORY;
  for (uint32_t i = 0; rc == 0 && i < nmods; i++) {
    rc = read_mod(d, in, kind, &r->mods[i]);
    r->nmods = i + 1;
  }
  if (rc == 0) rc = ddmc__dbg_rd_end(in); /* refused before anything is done in the VM */
  if (rc != 0) return rc;
  r->bytes = req_bytes(r);
  if (r->bytes > q->budget || q->bytes > q->budget - r->bytes) return DDMC_JDWP_OUT_OF_MEMORY;
  return 0;
}

/* The first modifier of this kind, or NULL. */
static const ddmc__dbg_mod *find_mod(const ddmc__dbg_req *r, int kind) {
  for (uint32_t i = 0; i < r->nmods; i++)
    if (r->mods[i].kind == kind) return &r->mods[i];
  return NULL;
}

static int install_breakpoint(ddmc__dbg *d, ddmc__dbg_req *r) {
  const ddmc__dbg_mod *loc_mod = find_mod(r, DDMC__MOD_LOCATION_ONLY);
  if (loc_mod == NULL) return DDMC_JDWP_ILLEGAL_ARGUMENT;
  int rc = check_location(d, &loc_mod->loc);
  if (rc == 0) rc = ddmc__ctl_breakpoint(d->vm, &loc_mod->loc, 1);
  if (rc != 0) return rc;
  r->bp_set = 1;
  r->bp_loc = loc_mod->loc;
  return 0;
}

static int install_watch(ddmc__dbg *d, ddmc__dbg_req *r) {
  const ddmc__dbg_mod *field_mod = find_mod(r, DDMC__MOD_FIELD_ONLY);
  /* Every field of every class is more than a VM can watch cheaply; JDI always names one. */
  if (field_mod == NULL) return DDMC_JDWP_ILLEGAL_ARGUMENT;
  int rc = ddmc__ctl_field_watch(d->vm, field_mod->cls, field_mod->field, watch_kind(r->kind), 1);
  if (rc != 0) return rc;
  r->watch_set = 1;
  r->watch_cls = field_mod->cls;
  r->watch_field = field_mod->field;
  return 0;
}

/* The kind's requirements and the VM's part. Kinds are exclusive here: at most one of the five
 * VM-side effects, and each is the last thing that can fail for its kind (the monitor switch
 * cannot), so a failure leaves nothing to undo. */
static int install(ddmc__dbg *d, ddmc__dbg_req *r) {
  const ddmc__dbg_mod *step_mod = NULL;
  for (uint32_t i = 0; i < r->nmods; i++) {
    if (r->mods[i].kind != DDMC__MOD_STEP) continue;
    if (step_mod != NULL) return DDMC_JDWP_ILLEGAL_ARGUMENT;
    step_mod = &r->mods[i];
  }
  if (r->kind == DDMC_EV_SINGLE_STEP && step_mod == NULL) return DDMC_JDWP_ILLEGAL_ARGUMENT;
  if (r->kind == DDMC_EV_BREAKPOINT) return install_breakpoint(d, r);
  if (step_mod != NULL) return arm_step(d, r, step_mod);
  if (is_method_kind(r->kind)) return method_events(d, 1);
  if (is_monitor_kind(r->kind)) monitor_events(d, 1);
  if (r->kind == DDMC_EV_FIELD_ACCESS || r->kind == DDMC_EV_FIELD_MODIFICATION) return install_watch(d, r);
  return 0;
}

/* Lists r and publishes the new snapshot; takes it back out when that fails. */
static int publish(ddmc__dbg *d, ddmc__dbg_req *r) {
  ddmc__dbg_reqs *q = d->req;
  r->id = q->next_id++;
  if (q->next_id <= 0) q->next_id = 1;
  q->list[q->n++] = r;
  q->bytes += r->bytes;
  atomic_fetch_add(&d->want[r->kind % DDMC__EV_KINDS], 1);
  if (is_hot_kind(r->kind)) atomic_fetch_add(&d->hot_wants, 1);
  if (ddmc__dbg_reqs_publish(d) == 0) return 0;
  q->n--; /* keep the list and the VM consistent */
  q->bytes -= r->bytes;
  detach(d, r);
  ddmc__dbg_req_put(d, r);
  return DDMC_JDWP_OUT_OF_MEMORY;
}

/* EventRequest.Set: parse and check, install the VM's part for the kind, publish (OpenJDK splits
 * the same way: EventRequestImpl.c from eventHandler.c). */
static int ev_set(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  ddmc__dbg_req *r = NULL;
  int rc = parse_request(d, in, &r);
  /* A step may name a running thread: JDWP lists no THREAD_NOT_SUSPENDED for Set, and an IDE that
   * resumed a stale event set steps from one (JDI and Eclipse's JDI fail on the error). As
   * libjdwp, the thread is held while the step is armed and published: it starts from wherever
   * the thread stopped, and no instruction runs before the request can see it. */
  const ddmc__dbg_mod *step = rc == 0 && r->kind == DDMC_EV_SINGLE_STEP ? find_mod(r, DDMC__MOD_STEP) : NULL;
  uint32_t thread = step != NULL ? step->thread : 0;
  int held = 0;
  if (step != NULL && (rc = ddmc__dbg_thr_suspend(d, thread)) == 0) held = 1;
  if (rc == 0) rc = install(d, r);
  if (rc != 0) {
    if (r != NULL) ddmc__dbg_req_put(d, r);
  } else if ((rc = publish(d, r)) == 0) {
    ddmc_buf_put_u32(out, (uint32_t)r->id);
  }
  if (held) ddmc__dbg_thr_resume(d, thread);
  return rc;
}

/* Removes list[i]: the VM's part undone, the list's reference dropped. */
static void remove_at(ddmc__dbg *d, uint32_t i) {
  ddmc__dbg_reqs *q = d->req;
  ddmc__dbg_req *r = q->list[i];
  detach(d, r);
  memmove(&q->list[i], &q->list[i + 1], (size_t)(q->n - i - 1) * sizeof(q->list[0]));
  q->n--;
  q->bytes -= r->bytes;
  q->freed += r->bytes;
  ddmc__dbg_req_put(d, r);
}

static int ev_clear(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  uint8_t kind = ddmc_read_u8(in);
  int32_t id = (int32_t)ddmc_read_u32(in);
  int rc = ddmc__dbg_rd_end(in);
  if (rc != 0) return rc;
  ddmc__dbg_reqs *q = d->req;
  for (uint32_t i = 0; i < q->n; i++) {
    if (q->list[i]->id == id && q->list[i]->kind == kind) {
      remove_at(d, i);
      return ddmc__dbg_reqs_publish(d);
    }
  }
  return 0; /* an unknown or already-cleared request is not an error (JDWP; HotSpot agrees) */
}

static int ev_clear_all_breakpoints(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  if (ddmc__dbg_rd_end(in) != 0) return ddmc__dbg_rd_end(in);
  ddmc__dbg_reqs *q = d->req;
  for (uint32_t i = q->n; i-- > 0;)
    if (q->list[i]->kind == DDMC_EV_BREAKPOINT) remove_at(d, i);
  return ddmc__dbg_reqs_publish(d);
}

void ddmc__dbg_reqs_redefined(ddmc__dbg *d, ddmc_class cls) {
  ddmc__dbg_reqs *q = d->req;
  int changed = 0;
  for (uint32_t i = q->n; i-- > 0;) {
    if (q->list[i]->kind == DDMC_EV_BREAKPOINT && q->list[i]->bp_set && q->list[i]->bp_loc.cls == cls) {
      remove_at(d, i);
      changed = 1;
    }
  }
  if (changed) ddmc__dbg_reqs_publish(d);
}

void ddmc__dbg_reqs_popped(ddmc__dbg *d, uint32_t thread) {
  ddmc__dbg_reqs *q = d->req;
  for (uint32_t i = 0; i < q->n; i++) {
    ddmc__dbg_req *r = q->list[i];
    if (r->step == NULL || r->step_thread != thread) continue;
    int32_t frames = 0;
    ddmc_location loc;
    if (DDMC__DBG_CALL(d, frame_count, thread, &frames) != 0 || frames <= 0) return;
    if (DDMC__DBG_CALL(d, frame_location, thread, 0, &loc) != 0) return;
    /* The thread is suspended: no stepping thread reads the step meanwhile. */
    ddmc__dbg_step_restart(d, r->step, &loc, frames - 1);
  }
}

void ddmc__dbg_reqs_clear_all(ddmc__dbg *d) {
  ddmc__dbg_reqs *q = d->req;
  if (q == NULL) return; /* a debugger torn down half built */
  while (q->n > 0) remove_at(d, q->n - 1);
  ddmc__dbg_reqs_publish(d); /* an empty list publishes NULL: cannot fail */
  q->next_id = 1;
  /* Many small frees leave the heap's pages resident (glibc keeps them for reuse): a session
   * that held its whole budget would keep the VM that much bigger for good. */
  if (q->freed >= DDMC__TRIM_AFTER) {
    ddmc__mem_trim(d->mem);
    q->freed = 0;
  }
}

void ddmc__dbg_reqs_destroy(ddmc__dbg *d) {
  ddmc__dbg_reqs *q = d->req;
  if (q == NULL) return;
  ddmc__dbg_reqs_clear_all(d);
  ddmc__free(d->mem, q->list);
  pthread_mutex_destroy(&q->lock);
  ddmc__free(d->mem, q);
  d->req = NULL;
}

const ddmc__dbg_cmd ddmc__dbg_cmds_event[] = {
    {15, 1, ev_set, "EventRequest.Set", NULL},
    {15, 2, ev_clear, "EventRequest.Clear", NULL},
    {15, 3, ev_clear_all_breakpoints, "EventRequest.ClearAllBreakpoints", NULL},
    {0, 0, NULL, NULL, NULL},
};
