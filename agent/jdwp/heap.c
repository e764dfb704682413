/* SPDX-License-Identifier: Apache-2.0 */
/* The heap from JVM TI: the bridge's with_world_stopped, for_each_object, for_each_root and
 * collect (libddmc builds HPDU / HPDS dumps from them), HPGC, and allocation tracking from
 * SampledObjectAlloc.
 *
 * A walk. JVM TI has no "stop the world" for an agent, and its heap functions run their
 * callbacks at a safepoint, where no JNI call is allowed: the library's reads of fields and
 * elements (get_field, array_get) need a jobject per object, outside those callbacks. So
 * with_world_stopped
 *   1. suspends every Java thread but the caller and the agent's and libddmc's own (suspend.c);
 *      with none of them running nothing allocates, so the heap holds still;
 *   2. names every loaded class in the table (refs.c), so every object's class has its number;
 *   3. tags every reachable object the table has not named with one marker (FollowReferences:
 *      IterateThroughHeap would also give dead objects and HotSpot's int[] fillers, whose space
 *      a later allocation may take over, tag and all), gets
 *      them all back as local references in one GetObjectsWithTags (one tag: HotSpot compares
 *      each tagged object with every tag asked for, so one tag per object would be quadratic),
 *      and gives each its walk tag, JA_WALK_BASE + its index (ja.h): no global reference per
 *      object, and the local references keep them alive (and readable) until the walk ends;
 *   4. runs fn, inside which for_each_object replays a second IterateThroughHeap (tag, class
 *      tag, size, length per object, collected into memory first: the library's visitor runs
 *      outside the safepoint) and for_each_root replays FollowReferences' roots;
 *   5. clears the walk tags, drops the local references, resumes the threads.
 * Every reference the library reads inside fn is named by the same tags (ja_ref answers walk
 * tags on the walking thread), so the dump's references and its objects agree. Bounds: at most
 * 2^25 objects (JA_WALK_END); a bigger heap gets OUT_OF_MEMORY and no dump. Memory of a walk
 * here: 33 bytes per object (wobj, left_out, the local reference's slot), besides HotSpot's own
 * for each tag and local reference.
 *
 * Cost (bench/RESULTS.md, "Heap dumps on HotSpot: where the time goes"): HotSpot's tag map. Every
 * JVM TI heap function looks up the tag of each object it reports (and of each referrer), so the
 * marking, GetObjectsWithTags, the SetTags and the listing cost several times HotSpot's whole
 * dumpHeap before the first field is read; reading the fields through JNI is about a third of
 * the total. Collecting the fields in the heap callbacks instead (a second IterateThroughHeap
 * with a primitive_field_callback, a FollowReferences for reference fields) was measured and
 * cost more CPU than the JNI reads it replaced, so the dump reads them through JNI. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ddmc/profile.h"
#include "ja.h"

#define WALK_MARK ((jlong)JA_WALK_BASE - 1)
#define WALK_MAX ((jint)(JA_WALK_END - JA_WALK_BASE))

typedef struct wobj {
  uint32_t ref, cls;
  int32_t length;
  uint64_t size;
} wobj;

typedef struct wroot {
  uint32_t obj, thread;
  int32_t depth, slot;
  ddmc_gc_root_kind kind;
} wroot;

/* Growable arrays filled inside JVM TI's callbacks (malloc only). */
typedef struct vec {
  void *p;
  size_t n, cap, elem;
  int full; /* over WALK_MAX, or out of memory */
} vec;

static void *vec_add(vec *v) {
  if (v->n == v->cap) {
    size_t nc = v->cap ? v->cap * 2 : 4096;
    void *np = nc <= (size_t)WALK_MAX ? realloc(v->p, nc * v->elem) : NULL;
    if (np == NULL) {
      v->full = 1;
      return NULL;
    }
    v->p = np;
    v->cap = nc;
  }
  return (char *)v->p + v->elem * v->n++;
}

