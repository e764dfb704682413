#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`ddmc ps` against a fake adb server: what a broken or slow adb server sends, which the real one
(adb_ddmc_ps) never does. Python standard library only.

  ps_fake_adb.py --ddmc BIN lengths     every length prefix that is not 4 hex digits
  ps_fake_adb.py --ddmc BIN deadline    10,000 silent VMs under -t 3000

The fake server listens on 127.0.0.1 (a free port) and speaks as much of the adb host protocol
as `ddmc ps` uses ([4 hex digits: length][request] from the client; OKAY, or FAIL + [4 hex
digits][message]): host:transport-any, then track-jdwp (OKAY, then one list with the length
prefix the case wants); host:transport-any, then jdwp:PID on a probe's own connection (OKAY,
then the VM: the JDWP handshake echoed, then HELO and FEAT answered, or nothing at all). Each
case says what the server sends; every ddmc run is bounded by a timeout and killed by pid.

lengths: a track-jdwp prefix of "-004", "+004", " 004", "00 4", "00g4", "0x04" or "\\x00004"
is exit 3 with a message naming the prefix, never a crash or a list (strtoul took the sign and
the space: "-004" was a length near 2^64 and a SIGSEGV); the same prefixes after FAIL to
host:transport are "not an adb server" at once (exit 2; sscanf("%4x") read "-004" as a length
and waited for it until -t), and after FAIL to jdwp:PID an error row naming the prefix;
valid prefixes in upper and lower case still work.
deadline: 10,000 pids whose jdwp:PID the server accepts but whose VMs never answer HELO (5 with
lower pids answer): with -t 3000 the command ends in about 3 s (not 10,000 / 256 probes at a
time x 3 s = 2 minutes), every silent pid listed as no-answer, the 5 as ok; in --json and text.
"""
import argparse
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

ARGS = None
FAILS = []
BAD_PREFIXES = [b"-004", b"+004", b" 004", b"00 4", b"00g4", b"0x04", b"\x00004"]


def say(msg):
    print(msg, flush=True)


def passed(before, msg):
    """Reports a case as passed only when it added no FAIL."""
    if len(FAILS) == before:
        say(msg)


def fail(msg):
    FAILS.append(msg)
    say("FAIL: " + msg)


def utf16(s):
    b = s.encode("utf-16-be")
    return struct.pack(">I", len(b) // 2) + b


def helo_reply(id_, pid):
    name = "com.example.fake%d" % pid
    data = (struct.pack(">IIII", 1, pid, len("fake-adb-vm"), len(name)) + "fake-adb-vm".encode("utf-16-be") +
            name.encode("utf-16-be") + struct.pack(">i", 0) + utf16("x86_64") + utf16("") + b"\0" + utf16(name))
    body = struct.pack(">II", 0x48454C4F, len(data)) + data
    return struct.pack(">IIBH", 11 + len(body), id_, 0x80, 0) + body


class FakeAdb:
    """One listening socket, a thread per connection. `case` decides what is sent:
    track: the bytes after track-jdwp's OKAY (prefix and list); transport_fail: bytes after FAIL
    to host:transport (None: OKAY); jdwp(pid): 'answer', 'silent', or bytes sent after FAIL."""

    def __init__(self, case):
        self.case = case
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(1024)  # 256 probes connect at once: no SYN may wait for a retry
        self.port = self.sock.getsockname()[1]
        self.lock = threading.Lock()
        self.jdwp_requests = 0
        self.stopping = False
        threading.Thread(target=self.accept_loop, daemon=True).start()

    def stop(self):
        self.stopping = True
        self.sock.close()

    def accept_loop(self):
        while not self.stopping:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self.serve, args=(c,), daemon=True).start()

    @staticmethod
    def read_exact(c, n):
        b = b""
        while len(b) < n:
            d = c.recv(n - len(b))
            if not d:
                raise EOFError
            b += d
        return b

    def request(self, c):
        n = int(self.read_exact(c, 4), 16)  # ddmc writes "%04zx": a strict client
        return self.read_exact(c, n).decode()

    def serve(self, c):
        try:
            self.serve_one(c)
        except (EOFError, OSError, ValueError):
            pass
        finally:
            c.close()

    def serve_one(self, c):
        req = self.request(c)
        if not req.startswith("host:transport"):
            c.sendall(b"FAIL0010unknown service")
            return
        if self.case.get("transport_fail") is not None:
            c.sendall(b"FAIL" + self.case["transport_fail"])
            self.read_exact(c, 1)  # until ddmc closes
            return
        c.sendall(b"OKAY")
        req = self.request(c)
        if req == "track-jdwp":
            c.sendall(b"OKAY" + self.case["track"])
            self.read_exact(c, 1)
            return
        if not req.startswith("jdwp:"):
            c.sendall(b"FAIL0010unknown service")
            return
        pid = int(req[5:])
        with self.lock:
            self.jdwp_requests += 1
        how = self.case["jdwp"](pid)
        if isinstance(how, bytes):
            c.sendall(b"FAIL" + how)
            self.read_exact(c, 1)
            return
        c.sendall(b"OKAY")
        if self.read_exact(c, 14) != b"JDWP-Handshake":
            return
        c.sendall(b"JDWP-Handshake")
        while True:
            hdr = self.read_exact(c, 11)
            length, id_, flags, cset, cmd = struct.unpack(">IIBBB", hdr)
            body = self.read_exact(c, length - 11)
            if how == "silent":
                continue  # the VM never answers: HELO waits for -t
            ctype = struct.unpack(">I", body[:4])[0] if len(body) >= 4 else 0
            if ctype == 0x48454C4F:
                c.sendall(helo_reply(id_, pid))
            else:
                c.sendall(struct.pack(">IIBH", 11, id_, 0x80, 0))  # FEAT: an empty reply


def run_ddmc(port, *args, timeout=60):
    cmd = [ARGS.ddmc, "-P", str(port), *args]
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace")
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.kill(p.pid, signal.SIGKILL)
        out, err = p.communicate()
        fail("%s: still running after %d s (killed)" % (" ".join(cmd), timeout))
    return p.returncode, out, err, time.monotonic() - t0


def no_crash(what, rc, err):
    """A signal, or a sanitizer's report, is a crash whatever the exit code."""
    if rc is None or rc < 0:
        fail("%s: killed by signal %s\n%s" % (what, -rc if rc else "?", err[-2000:]))
        return False
    for needle in ("AddressSanitizer", "runtime error:", "LeakSanitizer", "ThreadSanitizer"):
        if needle in err:
            fail("%s: %s\n%s" % (what, needle, err[-3000:]))
            return False
    return True


