/* SPDX-License-Identifier: Apache-2.0 */
/* The event hub (hub.h): each public report builds one ddmc__hub_event on the caller's stack and
 * hands it to the subscribed clients' post in rank order, but the two a method trace makes on every
 * call (ddmc_post_location, ddmc_post_method_exit), which call the typed entries of the clients
 * that have them, past their gates. */
#include <string.h>

#include "hub/hub.h"
#include "vm_int.h"

int ddmc__hub_subscribe(ddmc_vm *vm, const ddmc__hub_client *c, void *ud, const atomic_int *gate_a,
                        const atomic_int *gate_b) {
  ddmc__hub *h = &vm->hub;
  int n = atomic_load_explicit(&h->n, memory_order_relaxed);
  for (int i = 0; i < n; i++)
    if (h->clients[i] == c) return DDMC_EEXIST;
  if (n == DDMC__HUB_MAX_CLIENTS) return DDMC_ENOMEM;
  int at = n;
  while (at > 0 && h->clients[at - 1]->rank > c->rank) {
    h->clients[at] = h->clients[at - 1];
    h->uds[at] = h->uds[at - 1];
    h->gates[at][0] = h->gates[at - 1][0];
    h->gates[at][1] = h->gates[at - 1][1];
    at--;
  }
  h->clients[at] = c;
  h->uds[at] = ud;
  h->gates[at][0] = gate_a;
  h->gates[at][1] = gate_b;
  int nloc = 0, nexit = 0;
  for (int i = 0; i <= n; i++) {
    if (h->clients[i]->location != NULL) {
      h->loc_fn[nloc] = h->clients[i]->location;
      h->loc_gate[nloc][0] = h->gates[i][0];
      h->loc_gate[nloc][1] = h->gates[i][1];
      h->loc_ud[nloc++] = h->uds[i];
    }
    if (h->clients[i]->method_exit != NULL) {
      h->exit_fn[nexit] = h->clients[i]->method_exit;
      h->exit_gate[nexit][0] = h->gates[i][0];
      h->exit_gate[nexit][1] = h->gates[i][1];
      h->exit_ud[nexit++] = h->uds[i];
    }
  }
  atomic_store_explicit(&h->nloc, nloc, memory_order_release);
  atomic_store_explicit(&h->nexit, nexit, memory_order_release);
  atomic_store_explicit(&h->n, n + 1, memory_order_release);
  return 0;
}

void ddmc__hub_alloc_want(ddmc_vm *vm, int bit, int on) {
  if (on)
    __atomic_fetch_or(&vm->hub.alloc_flag, bit, __ATOMIC_RELEASE);
  else
    __atomic_fetch_and(&vm->hub.alloc_flag, ~bit, __ATOMIC_RELEASE);
}

const int *ddmc_alloc_tracking_flag(const ddmc_vm *vm) {
  static const int off = 0;
  return vm ? &vm->hub.alloc_flag : &off;
}

static int count(const ddmc_vm *vm) { return atomic_load_explicit(&((ddmc_vm *)vm)->hub.n, memory_order_acquire); }

/* The post rule: the first error wins, else 0 when some client took it, else DDMC_ENOTCONN. */
static inline int merge(int rc, int r) { return r != DDMC_ENOTCONN && (rc == DDMC_ENOTCONN || rc == 0) ? r : rc; }

/* Zero when the client's gates say it cannot take a hot report now. */
static inline int open_gate(const atomic_int *const g[2]) {
  if (g[0] == NULL && g[1] == NULL) return 1;
  return (g[0] != NULL && atomic_load_explicit(g[0], memory_order_relaxed) != 0) ||
         (g[1] != NULL && atomic_load_explicit(g[1], memory_order_relaxed) != 0);
}

static int post(ddmc_vm *vm, const ddmc__hub_event *ev) {
  if (vm == NULL) return DDMC_EINVAL;
  ddmc__hub *h = &vm->hub;
  int rc = DDMC_ENOTCONN;
  for (int i = 0, n = count(vm); i < n; i++)
    if (h->clients[i]->post != NULL) rc = merge(rc, h->clients[i]->post(vm, h->uds[i], ev));
  return rc;
}

int ddmc_event_wanted(const ddmc_vm *vm, ddmc_event_kind kind) {
  if (vm == NULL) return 0;
  const ddmc__hub *h = &vm->hub;
  for (int i = 0, n = count(vm); i < n; i++)
    if (h->clients[i]->wants != NULL && h->clients[i]->wants(vm, h->uds[i], (int)kind)) return 1;
  return 0;
}

static int post_thread(ddmc_vm *vm, ddmc__hub_what what, int kind, uint32_t thread) {
  ddmc__hub_event ev = {.what = what, .kind = kind, .thread = thread};
  return post(vm, &ev);
}

