/* SPDX-License-Identifier: Apache-2.0 */
/* Object tags: SetTag, GetTag and each environment's weak tag table (tags.h).
 *
 * An open-addressing table (linear probing, power-of-two capacity, at most 3/4 full counting
 * tombstones) of (ref, tag). Beside it, freed[]: the tags of entries the GC's sweep dropped,
 * waiting for ObjectFree. The sweep allocates nothing: live entries plus waiting tags never pass
 * the table's capacity (SetTag grows the table, and freed[] with it, before that could happen),
 * so each dropped entry has its place in freed[] already. */
#include <stdlib.h>
#include <string.h>

#include "jvmti/tags.h"

#define TOMB ((ddmc_ref) ~(ddmc_ref)0) /* a removed entry: probing goes on past it */

typedef struct entry {
  ddmc_ref ref; /* 0: empty */
  jlong tag;
} entry;

struct ddmc__jv_tags {
  pthread_mutex_t lock;
  entry *v DDMC_GUARDED_BY(lock);
  uint32_t cap DDMC_GUARDED_BY(lock);  /* power of two, or 0 */
  uint32_t n DDMC_GUARDED_BY(lock);    /* live entries */
  uint32_t used DDMC_GUARDED_BY(lock); /* live entries and tombstones */
  jlong *freed DDMC_GUARDED_BY(lock);  /* cap slots */
  uint32_t nfreed DDMC_GUARDED_BY(lock);
  int stale DDMC_GUARDED_BY(lock); /* a moving collector changed refs: probing is wrong until rehashed */
};

static uint32_t hash(ddmc_ref r) {
  uint64_t h = r * 0x9E3779B97F4A7C15ull;
  return (uint32_t)(h >> 32);
}

ddmc__jv_tags *ddmc__jv_tags_of(ddmc__jv_jenv *e, int make) {
  ddmc__jv_tags *t = atomic_load_explicit(&e->tags, memory_order_acquire);
  if (t != NULL || !make) return t;
  ddmc__jv_tags *n = calloc(1, sizeof(*n));
  if (n == NULL) return NULL;
  if (pthread_mutex_init(&n->lock, NULL) != 0) {
    free(n);
    return NULL;
  }
  ddmc__jv_tags *expect = NULL;
  if (!atomic_compare_exchange_strong(&e->tags, &expect, n)) { /* another thread made it first */
    pthread_mutex_destroy(&n->lock);
    free(n);
    return expect;
  }
  return n;
}

void ddmc__jv_tags_destroy(ddmc__jv_tags *t) {
  if (t == NULL) return;
  free(t->v);
  free(t->freed);
  pthread_mutex_destroy(&t->lock);
  free(t);
}

void ddmc__jv_tags_free(ddmc__jvmti *jv) {
  for (ddmc__jv_jenv *e = atomic_load(&jv->envs); e != NULL; e = e->next)
    ddmc__jv_tags_destroy(atomic_exchange(&e->tags, NULL));
}

/* The slot of ref (lock held), or -1. */
static int64_t find(ddmc__jv_tags *t, ddmc_ref ref) {
  if (t->cap == 0) return -1;
  if (t->stale) {
    for (uint32_t i = 0; i < t->cap; i++)
      if (t->v[i].ref == ref) return i;
    return -1;
  }
  uint32_t mask = t->cap - 1;
  for (uint32_t i = hash(ref) & mask, k = 0; k < t->cap; i = (i + 1) & mask, k++) {
    if (t->v[i].ref == 0) return -1;
    if (t->v[i].ref == ref) return i;
  }
  return -1;
}

