#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fails if an object file defines a global symbol outside the names its part of the project may
use (the house style: public ddmc_, internal ddmc__<layer>_, file-static otherwise; a program or
a module names its globals after itself).

    check_prefixes.py [--default REGEX] [--file STEM=REGEX]... OBJ...

OBJ is an object file, or a ';'-separated list of them (what CMake's $<TARGET_OBJECTS:t> expands
to). Its STEM is the name of the source file it was compiled from without extension
(cmd_info.c.o -> cmd_info). Every global symbol it defines (nm: T, D, B, R, ... in upper case)
must match, as a whole, the REGEX of a --file for its stem, else the --default REGEX, in which
{stem} stands for the stem. Prints each symbol that does not, and exits 1 if there is any."""
import argparse
import os
import re
import subprocess
import sys


def stem_of(path):
    name = os.path.basename(path)
    for ext in (".o", ".obj"):
        if name.endswith(ext):
            name = name[: -len(ext)]
    return os.path.splitext(name)[0]


def globals_of(path):
    out = subprocess.run(["nm", "-P", "--defined-only", path], capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        parts = line.split()
        # Upper-case types are global; V/W (weak) too; U is excluded by --defined-only.
        # Names starting with "__" are reserved for the implementation: a sanitizer's own symbols
        # (__odr_asan.X, __asan_*) are no names of ours.
        if len(parts) >= 2 and parts[1].isupper() and not parts[0].startswith("__"):
            yield parts[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--default", default=r"{stem}_\w+")
    ap.add_argument("--file", action="append", default=[], metavar="STEM=REGEX")
    ap.add_argument("objs", nargs="+")
    args = ap.parse_args()
    per_file = dict(f.split("=", 1) for f in args.file)
    objs = [o for arg in args.objs for o in arg.split(";") if o]
    bad = checked = 0
    for obj in objs:
        stem = stem_of(obj)
        rule = per_file.get(stem, args.default.replace("{stem}", re.escape(stem)))
        for sym in globals_of(obj):
            checked += 1
            if not re.fullmatch(rule, sym):
                print(f"{obj}: {sym} is not named as its file's globals are ({rule})")
                bad += 1
    print(f"check_prefixes: {checked} global symbols in {len(objs)} objects, {bad} misnamed")
    return 1 if bad or not checked else 0


if __name__ == "__main__":
    sys.exit(main())
