/* SPDX-License-Identifier: Apache-2.0 */
/* Chunk handler registry: the C counterpart of DdmServer's handler map.
 *
 * Only the JDWP thread calls hooks, so "in flight" means "the JDWP thread is inside this entry
 * right now" (reg.current). Unregistering from another thread unlinks the entry and waits for
 * the JDWP thread to leave it; unregistering from inside its own hook defers destroy to the
 * moment the hook returns. Hooks are never called with reg.lock held. */
#include <string.h>

#include "vm_int.h"

struct ddmc__chunk_handler {
  ddmc__chunk_handler *next;
  uint32_t type;
  ddmc_chunk_handler h;
  void *ud;
  int dead;              /* unregistered while in flight: destroy when it returns */
  int connected_called;  /* owes a disconnected call */
};

int ddmc__chunk_registry_init(ddmc__registry *r) {
  r->list = NULL;
  r->current = NULL;
  if (pthread_mutex_init(&r->lock, NULL) != 0) return DDMC_ENOMEM;
  if (pthread_cond_init(&r->idle, NULL) != 0) {
    pthread_mutex_destroy(&r->lock);
    return DDMC_ENOMEM;
  }
  return 0;
}

static void destroy_entry(ddmc_vm *vm, ddmc__chunk_handler *e) {
  if (e->h.destroy) e->h.destroy(e->ud);
  ddmc__free(&vm->mem, e);
}

void ddmc__chunk_registry_destroy(ddmc_vm *vm) {
  ddmc__registry *r = &vm->reg;
  ddmc__lock(&r->lock);
  ddmc__chunk_handler *e = r->list;
  r->list = NULL;
  ddmc__unlock(&r->lock);
  while (e != NULL) {
    ddmc__chunk_handler *n = e->next;
    destroy_entry(vm, e);
    e = n;
  }
  pthread_cond_destroy(&r->idle);
  pthread_mutex_destroy(&r->lock);
}

int ddmc_register_handler_(ddmc_vm *vm, ddmc_chunk_type type, const ddmc_chunk_handler *h, size_t size, void *ud) {
  if (vm == NULL || h == NULL || size < sizeof(h->handle) || h->handle == NULL) return DDMC_EINVAL;
  ddmc__chunk_handler *e = ddmc__calloc(&vm->mem, 1, sizeof(*e));
  if (e == NULL) return DDMC_ENOMEM;
  e->type = type;
  memcpy(&e->h, h, DDMC__MIN(size, sizeof(e->h))); /* hooks an older caller lacks stay NULL */
  e->ud = ud;
  ddmc__registry *r = &vm->reg;
  ddmc__lock(&r->lock);
  for (ddmc__chunk_handler *p = r->list; p != NULL; p = p->next) {
    if (p->type == type) {
      ddmc__unlock(&r->lock);
      ddmc__free(&vm->mem, e);
      return DDMC_EEXIST;
    }
  }
  e->next = r->list;
  r->list = e;
  ddmc__unlock(&r->lock);
  return 0;
}

int ddmc_unregister_handler(ddmc_vm *vm, ddmc_chunk_type type) {
  if (vm == NULL) return DDMC_EINVAL;
  ddmc__registry *r = &vm->reg;
  ddmc__lock(&r->lock);
  ddmc__chunk_handler **pp = &r->list, *e = NULL;
  for (; *pp != NULL; pp = &(*pp)->next) {
    if ((*pp)->type == type) {
      e = *pp;
      *pp = e->next;
      break;
    }
  }
  if (e == NULL) {
    ddmc__unlock(&r->lock);
    return DDMC_ENOENT;
  }
  int on_jdwp_thread = vm->thread_running && pthread_equal(pthread_self(), vm->thread);
  if (r->current == e && on_jdwp_thread) {
    e->dead = 1; /* from inside its own hook: the dispatcher destroys it on return */
    ddmc__unlock(&r->lock);
    return 0;
  }
  while (r->current == e) pthread_cond_wait(&r->idle, &r->lock);
  ddmc__unlock(&r->lock);
  destroy_entry(vm, e);
  return 0;
}

/* Marks e in flight. Call with the lock held. */
static void enter(ddmc__registry *r, ddmc__chunk_handler *e) { r->current = e; }

static void leave(ddmc_vm *vm, ddmc__chunk_handler *e) {
  ddmc__registry *r = &vm->reg;
  ddmc__lock(&r->lock);
  r->current = NULL;
  int dead = e->dead;
  pthread_cond_broadcast(&r->idle);
  ddmc__unlock(&r->lock);
  if (dead) destroy_entry(vm, e);
}

int ddmc__chunk_registry_dispatch(ddmc_vm *vm, const ddmc_chunk *req, uint32_t *reply_type, ddmc_buf *reply) {
  ddmc__registry *r = &vm->reg;
  ddmc__lock(&r->lock);
  ddmc__chunk_handler *e = r->list;
  while (e != NULL && e->type != req->type) e = e->next;
  if (e == NULL) {
    ddmc__unlock(&r->lock);
    return DDMC_ENOENT;
  }
  enter(r, e);
  ddmc__unlock(&r->lock);
  int rc = e->h.handle(e->ud, vm, req, reply_type, reply);
  leave(vm, e);
  return rc;
}

/* Calls connected (or disconnected) on every entry, one at a time, re-walking the list after
 * each call because a hook may register or unregister handlers. */
static void broadcast(ddmc_vm *vm, int connect) {
  ddmc__registry *r = &vm->reg;
  for (;;) {
    ddmc__lock(&r->lock);
    ddmc__chunk_handler *e = r->list;
    while (e != NULL && (connect ? e->connected_called : !e->connected_called)) e = e->next;
    if (e == NULL) {
      ddmc__unlock(&r->lock);
      return;
    }
    e->connected_called = connect;
    void (*fn)(void *, ddmc_vm *) = connect ? e->h.connected : e->h.disconnected;
    enter(r, e);
    ddmc__unlock(&r->lock);
    if (fn) fn(e->ud, vm);
    leave(vm, e);
  }
}

void ddmc__chunk_registry_connected(ddmc_vm *vm) { broadcast(vm, 1); }
void ddmc__chunk_registry_disconnected(ddmc_vm *vm) { broadcast(vm, 0); }
