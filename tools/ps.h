/* SPDX-License-Identifier: Apache-2.0 */
/* ddmc ps: every JDWP process on a device, through the local adb server, as DDMS's device panel
 * lists them. The pids come from adb's track-jdwp; each is asked for HELO over its own jdwp:PID
 * connection, all of them at once; the timeout bounds the whole listing. */
#ifndef DDMC_TOOLS_PS_H
#define DDMC_TOOLS_PS_H

#include "session.h"

typedef struct ps_args {
  int watch;       /* keep listening to track-jdwp and redraw on every change */
  double duration; /* --watch: seconds to watch; < 0 until Ctrl-C */
} ps_args;

/* Runs the whole command (o->adb_port and o->serial name the adb server and the device) and
 * returns the exit code. Never connects to o->host. */
int cmd_ps(const opts *o, const ps_args *a);

#endif
