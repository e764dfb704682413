/* SPDX-License-Identifier: Apache-2.0 */
/* A debugger session's start (VM_START) and end (docs/protocol/jdwp.md §2.7: every request cleared, every thread
 * resumed, every ID forgotten), also reached by VirtualMachine.Dispose. */
#include "debugger/glue.h"
#include "debugger/requests.h"
#include "send/send.h"

void ddmc__dbg_session_start(ddmc_vm *vm, void *ud) {
  ddmc__dbg *d = ud;
  d->session = ddmc__send_session_number(vm);
  atomic_store(&d->connected, 1);
  /* VM_START names the main thread; with suspend=y the first session's holds every thread until
   * the debugger resumes (what HotSpot does). A later peer attaches to a running VM and gets none,
   * as on HotSpot. */
  if (d->suspend_on_start && !d->started_once) ddmc__dbg_events_vm_start(d, 1);
  d->started_once = 1;
}

/* docs/protocol/jdwp.md §2.7: requests cancelled (breakpoints and steps undone in the VM), every thread back to
 * count 0, IDs forgotten. VM threads inside a post call are waited out first: they may be
 * reading what is freed here. */
void ddmc__dbg_reset(ddmc__dbg *d) {
  atomic_store(&d->connected, 0);
  /* Before the counts are released (under sus_lock): a method call still running then finds
   * its session gone and suspends nothing when it ends. */
  atomic_fetch_add(&d->gen, 1);
  ddmc__dbg_events_quiesce(d);
  ddmc__dbg_reqs_clear_all(d);
  ddmc__dbg_thrs_release_all(d);
  ddmc__dbg_thrs_forget(d);
  ddmc__dbg_lines_reset(d);
  ddmc__dbg_ids_reset(d);
  ddmc__lock(&d->hold_lock);
  atomic_store(&d->holding, 0);
  ddmc__buf_reset(&d->held);
  ddmc__unlock(&d->hold_lock);
}

void ddmc__dbg_set_connected(ddmc__dbg *d, uint32_t session) {
  d->session = session;
  atomic_store(&d->connected, 1);
}

void ddmc__dbg_session_end(ddmc_vm *vm, void *ud) { ddmc__dbg_reset(ud); }
