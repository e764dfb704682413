/* SPDX-License-Identifier: Apache-2.0 */
/* struct ddmc_vm and the calls between the library's parts.
 *
 * Threads: the VM's threads call the public functions; the JDWP thread (jdwp/thread.c) owns the
 * sockets and runs every handler and hook. State read by VM threads is atomic. The two locks
 * (reg.lock, state_lock) never nest, and no event path of a VM thread takes either
 * (src/jdwp/README.md).
 * No ops hook or handler is called with a ddmc lock held, but for the bridge ops whose comment
 * says "Locks:" (bridge.h) and vm.h's for_each_thread (under a suspension lock when the debugger
 * suspends every thread); lock.h counts the locks, bridge_check.h checks the bridge's. */
#ifndef DDMC_VM_INT_H
#define DDMC_VM_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "chunks/heap_state.h"
#include "chunks/thread_state.h"
#include "bridge_check.h"
#include "common.h"
#include "hub/hub.h"
#include "log.h"
#include "jdwp/service.h"
#include "profile/prof_state.h"
#include "send/ring.h"
#include "vmctl/switches.h"

typedef struct ddmc__chunk_handler ddmc__chunk_handler;

/* Name, package and user id for HELO; one allocation, strings inside it. */
typedef struct ddmc__appinfo {
  const char *name, *pkg;
  int32_t user_id;
} ddmc__appinfo;
typedef struct ddmc__transport ddmc__transport;

typedef struct ddmc__registry {
  pthread_mutex_t lock;
  pthread_cond_t idle;        /* signalled when 'current' returns */
  ddmc__chunk_handler *list DDMC_GUARDED_BY(lock);
  ddmc__chunk_handler *current DDMC_GUARDED_BY(lock); /* the entry whose hook the JDWP thread is in */
} ddmc__registry;

/* Small packets from VM threads go through a ring of this size (or opt.sendq_bytes when smaller);
 * bigger payloads are queued outside it, still within opt.sendq_bytes. */
#define DDMC__RING_BYTES ((size_t)1 << 20)

struct ddmc_vm {
  ddmc__mem mem;
  ddmc__logger log;
  ddmc_options opt;
  ddmc_vm_ops ops;
  void *vm_data;
  const ddmc__transport *transport;

  /* Identity for HELO/FEAT: written before start, read-only after. */
  char *vm_name, *abi, *jvm_flags;
  int native_debuggable;
  uint32_t pid;
  char **features;
  int nfeatures;

  /* The app name, lock-free: any thread swaps a new record into app_pending (freeing the one it
   * displaced, which the JDWP thread never took); the JDWP thread takes it into app_current. */
  _Atomic(struct ddmc__appinfo *) app_pending;
  struct ddmc__appinfo *app_current; /* JDWP thread only */
  ddmc_buf helo_cache;        /* JDWP thread only: the HELO reply body for app_current */
  int helo_cache_valid;

  /* Lifecycle. */
  atomic_int started, stopping;
  atomic_int timed_out;       /* timeout=: no peer came in time; the JDWP thread has ended */
  atomic_int deferred;        /* onthrow= / onuncaught=: armed, the service not started yet */
  char onthrow_sig[260];      /* onthrow='s class as a signature ("Ljava/lang/Foo;"); set before armed */
  pthread_t thread;
  int thread_running;
  int transport_down;
  int listen_fd;              /* transport-owned: listening socket or adb control socket */
  atomic_int port;
  int wake_fd;                /* eventfd in every poll set */
  atomic_int wake_pending;    /* one eventfd write per JDWP-thread wake-up */

  /* Session state, visible to every thread. */
  atomic_int connected;       /* some session completed its handshake: unsolicited chunks may go out */
  atomic_int ddm_active;      /* some live session sent a DDM packet */
  atomic_int debugger_active; /* the debugger seat's session sent a non-DDM packet */
  atomic_llong last_activity; /* ms timestamp of the last debugger request; 0 = in progress */
  atomic_uint next_id;        /* ids for VM-originated packets */
  atomic_uint session_no;     /* the debugger seat's session number (docs/sessions.md), 0: free */
  atomic_uint sessions_begun;

