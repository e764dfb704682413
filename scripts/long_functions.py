#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Lists the functions in C files longer than a limit (default 80 lines), from the opening line of
the definition to its closing brace, and exits 1 when there is any.

    long_functions.py [--max N] DIR...

A definition starts at a line that begins in column 0 with neither whitespace, '#', '/', '}' nor
'typedef' and ends at the next line that is exactly '}' (the house style clang-format keeps)."""
import os
import re
import sys


def functions(path):
    with open(path, encoding="utf-8", errors="replace") as fh:
        lines = fh.read().split("\n")
    start = None
    for i, line in enumerate(lines):
        if start is None:
            if re.match(r"[A-Za-z_]", line) and not line.startswith(("typedef", "struct", "enum", "union")) \
                    and "(" in line and not line.rstrip().endswith(";"):
                start = i
        elif line == "}":
            yield lines[start], start + 1, i - start + 1
            start = None
        elif line.rstrip().endswith(";") and lines[start].rstrip().endswith(")") and i == start + 1:
            start = None  # a prototype split over lines


def main(argv):
    limit = 80
    if len(argv) > 2 and argv[1] == "--max":
        limit = int(argv[2])
        argv = argv[2:]
    bad = 0
    for root in argv[1:]:
        for dirpath, _, files in os.walk(root):
            for f in sorted(files):
                if not f.endswith(".c"):
                    continue
                path = os.path.join(dirpath, f)
                for head, line, n in functions(path):
                    if n > limit:
                        print(f"{path}:{line}: {n} lines: {head.strip()}")
                        bad += 1
    print(f"long_functions: {bad} over {limit} lines")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
