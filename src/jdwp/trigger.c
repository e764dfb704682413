/* SPDX-License-Identifier: Apache-2.0 */
/* onthrow=CLASS and onuncaught=y: the debug service starts at the first throw of exactly CLASS, or
 * at the first exception nothing catches, instead of at ddmc_vm_start, as the JDK's agent starts
 * it (debugInit.c compares the exception's class signature with the option's, no subclasses).
 * Until then nothing listens and no port is taken. A hub client (rank DDMC__HUB_RANK_TRIGGER,
 * before every other) wants EXCEPTION while armed; the throw that matches disarms it, starts the
 * service on the throwing thread (launch= runs then: the JDK requires it with these options) and,
 * with suspend=y, holds that thread until a debugger has shaken hands. */
#include <stdio.h>
#include <string.h>

#include "hub/hub.h"
#include "vm_int.h"

/* "java.lang.Foo" or "java/lang/Foo" as "Ljava/lang/Foo;"; a name already in that form is kept. */
static void to_signature(const char *name, char *out, size_t n) {
  if (name[0] == 'L' && name[strlen(name) - 1] == ';') {
    snprintf(out, n, "%s", name);
    return;
  }
  snprintf(out, n, "L%s;", name);
  for (char *c = out; *c; c++)
    if (*c == '.') *c = '/';
}

static int class_matches(ddmc_vm *vm, ddmc_ref exception) {
  const ddmc_vm_bridge *b = ddmc__bridge(vm);
  if (b == NULL || b->object_class == NULL || b->class_info == NULL) return 0;
  ddmc_class c = 0;
  ddmc_class_info info;
  memset(&info, 0, sizeof(info));
  if (b->object_class(vm->bridge_data, exception, &c) != 0 || b->class_info(vm->bridge_data, c, &info) != 0)
    return 0;
  return info.signature != NULL && strcmp(info.signature, vm->onthrow_sig) == 0;
}

static int trigger_post(ddmc_vm *vm, void *ud, const ddmc__hub_event *ev) {
  (void)ud;
  if (ev->what != DDMC__HUB_EXCEPTION || !atomic_load_explicit(&vm->deferred, memory_order_acquire))
    return DDMC_ENOTCONN;
  int hit = (vm->opt.onuncaught && ev->catch_loc == NULL) || (vm->onthrow_sig[0] && class_matches(vm, ev->object));
  if (!hit || !atomic_exchange(&vm->deferred, 0)) return DDMC_ENOTCONN;
  ddmc__log(vm, DDMC_LOG_INFO, "JDWP: starting the debug service at %s", hit && vm->opt.onuncaught && ev->catch_loc == NULL
                                                                              ? "an uncaught exception"
                                                                              : "onthrow=");
  int rc = ddmc__jdwp_begin(vm);
  if (rc != 0 && rc != DDMC_ETIMEDOUT) ddmc__log(vm, DDMC_LOG_ERROR, "JDWP: the debug service did not start: %s", ddmc_strerror(rc));
  return DDMC_ENOTCONN; /* nobody asked for this event: the clients after this one decide */
}

static int trigger_wants(const ddmc_vm *vm, void *ud, int kind) {
  (void)ud;
  return kind == DDMC_EV_EXCEPTION && atomic_load_explicit(&((ddmc_vm *)vm)->deferred, memory_order_relaxed);
}

static const ddmc__hub_client trigger_client = {
    .name = "onthrow",
    .rank = DDMC__HUB_RANK_TRIGGER,
    .post = trigger_post,
    .wants = trigger_wants,
};

int ddmc__jdwp_arm(ddmc_vm *vm) {
  if (vm->opt.onthrow[0]) to_signature(vm->opt.onthrow, vm->onthrow_sig, sizeof(vm->onthrow_sig));
  int rc = ddmc__hub_subscribe(vm, &trigger_client, NULL, NULL, NULL);
  if (rc != 0) return rc;
  atomic_store_explicit(&vm->deferred, 1, memory_order_release);
  return 0;
}
