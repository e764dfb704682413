#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""DDM on HotSpot through libddmcjdwp.so: `ddmc info`, `threads`, `stack` and `heap` against
tests/jdb/Debug.java running under -agentpath:libddmcjdwp.so (suspend=n).

    ddm_agent.py AGENT.so DDMC_BINARY WORKDIR

Checks HELO (the VM's name and version from java.vm.name / java.vm.version, the pid, the main
class as the app name), the thread table (main and Worker, not the agent's JDWP thread), Worker's
stack (Debug.pause / Debug.worker with lines) and HPIF. Exits 0 on success, 1 with the outputs."""
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def main():
    agent, ddmc, work = sys.argv[1:4]
    java, javac = shutil.which("java"), shutil.which("javac")
    if not java or not javac:
        print("FAIL: java/javac missing (scripts/setup.sh installs default-jdk-headless)")
        return 1
    classes = os.path.join(work, "ddm-agent-classes")
    os.makedirs(classes, exist_ok=True)
    subprocess.run([javac, "-g", "-d", classes, os.path.join(ROOT, "tests", "jdb", "Debug.java")], check=True)
    out_path = os.path.join(work, "ddm-agent.out")
    with open(out_path, "wb") as out:
        vm = subprocess.Popen([java, f"-agentpath:{os.path.abspath(agent)}=transport=dt_socket,server=y,"
                               "suspend=n,address=127.0.0.1:0", "-cp", classes, "Debug"],
                              stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    report = []
    try:
        port = None
        deadline = time.monotonic() + 30
        while port is None and time.monotonic() < deadline and vm.poll() is None:
            m = re.search(r"Listening for transport dt_socket at address: (\d+)", open(out_path).read())
            port = m.group(1) if m else None
            time.sleep(0.05)
        if port is None:
            print("FAIL: no listening line\n" + open(out_path).read())
            return 1

        def ddmc_run(*args):
            r = subprocess.run([ddmc, "-c", f"127.0.0.1:{port}", *args], capture_output=True, text=True, timeout=30)
            report.append(f"$ ddmc {' '.join(args)}\n{r.stdout}{r.stderr}")
            return r.returncode, r.stdout

        checks = []
        rc, info = ddmc_run("info")
        checks += [("info exits 0", rc == 0),
                   ("HELO names the VM", re.search(r"^vm\s+OpenJDK \S.* VM \d", info, re.M) is not None),
                   ("HELO has the pid", re.search(rf"^pid\s+{vm.pid}$", info, re.M) is not None),
                   ("HELO has the app name", re.search(r"^app name\s+Debug$", info, re.M) is not None)]
        rc, threads = ddmc_run("threads")
        checks += [("threads exits 0", rc == 0),
                   ("main listed", re.search(r"^\s*\d+\s+\d+\s+\S+\s+no\s+.*\smain$", threads, re.M) is not None),
                   ("Worker listed", re.search(r"\sWorker$", threads, re.M) is not None),
                   ("no JDWP thread", "ddmc JDWP" not in threads)]
        m = re.search(r"^\s*(\d+)\s.*\sWorker$", threads, re.M)
        if m:
            rc, stack = ddmc_run("stack", m.group(1))
            checks += [("stack exits 0", rc == 0),
                       ("Worker's frames", re.search(r"at Debug\.pause\(Debug\.java:25\)\n\s+at Debug\.worker\(Debug\.java:34\)",
                                                     stack) is not None)]
        rc, heap = ddmc_run("heap")
        checks += [("heap exits 0", rc == 0), ("HPIF footprint", re.search(r"footprint\s+[1-9]\d*", heap) is not None)]
        failed = [name for name, ok in checks if not ok]
        if failed:
            print("FAIL: " + ", ".join(failed) + "\n" + "\n".join(report))
            return 1
        print("\n".join(report) + f"\nPASS: {len(checks)} checks")
        return 0
    finally:
        if vm.poll() is None:
            vm.kill()
        vm.wait()


if __name__ == "__main__":
    sys.exit(main())
