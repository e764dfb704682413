/* SPDX-License-Identifier: Apache-2.0 */
/* The heap functions of JVM TI: IterateThroughHeap, FollowReferences,
 * GetObjectsWithTags, ForceGarbageCollection, GetObjectSize, GetObjectHashCode.
 *
 * One bridge: the walks use the bridge's heap ops that hprof dumps use
 * (with_world_stopped, for_each_object, for_each_root) and its reflective and object ops
 * (class_info, field_info, class_interface, get_field, array_get, string_value, thread_info,
 * frame_location); the rest are the three ops only JVM TI uses (collect, object_size,
 * object_hash). Everything a walk does happens inside one with_world_stopped: no object moves
 * or dies under it, and the agent's callbacks run there too (the specification forbids them
 * JNI and every JVM TI function but raw monitors, memory and local storage).
 *
 * Memory. IterateThroughHeap keeps a class cache (one entry per class met). FollowReferences
 * first lists every object (ref, class, size, length: 24 bytes each) and sorts them, then keeps a
 * visited byte and a work-stack slot per object: bounded by the number of objects (at most
 * DDMC__WALK_MAX, past which it answers OUT_OF_MEMORY), all from the library's allocator, none
 * from the VM heap. Tags a callback sets (through tag_ptr) go to the tag table after it returns. */
#include <stdlib.h>
#include <string.h>

#include "jvmti/heap.h"
#include "jvmti/tags.h"

#define DDMC__WALK_MAX ((uint32_t)1 << 27) /* objects FollowReferences lists */

/* ---- the per-walk class cache */

typedef struct fref {
  ddmc_class owner; /* the declaring class */
  uint32_t field;   /* its index there */
  jint index;       /* the specification's index (heap.h: FIELD) */
  char sig;         /* the field's type letter */
} fref;

typedef struct kinfo {
  ddmc_class cls; /* 0: empty slot */
  ddmc_ref class_object;
  ddmc_class super;
  char elem;         /* arrays: the element's letter ('L' for references); 0 otherwise */
  uint8_t is_string; /* java.lang.String */
  uint8_t type_tag;  /* DDMC_TYPE_* */
  uint8_t laid_out;  /* fields below computed */
  fref *inst, *stat; /* instance fields of the class and its superclasses; the class's statics */
  uint32_t ninst, nstat;
} kinfo;

typedef struct objrec {
  ddmc_ref ref;
  ddmc_class cls;
  uint64_t size;
  int32_t length;
} objrec;

typedef struct cobj {
  ddmc_ref obj;
  ddmc_class cls;
} cobj;

typedef struct walk {
  ddmc__jv_jenv *e;
  ddmc__jvmti *jv;
  const ddmc_vm_bridge *bridge;
  void *od;
  ddmc__jv_tags *tags;
  jint filter;
  ddmc_class klass;
  const ddmc__jv_heap_callbacks *cb;
  void *ud;
  kinfo *k;
  uint32_t kcap, kn;
  int abort;
  jvmtiError err;
  /* FollowReferences */
  objrec *objs;
  uint32_t nobjs, objcap;
  uint8_t *visited;
  uint32_t *stack;
  uint32_t nstack;
  cobj *cmap;
  uint32_t ncmap, cmapcap;
  ddmc_ref initial;
} walk;

static uint32_t khash(ddmc_class c) { return (uint32_t)((c * 0x9E3779B97F4A7C15ull) >> 32); }

static void kcache_free(walk *w) {
  for (uint32_t i = 0; i < w->kcap; i++) {
    free(w->k[i].inst);
    free(w->k[i].stat);
  }
  free(w->k);
  w->k = NULL;
  w->kcap = w->kn = 0;
}

/* The cache entry of c, filled from class_info on first use; NULL when out of memory. */
static kinfo *kget(walk *w, ddmc_class c) {
  if (w->kcap == 0 || (w->kn + 1) * 2 > w->kcap) {
    uint32_t cap = w->kcap ? w->kcap * 2 : 256;
    kinfo *nk = calloc(cap, sizeof(kinfo));
    if (nk == NULL) return NULL;
    for (uint32_t i = 0; i < w->kcap; i++) {
      if (w->k[i].cls == 0) continue;
      uint32_t j = khash(w->k[i].cls) & (cap - 1);
      while (nk[j].cls != 0) j = (j + 1) & (cap - 1);
      nk[j] = w->k[i];
    }
    free(w->k);
    w->k = nk;
    w->kcap = cap;
  }
  uint32_t j = khash(c) & (w->kcap - 1);
  while (w->k[j].cls != 0) {
    if (w->k[j].cls == c) return &w->k[j];
    j = (j + 1) & (w->kcap - 1);
  }
  kinfo *k = &w->k[j];
  memset(k, 0, sizeof(*k));
  k->cls = c;
  ddmc_class_info ci;
  memset(&ci, 0, sizeof(ci));
  if (c != 0 && w->bridge->class_info(w->od, c, &ci) == 0) {
    k->class_object = ci.class_object;
    k->super = ci.superclass;
    k->type_tag = ci.type_tag;
    const char *sig = ci.signature ? ci.signature : "";
    if (sig[0] == '[') k->elem = (sig[1] == 'L' || sig[1] == '[') ? 'L' : sig[1];
    k->is_string = strcmp(sig, "Ljava/lang/String;") == 0;
  }
  w->kn++;
  return k;
}

/* ---- tags */

/* Where a class's tag is kept: its class object, or its key when it has none. */
static ddmc_ref class_key(const kinfo *k) { return k->class_object ? k->class_object : DDMC__CLASS_KEY(k->cls); }

