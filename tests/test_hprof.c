/* SPDX-License-Identifier: Apache-2.0 */
/* Heap dumps (src/profile/hprof_*.c, chunks/hprof.c) over the tests' fake bridge (fakebridge.h)
 * given a program whose heap is small and known to the byte: the file's records and their order,
 * every root kind, the cap, a bridge that misbehaves, every allocation failing in turn, HPDU and
 * HPDS over a real socket, FEAT, and a peer that stops reading in the middle of an HPDS.
 * host/hprof.c (the census and the 1.0.2 conversion) is checked on the same bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <dirent.h>
#include <cmocka.h>

#include "ddmc_host.h"
#include "profile/hprof.h"
#include "util/testutil.h"
#include "fakebridge.h"
#include "util/hsfile.h"
#include "util/memsrc.h"
#include "vm_int.h"

#define T(a, b, c, d) DDMC_FOURCC(a, b, c, d)
#define TMO 10000

/* ---- the heap: a program of this test's own, which the tests' fake bridge answers from */

enum { C_OBJECT = FD_C_PROG, C_CLASS, C_BASE, C_SUB, C_INTS, C_SUBS, C_STRING, C_END };
#define NCLASSES (C_END - C_OBJECT)
enum { O_SUB1 = 0x200, O_SUB2, O_INTS, O_SUBS, O_STR, O_INTS2, O_BIG, O_MANY = 0x100000 };

#define V_I(v) {.tag = 'I', .u.i = (v)}
#define V_L(v) {.tag = 'L', .u.l = (v)}

/* Base: static int sCount = 7; int a; long b.  Sub: Base ref; static String sName; char c. */
static const fd_pfield base_fields[] = {
    {"sCount", "I", DDMC_ACC_STATIC, V_I(7)}, {"a", "I", 0, {0}}, {"b", "J", 0, {0}}};
static const fd_pfield sub_fields[] = {
    {"ref", "LBase;", 0, {0}}, {"sName", "Ljava/lang/String;", DDMC_ACC_STATIC, V_L(O_STR)}, {"c", "C", 0, {0}}};

#define CLASS_INFO(sig, sup, obj) \
  {.signature = (sig), .superclass = (sup), .class_object = (obj), .type_tag = DDMC_TYPE_CLASS}
#define ARRAY_INFO(sig) {.signature = (sig), .superclass = C_OBJECT, .type_tag = DDMC_TYPE_ARRAY}
static const fd_pclass classes[NCLASSES] = {
    {CLASS_INFO("Ljava/lang/Object;", 0, 0x100), NULL, 0},
    {CLASS_INFO("Ljava/lang/Class;", C_OBJECT, 0x101), NULL, 0},
    {CLASS_INFO("LBase;", C_OBJECT, 0x102), base_fields, 3},
    {CLASS_INFO("LSub;", C_BASE, 0x103), sub_fields, 3},
    {ARRAY_INFO("[I"), NULL, 0},
    {ARRAY_INFO("[LSub;"), NULL, 0},
    {CLASS_INFO("Ljava/lang/String;", C_OBJECT, 0x104), NULL, 0},
};

/* Each Sub's fields, by the class that declares them. */
static const fd_pvalue sub1_fields[] = {{C_SUB, 0, V_L(O_SUB2)},
                                        {C_SUB, 2, {.tag = 'C', .u.i = 'x'}},
                                        {C_BASE, 1, V_I(1)},
                                        {C_BASE, 2, {.tag = 'J', .u.j = 0x1122334455667788ll}}};
static const fd_pvalue sub2_fields[] = {
    {C_SUB, 0, V_L(0)}, {C_SUB, 2, {.tag = 'C', .u.i = 'y'}}, {C_BASE, 1, V_I(2)}, {C_BASE, 2, {.tag = 'J', .u.j = 3}}};
static const int32_t ints[3] = {1, 2, 3};                             /* O_INTS and the many: given with the object */
static const ddmc_value subs_values[2] = {V_L(O_SUB1), V_L(0)};       /* O_SUBS: read with array_get */
static const ddmc_value ints2_values[2] = {V_I(-1), V_I(0x7fffffff)}; /* O_INTS2: read with array_get */

#define CLASS_OBJECT(ref) {(ref), C_CLASS, 64, DDMC_HEAP_ID_DEFAULT, -1, NULL, NULL, NULL, 0, 0, 0, 0}
/* The class objects first, then six objects: one in the zygote heap between app ones. */
static const fd_pobject fixed_objects[] = {
    CLASS_OBJECT(0x100), CLASS_OBJECT(0x101), CLASS_OBJECT(0x102), CLASS_OBJECT(0x103), CLASS_OBJECT(0x104),
    {O_SUB1, C_SUB, 40, DDMC_HEAP_ID_APP, -1, NULL, NULL, sub1_fields, 4, 0, 0, 0},
    {O_SUB2, C_SUB, 40, DDMC_HEAP_ID_APP, -1, NULL, NULL, sub2_fields, 4, 0, 0, 0},
    {O_INTS, C_INTS, 28, DDMC_HEAP_ID_ZYGOTE, 3, ints, NULL, NULL, 0, 0, 0, 0},
    {O_SUBS, C_SUBS, 24, DDMC_HEAP_ID_APP, 2, NULL, subs_values, NULL, 0, 0, 0, 0},
    {O_STR, C_STRING, 16, DDMC_HEAP_ID_APP, -1, NULL, NULL, NULL, 0, 0, 0, 0},
    {O_INTS2, C_INTS, 24, DDMC_HEAP_ID_APP, 2, NULL, ints2_values, NULL, 0, 0, 0, 0},
};
#define NFIXED (sizeof fixed_objects / sizeof fixed_objects[0])

/* Every root kind, JNI MONITOR's with its thread and frame. */
#define ROOT(k) {(k) == DDMC_GC_ROOT_STICKY_CLASS ? 0x102 : O_SUB1, (k), 1, 0, 2}
static const ddmc_gc_root roots[] = {
    ROOT(DDMC_GC_ROOT_UNKNOWN),         ROOT(DDMC_GC_ROOT_JNI_GLOBAL),   ROOT(DDMC_GC_ROOT_JNI_LOCAL),
    ROOT(DDMC_GC_ROOT_JAVA_FRAME),      ROOT(DDMC_GC_ROOT_NATIVE_STACK), ROOT(DDMC_GC_ROOT_STICKY_CLASS),
    ROOT(DDMC_GC_ROOT_THREAD_BLOCK),    ROOT(DDMC_GC_ROOT_MONITOR_USED), ROOT(DDMC_GC_ROOT_THREAD_OBJECT),
    ROOT(DDMC_GC_ROOT_INTERNED_STRING), ROOT(DDMC_GC_ROOT_FINALIZING),   ROOT(DDMC_GC_ROOT_DEBUGGER),
    ROOT(DDMC_GC_ROOT_VM_INTERNAL),     ROOT(DDMC_GC_ROOT_JNI_MONITOR)};
_Static_assert(sizeof roots / sizeof roots[0] == DDMC_GC_ROOT_JNI_MONITOR + 1, "a root of every kind");

