#!/usr/bin/env python3
"""Line coverage of the library (src/) from a DDMC_COVERAGE build whose tests have run.

    coverage_report.py SRC_DIR OBJ_DIR

Runs gcov on every object of ddmc_obj and prints lines executed per source file and in total."""
import os
import re
import subprocess
import sys
import tempfile


def main():
    src, objdir = sys.argv[1], sys.argv[2]
    rows, total_hit, total = [], 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        for dirpath, _, files in os.walk(objdir):
            for f in sorted(files):
                if not f.endswith(".gcno"):
                    continue
                gcno = os.path.join(dirpath, f)
                out = subprocess.run(["gcov", "-n", "-o", dirpath, gcno], capture_output=True, text=True, cwd=tmp).stdout
                cur = None
                for line in out.splitlines():
                    m = re.match(r"File '(.+)'", line)
                    if m:
                        cur = os.path.relpath(os.path.abspath(m.group(1)), src)
                        continue
                    m = re.match(r"Lines executed:([\d.]+)% of (\d+)", line)
                    if m and cur and not cur.startswith("..") and cur.endswith(".c"):
                        n = int(m.group(2))
                        hit = round(float(m.group(1)) * n / 100)
                        rows.append((cur, hit, n))
                        total_hit += hit
                        total += n
                        cur = None
    if not total:
        print("coverage: no data (build with -DDDMC_COVERAGE=ON and run the tests first)")
        return 1
    for name, hit, n in sorted(rows):
        print(f"{100.0 * hit / n:6.1f}%  {hit:5d}/{n:<5d}  src/{name}")
    print(f"{100.0 * total_hit / total:6.1f}%  {total_hit:5d}/{total:<5d}  total (lines of src/)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
