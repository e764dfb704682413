/* SPDX-License-Identifier: Apache-2.0 */
/* Every libddmc integration point of minivm, in one file.
 *
 * Two directions. VM -> library: the mvm_hooks below turn thread start/end/rename, set-app-name,
 * wait-for-debugger and the two GC phases into ddmc_notify_* / ddmc_wait_for_debugger /
 * ddmc_gc_walk / ddmc_gc_done. Library -> VM: the ddmc_vm_ops table answers THST, STKL, HPIF,
 * HPSG/NHSG, HPGC and EXIT from minivm_core's enumeration API. Nothing in minivm_core knows
 * about libddmc, which is what lets the core and its tests build without it. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ddmc/ddmc.h>

#include "vm_bridge.h"
#include "ddm_bridge.h"
#include "ddm_handlers.h"
#include "prof_bridge.h"

struct ddm_bridge {
  ddmc_options opts;
  int verbose;                  /* -verbose:jdwp: let INFO and DEBUG through */
  mvm_vm *vm;
  _Atomic(ddmc_vm *) ddm;       /* NULL until started: hooks fired earlier are dropped */
  mvm_thread *jdwp_thread;      /* the JDWP thread as a VM thread ("JDWP", daemon) */
  vm_bridge *dbg;              /* the JDWP debugger (vm_bridge.c), attached before start */
  ddmc_vm *created;             /* ddm_bridge_create's instance (started or not) */
  atomic_int announced;         /* "JDWP listening on" printed */
  ddm_handlers *handlers;       /* the program's own chunk handlers (ddm-* instructions) */
};

mvm_vm *ddm_bridge_vm(const ddm_bridge *b) { return b->vm; }

int ddm_bridge_is_flag(const char *arg) { return ddmc_options_is_jdwp_flag(arg); }

ddm_bridge *ddm_bridge_new(int verbose) {
  ddm_bridge *b = calloc(1, sizeof *b);
  if (!b) return NULL;
  ddmc_options_init(&b->opts);
  b->verbose = verbose;
  b->handlers = ddm_handlers_new(); /* NULL: the program's ddm-register says "no DDM" */
  return b;
}

int ddm_bridge_parse(ddm_bridge *b, const char *arg) {
  char err[256];
  if (ddmc_options_parse(&b->opts, arg, err, sizeof err) == 0) return 0;
  fprintf(stderr, "%s\n", err);
  if (b->opts.help) fputs(ddmc_options_help(), stderr);
  return -1;
}

/* ---- VM -> library */

static ddmc_vm *ddm(void *ud) { return atomic_load(&((ddm_bridge *)ud)->ddm); }

static void on_thread_start(void *ud, uint32_t id, const char *name) {
  if (!ddm(ud)) return;
  ddmc_notify_thread_start(ddm(ud), id, name);
  vm_bridge_thread_start(((ddm_bridge *)ud)->dbg, id);
}
static void on_thread_end(void *ud, uint32_t id) {
  if (ddm(ud)) ddmc_notify_thread_end(ddm(ud), id);
}
static void on_thread_name(void *ud, uint32_t id, const char *name) {
  if (ddm(ud)) ddmc_notify_thread_name(ddm(ud), id, name);
}
static void on_app_name(void *ud, const char *name) {
  if (ddm(ud)) ddmc_notify_app_name(ddm(ud), name, NULL, 0);
}
static void on_wait_for_debugger(void *ud) {
  /* No timeout: each call sends WAIT to the peer. Returns when a debugger is active or when
   * on_shutdown stopped the instance (DDMC_ESTATE); either way the program carries on. */
  if (ddm(ud)) ddmc_wait_for_debugger(ddm(ud), -1);
}
static void on_shutdown(void *ud) {
  /* An exit instruction: VM_DEATH to a debugger while every thread is still there, then stop
   * JDWP so a thread in ddmc_wait_for_debugger wakes up. This runs on a VM thread, never on the
   * JDWP thread (which may not call ddmc_vm_stop). */
  ddm_handlers_shutdown(((ddm_bridge *)ud)->handlers);
  if (!ddm(ud)) return;
  vm_bridge_vm_death(((ddm_bridge *)ud)->dbg);
  ddmc_vm_stop(ddm(ud));
}
static void on_gc_marked(void *ud) {
  /* World stopped, marks set, nothing swept: walk_heap below reports unmarked blocks as free,
   * so the dump equals the heap the sweep is about to leave. */
  if (ddm(ud)) ddmc_gc_walk(ddm(ud));
}
static void on_gc_done(void *ud) {
  if (ddm(ud)) ddmc_gc_done(ddm(ud));
}
/* JVM TI: GarbageCollectionStart before marking; the tag tables' weak sweep after it. */
static void on_gc_start(void *ud) {
  if (ddm(ud)) ddmc_gc_start(ddm(ud));
}
static void on_gc_sweep(void *ud, int (*is_live)(void *arg, uint64_t *ref), void *arg) {
  if (ddm(ud)) ddmc_gc_sweep(ddm(ud), is_live, arg);
}

