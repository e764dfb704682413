/* SPDX-License-Identifier: Apache-2.0 */
/* What ui_vm.c, ui_ops.c (the mailbox's operations) and ui_snap.c (the snapshot) share. Fields
 * marked "worker" are read and written by the worker thread only, without the lock; the rest is
 * under mu. */
#ifndef DDMC_TOOLS_UI_VM_INT_H
#define DDMC_TOOLS_UI_VM_INT_H

#include <pthread.h>

#include "export.h"
#include "ui_list.h"
#include "ui_vm.h"

typedef struct ui_heap_sample {
  int64_t t_ms; /* wall clock, ms since the epoch */
  uint32_t allocated, footprint, max, objects;
} ui_heap_sample;

/* One thread's row of the timeline: s is a ring indexed like the samples. */
typedef struct ui_row {
  uint32_t id;
  uint64_t last; /* the last sample that saw it */
  char name[64];
  char s[UI_VM_TIMELINE_SAMPLES];
} ui_row;

struct ui_vm {
  const opts *o;
  ui_list *list;            /* --all: the VMs page's list (set before ui_vm_run), else NULL */
  /* worker */
  uint32_t pid;             /* the VM through adb (-p, or the one picked on the VMs page); 0: -c's */
  char target[128];         /* what the page calls it: o->target, or "pid N via adb ..." */
  int connect_now;          /* a VM was just picked: connect without waiting */
  uint64_t list_seq;        /* the listing the last snapshot showed */
  ddmc_host *h;
  ddmc_host_helo helo;
  ddmc_host_apnm apnm;
  int apnm_seen, waiting;
  ddmc_host_threads threads;
  ddmc_host_heapdump dump;
  uint64_t dump_seq;        /* dumps completed */
  ddmc_host_heap_info last_hpif;
  uint64_t hpif_seq;
  uint8_t *trace_data;      /* the MPSE chunk of the last trace stop */
  size_t trace_len;
  uint8_t *hprof_data;      /* the HPDS chunk of the last heap dump */
  size_t hprof_len;
  /* What the page holds, for its downloads (ui_export.c): the last trace it stopped (MPSE bytes)
   * and the last allocation report it got (REAL bytes). Kept across reconnects. */
  uint8_t *kept_trace, *kept_real;
  size_t kept_trace_len, kept_real_len;
  export_clock kept_trace_clock; /* the clock the page was given the trace in */
  int tracking_allocs, tracing, lost;
  uint32_t trace_interval_us;
  unsigned bad_packets;
  char state[16];           /* connecting, connected, unreachable, attached, lost */
  char error[600];
  ui_heap_sample heap[UI_VM_HEAP_SAMPLES];
  uint64_t heap_n;          /* samples taken; the ring holds the last UI_VM_HEAP_SAMPLES */
  int64_t gc[UI_VM_GC_MARKS];
  uint64_t gc_n;
  ui_row rows[UI_VM_TIMELINE_ROWS];
  size_t nrows;
  uint64_t tl_n;            /* timeline samples taken */
  int64_t tl_t[UI_VM_TIMELINE_SAMPLES]; /* each column's wall clock, ms since the epoch */
  /* under mu */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int shutdown;
  char *snap;               /* the latest snapshot, JSON */
  size_t snap_len;
  uint64_t version;
  struct {
    /* Sequence numbers. The slot is free when all three are equal: the worker has done the last
     * one posted and its caller has taken the result or given up on it (settled). */
    uint64_t posted, done, settled;
    char op[16], arg[32];
    int status;
    const char *ctype;
    char *out;
    size_t out_len;
  } mb;
};

/* ui_vm.c, for the worker */
void ui_vm_dispatch(ui_vm *v, const ddmc_host_packet *p);
void ui_vm_drain(ui_vm *v, int wait_ms);
int ui_vm_request(ui_vm *v, uint32_t type, const void *data, size_t len, int timeout_ms,
                  void (*take)(ui_vm *v, const ddmc_host_packet *reply), char *err, size_t errlen);

/* ui_ops.c: runs one mailbox operation on the worker (r->body malloc'd). */
void ui_ops_run(ui_vm *v, const char *op, const char *arg, ui_vm_result *r);

/* ui_vm.c: the worker drops the VM it has (its histories too) and connects to pid through adb. */
void ui_vm_pick(ui_vm *v, uint32_t pid);

/* ui_export.c: the download NAME (r->body malloc'd; 404 when the page holds no such thing). */
void ui_export_run(ui_vm *v, const char *name, ui_vm_result *r);

/* ui_snap.c: builds the snapshot from the worker's fields and publishes it (takes mu). */
void ui_snap_publish(ui_vm *v);

#endif
