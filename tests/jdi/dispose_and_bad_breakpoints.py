#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""VirtualMachine.Dispose and breakpoints at code indexes where no instruction starts, over raw
JDWP; python3 standard library only.

  dispose_and_bad_breakpoints.py --target jvm [--jvm-agent PATH] --workdir DIR
  dispose_and_bad_breakpoints.py --target minivm --minivm BIN --workdir DIR

Invoke (tests/jdi/Invoke.java on the JDK, examples/minivm/programs/invoke.mvm on minivm) runs with
server=y, suspend=n. Checks, the same under the JDK's agent, libddmcjdwp.so and minivm:

Breakpoints in Invoke.hit (EventRequest.Set, LocationOnly): an index before the method's code or
past its end is INVALID_LOCATION (24). On HotSpot, indexes 1 and 2 are the operand bytes of hit's
first instruction (getstatic, 3 bytes): libddmcjdwp.so answers INVALID_LOCATION and patches
nothing. libjdwp hands them to JVM TI's SetBreakpoint, which HotSpot 17 accepts (it checks only
the method's range) by overwriting an operand, and the JVM aborts when main runs hit: under the
JDK's agent (--target jvm without --jvm-agent) those two are not sent. Then a breakpoint where an
instruction starts but no line does (index 3 on HotSpot, iconst_1; index 1 on minivm, whose code
indexes count instructions) is accepted and hit by main, which shows nothing was overwritten.
On HotSpot, the methods of sun.invoke.util.Wrapper with a tableswitch or lookupswitch: at every
instruction javap lists a breakpoint is accepted, and (libddmcjdwp.so only) at every other index
refused.

Dispose: the reply comes, then the connection closes (a Version sent after the Dispose is never
answered), as libjdwp closes it; the VM runs on, listens again (server=y: the port the VM
announced last) and a new debugger's Version is answered.