def shown(prefix):
    """As ddmc names a prefix: "-004" (2d 30 30 34), a byte outside printable ASCII as '.'."""
    text = "".join(chr(c) if 0x20 <= c < 0x7F and c != 0x5C else "." for c in prefix)
    return '"%s" (%s)' % (text, " ".join("%02x" % c for c in prefix))


def lengths_track(prefix):
    """A track-jdwp list with a bad length prefix: exit 3 and a message naming it."""
    before = len(FAILS)
    body = b"4242\n"
    srv = FakeAdb({"track": prefix + body, "jdwp": lambda pid: "answer"})
    try:
        for json_mode in (False, True):
            what = "track-jdwp prefix %r%s" % (prefix, " --json" if json_mode else "")
            rc, out, err, secs = run_ddmc(srv.port, *(["--json"] if json_mode else []), "-t", "5000", "ps",
                                          timeout=30)
            if not no_crash(what, rc, err):
                continue
            if rc != 3:
                fail("%s: exit %s, want 3 (the adb server broke the protocol)\nstdout: %s\nstderr: %s" %
                     (what, rc, out[-800:], err[-800:]))
                continue
            want = "the length prefix %s is not 4 hex digits" % shown(prefix)
            if want not in err:
                fail("%s: stderr lacks '%s': %s" % (what, want, err))
            if json_mode:
                doc = json.loads(out)
                if doc.get("ok") is not False or doc["error"]["exit"] != 3 or want not in doc["error"]["message"]:
                    fail("%s: the JSON error document: %s" % (what, out))
            elif "4242" in out:
                fail("%s: listed pids from a list it should have refused: %s" % (what, out))
        if srv.jdwp_requests:
            fail("track-jdwp prefix %r: %d pid(s) were probed" % (prefix, srv.jdwp_requests))
    finally:
        srv.stop()
    passed(before, "track-jdwp prefix %s: exit 3, named in the message" % shown(prefix))


