#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The debugger's breakpoint round trip with 0 and with 4 DDM monitors beside it (docs/sessions.md).

    sessions_bench.py --minivm PATH/minivm [--rounds N] [--secs S]

minivm runs bench/programs/bploop.mvm (-agentlib:jdwp=...,suspend=n). bench/java/JdiBench (the JDI
client of bench_dbg.c) sets a breakpoint at BpLoop:10 and resumes at each hit for S seconds: hits
per second. Beside it, 0 or 4 monitors, each its own session on the same port (handshake, HELO),
send a THST request every 100 ms and read everything the VM sends them. Rounds alternate the two
set-ups, so drift in the machine's load hits both alike; each set-up's best and median round are
printed, and the ratio of the medians (target: within 5 %). Python standard library and the JDK."""
import argparse
import os
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def wait_listen(port, limit=20):
    end = time.time() + limit
    while time.time() < end:
        with open("/proc/net/tcp") as f:
            if any(l.split()[1].endswith(":%04X" % port) and l.split()[3] == "0A" for l in f.readlines()[1:]):
                return True
        time.sleep(0.05)
    return False


class Monitor(threading.Thread):
    """A DDM session polling THST every 100 ms; counts the replies it read."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.port, self.stop, self.replies, self.secs = port, False, 0, 0.0

    def run(self):
        t0 = time.monotonic()
        try:
            self.poll()
        finally:
            self.secs = time.monotonic() - t0

    def poll(self):
        s = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        s.sendall(b"JDWP-Handshake")
        got = b""
        while len(got) < 14:
            got += s.recv(14 - len(got))
        s.setblocking(False)
        pid = 1
        hello = b"HELO" + struct.pack(">II", 4, 1)
        s.sendall(struct.pack(">IIBBB", 11 + len(hello), pid, 0, 199, 1) + hello)
        buf = b""
        next_t = time.monotonic()
        while not self.stop:
            now = time.monotonic()
            if now >= next_t:
                pid += 1
                s.sendall(struct.pack(">IIBBB", 11 + 8, pid, 0, 199, 1) + b"THST" + struct.pack(">I", 0))
                next_t = now + 0.1
            try:
                data = s.recv(65536)
                if not data:
                    break
                buf += data
            except BlockingIOError:
                time.sleep(0.005)
                continue
            while len(buf) >= 11:
                n = struct.unpack(">I", buf[:4])[0]
                if len(buf) < n:
                    break
                if buf[8] & 0x80 and n >= 19 and buf[11:15] == b"THST":
                    self.replies += 1
                buf = buf[n:]
        s.close()


def one_round(args, classes, monitors):
    port = free_port()
    vm = subprocess.Popen([args.minivm, f"-agentlib:jdwp=transport=dt_socket,address=127.0.0.1:{port},server=y,suspend=n",
                           os.path.join(HERE, "programs", "bploop.mvm")],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        if not wait_listen(port):
            raise RuntimeError("minivm never listened")
        mons = [Monitor(port) for _ in range(monitors)]
        for m in mons:
            m.start()
        time.sleep(0.3)
        r = subprocess.run([args.java, "-XX:+UseSerialGC", "-cp", classes, "JdiBench", "bp", "127.0.0.1", str(port),
                            "BpLoop", "10", str(args.secs)], capture_output=True, text=True, timeout=120)
        for m in mons:
            m.stop = True
        for m in mons:
            m.join(5)
        line = next((l for l in r.stdout.splitlines() if l.startswith("RESULT bp")), None)
        if line is None:
            raise RuntimeError("JdiBench: " + r.stdout[-400:] + r.stderr[-400:])
        rate = sum(m.replies / m.secs for m in mons if m.secs > 0) / len(mons) if mons else 0
        return float(line.split()[2]), rate
    finally:
        vm.kill()
        vm.wait()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--minivm", required=True)
    ap.add_argument("--java", default="java")
    ap.add_argument("--javac", default="javac")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--secs", type=float, default=4.0)
    args = ap.parse_args()
    classes = tempfile.mkdtemp(prefix="sessions_bench-")
    subprocess.run([args.javac, "-d", classes, os.path.join(HERE, "java", "JdiBench.java")], check=True)
    res = {0: [], 4: []}
    polls = []
    for i in range(args.rounds):
        for k in ((0, 4) if i % 2 == 0 else (4, 0)):
            hits, p = one_round(args, classes, k)
            res[k].append(hits)
            if k:
                polls.append(p)
            print(f"round {i + 1}: {k} monitors: {hits:.0f} hits/s" + (f" ({p:.1f} THST replies/s each)" if k else ""),
                  flush=True)
    for k in (0, 4):
        print(f"{k} monitors: median {statistics.median(res[k]):.0f} hits/s, best {max(res[k]):.0f} hits/s")
    ratio = statistics.median(res[4]) / statistics.median(res[0])
    print(f"4 monitors / 0 monitors (medians): {ratio:.3f}; THST replies per second to each monitor: "
          f"{statistics.median(polls):.1f} (10 asked)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
