#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of the ddmc command-line monitor (python3 standard library only).

Each test case is one ctest test: `e2e.py --ddmc PATH [--minivm PATH --programs DIR]
[--pngcheck PATH] --workdir DIR CASE`. Cases that need a VM start minivm with
-agentlib:jdwp=transport=dt_socket,address=127.0.0.1:0,server=y,suspend=n (any free port) and read the port from minivm's "JDWP listening on HOST:PORT" line.
Error cases run against peers made here: nothing listening, `python3 -m http.server`, a listener
that answers garbage, one that completes the JDWP handshake and then stays silent, a JDWP VM that
is not DDM-aware, and a scripted DDM VM whose strings stress the JSON writer. hostile_names runs a
minivm program (written to the workdir) and a scripted VM whose names carry terminal control
sequences: text output must show them escaped, JSON exactly.

Every process started here is killed by pid when the case ends (also on SIGTERM from ctest), and
every wait is bounded.
"""
import argparse
import json
import os
import pty
import re
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

ARGS = None
CHILDREN = []          # Popen objects to kill at the end
LISTENERS = []         # sockets to close at the end

# The heap picture's palette (README: "Heap picture legend"). ddmc reports it too; the test keeps
# its own copy so a swapped colour in ddmc is caught.
PALETTE = {
    "object": "#3cb44b", "class": "#ffe119", "array1": "#e6194b", "array2": "#f58231",
    "array4": "#4363d8", "array8": "#911eb4", "unknown": "#a9a9a9", "native": "#42d4f4",
    "free": "#282828", "gap": "#ffffff",
}
BACKGROUND = "#000000"
TEXT = "#d0d0c8"


class Failure(Exception):
    pass


def check(cond, msg, *detail):
    if not cond:
        raise Failure(msg + ("".join("\n    " + str(d) for d in detail) if detail else ""))


def log(msg):
    print(f"[e2e {time.strftime('%H:%M:%S')}] {msg}", flush=True)


# ---- processes -----------------------------------------------------------------------------------

def cleanup(*_):
    for p in CHILDREN:
        if p.poll() is None:
            try:
                p.kill()          # by pid, one at a time
            except OSError:
                pass
    for p in CHILDREN:
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
    for s in LISTENERS:
        try:
            s.close()
        except OSError:
            pass


class VM:
    """A running minivm; .port is its JDWP port."""

    def __init__(self, program, vm_args=(), prog_args=()):
        """program: a name from examples/minivm/programs, or the path of a .mvm file."""
        path = program if program.endswith(".mvm") else os.path.join(ARGS.programs, program + ".mvm")
        program = os.path.basename(program)
        cmd = [ARGS.minivm, "-agentlib:jdwp=transport=dt_socket,address=127.0.0.1:0,server=y,suspend=n",
               *vm_args, path, *prog_args]
        self.out_path = os.path.join(ARGS.workdir, f"{ARGS.case}-{program}-{len(CHILDREN)}.out")
        self.out = open(self.out_path, "wb")
        self.proc = subprocess.Popen(cmd, stdout=self.out, stderr=subprocess.PIPE)
        CHILDREN.append(self.proc)
        self.pid = self.proc.pid
        self.stderr_lines = []
        self.port = None
        got = threading.Event()

        def reader():
            for raw in self.proc.stderr:
                line = raw.decode("utf-8", "replace").rstrip("\n")
                self.stderr_lines.append(line)
                m = re.search(r"JDWP listening on [^ ]*:(\d+)\s*$", line)
                if m and self.port is None:
                    self.port = int(m.group(1))
                    got.set()
            got.set()

        threading.Thread(target=reader, daemon=True).start()
        if not got.wait(15) or self.port is None:
            raise Failure(f"minivm {program} did not report its JDWP port", *self.stderr_lines[-5:])
        self.target = f"127.0.0.1:{self.port}"
        log(f"minivm {program} pid {self.pid} on {self.target}")

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)


def ddmc(*args, target=None, json_out=True, rc=0, timeout=60, extra_env=None):
    """Runs ddmc; checks the exit code; returns (parsed JSON or stdout text, stderr, elapsed s)."""
    cmd = [ARGS.ddmc]
    if target:
        cmd += ["-c", target]
    if json_out:
        cmd.append("--json")
    cmd += [str(a) for a in args]
    t0 = time.monotonic()
    r = subprocess.run(cmd, capture_output=True, timeout=timeout)
    elapsed = time.monotonic() - t0
    out, err = r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")
    if rc is not None:
        check(r.returncode == rc, f"{' '.join(cmd[1:])}: exit {r.returncode}, expected {rc}",
              "stderr: " + err.strip(), "stdout: " + out[:2000])
    if json_out:
        try:
            doc = json.loads(out)
        except ValueError as e:
            raise Failure(f"{' '.join(cmd[1:])}: stdout is not one JSON document: {e}", out[:2000])
        check(isinstance(doc, dict) and "command" in doc and "ok" in doc, "JSON lacks command/ok", doc)
        check(doc["ok"] == (r.returncode == 0), "JSON ok does not match the exit code", doc, r.returncode)
        return doc, err, elapsed
    return out, err, elapsed


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def listen():
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", 0))
    s.listen(4)
    LISTENERS.append(s)
    return s, s.getsockname()[1]


def serve(sock, handler):
    """Accepts connections on sock in a daemon thread and runs handler(conn) for each."""
    def loop():
        while True:
            try:
                c, _ = sock.accept()
            except OSError:
                return
            LISTENERS.append(c)
            threading.Thread(target=handler, args=(c,), daemon=True).start()
    threading.Thread(target=loop, daemon=True).start()


# ---- a scripted JDWP/DDM peer ---------------------------------------------------------------------

def recv_exact(c, n):
    b = b""
    while len(b) < n:
        part = c.recv(n - len(b))
        if not part:
            raise EOFError
        b += part
    return b


def utf16(s):
    data = s.encode("utf-16-be", "surrogatepass")
    return struct.pack(">I", len(data) // 2) + data


def fourcc(t):
    return struct.unpack(">I", t.encode())[0]


def fake_vm(handlers, jdwp_error=None):
    """A handler for serve(): handshake, then answers DDM requests with handlers[type](payload)
    -> (type, payload) or None (empty reply). jdwp_error: answer everything with that error."""
    def run(c):
        try:
            hs = recv_exact(c, 14)
            if hs != b"JDWP-Handshake":
                return
            c.sendall(hs)
            while True:
                hdr = recv_exact(c, 11)
                length, pid, flags, cs, cmd = struct.unpack(">IIBBB", hdr)
                body = recv_exact(c, length - 11)
                if jdwp_error is not None:
                    c.sendall(struct.pack(">IIBH", 11, pid, 0x80, jdwp_error))
                    continue
                if cs != 199 or cmd != 1 or len(body) < 8:
                    c.sendall(struct.pack(">IIBH", 11, pid, 0x80, 99))
                    continue
                ctype, clen = struct.unpack(">II", body[:8])
                name = struct.pack(">I", ctype).decode("latin-1")
                h = handlers.get(name)
                ans = h(body[8:8 + clen]) if h else None
                if ans is None:
                    c.sendall(struct.pack(">IIBH", 11, pid, 0x80, 0))
                else:
                    rtype, payload = ans
                    c.sendall(struct.pack(">IIBHII", 11 + 8 + len(payload), pid, 0x80, 0, fourcc(rtype),
                                          len(payload)) + payload)
        except (EOFError, OSError):
            pass
        finally:
            c.close()
    return run


# ---- helpers on ddmc output ------------------------------------------------------------------------

def threads_by_name(threads):
    return {t["name"]: t for t in threads if t.get("name")}


def wait_until(pred, timeout, step=0.2):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return pred()


# ---- cases ------------------------------------------------------------------------------------------

def case_info():
    vm = VM("idle")
    doc, _, _ = ddmc("info", target=vm.target)
    v = doc["vm"]
    check(doc["command"] == "info" and doc["target"] == vm.target, "head", doc)
    check(v["pid"] == vm.pid, "HELO pid is the VM's pid", v["pid"], vm.pid)
    check(v["vm_ident"].startswith("minivm"), "vm ident", v)
    check(re.match(r"(64|32)-bit", v["abi"] or ""), "abi", v)
    check((v["jvm_flags"] or "").startswith("CheckJNI="), "jvm flags", v)
    check(isinstance(v["features"], list), "features list", v)
    check(v["user_id"] == 0 and v["protocol_version"] == 1, "user id / protocol", v)
    check(v["waiting_for_debugger"] is False and doc["debugger"] == "not-waiting", "idle does not wait", doc)
    w = doc["wire"]
    check(w["bytes_in"] > 0 and w["bytes_out"] > 0 and w["packets_in"] >= 3, "wire counters", w)
    check(w["zlib"]["opted_in"] and w["zlib"]["vm_answered"], "zlib opt-in answered", w)
    doc, _, _ = ddmc("--no-zlib", "info", target=vm.target)
    check(not doc["wire"]["zlib"]["opted_in"], "--no-zlib does not opt in", doc["wire"])
    out, err, _ = ddmc("-v", "info", target=vm.target, json_out=False)
    check(re.search(rf"^pid\s+{vm.pid}$", out, re.M), "text: pid line", out)
    check(re.search(r"^vm\s+minivm", out, re.M) and re.search(r"^debugger\s+not waiting", out, re.M), "text", out)
    check("ddmc: wire:" in err, "-v prints wire statistics on stderr", err)


def case_zygote():
    vm = VM("zygote")
    # Connected before or across the rename at 0.5 s: the APNM and the WAIT arrive on this session.
    doc, _, _ = ddmc("threads", "--watch", "2", target=vm.target)
    v = doc["vm"]
    check(v["app_name"] == "com.example.zygote", "app name after the rename", v)
    if v["app_name_at_hello"] == "<pre-initialized>":
        check(v["app_name_source"] == "APNM", "a rename seen live comes from APNM", v)
    check(v["waiting_for_debugger"] is True, "zygote waits for a debugger (WAIT)", v)
    doc, _, _ = ddmc("info", target=vm.target)
    check(doc["vm"]["app_name"] == "com.example.zygote", "new session: name in HELO", doc["vm"])
    check(doc["debugger"] == "waiting", "new session: WAIT after HELO", doc)
    out, _, _ = ddmc("info", target=vm.target, json_out=False)
    check(re.search(r"^app name\s+com\.example\.zygote$", out, re.M), "text app name", out)
    check(re.search(r"^debugger\s+waiting", out, re.M), "text debugger line", out)


STATUS_WORDS = {"running", "sleeping", "monitor", "wait", "initializing", "starting", "native", "vmwait",
                "suspended", "zombie"}
# What each threads.mvm thread may show at any instant ("suspended": parked while a GC runs) ...
ALLOWED = {
    "main": {"vmwait", "running", "suspended"},
    "JDWP": {"running", "vmwait"},
    "Sleeper": {"sleeping", "running", "suspended"},
    "Native": {"native", "sleeping", "running", "suspended"},
    "Holder": {"sleeping", "running", "monitor", "suspended"},
    "Blocked": {"monitor", "native", "sleeping", "running", "suspended"},
    "Waiter": {"wait", "monitor", "running", "suspended"},
    "TimedWaiter": {"sleeping", "monitor", "running", "suspended"},
    "Notifier": {"sleeping", "monitor", "running", "suspended"},
    "Busy": {"running", "sleeping", "suspended"},
    "Renamer": {"sleeping", "running", "suspended"},
    "Collector": {"vmwait", "running", "sleeping", "suspended"},
    "Worker": {"starting", "initializing", "sleeping", "running", "native", "suspended", "zombie"},
}
# ... and what it must show at least once over the samples.
MUST_SEE = {"Sleeper": "sleeping", "Native": "native", "Blocked": "monitor", "Waiter": "wait"}


def family(name):
    for k in ALLOWED:
        if name == k or name.startswith(k + "-"):
            return k
    return None


def case_threads():
    vm = VM("threads")
    time.sleep(1.0)  # let main start every thread
    doc, _, _ = ddmc("threads", "--watch", "3.5", target=vm.target)
    check(doc["sample_count"] >= 4 and len(doc["samples"]) == doc["sample_count"], "samples", doc["sample_count"])
    seen = {}
    for s in doc["samples"]:
        names = threads_by_name(s["threads"])
        for fam in ["main", "JDWP", "Sleeper", "Native", "Holder", "Blocked-1", "Blocked-2", "Waiter-1", "Waiter-2",
                    "TimedWaiter", "Notifier", "Busy", "Collector"]:
            check(fam in names, f"thread {fam} listed at t={s['t_ms']} ms", sorted(names))
        check(any(n.startswith("Renamer-") for n in names), "Renamer-A/B listed", sorted(names))
        check(any(n.startswith("Worker-") for n in names), "a Worker listed", sorted(names))
        tids = [t["tid"] for t in s["threads"] if t["tid"] is not None]
        check(len(tids) == len(set(tids)) and all(t > 0 for t in tids), "tids unique and positive", tids)
        for t in s["threads"]:
            if t["status"] is None:
                continue  # listed by THCR between two THST queries
            check(t["status"] in STATUS_WORDS and isinstance(t["status_code"], int), "status word", t)
            fam = family(t["name"] or "")
            if fam:
                check(t["status"] in ALLOWED[fam], f"{t['name']}: implausible status {t['status']}", t)
                seen.setdefault(fam, set()).add(t["status"])
                want_daemon = fam not in ("main", "Worker")
                check(t["daemon"] is want_daemon, f"{t['name']}: daemon should be {want_daemon}", t)
        check(names["main"]["tid"] == vm.pid, "main's tid is the process id", names["main"], vm.pid)
    for fam, st in MUST_SEE.items():
        check(st in seen.get(fam, ()), f"{fam} never seen {st}", seen.get(fam))
    busy = threads_by_name(doc["threads"])["Busy"]
    check(busy["utime"] + busy["stime"] > 0, "Busy has used CPU time", busy)
    ev = doc["events"]
    check(any(e["event"] == "created" and (e["name"] or "").startswith("Worker-") for e in ev), "THCR of a worker", ev)
    check(any(e["event"] == "ended" and (e["name"] or "").startswith("Worker-") for e in ev), "THDE of a worker", ev)
    check(any(e["event"] == "renamed" and (e["name"] or "").startswith("Renamer-") for e in ev), "THNM", ev)
    # One-shot table, text mode.
    out, _, _ = ddmc("threads", target=vm.target, json_out=False)
    check(re.search(r"^\s+ID\s+TID\s+STATUS\s+DAEMON\s+UTIME\s+STIME\s+NAME$", out, re.M), "text header", out)
    check(re.search(r"\bwait\s+yes\s+\d+\s+\d+\s+Waiter-1$", out, re.M) or "Waiter-1" in out, "text row", out)


def case_watch_sigint():
    vm = VM("threads")
    master, slave = pty.openpty()
    p = subprocess.Popen([ARGS.ddmc, "-c", vm.target, "threads", "--watch", "60"], stdout=slave,
                         stderr=subprocess.PIPE)
    CHILDREN.append(p)
    os.close(slave)
    buf = b""
    t_end = time.monotonic() + 2.5
    while time.monotonic() < t_end:
        r, _, _ = select.select([master], [], [], 0.1)
        if r:
            try:
                buf += os.read(master, 65536)
            except OSError:
                break
    p.send_signal(signal.SIGINT)
    t0 = time.monotonic()
    try:
        rc = p.wait(timeout=10)
    except subprocess.TimeoutExpired:
        raise Failure("ddmc threads --watch did not stop within 10 s of SIGINT")
    took = time.monotonic() - t0
    while True:
        r, _, _ = select.select([master], [], [], 0.1)
        if not r:
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        buf += chunk
    os.close(master)
    text = buf.decode("utf-8", "replace")
    check(rc == 0, f"SIGINT exit code {rc}, expected 0", p.stderr.read().decode())
    check(took < 6, f"took {took:.1f} s to stop after SIGINT")
    check(text.count("\x1b[H\x1b[2J") >= 2, "a tty gets the screen redrawn in place (clear+home) at least twice",
          repr(text[:300]))
    check("Sleeper" in text and "ddmc threads" in text, "table on the tty", text[:500])


def case_stack():
    vm = VM("threads")
    time.sleep(0.8)
    doc, _, _ = ddmc("threads", target=vm.target)
    names = threads_by_name(doc["threads"])
    sid = names["Sleeper"]["id"]
    doc, _, _ = ddmc("stack", sid, target=vm.target)
    check(doc["thread_id"] == sid and len(doc["frames"]) >= 1, "frames", doc)
    f0 = doc["frames"][0]
    check((f0["class"], f0["method"], f0["file"], f0["line"]) == ("Threads", "sleeper", "Threads.java", 60),
          "Sleeper's innermost frame", f0)
    out, _, _ = ddmc("stack", names["Holder"]["id"], target=vm.target, json_out=False)
    check("at Threads.holder(Threads.java:" in out, "text stack", out)
    # Main is in main() at the join.
    doc, _, _ = ddmc("stack", names["main"]["id"], target=vm.target)
    check(any(f["method"] == "main" and f["class"] == "Threads" for f in doc["frames"]), "main's frames", doc)
    # No such thread: FAIL -> exit 5, with a message.
    doc, err, _ = ddmc("stack", 99999, target=vm.target, rc=5)
    check(doc["error"]["exit"] == 5 and "No such thread" in doc["error"]["message"], "FAIL reported", doc)
    check("FAIL" in err and "99999" in err, "FAIL message on stderr", err)
    _, err, _ = ddmc("stack", 99999, target=vm.target, rc=5, json_out=False)
    check(err.startswith("ddmc: ") and "No such thread" in err, "text FAIL message", err)


def case_heap():
    vm = VM("alloc", ["-Xmx4m", "-Xms4m"])
    time.sleep(0.5)
    doc, _, _ = ddmc("heap", target=vm.target)
    h = doc["heap"]
    check(h["heap_id"] == 1 and h["reason"] == 1, "HPIF now", h)
    check(h["max_bytes"] == 4 << 20 and h["footprint"] == 4 << 20, "-Xmx4m -Xms4m", h)
    check(0 < h["allocated_bytes"] <= h["footprint"] and h["allocated_objects"] > 0, "allocation numbers", h)
    check(abs(h["timestamp_ms"] / 1000 - time.time()) < 120, "timestamp is wall-clock ms", h)
    out, _, _ = ddmc("heap", target=vm.target, json_out=False)
    check(re.search(r"^\s+footprint\s+4194304\s", out, re.M), "text footprint", out)


def run_bitmap(vm, png, *extra):
    doc, _, _ = ddmc(*extra, "heap", "--bitmap", png, target=vm.target)
    return doc


def case_bitmap():
    vm = VM("alloc", ["-Xmx4m", "-Xms4m"])
    time.sleep(0.5)
    png = os.path.join(ARGS.workdir, "e2e-heap.png")
    if os.path.exists(png):
        os.unlink(png)
    doc = run_bitmap(vm, png)
    h, d, b = doc["heap"], doc["dump"], doc["bitmap"]
    check(h["reason"] == 2, "the HPIF of the same GC (NEXT_GC)", h)
    check(d["heap_id"] == 1 and d["unit_size"] == 8 and d["chunk_type"] == "HPSG", "dump header", d)
    check(d["first_unit"] == 0 and d["gap_units"] == 0, "dump starts at the heap base, no gaps", d)
    check(d["units"] * d["unit_size"] == h["footprint"] and d["covers_footprint"], "bitmap covers the footprint", d, h)
    kinds = d["kinds"]
    check(set(kinds) == set(PALETTE), "kind keys", sorted(kinds))
    for k, c in PALETTE.items():
        check(kinds[k]["color"] == c, f"colour of {k}", kinds[k])
    total = sum(kinds[k]["units"] for k in kinds if k != "gap")
    check(total == d["units"] == d["covered_units"], "kinds add up to the units", total, d)
    live = sum(kinds[k]["bytes"] for k in kinds if k not in ("free", "gap"))
    # HPIF goes out after the world resumes, so allocations may slip in between walk and HPIF.
    check(live <= h["allocated_bytes"] <= live + (256 << 10), "live bytes agree with HPIF", live, h)
    check(sum(kinds[k]["runs"] for k in kinds if "runs" in kinds[k]) <= h["allocated_objects"] + 4096,
          "runs vs objects", kinds)
    for k in ("object", "class", "array1", "array2", "array4", "array8"):
        check(kinds[k]["units"] > 0, f"alloc.mvm allocates {k}: it must show", kinds[k])
    for k in ("unknown", "native"):
        check(kinds[k]["units"] == 0, f"no {k} in the managed heap", kinds[k])
    check(b["path"] == png and os.path.getsize(png) > 0, "png written", b)
    check(b["units_per_pixel"] == 1 and b["pixels"] == d["units"], "one pixel per unit", b)
    check(b["bitmap_width"] <= 1024 and b["bitmap_rows"] == (d["units"] + b["bitmap_width"] - 1) // b["bitmap_width"],
          "rows of at most 1024 px", b)

    # Decode it again, with libpng, in a separate program.
    r = subprocess.run([ARGS.pngcheck, png], capture_output=True, timeout=60)
    check(r.returncode == 0, "pngcheck failed", r.stderr.decode())
    pc = json.loads(r.stdout)
    g = pc["geometry"]
    check((pc["width"], pc["height"]) == (b["width"], b["height"]), "PNG size", pc, b)
    check((g["bitmap_width"], g["bitmap_rows"], g["pixels"], g["legend_y"], g["units"], g["upp"], g["unit_size"]) ==
          (b["bitmap_width"], b["bitmap_rows"], b["pixels"], b["legend_y"], d["units"], 1, 8), "PNG geometry", g, b)
    counts = pc["bitmap_colors"]
    expect = {PALETTE[k]: kinds[k]["units"] for k in kinds if kinds[k]["units"] > 0}
    check(counts == expect, "per-colour pixel counts equal per-kind unit counts", counts, expect)
    check(set(pc["padding_colors"]) <= {BACKGROUND}, "padding is background", pc["padding_colors"])
    legend = set(pc["legend_colors"])
    check(set(PALETTE.values()) <= legend and TEXT in legend, "legend has every swatch and text", legend)

    # Text mode: the summary and the legend on stdout.
    png2 = os.path.join(ARGS.workdir, "e2e-heap-text.png")
    out, _, _ = ddmc("heap", "--bitmap", png2, target=vm.target, json_out=False)
    check(f"wrote {png2}" in out, "text: path printed", out)
    for k, c in PALETTE.items():
        if k != "gap":
            check(c in out, f"text legend shows {k} {c}", out)
    check(re.search(r"#3cb44b\s+OBJECT\s+\d+\s+\d+\s+[\d.]+%", out), "text legend row", out)
    # A second dump right after works: HPSG was switched off and on again cleanly.
    doc = run_bitmap(vm, png)
    check(doc["dump"]["covers_footprint"], "second dump", doc["dump"])


def case_bitmap_scaled():
    # 64 MiB = 8 Mi units: over the 4 Mi-pixel cap, so 2 units per pixel; 512 px rows.
    vm = VM("alloc", ["-Xmx64m", "-Xms64m"])
    time.sleep(0.5)
    png = os.path.join(ARGS.workdir, "e2e-heap-scaled.png")
    doc, _, _ = ddmc("heap", "--bitmap", png, "--max-width", "512", target=vm.target)
    d, b = doc["dump"], doc["bitmap"]
    check(d["units"] == 8 << 20 and d["covers_footprint"], "64 MiB dump", d)
    check(b["units_per_pixel"] == 2 and b["bitmap_width"] == 512 and b["pixels"] == 4 << 20, "scaled geometry", b)
    r = subprocess.run([ARGS.pngcheck, png], capture_output=True, timeout=60)
    check(r.returncode == 0, "pngcheck failed", r.stderr.decode())
    pc = json.loads(r.stdout)
    counts = pc["bitmap_colors"]
    check(sum(counts.values()) == b["pixels"] and pc["geometry"]["upp"] == 2, "every bitmap pixel counted", pc)
    check(set(counts) <= set(PALETTE.values()), "only palette colours in the bitmap", counts)
    for k, v in d["kinds"].items():
        if k not in ("free", "gap") and v["units"] > 0:
            # An allocated unit colours its pixel: each present kind shows, on at most units pixels.
            check(0 < counts.get(PALETTE[k], 0) <= v["units"], f"{k} visible when scaled", counts, v)


def case_gc():
    vm = VM("alloc", ["-Xmx4m"])
    time.sleep(0.5)
    doc, _, _ = ddmc("gc", target=vm.target)
    check(doc["requested"] and doc["completed"], "GC completed", doc)
    check(doc["before"]["reason"] == 1 and doc["after"]["reason"] == 2, "HPIF reasons", doc)
    check(isinstance(doc["freed_bytes"], int), "freed bytes", doc)
    out, _, _ = ddmc("gc", target=vm.target, json_out=False)
    check(out.startswith("GC done in "), "text gc", out)


def case_exit():
    vm = VM("idle")
    doc, _, _ = ddmc("exit", 7, target=vm.target)
    check(doc["status"] == 7 and doc["result"] == "closed" and doc["exited"], "EXIT", doc)
    try:
        code = vm.proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        raise Failure("the VM did not exit after EXIT 7")
    check(code == 7, f"VM exit status {code}, expected 7")
    vm2 = VM("idle")
    out, _, _ = ddmc("exit", 0, target=vm2.target, json_out=False)
    check("exited" in out, "text exit", out)
    check(vm2.proc.wait(timeout=10) == 0, "status 0")
    # A process status is 8 bits: minivm turns what would wrap to 0 (success) into 1.
    for status in (256, -2147483648):
        vm3 = VM("idle")
        doc, _, _ = ddmc("exit", status, target=vm3.target)
        check(doc["status"] == status and doc["exited"], f"EXIT {status}", doc)
        code = vm3.proc.wait(timeout=10)
        check(code == 1, f"EXIT {status}: VM exit status {code}, expected 1")
    _, err, _ = ddmc("exit", "seven", json_out=False, rc=64)


def case_send():
    vm = VM("idle")
    doc, _, _ = ddmc("send", "HELO", "00000001", target=vm.target)
    r = doc["reply"]
    check(doc["request"] == {"type": "HELO", "length": 4, "hex": "00000001"}, "request echo", doc["request"])
    check(r["type"] == "HELO" and r["hex"][:16] == "00000001%08x" % vm.pid, "HELO reply: version, pid", r)
    check(doc["empty"] is False and doc["jdwp_error"] == 0, "not empty", doc)
    doc, _, _ = ddmc("send", "ZZZZ", target=vm.target)
    check(doc["reply"] is None and doc["empty"] is True, "unknown chunk: empty reply", doc)
    out, _, _ = ddmc("send", "ZZZZ", target=vm.target, json_out=False)
    check(out.strip() == "empty reply", "text empty reply", out)
    out, _, _ = ddmc("send", "THST", target=vm.target, json_out=False)
    check(out.startswith("reply THST, ") and "00000000 " in out, "text hex dump", out)
    doc, _, _ = ddmc("send", "STKL", "0001 869f", target=vm.target, rc=5)
    check(doc["reply"]["type"] == "FAIL" and "No such thread" in doc["reply"]["fail"]["message"], "FAIL", doc)
    ddmc("send", "HELO", "0g", target=vm.target, rc=64, json_out=False)
    ddmc("send", "HEL", target=vm.target, rc=64, json_out=False)
    ddmc("send", "HELO", "000", target=vm.target, rc=64, json_out=False)


def case_zlib():
    vm = VM("alloc", ["-Xmx4m", "-Xms4m"])
    time.sleep(0.5)
    png = os.path.join(ARGS.workdir, "e2e-zlib.png")
    z = run_bitmap(vm, png)["wire"]
    check(z["zlib"]["opted_in"] and z["zlib"]["chunks"] >= 1, "the segment dump arrives compressed", z)
    check(z["zlib"]["raw_bytes"] > z["zlib"]["wire_bytes"] > 0, "compression saves bytes", z)
    check(z["bytes_in"] < z["zlib"]["raw_bytes"] + 4096, "wire bytes reflect compression", z)
    n = run_bitmap(vm, png, "--no-zlib")["wire"]
    check(not n["zlib"]["opted_in"] and n["zlib"]["chunks"] == 0, "--no-zlib: nothing compressed", n)
    _, err, _ = ddmc("-v", "heap", "--bitmap", png, target=vm.target, json_out=False)
    check(re.search(r"ddmc: wire: \d+ bytes in .* zlib: \d+ chunks, \d+ bytes inflated from \d+", err),
          "-v wire line", err)


def case_errors():
    # Nothing listening.
    port = free_port()
    doc, err, _ = ddmc("info", target=f"127.0.0.1:{port}", rc=2)
    check(err.strip() == f"ddmc: cannot connect to 127.0.0.1:{port}: connection refused", "refused message", err)
    check(doc["error"]["exit"] == 2 and "connection refused" in doc["error"]["message"], "refused JSON", doc)
    ddmc("threads", target=f"127.0.0.1:{port}", rc=2, json_out=False)

    # An HTTP server: it never answers the handshake (it waits for a request line).
    hport = free_port()
    http = subprocess.Popen([sys.executable, "-m", "http.server", "--bind", "127.0.0.1", str(hport)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=ARGS.workdir)
    CHILDREN.append(http)

    def http_up():
        try:
            socket.create_connection(("127.0.0.1", hport), timeout=0.5).close()
            return True
        except OSError:
            return False
    check(wait_until(http_up, 15), "http.server did not start")
    doc, err, t = ddmc("-t", "1500", "info", target=f"127.0.0.1:{hport}", rc=3)
    check("not a JDWP VM" in err and t < 10, "HTTP server: not JDWP", err, t)
    http.kill()

    # A listener that answers garbage at once.
    s, gport = listen()

    def garbage(c):
        try:
            c.recv(100)
            c.sendall(b"HTTP/1.0 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
            time.sleep(0.5)
        finally:
            c.close()
    serve(s, garbage)
    doc, err, _ = ddmc("info", target=f"127.0.0.1:{gport}", rc=3)
    check("is not a JDWP VM" in doc["error"]["message"], "garbage: not JDWP", doc)

    # Handshake, then silence: HELO times out.
    s, sport = listen()

    def silent(c):
        try:
            c.sendall(recv_exact(c, 14))
            time.sleep(30)
        except (OSError, EOFError):
            pass
    serve(s, silent)
    doc, err, t = ddmc("-t", "1500", "info", target=f"127.0.0.1:{sport}", rc=4)
    check("did not answer HELO within 1500 ms" in err and 1.4 < t < 8, "silent VM: timeout exit 4", err, t)

    # A JDWP VM that is not DDM-aware (JDWP error on everything).
    s, nport = listen()
    serve(s, fake_vm({}, jdwp_error=99))
    doc, err, _ = ddmc("info", target=f"127.0.0.1:{nport}", rc=3)
    check("not DDM-aware" in err, "not DDM-aware", err)

    # Closed right after accept.
    s, cport = listen()
    serve(s, lambda c: c.close())
    ddmc("info", target=f"127.0.0.1:{cport}", rc=3, json_out=False)


def case_usage():
    r = subprocess.run([ARGS.ddmc, "--help"], capture_output=True, timeout=10)
    out = r.stdout.decode()
    check(r.returncode == 0 and "Exit codes:" in out, "--help", out)
    for code in ("0", "1", "2", "3", "4", "5", "64"):
        check(re.search(rf"^\s+{code}\s+\S", out, re.M), f"--help documents exit code {code}", out)
    for cmd in ("info", "threads", "stack", "heap", "gc", "exit", "send", "ui"):
        check(re.search(rf"^\s+{cmd}\b", out, re.M), f"--help documents {cmd}", out)
    r = subprocess.run([ARGS.ddmc, "--json", "stack", "x"], capture_output=True, timeout=10)
    doc = json.loads(r.stdout)
    check(r.returncode == 64 and doc["ok"] is False and doc["error"]["exit"] == 64, "--json usage error", doc)
    bad = [[], ["bogus"], ["-c", "nohostport:", "info"], ["-c", "h:70000", "info"], ["stack"], ["stack", "x"],
           ["threads", "--watch"], ["threads", "--watch", "-1"], ["heap", "--bitmap"], ["info", "extra"],
           ["--frobnicate", "info"], ["-t", "0", "info"], ["exit"], ["send"], ["send", "TOOLONG"],
           ["ui", "--port"], ["ui", "--port", "70000"], ["ui", "--duration", "x"], ["ui", "--web"], ["ui", "extra"]]
    for b in bad:
        r = subprocess.run([ARGS.ddmc, *b], capture_output=True, timeout=10)
        check(r.returncode == 64, f"ddmc {' '.join(b)}: exit {r.returncode}, expected 64", r.stderr.decode())
        check(r.stderr.decode().startswith(("ddmc: ", "usage: ")), "usage message on stderr", r.stderr.decode())


def case_json_escaping():
    tricky_ident = 'quote" back\\slash\nnewline\ttab\x01ctl \u00e9 \u2603 \U0001F600 \u2028'
    app = "app/\u0000nul and \ud800 lone surrogate"
    abi = "</script>"

    def helo(_payload):
        p = struct.pack(">II", 1, 4242)
        ident16 = tricky_ident.encode("utf-16-be")
        app16 = app.encode("utf-16-be", "surrogatepass")
        p += struct.pack(">II", len(ident16) // 2, len(app16) // 2) + ident16 + app16
        p += struct.pack(">i", 10) + utf16(abi) + utf16("CheckJNI=true") + b"\x01" + utf16("pkg.\u00fc")
        return "HELO", p

    def feat(_payload):
        names = ["f\"1", "f\\2", ""]
        return "FEAT", struct.pack(">I", len(names)) + b"".join(utf16(n) for n in names)

    s, port = listen()
    serve(s, fake_vm({"HELO": helo, "FEAT": feat}))
    doc, _, _ = ddmc("info", target=f"127.0.0.1:{port}")
    v = doc["vm"]
    check(v["pid"] == 4242 and v["vm_ident"] == tricky_ident, "escaped ident round-trips", repr(v["vm_ident"]))
    check(v["app_name"] == "app/\ufffdnul and \ufffd lone surrogate", "NUL and lone surrogate -> U+FFFD",
          repr(v["app_name"]))
    check(v["abi"] == abi and v["user_id"] == 10 and v["native_debuggable"] is True and v["package"] == "pkg.\u00fc",
          "optional HELO fields", v)
    check(v["features"] == ["f\"1", "f\\2", ""], "features", v["features"])
    # The raw text must not contain a bare control character or U+2028.
    r = subprocess.run([ARGS.ddmc, "-c", f"127.0.0.1:{port}", "--json", "info"], capture_output=True, timeout=30)
    raw = r.stdout.decode("utf-8")
    check(not re.search(r"[\x00-\x08\x0b-\x1f\u2028\u2029]", raw), "no raw control characters in JSON", repr(raw))
    # Text mode prints the same strings.
    out, _, _ = ddmc("info", target=f"127.0.0.1:{port}", json_out=False)
    check("\u2603" in out and "pid                4242" in out, "text info", out)


# A VM that names itself, a thread and a source file with terminal control sequences: clear the
# screen, retitle the window (OSC 0 ... BEL), a newline to break the table, the 8-bit CSI (U+009B).
HOSTILE = "\x1b[2J\x1b]0;x\x07evil\nname\u009b"
HOSTILE_MVM = r"\x1b[2J\x1b]0;x\u0007evil\nname\u009b"       # the same in .mvm string escapes
HOSTILE_SHOWN = r"\x1b[2J\x1b]0;x\x07evil\nname\u009b"     # what ddmc's text output must print
# Anything a terminal acts on: C0 controls but the newline that ends ddmc's own lines, DEL, C1.
RAW_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f]")

HOSTILE_PROGRAM = f"""
.source "File-{HOSTILE_MVM}.java"
.class Hostile
.method main
.registers 3
    .line 10
    const-string v0, "app-{HOSTILE_MVM}"
    set-app-name v0
    const-string v1, "thread-{HOSTILE_MVM}"
    start-daemon v2, v1, Hostile.sleeper
    const v0, 1000
