/* SPDX-License-Identifier: Apache-2.0 */
/* Thread states: what mvm_for_each_thread reports for a threads-like program matches what each
 * thread is doing; ids, tids, daemon flags, names, stacks; start/end/rename hooks; join and
 * wait/notify ordering; shutdown with threads blocked everywhere. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"

/* main holds Lock, starts one thread per state, then joins one that never ends (VMWAIT). */
static const char *states_program =
    ".source \"T.java\"\n"
    ".class T\n.static lock Object\n.static cond Object\n"
    ".method main\n.registers 4\n"
    "  new-instance v0, Object\n  sput v0, T.lock\n  new-instance v0, Object\n  sput v0, T.cond\n"
    "  sget v0, T.lock\n  monitor-enter v0\n"
    "  const-string v1, \"Sleeper\"\n  start-daemon v2, v1, T.sleeper\n"
    "  const-string v1, \"Native\"\n  start-daemon v2, v1, T.nat\n"
    "  const-string v1, \"Blocked\"\n  start-daemon v2, v1, T.blocked\n"
    "  const-string v1, \"Waiter\"\n  start-daemon v2, v1, T.waiter\n"
    "  const-string v1, \"TimedWaiter\"\n  start-daemon v2, v1, T.timed\n"
    "  const-string v1, \"Busy\"\n  start-daemon v2, v1, T.busy\n"
    "  const-string v1, \"Debuggee\"\n  start-daemon v2, v1, T.debuggee\n"
    "  const-string v1, \"Renamer\"\n  start-daemon v2, v1, T.renamer\n"
    "  const-string v1, \"Exiter\"\n  start-thread v2, v1, T.exiter\n  join v2\n"
    "  const-string v1, \"Forever\"\n  start-thread v2, v1, T.sleeper\n"
    "  .line 100\n"
    "  join v2\n"
    "  return-void\n.end method\n"
    ".method sleeper\n.registers 1\n  .line 10\n  invoke-static {}, T.nap\n  return-void\n.end method\n"
    ".method nap\n.registers 1\n  const v0, 60000\n  .line 20\n  sleep v0\n  goto :x\n:x\n  .line 21\n  return-void\n.end method\n"
    ".method nat\n.registers 1\n  const v0, 60000\n  native v0\n  return-void\n.end method\n"
    ".method blocked\n.registers 1\n  sget v0, T.lock\n  monitor-enter v0\n  return-void\n.end method\n"
    ".method waiter\n.registers 1\n  sget v0, T.cond\n  monitor-enter v0\n  wait v0\n  return-void\n.end method\n"
    ".method timed\n.registers 2\n  sget v0, T.cond\n  monitor-enter v0\n  const v1, 60000\n  wait v0, v1\n"
    "  return-void\n.end method\n"
    ".method busy\n.registers 1\n:spin\n  add-int/lit v0, v0, 1\n  goto :spin\n.end method\n"
    ".method debuggee\n.registers 1\n  wait-for-debugger\n  return-void\n.end method\n"
    ".method renamer\n.registers 2\n  const-string v0, \"Renamed\"\n  set-thread-name v0\n"
    "  const v1, 60000\n  sleep v1\n  return-void\n.end method\n"
    ".method exiter\n.registers 1\n  return-void\n.end method\n";

typedef struct expect_state {
  const char *name;
  mvm_status status;
  int daemon;
} expect_state;

static const expect_state expected[] = {
    {"main", MVM_TS_VMWAIT, 0},         {"GC", MVM_TS_VMWAIT, 1},
    {"Sleeper", MVM_TS_SLEEPING, 1},    {"Native", MVM_TS_NATIVE, 1},
    {"Blocked", MVM_TS_MONITOR, 1},     {"Waiter", MVM_TS_WAIT, 1},
    {"TimedWaiter", MVM_TS_SLEEPING, 1}, {"Busy", MVM_TS_RUNNING, 1},
    {"Debuggee", MVM_TS_VMWAIT, 1},     {"Renamed", MVM_TS_SLEEPING, 1},
    {"Forever", MVM_TS_SLEEPING, 0},
};
#define NEXPECTED (sizeof expected / sizeof expected[0])

static atomic_int release_debuggee, shut_down;
static void debugger_hook(void *ud) {
  while (!atomic_load(&release_debuggee) && !atomic_load(&shut_down)) usleep(5000);
}
static void shutdown_hook(void *ud) { atomic_store(&shut_down, 1); }

