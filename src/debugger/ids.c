/* SPDX-License-Identifier: Apache-2.0 */
/* The ID registry: objectIDs and referenceTypeIDs for the VM's objects and classes.
 *
 * One table of slots serves both. An ID is (generation << 32) | (slot + 1), with generations
 * drawn from one counter that never restarts, so an ID from a slot's earlier occupant, from an
 * earlier session, or made up by a peer never names anything: it is an error reply, never a
 * call into the VM with a bad value. A hash table (linear probing, backward-shift deletion) finds
 * the slot of an object or class the registry already knows, so the same object always gets the
 * same ID, as JDI's == on mirrors requires.
 *
 * Objects with an ID are held as the JDK's agent holds them when the VM can release names
 * (bridge.release_ref): weakly, strong (a GC root, and bridge.hold_ref) only while DisableCollection is
 * in force, released when disposed or at session end; the VM's sweep (ddmc_gc_sweep) marks the
 * ones it frees collected, and their IDs answer INVALID_OBJECT. A VM without release_ref keeps
 * every object with an ID (a root) until the debugger disposes of it or leaves. The table is
 * bounded (max_slots): past it, OUT_OF_MEMORY.
 *
 * Classes get a description (ddmc__dbg_cls) copied from bridge.class_info on first sight: filters match
 * on it from VM threads without calling the VM again. */
#include <string.h>

#include "debugger/state.h"

#define DDMC__IDS_MAX_SLOTS (1u << 20)
#define DDMC__SUPER_DEPTH 64

int ddmc__dbg_ids_init(ddmc__dbg_ids *ids) {
  memset(ids, 0, sizeof(*ids));
  ids->next_gen = 1;
  ids->max_slots = DDMC__IDS_MAX_SLOTS;
  return pthread_mutex_init(&ids->lock, NULL) == 0 ? 0 : DDMC_ENOMEM;
}

