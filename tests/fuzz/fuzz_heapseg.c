/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer: the host's heap segment decoder (what `ddmc heap --bitmap` runs on VM output). The
 * decoded units must add up to what the header claims whenever the decoder accepts a chunk. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "heapseg.h"

static int count(void *arg, uint32_t off, uint32_t units, uint8_t state) {
  (void)off;
  (void)state;
  *(uint64_t *)arg += units;
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  /* an exact-size copy so any over-read is caught */
  uint8_t *copy = malloc(size ? size : 1);
  if (copy == NULL) return 0;
  memcpy(copy, data, size);
  ddmc_host_heapseg seg;
  if (ddmc_host_heapseg_parse(copy, size, &seg) == 0) {
    uint64_t total = 0;
    if (ddmc_host_heapseg_decode(&seg, count, &total) == 0 && total != seg.units) __builtin_trap();
  }
  free(copy);
  return 0;
}