/* The program's chunk handlers (ddm_handlers.c). */
static int on_ddm_register(void *ud, uint32_t type) {
  return ddm_handlers_register(((ddm_bridge *)ud)->handlers, ddm(ud), type);
}
static int on_ddm_accept(void *ud, int64_t ms, uint32_t *type, uint8_t **data, size_t *len) {
  return ddm_handlers_accept(((ddm_bridge *)ud)->handlers, ms, type, data, len);
}
static int on_ddm_reply(void *ud, int kind, uint32_t type, const uint8_t *data, size_t len, const char *msg) {
  return ddm_handlers_reply(((ddm_bridge *)ud)->handlers, kind, type, data, len, msg);
}
static int on_ddm_send(void *ud, uint32_t type, const uint8_t *data, size_t len) {
  return ddm(ud) && ddmc_send_chunk(ddm(ud), type, data, len) == 0 ? 0 : -1;
}

void ddm_bridge_hooks(ddm_bridge *b, mvm_hooks *out) {
  memset(out, 0, sizeof *out);
  out->ud = b;
  out->thread_start = on_thread_start;
  out->thread_end = on_thread_end;
  out->thread_name = on_thread_name;
  out->app_name = on_app_name;
  out->wait_for_debugger = on_wait_for_debugger;
  out->shutdown = on_shutdown;
  out->gc_marked = on_gc_marked;
  out->gc_done = on_gc_done;
  out->gc_start = on_gc_start;
  out->gc_sweep = on_gc_sweep;
  out->ddm_register = on_ddm_register;
  out->ddm_accept = on_ddm_accept;
  out->ddm_reply = on_ddm_reply;
  out->ddm_send = on_ddm_send;
}

/* ---- Library -> VM (ddmc_vm_ops). They run on the JDWP thread, except walk_heap and heap_info
 * (GC thread, inside ddmc_gc_walk / ddmc_gc_done) and log (any). */

/* While the JDWP thread serves a request it shows as RUNNING, as Dalvik's did. */
static void jdwp_busy(ddm_bridge *b, int busy) {
  if (b->jdwp_thread && mvm_thread_self() == b->jdwp_thread)
    mvm_thread_set_display_status(b->jdwp_thread, busy ? MVM_TS_RUNNING : MVM_TS_VMWAIT);
}

static void op_jdwp_thread_start(void *vm_data) {
  ddm_bridge *b = vm_data;
  b->jdwp_thread = mvm_thread_attach(b->vm, "JDWP", 1, MVM_TS_VMWAIT);
}

static void op_jdwp_thread_end(void *vm_data) {
  ddm_bridge *b = vm_data;
  if (b->jdwp_thread) mvm_thread_detach(b->jdwp_thread);
  b->jdwp_thread = NULL;
}

