/* SPDX-License-Identifier: Apache-2.0 */
/* The table of objects the agent has named (ja.h, "Names"), and the JNIEnv of any thread.
 *
 * An object's name is (generation << JA_SLOT_BITS) | slot, its slot at or above KEPT_RESERVE. A
 * slot freed (release_ref, or its object collected) gets the next generation, so a number the
 * library still holds for the old occupant answers INVALID_OBJECT, never the new one.
 * Generations run 1 .. GEN_MAX and wrap: every name stays below JA_WALK_BASE (heap walks' tags)
 * and 0xF0000000 (hprof ids are 4 bytes). Kept entries (below) are never freed, so they need no
 * generation: their name is their slot, below KEPT_RESERVE, and threads' DDM ids stay small
 * (method trace records hold 16-bit thread ids).
 *
 * Entries of objects hold a JNI weak global reference, a strong one while the library holds
 * the object strong (hold_ref: DisableCollection); readers promote it to a local reference under
 * the lock (ja_obj), so no reference is deleted under a reader. Classes and threads are "kept":
 * a strong reference for the life of the process (the agent hangs their descriptions and
 * suspension state off the entry), counted apart from the bound on objects, so events keep
 * naming threads and classes when the table of objects is full.
 *
 * The bottom of the agent: every file calls in, and this one calls no other (ctest
 * check_layers_agent). So it holds the agent's state (ja), a heap walk's objects are lent to it
 * by heap.c (ja_walk_lend) rather than asked of heap.c, and heap.c tells it of each collection
 * (ja_gc_ended). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ja.h"

#define CHUNK_BITS 12
#define CHUNK (1u << CHUNK_BITS)
#define MAX_CHUNKS (JA_MAX_SLOTS / CHUNK)
#define SLOT_MASK (JA_MAX_SLOTS - 1)
/* The largest generation: names stay below JA_WALK_BASE - 1 (heap.c's marker). */
#define GEN_MAX ((uint32_t)(JA_WALK_BASE >> JA_SLOT_BITS) - 2)
/* Slots kept back for classes and threads whatever the bound on objects. */
#define KEPT_RESERVE (1u << 18)

/* agent/README.md states a name's cost from this size. */
_Static_assert(sizeof(void *) != 8 || sizeof(ja_entry) == 48, "agent/README.md: an entry is 48 bytes");

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static ja_entry *_Atomic chunks[MAX_CHUNKS];
/* Slots [1, next_kept) and [KEPT_RESERVE, next_obj) have been used (slot 0 would be the number 0,
 * null); readers take them with acquire, so an entry below is whole. */
static atomic_uint_fast32_t next_kept = 1, next_obj = KEPT_RESERVE;
static uint32_t free_head;    /* slot + 1 of the first free slot, 0: none (under the lock) */
static uint32_t objects;      /* entries in use that are not kept: what the bound counts */
static uint32_t kept;         /* kept entries (classes, threads) */
static uint32_t since_reclaim; /* objects named since the last reclaim pass */
static unsigned gcs_at_reclaim = ~0u; /* gc_count at the last pass */
/* Collections ended so far (heap.c's GarbageCollectionFinish counts them, ja_gc_ended): the pass
 * for collected names runs at the bound only after one. */
static atomic_uint gc_count;
static atomic_uint max_objects = JA_MAX_SLOTS - KEPT_RESERVE;
static atomic_int walk_active; /* a heap walk: new names take fresh slots (heap.c reads them) */
/* The walk's objects, lent by heap.c (ja_walk_lend): walk tag - JA_WALK_BASE indexes them. Read
 * only on the walking thread, which lent them. */
static jobject *walk_objs;
static jint walk_n;
static atomic_int full_logged;
static jclass _Atomic known[JA_KNOWN_N];
static const char *const known_names[JA_KNOWN_N] = {"java/lang/Class", "java/lang/Thread", "java/lang/String",
                                                    "java/lang/Throwable", "java/lang/Object"};

ja_agent ja;

static _Thread_local int tl_internal;
/* Set on the thread that walks the heap (heap.c) while its walk tags are valid. */
static _Thread_local int tl_walking;

void ja_walk_lend(jobject *objs, jint n) {
  walk_objs = objs;
  walk_n = objs != NULL ? n : 0;
  tl_walking = objs != NULL;
  atomic_store(&walk_active, objs != NULL);
}

void ja_gc_ended(void) { atomic_fetch_add_explicit(&gc_count, 1, memory_order_relaxed); }

