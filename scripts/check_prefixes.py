#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fails if an object file defines a global symbol outside the names its part of the project may
use (the house style: public ddmc_, internal ddmc__<layer>_, file-static otherwise; a program or
a module names its globals after itself).

    check_prefixes.py [--default REGEX] [--file STEM=REGEX]... [--dir NAME=REGEX]...
                      [--headers DIR] OBJ...

OBJ is an object file, or a ';'-separated list of them (what CMake's $<TARGET_OBJECTS:t> expands
to). Its STEM is the name of the source file it was compiled from without extension
(cmd_info.c.o -> cmd_info), its DIR the name of the folder it lies in (CMake mirrors the source
tree: .../ddmc_obj.dir/src/jdwp/seat.c.o -> jdwp). Every global symbol it defines (nm: T, D, B,
R, ... in upper case) must match, as a whole, the REGEX of a --file for its stem, else of a --dir
for its folder, else the --default REGEX, in which {stem} stands for the stem and {dir} for the
folder. --headers DIR also checks the static inline functions the headers under DIR define (they
are seen by every file that includes them, so they are named as globals are), each by the rule of
its header's folder. Prints each name that does not match, and exits 1 if there is any."""
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


def globals_of(paths):
    """{object: [global symbol, ...]}, from one nm run over all of them (a process per object is
    slow on a loaded machine)."""
    out = subprocess.run(["nm", "-P", "-A", "--defined-only"] + paths, capture_output=True, text=True,
                         check=True).stdout
    syms = {p: [] for p in paths}
    for line in out.splitlines():
        path, _, rest = line.partition(": ")
        parts = rest.split()
        # Upper-case types are global; V/W (weak) too; U is excluded by --defined-only.
        # Names starting with "__" are reserved for the implementation: a sanitizer's own symbols
        # (__odr_asan.X, __asan_*) are no names of ours.
        if len(parts) >= 2 and parts[1].isupper() and not parts[0].startswith("__"):
            syms.setdefault(path, []).append(parts[0])
    return syms


INLINE = re.compile(r"^static inline\b[^(=;]*?\b([A-Za-z_]\w*)\s*\(", re.M)


def inline_functions(root):
    """(header, folder name, function) for each static inline function defined under root."""
    for dirpath, _, files in os.walk(root):
        for f in sorted(files):
            if f.endswith(".h"):
                path = os.path.join(dirpath, f)
                with open(path, encoding="utf-8") as fh:
                    for m in INLINE.finditer(fh.read()):
                        yield path, os.path.basename(os.path.abspath(dirpath)), m.group(1)


def rule_for(args, per_file, per_dir, stem, folder):
    if stem in per_file:
        return per_file[stem]
    rule = per_dir.get(folder, args.default)
    return rule.replace("{stem}", re.escape(stem)).replace("{dir}", re.escape(folder))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--default", default=r"{stem}_\w+")
    ap.add_argument("--file", action="append", default=[], metavar="STEM=REGEX")
    ap.add_argument("--dir", action="append", default=[], metavar="NAME=REGEX")
    ap.add_argument("--headers", action="append", default=[], metavar="DIR")
    ap.add_argument("objs", nargs="+")
    args = ap.parse_args()
    per_file = dict(f.split("=", 1) for f in args.file)
    per_dir = dict(d.split("=", 1) for d in args.dir)
    objs = [o for arg in args.objs for o in arg.split(";") if o]
    bad = checked = 0
    syms = globals_of(objs)
    for obj in objs:
        rule = rule_for(args, per_file, per_dir, stem_of(obj), os.path.basename(os.path.dirname(os.path.abspath(obj))))
        for sym in syms[obj]:
            checked += 1
            if not re.fullmatch(rule, sym):
                print(f"{obj}: {sym} is not named as its file's globals are ({rule})")
                bad += 1
    for root in args.headers:
        for path, folder, fn in inline_functions(root):
            rule = rule_for(args, per_file, per_dir, stem_of(path), folder)
            checked += 1
            if not re.fullmatch(rule, fn):
                print(f"{path}: static inline {fn} is not named as its folder's globals are ({rule})")
                bad += 1
    also = " and their headers' inline functions" if args.headers else ""
    print(f"check_prefixes: {checked} global symbols in {len(objs)} objects{also}, {bad} misnamed")
    return 1 if bad or not checked else 0


if __name__ == "__main__":
    sys.exit(main())
