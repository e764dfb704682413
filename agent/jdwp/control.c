/* SPDX-License-Identifier: Apache-2.0 */
/* Execution control through JVM TI: interrupt, stop, breakpoints, single steps, field watches,
 * method and monitor events, and exit. Suspension is suspend.c's, a method call invoke.c's. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
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

/* A thread's entry (kept: its reference stays valid), NULL for any other number. */

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
  ja_tstate *e = ja_tstate_of(thread);
  jthread t = ja_thread(thread);
  if (e == NULL || t == NULL) return DDMC_JDWP_INVALID_THREAD;
  atomic_store(&e->stepping, on != 0);
  /* Pending pops (mutate.c) keep the thread's SingleStep events on until they are done. */
  if (!on && atomic_load(&e->pops_pending) > 0) return 0;
  jvmtiError r = (*ja.ti)->SetEventNotificationMode(ja.ti, on ? JVMTI_ENABLE : JVMTI_DISABLE, JVMTI_EVENT_SINGLE_STEP, t);
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

static void vm_exit(void *vd, int32_t status) {
  /* As the JDK's agent: the process ends now, without running Java shutdown hooks that might
   * wait for threads the debugger holds. */
  fflush(NULL);
  _exit(status);
}

void ja_bridge_control(ddmc_vm_bridge *b) {
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
  b->exit = vm_exit;
}
