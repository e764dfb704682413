#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The heaphisto JVM TI agent (examples/agents/heaphisto.c, built against the JDK's jvmti.h) on
minivm (examples/minivm/programs/histo.mvm) and on HotSpot (tests/jvmti/Histo.java): the same
program, so the same counts: 300 HistoApple and 120 HistoBanana live at VMDeath, the 500
HistoCherry freed by the agent's ForceGarbageCollection (ObjectFree of tagged objects), and
GarbageCollectionStart / Finish in pairs. On minivm also the bytes (its block sizes are known),
a run on a small heap (collections while the program runs: the tags are swept at each) and bad
agent options.

    run_heaphisto.py MINIVM AGENT_DIR PROGRAMS_DIR JAVA HISTO_JAVA"""
import os
import re
import subprocess
import sys

MINIVM, AGENTS, PROGRAMS, JAVA, HISTO_JAVA = sys.argv[1:6]
failures = 0


def run(args, timeout=120):
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, text=True)
    return p.returncode, p.stdout, p.stderr


def check(name, cond, detail=""):
    global failures
    print(("ok   " if cond else "FAIL ") + name + ("" if cond else ": " + detail))
    if not cond:
        failures += 1


def histogram(out):
    rows = {}
    for m in re.finditer(r"^heaphisto: (\d+) (\d+) (\S+)$", out, re.M):
        rows[m.group(3)] = (int(m.group(1)), int(m.group(2)))
    return rows


def common(vm, rc, out, err):
    rows = histogram(out)
    check(f"{vm}: exits 0 after the program", rc == 0 and "histo ready" in out, f"rc={rc} err={err!r}")
    check(f"{vm}: no JVM TI call failed", "failed" not in err, err)
    check(f"{vm}: 300 HistoApple", rows.get("HistoApple", (0, 0))[0] == 300, repr(rows))
    check(f"{vm}: 120 HistoBanana", rows.get("HistoBanana", (0, 0))[0] == 120, repr(rows))
    check(f"{vm}: no HistoCherry left after ForceGarbageCollection", "HistoCherry" not in rows, repr(rows))
    m = re.search(r"^heaphisto: gc start (\d+) finish (\d+)$", out, re.M)
    check(f"{vm}: GC start and finish in pairs, at least one", m is not None and m.group(1) == m.group(2)
          and int(m.group(1)) >= 1, out)
    order = [k for k in rows]
    check(f"{vm}: most instances first", order[:2] == ["HistoApple", "HistoBanana"], repr(order))
    return rows


agent = os.path.join(AGENTS, "libheaphisto.so")
histo = os.path.join(PROGRAMS, "histo.mvm")

rc, out, err = run([MINIVM, f"-agentpath:{agent}=classes=Histo", histo])
rows = common("minivm", rc, out, err)
# minivm's blocks: a 16-byte header and 8 bytes per field, in 8-byte units.
check("minivm: bytes per class", rows.get("HistoApple", (0, 0))[1] == 300 * 24 and
      rows.get("HistoBanana", (0, 0))[1] == 120 * 24, repr(rows))
check("minivm: ObjectFree for the 500 HistoCherry", "heaphisto: freed 500 HistoCherry" in out, out)

# A small heap: collections while the program runs, tags swept at each; counts unchanged.
rc, out, err = run([MINIVM, "-Xmx256k", f"-agentpath:{agent}=classes=Histo", histo])
rows = common("minivm -Xmx256k", rc, out, err)

rc, out, err = run([JAVA, "-Xshare:off", f"-agentpath:{agent}=classes=Histo", HISTO_JAVA], timeout=180)
common("HotSpot", rc, out, err)

rc, out, err = run([MINIVM, f"-agentpath:{agent}=bogus", histo])
check("bad options refused", rc == 1 and "Agent_OnLoad returned 2" in err, f"rc={rc} err={err!r}")

print("run_heaphisto: %s" % ("all passed" if failures == 0 else f"{failures} failed"))
sys.exit(1 if failures else 0)
