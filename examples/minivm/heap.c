/* SPDX-License-Identifier: Apache-2.0 */
/* The managed heap: one mmap'd arena of -Xmx bytes, of which [base, base + footprint) is in use,
 * and a stop-the-world mark-sweep collector.
 *
 * The arena is tiled by blocks, each with a 16-byte header (internal.h), in 8-byte units. Free
 * blocks form an address-ordered list; allocation is first fit and splits, so a long-lived object
 * between dead ones leaves a hole the next allocations must fit into: the fragmentation a DDM
 * heap view is meant to show. The sweep rebuilds the list in one pass, coalescing neighbours.
 * The footprint starts at -Xms and grows (never past -Xmx) when a collection leaves the heap
 * more than half full or an allocation still does not fit. Only the GC daemon collects. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

#define MIN_HEAP (64u << 10)
#define MAX_HEAP ((size_t)4 << 30)   /* keeps base-relative addresses (HPSG) within 32 bits */

static inline mvm_hdr *at(mvm_heap *h, uint32_t unit) { return (mvm_hdr *)(h->base + (size_t)unit * MVM_UNIT); }
static inline uint32_t unit_of(mvm_heap *h, mvm_hdr *b) { return (uint32_t)(((uint8_t *)b - h->base) / MVM_UNIT); }
static inline uint32_t fp_units(mvm_heap *h) { return (uint32_t)(h->footprint / MVM_UNIT); }

int mvm_heap_init(mvm_vm *vm, char *err, size_t errlen) {
  mvm_heap *h = &vm->heap;
  size_t max = vm->cfg.heap_max ? vm->cfg.heap_max : (size_t)16 << 20;
  size_t start = vm->cfg.heap_start ? vm->cfg.heap_start : (max < ((size_t)2 << 20) ? max : (size_t)2 << 20);
  if (max < MIN_HEAP || max > MAX_HEAP) {
    snprintf(err, errlen, "-Xmx must be between 64k and 4g");
    return -1;
  }
  if (start > max) {
    snprintf(err, errlen, "-Xms (%zu) exceeds -Xmx (%zu)", start, max);
    return -1;
  }
  if (start < MIN_HEAP) start = MIN_HEAP;
  max &= ~(size_t)(MVM_UNIT - 1);
  start &= ~(size_t)(MVM_UNIT - 1);
  /* Reserve all of -Xmx up front so the heap is one contiguous range; NORESERVE: pages beyond
   * the footprint cost nothing until touched. */
  void *p = mmap(NULL, max, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    snprintf(err, errlen, "cannot reserve a %zu-byte heap", max);
    return -1;
  }
  pthread_mutex_init(&h->lock, NULL);
  h->base = p;
  h->max = max;
  h->footprint = start;
  mvm_hdr *b = at(h, 0);
  *b = (mvm_hdr){.units = fp_units(h), .kind = MVM_BLK_FREE};
  h->free_head = 1;
  return 0;
}

void mvm_heap_destroy(mvm_vm *vm) {
  if (vm->heap.base) {
    munmap(vm->heap.base, vm->heap.max);
    pthread_mutex_destroy(&vm->heap.lock);
  }
  vm->heap.base = NULL;
}

/* First fit. Caller holds the lock. */
static mvm_hdr *take(mvm_heap *h, uint32_t units) {
  mvm_hdr *prev = NULL;
  for (uint32_t u = h->free_head; u;) {
    mvm_hdr *b = at(h, u - 1);
    uint32_t next = b->klass;   /* unit offset of the next free block, 0 = end */
    if (b->units >= units) {
      uint32_t link;
      if (b->units - units >= MVM_HDR_UNITS) {
        mvm_hdr *rest = at(h, u - 1 + units);
        *rest = (mvm_hdr){.units = b->units - units, .kind = MVM_BLK_FREE, .klass = next};
        b->units = units;
        link = u - 1 + units + 1;
      } else {
        link = next ? next + 1 : 0;   /* too small to split: the object takes the slack */
      }
      if (prev) prev->klass = link ? link - 1 : 0;
      else h->free_head = link;
      return b;
    }
    prev = b;
    u = next ? next + 1 : 0;
  }
  return NULL;
}

/* Moves the footprint up by at least units (rounded up to 64 KiB), adding the new space to the
 * free list, merged with a free block that ends at the old footprint. Caller holds the lock. */
