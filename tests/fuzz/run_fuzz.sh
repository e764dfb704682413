#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# run_fuzz.sh FUZZER SEED_DIR SECONDS: fuzzes from the seed corpus (new inputs go to a temporary
# directory, never into the checked-in corpus) and prints the executions; non-zero on a crash.
set -u
fuzzer=$1 seeds=$2 secs=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
name=$(basename "$fuzzer")
"$fuzzer" -max_total_time="$secs" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 \
  -artifact_prefix="$work/" "$work" "$seeds" >"$work/log" 2>&1
rc=$?
execs=$(grep -m1 'stat::number_of_executed_units' "$work/log" | awk '{print $2}')
if [[ $rc -ne 0 ]]; then
  tail -60 "$work/log"
  for a in "$work"/crash-* "$work"/leak-* "$work"/timeout-*; do
    [[ -e $a ]] && { echo "artifact: $a"; od -A x -t x1z "$a" | head -20; }
  done
  echo "fuzz $name: FAILED after ${execs:-?} executions in ${secs}s"
  exit 1
fi
echo "fuzz $name: ${execs:-0} executions in ${secs}s, no crash, no leak"