/* The walk: only ever one (with_world_stopped is not nested), on the JDWP thread. */
static struct {
  int on;
  jobject *objs; /* JVM TI's array of local references, walk tag - JA_WALK_BASE */
  jint n;
  jint marked;
  uint32_t self; /* the walking thread's number: its JNI locals are the walk's own */
  vec objects;   /* wobj: every object, collected once */
  uint32_t table_n;  /* the table's slot bound when the walk began (ja_table_ends: objects') */
  uint32_t kept_n;   /* its kept slots' end then */
  uint8_t *cls_ok;   /* by class slot: 0 not looked at, 1 describable, 2 not */
  uint8_t *left_out; /* by object: table slots, then walk tags */
  uint32_t object_cls; /* java.lang.Object's number */
} walk;

/* DDMC_JDWP_VERBOSE: each step of a walk with the process's CPU time it took (every thread: the
 * heap functions run on HotSpot's VM thread), for bench/RESULTS.md. */
static void walk_phase(const char *what) {
  static struct timespec last;
  struct timespec now;
  if (!ja.verbose) return;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  if (what != NULL)
    fprintf(stderr, "ddmcjdwp: heap walk: %s: %.1f ms of CPU\n", what,
            (double)(now.tv_sec - last.tv_sec) * 1e3 + (double)(now.tv_nsec - last.tv_nsec) / 1e6);
  last = now;
}

static void ti_free(void *p) {
  if (p) (*ja.ti)->Deallocate(ja.ti, (unsigned char *)p);
}

static int collect_objects(void);

static jint JNICALL mark_cb(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info, jlong class_tag,
                            jlong referrer_class_tag, jlong size, jlong *tag_ptr, jlong *referrer_tag_ptr,
                            jint length, void *ud) {
  if (*tag_ptr != 0) return JVMTI_VISIT_OBJECTS;
  if (walk.marked >= WALK_MAX) return JVMTI_VISIT_ABORT;
  *tag_ptr = WALK_MARK;
  walk.marked++;
  return JVMTI_VISIT_OBJECTS;
}

static void name_classes(JNIEnv *env) {
  jint n = 0;
  jclass *ks = NULL;
  if ((*ja.ti)->GetLoadedClasses(ja.ti, &n, &ks) != JVMTI_ERROR_NONE) return;
  for (jint i = 0; i < n; i++) {
    ja_ref(env, ks[i]);
    (*env)->DeleteLocalRef(env, ks[i]);
  }
  ti_free(ks);
}

/* The index of object number t in walk.left_out: table slots first, then walk tags; -1 for none. */
static int64_t walk_index(uint64_t t) {
  if (t < JA_WALK_BASE) {
    uint32_t s = ja_slot_of(t);
    return s < walk.table_n ? (int64_t)s : -1;
  }
  if (t - JA_WALK_BASE < (uint64_t)walk.n) return (int64_t)walk.table_n + (int64_t)(t - JA_WALK_BASE);
  return -1;
}

static void walk_end(void) {
  free(walk.objects.p);
  memset(&walk.objects, 0, sizeof walk.objects);
  free(walk.cls_ok);
  free(walk.left_out);
  walk.cls_ok = walk.left_out = NULL;
  walk.table_n = 0;
  for (jint i = 0; i < walk.n; i++)
    if (walk.objs[i]) ja_untag(walk.objs[i], (jlong)JA_WALK_BASE + i);
  ti_free(walk.objs);
  walk.objs = NULL;
  walk.n = 0;
  walk.on = 0;
  ja_walk_lend(NULL, 0);
}