int ja_set_max_names(uint64_t n) {
  if (n == 0 || n > JA_MAX_SLOTS - KEPT_RESERVE) return -1;
  atomic_store(&max_objects, (unsigned)n);
  return 0;
}

static ja_entry *slot_entry(uint32_t slot) {
  ja_entry *c = atomic_load_explicit(&chunks[slot >> CHUNK_BITS], memory_order_acquire);
  return c ? &c[slot & (CHUNK - 1)] : NULL;
}

/* The generation a number of slot carries (0 for a kept slot), or UINT32_MAX for a slot never used. */
static uint32_t used_gen(uint32_t slot, const ja_entry **out) {
  int kept = slot < KEPT_RESERVE;
  if (slot == 0) return UINT32_MAX;
  if (slot >= atomic_load_explicit(kept ? &next_kept : &next_obj, memory_order_acquire)) return UINT32_MAX;
  const ja_entry *e = slot_entry(slot);
  uint32_t gen = e ? atomic_load_explicit(&e->gen, memory_order_acquire) : 0;
  *out = e;
  if (gen == 0) return UINT32_MAX; /* free */
  return kept ? 0 : gen;
}

uint32_t ja_slot_of(uint64_t id) {
  if (id == 0 || id >= JA_WALK_BASE) return UINT32_MAX;
  uint32_t slot = (uint32_t)id & SLOT_MASK;
  const ja_entry *e;
  return used_gen(slot, &e) == (uint32_t)(id >> JA_SLOT_BITS) ? slot : UINT32_MAX;
}

uint64_t ja_id_of_slot(uint32_t slot) {
  const ja_entry *e;
  uint32_t gen = used_gen(slot, &e);
  return gen == UINT32_MAX ? 0 : ((uint64_t)gen << JA_SLOT_BITS) | slot;
}

void ja_table_ends(uint32_t *kept_end, uint32_t *objects_end) {
  *kept_end = (uint32_t)atomic_load_explicit(&next_kept, memory_order_acquire);
  *objects_end = (uint32_t)atomic_load_explicit(&next_obj, memory_order_acquire);
}

/* A tag this table gave out (its entry still holds that generation), or, on the walking thread,
 * a walk tag. Anything else (a walk's tag left by a failed walk, its marker) is not a name: the
 * object is named afresh. */
static int is_name(jlong tag) {
  if (tag <= 0) return 0;
  if ((uint64_t)tag < JA_WALK_BASE) return ja_slot_of((uint64_t)tag) != UINT32_MAX;
  return tl_walking && (uint64_t)tag >= JA_WALK_BASE && (uint64_t)tag < JA_WALK_END;
}

ja_entry *ja_entry_of(uint64_t id) {
  uint32_t slot = ja_slot_of(id);
  return slot == UINT32_MAX ? NULL : slot_entry(slot);
}

ja_tstate *ja_tstate_of(uint64_t id) {
  ja_entry *e = ja_entry_of(id);
  return e != NULL ? e->ts : NULL;
}

int ja_is_internal(uint64_t id) {
  ja_entry *e = ja_entry_of(id);
  return e != NULL && atomic_load_explicit(&e->internal, memory_order_relaxed);
}

void ja_set_internal(uint64_t id) {
  ja_entry *e = ja_entry_of(id);
  if (e != NULL && e->ts != NULL) atomic_store(&e->internal, 1);
}

jobject ja_obj(uint64_t id) {
  if (id >= JA_WALK_BASE) return tl_walking && id - JA_WALK_BASE < (uint64_t)walk_n ? walk_objs[id - JA_WALK_BASE] : NULL;
  ja_entry *e = ja_entry_of(id);
  if (e == NULL) return NULL;
  JNIEnv *env = ja_env();
  if (env == NULL) return NULL;
  jobject r = NULL;
  pthread_mutex_lock(&table_lock);
  /* The generation again under the lock: the slot may have been freed and reused since. A kept
   * entry's strong reference is never deleted; an object's is promoted (NULL once collected). */
  if (ja_slot_of(id) != UINT32_MAX) r = e->kept ? e->ref : (*env)->NewLocalRef(env, e->ref);
  pthread_mutex_unlock(&table_lock);
  return r;
}

jobject ja_kept_obj(uint64_t id) {
  ja_entry *e = ja_entry_of(id);
  if (e == NULL || !e->kept) return NULL;
  jobject r = e->ref;
  /* A kept entry is never freed; the generation read again after the fields shows the slot was
   * not an object's freed and reused meanwhile. */
  atomic_thread_fence(memory_order_acquire);
  return ja_slot_of(id) != UINT32_MAX ? r : NULL;
}

