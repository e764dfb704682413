/* SPDX-License-Identifier: Apache-2.0 */
/* The allocation tracker's chunks (docs/protocol/profiling.md §2):
 *   REAE  H->V [u1 enable]  -> empty reply. Enabling when on changes nothing; disabling drops
 *                              the records (Dalvik frees the buffer).
 *   REAQ  H->V empty        -> REAQ [u1 enabled]
 *   REAL  H->V empty        -> REAL [the report: profile/alloc_report.c]. Leaves tracking as it
 *                              is; while off, the 15-byte report with no entries.
 * A VM without the reflective bridge cannot name what it allocates: REAE 1 then answers FAIL. */
#include "chunks/families.h"
#include "profile/prof_int.h"

#define CHUNK_REAE DDMC_FOURCC('R', 'E', 'A', 'E')
#define CHUNK_REAQ DDMC_FOURCC('R', 'E', 'A', 'Q')
#define CHUNK_REAL DDMC_FOURCC('R', 'E', 'A', 'L')

static int handle_reae(void *ud, ddmc_vm *vm, const ddmc_chunk *req, ddmc_chunk_type *rtype, ddmc_buf *b) {
  (void)ud;
  ddmc_reader r;
  ddmc_reader_init(&r, req->data, req->len);
  uint8_t on = ddmc_read_u8(&r);
  if (ddmc_reader_done(&r) != 0) return ddmc_reply_fail(b, rtype, DDMC_EPROTO, "REAE needs [u1 enable]");
  int rc = ddmc__prof_alloc_set_tracking(vm, on != 0);
  if (rc == DDMC_ENOTSUP)
    return ddmc_reply_fail(b, rtype, 1, "allocation tracking needs the VM bridge (ddmc_vm_set_bridge)");
  if (rc == DDMC_ENOMEM) return ddmc_reply_fail(b, rtype, 1, "no memory for the allocation ring");
  return rc;
}

static int handle_reaq(void *ud, ddmc_vm *vm, const ddmc_chunk *req, ddmc_chunk_type *rtype, ddmc_buf *b) {
  (void)ud;
  (void)req; /* any payload: ddmlib sends none */
  *rtype = CHUNK_REAQ;
  return ddmc_buf_put_u8(b, ddmc__prof_alloc_tracking_on(vm) ? 1 : 0);
}

static int handle_real(void *ud, ddmc_vm *vm, const ddmc_chunk *req, ddmc_chunk_type *rtype, ddmc_buf *b) {
  (void)ud;
  (void)req;
  *rtype = CHUNK_REAL;
  int rc = ddmc__prof_alloc_real(vm, b);
  if (rc == DDMC_ENOMEM) {
    ddmc__buf_reset(b); /* a report cut short is no report */
    return ddmc_reply_fail(b, rtype, 1, "no memory for the allocation report");
  }
  return rc;
}

int ddmc__chunk_alloc_register(ddmc_vm *vm) {
  static const ddmc_chunk_handler reae = {.handle = handle_reae};
  static const ddmc_chunk_handler reaq = {.handle = handle_reaq};
  static const ddmc_chunk_handler real = {.handle = handle_real};
  int rc = ddmc_register_handler(vm, CHUNK_REAE, &reae, NULL);
  if (rc == 0) rc = ddmc_register_handler(vm, CHUNK_REAQ, &reaq, NULL);
  if (rc == 0) rc = ddmc_register_handler(vm, CHUNK_REAL, &real, NULL);
  return rc;
}
