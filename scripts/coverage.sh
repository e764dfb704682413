#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Line coverage of the library: builds build-cov/ with gcc --coverage, runs the test suite (the
# adb/ddmlib end-to-end runs too; set DDMC_COVERAGE_CTEST_ARGS to narrow it), and prints the lines
# of src/ executed, per file and in total.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -S . -B build-cov -DCMAKE_BUILD_TYPE=Debug -DDDMC_COVERAGE=ON -DDDMC_BUILD_BENCH=OFF >/dev/null
cmake --build build-cov -j"$(nproc)" >/dev/null
find build-cov -name '*.gcda' -delete
# shellcheck disable=SC2086
if ! (cd build-cov && ctest -j"$(nproc)" --timeout 600 ${DDMC_COVERAGE_CTEST_ARGS:-} >/dev/null); then
  echo "coverage: tests failed (build-cov/Testing/Temporary/LastTest.log):" \
    "$(cut -d: -f2 build-cov/Testing/Temporary/LastTestsFailed.log 2>/dev/null | tr '\n' ' ')" >&2
fi
cmake --build build-cov --target coverage
