/* SPDX-License-Identifier: Apache-2.0 */
/* Profiling over DDM: the allocation tracker (REAE, REAQ, REAL), method tracing (MPRS/MPRE to a
 * file in the VM, MPSS/MPSE streamed back), sampling (SPSS/SPSE) and the tracing state (MPRQ).
 *
 * The library answers every one of these chunks itself and advertises in FEAT exactly the
 * profiling features the VM's bridge makes possible. What the VM provides:
 *
 * - Names. Class, method and file names, signatures and line numbers come through the VM bridge
 *   (bridge.h: class_info, method_info, line_table), the one reflective bridge of the library:
 *   allocation tracking and method tracing need ddmc_vm_set_bridge, not the debugger. Strings reach the
 *   peer as the shipped formats carry them (REAL: VM descriptors in three string tables; traces:
 *   dotted class names in the key section).
 *
 * - Allocations. While tracking is on, the VM calls ddmc_alloc_record once per allocation
 *   (objects, arrays, strings, class objects) with the allocating thread's frames. When it is
 *   off the VM pays one predictable branch: ddmc_alloc_tracking() is an inline read of a flag the
 *   library owns.
 *
 * - Method entry and exit. Nothing beyond the event hub (events.h): while a trace runs the
 *   library turns the VM's method events on (ddmc_vm_bridge.set_method_events, shared with the
 *   debugger's METHOD_ENTRY/EXIT requests) and the VM's ddmc_post_location(...,
 *   DDMC_POST_METHOD_ENTRY) and ddmc_post_method_exit calls feed the trace. A method left by
 *   an exception (no exit event) is closed with an UNROLL record at the thread's next event
 *   shallower than it (each event carries its depth). A thread first seen inside a call is given
 *   ENTER records for the frames below it, read with frame_count/frame_location on the thread
 *   itself inside its post call (when the VM has those ops).
 *
 * - Stacks for sampling. The library's sampler thread visits every thread at the requested
 *   interval through ddmc_vm_ops.for_each_thread and thread_stack (the op STKL uses), and turns
 *   the differences between two samples into ENTER and EXIT records.
 *
 * Bounds. A peer cannot make the VM allocate more than ddmc_prof_config.trace_max_bytes for a
 * trace (bigger requests are clipped to it), nor sample more often than every
 * sample_min_interval_us; the allocation ring has a fixed number of records. A finished trace
 * goes to the peer as one unsolicited MPSE chunk, streamed by the JDWP thread from the trace
 * buffer itself (no copy): no VM thread ever waits for the peer, and a transfer the peer stops
 * reading is dropped and counted (ddmc_stats.transfers_dropped) after ddmc_options.stall_timeout_ms.
 *
 * - Files. HPDU and MPRS name a file the VM writes. The library only ever creates a new regular
 *   file there (never truncates, follows a symlink, opens a FIFO or device, or removes a file it
 *   did not create), and ddmc_prof_config.file_dir confines the names to one directory.
 *
 * - Heap dumps (HPDU to a file the VM writes, HPDS streamed back as one unsolicited HPDS chunk):
 *   Android's hprof "JAVA PROFILE 1.0.3" (4-byte ids; strings, classes with fields and statics,
 *   instances, arrays, GC roots, HEAP_DUMP_INFO per heap), built by the JDWP thread through the
 *   VM bridge's with_world_stopped, for_each_object and for_each_root (bridge.h) and
 *   the class and object ops it already has. The dump is built in memory while the world is
 *   stopped, at most ddmc_prof_config.hprof_max_bytes (bigger: FAIL, nothing sent), and goes to
 *   the file or the peer after the VM runs again. */
#ifndef DDMC_PROFILE_H
#define DDMC_PROFILE_H

#include <stddef.h>
#include <stdint.h>

#include "bridge.h"
#include "events.h"
#include "export.h"
#include "vm.h"

DDMC_BEGIN_DECLS

/* ---- Allocation tracking */

/* The flag that is non-zero while a peer has allocation tracking on (REAE). The pointer is valid
 * until ddmc_vm_free; fetch it once (after ddmc_vm_new) and test it with ddmc_alloc_tracking on
 * every allocation. Thread: any. */
DDMC_EXTERN const int *ddmc_alloc_tracking_flag(const ddmc_vm *vm);

/* One relaxed load and a branch the compiler marks unlikely: the whole cost of the tracker while
 * it is off. A VM without the library can point flag at a static 0. */
static inline int ddmc_alloc_tracking(const int *flag) {
#if defined(__GNUC__) || defined(__clang__)
  return __builtin_expect(__atomic_load_n(flag, __ATOMIC_RELAXED), 0);
#else
  return *(const volatile int *)flag;
#endif
}

