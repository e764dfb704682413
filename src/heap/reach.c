/* SPDX-License-Identifier: Apache-2.0 */
/* The reachable objects and their references, through the bridge (reach.h says what and why).
 *
 * How: every object for_each_object visits goes into one array sorted by ref (binary search
 * finds an object's index); the roots mark their objects; a work stack then reads each marked
 * object's references once (class layouts come from a per-walk cache: the reference-typed fields
 * of a class and its superclasses, and its own reference statics) and marks what they name. An
 * object is marked once, so the walk reads each object once whatever holds it. */
#include <stdlib.h>
#include <string.h>

#include "heap/reach.h"

typedef struct robj {
  ddmc_ref ref;
  ddmc_class cls;
  int32_t length;
} robj;

typedef struct rfield {
  ddmc_class owner;
  uint32_t index;
} rfield;

typedef struct rclass {
  ddmc_class cls; /* 0: empty slot */
  ddmc_ref class_object, loader;
  ddmc_class super;
  uint8_t ref_elems; /* an array of references */
  uint8_t laid_out;
  rfield *inst, *stat; /* reference fields: instances' (all superclasses too), the class's statics */
  uint32_t ninst, nstat;
} rclass;

typedef struct cobj {
  ddmc_ref obj;
  ddmc_class cls;
} cobj;

typedef struct reach {
  const ddmc__mem *mem;
  const ddmc_vm_bridge *bridge;
  void *od;
  const ddmc__reach_visitor *v;
  robj *objs;
  uint32_t n, cap;
  cobj *cmap; /* class objects, sorted by obj */
  uint32_t ncmap, cmapcap;
  rclass *k;
  uint32_t kcap, kn;
  uint8_t *mark;
  uint32_t *stack;
  uint32_t nstack;
  uint64_t reads;
  int rc; /* first error or a visitor's stop */
} reach;

int ddmc__heap_reach_supported(const ddmc_vm_bridge *o) {
  return o != NULL && o->with_world_stopped != NULL && o->for_each_object != NULL && o->for_each_root != NULL &&
         o->for_each_class != NULL && o->class_info != NULL && o->field_info != NULL && o->get_field != NULL &&
         o->array_get != NULL;
}

static int grow(reach *w, void **p, uint32_t *cap, size_t elem, uint32_t need) {
  if (need <= *cap) return 0;
  if (need > DDMC__REACH_MAX_OBJECTS) return -1;
  uint32_t nc = *cap ? *cap : 1024;
  while (nc < need) nc *= 2;
  void *np = ddmc__realloc(w->mem, *p, (size_t)nc * elem);
  if (np == NULL) return -1;
  *p = np;
  *cap = nc;
  return 0;
}

static int add_object(void *arg, const ddmc_heap_object *o) {
  reach *w = arg;
  if (grow(w, (void **)&w->objs, &w->cap, sizeof(robj), w->n + 1) != 0) {
    w->rc = DDMC_JDWP_OUT_OF_MEMORY;
    return 1;
  }
  w->objs[w->n++] = (robj){o->ref, o->cls, o->length};
  return 0;
}

static int add_class(void *arg, ddmc_class c) {
  reach *w = arg;
  ddmc_class_info ci;
  memset(&ci, 0, sizeof(ci));
  if (w->bridge->class_info(w->od, c, &ci) != 0 || ci.class_object == 0) return 0;
  if (grow(w, (void **)&w->cmap, &w->cmapcap, sizeof(cobj), w->ncmap + 1) != 0) {
    w->rc = DDMC_JDWP_OUT_OF_MEMORY;
    return 1;
  }
  w->cmap[w->ncmap++] = (cobj){ci.class_object, c};
  return 0;
}

static int cmp_obj(const void *a, const void *b) {
  ddmc_ref x = ((const robj *)a)->ref, y = ((const robj *)b)->ref;
  return x < y ? -1 : x > y;
}

