/* SPDX-License-Identifier: Apache-2.0 */
/* The values of a heap walk's objects (heap.c), collected in JVM TI's own heap callbacks: the
 * bridge's walk_values, so that a dump reads memory instead of making one JNI call per field.
 *
 * Collected once per walk, at the first walk_values, in two passes over the heap:
 *   1. IterateThroughHeap (tagged objects only) with a primitive_field_callback: every primitive
 *      instance field, with its JVM TI field index and type;
 *   2. FollowReferences with a heap_reference_callback: every non-null reference field
 *      (JVMTI_HEAP_REFERENCE_FIELD, with its index) and reference array element (ARRAY_ELEMENT),
 *      as the referee's walk number.
 * An instance's values are packed in the order the bridge gives them (its class's instance
 * fields, then its superclass's, up to Object), each at its Java size (references as 4-byte
 * numbers); a reference array's elements as 4-byte numbers. Memory, bounded and freed with the
 * walk: 8 bytes per walk number (table slots and walk tags) for the offsets, plus the values,
 * which take at most the objects' own field and element bytes (with compressed references), plus
 * a small layout per class that has instances.
 *
 * JVM TI numbers the fields of class C as: the fields of every interface C implements, then
 * those of each superclass from java.lang.Object down, then C's own, each class's in the order
 * GetClassFields gives (statics counted). layout_new builds that map from the same JVM TI calls
 * members.c makes. Each value reported is checked against it (the index in range, naming an
 * instance field of the type the callback reports); any mismatch, a referee without a walk
 * number, or an object FollowReferences did not reach (its references were not reported) makes
 * that object fall back to get_field / array_get in the library. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ja.h"

#define REACHED (1ull << 63)
#define BROKEN (1ull << 62)
#define OFF_MASK (BROKEN - 1)

typedef struct layout {
  uint32_t n;     /* instance fields, in the bridge's order */
  uint32_t bytes; /* their packed size */
  uint32_t nti;   /* JVM TI field indexes of the class: [0, nti) */
  int32_t *pos;   /* by JVM TI index: the position, or -1 (a static, an interface's field) */
  uint32_t *at;   /* by position: the byte offset among the object's values */
  char *type;     /* by position: the type letter ('L' for any reference) */
} layout;

enum { K_UNKNOWN, K_INSTANCE, K_REF_ARRAY, K_NONE };

/* One collection per walk, on the walking thread (the only caller of walk_values). */
static struct {
  int state;     /* 0 not collected, 1 ready, 2 failed: every object the slow way */
  uint32_t span; /* walk indexes (ja_walk_index) */
  uint64_t *off; /* by walk index: 1 + byte offset of its values | REACHED | BROKEN; 0: none */
  uint8_t *vals;
  uint64_t nbytes;
  uint32_t nslots;  /* class slots below this have an entry in kind / lay */
  uint8_t *kind;    /* by class slot: K_* */
  layout **lay;     /* by class slot: K_INSTANCE's layout */
  uint64_t held, dropped; /* objects with values, and placed but dropped (the header comment) */
} wv;

static size_t type_size(char t) {
  switch (t) {
    case 'Z':
    case 'B': return 1;
    case 'C':
    case 'S': return 2;
    case 'J':
    case 'D': return 8;
    default: return 4; /* I, F, references */
  }
}

static void layout_free(layout *l) {
  if (l == NULL) return;
  free(l->pos);
  free(l->at);
  free(l->type);
  free(l);
}

/* Adds c and every interface it extends to set (no duplicates); the sum of their fields to *n. */
static int add_interfaces(ja_class *k, ddmc_class **set, uint32_t *nset, uint32_t *cap, uint64_t *n) {
  for (jint i = 0; i < k->nif; i++) {
    ddmc_class c = k->ifs[i];
    int seen = 0;
    for (uint32_t j = 0; j < *nset && !seen; j++) seen = (*set)[j] == c;
    if (seen || c == 0) continue;
    if (*nset == *cap) {
      uint32_t nc = *cap ? *cap * 2 : 16;
      ddmc_class *ns = nc < 65536 ? realloc(*set, nc * sizeof *ns) : NULL;
      if (ns == NULL) return -1;
      *set = ns;
      *cap = nc;
    }
    (*set)[(*nset)++] = c;
    int err = 0;
    ja_class *ik = ja_class_of(c, &err);
    if (ik == NULL) return -1;
    *n += (uint64_t)ik->nfields;
    if (add_interfaces(ik, set, nset, cap, n) != 0) return -1;
  }
  return 0;
}

/* The JVM TI field indexes of class c's instances (header comment); NULL when they cannot be
 * known. The bridge's order: c's instance fields, then its superclass's, up to Object. */
