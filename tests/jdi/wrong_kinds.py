#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""IDs of the wrong kind, over raw JDWP: the errors the JDK's agent answers; python3 standard library only.

  wrong_kinds.py --target jvm [--jvm-agent PATH] --workdir DIR
  wrong_kinds.py --target minivm --minivm BIN --workdir DIR

Invoke (tests/jdi/Invoke.java on the JDK, examples/minivm/programs/invoke.mvm on minivm) runs with
suspend=n. A client sends ReferenceType, ClassType, ArrayType, ThreadReference,
ThreadGroupReference, StringReference, ArrayReference, ClassLoaderReference and
ClassObjectReference commands with a thread, a string, an array or a class where another kind
belongs, and checks each error against what the JDK's own agent (libjdwp) answers: INVALID_CLASS
for an object where a referenceTypeID belongs, INVALID_THREAD, INVALID_THREAD_GROUP,
INVALID_STRING, INVALID_ARRAY, INVALID_CLASS_LOADER for the other commands' objects.

The memory view (InstanceCounts, Instances, ReferringObjects): the wrong kind of ID, an unknown
one, a negative count or max, as libjdwp answers; InstanceCounts naming no class (libjdwp answers
NONE there, JDWP lists INVALID_CLASS) and a class count past the library's bound or the request's
length: libddmc only.

Reflection: Method.Bytecodes, ReferenceType.ConstantPool and ReferenceType.Module with an object
where a class belongs (INVALID_CLASS), ModuleReference.Name / ClassLoader with an ID that names
nothing (INVALID_MODULE, as libjdwp), and, ours only, with null, a thread or a string (libjdwp
calls Module.getName() on them unchecked): INVALID_MODULE. minivm has no modules: NOT_IMPLEMENTED.

ThreadReference.Stop with an object that is no Throwable: libddmc answers INVALID_CLASS and never
hands it to the VM; the VM must then answer the next command and run on. libjdwp hands it to
JVM TI's StopThread, which HotSpot does not check, and the JVM dies of SIGSEGV soon after: under
the JDK's agent (--target jvm without --jvm-agent) that case is not sent.

Every check runs the same way under the JDK's agent, under libddmcjdwp.so on the same JVM and on
minivm. Exits 0 when every check passes, 1 otherwise (a missing JDK is a failure).
"""
import argparse
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

INVALID_THREAD, INVALID_THREAD_GROUP, INVALID_OBJECT, INVALID_CLASS = 10, 11, 20, 21
INVALID_STRING, INVALID_CLASS_LOADER, INVALID_ARRAY = 506, 507, 508
ILLEGAL_ARGUMENT, INVALID_LENGTH = 103, 504
INVALID_MODULE, NOT_IMPLEMENTED = 42, 99
NAMES = {0: "NONE", 10: "INVALID_THREAD", 11: "INVALID_THREAD_GROUP", 20: "INVALID_OBJECT", 21: "INVALID_CLASS",
         42: "INVALID_MODULE",
         99: "NOT_IMPLEMENTED", 103: "ILLEGAL_ARGUMENT", 506: "INVALID_STRING", 507: "INVALID_CLASS_LOADER",
         504: "INVALID_LENGTH", 508: "INVALID_ARRAY"}


class Jdwp:
    """A JDWP client: one command at a time; events that arrive meanwhile are dropped."""

    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=20)
        self.s.sendall(b"JDWP-Handshake")
        if self._exact(14) != b"JDWP-Handshake":
            raise RuntimeError("no JDWP handshake")
        self.next_id = 1

    def _exact(self, n):
        got = b""
        while len(got) < n:
            chunk = self.s.recv(n - len(got))
            if not chunk:
                raise RuntimeError("the VM closed the connection")
            got += chunk
        return got

    def cmd(self, cset, cmd, data=b""):
        """(error, reply data) of one command."""
        pid = self.next_id
        self.next_id += 1
        self.s.sendall(struct.pack(">IIBBB", 11 + len(data), pid, 0, cset, cmd) + data)
        while True:
            length, rid, flags = struct.unpack(">IIB", self._exact(9))
            rest = self._exact(length - 9)
            if flags & 0x80 and rid == pid:
                return struct.unpack(">H", rest[:2])[0], rest[2:]


    def event(self, timeout=20):
        """The next composite event: (kind, requestID, threadID) of its first event."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            length, rid, flags, cset, cmd = struct.unpack(">IIBBB", self._exact(11))
            rest = self._exact(length - 11)
            if not flags & 0x80 and (cset, cmd) == (64, 100):
                kind, req, thread = struct.unpack(">BIQ", rest[5:18])
                return kind, req, thread
        raise RuntimeError("no event within %d s" % timeout)