  /* Chunk-family state, each owned by its own file. */
  ddmc__chunk_thread_state thr;
  ddmc__chunk_heap_state heap;
  ddmc__prof prof;            /* profiling (src/profile) */
  ddmc__ctl ctl;              /* the VM's switches, shared by every client (src/vmctl) */

  /* suspend=y and wait_for_debugger sleep here. */
  pthread_mutex_t state_lock;
  pthread_cond_t state_cond;
  int waiters DDMC_GUARDED_BY(state_lock);
  atomic_int waiting;         /* mirrors waiters > 0 for lock-free readers */

  ddmc__send_ring ring;       /* the send path (send/send.h); DDMC__RING_BYTES or sendq_bytes */
  atomic_size_t ext_bytes;    /* queued in batches and streams, charged against opt.sendq_bytes */
  ddmc__registry reg;

  /* Services (jdwp/service.h): written before start, read-only after. */
  ddmc__jdwp_service services[DDMC__MAX_SERVICES];
  int nservices;
  /* The debugger's state (debugger/glue.h), NULL until ddmc_dbg_enable, and how to free it. */
  _Atomic(struct ddmc__dbg *) dbg;
  void (*dbg_destroy)(struct ddmc__dbg *d);
  /* JVM TI (src/jvmti): its state, NULL until an agent loads. */
  _Atomic(struct ddmc__jvmti *) jvmti;
  /* The VM bridge (bridge.h), for every client: written by ddmc_vm_set_bridge before start. */
  ddmc_vm_bridge bridge;
  void *bridge_data;
  int has_bridge;
#ifdef DDMC__LOCK_CHECK
  ddmc__bridge_check bridge_check; /* the VM's own table, behind the checking shims in bridge */
#endif
  ddmc__hub hub; /* the event hub (hub/hub.h) */

  /* ddmc__send_flush: a flusher takes a number from flush_seq; the JDWP thread stores in
   * flushed_seq the number it read before a drain that left nothing unsent. */
  atomic_uint flush_seq, flushed_seq;

  /* Statistics. */
  atomic_uint_fast64_t st_sessions, st_packets_in, st_packets_out, st_bytes_in, st_bytes_out,
      st_protocol_errors, st_transfers_dropped;
};

/* The bridge ddmc_vm_set_bridge installed, or NULL. Read-only once the VM starts. */
static inline const ddmc_vm_bridge *ddmc__bridge(const ddmc_vm *vm) { return vm->has_bridge ? &vm->bridge : NULL; }

/* ---- transports (jdwp/transport_*.c): how the JDWP thread gets a peer socket. */
struct ddmc__transport {
  const char *name;
  /* On the VM init thread, in ddmc_vm_start: bind, or check what can be checked early. */
  int (*prepare)(ddmc_vm *vm);
  /* On the JDWP thread: block until a peer socket is ready (or stopping: return -1). The fd
   * returned is non-blocking and close-on-exec. */
  int (*acquire)(ddmc_vm *vm);
  /* An fd the session loop also polls while sessions run (-1: none); when readable, call
   * accept_extra: the next peer's socket (non-blocking, close-on-exec), or -1 when there was
   * none after all. The JDWP thread serves it beside the others or closes it (max_sessions). */
  int (*extra_fd)(ddmc_vm *vm);
  int (*accept_extra)(ddmc_vm *vm);
  /* The session with the peer ended (the JDWP thread closed its fd). */
  void (*session_ended)(ddmc_vm *vm);
  void (*shutdown)(ddmc_vm *vm);
};

extern const ddmc__transport ddmc__jdwp_transport_socket;
extern const ddmc__transport ddmc__jdwp_transport_adb;

