/* SPDX-License-Identifier: Apache-2.0 */
/* APNM: the app name changed (a zygote child learning who it is).
 *   [u4 len][UTF-16 appName][u4 userId][u4 len][UTF-16 package name]
 * The newest shipped layout; ddmlib reads the user id and the package behind hasRemaining()
 * probes, so older hosts simply ignore the tail. */
#include <string.h>

#include "vm_int.h"

#define CHUNK_APNM DDMC_FOURCC('A', 'P', 'N', 'M')

int ddmc__chunk_appinfo_set(ddmc_vm *vm, const char *name, const char *pkg, int32_t user_id) {
  if (pkg == NULL) pkg = "";
  size_t nl = strlen(name) + 1, pl = strlen(pkg) + 1;
  ddmc__appinfo *a = ddmc__malloc(&vm->mem, sizeof(*a) + nl + pl);
  if (a == NULL) return DDMC_ENOMEM;
  char *p = (char *)(a + 1);
  memcpy(p, name, nl);
  memcpy(p + nl, pkg, pl);
  a->name = p;
  a->pkg = p + nl;
  a->user_id = user_id;
  /* The record displaced here was never taken by the JDWP thread (it takes by exchange too),
   * so this thread owns it. */
  ddmc__free(&vm->mem, atomic_exchange(&vm->app_pending, a));
  return 0;
}

const ddmc__appinfo *ddmc__chunk_appinfo_current(ddmc_vm *vm) {
  ddmc__appinfo *a = atomic_exchange(&vm->app_pending, NULL);
  if (a != NULL) {
    ddmc__free(&vm->mem, vm->app_current);
    vm->app_current = a;
    vm->helo_cache_valid = 0; /* HELO embeds the name */
  }
  return vm->app_current;
}

void ddmc__chunk_appinfo_free_all(ddmc_vm *vm) {
  ddmc__free(&vm->mem, atomic_exchange(&vm->app_pending, NULL));
  ddmc__free(&vm->mem, vm->app_current);
  vm->app_current = NULL;
  ddmc__buf_free(&vm->helo_cache);
  vm->helo_cache_valid = 0;
}

int ddmc_notify_app_name(ddmc_vm *vm, const char *name, const char *pkg, int32_t user_id) {
  if (vm == NULL || name == NULL) return DDMC_EINVAL;
  int rc = ddmc__chunk_appinfo_set(vm, name, pkg, user_id);
  if (rc != 0) return rc;
  if (!atomic_load(&vm->ddm_active)) return DDMC_ENOTCONN;
  /* [u4 len][name][u4 user][u4 len][pkg]: small ones are built on the stack. */
  uint8_t stack[512];
  ddmc_buf b;
  ddmc__buf_init_on(&b, &vm->mem, UINT32_MAX - 64, stack, sizeof(stack));
  ddmc_buf_put_str(&b, name);
  ddmc_buf_put_u32(&b, (uint32_t)user_id);
  ddmc_buf_put_str(&b, pkg);
  rc = ddmc_buf_error(&b);
  if (rc == 0) rc = ddmc_send_chunk(vm, CHUNK_APNM, b.p, b.len);
  ddmc__buf_free(&b);
  return rc;
}
