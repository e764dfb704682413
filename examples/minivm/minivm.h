/* SPDX-License-Identifier: Apache-2.0 */
/* minivm core API: what main.c, ddm_bridge.c and the unit tests use.
 *
 * minivm_core knows nothing about libddmc. Everything a VM bridge needs goes through this
 * header: hooks the VM calls at thread start/end/rename, app-name changes, wait-for-debugger and
 * the two GC phases, plus read-only enumeration of threads, stacks and both heaps. The bridge
 * (ddm_bridge.c) adapts these to ddmc_vm_ops; the tests call them directly. */
#ifndef MINIVM_H
#define MINIVM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct mvm_vm mvm_vm;
typedef struct mvm_thread mvm_thread;

/* Thread status. The numbers are Dalvik's ThreadStatus codes, which DDM's THST carries, so a
 * bridge can pass them through; the bridge still maps them explicitly. */
typedef enum mvm_status {
  MVM_TS_ZOMBIE = 0,
  MVM_TS_RUNNING = 1,       /* executing bytecode (or, for VM-internal threads, working) */
  MVM_TS_SLEEPING = 2,      /* sleep, or wait with a timeout */
  MVM_TS_MONITOR = 3,       /* blocked in monitor-enter (or re-acquiring after wait) */
  MVM_TS_WAIT = 4,          /* wait without a timeout */
  MVM_TS_INITIALIZING = 5,  /* new thread setting itself up */
  MVM_TS_STARTING = 6,      /* created by its parent, not yet running */
  MVM_TS_NATIVE = 7,        /* inside the native instruction */
  MVM_TS_VMWAIT = 8,        /* waiting on a VM resource: GC, join, the debugger */
  MVM_TS_SUSPENDED = 9      /* parked at a safepoint while the world is stopped */
} mvm_status;

typedef struct mvm_config {
  size_t heap_max;          /* -Xmx: the arena reserved; 0 = 16 MiB */
  size_t heap_start;        /* -Xms: initial footprint; 0 = min(2 MiB, heap_max) */
  int verbose_gc;           /* one line per collection on stderr */
} mvm_config;

/* Calls out of the VM. Any member may be NULL. ud is passed back. */
typedef struct mvm_hooks {
  void *ud;
  /* On the new thread, after it is in the thread list (status INITIALIZING), before it runs. */
  void (*thread_start)(void *ud, uint32_t id, const char *name);
  /* On the dying thread, after it left the thread list. */
  void (*thread_end)(void *ud, uint32_t id);
  void (*thread_name)(void *ud, uint32_t id, const char *name);
  void (*app_name)(void *ud, const char *name);
  /* Blocks until a debugger is active, or until the shutdown hook has run; the calling thread
   * is in VMWAIT meanwhile. Called once per wait-for-debugger: libddmc sends WAIT per call. */
  void (*wait_for_debugger)(void *ud);
  /* The VM is shutting down (exit instruction, mvm_vm_free): a wait_for_debugger in progress or
   * to come must return. Any thread, no VM lock held. */
  void (*shutdown)(void *ud);
  /* On the GC thread with the world stopped: after mark (the heap walk then shows what the sweep
   * will leave), and after the whole collection. */
  void (*gc_marked)(void *ud);
  void (*gc_done)(void *ud);
  /* On the GC thread with the world stopped (appended, for JVM TI): before marking; and after
   * marking (after gc_marked), before anything is freed, with is_live, which says whether the
   * collector keeps an object (ref is never moved by minivm). A weak table (JVM TI's tags) drops
   * what is not live. Neither may allocate from the heap. */
  void (*gc_start)(void *ud);
  void (*gc_sweep)(void *ud, int (*is_live)(void *arg, uint64_t *ref), void *arg);
  /* The program's own DDM chunk handlers (appended; the ddm-* instructions, README.md "DDM chunk
   * handlers"). Each runs on the program's thread; NULL: the instruction reports "no DDM".
   * ddm_register: 0, 1 (a type of the VM's own), -1 (no DDM, or an error).
   * ddm_accept: waits up to ms (the thread in VMWAIT) for the next request (returns 1: *type,
   * *data malloc'd for the caller to free, *len) or session event (returns 2: *type 1 connected,
   * 2 disconnected); 0 on timeout, -1 at shutdown.
   * ddm_reply: answers the request the last accept gave (kind 0 the empty reply, 1 the chunk
   * type / data, 2 FAIL with msg); -1 if it is no longer waited for (timed out).
   * ddm_send: an unsolicited chunk; 0 or -1 (no peer, dropped). */
  int (*ddm_register)(void *ud, uint32_t type);
  int (*ddm_accept)(void *ud, int64_t ms, uint32_t *type, uint8_t **data, size_t *len);
  int (*ddm_reply)(void *ud, int kind, uint32_t type, const uint8_t *data, size_t len, const char *msg);
  int (*ddm_send)(void *ud, uint32_t type, const uint8_t *data, size_t len);
} mvm_hooks;

