#!/usr/bin/env bash
# Runs every test: builds the project (RelWithDebInfo) and runs the whole ctest suite.
# Usage: scripts/test.sh            all tests
#        BUILD_DIR=out scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

build=${BUILD_DIR:-build}
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$jobs"
cd "$build"
ctest --output-on-failure -j"$jobs" --timeout 300