static layout *layout_new(ddmc_class c) {
  ddmc_class chain[256];
  uint32_t m = 0, nset = 0, cap = 0;
  uint64_t total = 0, nfields = 0;
  ddmc_class *set = NULL;
  int err = 0, ok = 1;
  for (ddmc_class s = c; s != 0 && ok; m++) {
    ja_class *k = m < 256 ? ja_class_of(s, &err) : NULL;
    ok = k != NULL && add_interfaces(k, &set, &nset, &cap, &total) == 0;
    if (!ok) break;
    chain[m] = s;
    nfields += (uint64_t)k->nfields;
    s = k->super;
  }
  free(set);
  total += nfields;
  if (!ok || total > (1u << 20)) return NULL;
  layout *l = calloc(1, sizeof *l);
  if (l == NULL) return NULL;
  l->nti = (uint32_t)total;
  l->pos = malloc(((size_t)total + 1) * sizeof *l->pos);
  l->at = malloc(((size_t)nfields + 1) * sizeof *l->at);
  l->type = malloc((size_t)nfields + 1);
  if (!l->pos || !l->at || !l->type) goto fail;
  for (uint32_t i = 0; i < l->nti; i++) l->pos[i] = -1;
  /* chain[i]'s fields start after those of every class above it. */
  uint64_t start = total;
  for (uint32_t i = 0; i < m; i++) start -= (uint64_t)ja_class_of(chain[i], &err)->nfields;
  uint64_t first[256];
  for (uint32_t i = m; i-- > 0;) {
    first[i] = start;
    start += (uint64_t)ja_class_of(chain[i], &err)->nfields;
  }
  for (uint32_t i = 0; i < m; i++) {
    ja_class *k = ja_class_of(chain[i], &err);
    for (jint j = 0; j < k->nfields; j++) {
      ja_field *f = ja_field_of(chain[i], (uint32_t)j, &err);
      if (f == NULL || f->sig == NULL) goto fail;
      if (f->mods & 0x0008) continue; /* static */
      char t = f->sig[0] == '[' ? 'L' : f->sig[0];
      l->pos[first[i] + (uint64_t)j] = (int32_t)l->n;
      l->type[l->n] = t;
      l->at[l->n] = l->bytes;
      l->bytes += (uint32_t)type_size(t);
      l->n++;
    }
  }
  return l;
fail:
  layout_free(l);
  return NULL;
}

/* The kind of objects of class c, with its layout, worked out once per class. */
static int kind_of(ddmc_class c) {
  uint32_t s = ja_slot_of(c);
  if (s >= wv.nslots) return K_NONE;
  if (wv.kind[s] != K_UNKNOWN) return wv.kind[s];
  int err = 0;
  ja_class *k = ja_class_of(c, &err);
  int kind = K_NONE;
  if (k == NULL || k->sig == NULL) {
    kind = K_NONE;
  } else if (k->sig[0] == '[') {
    kind = k->sig[1] == 'L' || k->sig[1] == '[' ? K_REF_ARRAY : K_NONE;
  } else if (strcmp(k->sig, "Ljava/lang/Class;") != 0) {
    /* A class object's own fields are not reported (its class's statics are, instead). */
    wv.lay[s] = layout_new(c);
    kind = wv.lay[s] != NULL ? K_INSTANCE : K_NONE;
  }
  wv.kind[s] = (uint8_t)kind;
  return kind;
}

/* In the callbacks: the offsets entry of an object's tag, or NULL. */
static uint64_t *off_of(jlong tag) {
  int64_t ix = tag > 0 ? ja_walk_index((uint64_t)tag) : -1;
  return ix >= 0 && (uint64_t)ix < wv.span ? &wv.off[ix] : NULL;
}

static const layout *layout_of(jlong class_tag) {
  uint32_t s = class_tag > 0 ? ja_slot_of((uint64_t)class_tag) : UINT32_MAX;
  return s < wv.nslots && wv.kind[s] == K_INSTANCE ? wv.lay[s] : NULL;
}

/* Where field index ix of an object goes, checked against its layout and the type JVM TI gives;
 * NULL (and the object marked) when it does not fit. An object of a class without a layout was
 * placed as a plain java.lang.Object (heap.c's describable: no fields): nothing to keep. */
static uint8_t *slot_for(uint64_t *off, jlong class_tag, jint ix, char type) {
  const layout *l = layout_of(class_tag);
  if (l == NULL) return NULL;
  int32_t p = l != NULL && ix >= 0 && (uint32_t)ix < l->nti ? l->pos[ix] : -1;
  uint64_t at = (*off & OFF_MASK) - 1 + (p >= 0 ? l->at[p] : 0);
  if (p < 0 || l->type[p] != type || at + type_size(type) > wv.nbytes) {
    *off |= BROKEN;
    return NULL;
  }
  return wv.vals + at;
}

