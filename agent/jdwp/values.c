/* SPDX-License-Identifier: Apache-2.0 */
/* Objects, arrays and strings through JNI: the bridge's object_class, get_field / set_field,
 * string_value, create_string, array ops, object_size and object_hash. HotSpot makes each JNI call
 * safe against its own threads and collector, as the bridge asks. */
#include <stdlib.h>
#include <string.h>

#include "ja.h"

int ja_value_in(JNIEnv *env, char t, jvalue v, ddmc_value *out) {
  memset(out, 0, sizeof *out);
  out->tag = t;
  switch (t) {
  case 'Z': out->u.i = v.z; break;
  case 'B': out->u.i = v.b; break;
  case 'C': out->u.i = v.c; break;
  case 'S': out->u.i = v.s; break;
  case 'I': out->u.i = v.i; break;
  case 'J': out->u.j = v.j; break;
  case 'F': out->u.f = v.f; break;
  case 'D': out->u.d = v.d; break;
  case 'V': break;
  default:
    out->tag = 'L';
    out->u.l = ja_ref(env, v.l);
    if (v.l != NULL && out->u.l == 0) return DDMC_JDWP_OUT_OF_MEMORY; /* never a null for an object */
    break;
  }
  return 0;
}

static int is_ref_tag(char t) { return t == 'L' || t == '[' || t == 's' || t == 't' || t == 'g' || t == 'l' || t == 'c'; }

int ja_value_out(char t, const ddmc_value *v, jvalue *out) {
  memset(out, 0, sizeof *out);
  if (t == 'L' || t == '[') {
    if (!is_ref_tag(v->tag)) return DDMC_JDWP_TYPE_MISMATCH;
    if (v->u.l == 0) return 0;
    out->l = ja_obj(v->u.l);
    return out->l ? 0 : DDMC_JDWP_INVALID_OBJECT;
  }
  if (v->tag != t) return DDMC_JDWP_TYPE_MISMATCH;
  switch (t) {
  case 'Z': out->z = (jboolean)(v->u.i != 0); break;
  case 'B': out->b = (jbyte)v->u.i; break;
  case 'C': out->c = (jchar)v->u.i; break;
  case 'S': out->s = (jshort)v->u.i; break;
  case 'I': out->i = v->u.i; break;
  case 'J': out->j = v->u.j; break;
  case 'F': out->f = v->u.f; break;
  case 'D': out->d = v->u.d; break;
  default: return DDMC_JDWP_TYPE_MISMATCH;
  }
  return 0;
}

static int object_class(void *vd, ddmc_ref o, ddmc_class *out) {
  JNIEnv *env = ja_enter();
  if (env == NULL) return DDMC_JDWP_VM_DEAD;
  jobject obj = ja_obj(o);
  int rc = DDMC_JDWP_INVALID_OBJECT;
  if (obj) {
    jclass k = (*env)->GetObjectClass(env, obj);
    *out = ja_ref(env, k);
    rc = *out ? 0 : DDMC_JDWP_OUT_OF_MEMORY;
  }
  ja_leave(env);
  return rc;
}