/* Hook log: "+id name" at start (with the status the thread had then), "-id" at end, "=id name". */
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;
static char hook_log[8192];
/* Set once the VM exists; the GC daemon's start hook fires inside mvm_vm_new, before that. */
static _Atomic(mvm_vm *) log_vm;
static void logf_(const char *fmt, uint32_t id, const char *name, int st) {
  pthread_mutex_lock(&log_lock);
  size_t n = strlen(hook_log);
  snprintf(hook_log + n, sizeof hook_log - n, fmt, id, name, st);
  pthread_mutex_unlock(&log_lock);
}
static int status_of(void *arg, const mvm_thread_info *t) {
  if (t->id != *(uint32_t *)arg) return 0;
  *(uint32_t *)arg = t->status;
  return 1;
}
static void on_start(void *ud, uint32_t id, const char *name) {
  uint32_t st = id;
  mvm_vm *vm = atomic_load(&log_vm);
  if (vm) mvm_for_each_thread(vm, status_of, &st);
  logf_("+%u %s %d;", id, name, (int)st);
}
static void on_end(void *ud, uint32_t id) { logf_("-%u%s;", id, "", 0); }
static void on_name(void *ud, uint32_t id, const char *name) { logf_("=%u %s;", id, name, 0); }

static void *run_main(void *vm) {
  mvm_run_main(vm, 0, NULL);
  return NULL;
}

static int frames(void *arg, const mvm_frame_info *f);

static int all_in_state(mvm_vm *vm) {
  for (size_t i = 0; i < NEXPECTED; i++) {
    mvm_thread_info t;
    if (t_find_thread(vm, expected[i].name, &t) || t.status != expected[i].status) return 0;
  }
  /* main is in VMWAIT twice: while start-thread waits for Forever to pass its start hook (line
   * 33), and then in the join (line 100), where it stays. */
  char buf[256] = "";
  return mvm_thread_stack(vm, 1, frames, buf) == 0 && strcmp(buf, "T.main(T.java:100) ") == 0;
}

static int frames(void *arg, const mvm_frame_info *f) {
  char *buf = arg;
  size_t n = strlen(buf);
  snprintf(buf + n, 256 - n, "%s.%s(%s:%d) ", f->class_name, f->method_name, f->file, f->line);
  return 0;
}

typedef struct ids {
  uint32_t id[32];
  pid_t tid[32];
  int n;
} ids;
static int collect_ids(void *arg, const mvm_thread_info *t) {
  ids *s = arg;
  s->id[s->n] = t->id;
  s->tid[s->n++] = t->tid;
  return 0;
}