static void op_exit(void *vm_data, int32_t status) {
  (void)vm_data;
  /* Runtime.halt: no shutdown of the other threads, but keep what they printed. _exit, not exit:
   * running atexit handlers while VM threads still run would race with them. The status is
   * clamped as the exit instruction's is: EXIT 256 must not report success. */
  fflush(NULL);
  _exit(mvm_exit_status(status));
}

static ddmc_thread_status map_status(mvm_status s) {
  switch (s) {
    case MVM_TS_ZOMBIE: return DDMC_THREAD_ZOMBIE;
    case MVM_TS_RUNNING: return DDMC_THREAD_RUNNING;
    case MVM_TS_SLEEPING: return DDMC_THREAD_SLEEPING;
    case MVM_TS_MONITOR: return DDMC_THREAD_MONITOR;
    case MVM_TS_WAIT: return DDMC_THREAD_WAIT;
    case MVM_TS_INITIALIZING: return DDMC_THREAD_INITIALIZING;
    case MVM_TS_STARTING: return DDMC_THREAD_STARTING;
    case MVM_TS_NATIVE: return DDMC_THREAD_NATIVE;
    case MVM_TS_VMWAIT: return DDMC_THREAD_VMWAIT;
    case MVM_TS_SUSPENDED: return DDMC_THREAD_SUSPENDED;
  }
  return DDMC_THREAD_RUNNING;
}

/* The library's visitor and its argument, carried through minivm's own visitor. One struct per
 * visitor type: a function pointer never passes through void * (ISO C has no such conversion). */
typedef struct thread_visit {
  ddmc_thread_visit_fn fn;
  void *arg;
} thread_visit;
typedef struct frame_visit {
  ddmc_frame_visit_fn fn;
  void *arg;
} frame_visit;
typedef struct heap_visit {
  ddmc_heap_visit_fn fn;
  void *arg;
} heap_visit;

static int thread_adapter(void *arg, const mvm_thread_info *t) {
  thread_visit *v = arg;
  ddmc_thread_info info = {
      .id = t->id, .tid = (uint32_t)t->tid, .name = t->name, .status = map_status(t->status), .daemon = t->daemon};
  return v->fn(v->arg, &info);
}

static int op_for_each_thread(void *vm_data, ddmc_thread_visit_fn fn, void *arg) {
  ddm_bridge *b = vm_data;
  jdwp_busy(b, 1);
  thread_visit v = {fn, arg};
  int rc = mvm_for_each_thread(b->vm, thread_adapter, &v);
  jdwp_busy(b, 0);
  return rc;
}

/* The library reads /proc by tid first; this answers for a thread it could not (pthread's own clock:
 * one total, no user/system split). */
static int op_thread_cpu_time(void *vm_data, uint32_t id, uint64_t *user_ns, uint64_t *system_ns) {
  ddm_bridge *b = vm_data;
  *system_ns = 0;
  return mvm_thread_cpu_ns(b->vm, id, user_ns) == 0 ? 0 : DDMC_ENOENT;
}

static int frame_adapter(void *arg, const mvm_frame_info *f) {
  frame_visit *v = arg;
  ddmc_frame fr = {
      .class_name = f->class_name, .method_name = f->method_name, .file = f->file, .line = f->line, .signature = f->sig};
  return v->fn(v->arg, &fr);
}

static int op_thread_stack(void *vm_data, uint32_t id, ddmc_frame_visit_fn fn, void *arg) {
  ddm_bridge *b = vm_data;
  jdwp_busy(b, 1);
  frame_visit v = {fn, arg};
  int rc = mvm_thread_stack(b->vm, id, frame_adapter, &v);
  jdwp_busy(b, 0);
  return rc == -1 ? DDMC_ENOENT : rc;
}

static int op_heap_info(void *vm_data, int heap, ddmc_heap_info *out) {
  ddm_bridge *b = vm_data;
  mvm_heap_stats s;
  if (heap == DDMC_HEAP_MANAGED) mvm_heap_get_stats(b->vm, &s);
  else if (heap == DDMC_HEAP_NATIVE) mvm_native_get_stats(b->vm, &s);
  else return DDMC_ENOENT;
  out->max_bytes = s.max_bytes;
  out->footprint = s.footprint;
  out->allocated_bytes = s.allocated_bytes;
  out->allocated_objects = s.allocated_objects;
  out->base = s.base;
  return 0;
}

