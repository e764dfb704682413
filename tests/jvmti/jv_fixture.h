/* SPDX-License-Identifier: Apache-2.0 */
/* A VM with the VM bridge attached and one JVM TI environment, in the OnLoad phase, for
 * the JVM TI unit tests (test_jvmti_heap.c, test_jvmti_debug.c): no process, no agent library.
 * The tests drive the library's own functions (ddmc__jt_*) on the environment. */
#ifndef DDMC_TESTS_JV_FIXTURE_H
#define DDMC_TESTS_JV_FIXTURE_H

#include "ddmc/ddmc.h"
#include "jvmti/funcs.h"

typedef struct fixture {
  ddmc_vm *vm;
  ddmc__jvmti *jv;
  ddmc__jv_jenv *e;
} fixture;

/* bridge must outlive the fixture; vops may be NULL (no DDM ops). Asserts (cmocka) on failure. */
fixture *jv_fixture_new(const ddmc_vm_bridge *bridge, const ddmc_vm_ops *vops);
void jv_fixture_free(fixture *f);

#endif
