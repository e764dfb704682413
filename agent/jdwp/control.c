/* SPDX-License-Identifier: Apache-2.0 */
/* Execution control through JVM TI: suspend / resume, interrupt, stop, breakpoints, single steps,
 * field watches, method events, a method call by JNI on the event thread, and exit. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ja.h"

/* Breakpoints the library set, so the events can say which location carries one (a single step
 * that lands on a breakpoint is one location event with both). Few: a linear scan. */
typedef struct bp {
  jmethodID m;
  jlocation l;
} bp;
static pthread_mutex_t bp_lock = PTHREAD_MUTEX_INITIALIZER;
static bp *bps;
static size_t nbps, capbps;

int ja_breakpoint_at(jmethodID m, jlocation l) {
  int found = 0;
  pthread_mutex_lock(&bp_lock);
  for (size_t i = 0; i < nbps && !found; i++) found = bps[i].m == m && bps[i].l == l;
  pthread_mutex_unlock(&bp_lock);
  return found;
}

/* Suspension. A thread that runs one of the agent's callbacks is in native code, where HotSpot's
 * SuspendThread does not stop it: it stops at its next JNI or JVM TI call instead. Inside a
 * callback that call may come while it holds a lock of libddmc (an event that suspends every
 * thread enumerates them under the library's suspension lock), and the JDWP thread that would
 * resume it waits for that lock: a deadlock. So a thread inside a callback is never suspended
 * through JVM TI: it is "gated", and stops on the agent's condition variable where its outermost
 * callback returns, before it runs bytecode again, until resume_thread opens the gate. A thread
 * JVM TI suspended just as it entered a callback stops at its first JVM TI call in
 * ja_callback_enter, before it takes any lock (a thread cannot resume itself). Threads outside
 * callbacks are suspended by JVM TI as usual. One lock for all threads: a leaf, never held across
 * a call into libddmc. */
static pthread_mutex_t sus_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sus_cv = PTHREAD_COND_INITIALIZER;

uint32_t ja_callback_enter(JNIEnv *env, jthread t) {
  uint32_t id = (uint32_t)ja_ref(env, t);
  ja_entry *e = ja_entry_of(id);
  if (e == NULL) {
    /* Threads are named from a reserve the bound on objects leaves alone: this takes 2^18 of
     * them alive at once. */
    if (t != NULL) fprintf(stderr, "ddmcjdwp: an event of a thread that cannot be named is not reported\n");
    return 0;
  }
  pthread_mutex_lock(&sus_mu);
  int stopped = e->in_callback++ == 0 && (e->ti_suspended || e->world == 1);
  pthread_mutex_unlock(&sus_mu);
  if (stopped) {
    /* Suspended by JVM TI just before the callback: the first JVM TI call stops it, here, where
     * it holds nothing, until resume_thread resumes it. */
    jint st = 0;
    (*ja.ti)->GetThreadState(ja.ti, t, &st);
  }
  return id;
}

void ja_callback_leave(uint32_t id) {
  ja_entry *e = ja_entry_of(id);
  if (e == NULL) return;
  pthread_mutex_lock(&sus_mu);
  if (--e->in_callback == 0) {
    while (e->gated || e->world == 2) pthread_cond_wait(&sus_cv, &sus_mu);
    ja_thread_runs(e);
  }
  pthread_mutex_unlock(&sus_mu);
}

void ja_thread_runs(ja_entry *e) { atomic_store(&e->hidden, 0); }

jvmtiError ja_with_suspended(uint32_t thread, jvmtiError (*fn)(jthread t, void *arg), void *arg) {
  jthread t = ja_thread(thread);
  ja_entry *e = t != NULL ? ja_entry_of(thread) : NULL;
  if (e == NULL) return JVMTI_ERROR_INVALID_THREAD;
  pthread_mutex_lock(&sus_mu);
  jvmtiError r;
  if (e->ti_suspended || e->world == 1) {
    r = fn(t, arg);
  } else {
    /* In native code (a callback): SuspendThread returns at once and the thread stays put. */
    r = (*ja.ti)->SuspendThread(ja.ti, t);
    int ours = r == JVMTI_ERROR_NONE;
    if (r == JVMTI_ERROR_NONE || r == JVMTI_ERROR_THREAD_SUSPENDED) r = fn(t, arg);
    if (ours) (*ja.ti)->ResumeThread(ja.ti, t);
  }
  pthread_mutex_unlock(&sus_mu);
  return r;
}