static uint64_t mix(uint64_t x, int kind) {
  x ^= (uint64_t)kind * 0x9e3779b97f4a7c15ull;
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

static uint64_t make_id(const ddmc__dbg_ids *ids, uint32_t slot) {
  return ((uint64_t)ids->slots[slot].gen << 32) | (uint64_t)(slot + 1);
}

/* Slot index of (kind, key), or -1. Lock held. */
static int64_t find(const ddmc__dbg_ids *ids, int kind, uint64_t key) {
  if (ids->hash_cap == 0) return -1;
  uint32_t mask = ids->hash_cap - 1;
  for (uint32_t i = (uint32_t)mix(key, kind) & mask;; i = (i + 1) & mask) {
    uint32_t h = ids->hash[i];
    if (h == 0) return -1;
    const ddmc__dbg_slot *s = &ids->slots[h - 1];
    if (s->kind == kind && s->key == key) return h - 1;
  }
}

static void hash_put(ddmc__dbg_ids *ids, uint32_t slot) {
  uint32_t mask = ids->hash_cap - 1;
  const ddmc__dbg_slot *s = &ids->slots[slot];
  uint32_t i = (uint32_t)mix(s->key, s->kind) & mask;
  while (ids->hash[i] != 0) i = (i + 1) & mask;
  ids->hash[i] = slot + 1;
}

static void hash_del(ddmc__dbg_ids *ids, uint32_t slot) {
  uint32_t mask = ids->hash_cap - 1;
  const ddmc__dbg_slot *s = &ids->slots[slot];
  uint32_t i = (uint32_t)mix(s->key, s->kind) & mask;
  while (ids->hash[i] != slot + 1) {
    if (ids->hash[i] == 0) return;
    i = (i + 1) & mask;
  }
  /* Backward shift: pull later members of the probe run into the hole. */
  uint32_t hole = i;
  for (uint32_t j = (i + 1) & mask; ids->hash[j] != 0; j = (j + 1) & mask) {
    const ddmc__dbg_slot *o = &ids->slots[ids->hash[j] - 1];
    uint32_t home = (uint32_t)mix(o->key, o->kind) & mask;
    /* j's entry may move to hole if its home is not in (hole, j]. */
    int in_range = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
    if (!in_range) {
      ids->hash[hole] = ids->hash[j];
      hole = j;
    }
  }
  ids->hash[hole] = 0;
}

static int rehash(ddmc__dbg *d, uint32_t cap) {
  ddmc__dbg_ids *ids = &d->ids;
  uint32_t *h = ddmc__calloc(d->mem, cap, sizeof(uint32_t));
  if (h == NULL) return DDMC_JDWP_OUT_OF_MEMORY;
  ddmc__free(d->mem, ids->hash);
  ids->hash = h;
  ids->hash_cap = cap;
  for (uint32_t i = 0; i < ids->nslots; i++)
    if (ids->slots[i].kind != DDMC__SLOT_FREE && !ids->slots[i].collected) hash_put(ids, i);
  return 0;
}

/* A new slot for (kind, key), in the hash. Lock held. Returns the index or -1 (full / no memory). */
static int64_t occupy(ddmc__dbg *d, int kind, uint64_t key) {
  ddmc__dbg_ids *ids = &d->ids;
  if (ids->count >= ids->max_slots) return -1;
  if ((uint64_t)(ids->count + 1) * 2 > ids->hash_cap) {
    uint32_t cap = ids->hash_cap ? ids->hash_cap * 2 : 256;
    if (rehash(d, cap) != 0) return -1;
  }
  uint32_t idx;
  if (ids->free_head != 0) {
    idx = ids->free_head - 1;
    ids->free_head = ids->slots[idx].next_free;
  } else {
    if (ids->nslots == ids->cap) {
      uint32_t cap = ids->cap ? ids->cap * 2 : 256;
      ddmc__dbg_slot *s = ddmc__realloc(d->mem, ids->slots, (size_t)cap * sizeof(*s));
      if (s == NULL) return -1;
      ids->slots = s;
      ids->cap = cap;
    }
    idx = ids->nslots++;
  }
  ddmc__dbg_slot *s = &ids->slots[idx];
  memset(s, 0, sizeof(*s));
  s->gen = ids->next_gen++;
  if (ids->next_gen == 0) ids->next_gen = 1;
  s->kind = (uint8_t)kind;
  s->key = key;
  ids->count++;
  hash_put(ids, idx);
  return idx;
}

static void vacate(ddmc__dbg *d, uint32_t idx) {
  ddmc__dbg_ids *ids = &d->ids;
  ddmc__dbg_slot *s = &ids->slots[idx];
  if (!s->collected) hash_del(ids, idx);
  s->kind = DDMC__SLOT_FREE;
  s->gen = 0;
  s->next_free = ids->free_head;
  ids->free_head = idx + 1;
  ids->count--;
}

/* The slot an ID names, or -1. Lock held. */
static int64_t slot_of(const ddmc__dbg_ids *ids, uint64_t id) {
  uint32_t slot = (uint32_t)id, gen = (uint32_t)(id >> 32);
  if (slot == 0 || slot > ids->nslots || gen == 0) return -1;
  const ddmc__dbg_slot *s = &ids->slots[slot - 1];
  if (s->kind == DDMC__SLOT_FREE || s->gen != gen) return -1;
  return slot - 1;
}

int ddmc__dbg_id_of_object(ddmc__dbg *d, ddmc_ref o, uint64_t *id) {
  *id = 0;
  if (o == 0) return 0;
  ddmc__dbg_ids *ids = &d->ids;
  ddmc__lock(&ids->lock);
  int64_t idx = find(ids, DDMC__SLOT_OBJECT, o);
  if (idx < 0) idx = occupy(d, DDMC__SLOT_OBJECT, o);
  int rc = DDMC_JDWP_OUT_OF_MEMORY;
  if (idx >= 0) {
    if (ids->slots[idx].refs < INT32_MAX) ids->slots[idx].refs++;
    *id = make_id(ids, (uint32_t)idx);
    rc = 0;
  }
  ddmc__unlock(&ids->lock);
  return rc;
}

int ddmc__dbg_object_of_id(ddmc__dbg *d, uint64_t id, ddmc_ref *out) {
  *out = 0;
  if (id == 0) return 0;
  ddmc__dbg_ids *ids = &d->ids;
  int rc = DDMC_JDWP_INVALID_OBJECT;
  ddmc__lock(&ids->lock);
  int64_t idx = slot_of(ids, id);
  if (idx >= 0) {
    const ddmc__dbg_slot *s = &ids->slots[idx];
    if (s->kind == DDMC__SLOT_OBJECT) {
      if (!s->collected) {
        *out = s->key;
        rc = 0;
      }
    } else if (s->cls->class_object != 0) { /* a referenceTypeID where an object was due: its Class */
      *out = s->cls->class_object;
      rc = 0;
    }
  }
  ddmc__unlock(&ids->lock);
  return rc;
}

int ddmc__dbg_class_of_id(ddmc__dbg *d, uint64_t id, const ddmc__dbg_cls **out) {
  *out = NULL;
  if (id == 0) return DDMC_JDWP_INVALID_CLASS;
  ddmc__dbg_ids *ids = &d->ids;
  int rc = DDMC_JDWP_INVALID_OBJECT; /* JDWP: "not a known ID"; libjdwp answers so too */
  ddmc__lock(&ids->lock);
  int64_t idx = slot_of(ids, id);
  if (idx >= 0) {
    const ddmc__dbg_slot *s = &ids->slots[idx];
    if (s->kind == DDMC__SLOT_CLASS) {
      *out = s->cls;
      rc = 0;
    } else {
      /* A classObjectID: the class whose java.lang.Class it is (a short scan: classes are few,
       * and JDI sends these rarely). Any other object (a thread, a string, an array): INVALID_CLASS,
       * as libjdwp answers. */
      rc = DDMC_JDWP_INVALID_CLASS;
      for (uint32_t i = 0; i < ids->nslots; i++) {
        const ddmc__dbg_slot *c = &ids->slots[i];
        if (c->kind == DDMC__SLOT_CLASS && c->cls->class_object == s->key) {
          *out = c->cls;
          rc = 0;
          break;
        }
      }
    }
  }
  ddmc__unlock(&ids->lock);
  return rc;
}

/* "LDebug;" -> "Debug", "Lp/Q$R;" -> "p.Q$R", "[I" -> "int[]", "[[Ljava/lang/String;" -> ...:
 * written into out when out is non-NULL; returns its length (without the NUL), or SIZE_MAX. */
static size_t dotted_name(const char *sig, char *out) {
  size_t dims = 0;
  while (sig[dims] == '[') dims++;
  const char *base = sig + dims;
  const char *prim = NULL;
  size_t blen;
  switch (*base) {
    case 'Z': prim = "boolean"; break;
    case 'B': prim = "byte"; break;
    case 'C': prim = "char"; break;
    case 'S': prim = "short"; break;
    case 'I': prim = "int"; break;
    case 'J': prim = "long"; break;
    case 'F': prim = "float"; break;
    case 'D': prim = "double"; break;
    case 'V': prim = "void"; break;
    default: break;
  }
  if (prim != NULL) {
    base = prim;
    blen = strlen(prim);
  } else if (*base == 'L') {
    base++;
    blen = strlen(base);
    if (blen > 0 && base[blen - 1] == ';') blen--;
  } else {
    blen = strlen(base);
  }
  if (dims > (SIZE_MAX / 4 - blen) / 2) return SIZE_MAX;
  if (out != NULL) {
    for (size_t i = 0; i < blen; i++) out[i] = base[i] == '/' ? '.' : base[i];
    for (size_t i = 0; i < dims; i++) memcpy(out + blen + 2 * i, "[]", 2);
    out[blen + 2 * dims] = '\0';
  }
  return blen + 2 * dims;
}

/* One block: the description, then its signature and source file (100,000 classes listed by a
 * debugger kept 300,000 small allocations otherwise). The dotted name is made when a ClassMatch
 * asks (ddmc__dbg_cls_dotted), not kept: few classes are ever matched. */
static ddmc__dbg_cls *cls_new(const ddmc__mem *mem, const ddmc_class_info *info) {
  size_t sl = strlen(info->signature);
  size_t fl = info->source_file ? strlen(info->source_file) : 0;
  if (sl > SIZE_MAX / 4 || fl > SIZE_MAX / 4) return NULL;
  ddmc__dbg_cls *k = ddmc__calloc(mem, 1, sizeof(*k) + sl + 1 + (info->source_file ? fl + 1 : 0));
  if (k == NULL) return NULL;
  k->signature = (char *)(k + 1);
  memcpy(k->signature, info->signature, sl + 1);
  if (info->source_file) {
    k->source = k->signature + sl + 1;
    memcpy(k->source, info->source_file, fl + 1);
  }
  return k;
}

size_t ddmc__dbg_cls_dotted(const ddmc__dbg_cls *k, char *out) { return dotted_name(k->signature, out); }

static void cls_free(const ddmc__mem *mem, ddmc__dbg_cls *c) { ddmc__free(mem, c); }

static int cls_get(ddmc__dbg *d, ddmc_class c, const ddmc__dbg_cls **out, int depth);

/* The tag JDWP wants for instances of a class: decided by its name, or an ancestor's. */
static uint8_t instance_tag(ddmc__dbg *d, const ddmc__dbg_cls *c, int depth) {
  const char *s = c->signature;
  if (s[0] == '[') return '[';
  if (strcmp(s, "Ljava/lang/String;") == 0) return 's';
  if (strcmp(s, "Ljava/lang/Class;") == 0) return 'c';
  if (strcmp(s, "Ljava/lang/Thread;") == 0) return 't';
  if (strcmp(s, "Ljava/lang/ThreadGroup;") == 0) return 'g';
  if (strcmp(s, "Ljava/lang/ClassLoader;") == 0) return 'l';
  const ddmc__dbg_cls *sup;
  if (c->superclass != 0 && depth < DDMC__SUPER_DEPTH && cls_get(d, c->superclass, &sup, depth + 1) == 0) {
    uint8_t t = sup->object_tag;
    if (t == 't' || t == 'g' || t == 'l') return t;
  }
  return 'L';
}

static int cls_get(ddmc__dbg *d, ddmc_class c, const ddmc__dbg_cls **out, int depth) {
  *out = NULL;
  if (c == 0) return DDMC_JDWP_INVALID_CLASS;
  ddmc__dbg_ids *ids = &d->ids;
  ddmc__lock(&ids->lock);
  int64_t idx = find(ids, DDMC__SLOT_CLASS, c);
  if (idx >= 0) *out = ids->slots[idx].cls;
  ddmc__unlock(&ids->lock);
  if (*out != NULL) return 0;

  /* First sight: describe it outside the lock (the op may take the VM's own locks). */
  if (d->bridge.class_info == NULL) return DDMC_JDWP_NOT_IMPLEMENTED;
  ddmc_class_info info;
  memset(&info, 0, sizeof(info));
  int rc = d->bridge.class_info(d->vm_data, c, &info);
  if (rc != 0) return rc;
  if (info.signature == NULL || info.signature[0] == '\0') return DDMC_JDWP_INVALID_CLASS;
  ddmc__dbg_cls *k = cls_new(d->mem, &info);
  if (k == NULL) return DDMC_JDWP_OUT_OF_MEMORY;
  k->handle = c;
  k->type_tag = info.type_tag ? info.type_tag : DDMC_TYPE_CLASS;
  k->superclass = info.superclass != c ? info.superclass : 0;
  k->nfields = info.nfields;
  k->nmethods = info.nmethods;
  k->ninterfaces = info.ninterfaces;
  k->class_object = info.class_object;
  k->object_tag = instance_tag(d, k, depth);

  ddmc__lock(&ids->lock);
  idx = find(ids, DDMC__SLOT_CLASS, c);
  if (idx >= 0) { /* another thread described it meanwhile */
    *out = ids->slots[idx].cls;
  } else {
    idx = occupy(d, DDMC__SLOT_CLASS, c);
    if (idx >= 0) {
      ids->slots[idx].cls = k;
      k->id = make_id(ids, (uint32_t)idx);
      *out = k;
      k = NULL;
    }
  }
  ddmc__unlock(&ids->lock);
  cls_free(d->mem, k);
  return *out != NULL ? 0 : DDMC_JDWP_OUT_OF_MEMORY;
}

int ddmc__dbg_cls_get(ddmc__dbg *d, ddmc_class c, const ddmc__dbg_cls **out) { return cls_get(d, c, out, 0); }

int ddmc__dbg_class_of_member_id(ddmc__dbg *d, uint64_t fid, int method, const ddmc__dbg_cls **out, uint32_t *index) {
  uint32_t slot1 = (uint32_t)(fid >> 24) & 0x1fffff, gen = (uint32_t)(fid >> 45), idx1 = (uint32_t)fid & 0xffffff;
  *out = NULL;
  int rc = method ? DDMC_JDWP_INVALID_METHODID : DDMC_JDWP_INVALID_FIELDID;
  ddmc__dbg_ids *ids = &d->ids;
  ddmc__lock(&ids->lock);
  if (slot1 != 0 && slot1 <= ids->nslots && idx1 != 0) {
    const ddmc__dbg_slot *s = &ids->slots[slot1 - 1];
    if (s->kind == DDMC__SLOT_CLASS && (s->gen & 0x7ffff) == gen &&
        idx1 <= (method ? s->cls->nmethods : s->cls->nfields)) {
      *out = s->cls;
      *index = idx1 - 1;
      rc = 0;
    }
  }
  ddmc__unlock(&ids->lock);
  return rc;
}

/* Names are weak (the VM releases them) rather than held as roots. */
static int weak_names(const ddmc__dbg *d) { return d->bridge.release_ref != NULL; }

/* Frees slot idx once DisposeObjects took its references to 0, pinned or not (JDWP frees the ID
 * then, and the JDK's agent drops its strong reference with it); returns the ref to release
 * (0: none). Lock held. */
static ddmc_ref vacate_if_unheld(ddmc__dbg *d, uint32_t idx) {
  ddmc__dbg_slot *s = &d->ids.slots[idx];
  if (s->refs != 0) return 0;
  ddmc_ref r = s->collected ? 0 : s->key; /* a swept object is the VM's already */
  vacate(d, idx);
  return r;
}

static void release(ddmc__dbg *d, ddmc_ref r) {
  if (r != 0 && d->bridge.release_ref != NULL) d->bridge.release_ref(d->vm_data, r);
}

void ddmc__dbg_id_release(ddmc__dbg *d, uint64_t id, int32_t refs) {
  ddmc__dbg_ids *ids = &d->ids;
  ddmc_ref r = 0;
  ddmc__lock(&ids->lock);
  int64_t idx = slot_of(ids, id);
  if (idx >= 0 && ids->slots[idx].kind == DDMC__SLOT_OBJECT) {
    ddmc__dbg_slot *s = &ids->slots[idx];
    s->refs = refs >= s->refs ? 0 : s->refs - refs;
    r = vacate_if_unheld(d, (uint32_t)idx);
  }
  ddmc__unlock(&ids->lock);
  release(d, r);
}

/* The live object slot of id, or -1. Lock held. */
static int64_t live_object(const ddmc__dbg_ids *ids, uint64_t id) {
  int64_t idx = slot_of(ids, id);
  if (idx < 0 || ids->slots[idx].kind != DDMC__SLOT_OBJECT || ids->slots[idx].collected) return -1;
  return idx;
}

int ddmc__dbg_id_disable_collection(ddmc__dbg *d, uint64_t id) {
  ddmc__dbg_ids *ids = &d->ids;
  ddmc_ref r = 0;
  int rc = DDMC_JDWP_INVALID_OBJECT;
  /* null or an ID that names nothing: INVALID_OBJECT, as ART answers (its JDWP tests check it);
   * the JDK's agent answers no error, which hides a debugger's mistake. */
  if (id == 0) return DDMC_JDWP_INVALID_OBJECT;
  ddmc__lock(&ids->lock);
  int64_t idx = live_object(ids, id);
  if (idx >= 0) {
    ddmc__dbg_slot *s = &ids->slots[idx];
    rc = 0;
    if (s->pins < INT32_MAX && s->pins++ == 0) r = s->key;
  }
  ddmc__unlock(&ids->lock);
  /* Pins change only here and in enable, both on the JDWP thread: no hold_ref calls cross. The
   * pin already counts, so a collector running meanwhile keeps the object (visit_roots). */
  if (r != 0 && d->bridge.hold_ref != NULL && (rc = d->bridge.hold_ref(d->vm_data, r, 1)) != 0) {
    ddmc__lock(&ids->lock);
    idx = slot_of(ids, id);
    if (idx >= 0) ids->slots[idx].pins--;
    ddmc__unlock(&ids->lock);
  }
  return rc;
}

int ddmc__dbg_id_enable_collection(ddmc__dbg *d, uint64_t id) {
  ddmc__dbg_ids *ids = &d->ids;
  ddmc_ref weaken = 0;
  int rc = DDMC_JDWP_INVALID_OBJECT; /* null, disposed or made up: as for DisableCollection */
  ddmc__lock(&ids->lock);
  int64_t idx = id != 0 ? slot_of(ids, id) : -1;
  if (idx >= 0 && ids->slots[idx].kind == DDMC__SLOT_OBJECT) {
    ddmc__dbg_slot *s = &ids->slots[idx];
    rc = 0; /* a live or collected object: not pinned is no error */
    if (s->pins > 0 && --s->pins == 0 && !s->collected) weaken = s->key;
  }
  ddmc__unlock(&ids->lock);
  if (weaken != 0 && d->bridge.hold_ref != NULL) (void)d->bridge.hold_ref(d->vm_data, weaken, 0); /* nothing to report */
  return rc;
}

int ddmc__dbg_id_is_collected(ddmc__dbg *d, uint64_t id, int *out) {
  ddmc__dbg_ids *ids = &d->ids;
  ddmc_ref r = 0;
  *out = 1;
  if (id == 0) return DDMC_JDWP_INVALID_OBJECT;
  ddmc__lock(&ids->lock);
  int64_t idx = live_object(ids, id);
  if (idx >= 0) r = ids->slots[idx].key;
  ddmc__unlock(&ids->lock);
  if (r == 0) return 0;
  /* Not seen swept: a VM that sweeps no names (a JVM TI agent) still answers INVALID_OBJECT for
   * one its collector took. */
  ddmc_class c = 0;
  *out = d->bridge.object_class != NULL && d->bridge.object_class(d->vm_data, r, &c) == DDMC_JDWP_INVALID_OBJECT;
  return 0;
}

void ddmc__dbg_ids_reset(ddmc__dbg *d) {
  ddmc__dbg_ids *ids = &d->ids;
  ddmc__lock(&ids->lock);
  ddmc__dbg_slot *slots = ids->slots;
  uint32_t n = ids->nslots;
  ddmc__free(d->mem, ids->hash);
  ids->slots = NULL;
  ids->hash = NULL;
  ids->nslots = ids->cap = ids->hash_cap = ids->count = ids->free_head = 0;
  ddmc__unlock(&ids->lock);
  /* The detached slots are this thread's alone: the VM is told outside the lock. */
  for (uint32_t i = 0; i < n; i++) {
    if (slots[i].kind == DDMC__SLOT_CLASS) cls_free(d->mem, slots[i].cls);
    if (slots[i].kind == DDMC__SLOT_OBJECT && !slots[i].collected) release(d, slots[i].key);
  }
  ddmc__free(d->mem, slots);
}

void ddmc__dbg_ids_destroy(ddmc__dbg *d) {
  ddmc__dbg_ids_reset(d);
  pthread_mutex_destroy(&d->ids.lock);
}

static void rehash_all(ddmc__dbg_ids *ids) {
  if (ids->hash_cap == 0) return;
  memset(ids->hash, 0, (size_t)ids->hash_cap * sizeof(uint32_t));
  for (uint32_t i = 0; i < ids->nslots; i++)
    if (ids->slots[i].kind != DDMC__SLOT_FREE && !ids->slots[i].collected) hash_put(ids, i);
}

void ddmc__dbg_ids_visit_roots(ddmc__dbg *d, ddmc_root_visit_fn fn, void *arg) {
  ddmc__dbg_ids *ids = &d->ids;
  int weak = weak_names(d);
  ddmc__lock(&ids->lock);
  int moved = 0;
  for (uint32_t i = 0; i < ids->nslots; i++) {
    ddmc__dbg_slot *s = &ids->slots[i];
    if (s->kind != DDMC__SLOT_OBJECT || s->collected || (weak && s->pins == 0)) continue;
    ddmc_ref r = s->key;
    fn(arg, &r);
    if (r != s->key) {
      s->key = r;
      moved = 1;
    }
  }
  if (moved) rehash_all(ids);
  ddmc__unlock(&ids->lock);
}

void ddmc__dbg_ids_sweep(ddmc__dbg *d, ddmc_gc_is_live_fn is_live, void *arg) {
  if (!weak_names(d)) return; /* every object with an ID was a root */
  ddmc__dbg_ids *ids = &d->ids;
  ddmc__lock(&ids->lock);
  int changed = 0;
  for (uint32_t i = 0; i < ids->nslots; i++) {
    ddmc__dbg_slot *s = &ids->slots[i];
    if (s->kind != DDMC__SLOT_OBJECT || s->collected) continue;
    ddmc_ref r = s->key;
    if (is_live(arg, &r)) {
      changed |= r != s->key;
      s->key = r;
    } else {
      s->collected = 1; /* out of the hash at the rehash below: a new object may get its address */
      changed = 1;
    }
  }
  if (changed) rehash_all(ids);
  ddmc__unlock(&ids->lock);
}

int ddmc__dbg_is_subclass(ddmc__dbg *d, ddmc_class c, ddmc_class ancestor) {
  for (int depth = 0; c != 0 && depth < 64; depth++) {
    if (c == ancestor) return 1;
    const ddmc__dbg_cls *k;
    if (ddmc__dbg_cls_get(d, c, &k) != 0) return 0;
    c = k->superclass;
  }
  return 0;
}

/* Superinterfaces searched depth first, each class's own in order; budget bounds the whole
 * search (a class graph is a DAG, but a wide one is walked once per path). */
static int implements(ddmc__dbg *d, const ddmc__dbg_cls *k, ddmc_class iface, int depth, int *budget) {
  for (uint32_t i = 0; i < k->ninterfaces && depth < 64 && --*budget > 0; i++) {
    ddmc_class ic = 0;
    const ddmc__dbg_cls *ik;
    if (d->bridge.class_interface == NULL || d->bridge.class_interface(d->vm_data, k->handle, i, &ic) != 0) return 0;
    if (ic == iface) return 1;
    if (ddmc__dbg_cls_get(d, ic, &ik) == 0 && implements(d, ik, iface, depth + 1, budget)) return 1;
  }
  return 0;
}

int ddmc__dbg_is_assignable(ddmc__dbg *d, ddmc_class c, ddmc_class target) {
  int budget = 4096;
  for (int depth = 0; c != 0 && depth < 64; depth++) {
    if (c == target) return 1;
    const ddmc__dbg_cls *k;
    if (ddmc__dbg_cls_get(d, c, &k) != 0) return 0;
    if (implements(d, k, target, 0, &budget)) return 1;
    c = k->superclass;
  }
  return 0;
}
