/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer: the debugger's command parser and handlers (command sets 1-17), request matching
 * and suspension, against the tests' fake debuggee (../fakebridge.c), without a socket.
 *
 * Input: a sequence of [u1 op][u1 cmd][u1 len][len bytes of body template].
 *   op < 0xf0   runs command (1 + op % 17, cmd) through ddmc__dbg_run, as the JDWP thread would.
 *   op >= 0xf0  a VM-side action: an event posted by thread main or Worker (each a thread of its
 *               own, which may park in the call until a command resumes it), a disconnect, the
 *               queue drained, a line looked up, the frameIDs of a thread added to the table.
 * In a body template, 0xff k stands for the 8-byte ID number k of a table of IDs seen so far
 * (0xff 0xff is a literal 0xff): the table starts with the debuggee's classes, objects and
 * Debug's fields and grows with every ID-shaped value in a reply (objectIDs, referenceTypeIDs,
 * frameIDs, fieldIDs), so the fuzzer reaches the handlers past the ID checks.
 *
 * Oracles: no crash, leak or sanitizer report; no hang (a parked thread is always released by the
 * disconnect at the end of the input); and the fake never got a value the library should have
 * rejected (fakebridge's bad_calls stays 0). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "debugger/state.h"
#include "fakebridge.h"

#define MAX_IDS 128
#define MAX_BODY (255 * 8)

static fakebridge g_f;
static int g_trace; /* FUZZ_DEBUGGER_TRACE=1: one line per command (to check what a seed reaches) */
static ddmc_buf g_out;
static uint64_t g_ids[MAX_IDS];
static unsigned g_nids, g_next;

/* ---- VM threads that post events: one per visible thread, each with one job at a time. */

typedef struct vm_thread {
  pthread_t th;
  uint32_t id;
  pthread_mutex_t lock;
  pthread_cond_t cv;
  int job; /* 0: idle; else the action */
  int busy;
  ddmc_location loc;
  int32_t depth;
  unsigned flags;
  ddmc_ref this_obj;
} vm_thread;
static vm_thread g_thr[2];

static void *vm_thread_main(void *arg) {
  vm_thread *t = arg;
  ddmc_vm *vm = g_f.fv.vm;
  pthread_mutex_lock(&t->lock);
  for (;;) {
    while (t->job == 0) pthread_cond_wait(&t->cv, &t->lock);
    int job = t->job;
    pthread_mutex_unlock(&t->lock);
    ddmc_value ret = {.tag = 'J', .u.j = 7};
    switch (job) {
      case 1: ddmc_post_location(vm, t->id, &t->loc, t->depth, t->this_obj, t->flags); break;
      case 2: ddmc_post_method_exit(vm, t->id, &t->loc, t->depth, t->this_obj, (t->flags & 1) ? &ret : NULL); break;
      case 3: ddmc_post_thread_start(vm, t->id); break;
      case 4: ddmc_post_thread_death(vm, t->id); break;
      case 5: ddmc_post_class_prepare(vm, t->id, FD_C_OBJECT + (t->flags % FD_NCLASSES)); break;
      default: break;
    }
    pthread_mutex_lock(&t->lock);
    t->job = 0;
    t->busy = 0;
    pthread_cond_broadcast(&t->cv);
  }
  return NULL;
}

/* Parked inside a post call (the library's view). */
static int lib_parked(uint32_t id) {
  ddmc__dbg *d = g_f.d;
  int parked = 0;
  pthread_mutex_lock(&d->thr.lock);
  for (uint32_t i = 0; i < d->thr.n; i++)
    if (d->thr.v[i]->id == id) parked = d->thr.v[i]->parked;
  pthread_mutex_unlock(&d->thr.lock);
  return parked;
}

static int thread_busy(vm_thread *t) {
  pthread_mutex_lock(&t->lock);
  int busy = t->busy;
  pthread_mutex_unlock(&t->lock);
  return busy;
}

/* Hands t a job and waits until it is done or parked. */
static void give_job(vm_thread *t, int job) {
  pthread_mutex_lock(&t->lock);
  t->job = job;
  t->busy = 1;
  pthread_cond_broadcast(&t->cv);
  pthread_mutex_unlock(&t->lock);
  for (long spins = 0; thread_busy(t) && !lib_parked(t->id); spins++) {
    if (spins > 2000000) { /* 10 s: a post call that neither returns nor parks */
      fprintf(stderr, "fuzz_debugger: thread %u stuck in a post call\n", t->id);
      abort();
    }
    struct timespec ts = {0, 5000};
    nanosleep(&ts, NULL);
  }
}

static void wait_idle(vm_thread *t) {
  pthread_mutex_lock(&t->lock);
  while (t->busy) pthread_cond_wait(&t->cv, &t->lock);
  pthread_mutex_unlock(&t->lock);
}

/* ---- set-up, once */

static void add_id_(uint64_t id, int dedup) {
  if (id == 0) return;
  for (unsigned i = 0; dedup && i < g_nids; i++)
    if (g_ids[i] == id) return;
  if (g_nids < MAX_IDS) {
    g_ids[g_nids++] = id;
  } else {
    g_ids[g_next] = id; /* replace the oldest harvested ones, keep the seeded ones */
    g_next = g_next + 1 < MAX_IDS ? g_next + 1 : 40;
  }
}
static void add_id(uint64_t id) { add_id_(id, 1); }

static void setup(void) {
  if (fakebridge_new(&g_f, FAKEBRIDGE_NO_EXIT) != 0) abort();
  g_trace = getenv("FUZZ_DEBUGGER_TRACE") != NULL;
  ddmc__buf_init(&g_out, ddmc__dbg_mem(g_f.d), (size_t)16 << 20);
  for (int i = 0; i < 2; i++) {
    vm_thread *t = &g_thr[i];
    t->id = i == 0 ? FD_T_MAIN : FD_T_WORKER;
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->cv, NULL);
    if (pthread_create(&t->th, NULL, vm_thread_main, t) != 0) abort();
  }
}

