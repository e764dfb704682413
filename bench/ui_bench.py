#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`ddmc ui`'s memory against a busy VM, over time (not a timed test: bench/run.sh's ui section).

    ui_bench.py --ddmc PATH/ddmc --minivm PATH/minivm --program tests/ui/Ui.mvm [--secs S]

minivm runs Ui.mvm (a Worker thread started and ended every two seconds, allocations, a
collection every 2 s: the thread table, the timeline and the heap history all move). `ddmc ui`
watches it with two pages open: two live streams (/api/events) read continuously, and every 2 s
a page asks for a stack, every 10 s for the allocation report (the tracker on). ddmc's RSS
(/proc/PID/status VmRSS) is read every second. Printed as bench/run.sh ROW lines: the RSS after
a 20 s warm-up (the histories still filling), at the end, and the growth from the moment the
histories are full (the heap's ten minutes are full only in a 10-minute run: BENCH_UI_SECS=600)
to the end; the target is flat: at most 10 % or 2 MiB. Python standard library only."""
import argparse
import http.client
import os
import re
import signal
import subprocess
import sys
import threading
import time


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        m = re.search(r"^VmRSS:\s+(\d+) kB", f.read(), re.M)
    return int(m.group(1)) if m else 0


def start(cmd, pattern, limit=20):
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    end = time.time() + limit
    while time.time() < end:
        line = p.stdout.readline()
        if not line:
            break
        m = re.search(pattern, line)
        if m:
            threading.Thread(target=lambda: [None for _ in p.stdout], daemon=True).start()
            return p, m
    p.kill()
    sys.exit(f"ui_bench: {cmd[0]} did not print {pattern}")


def stream(port, token, stop, counts, k):
    while not stop.is_set():
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            c.request("GET", f"/api/events?token={token}")
            r = c.getresponse()
            while not stop.is_set():
                line = r.readline()
                if not line:
                    break
                if line.startswith(b"event: state"):
                    counts[k] += 1
            c.close()
        except OSError:
            time.sleep(0.5)


def post(port, token, op, arg=None):
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    q = f"/api/op/{op}?token={token}" + (f"&arg={arg}" if arg is not None else "")
    c.request("POST", q)
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, r.getheader("X-Ddmc-Error"), body


def row(group, figure, value, ref="-", refval="-", ratio="-", target="-", status="info"):
    print("\t".join(["ROW", group, figure, value, ref, refval, ratio, target, status]), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ddmc", required=True)
    ap.add_argument("--minivm", required=True)
    ap.add_argument("--program", required=True)
    ap.add_argument("--secs", type=float, default=float(os.environ.get("BENCH_UI_SECS", "60")))
    a = ap.parse_args()
    vm, m = start([a.minivm, "-agentlib:jdwp=transport=dt_socket,address=127.0.0.1:0,server=y,suspend=n", a.program],
                  r"JDWP listening on [^:]+:(\d+)")
    ui, u = start([a.ddmc, "-c", f"127.0.0.1:{m.group(1)}", "ui"], r"http://127\.0\.0\.1:(\d+)/\?token=([0-9a-f]+)")
    port, token = int(u.group(1)), u.group(2)
    stop, counts = threading.Event(), [0, 0]
    readers = [threading.Thread(target=stream, args=(port, token, stop, counts, k), daemon=True) for k in range(2)]
    for t in readers:
        t.start()
    samples, errors, t0 = [], 0, time.time()
    post(port, token, "alloc-start")
    try:
        while time.time() - t0 < a.secs:
            el = time.time() - t0
            samples.append((el, rss_kib(ui.pid)))
            if int(el) % 2 == 0:
                st, err, _ = post(port, token, "stack", 1)
                errors += st != 200 or err is not None
            if int(el) % 10 == 0:
                st, err, _ = post(port, token, "alloc")
                errors += st != 200 or err is not None
            time.sleep(1.0 - (time.time() - t0) % 1.0)
    finally:
        stop.set()
        ui.send_signal(signal.SIGTERM)
        try:
            ui.wait(10)
        except subprocess.TimeoutExpired:
            ui.kill()
        vm.kill()
    # The histories fill in: the timeline in 180 s, the heap's samples (one a second, and one per
    # collection) within 600 s. Growth is measured from the later of 20 s and half the run.
    base_t = max(20.0, a.secs / 2)
    base = next((r for t, r in samples if t >= base_t), samples[0][1])
    warm = next((r for t, r in samples if t >= 20.0), samples[0][1])
    end, peak = samples[-1][1], max(r for _, r in samples)
    grow = end - base
    ok = grow <= max(base * 0.10, 2048)
    g = f"ddmc ui, busy minivm, {a.secs:.0f} s"
    row(g, "RSS after 20 s", f"{warm / 1024:.1f} MiB")
    row(g, "RSS at the end (peak)", f"{end / 1024:.1f} MiB ({peak / 1024:.1f})")
    row(g, f"RSS growth from {base_t:.0f} s to the end", f"{grow / 1024:+.2f} MiB", f"RSS at {base_t:.0f} s",
        f"{base / 1024:.1f} MiB", f"{end / base:.3f}x", "<= +10% or +2 MiB", "met" if ok else "MISSED")
    row(g, "live stream events per page per second", f"{sum(counts) / 2 / a.secs:.2f}/s",
        status="info" if errors == 0 else "MISSED")
    if errors:
        print(f"NOTE\tui: {errors} page requests failed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