/* A thread's entry (kept: its reference stays valid), NULL for any other number. */
static ja_entry *thread_entry(uint32_t id) { return ja_thread(id) != NULL ? ja_entry_of(id) : NULL; }

static int suspend_thread(void *vd, uint32_t thread) {
  ja_entry *e = thread_entry(thread);
  if (e == NULL) return DDMC_JDWP_INVALID_THREAD;
  jvmtiError r = JVMTI_ERROR_NONE;
  pthread_mutex_lock(&sus_mu);
  if (e->world == 1) {
    /* Already stopped by JVM TI for a heap walk: the debugger's from now on. */
    e->world = 0;
    e->ti_suspended = 1;
  } else if (e->in_callback > 0) {
    e->gated = 1;
  } else if (!e->ti_suspended && !e->gated) {
    /* The target may be about to take sus_mu in ja_callback_enter: it is in native code then,
     * which SuspendThread does not wait for. */
    r = (*ja.ti)->SuspendThread(ja.ti, (jthread)e->ref);
    /* Already suspended (by another agent): stopped all the same. A thread that has ended is no
     * longer running anything to stop. */
    if (r == JVMTI_ERROR_NONE) e->ti_suspended = 1;
    if (r == JVMTI_ERROR_THREAD_SUSPENDED || r == JVMTI_ERROR_THREAD_NOT_ALIVE) r = JVMTI_ERROR_NONE;
  }
  pthread_mutex_unlock(&sus_mu);
  return ja_err(r);
}

static int resume_thread(void *vd, uint32_t thread) {
  ja_entry *e = thread_entry(thread);
  if (e == NULL) return DDMC_JDWP_INVALID_THREAD;
  jvmtiError r = JVMTI_ERROR_NONE;
  pthread_mutex_lock(&sus_mu);
  if (e->ti_suspended) {
    ja_thread_runs(e);
    r = (*ja.ti)->ResumeThread(ja.ti, (jthread)e->ref);
    e->ti_suspended = 0;
    if (r == JVMTI_ERROR_THREAD_NOT_SUSPENDED || r == JVMTI_ERROR_THREAD_NOT_ALIVE) r = JVMTI_ERROR_NONE;
  }
  if (e->gated) {
    e->gated = 0;
    pthread_cond_broadcast(&sus_cv);
  }
  pthread_mutex_unlock(&sus_mu);
  return ja_err(r);
}

/* The world for a heap walk: the same two ways of stopping a thread as suspend_thread, recorded
 * in world so that the debugger's suspensions are left as they are. A gated thread may still be
 * inside its callback while the walk runs (it touches no Java heap there unless it runs a method
 * call for the debugger); it runs no bytecode after it. */
static uint32_t *world_ids;
static jint world_n;

int ja_world_stop(JNIEnv *env) {
  jint n = 0;
  jthread *ts = NULL, self = NULL;
  if ((*ja.ti)->GetAllThreads(ja.ti, &n, &ts) != JVMTI_ERROR_NONE) return DDMC_JDWP_INTERNAL;
  (*ja.ti)->GetCurrentThread(ja.ti, &self);
  uint32_t me = self ? (uint32_t)ja_ref(env, self) : 0;
  world_ids = calloc((size_t)n + 1, sizeof *world_ids);
  world_n = 0;
  for (jint i = 0; i < n; i++) {
    uint32_t id = (uint32_t)ja_ref(env, ts[i]);
    ja_entry *e = ja_entry_of(id);
    if (e != NULL && id != me && !atomic_load(&e->internal) && world_ids != NULL) {
      pthread_mutex_lock(&sus_mu);
      if (e->in_callback > 0) {
        e->world = 2;
      } else if (!e->ti_suspended && !e->gated && (*ja.ti)->SuspendThread(ja.ti, ts[i]) == JVMTI_ERROR_NONE) {
        e->world = 1;
      }
      pthread_mutex_unlock(&sus_mu);
      world_ids[world_n++] = id;
    }
    (*env)->DeleteLocalRef(env, ts[i]);
  }
  if (self) (*env)->DeleteLocalRef(env, self);
  (*ja.ti)->Deallocate(ja.ti, (unsigned char *)ts);
  return world_ids != NULL ? 0 : DDMC_JDWP_OUT_OF_MEMORY;
}