/* The fake bridge with the program; a test adds objects after the fixed ones (fake_add). */
typedef struct fake {
  fakebridge fb;
  ddmc_vm *vm; /* fb's */
  fd_program prog;
  fd_pobject obj[NFIXED + 4];
} fake;

static void vm_log(void *ud, ddmc_log_level lvl, const char *msg) {
  if (lvl >= DDMC_LOG_WARN || getenv("DDMC_TEST_VERBOSE")) fprintf(stderr, "[vm] %s\n", msg);
}

/* The VM (not started) with the heap above: the bridge only, no debugger (dumps need none).
 * flags: more of fakebridge_new's (FAKEBRIDGE_NO_ROOTS). */
static void fake_init(fake *f, const ddmc_allocator *mem, unsigned flags) {
  memset(f, 0, sizeof(*f));
  memcpy(f->obj, fixed_objects, sizeof fixed_objects);
  f->prog = (fd_program){classes, NCLASSES, f->obj, NFIXED, roots, sizeof roots / sizeof roots[0]};
  ddmc_options o;
  char err[128];
  ddmc_options_init(&o); /* parse sets only what the spec names */
  assert_int_equal(ddmc_options_parse(&o, "transport=dt_socket,address=127.0.0.1:0,server=y,suspend=n", err, sizeof err), 0);
  const fakevm_config vm = {.log = vm_log}; /* no threads: the heap's roots name thread 1 only */
  assert_int_equal(
      fakebridge_new_program(&f->fb, FAKEBRIDGE_NO_DEBUGGER | FAKEBRIDGE_HEAP | flags, &f->prog, &vm, &o, mem), 0);
  f->vm = f->fb.fv.vm;
}

static void fake_start(fake *f) { assert_int_equal(ddmc_vm_start(f->vm), 0); }

/* Appends an object to the heap; returns it (changed in place between dumps). */
static fd_pobject *fake_add(fake *f, fd_pobject o) {
  assert_true(f->prog.nobjects < sizeof f->obj / sizeof f->obj[0]);
  f->obj[f->prog.nobjects] = o;
  return &f->obj[f->prog.nobjects++];
}

/* O_BIG, an int[] of n elements at big. */
static fd_pobject big_array(const int32_t *big, size_t n) {
  return (fd_pobject){O_BIG, C_INTS, 16 + n * 4, DDMC_HEAP_ID_APP, (int32_t)n, big, NULL, NULL, 0, 0, 0, 0};
}

/* The library asked the fake nothing it should not have; frees the VM. */
static void fake_free(fake *f) {
  assert_int_equal(atomic_load(&f->fb.bad_calls), 0);
  fakebridge_free(&f->fb);
}

/* The dump as one buffer. */
static uint8_t *flatten(const ddmc__prof_hprof *h) {
  uint8_t *p = malloc(h->len ? h->len : 1), *q = p;
  assert_non_null(p);
  for (const ddmc__prof_hpblk *b = h->out.head; b; b = b->next) {
    memcpy(q, b->data, b->len);
    q += b->len;
  }
  assert_int_equal((size_t)(q - p), h->len);
  return p;
}

