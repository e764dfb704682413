/* SPDX-License-Identifier: Apache-2.0 */
/* Exceptions in minivm_core (no libddmc): throw / move-exception / .catch / .catchall / .super,
 * the VM's own errors as java.lang exceptions, check-cast and instance-of, uncaught exceptions
 * (Java's "Exception in thread" trace, main's exit status 1, other threads just end), the
 * debugger's exception hooks (throw and catch locations, found without unwinding), and the
 * assembler's checks of the new directives. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"
#include "mvm_debug.h"

/* Runs main of text with stdout and stderr captured (malloc'd); returns the exit status. */
static int run2(mvm_vm *vm, char **out, char **err) {
  fflush(stdout);
  fflush(stderr);
  FILE *to = tmpfile(), *te = tmpfile();
  assert_non_null(to);
  assert_non_null(te);
  int so = dup(1), se = dup(2);
  dup2(fileno(to), 1);
  dup2(fileno(te), 2);
  int status = mvm_run_main(vm, 0, NULL);
  fflush(stdout);
  fflush(stderr);
  dup2(so, 1);
  dup2(se, 2);
  close(so);
  close(se);
  FILE *fs[2] = {to, te};
  char **dst[2] = {out, err};
  for (int i = 0; i < 2; i++) {
    off_t n = lseek(fileno(fs[i]), 0, SEEK_END);
    char *buf = calloc(1, (size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(pread(fileno(fs[i]), buf, (size_t)n, 0), n);
    if (dst[i]) *dst[i] = buf;
    else free(buf);
    fclose(fs[i]);
  }
  return status;
}

/* Loads and runs text; checks status, stdout and stderr (NULL: not checked). */
static void expect(const char *text, int status, const char *out, const char *err) {
  mvm_vm *vm = t_vm(0, 0, NULL);
  t_load(vm, text);
  char *o, *e;
  int st = run2(vm, &o, &e);
  if (st != status || strcmp(o, out) || (err && strcmp(e, err)))
    fail_msg("status %d (want %d)\nstdout:\n%s\n(want)\n%s\nstderr:\n%s\n(want)\n%s", st, status, o, out, e,
             err ? err : "(any)");
  free(o);
  free(e);
  mvm_vm_free(vm);
}

/* ---- catching */

static void catch_by_class_superclass_and_catchall(void **state) {
  /* The first matching .catch wins, in declaration order; a superclass catches a subclass;
   * .catchall catches anything; a handler's move-exception gets the object thrown. */
  expect(".class MyError\n.super RuntimeException\n"
         ".class A\n"
         ".method thrower\n.registers 2\n.params 1\n"
         "  if-eqz p0, :arith\n"
         "  new-instance v0, MyError\n  const-string v1, \"mine\"\n  iput v1, v0, MyError.message\n  throw v0\n"
         ":arith\n  const v0, 0\n  div-int v0, v0, v0\n  return-void\n.end method\n"
         ".method main\n.registers 4\n"
         "  const v0, 1\n"
         ":a\n  invoke-static {v0}, A.thrower\n:b\n"
         ".catch ArithmeticException {:a .. :b} :h_arith\n"
         ".catch RuntimeException {:a .. :b} :h_rt\n"
         ".catchall {:a .. :b} :h_all\n"
         "  return-void\n"
         ":h_arith\n  move-exception v1\n  const-string v2, \"arith\"\n  println v2\n  goto :next\n"
         ":h_rt\n  move-exception v1\n  iget v2, v1, Throwable.message\n  println v2\n"
         "  instance-of v3, v1, MyError\n  println v3\n"
         ":next\n  if-eqz v0, :done\n  const v0, 0\n"
         ":c\n  invoke-static {v0}, A.thrower\n:d\n"
         ".catch ArithmeticException {:c .. :d} :h_arith\n"
         "  return-void\n"
         ":h_all\n  const-string v2, \"all\"\n  println v2\n"
         ":done\n"
         ":e\n  new-instance v1, Exception\n  throw v1\n:f\n"
         ".catchall {:e .. :f} :h_last\n"
         "  return-void\n"
         ":h_last\n  move-exception v1\n  instance-of v2, v1, Exception\n  println v2\n"
         "  instance-of v2, v1, RuntimeException\n  println v2\n  return-void\n.end method\n",
         0, "mine\n1\narith\n1\n0\n", "");
}

static void nested_try_and_rethrow(void **state) {
  /* The inner handler catches, prints, rethrows the same object; the outer one gets it, and
   * the trace of a rethrown exception is where it was first thrown. A handler's own range is
   * not covered by its try, so the rethrow leaves the inner try. */
  expect(".class A\n"
         ".method boom\n.registers 2\n"
         "  new-instance v0, RuntimeException\n  const-string v1, \"first\"\n"
         "  iput v1, v0, Throwable.message\n  throw v0\n.end method\n"
         ".method main\n.registers 4\n"
         ":outer_start\n"
         ":inner_start\n  invoke-static {}, A.boom\n:inner_end\n"
         "  return-void\n"
         ":inner\n  move-exception v0\n  const-string v1, \"inner\"\n  println v1\n  throw v0\n"
         ":outer_end\n"
         ".catch RuntimeException {:inner_start .. :inner_end} :inner\n"
         ".catch Exception {:outer_start .. :outer_end} :outer\n"
         ":outer\n  move-exception v2\n  const-string v1, \"outer\"\n  println v1\n"
         "  if-ne v0, v2, :bad\n  iget v1, v2, Throwable.message\n  println v1\n"
         "  throw v2\n"
         ":bad\n  const-string v1, \"not the same object\"\n  println v1\n  return-void\n.end method\n",
         1, "inner\nouter\nfirst\n",
         "Exception in thread \"main\" java.lang.RuntimeException: first\n"
         "\tat A.boom(t.mvm:7)\n"
         "\tat A.main(t.mvm:13)\n");
}

static void vm_errors_are_exceptions(void **state) {
  /* Each VM error is an object of its class, caught by it, with a message. */
  static const struct {
    const char *cls, *body, *msg;
  } cases[] = {
      {"ArithmeticException", "  const v0, 0\n  div-int v0, v0, v0\n", "divide by zero"},
      {"ArithmeticException", "  const v0, 0\n  rem-int/lit v0, v0, 0\n", "divide by zero"},
      {"NullPointerException", "  const v0, 0\n  iget v0, v0, P.x\n", "v0 is null"},
      {"NullPointerException", "  const v0, 0\n  array-length v0, v0\n", "v0 is null"},
      {"NullPointerException", "  const v0, 0\n  monitor-enter v0\n", "v0 is null"},
      {"NullPointerException", "  const v0, 0\n  throw v0\n", "throw with null exception"},
      {"ArrayIndexOutOfBoundsException", "  const v0, 2\n  new-array v0, v0, int\n  const v1, 5\n  aget v0, v0, v1\n",
       "Index 5 out of bounds for length 2"},
      {"ArrayIndexOutOfBoundsException", "  const v0, 2\n  new-array v0, v0, int\n  const v1, -1\n  aput v1, v0, v1\n",
       "Index -1 out of bounds for length 2"},
      {"ClassCastException", "  new-instance v0, Object\n  iget v0, v0, P.x\n", "v0 is not a P (field x)"},
      {"ClassCastException", "  const-string v0, \"s\"\n  check-cast v0, P\n", "java.lang.String cannot be cast to P"},
      {"ClassCastException", "  new-instance v0, Exception\n  check-cast v0, RuntimeException\n",
       "java.lang.Exception cannot be cast to java.lang.RuntimeException"},
      {"ClassCastException", "  const v0, 1\n  new-array v0, v0, int\n  check-cast v0, String\n",
       "int[] cannot be cast to java.lang.String"},
      {"ClassCastException", "  new-instance v0, Object\n  thread-start v0\n", "v0 is not a Thread"},
  };
  /* Also caught by each superclass up to Throwable, and by catchall. */
  static const char *catchers[] = {NULL, "RuntimeException", "Exception", "Throwable", ""};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    for (size_t k = 0; k < sizeof catchers / sizeof catchers[0]; k++) {
      const char *by = catchers[k] ? catchers[k] : cases[i].cls;
      char prog[2048], want[256];
      snprintf(prog, sizeof prog,
               ".class P\n.field x int\n.class A\n.method main\n.registers 3\n"
               ":s\n%s:e\n"
               "  return-void\n"
               "%s%s {:s .. :e} :h\n"
               ":h\n  move-exception v2\n  println v2\n  iget v1, v2, Throwable.message\n  println v1\n"
               "  instance-of v1, v2, %s\n  println v1\n  return-void\n.end method\n",
               cases[i].body, *by ? ".catch " : ".catchall", by, cases[i].cls);
      mvm_vm *vm = t_vm(0, 0, NULL);
      t_load(vm, prog);
      char *o, *e;
      int st = run2(vm, &o, &e);
      snprintf(want, sizeof want, "%s@", cases[i].cls);
      char tail[256];
      snprintf(tail, sizeof tail, "\n%s\n1\n", cases[i].msg);
      if (st != 0 || strncmp(o, want, strlen(want)) || !strstr(o, tail) || *e)
        fail_msg("case %zu by '%s': status %d stdout '%s' stderr '%s'", i, by, st, o, e);
      free(o);
      free(e);
      mvm_vm_free(vm);
    }
  }
}

static void not_caught_by_other_classes_or_outside_the_range(void **state) {
  /* An ArithmeticException is no NullPointerException; a throw after the range is not in it. */
  expect(".class A\n.method main\n.registers 2\n"
         "  const v0, 0\n"
         ":s\n  const v1, 1\n:e\n"
         "  div-int v0, v1, v0\n"
         "  return-void\n"
         ".catch ArithmeticException {:s .. :e} :h\n"
         ".catch NullPointerException {:s .. :x} :h\n"
         ":x\n"
         ":h\n  const-string v1, \"caught\"\n  println v1\n  return-void\n.end method\n",
         1, "", "Exception in thread \"main\" java.lang.ArithmeticException: divide by zero\n\tat A.main(t.mvm:8)\n");
}

static void check_cast_and_instance_of(void **state) {
  expect(".class B\n.super Exception\n.class C\n.super B\n"
         ".class A\n.method main\n.registers 3\n"
         "  new-instance v0, C\n"
         "  instance-of v1, v0, B\n  println v1\n"
         "  instance-of v1, v0, Throwable\n  println v1\n"
         "  instance-of v1, v0, Object\n  println v1\n"
         "  instance-of v1, v0, RuntimeException\n  println v1\n"
         "  const v2, 0\n  instance-of v1, v2, Object\n  println v1\n"   /* null is no instance */
         "  check-cast v2, B\n"                                           /* null passes */
         "  check-cast v0, Exception\n"
         "  const-string v2, \"s\"\n  instance-of v1, v2, String\n  println v1\n"
         "  instance-of v1, v2, Object\n  println v1\n"
         "  const v2, 1\n  new-array v2, v2, int\n  instance-of v1, v2, Object\n  println v1\n"
         "  instance-of v1, v2, String\n  println v1\n"
         "  return-void\n.end method\n",
         0, "1\n1\n1\n0\n0\n1\n1\n1\n0\n", "");
}

/* ---- .super: fields are inherited */

static void super_inherits_fields(void **state) {
  /* Sub's instance has Base's fields first, then its own (Base may come later in the file);
   * iget/iput of Base's field works on a Sub; a GC keeps references in both. */
  expect(".class Sub\n.super Base\n.field s String\n"
         ".class Base\n.field b String\n.field n int\n"
         ".class A\n.static keep Sub\n.method main\n.registers 3\n"
         "  new-instance v0, Sub\n  sput v0, A.keep\n"
         "  const-string v1, \"base\"\n  iput v1, v0, Base.b\n"
         "  const-string v1, \"sub\"\n  iput v1, v0, Sub.s\n"
         "  const v1, 42\n  iput v1, v0, Sub.n\n"   /* Sub.n is Base's field */
         "  const v0, 0\n  const v1, 0\n  gc\n"
         "  sget v0, A.keep\n"
         "  iget v1, v0, Base.b\n  println v1\n  iget v1, v0, Sub.s\n  println v1\n"
         "  iget v1, v0, Base.n\n  println v1\n"
         "  new-instance v2, Base\n  iget v1, v2, Sub.s\n"   /* a Base is no Sub */
         "  return-void\n.end method\n",
         1, "base\nsub\n42\n", "Exception in thread \"main\" java.lang.ClassCastException: v2 is not a Sub (field s)\n"
                                "\tat A.main(t.mvm:30)\n");
}

/* ---- uncaught */

static void uncaught_in_main_prints_java_trace(void **state) {
  expect(".source \"Debug.java\"\n.class Debug\n"
         ".method square\n.signature (int) int\n.registers 2\n.params 1\n"
         ".line 11\n  const v0, 0\n  div-int v0, p0, v0\n  return v0\n.end method\n"
         ".method sumTo\n.registers 2\n.params 1\n"
         ".line 18\n  invoke-static {p0}, Debug.square\n  move-result v0\n  return v0\n.end method\n"
         ".method main\n.registers 2\n"
         ".line 30\n  const-string v0, \"before\"\n  println v0\n"
         ".line 31\n  const v0, 3\n  invoke-static {v0}, Debug.sumTo\n"
         "  const-string v0, \"not reached\"\n  println v0\n  return-void\n.end method\n",
         1, "before\n",
         "Exception in thread \"main\" java.lang.ArithmeticException: divide by zero\n"
         "\tat Debug.square(Debug.java:11)\n"
         "\tat Debug.sumTo(Debug.java:18)\n"
         "\tat Debug.main(Debug.java:31)\n");
  /* A program class without a message: no ": ". */
  expect(".class Oops\n.super Throwable\n.class A\n.method main\n.registers 1\n"
         "  new-instance v0, Oops\n  throw v0\n.end method\n",
         1, "", "Exception in thread \"main\" Oops\n\tat A.main(t.mvm:7)\n");
}

static void uncaught_in_a_thread_ends_only_it(void **state) {
  /* The worker dies with its trace; main joins it and exits 0. */
  expect(".class A\n"
         ".method work\n.registers 2\n"
         "  const v0, 0\n  aget v1, v0, v0\n  return-void\n.end method\n"
         ".method main\n.registers 3\n"
         "  const-string v1, \"Worker\"\n  start-thread v0, v1, A.work\n  join v0\n"
         "  const-string v1, \"main goes on\"\n  println v1\n  return-void\n.end method\n",
         0, "main goes on\n",
         "Exception in thread \"Worker\" java.lang.NullPointerException: v0 is null\n\tat A.work(t.mvm:5)\n");
}

static void clinit_exception_ends_main(void **state) {
  expect(".class A\n.method <clinit>\n.registers 1\n  new-instance v0, RuntimeException\n  throw v0\n.end method\n"
         ".method main\n.registers 1\n  const-string v0, \"no\"\n  println v0\n  return-void\n.end method\n",
         1, "", "Exception in thread \"main\" java.lang.RuntimeException\n\tat A.<clinit>(t.mvm:5)\n");
}

static void catch_in_a_caller_unwinds_frames(void **state) {
  /* Thrown three calls deep, caught in main: the callee frames are gone and main's registers
   * are as they were at the call. */
  expect(".class A\n"
         ".method c\n.registers 1\n  const v0, 0\n  div-int/lit v0, v0, 0\n  return-void\n.end method\n"
         ".method b\n.registers 1\n  invoke-static {}, A.c\n  return-void\n.end method\n"
         ".method a\n.registers 1\n  invoke-static {}, A.b\n  return-void\n.end method\n"
         ".method main\n.registers 3\n"
         "  const v1, 77\n"
         ":s\n  invoke-static {}, A.a\n:e\n  return-void\n"
         ".catch ArithmeticException {:s .. :e} :h\n"
         ":h\n  move-exception v0\n  println v1\n"
         /* and again, many times: no frame or register is left behind */
         "  const v2, 300\n"
         ":loop\n"
         ":s2\n  invoke-static {}, A.a\n:e2\n"
         ".catchall {:s2 .. :e2} :h2\n"
         ":h2\n  add-int/lit v2, v2, -1\n  if-nez v2, :loop\n"
         "  const-string v0, \"done\"\n  println v0\n  return-void\n.end method\n",
         0, "77\ndone\n", "");
}

/* ---- the assembler */

typedef struct bad {
  const char *text;
  const char *where;
  const char *what;
} bad;

#define M(body) ".class A\n.method main\n.registers 2\n" body
static const bad bad_cases[] = {
    {M(".catch Exception {:a .. :b}\n"), "t.mvm:4: ", ".catch expects CLASS {:start .. :end} :handler"},
    {M(".catch Exception :a .. :b :h\n"), "t.mvm:4: ", ".catch expects CLASS {:start .. :end} :handler"},
    {M(".catch Exception {:a - :b} :h\n"), "t.mvm:4: ", ".catch expects CLASS {:start .. :end} :handler"},
    {M(".catchall {:a .. :b} :h extra\n"), "t.mvm:4: ", ".catchall expects {:start .. :end} :handler"},
    {M(".catch Exception {a .. :b} :h\n"), "t.mvm:4: ", ".catch: expected a :label, got 'a'"},
    {M(".catchall {:a .. :b} h\n"), "t.mvm:4: ", ".catchall: expected a :label, got 'h'"},
    {M(".catch 1x {:a .. :b} :h\n"), "t.mvm:4: ", ".catch: bad class name '1x'"},
    {".class A\n.catchall {:a .. :b} :h\n", "t.mvm:2: ", ".catchall outside a method"},
    {M(":a\n  nop\n:b\n.catch Nowhere {:a .. :b} :b\n  return-void\n.end method\n"), "t.mvm:7: ",
     "unknown class 'Nowhere'"},
    {M(":a\n  nop\n:b\n.catch String {:a .. :b} :b\n  return-void\n.end method\n"), "t.mvm:7: ",
     ".catch: String is not a Throwable"},
    {".class P\n" M(":a\n  nop\n:b\n.catch P {:a .. :b} :b\n  return-void\n.end method\n"), "t.mvm:8: ",
     ".catch: P is not a Throwable"},
    {M(":a\n  nop\n:b\n.catchall {:a .. :gone} :b\n  return-void\n.end method\n"), "t.mvm:7: ",
     "undefined label 'gone'"},
    {M(":a\n  nop\n:b\n.catchall {:b .. :a} :b\n  return-void\n.end method\n"), "t.mvm:7: ",
     "empty try range: the start label must come before the end label"},
    {M(":a\n  nop\n.catchall {:a .. :a} :a\n  return-void\n.end method\n"), "t.mvm:6: ", "empty try range"},
    {M(":a\n  return-void\n:h\n.catchall {:a .. :h} :h\n.end method\n"), "t.mvm:7: ",
     "handler label ':h' is past the last instruction"},
    {M("  move-exception v0\n  return-void\n.end method\n"), "t.mvm:4: ",
     "move-exception must be the first instruction of a handler"},
    {M(":a\n  nop\n:b\n  return-void\n:h\n  nop\n  move-exception v0\n  return-void\n.catchall {:a .. :b} :h\n"
       ".end method\n"),
     "t.mvm:10: ", "move-exception must be the first instruction of a handler"},
    {M(":a\n  nop\n:b\n  return-void\n.catchall {:a .. :b} :h\n:h\n  move-exception v5\n  return-void\n.end method\n"),
     "t.mvm:10: ", "v5 out of range: method has 2 registers"},
    {M("  throw\n"), "t.mvm:4: ", "throw: missing operand"},
    {M("  check-cast v0\n"), "t.mvm:4: ", "check-cast: missing operand"},
    {M("  check-cast v0, Missing\n  return-void\n.end method\n"), "t.mvm:4: ", "unknown class 'Missing'"},
    {M("  instance-of v0, v1\n"), "t.mvm:4: ", "instance-of: missing operand"},
    {M("  const v0, 1\n.end method\n"), "t.mvm:5: ", "last instruction must be return, goto, throw or exit"},
    /* .super */
    {".class A\n.super\n", "t.mvm:2: ", ".super expects a class name"},
    {".class A\n.super B C\n", "t.mvm:2: ", ".super expects a class name"},
    {".super Object\n", "t.mvm:1: ", ".super must be inside a class, outside methods"},
    {M(".super Object\n"), "t.mvm:4: ", ".super must be inside a class, outside methods"},
    {".class A\n.super Object\n.super Object\n", "t.mvm:3: ", ".super given twice for class A"},
    {".class A\n.super Missing\n", "t.mvm:2: ", "unknown class 'Missing'"},
    {".class A\n.super String\n", "t.mvm:2: ", "class A cannot extend built-in class String"},
    {".class A\n.super Thread\n", "t.mvm:2: ", "class A cannot extend built-in class Thread"},
    {".class A\n.super A\n", "t.mvm:2: ", "class A would be its own superclass"},
    {".class A\n.super B\n.class B\n.super C\n.class C\n.super A\n", "t.mvm:6: ", "would be its own superclass"},
};

static int native_objects(mvm_vm *vm) {
  mvm_heap_stats s;
  mvm_native_get_stats(vm, &s);
  return (int)s.allocated_objects;
}

static void assembler_rejects_malformed(void **state) {
  mvm_vm *vm = t_vm(0, 0, NULL);
  int before = native_objects(vm);
  for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
    char err[512] = "";
    int rc = mvm_load_text(vm, "t.mvm", bad_cases[i].text, err, sizeof err);
    if (rc != -1 || strncmp(err, bad_cases[i].where, strlen(bad_cases[i].where)) || !strstr(err, bad_cases[i].what))
      fail_msg("case %zu: rc=%d err='%s', want '%s...%s'", i, rc, err, bad_cases[i].where, bad_cases[i].what);
    assert_int_equal(native_objects(vm), before);
  }
  mvm_vm_free(vm);
}

