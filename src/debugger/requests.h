/* SPDX-License-Identifier: Apache-2.0 */
/* Event requests: what EventRequest.Set made (cmd_event.c) and what VM threads match against
 * (events.c).
 *
 * The JDWP thread owns the list. After each change it publishes an immutable snapshot (an array
 * of requests, reference-counted); a VM thread reporting an event takes the snapshot with one
 * short lock (req.lock, a leaf held for a pointer copy and an increment) and matches without any
 * lock. The only state a match changes is atomic: a Count modifier's remaining count and the
 * request's expired flag. */
#ifndef DDMC_DBG_REQUESTS_H
#define DDMC_DBG_REQUESTS_H

#include "debugger/state.h"

/* Modifier kinds (EventRequest.Set). */
enum {
  DDMC__MOD_COUNT = 1,
  DDMC__MOD_CONDITIONAL = 2,
  DDMC__MOD_THREAD_ONLY = 3,
  DDMC__MOD_CLASS_ONLY = 4,
  DDMC__MOD_CLASS_MATCH = 5,
  DDMC__MOD_CLASS_EXCLUDE = 6,
  DDMC__MOD_LOCATION_ONLY = 7,
  DDMC__MOD_EXCEPTION_ONLY = 8,
  DDMC__MOD_FIELD_ONLY = 9,
  DDMC__MOD_STEP = 10,
  DDMC__MOD_INSTANCE_ONLY = 11,
  DDMC__MOD_SOURCE_NAME_MATCH = 12,
  DDMC__MOD_PLATFORM_THREADS_ONLY = 13
};

enum { DDMC__POLICY_NONE = 0, DDMC__POLICY_EVENT_THREAD = 1, DDMC__POLICY_ALL = 2 };

typedef struct ddmc__dbg_mod {
  uint8_t kind;
  atomic_int left;   /* Count: occurrences still to skip, plus one */
  uint32_t thread;   /* ThreadOnly, Step */
  /* ThreadOnly of a java.lang.Thread not started yet (thread 0): its object, and the thread once an
   * event showed which it is (0 until then); libjdwp accepts such a filter and JDI sends one. */
  ddmc_ref thread_obj;
  _Atomic uint32_t thread_seen;
  ddmc_class cls;    /* ClassOnly, ExceptionOnly (0: any), FieldOnly */
  uint32_t field;    /* FieldOnly */
  char *pattern;     /* ClassMatch, ClassExclude, SourceNameMatch */
  ddmc_location loc; /* LocationOnly */
  uint8_t caught, uncaught;
  ddmc_ref instance; /* InstanceOnly */
} ddmc__dbg_mod;

typedef struct ddmc__dbg_req {
  atomic_int refs; /* the list's reference plus one per snapshot holding it */
  int32_t id;
  uint8_t kind, policy;
  atomic_int expired; /* a Count ran out: never fires again */
  uint32_t nmods;
  ddmc__dbg_mod *mods;
  ddmc__dbg_step *step; /* SINGLE_STEP: where the step began */
  uint32_t step_thread;
  int bp_set;    /* BREAKPOINT: holds a reference on bp_loc */
  int watch_set; /* FIELD_ACCESS / MODIFICATION: holds a reference on watch_cls.watch_field */
  ddmc_class watch_cls;
  uint32_t watch_field;
  ddmc_location bp_loc;
  size_t bytes; /* what it holds, counted against reqs.budget */
} ddmc__dbg_req;

typedef struct ddmc__dbg_snap {
  atomic_int refs;
  uint32_t n;
  ddmc__dbg_req *r[];
} ddmc__dbg_snap;

struct ddmc__dbg_reqs {
  pthread_mutex_t lock; /* guards snap (the pointer) and taking a reference on it */
  ddmc__dbg_snap *snap DDMC_GUARDED_BY(lock);
  /* JDWP thread only: */
  ddmc__dbg_req **list;
  uint32_t n, cap;
  int32_t next_id;
  uint32_t method_events; /* METHOD_ENTRY / EXIT requests: the VM reports them while > 0 */
  uint32_t monitor_events; /* MONITOR_* requests: the VM reports them while > 0 */
  /* The bytes the list's requests hold, against ddmc_options.event_request_bytes: the count
   * cap alone let one peer pin hundreds of MiB in patterns. freed: given back since the last
   * trim, which the session's end does when it is large. */
  size_t bytes, budget, freed;
};

/* The current snapshot with a reference (NULL: no requests). Thread: any. */
ddmc__dbg_snap *ddmc__dbg_snap_get(ddmc__dbg *d);
void ddmc__dbg_snap_put(ddmc__dbg *d, ddmc__dbg_snap *s);
void ddmc__dbg_req_put(ddmc__dbg *d, ddmc__dbg_req *r);
/* Publishes the list as the new snapshot. Returns 0 or OUT_OF_MEMORY (the old one stays).
 * JDWP thread. */
int ddmc__dbg_reqs_publish(ddmc__dbg *d);

/* JDWP's restricted patterns: exact, "*suffix" or "prefix*". */
int ddmc__dbg_pattern_match(const char *pattern, const char *name);

#endif
