/* SPDX-License-Identifier: Apache-2.0 */
/* JVM TI's heap part without a VM process: the tag table itself (src/jvmti/tags.c),
 * then the functions (SetTag, GetTag, GetObjectsWithTags, IterateThroughHeap, FollowReferences,
 * GetObjectSize, GetObjectHashCode, ForceGarbageCollection) and the GC hooks (ddmc_gc_start,
 * ddmc_gc_sweep, ddmc_gc_done: GarbageCollectionStart / Finish, ObjectFree) over the tests' fake
 * bridge (../fakebridge.h) with its heap: the program's objects (two Debug instances, an int[5],
 * Debug's class object, strings, threads, groups) and NOBJ more Debug instances, A(1) -> A(2) -> ...
 * through "next", A(i).x = i, hung after the program's second Debug. Bad input (NULL pointers,
 * forged handles, the wrong phase, a missing capability) answers JVM TI errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ddmc/ddmc.h"
#include "jvmti/heap.h"
#include "jvmti/tags.h"
#include "jvmti/jv_fixture.h"

/* ---- the tag table */

static int odd_live(void *arg, uint64_t *ref) {
  (void)arg;
  return (*ref & 1) != 0;
}

static int moved_live(void *arg, uint64_t *ref) {
  (void)arg;
  *ref += 1000000;
  return 1;
}

static void test_table(void **state) {
  (void)state;
  ddmc__jv_jenv e;
  memset(&e, 0, sizeof(e));
  ddmc__jv_tags *t = ddmc__jv_tags_of(&e, 1);
  assert_non_null(t);
  assert_ptr_equal(ddmc__jv_tags_of(&e, 0), t);
  assert_int_equal(ddmc__jv_tags_set(t, 0, 5), JVMTI_ERROR_INVALID_OBJECT);
  for (ddmc_ref r = 1; r <= 10000; r++) assert_int_equal(ddmc__jv_tags_set(t, r, (jlong)r * 10), 0);
  assert_int_equal(ddmc__jv_tags_count(t), 10000);
  assert_int_equal(ddmc__jv_tags_get(t, 77), 770);
  assert_int_equal(ddmc__jv_tags_get(t, 10001), 0);
  assert_int_equal(ddmc__jv_tags_set(t, 77, 0), 0); /* 0 removes */
  assert_int_equal(ddmc__jv_tags_get(t, 77), 0);
  assert_int_equal(ddmc__jv_tags_count(t), 9999);
  assert_int_equal(ddmc__jv_tags_set(t, 78, -1), 0); /* overwrite */
  assert_int_equal(ddmc__jv_tags_get(t, 78), -1);
  /* The sweep: even refs die; their tags wait for ObjectFree. */
  ddmc__jv_tags_sweep(t, odd_live, NULL, 1);
  assert_int_equal(ddmc__jv_tags_count(t), 4999); /* the odd ones but 77, removed before */
  assert_int_equal(ddmc__jv_tags_get(t, 79), 790);
  assert_int_equal(ddmc__jv_tags_get(t, 80), 0);
  jlong batch[300];
  uint32_t n, total = 0;
  int64_t sum = 0;
  while ((n = ddmc__jv_tags_take_freed(t, batch, 300)) > 0) {
    total += n;
    for (uint32_t i = 0; i < n; i++) sum += batch[i];
  }
  assert_int_equal(total, 5000); /* every even one; 78 with its tag -1 */
  int64_t expect = -1;
  for (int64_t r = 2; r <= 10000; r += 2)
    if (r != 78) expect += r * 10;
  assert_true(sum == expect);
  /* A moving collector: entries follow their objects. */
  ddmc__jv_tags_sweep(t, moved_live, NULL, 1);
  assert_int_equal(ddmc__jv_tags_get(t, 1000079), 790);
  assert_int_equal(ddmc__jv_tags_get(t, 79), 0);
  assert_int_equal(ddmc__jv_tags_set(t, 5, 1), 0);
  assert_int_equal(ddmc__jv_tags_count(t), 5000);
  ddmc__jv_tags_destroy(t);
}

