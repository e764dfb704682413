#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# `java` for the tests asan_run.py runs: the real java ($DDMC_ASAN_REAL_JAVA) with the ASan runtime
# preloaded ($DDMC_ASAN_RUNTIME: an ASan-built libddmcjdwp.so loads only into a process whose
# first library is that runtime), its reports written to $DDMC_ASAN_LOG.PID.
#
# HotSpot's own signals stay HotSpot's: it takes SIGSEGV for implicit null checks, safepoint polls
# and stack banging, SIGBUS and SIGFPE likewise, and SIGILL; with handle_*=0 ASan installs no
# handler of its own and allow_user_segv_handler=1 lets HotSpot's sigaction through. No leak check
# (detect_leaks=0): the JVM never frees much of what it allocates, nor the agent what it keeps for
# the process's life. The first report ends the process (halt_on_error=1; UBSan's likewise, as the
# ASan build compiles with -fno-sanitize-recover=undefined).
set -e
echo "$$ $*" >> "$DDMC_ASAN_LOG.launched"
ASAN_OPTIONS="log_path=$DDMC_ASAN_LOG:halt_on_error=1:handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:handle_abort=0:allow_user_segv_handler=1:detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
UBSAN_OPTIONS="log_path=$DDMC_ASAN_LOG:halt_on_error=1:print_stacktrace=1" \
LD_PRELOAD="$DDMC_ASAN_RUNTIME${LD_PRELOAD:+:$LD_PRELOAD}" \
exec "$DDMC_ASAN_REAL_JAVA" "$@"