/* The IDs every input starts with: classes, objects, Debug's and Thread's fields. */
static void seed_ids(void) {
  ddmc__dbg *d = g_f.d;
  g_nids = 0;
  for (ddmc_class c = FD_C_OBJECT; c < FD_C_END; c++) {
    const ddmc__dbg_cls *k;
    if (ddmc__dbg_cls_get(d, c, &k) == 0) add_id(k->id);
  }
  for (ddmc_ref o = FD_O_DEBUG; o < FD_O_END; o++) {
    uint64_t id;
    if (ddmc__dbg_id_of_object(d, o, &id) == 0) add_id(id);
  }
  const ddmc__dbg_cls *k;
  if (ddmc__dbg_cls_get(d, FD_C_DEBUG, &k) == 0)
    for (uint32_t i = 0; i < FD_NFIELDS; i++) add_id(ddmc__dbg_field_id(k, i));
  if (ddmc__dbg_cls_get(d, FD_C_THREAD, &k) == 0) add_id(ddmc__dbg_field_id(k, 0));
  g_next = g_nids;
}

/* ID-shaped values in a reply: (generation << 32) | slot, or a fieldID. */
static void harvest(const uint8_t *p, size_t n) {
  int found = 0;
  for (size_t i = 0; i + 8 <= n && found < 16; i++) {
    uint64_t v = (uint64_t)ddmc__get_u32(p + i) << 32 | ddmc__get_u32(p + i + 4);
    uint64_t hi = v >> 32, lo = v & 0xffffffffu;
    int object_like = hi >= 1 && hi <= (1u << 20) && lo >= 1 && lo <= 4096;
    int field_like = (v >> 45) >= 1 && ((v >> 24) & 0x1fffff) >= 1 && ((v >> 24) & 0x1fffff) <= 4096 &&
                     (v & 0xffffff) >= 1 && (v & 0xffffff) <= 64;
    if (object_like || field_like) {
      add_id(v);
      found++;
      i += 7; /* IDs do not overlap */
    }
  }
}

/* Expands the template: 0xff k -> ID k of the table, 0xff 0xff -> 0xff. */
static size_t expand(const uint8_t *t, size_t n, uint8_t *out) {
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    if (t[i] != 0xff || i + 1 == n) {
      out[o++] = t[i];
      continue;
    }
    uint8_t k = t[++i];
    if (k == 0xff || g_nids == 0) {
      out[o++] = 0xff;
      continue;
    }
    uint64_t id = g_ids[k % g_nids];
    ddmc__put_u32(out + o, (uint32_t)(id >> 32));
    ddmc__put_u32(out + o + 4, (uint32_t)id);
    o += 8;
  }
  return o;
}

/* A VM-side action from op (0xf0..0xff) and its bytes. Locations are always real ones: a VM
 * reports only where its threads are. */
