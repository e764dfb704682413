/* SPDX-License-Identifier: Apache-2.0 */
/* Method (6); Field (8) has no commands.
 *
 * Tables are streamed from the VM's visitors straight into the reply, counted as they go and
 * bounded (DDMC__MAX_TABLE rows): a VM with a corrupt table cannot make one request run away. */
#include <string.h>

#include "debugger/dbg_int.h"

#define DDMC__MAX_TABLE 65536u

static int rd_method(ddmc__dbg *d, ddmc_reader *in, const ddmc__dbg_cls **c, uint32_t *m, ddmc_method_info *info) {
  int rc = ddmc__dbg_rd_class(d, in, c);
  if (rc != 0) {
    ddmc_read_u64(in);
    return in->err ? DDMC_JDWP_INVALID_LENGTH : rc;
  }
  if ((rc = ddmc__dbg_rd_method(d, in, *c, NULL, m)) != 0) return rc;
  memset(info, 0, sizeof(*info));
  return DDMC__DBG_CALL(d, method_info, (*c)->handle, *m, info);
}

typedef struct rows {
  ddmc__dbg *d;
  ddmc_buf *out;
  uint32_t n;
  int generic;
} rows;

static int put_line(void *arg, int64_t index, int32_t line) {
  rows *r = arg;
  if (r->n >= DDMC__MAX_TABLE) return 1;
  ddmc_buf_put_u64(r->out, (uint64_t)index);
  ddmc_buf_put_u32(r->out, (uint32_t)line);
  r->n++;
  return 0;
}

static int m_line_table(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  const ddmc__dbg_cls *c;
  uint32_t m;
  ddmc_method_info info;
  int rc = rd_method(d, in, &c, &m, &info);
  if (rc != 0) return rc;
  ddmc_buf_put_u64(out, (uint64_t)info.code_start);
  ddmc_buf_put_u64(out, (uint64_t)info.code_end);
  if (info.modifiers & DDMC_ACC_NATIVE) { /* no code: -1, -1 and no lines, as HotSpot answers */
    ddmc_buf_put_u32(out, 0);
    return ddmc__dbg_reply_rc(out, 0);
  }
  rows r = {d, out, 0, 0};
  size_t count = ddmc__dbg_count_begin(out);
  rc = DDMC__DBG_CALL(d, line_table, c->handle, m, put_line, &r);
  /* No line information (a method of a class compiled without it, a lambda's hidden class): an
   * empty table with the code range, as HotSpot answers; JDWP has no ABSENT_INFORMATION here, and
   * JDI fails a whole stack trace on it. */
  if (rc == DDMC_JDWP_ABSENT_INFORMATION && r.n == 0) rc = 0;
  if (rc != 0) return rc;
  ddmc__dbg_count_end(out, count, r.n);
  return ddmc__dbg_reply_rc(out, 0);
}

static int put_variable(void *arg, const ddmc_variable *v) {
  rows *r = arg;
  if (r->n >= DDMC__MAX_TABLE) return 1;
  ddmc_buf_put_u64(r->out, (uint64_t)v->start);
  ddmc__dbg_wr_string(r->out, v->name);
  ddmc__dbg_wr_string(r->out, v->signature);
  if (r->generic) ddmc__dbg_wr_string(r->out, v->generic);
  ddmc_buf_put_u32(r->out, (uint32_t)v->length);
  ddmc_buf_put_u32(r->out, (uint32_t)v->slot);
  r->n++;
  return 0;
}

static int variable_table(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out, int generic) {
  const ddmc__dbg_cls *c;
  uint32_t m;
  ddmc_method_info info;
  int rc = rd_method(d, in, &c, &m, &info);
  if (rc != 0) return rc;
  if (info.modifiers & DDMC_ACC_NATIVE) return DDMC_JDWP_ABSENT_INFORMATION;
  ddmc_buf_put_u32(out, (uint32_t)info.arg_slots);
  rows r = {d, out, 0, generic};
  size_t count = ddmc__dbg_count_begin(out);
  if ((rc = DDMC__DBG_CALL(d, variable_table, c->handle, m, put_variable, &r)) != 0) return rc;
  ddmc__dbg_count_end(out, count, r.n);
  return ddmc__dbg_reply_rc(out, 0);
}

static int m_variable_table(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) { return variable_table(d, in, out, 0); }

static int m_variable_table_generic(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  return variable_table(d, in, out, 1);
}

static int m_is_obsolete(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  const ddmc__dbg_cls *c;
  uint32_t m;
  ddmc_method_info info;
  int rc = rd_method(d, in, &c, &m, &info);
  if (rc == 0) ddmc_buf_put_u8(out, 0); /* nothing is ever redefined */
  return rc;
}

/* [refTypeID][methodID] -> [u4 n][n bytes]: the VM appends its code straight into the reply
 * (bounded by the reply's cap), and the count is patched after. */
static int m_bytecodes(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  const ddmc__dbg_cls *c;
  uint32_t m;
  ddmc_method_info info;
  int rc = rd_method(d, in, &c, &m, &info);
  if (rc != 0) return rc;
  if (!DDMC__DBG_HAS(d, bytecodes)) return DDMC_JDWP_NOT_IMPLEMENTED;
  size_t count = ddmc__dbg_count_begin(out);
  rc = DDMC__DBG_CALL(d, bytecodes, c->handle, m, out);
  if (rc != 0) return rc;
  if (!ddmc_buf_error(out)) ddmc__dbg_count_end(out, count, (uint32_t)(ddmc_buf_len(out) - count - 4));
  return ddmc__dbg_reply_rc(out, 0);
}

const ddmc__dbg_cmd ddmc__dbg_cmds_method[] = {
    {6, 1, m_line_table, "Method.LineTable", NULL},
    {6, 2, m_variable_table, "Method.VariableTable", NULL},
    {6, 3, m_bytecodes, "Method.Bytecodes", NULL},
    {6, 4, m_is_obsolete, "Method.IsObsolete", NULL},
    {6, 5, m_variable_table_generic, "Method.VariableTableWithGeneric", NULL},
    {0, 0, NULL, NULL, NULL},
};
