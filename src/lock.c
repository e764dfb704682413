/* SPDX-License-Identifier: Apache-2.0 */
/* Per-thread counts of the library locks held, by role (lock.h). A pthread_cond_wait keeps its
 * mutex counted: the thread holds it again before it can call anything. */
#include "lock.h"

#ifdef DDMC__LOCK_CHECK
static _Thread_local unsigned held[DDMC__LOCK_NROLES];

void ddmc__lock_role(pthread_mutex_t *m, int role) {
  pthread_mutex_lock(m);
  held[role]++;
}

void ddmc__unlock_role(pthread_mutex_t *m, int role) {
  held[role]--;
  pthread_mutex_unlock(m);
}

int ddmc__locks_only(unsigned allowed) {
  for (int r = 0; r < DDMC__LOCK_NROLES; r++)
    if (held[r] != 0 && (allowed & DDMC__LOCKS(r)) == 0) return 0;
  return 1;
}

unsigned ddmc__locks_held(int role) { return held[role]; }
#else
typedef int ddmc__lock_check_off; /* ISO C: a translation unit is never empty */
#endif
