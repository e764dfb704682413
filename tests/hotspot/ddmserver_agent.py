#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""An app's own chunk handlers on HotSpot, through Android's DDM API (org.apache.harmony.dalvik.ddmc
from libddmcjdwp-ddm.jar, which libddmcjdwp.so appends to the system class loader's search: the
app's class path has only its own classes, and HotSpot prints no class-sharing warning). tests/hotspot/DdmApp.java registers ECHO, BOOM and PUSH; `ddmc send`
must get ECHO's answer, a FAIL with the exception's message from BOOM and the next ECHO served
after it, the unsolicited PSHD an app thread sends with DdmServer.sendChunk after PUSH, the empty
reply for a type nobody registered, a FAIL for a returned Chunk whose bounds lie past its array,
and connected() / disconnected() once per ddmc session (for each of the handler's four
registrations).

    ddmserver_agent.py AGENT.so DDM.jar DDMC_BINARY WORKDIR
    ddmserver_agent.py --minivm MINIVM PROGRAM.mvm DDMC_BINARY WORKDIR

With --minivm the same checks run against examples/minivm/programs/ddmserver.mvm, whose handlers
are the ddm-* instructions (one registration per session event, its FAIL names the minivm class).

Exits 0 on success, 1 with the outputs."""
import json
import os
import re
import shutil
import subprocess
import sys
import time

from agent_jvm import launch

HERE = os.path.dirname(os.path.abspath(__file__))


def check(cond, what, *outs):
    if not cond:
        print("FAIL: " + what)
        for o in outs:
            print(o)
        sys.exit(1)


def start_minivm(minivm, program, out_path):
    """minivm running PROGRAM on dt_socket; its process and port once it printed DDMSERVER ready."""
    with open(out_path, "wb") as out:
        vm = subprocess.Popen([minivm, "-agentlib:jdwp=transport=dt_socket,server=y,suspend=n,address=127.0.0.1:0",
                               program], stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and vm.poll() is None:
        text = open(out_path, errors="replace").read()
        m = re.search(r"JDWP listening on 127\.0\.0\.1:(\d+)", text)
        if m and "DDMSERVER ready" in text:
            return vm, m.group(1)
        time.sleep(0.05)
    return vm, None


def main():
    minivm = sys.argv[1] == "--minivm"
    if minivm:
        mvm, program, ddmc, work = sys.argv[2:6]
        out_path = os.path.join(work, "ddmserver-minivm.out")
        vm, port = start_minivm(mvm, program, out_path)
        tag, per_session, boom = "DDMSERVER", 1, "Boom: boom"
    else:
        agent, jar, ddmc, work = sys.argv[1:5]
        java, javac = shutil.which("java"), shutil.which("javac")
        check(java and javac, "java/javac missing (scripts/setup.sh installs default-jdk-headless)")
        check(os.path.exists(jar), f"no {jar}")
        classes = os.path.join(work, "ddmserver-classes")
        os.makedirs(classes, exist_ok=True)
        subprocess.run([javac, "-cp", jar, "-d", classes, os.path.join(HERE, "DdmApp.java")], check=True)
        out_path = os.path.join(work, "ddmserver.out")
        opts = "=transport=dt_socket,server=y,suspend=n,address=127.0.0.1:0"
        vm, port = launch(java, [f"-agentpath:{os.path.abspath(agent)}{opts}"], classes, "DdmApp", out_path,
                          ready="DDMAPP ready")
        # One handler registered for four types hears of each session four times, as on
        # Android (DdmServer tells every registration).
        tag, per_session, boom = "DDMAPP", 4, "java.lang.IllegalStateException: boom 1"
    sessions = 0
    try:
        check(port is not None, "the JVM did not come up", open(out_path).read())

        def send(*args):
            nonlocal sessions
            sessions += 1
            r = subprocess.run([ddmc, "-c", f"127.0.0.1:{port}", "--json", "send", *args],
                               capture_output=True, text=True, timeout=60)
            try:
                return r, json.loads(r.stdout)
            except ValueError:
                check(False, f"ddmc send {' '.join(args)}: no JSON", r.stdout, r.stderr)

        r, j = send("ECHO", "0102030405")
        check(r.returncode == 0 and j["reply"]["type"] == "ECHO" and j["reply"]["hex"] == "0504030201",
              "ECHO not answered by the app's handler", r.stdout, r.stderr)
        r, j = send("BOOM")
        fail = (j.get("reply") or {}).get("fail") or {}
        check(r.returncode != 0 and j["reply"]["type"] == "FAIL"
              and fail.get("message") == boom,
              "BOOM: no FAIL with the handler's exception", r.stdout, r.stderr)
        r, j = send("ECHO", "aabb")
        check(r.returncode == 0 and j["reply"]["hex"] == "bbaa", "ECHO after BOOM not served", r.stdout, r.stderr)
        if not minivm:
            r, j = send("BADC")
            fail = (j.get("reply") or {}).get("fail") or {}
            check(r.returncode != 0 and "bad bounds" in (fail.get("message") or ""),
                  "BADC: a Chunk past its array did not give FAIL", r.stdout, r.stderr)
        r, j = send("PUSH", "cafe", "f00d", "--listen", "3")
        pushed = [u for u in j.get("unsolicited", []) if u["type"] == "PSHD"]
        check(r.returncode == 0 and j["empty"] and len(pushed) == 1 and pushed[0]["hex"] == "cafef00d",
              "PUSH: no unsolicited PSHD from DdmServer.sendChunk", r.stdout, r.stderr)
        r, j = send("ZZZZ", "00")
        check(r.returncode == 0 and j["empty"] and j["reply"] is None, "ZZZZ: not the empty reply", r.stdout,
              r.stderr)
        # The last session's disconnected() comes once the VM has seen ddmc go.
        deadline = time.monotonic() + 10
        n = per_session * sessions
        while time.monotonic() < deadline and f"{tag} disconnected {n}\n" not in open(out_path).read():
            time.sleep(0.1)
        text = open(out_path).read()
        c = re.findall(tag + r" connected (\d+)", text)
        d = re.findall(tag + r" disconnected (\d+)", text)
        check(c == [str(i) for i in range(1, n + 1)] and d == c,
              f"connected / disconnected not once per session and registration ({sessions} sessions)", text)
        check(minivm or "from the system class loader" in text, "DdmServer not from the system class loader", text)
        check("warning" not in text.lower(), "the VM printed a warning", text)
        check(vm.poll() is None, "the VM ended", text)
        print(f"PASS: ECHO, BOOM (FAIL, then served), PUSH (unsolicited PSHD), ZZZZ (empty), {sessions} sessions")
        return 0
    finally:
        vm.kill()
        vm.wait()


if __name__ == "__main__":
    sys.exit(main())
