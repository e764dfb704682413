/* SPDX-License-Identifier: Apache-2.0 */
/* libFuzzer: the -agentlib:jdwp= option parser. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ddmc/ddmc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  if (s == NULL) return 0;
  memcpy(s, data, size);
  s[size] = '\0';
  ddmc_options o;
  ddmc_options_init(&o);
  char err[128];
  int rc = ddmc_options_parse(&o, s, err, sizeof(err));
  if (rc != 0 && rc != DDMC_EINVAL) __builtin_trap();
  if (rc == 0 && o.transport == DDMC_TRANSPORT_NONE) __builtin_trap();
  if (strlen(err) >= sizeof(err)) __builtin_trap();
  /* Every failure says why, on one line; a success leaves a terminated host. */
  if (rc != 0 && (err[0] == '\0' || strchr(err, '\n') != NULL)) __builtin_trap();
  if (rc == 0 && memchr(o.host, '\0', sizeof(o.host)) == NULL) __builtin_trap();
  free(s);
  return 0;
}