/* Allocation tracking. While *flag is non-zero, every allocation (object, array, the String and
 * the byte[] of a string, class object) calls fn on the allocating thread right after it, with
 * the new reference and its size; a thread outside the interpreter reports thread 0. The flag
 * belongs to the caller (libddmc's, through the bridge) and must outlive the VM; it is read with
 * one relaxed load per allocation, the whole cost while it is 0. fn must not allocate from the
 * heap or block: the new object is not reachable yet. Call before the program runs. */
typedef struct mvm_alloc_info {
  uint32_t thread;
  uint64_t obj;
  size_t bytes;             /* the block, header included */
  int by_vm;                /* the VM made it (a string, an exception, a class object, a thread's
                               objects), not the program's bytecode (JVM TI's VMObjectAlloc) */
} mvm_alloc_info;
void mvm_set_alloc_hook(mvm_vm *vm, const int *flag, void (*fn)(void *ud, const mvm_alloc_info *a), void *ud);

/* "64m", "512k", "1g", "1048576" -> bytes. Returns 0 or -1 (junk, overflow, zero). */
int mvm_parse_size(const char *s, size_t *out);

/* Reserves the heap and starts the GC daemon thread. NULL on failure with a message in err. */
mvm_vm *mvm_vm_new(const mvm_config *cfg, const mvm_hooks *hooks, char *err, size_t errlen);
/* Asks every interpreter thread to stop at its next safepoint or wake-up, waits for them, stops
 * the GC daemon and frees everything. Threads attached with mvm_thread_attach must be detached. */
void mvm_vm_free(mvm_vm *vm);

/* Assembles and links a program. Returns 0, or -1 with "file:line: message" in err. */
int mvm_load_file(mvm_vm *vm, const char *path, char *err, size_t errlen);
int mvm_load_text(mvm_vm *vm, const char *filename, const char *text, char *err, size_t errlen);

/* Creates VM thread 1 "main" (its java.lang.Thread in group "main") without running it, so a
 * debugger that attaches before the program starts sees it, stopped (status STARTING). Called by
 * mvm_run_main if not before. Returns 0, or -1 (no main method, out of memory: logged). */
int mvm_prepare_main(mvm_vm *vm);
/* Runs main on the calling thread as VM thread 1 "main", then waits for every non-daemon thread.
 * Before main, each class's "<clinit>" (a method of that name with no parameter), in the order
 * the classes were declared.
 * argv become main's String[] parameter when main declares one. Returns the exit status: the
 * status of an exit instruction, 1 if main (or a <clinit>) died of an uncaught exception (its
 * "Exception in thread" trace is on stderr) or of an error, else 0. */
int mvm_run_main(mvm_vm *vm, int argc, char **argv);

/* The process status for a requested exit status: 0-255 as it is, anything else 1. A status is
 * 8 bits, so 256 or INT_MIN would otherwise leave as 0, success. For the exit instruction and
 * for an exit a debugger asks for (DDM EXIT). */
