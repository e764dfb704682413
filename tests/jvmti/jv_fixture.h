/* SPDX-License-Identifier: Apache-2.0 */
/* The tests' fake bridge (../fakebridge.h, without the debugger) and one JVM TI environment, in the
 * OnLoad phase, for the JVM TI unit tests (test_jvmti_heap.c, test_jvmti_debug.c,
 * test_jvmti_reflect.c): no process, no agent library. The tests drive the library's own functions
 * (ddmc__jt_*) on the environment and read what the VM was asked in fb. */
#ifndef DDMC_TESTS_JV_FIXTURE_H
#define DDMC_TESTS_JV_FIXTURE_H

#include "ddmc/ddmc.h"
#include "fakebridge.h"
#include "jvmti/funcs.h"

typedef struct fixture {
  fakebridge fb; /* the VM and its bridge */
  ddmc_vm *vm;   /* fb.fv.vm */
  ddmc__jvmti *jv;
  ddmc__jv_jenv *e;
} fixture;

/* fb_flags: fakebridge_new's (FAKEBRIDGE_NO_DEBUGGER, FAKEBRIDGE_NO_SESSION and
 * FAKEBRIDGE_NO_JDWP_THREAD are always added: the agent's threads are not the VM's here).
 * Asserts (cmocka) on failure. */
fixture *jv_fixture_new(unsigned fb_flags);
void jv_fixture_free(fixture *f);

#endif
