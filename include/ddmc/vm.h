/* SPDX-License-Identifier: Apache-2.0 */
/* The VM's instance of the library: what a VM implementer links and fills in first.
 *
 * A VM creates one ddmc_vm per process with ddmc_vm_new(), passing its parsed options, a table
 * of hooks (ddmc_vm_ops: the JDWP thread's life, DDM's threads, stacks and heap, exit, log) and an
 * opaque vm_data pointer handed back to every hook. What the library's clients (debugger,
 * profiling, agents) need of the VM goes through the other table, the bridge (bridge.h).
 * ddmc_vm_start() starts the JDWP thread, which owns the socket: it accepts (or dials) one peer
 * at a time, reads and answers requests, and is the only thread that ever writes to the peer.
 * VM threads report events with the ddmc_notify_* functions, which copy their input into a
 * bounded queue and never block on the network.
 *
 * Unless a callback says otherwise it runs on the JDWP thread, never while the library holds
 * one of its own locks, so a callback may call any ddmc function. */
#ifndef DDMC_VM_H
#define DDMC_VM_H

#include <stddef.h>
#include <stdint.h>

#include "export.h"
#include "options.h"
#include "version.h"
#include "wire.h"

DDMC_BEGIN_DECLS

typedef struct ddmc_vm ddmc_vm; /* opaque */

/* Every allocation the library makes goes through this. NULL table or NULL members: libc.
 * The functions must be thread-safe; free(NULL) must be accepted. */
typedef struct ddmc_allocator {
  void *ud;
  void *(*malloc)(void *ud, size_t n);
  void *(*realloc)(void *ud, void *p, size_t n);
  void (*free)(void *ud, void *p);
} ddmc_allocator;

typedef enum ddmc_log_level {
  DDMC_LOG_DEBUG,
  DDMC_LOG_INFO,
  DDMC_LOG_WARN,
  DDMC_LOG_ERROR
} ddmc_log_level;

/* Thread status as DDM reports it in THST (Dalvik's codes, which ddmlib displays). */
typedef enum ddmc_thread_status {
  DDMC_THREAD_ZOMBIE = 0,
  DDMC_THREAD_RUNNING = 1,
  DDMC_THREAD_SLEEPING = 2,     /* sleep() or a timed wait */
  DDMC_THREAD_MONITOR = 3,      /* blocked entering a monitor */
  DDMC_THREAD_WAIT = 4,         /* Object.wait() */
  DDMC_THREAD_INITIALIZING = 5,
  DDMC_THREAD_STARTING = 6,
  DDMC_THREAD_NATIVE = 7,
  DDMC_THREAD_VMWAIT = 8,
  DDMC_THREAD_SUSPENDED = 9
} ddmc_thread_status;

typedef struct ddmc_thread_info {
  uint32_t id;                  /* VM-local small thread id (THCR/THDE/THST/STKL) */
  uint32_t tid;                 /* OS thread id; utime/stime are read from /proc for it */
  const char *name;             /* UTF-8, borrowed for the duration of the visit */
  ddmc_thread_status status;
  int daemon;
} ddmc_thread_info;

/* One stack frame, innermost first. Strings borrowed for the duration of the visit;
 * file may be NULL (sent as an empty string), line < 0 means unknown. signature (appended) is the
 * method's JVM descriptor, "(I)V", or NULL: the sampler names methods by class, name, signature
 * and file (STKL sends no signature). */
typedef struct ddmc_frame {
  const char *class_name;
  const char *method_name;
  const char *file;
  int32_t line;
  const char *signature;
} ddmc_frame;

/* Heaps a VM can describe. DDMC_HEAP_MANAGED is DDM heap id 1. */
typedef enum ddmc_heap_id {
  DDMC_HEAP_MANAGED = 1,
  DDMC_HEAP_NATIVE = 2
} ddmc_heap_id;

typedef struct ddmc_heap_info {
  uint64_t max_bytes;           /* -Xmx */
  uint64_t footprint;           /* current heap size: what a segment dump covers */
  uint64_t allocated_bytes;
  uint64_t allocated_objects;
  uintptr_t base;               /* segment addresses are sent relative to this */
} ddmc_heap_info;

/* Solidity and kind of a heap run, as the HPSG state byte encodes them. */
typedef enum ddmc_heap_solidity {
  DDMC_SOLID_FREE = 0,
  DDMC_SOLID_HARD = 1,
  DDMC_SOLID_SOFT = 2,
  DDMC_SOLID_WEAK = 3,
  DDMC_SOLID_PHANTOM = 4,
  DDMC_SOLID_FINALIZABLE = 5,
  DDMC_SOLID_SWEEP = 6
} ddmc_heap_solidity;

