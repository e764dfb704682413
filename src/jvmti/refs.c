/* SPDX-License-Identifier: Apache-2.0 */
/* Handles: what every jobject, jclass, jthread and jstring an agent holds is.
 *
 * A handle is the index of a cell (+1) and, on 64-bit hosts, the cell's generation in the high
 * half, so a deleted or made-up handle names nothing (INVALID_OBJECT, never a VM call with a bad
 * reference). A cell holds the VM's reference, and for class and thread handles the class or
 * thread it names. Cells are GC roots: the VM's collector visits them through
 * ddmc_gc_visit_roots, as it does the debugger's IDs (a moving collector updates them in place).
 *
 * Local handles belong to the thread that made them and go when the event callback that made
 * them returns (ddmc__jv_ref_frame_push / pop around each callback) or at DeleteLocalRef; global
 * and weak handles stay until deleted. (A weak handle is held strongly: minivm never needs to
 * clear one, and a strong hold is what a conservative VM would do.) The table is bounded
 * (2^20 cells): past it, a new handle is NULL and the function that wanted one answers
 * OUT_OF_MEMORY. */
#include <stdlib.h>
#include <string.h>

#include "jvmti/funcs.h"

#define DDMC__REFS_MAX ((uint32_t)1 << 20)
#define DDMC__LOCALS_MAX ((uint32_t)1 << 18) /* per thread */

/* The calling thread's local handles, in creation order: (index, generation) pairs. */
typedef struct local_list {
  uint32_t *idx, *gen;
  uint32_t n, cap;
} local_list;
static _Thread_local local_list tl_locals;

/* Frees a thread's list when it ends (a pthread key's destructor). */
static pthread_key_t g_locals_key;
static pthread_once_t g_locals_once = PTHREAD_ONCE_INIT;
static void locals_free(void *p) {
  local_list *l = p;
  free(l->idx);
  free(l->gen);
  memset(l, 0, sizeof(*l));
}
static void locals_key_init(void) { pthread_key_create(&g_locals_key, locals_free); }

int ddmc__jv_refs_init(ddmc__jv_refs *r) {
  memset(r, 0, sizeof(*r));
  r->max = DDMC__REFS_MAX;
  return pthread_mutex_init(&r->lock, NULL) == 0 ? 0 : DDMC_ENOMEM;
}

void ddmc__jv_refs_destroy(ddmc__jv_refs *r, const ddmc__mem *mem) {
  ddmc__free(mem, r->cells);
  pthread_mutex_destroy(&r->lock);
}

static jobject encode(uint32_t idx, uint32_t gen) {
  uint64_t h = (uint64_t)idx + 1;
  if (sizeof(void *) >= 8) h |= (uint64_t)gen << 32;
  return (jobject)(uintptr_t)h;
}

/* The cell a handle names (refs.lock held), or NULL. */
static ddmc__jv_cell *decode(ddmc__jv_refs *r, jobject h) {
  uint64_t v = (uint64_t)(uintptr_t)h;
  uint32_t idx = (uint32_t)v - 1, gen = (uint32_t)(v >> 32);
  if (v == 0 || (uint32_t)v == 0 || idx >= r->n) return NULL;
  ddmc__jv_cell *c = &r->cells[idx];
  if (c->scope == DDMC__CELL_FREE) return NULL;
  if (sizeof(void *) >= 8 && c->gen != gen) return NULL;
  return c;
}

static int remember_local(uint32_t idx, uint32_t gen) {
  local_list *l = &tl_locals;
  if (l->n == l->cap) {
    if (l->cap >= DDMC__LOCALS_MAX) return -1;
    if (l->cap == 0) {
      pthread_once(&g_locals_once, locals_key_init);
      pthread_setspecific(g_locals_key, l);
    }
    uint32_t cap = l->cap ? l->cap * 2 : 64;
    uint32_t *a = realloc(l->idx, sizeof(uint32_t) * cap), *b;
    if (a == NULL) return -1;
    l->idx = a;
    if ((b = realloc(l->gen, sizeof(uint32_t) * cap)) == NULL) return -1;
    l->gen = b;
    l->cap = cap;
  }
  l->idx[l->n] = idx;
  l->gen[l->n] = gen;
  l->n++;
  return 0;
}