static jlong tag_of(walk *w, ddmc_ref r) { return r != 0 && w->tags != NULL ? ddmc__jv_tags_get(w->tags, r) : 0; }

static void tag_store(walk *w, ddmc_ref r, jlong before, jlong after) {
  if (r == 0 || before == after) return;
  if (w->tags == NULL && (w->tags = ddmc__jv_tags_of(w->e, 1)) == NULL) {
    w->err = JVMTI_ERROR_OUT_OF_MEMORY;
    return;
  }
  if (ddmc__jv_tags_set(w->tags, r, after) != 0) w->err = JVMTI_ERROR_OUT_OF_MEMORY;
}

/* Should the callbacks skip an object (heap_filter, klass)? */
static int filtered(const walk *w, ddmc_class cls, jlong tag, jlong class_tag) {
  if (w->klass != 0 && cls != w->klass) return 1;
  if ((w->filter & JVMTI_HEAP_FILTER_TAGGED) && tag != 0) return 1;
  if ((w->filter & JVMTI_HEAP_FILTER_UNTAGGED) && tag == 0) return 1;
  if ((w->filter & JVMTI_HEAP_FILTER_CLASS_TAGGED) && class_tag != 0) return 1;
  if ((w->filter & JVMTI_HEAP_FILTER_CLASS_UNTAGGED) && class_tag == 0) return 1;
  return 0;
}

static size_t elem_size(char t) {
  switch (t) {
    case 'Z':
    case 'B': return 1;
    case 'C':
    case 'S': return 2;
    case 'J':
    case 'D': return 8;
    default: return 4;
  }
}

/* A primitive array's elements packed as the Java type (the VM's own pointer when it gave one,
 * else read with array_get into *buf, which the caller frees). NULL on failure. */
static const void *prim_elements(walk *w, ddmc_ref a, char t, int32_t len, const void *direct, void **buf) {
  *buf = NULL;
  if (direct != NULL || len <= 0) return direct ? direct : (const void *)"";
  if (w->bridge->array_get == NULL) return NULL;
  size_t es = elem_size(t);
  uint8_t *p = malloc((size_t)len * es);
  if (p == NULL) return NULL;
  ddmc_value v[256];
  for (int32_t first = 0; first < len; first += 256) {
    int32_t n = len - first < 256 ? len - first : 256;
    if (w->bridge->array_get(w->od, a, first, n, v) != 0) {
      free(p);
      return NULL;
    }
    for (int32_t i = 0; i < n; i++) {
      uint8_t *d = p + (size_t)(first + i) * es;
      switch (t) {
        case 'Z':
        case 'B': *(int8_t *)d = (int8_t)v[i].u.i; break;
        case 'C':
        case 'S': {
          uint16_t x = (uint16_t)v[i].u.i;
          memcpy(d, &x, 2);
          break;
        }
        case 'J': memcpy(d, &v[i].u.j, 8); break;
        case 'D': memcpy(d, &v[i].u.d, 8); break;
        case 'F': memcpy(d, &v[i].u.f, 4); break;
        default: memcpy(d, &v[i].u.i, 4); break;
      }
    }
  }
  *buf = p;
  return p;
}

/* array_primitive_value_callback / string_primitive_value_callback for one object, when set. */
static void value_callbacks(walk *w, const kinfo *k, ddmc_ref ref, uint64_t size, int32_t length, const void *direct,
                            jlong class_tag, jlong *tag) {
  const ddmc__jv_heap_callbacks *cb = w->cb;
  if (cb->array_primitive_value_callback && k->elem && k->elem != 'L' && length >= 0 && !w->abort) {
    void *buf;
    const void *el = prim_elements(w, ref, k->elem, length, direct, &buf);
    if (el != NULL) {
      jint r = cb->array_primitive_value_callback(class_tag, (jlong)size, tag, length, k->elem, el, w->ud);
      if (r & JVMTI_VISIT_ABORT) w->abort = 1;
    }
    free(buf);
  }
  if (cb->string_primitive_value_callback && k->is_string && w->bridge->string_value && !w->abort) {
    ddmc_buf b;
    ddmc__buf_init(&b, w->jv->mem, (size_t)1 << 28);
    if (w->bridge->string_value(w->od, ref, &b) == 0 && b.err == 0) {
      size_t units = ddmc__utf8_to_utf16be((const char *)b.p, b.len, NULL);
      uint8_t *be = malloc(units * 2 + 2);
      jchar *u = malloc(units * sizeof(jchar) + sizeof(jchar));
      if (be != NULL && u != NULL && units <= INT32_MAX) {
        ddmc__utf8_to_utf16be((const char *)b.p, b.len, be);
        for (size_t i = 0; i < units; i++) u[i] = ddmc__get_u16(be + 2 * i);
        jint r = cb->string_primitive_value_callback(class_tag, (jlong)size, tag, u, (jint)units, w->ud);
        if (r & JVMTI_VISIT_ABORT) w->abort = 1;
      }
      free(be);
      free(u);
    }
    ddmc__buf_free(&b);
  }
}

/* ---- both walks */

