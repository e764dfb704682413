#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""THNM on HotSpot through libddmcjdwp.so: tests/hotspot/Rename.java starts a thread named
Renamed-before that renames itself Renamed-after 1.5 s later; `ddmc --json threads --watch 4`
must see both names, the second through a THNM event (JVM TI has no rename event: the agent
notices the rename when it next walks the thread table).

    thnm_agent.py AGENT.so DDMC_BINARY WORKDIR

Exits 0 on success, 1 with the outputs."""
import json
import os
import shutil
import subprocess
import sys

from agent_jvm import launch

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    agent, ddmc, work = sys.argv[1:4]
    java, javac = shutil.which("java"), shutil.which("javac")
    if not java or not javac:
        print("FAIL: java/javac missing (scripts/setup.sh installs default-jdk-headless)")
        return 1
    classes = os.path.join(work, "thnm-classes")
    os.makedirs(classes, exist_ok=True)
    subprocess.run([javac, "-g", "-d", classes, os.path.join(HERE, "Rename.java")], check=True)
    out_path = os.path.join(work, "thnm.out")
    opts = "=transport=dt_socket,server=y,suspend=n,address=127.0.0.1:0"
    vm, port = launch(java, [f"-agentpath:{os.path.abspath(agent)}{opts}"], classes, "Rename", out_path,
                      ready="RENAME ready")
    try:
        if port is None:
            print("FAIL: the JVM did not come up\n" + open(out_path).read())
            return 1
        r = subprocess.run([ddmc, "-c", f"127.0.0.1:{port}", "--json", "threads", "--watch", "4"],
                           capture_output=True, text=True, timeout=60)
        doc = r.stdout
        checks = [("threads exits 0", r.returncode == 0),
                  ("the first name seen", "Renamed-before" in doc),
                  ("the rename seen", "Renamed-after" in doc)]
        try:
            json.loads(doc)
            checks.append(("one JSON document", True))
        except ValueError:
            checks.append(("one JSON document", False))
        bad = [name for name, ok in checks if not ok]
        for name, ok in checks:
            print(("ok   " if ok else "FAIL ") + name)
        if bad:
            print("ddmc stdout:\n" + doc[-3000:] + "\nstderr:\n" + r.stderr[-2000:])
            return 1
        return 0
    finally:
        vm.kill()
        vm.wait()


if __name__ == "__main__":
    sys.exit(main())