static uint32_t be32(const uint8_t *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The first occurrence of needle, or NULL. */
static const uint8_t *find(const uint8_t *p, size_t n, const uint8_t *needle, size_t k) {
  for (size_t i = 0; i + k <= n; i++)
    if (memcmp(p + i, needle, k) == 0) return p + i;
  return NULL;
}

/* ---- the file, byte by byte */

/* What ddmc_host_hprof_walk showed: records and sub-records by tag, and the bytes it pointed at. */
typedef struct walk_count {
  uint64_t top[256], sub[256];
  const uint8_t *lo, *hi;
  int outside;
} walk_count;

static void count_visit(void *ud, int sub, uint8_t tag, const uint8_t *body, size_t len) {
  walk_count *c = ud;
  (sub ? c->sub : c->top)[tag]++;
  if (body < c->lo || body + len > c->hi) c->outside = 1;
}

/* The top-level records of one tag, in file order. */
typedef struct records {
  uint8_t tag;
  int n;
  const uint8_t *body[32];
  size_t len[32];
} records;

static void collect_visit(void *ud, int sub, uint8_t tag, const uint8_t *body, size_t len) {
  records *r = ud;
  if (sub || tag != r->tag) return;
  assert_true(r->n < 32);
  r->body[r->n] = body;
  r->len[r->n++] = len;
}

/* One LOAD CLASS per class, in for_each_class's order: serial, class object id (a synthetic one
 * for the array classes, which have none), stack trace serial 0, and its name as a STRING. */
static void check_load_classes(const uint8_t *p, size_t n) {
  static const uint32_t ids[NCLASSES] = {0x100, 0x101, 0x102, 0x103, 0xF0000000, 0xF0000001, 0x104};
  static const char *const names[NCLASSES] = {"java.lang.Object", "java.lang.Class", "Base", "Sub",
                                              "int[]", "Sub[]", "java.lang.String"};
  records lc = {.tag = 0x02}, str = {.tag = 0x01};
  assert_int_equal(ddmc_host_hprof_walk(p, n, collect_visit, &lc), 0);
  assert_int_equal(ddmc_host_hprof_walk(p, n, collect_visit, &str), 0);
  assert_int_equal(lc.n, NCLASSES);
  for (int i = 0; i < NCLASSES; i++) {
    const uint8_t *b = lc.body[i];
    assert_int_equal(lc.len[i], 16);
    assert_int_equal(be32(b), i + 1);
    assert_int_equal(be32(b + 4), ids[i]);
    assert_int_equal(be32(b + 8), 0);
    uint32_t name = be32(b + 12);
    int found = 0;
    for (int k = 0; k < str.n; k++)
      if (be32(str.body[k]) == name) {
        found = 1;
        assert_int_equal(str.len[k], 4 + strlen(names[i]));
        assert_memory_equal(str.body[k] + 4, names[i], strlen(names[i]));
      }
    assert_true(found);
  }
}

static void test_dump_layout(void **state) {
  (void)state;
  fake f;
  fake_init(&f, NULL, 0);
  ddmc__prof_hprof *h;
  char msg[256];
  assert_int_equal(ddmc__prof_hprof_build(f.vm, &h, msg, sizeof msg), 0);
  assert_int_equal(atomic_load(&f.fb.n_unstopped_reads), 0); /* every read inside the one stop */
  assert_int_equal(atomic_load(&f.fb.n_stopped), 1);
  uint8_t *p = flatten(h);
  size_t n = h->len;
  assert_memory_equal(p, "JAVA PROFILE 1.0.3\0\0\0\0\4", 23);
  ddmc_host_hprof_info info;
  assert_int_equal(ddmc_host_hprof_scan(p, n, &info), 0);
  assert_int_equal(info.load_classes, NCLASSES);
  assert_int_equal(info.classes, NCLASSES);
  assert_int_equal(info.instances, 3); /* two Sub, the String; class objects are CLASS DUMPs */
  assert_int_equal(info.object_arrays, 1);
  assert_int_equal(info.primitive_arrays, 2);
  assert_int_equal(info.roots, DDMC_GC_ROOT_JNI_MONITOR + 1);
  assert_true(info.heap_infos >= 3); /* app, zygote, app again */
  assert_int_equal(h->objects, 6);
  /* The walk shows the records scan counted, each inside the dump. */
  walk_count *wc = calloc(1, sizeof *wc);
  assert_non_null(wc);
  wc->lo = p;
  wc->hi = p + n;
  assert_int_equal(ddmc_host_hprof_walk(p, n, count_visit, wc), 0);
  assert_false(wc->outside);
  assert_int_equal(wc->top[0x01], info.strings);
  assert_int_equal(wc->top[0x02], info.load_classes);
  assert_int_equal(wc->top[0x0C] + wc->top[0x1C], info.segments);
  assert_int_equal(wc->sub[0x20], info.classes);
  assert_int_equal(wc->sub[0x21], info.instances);
  assert_int_equal(wc->sub[0x22], info.object_arrays);
  assert_int_equal(wc->sub[0x23], info.primitive_arrays);
  assert_int_equal(wc->sub[0xFE], info.heap_infos);
  assert_int_not_equal(ddmc_host_hprof_walk(p, n - 3, count_visit, wc), 0);
  free(wc);

  /* Sub #1: its own fields first (ref, c), then Base's (a, b): 4 + 2 + 4 + 8 bytes. */
  const uint8_t sub1[] = {0x21, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 1, 3, 0, 0, 0, 18, 0, 0, 2, 1, 0, 'x',
                          0,    0, 0, 1, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88};
  assert_non_null(find(p, n, sub1, sizeof sub1));
  /* int[3] from the VM's elements, big-endian; int[2] through array_get. */
  const uint8_t ints[] = {0x23, 0, 0, 2, 2, 0, 0, 0, 0, 0, 0, 0, 3, 10, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3};
  assert_non_null(find(p, n, ints, sizeof ints));
  const uint8_t ints2[] = {0x23, 0, 0, 2, 5, 0, 0, 0, 0, 0, 0, 0, 2, 10, 0xff, 0xff, 0xff, 0xff, 0x7f, 0xff, 0xff, 0xff};
  assert_non_null(find(p, n, ints2, sizeof ints2));
  /* Sub[2] names its array class, which has no class object: the first synthetic id. */
  const uint8_t subs[] = {0x22, 0, 0, 2, 3, 0, 0, 0, 0, 0, 0, 0, 2, 0xF0, 0, 0, 1, 0, 0, 2, 0, 0, 0, 0, 0};
  assert_non_null(find(p, n, subs, sizeof subs));
  /* The zygote heap's object comes after a HEAP DUMP INFO for 'Z'. */
  const uint8_t *zi = find(p, n, (const uint8_t[]){0xFE, 0, 0, 0, 'Z'}, 5);
  assert_non_null(zi);
  assert_true(zi < find(p, n, ints, sizeof ints));
  /* Base's CLASS DUMP: id, serial, super Object, then the static sCount = 7 and two fields. */
  const uint8_t base[] = {0x20, 0, 0, 1, 2, 0, 0, 0, 0, 0, 0, 1, 0};
  const uint8_t *bd = find(p, n, base, sizeof base);
  assert_non_null(bd);
  assert_int_equal(be32(bd + 33), 12); /* instance size: int + long */
  assert_int_equal(bd[37] << 8 | bd[38], 0); /* no constants */
  assert_int_equal(bd[39] << 8 | bd[40], 1); /* one static */
  assert_int_equal(bd[45], 10);              /* int */
  assert_int_equal(be32(bd + 46), 7);
  assert_int_equal(bd[50] << 8 | bd[51], 2); /* two instance fields */
  /* Every Android root kind is there, JNI MONITOR with its thread. */
  for (unsigned t = 0x89; t <= 0x8E; t++) {
    if (t == 0x8C) continue; /* REFERENCE CLEANUP: no ddmc kind (obsolete) */
    const uint8_t r[] = {(uint8_t)t, 0, 0, 2, 0};
    assert_non_null(find(p, n, r, sizeof r));
  }
  assert_null(find(p, n, (const uint8_t[]){0xC3, 0, 0, 2}, 4));
  /* Every root in for_each_root's order, each with its fields: the object, JNI GLOBAL's ref (0),
   * the thread (1) where the kind names one, a frame or stack trace serial of -1. */
  const uint8_t root_run[] = {
      0xFF, 0, 0, 2, 0,                                                /* UNKNOWN */
      0x01, 0, 0, 2, 0, 0, 0, 0, 0,                                    /* JNI GLOBAL */
      0x02, 0, 0, 2, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff,            /* JNI LOCAL */
      0x03, 0, 0, 2, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff,            /* JAVA FRAME */
      0x04, 0, 0, 2, 0, 0, 0, 0, 1,                                    /* NATIVE STACK */
      0x05, 0, 0, 1, 2,                                                /* STICKY CLASS: Base's */
      0x06, 0, 0, 2, 0, 0, 0, 0, 1,                                    /* THREAD BLOCK */
      0x07, 0, 0, 2, 0,                                                /* MONITOR USED */
      0x08, 0, 0, 2, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff,            /* THREAD OBJECT */
      0x89, 0, 0, 2, 0, 0x8A, 0, 0, 2, 0, 0x8B, 0, 0, 2, 0, 0x8D, 0, 0, 2, 0, /* Android's */
      0x8E, 0, 0, 2, 0, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xff};           /* JNI MONITOR */
  assert_non_null(find(p, n, root_run, sizeof root_run));
  check_load_classes(p, n);
  assert_int_equal(p[n - 9], 0x2C); /* HEAP DUMP END, last */

  /* The 1.0.2 form: no HEAP DUMP INFO, Android roots as ROOT UNKNOWN, JNI MONITOR shortened. */
  uint8_t *s = malloc(n);
  size_t sn;
  assert_int_equal(ddmc_host_hprof_to_standard(p, n, s, &sn), 0);
  assert_memory_equal(s, "JAVA PROFILE 1.0.2", 18);
  ddmc_host_hprof_info si;
  assert_int_equal(ddmc_host_hprof_scan(s, sn, &si), 0);
  assert_false(si.android);
  assert_int_equal(si.heap_infos, 0);
  assert_int_equal(si.roots, info.roots);
  assert_int_equal(si.instances, info.instances);
  assert_int_equal(sn, n - info.heap_infos * 9 - 8); /* each INFO 9 bytes; JNI MONITOR loses 8 */
  assert_int_not_equal(ddmc_host_hprof_to_standard(s, sn, s, &sn), 0); /* already 1.0.2, as hprof-conv */
  /* Cut anywhere, it is refused. */
  for (size_t cut = 0; cut < n; cut += 7) assert_int_not_equal(ddmc_host_hprof_scan(p, cut, &si), 0);
  free(s);
  free(p);
  ddmc__prof_hprof_free(f.vm, h);
  ddmc_prof_stats st;
  ddmc_prof_get_stats(f.vm, &st);
  assert_int_equal(st.hprof_dumps, 1);
  assert_int_equal(st.hprof_bytes, n);
  fake_free(&f);
}

/* ---- bounds and a bridge that misbehaves */

static void test_cap(void **state) {
  (void)state;
  fake f;
  fake_init(&f, NULL, 0);
  ddmc_prof_config c;
  ddmc_prof_config_init(&c);
  c.hprof_max_bytes = 1 << 20;
  assert_int_equal(ddmc_prof_configure(f.vm, &c), 0);
  c.hprof_max_bytes = 1024;
  assert_int_equal(ddmc_prof_configure(f.vm, &c), DDMC_EINVAL);
  int32_t *big = calloc(300000, 4);
  fd_pobject *o = fake_add(&f, big_array(big, 300000)); /* 1.2 MiB of int[] */
  ddmc__prof_hprof *h;
  char msg[256];
  assert_int_equal(ddmc__prof_hprof_build(f.vm, &h, msg, sizeof msg), DDMC_ETOOBIG);
  assert_null(h);
  assert_non_null(strstr(msg, "larger than the 1 MiB"));
  *o = big_array(big, 200000); /* 800 KiB: fits */
  assert_int_equal(ddmc__prof_hprof_build(f.vm, &h, msg, sizeof msg), 0);
  assert_true(h->len > 800000 && h->len < (1 << 20));
  ddmc__prof_hprof_free(f.vm, h);
  ddmc_prof_stats st;
  ddmc_prof_get_stats(f.vm, &st);
  assert_int_equal(st.hprof_failed, 1);
  fake_free(&f);
  free(big);
}

static void test_bad_bridge(void **state) {
  (void)state;
  fake f;
  fake_init(&f, NULL, 0);
  ddmc__prof_hprof *h;
  char msg[256];
  /* does not fit below the synthetic ids */
  fake_add(&f, (fd_pobject){0xF0000001, C_OBJECT, 16, DDMC_HEAP_ID_APP, -1, NULL, NULL, NULL, 0, 0, 0, 0});
  assert_int_equal(ddmc__prof_hprof_build(f.vm, &h, msg, sizeof msg), DDMC_EIO);
  assert_non_null(strstr(msg, "does not fit a 4-byte hprof id"));
  f.prog.nobjects--;
  atomic_store(&f.fb.fail_get_field, DDMC_JDWP_INVALID_OBJECT);
  assert_int_equal(ddmc__prof_hprof_build(f.vm, &h, msg, sizeof msg), DDMC_EIO);
  assert_non_null(strstr(msg, "get_field failed"));
  assert_null(h);
  fake_free(&f);
}

static void test_every_allocation_fails(void **state) {
  (void)state;
  int ok = 0;
  for (long at = 1; !ok && at < 10000; at++) {
    failer a = {0};
    ddmc_allocator mem = failer_allocator(&a);
    fake f;
    fake_init(&f, &mem, 0);
    long base = atomic_load(&a.live);
    atomic_store(&a.count, 0);
    atomic_store(&a.fail_at, at);
    ddmc__prof_hprof *h = NULL;
    char msg[256];
    int rc = ddmc__prof_hprof_build(f.vm, &h, msg, sizeof msg);
    if (rc == 0) {
      ok = atomic_load(&a.count) < at; /* no allocation failed: done */
      ddmc__prof_hprof_free(f.vm, h);
    } else {
      assert_int_equal(rc, DDMC_ENOMEM);
      assert_non_null(strstr(msg, "out of memory"));
    }
    assert_int_equal(atomic_load(&a.live), base); /* nothing kept */
    atomic_store(&a.fail_at, 0);
    fake_free(&f);
  }
  assert_true(ok);
}

/* ---- HPDU's file, written while the dump is built */

static uint8_t *read_all(int fd, size_t *n) {
  off_t len = lseek(fd, 0, SEEK_END);
  assert_true(len > 0);
  uint8_t *p = malloc((size_t)len);
  assert_non_null(p);
  assert_int_equal(pread(fd, p, (size_t)len, 0), len);
  *n = (size_t)len;
  return p;
}

static void test_written_while_built(void **state) {
  (void)state;
  failer a = {0};
  ddmc_allocator mem = failer_allocator(&a);
  fake f;
  fake_init(&f, &mem, 0);
  /* about 6 MiB: several segments and blocks, handed over as they fill; every 1000th in the zygote heap */
  const uint32_t nmany = 250000;
  fake_add(&f, (fd_pobject){.ref = O_MANY, .cls = C_INTS, .size = 28, .heap_id = DDMC_HEAP_ID_APP, .length = 3,
                            .elements = ints, .repeat = nmany, .alt_heap = DDMC_HEAP_ID_ZYGOTE, .alt_every = 1000});
  long base = atomic_load(&a.live);
  ddmc__prof_hprof *h;
  char msg[256];
  assert_int_equal(ddmc__prof_hprof_build(f.vm, &h, msg, sizeof msg), 0);
  uint8_t *want = flatten(h);
  size_t wlen = h->len;
  assert_true(wlen > (5u << 20));
  ddmc__prof_hprof_free(f.vm, h);

  char path[] = "/tmp/ddmc_test_hprof_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  unlink(path);
  int e = -1;
  assert_int_equal(ddmc__prof_hprof_write(f.vm, fd, &h, &e, msg, sizeof msg), 0);
  assert_int_equal(e, 0);
  assert_non_null(h);
  assert_int_equal(h->len, wlen);
  assert_null(h->out.head); /* every byte went to the file */
  assert_int_equal(h->objects, 6 + nmany); /* the fixed six and the many; class objects are not counted */
  ddmc__prof_hprof_free(f.vm, h);
  assert_int_equal(atomic_load(&a.live), base); /* the writer freed what it wrote */
  size_t glen;
  uint8_t *got = read_all(fd, &glen);
  close(fd);
  assert_int_equal(glen, wlen);
  /* The same bytes as the dump built in memory, but for the header's timestamp (bytes 23-30). */
  assert_memory_equal(got, want, 23);
  assert_memory_equal(got + 31, want + 31, wlen - 31);
  free(got);
  free(want);

  /* A file that cannot take the bytes: the write's errno, the build stopped or finished, and
   * every block freed written or not. */
  fd = open("/dev/full", O_WRONLY | O_CLOEXEC);
  assert_true(fd >= 0);
  ddmc_prof_stats st0, st1;
  ddmc_prof_get_stats(f.vm, &st0);
  int rc = ddmc__prof_hprof_write(f.vm, fd, &h, &e, msg, sizeof msg);
  close(fd);
  assert_int_equal(e, ENOSPC);
  if (rc != 0) {
    assert_int_equal(rc, DDMC_EIO);
    assert_non_null(strstr(msg, "could not be written"));
    assert_null(h);
  }
  ddmc__prof_hprof_free(f.vm, h);
  ddmc_prof_get_stats(f.vm, &st1);
  assert_int_equal(st1.hprof_failed - st0.hprof_failed, rc != 0 ? 1 : 0);
  assert_int_equal(atomic_load(&a.live), base);
  fake_free(&f);
}

/* ---- over a socket */

static ddmc_host *peer(fake *f) {
  ddmc_host *h;
  assert_int_equal(ddmc_host_connect_tcp(&h, "127.0.0.1", ddmc_vm_port(f->vm), TMO), 0);
  assert_int_equal(ddmc_host_handshake(h, TMO), 0);
  assert_int_equal(ddmc_host_set_max_packet(h, 256u << 20), 0);
  return h;
}

/* Sends a chunk; returns the reply (type 0: empty) and, when one came before it, the unsolicited
 * chunk of type want (malloc'd, *n its length). */
static uint32_t exchange(ddmc_host *h, uint32_t type, const void *d, size_t len, uint32_t want, uint8_t **data,
                         size_t *n, uint8_t *reply, size_t *rlen) {
  uint32_t id;
  assert_int_equal(ddmc_host_send_chunk(h, type, d, len, &id), 0);
  for (;;) {
    ddmc_host_packet p;
    int rc = ddmc_host_recv(h, &p, TMO);
    if (rc != 0) fail_msg("waiting for the reply to %c%c%c%c: %s", (int)(type >> 24), (int)(type >> 16 & 0xff),
                          (int)(type >> 8 & 0xff), (int)(type & 0xff), ddmc_host_strerror(rc));
    if (p.is_reply && p.id == id) {
      if (reply && p.is_ddm) {
        memcpy(reply, p.chunk, p.chunk_len < 512 ? p.chunk_len : 512);
        *rlen = p.chunk_len;
      }
      return p.is_ddm ? p.chunk_type : 0;
    }
    if (!p.is_reply && p.is_ddm && p.chunk_type == want && data) {
      *data = malloc(p.chunk_len + 1);
      memcpy(*data, p.chunk, p.chunk_len);
      *n = p.chunk_len;
    }
  }
}

static size_t put_str(uint8_t *out, const char *s) {
  size_t n = strlen(s);
  out[0] = (uint8_t)(n >> 24), out[1] = (uint8_t)(n >> 16), out[2] = (uint8_t)(n >> 8), out[3] = (uint8_t)n;
  for (size_t i = 0; i < n; i++) out[4 + 2 * i] = 0, out[5 + 2 * i] = (uint8_t)s[i];
  return 4 + 2 * n;
}

static void test_chunks(void **state) {
  (void)state;
  fake f;
  fake_init(&f, NULL, 0);
  fake_start(&f);
  ddmc_host *h = peer(&f);
  ddmc_host_helo helo;
  assert_int_equal(ddmc_host_hello(h, &helo, TMO), 0);
  int feats = 0;
  for (size_t i = 0; i < helo.n_features; i++)
    feats |= (strcmp(helo.features[i], "hprof-heap-dump") == 0) | (strcmp(helo.features[i], "hprof-heap-dump-streaming") == 0) << 1;
  assert_int_equal(feats, 3);
  ddmc_host_helo_free(&helo);

  /* HPDS: the file as one HPDS chunk, then the empty reply. */
  uint8_t *data = NULL;
  size_t n = 0;
  assert_int_equal(exchange(h, T('H', 'P', 'D', 'S'), NULL, 0, T('H', 'P', 'D', 'S'), &data, &n, NULL, NULL), 0);
  assert_non_null(data);
  ddmc_host_hprof_info info;
  assert_int_equal(ddmc_host_hprof_scan(data, n, &info), 0);
  assert_int_equal(info.instances, 3);
  free(data);
  /* HPDS with a payload is not an HPDS. */
  uint8_t rep[512];
  size_t rlen = 0;
  assert_int_equal(exchange(h, T('H', 'P', 'D', 'S'), "x", 1, 0, NULL, NULL, rep, &rlen), T('F', 'A', 'I', 'L'));

  /* HPDU: HPDU [0] after the file is complete. The VM creates the file: the name is new. */
  char dir[] = "/tmp/ddmc_test_hprof_XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[64];
  snprintf(path, sizeof path, "%s/dump.hprof", dir);
  uint8_t req[600];
  assert_int_equal(exchange(h, T('H', 'P', 'D', 'U'), req, put_str(req, path), 0, NULL, NULL, rep, &rlen),
                   T('H', 'P', 'D', 'U'));
  assert_int_equal(rlen, 1);
  assert_int_equal(rep[0], 0);
  FILE *fp = fopen(path, "rb");
  assert_non_null(fp);
  uint8_t *file = malloc(1 << 20);
  size_t fn = fread(file, 1, 1 << 20, fp);
  fclose(fp);
  unlink(path);
  rmdir(dir);
  assert_int_equal(ddmc_host_hprof_scan(file, fn, &info), 0);
  free(file);
  /* An unwritable path: HPDU [0xFF] (ddmlib's failure) and why, as a string after it. */
  assert_int_equal(exchange(h, T('H', 'P', 'D', 'U'), req, put_str(req, "/nonexistent-dir/x.hprof"), 0, NULL, NULL,
                            rep, &rlen),
                   T('H', 'P', 'D', 'U'));
  assert_int_equal(rep[0], 0xFF);
  char why[200] = "";
  uint32_t units = be32(rep + 1);
  for (uint32_t i = 0; i < units && i < sizeof why - 1; i++) why[i] = (char)rep[6 + 2 * i];
  assert_string_equal(why, "cannot open /nonexistent-dir/x.hprof: No such file or directory");
  /* Not an HPDU payload: FAIL. */
  assert_int_equal(exchange(h, T('H', 'P', 'D', 'U'), "\0\0\0\x09", 4, 0, NULL, NULL, rep, &rlen),
                   T('F', 'A', 'I', 'L'));
  ddmc_host_free(h);
  fake_free(&f);
}

/* HPDU's answer: 0 for [0], else the reason after [0xFF] (in why). */
static int hpdu(ddmc_host *h, const char *path, char *why, size_t cap) {
  uint8_t req[600], rep[512];
  size_t rlen = 0;
  assert_int_equal(exchange(h, T('H', 'P', 'D', 'U'), req, put_str(req, path), 0, NULL, NULL, rep, &rlen),
                   T('H', 'P', 'D', 'U'));
  why[0] = '\0';
  if (rep[0] == 0) return 0;
  assert_int_equal(rep[0], 0xFF);
  uint32_t units = be32(rep + 1), i;
  for (i = 0; i < units && i < cap - 1 && 6 + 2 * i < rlen; i++) why[i] = (char)rep[6 + 2 * i];
  why[i] = '\0';
  return -1;
}

static void write_file(const char *path, const char *text) {
  FILE *fp = fopen(path, "w");
  assert_non_null(fp);
  fputs(text, fp);
  fclose(fp);
}

static void assert_file_is(const char *path, const char *text) {
  char got[64] = "";
  FILE *fp = fopen(path, "r");
  assert_non_null(fp);
  size_t n = fread(got, 1, sizeof got - 1, fp);
  got[n] = '\0';
  fclose(fp);
  assert_string_equal(got, text);
}

/* The name HPDU gets is the peer's: the VM only ever creates a new regular file there, never
 * blocks on it, and never truncates or removes a file it did not create. */
static void test_hpdu_names(void **state) {
  (void)state;
  char dir[] = "/tmp/ddmc_test_hpdu_XXXXXX", p[5][96], why[300];
  assert_non_null(mkdtemp(dir));
  const char *leaf[5] = {"fifo", "victim", "link", "new.hprof", "dangling"};
  for (int i = 0; i < 5; i++) snprintf(p[i], sizeof p[i], "%s/%s", dir, leaf[i]);
  assert_int_equal(mkfifo(p[0], 0600), 0);
  write_file(p[1], "precious");
  assert_int_equal(symlink(p[1], p[2]), 0);
  assert_int_equal(symlink(p[3], p[4]), 0); /* points where the dump would go */

  fake f;
  fake_init(&f, NULL, 0);
  fake_start(&f);
  ddmc_host *h = peer(&f);
  /* A FIFO: answered at once (an open waiting for a reader held the JDWP thread for good), and
   * the next request is served. */
  int64_t t0 = mono_ms();
  assert_int_equal(hpdu(h, p[0], why, sizeof why), -1);
  assert_true(mono_ms() - t0 < 5000);
  assert_non_null(strstr(why, "the file exists"));
  ddmc_host_helo helo;
  assert_int_equal(ddmc_host_hello(h, &helo, 5000), 0);
  ddmc_host_helo_free(&helo);
  /* An existing file: refused, not truncated. Through a symlink: the same. */
  assert_int_equal(hpdu(h, p[1], why, sizeof why), -1);
  char want[200];
  snprintf(want, sizeof want, "cannot create %s: the file exists (the VM writes only new files)", p[1]);
  assert_string_equal(why, want);
  assert_file_is(p[1], "precious");
  assert_int_equal(hpdu(h, p[2], why, sizeof why), -1);
  assert_non_null(strstr(why, "the file exists"));
  assert_file_is(p[1], "precious");
  /* A dangling symlink is not followed to create its target. */
  assert_int_equal(hpdu(h, p[4], why, sizeof why), -1);
  assert_int_equal(access(p[3], F_OK), -1);
  /* A new name works; asking again for the same name is refused, the dump kept. */
  assert_int_equal(hpdu(h, p[3], why, sizeof why), 0);
  struct stat st;
  assert_int_equal(stat(p[3], &st), 0);
  assert_true(S_ISREG(st.st_mode) && st.st_size > 0);
  assert_int_equal(hpdu(h, p[3], why, sizeof why), -1);
  struct stat st2;
  assert_int_equal(stat(p[3], &st2), 0);
  assert_int_equal(st2.st_size, st.st_size);

  /* A write that fails (a file size limit: EFBIG) removes the file the VM made, and only that. */
  unlink(p[3]);
  struct rlimit old, lim;
  assert_int_equal(getrlimit(RLIMIT_FSIZE, &old), 0);
  lim = old;
  lim.rlim_cur = 100;
  void (*was)(int) = signal(SIGXFSZ, SIG_IGN);
  assert_int_equal(setrlimit(RLIMIT_FSIZE, &lim), 0);
  int r = hpdu(h, p[3], why, sizeof why);
  assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
  signal(SIGXFSZ, was);
  assert_int_equal(r, -1);
  assert_non_null(strstr(why, "File too large"));
  assert_int_equal(access(p[3], F_OK), -1);
  ddmc_host_free(h);
  fake_free(&f);
  for (int i = 0; i < 5; i++) unlink(p[i]);
  rmdir(dir);
}

/* ddmc_prof_config.file_dir: only names directly in that directory. */
static void test_hpdu_file_dir(void **state) {
  (void)state;
  char dir[] = "/tmp/ddmc_test_hpdir_XXXXXX", sub[96], ok[96], why[300];
  assert_non_null(mkdtemp(dir));
  snprintf(sub, sizeof sub, "%s/sub", dir);
  assert_int_equal(mkdir(sub, 0700), 0);
  snprintf(ok, sizeof ok, "%s/in.hprof", dir);
  fake f;
  fake_init(&f, NULL, 0);
  ddmc_prof_config c;
  ddmc_prof_config_init(&c);
  assert_string_equal(c.file_dir, ""); /* off by default */
  snprintf(c.file_dir, sizeof c.file_dir, "relative/dir");
  assert_int_equal(ddmc_prof_configure(f.vm, &c), DDMC_EINVAL);
  snprintf(c.file_dir, sizeof c.file_dir, "%s/", dir); /* a trailing slash is fine */
  assert_int_equal(ddmc_prof_configure(f.vm, &c), 0);
  fake_start(&f);
  ddmc_host *h = peer(&f);
  assert_int_equal(hpdu(h, ok, why, sizeof why), 0);
  assert_int_equal(access(ok, F_OK), 0);
  char bad[4][128];
  snprintf(bad[0], sizeof bad[0], "%s/x.hprof", sub);      /* a subdirectory */
  snprintf(bad[1], sizeof bad[1], "%s/../x.hprof", dir);   /* out through .. */
  snprintf(bad[2], sizeof bad[2], "/tmp/x-ddmc-outside.hprof");
  snprintf(bad[3], sizeof bad[3], "%sx/y.hprof", dir);     /* a sibling sharing the prefix */
  for (int i = 0; i < 4; i++) {
    assert_int_equal(hpdu(h, bad[i], why, sizeof why), -1);
    assert_non_null(strstr(why, "the VM writes files only directly in"));
    assert_int_equal(access(bad[i], F_OK), -1);
  }
  ddmc_host_free(h);
  fake_free(&f);
  unlink(ok);
  rmdir(sub);
  rmdir(dir);
}

static void test_unsupported(void **state) {
  (void)state;
  fake f;
  fake_init(&f, NULL, FAKEBRIDGE_NO_ROOTS);
  fake_start(&f);
  ddmc_host *h = peer(&f);
  ddmc_host_helo helo;
  assert_int_equal(ddmc_host_hello(h, &helo, TMO), 0);
  for (size_t i = 0; i < helo.n_features; i++) assert_null(strstr(helo.features[i], "hprof"));
  ddmc_host_helo_free(&helo);
  uint8_t rep[512];
  size_t rlen = 0;
  assert_int_equal(exchange(h, T('H', 'P', 'D', 'S'), NULL, 0, 0, NULL, NULL, rep, &rlen), T('F', 'A', 'I', 'L'));
  ddmc_host_fail fl;
  assert_int_equal(ddmc_host_fail_parse(rep, rlen, &fl), 0);
  assert_string_equal(fl.msg, "hprof dumps not supported in this VM");
  ddmc_host_fail_free(&fl);
  ddmc_host_free(h);
  fake_free(&f);
}

static void test_stalled_peer(void **state) {
  (void)state;
  fake f;
  fake_init(&f, NULL, 0);
  f.vm->opt.stall_timeout_ms = 400;
  fake_start(&f);
  const size_t nbig = 6 << 20; /* 24 MiB of int[]: far more than the socket buffers hold */
  int32_t *big = calloc(nbig, 4);
  fake_add(&f, big_array(big, nbig));
  ddmc_host *h = peer(&f);
  uint32_t id;
  assert_int_equal(ddmc_host_send_chunk(h, T('H', 'P', 'D', 'S'), NULL, 0, &id), 0);
  /* The peer reads nothing; VM threads go on, never blocked. */
  hammer hm;
  hammer_start(&hm, f.vm, 128);
  ddmc_stats st;
  wait_transfer_dropped(f.vm, &st, 20000);
  /* Still sending: a thread blocked for good never counts again. Polled, not one 50 ms sleep:
   * under ASan on a loaded machine the thread was once not scheduled in 50 ms. */
  long before = atomic_load(&hm.calls);
  for (int i = 0; i < 500 && atomic_load(&hm.calls) == before; i++) sleep_ms(10);
  assert_true(atomic_load(&hm.calls) > before);
  hammer_stop(&hm);
  assert_int_equal(st.transfers_dropped, 1);
  assert_int_equal(atomic_load(&f.vm->prof.hprof_sending), 0); /* its memory went with it */
  ddmc_host_free(h);
  /* The next one works, whole. */
  h = peer(&f);
  uint8_t *data = NULL;
  size_t n = 0;
  assert_int_equal(exchange(h, T('H', 'P', 'D', 'S'), NULL, 0, T('H', 'P', 'D', 'S'), &data, &n, NULL, NULL), 0);
  ddmc_host_hprof_info info;
  assert_int_equal(ddmc_host_hprof_scan(data, n, &info), 0);
  assert_true(n > nbig * 4);
  free(data);
  ddmc_host_free(h);
  fake_free(&f);
  free(big);
}

/* ---- a VM with a dumper of its own (the bridge's write_hprof): the first pass reads the file
 * while the VM writes it */

enum { D_WHOLE, D_DRIP, D_PATCH, D_FAIL };
typedef struct dumper {
  const uint8_t *p; /* the file the VM writes */
  size_t n;
  int mode;
  size_t len_at; /* D_PATCH: its first heap dump record's length, written last */
} dumper;

static atomic_int read_again; /* the library said it read the file again */

static void dumper_log(void *ud, ddmc_log_level lvl, const char *msg) {
  (void)ud;
  if (strstr(msg, "reading it again, finished") != NULL) atomic_fetch_add(&read_again, 1);
  if (lvl >= DDMC_LOG_WARN || getenv("DDMC_TEST_VERBOSE")) fprintf(stderr, "[vm] %s\n", msg);
}

/* A descriptor of this process other than skip whose file's name starts with prefix, with that
 * name ("... (deleted)" once removed) in target; -1 when there is none. */
static int fd_under(const char *prefix, int skip, char *target, size_t cap) {
  char link[64];
  for (int fd = 0; fd < 1024; fd++) {
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t k = fd == skip ? -1 : readlink(link, target, cap - 1);
    if (k <= 0) continue;
    target[k] = '\0';
    if (strncmp(target, prefix, strlen(prefix)) == 0) return fd;
  }
  return -1;
}

/* How far another descriptor of this process open on path has read (-1: none is open). */
static long long reader_at(const char *path, int own) {
  char target[700], info[64], line[128];
  int fd = fd_under(path, own, target, sizeof target);
  if (fd < 0) return -1;
  snprintf(info, sizeof info, "/proc/self/fdinfo/%d", fd);
  long long at = -1;
  FILE *fp = fopen(info, "r");
  while (fp != NULL && fgets(line, sizeof line, fp) != NULL)
    if (strncmp(line, "pos:", 4) == 0) at = atoll(line + 4);
  if (fp != NULL) fclose(fp);
  return at;
}

/* The VM dumps into a directory of the test's own (TMPDIR), to see what the library leaves in
 * it: made into dir (a mkdtemp template), the old TMPDIR kept in old. */
static void tmpdir_enter(char *dir, char *old, size_t cap) {
  assert_non_null(mkdtemp(dir));
  old[0] = '\0';
  if (getenv("TMPDIR") != NULL) snprintf(old, cap, "%s", getenv("TMPDIR"));
  assert_int_equal(setenv("TMPDIR", dir, 1), 0);
}

/* dir holds nothing. */
static void assert_empty(const char *dir) {
  DIR *dp = opendir(dir);
  assert_non_null(dp);
  struct dirent *de;
  while ((de = readdir(dp)) != NULL)
    if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) fail_msg("%s left in %s", de->d_name, dir);
  closedir(dp);
}

