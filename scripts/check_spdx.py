#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fails when a source file git tracks has no SPDX-License-Identifier line (C and headers, Python,
shell, CMake, Java, .mvm programs). Usage: check_spdx.py REPO_ROOT"""
import os
import subprocess
import sys

EXTS = (".c", ".h", ".py", ".sh", ".cmake", ".java", ".mvm")


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    files = subprocess.run(["git", "-C", root, "ls-files"], capture_output=True, text=True, check=True).stdout.split()
    missing = []
    checked = 0
    for f in files:
        base = os.path.basename(f)
        if not (f.endswith(EXTS) or base == "CMakeLists.txt" or f == ".ci/run"):
            continue
        checked += 1
        with open(os.path.join(root, f), encoding="utf-8", errors="replace") as fh:
            if "SPDX-License-Identifier:" not in fh.read():
                missing.append(f)
    for f in missing:
        print(f"no SPDX-License-Identifier line: {f}")
    print(f"check_spdx: {checked} source files, {len(missing)} without a licence line")
    return 1 if missing or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
