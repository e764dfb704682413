#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Attach/detach cycles with SUSPEND_ALL breakpoints and method calls, over raw JDWP (python3
standard library only), against tests/hotspot/Cycles.java.

    cycles.py --workdir DIR [--agent libddmcjdwp.so] [--java JAVA] [--cycles 100] [--pending]

(--java: the debuggee's java, by default the one on PATH, which is asan_run.py's in the ASan build.)

Without --agent the JVM runs under the JDK's own -agentlib:jdwp (the reference that proves the
expectations); with it, under -agentpath:AGENT. Either way with
transport=dt_socket,server=y,suspend=n,address=127.0.0.1:0; the port is read from the agent's
"Listening for transport dt_socket at address: PORT" line (the JDK's agent listens on a new port
after each session, libddmcjdwp.so keeps its own).

First a baseline: the three workers' rates (batches of 20000 work() calls per second, read from
the static fields c0..c2 over JDWP) before a debugger has done anything. Then CYCLES times:
  attach; check that every thread's ThreadReference.SuspendCount is 0 and that every worker runs
  at least FRACTION of its baseline rate (a breakpoint left set or a thread left suspended
  collapses it; a window under the bar is measured again, longer, before it fails, since a
  loaded machine or code HotSpot has not compiled again yet slows a worker for a while); set a
  breakpoint in work() with SUSPEND_ALL for worker-0 (the others stop too); wait for it; clear
  it; call slow(30) on the event thread (ClassType.InvokeMethod, INVOKE_SINGLE_THREADED) and read
  the reply, which leaves every thread suspended again; then leave by VirtualMachine.Dispose or
  by closing the socket without a word. The ways (WAYS) take turns.
A last attach checks the state after the last cycle. Exits 0 on success, 1 with the report.

