#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Line coverage of the library (src/) from a DDMC_COVERAGE build whose tests have run.

    coverage_report.py SRC_DIR OBJ...

OBJ is an object file of ddmc_obj, a ';'-separated list of them (CMake's
$<TARGET_OBJECTS:ddmc_obj>), or a directory searched for *.o. The notes file next to each object
(x.c.o -> x.c.gcno) is read with `gcov -n` (nothing written); the lines of each .c under SRC_DIR
are printed, executed/total per file and in total. A source seen in several notes files is
counted once (the best figure), and notes of files that no longer exist are ignored."""
import os
import re
import subprocess
import sys
import tempfile


def object_files(args):
    objs = []
    for arg in args:
        for item in arg.split(";"):
            if not item:
                continue
            if os.path.isdir(item):
                for dirpath, _, files in os.walk(item):
                    objs += [os.path.join(dirpath, f) for f in sorted(files) if f.endswith(".o")]
            else:
                objs.append(item)
    return objs


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    src = os.path.realpath(sys.argv[1])
    rows = {}  # src-relative name -> (hit, total)
    with tempfile.TemporaryDirectory() as tmp:
        for obj in object_files(sys.argv[2:]):
            obj = os.path.abspath(obj)  # gcov runs in a scratch directory
            gcno = (obj[: -len(".o")] if obj.endswith(".o") else obj) + ".gcno"
            if not os.path.exists(gcno):
                continue
            out = subprocess.run(["gcov", "-n", "-o", os.path.dirname(gcno), gcno],
                                 capture_output=True, text=True, cwd=tmp).stdout
            cur = None
            for line in out.splitlines():
                m = re.match(r"File '(.+)'", line)
                if m:
                    path = os.path.realpath(m.group(1))
                    cur = os.path.relpath(path, src) if os.path.isfile(path) else None
                    continue
                m = re.match(r"Lines executed:([\d.]+)% of (\d+)", line)
                if m and cur and not cur.startswith("..") and cur.endswith(".c"):
                    n = int(m.group(2))
                    hit = round(float(m.group(1)) * n / 100)
                    if cur not in rows or rows[cur][0] < hit:
                        rows[cur] = (hit, n)
                    cur = None
    total_hit = sum(h for h, _ in rows.values())
    total = sum(n for _, n in rows.values())
    if not total:
        print("coverage: no data (build with -DDDMC_COVERAGE=ON and run the tests first)")
        return 1
    for name in sorted(rows):
        hit, n = rows[name]
        print(f"{100.0 * hit / n:6.1f}%  {hit:5d}/{n:<5d}  src/{name}")
    print(f"{100.0 * total_hit / total:6.1f}%  {total_hit:5d}/{total:<5d}  total (lines of src/)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