static int walk_begin(JNIEnv *env) {
  jvmtiHeapCallbacks cb;
  memset(&cb, 0, sizeof cb);
  cb.heap_reference_callback = mark_cb;
  walk.marked = 0;
  jvmtiError e = (*ja.ti)->FollowReferences(ja.ti, 0, NULL, NULL, &cb, NULL);
  walk_phase("marking (FollowReferences)");
  jlong mark = WALK_MARK;
  jlong *tags = NULL;
  /* Even after a failure: what was marked is named again, then cleared. */
  jvmtiError e2 = (*ja.ti)->GetObjectsWithTags(ja.ti, 1, &mark, &walk.n, &walk.objs, &tags);
  ti_free(tags);
  if (e2 != JVMTI_ERROR_NONE) {
    walk.n = 0;
    walk.objs = NULL;
    return ja_err(e2);
  }
  walk.on = 1;
  ja_walk_lend(walk.objs, walk.n); /* ja_obj answers walk tags from them (refs.c) */
  walk_phase("GetObjectsWithTags");
  for (jint i = 0; i < walk.n; i++) (*ja.ti)->SetTag(ja.ti, walk.objs[i], (jlong)JA_WALK_BASE + i);
  walk_phase("SetTag of each object");
  if (e != JVMTI_ERROR_NONE) return ja_err(e);
  if (walk.marked >= WALK_MAX) return DDMC_JDWP_OUT_OF_MEMORY;
  return collect_objects();
}

static int with_world_stopped(void *vd, ddmc_stopped_fn fn, void *arg) {
  JNIEnv *env = ja_env();
  if (env == NULL) return DDMC_JDWP_VM_DEAD;
  if (walk.on) return DDMC_JDWP_INVALID_THREAD; /* not nested */
  if ((*env)->PushLocalFrame(env, 64) != 0) {
    (*env)->ExceptionClear(env);
    return DDMC_JDWP_OUT_OF_MEMORY;
  }
  jthread self = NULL;
  (*ja.ti)->GetCurrentThread(ja.ti, &self);
  walk.self = self ? (uint32_t)ja_ref(env, self) : 0;
  int rc = ja_world_stop(env);
  if (rc == 0) {
    name_classes(env);
    jclass obj = ja_known(env, JA_KNOWN_OBJECT);
    (*env)->ExceptionClear(env);
    walk.object_cls = obj ? (uint32_t)ja_ref(env, obj) : 0;
    walk_phase(NULL);
    rc = walk_begin(env);
    walk_phase("listing the objects (IterateThroughHeap)");
    if (rc == 0) rc = fn(arg);
    walk_phase("the dump (the library builds it, fields through JNI)");
    walk_end();
  }
  ja_world_resume();
  (*env)->PopLocalFrame(env, NULL);
  return rc;
}

static jint JNICALL object_cb(jlong class_tag, jlong size, jlong *tag_ptr, jint length, void *ud) {
  vec *v = ud;
  /* Untagged: unreachable (HotSpot's heap also holds dead objects and int[] fillers, whose
   * space may be reused under a tag: never tagged), or allocated since the walk began. */
  if (*tag_ptr <= 0 || *tag_ptr >= (jlong)JA_WALK_END) return 0;
  wobj *o = vec_add(v);
  if (o == NULL) return JVMTI_VISIT_ABORT;
  o->ref = (uint32_t)*tag_ptr;
  o->cls = class_tag > 0 && class_tag < (jlong)JA_WALK_BASE ? (uint32_t)class_tag : 0;
  o->length = length;
  o->size = (uint64_t)size;
  return 0;
}

/* Non-zero when objects of class c can be described: the library lists only prepared classes and
 * array types (for_each_class), and CDS's archived heap holds instances of classes not linked
 * yet (the Long and Short caches, jdk.internal.math.FDBigInteger, ArchivedModuleGraph...). Those
 * objects are shown as plain java.lang.Object instances (no fields), so that the references to
 * them still name objects of the dump; when even Object is not known they are left out, with
 * the roots that name them. */
static int describable(uint32_t c) {
  uint32_t s = ja_slot_of(c);
  jclass k = s < walk.table_n ? (jclass)ja_kept_obj(c) : NULL;
  if (k == NULL) return 0;
  if (walk.cls_ok[s] == 0) {
    jint st = 0;
    int ok = (*ja.ti)->GetClassStatus(ja.ti, k, &st) == JVMTI_ERROR_NONE &&
             !(st & JVMTI_CLASS_STATUS_PRIMITIVE) && (st & (JVMTI_CLASS_STATUS_ARRAY | JVMTI_CLASS_STATUS_PREPARED));
    walk.cls_ok[s] = ok ? 1 : 2;
  }
  return walk.cls_ok[s] == 1;
}