/* ---- the debugger's view and hooks */

typedef struct exc_log {
  mvm_vm *vm;
  int want;
  int nthrow, ncatch;
  mvm_loc throw_loc[8], catch_loc[8];
  int32_t throw_depth[8], catch_depth[8];
  int caught[8];
  uint64_t exc[8];
  char cls[8][64];
} exc_log;
static exc_log g_log;

static int h_events(void *ud) { return ((exc_log *)ud)->want; }
static void h_exception(void *ud, uint32_t thread, const mvm_loc *loc, int32_t depth, uint64_t exc,
                        const mvm_loc *catch_loc) {
  exc_log *l = ud;
  if (l->nthrow >= 8) return;
  int i = l->nthrow++;
  l->throw_loc[i] = *loc;
  l->throw_depth[i] = depth;
  l->caught[i] = catch_loc != NULL;
  if (catch_loc) l->catch_loc[i] = *catch_loc;
  l->exc[i] = exc;
  /* The stack has not unwound: the frame at depth is the thrower. */
  int32_t n;
  assert_int_equal(mvm_dbg_frame_count(l->vm, thread, &n), 0);
  assert_int_equal(n, depth + 1);
  mvm_type t;
  mvm_type_info ti;
  assert_int_equal(mvm_dbg_object_type(l->vm, exc, &t), 0);
  assert_int_equal(mvm_dbg_type_info(l->vm, t, &ti), 0);
  snprintf(l->cls[i], sizeof l->cls[i], "%s", ti.sig);
}
static void h_catch(void *ud, uint32_t thread, const mvm_loc *loc, int32_t depth, uint64_t exc) {
  exc_log *l = ud;
  if (l->ncatch >= 8) return;
  l->catch_depth[l->ncatch] = depth;
  l->catch_loc[l->ncatch] = *loc;
  l->ncatch++;
  assert_int_equal(exc, l->exc[l->nthrow - 1]);
}