static jvmtiError walk_check(ddmc__jv_jenv *e, jclass klass, const void *callbacks, walk *w) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_LIVE);
  if (rc) return rc;
  if (!ddmc__jv_jenv_has_cap(e, DDMC_CAP_can_tag_objects)) return JVMTI_ERROR_MUST_POSSESS_CAPABILITY;
  memset(w, 0, sizeof(*w));
  w->e = e;
  w->jv = e->jv;
  w->bridge = e->jv->bridge;
  w->od = e->jv->bridge_data;
  if (klass != NULL && ddmc__jv_class_of(e->jv, klass, &w->klass) != 0) return JVMTI_ERROR_INVALID_CLASS;
  if (callbacks == NULL) return JVMTI_ERROR_NULL_POINTER;
  if (w->bridge == NULL || w->bridge->with_world_stopped == NULL || w->bridge->for_each_object == NULL ||
      w->bridge->class_info == NULL)
    return JVMTI_ERROR_NOT_AVAILABLE;
  w->tags = ddmc__jv_tags_of(e, 0);
  return JVMTI_ERROR_NONE;
}

/* ---- FollowReferences */

static int collect_object(void *arg, const ddmc_heap_object *o) {
  walk *w = arg;
  if (w->nobjs == w->objcap) {
    if (w->objcap >= DDMC__WALK_MAX) {
      w->err = JVMTI_ERROR_OUT_OF_MEMORY;
      return 1;
    }
    uint32_t cap = w->objcap ? w->objcap * 2 : 4096;
    objrec *v = realloc(w->objs, sizeof(objrec) * cap);
    if (v == NULL) {
      w->err = JVMTI_ERROR_OUT_OF_MEMORY;
      return 1;
    }
    w->objs = v;
    w->objcap = cap;
  }
  w->objs[w->nobjs++] = (objrec){o->ref, o->cls, o->size, o->length};
  return 0;
}

static int collect_class(void *arg, ddmc_class c) {
  walk *w = arg;
  kinfo *k = kget(w, c);
  if (k == NULL) {
    w->err = JVMTI_ERROR_OUT_OF_MEMORY;
    return 1;
  }
  if (k->class_object == 0) return 0;
  if (w->ncmap == w->cmapcap) {
    uint32_t cap = w->cmapcap ? w->cmapcap * 2 : 256;
    cobj *v = realloc(w->cmap, sizeof(cobj) * cap);
    if (v == NULL) {
      w->err = JVMTI_ERROR_OUT_OF_MEMORY;
      return 1;
    }
    w->cmap = v;
    w->cmapcap = cap;
  }
  w->cmap[w->ncmap++] = (cobj){k->class_object, c};
  return 0;
}

static int cmp_obj(const void *a, const void *b) {
  ddmc_ref x = ((const objrec *)a)->ref, y = ((const objrec *)b)->ref;
  return x < y ? -1 : x > y;
}
static int cmp_cobj(const void *a, const void *b) {
  ddmc_ref x = ((const cobj *)a)->obj, y = ((const cobj *)b)->obj;
  return x < y ? -1 : x > y;
}

static int64_t obj_index(const walk *w, ddmc_ref r) {
  uint32_t lo = 0, hi = w->nobjs;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (w->objs[mid].ref < r)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < w->nobjs && w->objs[lo].ref == r ? (int64_t)lo : -1;
}

/* The class a class object stands for, or 0. */
static ddmc_class class_for(const walk *w, ddmc_ref r) {
  uint32_t lo = 0, hi = w->ncmap;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (w->cmap[mid].obj < r)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < w->ncmap && w->cmap[lo].obj == r ? w->cmap[lo].cls : 0;
}

/* Interfaces whose fields FIELD indexes count: the distinct ones of a class and its supertypes
 * (kept on the stack, so bounded; real classes have a handful), and the direct ones read from
 * one class (a VM's ninterfaces is not trusted beyond this). */
#define DDMC__JV_MAX_SEEN_INTERFACES 256
#define DDMC__JV_MAX_DIRECT_INTERFACES 1024

/* Counts the fields of every interface c implements (directly, through superclasses and
 * superinterfaces), each interface once. seen holds up to DDMC__JV_MAX_SEEN_INTERFACES. */
static uint32_t interface_fields(walk *w, ddmc_class c, ddmc_class *seen, uint32_t *nseen, int depth) {
  uint32_t total = 0;
  if (depth > 64 || w->bridge->class_interface == NULL) return 0;
  ddmc_class_info ci;
  for (; c != 0; c = ci.superclass) {
    memset(&ci, 0, sizeof(ci));
    if (w->bridge->class_info(w->od, c, &ci) != 0) break;
    for (uint32_t i = 0; i < ci.ninterfaces && i < DDMC__JV_MAX_DIRECT_INTERFACES; i++) {
      ddmc_class itf = 0;
      if (w->bridge->class_interface(w->od, c, i, &itf) != 0 || itf == 0) continue;
      uint32_t k;
      for (k = 0; k < *nseen && seen[k] != itf; k++) {
      }
      if (k < *nseen || *nseen == DDMC__JV_MAX_SEEN_INTERFACES) continue;
      seen[(*nseen)++] = itf;
      ddmc_class_info ii;
      memset(&ii, 0, sizeof(ii));
      if (w->bridge->class_info(w->od, itf, &ii) == 0) total += ii.nfields;
      total += interface_fields(w, itf, seen, nseen, depth + 1);
    }
    if (depth > 0) break; /* an interface: its superinterfaces only */
  }
  return total;
}

/* Fills k's field lists (heap.h: the FIELD index of each field of the class and its
 * superclasses, java.lang.Object's first, after the fields of every interface). */