int ddmc_post_thread_start(ddmc_vm *vm, uint32_t thread) {
  return post_thread(vm, DDMC__HUB_THREAD_START, DDMC_EV_THREAD_START, thread);
}

int ddmc_post_thread_death(ddmc_vm *vm, uint32_t thread) {
  return post_thread(vm, DDMC__HUB_THREAD_DEATH, DDMC_EV_THREAD_DEATH, thread);
}

int ddmc_post_class_prepare(ddmc_vm *vm, uint32_t thread, ddmc_class c) {
  ddmc__hub_event ev = {.what = DDMC__HUB_CLASS_PREPARE, .kind = DDMC_EV_CLASS_PREPARE, .thread = thread, .cls = c};
  return post(vm, &ev);
}

int ddmc_post_location(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, int32_t depth, ddmc_ref this_obj,
                       unsigned flags) {
  if (vm == NULL || loc == NULL) return DDMC_EINVAL;
  ddmc__hub *h = &vm->hub;
  int rc = DDMC_ENOTCONN;
  for (int i = 0, n = atomic_load_explicit(&h->nloc, memory_order_acquire); i < n; i++)
    if (open_gate(h->loc_gate[i])) rc = merge(rc, h->loc_fn[i](vm, h->loc_ud[i], thread, loc, depth, this_obj, flags));
  return rc;
}

int ddmc_post_method_exit(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, int32_t depth, ddmc_ref this_obj,
                          const ddmc_value *ret) {
  if (vm == NULL || loc == NULL) return DDMC_EINVAL;
  ddmc__hub *h = &vm->hub;
  int rc = DDMC_ENOTCONN;
  for (int i = 0, n = atomic_load_explicit(&h->nexit, memory_order_acquire); i < n; i++)
    if (open_gate(h->exit_gate[i])) rc = merge(rc, h->exit_fn[i](vm, h->exit_ud[i], thread, loc, depth, this_obj, ret));
  return rc;
}

int ddmc_post_method_unwind(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, int32_t depth, ddmc_ref this_obj) {
  if (loc == NULL) return DDMC_EINVAL;
  ddmc__hub_event ev = {
      .what = DDMC__HUB_METHOD_UNWIND, .thread = thread, .loc = loc, .depth = depth, .this_obj = this_obj};
  int rc = post(vm, &ev);
  return rc == DDMC_ENOTCONN ? 0 : rc; /* JDWP has no such event: nobody missed it */
}

int ddmc_post_exception(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, int32_t depth, ddmc_ref this_obj,
                        ddmc_ref exception, const ddmc_location *catch_loc) {
  if (loc == NULL || exception == 0) return DDMC_EINVAL;
  ddmc__hub_event ev = {.what = DDMC__HUB_EXCEPTION,
                        .kind = DDMC_EV_EXCEPTION,
                        .thread = thread,
                        .loc = loc,
                        .depth = depth,
                        .this_obj = this_obj,
                        .object = exception,
                        .catch_loc = catch_loc};
  return post(vm, &ev);
}

int ddmc_post_exception_catch(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, int32_t depth, ddmc_ref this_obj,
                              ddmc_ref exception) {
  if (vm == NULL || loc == NULL || exception == 0) return DDMC_EINVAL;
  ddmc__hub_event ev = {.what = DDMC__HUB_EXCEPTION_CATCH,
                        .kind = DDMC_EV_EXCEPTION_CATCH,
                        .thread = thread,
                        .loc = loc,
                        .depth = depth,
                        .this_obj = this_obj,
                        .object = exception};
  int rc = post(vm, &ev);
  return rc == DDMC_ENOTCONN ? 0 : rc; /* JDWP has no such event */
}

static int post_field(ddmc_vm *vm, int kind, uint32_t thread, const ddmc_location *loc, int32_t depth,
                      ddmc_ref this_obj, ddmc_class c, uint32_t field, ddmc_ref object, const ddmc_value *value) {
  if (loc == NULL || (kind == DDMC_EV_FIELD_MODIFICATION && value == NULL)) return DDMC_EINVAL;
  ddmc__hub_event ev = {.what = DDMC__HUB_FIELD,
                        .kind = kind,
                        .thread = thread,
                        .loc = loc,
                        .depth = depth,
                        .this_obj = this_obj,
                        .cls = c,
                        .field = field,
                        .object = object,
                        .value = value};
  return post(vm, &ev);
}

int ddmc_post_field_access(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, int32_t depth, ddmc_ref this_obj,
                           ddmc_class c, uint32_t field, ddmc_ref object) {
  return post_field(vm, DDMC_EV_FIELD_ACCESS, thread, loc, depth, this_obj, c, field, object, NULL);
}

