/* SPDX-License-Identifier: Apache-2.0 */
/* jdebug: a JVM TI agent that debugs one class the way a debugger back-end does, written for
 * HotSpot against the JDK's jvmti.h. tests/jvmti/run_agents.py runs it on minivm (dbg.mvm) and
 * on HotSpot (tests/jvmti/Dbg.java) and expects the same lines from both.
 *
 *   -agentpath:libjdebug.so=CLASS,METHOD,FIELD[,allocs]   (defaults: Dbg,compute,counter)
 *
 * When CLASS is ready (already loaded at VMInit, or at its ClassPrepare) it sets a breakpoint at
 * METHOD's first line and watches FIELD (reads and writes). At the breakpoint it reads the
 * first parameter, writes it + 1 back (the program's output shows the change), and single-steps
 * the thread, printing each new line, until METHOD returns. It reports exceptions thrown in
 * CLASS with their handler, and handlers entered in CLASS. Everything is printed by source line
 * (GetLineNumberTable) and by variable name (GetLocalVariableTable), never by raw location or
 * slot, which differ between VMs.
 *
 * With allocs it also counts VMObjectAlloc (objects the VM made itself, not bytecode's `new`) of
 * exception classes, and prints "jdebug: VM allocated SIGNATURE N" for each at VMDeath. */
#include <jvmti.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char g_class[256] = "LDbg;", g_method[128] = "compute", g_field[128] = "counter";
static int g_ready, g_stepping, g_last_line = -1;
static int n_bp, n_step, n_access, n_modify, n_exc, n_catch;
static jmethodID g_target;
static int g_allocs;
static struct {
  char sig[120];
  int n;
} g_alloc[32];
static int g_nalloc;

static void check(jvmtiEnv *jvmti, jvmtiError err, const char *what) {
  if (err == JVMTI_ERROR_NONE) return;
  char *name = NULL;
  (*jvmti)->GetErrorName(jvmti, err, &name);
  printf("jdebug: %s failed: %s (%d)\n", what, name ? name : "?", err);
  if (name) (*jvmti)->Deallocate(jvmti, (unsigned char *)name);
}

/* The source line of location in method, or -1. */
static int line_of(jvmtiEnv *jvmti, jmethodID m, jlocation loc) {
  jint n = 0;
  jvmtiLineNumberEntry *t = NULL;
  if ((*jvmti)->GetLineNumberTable(jvmti, m, &n, &t) != JVMTI_ERROR_NONE) return -1;
  int line = -1;
  jlocation best = -1;
  for (jint i = 0; i < n; i++)
    if (t[i].start_location <= loc && t[i].start_location >= best) {
      best = t[i].start_location;
      line = t[i].line_number;
    }
  (*jvmti)->Deallocate(jvmti, (unsigned char *)t);
  return line;
}

/* "Class.method" into buf; the class signature into sig (may be NULL). */
static void method_name(jvmtiEnv *jvmti, jmethodID m, char *buf, size_t n, char *sig, size_t nsig) {
  char *name = NULL, *csig = NULL;
  jclass k = NULL;
  (*jvmti)->GetMethodName(jvmti, m, &name, NULL, NULL);
  (*jvmti)->GetMethodDeclaringClass(jvmti, m, &k);
  if (k) (*jvmti)->GetClassSignature(jvmti, k, &csig, NULL);
  const char *c = csig ? csig : "L?;";
  snprintf(buf, n, "%.*s.%s", (int)(strlen(c) - 2), c + 1, name ? name : "?");
  if (sig) snprintf(sig, nsig, "%s", c);
  if (name) (*jvmti)->Deallocate(jvmti, (unsigned char *)name);
  if (csig) (*jvmti)->Deallocate(jvmti, (unsigned char *)csig);
}

static int in_class(jvmtiEnv *jvmti, jmethodID m) {
  char buf[256], sig[256];
  method_name(jvmti, m, buf, sizeof buf, sig, sizeof sig);
  return strcmp(sig, g_class) == 0;
}