/* The byte of walk.left_out for object number t. */
static uint8_t *left_out_of(uint64_t t) {
  int64_t ix = walk_index(t);
  return ix >= 0 ? &walk.left_out[ix] : NULL;
}

/* Every object with its class, size and length, once per walk, with those left out marked. */
static int collect_objects(void) {
  ja_table_ends(&walk.kept_n, &walk.table_n);
  walk.cls_ok = calloc(walk.table_n, 1);
  walk.left_out = calloc((size_t)walk.table_n + (size_t)walk.n, 1);
  if (walk.cls_ok == NULL || walk.left_out == NULL) return DDMC_JDWP_OUT_OF_MEMORY;
  vec *v = &walk.objects;
  memset(v, 0, sizeof *v);
  v->elem = sizeof(wobj);
  jvmtiHeapCallbacks cb;
  memset(&cb, 0, sizeof cb);
  cb.heap_iteration_callback = object_cb;
  jvmtiError e = (*ja.ti)->IterateThroughHeap(ja.ti, 0, NULL, &cb, v);
  if (e != JVMTI_ERROR_NONE) return ja_err(e);
  if (v->full) return DDMC_JDWP_OUT_OF_MEMORY;
  wobj *os = v->p;
  for (size_t i = 0; i < v->n; i++) {
    if (describable(os[i].cls)) continue;
    if (walk.object_cls != 0 && describable(walk.object_cls)) {
      os[i].cls = walk.object_cls;
      os[i].length = -1;
      continue;
    }
    uint8_t *lo = left_out_of(os[i].ref);
    if (lo) *lo = 1;
    os[i].cls = 0;
  }
  return 0;
}

/* A primitive array's elements, copied into *buf with one JNI region read (the bridge's
 * ddmc_heap_object.elements: packed, host order), so the dump does not read them one by one
 * through array_get. NULL for a reference array, a failure, or when there is no room. */
static const void *elements_of(const wobj *o, void **buf, size_t *cap) {
  int rc;
  ja_class *k = ja_class_of(o->cls, &rc);
  if (k == NULL || k->sig[0] != '[' || k->sig[1] == '[' || k->sig[1] == 'L' || o->length <= 0) return NULL;
  char t = k->sig[1];
  size_t size = t == 'Z' || t == 'B' ? 1 : t == 'C' || t == 'S' ? 2 : t == 'I' || t == 'F' ? 4 : 8;
  size_t need = size * (size_t)o->length;
  if (need > *cap) {
    void *nb = realloc(*buf, need);
    if (nb == NULL) return NULL;
    *buf = nb;
    *cap = need;
  }
  JNIEnv *env = ja_enter();
  if (env == NULL) return NULL;
  jarray a = (jarray)ja_obj(o->ref);
  void *p = *buf;
  jsize n = o->length;
  switch (t) {
  case 'Z': (*env)->GetBooleanArrayRegion(env, a, 0, n, p); break;
  case 'B': (*env)->GetByteArrayRegion(env, a, 0, n, p); break;
  case 'C': (*env)->GetCharArrayRegion(env, a, 0, n, p); break;
  case 'S': (*env)->GetShortArrayRegion(env, a, 0, n, p); break;
  case 'I': (*env)->GetIntArrayRegion(env, a, 0, n, p); break;
  case 'J': (*env)->GetLongArrayRegion(env, a, 0, n, p); break;
  case 'F': (*env)->GetFloatArrayRegion(env, a, 0, n, p); break;
  default: (*env)->GetDoubleArrayRegion(env, a, 0, n, p); break;
  }
  int bad = a == NULL || (*env)->ExceptionCheck(env);
  if (bad) (*env)->ExceptionClear(env);
  ja_leave(env);
  return bad ? NULL : p;
}