static int region_adapter(void *arg, uintptr_t addr, size_t bytes, mvm_region_kind k) {
  static const ddmc_heap_kind kinds[] = {
      [MVM_RK_FREE] = DDMC_KIND_OBJECT,   /* free runs carry kind 0, as Dalvik's did */
      [MVM_RK_OBJECT] = DDMC_KIND_OBJECT,   [MVM_RK_CLASS] = DDMC_KIND_CLASS,
      [MVM_RK_ARRAY_1] = DDMC_KIND_ARRAY_1, [MVM_RK_ARRAY_2] = DDMC_KIND_ARRAY_2,
      [MVM_RK_ARRAY_4] = DDMC_KIND_ARRAY_4, [MVM_RK_ARRAY_8] = DDMC_KIND_ARRAY_8,
      [MVM_RK_NATIVE] = DDMC_KIND_NATIVE};
  heap_visit *v = arg;
  return v->fn(v->arg, addr, bytes, kinds[k], k == MVM_RK_FREE ? DDMC_SOLID_FREE : DDMC_SOLID_HARD);
}

static int op_walk_heap(void *vm_data, int heap, ddmc_heap_visit_fn fn, void *arg) {
  ddm_bridge *b = vm_data;
  heap_visit v = {fn, arg};
  if (heap == DDMC_HEAP_MANAGED) return mvm_heap_walk(b->vm, region_adapter, &v);
  if (heap == DDMC_HEAP_NATIVE) return mvm_native_walk(b->vm, region_adapter, &v) ? DDMC_ENOMEM : 0;
  return DDMC_ENOENT;
}

static int op_request_gc(void *vm_data) {
  ddm_bridge *b = vm_data;
  /* Only signals the GC daemon: the collection must not run on the JDWP thread's stack. */
  return mvm_gc_request(b->vm, MVM_GC_DEBUGGER, 0) == 0 ? 0 : DDMC_ESTATE;
}

static void op_log(void *vm_data, ddmc_log_level level, const char *msg) {
  ddm_bridge *b = vm_data;
  /* The bound address, as soon as it is known: with suspend=y ddmc_vm_start only returns once
   * a debugger attached, and a debugger must first learn the port (address=0 scans). */
  if (!strncmp(msg, "JDWP listening on ", 18) && !atomic_exchange(&b->announced, 1)) {
    if (!b->opts.quiet) fprintf(stderr, "minivm: %s\n", msg);
    return;
  }
  if (level < DDMC_LOG_WARN && !b->verbose) return;
  static const char *const names[] = {
      [DDMC_LOG_DEBUG] = "debug", [DDMC_LOG_INFO] = "info", [DDMC_LOG_WARN] = "warning", [DDMC_LOG_ERROR] = "error"};
  /* A level from a newer library than this table knows still prints. */
  const char *name = (unsigned)level < sizeof(names) / sizeof(names[0]) && names[level] ? names[level] : "log";
  fprintf(stderr, "minivm: jdwp %s: %s\n", name, msg);
}

static const char *abi(void) {
#if defined(__x86_64__)
  return sizeof(void *) == 8 ? "64-bit (x86_64)" : "32-bit (x86_64)";
#elif defined(__aarch64__)
  return "64-bit (arm64)";
#elif defined(__i386__)
  return "32-bit (x86)";
#elif defined(__arm__)
  return "32-bit (arm)";
#else
  return sizeof(void *) == 8 ? "64-bit" : "32-bit";
#endif
}

