/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by the minivm unit tests: make a VM, load text, run main with stdout captured. */
#ifndef MINIVM_TEST_HELPERS_H
#define MINIVM_TEST_HELPERS_H

#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "minivm.h"

mvm_vm *t_vm(size_t heap_max, size_t heap_start, const mvm_hooks *hooks);
void t_load(mvm_vm *vm, const char *text);
/* Runs main; returns its exit status and (if out != NULL) what it printed, malloc'd. */
int t_run(mvm_vm *vm, char **out);
/* Finds thread `name` in the VM's list; 0 and *info filled if found (name not kept). */
int t_find_thread(mvm_vm *vm, const char *name, mvm_thread_info *info);

#endif