static int cmp_cobj(const void *a, const void *b) {
  ddmc_ref x = ((const cobj *)a)->obj, y = ((const cobj *)b)->obj;
  return x < y ? -1 : x > y;
}

static int64_t obj_index(const reach *w, ddmc_ref r) {
  uint32_t lo = 0, hi = w->n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (w->objs[mid].ref < r) lo = mid + 1;
    else hi = mid;
  }
  return lo < w->n && w->objs[lo].ref == r ? (int64_t)lo : -1;
}

static ddmc_class class_by_object(const reach *w, ddmc_ref r) {
  uint32_t lo = 0, hi = w->ncmap;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (w->cmap[mid].obj < r) lo = mid + 1;
    else hi = mid;
  }
  return lo < w->ncmap && w->cmap[lo].obj == r ? w->cmap[lo].cls : 0;
}

/* ---- the class cache */

static uint32_t khash(ddmc_class c) { return (uint32_t)((c * 0x9E3779B97F4A7C15ull) >> 32); }

static rclass *kslot(reach *w, ddmc_class c) {
  uint32_t j = khash(c) & (w->kcap - 1);
  while (w->k[j].cls != 0 && w->k[j].cls != c) j = (j + 1) & (w->kcap - 1);
  return &w->k[j];
}

/* The cache entry of c (class_info read on first use); NULL when out of memory. */
static rclass *kget(reach *w, ddmc_class c) {
  if (w->kcap == 0 || (w->kn + 1) * 2 > w->kcap) {
    uint32_t cap = w->kcap ? w->kcap * 2 : 256;
    rclass *old = w->k;
    uint32_t oldcap = w->kcap;
    if (cap > 2 * DDMC__REACH_MAX_OBJECTS || (w->k = ddmc__calloc(w->mem, cap, sizeof(rclass))) == NULL) {
      w->k = old;
      return NULL;
    }
    w->kcap = cap;
    for (uint32_t i = 0; i < oldcap; i++)
      if (old[i].cls != 0) *kslot(w, old[i].cls) = old[i];
    ddmc__free(w->mem, old);
  }
  rclass *k = kslot(w, c);
  if (k->cls == c) return k;
  memset(k, 0, sizeof(*k));
  k->cls = c;
  w->kn++;
  ddmc_class_info ci;
  memset(&ci, 0, sizeof(ci));
  if (c != 0 && w->bridge->class_info(w->od, c, &ci) == 0) {
    k->class_object = ci.class_object;
    k->loader = ci.loader;
    k->super = ci.superclass;
    k->ref_elems = ci.signature != NULL && ci.signature[0] == '[' && (ci.signature[1] == 'L' || ci.signature[1] == '[');
  }
  return k;
}

static int is_ref_sig(const char *s) { return s != NULL && (s[0] == 'L' || s[0] == '['); }

/* Appends c's own reference fields, statics (stat) or not (inst), to *list. */
static int own_fields(reach *w, ddmc_class c, int statics, rfield **list, uint32_t *n) {
  ddmc_class_info ci;
  memset(&ci, 0, sizeof(ci));
  if (w->bridge->class_info(w->od, c, &ci) != 0) return 0;
  for (uint32_t f = 0; f < ci.nfields && f < 65536; f++) {
    ddmc_field_info fi;
    memset(&fi, 0, sizeof(fi));
    if (w->bridge->field_info(w->od, c, f, &fi) != 0 || !is_ref_sig(fi.signature)) continue;
    if (((fi.modifiers & DDMC_ACC_STATIC) != 0) != statics) continue;
    rfield *nl = ddmc__realloc(w->mem, *list, sizeof(rfield) * (*n + 1));
    if (nl == NULL) return -1;
    *list = nl;
    nl[(*n)++] = (rfield){c, f};
  }
  return 0;
}