def jstr(s):
    b = s.encode()
    return struct.pack(">I", len(b)) + b


def ident(x):
    return struct.pack(">Q", x)


def first_id(data):
    return struct.unpack(">Q", data[:8])[0]


def need(conn, cset, cmd, data, what):
    err, reply = conn.cmd(cset, cmd, data)
    if err != 0:
        raise RuntimeError("%s: error %d" % (what, err))
    return reply


def class_id(conn, sig):
    reply = need(conn, 1, 2, jstr(sig), "ClassesBySignature " + sig)
    if struct.unpack(">I", reply[:4])[0] < 1:
        raise RuntimeError("no class " + sig)
    return struct.unpack(">Q", reply[5:13])[0]


def rd_str(data, at):
    n = struct.unpack(">I", data[at:at + 4])[0]
    return data[at + 4:at + 4 + n].decode(errors="replace"), at + 4 + n


def method_id(conn, cls, name):
    reply = need(conn, 2, 5, ident(cls), "ReferenceType.Methods")
    at = 4
    for _ in range(struct.unpack(">I", reply[:4])[0]):
        mid = struct.unpack(">Q", reply[at:at + 8])[0]
        mname, at = rd_str(reply, at + 8)
        _, at = rd_str(reply, at)
        at += 4
        if mname == name:
            return mid
    raise RuntimeError("no method " + name)


def plain_object(conn, cls):
    """An Item, the argument of Invoke.hit, read at a breakpoint there (main then stays suspended
    until the caller resumes it): (main's threadID, the Item's objectID)."""
    hit = method_id(conn, cls, "hit")
    start = struct.unpack(">q", need(conn, 6, 1, ident(cls) + ident(hit), "Method.LineTable")[:8])[0]
    req = struct.unpack(">I", need(conn, 15, 1, bytes([2, 1]) + struct.pack(">I", 1) + bytes([7, 1]) + ident(cls) +
                                   ident(hit) + struct.pack(">q", start), "EventRequest.Set breakpoint")[:4])[0]
    kind, _, thread = conn.event()
    need(conn, 15, 2, bytes([2]) + struct.pack(">I", req), "EventRequest.Clear")
    if kind != 2:
        raise RuntimeError("event kind %d where a breakpoint was due" % kind)
    table = need(conn, 6, 2, ident(cls) + ident(hit), "Method.VariableTable")
    slot, at = None, 8
    for _ in range(struct.unpack(">I", table[4:8])[0]):
        vname, at = rd_str(table, at + 8)
        _, at = rd_str(table, at)
        if vname == "it":
            slot = struct.unpack(">I", table[at + 4:at + 8])[0]
        at += 8
    if slot is None:
        raise RuntimeError("hit has no variable 'it'")
    frame = struct.unpack(">Q", need(conn, 11, 6, ident(thread) + struct.pack(">ii", 0, 1), "Frames")[4:12])[0]
    value = need(conn, 16, 1, ident(thread) + ident(frame) + struct.pack(">IIB", 1, slot, ord("L")), "GetValues")
    return thread, struct.unpack(">Q", value[5:13])[0]


def ids(conn):
    """The IDs of each kind the checks use."""
    sizes = struct.unpack(">5I", need(conn, 1, 7, b"", "IDSizes"))
    if sizes != (8, 8, 8, 8, 8):
        raise RuntimeError("ID sizes %r: this client speaks 8-byte IDs" % (sizes,))
    reply = need(conn, 1, 4, b"", "AllThreads")
    thread = struct.unpack(">Q", reply[4:12])[0]
    k = {"thread": thread}
    k["group"] = first_id(need(conn, 11, 5, ident(thread), "ThreadReference.ThreadGroup"))
    k["string"] = first_id(need(conn, 1, 11, jstr("not a Throwable"), "CreateString"))
    k["class"] = class_id(conn, "LInvoke;")
    k["class_object"] = first_id(need(conn, 2, 11, ident(k["class"]), "ReferenceType.ClassObject"))
    int_array = class_id(conn, "[I")
    k["array"] = struct.unpack(">Q", need(conn, 4, 1, ident(int_array) + struct.pack(">i", 3),
                                          "ArrayType.NewInstance int[3]")[1:9])[0]
    k["int_array"] = int_array
    k["object"] = class_id(conn, "Ljava/lang/Object;")
    k["main"], k["plain"] = plain_object(conn, k["class"])
    return k