int ddmc_post_field_modification(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, int32_t depth,
                                 ddmc_ref this_obj, ddmc_class c, uint32_t field, ddmc_ref object,
                                 const ddmc_value *new_value) {
  return post_field(vm, DDMC_EV_FIELD_MODIFICATION, thread, loc, depth, this_obj, c, field, object, new_value);
}

static int post_monitor(ddmc_vm *vm, int kind, uint32_t thread, const ddmc_location *loc, int32_t depth,
                        ddmc_ref this_obj, ddmc_ref object, int64_t extra) {
  if (loc == NULL || object == 0) return DDMC_EINVAL;
  ddmc__hub_event ev = {.what = DDMC__HUB_MONITOR,
                        .kind = kind,
                        .thread = thread,
                        .loc = loc,
                        .depth = depth,
                        .this_obj = this_obj,
                        .object = object,
                        .extra = extra};
  return post(vm, &ev);
}

int ddmc_post_monitor_contended_enter(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, int32_t depth,
                                      ddmc_ref this_obj, ddmc_ref object) {
  return post_monitor(vm, DDMC_EV_MONITOR_CONTENDED_ENTER, thread, loc, depth, this_obj, object, 0);
}

int ddmc_post_monitor_contended_entered(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, int32_t depth,
                                        ddmc_ref this_obj, ddmc_ref object) {
  return post_monitor(vm, DDMC_EV_MONITOR_CONTENDED_ENTERED, thread, loc, depth, this_obj, object, 0);
}

int ddmc_post_monitor_wait(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, int32_t depth, ddmc_ref this_obj,
                           ddmc_ref object, int64_t timeout_ms) {
  return post_monitor(vm, DDMC_EV_MONITOR_WAIT, thread, loc, depth, this_obj, object, timeout_ms);
}

int ddmc_post_monitor_waited(ddmc_vm *vm, uint32_t thread, const ddmc_location *loc, int32_t depth, ddmc_ref this_obj,
                             ddmc_ref object, int timed_out) {
  return post_monitor(vm, DDMC_EV_MONITOR_WAITED, thread, loc, depth, this_obj, object, timed_out != 0);
}

int ddmc_post_vm_death(ddmc_vm *vm, int timeout_ms) {
  ddmc__hub_event ev = {.what = DDMC__HUB_VM_DEATH, .kind = DDMC_EV_VM_DEATH, .extra = timeout_ms};
  return post(vm, &ev);
}

/* ---- the collector's hooks */

void ddmc_gc_visit_roots(ddmc_vm *vm, ddmc_root_visit_fn fn, void *arg) {
  if (vm == NULL || fn == NULL) return;
  ddmc__hub *h = &vm->hub;
  for (int i = 0, n = count(vm); i < n; i++)
    if (h->clients[i]->visit_roots != NULL) h->clients[i]->visit_roots(vm, h->uds[i], fn, arg);
}

int ddmc_gc_start(ddmc_vm *vm) {
  if (vm == NULL) return DDMC_EINVAL;
  ddmc__hub *h = &vm->hub;
  for (int i = 0, n = count(vm); i < n; i++)
    if (h->clients[i]->gc_start != NULL) h->clients[i]->gc_start(vm, h->uds[i]);
  return 0;
}

int ddmc_gc_sweep(ddmc_vm *vm, ddmc_gc_is_live_fn is_live, void *arg) {
  if (vm == NULL || is_live == NULL) return DDMC_EINVAL;
  ddmc__hub *h = &vm->hub;
  for (int i = 0, n = count(vm); i < n; i++)
    if (h->clients[i]->gc_sweep != NULL) h->clients[i]->gc_sweep(vm, h->uds[i], is_live, arg);
  return 0;
}

int ddmc_gc_done(ddmc_vm *vm) {
  if (vm == NULL) return DDMC_EINVAL;
  ddmc__hub *h = &vm->hub;
  int rc = 0;
  for (int i = 0, n = count(vm); i < n; i++) {
    if (h->clients[i]->gc_done == NULL) continue;
    int r = h->clients[i]->gc_done(vm, h->uds[i]);
    if (r != 0) rc = r;
  }
  return rc;
}

int ddmc_alloc_object(ddmc_vm *vm, uint32_t thread, ddmc_ref obj, ddmc_class cls, uint64_t bytes, int by_vm) {
  if (vm == NULL || obj == 0) return DDMC_EINVAL;
  ddmc__hub *h = &vm->hub;
  for (int i = 0, n = count(vm); i < n; i++)
    if (h->clients[i]->alloc != NULL) h->clients[i]->alloc(vm, h->uds[i], thread, obj, cls, bytes, by_vm);
  return 0;
}
