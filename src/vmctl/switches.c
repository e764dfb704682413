/* SPDX-License-Identifier: Apache-2.0 */
/* The VM's switches, counted by client (switches.h). Lists are small and searched linearly:
 * a debugger or agent sets tens of breakpoints, not thousands, and every change is rare next to
 * the events it causes. */
#include <string.h>

#include "vm_int.h"

void ddmc__ctl_init(ddmc_vm *vm) {
  memset(&vm->ctl, 0, sizeof(vm->ctl));
  pthread_mutex_init(&vm->ctl.lock, NULL); /* a default mutex: cannot fail on Linux */
}

void ddmc__ctl_destroy(ddmc_vm *vm) {
  ddmc__ctl *c = &vm->ctl;
  ddmc__free(&vm->mem, c->bps);
  ddmc__free(&vm->mem, c->watches);
  ddmc__free(&vm->mem, c->steps);
  pthread_mutex_destroy(&c->lock);
}

int ddmc__ctl_suspend(ddmc_vm *vm, uint32_t thread, int suspend) {
  if (vm->ctl.suspend_arbiter != NULL) return vm->ctl.suspend_arbiter(vm, thread, suspend);
  const ddmc_vm_bridge *b = ddmc__bridge(vm);
  int (*op)(void *, uint32_t) = b == NULL ? NULL : suspend ? b->suspend_thread : b->resume_thread;
  return op != NULL ? op(vm->bridge_data, thread) : DDMC_JDWP_NOT_IMPLEMENTED;
}

void ddmc__ctl_suspend_list(ddmc_vm *vm, const uint32_t *threads, uint32_t n, int suspend, int *errs) {
  const ddmc_vm_bridge *b = ddmc__bridge(vm);
  int (*op)(void *, const uint32_t *, uint32_t, int *) = b == NULL ? NULL : suspend ? b->suspend_threads : b->resume_threads;
  if (n == 0) return;
  if (vm->ctl.suspend_arbiter == NULL && op != NULL && op(vm->bridge_data, threads, n, errs) == 0) return;
  /* No bulk op, an arbiter, or the VM did nothing (no memory): one at a time. */
  for (uint32_t i = 0; i < n; i++) errs[i] = ddmc__ctl_suspend(vm, threads[i], suspend);
}

/* Room for one more element in *v (n used, *cap allocated). */
static int grow(ddmc_vm *vm, void **v, uint32_t n, uint32_t *cap, size_t size) {
  if (n < *cap) return 0;
  if (n >= DDMC__CTL_MAX) return DDMC_JDWP_OUT_OF_MEMORY;
  uint32_t ncap = *cap ? *cap * 2 : 16;
  void *p = ddmc__realloc(&vm->mem, *v, (size_t)ncap * size);
  if (p == NULL) return DDMC_JDWP_OUT_OF_MEMORY;
  *v = p;
  *cap = ncap;
  return 0;
}

int ddmc__ctl_method_events(ddmc_vm *vm, unsigned reason, int on) {
  ddmc__ctl *c = &vm->ctl;
  ddmc__lock_role(&c->lock, DDMC__LOCK_SWITCHES);
  unsigned before = c->me_reasons, after = on ? before | reason : before & ~reason;
  int rc = 0;
  if ((before != 0) == (after != 0)) {
    c->me_reasons = after;
  } else if (ddmc__bridge(vm) == NULL || ddmc__bridge(vm)->set_method_events == NULL) {
    rc = on ? DDMC_JDWP_NOT_IMPLEMENTED : 0;
  } else {
    rc = ddmc__bridge(vm)->set_method_events(vm->bridge_data, after != 0);
    if (rc == 0 || !on) c->me_reasons = after;
  }
  ddmc__unlock_role(&c->lock, DDMC__LOCK_SWITCHES);
  return rc;
}

void ddmc__ctl_monitor_events(ddmc_vm *vm, unsigned reason, int on) {
  ddmc__ctl *c = &vm->ctl;
  ddmc__lock_role(&c->lock, DDMC__LOCK_SWITCHES);
  unsigned before = c->mon_reasons, after = on ? before | reason : before & ~reason;
  c->mon_reasons = after;
  const ddmc_vm_bridge *b = ddmc__bridge(vm);
  if ((before != 0) != (after != 0) && b != NULL && b->set_monitor_events != NULL)
    b->set_monitor_events(vm->bridge_data, after != 0);
  ddmc__unlock_role(&c->lock, DDMC__LOCK_SWITCHES);
}

static int loc_eq(const ddmc_location *a, const ddmc_location *b) {
  return a->cls == b->cls && a->method == b->method && a->index == b->index;
}