/* ---- the heap: the tests' fake bridge and NOBJ more of Debug */

#define NOBJ 1000
#define C_A FD_C_DEBUG
#define R_CLASS_A FD_O_CLASS_DEBUG           /* A's class object */
#define A(i) (FD_O_EXTRA + (ddmc_ref)(i) - 1) /* the i-th added A, 1..NOBJ */
#define NPROG (FD_O_END - FD_O_DEBUG)        /* the program's objects */
#define NA (NOBJ + 2)                         /* instances of A: the program's two and NOBJ */
#define INTS_SUM 150                          /* the program's int[5] */

static int setup(void **state) {
  fixture *f = jv_fixture_new(FAKEBRIDGE_HEAP);
  for (int i = 1; i <= NOBJ; i++) {
    fd_object *o = fakebridge_add(&f->fb, C_A);
    assert_non_null(o);
    o->fields[FD_F_X].u.i = i;
    o->fields[FD_F_NEXT].u.l = i < NOBJ ? A(i + 1) : 0;
  }
  fakebridge_object(&f->fb, FD_O_DEBUG2)->fields[FD_F_NEXT].u.l = A(1);
  *state = f;
  return 0;
}

static int teardown(void **state) {
  jv_fixture_free(*state);
  return 0;
}

static void add_caps(fixture *f) {
  ddmc__jv_caps c;
  memset(&c, 0, sizeof(c));
  ddmc__jv_cap_set(&c, DDMC_CAP_can_tag_objects);
  ddmc__jv_cap_set(&c, DDMC_CAP_can_generate_garbage_collection_events);
  ddmc__jv_cap_set(&c, DDMC_CAP_can_generate_object_free_events);
  assert_int_equal(ddmc__jv_jt_AddCapabilities(f->e, &c), 0);
}

static void go_live(fixture *f) {
  assert_int_equal(ddmc_agent_vm_start(f->vm), 0);
  assert_int_equal(ddmc_agent_vm_init(f->vm, 0), 0);
}

/* A global handle for ref, as an agent would hold one. */
static jobject handle(fixture *f, ddmc_ref r) { return ddmc__jv_ref_new(f->jv, DDMC__CELL_GLOBAL, r, 0, 0); }

