#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Object names on HotSpot, the same checks under the JDK's -agentlib:jdwp and libddmcjdwp.so:
a raw JDWP client against tests/hotspot/Rotate.java, which replaces a static
Object[10000] of byte[1024] every 100 ms.

  rotate   30 cycles of what an IDE's variables view does while stepping: read the array and
           its 10,000 elements, then VirtualMachine.DisposeObjects for every ID with its count
           (as JDI does). The live byte[] after a full GC (jcmd GC.class_histogram) stays
           within 1.5x of what the program itself holds before the debugger came, the program
           never runs out of memory (-Xmx128m: ten cycles of pinned names would not fit), and
           after the debugger leaves what it named is collectable.
  pin      DisableCollection keeps an unreachable byte[] alive across GCs (IsCollected false,
           ArrayReference.Length answers); after EnableCollection a GC takes it (IsCollected
           true, INVALID_OBJECT). A pinned one disposed of is let go too. An ID disposed of
           answers INVALID_OBJECT and IsCollected true.
  full     (libddmcjdwp.so only, names=5000): reading more elements than the table may name
           answers OUT_OF_MEMORY, never null elements; ThreadStart events keep coming while it is
           full; once a GC took the objects named (not disposed of), or the debugger disposes of
           its IDs, reads succeed again.

    names_agent.py {jdk | AGENT.so} WORKDIR [rotate] [pin] [full]

