/* SPDX-License-Identifier: Apache-2.0 */
/* The hub's monitor events and DataDumpRequest (hub.c has the others): MonitorContendedEnter,
 * MonitorContendedEntered, MonitorWait, MonitorWaited from the post calls
 * (ddmc_post_monitor_*, through the event hub and client.c, before the debugger's part), and
 * DataDumpRequest from ddmc_agent_data_dump.
 *
 * As in hub.c: one or two atomic loads when no agent wants the event; otherwise each
 * environment that enabled it gets its callback on the reporting thread, with a local frame,
 * the thread's identity and "may park" set (a VM thread reporting a monitor event runs
 * bytecode otherwise). */
#include <string.h>

#include "jvmti/funcs.h"

typedef void (*cb_monitor)(ddmc__jv_jenv *, ddmc__jv_jnienv *, jthread, jobject);
typedef void (*cb_wait)(ddmc__jv_jenv *, ddmc__jv_jnienv *, jthread, jobject, jlong);
typedef void (*cb_waited)(ddmc__jv_jenv *, ddmc__jv_jnienv *, jthread, jobject, jboolean);
typedef void (*cb_env)(ddmc__jv_jenv *, ddmc__jv_jnienv *);

static int wanted(ddmc__jvmti *jv, int ev) {
  return jv != NULL && atomic_load_explicit(&jv->want[ev - DDMC__JEV_FIRST], memory_order_relaxed) > 0;
}

static ddmc__jv_fnptr callback(ddmc__jv_jenv *e, int ev, uint32_t thread) {
  if (atomic_load_explicit(&e->disposed, memory_order_relaxed)) return NULL;
  ddmc__jv_fnptr f = atomic_load_explicit(&e->cb[ev - DDMC__JEV_FIRST], memory_order_acquire);
  return f != NULL && ddmc__jv_jenv_enabled(e, ev, thread) ? f : NULL;
}

static int jvmti_event(int jdwp_kind) {
  switch (jdwp_kind) {
    case DDMC_EV_MONITOR_CONTENDED_ENTER: return JVMTI_EVENT_MONITOR_CONTENDED_ENTER;
    case DDMC_EV_MONITOR_CONTENDED_ENTERED: return JVMTI_EVENT_MONITOR_CONTENDED_ENTERED;
    case DDMC_EV_MONITOR_WAIT: return JVMTI_EVENT_MONITOR_WAIT;
    case DDMC_EV_MONITOR_WAITED: return JVMTI_EVENT_MONITOR_WAITED;
    default: return 0;
  }
}

void ddmc__jv_hub_monitor(ddmc_vm *vm, int jdwp_kind, uint32_t thread, ddmc_ref object, int64_t arg) {
  ddmc__jvmti *jv = ddmc__jv_get(vm);
  int ev = jvmti_event(jdwp_kind);
  if (ev == 0 || !wanted(jv, ev) || atomic_load(&jv->phase) != JVMTI_PHASE_LIVE) return;
  uint32_t self = ddmc__jv_self();
  int may_park = ddmc__jv_may_park();
  uint32_t mark = ddmc__jv_ref_frame_push();
  if (thread != 0) ddmc__jv_set_self(thread);
  ddmc__jv_set_may_park(1);
  ddmc__jv_jnienv *jni = ddmc__jv_jni_env(jv);
  jthread t = ddmc__jv_thread_local(jv, thread);
  jobject o = ddmc__jv_ref_local(jv, object, 0, 0);
  for (ddmc__jv_jenv *e = atomic_load_explicit(&jv->envs, memory_order_acquire); e && t && o; e = e->next) {
    ddmc__jv_fnptr f = callback(e, ev, thread);
    if (f == NULL) continue;
    if (ev == JVMTI_EVENT_MONITOR_WAIT)
      ((cb_wait)f)(e, jni, t, o, (jlong)arg);
    else if (ev == JVMTI_EVENT_MONITOR_WAITED)
      ((cb_waited)f)(e, jni, t, o, (jboolean)(arg != 0));
    else
      ((cb_monitor)f)(e, jni, t, o);
  }
  ddmc__jv_ref_frame_pop(jv, mark);
  ddmc__jv_set_self(self);
  ddmc__jv_set_may_park(may_park);
}

int ddmc_agent_data_dump(ddmc_vm *vm) {
  ddmc__jvmti *jv = ddmc__jv_get(vm);
  if (jv == NULL) return DDMC_ENOTCONN;
  if (!wanted(jv, JVMTI_EVENT_DATA_DUMP_REQUEST) || atomic_load(&jv->phase) != JVMTI_PHASE_LIVE) return 0;
  uint32_t mark = ddmc__jv_ref_frame_push();
  int may_park = ddmc__jv_may_park();
  ddmc__jv_set_may_park(0); /* a helper thread, or a VM thread between instructions */
  ddmc__jv_jnienv *jni = ddmc__jv_jni_env(jv);
  for (ddmc__jv_jenv *e = atomic_load_explicit(&jv->envs, memory_order_acquire); e; e = e->next) {
    ddmc__jv_fnptr f = callback(e, JVMTI_EVENT_DATA_DUMP_REQUEST, 0);
    if (f) ((cb_env)f)(e, jni);
  }
  ddmc__jv_ref_frame_pop(jv, mark);
  ddmc__jv_set_may_park(may_park);
  return 0;
}
