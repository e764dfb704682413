#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ART's JDWP conformance suite (Apache Harmony's JDWP tests) under libddmcjdwp.so, against the
results kept in this directory; python3 standard library only.

  run_conformance.py --suite DIR --agent PATH --out DIR [--jobs N] [--tests REGEX]

DIR is the suite as ../shared/conformance/harmony/ keeps it (its run.sh runs each test class with
a debuggee JVM under the agent named). The suite is not in this repository: missing, this fails
(never skips) and says where it was looked for.

Fails when
  - any debuggee JVM left an hs_err file (a crash: never acceptable, whatever the test);
  - a test of expected-pass.txt fails, in the run and again when its class is run once more
    alone (a class that passes alone is reported as failing under load, and does not fail CI);
  - a test the run selected is in neither expected-pass.txt nor known-failures.tsv (a new test
    of the suite gets a line in one of them), or is in both.
A test of known-failures.tsv that passes is reported (move it to expected-pass.txt: the list only
grows) and does not fail.

Not run: DebuggerOnDemand.OnthrowDebuggerLaunchTest (JDWP's launch=/onthrow= options; it fails
under the JDK's agent too, waits out run.sh's 180 s class timeout, and binds the suite's fixed
port 9797, which another run on the machine may hold). run.sh's --exclude-file matches whole lines
of its class list, which carry a count, so the class is left out by --tests instead.
"""
import argparse
import os
import random
import re
import socket
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
# Every class but jdwp.DebuggerOnDemand.* (see above).
DEFAULT_CLASSES = r"\.jdwp\.([^D]|D[^e]|De[^b])"


def read_tsv(path, min_cols):
    """Lines of path split on tabs, comments and blank lines left out."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            cols = line.split("\t")
            if len(cols) < min_cols:
                raise ValueError(f"{path}:{n}: want {min_cols} tab-separated columns: {line!r}")
            rows.append(cols)
    return rows


def free_port_base(n):
    """A base port with n consecutive ports free on 127.0.0.1 now (run.sh takes base..base+n-1)."""
    for _ in range(200):
        base = random.randrange(20000, 60000 - n)
        socks = []
        try:
            for p in range(base, base + n):
                s = socket.socket()
                socks.append(s)
                s.bind(("127.0.0.1", p))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise RuntimeError("no free port range found")


def run_suite(suite, agent, out, jobs, pattern):
    """Runs run.sh; returns (passed, failed, crash logs) as sets of (class, test) and a list."""
    cmd = [os.path.join(suite, "run.sh"), "--jobs", str(jobs), "--port-base", str(free_port_base(2 * jobs + 2)),
           "--out", out, "--tests", pattern,
           "--runner-opt", "-Djpda.settings.debuggeeAgentArgument=-agentpath: "
                           f"-Djpda.settings.debuggeeAgentName={agent}"]
    print("#", " ".join(cmd), flush=True)
    r = subprocess.run(cmd, stdin=subprocess.DEVNULL)
    if r.returncode != 0 or not os.path.isfile(os.path.join(out, "passed_tests.tsv")):
        raise RuntimeError(f"run.sh failed (status {r.returncode}): see {out}")
    passed = {tuple(c[:2]) for c in read_tsv(os.path.join(out, "passed_tests.tsv"), 2)}
    failed = {tuple(c[:2]) for c in read_tsv(os.path.join(out, "failed_tests.tsv"), 2)}
    with open(os.path.join(out, "vm-crash-logs.txt"), encoding="utf-8") as f:
        crashes = [line.strip() for line in f if line.strip()]
    return passed, failed, crashes


def crash_lines(path):
    """The lines of an hs_err file that say what crashed."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return ""
    keep = [l for l in text.splitlines()[:40] if l.startswith("#  ") or l.startswith("# Problematic")]
    return "\n".join(keep[:8])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--suite", required=True, help="the suite's directory (with run.sh)")
    ap.add_argument("--agent", required=True, help="libddmcjdwp.so")
    ap.add_argument("--out", required=True, help="the run's output directory (emptied first)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--tests", help="only the classes this regex matches (run.sh --tests)")
    args = ap.parse_args()

    run_sh = os.path.join(args.suite, "run.sh")
    if not os.access(run_sh, os.X_OK):
        print(f"FAIL: the JDWP conformance suite is missing: no {run_sh} (it lives outside the repository, "
              "in ../shared/conformance/harmony/; cmake -DDDMC_CONFORMANCE_DIR=DIR names another place)")
        return 1
    if not os.path.isfile(args.agent):
        print(f"FAIL: no agent at {args.agent}")
        return 1
    try:
        expected = {tuple(c[:2]) for c in read_tsv(os.path.join(HERE, "expected-pass.txt"), 2)}
        known = {tuple(c[:2]): c[2] for c in read_tsv(os.path.join(HERE, "known-failures.tsv"), 3)}
    except (OSError, ValueError) as e:
        print(f"FAIL: {e}")
        return 1
    both = expected & set(known)
    if both:
        print("FAIL: in both expected-pass.txt and known-failures.tsv:\n  " +
              "\n  ".join("\t".join(t) for t in sorted(both)))
        return 1

    agent = os.path.abspath(args.agent)
    subprocess.run(["rm", "-rf", args.out])
    try:
        passed, failed, crashes = run_suite(args.suite, agent, args.out, args.jobs, args.tests or DEFAULT_CLASSES)
    except RuntimeError as e:
        print(f"FAIL: {e}")
        return 1
    ran = passed | failed
    problems = []
    for c in crashes:
        problems.append(f"debuggee JVM crash: {c}\n{crash_lines(c)}")
    unlisted = sorted(t for t in ran if t not in expected and t not in known)
    for t in unlisted:
        problems.append(f"not listed: {t[0]}\t{t[1]} ({'PASS' if t in passed else 'FAIL'}): add it to "
                        "expected-pass.txt or, with its reason, to known-failures.tsv")
    lost = sorted(t for t in expected if t in failed)
    if args.tests is None:
        lost += sorted(t for t in expected if t not in ran)  # a class no longer run
    if lost:
        # Once more, each class alone: a loaded machine (CI runs beside other builds) can make a
        # test miss its timeouts. A second failure is a failure.
        classes = sorted({t[0] for t in lost})
        print(f"# {len(lost)} expected test(s) failed; their {len(classes)} class(es) once more, alone", flush=True)
        pattern = "^(" + "|".join(re.escape(c) for c in classes) + ")[[:space:]]"  # run.sh: "class<TAB>count"
        try:
            p2, f2, c2 = run_suite(args.suite, agent, args.out + "-rerun", 1, pattern)
        except RuntimeError as e:
            print(f"FAIL: {e}")
            return 1
        for c in c2:
            problems.append(f"debuggee JVM crash (rerun): {c}\n{crash_lines(c)}")
        for t in lost:
            if t in p2:
                print(f"warning: {t[0]}\t{t[1]} failed in the full run and passed alone (load?)")
            else:
                problems.append(f"expected to pass, failed twice: {t[0]}\t{t[1]} "
                                f"(log: {args.out}-rerun/logs/{t[0]}.log)")
    now_pass = sorted(t for t in known if t in passed)
    for t in now_pass:
        print(f"note: known failure passes now: {t[0]}\t{t[1]} (move it to expected-pass.txt)")
    print(f"conformance: {len(passed)} of {len(ran)} tests passed, {len(crashes)} debuggee crash(es); "
          f"expected to pass: {len(expected & ran)}, known failures: {len(set(known) & ran)}")
    if problems:
        print("FAIL:\n" + "\n".join(problems))
        return 1
    print("PASS: every expected test passed, no debuggee crashed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