static const char *hook_prog =
    ".class A\n"
    ".method c\n.registers 1\n  const v0, 0\n  div-int v0, v0, v0\n  return-void\n.end method\n"   /* c: pc 1 */
    ".method b\n.registers 1\n  nop\n  invoke-static {}, A.c\n  return-void\n.end method\n"     /* b: pc 1 */
    ".method main\n.registers 2\n"
    "  nop\n"
    ":s\n  invoke-static {}, A.b\n:e\n"                                                           /* main: pc 1 */
    "  return-void\n"
    ".catch RuntimeException {:s .. :e} :h\n"
    ":h\n  move-exception v0\n"                                                                 /* pc 3 */
    "  invoke-static {}, A.c\n"                                                                  /* pc 4: uncaught */
    "  return-void\n.end method\n";

static void debugger_hooks_get_throw_and_catch_locations(void **state) {
  mvm_vm *vm = t_vm(0, 0, NULL);
  t_load(vm, hook_prog);
  memset(&g_log, 0, sizeof g_log);
  g_log.vm = vm;
  g_log.want = 1;
  mvm_dbg_hooks h = {.ud = &g_log, .exception_events = h_events, .exception = h_exception, .exception_catch = h_catch};
  mvm_dbg_set_hooks(vm, &h);
  char *o, *e;
  assert_int_equal(run2(vm, &o, &e), 1);
  free(o);
  free(e);
  mvm_type a = mvm_dbg_main_type(vm);
  assert_int_equal(g_log.nthrow, 2);
  /* first: thrown in c (depth 2, pc 1), caught in main's handler (pc 3) */
  assert_int_equal(g_log.throw_loc[0].cls, a);
  assert_int_equal(g_log.throw_loc[0].method, 0);
  assert_int_equal(g_log.throw_loc[0].pc, 1);
  assert_int_equal(g_log.throw_depth[0], 2);
  assert_true(g_log.caught[0]);
  assert_int_equal(g_log.catch_loc[0].cls, a);
  assert_int_equal(g_log.catch_loc[0].method, 2);
  assert_int_equal(g_log.catch_loc[0].pc, 3);
  assert_string_equal(g_log.cls[0], "Ljava/lang/ArithmeticException;");
  /* second: thrown in c called from the handler: nothing catches it */
  assert_int_equal(g_log.throw_loc[1].pc, 1);
  assert_int_equal(g_log.throw_depth[1], 1);
  assert_false(g_log.caught[1]);
  /* the catch hook ran once, in main's frame at the handler */
  assert_int_equal(g_log.ncatch, 1);
  assert_int_equal(g_log.catch_depth[0], 0);
  assert_int_equal(g_log.catch_loc[0].pc, 3);
  mvm_vm_free(vm);

  /* Not wanted: neither hook runs, and the program behaves the same. */
  vm = t_vm(0, 0, NULL);
  t_load(vm, hook_prog);
  memset(&g_log, 0, sizeof g_log);
  g_log.vm = vm;
  mvm_dbg_set_hooks(vm, &h);
  assert_int_equal(run2(vm, &o, &e), 1);
  assert_non_null(strstr(e, "Exception in thread \"main\" java.lang.ArithmeticException: divide by zero\n"));
  free(o);
  free(e);
  assert_int_equal(g_log.nthrow, 0);
  assert_int_equal(g_log.ncatch, 0);
  mvm_vm_free(vm);
}