static int layout(walk *w, ddmc_class self) {
  kinfo *k = kget(w, self);
  if (k == NULL) return -1;
  if (k->laid_out) return 0;
  k->laid_out = 1;
  if (w->bridge->field_info == NULL || k->type_tag == DDMC_TYPE_ARRAY) return 0;
  ddmc_class chain[64];
  uint32_t nchain = 0;
  for (ddmc_class c = self; c != 0 && nchain < 64;) {
    chain[nchain++] = c;
    kinfo *s = kget(w, c); /* kget may move the cache: no kinfo pointer is kept across it */
    if (s == NULL) return -1;
    c = s->super;
  }
  ddmc_class seen[DDMC__JV_MAX_SEEN_INTERFACES];
  uint32_t nseen = 0;
  jint index = (jint)interface_fields(w, self, seen, &nseen, 0);
  uint32_t cap = 0;
  ddmc_class_info ci;
  for (uint32_t i = 0; i < nchain; i++) {
    memset(&ci, 0, sizeof(ci));
    if (w->bridge->class_info(w->od, chain[i], &ci) == 0) cap += DDMC__MIN(ci.nfields, DDMC__JV_CLASS_COUNT_MAX + 1);
  }
  fref *inst = calloc(cap ? cap : 1, sizeof(fref)), *stat = calloc(cap ? cap : 1, sizeof(fref));
  if (inst == NULL || stat == NULL) {
    free(inst);
    free(stat);
    return -1;
  }
  uint32_t ninst = 0, nstat = 0;
  for (uint32_t i = nchain; i-- > 0;) {
    memset(&ci, 0, sizeof(ci));
    if (w->bridge->class_info(w->od, chain[i], &ci) != 0) continue;
    for (uint32_t f = 0; f < ci.nfields && f <= DDMC__JV_CLASS_COUNT_MAX; f++, index++) {
      ddmc_field_info fi;
      memset(&fi, 0, sizeof(fi));
      if (w->bridge->field_info(w->od, chain[i], f, &fi) != 0 || fi.signature == NULL) continue;
      char sig = fi.signature[0] == '[' ? 'L' : fi.signature[0];
      fref r = {chain[i], f, index, sig};
      if (fi.modifiers & DDMC_ACC_STATIC) {
        if (i == 0) stat[nstat++] = r; /* the class's own statics */
      } else if (ninst < cap) {
        inst[ninst++] = r;
      }
    }
  }
  k = kget(w, self);
  if (k == NULL) {
    free(inst);
    free(stat);
    return -1;
  }
  k->inst = inst;
  k->ninst = ninst;
  k->stat = stat;
  k->nstat = nstat;
  return 0;
}

/* Reports one reference (from referrer, an index into objs, or -1 for a root) to ref, and
 * queues ref when the callback (or a filter) says so. */
static void report(walk *w, jint kind, const ddmc__jv_jref_info *info, int64_t from, ddmc_ref ref) {
  if (w->abort || w->err || ref == 0) return;
  int64_t to = obj_index(w, ref);
  if (to < 0) return; /* not an object of the heap (a VM without that object in its walk) */
  const objrec *o = &w->objs[to];
  kinfo *k = kget(w, o->cls);
  if (k == NULL) {
    w->err = JVMTI_ERROR_OUT_OF_MEMORY;
    return;
  }
  jlong class_tag = tag_of(w, class_key(k));
  jlong tag0 = tag_of(w, o->ref), tag = tag0;
  int visit = 1;
  if (!filtered(w, o->cls, tag, class_tag) && w->cb->heap_reference_callback) {
    jlong rtag0 = 0, rtag = 0, rclass_tag = 0;
    jlong *rptr = NULL;
    if (from >= 0) {
      const objrec *f = &w->objs[from];
      kinfo *fk = kget(w, f->cls);
      rclass_tag = fk ? tag_of(w, class_key(fk)) : 0;
      rtag0 = rtag = tag_of(w, f->ref);
      rptr = from == to ? &tag : &rtag;
    }
    jint r = w->cb->heap_reference_callback(kind, info, class_tag, rclass_tag, (jlong)o->size, &tag, rptr,
                                            o->length >= 0 ? o->length : -1, w->ud);
    if (r & JVMTI_VISIT_ABORT) w->abort = 1;
    visit = (r & JVMTI_VISIT_OBJECTS) != 0;
    if (from >= 0 && from != to) tag_store(w, w->objs[from].ref, rtag0, rtag);
  }
  tag_store(w, o->ref, tag0, tag);
  if (visit && !w->abort && !w->visited[to]) {
    w->visited[to] = 1;
    w->stack[w->nstack++] = (uint32_t)to;
  }
}

/* primitive_field_callback for one field of ref (an object of cls; for a static, the class
 * object, of java.lang.Class). */
static void primitive_field(walk *w, jint kind, ddmc_ref ref, ddmc_class cls, const fref *fr, const ddmc_value *v) {
  kinfo *k = kget(w, cls);
  if (k == NULL) return;
  jlong class_tag = tag_of(w, class_key(k)), tag0 = tag_of(w, ref), tag = tag0;
  if (filtered(w, cls, tag, class_tag)) return;
  jvalue jv;
  memset(&jv, 0, sizeof(jv));
  switch (fr->sig) {
    case 'Z': jv.z = (jboolean)v->u.i; break;
    case 'B': jv.b = (jbyte)v->u.i; break;
    case 'C': jv.c = (jchar)v->u.i; break;
    case 'S': jv.s = (jshort)v->u.i; break;
    case 'J': jv.j = v->u.j; break;
    case 'F': jv.f = v->u.f; break;
    case 'D': jv.d = v->u.d; break;
    default: jv.i = v->u.i; break;
  }
  ddmc__jv_jref_info info;
  memset(&info, 0, sizeof(info));
  info.index = fr->index;
  jint r = w->cb->primitive_field_callback(kind, &info, class_tag, &tag, jv, fr->sig, w->ud);
  if (r & JVMTI_VISIT_ABORT) w->abort = 1;
  tag_store(w, ref, tag0, tag);
}

