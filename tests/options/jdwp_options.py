#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The JDK 17 agent's -agentlib:jdwp options, one VM at a time, with the same expectations for
the JDK's own agent (the reference), libddmcjdwp.so on the same HotSpot, and minivm:

    jdwp_options.py jdk    WORKDIR
    jdwp_options.py agent  WORKDIR AGENT.so
    jdwp_options.py minivm WORKDIR MINIVM

The program is JdwpOpts.java (minivm: jdwpopts.mvm): "main running", an OptsError thrown and
caught at 1.5 s, a thread dying of an uncaught OptsError at 3 s, then 20 s of sleep. Checked:
quiet=y (no listening line), timeout= (no debugger: the VM ends; a debugger in time keeps it;
after it leaves the wait starts again; suspend=y: main never runs), allow= (a peer bound to
127.0.0.1 is refused, one bound to 127.0.0.2 is served, on the same port), launch= (the command
gets the transport and the port), onthrow= and onuncaught= (nothing listens and nothing is
launched before the matching throw; both after it), strict=y (accepted), oncaught= (refused: the
JDK has no such option). Exits 0 when every check holds, 1 with the outputs otherwise."""
import os
import re
import shutil
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT_BODY = '#!/bin/sh\necho "$@" >> "$0.log"\n'


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def handshake(port, src="127.0.0.1", timeout=2.0):
    """True when a JDWP handshake from src to 127.0.0.1:port completes."""
    try:
        with socket.socket() as s:
            s.settimeout(timeout)
            s.bind((src, 0))
            s.connect(("127.0.0.1", port))
            s.sendall(b"JDWP-Handshake")
            got = b""
            while len(got) < 14:
                d = s.recv(14 - len(got))
                if not d:
                    break
                got += d
            return got == b"JDWP-Handshake"
    except OSError:
        return False


def handshake_within(port, seconds, src="127.0.0.1"):
    end = time.time() + seconds
    while time.time() < end:
        if handshake(port, src):
            return True
        time.sleep(0.2)
    return False


class Vm:
    def __init__(self, kind, work, tool):
        self.kind, self.work, self.tool = kind, work, tool
        self.n = 0
        if kind != "minivm":
            self.classes = os.path.join(work, "classes")
            os.makedirs(self.classes, exist_ok=True)
            subprocess.run(["javac", "-g", "-d", self.classes, os.path.join(HERE, "JdwpOpts.java")], check=True)

    def start(self, opts):
        self.n += 1
        out = open(os.path.join(self.work, f"{self.kind}-{self.n}.out"), "w+")
        if self.kind == "jdk":
            cmd = ["java", f"-agentlib:jdwp={opts}", "-cp", self.classes, "JdwpOpts"]
        elif self.kind == "agent":
            cmd = ["java", f"-agentpath:{self.tool}={opts}", "-cp", self.classes, "JdwpOpts"]
        else:
            cmd = [self.tool, f"-agentlib:jdwp={opts}", os.path.join(HERE, "jdwpopts.mvm")]
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
        p.out = out
        p.cmd = " ".join(cmd)
        return p


def output(p):
    p.out.flush()
    p.out.seek(0)
    return p.out.read()


def stop(p):
    if p.poll() is None:
        p.kill()
    p.wait()


def ends_within(p, seconds):
    try:
        p.wait(timeout=seconds)
        return True
    except subprocess.TimeoutExpired:
        return False


def wait_for_line(p, text, seconds=20):
    end = time.time() + seconds
    while time.time() < end and p.poll() is None:
        if text in output(p):
            return True
        time.sleep(0.05)
    return text in output(p)


LISTENING = re.compile(r"Listening for transport dt_socket at address: \d+|JDWP listening on \S+:\d+")


def launcher(work, name):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        f.write(SCRIPT_BODY)
    os.chmod(path, 0o755)
    if os.path.exists(path + ".log"):
        os.remove(path + ".log")
    return path


def launched(path):
    try:
        with open(path + ".log") as f:
            return f.read().split()
    except FileNotFoundError:
        return None


def scenarios(vm, work):
    base = "transport=dt_socket,server=y,suspend=n"
    checks = []

    def run(name, opts, body):
        p = vm.start(opts)
        try:
            for what, ok in body(p):
                checks.append((f"{name}: {what}", ok, p))
        finally:
            stop(p)

    port = free_port()
    run("plain", f"{base},address=127.0.0.1:{port}", lambda p: [
        ("serves a debugger", handshake_within(port, 8)),
        ("prints the listening line", LISTENING.search(output(p)) is not None)])
    port = free_port()
    run("quiet=y", f"{base},address=127.0.0.1:{port},quiet=y", lambda p: [
        ("serves a debugger", handshake_within(port, 8)),
        ("prints no listening line", LISTENING.search(output(p)) is None)])

    run("timeout=1500", f"{base},address=127.0.0.1:{free_port()},timeout=1500", lambda p: [
        ("no debugger: the VM ends", ends_within(p, 10)),
        ("says it timed out", re.search(r"time[sd]? ?out|timeout", output(p), re.I) is not None)])

    def timeout_kept(p, port):
        s = None
        end = time.time() + 15  # the VM's 3 s count from its listening: connect as soon as it listens
        while s is None and time.time() < end:  # one connection that stays attached past the timeout
            try:
                s = socket.create_connection(("127.0.0.1", port), timeout=2)
                s.sendall(b"JDWP-Handshake")
                if s.recv(14) != b"JDWP-Handshake":
                    s.close()
                    s = None
            except OSError:
                s = None
                time.sleep(0.02)
        ok = [("a debugger in time is served", s is not None)]
        if s is not None:
            time.sleep(4.5)
            ok.append(("alive while the debugger stays past the timeout", p.poll() is None))
            s.close()
        ok.append(("after it leaves the wait starts again and ends the VM", ends_within(p, 10)))
        return ok
    port = free_port()
    run("timeout=3000 attached", f"{base},address=127.0.0.1:{port},timeout=3000", lambda p: timeout_kept(p, port))

    run("timeout=1500 suspend=y", f"transport=dt_socket,server=y,suspend=y,address=127.0.0.1:{free_port()},timeout=1500",
        lambda p: [("the VM ends", ends_within(p, 10)), ("main never ran", "main running" not in output(p))])

    port = free_port()
    run("allow=127.0.0.2", f"{base},address=127.0.0.1:{port},allow=127.0.0.2", lambda p: [
        ("a listed peer is served", handshake_within(port, 8, "127.0.0.2")),
        ("an unlisted peer is refused", not handshake(port, "127.0.0.1")),
        ("a listed peer is still served after that", handshake_within(port, 5, "127.0.0.2"))])
    port = free_port()
    run("allow=127.0.0.0/8", f"{base},address=127.0.0.1:{port},allow=127.0.0.0/8", lambda p: [
        ("a peer in the mask is served", handshake_within(port, 8, "127.0.0.1"))])

    script = launcher(work, f"{vm.kind}-launch.sh")
    port = free_port()

    def launch_at_start(p):
        handshake_within(port, 30)  # a loaded machine (the sanitizer builds) starts a JVM slowly
        end = time.time() + 30  # the launched command runs beside the VM: give it time to write
        while not launched(script) and time.time() < end:  # the shell creates the file, then writes
            time.sleep(0.1)
        return [("the command got the transport and the port", launched(script) == ["dt_socket", str(port)])]
    run("launch=", f"{base},address=127.0.0.1:{port},launch={script}", launch_at_start)

    def deferred(p, port, script, before, after):
        # Paced by the program's own lines, not by the clock: a loaded machine starts a JVM late.
        ok = [(f"the program printed '{before}'", wait_for_line(p, before))]
        ok += [("nothing launched before the throw", launched(script) is None),
               ("nothing listens before the throw", not handshake(port, timeout=0.5))]
        ok.append((f"the program printed '{after}'", wait_for_line(p, after)))
        end = time.time() + 10
        while not launched(script) and time.time() < end:  # the shell creates the file, then writes
            time.sleep(0.1)
        ok += [("launched at the throw with the transport and the port", launched(script) == ["dt_socket", str(port)]),
               ("serves a debugger after the throw", handshake_within(port, 5)),
               ("the program goes on", p.poll() is None)]
        return ok
    script = launcher(work, f"{vm.kind}-onthrow.sh")
    port = free_port()
    run("onthrow=OptsError", f"{base},address=127.0.0.1:{port},onthrow=OptsError,launch={script}",
        lambda p: deferred(p, port, script, "main running", "caught"))
    script2 = launcher(work, f"{vm.kind}-onuncaught.sh")
    port2 = free_port()
    run("onuncaught=y", f"{base},address=127.0.0.1:{port2},onuncaught=y,launch={script2}",
        lambda p: deferred(p, port2, script2, "caught", "uncaught in Dier"))

    port = free_port()
    run("strict=y", f"{base},address=127.0.0.1:{port},strict=y,stdalloc=y", lambda p: [
        ("accepted: serves a debugger", handshake_within(port, 8))])
    run("oncaught=y", f"{base},address=127.0.0.1:{free_port()},oncaught=y", lambda p: [
        ("refused: the VM does not start", ends_within(p, 15) and p.returncode != 0),
        ("main never ran", "main running" not in output(p))])
    return checks


def main():
    kind, work = sys.argv[1], sys.argv[2]
    tool = sys.argv[3] if len(sys.argv) > 3 else None
    if kind != "minivm" and (not shutil.which("java") or not shutil.which("javac")):
        print("FAIL: java/javac missing (scripts/setup.sh installs default-jdk-headless)")
        return 1
    work = os.path.join(work, f"jdwp-options-{kind}")
    os.makedirs(work, exist_ok=True)
    checks = scenarios(Vm(kind, work, tool), work)
    failed = [(n, p) for n, ok, p in checks if not ok]
    for n, ok, _ in checks:
        print(("ok   " if ok else "FAIL ") + n)
    for n, p in failed:
        print(f"--- {n}\n$ {p.cmd}\n{output(p)}")
    print(f"{len(checks) - len(failed)} passed, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