def reflect_checks(k, ours_only, modules):
    """Bytecodes, constant pool and modules with IDs of the wrong kind. A moduleID that names
    nothing is INVALID_MODULE under libjdwp; null and objects that are no module it hands to
    Module.getName() unchecked, ours answer INVALID_MODULE. A VM without modules (minivm):
    NOT_IMPLEMENTED for any."""
    t, s = k["thread"], k["string"]
    out = [("Method.Bytecodes with a thread ID for the class", 6, 3, ident(t) + ident(1), INVALID_CLASS),
           ("ReferenceType.ConstantPool with a string ID", 2, 18, ident(s), INVALID_CLASS),
           ("ReferenceType.Module with a thread ID", 2, 19, ident(t), INVALID_CLASS if modules else NOT_IMPLEMENTED)]
    for name, cmd in (("Name", 1), ("ClassLoader", 2)):
        out.append(("ModuleReference.%s with an unknown ID" % name, 18, cmd, ident(0x7FFF0000FFFF),
                    INVALID_MODULE if modules else NOT_IMPLEMENTED))
        if ours_only:
            for kind, obj in (("null", 0), ("thread", t), ("string", s)):
                out.append(("ModuleReference.%s with a %s ID" % (name, kind), 18, cmd, ident(obj),
                            INVALID_MODULE if modules else NOT_IMPLEMENTED))
    return out