static void test_bad_input(void **state) {
  fixture *f = *state;
  jlong tag;
  jobject o = handle(f, A(5));
  /* OnLoad: tags are for the start and live phases; no capability yet */
  assert_int_equal(ddmc__jv_jt_SetTag(f->e, o, 1), JVMTI_ERROR_WRONG_PHASE);
  add_caps(f);
  go_live(f);
  assert_int_equal(ddmc__jv_jt_SetTag(f->e, NULL, 1), JVMTI_ERROR_INVALID_OBJECT);
  assert_int_equal(ddmc__jv_jt_SetTag(f->e, (jobject)(uintptr_t)0x7777, 1), JVMTI_ERROR_INVALID_OBJECT);
  assert_int_equal(ddmc__jv_jt_GetTag(f->e, o, NULL), JVMTI_ERROR_NULL_POINTER);
  assert_int_equal(ddmc__jv_jt_GetTag(NULL, o, &tag), JVMTI_ERROR_INVALID_ENVIRONMENT);
  jint count;
  jlong zero = 0;
  assert_int_equal(ddmc__jv_jt_GetObjectsWithTags(f->e, 1, &zero, &count, NULL, NULL), JVMTI_ERROR_ILLEGAL_ARGUMENT);
  assert_int_equal(ddmc__jv_jt_GetObjectsWithTags(f->e, -1, &zero, &count, NULL, NULL), JVMTI_ERROR_ILLEGAL_ARGUMENT);
  assert_int_equal(ddmc__jv_jt_GetObjectsWithTags(f->e, 1, NULL, &count, NULL, NULL), JVMTI_ERROR_NULL_POINTER);
  assert_int_equal(ddmc__jv_jt_IterateThroughHeap(f->e, 0, NULL, NULL, NULL), JVMTI_ERROR_NULL_POINTER);
  ddmc__jv_heap_callbacks cb;
  memset(&cb, 0, sizeof(cb));
  assert_int_equal(ddmc__jv_jt_IterateThroughHeap(f->e, 0, o, &cb, NULL), JVMTI_ERROR_INVALID_CLASS);
  assert_int_equal(ddmc__jv_jt_FollowReferences(f->e, 0, NULL, (jobject)(uintptr_t)0x7777, &cb, NULL),
                   JVMTI_ERROR_INVALID_OBJECT);
  jlong size;
  jint hash;
  assert_int_equal(ddmc__jv_jt_GetObjectSize(f->e, o, NULL), JVMTI_ERROR_NULL_POINTER);
  assert_int_equal(ddmc__jv_jt_GetObjectSize(f->e, NULL, &size), JVMTI_ERROR_INVALID_OBJECT);
  assert_int_equal(ddmc__jv_jt_GetObjectSize(f->e, o, &size), 0);
  assert_int_equal(size, fakebridge_object_size(fakebridge_object(&f->fb, A(5))));
  assert_int_equal(ddmc__jv_jt_GetObjectHashCode(f->e, o, &hash), 0);
  assert_int_equal(hash, (int32_t)(A(5) * 31));
  assert_int_equal(ddmc__jv_jt_GetObjectHashCode(f->e, o, NULL), JVMTI_ERROR_NULL_POINTER);
  assert_int_equal(ddmc__jv_jt_ForceGarbageCollection(f->e), 0);
  assert_int_equal(atomic_load(&f->fb.n_collect), 1);
  assert_int_equal(ddmc_gc_sweep(NULL, odd_live, NULL), DDMC_EINVAL);
  assert_int_equal(ddmc_gc_sweep(f->vm, NULL, NULL), DDMC_EINVAL);
  assert_int_equal(ddmc_gc_start(NULL), DDMC_EINVAL);
  /* dead: everything heap answers WRONG_PHASE */
  assert_int_equal(ddmc_agent_vm_death(f->vm, 0), 0);
  assert_int_equal(ddmc__jv_jt_SetTag(f->e, o, 1), JVMTI_ERROR_WRONG_PHASE);
  assert_int_equal(ddmc__jv_jt_IterateThroughHeap(f->e, 0, NULL, &cb, NULL), JVMTI_ERROR_WRONG_PHASE);
  assert_int_equal(ddmc__jv_jt_ForceGarbageCollection(f->e), JVMTI_ERROR_WRONG_PHASE);
}

/* IterateThroughHeap: counts, filters, tag_ptr, the primitive array, abort. */
typedef struct counts {
  long objects, tagged, arrays, ints_sum, stop_after;
  jlong class_tags;
} counts;

static jint count_cb(jlong class_tag, jlong size, jlong *tag_ptr, jint length, void *ud) {
  counts *c = ud;
  c->objects++;
  if (*tag_ptr) c->tagged++;
  c->class_tags += class_tag;
  if (*tag_ptr == 0 && length < 0 && class_tag == 7) *tag_ptr = 100; /* tag every A */
  return c->stop_after && c->objects >= c->stop_after ? JVMTI_VISIT_ABORT : 0;
}

static jint array_cb(jlong class_tag, jlong size, jlong *tag_ptr, jint n, jint type, const void *el, void *ud) {
  counts *c = ud;
  c->arrays++;
  if (type == 'I')
    for (jint i = 0; i < n; i++) c->ints_sum += ((const jint *)el)[i];
  return 0;
}

