/* SPDX-License-Identifier: Apache-2.0 */
/* Debugger support in the core (mvm_debug.h), without libddmc: debug info from .signature and
 * .local, breakpoints by patching, stepping, method events, suspension of running and blocked
 * threads, frames and locals, fields, strings, arrays, Thread objects and groups. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "helpers.h"
#include "internal.h"
#include "mvm_debug.h"

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
  nanosleep(&ts, NULL);
}

/* The debugger sees a class from its first use on; the entry point's class, from before the
 * program starts (mvm_prepare_main), as with -agentlib:jdwp suspend=y. */
static void t_prepared(mvm_vm *vm) { assert_int_equal(mvm_prepare_main(vm), 0); }

typedef struct find_type {
  mvm_vm *vm;
  const char *sig;
  mvm_type found;
} find_type;
static int find_type_visit(void *arg, mvm_type t) {
  find_type *f = arg;
  mvm_type_info ti;
  if (mvm_dbg_type_info(f->vm, t, &ti) == 0 && !strcmp(ti.sig, f->sig)) f->found = t;
  return f->found != 0;
}
static mvm_type type_by_sig(mvm_vm *vm, const char *sig) {
  find_type f = {vm, sig, 0};
  mvm_dbg_for_each_type(vm, find_type_visit, &f);
  return f.found;
}
static uint32_t method_by_name(mvm_vm *vm, mvm_type t, const char *name) {
  mvm_type_info ti;
  assert_int_equal(mvm_dbg_type_info(vm, t, &ti), 0);
  for (uint32_t i = 0; i < ti.nmethods; i++) {
    mvm_method_desc m;
    assert_int_equal(mvm_dbg_method(vm, t, i, &m), 0);
    if (!strcmp(m.name, name)) return i;
  }
  fail_msg("no method %s", name);
  return 0;
}
static uint32_t field_by_name(mvm_vm *vm, mvm_type t, const char *name) {
  mvm_type_info ti;
  assert_int_equal(mvm_dbg_type_info(vm, t, &ti), 0);
  for (uint32_t i = 0; i < ti.nfields; i++) {
    mvm_field_desc f;
    assert_int_equal(mvm_dbg_field(vm, t, i, &f), 0);
    if (!strcmp(f.name, name)) return i;
  }
  fail_msg("no field %s", name);
  return 0;
}

/* ---- Debug info */

static const char *typed =
    ".source \"T.java\"\n"
    ".class T\n"
    ".static names String[]\n"
    ".field next T\n"
    ".field grid int[][]\n"
    ".method add\n"
    ".signature (int, long) long\n"
    ".registers 3\n"
    ".local p0 a int\n"
    ".local p1 b long\n"
    ".line 7\n"
    "  add-int v0, p0, p1\n"
    ".local v0 sum long\n"
    ".line 8\n"
    "  return v0\n"
    ".end method\n"
    ".method plain\n"          /* no .signature: every parameter int, returns int */
    ".registers 2\n.params 2\n"
    "  return p0\n"
    ".end method\n"
    ".method quiet\n"          /* returns nothing: ()V */
    ".registers 1\n"
    "  return-void\n"
    ".end method\n"
    ".method main\n"
    ".registers 1\n.params 1\n"   /* main's one parameter defaults to String[] */
    "  return-void\n"
    ".end method\n"
    ".method objs\n"
    ".signature (T, Object, String[], Thread) T[]\n"
    ".registers 5\n"
    "  const v0, 0\n"
    "  return v0\n"
    ".end method\n";

typedef struct lines {
  uint32_t pc[8];
  int32_t line[8];
  int n;
} lines;
static int line_visit(void *arg, uint32_t pc, int32_t line) {
  lines *l = arg;
  l->pc[l->n] = pc;
  l->line[l->n++] = line;
  return 0;
}
typedef struct locals {
  mvm_local_desc l[8];
  int n;
} locals;
static int local_visit(void *arg, const mvm_local_desc *d) {
  locals *l = arg;
  l->l[l->n++] = *d;
  return 0;
}

