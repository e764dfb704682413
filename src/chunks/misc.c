/* SPDX-License-Identifier: Apache-2.0 */
/* EXIT and DBGD.
 *   EXIT [u4 status]            host asks the VM to end (ddmlib's Client.kill sends EXIT 1)
 *   DBGD (empty)                the draft's "debugger has disconnected": the VM drops its debugger
 *                               state but keeps the connection; answered with an empty reply
 * FAIL, the error reply, is built by chunks/reply.c. */
#include "chunks/families.h"
#include "vm_int.h"

#define CHUNK_EXIT DDMC_FOURCC('E', 'X', 'I', 'T')
#define CHUNK_DBGD DDMC_FOURCC('D', 'B', 'G', 'D')

static int handle_exit(void *ud, ddmc_vm *vm, const ddmc_chunk *req, ddmc_chunk_type *rtype, ddmc_buf *b) {
  (void)ud;
  ddmc_reader r;
  ddmc_reader_init(&r, req->data, req->len);
  int32_t status = (int32_t)ddmc_read_u32(&r);
  if (r.err) return ddmc_reply_fail(b, rtype, DDMC_EPROTO, "EXIT needs [u4 status]");
  if (vm->ops.exit == NULL) return DDMC_ENOTSUP;
  ddmc__log(vm, DDMC_LOG_INFO, "JDWP: EXIT %d requested by the peer", status);
  vm->ops.exit(vm->vm_data, status);
  return 0; /* the hook returned: the VM chose not to exit now; the empty reply says so */
}

static int handle_dbgd(void *ud, ddmc_vm *vm, const ddmc_chunk *req, ddmc_chunk_type *rtype, ddmc_buf *b) {
  (void)ud;
  (void)req;
  (void)rtype;
  (void)b;
  if (atomic_exchange(&vm->debugger_active, 0)) {
    ddmc__log(vm, DDMC_LOG_INFO, "JDWP: debugger detached (DBGD)");
    if (vm->ops.debugger_detached) vm->ops.debugger_detached(vm->vm_data);
  }
  for (int i = 0; i < vm->nservices; i++)
    if (vm->services[i].detach) vm->services[i].detach(vm, vm->services[i].ud);
  return 0;
}

int ddmc__chunk_misc_register(ddmc_vm *vm) {
  static const ddmc_chunk_handler exit_h = {.handle = handle_exit};
  static const ddmc_chunk_handler dbgd_h = {.handle = handle_dbgd};
  int rc = ddmc_register_handler(vm, CHUNK_EXIT, &exit_h, NULL);
  if (rc == 0) rc = ddmc_register_handler(vm, CHUNK_DBGD, &dbgd_h, NULL);
  return rc;
}
