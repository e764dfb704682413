/* SPDX-License-Identifier: Apache-2.0 */
/* Clocks (declared in common.h). Own file so every layer can read the time without reaching
 * into the VM object's code. */
#include <time.h>

#include "common.h"

int64_t ddmc__now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t ddmc__wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
