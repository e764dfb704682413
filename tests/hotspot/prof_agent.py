#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Heap dumps and profiling on HotSpot through libddmcjdwp.so, against HeapProg.java (1000
HeapProg$Node kept from a static, HeapProg$Blob allocated 100 every 50 ms):

    prof_agent.py AGENT.so DDMC_BINARY HPROF_CONV WORKDIR

hprof: `ddmc hprof -o` passes the strict reader (tests/hprof/hprof_reader.py) with exactly 1000
       HeapProg$Node; hprof-conv converts it and the reader takes the 1.0.2 file; `--standard`
       too. alloc: `ddmc alloc` lists HeapProg$Blob allocated at HeapProg.allocate, and its
       --pprof file (read back by tests/exports/check_exports.mjs: protobufjs with pprof's own
       profile.proto, pprof-format) has the same. trace: `ddmc trace` and `trace --sample` files
       that dmtracedump reads, naming HeapProg.allocate; their --speedscope and --pprof exports
       pass the same consumers and name it too, and so do the method trace's --collapsed stacks.
timeline: `ddmc timeline` names the JVM's threads, gives their states and heap counters.
bitmap: `ddmc heap --bitmap` fails and says why (no segment picture on a JVM). Exits 0 or 1."""
import json
import os
import re
import shutil
import subprocess
import sys

from agent_jvm import launch

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK_EXPORTS = os.path.join(os.path.dirname(HERE), "exports", "check_exports.mjs")
PPROF_PROTO = "/usr/share/gocode/src/github.com/google/pprof/proto/profile.proto"


def consumer(node, report, what, path, *extra):
    """tests/exports/check_exports.mjs: its summary, or None (the reason goes to the report)."""
    r = subprocess.run([node, CHECK_EXPORTS, what, path, *extra], capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        report.append(f"{what} consumer: {path}: {r.stderr[-2000:]}")
        return None
    return json.loads(r.stdout)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "hprof"))
import hprof_reader  # noqa: E402


def values_checks(path):
    """The values of HeapProg$Mixed's fields of every type and of the 1000 Nodes' chain."""
    d = hprof_reader.read(open(path, "rb").read())
    by_name = {}
    for oid, cid, vals, _ in d.instances:
        by_name.setdefault(hprof_reader.class_name(d, cid), []).append((oid, hprof_reader.fields_of(d, vals, cid)))
    mixed = by_name.get("HeapProg$Mixed", [])
    m = mixed[0][1] if len(mixed) == 1 else {}
    mid = mixed[0][0] if len(mixed) == 1 else None
    want = {"z": True, "b": -7, "c": ord("Q"), "s": -1234, "i": 0x12345678, "j": -0x123456789ab, "f": 1.5,
            "d": -2.25, "baseLong": 42, "self": mid}
    wrong = {k: m.get(k) for k, v in want.items() if m.get(k) != v}
    arr = d.objects.get(m.get("arr"), (None,))[0]
    elems = d.elements.get(m.get("baseRef"))
    nodes = {oid: f for oid, f in by_name.get("HeapProg$Node", [])}
    chain = all((f["next"] == 0 and f["value"] == 0) or
                (f["next"] in nodes and nodes[f["next"]]["value"] == f["value"] - 1) for f in nodes.values())
    return [("one HeapProg$Mixed", len(mixed) == 1),
            ("Mixed's fields of every type hold their values" + (f" (wrong: {wrong})" if wrong else ""), not wrong),
            ("Mixed.arr names an int[]", arr == "primarray"),
            ("Mixed.baseRef names an Object[] of {the Mixed, null}", elems == [mid, 0]),
            ("each Node's next is the Node of value - 1", len(nodes) == 1000 and chain)]


def main():
    agent, ddmc, hprof_conv, work = sys.argv[1:5]
    java, javac, dmtd = shutil.which("java"), shutil.which("javac"), shutil.which("dmtracedump")
    node = shutil.which("node")
    if not java or not javac or not dmtd or not os.path.exists(hprof_conv) or not node or not os.path.exists(PPROF_PROTO):
        print("FAIL: java, javac, dmtracedump, hprof-conv, node or pprof's profile.proto missing "
              "(scripts/setup.sh installs them)")
        return 1
    os.makedirs(work, exist_ok=True)
    classes = os.path.join(work, "classes")
    os.makedirs(classes, exist_ok=True)
    subprocess.run([javac, "-g", "-d", classes, os.path.join(HERE, "HeapProg.java")], check=True)
    out_path = os.path.join(work, "vm.out")
    # Verbose: the heap walk's steps with their CPU time, in vm.out for whoever reads it.
    env = dict(os.environ, DDMC_JDWP_VERBOSE="1")
    vm, port = launch(java, [f"-agentpath:{os.path.abspath(agent)}=transport=dt_socket,server=y,"
                             "suspend=n,address=127.0.0.1:0"], classes, "HeapProg", out_path, ready="ready", env=env)
    report, checks = [], []
    try:
        if port is None:
            print("FAIL: the VM did not start\n" + open(out_path).read())
            return 1

        def run(*args, timeout=60):
            r = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
            report.append(f"$ {' '.join(args)}\n{r.stdout[-3000:]}{r.stderr[-3000:]}")
            return r.returncode, r.stdout + r.stderr

        def ddmc_run(*args, timeout=60):
            return run(ddmc, "-c", f"127.0.0.1:{port}", *args, timeout=timeout)

        def read(path):
            try:
                return hprof_reader.summary(hprof_reader.read(open(path, "rb").read()))
            except (hprof_reader.Bad, OSError) as e:
                report.append(f"reader: {path}: {e}")
                return None

        dump, conv, std = (os.path.join(work, n) for n in ("a.hprof", "conv.hprof", "std.hprof"))
        for p in (dump, conv, std):
            if os.path.exists(p):
                os.unlink(p)
        rc, _ = ddmc_run("hprof", "-o", dump)
        s = read(dump) if rc == 0 else None
        checks += [("hprof exits 0", rc == 0), ("the strict reader takes the dump", s is not None),
                   ("1000 HeapProg$Node", s is not None and s["instances"].get("HeapProg$Node") == 1000),
                   ("roots: threads and frames", s is not None and s["roots"].get("thread-object", 0) > 0
                    and s["roots"].get("java-frame", 0) > 0)]
        checks += values_checks(dump) if s is not None else [("field values", False)]
        rc, _ = run(hprof_conv, dump, conv)
        c = read(conv) if rc == 0 else None
        checks += [("hprof-conv converts it", c is not None and c["version"] == "1.0.2"
                    and c["instances"].get("HeapProg$Node") == 1000)]
        rc, _ = ddmc_run("hprof", "-o", std, "--standard")
        t = read(std) if rc == 0 else None
        checks += [("--standard dump", t is not None and t["instances"].get("HeapProg$Node") == 1000)]

        apb = os.path.join(work, "alloc.pb")
        rc, out = ddmc_run("alloc", "--duration", "2", "--pprof", apb)
        checks += [("alloc exits 0", rc == 0),
                   ("alloc lists HeapProg$Blob at allocate",
                    re.search(r"^\s*\d+\s+\d+\s+HeapProg\$Blob\s+HeapProg\.allocate\(HeapProg\.java:\d+\)", out, re.M)
                    is not None)]
        p = consumer(node, report, "pprof", apb, PPROF_PROTO) if rc == 0 else None
        checks += [("alloc --pprof: Blobs allocated at HeapProg.allocate",
                    p is not None and p["labels"]["class"].get("HeapProg$Blob", 0) > 0
                    and p["self"].get("HeapProg.allocate", [0])[0] > 0)]

        for name, extra in (("trace", []), ("sample", ["--sample", "1000"])):
            path = os.path.join(work, name + ".trace")
            if os.path.exists(path):
                os.unlink(path)
            ss, co, pb = (os.path.join(work, name + x) for x in (".speedscope.json", ".txt", ".pb"))
            rc, _ = ddmc_run("trace", *extra, "--duration", "1", "-o", path, "--speedscope", ss, "--collapsed", co,
                             "--pprof", pb)
            rc2, out = run(dmtd, "-o", path) if rc == 0 else (1, "")
            checks += [(f"{name}: ddmc exits 0", rc == 0),
                       (f"{name}: dmtracedump names HeapProg.main", rc2 == 0 and "HeapProg.main" in out)]
            s = consumer(node, report, "speedscope", ss) if rc == 0 else None
            p = consumer(node, report, "pprof", pb, PPROF_PROTO) if rc == 0 else None
            lines = open(co).read().splitlines() if rc == 0 else []
            checks += [(f"{name}: speedscope's schema and rules, HeapProg.main opened",
                        s is not None and any("HeapProg.main" in pr["opens"] for pr in s["profiles"])),
                       (f"{name}: pprof names HeapProg.main", p is not None and "HeapProg.main" in p["incl"]),
                       (f"{name}: collapsed stacks through HeapProg.main",
                        # A sampled thread that never changed its stack has records at one time
                        # only: no self time, no line (export.h); the traced main thread has.
                        name == "sample" or any(re.match(r"^[^;]+;(.+;)?HeapProg\.main(;.+)? \d+$", ln)
                                                for ln in lines))]

        # ddmc timeline of the JVM: its threads' states as slices, its heap as counters.
        tl = os.path.join(work, "timeline.json")
        rc, _ = ddmc_run("timeline", "-d", "2", "-o", tl)
        ev = json.load(open(tl))["traceEvents"] if rc == 0 else []
        tnames = {e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
        states = {e["name"] for e in ev if e["ph"] == "X" and e.get("cat") == "thread_state"}
        heap = [e for e in ev if e["ph"] == "C" and e["name"] == "heap bytes" and e["args"]["allocated"] > 0]
        checks += [("timeline exits 0", rc == 0), ("timeline: the JVM's threads named", {"main", "Finalizer"} <= tnames),
                   ("timeline: thread states", "sleeping" in states or "wait" in states),
                   ("timeline: heap counters every 100 ms", len(heap) >= 10)]

        rc, out = ddmc_run("heap", "--bitmap", os.path.join(work, "heap.png"))
        checks += [("heap --bitmap refused, with the reason", rc != 0 and "cannot walk its heap" in out)]
        failed = [n for n, ok in checks if not ok]
        if failed:
            print("FAIL: " + ", ".join(failed) + "\n" + "\n".join(report) + "\n" + open(out_path).read())
            return 1
        print("\n".join(report) + f"\nPASS: {len(checks)} checks")
        return 0
    finally:
        if vm.poll() is None:
            vm.kill()
        vm.wait()


if __name__ == "__main__":
    sys.exit(main())