static void signatures_and_debug_info(void **state) {
  mvm_vm *vm = t_vm(0, 0, NULL);
  t_load(vm, typed);
  t_prepared(vm);
  mvm_type t = type_by_sig(vm, "LT;");
  assert_true(t != 0);
  mvm_type_info ti;
  assert_int_equal(mvm_dbg_type_info(vm, t, &ti), 0);
  assert_string_equal(ti.source, "T.java");
  assert_int_equal(ti.is_array, 0);
  assert_int_equal(ti.super, type_by_sig(vm, "Ljava/lang/Object;"));
  static const struct {
    const char *name, *sig;
  } want[] = {{"add", "(IJ)J"}, {"plain", "(II)I"}, {"quiet", "()V"}, {"main", "([Ljava/lang/String;)V"},
              {"objs", "(LT;Ljava/lang/Object;[Ljava/lang/String;Ljava/lang/Thread;)[LT;"}};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    mvm_method_desc m;
    assert_int_equal(mvm_dbg_method(vm, t, method_by_name(vm, t, want[i].name), &m), 0);
    assert_string_equal(m.sig, want[i].sig);
  }
  mvm_field_desc f;
  assert_int_equal(mvm_dbg_field(vm, t, field_by_name(vm, t, "names"), &f), 0);
  assert_string_equal(f.sig, "[Ljava/lang/String;");
  assert_true(f.is_static);
  assert_int_equal(mvm_dbg_field(vm, t, field_by_name(vm, t, "grid"), &f), 0);
  assert_string_equal(f.sig, "[[I");
  assert_int_equal(mvm_dbg_field(vm, t, field_by_name(vm, t, "next"), &f), 0);
  assert_string_equal(f.sig, "LT;");
  /* The built-ins, as a debugger names them, and the array types the VM itself makes. */
  const char *sigs[] = {"Ljava/lang/Object;", "Ljava/lang/String;", "Ljava/lang/Thread;", "Ljava/lang/ThreadGroup;",
                        "Ljava/lang/Class;", "[B", "[Ljava/lang/String;", "[I"};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) assert_true(type_by_sig(vm, sigs[i]) != 0);
  assert_int_equal(mvm_dbg_type_info(vm, type_by_sig(vm, "Ljava/lang/String;"), &ti), 0);
  assert_null(ti.source);
  assert_int_equal(mvm_dbg_type_info(vm, type_by_sig(vm, "[I"), &ti), 0);
  assert_int_equal(ti.is_array, 1);

  uint32_t add = method_by_name(vm, t, "add");
  lines l = {0};
  assert_int_equal(mvm_dbg_lines(vm, t, add, line_visit, &l), 0);
  assert_int_equal(l.n, 2);
  assert_int_equal(l.pc[0], 0);
  assert_int_equal(l.line[0], 7);
  assert_int_equal(l.pc[1], 1);
  assert_int_equal(l.line[1], 8);
  locals lv = {0};
  assert_int_equal(mvm_dbg_locals(vm, t, add, local_visit, &lv), 0);
  assert_int_equal(lv.n, 3);
  /* p0, p1 are the last registers (v1, v2); both visible from 0; sum from after its store */
  assert_string_equal(lv.l[0].name, "a");
  assert_int_equal(lv.l[0].reg, 1);
  assert_string_equal(lv.l[0].sig, "I");
  assert_int_equal(lv.l[0].start, 0);
  assert_int_equal(lv.l[0].end, 2);
  assert_int_equal(lv.l[1].reg, 2);
  assert_string_equal(lv.l[1].sig, "J");
  assert_string_equal(lv.l[2].name, "sum");
  assert_int_equal(lv.l[2].reg, 0);
  assert_int_equal(lv.l[2].start, 1);
  assert_int_equal(lv.l[2].end, 2);
  /* no .local at all: absent, as javac -g leaves a method without locals */
  assert_int_equal(mvm_dbg_locals(vm, t, method_by_name(vm, t, "quiet"), local_visit, &lv), MVM_DBG_EABSENT);
  assert_int_equal(mvm_dbg_method(vm, t, 99, &(mvm_method_desc){0}), MVM_DBG_ENOMETHOD);
  assert_int_equal(mvm_dbg_type_info(vm, 12345, &ti), MVM_DBG_ENOTYPE);
  mvm_vm_free(vm);
}

/* .end local closes a range; naming a register again ends the local it held. */
static void local_ranges(void **state) {
  mvm_vm *vm = t_vm(0, 0, NULL);
  t_load(vm, ".class A\n.method main\n.registers 2\n"
             "  const v0, 1\n"
             ".local v0 x int\n"
             "  const v1, 2\n"
             ".local v1 y char\n"
             "  nop\n"
             ".end local v1\n"
             "  nop\n"
             ".local v0 z double\n"
             "  return-void\n.end method\n");
  t_prepared(vm);
  mvm_type t = type_by_sig(vm, "LA;");
  locals lv = {0};
  assert_int_equal(mvm_dbg_locals(vm, t, 0, local_visit, &lv), 0);
  assert_int_equal(lv.n, 3);
  assert_string_equal(lv.l[0].name, "x");
  assert_int_equal(lv.l[0].start, 1);
  assert_int_equal(lv.l[0].end, 4);   /* ended by z */
  assert_string_equal(lv.l[1].name, "y");
  assert_int_equal(lv.l[1].start, 2);
  assert_int_equal(lv.l[1].end, 3);
  assert_string_equal(lv.l[2].sig, "D");
  assert_int_equal(lv.l[2].start, 4);
  assert_int_equal(lv.l[2].end, 5);
  mvm_vm_free(vm);
}

/* ---- Breakpoints, stepping, method events */

static const char *loop_prog =
    ".class A\n"
    ".method f\n"
    ".signature (int) int\n"
    ".registers 2\n"
    ".local p0 k int\n"
    ".line 10\n"
    "  mul-int v0, p0, p0\n"
    ".line 11\n"
    "  return v0\n"
    ".end method\n"
    ".method main\n"
    ".registers 4\n"
    "  const v0, 0\n  const v1, 5\n  const v3, 0\n"
    ":loop\n"
    "  invoke-static {v0}, A.f\n  move-result v2\n  add-int v3, v3, v2\n"
    "  add-int/lit v0, v0, 1\n  if-lt v0, v1, :loop\n"
    "  println v3\n  return-void\n"
    ".end method\n";