void ja_world_resume(void) {
  pthread_mutex_lock(&sus_mu);
  for (jint i = 0; i < world_n; i++) {
    ja_entry *e = ja_entry_of(world_ids[i]);
    if (e == NULL) continue;
    if (e->world == 1) (*ja.ti)->ResumeThread(ja.ti, (jthread)e->ref);
    e->world = 0;
  }
  pthread_cond_broadcast(&sus_cv);
  pthread_mutex_unlock(&sus_mu);
  free(world_ids);
  world_ids = NULL;
  world_n = 0;
}

/* A thread parked inside a post call is inside a JVM TI callback: in native code, which HotSpot's
 * safepoints and collector never wait for. Only noted, for THST: a thread stopped at a breakpoint
 * is suspended to a DDM monitor beside the debugger (ddm.c), not "native". */
static void thread_parking(void *vd, uint32_t thread, int parked) {
  ja_entry *e = ja_entry_of(thread);
  if (e != NULL) atomic_store_explicit(&e->parked, parked, memory_order_relaxed);
}

static int interrupt_thread(void *vd, uint32_t thread) {
  jthread t = ja_thread(thread);
  if (t == NULL) return DDMC_JDWP_INVALID_THREAD;
  return ja_err((*ja.ti)->InterruptThread(ja.ti, t));
}

static int stop_thread(void *vd, uint32_t thread, ddmc_ref exc) {
  jthread t = ja_thread(thread);
  if (t == NULL) return DDMC_JDWP_INVALID_THREAD;
  /* StopThread takes any object and HotSpot throws it unchecked: a thread that "throws" a
   * non-Throwable crashes the VM (SIGSEGV) once it runs. */
  JNIEnv *env = ja_enter();
  if (env == NULL) return DDMC_JDWP_VM_DEAD;
  jobject x = ja_obj(exc);
  jclass throwable = x ? ja_known(env, JA_KNOWN_THROWABLE) : NULL;
  int is = throwable != NULL && (*env)->IsInstanceOf(env, x, throwable);
  if ((*env)->ExceptionCheck(env)) (*env)->ExceptionClear(env);
  int rc = x == NULL ? DDMC_JDWP_INVALID_OBJECT : !is ? DDMC_JDWP_INVALID_CLASS : ja_err((*ja.ti)->StopThread(ja.ti, t, x));
  ja_leave(env);
  return rc;
}

static jmethodID method_id(const ddmc_location *loc, int *err) {
  ja_method *m = ja_method_of(loc->cls, loc->method, err);
  return m ? m->id : NULL;
}

static int32_t be32(const unsigned char *p) {
  return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]);
}

/* The length of the JVM instruction at pc of code[0, n), 0 when it does not fit or is no opcode.
 * The switches are padded to a multiple of 4 from the method's start (JVMS 6.5). */
