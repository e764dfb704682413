/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer: the handshake and the JDWP framer on arbitrary bytes, fed in pieces whose sizes
 * come from the input too, so splits are explored along with content. */
#include <stdint.h>
#include <string.h>

#include "jdwp/framer.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static ddmc__mem mem;
  static int init;
  if (!init) {
    ddmc__mem_init(&mem, NULL);
    init = 1;
  }
  if (size < 1) return 0;
  size_t step = (size_t)(data[0] % 32) + 1;
  data++;
  size--;
  ddmc__jdwp_framer f;
  ddmc__jdwp_framer_init(&f, &mem, 1 << 16);
  for (size_t off = 0; off < size;) {
    size_t n = size - off < step ? size - off : step;
    if (ddmc__jdwp_framer_feed(&f, data + off, n) != 0) break;
    off += n;
    int rc;
    ddmc__jdwp_packet p;
    while ((rc = ddmc__jdwp_framer_next(&f, &p)) > 0) {
      if (rc == DDMC__FRAME_PACKET) {
        /* touch every byte the framer says is there */
        volatile uint8_t sink = 0;
        for (size_t i = 0; i < p.body_len; i++) sink ^= p.body[i];
        (void)sink;
        if (p.len < DDMC__HEADER_LEN || p.body_len != p.len - DDMC__HEADER_LEN) __builtin_trap();
      }
    }
    if (rc < 0) break;
  }
  ddmc__jdwp_framer_free(&f);
  return 0;
}