/* Records one allocation: thread (its DDM thread id), the class of the new object (a ddmc_class
 * as the debugger bridge names it: the array class for arrays), its size in bytes, and the
 * allocating thread's frames, innermost first (frames[i].index is the instruction index of the
 * call, or -1 for a native frame). Only the first depth frames (ddmc_prof_config.alloc_depth,
 * 16) are kept; nframes may be larger. Nothing is resolved here: names and lines are looked up
 * through the bridge when a peer asks for the report (REAL), so the VM keeps classes loaded while
 * their records may be read, as Dalvik did.
 * Cost: a slot of a fixed ring (the oldest record is overwritten), a copy of the frames, no lock
 * and no allocation. Thread: the allocating VM thread.
 * Returns 0, DDMC_ESTATE (tracking is off: the call raced with REAE 0), DDMC_EINVAL. */
DDMC_EXTERN int ddmc_alloc_record(ddmc_vm *vm, uint32_t thread, ddmc_class cls, uint64_t bytes,
                                  const ddmc_location *frames, uint32_t nframes);

/* ---- Configuration, before ddmc_vm_start. */
typedef struct ddmc_prof_config {
  uint32_t alloc_records;          /* ring size, rounded up to a power of two, at most 65536
                                      (REAL's u2 entry count); default 65536, Dalvik's */
  uint32_t alloc_depth;            /* frames kept per allocation, 1..64; default 16 */
  uint32_t trace_max_bytes;        /* largest trace buffer a peer may ask for; default 64 MiB */
  uint32_t trace_cpu_refresh_us;   /* a thread's CPU clock is read from the kernel at most this
                                      often (µs of its wall time); in between it advances with the
                                      wall clock, never backwards. 0: read at every event (exact,
                                      slow where the kernel read is a system call). Default 100 */
  uint32_t sample_min_interval_us; /* SPSS intervals below this are raised to it; default 100 */
  uint64_t hprof_max_bytes;        /* the largest heap dump (HPDU, HPDS) the library builds: a
                                      bigger one is refused with FAIL. Default 512 MiB (ddmlib
                                      keeps at most about 800 MiB); at least 64 KiB */
  char file_dir[256];              /* "" (the default): HPDU and MPRS write the file the peer
                                      names, as Android's runtime does, but only as a new file
                                      (an existing name, symlinks included, is refused). An
                                      absolute directory: the peer may name only files directly
                                      in it ("<file_dir>/<name>"); any other name is refused
                                      (HPDU [0xFF] / FAIL with the reason). Set it where any
                                      local user can reach the JDWP port */
} ddmc_prof_config;

/* The defaults above. Thread: any. */
DDMC_EXTERN void ddmc_prof_config_init_(ddmc_prof_config *c, size_t size);
#define ddmc_prof_config_init(c) ddmc_prof_config_init_((c), sizeof(ddmc_prof_config))
/* Takes a copy. Before ddmc_vm_start. Returns 0, DDMC_EINVAL (a value out of range, a file_dir
 * that is not absolute or not terminated within its array), DDMC_ESTATE
 * (started). ABI: the macro passes the caller's sizeof; members it lacks keep their defaults. */
DDMC_EXTERN int ddmc_prof_configure_(ddmc_vm *vm, const ddmc_prof_config *c, size_t size);
#define ddmc_prof_configure(vm, c) ddmc_prof_configure_((vm), (c), sizeof(ddmc_prof_config))

/* ---- State and counters. Thread: any. */

/* MPRQ's values. */
typedef enum ddmc_trace_mode {
  DDMC_TRACE_OFF = 0,
  DDMC_TRACE_METHODS = 1, /* method tracing (instrumentation) */
  DDMC_TRACE_SAMPLING = 2
} ddmc_trace_mode;
DDMC_EXTERN ddmc_trace_mode ddmc_trace_mode_now(const ddmc_vm *vm);

typedef struct ddmc_prof_stats {
  uint64_t alloc_recorded;  /* ddmc_alloc_record calls that stored a record */
  uint64_t traces;          /* traces finished (sent, written, or dropped) */
  uint64_t trace_records;   /* records written into trace buffers */
  uint64_t trace_overflows; /* traces that filled their buffer (data-file-overflow=true) */
  uint64_t trace_lost;      /* events not recorded: thread id over 65535, method table full,
                               a stack deeper than the tracker follows */
  uint64_t samples;         /* sampler ticks */
  uint64_t sample_threads;  /* thread stacks visited by the sampler */
  uint64_t hprof_dumps;     /* heap dumps built (HPDU written, HPDS queued) */
  uint64_t hprof_bytes;     /* their hprof bytes */
  uint64_t hprof_failed;    /* heap dumps refused: over hprof_max_bytes, out of memory, a bridge
                               op that failed, a file that could not be written */
} ddmc_prof_stats;
/* ABI: the macro passes the caller's sizeof(ddmc_prof_stats); the library fills no more. */
DDMC_EXTERN void ddmc_prof_get_stats_(const ddmc_vm *vm, ddmc_prof_stats *out, size_t size);
#define ddmc_prof_get_stats(vm, out) ddmc_prof_get_stats_((vm), (out), sizeof(ddmc_prof_stats))

DDMC_END_DECLS

#endif