static size_t insn_length(const unsigned char *code, size_t n, size_t pc) {
  static const char kFixed[] = /* per opcode; 0: variable or not an opcode */
      "1111111111111111" "2323322222111111" "1111111111111111" "1111112222211111" /* 0x00-0x3f */
      "1111111111111111" "1111111111111111" "1111111111111111" "1111111111111111" /* 0x40-0x7f */
      "1111311111111111" "1111111113333333" "3333333332001111" "1133333335532311" /* 0x80-0xbf */
      "3311043355"; /* 0xc0-0xc9 */
  unsigned op = code[pc];
  size_t len = op < sizeof(kFixed) - 1 && kFixed[op] >= '1' ? (size_t)(kFixed[op] - '0') : 0;
  if (op == 0xc4) /* wide: iinc's form is longer */
    len = pc + 1 < n ? (code[pc + 1] == 0x84 ? 6 : 4) : 0;
  if (op == 0xaa || op == 0xab) { /* tableswitch: default low high offsets; lookupswitch: default npairs pairs */
    size_t at = (pc + 4) & ~(size_t)3, head = op == 0xaa ? 12 : 8; /* past the padding */
    if (at + head > n) return 0;
    int64_t a = be32(code + at + 4), entries = op == 0xaa ? be32(code + at + 8) - a + 1 : 2 * a;
    if (entries < 0 || entries > (int64_t)n) return 0;
    len = at + head + 4 * (size_t)entries - pc;
  }
  return len > 0 && len <= n - pc ? len : 0;
}

/* Is l where an instruction of m starts? HotSpot's SetBreakpoint checks only that l is inside the
 * method: a breakpoint in the middle of an instruction overwrites one of its operands, and the JVM
 * dies when it runs it (under the JDK's agent too). Without the bytecodes, the range check alone. */
static int insn_start(jmethodID m, jlocation l) {
  if (!ja.caps.can_get_bytecodes) return 1;
  jint n = 0;
  unsigned char *code = NULL;
  if ((*ja.ti)->GetBytecodes(ja.ti, m, &n, &code) != JVMTI_ERROR_NONE) return 1;
  size_t pc = 0;
  while (n > 0 && pc < (size_t)n && (jlocation)pc < l) {
    size_t len = insn_length(code, (size_t)n, pc);
    if (len == 0) break; /* not code it knows: refused, never risked */
    pc += len;
  }
  (*ja.ti)->Deallocate(ja.ti, code);
  return (jlocation)pc == l && l < (jlocation)n;
}

static int set_breakpoint(void *vd, const ddmc_location *loc) {
  int err = 0;
  jmethodID m = method_id(loc, &err);
  if (m == NULL) return err;
  if (!insn_start(m, (jlocation)loc->index)) return DDMC_JDWP_INVALID_LOCATION;
  pthread_mutex_lock(&bp_lock);
  if (nbps == capbps) {
    size_t nc = capbps ? capbps * 2 : 16;
    bp *n = realloc(bps, nc * sizeof *n);
    if (n == NULL) {
      pthread_mutex_unlock(&bp_lock);
      return DDMC_JDWP_OUT_OF_MEMORY;
    }
    bps = n;
    capbps = nc;
  }
  bps[nbps++] = (bp){m, (jlocation)loc->index};
  pthread_mutex_unlock(&bp_lock);
  jvmtiError e = (*ja.ti)->SetBreakpoint(ja.ti, m, (jlocation)loc->index);
  if (e == JVMTI_ERROR_DUPLICATE) e = JVMTI_ERROR_NONE;
  if (e != JVMTI_ERROR_NONE) {
    pthread_mutex_lock(&bp_lock);
    nbps--;
    pthread_mutex_unlock(&bp_lock);
  }
  return ja_err(e);
}

static int clear_breakpoint(void *vd, const ddmc_location *loc) {
  int err = 0;
  jmethodID m = method_id(loc, &err);
  if (m == NULL) return err;
  pthread_mutex_lock(&bp_lock);
  for (size_t i = 0; i < nbps; i++) {
    if (bps[i].m == m && bps[i].l == (jlocation)loc->index) {
      bps[i] = bps[--nbps];
      break;
    }
  }
  pthread_mutex_unlock(&bp_lock);
  jvmtiError e = (*ja.ti)->ClearBreakpoint(ja.ti, m, (jlocation)loc->index);
  return e == JVMTI_ERROR_NOT_FOUND ? 0 : ja_err(e);
}