Exits 0 on success, 1 with what failed."""
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
N, PERIOD_MS, CYCLES = 10000, 100, 30
INVALID_OBJECT, OUT_OF_MEMORY = 20, 110


class Jdwp:
    """A JDWP connection: commands answered in order, events kept aside."""

    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", int(port)), timeout=30)
        self.s.sendall(b"JDWP-Handshake")
        if self._read(14) != b"JDWP-Handshake":
            raise RuntimeError("no handshake")
        self.next_id, self.events = 1, []
        sizes = self.ok(1, 7)
        self.osz = struct.unpack(">5i", sizes)[2]
        assert self.osz == 8, sizes

    def _read(self, n):
        b = b""
        while len(b) < n:
            c = self.s.recv(n - len(b))
            if not c:
                raise EOFError("connection closed")
            b += c
        return b

    def cmd(self, cs, c, data=b""):
        pid = self.next_id
        self.next_id += 1
        self.s.sendall(struct.pack(">IIBBB", 11 + len(data), pid, 0, cs, c) + data)
        while True:
            length, rid, flags = struct.unpack(">IIB", self._read(9))
            rest = self._read(length - 9)
            if flags & 0x80 and rid == pid:
                return struct.unpack(">H", rest[:2])[0], rest[2:]
            if not flags & 0x80:
                self.events.append(rest)

    def ok(self, cs, c, data=b""):
        err, body = self.cmd(cs, c, data)
        if err:
            raise RuntimeError(f"command {cs}/{c} answered error {err}")
        return body

    def wait_events(self, seconds):
        """Reads what arrives for SECONDS (events only: no command is pending)."""
        self.s.settimeout(0.2)
        deadline = time.monotonic() + seconds
        try:
            while time.monotonic() < deadline:
                try:
                    length, rid, flags = struct.unpack(">IIB", self._read(9))
                except socket.timeout:
                    continue
                rest = self._read(length - 9)
                if not flags & 0x80:
                    self.events.append(rest)
        finally:
            self.s.settimeout(30)

    def close(self):
        self.s.close()


def jstr(s):
    b = s.encode()
    return struct.pack(">I", len(b)) + b


def rotate_class(j):
    body = j.ok(1, 2, jstr("LRotate;"))
    n = struct.unpack(">I", body[:4])[0]
    assert n == 1, body
    ref = struct.unpack(">Q", body[5:13])[0]
    fields = j.ok(2, 4, struct.pack(">Q", ref))
    count, off, fid = struct.unpack(">I", fields[:4])[0], 4, None
    for _ in range(count):
        f = struct.unpack(">Q", fields[off:off + 8])[0]
        off += 8
        ln = struct.unpack(">I", fields[off:off + 4])[0]
        name = fields[off + 4:off + 4 + ln].decode()
        off += 4 + ln
        ln = struct.unpack(">I", fields[off:off + 4])[0]
        off += 4 + ln + 4
        if name == "arr":
            fid = f
    return ref, fid


def read_array_id(j, ref, fid):
    body = j.ok(2, 6, struct.pack(">QIQ", ref, 1, fid))
    tag, oid = struct.unpack(">BQ", body[4:13])
    return oid


def get_elements(j, arr, first, count):
    """(error, [ids]) of arr[first, first + count)."""
    err, body = j.cmd(13, 2, struct.pack(">Qii", arr, first, count))
    if err:
        return err, []
    n = struct.unpack(">I", body[1:5])[0]
    ids = [struct.unpack(">Q", body[5 + 9 * i + 1:5 + 9 * i + 9])[0] for i in range(n)]
    return 0, ids


def dispose(j, counts):
    items = list(counts.items())
    for k in range(0, len(items), 5000):
        part = items[k:k + 5000]
        j.ok(1, 14, struct.pack(">I", len(part)) + b"".join(struct.pack(">Qi", i, c) for i, c in part))


def jcmd(pid, *what):
    r = subprocess.run(["jcmd", str(pid), *what], capture_output=True, text=True, timeout=60)
    return r.stdout


PAUSE = None  # the file whose presence stops Rotate's rotation


def live_byte_arrays(pid):
    """byte[] instances after a full GC (GC.class_histogram collects first), with the rotation
    paused so that no array is half filled."""
    ack = PAUSE + ".ack"
    if os.path.exists(ack):
        os.unlink(ack)
    open(PAUSE, "w").close()
    try:
        deadline = time.monotonic() + 60
        while not os.path.exists(ack) and time.monotonic() < deadline:
            time.sleep(0.05)
        if not os.path.exists(ack):
            return -1
        m = re.search(r"^\s*\d+:\s+(\d+)\s+\d+\s+\[B\b", jcmd(pid, "GC.class_histogram"), re.M)
    finally:
        os.unlink(PAUSE)
    return int(m.group(1)) if m else -1


def check_rotate(j, vm, checks, figures):
    ref, fid = rotate_class(j)
    before = live_byte_arrays(vm.pid)
    figures.append(f"live byte[] before the debugger read anything: {before}")
    for cycle in range(CYCLES):
        counts = {}
        arr = read_array_id(j, ref, fid)
        counts[arr] = counts.get(arr, 0) + 1
        err, ids = get_elements(j, arr, 0, N)
        if err or len(ids) != N or 0 in ids:
            checks.append((f"cycle {cycle}: all {N} elements named", False))
            return
        for i in ids:
            counts[i] = counts.get(i, 0) + 1
        dispose(j, counts)
        time.sleep(PERIOD_MS / 1000)
    during = live_byte_arrays(vm.pid)
    figures.append(f"live byte[] after {CYCLES} cycles, debugger attached: {during}")
    checks.append((f"after {CYCLES} cycles live byte[] within 1.5x of before", 0 < during <= 1.5 * before))
    j.close()
    time.sleep(0.5)
    after = live_byte_arrays(vm.pid)
    figures.append(f"live byte[] after the debugger left: {after}")
    checks.append(("after the debugger left, live byte[] within 1.5x of before", 0 < after <= 1.5 * before))


def collected(j, oid):
    return j.ok(9, 9, struct.pack(">Q", oid))[0]


def length_err(j, oid):
    return j.cmd(13, 1, struct.pack(">Q", oid))[0]


def check_pin(j, vm, checks):
    ref, fid = rotate_class(j)
    arr = read_array_id(j, ref, fid)
    err, ids = get_elements(j, arr, 0, 3)
    pinned, disposed, plain = ids
    j.ok(9, 7, struct.pack(">Q", pinned))
    j.ok(9, 7, struct.pack(">Q", disposed))
    # The program replaces the array: the three are unreachable from then on.
    while read_array_id(j, ref, fid) == arr:
        time.sleep(0.05)
    for _ in range(2):
        jcmd(vm.pid, "GC.run")
    checks.append(("pinned: not collected after GC", collected(j, pinned) == 0))
    checks.append(("pinned: ArrayReference.Length answers", length_err(j, pinned) == 0))
    checks.append(("unpinned: collected after GC", collected(j, plain) == 1))
    checks.append(("unpinned and collected: INVALID_OBJECT", length_err(j, plain) == INVALID_OBJECT))
    j.ok(9, 8, struct.pack(">Q", pinned))
    dispose(j, {disposed: 1})
    checks.append(("disposed of: INVALID_OBJECT", length_err(j, disposed) == INVALID_OBJECT))
    checks.append(("disposed of: IsCollected true", collected(j, disposed) == 1))
    for _ in range(2):
        jcmd(vm.pid, "GC.run")
    checks.append(("EnableCollection then GC: collected", collected(j, pinned) == 1))
    checks.append(("EnableCollection then GC: INVALID_OBJECT", length_err(j, pinned) == INVALID_OBJECT))


def check_full(j, vm, checks, figures):
    ref, fid = rotate_class(j)
    j.ok(15, 1, struct.pack(">BBI", 6, 0, 0))  # THREAD_START, suspend none, no modifier
    arr = read_array_id(j, ref, fid)
    counts, oom_at, nulls = {arr: 1}, None, 0
    for first in range(0, N, 1000):
        err, ids = get_elements(j, arr, first, 1000)
        if err:
            oom_at = (first, err)
            break
        nulls += ids.count(0)
        for i in ids:
            counts[i] = counts.get(i, 0) + 1
    figures.append(f"names=5000: first refused slice {oom_at}, {len(counts)} IDs before it")
    checks.append(("a full table answers OUT_OF_MEMORY", oom_at is not None and oom_at[1] == OUT_OF_MEMORY))
    checks.append(("no null for a live element before that", nulls == 0))
    j.events.clear()
    starts, deadline = 0, time.monotonic() + 30
    while starts < 3 and time.monotonic() < deadline:
        j.wait_events(0.5)
        # Event.Composite: 64/100, suspendPolicy, count, then kind 6 (THREAD_START) first.
        starts = sum(1 for e in j.events if e[:2] == b"\x40\x64" and len(e) > 7 and e[7] == 6)
    figures.append(f"ThreadStart composites while full: {starts}")
    checks.append(("ThreadStart events keep coming while the table is full", starts >= 3))
    # Not disposed of, but collected: once the program replaced the array and a GC ran, their
    # entries are free again (the weak references cleared).
    err, ids, arr2, deadline = OUT_OF_MEMORY, [], 0, time.monotonic() + 60
    while err and time.monotonic() < deadline:
        time.sleep(3 * PERIOD_MS / 1000)  # the array replaced meanwhile
        jcmd(vm.pid, "GC.run")
        err, body = j.cmd(2, 6, struct.pack(">QIQ", ref, 1, fid))
        if err == 0:
            arr2 = struct.unpack(">Q", body[5:13])[0]
            counts[arr2] = counts.get(arr2, 0) + 1
            err, ids = get_elements(j, arr2, 0, 1000) if arr2 != arr else (OUT_OF_MEMORY, [])
    checks.append(("after a GC took what it named, the table names again", err == 0 and 0 not in ids))
    for i in ids:
        counts[i] = counts.get(i, 0) + 1
    dispose(j, counts)
    err, ids = get_elements(j, read_array_id(j, ref, fid), 0, 4000)
    checks.append(("after DisposeObjects the table names again", err == 0 and 0 not in ids))


def main():
    agent, work, *modes = sys.argv[1:]
    modes = modes or ["rotate", "pin"]
    java, javac = shutil.which("java"), shutil.which("javac")
    if not java or not javac or not shutil.which("jcmd"):
        print("FAIL: java/javac/jcmd missing (scripts/setup.sh installs default-jdk-headless)")
        return 1
    global PAUSE
    # Its own directory: both agents' tests may run at once (ctest -j), each with its pause file.
    work = os.path.join(work, f"names-{os.getpid()}")
    os.makedirs(work, exist_ok=True)
    PAUSE = os.path.join(work, "names-pause")
    if os.path.exists(PAUSE):
        os.unlink(PAUSE)
    classes = os.path.join(work, "names-classes")
    os.makedirs(classes, exist_ok=True)
    subprocess.run([javac, "-g", "-d", classes, os.path.join(HERE, "Rotate.java")], check=True)
    failed = False
    for mode in modes:
        opts = "=transport=dt_socket,server=y,suspend=n,address=127.0.0.1:0"
        if agent == "jdk":
            spec = "-agentlib:jdwp" + opts
        else:
            spec = f"-agentpath:{os.path.abspath(agent)}{opts}" + (",names=5000" if mode == "full" else "")
        out_path = os.path.join(work, f"names-{mode}.out")
        vm, port = launch_rotate(java, spec, classes, out_path)
        checks, figures = [], []
        try:
            if port is None:
                print(f"FAIL {mode}: the JVM did not come up\n" + open(out_path).read()[-3000:])
                failed = True
                continue
            j = Jdwp(port)
            {"rotate": lambda: check_rotate(j, vm, checks, figures), "pin": lambda: check_pin(j, vm, checks),
             "full": lambda: check_full(j, vm, checks, figures)}[mode]()
        except (OSError, EOFError, RuntimeError, AssertionError) as e:
            checks.append((f"{mode}: the session ran ({e!r})", False))
        finally:
            alive = vm.poll() is None
            vm.kill()
            vm.wait()
        out = open(out_path, errors="replace").read()
        checks.append((f"{mode}: the program never ran out of memory", alive and "OutOfMemoryError" not in out))
        for f in figures:
            print(f"     {mode}: {f}")
        for name, ok in checks:
            print(("ok   " if ok else "FAIL ") + f"{mode}: {name}")
        if not all(ok for _, ok in checks):
            failed = True
            print(out[-3000:])
    if not failed:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


def launch_rotate(java, spec, classes, out_path):
    """Rotate under SPEC: the JVM and its port once the first array is in place."""
    with open(out_path, "wb") as out:
        vm = subprocess.Popen([java, "-Xmx128m", spec, "-cp", classes, "Rotate", str(N), str(PERIOD_MS), PAUSE],
                              stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 90  # a JVM with ASan's runtime, on a loaded machine
    while time.monotonic() < deadline and vm.poll() is None:
        text = open(out_path, errors="replace").read()
        m = re.search(r"Listening for transport dt_socket at address: (\d+)", text)
        if m and "ROTATE ready" in text:
            return vm, m.group(1)
        time.sleep(0.05)
    return vm, None


if __name__ == "__main__":
    sys.exit(main())
