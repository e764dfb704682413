#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Heap dumps on HotSpot by the VM's own dumper and by the JVM TI walk, against HeapProg.java:

    hprof_paths.py AGENT.so DDMC_BINARY HPROF_CONV WORKDIR

fast: with nothing set, `ddmc hprof -o` (HPDS) and `ddmc hprof --device-file` (HPDU) are written
      by HotSpotDiagnosticMXBean.dumpHeap (the agent's log says "the VM's own dumper") and
      converted, and nothing is left in TMPDIR: the strict reader (tests/hprof/hprof_reader.py) takes both, hprof-conv converts
      them, and Node's chain and Mixed's fields hold their values (prof_agent.values_checks).
walk: DDMC_JDWP_HPROF_WALK=1 makes the agent walk the heap (no "own dumper" in its log); the
      program's own classes (HeapProg*, but Blob, which it allocates all the time) have the same
      instances and arrays in both dumps, and the same classes.
fallback: under --limit-modules java.base there is no HotSpotDiagnosticMXBean: the dump is
      walked (the log says why) and the reader takes it. Exits 0 or 1."""
import os
import shutil
import subprocess
import sys

from agent_jvm import launch
from prof_agent import values_checks

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "hprof"))
import hprof_reader  # noqa: E402

FAST = "(the VM's own dumper)"


def own(s):
    """HeapProg's own classes: instances and arrays by name, and the class names (not Blob)."""
    keep = lambda n: n.startswith("HeapProg") and not n.startswith("HeapProg$Blob")  # noqa: E731
    return ({n: k for n, k in s["instances"].items() if keep(n)}, {n: k for n, k in s["arrays"].items() if keep(n)},
            sorted(n for n in s["class_names"] if keep(n)))


class Run:
    def __init__(self, java, agent, classes, work, name, env=None, jvm=()):
        self.out = os.path.join(work, name + ".out")
        # TMPDIR of its own: where the library's private directory for HotSpot's file goes
        self.tmp = os.path.join(work, name + ".tmp")
        shutil.rmtree(self.tmp, ignore_errors=True)
        os.makedirs(self.tmp)
        env = dict(os.environ, DDMC_JDWP_VERBOSE="1", TMPDIR=self.tmp, **(env or {}))
        self.vm, self.port = launch(java, [*jvm, f"-agentpath:{os.path.abspath(agent)}=transport=dt_socket,"
                                           "server=y,suspend=n,address=127.0.0.1:0"], classes, "HeapProg",
                                    self.out, ready="ready", env=env)

    def log(self):
        return open(self.out, errors="replace").read()

    def stop(self):
        if self.vm.poll() is None:
            self.vm.kill()
        self.vm.wait()


def main():
    agent, ddmc, hprof_conv, work = sys.argv[1:5]
    java, javac = shutil.which("java"), shutil.which("javac")
    if not java or not javac or not os.path.exists(hprof_conv):
        print("FAIL: java, javac or hprof-conv missing (scripts/setup.sh installs them)")
        return 1
    os.makedirs(work, exist_ok=True)
    classes = os.path.join(work, "classes")
    os.makedirs(classes, exist_ok=True)
    subprocess.run([javac, "-g", "-d", classes, os.path.join(HERE, "HeapProg.java")], check=True)
    report, checks = [], []

    def run(*args, timeout=120):
        r = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
        report.append(f"$ {' '.join(args)}\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
        return r.returncode

    def dump(r, name, *how):
        path = os.path.join(work, name)
        if os.path.exists(path):
            os.unlink(path)
        how = how or ("-o", path)
        if r.port is None or run(ddmc, "-c", f"127.0.0.1:{r.port}", "hprof", *how) != 0:
            return path, None
        try:
            return path, hprof_reader.summary(hprof_reader.read(open(path, "rb").read()))
        except (hprof_reader.Bad, OSError) as e:
            report.append(f"reader: {path}: {e}")
            return path, None

    runs = []
    try:
        fast = Run(java, agent, classes, work, "fast")
        runs.append(fast)
        hpds, s = dump(fast, "fast.hprof")
        hpdu, u = dump(fast, "fast-hpdu.hprof", "--device-file", os.path.join(work, "fast-hpdu.hprof"))
        log = fast.log()
        checks += [("HotSpot's file and its directory removed", os.listdir(fast.tmp) == [])]
        checks += [("HPDS: the strict reader takes the dump", s is not None),
                   ("HPDU: the strict reader takes the file", u is not None),
                   ("both written by HotSpot's dumper", log.count(FAST) >= 2),
                   ("1000 HeapProg$Node (HPDS, HPDU)", s is not None and u is not None
                    and s["instances"].get("HeapProg$Node") == 1000 == u["instances"].get("HeapProg$Node"))]
        checks += values_checks(hpds) if s is not None else [("field values", False)]
        conv = os.path.join(work, "fast-conv.hprof")
        c = None
        if s is not None and run(hprof_conv, hpds, conv) == 0:
            c = hprof_reader.summary(hprof_reader.read(open(conv, "rb").read()))
        checks += [("hprof-conv converts it", c is not None and c["version"] == "1.0.2")]

        walk = Run(java, agent, classes, work, "walk", env={"DDMC_JDWP_HPROF_WALK": "1"})
        runs.append(walk)
        _, w = dump(walk, "walk.hprof")
        checks += [("walk: the strict reader takes the dump", w is not None),
                   ("walk: no dump by HotSpot's dumper", FAST not in walk.log() and "heap dump queued" in walk.log())]
        if s is not None and w is not None:
            a, b = own(s), own(w)
            report.append(f"HeapProg's classes, fast: {a}\nwalk: {b}")
            checks += [("the program's instances, arrays and classes: the same in both dumps", a == b and len(a[2]) >= 5)]

        lim = Run(java, agent, classes, work, "limited", jvm=["--limit-modules", "java.base"])
        runs.append(lim)
        _, m = dump(lim, "limited.hprof")
        checks += [("no MXBean: walked, and the log says why", "walking the heap instead" in lim.log()
                    and FAST not in lim.log()),
                   ("no MXBean: the reader takes it, 1000 Nodes", m is not None and m["instances"].get("HeapProg$Node") == 1000)]
        failed = [n for n, ok in checks if not ok]
        if failed:
            print("FAIL: " + ", ".join(failed) + "\n" + "\n".join(report) + "\n" + "\n".join(r.log()[-4000:] for r in runs))
            return 1
        print("\n".join(report) + f"\nPASS: {len(checks)} checks")
        return 0
    finally:
        for r in runs:
            r.stop()


if __name__ == "__main__":
    sys.exit(main())
