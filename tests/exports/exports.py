#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ddmc's exports (tools/export.h) from real minivm runs, read back by their consumers.

    exports.py --ddmc PATH --minivm PATH --programs DIR --dmtracedump PATH --node PATH
               --proto PROFILE.proto --workdir DIR CASE

trace     `ddmc trace` of trace.mvm with --chrome, --speedscope, --collapsed and --pprof: the
          speedscope file passes speedscope's own schema and its evented rules and opens each
          method as often as dmtracedump lists its entries; the collapsed stacks' self times are
          what this script works out from the Trace Event file on its own, and per thread add up
          to the thread's span; the pprof file decodes with protobufjs against pprof's own
          profile.proto and with pprof-format, with the same self times and call counts; --clock
          cpu follows dmtracedump's clock.
sample    a sampling trace (SPSS) of spin.mvm: speedscope and pprof read it.
stuck     a sampling trace of stuck.mvm, whose threads never change stack: each still gets the
          trace's time (the sampler closes open frames at SPSE), and dmtracedump reads those exits.
alloc     `ddmc alloc --pprof`: one sample per allocation, the sites of the table with their bytes.
timeline  `ddmc timeline` of two VMs at once (trace.mvm, alloc.mvm): one process each, thread
          states as slices that never overlap on a thread, heap counters, and alloc.mvm's GCs;
          Chrome DevTools' trace engine sees the same processes, threads and slices.
progress  `ddmc hprof` of bigheap.mvm (24 MiB) and `ddmc trace` of spin.mvm under a terminal (a
          pty): the progress line is redrawn in place and ends with the whole size and the rate.

The npm consumers are in tests/exports/node_modules (scripts/setup.sh: npm ci); check_exports.mjs
runs them. The VM plumbing is tests/e2e/e2e.py's."""
import argparse
import collections
import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "e2e"))
import e2e  # noqa: E402
from e2e import VM, Failure, check, ddmc, log  # noqa: E402

ARGS = None


def consumer(what, path, *extra):
    """check_exports.mjs: the consumers' verdict (a failure with their message) and summary."""
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_exports.mjs")
    r = subprocess.run([ARGS.node, script, what, path, *extra], capture_output=True, timeout=120)
    check(r.returncode == 0, f"{what} consumer refuses {path}", r.stderr.decode()[-2000:])
    return json.loads(r.stdout)


