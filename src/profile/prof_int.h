/* SPDX-License-Identifier: Apache-2.0 */
/* The profiling layer's calls, for the chunk handlers above it (chunks/alloc.c, chunks/trace.c,
 * chunks/hello.c) and the chunk family table (chunks/families.c), which sets the layer up and
 * subscribes the method trace to the event hub. This layer reaches the VM only through the
 * bridge every client shares (ddmc_vm_bridge: names, frames), the switches of src/vmctl (method
 * events) and ddmc_vm_ops (threads and stacks for the sampler), hears method entries and exits
 * as a client of src/hub, and reaches the peer only through src/send. See README.md here for
 * threads, memory and bounds. */
#ifndef DDMC_PROFILE_INT_H
#define DDMC_PROFILE_INT_H

#include "hub/hub.h"
#include "vm_int.h"

/* ---- prof.c: configuration, features, teardown */
/* ddmc_vm_new (the chunk families' table): the defaults. */
int ddmc__prof_init(ddmc_vm *vm);
/* trace.c: subscribes the method trace to the event hub (the chunk families' table). */
int ddmc__prof_trace_subscribe(ddmc_vm *vm);
/* ddmc_vm_free: stops a trace or sampler still running and frees everything. */
void ddmc__prof_destroy(ddmc_vm *vm);
/* FEAT: calls fn for each profiling feature string this VM's bridge makes work, in the order
 * VMDebug.getVmFeatureList gives them. */
void ddmc__prof_features(const ddmc_vm *vm, void (*fn)(void *arg, const char *feature), void *arg);
int ddmc__prof_can_trace(const ddmc_vm *vm);
int ddmc__prof_can_sample(const ddmc_vm *vm);

/* ---- alloc_track.c: REAE */
/* Returns 0 (also when nothing changes), DDMC_ENOTSUP (no bridge to name classes), DDMC_ENOMEM. */
int ddmc__prof_alloc_set_tracking(ddmc_vm *vm, int on);
int ddmc__prof_alloc_tracking_on(const ddmc_vm *vm);
uint64_t ddmc__prof_alloc_recorded(const ddmc_vm *vm);
/* REAL: the report of what the ring holds now (the empty report when tracking is off). */
int ddmc__prof_alloc_real(ddmc_vm *vm, ddmc_buf *out);

/* ---- trace.c: tracing, instrumented or sampled */
typedef struct ddmc__prof_trace ddmc__prof_trace;

typedef struct ddmc__prof_trace_req {
  int mode;             /* DDMC_TRACE_METHODS or DDMC_TRACE_SAMPLING */
  uint32_t buffer_size; /* bytes the peer asked for (0: 8 MiB); clipped to cfg.trace_max_bytes */
  uint32_t interval_us; /* sampling */
  int fd;               /* MPRS: the open file the result goes to; -1: to the peer (MPSS/SPSS) */
} ddmc__prof_trace_req;

/* Starts a trace (none may be running: stop it first). Returns 0, DDMC_ENOTSUP (the bridge
 * lacks what the mode needs), DDMC_ENOMEM, or a JDWP error of set_method_events (> 0).
 * On success the trace owns req->fd. JDWP thread. */
int ddmc__prof_trace_start(ddmc_vm *vm, const ddmc__prof_trace_req *req);
/* Stops the running trace and returns it finished (key section and records ready), or NULL when
 * none runs. *err: 0, or why the key section could not be built (DDMC_ENOMEM): the trace is still
 * returned, to be freed. err NULL: no key section (teardown). The caller delivers it and frees it with
 * ddmc__prof_trace_free. JDWP thread. */
ddmc__prof_trace *ddmc__prof_trace_stop(ddmc_vm *vm, int *err);
void ddmc__prof_trace_free(ddmc_vm *vm, ddmc__prof_trace *tr);
/* A finished trace: its head (key section + binary header) and its records. */
void ddmc__prof_trace_parts(const ddmc__prof_trace *tr, const uint8_t **head, size_t *head_len, const uint8_t **recs,
                            size_t *recs_len);
int ddmc__prof_trace_fd(const ddmc__prof_trace *tr); /* -1 for a trace meant for the peer */

#endif