/* Rebuilds the table with capacity cap (lock held). Returns 0 or -1 (no memory: unchanged). */
static int rehash(ddmc__jv_tags *t, uint32_t cap) {
  entry *v = calloc(cap, sizeof(entry));
  jlong *freed = calloc(cap, sizeof(jlong));
  if (v == NULL || freed == NULL) {
    free(v);
    free(freed);
    return -1;
  }
  uint32_t mask = cap - 1;
  for (uint32_t i = 0; i < t->cap; i++) {
    ddmc_ref r = t->v[i].ref;
    if (r == 0 || r == TOMB) continue;
    uint32_t j = hash(r) & mask;
    while (v[j].ref != 0) j = (j + 1) & mask;
    v[j] = t->v[i];
  }
  if (t->nfreed) memcpy(freed, t->freed, sizeof(jlong) * t->nfreed);
  free(t->v);
  free(t->freed);
  t->v = v;
  t->freed = freed;
  t->cap = cap;
  t->used = t->n;
  t->stale = 0;
  return 0;
}

/* Outside the GC: a stale table is rehashed at the first lookup (if memory allows). */
static void fresh(ddmc__jv_tags *t) {
  if (t->stale && t->cap) rehash(t, t->cap);
}

jlong ddmc__jv_tags_get(ddmc__jv_tags *t, ddmc_ref ref) {
  if (t == NULL || ref == 0) return 0;
  ddmc__lock(&t->lock);
  fresh(t);
  int64_t i = find(t, ref);
  jlong tag = i >= 0 ? t->v[i].tag : 0;
  ddmc__unlock(&t->lock);
  return tag;
}

jvmtiError ddmc__jv_tags_set(ddmc__jv_tags *t, ddmc_ref ref, jlong tag) {
  if (t == NULL || ref == 0 || ref == TOMB) return JVMTI_ERROR_INVALID_OBJECT;
  jvmtiError rc = JVMTI_ERROR_NONE;
  ddmc__lock(&t->lock);
  fresh(t);
  int64_t i = find(t, ref);
  if (i >= 0) {
    if (tag != 0) {
      t->v[i].tag = tag;
    } else {
      t->v[i].ref = TOMB;
      t->v[i].tag = 0;
      t->n--;
    }
    ddmc__unlock(&t->lock);
    return rc;
  }
  if (tag == 0) {
    ddmc__unlock(&t->lock);
    return rc;
  }
  /* Room for one more live entry, with the tags waiting for ObjectFree, at most 3/4 full. */
  uint64_t need = (uint64_t)t->n + t->nfreed + 1;
  if (t->n >= DDMC__TAGS_MAX) {
    rc = JVMTI_ERROR_OUT_OF_MEMORY;
  } else if (t->stale || need * 4 > (uint64_t)t->cap * 3 || ((uint64_t)t->used + 1) * 4 > (uint64_t)t->cap * 3) {
    uint64_t cap = 64;
    while (need * 4 > cap * 3 || cap < t->cap / 2) cap *= 2;
    if (need * 8 > cap * 3) cap *= 2; /* grow ahead, not at every insert */
    if (cap > ((uint64_t)DDMC__TAGS_MAX * 2) || rehash(t, (uint32_t)cap) != 0) rc = JVMTI_ERROR_OUT_OF_MEMORY;
  }
  if (rc == JVMTI_ERROR_NONE) {
    uint32_t mask = t->cap - 1, j = hash(ref) & mask;
    while (t->v[j].ref != 0 && t->v[j].ref != TOMB) j = (j + 1) & mask;
    if (t->v[j].ref == 0) t->used++;
    t->v[j].ref = ref;
    t->v[j].tag = tag;
    t->n++;
  }
  ddmc__unlock(&t->lock);
  return rc;
}

void ddmc__jv_tags_each(ddmc__jv_tags *t, int (*fn)(void *arg, ddmc_ref ref, jlong tag), void *arg) {
  if (t == NULL) return;
  ddmc__lock(&t->lock);
  for (uint32_t i = 0; i < t->cap; i++)
    if (t->v[i].ref != 0 && t->v[i].ref != TOMB && fn(arg, t->v[i].ref, t->v[i].tag)) break;
  ddmc__unlock(&t->lock);
}