static void test_iterate(void **state) {
  fixture *f = *state;
  add_caps(f);
  go_live(f);
  jclass a = ddmc__jv_ref_new(f->jv, DDMC__CELL_GLOBAL, R_CLASS_A, C_A, 0);
  assert_int_equal(ddmc__jv_jt_SetTag(f->e, a, 7), 0); /* a class: its class object */
  ddmc__jv_heap_callbacks cb;
  memset(&cb, 0, sizeof(cb));
  cb.heap_iteration_callback = count_cb;
  cb.array_primitive_value_callback = array_cb;
  counts c = {0};
  assert_int_equal(ddmc__jv_jt_IterateThroughHeap(f->e, 0, NULL, &cb, &c), 0);
  assert_int_equal(c.objects, NOBJ + NPROG);
  assert_int_equal(c.arrays, 1);
  assert_int_equal(c.ints_sum, INTS_SUM);
  assert_int_equal(c.class_tags, 7 * NA);
  /* every A now tagged 100 (set through tag_ptr) */
  memset(&c, 0, sizeof(c));
  assert_int_equal(ddmc__jv_jt_IterateThroughHeap(f->e, JVMTI_HEAP_FILTER_UNTAGGED, NULL, &cb, &c), 0);
  assert_int_equal(c.objects, NA + 1); /* A's class object has tag 7 too */
  assert_int_equal(c.tagged, NA + 1);
  memset(&c, 0, sizeof(c));
  assert_int_equal(ddmc__jv_jt_IterateThroughHeap(f->e, 0, a, &cb, &c), 0); /* klass: instances of A only */
  assert_int_equal(c.objects, NA);
  memset(&c, 0, sizeof(c));
  assert_int_equal(ddmc__jv_jt_IterateThroughHeap(f->e, JVMTI_HEAP_FILTER_CLASS_UNTAGGED, NULL, &cb, &c), 0);
  assert_int_equal(c.objects, NA);
  memset(&c, 0, sizeof(c));
  c.stop_after = 10;
  assert_int_equal(ddmc__jv_jt_IterateThroughHeap(f->e, 0, NULL, &cb, &c), 0);
  assert_int_equal(c.objects, 10);
  /* GetObjectsWithTags */
  jlong want[2] = {100, 7};
  jint n = 0;
  jobject *objs = NULL;
  jlong *tags = NULL;
  assert_int_equal(ddmc__jv_jt_GetObjectsWithTags(f->e, 2, want, &n, &objs, &tags), 0);
  assert_int_equal(n, NA + 1);
  long t100 = 0;
  for (jint i = 0; i < n; i++) {
    t100 += tags[i] == 100;
    ddmc__jv_cell cell;
    assert_int_equal(ddmc__jv_ref_get(f->jv, objs[i], &cell), 0);
  }
  assert_int_equal(t100, NA);
  free(objs);
  free(tags);
}

/* IterateThroughHeap's primitive_field_callback: A's int "x" (its value is i for A(i)), as
 * FollowReferences indexes it (FIELD FD_F_X: Debug's fields in order, statics included, and no
 * superclass or interface has any). Only A's instances count (their class's tag is 7). */
typedef struct prims {
  long n, sum, bad;
} prims;

static jint prim_cb(jint kind, const ddmc__jv_jref_info *info, jlong class_tag, jlong *tag_ptr, jvalue value, jint type,
                    void *ud) {
  prims *p = ud;
  if (class_tag != 7 || type != 'I') return JVMTI_VISIT_OBJECTS; /* JVMTI_PRIMITIVE_TYPE_INT */
  p->n++;
  p->sum += value.i;
  if (kind != JVMTI_HEAP_REFERENCE_FIELD || info->index != FD_F_X) p->bad++;
  if (value.i == 5) *tag_ptr = 55; /* the callback may tag the object */
  return JVMTI_VISIT_OBJECTS;
}

static void test_iterate_primitive_fields(void **state) {
  fixture *f = *state;
  add_caps(f);
  go_live(f);
  assert_int_equal(ddmc__jv_jt_SetTag(f->e, ddmc__jv_ref_new(f->jv, DDMC__CELL_GLOBAL, R_CLASS_A, C_A, 0), 7), 0);
  ddmc__jv_heap_callbacks cb;
  memset(&cb, 0, sizeof(cb));
  cb.primitive_field_callback = prim_cb;
  prims p = {0};
  assert_int_equal(ddmc__jv_jt_IterateThroughHeap(f->e, 0, NULL, &cb, &p), 0);
  assert_int_equal(p.n, NA); /* each A once */
  assert_int_equal(p.sum, (long)NOBJ * (NOBJ + 1) / 2 + 42 + 7); /* and the program's x = 42 and 7 */
  assert_int_equal(p.bad, 0);
  jlong t = 55;
  jint n = 0;
  assert_int_equal(ddmc__jv_jt_GetObjectsWithTags(f->e, 1, &t, &n, NULL, NULL), 0);
  assert_int_equal(n, 1);
  memset(&p, 0, sizeof(p));
  assert_int_equal(ddmc__jv_jt_IterateThroughHeap(f->e, JVMTI_HEAP_FILTER_UNTAGGED, NULL, &cb, &p), 0);
  assert_int_equal(p.n, 1); /* only the tagged one */
  assert_int_equal(p.sum, 5);
}

