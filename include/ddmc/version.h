/* libddmc version. CMake reads the three numbers below with a regex: keep the form. */
#ifndef DDMC_VERSION_H
#define DDMC_VERSION_H

#define DDMC_VERSION_MAJOR 0
#define DDMC_VERSION_MINOR 1
#define DDMC_VERSION_PATCH 0

#define DDMC_VERSION_HEX \
  ((DDMC_VERSION_MAJOR << 16) | (DDMC_VERSION_MINOR << 8) | DDMC_VERSION_PATCH)

#endif