def lengths_transport_fail(prefix):
    """FAIL to host:transport with a bad message length (host/adb.c): not an adb server, at once."""
    before = len(FAILS)
    srv = FakeAdb({"transport_fail": prefix + b"oops, no device here"})
    try:
        what = "FAIL prefix %r to host:transport" % prefix
        rc, out, err, secs = run_ddmc(srv.port, "-t", "5000", "ps", timeout=30)
        if not no_crash(what, rc, err):
            return
        if rc != 2 or "is not an adb server" not in err:
            fail("%s: exit %s, want 2 and 'is not an adb server'\nstderr: %s" % (what, rc, err[-800:]))
        elif secs > 4:
            fail("%s: %.1f s: waited for a length it should have refused" % (what, secs))
    finally:
        srv.stop()
    passed(before, "host:transport answered FAIL, prefix %s: exit 2, not an adb server (%.2f s)" % (shown(prefix), secs))


def lengths_probe_fail(prefix):
    """FAIL to one probe's jdwp:PID with a bad message length (tools/cmd_ps.c): an error row."""
    before = len(FAILS)
    srv = FakeAdb({"track": b"000a4242\n4243\n",
                   "jdwp": lambda pid: prefix + b"closed" if pid == 4243 else "answer"})
    try:
        what = "FAIL prefix %r to jdwp:4243" % prefix
        rc, out, err, secs = run_ddmc(srv.port, "--json", "-t", "5000", "ps", timeout=30)
        if not no_crash(what, rc, err):
            return
        if rc != 0:
            fail("%s: exit %s, want 0 (the list was read)\nstderr: %s" % (what, rc, err[-800:]))
            return
        procs = {p["pid"]: p for p in json.loads(out)["processes"]}
        bad, good = procs.get(4243), procs.get(4242)
        want = "FAIL's length prefix %s is not 4 hex digits" % shown(prefix)
        if bad is None or bad["state"] != "error" or want not in (bad["message"] or ""):
            fail("%s: the row %s, want state error and '%s'" % (what, bad, want))
        if good is None or good["state"] != "ok" or good["app_name"] != "com.example.fake4242":
            fail("%s: the other VM's row: %s" % (what, good))
        if secs > 4:
            fail("%s: %.1f s: waited for a length it should have refused" % (what, secs))
    finally:
        srv.stop()
    passed(before, "jdwp:PID answered FAIL, prefix %s: that row an error naming it, the other VM ok" % shown(prefix))


def lengths_valid():
    """4 hex digits in either case still read: "000A" and "000a"; FAIL with a good prefix."""
    before = len(FAILS)
    for prefix in (b"000A", b"000a"):
        srv = FakeAdb({"track": prefix + b"4242\n4243\n", "jdwp": lambda pid: "answer"})
        try:
            rc, out, err, secs = run_ddmc(srv.port, "--json", "-t", "5000", "ps", timeout=30)
            if not no_crash("valid prefix %r" % prefix, rc, err):
                continue
            doc = json.loads(out) if rc == 0 else {}
            states = sorted((p["pid"], p["state"]) for p in doc.get("processes", []))
            if rc != 0 or states != [(4242, "ok"), (4243, "ok")]:
                fail("valid prefix %r: exit %s, rows %s\nstderr: %s" % (prefix, rc, states, err[-800:]))
        finally:
            srv.stop()
    srv = FakeAdb({"transport_fail": b"000eno such device"})
    try:
        rc, out, err, secs = run_ddmc(srv.port, "-t", "5000", "ps", timeout=30)
        if no_crash("FAIL 000e", rc, err) and (rc != 2 or "adb says host:transport-any: no such dev" not in err):
            fail("FAIL with a valid prefix 000e: exit %s, stderr %s" % (rc, err[-800:]))
    finally:
        srv.stop()
    passed(before, "valid prefixes (000A, 000a, FAIL 000e): read as before")