/* The fields of fl (of object obj, or the statics when obj is 0) as references or primitives. */
static void fields(walk *w, int64_t idx, ddmc_ref obj, const fref *fl, uint32_t n, jint ref_kind) {
  if (w->bridge->get_field == NULL) return;
  for (uint32_t i = 0; i < n && !w->abort && !w->err; i++) {
    int is_ref = fl[i].sig == 'L';
    if (!is_ref && w->cb->primitive_field_callback == NULL) continue;
    ddmc_value v;
    memset(&v, 0, sizeof(v));
    if (w->bridge->get_field(w->od, obj, fl[i].owner, fl[i].field, &v) != 0) continue;
    if (is_ref) {
      ddmc__jv_jref_info info;
      memset(&info, 0, sizeof(info));
      info.index = fl[i].index;
      report(w, ref_kind, &info, idx, v.u.l);
    } else {
      primitive_field(w, ref_kind, w->objs[idx].ref, w->objs[idx].cls, &fl[i], &v);
    }
  }
}

/* Interfaces read of one class: no class in a real VM has nearly so many. */
#define DDMC__JV_MAX_INTERFACES 1024

/* fields() over a copy of a class's field list: the cache may move under report(). */
static void fields_copied(walk *w, int64_t idx, ddmc_ref ref, const fref *list, uint32_t n, jint kind) {
  if (n == 0) return;
  fref *copy = malloc(sizeof(fref) * n);
  if (copy == NULL) {
    w->err = JVMTI_ERROR_OUT_OF_MEMORY;
    return;
  }
  memcpy(copy, list, sizeof(fref) * n);
  fields(w, idx, ref, copy, n, kind);
  free(copy);
}

/* A class object's references: its loader, superclass, interfaces and static fields. */
static void follow_class_object(walk *w, int64_t idx, ddmc_class self, ddmc__jv_jref_info *info) {
  if (layout(w, self) != 0) {
    w->err = JVMTI_ERROR_OUT_OF_MEMORY;
    return;
  }
  ddmc_class_info ci;
  memset(&ci, 0, sizeof(ci));
  if (w->bridge->class_info(w->od, self, &ci) == 0) {
    if (ci.loader) report(w, JVMTI_HEAP_REFERENCE_CLASS_LOADER, info, idx, ci.loader);
    if (ci.superclass) {
      kinfo *s = kget(w, ci.superclass);
      if (s) report(w, JVMTI_HEAP_REFERENCE_SUPERCLASS, info, idx, s->class_object);
    }
    for (uint32_t i = 0; w->bridge->class_interface && i < ci.ninterfaces && i < DDMC__JV_MAX_INTERFACES; i++) {
      ddmc_class itf = 0;
      if (w->bridge->class_interface(w->od, self, i, &itf) != 0) continue;
      kinfo *s = kget(w, itf);
      if (s) report(w, JVMTI_HEAP_REFERENCE_INTERFACE, info, idx, s->class_object);
    }
  }
  kinfo *sk = kget(w, self);
  if (sk) fields_copied(w, idx, 0, sk->stat, sk->nstat, JVMTI_HEAP_REFERENCE_STATIC_FIELD);
}

/* A reference array's elements, a bounded batch at a time. */
static void follow_elements(walk *w, int64_t idx, const objrec *o, ddmc__jv_jref_info *info) {
  if (w->bridge->array_get == NULL) return;
  enum { BATCH = 256 };
  ddmc_value v[BATCH];
  for (int32_t first = 0; first < o->length && !w->abort && !w->err; first += BATCH) {
    int32_t n = o->length - first < BATCH ? o->length - first : BATCH;
    if (w->bridge->array_get(w->od, o->ref, first, n, v) != 0) return;
    for (int32_t i = 0; i < n; i++) {
      info->index = first + i;
      report(w, JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT, info, idx, v[i].u.l);
    }
  }
}

/* Everything object idx refers to. */
static void follow(walk *w, int64_t idx) {
  objrec o = w->objs[idx];
  ddmc__jv_jref_info info;
  memset(&info, 0, sizeof(info));
  kinfo *k = kget(w, o.cls);
  if (k == NULL) {
    w->err = JVMTI_ERROR_OUT_OF_MEMORY;
    return;
  }
  /* Its value, for the primitive callbacks (once: an object is followed once). */
  if (w->cb->array_primitive_value_callback || w->cb->string_primitive_value_callback) {
    jlong class_tag = tag_of(w, class_key(k)), tag0 = tag_of(w, o.ref), tag = tag0;
    if (!filtered(w, o.cls, tag, class_tag)) {
      value_callbacks(w, k, o.ref, o.size, o.length, NULL, class_tag, &tag);
      tag_store(w, o.ref, tag0, tag);
    }
  }
  char elem = k->elem;
  report(w, JVMTI_HEAP_REFERENCE_CLASS, &info, idx, k->class_object);
  ddmc_class self = class_for(w, o.ref);
  if (self != 0) {
    follow_class_object(w, idx, self, &info);
    return;
  }
  if (o.length >= 0) {
    if (elem == 'L') follow_elements(w, idx, &o, &info);
    return;
  }
  if (layout(w, o.cls) != 0) {
    w->err = JVMTI_ERROR_OUT_OF_MEMORY;
    return;
  }
  k = kget(w, o.cls);
  if (k) fields_copied(w, idx, o.ref, k->inst, k->ninst, JVMTI_HEAP_REFERENCE_FIELD);
}