static void reported_states_match(void **state) {
  mvm_hooks h = {.wait_for_debugger = debugger_hook, .shutdown = shutdown_hook, .thread_start = on_start,
                 .thread_end = on_end, .thread_name = on_name};
  hook_log[0] = '\0';
  atomic_store(&release_debuggee, 0);
  atomic_store(&shut_down, 0);
  atomic_store(&log_vm, NULL);
  mvm_vm *vm = t_vm(0, 0, &h);
  atomic_store(&log_vm, vm);
  t_load(vm, states_program);
  pthread_t main_thread;
  pthread_create(&main_thread, NULL, run_main, vm);

  int ok = 0;
  for (int i = 0; i < 1000 && !(ok = all_in_state(vm)); i++) usleep(10000);
  if (!ok) {
    for (size_t i = 0; i < NEXPECTED; i++) {
      mvm_thread_info t = {0};
      int found = t_find_thread(vm, expected[i].name, &t) == 0;
      print_error("%s: %s status %d, want %d\n", expected[i].name, found ? "found" : "missing",
                  (int)t.status, (int)expected[i].status);
    }
    fail_msg("threads did not reach their states within 10 s");
  }
  for (size_t i = 0; i < NEXPECTED; i++) {
    mvm_thread_info t;
    assert_int_equal(t_find_thread(vm, expected[i].name, &t), 0);
    assert_int_equal(t.daemon, expected[i].daemon);
    assert_true(t.tid > 0);
    if (!strcmp(expected[i].name, "main")) assert_int_equal(t.id, 1);
  }
  mvm_thread_info t;
  assert_int_equal(t_find_thread(vm, "Exiter", &t), -1);    /* joined: gone from the list */
  assert_int_equal(t_find_thread(vm, "Renamer", &t), -1);   /* renamed */
  ids s = {.n = 0};
  mvm_for_each_thread(vm, collect_ids, &s);
  assert_int_equal(s.n, NEXPECTED);
  for (int i = 0; i < s.n; i++)
    for (int j = i + 1; j < s.n; j++) {
      assert_int_not_equal(s.id[i], s.id[j]);
      assert_int_not_equal(s.tid[i], s.tid[j]);
    }

  /* Stacks, innermost first, with the .source file and .line numbers, read while they run. */
  char buf[256] = "";
  assert_int_equal(t_find_thread(vm, "Sleeper", &t), 0);
  assert_int_equal(mvm_thread_stack(vm, t.id, frames, buf), 0);
  assert_string_equal(buf, "T.nap(T.java:20) T.sleeper(T.java:10) ");
  buf[0] = '\0';
  assert_int_equal(mvm_thread_stack(vm, 1, frames, buf), 0);
  assert_string_equal(buf, "T.main(T.java:100) ");
  assert_int_equal(mvm_thread_stack(vm, 9999, frames, buf), -1);
  assert_int_equal(t_find_thread(vm, "Busy", &t), 0);
  for (int i = 0; i < 100; i++) {   /* a running thread's stack is readable at any moment */
    buf[0] = '\0';
    assert_int_equal(mvm_thread_stack(vm, t.id, frames, buf), 0);
    assert_non_null(strstr(buf, "T.busy(T.java:"));
  }
  /* CPU time (THST's utime where the library cannot read /proc): the spinning thread's grows, a
   * sleeper's stays near 0, a thread that is not there has none. */
  uint64_t busy0 = 0, busy1 = 0, sleeper = 0;
  assert_int_equal(mvm_thread_cpu_ns(vm, t.id, &busy0), 0);
  usleep(200 * 1000);
  assert_int_equal(mvm_thread_cpu_ns(vm, t.id, &busy1), 0);
  assert_true(busy1 >= busy0 + 20 * 1000000ull); /* >= 10 % of a core over 200 ms, even on a loaded machine */
  mvm_thread_info sl;
  assert_int_equal(t_find_thread(vm, "Sleeper", &sl), 0);
  assert_int_equal(mvm_thread_cpu_ns(vm, sl.id, &sleeper), 0);
  assert_true(sleeper < busy1);
  assert_int_equal(mvm_thread_cpu_ns(vm, 9999, &sleeper), -1);

  /* Hooks: a new thread reports itself while INITIALIZING; Exiter started and ended; the rename. */
  pthread_mutex_lock(&log_lock);
  char want[64];
  assert_int_equal(t_find_thread(vm, "Sleeper", &t), 0);
  snprintf(want, sizeof want, "+%u Sleeper %d;", t.id, MVM_TS_INITIALIZING);
  assert_non_null(strstr(hook_log, want));
  assert_non_null(strstr(hook_log, "+1 main"));
  assert_non_null(strstr(hook_log, " Exiter "));
  assert_non_null(strstr(hook_log, " Renamed;"));
  pthread_mutex_unlock(&log_lock);

  /* The debuggee leaves VMWAIT once the debugger "attaches". */
  atomic_store(&release_debuggee, 1);
  for (int i = 0; i < 500 && t_find_thread(vm, "Debuggee", &t) == 0; i++) usleep(10000);
  assert_int_equal(t_find_thread(vm, "Debuggee", &t), -1);

  /* A collection with threads in every state: the running one is parked, the rest are safe. */
  assert_int_equal(mvm_gc_request(vm, MVM_GC_EXPLICIT, 1), 0);

  /* Shutdown wakes and unwinds everything: sleeping, native, blocked, waiting, joining. */
  mvm_vm_free(vm);
  pthread_join(main_thread, NULL);
}

static void join_and_replace_in_order(void **state) {
  mvm_vm *vm = t_vm(0, 0, NULL);
  t_load(vm, ".class A\n.method main\n.registers 4\n  const v3, 0\n"
             ":again\n  const-string v0, \"Worker\"\n  start-thread v1, v0, A.work, v3\n  join v1\n"
             "  add-int/lit v3, v3, 1\n  const v2, 5\n  if-lt v3, v2, :again\n"
             "  const-string v0, \"done\"\n  println v0\n  return-void\n.end method\n"
             ".method work\n.registers 2\n.params 1\n  const v0, 5\n  native v0\n  println p0\n"
             "  return-void\n.end method\n");
  char *out;
  assert_int_equal(t_run(vm, &out), 0);
  assert_string_equal(out, "0\n1\n2\n3\n4\ndone\n");
  free(out);
  mvm_vm_free(vm);
}