uint32_t ddmc__jv_tags_count(ddmc__jv_tags *t) {
  if (t == NULL) return 0;
  ddmc__lock(&t->lock);
  uint32_t n = t->n;
  ddmc__unlock(&t->lock);
  return n;
}

void ddmc__jv_tags_sweep(ddmc__jv_tags *t, ddmc_gc_is_live_fn is_live, void *arg, int keep_freed) {
  if (t == NULL) return;
  ddmc__lock(&t->lock);
  for (uint32_t i = 0; i < t->cap; i++) {
    ddmc_ref r = t->v[i].ref;
    if (r == 0 || r == TOMB || (r >> 63) != 0) continue; /* a class without class object stays */
    ddmc_ref moved = r;
    if (is_live(arg, &moved)) {
      if (moved != r) {
        t->v[i].ref = moved;
        t->stale = 1;
      }
      continue;
    }
    /* n + nfreed <= 3/4 cap always (ddmc__jv_tags_set), so freed[] has room. */
    if (keep_freed && t->nfreed < t->cap) t->freed[t->nfreed++] = t->v[i].tag;
    t->v[i].ref = TOMB;
    t->v[i].tag = 0;
    t->n--;
  }
  ddmc__unlock(&t->lock);
}

uint32_t ddmc__jv_tags_take_freed(ddmc__jv_tags *t, jlong *out, uint32_t max) {
  if (t == NULL) return 0;
  ddmc__lock(&t->lock);
  uint32_t k = 0;
  while (k < max && t->nfreed > 0) out[k++] = t->freed[--t->nfreed];
  ddmc__unlock(&t->lock);
  return k;
}

/* ---- SetTag, GetTag (start and live phases; can_tag_objects) */

static jvmtiError tag_check(ddmc__jv_jenv *e) {
  jvmtiError rc = ddmc__jv_phase_ok(e, JVMTI_PHASE_START | JVMTI_PHASE_LIVE);
  if (rc) return rc;
  return ddmc__jv_jenv_has_cap(e, DDMC_CAP_can_tag_objects) ? JVMTI_ERROR_NONE : JVMTI_ERROR_MUST_POSSESS_CAPABILITY;
}

/* The object a handle names (a class handle: its class object). */
static jvmtiError object_of(ddmc__jv_jenv *e, jobject h, ddmc_ref *out) {
  ddmc__jv_cell c;
  if (h == NULL || ddmc__jv_ref_get(e->jv, h, &c) != 0 || (c.ref == 0 && c.cls == 0)) return JVMTI_ERROR_INVALID_OBJECT;
  *out = c.ref != 0 ? c.ref : DDMC__CLASS_KEY(c.cls);
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_GetTag(ddmc__jv_jenv *e, jobject object, jlong *tag_ptr) {
  jvmtiError rc = tag_check(e);
  if (rc) return rc;
  ddmc_ref ref;
  if ((rc = object_of(e, object, &ref)) != 0) return rc;
  if (tag_ptr == NULL) return JVMTI_ERROR_NULL_POINTER;
  *tag_ptr = ddmc__jv_tags_get(ddmc__jv_tags_of(e, 0), ref);
  return JVMTI_ERROR_NONE;
}

jvmtiError ddmc__jv_jt_SetTag(ddmc__jv_jenv *e, jobject object, jlong tag) {
  jvmtiError rc = tag_check(e);
  if (rc) return rc;
  ddmc_ref ref;
  if ((rc = object_of(e, object, &ref)) != 0) return rc;
  ddmc__jv_tags *t = ddmc__jv_tags_of(e, tag != 0);
  if (t == NULL) return tag != 0 ? JVMTI_ERROR_OUT_OF_MEMORY : JVMTI_ERROR_NONE;
  return ddmc__jv_tags_set(t, ref, tag);
}