--pending: the calls are left running when the debugger leaves (their replies unread), except in
two of six cycles, calls that resume every thread (options 0) come too, and the breakpoint stays
set during the calls, for every thread, so such a call lets the other workers hit it meanwhile:
SUSPEND_ALL events are still being made while the debugger leaves (PENDING_WAYS). JDWP says a
call continues after Dispose and its thread then runs from where it stopped. The JDK's own
agent (17.0.15) fails this from the first cycle: after a session that left a call running, every
thread stays suspended with a count of 1 (and jcmd can no longer attach), so --pending runs under
libddmcjdwp.so only."""
import argparse
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FRACTION = 0.25       # of the baseline rate a worker must keep after a detach
SUSPEND_ALL = 2
BREAKPOINT = 2
INVOKE_SINGLE_THREADED = 1
# Each cycle's call and way out: (invoke options, wait for the reply, Dispose or a bare close).
# A call that resumes every thread is never waited for: other workers that hit the breakpoint
# with the first one have events on their way, which suspend every thread, the caller too, once
# the call lets them go (even with the request cleared), until a debugger resumes them.
WAYS = ((INVOKE_SINGLE_THREADED, True, True), (INVOKE_SINGLE_THREADED, True, False))
# --pending.
PENDING_WAYS = ((0, False, True), (0, False, False), (INVOKE_SINGLE_THREADED, False, True),
                (INVOKE_SINGLE_THREADED, False, False), (INVOKE_SINGLE_THREADED, True, True),
                (INVOKE_SINGLE_THREADED, True, False))


class Failure(Exception):
    pass


class Jdwp:
    """One JDWP session: commands and their replies; events kept in arrival order."""

    def __init__(self, port, timeout=10.0):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.s.settimeout(timeout)
        self.s.sendall(b"JDWP-Handshake")
        got = self._exact(14)
        if got != b"JDWP-Handshake":
            raise OSError("handshake answered %r" % got)
        self.next_id = 1
        self.events = []
        d = self.cmd(1, 7)  # VirtualMachine.IDSizes
        sizes = struct.unpack(">5i", d)
        if any(n != 8 for n in sizes):
            raise Failure("IDSizes %r: this client reads 8-byte ids only" % (sizes,))

    def _exact(self, n):
        b = b""
        while len(b) < n:
            c = self.s.recv(n - len(b))
            if not c:
                raise OSError("the VM closed the connection")
            b += c
        return b

    def send(self, cs, cmd, data=b""):
        pid = self.next_id
        self.next_id += 1
        self.s.sendall(struct.pack(">IIBBB", 11 + len(data), pid, 0, cs, cmd) + data)
        return pid

    def _packet(self):
        length, pid, flags = struct.unpack(">IIB", self._exact(9))
        rest = self._exact(length - 9)
        return pid, flags, rest

    def reply(self, pid):
        while True:
            rid, flags, rest = self._packet()
            if flags & 0x80:
                if rid == pid:
                    return struct.unpack(">H", rest[:2])[0], rest[2:]
            elif rest[:2] == b"\x40\x64":  # Event.Composite
                self.events.append(rest[2:])

    def cmd(self, cs, cmd, data=b""):
        err, d = self.reply(self.send(cs, cmd, data))
        if err:
            raise Failure("command %d/%d: JDWP error %d" % (cs, cmd, err))
        return d

    def event(self, timeout):
        """The next composite event (its bytes after the command header), or None by timeout."""
        deadline = time.monotonic() + timeout
        while not self.events:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self.s.settimeout(left)
            try:
                rid, flags, rest = self._packet()
            except socket.timeout:
                return None
            if not flags & 0x80 and rest[:2] == b"\x40\x64":
                self.events.append(rest[2:])
        self.s.settimeout(10.0)
        return self.events.pop(0)

    def close(self):
        try:
            self.s.close()
        except OSError:
            pass


def jstring(s):
    b = s.encode()
    return struct.pack(">I", len(b)) + b


def read_string(d, off):
    n = struct.unpack(">I", d[off:off + 4])[0]
    return d[off + 4:off + 4 + n].decode(errors="replace"), off + 4 + n


class Program:
    """Cycles' class, its methods and fields, as one session names them (ids are per VM)."""

    def __init__(self, j):
        d = j.cmd(1, 2, jstring("LCycles;"))  # VirtualMachine.ClassesBySignature
        if struct.unpack(">I", d[:4])[0] != 1:
            raise Failure("Cycles is not loaded exactly once")
        self.cls = struct.unpack(">Q", d[5:13])[0]
        d = j.cmd(2, 5, struct.pack(">Q", self.cls))  # ReferenceType.Methods
        self.methods, off = {}, 4
        for _ in range(struct.unpack(">I", d[:4])[0]):
            mid = struct.unpack(">Q", d[off:off + 8])[0]
            name, off = read_string(d, off + 8)
            sig, off = read_string(d, off)
            self.methods[name] = mid
            off += 4
        d = j.cmd(2, 4, struct.pack(">Q", self.cls))  # ReferenceType.Fields
        self.fields, off = {}, 4
        for _ in range(struct.unpack(">I", d[:4])[0]):
            fid = struct.unpack(">Q", d[off:off + 8])[0]
            name, off = read_string(d, off + 8)
            sig, off = read_string(d, off)
            self.fields[name] = fid
            off += 4
        for m in ("work", "slow"):
            if m not in self.methods:
                raise Failure("Cycles has no method %s" % m)

    def counts(self, j):
        names = ("c0", "c1", "c2")
        d = j.cmd(2, 6, struct.pack(">QI", self.cls, 3) + b"".join(struct.pack(">Q", self.fields[n]) for n in names))
        if struct.unpack(">I", d[:4])[0] != 3:
            raise Failure("GetValues gave the wrong count")
        return [struct.unpack(">q", d[4 + 9 * i + 1:4 + 9 * i + 9])[0] for i in range(3)]


def rates(prog, j, window):
    a, t0 = prog.counts(j), time.monotonic()
    time.sleep(window)
    b, t1 = prog.counts(j), time.monotonic()
    return [(y - x) / (t1 - t0) for x, y in zip(a, b)]


def threads(j):
    """[(name, thread id bytes, suspend count)] of every live thread."""
    d = j.cmd(1, 4)  # VirtualMachine.AllThreads
    out = []
    for i in range(struct.unpack(">I", d[:4])[0]):
        t = d[4 + 8 * i:12 + 8 * i]
        err, n = j.reply(j.send(11, 1, t))  # ThreadReference.Name
        err2, c = j.reply(j.send(11, 12, t))  # ThreadReference.SuspendCount
        if err or err2:
            continue  # the thread ended meanwhile
        out.append((read_string(n, 0)[0], t, struct.unpack(">i", c)[0]))
    return out