static void class_sig_of(jvmtiEnv *jvmti, JNIEnv *jni, jobject o, char *out, size_t n) {
  jclass k = (*jni)->GetObjectClass(jni, o);
  char *sig = NULL;
  if (k) (*jvmti)->GetClassSignature(jvmti, k, &sig, NULL);
  snprintf(out, n, "%s", sig ? sig : "?");
  if (sig) (*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
}

/* The slot of the variable called name live at loc in m, or -1. */
static jint slot_of(jvmtiEnv *jvmti, jmethodID m, jlocation loc, const char *name) {
  jint n = 0, slot = -1;
  jvmtiLocalVariableEntry *t = NULL;
  if ((*jvmti)->GetLocalVariableTable(jvmti, m, &n, &t) != JVMTI_ERROR_NONE) return -1;
  for (jint i = 0; i < n; i++) {
    if (slot < 0 && strcmp(t[i].name, name) == 0 && t[i].start_location <= loc &&
        loc < t[i].start_location + t[i].length)
      slot = t[i].slot;
    (*jvmti)->Deallocate(jvmti, (unsigned char *)t[i].name);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)t[i].signature);
    if (t[i].generic_signature) (*jvmti)->Deallocate(jvmti, (unsigned char *)t[i].generic_signature);
  }
  (*jvmti)->Deallocate(jvmti, (unsigned char *)t);
  return slot;
}

static void set_up(jvmtiEnv *jvmti, jclass k) {
  if (g_ready) return;
  g_ready = 1;
  jint nm = 0, nf = 0;
  jmethodID *ms = NULL;
  jfieldID *fs = NULL;
  check(jvmti, (*jvmti)->GetClassMethods(jvmti, k, &nm, &ms), "GetClassMethods");
  for (jint i = 0; i < nm; i++) {
    char *name = NULL;
    (*jvmti)->GetMethodName(jvmti, ms[i], &name, NULL, NULL);
    if (name && strcmp(name, g_method) == 0) {
      jlocation start, end;
      check(jvmti, (*jvmti)->GetMethodLocation(jvmti, ms[i], &start, &end), "GetMethodLocation");
      check(jvmti, (*jvmti)->SetBreakpoint(jvmti, ms[i], start), "SetBreakpoint");
      /* Twice is DUPLICATE; clearing what was never set is NOT_FOUND. */
      printf("jdebug: breakpoint at %s line %d (again: %d, clear elsewhere: %d)\n", g_method,
             line_of(jvmti, ms[i], start), (*jvmti)->SetBreakpoint(jvmti, ms[i], start),
             (*jvmti)->ClearBreakpoint(jvmti, ms[i], end));
      g_target = ms[i];
    }
    if (name) (*jvmti)->Deallocate(jvmti, (unsigned char *)name);
  }
  check(jvmti, (*jvmti)->GetClassFields(jvmti, k, &nf, &fs), "GetClassFields");
  for (jint i = 0; i < nf; i++) {
    char *name = NULL;
    (*jvmti)->GetFieldName(jvmti, k, fs[i], &name, NULL, NULL);
    if (name && strcmp(name, g_field) == 0) {
      check(jvmti, (*jvmti)->SetFieldAccessWatch(jvmti, k, fs[i]), "SetFieldAccessWatch");
      check(jvmti, (*jvmti)->SetFieldModificationWatch(jvmti, k, fs[i]), "SetFieldModificationWatch");
      printf("jdebug: watching %s (again: %d)\n", g_field, (*jvmti)->SetFieldAccessWatch(jvmti, k, fs[i]));
    }
    if (name) (*jvmti)->Deallocate(jvmti, (unsigned char *)name);
  }
  (*jvmti)->Deallocate(jvmti, (unsigned char *)ms);
  (*jvmti)->Deallocate(jvmti, (unsigned char *)fs);
}

