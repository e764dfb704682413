#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The classes an agent makes HotSpot load: Late.java, loaded with -Xlog:class+load, once under the
JDK's own agent and once under libddmcjdwp.so, both idle with no debugger. Every class loaded costs
memory and makes each RedefineClasses slower (HotSpot walks every loaded class to adjust them), so
ours may load no more than the JDK's agent does, give or take MARGIN; in particular not Android's
DdmServer (and the jar and zip readers it takes) for an app that never uses it.

    classes_loaded.py --agent libddmcjdwp.so --workdir DIR

Exits 0 on success, 1 with the classes only ours loaded."""
import argparse
import os
import shutil
import subprocess
import sys
import time

from agent_jvm import launch

HERE = os.path.dirname(os.path.abspath(__file__))
MARGIN = 5  # a JDK update may shift a few classes between the two agents' start-ups


def loaded(java, work, agent_arg, name):
    """The set of class names HotSpot logged as loaded once Late runs with its agent listening."""
    log = os.path.join(work, name + ".classes")
    if os.path.exists(log):
        os.unlink(log)
    vm, port = launch(java, [f"-Xlog:class+load:file={log}", agent_arg], work, "Late", os.path.join(work, name + ".out"),
                      ready="late ready")
    try:
        if port is None:
            print(f"FAIL: Late under {name} did not start")
            print(open(os.path.join(work, name + ".out"), errors="replace").read())
            sys.exit(1)
        time.sleep(1.0)  # the agent's own start (its thread, VMInit's work) is over
    finally:
        vm.kill()
        vm.wait()
    names = set()
    with open(log, errors="replace") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 2:
                names.add(parts[1])
    return names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--agent", required=True)
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    java, javac = shutil.which("java"), shutil.which("javac")
    if not (java and javac):
        print("FAIL: java/javac missing (scripts/setup.sh installs default-jdk-headless)")
        return 1
    os.makedirs(args.workdir, exist_ok=True)
    subprocess.run([javac, "-d", args.workdir, os.path.join(HERE, "Late.java")], check=True)
    opts = "transport=dt_socket,server=y,suspend=n,address=127.0.0.1:0"
    ref = loaded(java, args.workdir, f"-agentlib:jdwp={opts}", "libjdwp")
    ours = loaded(java, args.workdir, f"-agentpath:{os.path.abspath(args.agent)}={opts}", "ddmcjdwp")
    extra = sorted(ours - ref)
    ddm = [c for c in ours if c.startswith("org.apache.harmony.dalvik.ddmc.") or c == "java.util.jar.JarFile"]
    print(f"classes loaded: libjdwp {len(ref)}, libddmcjdwp.so {len(ours)}; only ours: {len(extra)}")
    ok = True
    if len(ours) > len(ref) + MARGIN:
        print(f"FAIL: libddmcjdwp.so loads {len(ours) - len(ref)} classes more than libjdwp (margin {MARGIN})")
        ok = False
    if ddm:
        print("FAIL: loaded for an app that never uses DdmServer: " + ", ".join(sorted(ddm)))
        ok = False
    if not ok:
        print("only ours: " + " ".join(extra))
        return 1
    print("PASS: no more classes than the JDK's agent, and no DdmServer until the app uses it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