static int for_each_object(void *vd, ddmc_heap_object_visit_fn fn, void *arg) {
  if (!walk.on) return DDMC_JDWP_INVALID_THREAD;
  const wobj *os = walk.objects.p;
  void *buf = NULL;
  size_t cap = 0;
  for (size_t i = 0; i < walk.objects.n; i++) {
    if (os[i].cls == 0) continue;
    const void *el = os[i].length > 0 ? elements_of(&os[i], &buf, &cap) : NULL;
    ddmc_heap_object o = {os[i].ref, os[i].cls, os[i].size, DDMC_HEAP_ID_DEFAULT, os[i].length, el};
    if (fn(arg, &o) != 0) {
      free(buf);
      return 0;
    }
  }
  free(buf);
  /* Objects the walk's marking did not reach but a described object names (HotSpot's
   * FollowReferences misses a few of CDS's archived objects): reading them named them in the
   * table, so they are visited too, and what they name in turn, until nothing new comes. */
  for (uint32_t slot = walk.kept_n;; slot++) {
    uint32_t kept_end, objects_end;
    ja_table_ends(&kept_end, &objects_end);
    if (slot == kept_end && slot < walk.table_n) slot = walk.table_n; /* the kept ones done: objects' */
    if (slot >= objects_end && slot >= walk.table_n) break;
    uint64_t id = ja_id_of_slot(slot); /* fresh slots while the walk runs (ja.h) */
    if (id == 0) continue;
    JNIEnv *env = ja_enter();
    if (env == NULL) return DDMC_JDWP_VM_DEAD;
    jobject ob = ja_obj(id);
    jclass k = ob ? (*env)->GetObjectClass(env, ob) : NULL;
    uint32_t c = k ? (uint32_t)ja_ref(env, k) : 0;
    jlong size = 0;
    int32_t length = -1;
    char *sig = NULL;
    if (ob && (*ja.ti)->GetObjectSize(ja.ti, ob, &size) == JVMTI_ERROR_NONE &&
        (*ja.ti)->GetClassSignature(ja.ti, k, &sig, NULL) == JVMTI_ERROR_NONE && sig && sig[0] == '[')
      length = (*env)->GetArrayLength(env, (jarray)ob);
    ti_free(sig);
    ja_leave(env);
    if (ob == NULL || c == 0) continue;
    if (!(ja_slot_of(c) < walk.table_n ? describable(c) : 1)) {
      if (walk.object_cls == 0) continue;
      c = walk.object_cls;
      length = -1;
    }
    ddmc_heap_object o = {id, c, (uint64_t)size, DDMC_HEAP_ID_DEFAULT, length, NULL};
    if (fn(arg, &o) != 0) return 0;
  }
  return 0;
}

static uint32_t thread_num(jlong tag) { return tag > 0 && tag < (jlong)JA_WALK_END ? (uint32_t)tag : 0; }

static jint JNICALL root_cb(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info, jlong class_tag,
                            jlong referrer_class_tag, jlong size, jlong *tag_ptr, jlong *referrer_tag_ptr,
                            jint length, void *ud) {
  vec *v = ud;
  if (*tag_ptr <= 0 || *tag_ptr >= (jlong)JA_WALK_END) return 0;
  uint8_t *lo = left_out_of((uint64_t)*tag_ptr);
  if (lo != NULL && *lo) return 0;
  wroot r = {(uint32_t)*tag_ptr, 0, -1, -1, DDMC_GC_ROOT_UNKNOWN};
  switch (kind) {
    case JVMTI_HEAP_REFERENCE_JNI_GLOBAL:
      /* The table's global references are the names the agent gave for libddmc's clients. */
      r.kind = ja_entry_of(r.obj) != NULL ? DDMC_GC_ROOT_DEBUGGER : DDMC_GC_ROOT_JNI_GLOBAL;
      break;
    case JVMTI_HEAP_REFERENCE_SYSTEM_CLASS: r.kind = DDMC_GC_ROOT_STICKY_CLASS; break;
    case JVMTI_HEAP_REFERENCE_MONITOR: r.kind = DDMC_GC_ROOT_MONITOR_USED; break;
    case JVMTI_HEAP_REFERENCE_STACK_LOCAL:
      r.kind = DDMC_GC_ROOT_JAVA_FRAME;
      r.thread = thread_num(info->stack_local.thread_tag);
      r.depth = info->stack_local.depth;
      r.slot = info->stack_local.slot;
      break;
    case JVMTI_HEAP_REFERENCE_JNI_LOCAL:
      /* The walk's own local references are not roots of the program. */
      if (thread_num(info->jni_local.thread_tag) == walk.self) return 0;
      r.kind = DDMC_GC_ROOT_JNI_LOCAL;
      r.thread = thread_num(info->jni_local.thread_tag);
      r.depth = info->jni_local.depth;
      break;
    case JVMTI_HEAP_REFERENCE_THREAD:
      r.kind = DDMC_GC_ROOT_THREAD_OBJECT;
      r.thread = r.obj;
      break;
    case JVMTI_HEAP_REFERENCE_OTHER: r.kind = DDMC_GC_ROOT_VM_INTERNAL; break;
    default: return 0; /* not a root: never followed */
  }
  wroot *slot = vec_add(v);
  if (slot == NULL) return JVMTI_VISIT_ABORT;
  *slot = r;
  return 0; /* roots only: no object's references are followed */
}

