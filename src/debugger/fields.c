/* SPDX-License-Identifier: Apache-2.0 */
/* Field values by fieldID, for ReferenceType.GetValues / ClassType.SetValues (statics) and
 * ObjectReference.GetValues / SetValues (an object's fields, statics among them): one loop each,
 * so both command sets check IDs, ownership and static-ness the same way. */
#include <string.h>

#include "debugger/dbg_int.h"

/* The next fieldID of class c (or a superclass), with its description; the field is read from
 * (or written to) *self: 0 for a static, else o. With o == 0 an instance field is refused. */
static int rd_field(ddmc__dbg *d, ddmc_reader *in, const ddmc__dbg_cls *c, ddmc_ref o, const ddmc__dbg_cls **decl,
                    uint32_t *f, ddmc_field_info *fi, ddmc_ref *self) {
  int rc = ddmc__dbg_rd_field(d, in, c, decl, f);
  if (rc == 0) rc = ddmc__dbg_field(d, *decl, *f, fi);
  if (rc != 0) return rc;
  int is_static = (fi->modifiers & DDMC_ACC_STATIC) != 0;
  if (o == 0 && !is_static) return DDMC_JDWP_INVALID_FIELDID;
  *self = is_static ? 0 : o;
  return 0;
}

int ddmc__dbg_get_fields(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out, const ddmc__dbg_cls *c, ddmc_ref o) {
  uint32_t n;
  int rc = ddmc__dbg_rd_count(in, 8, &n);
  if (rc != 0) return rc;
  ddmc_buf_put_u32(out, n);
  for (uint32_t i = 0; i < n; i++) {
    const ddmc__dbg_cls *decl;
    uint32_t f;
    ddmc_field_info fi;
    ddmc_ref self;
    ddmc_value v;
    if ((rc = rd_field(d, in, c, o, &decl, &f, &fi, &self)) != 0) return rc;
    memset(&v, 0, sizeof(v));
    if ((rc = DDMC__DBG_CALL(d, get_field, self, decl->handle, f, &v)) != 0) return rc;
    if ((rc = ddmc__dbg_wr_value(d, out, &v, 1)) != 0) return rc;
  }
  return ddmc__dbg_reply_rc(out, 0);
}

int ddmc__dbg_set_fields(ddmc__dbg *d, ddmc_reader *in, const ddmc__dbg_cls *c, ddmc_ref o) {
  uint32_t n;
  int rc = ddmc__dbg_rd_count(in, 9, &n);
  if (rc != 0) return rc;
  ddmc_reader body = *in; /* two passes: nothing is set unless the whole request is good */
  for (int apply = 0; apply < 2; apply++) {
    *in = body;
    for (uint32_t i = 0; i < n; i++) {
      const ddmc__dbg_cls *decl;
      uint32_t f;
      ddmc_field_info fi;
      ddmc_ref self;
      ddmc_value v;
      if ((rc = rd_field(d, in, c, o, &decl, &f, &fi, &self)) != 0) return rc;
      if ((rc = ddmc__dbg_rd_value(d, in, ddmc__dbg_sig_tag(fi.signature), &v)) != 0) return rc;
      if (apply && (rc = DDMC__DBG_CALL(d, set_field, self, decl->handle, f, &v)) != 0) return rc;
    }
    if ((rc = ddmc__dbg_rd_end(in)) != 0) return rc;
  }
  return 0;
}