static int grow(mvm_heap *h, uint64_t units) {
  size_t want = h->footprint + (size_t)units * MVM_UNIT;
  want = (want + 0xffff) & ~(size_t)0xffff;
  if (want > h->max) want = h->max;
  if (want - h->footprint < (size_t)units * MVM_UNIT) return -1;
  uint32_t old = fp_units(h);
  h->footprint = want;
  mvm_hdr *last = NULL;
  for (uint32_t u = h->free_head; u;) {
    last = at(h, u - 1);
    u = last->klass ? last->klass + 1 : 0;
  }
  if (last && unit_of(h, last) + last->units == old) {
    last->units += fp_units(h) - old;
    return 0;
  }
  *at(h, old) = (mvm_hdr){.units = fp_units(h) - old, .kind = MVM_BLK_FREE};
  if (last) last->klass = old;
  else h->free_head = old + 1;
  return 0;
}

void mvm_set_alloc_hook(mvm_vm *vm, const int *flag, void (*fn)(void *ud, const mvm_alloc_info *a), void *ud) {
  static const int off = 0;
  vm->alloc_fn = fn;
  vm->alloc_ud = ud;
  vm->alloc_flag = flag && fn ? flag : &off;
}

/* Out of line: the allocation paths keep only the flag test. */
__attribute__((noinline, cold)) static void report_alloc(mvm_vm *vm, mvm_thread *t, mvm_hdr *b, int by_vm) {
  mvm_alloc_info a = {t ? t->id : 0, mvm_ref_of(vm, b), (size_t)b->units * MVM_UNIT, by_vm || (t && t->vm_alloc > 0)};
  vm->alloc_fn(vm->alloc_ud, &a);
}
#define TRACKED(vm) __builtin_expect(__atomic_load_n((vm)->alloc_flag, __ATOMIC_RELAXED), 0)

static mvm_hdr *alloc_block(mvm_vm *vm, mvm_thread *t, size_t bytes) {
  mvm_heap *h = &vm->heap;
  if (bytes > h->max) return NULL;
  uint32_t units = (uint32_t)((bytes + MVM_UNIT - 1) / MVM_UNIT);
  pthread_mutex_lock(&h->lock);
  mvm_hdr *b = take(h, units);
  pthread_mutex_unlock(&h->lock);
  /* Collect before growing, as Dalvik's GC_FOR_ALLOC did: growth is for live data, not garbage.
   * Only an interpreter thread can wait for the collector; the loader just grows. A few tries:
   * threads allocating in a loop can take what one collection freed before this thread does
   * (seen as a spurious OutOfMemoryError in test_threads with four allocating threads). */
  for (int tries = 0; !b && tries < 4 && t && t->interp && mvm_gc_request(vm, MVM_GC_ALLOC, 1) == 0; tries++) {
    pthread_mutex_lock(&h->lock);
    b = take(h, units);
    pthread_mutex_unlock(&h->lock);
  }
  if (!b) {
    pthread_mutex_lock(&h->lock);
    if (grow(h, units) == 0) b = take(h, units);
    pthread_mutex_unlock(&h->lock);
  }
  if (!b) return NULL;
  uint32_t got = b->units;
  memset(b, 0, (size_t)got * MVM_UNIT);
  b->units = got;
  pthread_mutex_lock(&h->lock);
  h->allocated_bytes += (uint64_t)got * MVM_UNIT;
  h->allocated_objects++;
  pthread_mutex_unlock(&h->lock);
  return b;
}

mvm_ref mvm_alloc_object(mvm_thread *t, mvm_class *c) {
  mvm_vm *vm = t->vm;
  mvm_hdr *b = alloc_block(vm, t, sizeof(mvm_hdr) + (size_t)c->ninstance * 8);
  if (!b) return 0;
  b->kind = MVM_BLK_OBJECT;
  b->klass = c->obj;
  if (TRACKED(vm)) report_alloc(vm, t, b, 0);
  return mvm_ref_of(vm, b);
}

size_t mvm_elem_size(char elem) {
  switch (elem) {
    case 'Z': case 'B': return 1;
    case 'C': case 'S': return 2;
    case 'J': case 'D': return 8;
    default: return 4;   /* I F, and L: references are 4 bytes */
  }
}

static mvm_ref alloc_array(mvm_vm *vm, mvm_thread *t, char elem, uint32_t atype, int32_t length) {
  if (length < 0) return 0;
  mvm_hdr *b = alloc_block(vm, t, sizeof(mvm_hdr) + (size_t)length * mvm_elem_size(elem));
  if (!b) return 0;
  b->kind = MVM_BLK_ARRAY;
  b->elem = (uint8_t)elem;
  b->klass = atype;   /* arrays: the array type (index + 1), not a class reference */
  b->aux = (uint32_t)length;
  if (TRACKED(vm)) report_alloc(vm, t ? t : mvm_thread_self(), b, t == NULL);
  return mvm_ref_of(vm, b);
}