typedef struct rec {
  mvm_vm *vm;
  mvm_type cls;
  int bp_hits, entries, exits, steps, both, clear_after;
  int64_t k_seen[8];
  int64_t exit_values[16];
  uint32_t bp_pc;
  int step_from_bp;
} rec;
static rec R;

static void on_location(void *ud, uint32_t thread, const mvm_loc *loc, int32_t depth, unsigned flags) {
  rec *r = ud;
  if (flags & MVM_DBG_METHOD_ENTRY) r->entries++;
  if (flags & MVM_DBG_AT_BREAKPOINT) {
    if ((flags & MVM_DBG_METHOD_ENTRY) || r->steps) r->both++;
    /* the frame is readable from inside the hook: f's parameter k is its last register */
    mvm_value v;
    assert_int_equal(mvm_dbg_get_local(r->vm, thread, 0, 1, 'I', &v), 0);
    if (r->bp_hits < 8) r->k_seen[r->bp_hits] = v.u.i;
    assert_int_equal(depth, 1);
    if (++r->bp_hits == r->clear_after) assert_int_equal(mvm_dbg_clear_breakpoint(r->vm, loc), 0);
    if (r->step_from_bp) mvm_dbg_set_stepping(r->vm, thread, 1);
  } else if (!(flags & MVM_DBG_METHOD_ENTRY)) {
    r->steps++;
  }
}
static void on_exit_hook(void *ud, uint32_t thread, const mvm_loc *loc, int32_t depth, const mvm_value *ret) {
  rec *r = ud;
  if (r->exits < 16) r->exit_values[r->exits] = ret->tag == 'I' ? ret->u.i : -1;
  r->exits++;
}

static mvm_vm *loop_vm(void) {
  mvm_vm *vm = t_vm(0, 0, NULL);
  t_load(vm, loop_prog);
  t_prepared(vm);
  memset(&R, 0, sizeof R);
  R.vm = vm;
  R.cls = type_by_sig(vm, "LA;");
  mvm_dbg_hooks h = {.ud = &R, .location = on_location, .method_exit = on_exit_hook};
  mvm_dbg_set_hooks(vm, &h);
  return vm;
}

static void breakpoints_patch_and_run_the_original(void **state) {
  mvm_vm *vm = loop_vm();
  mvm_loc at = {R.cls, method_by_name(vm, R.cls, "f"), 0};
  assert_int_equal(mvm_dbg_set_breakpoint(vm, &at), 0);
  assert_int_equal(mvm_dbg_set_breakpoint(vm, &at), 0);   /* idempotent */
  mvm_loc bad = {R.cls, at.method, 99};
  assert_int_equal(mvm_dbg_set_breakpoint(vm, &bad), MVM_DBG_ELOCATION);
  R.clear_after = 3;
  char *out;
  assert_int_equal(t_run(vm, &out), 0);
  assert_string_equal(out, "30\n");   /* 0+1+4+9+16: the patched instruction still ran */
  free(out);
  assert_int_equal(R.bp_hits, 3);     /* cleared from inside the third hit */
  for (int i = 0; i < 3; i++) assert_int_equal(R.k_seen[i], i);
  assert_int_equal(R.entries + R.exits + R.steps, 0);
  mvm_vm_free(vm);
}

static void stepping_reports_every_instruction_once(void **state) {
  mvm_vm *vm = loop_vm();
  /* A breakpoint on f's second instruction, stepping from the first hit: the next hit comes
   * with the step, in one report. */
  mvm_loc at = {R.cls, method_by_name(vm, R.cls, "f"), 1};
  assert_int_equal(mvm_dbg_set_breakpoint(vm, &at), 0);
  R.step_from_bp = 1;
  char *out;
  assert_int_equal(t_run(vm, &out), 0);
  assert_string_equal(out, "30\n");
  free(out);
  assert_int_equal(R.bp_hits, 5);
  assert_int_equal(R.both, 4);
  /* after the first hit (f's return, iteration 0): the rest of iteration 0 in main (4), then 4
   * iterations of 5 instructions in main and 2 in f (the breakpoint among them), then println
   * and return-void */
  assert_int_equal(R.steps + R.both, 4 + 4 * (5 + 2) + 2);
  mvm_vm_free(vm);
}

static void method_entry_and_exit(void **state) {
  mvm_vm *vm = loop_vm();
  mvm_dbg_set_method_events(vm, 1);
  char *out;
  assert_int_equal(t_run(vm, &out), 0);
  assert_string_equal(out, "30\n");
  free(out);
  assert_int_equal(R.entries, 1 + 5);   /* main, then f five times */
  assert_int_equal(R.exits, 5 + 1);
  for (int i = 0; i < 5; i++) assert_int_equal(R.exit_values[i], i * i);
  assert_int_equal(R.exit_values[5], -1);   /* main returns void */
  mvm_dbg_set_method_events(vm, 0);
  mvm_vm_free(vm);
}

/* ---- Suspension, frames, locals, fields */

