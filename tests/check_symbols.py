#!/usr/bin/env python3
"""The shared library exports exactly the documented API: every function and object declared with
DDMC_EXTERN in the checked public headers, and nothing else.

    check_symbols.py LIBDDMC_SO INCLUDE_DIR HEADER...

HEADER names the headers whose declarations are the built API (include/ddmc/debugger.h joins the
list once the debugger layer is built). Prints what is exported but undocumented and what is
documented but missing; exits non-zero if either is non-empty. Headers of INCLUDE_DIR with
DDMC_EXTERN declarations that are not checked are named (not an error: a header that is not built
yet); a header that is built but not listed shows up as exported-but-undocumented."""
import os
import re
import subprocess
import sys


def declared(path):
    """Names declared with DDMC_EXTERN: for a function the identifier before its parameter list
    (ddmc_vm_get_stats_ in `DDMC_EXTERN void ddmc_vm_get_stats_(...)`), for data the declarator
    (`DDMC_EXTERN const char ddmc_x[];`, `DDMC_EXTERN void (*ddmc_hook)(int);`). Comments and
    preprocessor lines (export.h's own #define DDMC_EXTERN) are ignored."""
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r"\\\n", " ", text)
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
    text = re.sub(r"__attribute__\s*\(\(.*?\)\)", " ", text, flags=re.S)
    names = set()
    for m in re.finditer(r"\bDDMC_EXTERN\b([^;{]*)", text):
        decl = m.group(1)
        ptr = re.match(r"[^(]*\(\s*\*\s*([A-Za-z_]\w*)\s*[()]", decl)  # (*name)(...), (*name(...))(...)
        if ptr:
            names.add(ptr.group(1))
            continue
        head = decl.split("(", 1)[0] if "(" in decl else re.sub(r"\[.*", "", decl, flags=re.S)
        ids = re.findall(r"[A-Za-z_]\w*", head)
        if ids:
            names.add(ids[-1])
    return names


def exported(lib):
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True, check=True).stdout
    names = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in ("T", "D", "B", "R", "G", "S", "V", "W", "i", "u"):
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
    for h in sorted(os.listdir(inc)):
        if h.endswith(".h") and h not in headers and declared(os.path.join(inc, h)):
            print(f"not checked (not built yet?): {h}, {len(declared(os.path.join(inc, h)))} declarations")
    print(f"check_symbols: {len(want)} declared in {len(headers)} headers, {len(have)} exported")
    return 1 if extra or missing else 0


if __name__ == "__main__":
    sys.exit(main())
