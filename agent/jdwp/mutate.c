/* SPDX-License-Identifier: Apache-2.0 */
/* HotSwap, Drop Frame and Force Return through JVM TI: the bridge's redefine_classes, pop_frames
 * and force_early_return, present when HotSpot granted can_redefine_classes, can_pop_frame and
 * can_force_early_return (agent.c takes them at OnLoad, as the JDK's agent does).
 *
 * PopFrame and ForceEarlyReturn want the thread suspended through JVM TI; the library's suspended
 * threads are often parked inside a callback instead (suspend.c, "Suspension"), so they run under
 * ja_with_suspended. JVM TI pops one frame per suspension: the frame is gone only once the thread
 * runs (until then HotSpot still shows it), and a second PopFrame before that fails. So the
 * frames popped are hidden from the frame ops (threads.c) until the thread runs, and a pop of n
 * frames pops the first now and the others as the thread runs: at each of its SingleStep events,
 * which come at the re-executed call of the frame below, before any bytecode of it runs. */
#include <stdlib.h>
#include <string.h>

#include "ja.h"

static int redefine_classes(void *vd, uint32_t n, const ddmc_class *classes, const uint8_t *const *bytes,
                            const uint32_t *lengths) {
  JNIEnv *env = ja_enter();
  if (env == NULL) return DDMC_JDWP_VM_DEAD;
  jvmtiClassDefinition *defs = calloc(n, sizeof *defs);
  int rc = defs == NULL ? DDMC_JDWP_OUT_OF_MEMORY : 0;
  for (uint32_t i = 0; i < n && rc == 0; i++) {
    defs[i].klass = (jclass)ja_kept_obj(classes[i]);
    defs[i].class_byte_count = (jint)lengths[i];
    defs[i].class_bytes = bytes[i];
    if (defs[i].klass == NULL || lengths[i] > INT32_MAX) rc = DDMC_JDWP_INVALID_CLASS;
  }
  if (rc == 0) {
    jvmtiError e = (*ja.ti)->RedefineClasses(ja.ti, (jint)n, defs);
    /* As the JDK's agent translates it: a class JVM TI may not change is not implemented. */
    rc = e == JVMTI_ERROR_UNMODIFIABLE_CLASS ? DDMC_JDWP_NOT_IMPLEMENTED : ja_err(e);
  }
  if (rc == 0)
    for (uint32_t i = 0; i < n; i++) ja_class_redefined(classes[i]);
  free(defs);
  ja_leave(env);
  return rc;
}

/* ---- PopFrames */

typedef struct pop_job {
  int32_t n;
  int32_t hidden; /* frames an earlier PopFrames already took (not yet gone in JVM TI) */
} pop_job;

/* Frames 0 .. n-1 must be Java frames whose caller (frame n) is a Java frame too: checked before
 * anything is popped, since the later pops happen when no one can answer with an error. */
static jvmtiError check_frames(jthread t, int32_t first, int32_t n) {
  jint count = 0;
  jvmtiError e = (*ja.ti)->GetFrameCount(ja.ti, t, &count);
  if (e != JVMTI_ERROR_NONE) return e;
  if (first + n >= count) return JVMTI_ERROR_NO_MORE_FRAMES;
  for (int32_t depth = first; depth <= first + n; depth++) {
    jmethodID m = NULL;
    jlocation l = -1;
    jboolean native = 0;
    if ((e = (*ja.ti)->GetFrameLocation(ja.ti, t, depth, &m, &l)) != JVMTI_ERROR_NONE) return e;
    if ((*ja.ti)->IsMethodNative(ja.ti, m, &native) == JVMTI_ERROR_NONE && native) return JVMTI_ERROR_OPAQUE_FRAME;
  }
  return JVMTI_ERROR_NONE;
}

static jvmtiError pop_now(jthread t, void *arg) {
  const pop_job *job = arg;
  jvmtiError e = check_frames(t, job->hidden, job->n);
  if (e != JVMTI_ERROR_NONE || job->hidden > 0) return e; /* stacked: popped at the next steps */
  return (*ja.ti)->PopFrame(ja.ti, t);
}