static int get_field(void *vd, ddmc_ref o, ddmc_class c, uint32_t index, ddmc_value *out) {
  int err = 0;
  ja_field *f = ja_field_of(c, index, &err);
  if (f == NULL) return err;
  JNIEnv *env = ja_enter();
  if (env == NULL) return DDMC_JDWP_VM_DEAD;
  jobject obj = o ? ja_obj(o) : NULL;
  jclass k = (jclass)ja_obj(c);
  if (o && obj == NULL) {
    ja_leave(env);
    return DDMC_JDWP_INVALID_OBJECT;
  }
  jvalue v;
  char t = f->sig[0];
  memset(&v, 0, sizeof v);
  if (obj == NULL) {
    switch (t) {
    case 'Z': v.z = (*env)->GetStaticBooleanField(env, k, (jfieldID)f->id); break;
    case 'B': v.b = (*env)->GetStaticByteField(env, k, f->id); break;
    case 'C': v.c = (*env)->GetStaticCharField(env, k, f->id); break;
    case 'S': v.s = (*env)->GetStaticShortField(env, k, f->id); break;
    case 'I': v.i = (*env)->GetStaticIntField(env, k, f->id); break;
    case 'J': v.j = (*env)->GetStaticLongField(env, k, f->id); break;
    case 'F': v.f = (*env)->GetStaticFloatField(env, k, f->id); break;
    case 'D': v.d = (*env)->GetStaticDoubleField(env, k, f->id); break;
    default: v.l = (*env)->GetStaticObjectField(env, k, f->id); break;
    }
  } else {
    switch (t) {
    case 'Z': v.z = (*env)->GetBooleanField(env, obj, f->id); break;
    case 'B': v.b = (*env)->GetByteField(env, obj, f->id); break;
    case 'C': v.c = (*env)->GetCharField(env, obj, f->id); break;
    case 'S': v.s = (*env)->GetShortField(env, obj, f->id); break;
    case 'I': v.i = (*env)->GetIntField(env, obj, f->id); break;
    case 'J': v.j = (*env)->GetLongField(env, obj, f->id); break;
    case 'F': v.f = (*env)->GetFloatField(env, obj, f->id); break;
    case 'D': v.d = (*env)->GetDoubleField(env, obj, f->id); break;
    default: v.l = (*env)->GetObjectField(env, obj, f->id); break;
    }
  }
  int rc = ja_value_in(env, t, v, out);
  ja_leave(env);
  return rc;
}

static int set_field(void *vd, ddmc_ref o, ddmc_class c, uint32_t index, const ddmc_value *val) {
  int err = 0;
  ja_field *f = ja_field_of(c, index, &err);
  if (f == NULL) return err;
  JNIEnv *env = ja_enter();
  if (env == NULL) return DDMC_JDWP_VM_DEAD;
  jobject obj = o ? ja_obj(o) : NULL;
  jclass k = (jclass)ja_obj(c);
  char t = f->sig[0];
  jvalue v;
  int rc = o && obj == NULL ? DDMC_JDWP_INVALID_OBJECT : ja_value_out(t, val, &v);
  if (rc) {
    ja_leave(env);
    return rc;
  }
  if (obj == NULL) {
    switch (t) {
    case 'Z': (*env)->SetStaticBooleanField(env, k, f->id, v.z); break;
    case 'B': (*env)->SetStaticByteField(env, k, f->id, v.b); break;
    case 'C': (*env)->SetStaticCharField(env, k, f->id, v.c); break;
    case 'S': (*env)->SetStaticShortField(env, k, f->id, v.s); break;
    case 'I': (*env)->SetStaticIntField(env, k, f->id, v.i); break;
    case 'J': (*env)->SetStaticLongField(env, k, f->id, v.j); break;
    case 'F': (*env)->SetStaticFloatField(env, k, f->id, v.f); break;
    case 'D': (*env)->SetStaticDoubleField(env, k, f->id, v.d); break;
    default: (*env)->SetStaticObjectField(env, k, f->id, v.l); break;
    }
  } else {
    switch (t) {
    case 'Z': (*env)->SetBooleanField(env, obj, f->id, v.z); break;
    case 'B': (*env)->SetByteField(env, obj, f->id, v.b); break;
    case 'C': (*env)->SetCharField(env, obj, f->id, v.c); break;
    case 'S': (*env)->SetShortField(env, obj, f->id, v.s); break;
    case 'I': (*env)->SetIntField(env, obj, f->id, v.i); break;
    case 'J': (*env)->SetLongField(env, obj, f->id, v.j); break;
    case 'F': (*env)->SetFloatField(env, obj, f->id, v.f); break;
    case 'D': (*env)->SetDoubleField(env, obj, f->id, v.d); break;
    default: (*env)->SetObjectField(env, obj, f->id, v.l); break;
    }
  }
  ja_leave(env);
  return 0;
}