int ddm_bridge_start(ddm_bridge *b, mvm_vm *vm) {
  if (!b->created && ddm_bridge_create(b, vm)) return -1;
  ddmc_vm *d = b->created;
  int rc;
  if ((rc = ddmc_vm_start(d)) != 0) {
    fprintf(stderr, "minivm: JDWP: cannot start: %s\n", ddmc_strerror(rc));
    ddmc_vm_free(d);
    return -1;
  }
  /* Published only now: hooks from VM threads never see a half-started instance. */
  atomic_store(&b->ddm, d);
  const ddmc_options *o = &b->opts;
  const char *host = o->host[0] ? o->host : "127.0.0.1";
  if (o->quiet) return 0;
  if (o->onthrow[0] || o->onuncaught)
    fprintf(stderr, "minivm: JDWP starts at %s\n", o->onthrow[0] ? "onthrow=" : "the first uncaught exception");
  else if (o->transport == DDMC_TRANSPORT_ADB)
    fprintf(stderr, "minivm: JDWP via adb\n");
  else if (!o->server)
    fprintf(stderr, "minivm: JDWP connecting to %s:%u\n", host, (unsigned)o->port);
  else if (!atomic_exchange(&b->announced, 1))   /* unless op_log printed it already */
    fprintf(stderr, "minivm: JDWP listening on %s:%u\n", host, (unsigned)ddmc_vm_port(d));
  return 0;
}

ddmc_vm *ddm_bridge_ddmc(const ddm_bridge *b) { return b->created; }

void ddm_bridge_publish(ddm_bridge *b) { atomic_store(&b->ddm, b->created); }

int ddm_bridge_create(ddm_bridge *b, mvm_vm *vm) {
  static const ddmc_vm_ops ops = {
      .jdwp_thread_start = op_jdwp_thread_start,
      .jdwp_thread_end = op_jdwp_thread_end,
      .exit = op_exit,
      .for_each_thread = op_for_each_thread,
      .thread_stack = op_thread_stack,
      .heap_info = op_heap_info,
      .walk_heap = op_walk_heap,
      .request_gc = op_request_gc,
      .log = op_log,
      .thread_cpu_time = op_thread_cpu_time,
  };
  b->vm = vm;
  /* Agents without -agentlib:jdwp: an instance that is never started still needs a transport
   * named (it opens nothing until ddmc_vm_start). */
  if (b->opts.transport == DDMC_TRANSPORT_NONE) b->opts.transport = DDMC_TRANSPORT_SOCKET;
  ddmc_vm *d;
  int rc = ddmc_vm_new(&d, &b->opts, &ops, NULL, b);
  if (rc) {
    fprintf(stderr, "minivm: JDWP: %s\n", ddmc_strerror(rc));
    return -1;
  }
  ddmc_vm_ident ident = {"minivm v0.1", abi(), "CheckJNI=false", 0, 0};
  if ((rc = ddmc_vm_set_ident(d, &ident)) != 0) {
    fprintf(stderr, "minivm: JDWP: %s\n", ddmc_strerror(rc));
    ddmc_vm_free(d);
    return -1;
  }
  /* Until the program names itself, as every Android app process starts out. */
  ddmc_notify_app_name(d, "<pre-initialized>", NULL, 0);
  /* The debugger: command sets 1-17 answered through vm_bridge.c's ops. */
  if (!(b->dbg = vm_bridge_attach(d, vm))) {
    ddmc_vm_free(d);
    return -1;
  }
  /* Allocation tracking; tracing and sampling come with the VM bridge and the ops above. */
  if (prof_bridge_attach(d, vm) != 0) {
    fprintf(stderr, "minivm: JDWP: out of memory\n");
    ddmc_vm_free(d);
    return -1;
  }
  b->created = d;
  return 0;
}

void ddm_bridge_stop(ddm_bridge *b) {
  /* Joins the JDWP thread, whose jdwp_thread_end detaches it from the VM. The instance is not
   * freed: daemon threads may still be inside a ddmc_notify_* call, and the process is about to
   * exit anyway (ddmc functions stay callable after stop). */
  ddmc_vm *d = atomic_load(&b->ddm);
  if (!d) return;
  vm_bridge_vm_death(b->dbg);
  ddmc_vm_stop(d);
}
