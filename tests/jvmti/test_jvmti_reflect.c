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

#define C_A 7

static const unsigned char kCode[] = {0x2a, 0xb7, 0x00, 0x01, 0xb1};
static const char kSmap[] = "SMAP\nA.java\nJSP\n*S JSP\n*F\n+ 1 a.jsp\na.jsp\n*L\n1#1,2:10\n*E\n";

static int op_class_info(void *d, ddmc_class c, ddmc_class_info *out) {
  if (c != C_A) return DDMC_JDWP_INVALID_CLASS;
  memset(out, 0, sizeof(*out));
  out->signature = "LA;";
  out->nmethods = 1;
  out->status = DDMC_CLASS_VERIFIED | DDMC_CLASS_PREPARED;
  return 0;
}
static int op_method_info(void *d, ddmc_class c, uint32_t m, ddmc_method_info *out) {
  if (c != C_A || m != 0) return DDMC_JDWP_INVALID_METHODID;
  memset(out, 0, sizeof(*out));
  out->name = "<init>";
  out->signature = "()V";
  out->code_end = 4;
  return 0;
}
static int op_bytecodes(void *d, ddmc_class c, uint32_t m, ddmc_buf *out) {
  return ddmc_buf_put_bytes(out, kCode, sizeof(kCode)) ? DDMC_JDWP_OUT_OF_MEMORY : 0;
}
static int op_constant_pool(void *d, ddmc_class c, int32_t *count, ddmc_buf *out) {
  static const unsigned char pool[] = {1, 0, 1, 'A'}; /* one Utf8 "A" */
  *count = 2;
  return ddmc_buf_put_bytes(out, pool, sizeof(pool)) ? DDMC_JDWP_OUT_OF_MEMORY : 0;
}
static int op_sde(void *d, ddmc_class c, ddmc_buf *out) {
  return ddmc_buf_put_bytes(out, kSmap, strlen(kSmap)) ? DDMC_JDWP_OUT_OF_MEMORY : 0;
}
static int op_for_each_module(void *d, int (*fn)(void *arg, ddmc_ref m), void *arg) {
  for (ddmc_ref m = 0x100; m < 0x100 + 200; m++) /* more than the first array holds */
    if (fn(arg, m)) break;
  return 0;
}

static ddmc_vm_bridge g_bridge;

static fixture *live(int with_reflection) {
  memset(&g_bridge, 0, sizeof(g_bridge));
  g_bridge.class_info = op_class_info;
  g_bridge.method_info = op_method_info;
  if (with_reflection) {
    g_bridge.bytecodes = op_bytecodes;
    g_bridge.constant_pool = op_constant_pool;
    g_bridge.source_debug_extension = op_sde;
    g_bridge.for_each_module = op_for_each_module;
  }
  fixture *f = jv_fixture_new(&g_bridge, NULL);
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
  jmethodID m = ddmc__jv_method_id(f->jv, C_A, 0);
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
  assert_int_equal(n, (jint)sizeof(kCode));
  assert_memory_equal(p, kCode, sizeof(kCode));
  assert_int_equal(ddmc__jv_jt_Deallocate(f->e, p), 0);
  assert_int_equal(ddmc__jv_jt_GetBytecodes(f->e, (jmethodID)(uintptr_t)0x999, &n, &p), JVMTI_ERROR_INVALID_METHODID);
  assert_int_equal(ddmc__jv_jt_GetBytecodes(f->e, m, NULL, &p), JVMTI_ERROR_NULL_POINTER);
  assert_int_equal(ddmc__jv_jt_GetConstantPool(f->e, k, &n, &len, &p), 0);
  assert_int_equal(n, 2);
  assert_int_equal(len, 4);
  assert_int_equal(p[3], 'A');
  assert_int_equal(ddmc__jv_jt_Deallocate(f->e, p), 0);
  assert_int_equal(ddmc__jv_jt_GetConstantPool(f->e, NULL, &n, &len, &p), JVMTI_ERROR_INVALID_CLASS);
  assert_int_equal(ddmc__jv_jt_GetSourceDebugExtension(f->e, k, &s), 0);
  assert_string_equal(s, kSmap);
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
  assert_int_equal(ddmc__jv_jt_GetBytecodes(f->e, ddmc__jv_method_id(f->jv, C_A, 0), &n, &p),
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