def checks(k, ours_only, modules):
    """(what, command set, command, data, the error expected) of every check."""
    t, s, a, c, g = k["thread"], k["string"], k["array"], k["class"], k["group"]
    out = reflect_checks(k, ours_only, modules)
    for kind, obj in (("thread", t), ("string", s), ("array", a), ("thread group", g)):
        for name, cset, cmd, extra in (("ReferenceType.Signature", 2, 1, b""),
                                       ("ReferenceType.Fields", 2, 4, b""),
                                       ("ReferenceType.Methods", 2, 5, b""),
                                       ("ReferenceType.Interfaces", 2, 10, b""),
                                       ("ReferenceType.ClassObject", 2, 11, b""),
                                       ("ClassType.Superclass", 3, 1, b""),
                                       ("ClassType.SetValues", 3, 2, struct.pack(">i", 0)),
                                       ("ArrayType.NewInstance", 4, 1, struct.pack(">i", 1))):
            out.append(("%s with a %s ID" % (name, kind), cset, cmd, ident(obj) + extra, INVALID_CLASS))
    out.append(("ClassType.InvokeMethod with a thread ID for the class", 3, 3,
                ident(t) + ident(t) + ident(0) + struct.pack(">i", 0) + struct.pack(">i", 0), INVALID_CLASS))
    out.append(("ClassType.NewInstance with a string ID for the class", 3, 4,
                ident(s) + ident(t) + ident(0) + struct.pack(">i", 0) + struct.pack(">i", 0), INVALID_CLASS))
    out.append(("InterfaceType.InvokeMethod with a thread ID for the interface", 5, 1,
                ident(t) + ident(t) + ident(0) + struct.pack(">i", 0) + struct.pack(">i", 0), INVALID_CLASS))
    # EventRequest.Set modifiers naming a class: ClassOnly, ExceptionOnly, LocationOnly, FieldOnly.
    one = struct.pack(">i", 1)
    for name, kind, mod in (("ClassOnly", 8, bytes([4]) + ident(t)),
                            ("ExceptionOnly", 4, bytes([8]) + ident(t) + bytes([1, 1])),
                            ("LocationOnly", 2, bytes([7, 1]) + ident(t) + ident(1) + struct.pack(">q", 0)),
                            ("FieldOnly", 20, bytes([9]) + ident(t) + ident(1))):
        out.append(("EventRequest.Set with %s naming a thread for the class" % name, 15, 1,
                    bytes([kind, 0]) + one + mod, INVALID_CLASS))
    # An ID that names nothing: JDWP's "not a known ID", INVALID_OBJECT; null: INVALID_CLASS.
    out.append(("ReferenceType.Signature with an unknown ID", 2, 1, ident(0x7FFF0000FFFF), INVALID_OBJECT))
    out.append(("ClassType.Superclass with an unknown ID", 3, 1, ident(0x7FFF0000FFFF), INVALID_OBJECT))
    out.append(("ReferenceType.Signature with null", 2, 1, ident(0), INVALID_CLASS))
    for kind, obj in (("string", s), ("array", a), ("thread group", g)):
        out.append(("ThreadReference.Name with a %s ID" % kind, 11, 1, ident(obj), INVALID_THREAD))
    out.append(("ThreadReference.Name with a class's ID", 11, 1, ident(c), INVALID_THREAD))
    for kind, obj in (("thread", t), ("string", s)):
        out.append(("ThreadGroupReference.Name with a %s ID" % kind, 12, 1, ident(obj), INVALID_THREAD_GROUP))
    for kind, obj in (("thread", t), ("array", a)):
        out.append(("StringReference.Value with a %s ID" % kind, 10, 1, ident(obj), INVALID_STRING))
    for kind, obj in (("thread", t), ("string", s)):
        out.append(("ArrayReference.Length with a %s ID" % kind, 13, 1, ident(obj), INVALID_ARRAY))
    for kind, obj in (("thread", t), ("string", s)):
        out.append(("ClassLoaderReference.VisibleClasses with a %s ID" % kind, 14, 1, ident(obj), INVALID_CLASS_LOADER))
    # The memory view (canGetInstanceInfo): a wrong kind, an unknown ID, a negative count or max, a
    # count the request cannot hold.
    unknown = ident(0x7FFF0000FFFF)
    out.append(("VirtualMachine.InstanceCounts of -1 classes", 1, 21, struct.pack(">i", -1), ILLEGAL_ARGUMENT))
    out.append(("ReferenceType.Instances with a string ID", 2, 16, ident(s) + one, INVALID_CLASS))
    out.append(("ReferenceType.Instances with max -1", 2, 16, ident(c) + struct.pack(">i", -1), ILLEGAL_ARGUMENT))
    out.append(("ObjectReference.ReferringObjects with an unknown ID", 9, 10, unknown + one, INVALID_OBJECT))
    out.append(("ObjectReference.ReferringObjects with max -1", 9, 10, ident(a) + struct.pack(">i", -1),
                ILLEGAL_ARGUMENT))
    if ours_only:
        # libjdwp answers NONE to InstanceCounts naming no class (its reader's error is lost); JDWP
        # lists INVALID_CLASS, and every other command answers these IDs so.
        out.append(("VirtualMachine.InstanceCounts with a thread ID", 1, 21, one + ident(t), INVALID_CLASS))
        out.append(("VirtualMachine.InstanceCounts with an unknown ID", 1, 21, one + unknown, INVALID_OBJECT))
        # A count past the library's bound (100000 classes), and one the request cannot hold.
        out.append(("VirtualMachine.InstanceCounts of 2^31-1 classes", 1, 21, struct.pack(">i", 0x7FFFFFFF) + ident(c),
                    ILLEGAL_ARGUMENT))
        out.append(("VirtualMachine.InstanceCounts of 50 classes, 1 sent", 1, 21, struct.pack(">i", 50) + ident(c),
                    INVALID_LENGTH))
        # libjdwp takes any object for a class object here and dies (a JDWP exit error); JDWP lists
        # INVALID_OBJECT for it.
        for kind, obj in (("thread", t), ("string", s)):
            out.append(("ClassObjectReference.ReflectedType with a %s ID" % kind, 17, 1, ident(obj), INVALID_OBJECT))
        # libjdwp hands these to JVM TI's StopThread, and HotSpot dies of SIGSEGV.
        for kind, obj in (("string", s), ("array", a), ("thread", t), ("class object", k["class_object"]),
                          ("plain object (an Item)", k["plain"])):
            out.append(("ThreadReference.Stop of main with a %s, no Throwable" % kind, 11, 10, ident(k["main"]) + ident(obj),
                        INVALID_CLASS))
    return out


