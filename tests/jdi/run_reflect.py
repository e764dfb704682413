#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ReflectClient.java (the JDK's JDI) reads bytecodes, constant pools, modules and strata;
python3 standard library only.

  run_reflect.py --target jvm [--jvm-agent PATH] --workdir DIR
  run_reflect.py --target minivm --minivm BIN --workdir DIR

jvm: Reflect.java compiled by javac; JspPage.class then gets a SourceDebugExtension attribute (an
SMAP with a JSP stratum: page.jsp line 1 is Reflect.java lines 32-33, 2 is 34, 3 is 35) from
add_smap below, as a
JSP compiler or kotlinc writes one; JspLater, loaded once the client asks, gets one too (for
ClassPrepare requests filtered by source name). The program runs under the JDK's -agentlib:jdwp (the
reference), or with --jvm-agent under libddmcjdwp.so: the same client, the same expectations.
minivm: examples/minivm/programs/ide.mvm: bytecodes in minivm's encoding, the rest refused.
A missing JDK is a failure.
"""
import argparse
import os
import re
import shutil
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from run_jdi import Reader, tail  # noqa: E402

# Stratum JSP (the default): page.jsp line 1 is Reflect.java lines 32-33, line 2 is 34, line 3 is
# 35. Stratum Kt: page.kt lines 1-4 are Reflect.java lines 32-35, one for one.
SMAP = ("SMAP\nReflect.java\nJSP\n*S JSP\n*F\n+ 1 page.jsp\npage.jsp\n*L\n1#1:32,2\n2:34\n3:35\n"
        "*S Kt\n*F\n1 page.kt\n*L\n1#1,4:32\n*E\n")
# JspLater's: its source names for ClassPrepare's SourceNameMatch are Later_jsp.java (the output
# file) and later.jsp (its path, web/later.jsp, is not one).
SMAP_LATER = "SMAP\nLater_jsp.java\nJSP\n*S JSP\n*F\n+ 1 later.jsp\nweb/later.jsp\n*L\n1#1:45\n*E\n"


def skip_cp(b, pos, count):
    """The offset after a constant pool of count - 1 entries starting at pos."""
    i = 1
    while i < count:
        tag = b[pos]
        pos += 1
        if tag == 1:
            pos += 2 + struct.unpack_from(">H", b, pos)[0]
        elif tag in (3, 4, 9, 10, 11, 12, 17, 18):
            pos += 4
        elif tag in (5, 6):
            pos += 8
            i += 1  # two slots
        elif tag in (7, 8, 16, 19, 20):
            pos += 2
        elif tag == 15:
            pos += 3
        else:
            raise ValueError("constant pool tag %d" % tag)
        i += 1
    return pos


def skip_members(b, pos):
    """The offset after a fields_count / methods_count table at pos."""
    n = struct.unpack_from(">H", b, pos)[0]
    pos += 2
    for _ in range(n):
        pos += 6
        na = struct.unpack_from(">H", b, pos)[0]
        pos += 2
        for _ in range(na):
            pos += 6 + struct.unpack_from(">I", b, pos + 2)[0]
    return pos


def add_smap(path, smap):
    """Adds a SourceDebugExtension attribute holding smap to the class file at path: a new Utf8
    constant for the attribute's name at the pool's end, the attribute after the class's own."""
    b = bytearray(open(path, "rb").read())
    count = struct.unpack_from(">H", b, 8)[0]
    end = skip_cp(b, 10, count)
    name = b"SourceDebugExtension"
    b[end:end] = b"\x01" + struct.pack(">H", len(name)) + name
    struct.pack_into(">H", b, 8, count + 1)
    pos = end + 3 + len(name) + 6
    pos += 2 + 2 * struct.unpack_from(">H", b, pos)[0]  # interfaces
    pos = skip_members(b, skip_members(b, pos))  # fields, methods
    nattr = struct.unpack_from(">H", b, pos)[0]
    struct.pack_into(">H", b, pos, nattr + 1)
    data = smap.encode()
    b += struct.pack(">HI", count, len(data)) + data  # the new constant's index is the old count
    open(path, "wb").write(b)