mvm_ref mvm_alloc_array(mvm_thread *t, char elem, int32_t length) { return alloc_array(t->vm, t, elem, 0, length); }

mvm_ref mvm_alloc_array_typed(mvm_thread *t, char elem, uint32_t atype, int32_t length) {
  return alloc_array(t->vm, t, elem, atype, length);
}

mvm_ref mvm_alloc_array_vm(mvm_vm *vm, char elem, uint32_t atype, int32_t length) {
  return alloc_array(vm, NULL, elem, atype, length);
}

mvm_ref mvm_alloc_object_vm(mvm_vm *vm, mvm_class *c) {
  mvm_hdr *b = alloc_block(vm, NULL, sizeof(mvm_hdr) + (size_t)c->ninstance * 8);
  if (!b) return 0;
  b->kind = MVM_BLK_OBJECT;
  b->klass = c->obj;
  if (TRACKED(vm)) report_alloc(vm, mvm_thread_self(), b, 1);
  return mvm_ref_of(vm, b);
}

mvm_ref mvm_new_string_vm(mvm_vm *vm, const char *utf8, size_t n) {
  if (n > INT32_MAX) return 0;
  mvm_ref bytes = alloc_array(vm, NULL, 'B', MVM_ATYPE_BYTES, (int32_t)n);
  if (!bytes) return 0;
  memcpy(mvm_deref(vm, bytes) + 1, utf8, n);
  mvm_ref s = mvm_alloc_object_vm(vm, vm->string_class);   /* never collects: bytes stays */
  if (s) mvm_slots(mvm_deref(vm, s))[0] = bytes;
  return s;
}

mvm_ref mvm_alloc_class_object(mvm_vm *vm, mvm_class *c) {
  mvm_hdr *b = alloc_block(vm, NULL, sizeof(mvm_hdr) + (size_t)c->nstatic * 8);
  if (!b) return 0;
  b->kind = MVM_BLK_CLASS;
  b->aux = c->index;
  if (TRACKED(vm)) report_alloc(vm, mvm_thread_self(), b, 1);
  return mvm_ref_of(vm, b);
}

mvm_ref mvm_new_string(mvm_thread *t, const char *utf8, size_t n) {
  if (n > INT32_MAX) return 0;
  mvm_ref bytes = mvm_alloc_array_typed(t, 'B', MVM_ATYPE_BYTES, (int32_t)n);
  if (!bytes) return 0;
  memcpy(mvm_deref(t->vm, bytes) + 1, utf8, n);
  t->pins[MVM_PIN_STR] = bytes;   /* the next allocation may collect */
  mvm_ref s = mvm_alloc_object(t, t->vm->string_class);
  t->pins[MVM_PIN_STR] = 0;
  if (s) mvm_slots(mvm_deref(t->vm, s))[0] = bytes;
  return s;
}

/* ---- Collector. Everything below runs on the GC daemon with the world stopped. */

typedef struct mark_stack {
  mvm_ref *v;
  size_t n, cap;
  int overflow;   /* a push failed: rescan the heap for marked-but-unscanned objects */
} mark_stack;

static void mark(mvm_vm *vm, mark_stack *s, mvm_ref r) {
  if (!r) return;
  mvm_hdr *b = mvm_deref(vm, r);
  if (b->mark) return;
  b->mark = 1;
  if (s->n == s->cap) {
    size_t ncap = s->cap ? s->cap * 2 : 1024;
    mvm_ref *nv = realloc(s->v, ncap * sizeof *nv);
    if (!nv) {
      /* Out of native memory mid-mark: leave it marked and find it again by rescanning. */
      b->mark = 2;
      s->overflow = 1;
      return;
    }
    s->v = nv;
    s->cap = ncap;
  }
  s->v[s->n++] = r;
}