def mode_lengths():
    lengths_valid()
    for prefix in BAD_PREFIXES:
        lengths_track(prefix)
    for prefix in BAD_PREFIXES:
        lengths_transport_fail(prefix)
    for prefix in BAD_PREFIXES:
        lengths_probe_fail(prefix)


def mode_deadline():
    n, t_ms, base = ARGS.count, ARGS.timeout_ms, 20000
    pids = list(range(base, base + n))
    answering = set(pids[:5])
    body = b"".join(b"%d\n" % p for p in pids)
    if len(body) > 0xFFFF:
        raise SystemExit("FAIL: %d pids do not fit one track-jdwp message" % n)
    srv = FakeAdb({"track": b"%04x" % len(body) + body,
                   "jdwp": lambda pid: "answer" if pid in answering else "silent"})
    bound = t_ms / 1000.0 + ARGS.margin
    try:
        for json_mode in (True, False):
            what = "ps -t %d over %d pids%s" % (t_ms, n, " --json" if json_mode else "")
            rc, out, err, secs = run_ddmc(srv.port, *(["--json"] if json_mode else []), "-t", str(t_ms), "ps",
                                          timeout=max(60, int(bound * 4)))
            if not no_crash(what, rc, err):
                continue
            if rc != 0:
                fail("%s: exit %s\nstderr: %s" % (what, rc, err[-800:]))
                continue
            # The bound holds from both sides: the silent VMs are given -t, and no more.
            if secs > bound or secs < t_ms / 1000.0 - 0.05:
                fail("%s: %.2f s, want %.2f .. %.2f s" % (what, secs, t_ms / 1000.0, bound))
            if json_mode:
                procs = json.loads(out)["processes"]
                states = {p["pid"]: p["state"] for p in procs}
                if sorted(states) != pids:
                    fail("%s: %d rows, want the %d pids" % (what, len(states), n))
                wrong = [(pid, s) for pid, s in states.items() if s != ("ok" if pid in answering else "no-answer")]
                if wrong:
                    fail("%s: %d rows in the wrong state, e.g. %s" % (what, len(wrong), wrong[:5]))
                msgs = {}
                for p in procs:
                    if p["state"] == "no-answer":
                        key = "asked" if "no answer to" in p["message"] else "not asked"
                        msgs[key] = msgs.get(key, 0) + 1
                        if key == "not asked" and "not asked within %d ms" % t_ms not in p["message"]:
                            fail("%s: pid %d's message: %s" % (what, p["pid"], p["message"]))
                say("%s: %.2f s (bound %.1f s); %d ok, no-answer: %s" % (what, secs, bound, len(answering), msgs))
            else:
                rows = [l for l in out.splitlines()[1:] if l.strip()]
                silent = [l for l in rows if "(no answer to " in l or "(not asked within " in l]
                oks = [l for l in rows if "fake-adb-vm" in l]
                if len(rows) != n or len(silent) != n - len(answering) or len(oks) != len(answering):
                    fail("%s: %d rows, %d silent, %d ok; want %d, %d, %d" %
                         (what, len(rows), len(silent), len(oks), n, n - len(answering), len(answering)))
                say("%s: %.2f s; %d rows, %d listed as not answering" % (what, secs, len(rows), len(silent)))
        say("jdwp:PID requests the server saw: %d (the probes asked before the deadline)" % srv.jdwp_requests)
    finally:
        srv.stop()


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--ddmc", required=True)
    ap.add_argument("mode", choices=["lengths", "deadline"])
    ap.add_argument("--count", type=int, default=10000)
    ap.add_argument("--timeout-ms", type=int, default=3000)
    ap.add_argument("--margin", type=float, default=3.0, help="seconds over -t the command may take")
    ARGS = ap.parse_args()
    if not os.access(ARGS.ddmc, os.X_OK):
        say("FAIL: no ddmc at %s" % ARGS.ddmc)
        return 1
    {"lengths": mode_lengths, "deadline": mode_deadline}[ARGS.mode]()
    if FAILS:
        say("FAIL: %d check(s) failed" % len(FAILS))
        return 1
    say("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
