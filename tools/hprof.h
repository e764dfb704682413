/* SPDX-License-Identifier: Apache-2.0 */
/* ddmc hprof: a heap dump of the VM, as DDMS's "Dump HPROF file" button took it. */
#ifndef DDMC_TOOLS_HPROF_H
#define DDMC_TOOLS_HPROF_H

#include "session.h"

typedef struct hprof_args {
  const char *out;         /* FILE.hprof on this machine (HPDS) */
  int standard;            /* --standard: write 1.0.2 as hprof-conv does */
  const char *device_file; /* --device-file PATH: HPDU, the VM writes PATH itself */
} hprof_args;

int cmd_hprof(sess *s, const hprof_args *a);

#endif