static const char *spin_prog =
    ".class S\n"
    ".static n long\n"
    ".static slept int\n"
    ".static stop int\n"
    ".static text String\n"
    ".static nums int[]\n"
    ".field id int\n"
    ".method spin\n"
    ".signature () void\n"
    ".registers 3\n"
    "  const v0, 0\n"
    ".local v0 count long\n"
    "  const-string v2, \"Spin\"\n"
    ".local v2 label String\n"
    ":loop\n"
    "  add-int/lit v0, v0, 1\n  sput v0, S.n\n"
    "  sget v1, S.stop\n  if-eqz v1, :loop\n"
    "  return-void\n"
    ".end method\n"
    ".method nap\n"
    ".registers 2\n"
    ":loop\n"
    "  const v0, 5\n  sleep v0\n"
    "  sget v0, S.slept\n  add-int/lit v0, v0, 1\n  sput v0, S.slept\n"
    "  sget v1, S.stop\n  if-eqz v1, :loop\n"
    "  const v0, 2\n  if-ne v1, v0, :done\n  exit v0\n"   /* stop = 2: the program exits */
    ":done\n"
    "  return-void\n"
    ".end method\n"
    ".method main\n"
    ".registers 4\n"
    "  const-string v0, \"hi\"\n  sput v0, S.text\n"
    "  const v0, 3\n  new-array v1, v0, int\n  sput v1, S.nums\n"
    "  const-string v1, \"Spin\"\n  new-thread v0, v1, S.spin\n  thread-start v0\n"
    "  const-string v1, \"Nap\"\n  start-thread v2, v1, S.nap\n"
    "  join v2\n"
    "  sget v3, S.n\n  println v3\n"
    "  return-void\n"
    ".end method\n";

static int main_status;
static void *run_main(void *arg) {
  main_status = mvm_run_main(arg, 0, NULL);
  return NULL;
}

/* Heap accesses from this (non-VM) thread stop the world, as the JDWP thread's do. */
static int64_t get_static(mvm_vm *vm, mvm_type t, const char *name) {
  mvm_value v;
  mvm_dbg_enter(vm);
  int rc = mvm_dbg_get_field(vm, 0, t, field_by_name(vm, t, name), &v);
  mvm_dbg_leave(vm);
  assert_int_equal(rc, 0);
  return v.u.i;
}

static void set_static(mvm_vm *vm, mvm_type t, const char *name, int64_t value) {
  mvm_value v = {.tag = 'I', .u.i = value};
  mvm_dbg_enter(vm);
  int rc = mvm_dbg_set_field(vm, 0, t, field_by_name(vm, t, name), &v);
  mvm_dbg_leave(vm);
  assert_int_equal(rc, 0);
}

static void wait_for(mvm_vm *vm, mvm_type t, const char *name) {
  for (int i = 0; i < 2000 && get_static(vm, t, name) == 0; i++) sleep_ms(1);
  assert_true(get_static(vm, t, name) != 0);
}

/* Thread.target and Thread.tid are slots the VM decodes: a debugger's write is refused, and a
 * bad value that got there anyway is caught where the VM reads it, not followed. */
static const char *victim_prog =
    ".class TF\n.static victim Thread\n.static go int\n"
    ".method run\n.signature () void\n.registers 1\n    const-string v0, \"victim ran\"\n    println v0\n"
    "    return-void\n.end method\n"
    ".method main\n.signature (String[]) void\n.registers 5\n    const-string v1, \"Victim\"\n"
    "    new-thread v0, v1, TF.run\n    sput v0, TF.victim\n:wait\n    sget v2, TF.go\n    if-nez v2, :start\n"
    "    const v3, 5\n    sleep v3\n    goto :wait\n:start\n    thread-start v0\n    join v0\n    return-void\n"
    ".end method\n";

static void thread_slots_are_the_vms(void **state) {
  mvm_vm *vm = t_vm(0, 0, NULL);
  t_load(vm, victim_prog);
  t_prepared(vm);
  mvm_type s = type_by_sig(vm, "LTF;");
  pthread_t main_thread;
  fflush(stdout);
  assert_int_equal(pthread_create(&main_thread, NULL, run_main, vm), 0);
  wait_for(vm, s, "victim");
  uint64_t victim = (uint64_t)get_static(vm, s, "victim");
  mvm_type thread_t = type_by_sig(vm, "Ljava/lang/Thread;");
  const char *slots[] = {"target", "tid"};
  for (int i = 0; i < 2; i++) {
    uint32_t f = field_by_name(vm, thread_t, slots[i]);
    mvm_field_desc d;
    assert_int_equal(mvm_dbg_field(vm, thread_t, f, &d), 0);
    assert_true(d.vm_internal);
    mvm_value before, after, v = {.tag = 'J', .u.i = 0x7FFF123456789ABCLL};
    mvm_dbg_enter(vm);
    assert_int_equal(mvm_dbg_get_field(vm, victim, thread_t, f, &before), 0);
    assert_int_equal(mvm_dbg_set_field(vm, victim, thread_t, f, &v), MVM_DBG_EREADONLY);
    assert_int_equal(mvm_dbg_get_field(vm, victim, thread_t, f, &after), 0);
    mvm_dbg_leave(vm);
    assert_int_equal(after.u.i, before.u.i);
  }
  mvm_field_desc d;
  assert_int_equal(mvm_dbg_field(vm, thread_t, field_by_name(vm, thread_t, "name"), &d), 0);
  assert_false(d.vm_internal);
  /* A target out of range written behind the bridge's back: the start refuses it. */
  mvm_dbg_enter(vm);
  mvm_slots(mvm_deref(vm, (mvm_ref)victim))[MVM_THREAD_F_TARGET] = 0x7FFF123456789ABCLL;
  mvm_dbg_leave(vm);
  set_static(vm, s, "go", 1);
  pthread_join(main_thread, NULL);
  assert_int_not_equal(main_status, 0);
  mvm_vm_free(vm);
}