/* ---- wake-ups (wake.c) */
/* Sleeps on the wake fd until ms pass or ddmc_vm_stop; returns non-zero when stopping. */
int ddmc__sleep_interruptible(ddmc_vm *vm, int ms);
/* Blocks until fd is readable (or hung up) or the wake fd fires. Returns 1 when fd is ready,
 * 0 when woken, stopping or interrupted: the caller loops. JDWP thread. */
int ddmc__wait_readable(ddmc_vm *vm, int fd);
/* The same, giving up at deadline (ddmc__now_ms; -1: never): then returns 0 as well. */
int ddmc__wait_readable_until(ddmc_vm *vm, int fd, int64_t deadline);
/* Consumes a wake-up and clears wake_pending. */
void ddmc__drain_wake(ddmc_vm *vm);
void ddmc__wake(ddmc_vm *vm);
/* Always writes the eventfd (ddmc_vm_stop: a pending flag must not swallow the stop). */
void ddmc__wake_force(ddmc_vm *vm);

/* ---- logging (log.c): rate-limited, through ops.log */
void ddmc__log(ddmc_vm *vm, ddmc_log_level lvl, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* ---- the JDWP thread (jdwp/thread.c) */
void *ddmc__jdwp_thread_main(void *arg);
/* launch= (jdwp/start.c): runs the command with the transport and address; 0 or an error
 * (logged). Thread: whoever starts the debug service, after the transport is prepared. */
int ddmc__jdwp_launch(ddmc_vm *vm);
/* Starts the debug service: the transport, the JDWP thread, launch=, and with suspend=y waits for
 * a peer's handshake. Returns 0, DDMC_ETIMEDOUT (suspend=y, timeout= passed) or the transport's
 * error. Thread: the VM's (ddmc_vm_start, or the thread whose throw matched onthrow=). (jdwp/start.c) */
int ddmc__jdwp_begin(ddmc_vm *vm);
/* onthrow= / onuncaught=: subscribes the trigger (jdwp/trigger.c) instead of starting now. */
int ddmc__jdwp_arm(ddmc_vm *vm);

/* ---- handler registry (chunks/registry.c) */
int ddmc__chunk_registry_init(ddmc__registry *r);
void ddmc__chunk_registry_destroy(ddmc_vm *vm);
/* Dispatches one request chunk to its handler (JDWP thread). Returns the handler's result, or
 * DDMC_ENOENT when no handler takes the type. */
int ddmc__chunk_registry_dispatch(ddmc_vm *vm, const ddmc_chunk *req, uint32_t *reply_type, ddmc_buf *reply);
void ddmc__chunk_registry_connected(ddmc_vm *vm);
void ddmc__chunk_registry_disconnected(ddmc_vm *vm);

/* ---- app name (chunks/appname.c) */
/* The latest record, for HELO (JDWP thread). Never NULL after ddmc_vm_new. */
const ddmc__appinfo *ddmc__chunk_appinfo_current(ddmc_vm *vm);
void ddmc__chunk_appinfo_free_all(ddmc_vm *vm);
/* Stores a copy; returns 0 or DDMC_ENOMEM. */
int ddmc__chunk_appinfo_set(ddmc_vm *vm, const char *name, const char *pkg, int32_t user_id);

/* ---- ZLIB (chunks/zlib.c). */
#define DDMC__CHUNK_ZLIB DDMC_FOURCC('Z', 'L', 'I', 'B')
/* Inflates a ZLIB chunk payload into out (reset first). Returns 0 and the inner type, or
 * DDMC_EPROTO / DDMC_ETOOBIG / DDMC_ENOMEM. */
int ddmc__chunk_zlib_unwrap(const ddmc__mem *mem, const uint8_t *p, size_t n, size_t cap, uint32_t *inner_type,
                            ddmc_buf *out);
/* Compresses [type][payload] into a ZLIB chunk payload in out. Returns 0 or an error. */
int ddmc__chunk_zlib_wrap(uint32_t type, const uint8_t *p, size_t n, ddmc_buf *out);

#endif
