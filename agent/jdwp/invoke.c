/* SPDX-License-Identifier: Apache-2.0 */
/* The bridge's invoke: a method the debugger calls, by JNI on the thread the library runs the
 * call on (the event thread, inside its ddmc_post_* call), with that thread's events reported
 * (events.c's pause). */
#include <string.h>

#include "ja.h"

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

void ja_bridge_invoke(ddmc_vm_bridge *b) { b->invoke = invoke; }
