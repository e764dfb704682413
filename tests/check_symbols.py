#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The shared library exports exactly the documented API: every function and object declared with
DDMC_EXTERN in the checked public headers, and nothing else; every exported name starts with ddmc_
and carries, as its default version, a node of the linker version script; the library's SONAME is
libddmc.so.<major> (docs/versioning.md).

    check_symbols.py [--map DDMC_MAP] [--allow NAME]... LIBDDMC_SO INCLUDE_DIR HEADER...

--map names src/ddmc.map: its nodes must be DDMC_<major>.<minor> of this release or an earlier one,
and be exactly the library's version definitions besides the SONAME. Without --map the version
checks are not made (a toolchain without version scripts). --allow NAME lets a name without the
ddmc_ prefix be exported (a JVM TI agent's Agent_OnLoad, say); none is allowed today.

HEADER names the headers whose declarations are the built API (include/ddmc/debugger.h joins the
list once the debugger layer is built). Prints what is exported but undocumented and what is
documented but missing; exits non-zero if either is non-empty. Headers of INCLUDE_DIR with
DDMC_EXTERN declarations that are not checked are named (not an error: a header that is not built
yet); a header that is built but not listed shows up as exported-but-undocumented."""
import argparse
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


def dynamic_symbols(lib):
    """{name: version} of the defined dynamic symbols, from readelf (which shows versions on every
    binutils, where nm -D shows them only from 2.35): version is "@@NODE" for a default version,
    "@NODE" for a hidden one, "" for none. The ABS symbols that name a version node are left out."""
    out = subprocess.run(["readelf", "--dyn-syms", "--wide", lib], capture_output=True, text=True,
                         check=True).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        # Num: Value Size Type Bind Vis Ndx Name
        if len(parts) < 8 or not parts[0].rstrip(":").isdigit() or parts[6] == "UND":
            continue
        if parts[4] == "LOCAL":
            continue
        full = parts[7]
        m = re.match(r"([^@]+)(@@?.*)?$", full)
        name, ver = m.group(1), m.group(2) or ""
        if parts[6] == "ABS" and parts[5] == "DEFAULT" and ver == "" and re.match(r"DDMC_\d", name):
            continue  # the node itself (ld defines one ABS symbol per version node)
        syms[name] = ver
    return syms


def version_info(lib):
    """(SONAME, [version definition names other than the base])."""
    dyn = subprocess.run(["readelf", "-d", "--wide", lib], capture_output=True, text=True, check=True).stdout
    m = re.search(r"\(SONAME\)\s+Library soname: \[([^\]]+)\]", dyn)
    soname = m.group(1) if m else None
    ver = subprocess.run(["readelf", "-V", "--wide", lib], capture_output=True, text=True, check=True).stdout
    defs = []
    section = ver.split("Version definition section", 1)
    if len(section) == 2:
        body = re.split(r"\n(?=Version (needs|symbols) section)", section[1])[0]
        for dm in re.finditer(r"Flags: (\S+).*?Name: (\S+)", body):
            if dm.group(1) != "BASE":
                defs.append(dm.group(2))
    return soname, defs


def map_nodes(path):
    """Version nodes defined in a linker version script, in order."""
    text = re.sub(r"/\*.*?\*/", " ", open(path, encoding="utf-8").read(), flags=re.S)
    return re.findall(r"(?:^|[};])\s*([A-Za-z_][\w.]*)\s*\{", text)


def header_version(inc):
    text = open(os.path.join(inc, "version.h"), encoding="utf-8").read()
    return tuple(int(re.search(rf"#define DDMC_VERSION_{k} (\d+)", text).group(1)) for k in ("MAJOR", "MINOR", "PATCH"))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--map")
    ap.add_argument("--allow", action="append", default=[])
    ap.add_argument("lib")
    ap.add_argument("inc")
    ap.add_argument("headers", nargs="+")
    a = ap.parse_args()
    lib, inc, headers = a.lib, a.inc, a.headers
    want = set()
    for h in headers:
        want |= declared(f"{inc}/{h}")
    syms = dynamic_symbols(lib)
    have = {n for n in syms if not n.startswith(("_init", "_fini", "__bss", "_edata", "_end"))}
    extra, missing = sorted(have - want), sorted(want - have)
    for n in extra:
        print(f"exported but not in the public headers: {n}")
    for n in missing:
        print(f"declared DDMC_EXTERN but not exported: {n}")
    bad = []
    for n in sorted(syms):
        if not n.startswith("ddmc_") and n not in a.allow:
            bad.append(f"exported without the ddmc_ prefix: {n}{syms[n]}")

    major, minor, patch = header_version(inc)
    soname, defs = version_info(lib)
    if soname != f"libddmc.so.{major}":
        bad.append(f"SONAME is {soname}, expected libddmc.so.{major} (docs/versioning.md)")
    if a.map:
        nodes = map_nodes(a.map)
        if not nodes:
            bad.append(f"{a.map}: no version node")
        for node in nodes:
            m = re.fullmatch(r"DDMC_(\d+)\.(\d+)", node)
            if not m or (int(m.group(1)), int(m.group(2))) > (major, minor) or int(m.group(1)) != major:
                bad.append(f"{a.map}: node {node} is not DDMC_{major}.<minor> of release {major}.{minor}.{patch} or earlier")
        if sorted(defs) != sorted(nodes):
            bad.append(f"the library defines the versions {defs}, the map {nodes} (was the map used in the link?)")
        for n in sorted(syms):
            ver = syms[n]
            if not ver.startswith("@@") or ver[2:] not in nodes:
                bad.append(f"exported without a default version of {a.map}: {n}{ver or ' (unversioned)'}")
    for b in bad:
        print(b)

    for h in sorted(os.listdir(inc)):
        if h.endswith(".h") and h not in headers and declared(os.path.join(inc, h)):
            print(f"not checked (not built yet?): {h}, {len(declared(os.path.join(inc, h)))} declarations")
    versioned = sum(1 for v in syms.values() if v.startswith("@@"))
    print(f"check_symbols: {len(want)} declared in {len(headers)} headers, {len(have)} exported, "
          f"{versioned} under a version node ({', '.join(defs) or 'none'}), SONAME {soname}")
    return 1 if extra or missing or bad else 0


if __name__ == "__main__":
    sys.exit(main())