uint64_t ja_named(jobject o) {
  jlong tag = 0;
  if (o == NULL || (*ja.ti)->GetTag(ja.ti, o, &tag) != JVMTI_ERROR_NONE || !is_name(tag)) return 0;
  return (uint64_t)tag;
}

/* Frees slot (lock held): the reference deleted, the object's tag cleared if it still names it,
 * the generation moved on. */
static void free_slot(JNIEnv *env, uint32_t slot, ja_entry *e) {
  uint32_t gen = atomic_load(&e->gen);
  jobject l = (*env)->NewLocalRef(env, e->ref);
  if (l != NULL) {
    jlong tag = 0;
    jlong mine = (jlong)(((uint64_t)gen << JA_SLOT_BITS) | slot);
    if ((*ja.ti)->GetTag(ja.ti, l, &tag) == JVMTI_ERROR_NONE && tag == mine) (*ja.ti)->SetTag(ja.ti, l, 0);
    (*env)->DeleteLocalRef(env, l);
  }
  if (e->strong) (*env)->DeleteGlobalRef(env, e->ref);
  else (*env)->DeleteWeakGlobalRef(env, e->ref);
  e->ref = NULL;
  e->strong = 0;
  e->holds = 0;
  e->spare_gen = gen >= GEN_MAX ? 1 : gen + 1;
  atomic_store(&e->gen, 0);
  e->next_free = free_head;
  free_head = slot + 1;
  objects--;
}

/* Frees the entries of objects the collector took that the library does not hold strong (lock
 * held). The library may still hold their numbers: the new generation makes those answer
 * INVALID_OBJECT. */
static void reclaim(JNIEnv *env) {
  uint32_t n = (uint32_t)atomic_load(&next_obj);
  for (uint32_t s = KEPT_RESERVE; s < n; s++) {
    ja_entry *e = slot_entry(s);
    if (e && atomic_load(&e->gen) && !e->kept && !e->strong && (*env)->IsSameObject(env, e->ref, NULL))
      free_slot(env, s, e);
  }
  since_reclaim = 0;
}

/* A slot for a new entry, or UINT32_MAX (lock held). */
static uint32_t take_slot(JNIEnv *env, int keep) {
  int walking = atomic_load(&walk_active);
  if (!keep && !walking) {
    /* Collected objects' entries are found by a pass over the table: when the bound is reached,
     * and when the free list is empty and half the table was named since the last pass
     * (amortized: the table stays within about twice the objects named and alive). */
    unsigned gcs = atomic_load_explicit(&gc_count, memory_order_relaxed);
    /* At the bound, a pass only after a collection (nothing else clears a weak reference): a
     * full table then answers each new name at once, not after a scan. */
    if ((objects >= atomic_load(&max_objects) && gcs != gcs_at_reclaim) ||
        (free_head == 0 && since_reclaim > 4096 && since_reclaim > objects / 2)) {
      reclaim(env);
      gcs_at_reclaim = gcs;
    }
    if (objects >= atomic_load(&max_objects)) return UINT32_MAX;
  }
  if (!keep && free_head != 0 && !walking) {
    uint32_t s = free_head - 1;
    free_head = slot_entry(s)->next_free;
    return s;
  }
  atomic_uint_fast32_t *next = keep ? &next_kept : &next_obj;
  uint32_t n = (uint32_t)atomic_load_explicit(next, memory_order_relaxed);
  if (n >= (keep ? KEPT_RESERVE : JA_MAX_SLOTS)) return UINT32_MAX;
  uint32_t ci = n >> CHUNK_BITS;
  ja_entry *c = atomic_load_explicit(&chunks[ci], memory_order_relaxed);
  if (c == NULL) {
    c = calloc(CHUNK, sizeof *c);
    if (c == NULL) return UINT32_MAX;
    for (uint32_t i = 0; i < CHUNK; i++) c[i].spare_gen = 1;
    atomic_store_explicit(&chunks[ci], c, memory_order_release);
  }
  atomic_store_explicit(next, n + 1, memory_order_release);
  return n;
}

static void give_back(uint32_t slot) {
  ja_entry *e = slot_entry(slot);
  e->next_free = free_head;
  free_head = slot + 1;
}

/* The global reference of a class the agent tests objects against, made once, at VMInit (or
 * attach) by ja_known_init: FindClass runs Java code when the caller's frame is in
 * jdk.internal.loader.NativeLibraries (it asks getFromClass for the loader), which posts a method
 * entry event inside the callback that called it, and so on without end. */