static void debugger_sees_hierarchy_and_inherited_fields(void **state) {
  mvm_vm *vm = t_vm(0, 0, NULL);
  t_load(vm, ".class MyError\n.super ArithmeticException\n.field code int\n"
             ".class A\n.method main\n.registers 1\n  new-instance v0, MyError\n  return-void\n.end method\n");
  /* MyError > ArithmeticException > RuntimeException > Exception > Throwable > Object */
  static const char *chain[] = {"LMyError;", "Ljava/lang/ArithmeticException;", "Ljava/lang/RuntimeException;",
                                "Ljava/lang/Exception;", "Ljava/lang/Throwable;", "Ljava/lang/Object;"};
  /* Loaded, not prepared: a debugger does not see MyError until main makes one. */
  mvm_type t = 0;
  for (uint32_t i = 1; i <= 64; i++) {
    mvm_type_info ti;
    if (mvm_dbg_type_info(vm, i, &ti) == 0 && !strcmp(ti.sig, chain[0])) t = i;
  }
  assert_int_equal(t, 0);
  char *out;
  assert_int_equal(t_run(vm, &out), 0);
  free(out);
  for (uint32_t i = 1; i <= 64 && !t; i++) {
    mvm_type_info ti;
    if (mvm_dbg_type_info(vm, i, &ti) == 0 && !strcmp(ti.sig, chain[0])) t = i;
  }
  assert_int_not_equal(t, 0);
  mvm_type throwable = 0;
  for (size_t i = 0; i < sizeof chain / sizeof chain[0]; i++) {
    mvm_type_info ti;
    assert_int_equal(mvm_dbg_type_info(vm, t, &ti), 0);
    assert_string_equal(ti.sig, chain[i]);
    if (i == 4) throwable = t;
    if (i == 0) assert_int_equal(ti.nfields, 1);   /* declared fields only */
    if (i == 4) assert_int_equal(ti.nfields, 2);
    if (i == 5) assert_int_equal(ti.super, 0);
    t = ti.super;
  }
  mvm_field_desc fd;
  assert_int_equal(mvm_dbg_field(vm, throwable, 0, &fd), 0);
  assert_string_equal(fd.name, "message");
  assert_string_equal(fd.sig, "Ljava/lang/String;");
  assert_int_equal(mvm_dbg_field(vm, throwable, 1, &fd), 0);
  assert_string_equal(fd.name, "backtrace");
  mvm_vm_free(vm);
}