Exits 0 when every check passes, 1 otherwise (a missing JDK or minivm is a failure).
"""
import argparse
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from wrong_kinds import Jdwp, class_id, ident, method_id, need, rd_str  # noqa: E402  (the raw client)

ROOT = os.path.dirname(os.path.dirname(HERE))
INVALID_LOCATION, NONE = 24, 0
GETSTATIC = 0xB2


def set_bp(conn, cls, meth, index):
    """(error, requestID) of a breakpoint request at index of cls.meth, suspend policy all."""
    data = bytes([2, 2]) + struct.pack(">I", 1) + bytes([7, 1]) + ident(cls) + ident(meth) + struct.pack(">q", index)
    err, reply = conn.cmd(15, 1, data)
    return err, (struct.unpack(">I", reply[:4])[0] if err == 0 else None)


def switch_methods(javap, cls):
    """{(name, descriptor): instruction offsets} of cls's methods with a tableswitch or lookupswitch,
    as the JDK's javap lists them (-c -p -s): an instruction line is "offset: mnemonic"; a
    switch's case lines ("key: target", "default: target") are not."""
    r = subprocess.run([javap, "-c", "-p", "-s", cls], capture_output=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError("javap %s: %s" % (cls, r.stderr.decode(errors="replace")))
    out, name, desc = {}, None, None
    for line in r.stdout.decode(errors="replace").splitlines():
        m = re.match(r"^  \S.*?([\w$]+)\(.*\);$", line)
        if m:
            name, desc = m.group(1), None
            continue
        m = re.match(r"^    descriptor: (\S+)$", line)
        if m and name:
            desc = m.group(1)
            out[(name, desc)] = []
            continue
        m = re.match(r"^\s+(\d+): ([a-z][a-z_0-9]*)", line)
        if m and name and desc:
            out[(name, desc)].append((int(m.group(1)), m.group(2)))
    return {k: [o for o, _ in v] for k, v in out.items() if any(op.endswith("switch") for _, op in v)}


def method_by_signature(conn, cls, name, sig):
    reply = need(conn, 2, 5, ident(cls), "ReferenceType.Methods")
    at = 4
    for _ in range(struct.unpack(">I", reply[:4])[0]):
        mid = struct.unpack(">Q", reply[at:at + 8])[0]
        mname, at = rd_str(reply, at + 8)
        msig, at = rd_str(reply, at)
        at += 4
        if (mname, msig) == (name, sig):
            return mid
    raise RuntimeError("no method %s%s" % (name, sig))


def switch_checks(conn, ours, report):
    """Every code index of the switch-holding methods of sun.invoke.util.Wrapper (loaded for the
    program's method reference): where javap lists an instruction a breakpoint (suspend policy
    none, cleared at once) is accepted; under ours, every other index is INVALID_LOCATION. The
    switches' padding and tables, and the rest of their instructions' lengths, are where a
    decoder goes wrong."""
    javap = shutil.which("javap")
    if not javap:
        raise RuntimeError("javap missing (Debian package default-jdk-headless)")
    methods = switch_methods(javap, "sun.invoke.util.Wrapper")
    if not methods:
        raise RuntimeError("javap lists no method of sun.invoke.util.Wrapper with a switch")
    cls = class_id(conn, "Lsun/invoke/util/Wrapper;")
    for (name, sig), starts in sorted(methods.items()):
        meth = method_by_signature(conn, cls, name, sig)
        size = len(need(conn, 6, 3, ident(cls) + ident(meth), "Method.Bytecodes")) - 4
        wrong = []
        for index in range(size) if ours else starts:
            data = bytes([2, 0]) + struct.pack(">I", 1) + bytes([7, 1]) + ident(cls) + ident(meth) + struct.pack(">q", index)
            err, reply = conn.cmd(15, 1, data)
            if err == 0:
                need(conn, 15, 2, bytes([2]) + reply[:4], "EventRequest.Clear")
            if err != (NONE if index in starts else INVALID_LOCATION):
                wrong.append((index, err))
        report(not wrong and starts[-1] < size, "Wrapper.%s%s: %d instructions in %d bytes, %s: %s"
               % (name, sig, len(starts), size, "every index" if ours else "every instruction",
                  "as javap says" if not wrong else "(index, error) %r" % wrong[:8]))


def announced_ports(out_path, listen):
    with open(out_path, errors="replace") as f:
        return [int(p) for p in listen.findall(f.read())]


def rounds(out_path):
    with open(out_path, errors="replace") as f:
        return len(re.findall(r"^round \d+$", f.read(), re.M))


def breakpoint_checks(conn, target, ours, report):
    cls = class_id(conn, "LInvoke;")
    hit = method_id(conn, cls, "hit")
    table = need(conn, 6, 1, ident(cls) + ident(hit), "Method.LineTable")
    start, end = struct.unpack(">qq", table[:16])
    for what, index in (("before the code (-1)", start - 1), ("past the end", end + 1), ("far past the end", 1 << 40)):
        err, _ = set_bp(conn, cls, hit, index)
        report(err == INVALID_LOCATION, "breakpoint %s: error %d (want %d)" % (what, err, INVALID_LOCATION))
    valid = 1
    if target == "jvm":
        code = need(conn, 6, 3, ident(cls) + ident(hit), "Method.Bytecodes")[4:]
        if not code or code[0] != GETSTATIC:
            raise RuntimeError("Invoke.hit does not start with getstatic: %s" % code.hex())
        valid = 3
        if ours:
            for index in (1, 2):
                err, _ = set_bp(conn, cls, hit, index)
                report(err == INVALID_LOCATION, "breakpoint inside getstatic (index %d): error %d (want %d)"
                       % (index, err, INVALID_LOCATION))
    err, req = set_bp(conn, cls, hit, valid)
    report(err == NONE, "breakpoint at index %d, an instruction's start: error %d" % (valid, err))
    if err != NONE:
        return
    kind, got, thread = conn.event()
    report(kind == 2 and got == req, "main reaches it: event kind %d, request %d (want 2, %d)" % (kind, got, req))
    frame = need(conn, 11, 6, ident(thread) + struct.pack(">ii", 0, 1), "ThreadReference.Frames")
    index = struct.unpack(">q", frame[4 + 8 + 1 + 8 + 8:4 + 8 + 1 + 8 + 8 + 8])[0]
    report(index == valid, "main stands at index %d (want %d)" % (index, valid))
    need(conn, 15, 2, bytes([2]) + struct.pack(">I", req), "EventRequest.Clear")
    need(conn, 1, 9, b"", "VirtualMachine.Resume")


def dispose_checks(conn, vm, out_path, listen, report):
    before = rounds(out_path)
    pid = conn.next_id
    conn.next_id += 2
    conn.s.settimeout(10)
    replies, closed = [], False

    def read_replies():
        while True:
            length, rid, flags = struct.unpack(">IIB", conn._exact(9))
            rest = conn._exact(length - 9)
            if flags & 0x80:
                replies.append((rid, struct.unpack(">H", rest[:2])[0]))
            if (pid, 0) in replies and len(replies) == 1:
                return

    try:
        conn.s.sendall(struct.pack(">IIBBB", 11, pid, 0, 1, 6))
        read_replies()  # the Dispose's reply
        conn.s.sendall(struct.pack(">IIBBB", 11, pid + 1, 0, 1, 1))  # a Version after it
        read_replies()
    except (RuntimeError, ConnectionError):
        closed = True  # EOF (Jdwp._exact) or a reset: the VM closed the connection
    except socket.timeout:
        pass
    report((pid, 0) in replies, "Dispose answered: replies %r" % replies)
    report(closed, "the connection closed after the reply")
    report(all(rid != pid + 1 for rid, _ in replies), "a Version sent after the Dispose went unanswered")
    conn.s.close()
    deadline, again = time.monotonic() + 20, None
    while again is None and time.monotonic() < deadline and vm.poll() is None:
        ports = announced_ports(out_path, listen)
        try:
            again = Jdwp(ports[-1])
        except (OSError, RuntimeError):
            time.sleep(0.2)
    report(again is not None, "a new debugger connects (the port announced last)")
    if again is not None:
        err, _ = again.cmd(1, 1)
        report(err == 0, "it gets VirtualMachine.Version answered: error %d" % err)
        again.s.close()
    time.sleep(1.0)
    report(vm.poll() is None and rounds(out_path) > before, "the VM runs on (rounds %d -> %d, %s)"
           % (before, rounds(out_path), "running" if vm.poll() is None else "exited with %s" % vm.poll()))


def start_vm(args, work):
    """(command, the port announcement's regex), or a failure message."""
    opts = "transport=dt_socket,server=y,suspend=n,address=127.0.0.1:0"
    if args.target == "jvm":
        java, javac = shutil.which("java"), shutil.which("javac")
        if not java or not javac:
            return None, "java/javac missing (Debian package default-jdk-headless; scripts/setup.sh installs it)"
        r = subprocess.run([javac, "-g", "-nowarn", "-d", work, os.path.join(HERE, "Invoke.java")], capture_output=True)
        if r.returncode != 0:
            return None, "javac: " + r.stderr.decode(errors="replace")
        if args.jvm_agent and not os.path.isfile(args.jvm_agent):
            return None, "no agent at %s" % args.jvm_agent
        agent = ("-agentpath:%s=%s" % (os.path.abspath(args.jvm_agent), opts)) if args.jvm_agent else "-agentlib:jdwp=" + opts
        return ([java, agent, "-cp", work, "Invoke"],
                re.compile(r"Listening for transport dt_socket at address: (\d+)")), None
    if not args.minivm or not os.access(args.minivm, os.X_OK):
        return None, "minivm not built at %s" % args.minivm
    return ([os.path.abspath(args.minivm), "-agentlib:jdwp=" + opts, os.path.join(ROOT, "examples", "minivm", "programs", "invoke.mvm")],
            re.compile(r"JDWP listening on 127\.0\.0\.1:(\d+)")), None


def main():
    ap = argparse.ArgumentParser(description="Dispose and breakpoints inside instructions (see the module docstring)")
    ap.add_argument("--target", choices=("jvm", "minivm"), required=True)
    ap.add_argument("--minivm")
    ap.add_argument("--jvm-agent", help="libddmcjdwp.so (-agentpath) instead of the JDK's -agentlib:jdwp")
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    work = os.path.join(args.workdir, "dispose-bp-" + args.target + ("-agent" if args.jvm_agent else ""))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    started, why = start_vm(args, work)
    if started is None:
        print("FAIL: " + why)
        return 1
    cmd, listen = started
    out_path = os.path.join(work, "vm.out")
    with open(out_path, "wb") as out:
        vm = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, cwd=work)
    failures = []

    def report(ok, what):
        print("%s - %s" % ("ok" if ok else "FAIL", what), flush=True)
        if not ok:
            failures.append(what)

    try:
        deadline = time.monotonic() + 30
        while not announced_ports(out_path, listen) and time.monotonic() < deadline and vm.poll() is None:
            time.sleep(0.05)
        ports = announced_ports(out_path, listen)
        if not ports:
            raise RuntimeError("the VM announced no port")
        # The agent listens before main runs (suspend=n): Invoke is loaded once main's rounds go.
        while rounds(out_path) == 0 and time.monotonic() < deadline and vm.poll() is None:
            time.sleep(0.05)
        conn = Jdwp(ports[-1])
        breakpoint_checks(conn, args.target, args.target == "minivm" or bool(args.jvm_agent), report)
        if args.target == "jvm":
            switch_checks(conn, bool(args.jvm_agent), report)
        dispose_checks(conn, vm, out_path, listen, report)
    except (RuntimeError, OSError) as e:
        report(False, str(e))
    finally:
        if vm.poll() is None:
            vm.kill()
        vm.wait()
    crashes = [f for f in os.listdir(work) if f.startswith("hs_err")]
    report(not crashes, "no hs_err file (a JVM crash): %s" % (crashes or "none"))
    if failures:
        with open(out_path, errors="replace") as f:
            print("==== VM output (last 20 lines)\n" + "\n".join(f.read().splitlines()[-20:]))
        print("FAIL: %d checks failed" % len(failures))
        return 1
    print("PASS: Dispose closes and the VM listens again; no breakpoint lands inside an instruction")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
