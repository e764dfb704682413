/* SPDX-License-Identifier: Apache-2.0 */
/* The request list's snapshots (requests.h): published by the JDWP thread after each change,
 * taken by VM threads with one short lock to match without any. */
#include "debugger/glue.h"
#include "debugger/requests.h"

ddmc__dbg_snap *ddmc__dbg_snap_get(ddmc__dbg *d) {
  ddmc__dbg_reqs *q = d->req;
  ddmc__lock(&q->lock);
  ddmc__dbg_snap *s = q->snap;
  if (s != NULL) atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
  ddmc__unlock(&q->lock);
  return s;
}

void ddmc__dbg_req_put(ddmc__dbg *d, ddmc__dbg_req *r) {
  if (r == NULL || atomic_fetch_sub_explicit(&r->refs, 1, memory_order_acq_rel) != 1) return;
  for (uint32_t i = 0; i < r->nmods; i++) ddmc__free(d->mem, r->mods[i].pattern);
  ddmc__free(d->mem, r->mods);
  ddmc__free(d->mem, r->step);
  ddmc__free(d->mem, r);
}

void ddmc__dbg_snap_put(ddmc__dbg *d, ddmc__dbg_snap *s) {
  if (s == NULL || atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1) return;
  for (uint32_t i = 0; i < s->n; i++) ddmc__dbg_req_put(d, s->r[i]);
  ddmc__free(d->mem, s);
}

/* Publishes the list as the new snapshot. Returns 0 or OUT_OF_MEMORY (the old one stays). */
int ddmc__dbg_reqs_publish(ddmc__dbg *d) {
  ddmc__dbg_reqs *q = d->req;
  ddmc__dbg_snap *s = NULL;
  if (q->n > 0) {
    s = ddmc__malloc(d->mem, sizeof(*s) + (size_t)q->n * sizeof(ddmc__dbg_req *));
    if (s == NULL) return DDMC_JDWP_OUT_OF_MEMORY;
    atomic_init(&s->refs, 1);
    s->n = q->n;
    for (uint32_t i = 0; i < q->n; i++) {
      s->r[i] = q->list[i];
      atomic_fetch_add_explicit(&q->list[i]->refs, 1, memory_order_relaxed);
    }
  }
  ddmc__lock(&q->lock);
  ddmc__dbg_snap *old = q->snap;
  q->snap = s;
  ddmc__unlock(&q->lock);
  ddmc__dbg_snap_put(d, old);
  return 0;
}

int ddmc__dbg_reqs_init(ddmc__dbg *d) {
  ddmc__dbg_reqs *q = ddmc__calloc(d->mem, 1, sizeof(*q));
  if (q == NULL) return DDMC_ENOMEM;
  if (pthread_mutex_init(&q->lock, NULL) != 0) {
    ddmc__free(d->mem, q);
    return DDMC_ENOMEM;
  }
  q->next_id = 1;
  q->budget = ddmc__dbg_vm_options(d->vm)->event_request_bytes;
  if (q->budget == 0) q->budget = DDMC_DEFAULT_EVENT_REQUEST_BYTES;
  d->req = q;
  return 0;
}