static void suspend_frames_locals_fields(void **state) {
  mvm_vm *vm = t_vm(0, 0, NULL);
  t_load(vm, spin_prog);
  t_prepared(vm);
  mvm_type s = type_by_sig(vm, "LS;");
  pthread_t main_thread;
  fflush(stdout);
  assert_int_equal(pthread_create(&main_thread, NULL, run_main, vm), 0);
  wait_for(vm, s, "n");
  wait_for(vm, s, "slept");
  mvm_thread_info spin, nap;
  assert_int_equal(t_find_thread(vm, "Spin", &spin), 0);
  assert_int_equal(t_find_thread(vm, "Nap", &nap), 0);

  /* A running thread stops at its next instruction and stays there. */
  assert_int_equal(mvm_dbg_suspend(vm, spin.id), 0);
  int64_t n1 = get_static(vm, s, "n");
  sleep_ms(30);
  assert_int_equal(get_static(vm, s, "n"), n1);
  mvm_dbg_thread th;
  char name[32];
  assert_int_equal(mvm_dbg_thread_get(vm, spin.id, &th, name, sizeof name), 0);
  assert_string_equal(name, "Spin");
  assert_int_equal(th.status, MVM_TS_SUSPENDED);
  assert_int_equal(th.internal, 0);
  /* its Thread object: name, group "main", tid */
  mvm_dbg_enter(vm);
  mvm_type thread_t = type_by_sig(vm, "Ljava/lang/Thread;");
  mvm_type ot;
  assert_int_equal(mvm_dbg_object_type(vm, th.obj, &ot), 0);
  assert_int_equal(ot, thread_t);
  mvm_value v;
  assert_int_equal(mvm_dbg_get_field(vm, th.obj, thread_t, field_by_name(vm, thread_t, "name"), &v), 0);
  const char *p;
  size_t len;
  assert_int_equal(mvm_dbg_string(vm, (uint64_t)v.u.i, &p, &len), 0);
  assert_int_equal(len, 4);
  assert_memory_equal(p, "Spin", 4);
  assert_int_equal(mvm_dbg_get_field(vm, th.obj, thread_t, field_by_name(vm, thread_t, "tid"), &v), 0);
  assert_int_equal(v.u.i, spin.id);
  mvm_dbg_leave(vm);
  int32_t frames;
  assert_int_equal(mvm_dbg_frame_count(vm, spin.id, &frames), 0);
  assert_int_equal(frames, 1);
  mvm_loc loc;
  assert_int_equal(mvm_dbg_frame(vm, spin.id, 0, &loc), 0);
  assert_int_equal(loc.cls, s);
  assert_int_equal(loc.method, method_by_name(vm, s, "spin"));
  assert_int_equal(mvm_dbg_frame(vm, spin.id, 1, &loc), MVM_DBG_ENOFRAME);
  /* locals: the counter equals the static (the thread stopped between its instructions, so
   * the static is at most one behind) */
  assert_int_equal(mvm_dbg_get_local(vm, spin.id, 0, 0, 'J', &v), 0);
  assert_true(v.u.i == n1 || v.u.i == n1 + 1);
  assert_int_equal(mvm_dbg_get_local(vm, spin.id, 0, 0, 'L', &v), MVM_DBG_ETYPE);
  assert_int_equal(mvm_dbg_get_local(vm, spin.id, 0, 2, 'I', &v), MVM_DBG_ETYPE);
  assert_int_equal(mvm_dbg_get_local(vm, spin.id, 0, 2, 's', &v), 0);
  assert_int_equal(v.tag, 'L');
  assert_int_equal(mvm_dbg_get_local(vm, spin.id, 0, 3, 'I', &v), MVM_DBG_ESLOT);
  assert_int_equal(mvm_dbg_get_local(vm, 999, 0, 0, 'I', &v), MVM_DBG_ENOTHREAD);
  /* set the counter: the thread carries on from the new value */
  mvm_value big = {.tag = 'J', .u.i = 1000000000};
  assert_int_equal(mvm_dbg_set_local(vm, spin.id, 0, 0, &big), 0);
  assert_int_equal(mvm_dbg_resume(vm, spin.id), 0);
  for (int i = 0; i < 2000 && get_static(vm, s, "n") < 1000000000; i++) sleep_ms(1);
  assert_true(get_static(vm, s, "n") > 1000000000);

  /* A sleeping thread counts as suspended at once and does not run again until resumed. */
  assert_int_equal(mvm_dbg_suspend(vm, nap.id), 0);
  sleep_ms(15);   /* the sleep in progress (5 ms) ends meanwhile */
  int64_t slept = get_static(vm, s, "slept");
  sleep_ms(40);
  assert_int_equal(get_static(vm, s, "slept"), slept);
  assert_int_equal(mvm_dbg_frame(vm, nap.id, 0, &loc), 0);
  assert_int_equal(loc.method, method_by_name(vm, s, "nap"));
  assert_int_equal(mvm_dbg_resume(vm, nap.id), 0);
  for (int i = 0; i < 2000 && get_static(vm, s, "slept") == slept; i++) sleep_ms(1);
  assert_true(get_static(vm, s, "slept") > slept);

  /* fields, strings and arrays */
  mvm_dbg_enter(vm);
  uint32_t text = field_by_name(vm, s, "text"), nums = field_by_name(vm, s, "nums");
  assert_int_equal(mvm_dbg_get_field(vm, 0, s, text, &v), 0);
  assert_int_equal(mvm_dbg_string(vm, (uint64_t)v.u.i, &p, &len), 0);
  assert_int_equal(len, 2);
  uint64_t fresh;
  assert_int_equal(mvm_dbg_new_string(vm, "debugger", 8, &fresh), 0);
  mvm_value fv = {.tag = 'L', .u.i = (int64_t)fresh};
  assert_int_equal(mvm_dbg_set_field(vm, 0, s, text, &fv), 0);
  assert_int_equal(mvm_dbg_get_field(vm, 0, s, text, &v), 0);
  assert_int_equal(mvm_dbg_string(vm, (uint64_t)v.u.i, &p, &len), 0);
  assert_memory_equal(p, "debugger", 8);
  mvm_value iv = {.tag = 'I', .u.i = 5};
  assert_int_equal(mvm_dbg_set_field(vm, 0, s, text, &iv), MVM_DBG_ETYPE);
  assert_int_equal(mvm_dbg_get_field(vm, 0, s, field_by_name(vm, s, "id"), &v), MVM_DBG_ENOFIELD);
  assert_int_equal(mvm_dbg_get_field(vm, 0, s, nums, &v), 0);
  uint64_t arr = (uint64_t)v.u.i;
  int32_t alen;
  assert_int_equal(mvm_dbg_array_length(vm, arr, &alen), 0);
  assert_int_equal(alen, 3);
  mvm_value e = {.tag = 'I', .u.i = -7};
  assert_int_equal(mvm_dbg_array_set(vm, arr, 2, &e), 0);
  assert_int_equal(mvm_dbg_array_get(vm, arr, 2, &v), 0);
  assert_int_equal(v.u.i, -7);
  assert_int_equal(mvm_dbg_array_get(vm, arr, 3, &v), MVM_DBG_EINDEX);
  assert_int_equal(mvm_dbg_array_length(vm, fresh, &alen), MVM_DBG_ENOTARRAY);
  assert_int_equal(mvm_dbg_object_type(vm, arr, &ot), 0);
  assert_int_equal(ot, type_by_sig(vm, "[I"));
  mvm_dbg_leave(vm);

  /* stop both threads through a static, as a debugger's SetValues would */
  set_static(vm, s, "stop", 1);
  pthread_join(main_thread, NULL);
  mvm_vm_free(vm);
}

