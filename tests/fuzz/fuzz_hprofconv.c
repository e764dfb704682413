/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer: the conversion of a VM's own hprof into Android's (src/profile/hprof_conv.c), on
 * whatever file a VM's dumper might leave. It must refuse cleanly or give exactly the length its
 * first pass promised, whatever the input and the pieces it comes in. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "profile/hprof_conv.h"
#include "util/memsrc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  uint8_t *copy = malloc(size ? size : 1); /* an exact-size copy so any over-read is caught */
  if (copy == NULL) return 0;
  memcpy(copy, data, size);
  static ddmc__mem mem;
  ddmc__mem_init(&mem, NULL);
  memsrc s = {copy, size, 0, size > 0 ? 1 + copy[size - 1] % 97 : 1};
  ddmc__prof_hpconv_input in = memsrc_input(&s);
  ddmc__prof_hpconv *c;
  uint64_t len;
  char msg[200];
  if (ddmc__prof_hpconv_open(&mem, &in, &c, &len, msg, sizeof msg) == 0) {
    uint8_t buf[4096];
    uint64_t got = 0;
    ssize_t k;
    while ((k = ddmc__prof_hpconv_read(c, buf, 1 + got % sizeof buf)) > 0) got += (uint64_t)k;
    if (k == 0 && got != len) __builtin_trap();
    if (got > len) __builtin_trap();
    ddmc__prof_hpconv_free(c);
  }
  free(copy);
  return 0;
}