int ddmc__ctl_breakpoint(ddmc_vm *vm, const ddmc_location *loc, int on) {
  ddmc__ctl *c = &vm->ctl;
  if (ddmc__bridge(vm) == NULL || ddmc__bridge(vm)->set_breakpoint == NULL) return on ? DDMC_JDWP_NOT_IMPLEMENTED : 0;
  ddmc__lock_role(&c->lock, DDMC__LOCK_SWITCHES);
  uint32_t i = 0;
  while (i < c->nbps && !loc_eq(&c->bps[i].loc, loc)) i++;
  int rc = 0;
  if (on && i < c->nbps) {
    c->bps[i].count++;
  } else if (on) {
    rc = grow(vm, (void **)&c->bps, c->nbps, &c->cap_bps, sizeof(*c->bps));
    if (rc == 0) rc = ddmc__bridge(vm)->set_breakpoint(vm->bridge_data, loc);
    if (rc == 0) c->bps[c->nbps++] = (ddmc__ctl_bp){*loc, 1};
  } else if (i < c->nbps && --c->bps[i].count == 0) {
    if (ddmc__bridge(vm)->clear_breakpoint) ddmc__bridge(vm)->clear_breakpoint(vm->bridge_data, loc);
    c->bps[i] = c->bps[--c->nbps];
  }
  ddmc__unlock_role(&c->lock, DDMC__LOCK_SWITCHES);
  return rc;
}

static unsigned watch_mask(const ddmc__ctl_watch *w) {
  return (w->access ? DDMC_WATCH_ACCESS : 0u) | (w->modify ? DDMC_WATCH_MODIFY : 0u);
}

int ddmc__ctl_field_watch(ddmc_vm *vm, ddmc_class cls, uint32_t field, unsigned kind, int on) {
  ddmc__ctl *c = &vm->ctl;
  if (ddmc__bridge(vm) == NULL || ddmc__bridge(vm)->set_field_watch == NULL) return on ? DDMC_JDWP_NOT_IMPLEMENTED : 0;
  ddmc__lock_role(&c->lock, DDMC__LOCK_SWITCHES);
  uint32_t i = 0;
  while (i < c->nwatches && !(c->watches[i].cls == cls && c->watches[i].field == field)) i++;
  int rc = 0;
  if (i == c->nwatches) {
    if (!on) goto out;
    if ((rc = grow(vm, (void **)&c->watches, c->nwatches, &c->cap_watches, sizeof(*c->watches))) != 0) goto out;
    c->watches[c->nwatches++] = (ddmc__ctl_watch){cls, field, 0, 0};
  }
  ddmc__ctl_watch *w = &c->watches[i];
  uint32_t *n = kind == DDMC_WATCH_ACCESS ? &w->access : &w->modify;
  if (!on && *n == 0) goto out;
  unsigned before = watch_mask(w);
  *n = on ? *n + 1 : *n - 1;
  unsigned after = watch_mask(w);
  if (after != before) {
    rc = ddmc__bridge(vm)->set_field_watch(vm->bridge_data, cls, field, after);
    if (rc != 0 && on) *n -= 1; /* refused: as if never asked */
  }
  if (watch_mask(w) == 0) c->watches[i] = c->watches[--c->nwatches];
out:
  ddmc__unlock_role(&c->lock, DDMC__LOCK_SWITCHES);
  return rc;
}

int ddmc__ctl_stepping(ddmc_vm *vm, uint32_t thread, unsigned reason, int on) {
  ddmc__ctl *c = &vm->ctl;
  if (ddmc__bridge(vm) == NULL || ddmc__bridge(vm)->set_stepping == NULL) return on ? DDMC_JDWP_NOT_IMPLEMENTED : 0;
  ddmc__lock_role(&c->lock, DDMC__LOCK_SWITCHES);
  uint32_t i = 0;
  while (i < c->nsteps && c->steps[i].thread != thread) i++;
  int rc = 0;
  if (i == c->nsteps) {
    if (!on) goto out;
    if ((rc = grow(vm, (void **)&c->steps, c->nsteps, &c->cap_steps, sizeof(*c->steps))) != 0) goto out;
    c->steps[c->nsteps++] = (ddmc__ctl_step){thread, 0};
  }
  ddmc__ctl_step *s = &c->steps[i];
  unsigned before = s->reasons, after = on ? before | reason : before & ~reason;
  if ((before != 0) != (after != 0)) rc = ddmc__bridge(vm)->set_stepping(vm->bridge_data, thread, after != 0);
  if (rc == 0 || !on) s->reasons = after;
  if (s->reasons == 0) c->steps[i] = c->steps[--c->nsteps];
out:
  ddmc__unlock_role(&c->lock, DDMC__LOCK_SWITCHES);
  return rc;
}
