#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs what libddmc needs to build and test on a Debian machine, if it is missing.
# Usage: scripts/setup.sh [--e2e]   (--e2e adds the real peers: adb, ddmlib, Eclipse's JDI)
# The JDK (jdb, java, javac) is always installed: the jdb tests (tests/jdb) need it, and the
# configuration fails without it. dmtracedump reads the method traces the ddmc e2e tests take;
# hprof-conv converts the heap dumps they take (both land in /usr/lib/android-sdk/platform-tools).
# dpkg-dev (dpkg-shlibdeps), file and lintian: cpack -G DEB and the package test (tests/package).
# groff-base and man-db render docs/ddmc.1 for its test (ddmc_manpage: no warnings).
# The export tests (tests/exports) read ddmc's exports back with their consumers' own code from
# npm (nodejs, npm; tests/exports/package.json, installed below with npm ci) and decode pprof files
# against pprof's own profile.proto (golang-github-google-pprof-dev ships it).
set -euo pipefail

pkgs=(build-essential cmake pkg-config zlib1g-dev libcmocka-dev libpng-dev python3 clang libclang-rt-14-dev valgrind
  default-jdk-headless dmtracedump hprof-conv dpkg-dev file lintian groff-base man-db junit4
  golang-github-google-pprof-dev)
# node and npm: Debian's packages unless a Node.js is there already (NodeSource's nodejs bundles
# npm and conflicts with Debian's npm package).
command -v node >/dev/null || pkgs+=(nodejs)
command -v npm >/dev/null || pkgs+=(npm)
if [[ "${1:-}" == "--e2e" ]]; then
  pkgs+=(adb libandroid-ddms-java libeclipse-jdt-debug-java)
fi

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} > 0)); then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# npm packages of the export tests, at the versions package-lock.json pins.
exports_dir="$(cd "$(dirname "$0")/.." && pwd)/tests/exports"
if [[ ! -f "$exports_dir/node_modules/.package-lock.json" ||
  "$exports_dir/package-lock.json" -nt "$exports_dir/node_modules/.package-lock.json" ]]; then
  echo "setup: npm ci in tests/exports" >&2
  npm ci --prefix "$exports_dir" --no-audit --no-fund >/dev/null
fi