/* Roots are gathered first (the VM's visit must not wait for the agent), then reported. */
typedef struct rootv {
  ddmc_gc_root *v;
  uint32_t n, cap;
  int oom;
} rootv;

static int collect_root(void *arg, const ddmc_gc_root *r) {
  rootv *rv = arg;
  if (rv->n == rv->cap) {
    uint32_t cap = rv->cap ? rv->cap * 2 : 1024;
    ddmc_gc_root *v = cap <= DDMC__WALK_MAX ? realloc(rv->v, sizeof(ddmc_gc_root) * cap) : NULL;
    if (v == NULL) {
      rv->oom = 1;
      return 1;
    }
    rv->v = v;
    rv->cap = cap;
  }
  rv->v[rv->n++] = *r;
  return 0;
}

static jint root_kind(ddmc_gc_root_kind k) {
  switch (k) {
    case DDMC_GC_ROOT_JNI_GLOBAL: return JVMTI_HEAP_REFERENCE_JNI_GLOBAL;
    case DDMC_GC_ROOT_STICKY_CLASS: return JVMTI_HEAP_REFERENCE_SYSTEM_CLASS;
    case DDMC_GC_ROOT_MONITOR_USED:
    case DDMC_GC_ROOT_JNI_MONITOR: return JVMTI_HEAP_REFERENCE_MONITOR;
    case DDMC_GC_ROOT_JAVA_FRAME: return JVMTI_HEAP_REFERENCE_STACK_LOCAL;
    case DDMC_GC_ROOT_JNI_LOCAL: return JVMTI_HEAP_REFERENCE_JNI_LOCAL;
    case DDMC_GC_ROOT_THREAD_OBJECT:
    case DDMC_GC_ROOT_THREAD_BLOCK:
    case DDMC_GC_ROOT_NATIVE_STACK: return JVMTI_HEAP_REFERENCE_THREAD;
    default: return JVMTI_HEAP_REFERENCE_OTHER;
  }
}

static void report_root(walk *w, const ddmc_gc_root *r) {
  ddmc__jv_jref_info info;
  memset(&info, 0, sizeof(info));
  jint kind = root_kind(r->kind);
  if (kind == JVMTI_HEAP_REFERENCE_STACK_LOCAL || kind == JVMTI_HEAP_REFERENCE_JNI_LOCAL) {
    ddmc_thread_detail ti;
    memset(&ti, 0, sizeof(ti));
    if (r->thread && w->bridge->thread_info && w->bridge->thread_info(w->od, r->thread, &ti) == 0)
      info.stack_local.thread_tag = tag_of(w, ti.object);
    info.stack_local.thread_id = r->thread;
    info.stack_local.depth = r->depth;
    info.stack_local.location = -1;
    info.stack_local.slot = r->slot;
    ddmc_location loc;
    if (r->depth >= 0 && w->bridge->frame_location && w->bridge->frame_location(w->od, r->thread, r->depth, &loc) == 0) {
      info.stack_local.method = ddmc__jv_method_id(w->jv, loc.cls, loc.method);
      info.stack_local.location = loc.index;
    }
  }
  report(w, kind, &info, -1, r->object);
}

static int follow_stopped(void *arg) {
  walk *w = arg;
  int rc = w->bridge->for_each_object(w->od, collect_object, w);
  if (rc == 0 && w->err == 0 && w->bridge->for_each_class) rc = w->bridge->for_each_class(w->od, collect_class, w);
  if (rc != 0) return (int)ddmc__jv_err(rc);
  if (w->err) return 0;
  qsort(w->objs, w->nobjs, sizeof(objrec), cmp_obj);
  qsort(w->cmap, w->ncmap, sizeof(cobj), cmp_cobj);
  w->visited = calloc(w->nobjs ? w->nobjs : 1, 1);
  w->stack = malloc(sizeof(uint32_t) * (w->nobjs ? w->nobjs : 1));
  if (w->visited == NULL || w->stack == NULL) {
    w->err = JVMTI_ERROR_OUT_OF_MEMORY;
    return 0;
  }
  if (w->initial != 0) {
    int64_t i = obj_index(w, w->initial);
    if (i < 0) {
      w->err = JVMTI_ERROR_INVALID_OBJECT;
      return 0;
    }
    w->visited[i] = 1;
    w->stack[w->nstack++] = (uint32_t)i;
  } else {
    rootv rv = {0};
    if (w->bridge->for_each_root) w->bridge->for_each_root(w->od, collect_root, &rv);
    if (rv.oom) w->err = JVMTI_ERROR_OUT_OF_MEMORY;
    for (uint32_t i = 0; i < rv.n && !w->abort && !w->err; i++) report_root(w, &rv.v[i]);
    free(rv.v);
  }
  while (w->nstack > 0 && !w->abort && !w->err) follow(w, w->stack[--w->nstack]);
  return 0;
}

jvmtiError ddmc__jv_jt_FollowReferences(ddmc__jv_jenv *e, jint heap_filter, jclass klass, jobject initial_object,
                                        const void *callbacks, const void *user_data) {
  walk w;
  jvmtiError rc = walk_check(e, klass, callbacks, &w);
  if (rc) return rc;
  if (initial_object != NULL) {
    ddmc__jv_cell c;
    if (ddmc__jv_ref_get(e->jv, initial_object, &c) != 0 || c.ref == 0) return JVMTI_ERROR_INVALID_OBJECT;
    w.initial = c.ref;
  }
  w.filter = heap_filter;
  w.cb = callbacks;
  w.ud = (void *)user_data;
  rc = w.bridge->with_world_stopped(w.od, follow_stopped, &w);
  kcache_free(&w);
  free(w.objs);
  free(w.cmap);
  free(w.visited);
  free(w.stack);
  if (rc == 0) rc = w.err;
  return rc;
}