/* Groups and the threads in them: main and program threads in "main", the GC in "system". */
typedef struct groups {
  uint64_t g[4], parent[4];
  char name[4][16];
  int n;
} groups;
static int group_visit(void *arg, uint64_t g, uint64_t parent, const char *name) {
  groups *gs = arg;
  gs->g[gs->n] = g;
  gs->parent[gs->n] = parent;
  snprintf(gs->name[gs->n++], 16, "%s", name);
  return 0;
}

static void thread_groups(void **state) {
  mvm_vm *vm = t_vm(0, 0, NULL);
  t_load(vm, ".class A\n.method main\n.registers 1\n  return-void\n.end method\n");
  t_prepared(vm);
  assert_int_equal(mvm_prepare_main(vm), 0);
  groups gs = {0};
  assert_int_equal(mvm_dbg_groups(vm, group_visit, &gs), 0);
  assert_int_equal(gs.n, 2);
  assert_string_equal(gs.name[0], "system");
  assert_int_equal(gs.parent[0], 0);
  assert_string_equal(gs.name[1], "main");
  assert_int_equal(gs.parent[1], gs.g[0]);
  mvm_dbg_thread th;
  /* main exists before it runs, and a suspension holds it at once */
  assert_int_equal(mvm_dbg_thread_get(vm, 1, &th, NULL, 0), 0);
  assert_int_equal(th.group, gs.g[1]);
  assert_int_equal(th.status, MVM_TS_STARTING);
  mvm_thread_info gc;
  assert_int_equal(t_find_thread(vm, "GC", &gc), 0);
  assert_int_equal(mvm_dbg_thread_get(vm, gc.id, &th, NULL, 0), 0);
  assert_int_equal(th.group, gs.g[0]);
  assert_true(th.daemon);
  assert_int_equal(mvm_dbg_suspend(vm, 1), 0);
  assert_int_equal(mvm_dbg_resume(vm, 1), 0);
  assert_int_equal(t_run(vm, NULL), 0);
  assert_int_equal(mvm_dbg_suspend(vm, 1), MVM_DBG_ENOTHREAD);   /* gone */
  mvm_vm_free(vm);
}

