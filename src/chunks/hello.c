/* SPDX-License-Identifier: Apache-2.0 */
/* HELO and FEAT: who the VM is and what it can do.
 *
 * HELO reply (the shipped layout that ddmlib and Android Studio parse,
 * docs/protocol/ddm-wire.md §2.1):
 *   [u4 client protocol version = 1][u4 pid][u4 vmIdent len][u4 appName len]
 *   [UTF-16 vmIdent][UTF-16 appName][u4 userId]
 *   [u4 len][UTF-16 ABI][u4 len][UTF-16 JVM flags][u1 nativeDebuggable]
 *   [u4 len][UTF-16 package name]
 * FEAT reply: [u4 count] then count x ([u4 len][UTF-16 feature]): the profiling features the VM's
 * bridge makes work (method-trace-profiling, -streaming, method-sample-profiling: the strings
 * ddmlib checks), then the VM's own (ddmc_vm_add_feature). */
#include <string.h>

#include "chunks/families.h"
#include "profile/prof_int.h"

#define CHUNK_HELO DDMC_FOURCC('H', 'E', 'L', 'O')
#define CHUNK_FEAT DDMC_FOURCC('F', 'E', 'A', 'T')

/* Builds the reply body for the current identity and app name. */
static int build_helo(ddmc_vm *vm, const ddmc__appinfo *ai, ddmc_buf *b) {
  const char *app = ai->name, *pkg = ai->pkg;
  const char *ident = vm->vm_name ? vm->vm_name : "libddmc VM";
  size_t ident_units = ddmc__utf8_to_utf16be(ident, strlen(ident), NULL);
  size_t app_units = ddmc__utf8_to_utf16be(app, strlen(app), NULL);
  ddmc_buf_put_u32(b, 1);
  ddmc_buf_put_u32(b, vm->pid);
  ddmc_buf_put_u32(b, (uint32_t)ident_units);
  ddmc_buf_put_u32(b, (uint32_t)app_units);
  /* The two strings follow both their lengths, with no length of their own. */
  ddmc__buf_put_chars(b, ident);
  ddmc__buf_put_chars(b, app);
  ddmc_buf_put_u32(b, (uint32_t)ai->user_id);
  ddmc_buf_put_str(b, vm->abi ? vm->abi : "");
  ddmc_buf_put_str(b, vm->jvm_flags ? vm->jvm_flags : "");
  ddmc_buf_put_u8(b, vm->native_debuggable ? 1 : 0);
  ddmc_buf_put_str(b, pkg);
  return ddmc_buf_error(b);
}

static int handle_helo(void *ud, ddmc_vm *vm, const ddmc_chunk *req, ddmc_chunk_type *rtype, ddmc_buf *b) {
  (void)ud;
  (void)req; /* [u4 server protocol version]: every version so far gets the same answer */
  *rtype = CHUNK_HELO;
  const ddmc__appinfo *ai = ddmc__chunk_appinfo_current(vm); /* may invalidate the cache */
  /* Everything in the reply is fixed but the app record, so it is encoded once per change
   * rather than per request (monitors poll HELO). */
  if (!vm->helo_cache_valid) {
    if (vm->helo_cache.mem == NULL) ddmc__buf_init(&vm->helo_cache, &vm->mem, UINT32_MAX - 64);
    ddmc__buf_reset(&vm->helo_cache);
    int rc = build_helo(vm, ai, &vm->helo_cache);
    if (rc != 0) return rc;
    vm->helo_cache_valid = 1;
  }
  return ddmc_buf_put_bytes(b, vm->helo_cache.p, vm->helo_cache.len);
}

typedef struct feat_arg {
  ddmc_buf *b;
  uint32_t n;
} feat_arg;

static void put_feature(void *arg, const char *f) {
  feat_arg *a = arg;
  ddmc_buf_put_str(a->b, f);
  a->n++;
}

static int handle_feat(void *ud, ddmc_vm *vm, const ddmc_chunk *req, ddmc_chunk_type *rtype, ddmc_buf *b) {
  (void)ud;
  (void)req;
  *rtype = CHUNK_FEAT;
  size_t at = ddmc_buf_len(b);
  feat_arg a = {b, 0};
  ddmc_buf_put_u32(b, 0); /* the count, once known */
  ddmc__prof_features(vm, put_feature, &a);
  for (int i = 0; i < vm->nfeatures; i++) put_feature(&a, vm->features[i]);
  if (ddmc_buf_error(b) == 0) ddmc__put_u32(b->p + at, a.n);
  return ddmc_buf_error(b);
}

int ddmc__chunk_hello_register(ddmc_vm *vm) {
  static const ddmc_chunk_handler helo = {.handle = handle_helo};
  static const ddmc_chunk_handler feat = {.handle = handle_feat};
  int rc = ddmc_register_handler(vm, CHUNK_HELO, &helo, NULL);
  if (rc == 0) rc = ddmc_register_handler(vm, CHUNK_FEAT, &feat, NULL);
  return rc;
}