/* FollowReferences: the roots, then what they reach: FD_O_DEBUG (a JNI global) -> its next
 * (FD_O_DEBUG2) and its arr (the int[]), FD_O_DEBUG2 -> A(1) -> A(2) -> ... -> A(NOBJ) through
 * "next" (FIELD FD_F_NEXT / FD_F_ARR), each A to its class. */
typedef struct refs {
  long by_kind[32], reached, abort_at, bad_index;
} refs;

static jint ref_cb(jint kind, const ddmc__jv_jref_info *info, jlong class_tag, jlong rclass_tag, jlong size,
                   jlong *tag_ptr, jlong *rtag_ptr, jint length, void *ud) {
  refs *r = ud;
  r->reached++;
  if (kind >= 0 && kind < 32) r->by_kind[kind]++;
  if (kind == JVMTI_HEAP_REFERENCE_FIELD && info->index != FD_F_NEXT && info->index != FD_F_ARR) r->bad_index++;
  if (kind == JVMTI_HEAP_REFERENCE_FIELD && rtag_ptr != NULL) *rtag_ptr = 1; /* referrers of a field */
  if (r->abort_at && r->reached >= r->abort_at) return JVMTI_VISIT_ABORT;
  return JVMTI_VISIT_OBJECTS;
}

static void test_follow(void **state) {
  fixture *f = *state;
  add_caps(f);
  go_live(f);
  ddmc__jv_heap_callbacks cb;
  memset(&cb, 0, sizeof(cb));
  cb.heap_reference_callback = ref_cb;
  refs r;
  memset(&r, 0, sizeof(r));
  assert_int_equal(ddmc__jv_jt_FollowReferences(f->e, 0, NULL, NULL, &cb, &r), 0);
  assert_int_equal(r.by_kind[JVMTI_HEAP_REFERENCE_JNI_GLOBAL], 1);
  assert_int_equal(r.by_kind[JVMTI_HEAP_REFERENCE_SYSTEM_CLASS], 1);
  assert_int_equal(r.by_kind[JVMTI_HEAP_REFERENCE_FIELD], NOBJ + 2); /* next and arr, then the chain */
  assert_int_equal(r.by_kind[JVMTI_HEAP_REFERENCE_CLASS], NA);       /* each A to its class */
  assert_int_equal(r.bad_index, 0);
  /* every A but the last referred to another through a field: tagged 1 by the callback */
  jlong one = 1;
  jint n = 0;
  assert_int_equal(ddmc__jv_jt_GetObjectsWithTags(f->e, 1, &one, &n, NULL, NULL), 0);
  assert_int_equal(n, NA - 1);
  /* from an initial object: only what it reaches, not the roots */
  memset(&r, 0, sizeof(r));
  jobject mid = handle(f, A(NOBJ - 9));
  assert_int_equal(ddmc__jv_jt_FollowReferences(f->e, 0, NULL, mid, &cb, &r), 0);
  assert_int_equal(r.by_kind[JVMTI_HEAP_REFERENCE_FIELD], 9);
  assert_int_equal(r.by_kind[JVMTI_HEAP_REFERENCE_JNI_GLOBAL], 0);
  /* abort */
  memset(&r, 0, sizeof(r));
  r.abort_at = 5;
  assert_int_equal(ddmc__jv_jt_FollowReferences(f->e, 0, NULL, NULL, &cb, &r), 0);
  assert_int_equal(r.reached, 5);
}