typedef enum ddmc_heap_kind {
  DDMC_KIND_OBJECT = 0,
  DDMC_KIND_CLASS = 1,
  DDMC_KIND_ARRAY_1 = 2,        /* boolean[], byte[] */
  DDMC_KIND_ARRAY_2 = 3,        /* char[], short[] */
  DDMC_KIND_ARRAY_4 = 4,        /* int[], float[], Object[] */
  DDMC_KIND_ARRAY_8 = 5,        /* long[], double[] */
  DDMC_KIND_UNKNOWN = 6,
  DDMC_KIND_NATIVE = 7
} ddmc_heap_kind;

/* Visitors the VM calls from inside its for_each_thread / thread_stack / walk_heap.
 * A non-zero return asks the VM to stop and return that value. */
typedef int (*ddmc_thread_visit_fn)(void *arg, const ddmc_thread_info *t);
typedef int (*ddmc_frame_visit_fn)(void *arg, const ddmc_frame *f);
/* Regions in address order. A region whose addr is not the previous region's end starts a new
 * segment. bytes is rounded up to 8-byte units by the encoder. Free space: DDMC_SOLID_FREE. */
typedef int (*ddmc_heap_visit_fn)(void *arg, uintptr_t addr, size_t bytes, ddmc_heap_kind kind,
                                  ddmc_heap_solidity solidity);

/* The VM's hooks (named ops wherever the library keeps them; the bridge is named bridge). Any
 * member may be NULL: the library then does without (a DDM request that
 * needs it gets a FAIL chunk, a JDWP command gets NOT_IMPLEMENTED). New members are only ever
 * appended; ddmc_vm_new passes sizeof so an older VM binary keeps working. */
typedef struct ddmc_vm_ops {
  /* The JDWP thread's first and last acts: a VM that tracks its threads registers it here
   * (Dalvik's "JDWP" thread). The library has named the thread "ddmc-jdwp" (pthread_setname_np)
   * just before; the hook may rename it. Thread: JDWP thread. */
  void (*jdwp_thread_start)(void *vm_data);
  void (*jdwp_thread_end)(void *vm_data);

  /* The first non-DDM packet of a connection arrived (DDM traffic alone never calls it), and its
   * counterpart: the connection closed or a DBGD chunk said the debugger left. */
  void (*debugger_attached)(void *vm_data);
  void (*debugger_detached)(void *vm_data);

  /* Any command set but 199. in/n is the packet body (borrowed). Write the reply body into reply
   * and return a JDWP error code (0 = success; non-zero sends a bare error reply).
   * NULL: every such command gets DDMC_JDWP_NOT_IMPLEMENTED. */
  int (*jdwp_command)(void *vm_data, uint8_t cmd_set, uint8_t cmd, const uint8_t *in, size_t n,
                      ddmc_buf *reply);

  /* End the VM with this status as the program's own exit would (System.exit: a JVM runs its
   * shutdown hooks; a VM with no shutdown work may flush its output and _exit). For DDM's EXIT
   * chunk, and for timeout= when no debugger came (status 1). It may return at once and exit from
   * a thread of its own (it must, if its shutdown stops the library and so waits for the JDWP
   * thread), or return having refused. Not the bridge's exit (bridge.h), which is JDWP's
   * VirtualMachine.Exit: a halt that never returns. Thread: the JDWP thread. */
  void (*exit)(void *vm_data, int32_t status);

  /* Visit every live thread once, under whatever lock keeps the list stable. Returns 0, or
   * the first non-zero visitor result. Also called by the library's sampler thread (SPSS), with
   * thread_stack, at the sampling interval. Locks: may run under the library's suspension lock
   * (bridge.h, "Locks"): it must not call into the library. */
  int (*for_each_thread)(void *vm_data, ddmc_thread_visit_fn fn, void *arg);

  /* Visit the frames of thread id, innermost first. DDMC_ENOENT for no such thread. */
  int (*thread_stack)(void *vm_data, uint32_t id, ddmc_frame_visit_fn fn, void *arg);

  /* Current numbers for heap (a ddmc_heap_id). Thread: JDWP thread or the GC thread. */
  int (*heap_info)(void *vm_data, int heap, ddmc_heap_info *out);

  /* Visit every region of heap (free space too) in address order, covering exactly
   * [base, base + footprint) for the managed heap. Called only from inside ddmc_gc_walk, on
   * the VM's GC thread with the world stopped: the visitor neither allocates from the VM
   * heap nor calls back into the VM. */
  int (*walk_heap)(void *vm_data, int heap, ddmc_heap_visit_fn fn, void *arg);

  /* HPGC: ask the VM to collect soon on a thread of its own; must not run the GC on the
   * calling (JDWP) thread's stack. Returns 0 if the request was accepted. */
  int (*request_gc)(void *vm_data);

  /* Library diagnostics. msg is a complete line without newline. Thread: any. */
  void (*log)(void *vm_data, ddmc_log_level level, const char *msg);

  /* ---- appended in 0.4 */
  /* The CPU time thread id has used, for THST's utime and stime where the library cannot read
   * them from /proc/self/task/TID/stat (the thread's tid is 0: JVM TI gives none, or another OS):
   * *user_ns and *system_ns in nanoseconds. A VM that knows only the total (JVM TI's
   * GetThreadCpuTime, pthread_getcpuclockid) gives it as *user_ns and 0 as *system_ns. Returns 0,
   * DDMC_ENOENT (no such thread: it may have ended since the walk) or DDMC_ENOTSUP. Thread: the
   * JDWP thread, after for_each_thread has returned (never inside its visit, so the op may take
   * the lock that walk holds); no library lock is held. NULL: those threads show 0. */
  int (*thread_cpu_time)(void *vm_data, uint32_t id, uint64_t *user_ns, uint64_t *system_ns);
} ddmc_vm_ops;