/* ---- IterateThroughHeap */

/* primitive_field_callback for an instance's primitive fields (FIELD), or a class object's
 * primitive statics (STATIC_FIELD), with the indexes FollowReferences gives them. */
static void iterate_fields(walk *w, ddmc_ref ref, ddmc_class cls, int32_t length) {
  if (length >= 0 || w->bridge->get_field == NULL) return;
  ddmc_class self = class_for(w, ref);
  if (layout(w, self ? self : cls) != 0) {
    w->err = JVMTI_ERROR_OUT_OF_MEMORY;
    return;
  }
  kinfo *k = kget(w, self ? self : cls);
  uint32_t n = k == NULL ? 0 : self ? k->nstat : k->ninst;
  if (n == 0) return;
  fref *fl = malloc(sizeof(fref) * n); /* the cache may move under the callbacks */
  if (fl == NULL) {
    w->err = JVMTI_ERROR_OUT_OF_MEMORY;
    return;
  }
  memcpy(fl, self ? k->stat : k->inst, sizeof(fref) * n);
  for (uint32_t i = 0; i < n && !w->abort && !w->err; i++) {
    ddmc_value v;
    memset(&v, 0, sizeof(v));
    if (fl[i].sig == 'L' || w->bridge->get_field(w->od, self ? 0 : ref, fl[i].owner, fl[i].field, &v) != 0) continue;
    primitive_field(w, self ? JVMTI_HEAP_REFERENCE_STATIC_FIELD : JVMTI_HEAP_REFERENCE_FIELD, ref, cls, &fl[i], &v);
  }
  free(fl);
}

static int iterate_object(void *arg, const ddmc_heap_object *o) {
  walk *w = arg;
  if (w->abort || w->err) return 1;
  kinfo *k = kget(w, o->cls);
  if (k == NULL) {
    w->err = JVMTI_ERROR_OUT_OF_MEMORY;
    return 1;
  }
  jlong class_tag = tag_of(w, class_key(k));
  jlong tag0 = tag_of(w, o->ref), tag = tag0;
  if (filtered(w, o->cls, tag, class_tag)) return 0;
  const ddmc__jv_heap_callbacks *cb = w->cb;
  if (cb->heap_iteration_callback) {
    jint r = cb->heap_iteration_callback(class_tag, (jlong)o->size, &tag, o->length >= 0 ? o->length : -1, w->ud);
    if (r & JVMTI_VISIT_ABORT) w->abort = 1;
  }
  if (!w->abort) value_callbacks(w, k, o->ref, o->size, o->length, o->elements, class_tag, &tag);
  tag_store(w, o->ref, tag0, tag);
  if (cb->primitive_field_callback && !w->abort) iterate_fields(w, o->ref, o->cls, o->length);
  return w->abort || w->err;
}

static int iterate_stopped(void *arg) {
  walk *w = arg;
  if (w->cb->primitive_field_callback && w->bridge->for_each_class) { /* class objects, for their statics */
    int rc = w->bridge->for_each_class(w->od, collect_class, w);
    if (rc != 0) return (int)ddmc__jv_err(rc);
    if (w->err) return 0;
    qsort(w->cmap, w->ncmap, sizeof(cobj), cmp_cobj);
  }
  int rc = w->bridge->for_each_object(w->od, iterate_object, w);
  return rc ? (int)ddmc__jv_err(rc) : 0;
}

jvmtiError ddmc__jv_jt_IterateThroughHeap(ddmc__jv_jenv *e, jint heap_filter, jclass klass, const void *callbacks,
                                          const void *user_data) {
  walk w;
  jvmtiError rc = walk_check(e, klass, callbacks, &w);
  if (rc) return rc;
  w.filter = heap_filter;
  w.cb = callbacks;
  w.ud = (void *)user_data;
  rc = w.bridge->with_world_stopped(w.od, iterate_stopped, &w);
  kcache_free(&w);
  free(w.cmap);
  if (rc == 0) rc = w.err;
  return rc;
}

/* ---- GetObjectsWithTags */

typedef struct with_tags {
  ddmc__jv_jenv *e;
  const jlong *want; /* sorted */
  jint nwant;
  ddmc_ref *refs;
  jlong *tags;
  uint32_t n, cap;
  int oom;
} with_tags;

static int cmp_jlong(const void *a, const void *b) {
  jlong x = *(const jlong *)a, y = *(const jlong *)b;
  return x < y ? -1 : x > y;
}

static int match_tag(void *arg, ddmc_ref ref, jlong tag) {
  with_tags *t = arg;
  if (bsearch(&tag, t->want, (size_t)t->nwant, sizeof(jlong), cmp_jlong) == NULL) return 0;
  if (t->n == t->cap) {
    uint32_t cap = t->cap ? t->cap * 2 : 64;
    ddmc_ref *r = realloc(t->refs, sizeof(ddmc_ref) * cap);
    if (r != NULL) t->refs = r;
    jlong *g = r ? realloc(t->tags, sizeof(jlong) * cap) : NULL;
    if (g == NULL) {
      t->oom = 1;
      return 1;
    }
    t->tags = g;
    t->cap = cap;
  }
  t->refs[t->n] = ref;
  t->tags[t->n++] = tag;
  return 0;
}

