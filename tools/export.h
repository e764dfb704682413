/* SPDX-License-Identifier: Apache-2.0 */
/* Exports: what ddmc records, written in the formats of the viewers people already use.
 *
 *   export_collapsed   a .trace as collapsed stacks, "frame;frame;frame N" (flamegraph.pl's input,
 *                      also read by speedscope, inferno, Firefox Profiler's importers)
 *   export_speedscope  a .trace as a speedscope file: one evented profile per thread
 *   export_pprof_*     a .trace, or an allocation report (REAL), as a pprof profile.proto
 *   export_perfetto    thread states, GCs and heap counters of several VMs over time as Trace
 *                      Event JSON (Perfetto's UI, chrome://tracing): one process per VM
 *
 * Each writer is one file, tools/export_<format>.c, named after its function. They are pure
 * writers: no connection, no global state, nothing kept between calls, so `ddmc ui` (which serves
 * them to the page) and the commands call the same code. Thread: any; one FILE per call.
 * Returns: 0; DDMC_EINVAL (a NULL argument, or a clock the trace does not have); DDMC_ENOMEM;
 * DDMC_EIO (writing to out failed: the stream's error flag, or its fflush, said so). out is
 * flushed, not closed; after an error its contents are incomplete.
 *
 * Method traces. A .trace record stream (enter / exit / unroll per thread, ddmc_host_trace) becomes
 * call stacks per thread, the thread as the root frame. Exits that match no open frame (the
 * method was entered before tracing began) are dropped; an exit of a frame below the top closes
 * the frames above it too (they were left by the same unwinding); frames still open at the end are
 * closed at their thread's last record. Time between two records of a thread is the self time of
 * the frame on top of its stack in between (inclusive minus callees, as dmtracedump's "exclusive"
 * time), counted in microseconds of ONE clock:
 *   EXPORT_CLOCK_WALL  wall time: the second clock of a dual-clock file, or the only one of a
 *                      "wall" file. What a flame graph of "where did the time go" wants, and what
 *                      matches the other views (the timeline, --chrome);
 *   EXPORT_CLOCK_CPU   thread CPU time: the first clock of a dual-clock file, or the only one of a
 *                      "thread-cpu" file (what dmtracedump reports);
 *   EXPORT_CLOCK_AUTO  wall when the file has it, else thread CPU.
 * A sampling trace (SPSS) is the same record stream (the VM writes the differences between
 * samples as enters and exits), so the same writers take it; libddmc's sampler also leaves every
 * open frame at the stop, so a thread whose stack never changed has the trace's time. */
#ifndef DDMC_TOOLS_EXPORT_H
#define DDMC_TOOLS_EXPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ddmc_host.h"

typedef enum export_clock { EXPORT_CLOCK_AUTO = 0, EXPORT_CLOCK_WALL, EXPORT_CLOCK_CPU } export_clock;

/* "wall", "cpu" or "auto" (ddmc trace --clock, ddmc ui's trace-stop) in *out; -1 for another word. */
int export_clock_parse(const char *word, export_clock *out);

/* Collapsed stacks: one line per distinct stack, "THREAD;Class.method;Class.method N" with N the
 * self time of the last frame in microseconds (lines with N = 0 are left out). Frames are named
 * "Class.method" as --chrome names them; ';' in a name becomes ':' and control characters '?', so
 * every line splits back into the frames it was made of. Lines come depth-first, callees after
 * their caller, threads in the trace's order. */
int export_collapsed(FILE *out, const ddmc_host_trace *t, export_clock clock);

/* speedscope's file format (https://www.speedscope.app/file-format-schema.json): one "evented"
 * profile per thread that has records, unit microseconds, frames shared ("shared.frames": name,
 * file, line), open/close events in each thread's order. name (may be NULL) names the file. */
int export_speedscope(FILE *out, const ddmc_host_trace *t, export_clock clock, const char *name);

/* pprof (profile.proto, uncompressed: `go tool pprof` and pprof's readers take it as it is, gzip
 * it for tools that insist). A trace: sample types ("wall" or "cpu", "nanoseconds") and ("calls",
 * "count"), one sample per distinct stack with its self time and how often its last frame was
 * entered, the thread as a "thread" string label (a thread's time outside every traced method,
 * a line of its own in the collapsed stacks, has no stack here and is left out). Allocations: sample
 * types ("alloc_objects", "count") and ("alloc_space", "bytes"), one sample per entry, its
 * allocation site as locations (function = class + method, line), the allocated class as a
 * "class" string label and the thread id as a numeric "thread" label. */
int export_pprof_trace(FILE *out, const ddmc_host_trace *t, export_clock clock);
int export_pprof_allocs(FILE *out, const ddmc_host_allocs *a);

/* Several VMs on one timeline. Times are microseconds on ONE clock shared by every VM (ddmc uses
 * CLOCK_REALTIME at the moment a reply arrived); the writer makes them relative to the earliest. */
typedef struct export_thst_snap {
  uint64_t ts_us;
  const ddmc_host_thst_entry *entries; /* a THST reply's table */
  size_t count;
} export_thst_snap;
typedef struct export_heap_snap {
  uint64_t ts_us;
  ddmc_host_heap_info info; /* an HPIF's first heap */
} export_heap_snap;
typedef struct export_gc {
  uint64_t ts_us;  /* when it ended (an HPIF with reason EVERY_GC), or started when dur_us > 0 */
  uint64_t dur_us; /* 0: unknown, written as an instant */
} export_gc;
typedef struct export_thread_name {
  uint32_t id; /* the VM's thread id, as in THST */
  const char *name;
} export_thread_name;
typedef struct export_vm {
  uint32_t pid;     /* the VM's process id (HELO): the trace's pid; 0 numbers VMs 1, 2, ... */
  const char *name; /* the process name shown (APNM / HELO app name); may be NULL */
  const export_thread_name *threads;
  size_t nthreads;
  const export_thst_snap *thst; /* in time order */
  size_t nthst;
  const export_heap_snap *heap; /* in time order */
  size_t nheap;
  const export_gc *gcs;
  size_t ngcs;
} export_vm;

/* Trace Event JSON ({"traceEvents": [...]}), every VM one pid: "M" events name each process and
 * thread; each thread's state between two THST snapshots is an "X" slice named after the state
 * (running, sleeping, monitor, ...: ddmc_host_thread_status_name), its tid the VM's thread id; a
 * "heap" counter ("C") per HPIF with the allocated and footprint bytes and the allocated objects;
 * each GC an "X" slice (or an "i" instant when its length is unknown) on a "GCs (HPIF)" track (tid 0, which no VM thread has). */
int export_perfetto(FILE *out, const export_vm *vms, size_t n);

#endif
