#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Debugger names on minivm, a raw JDWP client against programs/names.mvm: minivm's
bridge has release_ref, so the library holds names weakly as the JDK's agent does. The program
builds Names.arr (object[1000] of int[16]); the client names the array and its elements, pins
one (DisableCollection) and disposes of another; the program then replaces the array and
collects: the pinned element survives (IsCollected false, ArrayReference.Length answers), the
others are freed (IsCollected true, INVALID_OBJECT). The client names the new array and its
1000 elements and leaves; a second session sends VirtualMachine.Exit, where minivm prints how
many names the library released: one at the disposal, then every name it still held at the end
of the first session (the pinned one, the new array and its elements), none that is no object.

usage: names.py MINIVM NAMES.MVM"""
import os
import re
import struct
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tests", "hotspot"))
from names_agent import Jdwp, dispose, get_elements, collected, length_err, INVALID_OBJECT  # noqa: E402


def wait_for(path, what, vm, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = open(path, errors="replace").read()
        if re.search(what, text):
            return text
        if vm.poll() is not None:
            break
        time.sleep(0.05)
    return None


def names_class(j):
    body = j.ok(1, 2, struct.pack(">I", 7) + b"LNames;")
    ref = struct.unpack(">Q", body[5:13])[0]
    fields = j.ok(2, 4, struct.pack(">Q", ref))
    off = 4
    for _ in range(struct.unpack(">I", fields[:4])[0]):
        f = struct.unpack(">Q", fields[off:off + 8])[0]
        ln = struct.unpack(">I", fields[off + 8:off + 12])[0]
        name = fields[off + 12:off + 12 + ln].decode()
        off += 12 + ln
        off += 4 + struct.unpack(">I", fields[off:off + 4])[0] + 4
        if name == "arr":
            return ref, f
    raise RuntimeError("no field arr")


def static_arr(j, ref, fid):
    return struct.unpack(">Q", j.ok(2, 6, struct.pack(">QIQ", ref, 1, fid))[5:13])[0]


def main():
    minivm, program = sys.argv[1:3]
    log = tempfile.NamedTemporaryFile(prefix="minivm-names-", suffix=".log", delete=False).name
    with open(log, "wb") as out:
        vm = subprocess.Popen([minivm, "-agentlib:jdwp=transport=dt_socket,address=127.0.0.1:0,server=y,suspend=n",
                               program], stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    checks = []
    try:
        text = wait_for(log, r"listening on 127\.0\.0\.1:\d+[\s\S]*ready", vm)
        if text is None:
            print("FAIL: minivm did not come up\n" + open(log).read())
            return 1
        port = re.search(r"listening on 127\.0\.0\.1:(\d+)", text).group(1)
        j = Jdwp(port)
        ref, fid = names_class(j)
        arr = static_arr(j, ref, fid)
        err, ids = get_elements(j, arr, 0, 1000)
        checks.append(("the 1000 elements named", err == 0 and len(ids) == 1000 and 0 not in ids))
        pinned, disposed, plain = ids[0], ids[1], ids[2]
        j.ok(9, 7, struct.pack(">Q", pinned))
        dispose(j, {disposed: 1})
        checks.append(("the program replaced the array and collected", wait_for(log, "rotated", vm) is not None))
        checks.append(("pinned: not collected", collected(j, pinned) == 0))
        checks.append(("pinned: ArrayReference.Length answers", length_err(j, pinned) == 0))
        checks.append(("unpinned: collected", collected(j, plain) == 1 and collected(j, arr) == 1))
        checks.append(("unpinned: INVALID_OBJECT", length_err(j, plain) == INVALID_OBJECT))
        arr2 = static_arr(j, ref, fid)
        err, ids2 = get_elements(j, arr2, 0, 1000)
        checks.append(("the new elements named", err == 0 and 0 not in ids2 and pinned not in ids2))
        j.close()
        time.sleep(0.5)
        j2 = Jdwp(port)
        j2.s.sendall(struct.pack(">IIBBBi", 15, 1000, 0, 1, 10, 0))  # VirtualMachine.Exit(0)
        vm.wait(timeout=20)
        text = open(log, errors="replace").read()
        m = re.search(r"debugger names: (\d+) released, (\d+) unknown, (\d+) held strong", text)
        released, unknown, strong = (int(x) for x in m.groups()) if m else (-1, -1, -1)
        print(f"     released {released}, unknown {unknown}, held strong {strong}")
        # 1 disposed of, then at the first session's end: the pinned one, the new array, its elements.
        checks.append(("every name released once: 1 + 1 + 1 + 1000", released == 1003))
        checks.append(("no release of something that is no object", unknown == 0))
        checks.append(("DisableCollection held one object strong", strong == 1))
    except (OSError, EOFError, RuntimeError, AssertionError, subprocess.TimeoutExpired) as e:
        checks.append((f"the sessions ran ({e!r})", False))
    finally:
        if vm.poll() is None:
            vm.kill()
            vm.wait()
    for name, ok in checks:
        print(("ok   " if ok else "FAIL ") + name)
    if not all(ok for _, ok in checks):
        print(open(log, errors="replace").read()[-3000:])
        return 1
    os.unlink(log)
    return 0


if __name__ == "__main__":
    sys.exit(main())
