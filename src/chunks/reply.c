/* SPDX-License-Identifier: Apache-2.0 */
/* Helpers every chunk handler (and the dispatcher) uses, in a file of their own so that using
 * them pulls in no chunk family.
 *   FAIL [u4 code][u4 n][UTF-16 message]   a handler's error, as the reply to its request */
#include "common.h"

#define CHUNK_FAIL DDMC_FOURCC('F', 'A', 'I', 'L')

char *ddmc_chunk_type_str(ddmc_chunk_type t, char out[5]) {
  for (int i = 0; i < 4; i++) {
    unsigned char c = (unsigned char)(t >> (24 - 8 * i));
    out[i] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
  }
  out[4] = '\0';
  return out;
}

int ddmc_reply_fail(ddmc_buf *reply, ddmc_chunk_type *reply_type, int32_t code, const char *msg) {
  if (reply == NULL || reply_type == NULL) return DDMC_EINVAL;
  *reply_type = CHUNK_FAIL;
  ddmc_buf_put_u32(reply, (uint32_t)code);
  ddmc_buf_put_str(reply, msg ? msg : "");
  return ddmc_buf_error(reply);
}