static int for_each_root(void *vd, ddmc_gc_root_visit_fn fn, void *arg) {
  if (!walk.on) return DDMC_JDWP_INVALID_THREAD;
  vec v = {NULL, 0, 0, sizeof(wroot), 0};
  jvmtiHeapCallbacks cb;
  memset(&cb, 0, sizeof cb);
  cb.heap_reference_callback = root_cb;
  jvmtiError e = (*ja.ti)->FollowReferences(ja.ti, 0, NULL, NULL, &cb, &v);
  int rc = e != JVMTI_ERROR_NONE ? ja_err(e) : v.full ? DDMC_JDWP_OUT_OF_MEMORY : 0;
  const wroot *rs = v.p;
  for (size_t i = 0; i < v.n && rc == 0; i++) {
    ddmc_gc_root r = {rs[i].obj, rs[i].kind, rs[i].thread, rs[i].depth, rs[i].slot};
    if (fn(arg, &r) != 0) break;
  }
  free(v.p);
  return rc;
}

/* HotSpot collects on its own threads; the caller waits for the end. */
static int collect(void *vd) {
  jvmtiError e = (*ja.ti)->ForceGarbageCollection(ja.ti);
  return e == JVMTI_ERROR_WRONG_PHASE ? DDMC_JDWP_VM_DEAD : ja_err(e);
}

int ja_request_gc(void *vd) { return collect(vd) == 0 ? 0 : DDMC_EIO; }

void ja_bridge_heap(ddmc_vm_bridge *b) {
  b->with_world_stopped = with_world_stopped;
  b->for_each_object = for_each_object;
  b->for_each_root = for_each_root;
  b->collect = collect;
}

/* ---- allocation tracking
 *
 * SampledObjectAlloc, with the sampling interval 0 (HotSpot then reports every allocation it
 * samples at all), enabled only while a peer has tracking on: libddmc's flag has no notification,
 * so a thread of the agent polls it every POLL_MS and switches the event. Off, the JVM pays
 * nothing; on, every allocation takes the callback (a stack walk of ALLOC_DEPTH frames). */
#define POLL_MS 20
#define ALLOC_DEPTH 16

static const int *tracking;

static void JNICALL on_sampled_alloc(jvmtiEnv *ti, JNIEnv *env, jthread thread, jobject object, jclass klass,
                                     jlong size) {
  if (!ddmc_alloc_tracking(tracking) || ja_thread_is_internal() || !atomic_load_explicit(&ja.live, memory_order_acquire))
    return;
  uint32_t id = ja_callback_enter(env, thread);
  if (id == 0) return;
  jvmtiFrameInfo fr[ALLOC_DEPTH];
  ddmc_location loc[ALLOC_DEPTH];
  jint n = 0;
  uint32_t k = 0;
  if ((*ti)->GetStackTrace(ti, NULL, 0, ALLOC_DEPTH, fr, &n) != JVMTI_ERROR_NONE) n = 0;
  for (jint i = 0; i < n; i++)
    if (ja_location(env, fr[i].method, fr[i].location, &loc[k]) == 0) k++;
  ddmc_class c = ja_ref(env, klass);
  if (c != 0) ddmc_alloc_record(ja.vm, id, c, (uint64_t)size, loc, k);
  ja_callback_leave(id);
}

