/* SPDX-License-Identifier: Apache-2.0 */
/* JVM TI's reflection beyond members (src/jvmti/reflect.c) without a VM process, over a fake
 * bridge: GetBytecodes, GetConstantPool and GetSourceDebugExtension potential exactly when the
 * bridge has their ops and refused without the capability; what the VM appends handed over
 * Allocate'd; GetClassVersionNumbers ABSENT_INFORMATION without its op; GetAllModules with and
 * without modules; bad methods and classes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ddmc/ddmc.h"
#include "jvmti/jv_fixture.h"

/* Debug's <init> (../fakebridge.h's program). */
#define C_A FD_C_DEBUG
#define M_A FD_M_INIT

static fixture *live(int with_reflection) {
  fixture *f = jv_fixture_new(with_reflection ? FAKEBRIDGE_REFLECTION : 0);
  f->fb.nmodules = 200; /* more than the first array holds; unseen without the op */
  return f;
}

static void go_live(fixture *f) {
  assert_int_equal(ddmc_agent_vm_start(f->vm), 0);
  assert_int_equal(ddmc_agent_vm_init(f->vm, 0), 0);
}

static void test_reflection_ops(void **state) {
  fixture *f = live(1);
  ddmc__jv_caps pot;
  assert_int_equal(ddmc__jv_jt_GetPotentialCapabilities(f->e, &pot), 0);
  assert_true(ddmc__jv_cap_has(&pot, DDMC_CAP_can_get_bytecodes));
  assert_true(ddmc__jv_cap_has(&pot, DDMC_CAP_can_get_constant_pool));
  assert_true(ddmc__jv_cap_has(&pot, DDMC_CAP_can_get_source_debug_extension));
  jmethodID m = ddmc__jv_method_id(f->jv, C_A, M_A);
  jclass k = ddmc__jv_class_local(f->jv, C_A);
  go_live(f);
  jint n = 0, len = 0;
  unsigned char *p = NULL;
  char *s = NULL;
  assert_int_equal(ddmc__jv_jt_GetBytecodes(f->e, m, &n, &p), JVMTI_ERROR_MUST_POSSESS_CAPABILITY);
  assert_int_equal(ddmc__jv_jt_GetConstantPool(f->e, k, &n, &len, &p), JVMTI_ERROR_MUST_POSSESS_CAPABILITY);
  assert_int_equal(ddmc__jv_jt_GetSourceDebugExtension(f->e, k, &s), JVMTI_ERROR_MUST_POSSESS_CAPABILITY);
  assert_int_equal(ddmc__jv_jt_AddCapabilities(f->e, &pot), 0);
  assert_int_equal(ddmc__jv_jt_GetBytecodes(f->e, m, &n, &p), 0);
  size_t ncode = 0;
  const uint8_t *code = fakebridge_bytecodes(M_A, &ncode);
  assert_int_equal(n, (jint)ncode);
  assert_memory_equal(p, code, ncode);
  assert_int_equal(ddmc__jv_jt_Deallocate(f->e, p), 0);
  assert_int_equal(ddmc__jv_jt_GetBytecodes(f->e, (jmethodID)(uintptr_t)0x999, &n, &p), JVMTI_ERROR_INVALID_METHODID);
  assert_int_equal(ddmc__jv_jt_GetBytecodes(f->e, m, NULL, &p), JVMTI_ERROR_NULL_POINTER);
  assert_int_equal(ddmc__jv_jt_GetConstantPool(f->e, k, &n, &len, &p), 0);
  assert_int_equal(n, FD_POOL_COUNT);
  assert_int_equal(len, FD_POOL_LEN);
  assert_memory_equal(p, FD_POOL, FD_POOL_LEN);
  assert_int_equal(ddmc__jv_jt_Deallocate(f->e, p), 0);
  assert_int_equal(ddmc__jv_jt_GetConstantPool(f->e, NULL, &n, &len, &p), JVMTI_ERROR_INVALID_CLASS);
  assert_int_equal(ddmc__jv_jt_GetSourceDebugExtension(f->e, k, &s), 0);
  assert_string_equal(s, FD_SMAP);
  assert_int_equal(ddmc__jv_jt_Deallocate(f->e, (unsigned char *)s), 0);
  jint minor = -1, major = -1;
  assert_int_equal(ddmc__jv_jt_GetClassVersionNumbers(f->e, k, &minor, &major), JVMTI_ERROR_ABSENT_INFORMATION);
  jobject *mods = NULL;
  assert_int_equal(ddmc__jv_jt_GetAllModules(f->e, &n, &mods), 0);
  assert_int_equal(n, 200);
  assert_non_null(mods[0]);
  assert_non_null(mods[199]);
  assert_int_equal(ddmc__jv_jt_Deallocate(f->e, (unsigned char *)mods), 0);
  assert_int_equal(ddmc__jv_jt_GetAllModules(f->e, NULL, &mods), JVMTI_ERROR_NULL_POINTER);
  jv_fixture_free(f);
}

/* A VM without the ops: the capabilities are not potential, and cannot be added; no modules. */
static void test_without_ops(void **state) {
  fixture *f = live(0);
  ddmc__jv_caps pot, want;
  assert_int_equal(ddmc__jv_jt_GetPotentialCapabilities(f->e, &pot), 0);
  assert_false(ddmc__jv_cap_has(&pot, DDMC_CAP_can_get_bytecodes));
  assert_false(ddmc__jv_cap_has(&pot, DDMC_CAP_can_get_constant_pool));
  assert_false(ddmc__jv_cap_has(&pot, DDMC_CAP_can_get_source_debug_extension));
  memset(&want, 0, sizeof(want));
  ddmc__jv_cap_set(&want, DDMC_CAP_can_get_bytecodes);
  assert_int_equal(ddmc__jv_jt_AddCapabilities(f->e, &want), JVMTI_ERROR_NOT_AVAILABLE);
  go_live(f);
  jint n = -1;
  unsigned char *p = NULL;
  assert_int_equal(ddmc__jv_jt_GetBytecodes(f->e, ddmc__jv_method_id(f->jv, C_A, M_A), &n, &p),
                   JVMTI_ERROR_MUST_POSSESS_CAPABILITY);
  jobject *mods = NULL;
  assert_int_equal(ddmc__jv_jt_GetAllModules(f->e, &n, &mods), 0);
  assert_int_equal(n, 0);
  assert_int_equal(ddmc__jv_jt_Deallocate(f->e, (unsigned char *)mods), 0);
  jv_fixture_free(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_reflection_ops),
      cmocka_unit_test(test_without_ops),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