static int with_tags_stopped(void *arg) {
  with_tags *t = arg;
  ddmc__jv_tags_each(ddmc__jv_tags_of(t->e, 0), match_tag, t);
  return 0;
}

jvmtiError ddmc__jv_jt_GetObjectsWithTags(ddmc__jv_jenv *e, jint tag_count, const jlong *tags, jint *count_ptr,
                                          jobject **object_result_ptr, jlong **tag_result_ptr) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_LIVE);
  if (rc) return rc;
  if (!ddmc__jv_jenv_has_cap(e, DDMC_CAP_can_tag_objects)) return JVMTI_ERROR_MUST_POSSESS_CAPABILITY;
  if (tag_count < 0) return JVMTI_ERROR_ILLEGAL_ARGUMENT;
  if ((tags == NULL && tag_count > 0) || count_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  for (jint i = 0; i < tag_count; i++)
    if (tags[i] == 0) return JVMTI_ERROR_ILLEGAL_ARGUMENT;
  with_tags t = {e, NULL, tag_count, NULL, NULL, 0, 0, 0};
  jlong *sorted = malloc(sizeof(jlong) * (size_t)(tag_count ? tag_count : 1));
  if (sorted == NULL) return JVMTI_ERROR_OUT_OF_MEMORY;
  if (tag_count) memcpy(sorted, tags, sizeof(jlong) * (size_t)tag_count);
  qsort(sorted, (size_t)tag_count, sizeof(jlong), cmp_jlong);
  t.want = sorted;
  /* With the world stopped when the VM can: no collection frees a listed object before its
   * handle (a root) exists. */
  const ddmc_vm_bridge *bridge = e->jv->bridge;
  if (bridge != NULL && bridge->with_world_stopped != NULL)
    bridge->with_world_stopped(e->jv->bridge_data, with_tags_stopped, &t);
  else
    with_tags_stopped(&t);
  free(sorted);
  jobject *objs = NULL;
  jlong *out_tags = NULL;
  if (!t.oom && object_result_ptr != NULL && (objs = malloc(sizeof(jobject) * (t.n ? t.n : 1))) == NULL) t.oom = 1;
  if (!t.oom && tag_result_ptr != NULL && (out_tags = malloc(sizeof(jlong) * (t.n ? t.n : 1))) == NULL) t.oom = 1;
  for (uint32_t i = 0; !t.oom && i < t.n; i++) {
    ddmc_ref r = t.refs[i];
    jobject h = (r >> 63) ? ddmc__jv_class_local(e->jv, r & ~((ddmc_ref)1 << 63)) : ddmc__jv_ref_local(e->jv, r, 0, 0);
    if (objs != NULL && (objs[i] = h) == NULL) t.oom = 1;
    if (out_tags != NULL) out_tags[i] = t.tags[i];
  }
  free(t.refs);
  free(t.tags);
  if (t.oom) {
    free(objs);
    free(out_tags);
    return JVMTI_ERROR_OUT_OF_MEMORY;
  }
  *count_ptr = (jint)t.n;
  if (object_result_ptr != NULL) *object_result_ptr = objs;
  if (tag_result_ptr != NULL) *tag_result_ptr = out_tags;
  return JVMTI_ERROR_NONE;
}

/* ---- ForceGarbageCollection, GetObjectSize, GetObjectHashCode */

jvmtiError ddmc__jv_jt_ForceGarbageCollection(ddmc__jv_jenv *e) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_LIVE);
  if (rc) return rc;
  const ddmc_vm_bridge *bridge = e->jv->bridge;
  if (bridge == NULL || bridge->collect == NULL) return JVMTI_ERROR_NOT_AVAILABLE;
  return ddmc__jv_err(bridge->collect(e->jv->bridge_data));
}

static jvmtiError object_ref(ddmc__jv_jenv *e, jobject object, ddmc_ref *out) {
  ddmc__jv_cell c;
  if (object == NULL || ddmc__jv_ref_get(e->jv, object, &c) != 0 || c.ref == 0) return JVMTI_ERROR_INVALID_OBJECT;
  *out = c.ref;
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_GetObjectSize(ddmc__jv_jenv *e, jobject object, jlong *size_ptr) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_START | JVMTI_PHASE_LIVE);
  if (rc) return rc;
  ddmc_ref ref;
  if ((rc = object_ref(e, object, &ref)) != 0) return rc;
  if (size_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  const ddmc_vm_bridge *bridge = e->jv->bridge;
  if (bridge == NULL || bridge->object_size == NULL) return JVMTI_ERROR_NOT_AVAILABLE;
  uint64_t size = 0;
  if ((rc = ddmc__jv_err(bridge->object_size(e->jv->bridge_data, ref, &size))) != 0) return rc;
  *size_ptr = (jlong)size;
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_GetObjectHashCode(ddmc__jv_jenv *e, jobject object, jint *hash_code_ptr) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_START | JVMTI_PHASE_LIVE);
  if (rc) return rc;
  ddmc_ref ref;
  if ((rc = object_ref(e, object, &ref)) != 0) return rc;
  if (hash_code_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  const ddmc_vm_bridge *bridge = e->jv->bridge;
  if (bridge == NULL || bridge->object_hash == NULL) return JVMTI_ERROR_NOT_AVAILABLE;
  int32_t h = 0;
  if ((rc = ddmc__jv_err(bridge->object_hash(e->jv->bridge_data, ref, &h))) != 0) return rc;
  *hash_code_ptr = h;
  return JVMTI_ERROR_NONE;
}