/* TMPDIR as it was; dir, empty, removed. */
static void tmpdir_leave(const char *dir, const char *old) {
  if (old[0] != '\0')
    setenv("TMPDIR", old, 1);
  else
    unsetenv("TMPDIR");
  assert_empty(dir);
  assert_int_equal(rmdir(dir), 0);
}

/* Until the library's reader has read all of the first n bytes of path (10 s at most). */
static void wait_reader(const char *path, int own, size_t n) {
  int64_t until = mono_ms() + 10000;
  while (reader_at(path, own) < (long long)n && mono_ms() < until) usleep(500);
  assert_true(reader_at(path, own) >= (long long)n);
}

/* The VM's dumper: the file whole, or in 16 pieces each read by the library before the next is
 * written, or so with its heap dump's length left 0 and written last (as JDK 8-11 do), or half
 * of it and a failure. */
static int dumper_write(void *arg, const char *path, char *msg, size_t msglen) {
  const dumper *d = arg;
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    snprintf(msg, msglen, "cannot create %s", path);
    return -1;
  }
  size_t piece = d->mode == D_WHOLE ? d->n : (d->n + 15) / 16;
  uint8_t *b = malloc(piece);
  assert_non_null(b);
  for (size_t at = 0; at < d->n; at += piece) {
    size_t k = d->n - at < piece ? d->n - at : piece;
    memcpy(b, d->p + at, k);
    for (size_t i = d->len_at; d->mode == D_PATCH && i < d->len_at + 4; i++)
      if (i >= at && i < at + k) b[i - at] = 0;
    if (d->mode == D_FAIL && at >= d->n / 2) {
      free(b);
      close(fd);
      snprintf(msg, msglen, "No space left on device");
      return -1;
    }
    assert_int_equal(write(fd, b, k), (ssize_t)k);
    /* The library's first pass gives up at the length it finds 0, to read the file again later. */
    size_t upto = d->mode == D_PATCH && d->len_at + 4 < at + k ? d->len_at + 4 : at + k;
    if (d->mode != D_WHOLE) wait_reader(path, fd, upto);
  }
  free(b);
  if (d->mode == D_PATCH) assert_int_equal(pwrite(fd, d->p + d->len_at, 4, (off_t)d->len_at), 4);
  close(fd);
  return 0;
}