static void JNICALL on_class_prepare(jvmtiEnv *jvmti, JNIEnv *jni, jthread t, jclass k) {
  char *sig = NULL;
  if ((*jvmti)->GetClassSignature(jvmti, k, &sig, NULL) != JVMTI_ERROR_NONE) return;
  if (strcmp(sig, g_class) == 0) set_up(jvmti, k);
  (*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
}

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread t) {
  jint n = 0;
  jclass *ks = NULL;
  if ((*jvmti)->GetLoadedClasses(jvmti, &n, &ks) != JVMTI_ERROR_NONE) return;
  for (jint i = 0; i < n && !g_ready; i++) {
    char *sig = NULL;
    jint status = 0;
    if ((*jvmti)->GetClassSignature(jvmti, ks[i], &sig, NULL) != JVMTI_ERROR_NONE) continue;
    (*jvmti)->GetClassStatus(jvmti, ks[i], &status);
    if (strcmp(sig, g_class) == 0 && (status & JVMTI_CLASS_STATUS_PREPARED)) set_up(jvmti, ks[i]);
    (*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
  }
  (*jvmti)->Deallocate(jvmti, (unsigned char *)ks);
}

static void JNICALL on_breakpoint(jvmtiEnv *jvmti, JNIEnv *jni, jthread t, jmethodID m, jlocation loc) {
  n_bp++;
  char name[256];
  method_name(jvmti, m, name, sizeof name, NULL, 0);
  jint slot = slot_of(jvmti, m, loc, "x");
  jint x = 0;
  check(jvmti, (*jvmti)->GetLocalInt(jvmti, t, 0, slot, &x), "GetLocalInt");
  jlong wrong;
  printf("jdebug: breakpoint in %s line %d: x = %d (as a long: %d, bad slot: %d)\n", name, line_of(jvmti, m, loc),
         x, (*jvmti)->GetLocalLong(jvmti, t, 0, slot, &wrong), (*jvmti)->GetLocalInt(jvmti, t, 0, 99, &x));
  check(jvmti, (*jvmti)->SetLocalInt(jvmti, t, 0, slot, x + 1), "SetLocalInt");
  check(jvmti, (*jvmti)->GetLocalInt(jvmti, t, 0, slot, &x), "GetLocalInt");
  printf("jdebug: x set to %d; stepping\n", x);
  g_stepping = 1;
  g_last_line = line_of(jvmti, m, loc);
  check(jvmti, (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_SINGLE_STEP, t), "step on");
}

static void JNICALL on_step(jvmtiEnv *jvmti, JNIEnv *jni, jthread t, jmethodID m, jlocation loc) {
  if (!g_stepping) return;
  n_step++;
  int line = line_of(jvmti, m, loc);
  char name[256];
  method_name(jvmti, m, name, sizeof name, NULL, 0);
  if (m != g_target) {
    printf("jdebug: stepped out to %s line %d\n", name, line);
    g_stepping = 0;
    check(jvmti, (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_DISABLE, JVMTI_EVENT_SINGLE_STEP, t), "step off");
    return;
  }
  if (line != g_last_line) printf("jdebug: step to %s line %d\n", name, line);
  g_last_line = line;
}

static void field_event(jvmtiEnv *jvmti, jmethodID m, jlocation loc, jclass k, jfieldID f, const char *what,
                        const char *value) {
  char name[256], *fname = NULL;
  method_name(jvmti, m, name, sizeof name, NULL, 0);
  (*jvmti)->GetFieldName(jvmti, k, f, &fname, NULL, NULL);
  printf("jdebug: %s of %s%s in %s line %d\n", what, fname ? fname : "?", value, name, line_of(jvmti, m, loc));
  if (fname) (*jvmti)->Deallocate(jvmti, (unsigned char *)fname);
}

static void JNICALL on_access(jvmtiEnv *jvmti, JNIEnv *jni, jthread t, jmethodID m, jlocation loc, jclass k,
                              jobject o, jfieldID f) {
  n_access++;
  field_event(jvmti, m, loc, k, f, "read", "");
}

static void JNICALL on_modify(jvmtiEnv *jvmti, JNIEnv *jni, jthread t, jmethodID m, jlocation loc, jclass k,
                              jobject o, jfieldID f, char type, jvalue v) {
  n_modify++;
  char value[64];
  snprintf(value, sizeof value, " = %d (%c)", type == 'I' ? v.i : -1, type);
  field_event(jvmti, m, loc, k, f, "write", value);
}

static void JNICALL on_exception(jvmtiEnv *jvmti, JNIEnv *jni, jthread t, jmethodID m, jlocation loc, jobject exc,
                                 jmethodID cm, jlocation cloc) {
  if (!in_class(jvmti, m)) return;
  n_exc++;
  char name[256], cname[256] = "nowhere", sig[256];
  method_name(jvmti, m, name, sizeof name, NULL, 0);
  if (cm) method_name(jvmti, cm, cname, sizeof cname, NULL, 0);
  class_sig_of(jvmti, jni, exc, sig, sizeof sig);
  printf("jdebug: %s thrown in %s line %d, to be caught in %s line %d\n", sig, name, line_of(jvmti, m, loc), cname,
         cm ? line_of(jvmti, cm, cloc) : -1);
}

static void JNICALL on_catch(jvmtiEnv *jvmti, JNIEnv *jni, jthread t, jmethodID m, jlocation loc, jobject exc) {
  if (!in_class(jvmti, m)) return;
  n_catch++;
  char name[256], sig[256];
  method_name(jvmti, m, name, sizeof name, NULL, 0);
  class_sig_of(jvmti, jni, exc, sig, sizeof sig);
  printf("jdebug: %s caught in %s line %d\n", sig, name, line_of(jvmti, m, loc));
}

/* Events come from any thread: the table is filled under no lock, so only exception classes of
 * single-threaded programs are counted (what the test runs). */
static void JNICALL on_vm_alloc(jvmtiEnv *jvmti, JNIEnv *jni, jthread t, jobject o, jclass k, jlong size) {
  char *sig = NULL;
  if ((*jvmti)->GetClassSignature(jvmti, k, &sig, NULL) != JVMTI_ERROR_NONE) return;
  size_t n = strlen(sig);
  if (n > 10 && strcmp(sig + n - 10, "Exception;") == 0) {
    int i = 0;
    while (i < g_nalloc && strcmp(g_alloc[i].sig, sig) != 0) i++;
    if (i == g_nalloc && g_nalloc < 32) snprintf(g_alloc[g_nalloc++].sig, sizeof g_alloc[0].sig, "%s", sig);
    if (i < g_nalloc) g_alloc[i].n++;
  }
  (*jvmti)->Deallocate(jvmti, (unsigned char *)sig);
}

static int by_sig(const void *a, const void *b) { return strcmp((const char *)a, (const char *)b); }

static void JNICALL on_vm_death(jvmtiEnv *jvmti, JNIEnv *jni) {
  qsort(g_alloc, (size_t)g_nalloc, sizeof g_alloc[0], by_sig);
  for (int i = 0; i < g_nalloc; i++) printf("jdebug: VM allocated %s %d\n", g_alloc[i].sig, g_alloc[i].n);
  printf("jdebug: %d breakpoint, %d reads, %d writes, %d exception, %d catch, stepped %s\n", n_bp, n_access, n_modify,
         n_exc, n_catch, n_step > 0 ? "yes" : "no");
  fflush(stdout);
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved) {
  if (options && *options) {
    char c[200] = "", m[128] = "", f[128] = "", a[16] = "";
    int n = sscanf(options, "%199[^,],%127[^,],%127[^,],%15s", c, m, f, a);
    if (n < 3 || (n == 4 && strcmp(a, "allocs") != 0)) {
      fprintf(stderr, "jdebug: options are CLASS,METHOD,FIELD[,allocs]\n");
      return 2;
    }
    g_allocs = n == 4;
    snprintf(g_class, sizeof g_class, "L%s;", c);
    snprintf(g_method, sizeof g_method, "%s", m);
    snprintf(g_field, sizeof g_field, "%s", f);
  }
  /* Line by line, so its lines and the program's interleave as they happen on any VM. */
  setvbuf(stdout, NULL, _IOLBF, 0);
  jvmtiEnv *jvmti = NULL;
  if ((*vm)->GetEnv(vm, (void **)&jvmti, JVMTI_VERSION_1_2) != JNI_OK) return 1;
  jvmtiCapabilities caps;
  memset(&caps, 0, sizeof caps);
  caps.can_generate_breakpoint_events = 1;
  caps.can_generate_single_step_events = 1;
  caps.can_generate_field_access_events = 1;
  caps.can_generate_field_modification_events = 1;
  caps.can_generate_exception_events = 1;
  caps.can_access_local_variables = 1;
  caps.can_get_line_numbers = 1;
  caps.can_generate_vm_object_alloc_events = g_allocs;
  jvmtiError err = (*jvmti)->AddCapabilities(jvmti, &caps);
  if (err != JVMTI_ERROR_NONE) {
    check(jvmti, err, "AddCapabilities");
    return 1;
  }
  jvmtiEventCallbacks cb;
  memset(&cb, 0, sizeof cb);
  cb.VMInit = on_vm_init;
  cb.VMDeath = on_vm_death;
  cb.ClassPrepare = on_class_prepare;
  cb.Breakpoint = on_breakpoint;
  cb.SingleStep = on_step;
  cb.FieldAccess = on_access;
  cb.FieldModification = on_modify;
  cb.Exception = on_exception;
  cb.ExceptionCatch = on_catch;
  cb.VMObjectAlloc = on_vm_alloc;
  (*jvmti)->SetEventCallbacks(jvmti, &cb, sizeof cb);
  jvmtiEvent on[] = {JVMTI_EVENT_VM_INIT,      JVMTI_EVENT_VM_DEATH,          JVMTI_EVENT_CLASS_PREPARE,
                     JVMTI_EVENT_BREAKPOINT,   JVMTI_EVENT_FIELD_ACCESS,      JVMTI_EVENT_FIELD_MODIFICATION,
                     JVMTI_EVENT_EXCEPTION,    JVMTI_EVENT_EXCEPTION_CATCH};
  for (size_t i = 0; i < sizeof on / sizeof on[0]; i++)
    check(jvmti, (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, on[i], NULL), "SetEventNotificationMode");
  if (g_allocs)
    check(jvmti, (*jvmti)->SetEventNotificationMode(jvmti, JVMTI_ENABLE, JVMTI_EVENT_VM_OBJECT_ALLOC, NULL), "VMObjectAlloc");
  return 0;
}
