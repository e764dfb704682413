#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The main job, end to end: build everything, start two minivm VMs with JDWP/DDM on, and watch
# them with the ddmc monitor: info, a few seconds of the live thread table, a stack, the heap
# numbers and a heap picture (PNG) whose path is printed; then the same VM as a live web page
# (ddmc ui, on 127.0.0.1 behind a token: open the address it prints) until Ctrl-C, or for
# WATCH_SECONDS when stdin is no terminal. The VMs are stopped on exit.
#
# Usage: scripts/demo.sh
# Environment: BUILD_DIR (default build), WATCH_SECONDS (default 5), DEMO_UI=0 (no web page),
#              THREADS_PORT / ALLOC_PORT (default 8700 / 8701; a busy port falls back to any
#              free port), DEMO_OUT (directory for the picture, default $BUILD_DIR/demo).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
watch=${WATCH_SECONDS:-5}
threads_port=${THREADS_PORT:-8700}
alloc_port=${ALLOC_PORT:-8701}
out=${DEMO_OUT:-$build/demo}

bold() { if [[ -t 1 ]]; then printf '\n\033[1m== %s\033[0m\n' "$*"; else printf '\n== %s\n' "$*"; fi; }
run() { printf '$ %s\n' "$*"; "$@"; }

bold "Setting up and building (scripts/setup.sh, cmake, $build/)"
scripts/setup.sh
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
jobs=$(nproc 2>/dev/null || echo 2)
((jobs > 2)) && jobs=2
cmake --build "$build" -j"$jobs" >/dev/null
minivm=$build/examples/minivm/minivm
ddmc=$build/tools/ddmc
programs=examples/minivm/programs
mkdir -p "$out"
echo "built $minivm and $ddmc"

# ---- the VMs; stopped by pid whatever happens
pids=()
cleanup() {
  for p in "${pids[@]:-}"; do
    [[ -n "$p" ]] && kill "$p" 2>/dev/null || true
  done
  for p in "${pids[@]:-}"; do
    [[ -n "$p" ]] && wait "$p" 2>/dev/null || true
  done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start_vm NAME PORT [VM options...]: starts minivm, waits for its "JDWP listening on" line and
# sets vm_pid and vm_port. A busy port is retried with address=127.0.0.1:0 (any free port).
start_vm() {
  local name=$1 port=$2
  shift 2
  local log=$out/$name.log
  for addr in "127.0.0.1:$port" "127.0.0.1:0"; do
    : >"$log"
    "$minivm" "-agentlib:jdwp=transport=dt_socket,address=$addr,server=y,suspend=n" "$@" \
      "$programs/$name.mvm" >"$out/$name.out" 2>"$log" &
    vm_pid=$!
    pids+=("$vm_pid")
    for _ in $(seq 100); do
      if vm_port=$(sed -n 's/.*JDWP listening on [^ ]*:\([0-9][0-9]*\)$/\1/p' "$log" | head -n1) && [[ -n "$vm_port" ]]; then
        echo "minivm $name.mvm: pid $vm_pid, JDWP on 127.0.0.1:$vm_port (stdout $out/$name.out, stderr $log)"
        return 0
      fi
      kill -0 "$vm_pid" 2>/dev/null || break
      sleep 0.1
    done
    kill "$vm_pid" 2>/dev/null || true
    wait "$vm_pid" 2>/dev/null || true
    echo "minivm $name.mvm could not listen on $addr: $(tail -n1 "$log")" >&2
  done
  return 1
}

bold "Starting two VMs"
start_vm threads "$threads_port"
tport=$vm_port
start_vm alloc "$alloc_port" -Xmx16m
aport=$vm_port
sleep 1 # let main start its threads

bold "ddmc info: who is this VM? (HELO, FEAT, and any WAIT/APNM)"
run "$ddmc" -c "127.0.0.1:$tport" info

bold "ddmc threads --watch $watch: the live thread table (THEN + THCR/THDE/THNM, THST every second)"
# Ctrl-C here ends only the watch (ddmc exits 0 on SIGINT); the demo goes on.
trap ':' INT
run "$ddmc" -c "127.0.0.1:$tport" threads --watch "$watch"
trap 'exit 130' INT

bold "ddmc stack: where is the Sleeper thread? (STKL)"
sleeper=$("$ddmc" -c "127.0.0.1:$tport" threads | awk '$NF == "Sleeper" { print $1; exit }')
run "$ddmc" -c "127.0.0.1:$tport" stack "${sleeper:-1}"

bold "ddmc heap: the allocating VM's heap right now (HPIF)"
run "$ddmc" -c "127.0.0.1:$aport" heap

png=$(cd "$out" && pwd)/heap.png
bold "ddmc heap --bitmap: collect, take the segment dump (HPGC + HPSG) and draw it"
run "$ddmc" -v -c "127.0.0.1:$aport" heap --bitmap "$png"

echo "heap picture: $png"
echo "(one pixel per 8-byte unit, 1024 per row; legend below the bitmap)"

if [[ ${DEMO_UI:-1} != 0 ]]; then
  bold "ddmc ui: the threads VM as a live web page (threads, heap, allocations, traces)"
  ui_args=()
  if [[ -t 0 ]]; then echo "open the address below in a browser on this machine; Ctrl-C ends the demo"; else ui_args=(--duration "$watch"); fi
  trap ':' INT
  run "$ddmc" -c "127.0.0.1:$tport" ui "${ui_args[@]}"
  trap 'exit 130' INT
fi

bold "Done"
echo "heap picture: $png (the VMs are stopped now)"