/* Where the first heap dump record's length sits in an hprof file. */
static size_t first_dump_len_at(const uint8_t *p, size_t n) {
  for (size_t at = 31; at + 9 <= n; at += 9 + be32(p + at + 5))
    if (p[at] == 0x0C || p[at] == 0x1C) return at + 5;
  fail();
  return 0;
}

/* A VM (not started) whose dumper is d. */
static void dumper_vm(fake *f, dumper *d) {
  memset(f, 0, sizeof *f);
  memcpy(f->obj, fixed_objects, sizeof fixed_objects);
  f->prog = (fd_program){classes, NCLASSES, f->obj, NFIXED, roots, sizeof roots / sizeof roots[0]};
  ddmc_options o;
  char err[128];
  ddmc_options_init(&o);
  assert_int_equal(ddmc_options_parse(&o, "transport=dt_socket,address=127.0.0.1:0,server=y,suspend=n", err, sizeof err), 0);
  const fakevm_config vc = {.log = dumper_log};
  assert_int_equal(fakebridge_new_program(&f->fb, FAKEBRIDGE_NO_DEBUGGER | FAKEBRIDGE_HEAP | FAKEBRIDGE_WRITE_HPROF,
                                          &f->prog, &vc, &o, NULL),
                   0);
  f->vm = f->fb.fv.vm;
  f->fb.write_hprof = dumper_write;
  f->fb.write_hprof_arg = d;
}

