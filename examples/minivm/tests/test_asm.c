/* SPDX-License-Identifier: Apache-2.0 */
/* Assembler and loader: good programs load, every shipped program assembles, and malformed
 * input fails with "file:line: message" and leaves nothing behind. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helpers.h"

static void loads_and_runs(void **state) {
  mvm_vm *vm = t_vm(0, 0, NULL);
  t_load(vm,
         "# comment line\n"
         ".class A   # trailing comment\n"
         ".field x int\n"
         ".static s object\n"
         ".method main\n"
         ".registers 3\n"
         "  const v0, 0x10\n"
         "  const-string v1, \"tab\\there, \\\"quoted\\\" # not a comment\"\n"
         "  println v1\n"
         "  invoke-static {v0}, B.twice\n"   /* B is declared later: resolved at the end */
         "  move-result v2\n"
         "  println v2\n"
         "  return-void\n"
         ".end method\n"
         ".class B\n"
         ".method twice\n"
         ".registers 2\n"
         ".params 1\n"
         "  add-int v0, p0, p0\n"
         "  return v0\n"
         ".end method\n");
  char *out;
  assert_int_equal(t_run(vm, &out), 0);
  assert_string_equal(out, "tab\there, \"quoted\" # not a comment\n32\n");
  free(out);
  mvm_vm_free(vm);
}

/* \x and \u let a program name itself with control characters, as a hostile app could. */
static void string_escapes(void **state) {
  mvm_vm *vm = t_vm(0, 0, NULL);
  t_load(vm,
         ".class A\n.method main\n.registers 1\n"
         "  const-string v0, \"\\x1b[2J\\x1B]0;x\\u0007 \\r\\n \\u009b \\u00e9\\u4e2d \\xff.\"\n"
         "  print v0\n  return-void\n.end method\n");
  char *out;
  assert_int_equal(t_run(vm, &out), 0);
  assert_string_equal(out, "\x1b[2J\x1b]0;x\x07 \r\n \xc2\x9b \xc3\xa9\xe4\xb8\xad \xff.");
  free(out);
  mvm_vm_free(vm);
}

/* const's literals: characters, and floating values as IEEE bits (minivm computes on integers;
 * the bits are what a debugger shows as a float or double local). */
static void literals(void **state) {
  mvm_vm *vm = t_vm(0, 0, NULL);
  t_load(vm, ".class A\n.method main\n.registers 1\n"
             "  const v0, 'A'\n  println v0\n  const v0, '\\n'\n  println v0\n"
             "  const v0, '\\''\n  println v0\n  const v0, 2.5\n  println v0\n"
             "  const v0, 1.5f\n  println v0\n  const v0, -0.25d\n  println v0\n  const v0, 1e3\n  println v0\n"
             "  return-void\n.end method\n");
  char *out, want[256];
  double d = 2.5, q = -0.25, k = 1e3;
  float f = 1.5f;
  int64_t dbits, qbits, kbits;
  uint32_t fbits;
  memcpy(&dbits, &d, 8);
  memcpy(&qbits, &q, 8);
  memcpy(&kbits, &k, 8);
  memcpy(&fbits, &f, 4);
  snprintf(want, sizeof want, "65\n10\n39\n%lld\n%u\n%lld\n%lld\n", (long long)dbits, fbits, (long long)qbits,
           (long long)kbits);
  assert_int_equal(t_run(vm, &out), 0);
  assert_string_equal(out, want);
  free(out);
  mvm_vm_free(vm);
}

/* <clinit> runs at a class's first use (A's before main, B's never: nothing uses B); Thread
 * objects: new-thread, thread-set-daemon, thread-start, join on the object. */
static void clinit_and_thread_objects(void **state) {
  mvm_vm *vm = t_vm(0, 0, NULL);
  t_load(vm, ".class A\n.static s String\n.static done int\n"
             ".method <clinit>\n.signature () void\n.registers 1\n"
             "  const-string v0, \"A-init\"\n  sput v0, A.s\n  sget v0, A.s\n  println v0\n  return-void\n"
             ".end method\n"
             ".method work\n.signature () void\n.registers 1\n"
             "  const v0, 42\n  sput v0, A.done\n  return-void\n.end method\n"
             ".method forever\n.signature () void\n.registers 1\n"
             ":l\n  const v0, 1000\n  sleep v0\n  goto :l\n.end method\n"
             ".method main\n.signature (String[]) void\n.registers 4\n"
             "  sget v0, A.s\n  println v0\n"
             "  const-string v1, \"W\"\n  new-thread v0, v1, A.work\n  join v0\n"   /* unstarted: at once */
             "  thread-start v0\n  join v0\n  sget v2, A.done\n  println v2\n"
             "  const-string v1, \"D\"\n  new-thread v0, v1, A.forever\n  const v2, 1\n"
             "  thread-set-daemon v0, v2\n  thread-start v0\n"
             "  return-void\n.end method\n"
             ".class B\n.method <clinit>\n.registers 1\n"
             "  const-string v0, \"B-init\"\n  println v0\n  return-void\n.end method\n");
  char *out;
  assert_int_equal(t_run(vm, &out), 0);   /* returns although D sleeps forever: a daemon */
  assert_string_equal(out, "A-init\nA-init\n42\n");
  free(out);
  mvm_thread_info d;
  assert_int_equal(t_find_thread(vm, "D", &d), 0);
  assert_true(d.daemon);
  mvm_vm_free(vm);
}