static void scan(mvm_vm *vm, mark_stack *s, mvm_hdr *b) {
  if (b->kind == MVM_BLK_OBJECT) {
    mark(vm, s, b->klass);
    mvm_class *c = vm->classes[mvm_deref(vm, b->klass)->aux];
    for (uint32_t i = 0; i < c->niref; i++) mark(vm, s, (mvm_ref)mvm_slots(b)[c->iref[i]]);
  } else if (b->kind == MVM_BLK_CLASS) {
    mvm_class *c = vm->classes[b->aux];
    for (uint32_t i = 0; i < c->nsref; i++) mark(vm, s, (mvm_ref)mvm_slots(b)[c->sref[i]]);
  } else if (b->kind == MVM_BLK_ARRAY && b->elem == 'L') {
    const uint32_t *e = (const uint32_t *)(b + 1);
    for (uint32_t i = 0; i < b->aux; i++) mark(vm, s, e[i]);
  }
}

typedef struct root_ctx {
  mvm_vm *vm;
  mark_stack *s;
} root_ctx;

/* The debugger's objects: it hands out only references the VM gave it. */
static void mark_dbg_root(void *arg, uint64_t *ref) {
  root_ctx *c = arg;
  if (*ref && *ref <= c->vm->heap.footprint / MVM_UNIT) mark(c->vm, c->s, (mvm_ref)*ref);
}

static void mark_roots(mvm_vm *vm, mark_stack *s) {
  for (uint32_t i = 0; i < vm->nclasses; i++) mark(vm, s, vm->classes[i]->obj);
  mark(vm, s, vm->group_system);
  mark(vm, s, vm->group_main);
  if (vm->dbg.gc_roots) {
    root_ctx c = {vm, s};
    vm->dbg.gc_roots(vm->dbg.ud, mark_dbg_root, &c);
  }
  pthread_mutex_lock(&vm->thread_lock);
  for (mvm_thread *t = vm->threads; t; t = t->next) {
    mark(vm, s, t->obj);
    mark(vm, s, t->group);
    for (int i = 0; i < MVM_PINS; i++) mark(vm, s, t->pins[i]);
    if (t->ret_tag == MVM_REFTAG) mark(vm, s, (mvm_ref)t->ret);
    if (!t->depth) continue;
    const mvm_frame *top = &t->frames[t->depth - 1];
    uint32_t end = top->base + top->m->nregs;
    for (uint32_t r = 0; r < end; r++)
      if (t->tags[r] == MVM_REFTAG) mark(vm, s, (mvm_ref)t->regs[r]);
  }
  pthread_mutex_unlock(&vm->thread_lock);
}

static void mark_all(mvm_vm *vm) {
  mark_stack s = {0};
  mark_roots(vm, &s);
  for (;;) {
    while (s.n) scan(vm, &s, mvm_deref(vm, s.v[--s.n]));
    if (!s.overflow) break;
    s.overflow = 0;
    mvm_heap *h = &vm->heap;
    for (uint32_t u = 0; u < fp_units(h); u += at(h, u)->units)
      if (at(h, u)->mark == 2) {
        at(h, u)->mark = 1;
        scan(vm, &s, at(h, u));
      }
  }
  free(s.v);
}

static mvm_region_kind region_kind(const mvm_hdr *b) {
  switch (b->kind) {
    case MVM_BLK_OBJECT: return MVM_RK_OBJECT;
    case MVM_BLK_CLASS: return MVM_RK_CLASS;
    case MVM_BLK_ARRAY:
      switch (mvm_elem_size((char)b->elem)) {
        case 1: return MVM_RK_ARRAY_1;
        case 2: return MVM_RK_ARRAY_2;
        case 8: return MVM_RK_ARRAY_8;
        default: return MVM_RK_ARRAY_4;   /* int, float and reference arrays */
      }
    default: return MVM_RK_FREE;
  }
}

int mvm_heap_walk(mvm_vm *vm, mvm_region_fn fn, void *arg) {
  mvm_heap *h = &vm->heap;
  int rc = 0;
  for (uint32_t u = 0; u < fp_units(h) && !rc; u += at(h, u)->units) {
    mvm_hdr *b = at(h, u);
    mvm_region_kind k = (h->marked_phase && !b->mark) ? MVM_RK_FREE : region_kind(b);
    rc = fn(arg, (uintptr_t)b, (size_t)b->units * MVM_UNIT, k);
  }
  return rc;
}