jobject ddmc__jv_ref_new(ddmc__jvmti *jv, int scope, ddmc_ref ref, ddmc_class cls, uint32_t thread) {
  if (ref == 0 && cls == 0) return NULL;
  ddmc__jv_refs *r = &jv->refs;
  ddmc__lock(&r->lock);
  uint32_t idx;
  if (r->free_head != 0) {
    idx = r->free_head - 1;
    r->free_head = r->cells[idx].next;
  } else {
    if (r->n == r->max) {
      ddmc__unlock(&r->lock);
      return NULL;
    }
    if (r->n == r->cap) {
      uint32_t cap = r->cap ? r->cap * 2 : 256;
      ddmc__jv_cell *c = ddmc__realloc(jv->mem, r->cells, sizeof(ddmc__jv_cell) * cap);
      if (c == NULL) {
        ddmc__unlock(&r->lock);
        return NULL;
      }
      r->cells = c;
      r->cap = cap;
    }
    idx = r->n++;
    r->cells[idx].gen = 0;
  }
  ddmc__jv_cell *c = &r->cells[idx];
  c->ref = ref;
  c->cls = cls;
  c->thread = thread;
  c->scope = (uint8_t)scope;
  c->next = 0;
  c->gen++;
  uint32_t gen = c->gen;
  r->live++;
  ddmc__unlock(&r->lock);
  if (scope == DDMC__CELL_LOCAL && remember_local(idx, gen) != 0) {
    ddmc__jv_ref_delete(jv, encode(idx, gen), DDMC__CELL_LOCAL);
    return NULL;
  }
  return encode(idx, gen);
}

jobject ddmc__jv_ref_local(ddmc__jvmti *jv, ddmc_ref ref, ddmc_class cls, uint32_t thread) {
  return ddmc__jv_ref_new(jv, DDMC__CELL_LOCAL, ref, cls, thread);
}

int ddmc__jv_ref_get(ddmc__jvmti *jv, jobject h, ddmc__jv_cell *out) {
  ddmc__jv_refs *r = &jv->refs;
  ddmc__lock(&r->lock);
  ddmc__jv_cell *c = decode(r, h);
  if (c != NULL) *out = *c;
  ddmc__unlock(&r->lock);
  return c != NULL ? 0 : JVMTI_ERROR_INVALID_OBJECT;
}

static void release(ddmc__jv_refs *r, ddmc__jv_cell *c) {
  c->scope = DDMC__CELL_FREE;
  c->ref = 0;
  c->cls = 0;
  c->next = r->free_head;
  r->free_head = (uint32_t)(c - r->cells) + 1;
  r->live--;
}

void ddmc__jv_ref_delete(ddmc__jvmti *jv, jobject h, int scope) {
  ddmc__jv_refs *r = &jv->refs;
  ddmc__lock(&r->lock);
  ddmc__jv_cell *c = decode(r, h);
  if (c != NULL && c->scope == scope) release(r, c);
  ddmc__unlock(&r->lock);
}

int ddmc__jv_ref_scope(ddmc__jvmti *jv, jobject h) {
  ddmc__jv_refs *r = &jv->refs;
  ddmc__lock(&r->lock);
  ddmc__jv_cell *c = decode(r, h);
  int s = c ? c->scope : DDMC__CELL_FREE;
  ddmc__unlock(&r->lock);
  return s;
}

uint32_t ddmc__jv_ref_frame_push(void) { return tl_locals.n; }

void ddmc__jv_ref_frame_pop(ddmc__jvmti *jv, uint32_t mark) {
  local_list *l = &tl_locals;
  if (mark >= l->n) return;
  ddmc__jv_refs *r = &jv->refs;
  ddmc__lock(&r->lock);
  for (uint32_t i = mark; i < l->n; i++) {
    uint32_t idx = l->idx[i];
    if (idx < r->n && r->cells[idx].scope == DDMC__CELL_LOCAL && r->cells[idx].gen == l->gen[i])
      release(r, &r->cells[idx]);
  }
  ddmc__unlock(&r->lock);
  l->n = mark;
}

void ddmc__jv_refs_visit(ddmc__jvmti *jv, ddmc_root_visit_fn fn, void *arg) {
  ddmc__jv_refs *r = &jv->refs;
  ddmc__lock(&r->lock);
  for (uint32_t i = 0; i < r->n; i++)
    if (r->cells[i].scope != DDMC__CELL_FREE && r->cells[i].ref != 0) fn(arg, &r->cells[i].ref);
  ddmc__unlock(&r->lock);
}

/* ---- classes and threads */

