#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""DDM on HotSpot through libddmcjdwp.so: `ddmc info`, `threads`, `stack`, `heap`, `gc` and
`exit` against tests/jdb/Debug.java running under -agentpath:libddmcjdwp.so (suspend=n), then
`ddmc info` against the same program loaded with -agentlib:ddmcjdwp (the file found through
LD_LIBRARY_PATH).

    ddm_agent.py AGENT.so DDMC_BINARY WORKDIR

Checks HELO (the VM's name and version from java.vm.name / java.vm.version, the pid, the main
class as the app name), the thread table (main and Worker, not the agent's JDWP thread), Worker's
stack (Debug.pause / Debug.worker with lines), HPIF now and at the next GC (`ddmc gc`: HPIF 2 then
HPGC), EXIT 7 (the java process ends with status 7) and HELO under -agentlib. Exits 0 on success,
1 with the outputs."""
import getpass
import os
import re
import shutil
import subprocess
import sys
import tempfile

from agent_jvm import launch

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
    opts = "=transport=dt_socket,server=y,suspend=n,address=127.0.0.1:0"
    out_path = os.path.join(work, "ddm-agent.out")
    vm, port = launch(java, [f"-agentpath:{os.path.abspath(agent)}{opts}"], classes, "Debug", out_path)
    report = []
    vm2 = None
    try:
        if port is None:
            print("FAIL: no listening line\n" + open(out_path).read())
            return 1

        def ddmc_run(*args, at=None):
            at = at or port
            r = subprocess.run([ddmc, "-c", f"127.0.0.1:{at}", *args], capture_output=True, text=True, timeout=30)
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
        # CPU times: JVM TI gives no tid, so utime comes from GetThreadCpuTime (the library's
        # thread_cpu_time op); main has run the class loading and Debug's start-up by now.
        m = re.search(r"^\s*\d+\s+\d+\s+\S+\s+no\s+(\d+)\s+(\d+)\s+main$", threads, re.M)
        checks.append(("main's utime > 0", m is not None and int(m.group(1)) > 0))
        m = re.search(r"^\s*(\d+)\s.*\sWorker$", threads, re.M)
        if m:
            rc, stack = ddmc_run("stack", m.group(1))
            checks += [("stack exits 0", rc == 0),
                       ("Worker's frames", re.search(r"at Debug\.pause\(Debug\.java:25\)\n\s+at Debug\.worker\(Debug\.java:34\)",
                                                     stack) is not None)]
        rc, heap = ddmc_run("heap")
        checks += [("heap exits 0", rc == 0), ("HPIF footprint", re.search(r"footprint\s+[1-9]\d*", heap) is not None)]
        # HPIF "at the next GC": sent by ddmc_gc_done after GarbageCollectionFinish.
        rc, gc = ddmc_run("gc")
        checks += [("gc exits 0", rc == 0), ("HPIF after the GC", re.search(r"^GC done in ", gc, re.M) is not None)]
        # EXIT last: the JVM ends as System.exit(7) ends it, through HotSpot's own shutdown, which
        # deletes the JVM's hsperfdata file (a bare _exit would leave it behind).
        perf = os.path.join(tempfile.gettempdir(), f"hsperfdata_{getpass.getuser()}", str(vm.pid))
        had_perf = os.path.exists(perf)
        rc, _ = ddmc_run("exit", "7")
        try:
            status = vm.wait(timeout=30)
        except subprocess.TimeoutExpired:
            status = None
        report.append(f"java exit status {status}; {perf} before: {had_perf}, after: {os.path.exists(perf)}")
        checks += [("exit exits 0", rc == 0), ("java exits with 7", status == 7),
                   ("an orderly JVM exit", had_perf and not os.path.exists(perf))]

        # -agentlib:ddmcjdwp. HotSpot looks for libddmcjdwp.so in its own library directory, then
        # asks the dynamic loader for the bare file name: java.library.path plays no part, so the
        # directory is given through LD_LIBRARY_PATH.
        out2 = os.path.join(work, "ddm-agentlib.out")
        env = dict(os.environ)
        env["LD_LIBRARY_PATH"] = os.pathsep.join(
            p for p in (os.path.dirname(os.path.abspath(agent)), env.get("LD_LIBRARY_PATH")) if p)
        vm2, port2 = launch(java, [f"-agentlib:ddmcjdwp{opts}"], classes, "Debug", out2, env=env)
        if port2 is None:
            report.append("-agentlib: no listening line\n" + open(out2).read())
            checks.append(("-agentlib listens", False))
        else:
            rc, info = ddmc_run("info", at=port2)
            checks += [("-agentlib info exits 0", rc == 0),
                       ("-agentlib HELO names the VM", re.search(r"^vm\s+OpenJDK \S.* VM \d", info, re.M) is not None),
                       ("-agentlib HELO has the pid", re.search(rf"^pid\s+{vm2.pid}$", info, re.M) is not None)]
        failed = [name for name, ok in checks if not ok]
        if failed:
            print("FAIL: " + ", ".join(failed) + "\n" + "\n".join(report))
            return 1
        print("\n".join(report) + f"\nPASS: {len(checks)} checks")
        return 0
    finally:
        for p in (vm, vm2):
            if p is not None and p.poll() is None:
                p.kill()
            if p is not None:
                p.wait()


if __name__ == "__main__":
    sys.exit(main())