/* ---- the end of each collection
 *
 * ddmc_gc_done sends HPIF "at the next GC" (and at every GC), and heap_info (ddm.c) reads the
 * heap through JNI, which GarbageCollectionFinish forbids (it runs while the world may still be
 * stopped: raw monitors only). So the callback only counts the collection and notifies, and a
 * thread of the agent calls ddmc_gc_done soon after, once for any number of collections that
 * ended meanwhile (HPIF describes the heap as it is then). */
static jrawMonitorID gc_lock;
static unsigned gc_ended; /* collections ended, under gc_lock */

static void JNICALL on_gc_finish(jvmtiEnv *ti) {
  ja_gc_ended(); /* refs.c counts it: an atomic add, allowed here */
  if ((*ti)->RawMonitorEnter(ti, gc_lock) != JVMTI_ERROR_NONE) return;
  gc_ended++;
  (*ti)->RawMonitorNotify(ti, gc_lock);
  (*ti)->RawMonitorExit(ti, gc_lock);
}

static void *gc_reporter(void *unused) {
  if (ja_env() == NULL) return NULL;
  unsigned seen = 0;
  while (atomic_load_explicit(&ja.live, memory_order_acquire)) {
    if ((*ja.ti)->RawMonitorEnter(ja.ti, gc_lock) != JVMTI_ERROR_NONE) break;
    /* A bounded wait, so the thread sees VMDeath without a notification of its own. */
    if (gc_ended == seen) (*ja.ti)->RawMonitorWait(ja.ti, gc_lock, 200);
    unsigned now = gc_ended;
    (*ja.ti)->RawMonitorExit(ja.ti, gc_lock);
    if (now != seen && atomic_load_explicit(&ja.live, memory_order_acquire)) ddmc_gc_done(ja.vm);
    seen = now;
  }
  return NULL;
}

void ja_heap_callbacks(jvmtiEventCallbacks *cb) {
  cb->SampledObjectAlloc = on_sampled_alloc;
  cb->GarbageCollectionFinish = on_gc_finish;
}

void ja_heap_init(void) {
  tracking = ddmc_alloc_tracking_flag(ja.vm);
  /* Set once, at load, before any thread has computed its next sample point with the default
   * 512 KiB: a thread takes a new interval only after its next sample. Nothing is sampled while
   * the event is off. */
  if (ja.caps.can_generate_sampled_object_alloc_events) (*ja.ti)->SetHeapSamplingInterval(ja.ti, 0);
}

static void *poll_tracking(void *unused) {
  if (ja_env() == NULL) return NULL;
  int on = 0;
  struct timespec ts = {0, POLL_MS * 1000000L};
  while (atomic_load_explicit(&ja.live, memory_order_acquire)) {
    int want = ddmc_alloc_tracking(tracking) != 0;
    if (want != on) {
      if ((*ja.ti)->SetEventNotificationMode(ja.ti, want ? JVMTI_ENABLE : JVMTI_DISABLE,
                                             JVMTI_EVENT_SAMPLED_OBJECT_ALLOC, NULL) == JVMTI_ERROR_NONE)
        on = want;
    }
    nanosleep(&ts, NULL);
  }
  return NULL;
}

void ja_heap_start(void) {
  pthread_t t;
  pthread_attr_t a;
  pthread_attr_init(&a);
  pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
  if (ja.caps.can_generate_sampled_object_alloc_events && tracking != NULL)
    pthread_create(&t, &a, poll_tracking, NULL);
  if (ja.caps.can_generate_garbage_collection_events &&
      (*ja.ti)->CreateRawMonitor(ja.ti, "ddmcjdwp gc", &gc_lock) == JVMTI_ERROR_NONE &&
      pthread_create(&t, &a, gc_reporter, NULL) == 0)
    (*ja.ti)->SetEventNotificationMode(ja.ti, JVMTI_ENABLE, JVMTI_EVENT_GARBAGE_COLLECTION_FINISH, NULL);
  pthread_attr_destroy(&a);
}