jclass ddmc__jv_class_local(ddmc__jvmti *jv, ddmc_class c) {
  if (c == 0) return NULL;
  ddmc_class_info info;
  memset(&info, 0, sizeof(info));
  ddmc_ref obj = 0;
  if (jv->bridge != NULL && jv->bridge->class_info != NULL && jv->bridge->class_info(jv->bridge_data, c, &info) == 0)
    obj = info.class_object;
  return ddmc__jv_ref_local(jv, obj, c, 0);
}

int ddmc__jv_class_of(ddmc__jvmti *jv, jclass h, ddmc_class *out) {
  ddmc__jv_cell c;
  if (h == NULL || ddmc__jv_ref_get(jv, h, &c) != 0 || c.cls == 0) return JVMTI_ERROR_INVALID_CLASS;
  *out = c.cls;
  return 0;
}

jthread ddmc__jv_thread_local(ddmc__jvmti *jv, uint32_t thread) {
  if (thread == 0 || jv->bridge == NULL || jv->bridge->thread_info == NULL) return NULL;
  ddmc_thread_detail ti;
  memset(&ti, 0, sizeof(ti));
  if (jv->bridge->thread_info(jv->bridge_data, thread, &ti) != 0 || ti.object == 0) return NULL;
  return ddmc__jv_ref_local(jv, ti.object, 0, thread);
}

/* Is obj a java.lang.Thread (or of a subclass)? */
int ddmc__jv_is_thread_object(ddmc__jvmti *jv, ddmc_ref obj) {
  ddmc_class c = 0;
  if (obj == 0 || jv->bridge == NULL || jv->bridge->object_class == NULL || jv->bridge->class_info == NULL ||
      jv->bridge->object_class(jv->bridge_data, obj, &c) != 0)
    return 0;
  for (int depth = 0; c != 0 && depth < 64; depth++) {
    ddmc_class_info info;
    memset(&info, 0, sizeof(info));
    if (jv->bridge->class_info(jv->bridge_data, c, &info) != 0 || info.signature == NULL) return 0;
    if (strcmp(info.signature, "Ljava/lang/Thread;") == 0) return 1;
    c = info.superclass;
  }
  return 0;
}

/* The VM's thread ids are copied out first, then each is asked for its object outside the VM's
 * iteration: thread_info inside for_each_thread's visitor would take the VM's thread-list lock
 * twice (minivm's is not recursive). */
#define DDMC__FIND_THREADS 4096

typedef struct find_thread {
  uint32_t ids[DDMC__FIND_THREADS];
  uint32_t n;
} find_thread;

static int find_thread_visit(void *arg, const ddmc_thread_info *t) {
  find_thread *f = arg;
  if (f->n == DDMC__FIND_THREADS) return 1;
  f->ids[f->n++] = t->id;
  return 0;
}

static uint32_t find_thread_of(ddmc__jvmti *jv, ddmc_ref obj) {
  const ddmc_vm_ops *vo = ddmc__jv_vm_ops(jv);
  find_thread *f = calloc(1, sizeof(*f));
  if (f == NULL) return 0;
  vo->for_each_thread(ddmc__jv_vm_data(jv), find_thread_visit, f);
  uint32_t found = 0;
  for (uint32_t i = 0; i < f->n && found == 0; i++) {
    ddmc_thread_detail ti;
    memset(&ti, 0, sizeof(ti));
    if (jv->bridge->thread_info(jv->bridge_data, f->ids[i], &ti) == 0 && ti.object == obj) found = f->ids[i];
  }
  free(f);
  return found;
}

int ddmc__jv_thread_of(ddmc__jvmti *jv, jthread h, uint32_t *out) {
  if (h == NULL) {
    *out = ddmc__jv_self();
    return *out != 0 ? 0 : JVMTI_ERROR_UNATTACHED_THREAD;
  }
  ddmc__jv_cell c;
  if (ddmc__jv_ref_get(jv, h, &c) != 0 || c.cls != 0) return JVMTI_ERROR_INVALID_THREAD;
  if (c.thread != 0) {
    *out = c.thread;
    return 0;
  }
  /* A Thread object from elsewhere (a field, a global made before it started): find it. */
  const ddmc_vm_ops *vo = ddmc__jv_vm_ops(jv);
  if (vo == NULL || vo->for_each_thread == NULL || jv->bridge == NULL || jv->bridge->thread_info == NULL)
    return JVMTI_ERROR_INVALID_THREAD;
  uint32_t found = find_thread_of(jv, c.ref);
  if (found == 0)
    return ddmc__jv_is_thread_object(jv, c.ref) ? JVMTI_ERROR_THREAD_NOT_ALIVE : JVMTI_ERROR_INVALID_THREAD;
  *out = found;
  return 0;
}