/* UTF-16 to UTF-8 (a lone surrogate becomes U+FFFD), appended to out. */
static int put_utf8(ddmc_buf *out, const jchar *s, jsize n) {
  uint8_t tmp[256];
  size_t k = 0;
  for (jsize i = 0; i < n; i++) {
    uint32_t cp = s[i];
    if (cp >= 0xD800 && cp <= 0xDBFF && i + 1 < n && s[i + 1] >= 0xDC00 && s[i + 1] <= 0xDFFF) {
      cp = 0x10000 + ((cp - 0xD800) << 10) + (s[i + 1] - 0xDC00u);
      i++;
    } else if (cp >= 0xD800 && cp <= 0xDFFF) {
      cp = 0xFFFD;
    }
    if (cp < 0x80) {
      tmp[k++] = (uint8_t)cp;
    } else if (cp < 0x800) {
      tmp[k++] = (uint8_t)(0xC0 | cp >> 6);
      tmp[k++] = (uint8_t)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      tmp[k++] = (uint8_t)(0xE0 | cp >> 12);
      tmp[k++] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
      tmp[k++] = (uint8_t)(0x80 | (cp & 0x3F));
    } else {
      tmp[k++] = (uint8_t)(0xF0 | cp >> 18);
      tmp[k++] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
      tmp[k++] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
      tmp[k++] = (uint8_t)(0x80 | (cp & 0x3F));
    }
    if (k > sizeof tmp - 4) {
      ddmc_buf_put_bytes(out, tmp, k);
      k = 0;
    }
  }
  return ddmc_buf_put_bytes(out, tmp, k) ? DDMC_JDWP_OUT_OF_MEMORY : 0;
}

static int string_value(void *vd, ddmc_ref s, ddmc_buf *out) {
  JNIEnv *env = ja_enter();
  if (env == NULL) return DDMC_JDWP_VM_DEAD;
  jobject str = ja_obj(s);
  int rc = str == NULL ? DDMC_JDWP_INVALID_OBJECT : DDMC_JDWP_INVALID_STRING;
  jclass sc = ja_known(env, JA_KNOWN_STRING);
  if (str && sc && (*env)->IsInstanceOf(env, str, sc)) {
    jsize n = (*env)->GetStringLength(env, str);
    const jchar *cs = (*env)->GetStringCritical(env, str, NULL);
    if (cs) {
      /* No JNI call may come between GetStringCritical and its release; put_utf8 makes none. */
      rc = put_utf8(out, cs, n);
      (*env)->ReleaseStringCritical(env, str, cs);
    } else {
      rc = DDMC_JDWP_OUT_OF_MEMORY;
    }
  }
  (*env)->ExceptionClear(env);
  ja_leave(env);
  return rc;
}