static jint JNICALL prim_cb(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info, jlong class_tag,
                            jlong *tag_ptr, jvalue value, jvmtiPrimitiveType type, void *ud) {
  if (kind != JVMTI_HEAP_REFERENCE_FIELD) return 0; /* a class's statics */
  uint64_t *off = off_of(*tag_ptr);
  if (off == NULL || (*off & OFF_MASK) == 0 || (*off & BROKEN)) return 0;
  char t = (char)type; /* JVM TI's primitive types are the signature letters */
  uint8_t *p = slot_for(off, class_tag, info->field.index, t);
  if (p == NULL) return 0;
  uint8_t u8 = t == 'Z' ? value.z : (uint8_t)value.b;
  switch (t) {
    case 'Z':
    case 'B': memcpy(p, &u8, 1); break;
    case 'C': memcpy(p, &value.c, 2); break;
    case 'S': memcpy(p, &value.s, 2); break;
    case 'I': memcpy(p, &value.i, 4); break;
    case 'F': memcpy(p, &value.f, 4); break;
    case 'J': memcpy(p, &value.j, 8); break;
    default: memcpy(p, &value.d, 8); break;
  }
  return 0;
}

static jint JNICALL ref_cb(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info, jlong class_tag,
                           jlong referrer_class_tag, jlong size, jlong *tag_ptr, jlong *referrer_tag_ptr,
                           jint length, void *ud) {
  uint64_t *me = off_of(*tag_ptr);
  if (me != NULL) *me |= REACHED;
  if ((kind != JVMTI_HEAP_REFERENCE_FIELD && kind != JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT) || referrer_tag_ptr == NULL)
    return JVMTI_VISIT_OBJECTS;
  uint64_t *from = off_of(*referrer_tag_ptr);
  if (from == NULL || (*from & OFF_MASK) == 0 || (*from & BROKEN)) return JVMTI_VISIT_OBJECTS;
  if (me == NULL || (uint64_t)*tag_ptr > UINT32_MAX) {
    *from |= BROKEN; /* a referee without a number of the walk */
    return JVMTI_VISIT_OBJECTS;
  }
  uint32_t id = (uint32_t)*tag_ptr;
  uint8_t *p;
  if (kind == JVMTI_HEAP_REFERENCE_FIELD) {
    p = slot_for(from, referrer_class_tag, info->field.index, 'L');
  } else {
    uint32_t s = referrer_class_tag > 0 ? ja_slot_of((uint64_t)referrer_class_tag) : UINT32_MAX;
    if (s >= wv.nslots || wv.kind[s] != K_REF_ARRAY) return JVMTI_VISIT_OBJECTS; /* placed as an Object */
    uint64_t at = (*from & OFF_MASK) - 1 + 4 * (uint64_t)(uint32_t)info->array.index;
    p = at + 4 <= wv.nbytes ? wv.vals + at : NULL;
    if (p == NULL) *from |= BROKEN;
  }
  if (p != NULL) memcpy(p, &id, 4);
  return JVMTI_VISIT_OBJECTS;
}

/* Every described object's place among the values (outside the callbacks: classes' layouts need
 * JVM TI calls that heap callbacks may not make). */
static int place_objects(void) {
  size_t n = 0;
  const ja_wobj *os = ja_walk_objects(&n);
  for (size_t i = 0; i < n; i++) {
    if (os[i].cls == 0) continue;
    int k = kind_of(os[i].cls);
    int64_t ix = ja_walk_index(os[i].ref);
    if (k == K_NONE || ix < 0 || (uint64_t)ix >= wv.span) continue;
    uint64_t bytes = k == K_REF_ARRAY ? 4 * (uint64_t)(os[i].length > 0 ? os[i].length : 0) : wv.lay[ja_slot_of(os[i].cls)]->bytes;
    wv.off[ix] = wv.nbytes + 1;
    wv.nbytes += bytes;
  }
  return 0;
}

