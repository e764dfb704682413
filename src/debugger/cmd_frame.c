/* SPDX-License-Identifier: Apache-2.0 */
/* StackFrame (16). The frameID is checked against the thread's suspension epoch and its frame
 * count (ddmc__dbg_rd_frame) before the VM reads a slot; the slot and type are the VM's to check
 * (INVALID_SLOT, TYPE_MISMATCH). */
#include <string.h>

#include "debugger/dbg_int.h"

static int rd_thread_frame(ddmc__dbg *d, ddmc_reader *in, uint32_t *t, int32_t *depth) {
  int rc = ddmc__dbg_rd_thread(d, in, t);
  if (rc != 0) {
    ddmc_read_u64(in);
    return in->err ? DDMC_JDWP_INVALID_LENGTH : rc;
  }
  return ddmc__dbg_rd_frame(d, in, *t, depth);
}

static int sf_get_values(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  uint32_t t, n;
  int32_t depth;
  int rc = rd_thread_frame(d, in, &t, &depth);
  if (rc == 0) rc = ddmc__dbg_rd_count(in, 5, &n);
  if (rc != 0) return rc;
  ddmc_buf_put_u32(out, n);
  for (uint32_t i = 0; i < n; i++) {
    int32_t slot = (int32_t)ddmc_read_u32(in);
    char tag = (char)ddmc_read_u8(in);
    if (in->err) return DDMC_JDWP_INVALID_LENGTH;
    if (ddmc__dbg_value_size(tag) == 0 && tag != 'V') return DDMC_JDWP_INVALID_TAG;
    char want = (tag == 'V') ? 'V' : (ddmc__dbg_value_size(tag) == 8 && tag != 'J' && tag != 'D') ? 'L' : tag;
    ddmc_value v;
    memset(&v, 0, sizeof(v));
    if ((rc = DDMC__DBG_CALL(d, get_local, t, depth, slot, want, &v)) != 0) return rc;
    if (want == 'L')
      v.tag = 'L';
    else if (v.tag != want)
      return DDMC_JDWP_TYPE_MISMATCH;
    if ((rc = ddmc__dbg_wr_value(d, out, &v, 1)) != 0) return rc;
  }
  return ddmc__dbg_reply_rc(out, 0);
}

static int sf_set_values(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  uint32_t t, n;
  int32_t depth;
  int rc = rd_thread_frame(d, in, &t, &depth);
  if (rc == 0) rc = ddmc__dbg_rd_count(in, 6, &n);
  if (rc != 0) return rc;
  ddmc_reader body = *in; /* two passes: nothing is set unless the whole request reads well */
  for (int apply = 0; apply < 2; apply++) {
    *in = body;
    for (uint32_t i = 0; i < n; i++) {
      int32_t slot = (int32_t)ddmc_read_u32(in);
      ddmc_value v;
      if ((rc = ddmc__dbg_rd_value(d, in, 0, &v)) != 0) return rc;
      if (apply && (rc = DDMC__DBG_CALL(d, set_local, t, depth, slot, &v)) != 0) return rc;
    }
    if ((rc = ddmc__dbg_rd_end(in)) != 0) return rc;
  }
  return 0;
}

static int sf_this_object(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  uint32_t t;
  int32_t depth;
  int rc = rd_thread_frame(d, in, &t, &depth);
  if (rc != 0) return rc;
  ddmc_ref o = 0;
  if (DDMC__DBG_HAS(d, frame_this) && (rc = DDMC__DBG_CALL(d, frame_this, t, depth, &o)) != 0) return rc;
  if (o == 0) {
    ddmc_buf_put_u8(out, 'L'); /* null for a static or native method */
    ddmc__dbg_wr_id(out, 0);
    return 0;
  }
  return ddmc__dbg_wr_tagged_object(d, out, o);
}

const ddmc__dbg_cmd ddmc__dbg_cmds_frame[] = {
    {16, 1, sf_get_values, "StackFrame.GetValues", NULL},
    {16, 2, sf_set_values, "StackFrame.SetValues", NULL},
    {16, 3, sf_this_object, "StackFrame.ThisObject", NULL},
    {0, 0, NULL, NULL, NULL},
};