/* Fills c's field lists: its statics, and the instance fields of c and every superclass. */
static int layout(reach *w, ddmc_class c) {
  rclass *k = kget(w, c);
  if (k == NULL) return -1;
  if (k->laid_out) return 0;
  rfield *inst = NULL, *stat = NULL;
  uint32_t ninst = 0, nstat = 0, depth = 0;
  int rc = own_fields(w, c, 1, &stat, &nstat);
  for (ddmc_class s = c; s != 0 && rc == 0 && depth < 4096; depth++) {
    rc = own_fields(w, s, 0, &inst, &ninst);
    rclass *sk = kget(w, s);
    if (sk == NULL) rc = -1;
    s = sk ? sk->super : 0;
  }
  k = kget(w, c); /* the cache may have moved */
  if (rc != 0 || k == NULL) {
    ddmc__free(w->mem, inst);
    ddmc__free(w->mem, stat);
    return -1;
  }
  k->inst = inst;
  k->ninst = ninst;
  k->stat = stat;
  k->nstat = nstat;
  k->laid_out = 1;
  return 0;
}

/* ---- the walk */

/* A reference from object index from (-1: a root) to ref: reported, and ref queued once. */
static void edge(reach *w, int64_t from, ddmc_ref ref) {
  if (w->rc != 0 || ref == 0) return;
  int64_t to = obj_index(w, ref);
  if (to < 0) return; /* not an object of the walk (the VM's promise says it is; be safe) */
  if (from >= 0 && w->v->reference != NULL) {
    int r = w->v->reference(w->v->arg, w->objs[from].ref, ref);
    if (r != 0) {
      w->rc = r;
      return;
    }
  }
  if (w->mark[to >> 3] & (1u << (to & 7))) return;
  w->mark[to >> 3] |= (uint8_t)(1u << (to & 7));
  w->stack[w->nstack++] = (uint32_t)to;
  if (w->v->object != NULL) {
    int r = w->v->object(w->v->arg, ref, w->objs[to].cls);
    if (r != 0) w->rc = r;
  }
}

static int count_read(reach *w, uint64_t n) {
  w->reads += n;
  if (w->reads <= DDMC__REACH_MAX_READS) return 0;
  w->rc = DDMC_JDWP_OUT_OF_MEMORY;
  return -1;
}

/* The reference fields fl[0..n) of obj (0: statics of their class). The list is copied first:
 * edge() may grow the class cache, which moves it. */
static void fields(reach *w, int64_t idx, ddmc_ref obj, const rfield *list, uint32_t n) {
  if (n == 0 || count_read(w, n) != 0) return;
  rfield *fl = ddmc__malloc(w->mem, sizeof(rfield) * n);
  if (fl == NULL) {
    w->rc = DDMC_JDWP_OUT_OF_MEMORY;
    return;
  }
  memcpy(fl, list, sizeof(rfield) * n);
  for (uint32_t i = 0; i < n && w->rc == 0; i++) {
    ddmc_value v;
    memset(&v, 0, sizeof(v));
    if (w->bridge->get_field(w->od, obj, fl[i].owner, fl[i].index, &v) == 0) edge(w, idx, v.u.l);
  }
  ddmc__free(w->mem, fl);
}

static void elements(reach *w, int64_t idx, ddmc_ref a, int32_t length) {
  enum { BATCH = 256 };
  ddmc_value v[BATCH];
  for (int32_t first = 0; first < length && w->rc == 0; first += BATCH) {
    int32_t n = length - first < BATCH ? length - first : BATCH;
    if (count_read(w, (uint64_t)n) != 0 || w->bridge->array_get(w->od, a, first, n, v) != 0) return;
    for (int32_t i = 0; i < n; i++) edge(w, idx, v[i].u.l);
  }
}

