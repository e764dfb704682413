/* SPDX-License-Identifier: Apache-2.0 */
/* libddmc: the in-VM half of the Dalvik Debug Monitor protocol and of JDWP.
 * The umbrella header: users include only this. See docs/porting.md for the integration guide. */
#ifndef DDMC_DDMC_H
#define DDMC_DDMC_H

#include "export.h"
#include "version.h"
#include "error.h"
#include "options.h"
#include "wire.h"
#include "vm.h"
#include "chunk.h"
#include "bridge.h"
#include "events.h"
#include "debugger.h"
#include "profile.h"
#include "agent.h"

DDMC_BEGIN_DECLS

/* DDMC_VERSION_HEX of the library actually linked. Thread: any. */
DDMC_EXTERN unsigned ddmc_version(void);
DDMC_EXTERN const char *ddmc_version_string(void);

DDMC_END_DECLS

#endif