/* Who this VM is, for the HELO reply. Strings are UTF-8, copied by ddmc_vm_set_ident. */
typedef struct ddmc_vm_ident {
  const char *vm_name;          /* e.g. "minivm v0.1" (HELO vmIdent) */
  const char *abi;              /* e.g. "64-bit (x86_64)" */
  const char *jvm_flags;        /* e.g. "CheckJNI=false" */
  int native_debuggable;
  uint32_t pid;                 /* 0: getpid() */
} ddmc_vm_ident;

/* Creates the instance; nothing touches the network until ddmc_vm_start. *o, *ops and *mem are
 * copied; vm_data is borrowed until ddmc_vm_free. Returns 0, DDMC_EINVAL (o->transport is
 * NONE, NULL arguments), DDMC_ENOMEM, DDMC_EVERSION (header and library majors differ).
 * Thread: any (typically the VM's init thread). */
/* ABI: the macro passes the sizes of the structs the VM fills and the library reads, as the VM's
 * header has them (options, ops, ddmc_thread_info, ddmc_frame): a later library reads members
 * added after those sizes only when the VM's struct has them, and treats missing hooks as NULL. */
DDMC_EXTERN int ddmc_vm_new_(ddmc_vm **out, const ddmc_options *o, size_t options_size,
                             const ddmc_vm_ops *ops, size_t ops_size, const ddmc_allocator *mem,
                             void *vm_data, unsigned header_version, size_t thread_info_size,
                             size_t frame_size);
#define ddmc_vm_new(out, o, ops, mem, vm_data)                                                 \
  ddmc_vm_new_((out), (o), sizeof(ddmc_options), (ops), sizeof(ddmc_vm_ops), (mem), (vm_data), \
               DDMC_VERSION_HEX, sizeof(ddmc_thread_info), sizeof(ddmc_frame))

/* Before ddmc_vm_start. Returns 0, DDMC_ENOMEM, DDMC_ESTATE (already started). */
DDMC_EXTERN int ddmc_vm_set_ident(ddmc_vm *vm, const ddmc_vm_ident *ident);
/* Adds a FEAT entry (copied), before ddmc_vm_start. Returns 0, DDMC_ENOMEM, DDMC_ESTATE. */
DDMC_EXTERN int ddmc_vm_add_feature(ddmc_vm *vm, const char *name);

/* Binds (or prepares to dial or to reach adbd), then starts the JDWP thread and runs launch=.
 * With suspend=y it blocks until a peer has completed the handshake, ddmc_vm_stop is called from
 * another thread, or timeout= passes (DDMC_ETIMEDOUT: the VM should end, as the JDK's does). With
 * onthrow= or onuncaught= it only arms the trigger and returns: the service starts at the
 * matching throw (docs/jdwp-options.md). Returns 0, DDMC_EADDR (cannot bind: busy or bad host),
 * DDMC_ENOMEM, DDMC_EIO, DDMC_ESTATE (started twice), DDMC_ETIMEDOUT. Thread: VM init thread. */
DDMC_EXTERN int ddmc_vm_start(ddmc_vm *vm);

/* The port actually listened on (after the 8000-8040 scan), or 0. Thread: any. */
DDMC_EXTERN uint16_t ddmc_vm_port(const ddmc_vm *vm);

/* Wakes and joins the JDWP thread; closes sockets; 'disconnected' hooks have run on return.
 * Idempotent. Must not be called from the JDWP thread. */
DDMC_EXTERN void ddmc_vm_stop(ddmc_vm *vm);