static int set_stepping(void *vd, uint32_t thread, int on) {
  ja_entry *e = thread_entry(thread);
  if (e == NULL) return DDMC_JDWP_INVALID_THREAD;
  atomic_store(&e->stepping, on != 0);
  /* Pending pops (mutate.c) keep the thread's SingleStep events on until they are done. */
  if (!on && atomic_load(&e->pops_pending) > 0) return 0;
  jvmtiError r = (*ja.ti)->SetEventNotificationMode(ja.ti, on ? JVMTI_ENABLE : JVMTI_DISABLE, JVMTI_EVENT_SINGLE_STEP,
                                                    (jthread)e->ref);
  if (r == JVMTI_ERROR_THREAD_NOT_ALIVE) r = JVMTI_ERROR_NONE;
  return ja_err(r);
}

static int set_field_watch(void *vd, ddmc_class c, uint32_t field, unsigned watch) {
  int err = 0;
  ja_field *f = ja_field_of(c, field, &err);
  if (f == NULL) return err;
  jclass k = (jclass)ja_kept_obj(c);
  jvmtiError e;
  /* DUPLICATE / NOT_FOUND: the watch already is as wanted. */
  e = (watch & DDMC_WATCH_ACCESS) ? (*ja.ti)->SetFieldAccessWatch(ja.ti, k, f->id)
                                  : (*ja.ti)->ClearFieldAccessWatch(ja.ti, k, f->id);
  if (e != JVMTI_ERROR_NONE && e != JVMTI_ERROR_DUPLICATE && e != JVMTI_ERROR_NOT_FOUND) return ja_err(e);
  e = (watch & DDMC_WATCH_MODIFY) ? (*ja.ti)->SetFieldModificationWatch(ja.ti, k, f->id)
                                  : (*ja.ti)->ClearFieldModificationWatch(ja.ti, k, f->id);
  if (e != JVMTI_ERROR_NONE && e != JVMTI_ERROR_DUPLICATE && e != JVMTI_ERROR_NOT_FOUND) return ja_err(e);
  return 0;
}

static int set_method_events(void *vd, int on) {
  jvmtiEventMode mode = on ? JVMTI_ENABLE : JVMTI_DISABLE;
  atomic_store(&ja.method_events, on != 0);
  jvmtiError e = (*ja.ti)->SetEventNotificationMode(ja.ti, mode, JVMTI_EVENT_METHOD_ENTRY, NULL);
  if (e == JVMTI_ERROR_NONE) e = (*ja.ti)->SetEventNotificationMode(ja.ti, mode, JVMTI_EVENT_METHOD_EXIT, NULL);
  return ja_err(e);
}

/* HotSpot reports the four monitor events only while some client of the library wants one (the
 * library's switch, bridge.h): a JVM with them enabled pays at every contended enter and wait.
 * events.c then reports each one ddmc_event_wanted says is wanted. The op has no error to give:
 * a refusal (which the capability taken at OnLoad rules out) leaves the events off, and stderr
 * says so. */
static void set_monitor_events(void *vd, int on) {
  static const jvmtiEvent kinds[] = {JVMTI_EVENT_MONITOR_CONTENDED_ENTER, JVMTI_EVENT_MONITOR_CONTENDED_ENTERED,
                                     JVMTI_EVENT_MONITOR_WAIT, JVMTI_EVENT_MONITOR_WAITED};
  jvmtiEventMode mode = on ? JVMTI_ENABLE : JVMTI_DISABLE;
  for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
    jvmtiError e = (*ja.ti)->SetEventNotificationMode(ja.ti, mode, kinds[i], NULL);
    if (e != JVMTI_ERROR_NONE) fprintf(stderr, "ddmcjdwp: monitor events %s: JVMTI error %d\n", on ? "on" : "off", (int)e);
  }
}

/* The type letters of a descriptor's arguments ('L' for any reference), and of its result. */
static int parse_sig(const char *sig, char *args, int max, int *n, char *ret) {
  const char *p = sig;
  int k = 0;
  if (*p++ != '(') return -1;
  while (*p && *p != ')') {
    char t = *p;
    if (t == '[') {
      while (*p == '[') p++;
      if (*p == 'L') p = strchr(p, ';');
      if (p == NULL) return -1;
      p++;
      t = 'L';
    } else if (t == 'L') {
      p = strchr(p, ';');
      if (p == NULL) return -1;
      p++;
    } else {
      p++;
    }
    if (k >= max) return -1;
    args[k++] = t;
  }
  if (*p != ')') return -1;
  *ret = p[1] == '[' ? 'L' : p[1];
  *n = k;
  return 0;
}

