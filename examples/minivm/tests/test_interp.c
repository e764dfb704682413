/* SPDX-License-Identifier: Apache-2.0 */
/* The interpreter: arithmetic, branches, calls, objects, arrays of every type, strings, and the
 * errors that end a thread (which must not end the process). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helpers.h"

/* Runs a one-class program whose main has `regs` registers; returns the status, output in *out. */
static int run(const char *body, char **out) {
  mvm_vm *vm = t_vm(1 << 20, 0, NULL);
  t_load(vm, body);
  int status = t_run(vm, out);
  mvm_vm_free(vm);
  return status;
}

static void expect(const char *program, int status, const char *output) {
  char *out = NULL;
  assert_int_equal(run(program, &out), status);
  assert_string_equal(out, output);
  free(out);
}

static void arithmetic_and_compare(void **state) {
  expect(".class A\n.method main\n.registers 4\n"
         "  const v0, 17\n  const v1, -5\n"
         "  add-int v2, v0, v1\n  println v2\n"
         "  sub-int v2, v0, v1\n  println v2\n"
         "  mul-int v2, v0, v1\n  println v2\n"
         "  div-int v2, v0, v1\n  println v2\n"      /* truncates toward zero, as Java */
         "  rem-int v2, v0, v1\n  println v2\n"
         "  and-int/lit v2, v0, 6\n  println v2\n"
         "  or-int/lit v2, v0, 6\n  println v2\n"
         "  xor-int v2, v0, v0\n  println v2\n"
         "  shl-int/lit v2, v0, 3\n  println v2\n"
         "  shr-int/lit v2, v1, 1\n  println v2\n"   /* arithmetic shift */
         "  neg-int v2, v1\n  println v2\n"
         "  cmp v2, v0, v1\n  println v2\n"
         "  cmp v2, v1, v0\n  println v2\n"
         "  cmp v2, v0, v0\n  println v2\n"
         "  const v0, 0x7fffffffffffffff\n  add-int/lit v2, v0, 1\n  println v2\n"   /* wraps */
         "  return-void\n.end method\n",
         0, "12\n22\n-85\n-3\n2\n0\n23\n0\n136\n-3\n5\n1\n-1\n0\n-9223372036854775808\n");
}

static void branches_and_loops(void **state) {
  /* sum 1..10, and every if form taken and not taken */
  expect(".class A\n.method main\n.registers 4\n"
         "  const v0, 0\n  const v1, 1\n  const v2, 10\n"
         ":loop\n  add-int v0, v0, v1\n  add-int/lit v1, v1, 1\n  if-le v1, v2, :loop\n"
         "  println v0\n"
         "  const v3, 0\n"
         "  if-eqz v3, :a\n  println v3\n:a\n"
         "  if-nez v3, :b\n  const v3, 1\n:b\n  println v3\n"
         "  if-gtz v3, :c\n  println v2\n:c\n"
         "  if-ltz v3, :d\n  if-gez v3, :e\n:d\n  println v2\n:e\n"
         "  if-lez v3, :f\n  if-eq v3, v3, :g\n:f\n  println v2\n:g\n"
         "  if-ne v3, v2, :h\n  println v2\n:h\n"
         "  if-ge v2, v3, :i\n  println v2\n:i\n"
         "  if-gt v3, v2, :j\n  if-lt v3, v2, :k\n:j\n  println v2\n:k\n"
         "  goto :end\n  println v2\n:end\n"
         "  return-void\n.end method\n",
         0, "55\n1\n");
}

static void static_calls(void **state) {
  expect(".class A\n.method main\n.registers 4\n"
         "  const v0, 20\n  invoke-static {v0}, A.fib\n  move-result v1\n  println v1\n"
         "  const v0, 3\n  const v2, 4\n  const v3, 5\n"
         "  invoke-static {v0, v2, v3}, A.mad\n  move-result v1\n  println v1\n"
         "  invoke-static {}, A.str\n  move-result v1\n  println v1\n"
         "  return-void\n.end method\n"
         ".method mad\n.registers 4\n.params 3\n  mul-int v0, p0, p1\n  add-int v0, v0, p2\n  return v0\n.end method\n"
         ".method str\n.registers 1\n  const-string v0, \"from a callee\"\n  return v0\n.end method\n"
         ".method fib\n.registers 4\n.params 1\n"
         "  const v0, 2\n  if-lt p0, v0, :small\n"
         "  add-int/lit v1, p0, -1\n  invoke-static {v1}, A.fib\n  move-result v1\n"
         "  add-int/lit v2, p0, -2\n  invoke-static {v2}, A.fib\n  move-result v2\n"
         "  add-int v0, v1, v2\n  return v0\n"
         ":small\n  return p0\n.end method\n",
         0, "6765\n17\nfrom a callee\n");
}

static void objects_and_fields(void **state) {
  expect(".class P\n.field x int\n.field next P\n.field b byte\n.static count long\n.static head P\n"
         ".class A\n.method main\n.registers 5\n"
         "  new-instance v0, P\n  const v1, 42\n  iput v1, v0, P.x\n"
         "  new-instance v2, P\n  iput v0, v2, P.next\n  sput v2, P.head\n"
         "  const v1, 300\n  iput v1, v2, P.b\n  iget v3, v2, P.b\n  println v3\n"   /* byte narrowing */
         "  sget v2, P.head\n  iget v3, v2, P.next\n  iget v4, v3, P.x\n  println v4\n"
         "  iget v4, v0, P.next\n  println v4\n"   /* unset reference field: null */
         "  const v1, 9\n  sput v1, P.count\n  sget v4, P.count\n  println v4\n"
         "  return-void\n.end method\n",
         0, "44\n42\nnull\n9\n");
}

