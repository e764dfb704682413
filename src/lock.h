/* SPDX-License-Identifier: Apache-2.0 */
/* The library's mutexes. Every lock in src/ is taken through these, so that a debug build knows
 * which library locks the calling thread holds when it calls into the VM: each bridge op states
 * the locks it may be called under (include/ddmc/bridge.h, "Locks:"), and bridge_check.c makes
 * that statement an assertion (a test fails the day the code and the comment part).
 *
 * A lock with a role (below) is one a bridge op may be called under; every other lock is
 * DDMC__LOCK_LEAF: no op is ever called while it is held. Release builds (NDEBUG) count nothing. */
#ifndef DDMC_LOCK_H
#define DDMC_LOCK_H

#include <pthread.h>

enum {
  DDMC__LOCK_LEAF = 0,     /* no bridge op under it */
  DDMC__LOCK_SWITCHES = 1, /* vmctl's switch lock: set_method_events, set_breakpoint, ... */
  DDMC__LOCK_SUSPEND = 2,  /* the debugger's and JVM TI's suspension locks: suspend/resume_thread */
  DDMC__LOCK_NROLES = 3
};
#define DDMC__LOCKS(role) (1u << (role)) /* a set of roles, for ddmc__locks_only */

#ifndef NDEBUG
#define DDMC__LOCK_CHECK 1
void ddmc__lock_role(pthread_mutex_t *m, int role);
void ddmc__unlock_role(pthread_mutex_t *m, int role);
/* Non-zero when every library lock the calling thread holds has a role in the set `allowed`. */
int ddmc__locks_only(unsigned allowed);
unsigned ddmc__locks_held(int role); /* the calling thread's count of that role */
#else
static inline void ddmc__lock_role(pthread_mutex_t *m, int role) {
  (void)role;
  pthread_mutex_lock(m);
}
static inline void ddmc__unlock_role(pthread_mutex_t *m, int role) {
  (void)role;
  pthread_mutex_unlock(m);
}
#endif

static inline void ddmc__lock(pthread_mutex_t *m) { ddmc__lock_role(m, DDMC__LOCK_LEAF); }
static inline void ddmc__unlock(pthread_mutex_t *m) { ddmc__unlock_role(m, DDMC__LOCK_LEAF); }

#endif
