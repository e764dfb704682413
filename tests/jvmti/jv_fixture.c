/* SPDX-License-Identifier: Apache-2.0 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jvmti/jv_fixture.h"

fixture *jv_fixture_new(unsigned fb_flags) {
  fixture *f = calloc(1, sizeof(*f));
  assert_non_null(f);
  assert_int_equal(
      fakebridge_new(&f->fb, fb_flags | FAKEBRIDGE_NO_DEBUGGER | FAKEBRIDGE_NO_SESSION | FAKEBRIDGE_NO_JDWP_THREAD), 0);
  f->vm = f->fb.fv.vm;
  assert_int_equal(ddmc__jv_ensure(f->vm, &f->jv), 0);
  void *env = NULL;
  assert_int_equal(ddmc__jv_get_env(f->jv, &env, 0x30010200), 0); /* JVMTI_VERSION_1_2 */
  f->e = env;
  return f;
}

void jv_fixture_free(fixture *f) {
  assert_int_equal(atomic_load(&f->fb.bad_calls), 0); /* the library kept the bridge's promises */
  fakebridge_free(&f->fb);
  free(f);
}
