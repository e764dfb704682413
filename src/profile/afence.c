/* SPDX-License-Identifier: Apache-2.0 */
/* See afence.h. */
#include "profile/afence.h"

#if defined(__linux__)
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#endif

atomic_int ddmc__prof_afence_on;
static atomic_int tried;

void ddmc__prof_afence_init(void) {
  if (atomic_exchange(&tried, 1)) return;
#if defined(__linux__) && defined(SYS_membarrier)
  int cmds = (int)syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  if (cmds < 0 || !(cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED)) return;
  if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) != 0) return;
  atomic_store(&ddmc__prof_afence_on, 1);
#endif
}

void ddmc__prof_afence_heavy(void) {
  atomic_thread_fence(memory_order_seq_cst);
#if defined(__linux__) && defined(SYS_membarrier)
  if (!atomic_load(&ddmc__prof_afence_on)) return;
  /* Once registered the command fails only when the kernel cannot allocate a CPU mask. Retried a
   * few times a millisecond apart; the sleeps alone would drain any store buffer in practice, and
   * are all that is left if the kernel keeps failing. */
  for (int i = 0; i < 8; i++) {
    if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) return;
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
  }
#endif
}