/* A debugger holding a suspended thread does not keep the VM from shutting down. */
static void free_with_a_suspended_thread(void **state) {
  mvm_vm *vm = t_vm(0, 0, NULL);
  t_load(vm, spin_prog);
  t_prepared(vm);
  mvm_type s = type_by_sig(vm, "LS;");
  pthread_t main_thread;
  assert_int_equal(pthread_create(&main_thread, NULL, run_main, vm), 0);
  wait_for(vm, s, "n");
  mvm_thread_info spin;
  assert_int_equal(t_find_thread(vm, "Spin", &spin), 0);
  assert_int_equal(mvm_dbg_suspend(vm, spin.id), 0);
  set_static(vm, s, "stop", 2);
  pthread_join(main_thread, NULL);
  assert_int_equal(main_status, 2);
  mvm_vm_free(vm);   /* Spin, still suspended, unwinds */
}

/* ---- Class preparation and field watchpoints */

static const char *watch_prog =
    ".class Box\n.super Base\n.static count int\n.field value int\n"
    ".method <clinit>\n.registers 1\n  const v0, 100\n  sput v0, Box.count\n  return-void\n.end method\n"
    ".class Base\n.field tag int\n"
    ".class Unused\n.static x int\n"
    ".class M\n.method main\n.registers 3\n"
    "  const v0, 1\n"
    ":loop\n"
    "  new-instance v1, Box\n  iput v0, v1, Box.value\n  iget v2, v1, Box.value\n  iput v2, v1, Base.tag\n"
    "  sget v2, Box.count\n  add-int v2, v2, v0\n  sput v2, Box.count\n"
    "  add-int/lit v0, v0, 1\n  const v2, 4\n  if-lt v0, v2, :loop\n"
    "  sget v2, Box.count\n  println v2\n  return-void\n.end method\n";

typedef struct wrec {
  mvm_vm *vm;
  char prepared[8][32];   /* class signatures in event order */
  int nprepared, prepared_status_ok;
  int access, modify, static_mods, last_static;
  int64_t values[16];
  uint64_t objs[16];
} wrec;

static void on_prepare_rec(void *ud, uint32_t thread, mvm_type type) {
  wrec *w = ud;
  mvm_type_info ti;
  assert_int_equal(mvm_dbg_type_info(w->vm, type, &ti), 0);
  assert_int_equal(thread, 1);
  /* reported before its <clinit> runs */
  if (!ti.initialized) w->prepared_status_ok++;
  if (w->nprepared < 8) snprintf(w->prepared[w->nprepared++], 32, "%s", ti.sig);
}
static void on_field_rec(void *ud, uint32_t thread, const mvm_loc *loc, int32_t depth, mvm_type type, uint32_t field,
                         uint64_t obj, const mvm_value *nv) {
  wrec *w = ud;
  mvm_field_desc fd;
  assert_int_equal(mvm_dbg_field(w->vm, type, field, &fd), 0);
  if (fd.is_static) {
    /* the first store is <clinit>'s, one frame above main's sget that caused it */
    assert_int_equal(depth, w->static_mods == 0 ? 1 : 0);
    assert_int_equal(obj, 0);
    assert_non_null(nv);
    w->static_mods++;
    w->last_static = (int)nv->u.i;
    return;
  }
  assert_int_equal(depth, 0);
  assert_string_equal(fd.name, "value");
  assert_true(obj != 0);
  if (nv) {
    assert_int_equal(nv->tag, 'I');
    if (w->modify < 16) w->values[w->modify] = nv->u.i;
    w->modify++;
  } else {
    if (w->access < 16) w->objs[w->access] = obj;
    w->access++;
  }
}

static void on_prepare_watch(void *ud, uint32_t thread, mvm_type type) {
  wrec *w = ud;
  on_prepare_rec(ud, thread, type);
  mvm_type_info ti;
  assert_int_equal(mvm_dbg_type_info(w->vm, type, &ti), 0);
  if (strcmp(ti.sig, "LBox;")) return;
  /* Box declares count (0) then value (1) */
  assert_int_equal(mvm_dbg_set_field_watch(w->vm, type, 1, MVM_WATCH_ACCESS | MVM_WATCH_MODIFY), 0);
  assert_int_equal(mvm_dbg_set_field_watch(w->vm, type, 0, MVM_WATCH_MODIFY), 0);
}

static int sig_seen(const wrec *w, const char *sig) {
  for (int i = 0; i < w->nprepared; i++)
    if (!strcmp(w->prepared[i], sig)) return i;
  return -1;
}