static void shipped_programs_assemble(void **state) {
  const char *dir = getenv("MINIVM_PROGRAMS");
  if (!dir) skip();
  DIR *d = opendir(dir);
  assert_non_null(d);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) {
    size_t len = strlen(e->d_name);
    if (len < 5 || strcmp(e->d_name + len - 4, ".mvm")) continue;
    char path[4096], err[512] = "";
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    mvm_vm *vm = t_vm(0, 0, NULL);
    if (mvm_load_file(vm, path, err, sizeof err)) fail_msg("%s", err);
    mvm_vm_free(vm);
    n++;
  }
  closedir(d);
  assert_true(n >= 5);   /* hello threads alloc idle zygote */
}

typedef struct bad {
  const char *text;
  const char *where;    /* expected prefix, "t.mvm:LINE: " */
  const char *what;     /* expected substring of the message */
} bad;

#define M(body) ".class A\n.method main\n.registers 2\n" body
static const bad cases[] = {
    {M("  frob v0\n  return-void\n.end method\n"), "t.mvm:4: ", "unknown instruction 'frob'"},
    {M("  const v9, 1\n  return-void\n.end method\n"), "t.mvm:4: ", "v9 out of range"},
    {M("  move v0, p0\n  return-void\n.end method\n"), "t.mvm:4: ", "p0 out of range"},
    {M("  goto :nowhere\n.end method\n"), "t.mvm:4: ", "undefined label 'nowhere'"},
    {M("  new-instance v0, Missing\n  return-void\n.end method\n"), "t.mvm:4: ", "unknown class 'Missing'"},
    {M("  sget v0, A.nope\n  return-void\n.end method\n"), "t.mvm:4: ", "unknown field A.nope"},
    {".class A\n.field f int\n.method main\n.registers 2\n  sget v0, A.f\n  return-void\n.end method\n",
     "t.mvm:5: ", "an instance field"},
    {M("  invoke-static {v0}, A.main\n  return-void\n.end method\n"), "t.mvm:4: ", "takes 0 arguments, 1 given"},
    {M("  const v0, 1\n  return-void\n"), "t.mvm:6: ", "missing .end method"},
    {M("  const v0, 1\n.end method\n"), "t.mvm:5: ", "fall off its end"},
    {M("  const-string v0, \"open\n  return-void\n.end method\n"), "t.mvm:4: ", "unterminated string"},
    {M("  const-string v0, \"\\x1\"\n  return-void\n.end method\n"), "t.mvm:4: ", "'\\x' needs two hex digits"},
    {M("  const-string v0, \"\\u12\"\n  return-void\n.end method\n"), "t.mvm:4: ", "'\\u' needs four hex digits"},
    {M("  const-string v0, \"a\\x00b\"\n  return-void\n.end method\n"), "t.mvm:4: ", "cannot hold NUL ('\\x00')"},
    {M("  const-string v0, \"\\u0000\"\n  return-void\n.end method\n"), "t.mvm:4: ", "cannot hold NUL ('\\u0000')"},
    {M("  const-string v0, \"\\ud800\"\n  return-void\n.end method\n"), "t.mvm:4: ", "'\\ud800' is a lone surrogate"},
    {M("  const-string v0, \"\\x"), "t.mvm:4: ", "'\\x' needs two hex digits"},
    {".class A\n.class A\n", "t.mvm:2: ", "class 'A' already defined"},
    {M("  const v0, 12abc\n  return-void\n.end method\n"), "t.mvm:4: ", "const: bad literal '12abc'"},
    {".class A\n  const v0, 1\n", "t.mvm:2: ", "outside a method"},
    {".class A\n.bogus\n", "t.mvm:2: ", "unknown directive '.bogus'"},
    {M("  const v0\n  return-void\n.end method\n"), "t.mvm:4: ", "missing operand"},
    {M("  const v0, 1, 2\n  return-void\n.end method\n"), "t.mvm:4: ", "unexpected operand '2'"},
    {M("  const-string v0, \"a\\q\"\n  return-void\n.end method\n"), "t.mvm:4: ", "unknown escape"},
    {M("  if-eqz v0, label\n  return-void\n.end method\n"), "t.mvm:4: ", "expected a :label"},
    {M("  start-thread v0, v1, A.main, v1\n  return-void\n.end method\n"), "t.mvm:4: ", "takes 0 arguments, 1 given"},
    {".class A\n.method main\n.registers 1\n.params 2\n  return-void\n.end method\n", "t.mvm:6: ", "exceeds .registers"},
    {"  .line 3\n", "t.mvm:1: ", "outside a method"},
    {M("  Object.x v0\n"), "t.mvm:4: ", "unknown instruction"},
    {M(":a\n:a\n"), "t.mvm:5: ", "defined twice"},
    /* debug info and signatures */
    {".class A\n.method f\n.signature int\n", "t.mvm:3: ", ".signature expects (TYPE, ...) RETURN-TYPE"},
    {".class A\n.method f\n.signature (int)\n", "t.mvm:3: ", ".signature expects (TYPE, ...) RETURN-TYPE"},
    {".class A\n.method f\n.signature (int,) void\n", "t.mvm:3: ", ".signature expects"},
    {".class A\n.method f\n.signature (int) void extra\n", "t.mvm:3: ", ".signature expects"},
    {".class A\n.method f\n.signature (void) int\n", "t.mvm:3: ", "'void' is only a return type"},
    {".class A\n.method f\n.signature (in-t) int\n", "t.mvm:3: ", "bad type 'in-t'"},
    {".class A\n.method f\n.signature (Nowhere[]) void\n.registers 1\n  return-void\n.end method\n",
     "t.mvm:3: ", "unknown class 'Nowhere'"},
    {".class A\n.method f\n.signature (int) int\n.registers 1\n  return-void\n.end method\n", "t.mvm:5: ",
     "method f is declared (I)I but has return-void"},
    {".class A\n.method f\n.signature () void\n.registers 1\n  return v0\n.end method\n", "t.mvm:5: ",
     "method f is declared void (()V) but returns a value"},
    {".class A\n.method f\n.registers 1\n  nop\n.signature () void\n", "t.mvm:5: ",
     ".signature must come before the first instruction"},
    {".class A\n.method f\n.signature () void\n.signature () void\n", "t.mvm:4: ", ".signature given twice"},
    {".class A\n.method f\n.signature (int) void\n.params 2\n", "t.mvm:4: ",
     ".params 2 disagrees with .signature (I)V (1 parameter)"},
    {".class A\n.method f\n.params 1\n.signature (int, long) void\n", "t.mvm:4: ",
     ".signature declares 2 parameters but .params says 1"},
    {".class A\n.method f\n.signature (int) void\n.registers 0\n  return-void\n.end method\n", "t.mvm:6: ",
     ".params 1 exceeds .registers 0"},
    {M(".local v0 x\n"), "t.mvm:4: ", ".local expects a register, a name and a type"},
    {M(".local x v0 int\n"), "t.mvm:4: ", "expected a register"},
    {M(".local v0 1x int\n"), "t.mvm:4: ", "bad local name '1x'"},
    {M(".local v0 x Missing\n  return-void\n.end method\n"), "t.mvm:4: ", "unknown class 'Missing'"},
    {M(".local v0 x int[\n"), "t.mvm:4: ", "bad type 'int['"},
    {M(".local v0 x void\n"), "t.mvm:4: ", "'void' is only a return type"},
    {M(".local v7 x int\n  return-void\n.end method\n"), "t.mvm:4: ", "v7 out of range: method has 2 registers"},
    {M(".local p0 x int\n  return-void\n.end method\n"), "t.mvm:4: ", "p0 out of range: method has 0 parameters"},
    {M(".local v0 x int\n.local v1 x int\n"), "t.mvm:5: ", "local 'x' is already live in another register"},
    {M(".end local v1\n"), "t.mvm:4: ", ".end local v1: no local is live in v1"},
    {M(".end local\n"), "t.mvm:4: ", ".end local expects a register"},
    {".class A\n.local v0 x int\n", "t.mvm:2: ", ".local outside a method"},
    {".class A\n.end local v0\n", "t.mvm:2: ", ".end local outside a method"},
    {".class A\n.field f Foo[]\n", "t.mvm:2: ", "unknown class 'Foo'"},
    {".class A\n.field f int[]x\n", "t.mvm:2: ", "bad type 'int[]x'"},
    {M("  const v0, 'AB'\n  return-void\n.end method\n"), "t.mvm:4: ", "const: bad literal ''AB''"},
    {M("  const v0, 1.5q\n  return-void\n.end method\n"), "t.mvm:4: ", "const: bad literal '1.5q'"},
    {M("  add-int/lit v0, v0, 1.5\n  return-void\n.end method\n"), "t.mvm:4: ", "bad integer '1.5'"},
    {M("  new-array v0, v0, void\n  return-void\n.end method\n"), "t.mvm:4: ", "bad element type 'void'"},
    {M("  new-array v0, v0, Gone[]\n  return-void\n.end method\n"), "t.mvm:4: ", "unknown class 'Gone'"},
    {".class A\n.method f\n.registers 1\n.params 1\n  return-void\n.end method\n"
     ".method main\n.registers 1\n  new-thread v0, v0, A.f\n  return-void\n.end method\n",
     "t.mvm:9: ", "A.f takes 1 argument, 0 given"},
};