def chrome_self_times(path):
    """Self time per stack (thread name first) from --chrome's B/E events, worked out here."""
    with open(path) as f:
        ev = json.load(f)["traceEvents"]
    names = {e["tid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
    stacks, last, self_t, span = {}, {}, collections.Counter(), {}
    for e in ev:
        if e["ph"] not in ("B", "E"):
            continue
        tid, ts = e["tid"], e["ts"]
        st = stacks.setdefault(tid, [names.get(tid, f"thread {tid}")])
        if tid in last:
            self_t[";".join(st)] += ts - last[tid]
        last[tid] = ts
        span.setdefault(tid, [ts, ts])[1] = ts
        if e["ph"] == "B":
            st.append(e["name"])
        elif len(st) > 1:
            st.pop()
    return {k: v for k, v in self_t.items() if v}, {names.get(t, t): b - a for t, (a, b) in span.items()}


def read_collapsed(path):
    got = collections.Counter()
    with open(path) as f:
        for line in f:
            m = re.match(r"^(.+) (\d+)$", line.rstrip("\n"))
            check(m, "a collapsed line is 'frame;frame N'", line)
            got[m.group(1)] += int(m.group(2))
    return got


def case_trace():
    vm = VM("trace")
    w = ARGS.workdir
    tr, ch, ss, co, pb = (os.path.join(w, n) for n in ("t.trace", "t.json", "t.speedscope.json", "t.txt", "t.pb"))
    doc, _, _ = ddmc("trace", "--duration", "1.5", "-o", tr, "--chrome", ch, "--speedscope", ss, "--collapsed", co,
                     "--pprof", pb, target=vm.target, timeout=120)
    t = doc["trace"]
    check(t.get("speedscope") == ss and t.get("collapsed") == co and t.get("pprof") == pb, "exports reported", t)
    recs = e2e.listing(tr)
    entries = collections.Counter(r[4] for r in recs if r[1] == "ent")
    check(entries["Trace.fib"] > 0 and entries["Trace.leaf"] > 0, "the trace calls fib and leaf", entries)
    # speedscope: its schema and rules; each method opened once per entry.
    s = consumer("speedscope", ss)
    check([p["name"] for p in s["profiles"]] == ["main"], "one profile, the main thread (the others ran no method)",
          s["profiles"])
    opens = s["profiles"][0]["opens"]
    check(opens == dict(entries), "speedscope opens = dmtracedump's entries", opens, dict(entries))
    # collapsed: the same self times as the Trace Event file says, by this script's own reckoning.
    want, span = chrome_self_times(ch)
    got = read_collapsed(co)
    check(got == want, "collapsed self times = those of the Trace Event file", sorted(got.items())[:20],
          sorted(want.items())[:20])
    check(sum(v for k, v in got.items() if k.split(";")[0] == "main") == span["main"], "main's lines add up to its span",
          span)
    check(any(k.endswith("Trace.fib;Trace.fib;Trace.fib") for k in got), "fib's recursion as nested frames", list(got))
    # pprof: two decoders; the leaf self times are the collapsed ones, the call counts the entries.
    p = consumer("pprof", pb, ARGS.proto)
    check(p["sampleTypes"] == [["wall", "nanoseconds"], ["calls", "count"]] and p["defaultSampleType"] == "wall",
          "pprof sample types", p)
    leaf = collections.Counter()
    for k, v in got.items():
        if ";" in k:
            leaf[k.split(";")[-1]] += v * 1000
    check({k: v[0] for k, v in p["self"].items() if v[0]} == dict(leaf), "pprof self ns = collapsed µs x 1000",
          p["self"], dict(leaf))
    check({k: v[1] for k, v in p["self"].items()} == dict(entries), "pprof calls = entries", p["self"], dict(entries))
    check(p["labels"]["thread"] == {"main": p["samples"]} and p["files"] == ["Trace.java"], "labels, files", p)
    # --clock cpu: dmtracedump's clock (its listing's times); per thread the lines add up to its span.
    ddmc("trace", "--duration", "1", "-o", tr, "--collapsed", co, "--clock", "cpu", target=vm.target, timeout=120)
    recs = e2e.listing(tr)
    main_times = [r[2] for r in recs if r[0] == 1]
    got = read_collapsed(co)
    check(sum(v for k, v in got.items() if k.startswith("main")) == max(main_times) - min(main_times),
          "cpu clock: main's lines add up to its CPU span in dmtracedump's listing", max(main_times) - min(main_times))
    # The usage side: a bad --clock never reaches the VM.
    r = subprocess.run([ARGS.ddmc, "-c", "127.0.0.1:1", "trace", "-d", "1", "-o", tr, "--clock", "sun"],
                       capture_output=True, timeout=30)
    check(r.returncode == 64, "--clock sun is a usage error", r.returncode, r.stderr)


def case_sample():
    vm = e2e.spin_vm()
    w = ARGS.workdir
    tr, ss, pb = (os.path.join(w, n) for n in ("s.trace", "s.speedscope.json", "s.pb"))
    ddmc("trace", "--sample", "1000", "--duration", "1", "-o", tr, "--speedscope", ss, "--pprof", pb,
         target=vm.target, timeout=120)
    s = consumer("speedscope", ss)
    names = {n for pr in s["profiles"] for n in pr["opens"]}
    check(any(n.startswith("Spin.") for n in names), "the samples name Spin's methods", names)
    p = consumer("pprof", pb, ARGS.proto)
    check(any(n.startswith("Spin.") for n in p["incl"]) and p["samples"] > 0, "pprof of the samples", p)


def case_stuck():
    vm = VM(os.path.join(os.path.dirname(os.path.abspath(__file__)), "stuck.mvm"))
    time.sleep(0.5)  # Spinner is in its loop
    tr, co, ss = (os.path.join(ARGS.workdir, n) for n in ("stuck.trace", "stuck.collapsed", "stuck.speedscope.json"))
    ddmc("trace", "--sample", "1000", "--duration", "2", "-o", tr, "--collapsed", co, "--speedscope", ss,
         target=vm.target, timeout=120)
    got = read_collapsed(co)
    # Two seconds of wall time: each stack holds the whole trace (a loaded machine: half of it).
    for stack in ("Spinner;Stuck.spin", "main;Stuck.main"):
        check(got.get(stack, 0) >= 1000000, f"{stack} gets the trace's time", dict(got))
    s = consumer("speedscope", ss)
    check(any(n == "Stuck.spin" for pr in s["profiles"] for n in pr["opens"]), "speedscope opens Stuck.spin", s)
    recs = e2e.listing(tr)
    spin = [r for r in recs if r[4] == "Stuck.spin"]
    check([r[1] for r in spin] == ["ent", "xit"], "dmtracedump: Stuck.spin entered once, left at the stop", spin)


def case_alloc():
    vm = VM("trace")
    pb = os.path.join(ARGS.workdir, "a.pb")
    doc, _, _ = ddmc("alloc", "--duration", "1", "--top", "100", "--pprof", pb, target=vm.target, timeout=60)
    a = doc["alloc"]
    check(a["pprof"] == pb and a["records"] >= 60, "alloc report", a)
    p = consumer("pprof", pb, ARGS.proto)
    check(p["sampleTypes"] == [["alloc_objects", "count"], ["alloc_space", "bytes"]], "alloc sample types", p)
    check(p["samples"] == a["records"], "a sample per allocation", p["samples"], a["records"])
    by_fn = collections.Counter()
    for site in a["sites"]:
        by_fn[site["site"].split("(")[0]] += site["bytes"]
    check({k: v[1] for k, v in p["self"].items()} == dict(by_fn), "bytes per innermost frame = the table's",
          p["self"], dict(by_fn))
    classes = p["labels"]["class"]
    check(set(classes) == {"Node", "int[]", "byte[]", "java.lang.String", "java.lang.RuntimeException", "long[]"},
          "class labels", classes)
    check(max(classes.values()) - min(classes.values()) <= 1, "each class once a round", classes)


def case_timeline():
    # Usage errors never reach a VM (nothing listens on port 1).
    for args, what in ((["timeline", "-d", "1"], "needs -o"), (["timeline", "-o", "x.json"], "needs --duration"),
                       (["timeline", "-d", "1", "-o", "x", "--vm", "nope"], "bad --vm"),
                       (["timeline", "-d", "1", "-o", "x", "--vm", "pid:0"], "pid 0"),
                       (["timeline", "-d", "1", "-o", "x", "--interval", "5"], "interval under 10 ms"),
                       (["timeline", "-d", "1", "-o", "x", "--adb", "--vm", "1.2.3.4:5"], "--adb with --vm"),
                       (["-s", "emu", "info"], "-s without -p, ps or timeline"),
                       (["trace", "-d", "1", "-o", "x", "--pprof"], "--pprof without a file"),
                       (["alloc", "start", "--pprof", "x.pb"], "start writes no report")):
        r = subprocess.run([ARGS.ddmc, "-c", "127.0.0.1:1", *args], capture_output=True, timeout=30)
        check(r.returncode == 64, f"usage error: {what}", r.returncode, r.stderr)
    vms = [VM("trace"), VM("alloc", vm_args=["-Xmx4m"])]
    out = os.path.join(ARGS.workdir, "timeline.json")
    doc, _, _ = ddmc("timeline", "--duration", "3", "--interval", "50", "-o", out,
                     *[a for v in vms for a in ("--vm", v.target)], timeout=120)
    rep = doc["timeline"]["vms"]
    check([v["pid"] for v in rep] == [v.pid for v in vms], "a process per VM, its pid", rep)
    with open(out) as f:
        d = json.load(f)
    ev = d["traceEvents"]
    for e in ev:  # the Trace Event format's rules for the phases used
        check(e["ph"] in ("M", "X", "C", "i") and isinstance(e["pid"], int), "phase and pid", e)
        if e["ph"] != "M":
            check(isinstance(e["ts"], int) and e["ts"] >= 0, "ts", e)
        if e["ph"] == "X":
            check(isinstance(e["dur"], int) and e["dur"] > 0 and isinstance(e["tid"], int), "X: dur, tid", e)
        if e["ph"] == "C":
            check(all(isinstance(v, int) for v in e["args"].values()) and e["args"], "C: numbers", e)
    procs = {e["pid"]: e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
    check(set(procs) == {v.pid for v in vms}, "process names", procs)
    for v, r in zip(vms, rep):
        names = {e["tid"]: e["args"]["name"] for e in ev
                 if e["ph"] == "M" and e["name"] == "thread_name" and e["pid"] == v.pid}
        check("main" in names.values(), "thread names", names)
        slices = collections.defaultdict(list)
        for e in ev:
            if e["ph"] == "X" and e["pid"] == v.pid and e.get("cat") == "thread_state":
                slices[e["tid"]].append((e["ts"], e["ts"] + e["dur"], e["name"]))
        main = [k for k, n in names.items() if n == "main"][0]
        check(slices[main], "main's states", slices)
        for tid, sl in slices.items():
            sl.sort()
            check(all(a[1] <= b[0] for a, b in zip(sl, sl[1:])), "a thread's slices never overlap", sl)
            total = sum(b - a for a, b, _ in sl)
            check(total >= 2_000_000, "states cover most of the 3 s", tid, total)
        heap = [e for e in ev if e["ph"] == "C" and e["pid"] == v.pid and e["name"] == "heap bytes"]
        check(len(heap) >= 20 and all(e["args"]["allocated"] > 0 for e in heap), "heap counter samples", len(heap))
        check(r["thst"] >= 20, "a look every 50 ms", r)
    # Chrome DevTools' trace engine: the same processes, thread names and state slices.
    c = consumer("chrome", out)
    check(sorted(p["pid"] for p in c["processes"]) == sorted(v.pid for v in vms), "the engine's processes", c)
    for p in c["processes"]:
        ours = collections.Counter((e["tid"], e["name"]) for e in ev
                                   if e["ph"] == "X" and e["pid"] == p["pid"] and e.get("cat") == "thread_state")
        names = {e["tid"]: e["args"]["name"] for e in ev
                 if e["ph"] == "M" and e["name"] == "thread_name" and e["pid"] == p["pid"]}
        theirs = collections.Counter({(t["tid"], n): k for t in p["threads"] for n, k in t["slices"].items()})
        check(theirs == ours, "the engine's slices = the file's", p, dict(ours))
        check(all(t["name"] == names.get(t["tid"]) for t in p["threads"]), "the engine's thread names", p, names)
    gcs = [e for e in ev if e.get("cat") == "gc"]
    check(gcs and {e["pid"] for e in gcs} == {vms[1].pid} and all(e["tid"] == 0 for e in gcs),
          "alloc.mvm's GCs on its GC track (trace.mvm runs none)", gcs[:5])


def under_pty(cmd, timeout=120):
    """Runs cmd with stderr on a pty (stdout a pipe); returns (rc, stdout, what the terminal got)."""
    master, slave = pty.openpty()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL)
    e2e.CHILDREN.append(p)
    os.close(slave)
    term, end = b"", time.monotonic() + timeout
    while time.monotonic() < end:
        r, _, _ = select.select([master], [], [], 0.5)
        if r:
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            term += chunk
        elif p.poll() is not None:
            break
    out = p.stdout.read().decode()
    rc = p.wait(timeout=30)
    os.close(master)
    return rc, out, term.decode("utf-8", "replace")


def check_progress(term, what, mib):
    lines = re.findall(r"ddmc: receiving " + what + r": ([\d.]+) of ([\d.]+) MiB([^\r\n]*)", term)
    check(lines, f"a progress line for {what}", term[-2000:])
    check("\r" + f"ddmc: receiving {what}" in term, "redrawn in place (a carriage return)", term[-2000:])
    have, total, tail = lines[-1]
    check(have == total and float(total) >= mib, "the last line: the whole size", lines[-1])
    check(re.match(r"^, [\d.]+ MiB/s, [\d.]+ s\x1b\[K$", tail), "the last line: rate and time taken", repr(tail))
    for _, _, tail in lines[:-1]:
        check(re.match(r"^(, [\d.]+ MiB/s(, \d+ s left)?)?\x1b\[K$", tail), "a progress line's tail", repr(tail))


def case_progress():
    vm = VM("bigheap", vm_args=["-Xmx64m"])
    time.sleep(1.0)  # the heap is built before the first tick
    rc, out, term = under_pty([ARGS.ddmc, "-c", vm.target, "hprof", "-o", os.path.join(ARGS.workdir, "big.hprof")])
    check(rc == 0 and "instances" in out, "ddmc hprof", rc, out, term[-1000:])
    check_progress(term, "the heap dump", 24.0)
    vm.stop()
    vm = e2e.spin_vm()
    time.sleep(0.5)
    rc, out, term = under_pty([ARGS.ddmc, "-c", vm.target, "trace", "-d", "2", "--buffer", "4",
                               "-o", os.path.join(ARGS.workdir, "spin.trace")])
    check(rc == 0, "ddmc trace", rc, out, term[-1000:])
    check_progress(term, "the trace", 3.9)


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for a in ("--ddmc", "--minivm", "--programs", "--dmtracedump", "--node", "--proto"):
        ap.add_argument(a, required=True)
    ap.add_argument("--workdir", default=".")
    ap.add_argument("case", choices=sorted(CASES))
    ARGS = ap.parse_args()
    ARGS.workdir = os.path.join(ARGS.workdir, ARGS.case)
    os.makedirs(ARGS.workdir, exist_ok=True)
    e2e.ARGS = ARGS
    for what, path in (("node", ARGS.node), ("pprof's profile.proto", ARGS.proto)):
        if not path or not os.path.exists(path):
            print(f"FAIL {ARGS.case}: {what} not found ({path}): run scripts/setup.sh", file=sys.stderr)
            return 1
    signal.signal(signal.SIGTERM, lambda *_: (e2e.cleanup(), os._exit(1)))
    t0 = time.monotonic()
    try:
        CASES[ARGS.case]()
    except (Failure, subprocess.TimeoutExpired) as e:
        print(f"FAIL {ARGS.case}: {e}", file=sys.stderr)
        return 1
    finally:
        e2e.cleanup()
    log(f"PASS {ARGS.case} ({time.monotonic() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
