/* SPDX-License-Identifier: Apache-2.0 */
#include "helpers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

mvm_vm *t_vm(size_t heap_max, size_t heap_start, const mvm_hooks *hooks) {
  mvm_config cfg = {heap_max, heap_start, 0};
  char err[256];
  mvm_vm *vm = mvm_vm_new(&cfg, hooks, err, sizeof err);
  if (!vm) fail_msg("mvm_vm_new: %s", err);
  return vm;
}

void t_load(mvm_vm *vm, const char *text) {
  char err[512] = "";
  if (mvm_load_text(vm, "t.mvm", text, err, sizeof err)) fail_msg("load: %s", err);
}

int t_run(mvm_vm *vm, char **out) {
  /* Point fd 1 at a temporary file for the run: the interpreter prints with stdio. */
  fflush(stdout);
  FILE *tmp = tmpfile();
  assert_non_null(tmp);
  int saved = dup(1);
  dup2(fileno(tmp), 1);
  int status = mvm_run_main(vm, 0, NULL);
  fflush(stdout);
  dup2(saved, 1);
  close(saved);
  if (out) {
    /* Written through fd 1, not through tmp's FILE: measure and read the fd. */
    off_t n = lseek(fileno(tmp), 0, SEEK_END);
    *out = calloc(1, (size_t)n + 1);
    assert_non_null(*out);
    ssize_t got = pread(fileno(tmp), *out, (size_t)n, 0);
    assert_int_equal(got, n);
  }
  fclose(tmp);
  return status;
}

typedef struct find {
  const char *name;
  mvm_thread_info *info;
  int found;
} find;

static int find_visit(void *arg, const mvm_thread_info *t) {
  find *f = arg;
  if (strcmp(t->name, f->name)) return 0;
  *f->info = *t;
  f->info->name = NULL;
  f->found = 1;
  return 1;
}

int t_find_thread(mvm_vm *vm, const char *name, mvm_thread_info *info) {
  find f = {name, info, 0};
  mvm_for_each_thread(vm, find_visit, &f);
  return f.found ? 0 : -1;
}