/* The second pass gives the VM's file's pages back as it reads it: a file of 12 MiB, the small
 * one with an int[] of 3 Mi elements before its end, holds less than half its blocks when read. */
static void test_vm_dumper_gives_pages_back(void **state) {
  (void)state;
  static hsfile small;
  hsfile_make(&small);
  const uint32_t n = 3u << 20;
  size_t head = small.n - 9; /* HEAP DUMP END last */
  size_t body = 1 + 8 + 4 + 4 + 1 + (size_t)n * 4, len = head + 9 + body + 9;
  uint8_t *p = calloc(1, len);
  assert_non_null(p);
  memcpy(p, small.b, head);
  uint8_t *q = p + head;
  *q++ = 0x1C;
  q += 4;
  for (int i = 0; i < 4; i++) *q++ = (uint8_t)(body >> (24 - 8 * i));
  *q++ = 0x23;
  for (int i = 0; i < 8; i++) *q++ = (uint8_t)(A(7000) >> (56 - 8 * i));
  q += 4;
  for (int i = 0; i < 4; i++) *q++ = (uint8_t)(n >> (24 - 8 * i));
  *q++ = 10; /* int */
  q += (size_t)n * 4;
  memcpy(q, small.b + head, 9);
  char dir[] = "/tmp/ddmc_test_vmdump_XXXXXX", old_tmp[400], target[700];
  tmpdir_enter(dir, old_tmp, sizeof old_tmp);
  dumper d = {p, len, D_WHOLE, 0};
  fake f;
  dumper_vm(&f, &d);
  ddmc__prof_hpnat *h = NULL;
  char msg[300];
  assert_int_equal(ddmc__prof_hpnat_open(f.vm, &h, msg, sizeof msg), 0);
  assert_empty(dir);
  /* The library's descriptor of the file, whose directory is gone already. */
  int fd = fd_under(dir, -1, target, sizeof target);
  assert_true(fd >= 0 && strstr(target, "/heap.hprof (deleted)") != NULL);
  struct stat st;
  assert_int_equal(fstat(fd, &st), 0);
  long long before = (long long)st.st_blocks;
  assert_true(before >= (long long)(len / 512)); /* all of it, written or reserved */
  uint64_t out = ddmc__prof_hpnat_len(h), got = 0;
  uint8_t *buf = malloc(1 << 20);
  ssize_t r;
  while ((r = ddmc__prof_hpnat_read(h, buf, 1 << 20)) > 0) got += (uint64_t)r;
  assert_int_equal(r, 0);
  assert_int_equal(got, out);
  assert_int_equal(fstat(fd, &st), 0);
  assert_true((long long)st.st_blocks < before / 2);
  free(buf);
  ddmc__prof_hpnat_close(h);
  fake_free(&f);
  tmpdir_leave(dir, old_tmp);
  free(p);
}

