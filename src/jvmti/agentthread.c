/* SPDX-License-Identifier: Apache-2.0 */
/* RunAgentThread: an agent's own thread, started by the VM (bridge.start_agent_thread) for a
 * java.lang.Thread the agent made (JNI NewObject, as on HotSpot).
 *
 * The VM makes the new OS thread a daemon VM thread that runs no bytecode and calls the
 * trampoline below, which gives it its identity here (GetCurrentThread, a JNIEnv, a local frame)
 * and calls the agent's function in the live phase. It never parks (it runs no bytecode, so the
 * collector never waits for it): raw monitors and sleeps hold nothing up. */
#include <stdlib.h>
#include <string.h>

#include "jvmti/funcs.h"

typedef struct start {
  ddmc__jv_jenv *env;
  ddmc__jv_jstart_fn proc;
  const void *arg;
} start;

static void agent_main(void *p, uint32_t thread) {
  start st = *(start *)p;
  free(p);
  ddmc__jvmti *jv = st.env->jv;
  ddmc__jv_set_self(thread);
  ddmc__jv_set_may_park(0);
  uint32_t mark = ddmc__jv_ref_frame_push();
  ddmc__jv_jnienv *jni = ddmc__jv_jni_env(jv);
  /* The live phase only: a VM that exits meanwhile leaves the function uncalled. */
  if (atomic_load(&jv->phase) == JVMTI_PHASE_LIVE && !atomic_load(&st.env->disposed))
    st.proc(st.env, jni, (void *)st.arg);
  ddmc__jv_ref_frame_pop(jv, mark);
  ddmc__jv_set_self(0);
}

jvmtiError ddmc__jv_jt_RunAgentThread(ddmc__jv_jenv *e, jthread thread, ddmc__jv_jstart_fn proc, const void *arg,
                                      jint priority) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_LIVE);
  if (rc) return rc;
  if (proc == NULL) return JVMTI_ERROR_NULL_POINTER;
  if (priority < JVMTI_THREAD_MIN_PRIORITY || priority > JVMTI_THREAD_MAX_PRIORITY) return JVMTI_ERROR_INVALID_PRIORITY;
  ddmc__jvmti *jv = e->jv;
  ddmc__jv_cell c;
  if (thread == NULL || ddmc__jv_ref_get(jv, thread, &c) != 0 || c.cls != 0 || c.ref == 0)
    return JVMTI_ERROR_INVALID_THREAD;
  if (!ddmc__jv_is_thread_object(jv, c.ref)) return JVMTI_ERROR_INVALID_THREAD;
  /* Already started (a live thread has it): INVALID_THREAD, as the specification says. */
  uint32_t running;
  if (c.thread != 0 || ddmc__jv_thread_of(jv, thread, &running) == 0) return JVMTI_ERROR_INVALID_THREAD;
  if (jv->bridge == NULL || jv->bridge->start_agent_thread == NULL) return JVMTI_ERROR_NOT_AVAILABLE;
  start *st = malloc(sizeof(*st));
  if (st == NULL) return JVMTI_ERROR_OUT_OF_MEMORY;
  *st = (start){e, proc, arg};
  uint32_t id = 0;
  int r = jv->bridge->start_agent_thread(jv->bridge_data, c.ref, priority, agent_main, st, &id);
  if (r != 0) {
    free(st); /* the VM did not start it: run was never called */
    return r == DDMC_JDWP_INVALID_THREAD ? JVMTI_ERROR_INVALID_THREAD : ddmc__jv_err(r);
  }
  return JVMTI_ERROR_NONE;
}