jclass ja_known(JNIEnv *env, ja_known_class which) {
  jclass k = atomic_load(&known[which]);
  if (k != NULL) return k;
  jclass l = (*env)->FindClass(env, known_names[which]);
  (*env)->ExceptionClear(env);
  jclass g = l ? (*env)->NewGlobalRef(env, l) : NULL;
  if (l) (*env)->DeleteLocalRef(env, l);
  if (g == NULL) return NULL;
  jclass none = NULL;
  if (atomic_compare_exchange_strong(&known[which], &none, g)) return g;
  (*env)->DeleteGlobalRef(env, g); /* another thread made it first */
  return none;
}

void ja_known_init(JNIEnv *env) {
  for (int i = 0; i < JA_KNOWN_N; i++) ja_known(env, (ja_known_class)i);
}

/* Classes and threads are kept (see the top). */
enum { KEEP_NOT, KEEP_CLASS, KEEP_THREAD };

static int is_kept(JNIEnv *env, jobject o) {
  jclass kc = ja_known(env, JA_KNOWN_CLASS);
  jclass tc = ja_known(env, JA_KNOWN_THREAD);
  if (kc && (*env)->IsInstanceOf(env, o, kc)) return KEEP_CLASS;
  return tc && (*env)->IsInstanceOf(env, o, tc) ? KEEP_THREAD : KEEP_NOT;
}

static void log_full(void) {
  if (!atomic_exchange(&full_logged, 1))
    fprintf(stderr, "ddmcjdwp: the table of names is full (%u objects named and alive): OUT_OF_MEMORY for new "
            "objects until the debugger disposes of some\n", (unsigned)atomic_load(&max_objects));
}

/* Names o in a new entry (lock held); 0 when full. */
static uint64_t name_new(JNIEnv *env, jobject o, int keep) {
  uint32_t s = take_slot(env, keep);
  if (s == UINT32_MAX) return 0;
  ja_entry *e = slot_entry(s);
  jobject g = keep ? (*env)->NewGlobalRef(env, o) : (*env)->NewWeakGlobalRef(env, o);
  uint64_t id = keep ? s : ((uint64_t)e->spare_gen << JA_SLOT_BITS) | s;
  ja_tstate *ts = keep == KEEP_THREAD ? calloc(1, sizeof *ts) : NULL;
  if (g == NULL || (keep == KEEP_THREAD && ts == NULL) || (*ja.ti)->SetTag(ja.ti, o, (jlong)id) != JVMTI_ERROR_NONE) {
    if (g) keep ? (*env)->DeleteGlobalRef(env, g) : (*env)->DeleteWeakGlobalRef(env, g);
    (*env)->ExceptionClear(env);
    free(ts);
    give_back(s);
    return 0;
  }
  e->ref = g;
  e->ts = ts;
  e->kept = keep != KEEP_NOT;
  e->strong = keep != KEEP_NOT;
  e->holds = 0;
  atomic_store_explicit(&e->gen, e->spare_gen, memory_order_release);
  if (keep) kept++;
  else objects++, since_reclaim++;
  return id;
}

uint64_t ja_ref(JNIEnv *env, jobject o) {
  if (o == NULL) return 0;
  jlong tag = 0;
  if ((*ja.ti)->GetTag(ja.ti, o, &tag) == JVMTI_ERROR_NONE && is_name(tag)) return (uint64_t)tag;
  int keep = is_kept(env, o);
  uint64_t id = 0;
  pthread_mutex_lock(&table_lock);
  /* Another thread may have named it since the first look. */
  if ((*ja.ti)->GetTag(ja.ti, o, &tag) == JVMTI_ERROR_NONE && is_name(tag)) id = (uint64_t)tag;
  else id = name_new(env, o, keep);
  pthread_mutex_unlock(&table_lock);
  if (id == 0 && !keep) log_full();
  else if (id == 0)
    fprintf(stderr, "ddmcjdwp: no name for a class or thread (%u slots of %u used)\n",
            (unsigned)atomic_load(&next_kept), KEPT_RESERVE);
  else if (!keep) atomic_store(&full_logged, 0);
  return id;
}

/* The last listing's names, in its order. HotSpot lists its threads in the same order every time,
 * and a thread found where it was is named by comparing references, not by its JVM TI tag:
 * HotSpot 17's tag table grows only when a collection rehashes it, and 10,000 threads tagged as
 * they started cost a walk of a long chain each (AllThreads took 1.8x libjdwp's time). */