static int create_string(void *vd, const char *utf8, size_t n, ddmc_ref *out) {
  if (n > (size_t)1 << 28) return DDMC_JDWP_OUT_OF_MEMORY;
  jchar *u = malloc((n + 1) * sizeof *u);
  if (u == NULL) return DDMC_JDWP_OUT_OF_MEMORY;
  size_t k = 0;
  const uint8_t *p = (const uint8_t *)utf8, *end = p + n;
  /* UTF-8 to UTF-16; a malformed sequence becomes U+FFFD. */
  while (p < end) {
    uint32_t cp = *p++;
    int more = cp < 0x80 ? 0 : (cp & 0xE0) == 0xC0 ? 1 : (cp & 0xF0) == 0xE0 ? 2 : (cp & 0xF8) == 0xF0 ? 3 : -1;
    if (more < 0 || end - p < more) {
      u[k++] = 0xFFFD;
      continue;
    }
    cp &= more == 0 ? 0x7F : more == 1 ? 0x1F : more == 2 ? 0x0F : 0x07;
    int bad = 0;
    for (int i = 0; i < more; i++) {
      if ((p[i] & 0xC0) != 0x80) bad = 1;
      cp = cp << 6 | (p[i] & 0x3Fu);
    }
    if (bad) {
      u[k++] = 0xFFFD;
      continue;
    }
    p += more;
    if (cp >= 0x10000) {
      /* two units from four bytes: u never needs more than n units */
      cp -= 0x10000;
      u[k++] = (jchar)(0xD800 + (cp >> 10));
      u[k++] = (jchar)(0xDC00 + (cp & 0x3FF));
    } else {
      u[k++] = (jchar)cp;
    }
  }
  JNIEnv *env = ja_enter();
  int rc = DDMC_JDWP_VM_DEAD;
  if (env) {
    jstring s = (*env)->NewString(env, u, (jsize)k);
    if (s == NULL) {
      (*env)->ExceptionClear(env);
      rc = DDMC_JDWP_OUT_OF_MEMORY;
    } else {
      /* Weakly held, as the JDK's agent holds it: a debugger that wants it kept disables its
       * collection. */
      *out = ja_ref(env, s);
      rc = *out ? 0 : DDMC_JDWP_OUT_OF_MEMORY;
    }
    ja_leave(env);
  }
  free(u);
  return rc;
}

static int array_length(void *vd, ddmc_ref a, int32_t *out) {
  JNIEnv *env = ja_enter();
  if (env == NULL) return DDMC_JDWP_VM_DEAD;
  jobject arr = ja_obj(a);
  if (arr != NULL) *out = (*env)->GetArrayLength(env, (jarray)arr);
  ja_leave(env);
  return arr != NULL ? 0 : DDMC_JDWP_INVALID_OBJECT;
}

static int object_class(void *vd, ddmc_ref o, ddmc_class *out);
static int ja_object_class(ddmc_ref o, ddmc_class *out) { return object_class(NULL, o, out); }

/* The element type letter of array a, from its class's signature. */
static int elem_type(ddmc_ref a, char *t) {
  ddmc_class c = 0;
  int rc;
  if ((rc = ja_object_class(a, &c))) return rc;
  ja_class *k = ja_class_of(c, &rc);
  if (k == NULL) return rc;
  if (k->sig[0] != '[') return DDMC_JDWP_INVALID_ARRAY;
  *t = k->sig[1] == '[' ? 'L' : k->sig[1];
  return 0;
}

/* Primitive elements [first, first + n) in pieces: one JNI region call per piece, not per
 * element (a million ints cost a thousand calls). */
static int array_get_prims(JNIEnv *env, jarray arr, char t, int32_t first, int32_t n, ddmc_value *out) {
  enum { PIECE = 512 };
  union {
    jboolean z[PIECE];
    jbyte b[PIECE];
    jchar c[PIECE];
    jshort s[PIECE];
    jint i[PIECE];
    jlong j[PIECE];
    jfloat f[PIECE];
    jdouble d[PIECE];
  } u;
  for (int32_t done = 0; done < n; done += PIECE) {
    jsize k = n - done < PIECE ? n - done : PIECE, at = first + done;
    switch (t) {
    case 'Z': (*env)->GetBooleanArrayRegion(env, arr, at, k, u.z); break;
    case 'B': (*env)->GetByteArrayRegion(env, arr, at, k, u.b); break;
    case 'C': (*env)->GetCharArrayRegion(env, arr, at, k, u.c); break;
    case 'S': (*env)->GetShortArrayRegion(env, arr, at, k, u.s); break;
    case 'I': (*env)->GetIntArrayRegion(env, arr, at, k, u.i); break;
    case 'J': (*env)->GetLongArrayRegion(env, arr, at, k, u.j); break;
    case 'F': (*env)->GetFloatArrayRegion(env, arr, at, k, u.f); break;
    default: (*env)->GetDoubleArrayRegion(env, arr, at, k, u.d); break;
    }
    if ((*env)->ExceptionCheck(env)) {
      (*env)->ExceptionClear(env);
      return DDMC_JDWP_INVALID_INDEX;
    }
    ddmc_value *o = out + done;
    for (jsize e = 0; e < k; e++) {
      memset(&o[e], 0, sizeof o[e]);
      o[e].tag = t;
      switch (t) {
      case 'Z': o[e].u.i = u.z[e]; break;
      case 'B': o[e].u.i = u.b[e]; break;
      case 'C': o[e].u.i = u.c[e]; break;
      case 'S': o[e].u.i = u.s[e]; break;
      case 'I': o[e].u.i = u.i[e]; break;
      case 'J': o[e].u.j = u.j[e]; break;
      case 'F': o[e].u.f = u.f[e]; break;
      default: o[e].u.d = u.d[e]; break;
      }
    }
  }
  return 0;
}