static int pop_frames(void *vd, uint32_t thread, int32_t n) {
  ja_tstate *e = ja_tstate_of(thread);
  if (e == NULL) return DDMC_JDWP_INVALID_THREAD;
  /* Pops of an earlier PopFrames not yet done (the thread has not run since: a debugger pops
   * one frame after another, as the conformance suite's PopFrames002 does): JVM TI pops one frame
   * per suspension, so these join the pending ones, popped at the thread's next SingleStep
   * events. A thread that ran since has shown its frames again (ja_thread_runs). */
  int32_t hidden = atomic_load(&e->hidden);
  if (hidden == 0 && atomic_load(&e->pops_pending) > 0) return DDMC_JDWP_OPAQUE_FRAME; /* ran, still popping */
  if ((n > 1 || hidden > 0) && !ja.caps.can_generate_single_step_events) return DDMC_JDWP_OPAQUE_FRAME;
  pop_job job = {n, hidden};
  jvmtiError r = ja_with_suspended(thread, pop_now, &job);
  if (r != JVMTI_ERROR_NONE) return ja_err(r);
  atomic_store(&e->hidden, hidden + n);
  if (hidden + n > 1) {
    atomic_store(&e->pops_pending, hidden + n - 1);
    (*ja.ti)->SetEventNotificationMode(ja.ti, JVMTI_ENABLE, JVMTI_EVENT_SINGLE_STEP, ja_thread(thread));
  }
  return 0;
}

int ja_pop_step(JNIEnv *env, jthread t) {
  uint64_t id = ja_named(t);
  ja_tstate *e = id ? ja_tstate_of(id) : NULL;
  if (e == NULL || atomic_load(&e->pops_pending) <= 0) return 0;
  /* The current thread may pop its own frame: no suspension needed. */
  (*ja.ti)->PopFrame(ja.ti, t);
  if (atomic_fetch_sub(&e->pops_pending, 1) == 1 && !atomic_load(&e->stepping))
    (*ja.ti)->SetEventNotificationMode(ja.ti, JVMTI_DISABLE, JVMTI_EVENT_SINGLE_STEP, t);
  return 1;
}

/* ---- ForceEarlyReturn */

typedef struct return_job {
  char tag;
  jvalue v;
} return_job;

static jvmtiError return_now(jthread t, void *arg) {
  const return_job *j = arg;
  switch (j->tag) {
  case 'V': return (*ja.ti)->ForceEarlyReturnVoid(ja.ti, t);
  case 'L': return (*ja.ti)->ForceEarlyReturnObject(ja.ti, t, j->v.l);
  case 'J': return (*ja.ti)->ForceEarlyReturnLong(ja.ti, t, j->v.j);
  case 'F': return (*ja.ti)->ForceEarlyReturnFloat(ja.ti, t, j->v.f);
  case 'D': return (*ja.ti)->ForceEarlyReturnDouble(ja.ti, t, j->v.d);
  default: return (*ja.ti)->ForceEarlyReturnInt(ja.ti, t, j->v.i);
  }
}

static int force_early_return(void *vd, uint32_t thread, const ddmc_value *val) {
  JNIEnv *env = ja_enter();
  if (env == NULL) return DDMC_JDWP_VM_DEAD;
  return_job job;
  memset(&job, 0, sizeof job);
  job.tag = val->tag;
  int rc = 0;
  switch (val->tag) {
  case 'V': break;
  case 'Z': case 'B': case 'C': case 'S': case 'I': job.v.i = val->u.i; break;
  default: rc = ja_value_out(val->tag, val, &job.v); break;
  }
  if (rc == 0) rc = ja_err(ja_with_suspended(thread, return_now, &job));
  ja_leave(env);
  return rc;
}

void ja_bridge_mutate(ddmc_vm_bridge *b) {
  if (ja.caps.can_redefine_classes) b->redefine_classes = redefine_classes;
  if (ja.caps.can_pop_frame) b->pop_frames = pop_frames;
  if (ja.caps.can_force_early_return) b->force_early_return = force_early_return;
}