/* The JNI call of method id for result type rt: static on k, nonvirtual (k's own method) or
 * virtual on obj. The result is zero for 'V'; an exception is left pending in env. */
static jvalue call_static(JNIEnv *env, jclass k, jmethodID id, char rt, const jvalue *jargs) {
  jvalue r;
  memset(&r, 0, sizeof r);
  switch (rt) {
  case 'Z': r.z = (*env)->CallStaticBooleanMethodA(env, k, id, jargs); break;
  case 'B': r.b = (*env)->CallStaticByteMethodA(env, k, id, jargs); break;
  case 'C': r.c = (*env)->CallStaticCharMethodA(env, k, id, jargs); break;
  case 'S': r.s = (*env)->CallStaticShortMethodA(env, k, id, jargs); break;
  case 'I': r.i = (*env)->CallStaticIntMethodA(env, k, id, jargs); break;
  case 'J': r.j = (*env)->CallStaticLongMethodA(env, k, id, jargs); break;
  case 'F': r.f = (*env)->CallStaticFloatMethodA(env, k, id, jargs); break;
  case 'D': r.d = (*env)->CallStaticDoubleMethodA(env, k, id, jargs); break;
  case 'V': (*env)->CallStaticVoidMethodA(env, k, id, jargs); break;
  default: r.l = (*env)->CallStaticObjectMethodA(env, k, id, jargs); break;
  }
  return r;
}

static jvalue call_nonvirtual(JNIEnv *env, jobject obj, jclass k, jmethodID id, char rt, const jvalue *jargs) {
  jvalue r;
  memset(&r, 0, sizeof r);
  switch (rt) {
  case 'Z': r.z = (*env)->CallNonvirtualBooleanMethodA(env, obj, k, id, jargs); break;
  case 'B': r.b = (*env)->CallNonvirtualByteMethodA(env, obj, k, id, jargs); break;
  case 'C': r.c = (*env)->CallNonvirtualCharMethodA(env, obj, k, id, jargs); break;
  case 'S': r.s = (*env)->CallNonvirtualShortMethodA(env, obj, k, id, jargs); break;
  case 'I': r.i = (*env)->CallNonvirtualIntMethodA(env, obj, k, id, jargs); break;
  case 'J': r.j = (*env)->CallNonvirtualLongMethodA(env, obj, k, id, jargs); break;
  case 'F': r.f = (*env)->CallNonvirtualFloatMethodA(env, obj, k, id, jargs); break;
  case 'D': r.d = (*env)->CallNonvirtualDoubleMethodA(env, obj, k, id, jargs); break;
  case 'V': (*env)->CallNonvirtualVoidMethodA(env, obj, k, id, jargs); break;
  default: r.l = (*env)->CallNonvirtualObjectMethodA(env, obj, k, id, jargs); break;
  }
  return r;
}

static jvalue call_virtual(JNIEnv *env, jobject obj, jmethodID id, char rt, const jvalue *jargs) {
  jvalue r;
  memset(&r, 0, sizeof r);
  switch (rt) {
  case 'Z': r.z = (*env)->CallBooleanMethodA(env, obj, id, jargs); break;
  case 'B': r.b = (*env)->CallByteMethodA(env, obj, id, jargs); break;
  case 'C': r.c = (*env)->CallCharMethodA(env, obj, id, jargs); break;
  case 'S': r.s = (*env)->CallShortMethodA(env, obj, id, jargs); break;
  case 'I': r.i = (*env)->CallIntMethodA(env, obj, id, jargs); break;
  case 'J': r.j = (*env)->CallLongMethodA(env, obj, id, jargs); break;
  case 'F': r.f = (*env)->CallFloatMethodA(env, obj, id, jargs); break;
  case 'D': r.d = (*env)->CallDoubleMethodA(env, obj, id, jargs); break;
  case 'V': (*env)->CallVoidMethodA(env, obj, id, jargs); break;
  default: r.l = (*env)->CallObjectMethodA(env, obj, id, jargs); break;
  }
  return r;
}