static void arrays_of_every_type(void **state) {
  /* store a value that does not fit, read it back: each element type narrows as Java's does */
  const char *types[] = {"boolean", "byte", "char", "short", "int", "float", "long", "double"};
  const char *want[] = {"255\n3\n", "-1\n3\n", "65535\n3\n", "-1\n3\n", "-1\n3\n", "-1\n3\n",
                        "-1\n3\n", "-1\n3\n"};
  for (int i = 0; i < 8; i++) {
    char prog[1024];
    snprintf(prog, sizeof prog,
             ".class A\n.method main\n.registers 5\n"
             "  const v0, 3\n  new-array v1, v0, %s\n"
             "  const v2, -1\n  const v3, 2\n  aput v2, v1, v3\n  aget v4, v1, v3\n  println v4\n"
             "  array-length v4, v1\n  println v4\n"
             "  return-void\n.end method\n",
             types[i]);
    expect(prog, 0, want[i]);
  }
  expect(".class A\n.method main\n.registers 5\n"
         "  const v0, 2\n  new-array v1, v0, object\n  const-string v2, \"in an array\"\n"
         "  const v3, 1\n  aput v2, v1, v3\n  aget v4, v1, v3\n  println v4\n"
         "  const v3, 0\n  aget v4, v1, v3\n  println v4\n"
         "  return-void\n.end method\n",
         0, "in an array\nnull\n");
}

static void errors_end_the_thread_not_the_process(void **state) {
  static const char *bodies[] = {
      "  const v0, 1\n  const v1, 0\n  div-int v0, v0, v1\n",          /* ArithmeticException */
      "  const v0, 2\n  new-array v1, v0, int\n  aget v0, v1, v0\n",    /* index out of bounds */
      "  const v0, -1\n  new-array v1, v0, int\n",                        /* negative size */
      "  const v0, 0\n  iget v1, v0, P.x\n",                             /* null */
      "  new-instance v0, Object\n  iget v1, v0, P.x\n",                 /* wrong class */
      "  const-string v0, \"s\"\n  add-int/lit v0, v0, 1\n",             /* arithmetic on a reference */
      "  const v0, 5\n  iget v1, v0, P.x\n",                             /* a number is no reference */
      "  const v0, 2\n  new-array v1, v0, int\n  const-string v0, \"s\"\n  const v2, 0\n  aput v0, v1, v2\n",
      "  new-instance v0, Object\n  monitor-exit v0\n",                  /* not the owner */
      "  new-instance v0, Object\n  notify v0\n",
      "  invoke-static {}, A.deep\n",                                    /* stack overflow */
  };
  for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
    char prog[1024];
    snprintf(prog, sizeof prog,
             ".class P\n.field x int\n.class A\n.method main\n.registers 3\n%s"
             "  const-string v0, \"not reached\"\n  println v0\n  return-void\n.end method\n"
             ".method deep\n.registers 8\n  invoke-static {}, A.deep\n  return-void\n.end method\n",
             bodies[i]);
    char *out;
    int status = run(prog, &out);
    if (status != 1 || strcmp(out, "")) fail_msg("case %zu: status %d output '%s'", i, status, out);
    free(out);
  }
}

static void exit_status_and_args(void **state) {
  expect(".class A\n.method main\n.registers 2\n  const v0, 7\n  exit v0\n.end method\n", 7, "");
  expect(".class A\n.method main\n.registers 2\n  const v0, 255\n  exit v0\n.end method\n", 255, "");
  /* Out of 0-255 is failure, never a wrapped-around 0. */
  expect(".class A\n.method main\n.registers 2\n  const v0, 256\n  exit v0\n.end method\n", 1, "");
  expect(".class A\n.method main\n.registers 2\n  const v0, -2147483648\n  exit v0\n.end method\n", 1, "");
  expect(".class A\n.method main\n.registers 2\n  const v0, -1\n  exit v0\n.end method\n", 1, "");
  mvm_vm *vm = t_vm(0, 0, NULL);
  t_load(vm, ".class A\n.method main\n.registers 3\n.params 1\n"
             "  array-length v0, p0\n  println v0\n  const v1, 1\n  aget v0, p0, v1\n  println v0\n"
             "  return-void\n.end method\n");
  char *args[] = {"first", "second"};
  /* t_run passes no arguments; capture by hand to pass two */
  fflush(stdout);
  FILE *tmp = tmpfile();
  int saved = dup(1);
  dup2(fileno(tmp), 1);
  int status = mvm_run_main(vm, 2, args);
  fflush(stdout);
  dup2(saved, 1);
  close(saved);
  char buf[64] = "";
  assert_true(pread(fileno(tmp), buf, sizeof buf - 1, 0) > 0);
  fclose(tmp);
  assert_int_equal(status, 0);
  assert_string_equal(buf, "2\nsecond\n");
  mvm_vm_free(vm);
}

static void rand_stays_in_bounds(void **state) {
  expect(".class A\n.method main\n.registers 5\n"
         "  const v0, 1000\n  const v2, 7\n"
         ":loop\n  rand-int v1, v2\n  if-ltz v1, :bad\n  if-ge v1, v2, :bad\n"
         "  add-int/lit v0, v0, -1\n  if-gtz v0, :loop\n"
         "  const-string v3, \"ok\"\n  println v3\n  return-void\n"
         ":bad\n  println v1\n  return-void\n.end method\n",
         0, "ok\n");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(arithmetic_and_compare),
      cmocka_unit_test(branches_and_loops),
      cmocka_unit_test(static_calls),
      cmocka_unit_test(objects_and_fields),
      cmocka_unit_test(arrays_of_every_type),
      cmocka_unit_test(errors_end_the_thread_not_the_process),
      cmocka_unit_test(exit_status_and_args),
      cmocka_unit_test(rand_stays_in_bounds),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