/* Everything object idx refers to, as FollowReferences reports it. */
static void follow(reach *w, uint32_t idx) {
  robj o = w->objs[idx];
  rclass *k = kget(w, o.cls);
  if (k == NULL) {
    w->rc = DDMC_JDWP_OUT_OF_MEMORY;
    return;
  }
  int ref_elems = k->ref_elems;
  edge(w, idx, k->class_object);
  ddmc_class self = class_by_object(w, o.ref);
  if (self != 0) {
    if (layout(w, self) != 0 || (k = kget(w, self)) == NULL) {
      w->rc = DDMC_JDWP_OUT_OF_MEMORY;
      return;
    }
    ddmc_ref loader = k->loader;
    ddmc_class super = k->super;
    edge(w, idx, loader);
    rclass *sk = super != 0 ? kget(w, super) : NULL;
    if (sk != NULL) edge(w, idx, sk->class_object);
    if ((k = kget(w, self)) != NULL) fields(w, idx, 0, k->stat, k->nstat);
    return;
  }
  if (o.length >= 0) {
    if (ref_elems) elements(w, idx, o.ref, o.length);
    return;
  }
  if (layout(w, o.cls) != 0 || (k = kget(w, o.cls)) == NULL) {
    w->rc = DDMC_JDWP_OUT_OF_MEMORY;
    return;
  }
  fields(w, idx, o.ref, k->inst, k->ninst);
}

/* Roots are gathered first: the VM's root visit must not wait on the walk's reads. */
typedef struct roots {
  reach *w;
  ddmc_ref *v;
  uint32_t n, cap;
} roots;

static int add_root(void *arg, const ddmc_gc_root *r) {
  roots *rs = arg;
  if (grow(rs->w, (void **)&rs->v, &rs->cap, sizeof(ddmc_ref), rs->n + 1) != 0) {
    rs->w->rc = DDMC_JDWP_OUT_OF_MEMORY;
    return 1;
  }
  rs->v[rs->n++] = r->object;
  return 0;
}

static int list_all(reach *w) {
  int rc = w->bridge->for_each_object(w->od, add_object, w);
  if (rc == 0 && w->rc == 0) rc = w->bridge->for_each_class(w->od, add_class, w);
  if (w->rc != 0) return w->rc;
  if (rc != 0) return rc;
  qsort(w->objs, w->n, sizeof(robj), cmp_obj);
  qsort(w->cmap, w->ncmap, sizeof(cobj), cmp_cobj);
  w->mark = ddmc__calloc(w->mem, (size_t)w->n / 8 + 1, 1);
  w->stack = ddmc__malloc(w->mem, sizeof(uint32_t) * ((size_t)w->n + 1));
  return w->mark == NULL || w->stack == NULL ? DDMC_JDWP_OUT_OF_MEMORY : 0;
}

int ddmc__heap_reach(const ddmc__mem *mem, const ddmc_vm_bridge *bridge, void *vm_data, const ddmc__reach_visitor *v) {
  if (!ddmc__heap_reach_supported(bridge)) return DDMC_JDWP_NOT_IMPLEMENTED;
  reach w;
  memset(&w, 0, sizeof(w));
  w.mem = mem;
  w.bridge = bridge;
  w.od = vm_data;
  w.v = v;
  int rc = list_all(&w);
  if (rc == 0) {
    roots rs = {&w, NULL, 0, 0};
    bridge->for_each_root(vm_data, add_root, &rs);
    for (uint32_t i = 0; i < rs.n && w.rc == 0; i++) edge(&w, -1, rs.v[i]);
    ddmc__free(mem, rs.v);
    while (w.nstack > 0 && w.rc == 0) follow(&w, w.stack[--w.nstack]);
    rc = w.rc == 1 ? 0 : w.rc;
  }
  for (uint32_t i = 0; i < w.kcap; i++) {
    ddmc__free(mem, w.k[i].inst);
    ddmc__free(mem, w.k[i].stat);
  }
  ddmc__free(mem, w.k);
  ddmc__free(mem, w.objs);
  ddmc__free(mem, w.cmap);
  ddmc__free(mem, w.mark);
  ddmc__free(mem, w.stack);
  return rc;
}
