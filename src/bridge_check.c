/* SPDX-License-Identifier: Apache-2.0 */
/* The checking shims of bridge_check.h. */
#include "bridge_check.h"

#include <stdio.h>
#include <stdlib.h>

#ifdef DDMC__LOCK_CHECK

#define ONE(...) +1
enum { NOPS = 0 DDMC__BRIDGE_OPS(ONE, ONE) };
#undef ONE
_Static_assert(sizeof(ddmc_vm_bridge) == NOPS * sizeof(void (*)(void)),
               "every member of ddmc_vm_bridge needs its line in DDMC__BRIDGE_OPS (bridge_check.h)");

static void held_wrongly(const char *op) {
  fprintf(stderr,
          "libddmc: bridge op %s called under library locks its contract (bridge.h) does not allow: "
          "%u leaf, %u switch, %u suspension\n",
          op, ddmc__locks_held(DDMC__LOCK_LEAF), ddmc__locks_held(DDMC__LOCK_SWITCHES),
          ddmc__locks_held(DDMC__LOCK_SUSPEND));
  abort();
}

#define D (((ddmc__bridge_check *)vm_data)->vm_data)
#define SHIM(op, allowed, params, args)                                  \
  static int shim_##op params {                                          \
    if (!ddmc__locks_only(allowed)) held_wrongly(#op);                   \
    return ((ddmc__bridge_check *)vm_data)->vm.op args;                  \
  }
#define SHIMV(op, allowed, params, args)                                 \
  static void shim_##op params {                                         \
    if (!ddmc__locks_only(allowed)) held_wrongly(#op);                   \
    ((ddmc__bridge_check *)vm_data)->vm.op args;                         \
  }
DDMC__BRIDGE_OPS(SHIM, SHIMV)
#undef D

void ddmc__bridge_check_wrap(ddmc__bridge_check *chk, ddmc_vm_bridge *out) {
#define WRAP(op, allowed, params, args) out->op = chk->vm.op != NULL ? shim_##op : NULL;
  DDMC__BRIDGE_OPS(WRAP, WRAP)
#undef WRAP
}

#else
typedef int ddmc__bridge_check_off; /* ISO C: a translation unit is never empty */
#endif