def main():
    ap = argparse.ArgumentParser(description="IDs of the wrong kind over raw JDWP (see the module docstring)")
    ap.add_argument("--target", choices=("jvm", "minivm"), required=True)
    ap.add_argument("--minivm")
    ap.add_argument("--jvm-agent", help="libddmcjdwp.so (-agentpath) instead of the JDK's -agentlib:jdwp")
    ap.add_argument("--workdir", required=True)
    args = ap.parse_args()
    opts = "transport=dt_socket,server=y,suspend=n,address=127.0.0.1:0"
    work = os.path.join(args.workdir, "wrong-kinds-" + args.target + ("-agent" if args.jvm_agent else ""))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    if args.target == "jvm":
        java, javac = shutil.which("java"), shutil.which("javac")
        if not java or not javac:
            print("FAIL: java/javac missing (Debian package default-jdk-headless; scripts/setup.sh installs it)")
            return 1
        r = subprocess.run([javac, "-g", "-nowarn", "-d", work, os.path.join(HERE, "Invoke.java")], capture_output=True)
        if r.returncode != 0:
            print("FAIL: javac: " + r.stderr.decode(errors="replace"))
            return 1
        if args.jvm_agent and not os.path.isfile(args.jvm_agent):
            print("FAIL: no agent at %s" % args.jvm_agent)
            return 1
        agent = ("-agentpath:%s=%s" % (os.path.abspath(args.jvm_agent), opts)) if args.jvm_agent else "-agentlib:jdwp=" + opts
        cmd = [java, agent, "-cp", work, "Invoke"]
        listen = re.compile(r"Listening for transport dt_socket at address: (\d+)")
    else:
        if not args.minivm or not os.access(args.minivm, os.X_OK):
            print("FAIL: minivm not built at %s" % args.minivm)
            return 1
        cmd = [args.minivm, "-agentlib:jdwp=" + opts, os.path.join(ROOT, "examples", "minivm", "programs", "invoke.mvm")]
        listen = re.compile(r"JDWP listening on 127\.0\.0\.1:(\d+)")
    out_path = os.path.join(work, "vm.out")
    with open(out_path, "wb") as out:
        vm = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT)
    failures = 0
    try:
        port, deadline = None, time.monotonic() + 30
        while port is None and time.monotonic() < deadline and vm.poll() is None:
            with open(out_path, errors="replace") as f:
                m = listen.search(f.read())
            port = int(m.group(1)) if m else None
            time.sleep(0.05)
        if port is None:
            raise RuntimeError("the VM announced no port")
        conn = Jdwp(port)
        k = ids(conn)
        # libjdwp crashes the JVM on the Stop and ReflectedType checks: only ours are asked them.
        for what, cset, cmd_, data, want in checks(k, ours_only=args.target == "minivm" or bool(args.jvm_agent),
                                                   modules=args.target == "jvm"):
            err, _ = conn.cmd(cset, cmd_, data)
            ok = err == want
            failures += not ok
            print("%s - %s: %s%s" % ("ok" if ok else "FAIL", what, NAMES.get(err, str(err)),
                                     "" if ok else " (want %s)" % NAMES.get(want, str(want))))
        # ClassType.Superclass of an array type: java.lang.Object, as libjdwp answers (JNI's
        # GetSuperclass; ART's conformance suite expects it too).
        err, reply = conn.cmd(3, 1, ident(k["int_array"]))
        ok = err == 0 and first_id(reply) == k["object"]
        failures += not ok
        print("%s - ClassType.Superclass of int[]: %s, %s" % ("ok" if ok else "FAIL", NAMES.get(err, str(err)),
                                                           "java.lang.Object" if ok else reply.hex()))
        # ClassesBySignature by name: a primitive type is no class to JDWP (none, as libjdwp
        # answers), an array type is one (the same ID as ever), a name nobody loaded is none.
        for sig, want in (("I", []), ("[I", [k["int_array"]]), ("Lno/Such;", [])):
            err, reply = conn.cmd(1, 2, jstr(sig))
            got = [struct.unpack(">Q", reply[4 + 13 * i + 1:4 + 13 * i + 9])[0]
                   for i in range(struct.unpack(">I", reply[:4])[0])] if err == 0 else None
            ok = got == want
            failures += not ok
            print("%s - ClassesBySignature(%s): %s" % ("ok" if ok else "FAIL", sig, got if err == 0 else NAMES.get(err, err)))
        # The VM answers on, and runs on: main's rounds go on.
        resumed, _ = conn.cmd(11, 3, ident(k["main"]))
        time.sleep(1.0)
        err, reply = conn.cmd(1, 1, b"")
        err = err or resumed
        with open(out_path, errors="replace") as f:
            before = len(re.findall(r"^round \d+$", f.read(), re.M))
        time.sleep(1.0)
        with open(out_path, errors="replace") as f:
            after = len(re.findall(r"^round \d+$", f.read(), re.M))
        ok = err == 0 and vm.poll() is None and after > before
        failures += not ok
        print("%s - afterwards the VM answers VirtualMachine.Version (%s) and runs on (rounds %d -> %d, %s)"
              % ("ok" if ok else "FAIL", NAMES.get(err, str(err)), before, after,
                 "running" if vm.poll() is None else "exited with %s" % vm.poll()))
    except (RuntimeError, OSError) as e:
        print("FAIL - %s" % e)
        failures += 1
    finally:
        if vm.poll() is None:
            vm.kill()
        vm.wait()
    if failures:
        with open(out_path, errors="replace") as f:
            print("==== VM output (last 20 lines)\n" + "\n".join(f.read().splitlines()[-20:]))
        print("FAIL: %d checks failed" % failures)
        return 1
    print("PASS: every ID of the wrong kind answered as the JDK's agent answers")
    shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
