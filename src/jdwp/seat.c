/* SPDX-License-Identifier: Apache-2.0 */
/* The debugger seat: which of the sessions side by side is the debugger, and what the others may
 * ask (docs/sessions.md). JDWP thread only. */
#include "jdwp/session.h"

void ddmc__jdwp_seat_take(ddmc__jdwp_session *s) {
  ddmc_vm *vm = s->vm;
  if (s->set != NULL) {
    s->set->seat = s->number;
    s->set->seat_confirmed = 0;
  }
  atomic_store_explicit(&vm->session_no, s->number, memory_order_release);
  /* VM_START is queued here for the first session ever (suspend=y). */
  for (int i = 0; i < vm->nservices; i++)
    if (vm->services[i].session_start) vm->services[i].session_start(vm, vm->services[i].ud);
}

/* ---- the debugger seat (docs/sessions.md) */

/* Commands a monitor may send while another session is the debugger: they read the VM and change
 * nothing the debugger sees (no suspension, request, value, call, or ID it relies on). Per
 * command set, a bit per command. */
static const uint32_t kReadOnly[19] = {
    [1] = 1u << 1 | 1u << 2 | 1u << 3 | 1u << 4 | 1u << 5 | 1u << 7 | 1u << 12 | 1u << 13 | 1u << 17 | 1u << 20 |
          1u << 21,                                 /* VirtualMachine: Version..InstanceCounts */
    [2] = 0x7fffeu,                                 /* ReferenceType 1-18 */
    [3] = 1u << 1,                                  /* ClassType.Superclass */
    [6] = 1u << 1 | 1u << 2 | 1u << 3 | 1u << 4 | 1u << 5, /* Method */
    [9] = 1u << 1 | 1u << 2 | 1u << 5 | 1u << 9 | 1u << 10, /* ObjectReference reads */
    [10] = 1u << 1,                                 /* StringReference.Value */
    [11] = 1u << 1 | 1u << 4 | 1u << 5 | 1u << 6 | 1u << 7 | 1u << 8 | 1u << 9 | 1u << 12 | 1u << 13 | 1u << 15,
    [12] = 1u << 1 | 1u << 2 | 1u << 3,             /* ThreadGroupReference */
    [13] = 1u << 1 | 1u << 2,                       /* ArrayReference.Length, GetValues */
    [14] = 1u << 1,                                 /* ClassLoaderReference.VisibleClasses */
    [16] = 1u << 1 | 1u << 3,                       /* StackFrame.GetValues, ThisObject */
    [17] = 1u << 1,                                 /* ClassObjectReference.ReflectedType */
    [18] = 1u << 1 | 1u << 2,                       /* ModuleReference */
};

static int read_only(uint8_t set, uint8_t cmd) {
  return set < sizeof(kReadOnly) / sizeof(kReadOnly[0]) && cmd < 32 && (kReadOnly[set] >> cmd & 1u);
}

/* VirtualMachine.Dispose and DisposeObjects from a monitor: nothing of its own to undo (its IDs
 * are the debugger's table's), so success and no effect; JDI sends both on its own. */
static int monitor_noop(uint8_t set, uint8_t cmd) { return set == 1 && (cmd == 6 || cmd == 14); }

int ddmc__jdwp_seat_check(ddmc__jdwp_session *s, uint8_t set, uint8_t cmd, int *as_debugger) {
  ddmc__jdwp_sessions *all = s->set;
  *as_debugger = 1;
  if (all == NULL || all->seat == s->number) {
    if (all != NULL && !read_only(set, cmd)) all->seat_confirmed = 1;
    return 0;
  }
  *as_debugger = 0;
  if (read_only(set, cmd)) return 0;
  if (monitor_noop(set, cmd)) return -1;
  if (all->seat == 0 || !all->seat_confirmed) {
    /* The first session to change the VM's world is the debugger: a DDM monitor or a JDI
     * client that has only looked so far hands the seat over. */
    ddmc__log(s->vm, DDMC_LOG_INFO, "JDWP: session %u is the debugger (command %u.%u)", s->number, set, cmd);
    ddmc__jdwp_seat_take(s);
    all->seat_confirmed = 1;
    *as_debugger = 1;
    return 0;
  }
  ddmc__log(s->vm, DDMC_LOG_WARN,
            "JDWP: session %u refused command %u.%u: session %u is the debugger; this one may only read "
            "(docs/sessions.md)", s->number, set, cmd, all->seat);
  return DDMC_JDWP_NOT_IMPLEMENTED;
}


void ddmc__jdwp_seat_describe(const ddmc__jdwp_session *s, ddmc_buf *b) {
  const ddmc__jdwp_sessions *all = s->set;
  ddmc_vm *vm = s->vm;
  uint32_t seat = all != NULL ? all->seat : s->number;
  uint8_t flags = (uint8_t)((atomic_load(&vm->debugger_active) && seat != 0 ? 1u : 0u) |
                            (all == NULL || all->seat_confirmed ? 2u : 0u));
  ddmc_buf_put_u32(b, 1); /* layout version */
  ddmc_buf_put_u32(b, all != NULL ? (uint32_t)all->n : 1u);
  ddmc_buf_put_u32(b, all != NULL ? (uint32_t)vm->opt.max_sessions : 1u);
  ddmc_buf_put_u32(b, s->number);
  ddmc_buf_put_u32(b, seat);
  ddmc_buf_put_u8(b, flags);
}
