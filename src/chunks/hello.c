/* HELO and FEAT: who the VM is and what it can do.
 *
 * HELO reply (the shipped layout that ddmlib and Android Studio parse, ddm-wire.md §2.1):
 *   [u4 client protocol version = 1][u4 pid][u4 vmIdent len][u4 appName len]
 *   [UTF-16 vmIdent][UTF-16 appName][u4 userId]
 *   [u4 len][UTF-16 ABI][u4 len][UTF-16 JVM flags][u1 nativeDebuggable]
 *   [u4 len][UTF-16 package name]
 * FEAT reply: [u4 count] then count x ([u4 len][UTF-16 feature]). */
#include <string.h>

#include "vm_int.h"

#define CHUNK_HELO DDMC_FOURCC('H', 'E', 'L', 'O')
#define CHUNK_FEAT DDMC_FOURCC('F', 'E', 'A', 'T')

static int handle_helo(void *ud, ddmc_vm *vm, const ddmc_chunk *req, ddmc_chunk_type *rtype, ddmc_buf *b) {
  (void)ud;
  (void)req; /* [u4 server protocol version]: every version so far gets the same answer */
  *rtype = CHUNK_HELO;
  const ddmc__appinfo *ai = ddmc__appinfo_current(vm);
  const char *app = ai->name, *pkg = ai->pkg;
  int32_t user = ai->user_id;
  const char *ident = vm->vm_name ? vm->vm_name : "libddmc VM";
  size_t ident_n = strlen(ident), app_n = strlen(app);
  size_t ident_units = ddmc__utf8_to_utf16(ident, ident_n, NULL);
  size_t app_units = ddmc__utf8_to_utf16(app, app_n, NULL);
  ddmc_buf_put_u32(b, 1);
  ddmc_buf_put_u32(b, vm->pid);
  ddmc_buf_put_u32(b, (uint32_t)ident_units);
  ddmc_buf_put_u32(b, (uint32_t)app_units);
  /* The two strings follow their lengths without a length of their own: write [u4][chars] with
   * put_str and drop the 4-byte prefix it adds. */
  size_t at = ddmc_buf_len(b);
  ddmc_buf_put_str(b, ident);
  if (!ddmc_buf_error(b)) {
    memmove(b->p + at, b->p + at + 4, b->len - at - 4);
    b->len -= 4;
  }
  at = ddmc_buf_len(b);
  ddmc_buf_put_str(b, app);
  if (!ddmc_buf_error(b)) {
    memmove(b->p + at, b->p + at + 4, b->len - at - 4);
    b->len -= 4;
  }
  ddmc_buf_put_u32(b, (uint32_t)user);
  ddmc_buf_put_str(b, vm->abi ? vm->abi : "");
  ddmc_buf_put_str(b, vm->jvm_flags ? vm->jvm_flags : "");
  ddmc_buf_put_u8(b, vm->native_debuggable ? 1 : 0);
  ddmc_buf_put_str(b, pkg);
  return ddmc_buf_error(b);
}

static int handle_feat(void *ud, ddmc_vm *vm, const ddmc_chunk *req, ddmc_chunk_type *rtype, ddmc_buf *b) {
  (void)ud;
  (void)req;
  *rtype = CHUNK_FEAT;
  ddmc_buf_put_u32(b, (uint32_t)vm->nfeatures);
  for (int i = 0; i < vm->nfeatures; i++) ddmc_buf_put_str(b, vm->features[i]);
  return ddmc_buf_error(b);
}

int ddmc__hello_register(ddmc_vm *vm) {
  static const ddmc_chunk_handler helo = {.handle = handle_helo};
  static const ddmc_chunk_handler feat = {.handle = handle_feat};
  int rc = ddmc_register_handler(vm, CHUNK_HELO, &helo, NULL);
  if (rc == 0) rc = ddmc_register_handler(vm, CHUNK_FEAT, &feat, NULL);
  return rc;
}
