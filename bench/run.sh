#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# bench/run.sh: builds the libddmc benchmarks in Release mode (build-bench/, or $BENCH_BUILD_DIR),
# runs every section once, one after the other (never two at a time: the machine has 2 CPUs), and
# prints ONE table: a line per figure, each beside its reference measured in the same run, as a
# ratio, with the target and met / MISSED (info: no target; n/a: no java).
#
#   bench/run.sh                    everything (about 3 minutes after the build; dbg is 1.5 of them)
#   bench/run.sh rt heap            only some sections: rt send threads heap mem dbg prof hprof hpconv jvmti hotspot scale ui
#   BENCH_UI_SECS=600 bench/run.sh ui   `ddmc ui`'s RSS over 10 minutes (default 60 s) against a busy
#                                   minivm (bench/ui_bench.py; builds ddmc in $build/ui)
#   BENCH_SCALE_BIG=1 bench/run.sh scale   the scale section with its biggest sizes too (100,000
#                                   classes, 10,000 threads, a 1 GiB dump: about half an hour)
#   BENCH_SCALE_ONLY=dump bench/run.sh scale   one curve of it: classes threads deep dump
#   BENCH_HOTSPOT_ONLY=dump bench/run.sh hotspot   one group of rows of it: trips queries dump cpu
#   BENCH_HPCONV_FILE=F bench/run.sh hpconv   the hprof converter alone on HotSpot's file F (default:
#                                   a dump of DumpProg made with java)
#   BENCH_SCALE=0.2 bench/run.sh    shorter runs (e.g. under a profiler)
#   BENCH_PIN=0 bench/run.sh        no CPU pinning (the round trips then run once, "unpinned")
#
# Java: OpenJDK 17's agent is the comparison for the JDWP figures. scripts/setup.sh --e2e installs
# a JDK; without java (or javac) those lines print "n/a (no java)" and the run still completes.
# dbg and prof also build minivm (examples/minivm) and run the .mvm programs of bench/programs.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${BENCH_BUILD_DIR:-$root/build-bench}
scale=${BENCH_SCALE:-1}
sections=("$@")
if ((${#sections[@]} == 0)); then sections=(rt send threads heap mem dbg prof hprof hpconv jvmti hotspot scale ui); fi

t_start=$(date +%s)
echo "bench: building $build (Release)" >&2
mkdir -p "$build"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DDDMC_BUILD_BENCH=ON -DDDMC_BUILD_TESTS=OFF \
  -DDDMC_BUILD_EXAMPLES=ON -DDDMC_BUILD_TOOLS=OFF >"$build/bench-cmake.log" 2>&1 ||
  { cat "$build/bench-cmake.log" >&2; exit 1; }
# minivm (Release, same library) is the VM of the dbg, prof and jvmti sections; calltrace the agent of jvmti;
# libddmcjdwp.so (agent/jdwp, when the JDK's jvmti.h is there) the agent of hotspot.
targets=(ddmc_bench minivm calltrace)
build_targets=$(cmake --build "$build" --target help 2>/dev/null || true) # grep -q in a pipe: SIGPIPE, pipefail
if grep -q '[. ]ddmcjdwp$' <<<"$build_targets"; then
  targets+=(ddmcjdwp)
  export BENCH_DDMCJDWP="$build/agent/jdwp/libddmcjdwp.so"
fi
cmake --build "$build" --target "${targets[@]}" -j"$(nproc)" >"$build/bench-build.log" 2>&1 ||
  { cat "$build/bench-build.log" >&2; exit 1; }
bin="$build/bench/ddmc_bench"
vm_args=(--minivm "$build/examples/minivm/minivm" --programs "$root/bench/programs")

java_args=()
java_desc="none (OpenJDK lines are n/a)"
if command -v java >/dev/null 2>&1 && command -v javac >/dev/null 2>&1; then
  classdir="$build/bench/java"
  mkdir -p "$classdir"
  # Idle (the rt section's JVM); JdiBench, BpLoop, Spin (the dbg section's client and targets)
  if javac -g -d "$classdir" "$root"/bench/java/*.java 2>/dev/null; then
    java_bin=$(readlink -f "$(command -v java)")
    java_args=(--java "$java_bin" --classdir "$classdir")
    java_desc=$("$java_bin" -version 2>&1 | head -n 2 | tail -n 1)
  fi
fi

out=$(mktemp)
trap 'rm -f "$out"' EXIT
# The scale section's points (curve, size, ours, libjdwp's, unit), drawn into bench/scale.svg.
export BENCH_SCALE_DATA="$build/scale.tsv"
rm -f "$BENCH_SCALE_DATA"
# The big dump needs more than libddmc's default cap of 512 MiB per dump.
export DDMC_JDWP_HPROF_MAX_MB=4000
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
for s in "${sections[@]}"; do
  echo "bench: section $s" >&2
  t0=$(date +%s)
  rc=0
  limit=300
  if [[ $s == ui ]]; then
    # ddmc (the tools, with the page's npm packages) in a build of its own: the other sections'
    # build leaves the tools out.
    ui_build="$build/ui"
    { cmake -S "$root" -B "$ui_build" -DCMAKE_BUILD_TYPE=Release -DDDMC_BUILD_TESTS=OFF -DDDMC_BUILD_EXAMPLES=ON \
      -DDDMC_BUILD_TOOLS=ON >"$build/bench-ui-build.log" 2>&1 &&
      cmake --build "$ui_build" --target ddmc_cli minivm -j"$(nproc)" >>"$build/bench-ui-build.log" 2>&1 &&
      timeout $((${BENCH_UI_SECS:-60} + 120)) python3 "$root/bench/ui_bench.py" --ddmc "$ui_build/tools/ddmc" \
        --minivm "$ui_build/examples/minivm/minivm" --program "$root/tests/ui/Ui.mvm" >>"$out"; } || rc=$?
    if ((rc != 0)); then printf 'NOTE\tsection ui failed (exit %d; %s)\n' "$rc" "$build/bench-ui-build.log" >>"$out"; fi
    echo "bench: section $s took $(($(date +%s) - t0)) s" >&2
    continue
  fi
  if [[ $s == scale ]]; then limit=$(if [[ ${BENCH_SCALE_BIG:-0} == 1 ]]; then echo 3600; else echo 900; fi); fi
  timeout "$limit" "$bin" "$s" --scale "$scale" "${java_args[@]}" "${vm_args[@]}" >>"$out" || rc=$?
  if ((rc != 0)); then printf 'NOTE\tsection %s failed (exit %d)\n' "$s" "$rc" >>"$out"; fi
  echo "bench: section $s took $(($(date +%s) - t0)) s" >&2
done
t_total=$(($(date +%s) - t_start))

model=$(lscpu 2>/dev/null | sed -n 's/^Model name:[[:space:]]*//p' | head -n 1)
echo "libddmc benchmarks, $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo '?')"
echo "machine: nproc $(nproc), ${model:-unknown CPU}, kernel $(uname -r); java: $java_desc"
echo "load average (1, 5, 15 min): $load_start at the start, $(cut -d' ' -f1-3 /proc/loadavg) at the end (a shared machine: figures under load)"
# The plot and its points beside RESULTS.md come from a run of every curve only: one curve's run
# would leave the others out of the picture.
if [[ -s $BENCH_SCALE_DATA && -z ${BENCH_SCALE_ONLY:-} ]] && command -v python3 >/dev/null 2>&1; then
  cp "$BENCH_SCALE_DATA" "$root/bench/scale.tsv" &&
    python3 "$root/bench/scale_plot.py" "$BENCH_SCALE_DATA" "$root/bench/scale.svg" >&2 &&
    echo "scale: plot in bench/scale.svg (points in bench/scale.tsv)"
elif [[ -s $BENCH_SCALE_DATA ]]; then
  echo "scale: one curve only (BENCH_SCALE_ONLY): points in $BENCH_SCALE_DATA; bench/scale.svg left as it was"
fi
echo "pinning: $(if [[ ${BENCH_PIN:-1} == 0 ]]; then echo off; else echo 'servers on CPU 0; clients as each group says'; fi)"
echo
awk -F'\t' '
  $1 == "ROW" { n++; for (i = 2; i <= 9; i++) { c[n, i] = $i; if (length($i) > w[i]) w[i] = length($i) } }
  $1 == "NOTE" { notes[++m] = $2 }
  END {
    h[2] = "group"; h[3] = "figure"; h[4] = "value"; h[5] = "reference (same run)"; h[6] = "reference value";
    h[7] = "ratio"; h[8] = "target"; h[9] = "status";
    for (i = 2; i <= 9; i++) if (length(h[i]) > w[i]) w[i] = length(h[i]);
    wn = length(n "") < 1 ? 1 : length(n "");
    line = sprintf("| %*s |", wn, "#");
    sep = "|" sprintf("%*s", wn + 2, "") "|"; gsub(/ /, "-", sep);
    for (i = 2; i <= 9; i++) { line = line sprintf(" %-*s |", w[i], h[i]); s = sprintf("%*s", w[i] + 2, ""); gsub(/ /, "-", s); sep = sep s "|" }
    print line; print sep;
    for (r = 1; r <= n; r++) {
      line = sprintf("| %*d |", wn, r);
      for (i = 2; i <= 9; i++) line = line sprintf(" %-*s |", w[i], c[r, i]);
      print line
    }
    met = 0; missed = 0; for (r = 1; r <= n; r++) { if (c[r, 9] == "met") met++; if (c[r, 9] == "MISSED") missed++ }
    printf "\n%d lines: %d met, %d MISSED, %d without a target (info / n/a)\n", n, met, missed, n - met - missed;
    if (m > 0) { print "\nNotes:"; for (k = 1; k <= m; k++) print "- " notes[k] }
  }' "$out"
echo "- total run time ${t_total} s, build included"
