#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A debugger writing minivm's own Thread slots over JDWP: Thread.target (declared J, the method
the thread will run, by index) and Thread.tid of an unstarted thread. Both SetValues are well
typed; the VM decodes these slots itself, so they are refused (ILLEGAL_ARGUMENT) and marked
private final synthetic in ReferenceType.Fields, and the thread then starts and runs as the
program wrote it. Before, the write went through and the start read a method table out of range
(SIGSEGV).

usage: thread_fields.py MINIVM THREAD_FIELDS.MVM"""
import re
import socket
import struct
import subprocess
import sys
import time

MINIVM, PROGRAM = sys.argv[1:3]
ILLEGAL_ARGUMENT = 103
VM = None


def fail(msg):
    if VM is not None and VM.poll() is None:
        VM.kill()
    sys.exit("FAIL: " + msg)


class Jdwp:
    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.s.sendall(b"JDWP-Handshake")
        if self.recv(14) != b"JDWP-Handshake":
            fail("no handshake")
        self.next_id = 1

    def recv(self, n):
        out = b""
        while len(out) < n:
            c = self.s.recv(n - len(out))
            if not c:
                fail("the VM closed the connection (crashed?)")
            out += c
        return out

    def cmd(self, cset, c, body=b""):
        """Returns (error code, reply body); events that arrive first are skipped."""
        pid = self.next_id
        self.next_id += 1
        self.s.sendall(struct.pack(">IIBBB", 11 + len(body), pid, 0, cset, c) + body)
        while True:
            length, rid, flags = struct.unpack(">IIB", self.recv(9))
            rest = self.recv(length - 9)
            if flags & 0x80 and rid == pid:
                return struct.unpack(">H", rest[:2])[0], rest[2:]

    def ok(self, cset, c, body=b""):
        err, r = self.cmd(cset, c, body)
        if err:
            fail(f"command {cset}.{c} answered error {err}")
        return r


def jstr(b, at):
    n = struct.unpack(">I", b[at:at + 4])[0]
    return b[at + 4:at + 4 + n].decode(), at + 4 + n


def class_id(j, sig):
    r = j.ok(1, 2, struct.pack(">I", len(sig)) + sig.encode())  # ClassesBySignature
    if struct.unpack(">I", r[:4])[0] != 1:
        return None
    return struct.unpack(">Q", r[5:13])[0]


def fields(j, cid):
    r = j.ok(2, 4, struct.pack(">Q", cid))  # ReferenceType.Fields
    n, at, out = struct.unpack(">I", r[:4])[0], 4, {}
    for _ in range(n):
        fid = struct.unpack(">Q", r[at:at + 8])[0]
        name, at = jstr(r, at + 8)
        _sig, at = jstr(r, at)
        mods = struct.unpack(">I", r[at:at + 4])[0]
        at += 4
        out[name] = (fid, mods)
    return out


def main():
    global VM
    VM = subprocess.Popen([MINIVM, "-agentlib:jdwp=transport=dt_socket,address=127.0.0.1:0,server=y,suspend=n",
                           PROGRAM], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    port = None
    deadline = time.time() + 20
    while port is None and time.time() < deadline:
        line = VM.stderr.readline()
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
        if m:
            port = int(m.group(1))
        elif not line and VM.poll() is not None:
            fail("minivm ended before listening")
    if port is None:
        fail("no JDWP port line")
    j = Jdwp(port)
    j.ok(1, 7)  # IDSizes: all 8 (the library's)
    prog = None
    while prog is None and time.time() < deadline:
        prog = class_id(j, "LThreadFields;")
        if prog is None:
            time.sleep(0.05)
    if prog is None:
        fail("ThreadFields never loaded")
    pf = fields(j, prog)
    victim = 0
    while victim == 0 and time.time() < deadline:  # main publishes the unstarted Thread
        r = j.ok(2, 6, struct.pack(">QIQ", prog, 1, pf["victim"][0]))  # ReferenceType.GetValues
        victim = struct.unpack(">Q", r[5:13])[0]
        if victim == 0:
            time.sleep(0.05)
    if victim == 0:
        fail("ThreadFields.victim never set")
    tf = fields(j, class_id(j, "Ljava/lang/Thread;"))
    for name in ("target", "tid"):
        fid, mods = tf[name]
        if mods & 0x12 != 0x12:
            fail(f"Thread.{name}: modifiers {mods:#x}, want private final")
        before = j.ok(9, 2, struct.pack(">QIQ", victim, 1, fid))  # ObjectReference.GetValues
        err, _ = j.cmd(9, 3, struct.pack(">QIQq", victim, 1, fid, 0x7FFF123456789ABC))  # SetValues
        if err != ILLEGAL_ARGUMENT:
            fail(f"SetValues Thread.{name}: error {err}, want ILLEGAL_ARGUMENT ({ILLEGAL_ARGUMENT})")
        after = j.ok(9, 2, struct.pack(">QIQ", victim, 1, fid))
        if after != before:
            fail(f"Thread.{name} changed: {before.hex()} -> {after.hex()}")
    # A field of the program's own stays writable: this one lets main go on.
    j.ok(3, 2, struct.pack(">QIQi", prog, 1, pf["go"][0], 1))  # ClassType.SetValues
    try:
        out, err = VM.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        fail("minivm did not finish")
    if VM.returncode != 0 or out.splitlines() != ["victim ran", "main done"]:
        fail(f"minivm exit {VM.returncode}, stdout {out!r}, stderr {err[-800:]!r}")
    print("PASS: Thread.target and Thread.tid refused; the thread ran")


main()