static pthread_mutex_t listed_lock = PTHREAD_MUTEX_INITIALIZER;
static uint32_t *listed;
static jint nlisted;

void ja_ref_threads(JNIEnv *env, const jthread *ts, jint n, uint32_t *ids) {
  pthread_mutex_lock(&listed_lock);
  for (jint i = 0; i < n; i++) {
    jobject was = i < nlisted ? ja_kept_obj(listed[i]) : NULL;
    ids[i] = was != NULL && (*env)->IsSameObject(env, ts[i], was) ? listed[i] : (uint32_t)ja_ref(env, ts[i]);
  }
  uint32_t *keep = n > nlisted ? realloc(listed, (size_t)n * sizeof *keep) : listed;
  if (keep != NULL && n > 0) {
    memcpy(keep, ids, (size_t)n * sizeof *keep);
    listed = keep;
    nlisted = n;
  }
  pthread_mutex_unlock(&listed_lock);
}

int ja_hold(JNIEnv *env, uint64_t id, int strong) {
  int rc = DDMC_JDWP_INVALID_OBJECT;
  pthread_mutex_lock(&table_lock);
  ja_entry *e = ja_entry_of(id);
  if (e != NULL && e->kept) {
    rc = 0;
  } else if (e != NULL && strong) {
    jobject g = e->holds ? e->ref : (*env)->NewGlobalRef(env, e->ref); /* NULL: collected */
    if (g != NULL) {
      if (e->holds++ == 0) {
        (*env)->DeleteWeakGlobalRef(env, e->ref);
        e->ref = g;
        e->strong = 1;
      }
      rc = 0;
    }
  } else if (e != NULL) {
    rc = 0;
    if (e->holds > 0 && --e->holds == 0) {
      jobject w = (*env)->NewWeakGlobalRef(env, e->ref);
      if (w != NULL) {
        (*env)->DeleteGlobalRef(env, e->ref);
        e->ref = w;
        e->strong = 0;
      } else {
        e->holds = 1; /* no memory for a weak reference: it stays strong */
        rc = DDMC_JDWP_OUT_OF_MEMORY;
      }
    }
  }
  pthread_mutex_unlock(&table_lock);
  return rc;
}

void ja_release(JNIEnv *env, uint64_t id) {
  pthread_mutex_lock(&table_lock);
  uint32_t s = ja_slot_of(id);
  ja_entry *e = s == UINT32_MAX ? NULL : slot_entry(s);
  if (e != NULL && !e->kept) free_slot(env, s, e);
  pthread_mutex_unlock(&table_lock);
}


void ja_untag(jobject o, jlong tag) {
  jlong now = 0;
  pthread_mutex_lock(&table_lock);
  if ((*ja.ti)->GetTag(ja.ti, o, &now) == JVMTI_ERROR_NONE && now == tag) (*ja.ti)->SetTag(ja.ti, o, 0);
  pthread_mutex_unlock(&table_lock);
}

int ja_thread_is_internal(void) { return tl_internal; }
void ja_mark_internal(void) { tl_internal = 1; }

JNIEnv *ja_env(void) {
  JNIEnv *env = NULL;
  jint rc = (*ja.jvm)->GetEnv(ja.jvm, (void **)&env, JNI_VERSION_1_6);
  if (rc == JNI_OK) return env;
  if (rc != JNI_EDETACHED) return NULL;
  /* A thread of libddmc (the JDWP thread, the sampler) calling for the first time: it becomes a
   * daemon Java thread, hidden from debuggers, whose events are not reported. */
  tl_internal = 1;
  JavaVMAttachArgs args = {JNI_VERSION_1_6, (char *)"ddmc JDWP", NULL};
  if ((*ja.jvm)->AttachCurrentThreadAsDaemon(ja.jvm, (void **)&env, &args) != JNI_OK) return NULL;
  jthread self = NULL;
  if ((*ja.ti)->GetCurrentThread(ja.ti, &self) == JVMTI_ERROR_NONE && self) {
    ja_set_internal(ja_ref(env, self));
    (*env)->DeleteLocalRef(env, self);
  }
  return env;
}

JNIEnv *ja_enter(void) {
  JNIEnv *env = ja_env();
  if (env && (*env)->PushLocalFrame(env, 32) != 0) {
    (*env)->ExceptionClear(env);
    return NULL;
  }
  return env;
}

void ja_leave(JNIEnv *env) {
  if (env) (*env)->PopLocalFrame(env, NULL);
}