def suspend_counts(j):
    """{thread name: suspend count} of every live thread."""
    return {"%s#%d" % (name, i): c for i, (name, _, c) in enumerate(threads(j))}


def check(prog, j, base, what):
    """Raises Failure unless every thread's count is 0 and every worker keeps FRACTION of base."""
    counts = suspend_counts(j)
    bad = {k: v for k, v in counts.items() if v != 0}
    if bad:
        raise Failure("%s: suspend counts not 0: %r" % (what, bad))
    for window in (0.2, 0.6, 1.5):
        r = rates(prog, j, window)
        if all(x >= FRACTION * b for x, b in zip(r, base)):
            return min(x / b for x, b in zip(r, base)), len(counts)
    raise Failure("%s: the workers' rates %s batches/s against a baseline of %s (need %d %%)" % (
        what, ["%.0f" % x for x in r], ["%.0f" % x for x in base], FRACTION * 100))


class Output:
    def __init__(self, pipe):
        self.text, self.lock = "", threading.Lock()
        threading.Thread(target=self._read, args=(pipe,), daemon=True).start()

    def _read(self, pipe):
        for raw in iter(pipe.readline, b""):
            with self.lock:
                self.text += raw.decode(errors="replace")

    def get(self):
        with self.lock:
            return self.text


def attach(out, vm, timeout=20.0):
    """A session on the port the agent announced last (the JDK's agent announces a new one after
    each session; the first tries may reach the old port as it closes)."""
    deadline, last = time.monotonic() + timeout, "no port announced"
    while time.monotonic() < deadline and vm.poll() is None:
        ports = re.findall(r"Listening for transport dt_socket at address: (\d+)", out.get())
        if ports:
            try:
                return Jdwp(int(ports[-1]))
            except OSError as e:
                last = str(e)
        time.sleep(0.05)
    raise Failure("cannot attach within %g s (%s; VM status %s)" % (timeout, last, vm.poll()))


def one_cycle(prog, j, i, pending):
    work = prog.methods["work"]
    d = struct.pack(">BBQQQ", 7, 1, prog.cls, work, 0)  # LocationOnly
    if pending:
        d = struct.pack(">BBI", BREAKPOINT, SUSPEND_ALL, 1) + d
    else:
        # Hit by worker-0 only (ThreadOnly): with several workers' events at once the JDK's agent
        # sometimes never answers the call (about one run in two).
        w0 = [t for name, t, _ in threads(j) if name == "worker-0"]
        if len(w0) != 1:
            raise Failure("cycle %d: no thread worker-0" % i)
        d = struct.pack(">BBI", BREAKPOINT, SUSPEND_ALL, 2) + struct.pack(">B", 3) + w0[0] + d
    req = struct.unpack(">I", j.cmd(15, 1, d))[0]  # EventRequest.Set
    while True:
        ev = j.event(10.0)
        if ev is None:
            raise Failure("cycle %d: the breakpoint in work() was not hit within 10 s" % i)
        policy, n = struct.unpack(">BI", ev[:5])
        kind, rid = struct.unpack(">BI", ev[5:10])
        if kind == BREAKPOINT and rid == req:
            thread = ev[10:18]
            break
    ways = PENDING_WAYS if pending else WAYS
    opts, wait, dispose = ways[i % len(ways)]
    if not pending:
        j.cmd(15, 2, struct.pack(">BI", BREAKPOINT, req))  # EventRequest.Clear
    # Other workers that hit the breakpoint with this one (--pending) suspended every thread once
    # more each: back to a count of 1, as an IDE that resumes those events does.
    time.sleep(0.05)
    for _ in range(64):
        n = struct.unpack(">i", j.cmd(11, 12, thread))[0]  # ThreadReference.SuspendCount
        if n <= 1:
            break
        j.cmd(1, 9)  # VirtualMachine.Resume: every count down by one
    args = (struct.pack(">Q", prog.cls) + thread + struct.pack(">QI", prog.methods["slow"], 1) + b"I" +
            struct.pack(">iI", 30, opts))
    pid = j.send(3, 3, args)  # ClassType.InvokeMethod
    if wait:
        err, _ = j.reply(pid)
        if err:
            raise Failure("cycle %d: InvokeMethod failed with JDWP error %d" % (i, err))
    if dispose:
        j.send(1, 6)  # VirtualMachine.Dispose, its reply unread
    j.close()