static int collect(void) {
  uint32_t kept_end = 0;
  ja_table_ends(&kept_end, &wv.nslots);
  wv.span = ja_walk_span();
  wv.off = calloc(wv.span ? wv.span : 1, sizeof *wv.off);
  wv.kind = calloc(wv.nslots ? wv.nslots : 1, 1);
  wv.lay = calloc(wv.nslots ? wv.nslots : 1, sizeof *wv.lay);
  if (!wv.off || !wv.kind || !wv.lay || place_objects() != 0) return -1;
  wv.vals = calloc(wv.nbytes ? wv.nbytes : 1, 1);
  if (wv.vals == NULL) return -1;
  jvmtiHeapCallbacks cb;
  memset(&cb, 0, sizeof cb);
  cb.primitive_field_callback = prim_cb;
  ja_walk_phase("walk_values: layouts and places");
  if ((*ja.ti)->IterateThroughHeap(ja.ti, JVMTI_HEAP_FILTER_UNTAGGED, NULL, &cb, NULL) != JVMTI_ERROR_NONE) return -1;
  ja_walk_phase("walk_values: primitive fields (IterateThroughHeap)");
  memset(&cb, 0, sizeof cb);
  cb.heap_reference_callback = ref_cb;
  if ((*ja.ti)->FollowReferences(ja.ti, 0, NULL, NULL, &cb, NULL) != JVMTI_ERROR_NONE) return -1;
  ja_walk_phase("walk_values: references (FollowReferences)");
  for (uint32_t i = 0; i < wv.span; i++) {
    if ((wv.off[i] & OFF_MASK) == 0) continue;
    if (!(wv.off[i] & REACHED) || (wv.off[i] & BROKEN)) {
      wv.off[i] = 0;
      wv.dropped++;
    } else {
      wv.held++;
    }
  }
  return 0;
}

void ja_walk_values_end(void) {
  /* DDMC_JDWP_VERBOSE: whether the walk's values served the dump (tests/hotspot/prof_agent.py). */
  if (ja.verbose && wv.state != 0)
    fprintf(stderr, "ddmcjdwp: heap walk values: %s, %llu objects (%llu bytes) from the walk, %llu left to JNI\n",
            wv.state == 1 ? "collected" : "failed", (unsigned long long)wv.held, (unsigned long long)wv.nbytes,
            (unsigned long long)wv.dropped);
  for (uint32_t s = 0; wv.lay != NULL && s < wv.nslots; s++) layout_free(wv.lay[s]);
  free(wv.lay);
  free(wv.kind);
  free(wv.off);
  free(wv.vals);
  memset(&wv, 0, sizeof wv);
}

static void value_at(const uint8_t *p, char t, ddmc_value *out) {
  int8_t b;
  uint16_t u16;
  int16_t s16;
  memset(out, 0, sizeof *out);
  out->tag = t;
  switch (t) {
    case 'Z': out->u.i = p[0]; break;
    case 'B':
      memcpy(&b, p, 1);
      out->u.i = b;
      break;
    case 'C':
      memcpy(&u16, p, 2);
      out->u.i = u16;
      break;
    case 'S':
      memcpy(&s16, p, 2);
      out->u.i = s16;
      break;
    case 'I': memcpy(&out->u.i, p, 4); break;
    case 'F': memcpy(&out->u.f, p, 4); break;
    case 'J': memcpy(&out->u.j, p, 8); break;
    case 'D': memcpy(&out->u.d, p, 8); break;
    default: {
      uint32_t id;
      memcpy(&id, p, 4);
      out->u.l = id;
    }
  }
}

static int walk_values(void *vd, ddmc_ref o, ddmc_class c, uint32_t first, uint32_t n, ddmc_value *out) {
  if (!ja_walk_on()) return DDMC_JDWP_INVALID_THREAD;
  if (wv.state == 0) wv.state = collect() == 0 ? 1 : 2;
  int64_t ix = wv.state == 1 ? ja_walk_index(o) : -1;
  if (ix < 0 || (uint64_t)ix >= wv.span || wv.off[ix] == 0) return DDMC_JDWP_INVALID_OBJECT;
  const uint8_t *base = wv.vals + (wv.off[ix] & OFF_MASK) - 1;
  int k = kind_of(c);
  if (k == K_REF_ARRAY) {
    if ((uint64_t)(base - wv.vals) + 4 * ((uint64_t)first + n) > wv.nbytes) return DDMC_JDWP_INVALID_INDEX;
    for (uint32_t i = 0; i < n; i++) value_at(base + 4 * ((uint64_t)first + i), 'L', &out[i]);
    return 0;
  }
  const layout *l = k == K_INSTANCE ? wv.lay[ja_slot_of(c)] : NULL;
  if (l == NULL || first > l->n || n > l->n - first) return DDMC_JDWP_INVALID_OBJECT;
  for (uint32_t i = 0; i < n; i++) value_at(base + l->at[first + i], l->type[first + i], &out[i]);
  return 0;
}

void ja_bridge_heapvals(ddmc_vm_bridge *b) { b->walk_values = walk_values; }