/* The GC hooks: GarbageCollectionStart / Finish, the sweep, ObjectFree after the collection. */
static int g_gc_start, g_gc_finish, g_freed;
static jlong g_freed_sum;
static void on_gc_start(ddmc__jv_jenv *e) { g_gc_start++; }
static void on_gc_finish(ddmc__jv_jenv *e) { g_gc_finish++; }
static void on_free(ddmc__jv_jenv *e, jlong tag) {
  g_freed++;
  g_freed_sum += tag;
}

static void test_gc_events(void **state) {
  fixture *f = *state;
  add_caps(f);
  ddmc__jv_fnptr cbs[DDMC__JEV_COUNT];
  memset(cbs, 0, sizeof(cbs));
  cbs[JVMTI_EVENT_GARBAGE_COLLECTION_START - 50] = (ddmc__jv_fnptr)on_gc_start;
  cbs[JVMTI_EVENT_GARBAGE_COLLECTION_FINISH - 50] = (ddmc__jv_fnptr)on_gc_finish;
  cbs[JVMTI_EVENT_OBJECT_FREE - 50] = (ddmc__jv_fnptr)on_free;
  assert_int_equal(ddmc__jv_jt_SetEventCallbacks(f->e, cbs, (jint)sizeof(cbs)), 0);
  assert_int_equal(ddmc__jv_jt_SetEventNotificationMode(f->e, JVMTI_ENABLE, JVMTI_EVENT_GARBAGE_COLLECTION_START, NULL),
                   0);
  assert_int_equal(
      ddmc__jv_jt_SetEventNotificationMode(f->e, JVMTI_ENABLE, JVMTI_EVENT_GARBAGE_COLLECTION_FINISH, NULL), 0);
  assert_int_equal(ddmc__jv_jt_SetEventNotificationMode(f->e, JVMTI_ENABLE, JVMTI_EVENT_OBJECT_FREE, NULL), 0);
  go_live(f);
  /* A(i) tagged i; odd_live keeps the odd refs: A(i) for an even i (A(1) is FD_O_EXTRA, even). */
  for (int i = 1; i <= 100; i++) {
    jobject h = handle(f, A(i));
    assert_int_equal(ddmc__jv_jt_SetTag(f->e, h, (jlong)i), 0);
    ddmc__jv_ref_delete(f->jv, h, DDMC__CELL_GLOBAL);
  }
  g_gc_start = g_gc_finish = g_freed = 0;
  g_freed_sum = 0;
  assert_int_equal(ddmc_gc_start(f->vm), 0);
  assert_int_equal(ddmc_gc_sweep(f->vm, odd_live, NULL), 0);
  assert_int_equal(g_freed, 0); /* not before ddmc_gc_done */
  ddmc_gc_done(f->vm);
  assert_int_equal(g_gc_start, 1);
  assert_int_equal(g_gc_finish, 1);
  assert_int_equal(g_freed, 50);
  assert_true(g_freed_sum == 2500); /* 1 + 3 + ... + 99 */
  jint n = 0;
  jlong want = 3;
  assert_int_equal(ddmc__jv_jt_GetObjectsWithTags(f->e, 1, &want, &n, NULL, NULL), 0);
  assert_int_equal(n, 0);
  want = 2;
  assert_int_equal(ddmc__jv_jt_GetObjectsWithTags(f->e, 1, &want, &n, NULL, NULL), 0);
  assert_int_equal(n, 1);
  /* ObjectFree off: entries still go, no event */
  assert_int_equal(ddmc__jv_jt_SetEventNotificationMode(f->e, JVMTI_DISABLE, JVMTI_EVENT_OBJECT_FREE, NULL), 0);
  ddmc_gc_sweep(f->vm, odd_live, NULL);
  ddmc_gc_done(f->vm);
  assert_int_equal(g_freed, 50);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_table),
      cmocka_unit_test_setup_teardown(test_bad_input, setup, teardown),
      cmocka_unit_test_setup_teardown(test_iterate, setup, teardown),
      cmocka_unit_test_setup_teardown(test_iterate_primitive_fields, setup, teardown),
      cmocka_unit_test_setup_teardown(test_follow, setup, teardown),
      cmocka_unit_test_setup_teardown(test_gc_events, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