def run(args, vm, out):
    deadline = time.monotonic() + 30
    while "cycles ready" not in out.get() and vm.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)  # the agent listens before main runs: Cycles may not be loaded yet
    j = attach(out, vm)
    prog = Program(j)
    time.sleep(1.0)  # the workers' code compiled
    # The better of two windows per worker: a baseline taken while the machine stalls would let
    # a collapse after a detach pass.
    base = [max(a, b) for a, b in zip(rates(prog, j, 0.5), rates(prog, j, 0.5))]
    if min(base) <= 0:
        raise Failure("a worker did not run before any debugger: %r" % base)
    j.close()
    print("baseline: %s batches/s per worker" % ["%.0f" % b for b in base])
    worst, t0, nthreads = 1e9, time.monotonic(), 0
    for i in range(args.cycles + 1):
        j = attach(out, vm)
        prog = Program(j)
        what = "after cycle %d" % (i - 1) if i else "before the first cycle"
        ratio, nthreads = check(prog, j, base, what)
        worst = min(worst, ratio)
        if i == args.cycles:
            j.close()
            break
        one_cycle(prog, j, i, args.pending)
    took = time.monotonic() - t0
    print("%d cycles in %.1f s; after each, %d threads with suspend count 0 and the slowest worker at "
          "%.0f %% of its baseline at worst" % (args.cycles, took, nthreads, 100 * worst))


def thread_dump(vm):
    """The workers' stacks as HotSpot sees them (what a worker stopped at)."""
    jcmd = shutil.which("jcmd")
    if not jcmd or vm.poll() is not None:
        return "(no jcmd, or the VM ended)"
    try:
        r = subprocess.run([jcmd, str(vm.pid), "Thread.print"], capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        return "(jcmd Thread.print timed out)"
    keep = [b for b in r.stdout.split("\n\n") if '"worker-' in b or '"main"' in b]
    return "\n\n".join(keep) or r.stdout + r.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--agent", help="libddmcjdwp.so (-agentpath) instead of the JDK's -agentlib:jdwp")
    ap.add_argument("--java", default=shutil.which("java"))
    ap.add_argument("--cycles", type=int, default=100)
    ap.add_argument("--pending", action="store_true", help="leave calls running, the breakpoint set (see above)")
    args = ap.parse_args()
    javac = shutil.which("javac")
    if not args.java or not javac:
        print("FAIL: java/javac missing (Debian package default-jdk-headless; scripts/setup.sh installs it)")
        return 1
    work = os.path.join(args.workdir, "cycles-" + ("agent" if args.agent else "reference") +
                        ("-pending" if args.pending else ""))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    r = subprocess.run([javac, "-g", "-d", work, os.path.join(HERE, "Cycles.java")], capture_output=True, text=True)
    if r.returncode != 0:
        print("FAIL: javac: " + r.stdout + r.stderr)
        return 1
    opts = "transport=dt_socket,server=y,suspend=n,address=127.0.0.1:0"
    agent = "-agentpath:%s=%s" % (os.path.abspath(args.agent), opts) if args.agent else "-agentlib:jdwp=" + opts
    vm = subprocess.Popen([args.java, agent, "-cp", work, "Cycles"], stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    out = Output(vm.stdout)
    stacks = ""
    try:
        run(args, vm, out)
        ok = vm.poll() is None
        if not ok:
            print("FAIL: the VM ended (status %s)" % vm.poll())
    except (Failure, OSError) as e:
        print("FAIL: %s" % e)
        ok = False
        stacks = thread_dump(vm)
    finally:
        if vm.poll() is None:
            vm.kill()
        vm.wait()
    if not ok:
        print("==== VM output (last 40 lines)\n" + "\n".join(out.get().splitlines()[-40:]))
        print("==== the VM's threads when it failed (jcmd Thread.print)\n" + stacks)
        return 1
    print("PASS: %d attach/detach cycles%s under %s" % (args.cycles, " (calls left pending)" if args.pending else "",
                                                        args.agent or "the JDK's jdwp"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