/* Stops if needed, runs every handler's destroy, frees. NULL-safe. */
DDMC_EXTERN void ddmc_vm_free(ddmc_vm *vm);

DDMC_EXTERN void *ddmc_vm_data(const ddmc_vm *vm);

/* Thread: any; each is a single atomic read. */
DDMC_EXTERN int ddmc_vm_is_connected(const ddmc_vm *vm);     /* a peer completed the handshake */
DDMC_EXTERN int ddmc_vm_debugger_active(const ddmc_vm *vm);  /* a non-DDM packet arrived */
/* Milliseconds since the debugger's last request; 0 while one is being processed; -1 when no
 * debugger is active (Dalvik's VMDebug.lastDebuggerActivity). */
DDMC_EXTERN int64_t ddmc_vm_last_activity_ms(const ddmc_vm *vm);

typedef struct ddmc_stats {
  uint64_t sessions;            /* peers that completed the handshake */
  uint64_t packets_in, packets_out;
  uint64_t bytes_in, bytes_out; /* on the wire */
  uint64_t chunks_dropped;      /* unsolicited chunks refused with DDMC_EQFULL or lost at close */
  uint64_t bytes_queued_peak;
  uint64_t protocol_errors;     /* sessions ended for a protocol violation */
  uint64_t transfers_dropped;   /* large payloads (a trace for MPSE) dropped unsent or cut off:
                                   the session ended, the peer stopped reading for
                                   ddmc_options.stall_timeout_ms, or too many waited */
} ddmc_stats;
/* Thread: any. */
/* ABI: the macro passes the caller's sizeof(ddmc_stats); the library fills no more than that. */
DDMC_EXTERN void ddmc_vm_get_stats_(const ddmc_vm *vm, ddmc_stats *out, size_t size);
#define ddmc_vm_get_stats(vm, out) ddmc_vm_get_stats_((vm), (out), sizeof(ddmc_stats))

/* ---- Events from VM threads. Thread: any; none blocks on the network. Each copies its input and
 * returns 0 (queued), DDMC_ENOTCONN (no peer, or the peer has not asked for this kind of event:
 * a cheap early return), DDMC_EQFULL (dropped and counted), DDMC_ENOMEM. */

/* THCR / THDE / THNM, sent only while the peer has thread notification on (THEN). */
DDMC_EXTERN int ddmc_notify_thread_start(ddmc_vm *vm, uint32_t id, const char *name_utf8);
DDMC_EXTERN int ddmc_notify_thread_end(ddmc_vm *vm, uint32_t id);
DDMC_EXTERN int ddmc_notify_thread_name(ddmc_vm *vm, uint32_t id, const char *name_utf8);

/* Remembers the app name (for HELO) and sends APNM [name][user id][package] when connected.
 * pkg may be NULL (sent as ""). The name is stored even when the call returns DDMC_ENOTCONN. */
DDMC_EXTERN int ddmc_notify_app_name(ddmc_vm *vm, const char *name_utf8, const char *pkg_utf8,
                                     int32_t user_id);

/* Blocks only the caller until a debugger is active (a non-DDM packet), the timeout passes
 * (timeout_ms < 0: forever) or the VM stops. While it waits, WAIT [u1 0] is sent now if a DDM peer
 * is connected and again to each DDM peer that connects (and HELO replies are preceded by WAIT).
 * Returns 0, DDMC_ETIMEDOUT, DDMC_ESTATE (stopped). */
DDMC_EXTERN int ddmc_wait_for_debugger(ddmc_vm *vm, int timeout_ms);
/* Non-zero while some thread is inside ddmc_wait_for_debugger. Thread: any. */
DDMC_EXTERN int ddmc_vm_waiting_for_debugger(const ddmc_vm *vm);

/* ---- DDM's GC hooks (the heap segments). Thread: the VM's GC thread. The other hooks of a
 * collection (ddmc_gc_start, ddmc_gc_visit_roots, ddmc_gc_sweep, ddmc_gc_done) are events.h's. */

/* Non-zero if a heap segment dump (HPSG/HPSO/NHSG) is wanted at the next GC: a VM can skip work
 * it does only for the walk. One atomic read. */
DDMC_EXTERN int ddmc_gc_walk_wanted(const ddmc_vm *vm);
/* Call with the world stopped, once marking is done (or after sweeping): calls ops->walk_heap for
 * each heap with dumps enabled and queues HPST, HPSG|HPSO..., HPEN (and NHST/NHSG/NHEN). A dump is
 * queued whole or not at all (DDMC_EQFULL, counted). Never writes the socket. Returns 0 or an error. */
DDMC_EXTERN int ddmc_gc_walk(ddmc_vm *vm);

DDMC_END_DECLS

#endif
