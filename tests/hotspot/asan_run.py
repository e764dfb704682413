#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Runs a HotSpot test with an ASan+UBSan build of libddmcjdwp.so (the ASan build tree's tests).

    asan_run.py --runtime LIBASAN.so --logdir DIR -- COMMAND...

COMMAND runs with `java` on its PATH being asan_java.sh (the real java with LIBASAN preloaded and
HotSpot's signals left to it; the options are written there), in a fresh directory under DIR
that gets the sanitizers' reports (asan.PID). Fails (status 1) when COMMAND fails, when a report
was written (it is printed: "ERROR: AddressSanitizer", UBSan's "runtime error"), or when no java
started through the wrapper at all (the test ran the agent without ASan)."""
import argparse
import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runtime", required=True, help="the ASan runtime (gcc -print-file-name=libasan.so)")
    ap.add_argument("--logdir", required=True)
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    cmd = args.command[1:] if args.command[:1] == ["--"] else args.command
    java = shutil.which("java")
    if not java or not os.path.isfile(args.runtime) or not cmd:
        print(f"FAIL: need java ({java}), the ASan runtime ({args.runtime}) and a command")
        return 1
    os.makedirs(args.logdir, exist_ok=True)
    run = tempfile.mkdtemp(prefix="run-", dir=args.logdir)
    bindir = os.path.join(run, "bin")
    os.makedirs(bindir)
    os.symlink(os.path.join(HERE, "asan_java.sh"), os.path.join(bindir, "java"))
    log = os.path.join(run, "asan")
    env = dict(os.environ, DDMC_ASAN_RUNTIME=args.runtime, DDMC_ASAN_REAL_JAVA=java, DDMC_ASAN_LOG=log,
               PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
    child = subprocess.Popen(cmd, env=env)
    signal.signal(signal.SIGTERM, lambda *_: child.send_signal(signal.SIGTERM))
    rc = child.wait()
    reports = [p for p in sorted(glob.glob(log + ".*")) if not p.endswith(".launched")]
    launched = []
    if os.path.exists(log + ".launched"):
        with open(log + ".launched") as f:
            launched = f.read().splitlines()
    for p in reports:
        with open(p, errors="replace") as f:
            print(f"==== sanitizer report {p}\n{f.read()}")
    if reports:
        print(f"FAIL: {len(reports)} sanitizer report(s) under ASan (above)")
        return 1
    if not launched:
        print("FAIL: no java started with the ASan runtime: the test ran the agent some other way")
        return 1
    if rc != 0:
        print(f"FAIL: the test failed under ASan (status {rc}); no sanitizer report")
        return 1
    print(f"asan_run: {len(launched)} java process(es) ran with the ASan runtime; no sanitizer report")
    shutil.rmtree(run, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