static void classes_prepare_at_first_use_and_fields_are_watched(void **state) {
  mvm_vm *vm = t_vm(0, 0, NULL);
  t_load(vm, watch_prog);
  t_prepared(vm);
  static wrec w;
  memset(&w, 0, sizeof w);
  w.vm = vm;
  mvm_type m = type_by_sig(vm, "LM;");
  assert_true(m != 0);
  assert_int_equal(type_by_sig(vm, "LBox;"), 0);   /* loaded, not prepared: unseen */
  mvm_dbg_hooks h = {.ud = &w, .class_prepare = on_prepare_rec, .field = on_field_rec};
  mvm_dbg_set_hooks(vm, &h);
  char *out;
  assert_int_equal(t_run(vm, &out), 0);
  assert_string_equal(out, "106\n");   /* 100 from <clinit>, + 1 + 2 + 3 */
  free(out);
  /* Base before Box (superclass first), once each, before their initialisers; Unused never */
  assert_int_equal(w.nprepared, 2);
  assert_int_equal(w.prepared_status_ok, 2);
  assert_int_equal(sig_seen(&w, "LBase;"), 0);
  assert_int_equal(sig_seen(&w, "LBox;"), 1);
  assert_int_equal(type_by_sig(vm, "LUnused;"), 0);
  mvm_type box = type_by_sig(vm, "LBox;");
  mvm_type_info ti;
  assert_int_equal(mvm_dbg_type_info(vm, box, &ti), 0);
  assert_true(ti.initialized);
  assert_int_equal(w.access + w.modify + w.static_mods, 0);   /* nothing watched yet */
  mvm_vm_free(vm);

  /* Again, watching Box.value (access and modification) and Box.count (modification) from
   * Box's ClassPrepare, as a debugger's deferred watchpoint does. */
  vm = t_vm(0, 0, NULL);
  t_load(vm, watch_prog);
  t_prepared(vm);
  memset(&w, 0, sizeof w);
  w.vm = vm;
  h.class_prepare = on_prepare_watch;
  mvm_dbg_set_hooks(vm, &h);
  assert_int_equal(t_run(vm, &out), 0);
  assert_string_equal(out, "106\n");
  free(out);
  assert_int_equal(w.modify, 3);
  for (int i = 0; i < 3; i++) assert_int_equal(w.values[i], i + 1);
  assert_int_equal(w.access, 3);
  assert_true(w.objs[0] != w.objs[1]);   /* a new Box each round */
  /* <clinit>'s store, then one per round; Base.tag (same object, other field) is not reported */
  assert_int_equal(w.static_mods, 4);
  assert_int_equal(w.last_static, 106);
  /* unwatched again: nothing more is reported */
  mvm_type box2 = type_by_sig(vm, "LBox;");
  assert_int_equal(mvm_dbg_set_field_watch(vm, box2, 0, 0), 0);
  assert_int_equal(mvm_dbg_set_field_watch(vm, box2, 1, 0), 0);
  assert_int_equal(mvm_dbg_set_field_watch(vm, box2, 9, MVM_WATCH_ACCESS), MVM_DBG_ENOFIELD);
  mvm_vm_free(vm);
}

/* ---- Frames popped by an exception, while method events are on */

static char unwound[8][16];
static int32_t unwound_depth[8];
static int nunwound, nexits;
static mvm_vm *unwind_vm;

static void on_unwind_rec(void *ud, uint32_t thread, const mvm_loc *loc, int32_t depth) {
  mvm_method_desc m;
  assert_int_equal(mvm_dbg_method(unwind_vm, loc->cls, loc->method, &m), 0);
  if (nunwound < 8) {
    snprintf(unwound[nunwound], sizeof unwound[0], "%s", m.name);
    unwound_depth[nunwound] = depth;
  }
  nunwound++;
}
static void on_exit_count(void *ud, uint32_t thread, const mvm_loc *loc, int32_t depth, const mvm_value *ret) {
  nexits++;
}

static void frames_popped_by_an_exception(void **state) {
  mvm_vm *vm = t_vm(0, 0, NULL);
  t_load(vm, ".class U\n"
             ".method c\n.registers 1\n  new-instance v0, RuntimeException\n  throw v0\n.end method\n"
             ".method b\n.registers 1\n  invoke-static {}, U.c\n  return-void\n.end method\n"
             ".method main\n.registers 2\n"
             ":try\n  invoke-static {}, U.b\n:try_end\n  return-void\n"
             ":handler\n  move-exception v0\n  const-string v1, \"caught\"\n  println v1\n  return-void\n"
             ".catch RuntimeException {:try .. :try_end} :handler\n.end method\n");
  t_prepared(vm);
  unwind_vm = vm;
  nunwound = nexits = 0;
  mvm_dbg_hooks h = {.method_exit = on_exit_count, .method_unwind = on_unwind_rec};
  mvm_dbg_set_hooks(vm, &h);
  mvm_dbg_set_method_events(vm, 1);
  char *out;
  assert_int_equal(t_run(vm, &out), 0);
  assert_string_equal(out, "caught\n");
  free(out);
  /* c then b, innermost first, at their depths; main returns normally */
  assert_int_equal(nunwound, 2);
  assert_string_equal(unwound[0], "c");
  assert_int_equal(unwound_depth[0], 2);
  assert_string_equal(unwound[1], "b");
  assert_int_equal(unwound_depth[1], 1);
  assert_int_equal(nexits, 1); /* main's return; c and b had none */
  mvm_vm_free(vm);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(signatures_and_debug_info),
      cmocka_unit_test(local_ranges),
      cmocka_unit_test(breakpoints_patch_and_run_the_original),
      cmocka_unit_test(stepping_reports_every_instruction_once),
      cmocka_unit_test(method_entry_and_exit),
      cmocka_unit_test(suspend_frames_locals_fields),
      cmocka_unit_test(thread_slots_are_the_vms),
      cmocka_unit_test(thread_groups),
      cmocka_unit_test(free_with_a_suspended_thread),
      cmocka_unit_test(classes_prepare_at_first_use_and_fields_are_watched),
      cmocka_unit_test(frames_popped_by_an_exception),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