static int array_get(void *vd, ddmc_ref a, int32_t first, int32_t n, ddmc_value *out) {
  char t;
  int rc = elem_type(a, &t);
  if (rc) return rc;
  JNIEnv *env = ja_enter();
  if (env == NULL) return DDMC_JDWP_VM_DEAD;
  jarray arr = (jarray)ja_obj(a);
  if (arr == NULL) {
    rc = DDMC_JDWP_INVALID_OBJECT;
  } else if (t != 'L') {
    rc = array_get_prims(env, arr, t, first, n, out);
  }
  for (int32_t i = 0; t == 'L' && i < n && rc == 0; i++) {
    jobject v = (*env)->GetObjectArrayElement(env, (jobjectArray)arr, first + i);
    if ((*env)->ExceptionCheck(env)) {
      (*env)->ExceptionClear(env);
      rc = DDMC_JDWP_INVALID_INDEX;
      break;
    }
    jvalue jv;
    jv.l = v;
    rc = ja_value_in(env, t, jv, &out[i]);
    if (v) (*env)->DeleteLocalRef(env, v);
  }
  ja_leave(env);
  return rc;
}

static int array_set(void *vd, ddmc_ref a, int32_t first, int32_t n, const ddmc_value *vals) {
  char t;
  int rc = elem_type(a, &t);
  if (rc) return rc;
  JNIEnv *env = ja_enter();
  if (env == NULL) return DDMC_JDWP_VM_DEAD;
  jarray arr = (jarray)ja_obj(a);
  if (arr == NULL) rc = DDMC_JDWP_INVALID_OBJECT;
  for (int32_t i = 0; i < n && rc == 0; i++) { /* all checked before any is written */
    jvalue v;
    rc = ja_value_out(t, &vals[i], &v); /* local references live until ja_leave: bounded by the packet */
  }
  for (int32_t i = 0; i < n && rc == 0; i++) {
    jvalue v;
    ja_value_out(t, &vals[i], &v);
    switch (t) {
    case 'Z': (*env)->SetBooleanArrayRegion(env, arr, first + i, 1, &v.z); break;
    case 'B': (*env)->SetByteArrayRegion(env, arr, first + i, 1, &v.b); break;
    case 'C': (*env)->SetCharArrayRegion(env, arr, first + i, 1, &v.c); break;
    case 'S': (*env)->SetShortArrayRegion(env, arr, first + i, 1, &v.s); break;
    case 'I': (*env)->SetIntArrayRegion(env, arr, first + i, 1, &v.i); break;
    case 'J': (*env)->SetLongArrayRegion(env, arr, first + i, 1, &v.j); break;
    case 'F': (*env)->SetFloatArrayRegion(env, arr, first + i, 1, &v.f); break;
    case 'D': (*env)->SetDoubleArrayRegion(env, arr, first + i, 1, &v.d); break;
    default:
      (*env)->SetObjectArrayElement(env, (jobjectArray)arr, first + i, v.l);
      break;
    }
    if ((*env)->ExceptionCheck(env)) { /* ArrayStoreException: the value's type does not fit */
      (*env)->ExceptionClear(env);
      rc = DDMC_JDWP_TYPE_MISMATCH;
    }
  }
  ja_leave(env);
  return rc;
}