def main():
    ap = argparse.ArgumentParser(description="ReflectClient against Reflect or ide.mvm (see the docstring)")
    ap.add_argument("--target", choices=("jvm", "minivm"), required=True)
    ap.add_argument("--jvm-agent")
    ap.add_argument("--minivm")
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--timeout", type=float, default=120.0)
    args = ap.parse_args()
    java, javac = shutil.which("java"), shutil.which("javac")
    if not java or not javac:
        print("FAIL: java/javac missing (Debian package default-jdk-headless; scripts/setup.sh installs it)")
        return 1
    work = os.path.join(args.workdir, "reflect-" + args.target + ("-agent" if args.jvm_agent else ""))
    shutil.rmtree(work, ignore_errors=True)
    classes = os.path.join(work, "classes")
    os.makedirs(classes)
    srcs = [os.path.join(HERE, "ReflectClient.java")] + ([os.path.join(HERE, "Reflect.java")] if args.target == "jvm" else [])
    r = subprocess.run([javac, "-g", "-nowarn", "-d", classes, *srcs], capture_output=True, timeout=180)
    if r.returncode != 0:
        print("FAIL: javac failed:\n" + r.stdout.decode() + r.stderr.decode())
        return 1
    opts = "transport=dt_socket,server=y,suspend=n,address=127.0.0.1:0"
    if args.target == "jvm":
        add_smap(os.path.join(classes, "JspPage.class"), SMAP)
        add_smap(os.path.join(classes, "JspLater.class"), SMAP_LATER)
        agent = "-agentlib:jdwp=" + opts
        if args.jvm_agent:
            if not os.path.isfile(args.jvm_agent):
                print(f"FAIL: no agent at {args.jvm_agent}")
                return 1
            agent = f"-agentpath:{os.path.abspath(args.jvm_agent)}={opts}"
        cmd = [java, agent, "-cp", classes, "Reflect"]
        listen, ready = re.compile(r"Listening for transport dt_socket at address: (\d+)"), "ready"
    else:
        if not args.minivm or not os.access(args.minivm, os.X_OK):
            print(f"FAIL: minivm not built at {args.minivm}")
            return 1
        cmd = [args.minivm, "-agentlib:jdwp=" + opts, os.path.join(ROOT, "examples", "minivm", "programs", "ide.mvm")]
        listen, ready = re.compile(r"JDWP listening on 127\.0\.0\.1:(\d+)"), ""
    vm = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = Reader(vm.stdout), Reader(vm.stderr)
    ok, client = False, ""
    try:
        deadline = time.monotonic() + 60
        port = None
        while time.monotonic() < deadline and vm.poll() is None:
            m = listen.search(out.get() + err.get())
            if m and ready in out.get():
                port = int(m.group(1))
                break
            time.sleep(0.02)
        if port is None:
            client = "the VM announced no port (or the program never got ready)"
        else:
            argv = [java, "-cp", classes, "ReflectClient", args.target, "127.0.0.1", str(port)]
            if args.target == "jvm":
                argv.append(classes)
            try:
                c = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   timeout=args.timeout)
                client = c.stdout.decode(errors="replace")
                ok = c.returncode == 0 and "all checks passed" in client
            except subprocess.TimeoutExpired as e:
                client = (e.stdout or b"").decode(errors="replace") + "\n(the client did not finish in time)"
            time.sleep(0.3)
            if ok and vm.poll() is not None:
                ok = False
                client += f"\nthe VM is no longer running after the client left (status {vm.poll()})"
    finally:
        if vm.poll() is None:
            vm.kill()
        vm.wait()
    if ok:
        print(client)
        print(f"PASS: ReflectClient against {args.target}")
        shutil.rmtree(work, ignore_errors=True)
        return 0
    print(f"FAIL: ReflectClient against {args.target}\n==== client\n{client}\n"
          f"==== program stdout (last 20 lines)\n{tail(out.get(), 20)}\n"
          f"==== VM stderr (last 40 lines)\n{tail(err.get(), 40)}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