/* Reads Throwable.message of the exception through mvm_debug.h inside the hook. */
static char g_msg[64];
static void h_read_message(void *ud, uint32_t thread, const mvm_loc *loc, int32_t depth, uint64_t exc,
                           const mvm_loc *catch_loc) {
  mvm_vm *vm = ud;
  mvm_type t;
  assert_int_equal(mvm_dbg_object_type(vm, exc, &t), 0);
  /* walk up to Throwable and read its field 0 on this (subclass) instance */
  mvm_type_info ti;
  for (;;) {
    assert_int_equal(mvm_dbg_type_info(vm, t, &ti), 0);
    if (!strcmp(ti.sig, "Ljava/lang/Throwable;")) break;
    t = ti.super;
  }
  mvm_value v;
  assert_int_equal(mvm_dbg_get_field(vm, exc, t, 0, &v), 0);
  const char *p;
  size_t n;
  assert_int_equal(mvm_dbg_string(vm, (uint64_t)v.u.i, &p, &n), 0);
  snprintf(g_msg, sizeof g_msg, "%.*s", (int)n, p);
}

static void debugger_reads_message_field(void **state) {
  mvm_vm *vm = t_vm(0, 0, NULL);
  t_load(vm, ".class A\n.method main\n.registers 2\n  const v0, 3\n  new-array v0, v0, int\n  const v1, 3\n"
             ":s\n  aput v1, v0, v1\n:e\n  return-void\n.catchall {:s .. :e} :h\n:h\n  return-void\n.end method\n");
  mvm_dbg_hooks h = {.ud = vm, .exception = h_read_message};
  mvm_dbg_set_hooks(vm, &h);
  g_msg[0] = 0;
  char *o, *e;
  assert_int_equal(run2(vm, &o, &e), 0);
  free(o);
  free(e);
  assert_string_equal(g_msg, "Index 3 out of bounds for length 3");
  mvm_vm_free(vm);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(catch_by_class_superclass_and_catchall),
      cmocka_unit_test(nested_try_and_rethrow),
      cmocka_unit_test(vm_errors_are_exceptions),
      cmocka_unit_test(not_caught_by_other_classes_or_outside_the_range),
      cmocka_unit_test(check_cast_and_instance_of),
      cmocka_unit_test(super_inherits_fields),
      cmocka_unit_test(uncaught_in_main_prints_java_trace),
      cmocka_unit_test(uncaught_in_a_thread_ends_only_it),
      cmocka_unit_test(clinit_exception_ends_main),
      cmocka_unit_test(catch_in_a_caller_unwinds_frames),
      cmocka_unit_test(assembler_rejects_malformed),
      cmocka_unit_test(debugger_hooks_get_throw_and_catch_locations),
      cmocka_unit_test(debugger_sees_hierarchy_and_inherited_fields),
      cmocka_unit_test(debugger_reads_message_field),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
