#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ART's own DDM test (jdwp/DDM/DDMTest of the Harmony JDWP conformance suite, in ../shared beside
the clone) against a JVM under libddmcjdwp.so: the debuggee registers a handler with Android's
org.apache.harmony.dalvik.ddmc API (libddmcjdwp-ddm.jar); it must answer 4 random 128-byte chunks
with their Adler-32, an unregistered type must get the empty reply, and connected() /
disconnected() must each have been called 5 times after 4 reconnections with DDM calls and 4
without.

    ddm_suite.py SHARED_DIR AGENT.so DDM.jar WORKDIR

Exits 0 when DDMTest passes, 1 otherwise (a missing suite or junit4 is a failure)."""
import os
import socket
import subprocess
import sys

JUNIT = ["/usr/share/java/junit4.jar", "/usr/share/java/hamcrest-core.jar"]


def free_pair():
    """A port P with P+1 free too (run.sh uses P for JDWP and P+1 for the suite's sync socket)."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            p = s.getsockname()[1]
        if p >= 65000:
            continue
        try:
            with socket.socket() as a, socket.socket() as b:
                a.bind(("127.0.0.1", p))
                b.bind(("127.0.0.1", p + 1))
            return p
        except OSError:
            continue
    return 23500


def main():
    shared, agent, jar, work = sys.argv[1:5]
    run = os.path.join(shared, "conformance", "harmony", "run.sh")
    missing = [f for f in [run, agent, jar, *JUNIT] if not os.path.exists(f)]
    if missing:
        print("FAIL: missing " + ", ".join(missing) + " (the suite lives in shared/ beside the clone; "
              "junit4 comes from scripts/setup.sh)")
        return 1
    out = os.path.join(work, "ddm-suite")
    env = dict(os.environ)
    # The suite's runner (the debugger side) loads DDMDebuggee too, for its Adler-32 helper, so
    # Android's classes must be on its class path as well: run.sh puts --ddm-api only on the
    # debuggee's, and JUNIT_CP is on both.
    env["JUNIT_CP"] = ":".join(JUNIT + [os.path.abspath(jar)])
    # The suite compiled once per build tree (about a minute), not in a /tmp cache that parallel
    # runs of other trees could rebuild under this one.
    env["HARMONY_CACHE"] = os.path.join(os.path.abspath(work), "harmony-cache")
    cmd = [run, "--ddm-api", os.path.abspath(jar), "--tests", r"jdwp\.DDM\.DDMTest", "--port-base", str(free_pair()),
           "--out", out, "--runner-opt",
           f"-Djpda.settings.debuggeeAgentArgument=-agentpath: -Djpda.settings.debuggeeAgentName={os.path.abspath(agent)}"]
    # Output to a file, not a pipe: a process the suite leaves behind must not keep this waiting.
    os.makedirs(work, exist_ok=True)
    log_path = os.path.join(work, "ddm-suite.log")
    with open(log_path, "wb") as log:
        subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, timeout=800, env=env)
    print(open(log_path, errors="replace").read()[-3000:])
    try:
        rows = [l.split("\t") for l in open(os.path.join(out, "results.tsv")).read().splitlines()[1:]]
    except OSError:
        rows = []
    ok = len(rows) == 1 and rows[0][0].endswith("DDM.DDMTest") and rows[0][1] == "1" and rows[0][5] == "PASS"
    if not ok:
        log = os.path.join(out, "logs", "org.apache.harmony.jpda.tests.jdwp.DDM.DDMTest.log")
        if os.path.exists(log):
            print(open(log, errors="replace").read()[-6000:])
        print("FAIL: DDMTest did not pass:", rows)
        return 1
    print("PASS: ART's DDMTest under libddmcjdwp.so")
    return 0


if __name__ == "__main__":
    sys.exit(main())
