#!/usr/bin/env python3
"""The shared library exports exactly the documented API: every function declared with
DDMC_EXTERN in the checked public headers, and nothing else.

    check_symbols.py LIBDDMC_SO INCLUDE_DIR HEADER...

HEADER names the headers whose declarations are the built API (include/ddmc/debugger.h joins the
list once the debugger layer is built). Prints what is exported but undocumented and what is
documented but missing; exits non-zero if either is non-empty."""
import re
import subprocess
import sys


def declared(path):
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"\\\n", " ", text)
    names = set()
    # DDMC_EXTERN <type and qualifiers> name(  -- the name is the last identifier before '('
    for m in re.finditer(r"DDMC_EXTERN\b([^;{]*?)\(", text):
        ids = re.findall(r"[A-Za-z_][A-Za-z0-9_]*", m.group(1))
        if ids:
            names.add(ids[-1])
    return names


def exported(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True, check=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TDBRVW":
            names.add(parts[2])
    return names


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    lib, inc, headers = sys.argv[1], sys.argv[2], sys.argv[3:]
    want = set()
    for h in headers:
        want |= declared(f"{inc}/{h}")
    have = {n for n in exported(lib) if not n.startswith(("_init", "_fini", "__bss", "_edata", "_end"))}
    extra, missing = sorted(have - want), sorted(want - have)
    for n in extra:
        print(f"exported but not in the public headers: {n}")
    for n in missing:
        print(f"declared DDMC_EXTERN but not exported: {n}")
    print(f"check_symbols: {len(want)} declared in {len(headers)} headers, {len(have)} exported")
    return 1 if extra or missing else 0


if __name__ == "__main__":
    sys.exit(main())