static void wait_notify_ping_pong(void **state) {
  /* Two threads alternate through one monitor: turn = 0 is ping's, 1 is pong's. */
  mvm_vm *vm = t_vm(0, 0, NULL);
  t_load(vm, ".class A\n.static lock Object\n.static turn int\n"
             ".method main\n.registers 4\n  new-instance v0, Object\n  sput v0, A.lock\n"
             "  const-string v0, \"ping\"\n  const v1, 0\n  start-thread v2, v0, A.player, v1\n"
             "  const-string v0, \"pong\"\n  const v1, 1\n  start-thread v3, v0, A.player, v1\n"
             "  join v2\n  join v3\n  return-void\n.end method\n"
             ".method player\n.registers 5\n.params 1\n  sget v0, A.lock\n  const v1, 5\n"
             "  monitor-enter v0\n"
             ":round\n  sget v2, A.turn\n  if-eq v2, p0, :mine\n  wait v0\n  goto :round\n"
             ":mine\n  println p0\n  xor-int/lit v2, v2, 1\n  sput v2, A.turn\n  notify-all v0\n"
             "  add-int/lit v1, v1, -1\n  if-gtz v1, :round\n"
             "  monitor-exit v0\n  return-void\n.end method\n");
  char *out;
  assert_int_equal(t_run(vm, &out), 0);
  assert_string_equal(out, "0\n1\n0\n1\n0\n1\n0\n1\n0\n1\n");
  free(out);
  mvm_vm_free(vm);
}

static void contended_counter_is_exact(void **state) {
  /* Four threads add 1 to a static 20000 times each under a monitor: no update is lost, and
   * GCs from the allocation inside the critical section stop the world meanwhile. */
  mvm_vm *vm = t_vm(512 << 10, 0, NULL);
  t_load(vm, ".class A\n.static lock Object\n.static n int\n"
             ".method main\n.registers 6\n  new-instance v0, Object\n  sput v0, A.lock\n"
             "  const-string v0, \"adder\"\n"
             "  start-thread v1, v0, A.add\n  start-thread v2, v0, A.add\n"
             "  start-thread v3, v0, A.add\n  start-thread v4, v0, A.add\n"
             "  join v1\n  join v2\n  join v3\n  join v4\n  sget v5, A.n\n  println v5\n"
             "  return-void\n.end method\n"
             ".method add\n.registers 5\n  sget v0, A.lock\n  const v1, 20000\n"
             ":loop\n  monitor-enter v0\n  sget v2, A.n\n  add-int/lit v2, v2, 1\n  sput v2, A.n\n"
             "  const v3, 30\n  new-array v4, v3, int\n"
             "  monitor-exit v0\n  add-int/lit v1, v1, -1\n  if-gtz v1, :loop\n"
             "  return-void\n.end method\n");
  char *out;
  assert_int_equal(t_run(vm, &out), 0);
  assert_string_equal(out, "80000\n");
  free(out);
  mvm_heap_stats s;
  mvm_heap_get_stats(vm, &s);
  assert_true(s.gc_count > 0);
  mvm_vm_free(vm);
}

static void daemons_do_not_keep_main_alive(void **state) {
  mvm_vm *vm = t_vm(0, 0, NULL);
  t_load(vm, ".class A\n.method main\n.registers 2\n  const-string v0, \"d\"\n"
             "  start-daemon v1, v0, A.forever\n  return-void\n.end method\n"
             ".method forever\n.registers 1\n  const v0, 1000\n:x\n  sleep v0\n  goto :x\n.end method\n");
  assert_int_equal(t_run(vm, NULL), 0);   /* returns although the daemon sleeps on */
  mvm_thread_info t;
  assert_int_equal(t_find_thread(vm, "d", &t), 0);
  assert_int_equal(t_find_thread(vm, "main", &t), -1);
  mvm_vm_free(vm);
}

static void attached_thread_is_listed(void **state) {
  mvm_vm *vm = t_vm(0, 0, NULL);
  mvm_thread *j = mvm_thread_attach(vm, "JDWP", 1, MVM_TS_VMWAIT);
  assert_ptr_equal(mvm_thread_self(), j);
  mvm_thread_info t;
  assert_int_equal(t_find_thread(vm, "JDWP", &t), 0);
  assert_int_equal(t.status, MVM_TS_VMWAIT);
  assert_int_equal(t.daemon, 1);
  mvm_thread_set_display_status(j, MVM_TS_RUNNING);
  assert_int_equal(t_find_thread(vm, "JDWP", &t), 0);
  assert_int_equal(t.status, MVM_TS_RUNNING);
  mvm_thread_detach(j);
  assert_int_equal(t_find_thread(vm, "JDWP", &t), -1);
  assert_null(mvm_thread_self());
  mvm_vm_free(vm);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(reported_states_match),
      cmocka_unit_test(join_and_replace_in_order),
      cmocka_unit_test(wait_notify_ping_pong),
      cmocka_unit_test(contended_counter_is_exact),
      cmocka_unit_test(daemons_do_not_keep_main_alive),
      cmocka_unit_test(attached_thread_is_listed),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
