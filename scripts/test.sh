#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs every test. Installs what is missing first (scripts/setup.sh).
#
#   scripts/test.sh           all of it: the normal build's suite, the same suite under
#                             AddressSanitizer + UndefinedBehaviorSanitizer (with libddmcjdwp.so
#                             inside HotSpot: tests/hotspot/asan_run.py), the threaded tests under
#                             ThreadSanitizer, and each libFuzzer target for DDMC_FUZZ_SECONDS (20)
#   scripts/test.sh --quick   the normal build's suite only
#
# Build trees: build/ (RelWithDebInfo), build-asan/, build-tsan/, build-fuzz/ (clang); every one
# with -Werror (DDMC_WERROR). Line coverage of src/: scripts/coverage.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
# The real peers (adb, ddmlib, a JDK) for the end-to-end tests. Without them those tests fail
# with a message naming what is missing; every other test still runs.
scripts/setup.sh --e2e || echo "test.sh: could not install adb/ddmlib/JDK; the adb end-to-end tests will fail" >&2

quick=0
[[ "${1:-}" == "--quick" ]] && quick=1
jobs=$(nproc 2>/dev/null || echo 2)
fuzz_secs=${DDMC_FUZZ_SECONDS:-20}
failed=()

suite() { # suite NAME BUILD_DIR CTEST_ARGS... -- CMAKE_ARGS...
  local name=$1 dir=$2
  shift 2
  local ctest_args=() cmake_args=()
  while (($#)) && [[ $1 != -- ]]; do ctest_args+=("$1"); shift; done
  (($#)) && shift
  cmake_args=("$@")
  echo "=== $name ($dir)"
  cmake -S . -B "$dir" -DDDMC_WERROR=ON "${cmake_args[@]}" >/dev/null
  cmake --build "$dir" -j"$jobs" >/dev/null
  if ! (cd "$dir" && ctest --output-on-failure -j"$jobs" --timeout 600 "${ctest_args[@]}"); then
    failed+=("$name")
  fi
}

# ART's JDWP conformance suite (tests/conformance) takes 8 minutes of mostly waiting: in the full
# run it goes on in the background while the sanitizer builds compile and run (its wrapper runs a
# failing class once more alone, so load alone does not fail it), not after them; the normal
# build's own tests run first, on a quiet machine.
conformance_pid=
if ((quick == 0)); then
  suite "tests" build -E '^hotspot_conformance_ddmcjdwp$' -- -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DDDMC_BUILD_EXAMPLES=ON -DDDMC_BUILD_TOOLS=ON
  echo "=== conformance suite (background; build/conformance-ci.log)"
  python3 tests/conformance/run_conformance.py --suite "${DDMC_CONFORMANCE_DIR:-../shared/conformance/harmony}" \
    --agent build/agent/jdwp/libddmcjdwp.so --out build/conformance-ci --jobs 2 >build/conformance-ci.log 2>&1 &
  conformance_pid=$!
else
  suite "tests" build -- -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDDMC_BUILD_EXAMPLES=ON -DDDMC_BUILD_TOOLS=ON
fi
if ((quick == 0)); then
  # The *_reference tests run the JDK's own agent, the behaviour ours is measured against: none of
  # our code runs inside that JVM, so the normal build's run of them says all there is. More stay
  # out to keep CI under 30 minutes, as their C code runs under ASan in a sibling: the ui pages on
  # HotSpot and through adb (ddmc_ui_minivm serves the same pages from the same server), Eclipse's
  # JDI against minivm (its _ddmcjdwp twins run the same client through the library), minivm's
  # stalled peers (half a minute of waiting each; test_stall drives the same session code, and
  # hotspot_stall_ddmcjdwp the same scenario), and the attach cycles with a request pending
  # (hotspot_cycles_ddmcjdwp runs the cycles).
  suite "tests under ASan+UBSan" build-asan \
    -E '_reference$|^hotspot_ui_ddmcjdwp$|^adb_ddmc_ui$|^eclipse_.*_minivm$|^(hprof_)?minivm_stall$|^hotspot_cycles_ddmcjdwp_pending$' -- -DCMAKE_BUILD_TYPE=Debug -DDDMC_SANITIZE=address \
    -DDDMC_BUILD_EXAMPLES=ON -DDDMC_BUILD_TOOLS=ON
  # The threaded tests: the library's session and fault-injection tests, minivm's threads, adb.
  suite "threaded tests under TSan" build-tsan -R 'test_session|test_sessions|test_stall|test_failmalloc|test_dbg_|test_prof_session|test_hprof|minivm_test_threads|adb_transport|jdi_invoke_.*_minivm' \
    -- -DCMAKE_BUILD_TYPE=Debug -DDDMC_SANITIZE=thread -DDDMC_BUILD_EXAMPLES=ON -DDDMC_BUILD_TOOLS=OFF
  CC=clang suite "fuzzing (${fuzz_secs}s per target)" build-fuzz -V -- -DDDMC_FUZZ=ON \
    -DDDMC_FUZZ_SECONDS="$fuzz_secs" -DDDMC_BUILD_EXAMPLES=OFF -DDDMC_BUILD_TOOLS=OFF -DDDMC_BUILD_BENCH=OFF
fi

if [[ -n $conformance_pid ]]; then
  echo "=== conformance suite (waiting for it)"
  if wait "$conformance_pid"; then tail -n 3 build/conformance-ci.log; else
    tail -n 40 build/conformance-ci.log
    failed+=("conformance suite")
  fi
fi

if ((${#failed[@]})); then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "all test suites passed"