int mvm_exit_status(int64_t requested);

/* ---- Threads seen from outside. */
typedef struct mvm_thread_info {
  uint32_t id;
  pid_t tid;
  const char *name;         /* borrowed for the visit */
  mvm_status status;
  int daemon;
} mvm_thread_info;
typedef struct mvm_frame_info {
  const char *class_name, *method_name, *file;
  int line;
  const char *sig;          /* the method's JNI descriptor, "(I)V" */
} mvm_frame_info;

/* Visits every thread under the thread-list lock; returns 0 or the first non-zero visitor result. */
int mvm_for_each_thread(mvm_vm *vm, int (*fn)(void *arg, const mvm_thread_info *t), void *arg);
/* Frames of thread id, innermost first, from a snapshot taken under the thread's stack lock.
 * Returns 0, the first non-zero visitor result, or -1 if there is no such thread. */
/* CPU time (user + system) thread id has used, in ns; -1 for no such thread. Thread: any. */
int mvm_thread_cpu_ns(mvm_vm *vm, uint32_t id, uint64_t *ns);
int mvm_thread_stack(mvm_vm *vm, uint32_t id, int (*fn)(void *arg, const mvm_frame_info *f),
                     void *arg);
/* Registers a thread the VM did not start (the JDWP thread) so it shows up in the list. */
mvm_thread *mvm_thread_attach(mvm_vm *vm, const char *name, int daemon, mvm_status status);
void mvm_thread_detach(mvm_thread *t);
/* Status of an attached (non-interpreter) thread; display only. */
void mvm_thread_set_display_status(mvm_thread *t, mvm_status s);
/* The VM thread the caller runs as, or NULL. */
mvm_thread *mvm_thread_self(void);

/* ---- Heaps. */
typedef struct mvm_heap_stats {
  uint64_t max_bytes, footprint, allocated_bytes, allocated_objects;
  uintptr_t base;
  uint64_t gc_count;
  uint64_t free_blocks, largest_free;  /* free-list shape: fragmentation made visible */
} mvm_heap_stats;
void mvm_heap_get_stats(mvm_vm *vm, mvm_heap_stats *out);
/* minivm's own malloc'd structures: max_bytes 0, footprint = allocated_bytes, base = lowest block. */
void mvm_native_get_stats(mvm_vm *vm, mvm_heap_stats *out);

typedef enum mvm_region_kind {
  MVM_RK_FREE, MVM_RK_OBJECT, MVM_RK_CLASS, MVM_RK_ARRAY_1, MVM_RK_ARRAY_2, MVM_RK_ARRAY_4,
  MVM_RK_ARRAY_8, MVM_RK_NATIVE
} mvm_region_kind;
typedef int (*mvm_region_fn)(void *arg, uintptr_t addr, size_t bytes, mvm_region_kind kind);
/* Every block of [base, base + footprint) in address order, one call per block, nothing merged.
 * During the gc_marked hook unmarked objects are reported free. Call with the world stopped
 * (from the gc_marked hook) or when no interpreter thread runs. */
int mvm_heap_walk(mvm_vm *vm, mvm_region_fn fn, void *arg);
/* Every tracked native block in address order (kind NATIVE). */
int mvm_native_walk(mvm_vm *vm, mvm_region_fn fn, void *arg);

typedef enum mvm_gc_reason { MVM_GC_ALLOC, MVM_GC_EXPLICIT, MVM_GC_DEBUGGER } mvm_gc_reason;
/* Hands a collection to the GC daemon. wait=0 returns at once (the debugger's request); wait=1
 * blocks until a collection that started after the call has finished, in VMWAIT if the caller is
 * an interpreter thread. Returns 0, or -1 when the VM is shutting down. */
int mvm_gc_request(mvm_vm *vm, mvm_gc_reason why, int wait);

#endif