static int invoke(void *vd, uint32_t thread, ddmc_class c, uint32_t method, ddmc_ref this_obj, const ddmc_value *args,
                  int32_t nargs, int options, ddmc_value *result, ddmc_ref *exception) {
  int err = 0;
  ja_method *m = ja_method_of(c, method, &err);
  if (m == NULL) return err;
  char types[256], rt;
  int n = 0;
  if (parse_sig(m->sig, types, (int)sizeof types, &n, &rt) || n != nargs) return DDMC_JDWP_ILLEGAL_ARGUMENT;
  jvalue jargs[256];
  JNIEnv *env = ja_enter();
  if (env == NULL) return DDMC_JDWP_VM_DEAD;
  for (int i = 0; i < n && err == 0; i++) err = ja_value_out(types[i], &args[i], &jargs[i]);
  jclass k = (jclass)ja_kept_obj(c);
  jobject obj = this_obj ? ja_obj(this_obj) : NULL;
  if (err == 0 && this_obj && obj == NULL) err = DDMC_JDWP_INVALID_OBJECT;
  int construct = (options & DDMC_INVOKE_CONSTRUCT) != 0, is_static = (m->mods & DDMC_ACC_STATIC) != 0;
  if (err == 0 && !construct && !is_static && obj == NULL) err = DDMC_JDWP_INVALID_OBJECT;
  if (err != 0) {
    ja_leave(env);
    return err;
  }
  jvalue r;
  jmethodID id = m->id;
  int paused = ja_events_pause(); /* the debugger's call reports its events (events.c) */
  if (construct) {
    memset(&r, 0, sizeof r);
    r.l = (*env)->NewObjectA(env, k, id, jargs);
    rt = 'L';
  } else if (is_static) {
    r = call_static(env, k, id, rt, jargs);
  } else if (options & DDMC_INVOKE_NONVIRTUAL) {
    r = call_nonvirtual(env, obj, k, id, rt, jargs);
  } else {
    r = call_virtual(env, obj, id, rt, jargs);
  }
  ja_events_unpause(paused);
  jthrowable x = (*env)->ExceptionOccurred(env);
  *exception = 0;
  if (x) {
    (*env)->ExceptionClear(env);
    *exception = ja_ref(env, x);
    if (*exception == 0) err = DDMC_JDWP_OUT_OF_MEMORY; /* the table is full: never "no exception" */
    memset(&r, 0, sizeof r);
  }
  if (err == 0) err = ja_value_in(env, rt, r, result);
  ja_leave(env);
  return err;
}

static void vm_exit(void *vd, int32_t status) {
  /* As the JDK's agent: the process ends now, without running Java shutdown hooks that might
   * wait for threads the debugger holds. */
  fflush(NULL);
  _exit(status);
}

void ja_bridge_control(ddmc_vm_bridge *b) {
  if (ja.caps.can_suspend) {
    b->suspend_thread = suspend_thread;
    b->resume_thread = resume_thread;
  }
  b->thread_parking = thread_parking;
  if (ja.caps.can_signal_thread) {
    b->interrupt_thread = interrupt_thread;
    b->stop_thread = stop_thread;
  }
  if (ja.caps.can_generate_breakpoint_events) {
    b->set_breakpoint = set_breakpoint;
    b->clear_breakpoint = clear_breakpoint;
  }
  if (ja.caps.can_generate_single_step_events) b->set_stepping = set_stepping;
  if (ja.caps.can_generate_field_access_events && ja.caps.can_generate_field_modification_events)
    b->set_field_watch = set_field_watch;
  if (ja.caps.can_generate_method_entry_events && ja.caps.can_generate_method_exit_events)
    b->set_method_events = set_method_events;
  if (ja.caps.can_generate_monitor_events) b->set_monitor_events = set_monitor_events;
  b->invoke = invoke;
  b->exit = vm_exit;
}
