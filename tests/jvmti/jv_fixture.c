/* SPDX-License-Identifier: Apache-2.0 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jvmti/jv_fixture.h"

static fixture *fixture_new(unsigned fb_flags, const ddmc_vm_bridge *bridge) {
  fixture *f = calloc(1, sizeof(*f));
  assert_non_null(f);
  if (bridge == NULL) {
    assert_int_equal(fakebridge_new(&f->fb, fb_flags | FAKEBRIDGE_NO_DEBUGGER | FAKEBRIDGE_NO_SESSION | FAKEBRIDGE_NO_JDWP_THREAD), 0);
    f->vm = f->fb.fv.vm;
  } else {
    ddmc_options o;
    ddmc_options_init(&o);
    char err[256];
    assert_int_equal(ddmc_options_parse(&o, "transport=dt_socket,address=127.0.0.1:0,server=y", err, sizeof(err)), 0);
    ddmc_vm_ops none;
    memset(&none, 0, sizeof(none));
    assert_int_equal(ddmc_vm_new(&f->vm, &o, &none, NULL, NULL), 0);
    assert_int_equal(ddmc_vm_set_bridge(f->vm, bridge, NULL), 0);
  }
  assert_int_equal(ddmc__jv_ensure(f->vm, &f->jv), 0);
  void *env = NULL;
  assert_int_equal(ddmc__jv_get_env(f->jv, &env, 0x30010200), 0); /* JVMTI_VERSION_1_2 */
  f->e = env;
  return f;
}

fixture *jv_fixture_new(unsigned fb_flags) { return fixture_new(fb_flags, NULL); }

fixture *jv_fixture_new_heap(const ddmc_vm_bridge *bridge) { return fixture_new(0, bridge); }

void jv_fixture_free(fixture *f) {
  if (f->fb.magic == FAKEBRIDGE_MAGIC) {
    assert_int_equal(atomic_load(&f->fb.bad_calls), 0);
    fakebridge_free(&f->fb);
  } else {
    ddmc_vm_free(f->vm);
  }
  free(f);
}
