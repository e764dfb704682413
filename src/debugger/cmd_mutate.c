/* SPDX-License-Identifier: Apache-2.0 */
/* What changes the program under the debugger: VirtualMachine.RedefineClasses (1/18, HotSwap),
 * StackFrame.PopFrames (16/4, Drop Frame) and ThreadReference.ForceEarlyReturn (11/14, Force
 * Return), each through its optional op (bridge.h, "mutate"): a VM without it answers
 * NOT_IMPLEMENTED and its capability is false (cmd_vm.c).
 *
 * What the library keeps that these change:
 *   RedefineClasses: the line tables cached for stepping (the new code has other indexes) are
 *     retired, and the breakpoint requests in the redefined classes are dropped, as the JDK's
 *     agent drops them (the VM cleared them; JDI deletes its own breakpoint requests there
 *     itself, and a Clear of a dropped request answers no error);
 *   PopFrames: every frameID of the thread dies (its epoch moves on, as if it had run), and a step
 *     request of the thread starts again from the frame it now stands in. */
#include <string.h>

#include "debugger/dbg_int.h"
#include "debugger/requests.h"
#include "debugger/state.h"

/* Classes one RedefineClasses may name: IDEs send the classes one compilation changed. The
 * bytes are bounded by the packet (the JDWP thread bounds what it reads). */
#define DDMC__MAX_REDEFINE 4096u

/* One class to redefine: [referenceTypeID][u4 n][n bytes], the bytes left in the packet. */
static int rd_definition(ddmc__dbg *d, ddmc_reader *in, ddmc_class *cls, const uint8_t **bytes, uint32_t *len) {
  const ddmc__dbg_cls *c = NULL;
  int rc = ddmc__dbg_rd_class(d, in, &c);
  uint32_t n = ddmc_read_u32(in);
  if (in->err || n > ddmc_reader_left(in)) {
    in->err = 1;
    return DDMC_JDWP_INVALID_LENGTH;
  }
  *bytes = ddmc_read_bytes(in, n);
  *len = n;
  if (rc != 0) return rc;
  /* An array type has no class file (JVM TI: UNMODIFIABLE_CLASS, which JDWP names INVALID_CLASS
   * in libjdwp's translation). */
  if (c->type_tag == DDMC_TYPE_ARRAY) return DDMC_JDWP_INVALID_CLASS;
  if (n == 0) return DDMC_JDWP_INVALID_CLASS_FORMAT;
  *cls = c->handle;
  return 0;
}

/* [u4 classes]([referenceTypeID refType][u4 n][n bytes classfile])* */
static int vm_redefine_classes(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  uint32_t n;
  int rc = ddmc__dbg_rd_count(in, 12, &n);
  if (rc != 0) return rc;
  if (n > DDMC__MAX_REDEFINE) return DDMC_JDWP_ILLEGAL_ARGUMENT;
  if (!DDMC__DBG_HAS(d, redefine_classes)) return ddmc__dbg_not_offered(d, in, out);
  const ddmc__mem *mem = ddmc__dbg_mem(d);
  ddmc_class *cls = ddmc__calloc(mem, n ? n : 1, sizeof(*cls));
  const uint8_t **bytes = ddmc__calloc(mem, n ? n : 1, sizeof(*bytes));
  uint32_t *lens = ddmc__calloc(mem, n ? n : 1, sizeof(*lens));
  if (cls == NULL || bytes == NULL || lens == NULL) rc = DDMC_JDWP_OUT_OF_MEMORY;
  for (uint32_t i = 0; i < n && rc == 0; i++) rc = rd_definition(d, in, &cls[i], &bytes[i], &lens[i]);
  if (rc == 0) rc = ddmc__dbg_rd_end(in);
  if (rc == 0 && n > 0) rc = DDMC__DBG_CALL(d, redefine_classes, n, cls, (const uint8_t *const *)bytes, lens);
  if (rc == 0)
    for (uint32_t i = 0; i < n; i++) {
      ddmc__dbg_lines_forget(d, cls[i]);
      ddmc__dbg_reqs_redefined(d, cls[i]);
    }
  ddmc__free(mem, cls);
  ddmc__free(mem, bytes);
  ddmc__free(mem, lens);
  return rc;
}

/* [threadID][frameID]: pops that frame and every frame above it. */
static int sf_pop_frames(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  uint32_t t;
  int32_t depth = 0;
  int rc = ddmc__dbg_rd_thread(d, in, &t);
  if (rc != 0) {
    ddmc_read_u64(in);
    return in->err ? DDMC_JDWP_INVALID_LENGTH : rc;
  }
  if (!DDMC__DBG_HAS(d, pop_frames)) return ddmc__dbg_not_offered(d, in, out);
  if ((rc = ddmc__dbg_rd_frame(d, in, t, &depth)) != 0) return rc;
  if ((rc = ddmc__dbg_rd_end(in)) != 0) return rc;
  if ((rc = DDMC__DBG_CALL(d, pop_frames, t, depth + 1)) != 0) return rc;
  ddmc__dbg_thr_frames_moved(d, t);
  ddmc__dbg_reqs_popped(d, t);
  return 0;
}

/* [threadID][tagged value] */
static int tr_force_early_return(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  uint32_t t;
  ddmc_value v;
  int rc = ddmc__dbg_rd_thread(d, in, &t);
  int vrc = ddmc__dbg_rd_value(d, in, 0, &v);
  if (in->err) return DDMC_JDWP_INVALID_LENGTH;
  if (rc == 0) rc = vrc;
  if (rc == 0) rc = ddmc__dbg_rd_end(in);
  if (rc != 0) return rc;
  if (!DDMC__DBG_HAS(d, force_early_return)) return DDMC_JDWP_NOT_IMPLEMENTED;
  if (ddmc__dbg_thr_count(d, t) == 0) return DDMC_JDWP_THREAD_NOT_SUSPENDED;
  return DDMC__DBG_CALL(d, force_early_return, t, &v);
}

const ddmc__dbg_cmd ddmc__dbg_cmds_mutate[] = {
    {1, 18, vm_redefine_classes, "VirtualMachine.RedefineClasses", NULL},
    {11, 14, tr_force_early_return, "ThreadReference.ForceEarlyReturn", NULL},
    {16, 4, sf_pop_frames, "StackFrame.PopFrames", NULL},
    {0, 0, NULL, NULL, NULL},
};
