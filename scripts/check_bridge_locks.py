#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks that the lock each bridge op may be called under is written the same in two places: the
op's comment in include/ddmc/bridge.h ("Locks: ... switch lock / suspension lock") and the list the
debug build's shims assert (src/bridge_check.h). A member declared right under another, with no
comment of its own, shares that member's comment."""
import re
import sys

ROLES = {"switch lock": "DDMC__LOCK_SWITCHES", "suspension lock": "DDMC__LOCK_SUSPEND"}


def header_rules(text):
    body = text[text.index("typedef struct ddmc_vm_bridge {"):text.index("} ddmc_vm_bridge;")]
    rules, comment, last = {}, "", set()
    for tok in re.finditer(r"/\*.*?\*/|^  \w[\w *]*\(\*(\w+)\)\(", body, re.S | re.M):
        if tok.group(1) is None:
            comment = tok.group(0)
            continue
        locks = set()
        flat = " ".join(re.sub(r"^\s*\*(?!/)", " ", comment, flags=re.M).split())
        m = re.search(r"Locks:(.*?)(?:\*/|$)", flat)
        if m:
            locks = {role for words, role in ROLES.items() if words in m.group(1)}
        elif comment == "":
            locks = last  # shares the comment of the member above
        rules[tok.group(1)] = locks
        last, comment = locks, ""
    return rules


def shim_rules(text):
    rules = {}
    for m in re.finditer(r"^\s+XV?\((\w+), ([^,(]*(?:\([^)]*\))?[^,]*),", text, re.M):
        rules[m.group(1)] = set(re.findall(r"DDMC__LOCK_\w+", m.group(2)))
    return rules


def main(root):
    hdr = header_rules(open(f"{root}/include/ddmc/bridge.h").read())
    shim = shim_rules(open(f"{root}/src/bridge_check.h").read())
    bad = []
    for op in sorted(set(hdr) | set(shim)):
        if op not in shim:
            bad.append(f"{op}: in bridge.h, missing from DDMC__BRIDGE_OPS (src/bridge_check.h)")
        elif op not in hdr:
            bad.append(f"{op}: in src/bridge_check.h, not a member of ddmc_vm_bridge")
        elif hdr[op] != shim[op]:
            bad.append(f"{op}: bridge.h says {sorted(hdr[op]) or 'no lock'}, bridge_check.h {sorted(shim[op]) or 'no lock'}")
    for b in bad:
        print("check_bridge_locks:", b)
    print(f"check_bridge_locks: {len(hdr)} ops, {sum(1 for v in hdr.values() if v)} called under a lock, {len(bad)} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "."))
