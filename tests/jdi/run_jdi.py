#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""IdeClient.java (JDI, the JDK's own) debugs a VM the way an IDE does; python3 standard library only.

  run_jdi.py --target jvm    --workdir DIR [--timeout S] [--monitors]
  run_jdi.py --target minivm --minivm BIN --workdir DIR [--timeout S] [--monitors]

jvm:    Ide.java on the JDK with -agentlib:jdwp=transport=dt_socket,server=y,suspend=n: the reference
        (with --jvm-agent PATH: the same JVM under libddmc's -agentpath:PATH=..., libddmcjdwp.so)
        that proves IdeClient's expectations are right.
minivm: examples/minivm/programs/ide.mvm (Ide.java line for line) with the same agent options.

--monitors: MonitorClient.java instead, against Watch (tests/jvmti/Watch.java, or watch.mvm) started
with suspend=y: JDWP's monitor events, counted for the program's threads.

--invoke MODE: InvokeClient.java MODE instead, against Invoke (tests/jdi/Invoke.java, or invoke.mvm):
method calls at breakpoints (render, nested; see the client). With kill, the client is killed
(SIGKILL) while its call runs, and the program's output must show both of its threads (main's
rounds, Ticker's ticks) going on afterwards: nothing stays suspended for a debugger that is gone.

--mutate: MutateClient.java against Mutate (tests/jdi/Mutate.java; with --eclipse-jdi too): HotSwap
(Greeter redefined from redefine/Greeter.java, refused from redefine_added/), Drop Frame and Force
Return, with the frames and values the VM shows after each.

--stale-step: StaleStepClient.java against Invoke (with --eclipse-jdi too): a step out asked for a
thread a stale event set's resume left running must be accepted and end, as under the JDK's agent.

--reentry: ReentryClient.java against Reentry.java (suspend=y): method entry and exit requests while
the JVM loads and links a JDK library; each event once, and the program ends with status 0 (an agent
whose callback runs Java code there recursed into itself until HotSpot crashed).

Either way the VM listens on a port it picks (address 127.0.0.1:0); the client attaches there,
runs every check and disconnects; the VM must still be running afterwards. On failure it prints
the client's output, the program's output and the VM's stderr, and exits 1. A missing JDK is a
failure (scripts/setup.sh installs default-jdk-headless). tests/jdb/run_android.py runs the same
client through adb and through ddmlib (run_client below).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


WATCH_JAVA = os.path.join(ROOT, "tests", "jvmti", "Watch.java")


def compile_client(javac, outdir, with_program=False, monitors=False, invoke=False, client="InvokeClient",
                   program="Invoke"):
    """Compiles IdeClient (and Ide.java for the JVM target) into outdir, or MonitorClient (and
    Watch.java), or with invoke the client named (InvokeClient, StaleStepClient: and Invoke.java),
    or ReentryClient (and Reentry.java);
    raises RuntimeError."""
    os.makedirs(outdir, exist_ok=True)
    if client == "ReentryClient":
        srcs = [os.path.join(HERE, client + ".java")] + ([os.path.join(HERE, "Reentry.java")] if with_program else [])
    elif invoke:
        srcs = [os.path.join(HERE, client + ".java")] + ([os.path.join(HERE, program + ".java")] if with_program else [])
    elif client == "MutateClient":
        srcs = [os.path.join(HERE, "MutateClient.java")] + ([os.path.join(HERE, "Mutate.java")] if with_program else [])
        for variant in ("redefine", "redefine_added"):
            r = subprocess.run([javac, "-g", "-nowarn", "-d", os.path.join(outdir, variant),
                                os.path.join(HERE, variant, "Greeter.java")], capture_output=True, timeout=180)
            if r.returncode != 0:
                raise RuntimeError("javac failed:\n" + r.stdout.decode() + r.stderr.decode())
    elif monitors:
        srcs = [os.path.join(HERE, "MonitorClient.java")] + ([WATCH_JAVA] if with_program else [])
    else:
        srcs = [os.path.join(HERE, "IdeClient.java")] + ([os.path.join(HERE, "Ide.java")] if with_program else [])
    r = subprocess.run([javac, "-g", "-nowarn", "-d", outdir, *srcs], capture_output=True, timeout=180)
    if r.returncode != 0:
        raise RuntimeError("javac failed:\n" + r.stdout.decode() + r.stderr.decode())


# Eclipse's JDI (Debian package libeclipse-jdt-debug-java): org.eclipse.jdi.Bootstrap, used without
# OSGi; it needs eclipse-osgi.jar (libeclipse-osgi-java) for its message classes.
ECLIPSE_JARS = ("/usr/share/java/eclipse-jdt-debug.jar", "/usr/share/java/eclipse-osgi.jar")


def eclipse_jdi_args():
    """The client's JVM options that make IdeClient use Eclipse's JDI; raises RuntimeError."""
    missing = [j for j in ECLIPSE_JARS if not os.path.isfile(j)]
    if missing:
        raise RuntimeError("Eclipse's JDI missing: %s (Debian package libeclipse-jdt-debug-java; "
                           "scripts/setup.sh --e2e installs it)" % ", ".join(missing))
    return ("-Dide.bootstrap=org.eclipse.jdi.Bootstrap",), ECLIPSE_JARS


def run_client(java, classes, host, port, timeout, client="IdeClient", pre_args=(), jdi=((), ())):
    """Runs the client against host:port; jdi is (JVM options, extra class path) from
    eclipse_jdi_args() for Eclipse's JDI. Returns (ok, output)."""
    opts, cp = jdi
    try:
        r = subprocess.run([java, *opts, "-cp", os.pathsep.join((classes, *cp)), client, *pre_args, host, str(port)],
                           stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace")
        return False, out + f"\n(IdeClient did not finish within {timeout:g} s)"
    out = r.stdout.decode(errors="replace")
    return r.returncode == 0 and "all checks passed" in out, out


class Reader:
    def __init__(self, pipe):
        self.text = ""
        self.lock = threading.Lock()
        self.t = threading.Thread(target=self._read, args=(pipe,), daemon=True)
        self.t.start()

    def _read(self, pipe):
        for raw in iter(lambda: pipe.readline(), b""):
            with self.lock:
                self.text += raw.decode(errors="replace")

    def get(self):
        with self.lock:
            return self.text


def tail(text, n):
    lines = text.splitlines()
    return "\n".join(lines[-n:])


def last_number(text, word):
    """The last N of the lines 'word N' in text, or -1."""
    found = re.findall(r"^%s (\d+)$" % word, text, re.M)
    return int(found[-1]) if found else -1


def run_killed(java, classes, host, port, timeout, out):
    """InvokeClient kill: killed (SIGKILL) once its call runs; then both of the program's threads
    must go on (the call, slow(2000), ends meanwhile). Returns (ok, output)."""
    c = subprocess.Popen([java, "-cp", classes, "InvokeClient", "kill", host, str(port)], stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    text = Reader(c.stdout)
    deadline = time.monotonic() + timeout
    while "INVOKING" not in text.get() and c.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    if "INVOKING" not in text.get():
        c.kill()
        c.wait()
        return False, text.get() + "\n(the client never started its call)"
    c.kill()  # SIGKILL: an IDE killed while it renders a value
    c.wait()
    report = text.get() + "killed the client during its call (SIGKILL)\n"
    time.sleep(3.0)  # the call (2 s, started before the kill) has ended
    before = (last_number(out.get(), "round"), last_number(out.get(), "tick"))
    time.sleep(1.5)
    after = (last_number(out.get(), "round"), last_number(out.get(), "tick"))
    ok = after[0] > before[0] >= 0 and after[1] > before[1] >= 0
    report += (f"{'ok' if ok else 'FAIL'} - after the call, main's rounds {before[0]} -> {after[0]} and "
               f"Ticker's ticks {before[1]} -> {after[1]} in 1.5 s\n")
    return ok, report


def main():
    ap = argparse.ArgumentParser(description="an IDE's JDI session against Ide (see the module docstring)")
    ap.add_argument("--target", choices=("jvm", "minivm"), required=True)
    ap.add_argument("--minivm")
    ap.add_argument("--jvm-agent", help="--target jvm: the JDWP agent libddmcjdwp.so (-agentpath) instead of "
                                        "the JDK's -agentlib:jdwp")
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--timeout", type=float, default=120.0, help="the client's whole deadline (120 s)")
    ap.add_argument("--monitors", action="store_true", help="MonitorClient against Watch, suspend=y")
    ap.add_argument("--invoke", choices=("render", "nested", "kill"), help="InvokeClient MODE against Invoke")
    ap.add_argument("--stale-step", action="store_true", help="StaleStepClient against Invoke: a step from a "
                                                               "thread a stale event set's resume left running")
    ap.add_argument("--memview", action="store_true", help="MemviewClient against Memview: instanceCounts, "
                                                            "instances, referringObjects")
    ap.add_argument("--mutate", action="store_true", help="MutateClient against Mutate: redefineClasses, "
                                                           "popFrames, forceEarlyReturn")
    ap.add_argument("--reentry", action="store_true", help="ReentryClient against Reentry, suspend=y: method "
                                                            "events while the JVM links a JDK library")
    ap.add_argument("--eclipse-jdi", action="store_true", help="IdeClient on Eclipse's JDI (org.eclipse.jdi.Bootstrap) "
                                                               "instead of the JDK's")
    args = ap.parse_args()
    java, javac = shutil.which("java"), shutil.which("javac")
    if not java or not javac:
        print("FAIL: java/javac missing (Debian package default-jdk-headless; scripts/setup.sh installs it)")
        return 1
    jdi = ((), ())
    if args.eclipse_jdi:
        if args.monitors or args.invoke:
            print("FAIL: --eclipse-jdi runs IdeClient and StaleStepClient only")
            return 1
        try:
            jdi = eclipse_jdi_args()
        except RuntimeError as e:
            print(f"FAIL: {e}")
            return 1
    work = os.path.join(args.workdir, "jdi-" + args.target + ("-agent" if args.jvm_agent else "") +
                        ("-eclipse" if args.eclipse_jdi else "") + ("-monitors" if args.monitors else "") +
                        ("-invoke-" + args.invoke if args.invoke else "") + ("-stale-step" if args.stale_step else "") +
                        ("-memview" if args.memview else "") + ("-mutate" if args.mutate else "") +
                        ("-reentry" if args.reentry else ""))
    shutil.rmtree(work, ignore_errors=True)
    classes = os.path.join(work, "classes")
    try:
        compile_client(javac, classes, with_program=args.target == "jvm", monitors=args.monitors,
                       invoke=bool(args.invoke or args.stale_step or args.memview),
                       client="MutateClient" if args.mutate else "MemviewClient" if args.memview
                       else "StaleStepClient" if args.stale_step else "ReentryClient" if args.reentry
                       else "InvokeClient",
                       program="Memview" if args.memview else "Invoke")
    except RuntimeError as e:
        print(f"FAIL: {e}")
        return 1
    jdwp_opts = "transport=dt_socket,server=y,suspend=%s,address=127.0.0.1:0" % ("y" if args.monitors or args.reentry else "n")
    agent = "-agentlib:jdwp=" + jdwp_opts
    if args.jvm_agent:
        if args.target != "jvm" or not os.path.isfile(args.jvm_agent):
            print(f"FAIL: --jvm-agent {args.jvm_agent!r} needs --target jvm and an existing file")
            return 1
        agent = f"-agentpath:{os.path.abspath(args.jvm_agent)}={jdwp_opts}"
    client_name, program = ("MonitorClient", "Watch") if args.monitors else ("IdeClient", "Ide")
    if args.invoke:
        client_name, program = "InvokeClient", "Invoke"
    if args.stale_step:
        client_name, program = "StaleStepClient", "Invoke"
    if args.memview:
        client_name, program = "MemviewClient", "Memview"
    pre_args = (args.invoke,) if args.invoke else ()
    if args.mutate:
        client_name, program = "MutateClient", "Mutate"
        pre_args = ((os.path.join(classes, "redefine", "Greeter.class"), os.path.join(classes, "redefine_added", "Greeter.class"))
                    if args.target == "jvm" else ("-", "-"))
    if args.reentry:
        if args.target != "jvm":
            print("FAIL: --reentry needs --target jvm")
            return 1
        client_name, program = "ReentryClient", "Reentry"
    if args.target == "jvm":
        # Mutate's methods stay interpreted: HotSpot, under the JDK's agent as under ours, now and
        # then drops a ForceEarlyReturn at a breakpoint in a method that compiled code had inlined
        # (the reference run showed it too). What is tested is the back-end, not that race.
        jit = ["-XX:CompileCommand=quiet", "-XX:CompileCommand=exclude,Mutate::*"] if args.mutate else []
        cmd = [java, agent, *jit, "-cp", classes, program]
        listen = re.compile(r"Listening for transport dt_socket at address: (\d+)")
    else:
        if not args.minivm or not os.access(args.minivm, os.X_OK):
            print(f"FAIL: minivm not built at {args.minivm}")
            return 1
        cmd = [args.minivm, agent, os.path.join(ROOT, "examples", "minivm", "programs", program.lower() + ".mvm")]
        listen = re.compile(r"JDWP listening on 127\.0\.0\.1:(\d+)")
    vm = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = Reader(vm.stdout), Reader(vm.stderr)
    ok, client = False, ""
    try:
        deadline = time.monotonic() + 30
        port = None
        while port is None and time.monotonic() < deadline and vm.poll() is None:
            m = listen.search(out.get() + err.get())
            port = int(m.group(1)) if m else None
            time.sleep(0.02)
        if port is None:
            client = "the VM announced no port"
        else:
            if args.invoke == "kill":
                ok, client = run_killed(java, classes, "127.0.0.1", port, args.timeout, out)
            else:
                ok, client = run_client(java, classes, "127.0.0.1", port, args.timeout, client_name, pre_args, jdi)
            time.sleep(0.3)
            if ok and (args.monitors or args.reentry):
                try:  # Watch and Reentry end by themselves, with status 0
                    vm.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    pass
                if vm.poll() != 0:
                    ok = False
                    client += f"\n{program} did not end with status 0 ({vm.poll()})"
            elif ok and vm.poll() is not None:
                ok = False
                client += f"\nthe VM is no longer running after the client left (status {vm.poll()})"
    finally:
        if vm.poll() is None:
            vm.kill()
        vm.wait()
    if ok:
        print(client)
        print(f"PASS: {client_name} against {args.target}")
        shutil.rmtree(work, ignore_errors=True)
        return 0
    print(f"FAIL: {client_name} against {args.target}\n==== client\n{client}\n"
          f"==== program stdout (last 20 lines)\n{tail(out.get(), 20)}\n"
          f"==== VM stderr (last 40 lines)\n{tail(err.get(), 40)}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