static int new_array(void *vd, ddmc_class c, int32_t length, ddmc_ref *out) {
  int rc = 0;
  ja_class *k = ja_class_of(c, &rc);
  if (k == NULL) return rc;
  if (k->sig[0] != '[' || length < 0) return DDMC_JDWP_INVALID_ARRAY;
  JNIEnv *env = ja_enter();
  if (env == NULL) return DDMC_JDWP_VM_DEAD;
  jarray a = NULL;
  switch (k->sig[1]) {
  case 'Z': a = (*env)->NewBooleanArray(env, length); break;
  case 'B': a = (*env)->NewByteArray(env, length); break;
  case 'C': a = (*env)->NewCharArray(env, length); break;
  case 'S': a = (*env)->NewShortArray(env, length); break;
  case 'I': a = (*env)->NewIntArray(env, length); break;
  case 'J': a = (*env)->NewLongArray(env, length); break;
  case 'F': a = (*env)->NewFloatArray(env, length); break;
  case 'D': a = (*env)->NewDoubleArray(env, length); break;
  default: {
    /* The element class: the component of this array class. */
    jclass ec = NULL;
    jobject arr_cls = ja_obj(c);
    jclass cc = (*env)->GetObjectClass(env, arr_cls);
    jmethodID gct = (*env)->GetMethodID(env, cc, "getComponentType", "()Ljava/lang/Class;");
    if (gct) ec = (jclass)(*env)->CallObjectMethod(env, arr_cls, gct);
    if (ec) a = (*env)->NewObjectArray(env, length, ec, NULL);
    break;
  }
  }
  if (a == NULL) {
    (*env)->ExceptionClear(env);
    rc = DDMC_JDWP_OUT_OF_MEMORY;
  } else {
    *out = ja_ref(env, a);
    rc = *out ? 0 : DDMC_JDWP_OUT_OF_MEMORY;
  }
  ja_leave(env);
  return rc;
}

static int object_size(void *vd, ddmc_ref o, uint64_t *out) {
  JNIEnv *env = ja_enter();
  if (env == NULL) return DDMC_JDWP_VM_DEAD;
  jobject obj = ja_obj(o);
  jlong n = 0;
  int rc = obj == NULL ? DDMC_JDWP_INVALID_OBJECT : ja_err((*ja.ti)->GetObjectSize(ja.ti, obj, &n));
  if (rc == 0) *out = (uint64_t)n;
  ja_leave(env);
  return rc;
}

static int object_hash(void *vd, ddmc_ref o, int32_t *out) {
  JNIEnv *env = ja_enter();
  if (env == NULL) return DDMC_JDWP_VM_DEAD;
  jobject obj = ja_obj(o);
  jint h = 0;
  int rc = obj == NULL ? DDMC_JDWP_INVALID_OBJECT : ja_err((*ja.ti)->GetObjectHashCode(ja.ti, obj, &h));
  if (rc == 0) *out = h;
  ja_leave(env);
  return rc;
}

/* The bridge's names (ja.h, "Names"). */
static int hold_ref(void *vd, ddmc_ref o, int strong) {
  JNIEnv *env = ja_env();
  return env == NULL ? DDMC_JDWP_VM_DEAD : ja_hold(env, o, strong);
}

static void release_ref(void *vd, ddmc_ref o) {
  JNIEnv *env = ja_env();
  if (env != NULL) ja_release(env, o);
}

void ja_bridge_values(ddmc_vm_bridge *b) {
  b->object_class = object_class;
  b->get_field = get_field;
  b->set_field = set_field;
  b->string_value = string_value;
  b->create_string = create_string;
  b->array_length = array_length;
  b->array_get = array_get;
  b->array_set = array_set;
  b->new_array = new_array;
  b->object_size = object_size;
  b->object_hash = object_hash;
  b->hold_ref = hold_ref;
  b->release_ref = release_ref;
}
