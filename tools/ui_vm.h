/* SPDX-License-Identifier: Apache-2.0 */
/* `ddmc ui`'s side of the VM: one worker (the thread that calls ui_vm_run) owns the connection,
 * polls THST and HPIF once a second, keeps bounded histories (ring buffers) and publishes each
 * poll as one JSON snapshot that every page and every SSE client shares. Requests a page makes
 * (a stack, a GC, the allocation tracker, a trace, the heap map) go to the worker through a
 * one-slot mailbox (ui_vm_call), so only the worker ever touches the socket.
 *
 * A lost or refused connection is not fatal, unlike the other commands' sessions: the worker
 * shows it on the VMs page and connects again every two seconds. With --all (ui_list.h) the VM is
 * the one the page picked (op "pick"): the worker drops the one it has, with its histories.
 *
 * Threads: ui_vm_run on one thread; ui_vm_snapshot and ui_vm_call from any number of others
 * (the HTTP server's); everything shared is under the object's mutex, no I/O under it. */
#ifndef DDMC_TOOLS_UI_VM_H
#define DDMC_TOOLS_UI_VM_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "session.h"

typedef struct ui_vm ui_vm;
typedef struct ui_list ui_list;

/* History bounds: heap samples (one a second: ten minutes), thread timeline samples (three
 * minutes) and rows, garbage collections marked. */
#define UI_VM_HEAP_SAMPLES 600
#define UI_VM_TIMELINE_SAMPLES 180
#define UI_VM_TIMELINE_ROWS 256
#define UI_VM_GC_MARKS 128

/* o must outlive the object. Returns NULL when out of memory. */
ui_vm *ui_vm_new(const opts *o);
/* --all: the VMs page lists l's VMs and a VM is picked there (op "pick"); l outlives v. Before
 * ui_vm_run. */
void ui_vm_set_list(ui_vm *v, ui_list *l);
/* After ui_vm_run returned and no other thread uses v any more. */
void ui_vm_free(ui_vm *v);

/* The worker: connects, polls, answers the mailbox, until *stop becomes true. */
void ui_vm_run(ui_vm *v, volatile sig_atomic_t *stop);
/* Wakes a waiting ui_vm_snapshot/ui_vm_call so the server can shut down (the worker stopped). */
void ui_vm_shutdown(ui_vm *v);

/* A malloc'd copy of the latest snapshot (JSON, *len bytes, NUL-terminated) once its version is
 * above `after`, waiting up to wait_ms for one; NULL on timeout, shutdown or out of memory.
 * *version receives the copy's version. */
char *ui_vm_snapshot(ui_vm *v, uint64_t after, int wait_ms, uint64_t *version, size_t *len);

/* What a page asked for, done by the worker. */
typedef struct ui_vm_result {
  int status;         /* HTTP status: 200, 400 (bad argument), 409 (not connected), 502 (the VM
                       * refused or failed), 503 (the mailbox stayed busy), 504 (no answer in time) */
  const char *ctype;  /* static */
  char *body;         /* malloc'd (the caller frees), NUL-terminated; a message when status != 200 */
  size_t len;
} ui_vm_result;

/* Runs op ("stack", arg: a thread id; "gc"; "alloc-start"; "alloc-stop"; "alloc" (the report, as
 * JSON); "trace-start", arg: a sampling interval in microseconds, 0 for method tracing;
 * "trace-stop", arg: the clock, "wall", "cpu", "auto" or "" (collapsed stacks, text); "heapmap" (a PNG); "export", arg: a download's name
 * (ui_export.c), which needs no VM; "pick", arg: a pid, with --all or -p: the VM the pages show
 * from now on) on the worker and waits for it. */
void ui_vm_call(ui_vm *v, const char *op, const char *arg, ui_vm_result *r);

#endif