/* Frees what is unmarked, clears marks, rebuilds the free list in address order. */
static void sweep(mvm_heap *h, uint64_t *live_bytes, uint64_t *live_objects) {
  mvm_hdr *last = NULL;
  h->free_head = 0;
  *live_bytes = *live_objects = 0;
  for (uint32_t u = 0; u < fp_units(h);) {
    mvm_hdr *b = at(h, u);
    uint32_t units = b->units;
    if (b->kind != MVM_BLK_FREE && b->mark) {
      b->mark = 0;
      *live_bytes += (uint64_t)units * MVM_UNIT;
      (*live_objects)++;
    } else if (last && unit_of(h, last) + last->units == u) {
      last->units += units;
    } else {
      *b = (mvm_hdr){.units = units, .kind = MVM_BLK_FREE};
      if (last) last->klass = u;
      else h->free_head = u + 1;
      last = b;
    }
    u += units;
  }
}

/* For the gc_sweep hook: a marked block survives; anything else (a ref out of the heap too) not. */
static int is_live(void *arg, uint64_t *ref) {
  mvm_vm *vm = arg;
  if (!*ref || *ref > vm->heap.footprint / MVM_UNIT) return 0;
  mvm_hdr *b = mvm_deref(vm, (mvm_ref)*ref);
  return b->kind != MVM_BLK_FREE && b->mark;
}

void mvm_heap_collect(mvm_vm *vm, mvm_gc_reason why) {
  static const char *names[] = {"GC_FOR_ALLOC", "GC_EXPLICIT", "GC_DEBUGGER"};
  mvm_heap *h = &vm->heap;
  int64_t t0 = mvm_now_ms();
  if (vm->hooks.gc_start) vm->hooks.gc_start(vm->hooks.ud);
  mark_all(vm);
  mvm_monitor_sweep(vm);
  /* Size the heap for what survives before the walk, not after the sweep: a heap dump taken at
   * the walk then covers exactly the footprint that HPIF reports after this collection. */
  pthread_mutex_lock(&h->lock);
  uint64_t marked = 0;
  for (uint32_t u = 0; u < fp_units(h); u += at(h, u)->units)
    if (at(h, u)->kind != MVM_BLK_FREE && at(h, u)->mark) marked += (uint64_t)at(h, u)->units * MVM_UNIT;
  /* Keep the heap at most half full after a collection, so the next one is not imminent. */
  if (marked * 2 > h->footprint && h->footprint < h->max)
    grow(h, (marked * 2 - h->footprint + MVM_UNIT - 1) / MVM_UNIT);
  pthread_mutex_unlock(&h->lock);
  h->marked_phase = 1;
  if (vm->hooks.gc_marked) vm->hooks.gc_marked(vm->hooks.ud);
  h->marked_phase = 0;
  /* Weak tables (JVM TI's tags) drop what the sweep below frees. */
  if (vm->hooks.gc_sweep) vm->hooks.gc_sweep(vm->hooks.ud, is_live, vm);

  pthread_mutex_lock(&h->lock);
  uint64_t before_bytes = h->allocated_bytes, before_objects = h->allocated_objects;
  uint64_t live_bytes, live_objects;
  sweep(h, &live_bytes, &live_objects);
  h->allocated_bytes = live_bytes;
  h->allocated_objects = live_objects;
  h->gc_count++;
  size_t footprint = h->footprint;
  pthread_mutex_unlock(&h->lock);

  if (vm->cfg.verbose_gc)
    mvm_log(vm, "%s freed %llu objects / %llu bytes, %llu%% free %lluK/%lluK (max %lluK), paused %lldms",
            names[why], (unsigned long long)(before_objects - live_objects),
            (unsigned long long)(before_bytes - live_bytes),
            (unsigned long long)((footprint - live_bytes) * 100 / footprint),
            (unsigned long long)(live_bytes >> 10), (unsigned long long)(footprint >> 10),
            (unsigned long long)(h->max >> 10), (long long)(mvm_now_ms() - t0));
}

void mvm_heap_get_stats(mvm_vm *vm, mvm_heap_stats *out) {
  mvm_heap *h = &vm->heap;
  memset(out, 0, sizeof *out);
  pthread_mutex_lock(&h->lock);
  out->max_bytes = h->max;
  out->footprint = h->footprint;
  out->allocated_bytes = h->allocated_bytes;
  out->allocated_objects = h->allocated_objects;
  out->base = (uintptr_t)h->base;
  out->gc_count = h->gc_count;
  for (uint32_t u = h->free_head; u;) {
    mvm_hdr *b = at(h, u - 1);
    out->free_blocks++;
    if ((uint64_t)b->units * MVM_UNIT > out->largest_free) out->largest_free = (uint64_t)b->units * MVM_UNIT;
    u = b->klass ? b->klass + 1 : 0;
  }
  pthread_mutex_unlock(&h->lock);
}
