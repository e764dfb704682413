#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fails if src/ has a circle: between files through #include "..." lines, or between
object files through calls and data references. The same for the HotSpot agent's agent/jdwp/
(ctest check_layers_agent; its files are all of one layer, so only circles count there).

    check_layers.py SRC_DIR OBJ...

OBJ is an object file of the library, a ';'-separated list of them (what CMake's
$<TARGET_OBJECTS:ddmc_obj> expands to; the ctest test passes that, so objects of files that have
left DDMC_SOURCES but still lie in the build tree are not read), or a directory searched for *.o.
Each object is named after the source file under SRC_DIR it was compiled from.

Include graph: a node per file under SRC_DIR (.c and .h), an edge for each #include "x" that
names another file there. Call graph: a node per .c file, an edge A -> B when A's object file
uses a global symbol that B's object file defines (read with nm; the edge is printed with the
symbols that make it). Both graphs must be acyclic; each strongly connected component of more
than one node is printed as a circle, with its edges. A header and
its .c are separate nodes: struct ddmc_vm in vm_int.h is shared state every part may include,
while the code of vm.c is the top of the call graph and nothing may call back into it.

Layers: a file's layer is its folder under SRC_DIR (src/debugger/... is "debugger"; files directly
in SRC_DIR are the core). SIBLINGS stand side by side on the VM bridge and the event hub and never
reach each other, by #include or by call; FLOOR layers are below every client and reach none of
them (they know their clients only through tables: jdwp/service.h, hub/hub.h). The JDWP layer
reaches no sibling either."""
import os
import re
import subprocess
import sys


def sccs(graph):
    """Tarjan's algorithm, iterative; returns the components of more than one node."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            node, it = work[-1]
            advanced = False
            for nxt in it:
                if nxt not in graph:
                    continue
                if nxt not in index:
                    index[nxt] = low[nxt] = counter[0]
                    counter[0] += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(sorted(graph[nxt]))))
                    advanced = True
                    break
                if nxt in on:
                    low[node] = min(low[node], index[nxt])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    n = stack.pop()
                    on.discard(n)
                    comp.append(n)
                    if n == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def include_graph(src):
    graph = {}
    for dirpath, _, files in os.walk(src):
        for f in files:
            if not f.endswith((".c", ".h")):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, src)
            graph.setdefault(rel, set())
            with open(path, encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                    if not m:
                        continue
                    for cand in (os.path.join(os.path.dirname(rel), m.group(1)), m.group(1)):
                        cand = os.path.normpath(cand)
                        if os.path.exists(os.path.join(src, cand)):
                            graph[rel].add(cand)
                            break
    return graph


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


def source_of(src, obj):
    """src/jdwp/dispatch.c for .../ddmc_obj.dir/src/jdwp/dispatch.c.o: the longest tail of the
    object's path (without .o) that names a file under SRC_DIR."""
    parts = os.path.normpath(obj[: -len(".o")] if obj.endswith(".o") else obj).split(os.sep)
    for i in range(len(parts)):
        rel = os.path.join(*parts[i:])
        if os.path.isfile(os.path.join(src, rel)):
            return rel
    return os.path.basename(obj)


def call_graph(src, objs):
    defined, used = {}, {}
    for path in objs:
        rel = source_of(src, path)
        defined[rel], used[rel] = set(), set()
    # One nm for every object (-A names the file on each line): a process per object cost most
    # of a minute on a loaded machine.
    out = subprocess.run(["nm", "-P", "-A", *objs], capture_output=True, text=True, check=True).stdout if objs else ""
    rel_of = {path: source_of(src, path) for path in objs}
    for line in out.splitlines():
        head, sep, rest = line.partition(": ")
        parts = rest.split()
        if not sep or head not in rel_of or len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            used[rel_of[head]].add(name)
        elif kind in ("T", "D", "B", "R", "C", "G", "S", "V", "W"):  # global code and data
            defined[rel_of[head]].add(name)
    owner = {}
    for f in sorted(defined):
        for n in defined[f]:
            if n in owner:
                print(f"warning: {n} defined in both {owner[n]} and {f}")
            owner.setdefault(n, f)
    graph = {f: {} for f in defined}  # graph[a][b] = symbols of b that a uses
    for f, names in used.items():
        for n in sorted(names):
            o = owner.get(n)
            if o is not None and o != f:
                graph[f].setdefault(o, []).append(n)
    return graph


SIBLINGS = ("debugger", "profile", "jvmti")
FLOOR = ("hub", "vmctl", "send", "heap")
CLIENTS = SIBLINGS + ("chunks",)
# The JDWP thread routes command set 199 through the chunk registry (chunks/registry.c, reply.c,
# zlib.c), so it may reach src/chunks, but never the sibling clients: it knows the debugger only
# as a service.
PROTOCOL = ("jdwp",)


def layer(rel):
    parts = rel.split(os.sep)
    return parts[0] if len(parts) > 1 else "core"


def layer_breaks(graph, what):
    """Edges that break the layering rules; graph[a] is a set or a dict of b -> symbols."""
    out = []
    for a in sorted(graph):
        for b in sorted(graph[a]):
            la, lb = layer(a), layer(b)
            if la == lb:
                continue
            if la in SIBLINGS and lb in SIBLINGS:
                why = "sibling layers"
            elif la in FLOOR and lb in CLIENTS + PROTOCOL:
                why = "a floor layer reaches a client"
            elif la in PROTOCOL and lb in SIBLINGS:
                why = "the protocol layer reaches a client"
            else:
                continue
            syms = graph[a][b] if isinstance(graph[a], dict) else []
            detail = f": {', '.join(syms[:4])}" if syms else ""
            out.append(f"layer break ({why}): {a} {what} {b}{detail}")
    return out


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    src, objs = sys.argv[1], object_files(sys.argv[2:])
    bad = 0
    inc = include_graph(src)
    for comp in sccs(inc):
        print("include circle: " + " <-> ".join(comp))
        for a in comp:
            for b in sorted(inc[a]):
                if b in comp:
                    print(f"    {a} includes {b}")
        bad += 1
    calls = call_graph(src, objs)
    if not calls:
        print(f"no object files in {' '.join(sys.argv[2:])}")
        return 1
    for comp in sccs(calls):
        print("call circle: " + " <-> ".join(comp))
        for a in comp:
            for b in sorted(calls[a]):
                if b in comp:
                    syms = calls[a][b]
                    more = f", ... ({len(syms)})" if len(syms) > 4 else ""
                    print(f"    {a} -> {b}: {', '.join(syms[:4])}{more}")
        bad += 1
    for line in layer_breaks(inc, "includes") + layer_breaks(calls, "calls"):
        print(line)
        bad += 1
    print(f"check_layers: {len(inc)} files, {len(calls)} objects, {bad} circle(s) and layer break(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
