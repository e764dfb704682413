#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Heap dumps of minivm end to end, with the real tools: `ddmc hprof` (HPDS and HPDU), the strict
reader (hprof_reader.py), Debian's hprof-conv. One ctest test per case:

    test_minivm_hprof.py --ddmc PATH --minivm PATH --programs DIR --hprof-conv PATH --workdir DIR CASE

dump   programs/heap.mvm with MINIVM_HPROF_CENSUS: the dump passes the strict reader, holds exactly
       the objects the VM counted (its census, taken in the same stop of the world) and the ones
       the program made (1000 Node, 250 Leaf, ten int[100], one Leaf[]), the roots minivm has
       (threads, frames, the monitor "locker" holds, class objects, thread groups); hprof-conv
       converts it and the reader takes the 1.0.2 file with the same counts; `ddmc hprof
       --standard` writes the bytes hprof-conv writes (but for the 8-byte timestamp of a second
       dump); --json; HPDU (--device-file) to a writable and an unwritable path.
stall  programs/bigheap.mvm (a 24 MiB dump): a peer asks for HPDS and reads nothing; the VM keeps
       running (its ticks go on), drops the transfer after stall_timeout_ms (30 s) and says so,
       and the next `ddmc hprof` gets a whole dump.
A missing hprof-conv fails the case (scripts/setup.sh installs it); nothing is skipped.
"""
import argparse
import json
import os
import re
import socket
import struct
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import hprof_reader  # noqa: E402

ARGS = None
CHILDREN = []


class Failure(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failure(msg)


def log(msg):
    print("[hprof %s] %s" % (time.strftime("%H:%M:%S"), msg), flush=True)


class VM:
    def __init__(self, program, vm_args=(), env=None):
        cmd = [ARGS.minivm, "-agentlib:jdwp=transport=dt_socket,address=127.0.0.1:0,server=y,suspend=n", *vm_args,
               os.path.join(ARGS.programs, program)]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=dict(os.environ, **(env or {})))
        CHILDREN.append(self.proc)
        self.err, self.out = [], []
        self.port = None
        self.ready = threading.Event()
        got = threading.Event()

        def read_err():
            for raw in self.proc.stderr:
                line = raw.decode("utf-8", "replace").rstrip("\n")
                self.err.append(line)
                m = re.search(r"JDWP listening on [^ ]*:(\d+)\s*$", line)
                if m and self.port is None:
                    self.port = int(m.group(1))
                    got.set()
            got.set()

        def read_out():
            for raw in self.proc.stdout:
                line = raw.decode("utf-8", "replace").rstrip("\n")
                self.out.append(line)
                if line == "ready":
                    self.ready.set()

        threading.Thread(target=read_err, daemon=True).start()
        threading.Thread(target=read_out, daemon=True).start()
        check(got.wait(15) and self.port, "minivm did not report its port: %r" % self.err[-5:])
        check(self.ready.wait(30), "minivm did not print ready: %r" % self.out[-5:])
        self.target = "127.0.0.1:%d" % self.port
        log("minivm %s pid %d on %s" % (program, self.proc.pid, self.target))

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)


def ddmc(target, *args, rc=0, timeout=120):
    cmd = [ARGS.ddmc, "-c", target, *args]
    r = subprocess.run(cmd, capture_output=True, timeout=timeout)
    out, err = r.stdout.decode(), r.stderr.decode()
    check(r.returncode == rc, "%s: exit %d, expected %d\nstderr: %s\nstdout: %s" % (" ".join(args), r.returncode, rc,
                                                                                    err.strip(), out[:1000]))
    return out, err


def read(path, census=None):
    try:
        d = hprof_reader.read(open(path, "rb").read())
        s = hprof_reader.summary(d)
        if census:
            hprof_reader.check_census(s, census)
    except hprof_reader.Bad as e:
        raise Failure("strict reader: %s: %s" % (path, e))
    return s


def work(name):
    return os.path.join(ARGS.workdir, name)


def case_dump():
    census = work("census.txt")
    vm = VM("heap.mvm", env={"MINIVM_HPROF_CENSUS": census})
    a = work("heap.hprof")
    out, _ = ddmc(vm.target, "hprof", "-o", a)
    check(re.match(r"hprof +%s: \d+ bytes \(JAVA PROFILE 1\.0\.3\), 28 classes" % re.escape(a), out), out)
    s = read(a, census)
    log("dump: %s" % json.dumps({"instances": s["instances"], "arrays": s["arrays"], "roots": s["roots"]}))
    inst, arrays, roots = s["instances"], s["arrays"], s["roots"]
    check(inst.get("Node") == 1000 and inst.get("Leaf") == 250 and inst.get("Holder") == 1, "instances %r" % inst)
    check(inst.get("java.lang.String", 0) >= 1250, "strings %r" % inst)
    check(arrays.get("int[]") == 10 and arrays.get("Leaf[]") == 1, "arrays %r" % arrays)
    check(roots.get("thread-object", 0) >= 2, "thread roots %r" % roots)   # main, locker (+ JDWP, GC)
    check(roots.get("monitor-used") == 1, "monitor roots %r" % roots)      # the Holder locker holds
    check(roots.get("java-frame", 0) >= 2, "frame roots %r" % roots)
    check(roots.get("sticky-class") == s["class_objects"] and roots.get("vm-internal") == 2, "roots %r" % roots)
    check(s["heap_infos"] >= 1 and s["version"] == "1.0.3", "heap infos %r" % s)

    # hprof-conv converts it; the reader takes the 1.0.2 file, with the same objects.
    c = work("heap-conv.hprof")
    r = subprocess.run([ARGS.hprof_conv, a, c], capture_output=True, timeout=60)
    check(r.returncode == 0, "hprof-conv: exit %d: %s" % (r.returncode, r.stderr.decode()))
    sc = read(c, census)
    check(sc["version"] == "1.0.2" and sc["instances"] == s["instances"] and sc["arrays"] == s["arrays"],
          "after hprof-conv: %r" % sc)
    check(sum(sc["roots"].values()) == sum(s["roots"].values()) and sc["heap_infos"] == 0, "roots %r" % sc["roots"])

    # ddmc --standard: what hprof-conv writes. A second dump of the idle VM differs from the first
    # only in its timestamp (bytes 23..30 of the header).
    std = work("heap-std.hprof")
    ddmc(vm.target, "hprof", "-o", std, "--standard")
    x, y = open(c, "rb").read(), open(std, "rb").read()
    check(len(x) == len(y) and x[:23] == y[:23] and x[31:] == y[31:],
          "ddmc --standard differs from hprof-conv (%d vs %d bytes)" % (len(y), len(x)))
    read(std, census)
    # hprof-conv refuses its own output (docs/protocol/profiling.md §6.4); so does a second
    # conversion by ddmc's host code.
    r = subprocess.run([ARGS.hprof_conv, std, work("again.hprof")], capture_output=True, timeout=60)
    check(r.returncode != 0 and b"already in 1.0.2" in r.stderr, "hprof-conv on 1.0.2: %r" % r.stderr)

    # --json
    j = work("heap-json.hprof")
    out, _ = ddmc(vm.target, "--json", "hprof", "-o", j)
    doc = json.loads(out)
    check(doc["ok"] and doc["hprof"]["format"] == "JAVA PROFILE 1.0.3" and doc["hprof"]["bytes"] == os.path.getsize(j),
          "json %r" % doc)
    check(doc["hprof"]["instances"] == sum(s["instances"].values()), "json instances %r" % doc)

    # HPDU: the VM writes the file; an unwritable path fails with why.
    dev = work("device.hprof")
    if os.path.exists(dev):
        os.unlink(dev)
    ddmc(vm.target, "hprof", "--device-file", dev)
    read(dev, census)
    _, err = ddmc(vm.target, "hprof", "--device-file", "/nonexistent-dir/x.hprof", rc=5)
    check("cannot open /nonexistent-dir/x.hprof: No such file or directory" in err, "HPDU failure: %r" % err)
    check(vm.proc.poll() is None, "minivm died")
    vm.stop()


def case_stall():
    vm = VM("bigheap.mvm", vm_args=["-Xmx64m"])
    s = socket.create_connection(("127.0.0.1", vm.port), timeout=10)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.sendall(b"JDWP-Handshake")
    got = b""
    while len(got) < 14:
        got += s.recv(14 - len(got))
    check(got == b"JDWP-Handshake", "handshake %r" % got)
    s.sendall(struct.pack(">IIBBB", 11 + 8, 0x40000001, 0, 199, 1) + b"HPDS" + struct.pack(">I", 0))
    log("HPDS sent; reading nothing")
    ticks = len(vm.out)
    t0 = time.monotonic()
    while time.monotonic() - t0 < 60 and not any("heap dump transfer dropped" in l for l in vm.err):
        time.sleep(0.5)
    waited = time.monotonic() - t0
    check(any("heap dump transfer dropped" in l for l in vm.err), "no drop after %.0f s: %r" % (waited, vm.err[-5:]))
    check(len(vm.out) - ticks >= waited * 2, "the VM stalled: %d ticks in %.0f s" % (len(vm.out) - ticks, waited))
    log("dropped after %.1f s; %d ticks meanwhile" % (waited, len(vm.out) - ticks))
    s.close()
    big = work("big.hprof")
    out, err = ddmc(vm.target, "hprof", "-o", big)
    check("receiving the heap dump" in err, "no progress line: %r" % err)
    sm = read(big)
    check(sm["arrays"].get("int[]") == 24 and os.path.getsize(big) > 24 * 1024 * 1024, "big dump %r" % sm["arrays"])
    vm.stop()


def main():
    global ARGS
    p = argparse.ArgumentParser()
    for a in ("--ddmc", "--minivm", "--programs", "--hprof-conv", "--workdir"):
        p.add_argument(a, required=True)
    p.add_argument("case")
    ARGS = p.parse_args()
    if not os.path.isfile(ARGS.hprof_conv) or not os.access(ARGS.hprof_conv, os.X_OK):
        print("FAIL: hprof-conv not found at '%s' (Debian package hprof-conv; scripts/setup.sh installs it)"
              % ARGS.hprof_conv, file=sys.stderr)
        return 1
    os.makedirs(ARGS.workdir, exist_ok=True)
    try:
        {"dump": case_dump, "stall": case_stall}[ARGS.case]()
    except Failure as e:
        print("FAIL: %s" % e, file=sys.stderr)
        return 1
    finally:
        for c in CHILDREN:
            if c.poll() is None:
                c.kill()
                c.wait(timeout=10)
    log("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
