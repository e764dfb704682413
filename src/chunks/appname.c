/* APNM: the app name changed (a zygote child learning who it is).
 *   [u4 len][UTF-16 appName][u4 userId][u4 len][UTF-16 package name]
 * The newest shipped layout; ddmlib reads the user id and the package behind hasRemaining()
 * probes, so older hosts simply ignore the tail. */
#include <string.h>

#include "vm_int.h"

#define CHUNK_APNM DDMC_FOURCC('A', 'P', 'N', 'M')

int ddmc_notify_app_name(ddmc_vm *vm, const char *name, const char *pkg, int32_t user_id) {
  if (vm == NULL || name == NULL) return DDMC_EINVAL;
  char *n = ddmc__strdup(&vm->mem, name);
  char *p = ddmc__strdup(&vm->mem, pkg ? pkg : "");
  if (n == NULL || p == NULL) {
    ddmc__free(&vm->mem, n);
    ddmc__free(&vm->mem, p);
    return DDMC_ENOMEM;
  }
  pthread_mutex_lock(&vm->info_lock);
  char *old_n = vm->app_name, *old_p = vm->pkg_name;
  vm->app_name = n;
  vm->pkg_name = p;
  vm->user_id = user_id;
  pthread_mutex_unlock(&vm->info_lock);
  ddmc__free(&vm->mem, old_n);
  ddmc__free(&vm->mem, old_p);

  if (!atomic_load(&vm->ddm_active)) return DDMC_ENOTCONN;
  ddmc_buf b;
  ddmc__buf_init(&b, &vm->mem, UINT32_MAX - 64);
  ddmc_buf_put_str(&b, name);
  ddmc_buf_put_u32(&b, (uint32_t)user_id);
  ddmc_buf_put_str(&b, pkg);
  int rc = ddmc_buf_error(&b);
  if (rc == 0) rc = ddmc_send_chunk(vm, CHUNK_APNM, b.p, b.len);
  ddmc__buf_free(&b);
  return rc;
}
