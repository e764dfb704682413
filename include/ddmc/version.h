/* SPDX-License-Identifier: Apache-2.0 */
/* libddmc version. CMake reads the three numbers below with a regex: keep the form.
 * docs/versioning.md says what a change of each number promises about the ABI. */
#ifndef DDMC_VERSION_H
#define DDMC_VERSION_H

#define DDMC_VERSION_MAJOR 0
#define DDMC_VERSION_MINOR 3
#define DDMC_VERSION_PATCH 0

#define DDMC_VERSION_HEX \
  ((DDMC_VERSION_MAJOR << 16) | (DDMC_VERSION_MINOR << 8) | DDMC_VERSION_PATCH)

/* "0.3.0", a string literal built from the numbers above so the two never disagree.
 * ddmc_version_string() is the version of the library actually linked. */
#define DDMC__VERSION_STR2(x) #x
#define DDMC__VERSION_STR(x) DDMC__VERSION_STR2(x)
#define DDMC_VERSION_STRING                                                                      \
  DDMC__VERSION_STR(DDMC_VERSION_MAJOR) "." DDMC__VERSION_STR(DDMC_VERSION_MINOR) "." \
  DDMC__VERSION_STR(DDMC_VERSION_PATCH)

#endif
