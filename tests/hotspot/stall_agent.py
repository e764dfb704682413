#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A debugger that stops reading during an event flow, on HotSpot.

tests/hotspot/Hot.java calls Hot.hot in bursts. A raw JDWP client with a 4 KiB receive buffer
(SO_RCVBUF set before connect) asks for MethodEntry events of class Hot with suspend policy NONE,
then reads nothing. Checked:
  - the agent's JDWP threads use under 5 % of a core over 10 s (utime + stime of the threads whose
    name starts with the agent's prefix, /proc/PID/task/TID/stat);
  - ddmcjdwp only: the Java thread posting the events goes on (Hot prints its calls), the session
    is still held at the end of the window (a second peer is served beside it at once, but refused
    as a debugger: docs/sessions.md), it is dropped after the stall timeout
    (DDMC_JDWP_STALL_TIMEOUT_MS), the stalled peer then reads to EOF, and a fresh peer may debug
    (its EventRequest.Set is answered without error).
The JDK's own agent (--agent jdk) runs the same scenario first, as the reference: the CPU check
applies to it too; what it does with the Java thread and the session is printed, not checked (it
blocks the thread posting events once its queue is full, and keeps the session for ever).
--minivm runs it on minivm (examples/minivm/programs/hot.mvm, Hot.java's twin) with libddmc's
default stall timeout, 30 s, and the same checks as libddmcjdwp.so.

    stall_agent.py --agent jdk|PATH/libddmcjdwp.so WORKDIR
    stall_agent.py --minivm PATH/minivm --program PATH/hot.mvm WORKDIR

Exits 0 on success, 1 with what failed."""
import argparse
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import time

from agent_jvm import launch

HERE = os.path.dirname(os.path.abspath(__file__))
STALL_S = 20   # DDMC_JDWP_STALL_TIMEOUT_MS / 1000: past the window below, with a margin
SETTLE_S = 3   # from the last read to the window: the socket and the agent's queues fill
WINDOW_S = 10
CPU_MAX = 5.0  # % of one core
HZ = os.sysconf("SC_CLK_TCK")


class Peer:
    """A raw JDWP client: handshake, commands, replies (events before a reply are skipped)."""

    def __init__(self, port, rcvbuf=None, timeout=10):
        self.s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if rcvbuf:
            self.s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        self.s.settimeout(timeout)
        self.s.connect(("127.0.0.1", int(port)))
        self.next_id = 1

    def handshake(self):
        self.s.sendall(b"JDWP-Handshake")
        got = b""
        while len(got) < 14:
            b = self.s.recv(14 - len(got))
            if not b:
                return False
            got += b
        return got == b"JDWP-Handshake"

    def recv_exact(self, n):
        got = b""
        while len(got) < n:
            b = self.s.recv(n - len(got))
            if not b:
                raise EOFError("peer closed")
            got += b
        return got

    def command(self, cset, cmd, data=b""):
        """Sends a command; returns (error, reply data)."""
        pid = self.next_id
        self.next_id += 1
        self.s.sendall(struct.pack(">IIBBB", 11 + len(data), pid, 0, cset, cmd) + data)
        while True:
            length, rid, flags = struct.unpack(">IIB", self.recv_exact(9))
            rest = self.recv_exact(length - 9)
            if flags == 0x80 and rid == pid:
                return struct.unpack(">H", rest[:2])[0], rest[2:]

    def close(self):
        self.s.close()


def tasks(pid, prefix):
    """{tid: (name, utime + stime)} of the threads of pid whose name starts with prefix."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                line = f.read()
        except OSError:
            continue
        name = line[line.index("(") + 1:line.rindex(")")]
        if name.startswith(prefix):
            fields = line[line.rindex(")") + 2:].split()
            out[tid] = (name, int(fields[11]) + int(fields[12]))
    return out


def hot_calls(out_path):
    with open(out_path, errors="replace") as f:
        m = re.findall(r"HOT calls (\d+)", f.read())
    return int(m[-1]) if m else 0


def served(port):
    """A fresh peer: handshake echoed and VirtualMachine.Version answered without error."""
    try:
        p = Peer(port, timeout=3)
        try:
            return p.handshake() and p.command(1, 1)[0] == 0
        finally:
            p.close()
    except (OSError, EOFError):
        return False


# ClassPrepare (8), suspend policy NONE (0), no modifiers: a request that changes nothing much.
CLASS_PREPARE = struct.pack(">BBi", 8, 0, 0)


def may_debug(port):
    """A fresh peer: handshake echoed and an EventRequest.Set answered without error, which a
    VM serving several sessions allows only when no other session is the debugger."""
    try:
        p = Peer(port, timeout=3)
        try:
            return p.handshake() and p.command(15, 1, CLASS_PREPARE)[0] == 0
        finally:
            p.close()
    except (OSError, EOFError):
        return False


def drained_to_eof(peer, limit_s=20):
    """Reads the stalled peer's socket until EOF or reset; True if that came within limit_s."""
    deadline = time.monotonic() + limit_s
    peer.s.settimeout(1)
    while time.monotonic() < deadline:
        try:
            if not peer.s.recv(1 << 16):
                return True
        except socket.timeout:
            continue
        except OSError:
            return True  # ECONNRESET: the VM closed with bytes unread
    return False


def launch_minivm(minivm, program, out_path, timeout=30):
    """minivm running PROGRAM under -agentlib:jdwp, and its port once it printed HOT ready (None
    if that did not happen within TIMEOUT seconds)."""
    with open(out_path, "wb") as out:
        vm = subprocess.Popen([minivm, "-agentlib:jdwp=transport=dt_socket,address=127.0.0.1:0,server=y,suspend=n",
                               program], stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and vm.poll() is None:
        with open(out_path, errors="replace") as f:
            text = f.read()
        m = re.search(r"JDWP listening on [^ ]*:(\d+)", text)
        if m and "HOT ready" in text:
            return vm, m.group(1)
        time.sleep(0.05)
    return vm, None


def start(args):
    """(process, port, tag, thread name prefix, stall timeout in s, ours) for the target asked
    for; the process is None when a tool is missing."""
    if args.minivm:
        return (*launch_minivm(args.minivm, args.program, os.path.join(args.workdir, "stall-minivm.out")),
                "minivm", "ddmc-jdwp", 30, True)
    java, javac = shutil.which("java"), shutil.which("javac")
    if not java or not javac:
        print("FAIL: java/javac missing (scripts/setup.sh installs default-jdk-headless)")
        return None, None, None, None, None, None
    ours = args.agent != "jdk"
    tag = "ddmcjdwp" if ours else "jdk"
    classes = os.path.join(args.workdir, f"stall-{tag}-classes")
    os.makedirs(classes, exist_ok=True)
    subprocess.run([javac, "-g", "-d", classes, os.path.join(HERE, "Hot.java")], check=True)
    opts = "transport=dt_socket,server=y,suspend=n,address=127.0.0.1:0"
    env = dict(os.environ)
    if ours:
        agent_arg, prefix = f"-agentpath:{os.path.abspath(args.agent)}={opts}", "ddmc-jdwp"
        env["DDMC_JDWP_STALL_TIMEOUT_MS"] = str(STALL_S * 1000)
    else:
        agent_arg, prefix = f"-agentlib:jdwp={opts}", "JDWP"
    out_path = os.path.join(args.workdir, f"stall-{tag}.out")
    vm, port = launch(java, [agent_arg], classes, "Hot", out_path, ready="HOT ready", env=env)
    return vm, port, tag, prefix, STALL_S, ours


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--agent", help="jdk, or the path of libddmcjdwp.so")
    ap.add_argument("--minivm", help="the path of minivm (with --program)")
    ap.add_argument("--program", help="hot.mvm, for --minivm")
    ap.add_argument("workdir")
    args = ap.parse_args()
    if bool(args.agent) == bool(args.minivm) or bool(args.minivm) != bool(args.program):
        ap.error("give --agent, or --minivm with --program")
    vm, port, tag, prefix, stall_s, ours = start(args)
    if vm is None:
        return 1
    out_path = os.path.join(args.workdir, f"stall-{tag}.out")
    failures = []

    def check(name, ok, detail=""):
        print(("ok   " if ok else "FAIL ") + name + (f" ({detail})" if detail else ""), flush=True)
        if not ok:
            failures.append(name)

    try:
        if port is None:
            print("FAIL: the JVM did not come up\n" + open(out_path).read())
            return 1
        peer = Peer(port, rcvbuf=4096)
        check("handshake", peer.handshake())
        check("IDSizes", peer.command(1, 7)[0] == 0)
        pattern = b"Hot"
        # MethodEntry (40), suspend policy NONE (0), one modifier: ClassMatch (5) "Hot".
        err, _ = peer.command(15, 1, struct.pack(">BBiBI", 40, 0, 1, 5, len(pattern)) + pattern)
        check("EventRequest.Set MethodEntry, suspend NONE", err == 0, f"error {err}")
        t_stop = time.monotonic()  # from here the peer reads nothing
        time.sleep(SETTLE_S)
        before, calls0, t0 = tasks(vm.pid, prefix), hot_calls(out_path), time.monotonic()
        time.sleep(WINDOW_S)
        after, calls1, t1 = tasks(vm.pid, prefix), hot_calls(out_path), time.monotonic()
        ticks = sum(after[t][1] - before.get(t, (None, 0))[1] for t in after)
        pct = 100.0 * ticks / HZ / (t1 - t0)
        names = sorted({n for n, _ in after.values()})
        check(f"threads named {prefix}* found", bool(after), ", ".join(names))
        check(f"{tag}: JDWP threads under {CPU_MAX} % of a core over {WINDOW_S} s", pct < CPU_MAX, f"{pct:.1f} %")
        print(f"     {tag}: Hot.hot calls during the window: {calls1 - calls0} (before it: {calls0})", flush=True)
        if ours:
            check("the thread posting events goes on", calls1 - calls0 > 1000, f"{calls1 - calls0} calls")
            t_srv = time.monotonic()
            check("inside the stall timeout a second peer is served beside the stalled one, at once",
                  served(port) and time.monotonic() - t_srv < 3)
            check("inside the stall timeout the session holds (a second debugger is refused)", not may_debug(port))
            deadline = t_stop + stall_s + 30
            while time.monotonic() < deadline and not may_debug(port):
                time.sleep(0.5)
            took = time.monotonic() - t_stop
            check(f"dropped after the stall timeout ({stall_s} s); the next peer is served", took < stall_s + 30,
                  f"served {took:.1f} s after the last read")
            check("the stalled peer reads to EOF", drained_to_eof(peer))
        else:
            second = served(port)
            print(f"     jdk: a second peer {'is served' if second else 'is not served'} "
                  f"{time.monotonic() - t_stop:.0f} s after the last read", flush=True)
        peer.close()
    finally:
        vm.kill()
        vm.wait()
    if failures:
        print("JVM output (tail):\n" + open(out_path, errors="replace").read()[-2000:])
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