static int native_objects(mvm_vm *vm) {
  mvm_heap_stats s;
  mvm_native_get_stats(vm, &s);
  return (int)s.allocated_objects;
}

static void malformed_reports_file_and_line(void **state) {
  mvm_vm *vm = t_vm(0, 0, NULL);
  int before = native_objects(vm);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char err[512] = "";
    int rc = mvm_load_text(vm, "t.mvm", cases[i].text, err, sizeof err);
    if (rc != -1 || strncmp(err, cases[i].where, strlen(cases[i].where)) || !strstr(err, cases[i].what))
      fail_msg("case %zu: rc=%d err='%s', want '%s...%s'", i, rc, err, cases[i].where, cases[i].what);
    /* A failed load keeps no class, code or string. */
    assert_int_equal(native_objects(vm), before);
  }
  /* ... and the VM still takes a good program, including a class name a failed load used. */
  t_load(vm, ".class A\n.method main\n.registers 1\n  return-void\n.end method\n");
  assert_int_equal(t_run(vm, NULL), 0);
  mvm_vm_free(vm);
}

static void missing_file(void **state) {
  mvm_vm *vm = t_vm(0, 0, NULL);
  char err[512];
  assert_int_equal(mvm_load_file(vm, "/nonexistent/x.mvm", err, sizeof err), -1);
  assert_non_null(strstr(err, "/nonexistent/x.mvm:0: cannot open"));
  mvm_vm_free(vm);
}