static void test_vm_dumper(void **state) {
  (void)state;
  /* The file: a small one as HotSpot writes it. */
  static hsfile file;
  hsfile_make(&file);
  const uint8_t *std = file.b;
  size_t sn = file.n;
  char msg[300];

  /* What the converter makes of it, read at once from memory. */
  ddmc__mem mem;
  ddmc__mem_init(&mem, NULL);
  memsrc src = {std, sn, 0, SIZE_MAX};
  ddmc__prof_hpconv_input in = memsrc_input(&src);
  ddmc__prof_hpconv *c;
  uint64_t want_len;
  assert_int_equal(ddmc__prof_hpconv_open(&mem, &in, &c, &want_len, msg, sizeof msg), 0);
  uint8_t *want = malloc(want_len);
  assert_int_equal(ddmc__prof_hpconv_read(c, want, want_len), (ssize_t)want_len);
  assert_int_equal(ddmc__prof_hpconv_read(c, want, want_len), 0);
  ddmc__prof_hpconv_free(c);

  char dir[] = "/tmp/ddmc_test_vmdump_XXXXXX", old_tmp[400];
  tmpdir_enter(dir, old_tmp, sizeof old_tmp);
  dumper d = {std, sn, D_WHOLE, first_dump_len_at(std, sn)};
  for (d.mode = D_WHOLE; d.mode <= D_FAIL; d.mode++) {
    fake f;
    dumper_vm(&f, &d);
    atomic_store(&read_again, 0);
    ddmc__prof_hpnat *h = NULL;
    int rc = ddmc__prof_hpnat_open(f.vm, &h, msg, sizeof msg);
    assert_int_equal(atomic_load(&f.fb.n_write_hprof), 1);
    if (d.mode == D_FAIL) {
      assert_int_equal(rc, DDMC_EIO);
      assert_string_equal(msg, "heap dump: the VM's dumper failed: No space left on device");
      assert_null(h);
    } else {
      assert_int_equal(rc, 0);
      /* Read as it was written; read again only when a length came last. */
      assert_int_equal(atomic_load(&read_again), d.mode == D_PATCH);
      assert_int_equal(ddmc__prof_hpnat_len(h), want_len);
      uint8_t *got = malloc(want_len + 1);
      size_t k = 0;
      ssize_t r;
      while ((r = ddmc__prof_hpnat_read(h, got + k, want_len + 1 - k)) > 0) k += (size_t)r;
      assert_int_equal(r, 0);
      assert_int_equal(k, want_len);
      assert_memory_equal(got, want, want_len);
      free(got);
      ddmc__prof_hpnat_close(h);
    }
    assert_empty(dir); /* the file and its directory are gone */
    fake_free(&f);
  }
  tmpdir_leave(dir, old_tmp);
  free(want);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dump_layout), cmocka_unit_test(test_cap),
      cmocka_unit_test(test_bad_bridge),  cmocka_unit_test(test_every_allocation_fails),
      cmocka_unit_test(test_chunks),      cmocka_unit_test(test_unsupported),
      cmocka_unit_test(test_stalled_peer),  cmocka_unit_test(test_written_while_built),
      cmocka_unit_test(test_hpdu_names),    cmocka_unit_test(test_hpdu_file_dir),
      cmocka_unit_test(test_vm_dumper),     cmocka_unit_test(test_vm_dumper_gives_pages_back),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
