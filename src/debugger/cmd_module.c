/* SPDX-License-Identifier: Apache-2.0 */
/* Modules (JDWP 9): VirtualMachine.AllModules (1/22), ReferenceType.Module (2/19) and
 * ModuleReference (18). A module is an object on the wire: its moduleID is the objectID the
 * registry gives the VM's reference to it (ids.c), so it lives, is held and is disposed of like
 * any other object; no registry of its own.
 *
 * Offered only when the VM has all three module ops (bridge.h): VirtualMachine.Version then
 * answers 9, which is what makes a JDI client ask (it has no capability bit for modules). A VM
 * defines a few dozen modules (HotSpot 17: about 70 with the unnamed ones), but the list is the
 * VM's, so AllModules is bounded like AllClasses. A VM without them answers NOT_IMPLEMENTED to
 * every module command, whatever IDs it names (after the length checks), as to a command it does
 * not offer. */
#include <string.h>

#include "debugger/dbg_int.h"

#define DDMC__MAX_MODULES (1u << 16)
#define DDMC__MAX_MODULE_NAME 65536u

typedef struct module_list {
  ddmc__dbg *d;
  ddmc_buf *out;
  uint32_t n;
  int err;
} module_list;

static int put_module(void *arg, ddmc_ref m) {
  module_list *l = arg;
  if (l->n >= DDMC__MAX_MODULES) {
    l->err = DDMC_JDWP_OUT_OF_MEMORY; /* more than a reply may list: say so, not a short list */
    return 1;
  }
  uint64_t id;
  if ((l->err = ddmc__dbg_id_of_object(l->d, m, &id)) != 0) return 1;
  ddmc__dbg_wr_id(l->out, id);
  l->n++;
  return 0;
}

/* -> [u4 n][moduleID]* */
static int vm_all_modules(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  int rc = ddmc__dbg_rd_end(in);
  if (rc != 0) return rc;
  if (!DDMC__DBG_MODULES(d)) return DDMC_JDWP_NOT_IMPLEMENTED;
  module_list l = {d, out, 0, 0};
  size_t count = ddmc__dbg_count_begin(out);
  rc = DDMC__DBG_CALL(d, for_each_module, put_module, &l);
  if (rc == 0) rc = l.err;
  if (rc != 0) return rc;
  ddmc__dbg_count_end(out, count, l.n);
  return ddmc__dbg_reply_rc(out, 0);
}

/* [refTypeID] -> [moduleID] */
static int rt_module(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  const ddmc__dbg_cls *c;
  int rc = ddmc__dbg_rd_class(d, in, &c);
  if (in->err) return DDMC_JDWP_INVALID_LENGTH;
  if (!DDMC__DBG_MODULES(d)) return DDMC_JDWP_NOT_IMPLEMENTED;
  if (rc != 0) return rc;
  ddmc_ref m = 0;
  uint64_t id;
  if ((rc = DDMC__DBG_CALL(d, class_module, c->handle, &m)) != 0) return rc;
  if ((rc = ddmc__dbg_id_of_object(d, m, &id)) != 0) return rc;
  ddmc__dbg_wr_id(out, id);
  return 0;
}

/* A moduleID: as libjdwp, INVALID_MODULE for an ID that names nothing; also for null and for an
 * object that is no module, which libjdwp hands to Module.getName() unchecked. */
static int rd_module(ddmc__dbg *d, ddmc_reader *in, ddmc_ref *m) {
  int rc = ddmc__dbg_rd_object(d, in, m);
  if (in->err) return DDMC_JDWP_INVALID_LENGTH;
  if (!DDMC__DBG_MODULES(d)) return DDMC_JDWP_NOT_IMPLEMENTED;
  if (rc == DDMC_JDWP_INVALID_OBJECT || (rc == 0 && *m == 0)) return DDMC_JDWP_INVALID_MODULE;
  return rc;
}

/* [moduleID] -> [string name] ("" for an unnamed module) */
static int mr_name(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  ddmc_ref m;
  int rc = rd_module(d, in, &m);
  if (rc != 0) return rc;
  ddmc_buf name;
  ddmc__buf_init(&name, ddmc__dbg_mem(d), DDMC__MAX_MODULE_NAME);
  rc = DDMC__DBG_CALL(d, module_info, m, &name, NULL);
  if (rc == 0 && ddmc_buf_error(&name)) rc = DDMC_JDWP_OUT_OF_MEMORY;
  if (rc == 0) {
    ddmc_buf_put_u32(out, (uint32_t)ddmc_buf_len(&name));
    ddmc_buf_put_bytes(out, name.p, ddmc_buf_len(&name));
  }
  ddmc__buf_free(&name);
  return ddmc__dbg_reply_rc(out, rc);
}

/* [moduleID] -> [classLoaderID] (0: the boot loader) */
static int mr_class_loader(ddmc__dbg *d, ddmc_reader *in, ddmc_buf *out) {
  ddmc_ref m, loader = 0;
  uint64_t id;
  int rc = rd_module(d, in, &m);
  if (rc != 0) return rc;
  if ((rc = DDMC__DBG_CALL(d, module_info, m, NULL, &loader)) != 0) return rc;
  if ((rc = ddmc__dbg_id_of_object(d, loader, &id)) != 0) return rc;
  ddmc__dbg_wr_id(out, id);
  return 0;
}

const ddmc__dbg_cmd ddmc__dbg_cmds_module[] = {
    {1, 22, vm_all_modules, "VirtualMachine.AllModules", NULL},
    {2, 19, rt_module, "ReferenceType.Module", NULL},
    {18, 1, mr_name, "ModuleReference.Name", NULL},
    {18, 2, mr_class_loader, "ModuleReference.ClassLoader", NULL},
    {0, 0, NULL, NULL, NULL},
};