static int collect_frames(void *arg, const mvm_frame_info *f) {
  char *buf = arg;
  size_t n = strlen(buf);
  snprintf(buf + n, 512 - n, "%s.%s(%s:%d) ", f->class_name, f->method_name, f->file, f->line);
  return 0;
}

static int stack_hook_calls;
static char stack_seen[512];
static mvm_vm *stack_vm;
/* Runs on the program's thread at wait-for-debugger: its own stack is a stable snapshot. */
static void stack_hook(void *ud) {
  stack_hook_calls++;
  stack_seen[0] = '\0';
  mvm_thread_stack(stack_vm, 1, collect_frames, stack_seen);
}

static void line_directives_map_frames(void **state) {
  mvm_hooks h = {.wait_for_debugger = stack_hook};
  mvm_vm *vm = stack_vm = t_vm(0, 0, &h);
  t_load(vm,
         ".class Main\n"                   /* 1 */
         ".source \"Main.java\"\n"        /* 2: this class only */
         ".method main\n"                  /* 3 */
         ".registers 1\n"                  /* 4 */
         "  .line 40\n"                    /* 5 */
         "  invoke-static {}, Other.f\n"   /* 6 */
         "  return-void\n"                 /* 7 */
         ".end method\n"                   /* 8 */
         ".class Other\n"                  /* 9 */
         ".method f\n"                     /* 10 */
         ".registers 1\n"                  /* 11 */
         "  const v0, 1\n"                 /* 12 */
         "  wait-for-debugger\n"           /* 13: no .line and no .source: the .mvm line */
         "  return-void\n"
         ".end method\n");
  assert_int_equal(t_run(vm, NULL), 0);
  assert_int_equal(stack_hook_calls, 1);
  assert_string_equal(stack_seen, "Other.f(t.mvm:13) Main.main(Main.java:40) ");
  mvm_vm_free(vm);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(loads_and_runs),
      cmocka_unit_test(string_escapes),
      cmocka_unit_test(literals),
      cmocka_unit_test(clinit_and_thread_objects),
      cmocka_unit_test(shipped_programs_assemble),
      cmocka_unit_test(malformed_reports_file_and_line),
      cmocka_unit_test(missing_file),
      cmocka_unit_test(line_directives_map_frames),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