static void vm_action(uint8_t op, uint8_t arg, const uint8_t *p, size_t n) {
  ddmc__dbg *d = g_f.d;
  vm_thread *t = &g_thr[arg & 1];
  uint8_t a = n > 0 ? p[0] : 0, b = n > 1 ? p[1] : 0, c = n > 2 ? p[2] : 0;
  switch (op) {
    case 0xf0:
    case 0xf1: {
      if (thread_busy(t)) return; /* parked: it runs nothing */
      uint32_t m = a % FD_NMETHODS;
      static const int64_t ends[FD_NMETHODS] = {3, 20, 10};
      t->loc = (ddmc_location){FD_C_DEBUG, m, b % (ends[m] + 1)};
      t->depth = c % 4;
      t->flags = arg >> 1;
      t->this_obj = (arg & 0x10) ? FD_O_DEBUG2 : (arg & 0x20) ? FD_O_DEBUG : 0;
      give_job(t, op == 0xf0 ? 1 : 2);
      return;
    }
    case 0xf2:
    case 0xf3:
    case 0xf4:
      if (thread_busy(t)) return;
      t->flags = a;
      give_job(t, op - 0xf2 + 3);
      return;
    case 0xf5: /* disconnect and a new session */
      ddmc__dbg_reset(d);
      fakebridge_reconnect(&g_f);
      return;
    case 0xf6: fakebridge_events(&g_f, NULL, NULL); return;
    case 0xf8: /* the frameIDs of a thread, as ThreadReference.Frames would give them */
      for (int32_t depth = 0; depth < 3; depth++)
        add_id_(ddmc__dbg_frame_id(d, t->id, depth), 0); /* at a known place */
      return;
    case 0xf7: {
      ddmc_location l = {FD_C_DEBUG, a % FD_NMETHODS, b % 11};
      ddmc__dbg_line_of(d, &l);
      return;
    }
    default: return;
  }
}

static void identity(void *arg, ddmc_ref *ref) { (void)arg, (void)ref; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (g_f.d == NULL) setup();
  ddmc__dbg *d = g_f.d;
  fakebridge_reset_debuggee(&g_f);
  fakebridge_reconnect(&g_f);
  seed_ids();
  static uint8_t body[MAX_BODY];
  size_t off = 0;
  while (off + 3 <= size) {
    uint8_t op = data[off], cmd = data[off + 1], len = data[off + 2];
    off += 3;
    if (len > size - off) len = (uint8_t)(size - off);
    const uint8_t *tmpl = data + off;
    off += len;
    if (op >= 0xf0) {
      if (g_trace) fprintf(stderr, "vm action %#x %#x\n", op, cmd);
      vm_action(op, cmd, tmpl, len);
      continue;
    }
    uint8_t set = (uint8_t)(1 + op % 17);
    size_t n = expand(tmpl, len, body);
    ddmc__buf_reset(&g_out);
    int rc = ddmc__dbg_run(d, set, cmd, body, n, &g_out);
    if (g_trace) {
      const ddmc__dbg_cmd *c = ddmc__dbg_lookup(set, cmd);
      fprintf(stderr, "%-40s %4zu bytes -> %3d (%zu bytes)\n", c ? c->name : "?", n, rc, g_out.len);
    }
    if (rc == 0) harvest(g_out.p, g_out.len);
    if (set == 1 && cmd == 6) fakebridge_reconnect(&g_f); /* Dispose */
    if (ddmc_buf_len(&g_out) > ((size_t)1 << 20)) ddmc__buf_free(&g_out);
  }
  /* The debugger leaves: every parked thread comes back, the debuggee is as it was. */
  ddmc_gc_visit_roots(g_f.fv.vm, identity, NULL);
  ddmc__dbg_reset(d);
  for (int i = 0; i < 2; i++) wait_idle(&g_thr[i]);
  fakebridge_events(&g_f, NULL, NULL);
  int bad = atomic_load(&g_f.bad_calls);
  int held = 0;
  for (int t = 1; t <= FD_NTHREADS; t++) held += atomic_load(&g_f.vm_suspended[t]) + atomic_load(&g_f.stepping[t]);
  if (bad != 0 || held != 0 || g_f.nbps != 0 || atomic_load(&g_f.method_events) != 0) {
    fprintf(stderr, "fuzz_debugger: bad_calls %d, suspended/stepping %d, breakpoints %d, method events %d\n", bad, held,
            g_f.nbps, atomic_load(&g_f.method_events));
    abort();
  }
  return 0;
}