:idle
    sleep v0
    goto :idle
.end method
.method sleeper
.registers 1
    const v0, 1000
:again
    .line 20
    sleep v0
    goto :again
.end method
"""


def check_no_raw_control(text, what):
    m = RAW_CONTROL.search(text)
    check(m is None, f"{what}: a raw control character reaches the terminal", repr(text[:600]))


def run_on_pty(cmd, timeout):
    """Runs cmd with stdout on a pseudo-terminal until it exits; returns (exit code, bytes)."""
    master, slave = pty.openpty()
    p = subprocess.Popen(cmd, stdout=slave, stderr=subprocess.PIPE)
    CHILDREN.append(p)
    os.close(slave)
    buf = b""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        r, _, _ = select.select([master], [], [], 0.1)
        if r:
            try:
                chunk = os.read(master, 65536)
            except OSError:      # EIO: the child closed its side
                break
            if not chunk:
                break
            buf += chunk
        elif p.poll() is not None:
            break
    os.close(master)
    return p.wait(timeout=10), buf


def case_hostile_names():
    path = os.path.join(ARGS.workdir, "hostile.mvm")
    with open(path, "w") as f:
        f.write(HOSTILE_PROGRAM)
    vm = VM(path)
    app = "app-" + HOSTILE

    def named():  # main names the app as it starts, maybe after a first session
        v = ddmc("info", target=vm.target)[0]["vm"]
        return v if v["app_name"] == app else None
    check(wait_until(named, 10), "JSON: the app name exactly as the VM set it", named())
    out, err, _ = ddmc("info", target=vm.target, json_out=False)
    check_no_raw_control(out + err, "info")
    check(re.search(r"^app name\s+" + re.escape("app-" + HOSTILE_SHOWN) + "$", out, re.M), "text: escaped app name",
          out)

    doc, _, _ = ddmc("threads", target=vm.target)
    names = threads_by_name(doc["threads"])
    check("thread-" + HOSTILE in names, "JSON: the thread name exactly as the VM set it", sorted(names))
    tid = names["thread-" + HOSTILE]["id"]
    out, err, _ = ddmc("threads", target=vm.target, json_out=False)
    check_no_raw_control(out + err, "threads")
    rows = out.rstrip("\n").split("\n")
    check(len(rows) == 1 + len(doc["threads"]), "text: one line per thread (no name breaks a row)", out)
    check(any(r.endswith("  thread-" + HOSTILE_SHOWN) for r in rows), "text: escaped thread name", out)

    # --watch on a terminal: ddmc's own clear-and-home is the only control sequence.
    rc, raw = run_on_pty([ARGS.ddmc, "-c", vm.target, "threads", "--watch", "1"], 30)
    text = raw.decode("utf-8", "replace").replace("\x1b[H\x1b[2J", "").replace("\r\n", "\n")
    check(rc == 0 and ("thread-" + HOSTILE_SHOWN) in text, f"--watch on a tty: exit {rc}", repr(text[:600]))
    check_no_raw_control(text, "threads --watch on a tty")
    check(("app-" + HOSTILE_SHOWN) in text, "--watch title: escaped app name", repr(text[:600]))

    doc, _, _ = ddmc("stack", tid, target=vm.target)
    check(doc["frames"] and doc["frames"][0]["file"] == f"File-{HOSTILE}.java", "JSON: the file name exactly",
          doc["frames"])
    out, err, _ = ddmc("-vv", "stack", tid, target=vm.target, json_out=False)
    check_no_raw_control(out + err, "stack")
    check(f"at Hostile.sleeper(File-{HOSTILE_SHOWN}.java:20)" in out, "text: escaped file name", out)

    # What only a scripted peer sends: VM ident, package and feature names, and a FAIL message.
    ident, pkg, feature, msg = "vm-" + HOSTILE, "pkg-" + HOSTILE, "feat-" + HOSTILE, "fail-" + HOSTILE

    def helo(_payload):
        p = struct.pack(">II", 1, 4242) + struct.pack(">II", len(ident), len("app")) + ident.encode("utf-16-be")
        p += "app".encode("utf-16-be") + struct.pack(">i", 0) + utf16("abi") + utf16("flags") + b"\x00" + utf16(pkg)
        return "HELO", p

    def feat(_payload):
        return "FEAT", struct.pack(">I", 1) + utf16(feature)

    def fail(_payload):
        return "FAIL", struct.pack(">i", 7) + utf16(msg)

    s, port = listen()
    serve(s, fake_vm({"HELO": helo, "FEAT": feat, "STKL": fail, "ZZZZ": fail}))
    peer = f"127.0.0.1:{port}"
    doc, _, _ = ddmc("info", target=peer)
    check((doc["vm"]["vm_ident"], doc["vm"]["package"], doc["vm"]["features"]) == (ident, pkg, [feature]),
          "JSON: HELO and FEAT strings exactly", doc["vm"])
    out, err, _ = ddmc("-vv", "info", target=peer, json_out=False)
    check_no_raw_control(out + err, "info from a scripted peer")
    for label, value in (("vm", "vm-"), ("package", "pkg-"), ("features", "feat-")):
        check(re.search(rf"^{label}\s+" + re.escape(value + HOSTILE_SHOWN) + "$", out, re.M), f"text: escaped {label}",
              out)
    doc, err, _ = ddmc("stack", 1, target=peer, rc=5)
    check(doc["error"]["message"] == f"the VM refused the stack of thread 1: {msg} (FAIL code 7)",
          "JSON: the FAIL message exactly", doc["error"])
    check_no_raw_control(err, "FAIL message on stderr (with --json)")
    _, err, _ = ddmc("stack", 1, target=peer, rc=5, json_out=False)
    check(err == f"ddmc: the VM refused the stack of thread 1: fail-{HOSTILE_SHOWN} (FAIL code 7)\n",
          "text: escaped FAIL message on stderr", repr(err))
    out, err, _ = ddmc("send", "ZZZZ", target=peer, rc=5, json_out=False)
    check_no_raw_control(out + err, "send")
    check(f"FAIL code 7: fail-{HOSTILE_SHOWN}\n" in out, "send: escaped FAIL message", out)


# ---- profiling: ddmc trace / ddmc alloc against minivm's trace.mvm, read back by dmtracedump -----

# What one round of trace.mvm calls (examples/minivm/programs/trace.mvm): method -> (entries, unrolls)
ROUND = {"Trace.fib": (15, 0), "Trace.mid": (2, 0), "Trace.leaf": (8, 0), "Trace.guarded": (1, 0),
         "Trace.thrower": (1, 1)}


def dmtracedump(*args):
    if not ARGS.dmtracedump or not os.access(ARGS.dmtracedump, os.X_OK):
        raise Failure(f"dmtracedump not found ({ARGS.dmtracedump}): install the Debian package 'dmtracedump' "
                      "(scripts/setup.sh does); this test fails without it, it never skips")
    r = subprocess.run([ARGS.dmtracedump, *args], capture_output=True, timeout=120)
    return r.returncode, r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")


def listing(path):
    """dmtracedump -o: [(thread, action, usecs, depth, 'Class.method')] in file order."""
    rc, out, err = dmtracedump("-o", path)
    check(rc == 0 and "VERSION: 3" in out, "dmtracedump -o reads the trace", err[-500:], out[:500])
    check("ERROR" not in err and "does not match" not in err and "WARNING" not in err, "dmtracedump -o is quiet",
          err[-1000:])
    recs = []
    for line in out.splitlines():
        m = re.match(r"^\s*(\d+) (ent|xit|unr)\s+(\d+) (\.*)(\S+) ", line)
        if m:
            recs.append((int(m.group(1)), m.group(2), int(m.group(3)), len(m.group(4)), m.group(5)))
    return recs


def whole_rounds(recs):
    """Per complete Trace.round in the main thread: {method: [entries, unrolls]} of what it called."""
    rounds, cur, depth = [], None, None
    for tid, act, _, d, name in recs:
        if tid != 1:
            continue
        if name == "Trace.round" and act == "ent":
            cur, depth = {}, d
        elif cur is not None and name == "Trace.round" and act == "xit" and d == depth:
            rounds.append(cur)
            cur = None
        elif cur is not None:
            c = cur.setdefault(name, [0, 0])
            if act == "ent":
                c[0] += 1
            elif act == "unr":
                c[1] += 1
    return rounds


def case_trace():
    vm = VM("trace")
    tr, js = os.path.join(ARGS.workdir, "trace.trace"), os.path.join(ARGS.workdir, "trace.json")
    doc, err, _ = ddmc("trace", "--duration", "1.5", "-o", tr, "--chrome", js, target=vm.target, timeout=120)
    t = doc["trace"]
    check(t["mode"] == "methods" and t["version"] == 3 and t["clock"] == "dual" and not t["overflow"], "trace", t)
    check(os.path.getsize(tr) == t["bytes"] and t["records"] > 100, "the file as received", t)
    # Every complete round holds exactly what trace.mvm calls, exceptions included (UNROLL).
    recs = listing(tr)
    check(len(recs) == t["records"], "dmtracedump lists every record", len(recs), t["records"])
    rounds = whole_rounds(recs)
    check(len(rounds) >= 10, "at least 10 whole rounds in 1.5 s (one every 20 ms)", len(rounds))
    for r in rounds:
        got = {k: tuple(v) for k, v in r.items()}
        check(got == ROUND, "one round's calls", got, ROUND)
    # The profile: the call graph with its counts.
    rc, out, err = dmtracedump(tr)
    check(rc == 0 and "Total cycles" in out, "dmtracedump profile", err[-500:])
    calls = {}
    for line in out.splitlines():
        m = re.match(r"^\[\d+\]\s+[\d.]+%\s+(\d+)\+(\d+)\s+\d+ (\S+) ", line)
        if m:
            calls[m.group(3)] = (int(m.group(1)), int(m.group(2)))
    log(f"dmtracedump call counts: {calls} over {len(rounds)} whole rounds")
    n = len(rounds)
    check(calls.get("Trace.round", (0, 0))[0] >= n, "round calls", calls)
    check(calls.get("Trace.mid", (0, 0))[0] >= 2 * n and calls.get("Trace.leaf", (0, 0))[0] >= 8 * n, "mid/leaf", calls)
    check(sum(calls.get("Trace.fib", (0, 0))) >= 15 * n and calls["Trace.fib"][1] > 0, "fib recursion", calls)
    check(calls.get("Trace.thrower", (0, 0))[0] >= n and calls.get("Trace.guarded", (0, 0))[0] >= n, "throw", calls)
    # The Trace Event JSON: balanced per thread, the same calls.
    with open(js) as f:
        ev = json.load(f)["traceEvents"]
    stacks, fib_b = {}, 0
    for e in ev:
        if e["ph"] == "B":
            stacks.setdefault(e["tid"], []).append(e["name"])
            fib_b += e["name"] == "Trace.fib"
        elif e["ph"] == "E":
            check(stacks.get(e["tid"]), "an E event closes a B", e)
            stacks[e["tid"]].pop()
    check(all(not v for v in stacks.values()), "every B closed", stacks)
    check(fib_b == sum(1 for r in recs if r[4] == "Trace.fib" and r[1] == "ent"), "chrome fib events", fib_b)
    names = {e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
    check("main" in names, "thread names", names)
    out, err, _ = ddmc("trace", "--duration", "0.5", "-o", tr, target=vm.target, json_out=False, timeout=120)
    check(re.search(r"^trace\s+\S+: \d+ bytes, \d+ records", out, re.M), "text summary", out)


def spin_vm(iterations="2000000000"):
    """bench/programs/spin.mvm: a loop with a static call per iteration (two events each)."""
    return VM(os.path.join(os.path.dirname(ARGS.programs), "..", "..", "bench", "programs", "spin.mvm"),
              prog_args=[iterations])


def case_trace_overflow():
    vm = spin_vm()
    time.sleep(0.5)  # past spin's start-up sleep: the loop runs
    tr = os.path.join(ARGS.workdir, "overflow.trace")
    doc, err, _ = ddmc("trace", "--duration", "3", "--buffer", "4", "-o", tr, target=vm.target, timeout=120)
    t = doc["trace"]
    cap = ((4 << 20) - 32) // 14
    check(t["overflow"] and 0.9 * cap <= t["records"] <= cap, "a 4 MiB buffer fills: recording stops there", t, cap)
    check("receiving the trace:" in err, "a progress line while 4 MiB arrive", err)
    recs = listing(tr)  # still a valid file
    check(len(recs) == t["records"] and any(r[4] == "Spin.mix" for r in recs), "the records", recs[:10])


def case_sample():
    vm = spin_vm()
    tr = os.path.join(ARGS.workdir, "sample.trace")
    doc, _, _ = ddmc("trace", "--sample", "1000", "--duration", "1", "-o", tr, target=vm.target, timeout=120)
    t = doc["trace"]
    check(t["mode"] == "sampling" and t["interval_us"] == 1000 and t["records"] > 0, "sampling trace", t)
    recs = listing(tr)
    check(any(r[4].startswith("Spin.") for r in recs), "the sampled stack names Spin's methods", recs[:20])


def case_alloc():
    vm = VM("trace")
    doc, _, _ = ddmc("alloc", "--duration", "1", "--top", "10", target=vm.target, timeout=60)
    a = doc["alloc"]
    check(a["tracking"] == "off" and a["records"] >= 60, "records in 1 s (6 a round)", a)
    sites = {(s["class"], s["site"]): s for s in a["sites"]}
    want = [("Node", "Trace.round(Trace.java:23)"), ("int[]", "Trace.round(Trace.java:24)"),
            ("byte[]", "Trace.round(Trace.java:25)"), ("java.lang.String", "Trace.round(Trace.java:25)"),
            ("java.lang.RuntimeException", "Trace.thrower(Trace.java:70)"),
            ("long[]", "Trace.thrower(Trace.java:70)")]
    for k in want:
        check(k in sites, "allocation site", k, sorted(sites))
    counts = {sites[k]["count"] for k in want}
    check(max(counts) - min(counts) <= 1, "each site once a round", counts)
    check(sites[("int[]", "Trace.round(Trace.java:24)")]["bytes"] == 80 * sites[("int[]", "Trace.round(Trace.java:24)")]["count"],
          "int[16] is 80 bytes in minivm", sites[("int[]", "Trace.round(Trace.java:24)")])
    # start / show / stop across connections: the VM keeps tracking between them.
    doc, _, _ = ddmc("alloc", "start", target=vm.target)
    check(doc["alloc"]["tracking"] == "on", "start", doc)
    time.sleep(0.3)
    doc, _, _ = ddmc("alloc", "show", target=vm.target)
    check(doc["alloc"]["records"] > 0 and doc["alloc"]["tracking"] == "unchanged", "show", doc["alloc"])
    out, _, _ = ddmc("alloc", "stop", target=vm.target, json_out=False)
    check(re.search(r"^allocations\s+\d+ records", out, re.M) and "Trace.round(Trace.java:23)" in out, "stop", out)
    doc, _, _ = ddmc("alloc", "show", target=vm.target)
    check(doc["alloc"]["records"] == 0, "tracking off: an empty report", doc["alloc"])


def case_prof_usage():
    for args, what in ((["trace", "-o", "x.trace"], "needs --duration"),
                       (["trace", "--duration", "1"], "needs -o"),
                       (["trace", "--duration", "x", "-o", "x"], "bad duration"),
                       (["trace", "--sample", "0", "--duration", "1", "-o", "x"], "sample 0"),
                       (["trace", "--buffer", "0", "--duration", "1", "-o", "x"], "buffer 0"),
                       (["alloc", "sideways"], "bad action"),
                       (["alloc", "start", "--top", "3"], "start takes no --top"),
                       (["alloc", "--top", "0"], "top 0")):
        r = subprocess.run([ARGS.ddmc, "-c", "127.0.0.1:1", *args], capture_output=True, timeout=30)
        check(r.returncode == 64, f"usage error: {what}", r.returncode, r.stderr)


CASES = {name[5:]: fn for name, fn in globals().items() if name.startswith("case_")}
NEEDS_VM = {"info", "zygote", "threads", "watch_sigint", "stack", "heap", "bitmap", "bitmap_scaled", "gc", "exit",
            "send", "zlib", "hostile_names", "trace", "trace_overflow", "sample", "alloc"}


def main():
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ddmc", required=True)
    ap.add_argument("--minivm")
    ap.add_argument("--programs")
    ap.add_argument("--pngcheck")
    ap.add_argument("--dmtracedump")
    ap.add_argument("--workdir", default=".")
    ap.add_argument("case", choices=sorted(CASES))
    ARGS = ap.parse_args()
    os.makedirs(ARGS.workdir, exist_ok=True)
    if ARGS.case in NEEDS_VM and not (ARGS.minivm and ARGS.programs):
        print(f"e2e {ARGS.case}: needs --minivm and --programs", file=sys.stderr)
        return 2
    signal.signal(signal.SIGTERM, lambda *_: (cleanup(), os._exit(1)))
    t0 = time.monotonic()
    try:
        CASES[ARGS.case]()
    except Failure as e:
        print(f"FAIL {ARGS.case}: {e}", file=sys.stderr)
        return 1
    except subprocess.TimeoutExpired as e:
        print(f"FAIL {ARGS.case}: timed out: {e}", file=sys.stderr)
        return 1
    finally:
        cleanup()
    log(f"PASS {ARGS.case} ({time.monotonic() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
