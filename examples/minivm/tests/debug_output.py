#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""programs/debug.mvm prints what tests/jdb/Debug.java prints: runs both (minivm, and the JDK's
java launching the source file) and compares their first ROUNDS lines byte for byte.

usage: debug_output.py MINIVM DEBUG.MVM JAVA DEBUG.JAVA [ROUNDS]"""
import subprocess
import sys


def first_lines(cmd, n, timeout=30):
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    lines = []
    try:
        for _ in range(n):
            line = p.stdout.readline()   # the program prints forever: read n lines, then stop it
            if not line:
                break
            lines.append(line)
    finally:
        p.kill()
        p.wait(timeout)
    if len(lines) < n:
        sys.exit("FAIL: %s printed %d lines, wanted %d; stderr:\n%s" % (cmd, len(lines), n, p.stderr.read().decode()))
    return b"".join(lines)


def main():
    if len(sys.argv) not in (5, 6):
        sys.exit(__doc__)
    minivm, program, java, source = sys.argv[1:5]
    rounds = int(sys.argv[5]) if len(sys.argv) == 6 else 4
    mine = first_lines([minivm, program], rounds)
    ref = first_lines([java, source], rounds)
    if mine != ref:
        sys.exit("FAIL: minivm printed\n%r\nbut java printed\n%r" % (mine, ref))
    print("ok: the first %d lines are identical:\n%s" % (rounds, mine.decode()), end="")


if __name__ == "__main__":
    main()
