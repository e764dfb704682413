/* SPDX-License-Identifier: Apache-2.0 */
/* Error strings and version queries, generated from DDMC_ERRNO_MAP so they cannot drift. */
#include "common.h"

const char *ddmc_strerror(int err) {
  switch (err) {
    case DDMC_OK: return "success";
#define XX(name, msg) \
  case DDMC_##name:   \
    return msg;
    DDMC_ERRNO_MAP(XX)
#undef XX
    default: return "unknown error";
  }
}

const char *ddmc_err_name(int err) {
  switch (err) {
    case DDMC_OK: return "OK";
#define XX(name, msg) \
  case DDMC_##name:   \
    return #name;
    DDMC_ERRNO_MAP(XX)
#undef XX
    default: return "UNKNOWN";
  }
}

unsigned ddmc_version(void) { return DDMC_VERSION_HEX; }

const char *ddmc_version_string(void) { return DDMC_VERSION_STRING; }
