#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""jdb debugs minivm the way a debugger reaches an app on an Android device: through the real adb
(`adb forward tcp:N jdwp:PID`) or through the real ddmlib's per-client debugger port while ddmlib
monitors the VM. python3 standard library only; the scripts are run_jdb.py's (its docstring has
the format), played by its Session class.

  run_android.py adb    --minivm BIN --workdir DIR [--timeout S] SCRIPT...
  run_android.py ddmlib --minivm BIN --workdir DIR [--timeout S] SCRIPT...
  run_android.py adb|ddmlib --jdi --minivm BIN --workdir DIR

--jdi runs tests/jdi/IdeClient.java (an IDE's JDI session, see tests/jdi/run_jdi.py) instead of jdb
scripts, against examples/minivm/programs/ide.mvm, through the same adb forward or ddmlib port.

Both start what tests/adb/run_e2e.py starts for its runs (its Run class does it): the adbd
stand-in (tests/adb/adbd_standin.py) with a control socket of its own, the real adb server in the
foreground on a free port (never 5037), `adb connect` to the stand-in; then minivm running
examples/minivm/programs/debug.mvm (--program) with
-agentlib:jdwp=transport=dt_android_adb,server=y,suspend=n, which dials the stand-in's control
socket (DDMC_ADB_CONTROL) and so appears in `adb jdwp`.

adb:    `adb forward tcp:N jdwp:PID` on a free N; jdb attaches to 127.0.0.1:N (adb opens jdwp:PID on
        the device, the stand-in hands minivm a socket, and relays). Every script attaches a new
        jdb through the same forward.
ddmlib: tests/jdb/DdmlibMonitor.java (compiled here against the Debian ddmlib jars) watches the VM
        with thread and heap updates on and prints "debug-port N", ddmlib's debugger port for that
        client; jdb attaches there, so its packets share the one connection ddmlib holds to the VM.
        When a debugger leaves, ddmlib drops that connection and opens a new one, with a new
        debugger port: each later script attaches to the port the monitor printed last.
        Every line the monitor prints is the scripts' monitor stream (mon~ / mon=): a script checks
        there that DDM replies and updates keep coming while the debugger holds the VM at a
        breakpoint, and that ddmlib shows the debugger as attached. At the end the monitor is told
        to quit and must report no ddmlib error.

The first script must say `%vm suspend=n` (the VM the driver started), later ones `%vm same`;
%program is not available. The VM must still run at the end unless the last script ended it
(vm-exits; in ddmlib mode `@mon kill` has ddmlib stop it). Nothing waits a fixed time. On
failure it prints the jdb transcript, the program's output, minivm's stderr, the monitor's output
and the logs of the stand-in and the adb server, and exits 1. adb, a JDK with jdb, or ddmlib
missing is a failure (scripts/setup.sh --e2e installs them); the test never skips.
"""
import argparse
import os
import shutil
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "adb"))
sys.path.insert(0, os.path.join(ROOT, "tests", "jdi"))
import run_jdb as R  # noqa: E402
import run_e2e as E  # noqa: E402
import run_jdi as J  # noqa: E402


class AdbVM:
    """minivm on dt_android_adb, as run_jdb's Session sees a VM: .proc, .out, .err, .port, alive()."""

    def __init__(self, run, args, cond):
        self.cond = cond
        self.suspend = "n"
        env = dict(run.env)
        env["DDMC_ADB_CONTROL"] = run.control
        env.update({"LC_ALL": "C.UTF-8", "LANG": "C.UTF-8"})
        self.cmd = [args.minivm, "-agentlib:jdwp=transport=dt_android_adb,server=y,suspend=n", *args.vm_arg,
                    args.program]
        R.log("VM: " + " ".join(self.cmd))
        self.proc = subprocess.Popen(self.cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=env, cwd=run.dir)
        R.CHILDREN.append(self.proc)
        run.procs.append(("minivm", self.proc, None))
        self.out = R.Stream(self.proc.stdout, cond, "program stdout")
        self.err = R.Stream(self.proc.stderr, cond, "VM stderr")
        self.port = None

    def alive(self):
        return self.proc.poll() is None


def start_monitor(run, args, vm, cond, cp, java, javac):
    jdir = os.path.join(run.dir, "monitor")
    os.makedirs(jdir)
    src = os.path.join(HERE, "DdmlibMonitor.java")
    r = subprocess.run([javac, "-nowarn", "-d", jdir, "-cp", ":".join(cp), src], capture_output=True, timeout=120)
    if r.returncode != 0:
        raise R.Failure("javac DdmlibMonitor.java failed:\n" + r.stdout.decode() + r.stderr.decode())
    argv = [java, "-cp", jdir + ":" + ":".join(cp), "DdmlibMonitor", "--serial", run.serial,
            "--pid", str(vm.proc.pid), "--timeout", str(int(args.monitor_timeout))]
    R.log("monitor: " + " ".join(argv[3:]))
    p = subprocess.Popen(argv, env=run.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT)
    R.CHILDREN.append(p)
    run.procs.append(("monitor", p, None))
    return p, R.Stream(p.stdout, cond, "monitor")


def wait_text(stream, cond, pattern, timeout, what, proc=None):
    import re
    rx = re.compile(pattern, re.M)
    deadline = time.monotonic() + timeout
    with cond:
        while True:
            m = rx.search(stream.text)
            if m:
                return m
            if stream.eof or (proc is not None and proc.poll() is not None):
                break
            left = deadline - time.monotonic()
            if left <= 0:
                break
            cond.wait(min(left, 1.0))
    raise R.Failure(f"{what}: no line matching {pattern!r} within {timeout:g} s")


def wait_debug_ports(stream, cond, after, timeout, proc):
    """Every "debug-port N" the monitor printed, once there are more than `after` of them."""
    import re
    deadline = time.monotonic() + timeout
    with cond:
        while True:
            ports = [int(p) for p in re.findall(r"^debug-port (\d+)$", stream.text, re.M)]
            if len(ports) > after:
                return ports
            left = deadline - time.monotonic()
            if stream.eof or proc.poll() is not None or left <= 0:
                break
            cond.wait(min(left, 1.0))
    raise R.Failure(f"the ddmlib monitor printed no new debugger port within {timeout:g} s "
                    f"({'once' if after == 0 else 'after the last session'})")


def main():
    ap = argparse.ArgumentParser(description="jdb through adb or ddmlib (see the module docstring)")
    ap.add_argument("mode", choices=("adb", "ddmlib"))
    ap.add_argument("--minivm", required=True)
    ap.add_argument("--program", default=os.path.join(ROOT, "examples", "minivm", "programs", "debug.mvm"))
    ap.add_argument("--workdir", required=True, help="logs and scratch files go under it")
    ap.add_argument("--jdb", default="jdb")
    ap.add_argument("--ddmc", help="adb mode: the ddmc CLI as a monitor beside jdb, each through its own "
                                   "jdwp:PID connection (run_jdb.py's @mon start|run|stop|hold|release)")
    ap.add_argument("--sourcepath", default=HERE)
    ap.add_argument("--timeout", type=float, default=20.0, help="per-step deadline in seconds (20)")
    ap.add_argument("--monitor-timeout", type=float, default=150.0, help="the monitor's own deadline (150 s)")
    ap.add_argument("--jdb-arg", action="append", default=[])
    ap.add_argument("--vm-arg", action="append", default=[],
                    help="an extra minivm option before the program (repeatable), e.g. --vm-arg=-verbose:jdwp")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every transcript, also on success")
    ap.add_argument("--jdi", action="store_true", help="run IdeClient (JDI) on ide.mvm instead of jdb scripts")
    ap.add_argument("scripts", nargs="*")
    args = ap.parse_args()
    args.keep_going = False
    if args.jdi:
        if args.scripts:
            ap.error("--jdi takes no scripts")
        args.program = os.path.join(ROOT, "examples", "minivm", "programs", "ide.mvm")
    elif not args.scripts:
        ap.error("no scripts")

    signal_setup()
    scripts = [R.Script(p) for p in args.scripts]
    for i, s in enumerate(scripts):
        want = "n" if i == 0 else "same"
        if s.vm != want or s.program:
            ap.error(f"{s.name}: the first script must say %vm suspend=n and later ones %vm same (no %program): "
                     "the driver starts the one VM")
    adb, java, javac, cp, missing = E.find_tools()
    if args.mode == "adb":
        missing = [m for m in missing if m.startswith("adb")]
    if shutil.which(args.jdb) is None:
        missing.append(f"jdb ({args.jdb}; Debian package 'default-jdk-headless')")
    if missing:
        print("FAIL: missing for jdb through %s: %s. `scripts/setup.sh --e2e` installs them; this test fails, "
              "never skips, without them." % (args.mode, "; ".join(missing)), flush=True)
        return 1
    if not os.access(args.minivm, os.X_OK):
        print(f"FAIL: minivm not built at {args.minivm}", flush=True)
        return 1

    ns = argparse.Namespace(mode="jdb-" + args.mode, workdir=args.workdir, minivm=args.minivm, programs=None)
    run = E.Run(ns)
    run.adb, run.java_bin, run.javac, run.cp = adb, java, javac, cp
    cond = threading.Condition()
    vm = monitor = mon_stream = session = None
    ok = False
    t0 = time.monotonic()
    try:
        run.start_standin()
        run.start_adb()
        run.connect()
        vm = AdbVM(run, args, cond)
        run.wait_listed([vm.proc.pid])
        R.log(f"adb jdwp lists minivm (pid {vm.proc.pid})")
        if args.mode == "adb":
            vm.port = E.free_port()
            run.adbcmd("-s", run.serial, "forward", f"tcp:{vm.port}", f"jdwp:{vm.proc.pid}")
            R.log(f"adb forward tcp:{vm.port} jdwp:{vm.proc.pid}")
            if args.ddmc:  # ddmc beside jdb: each connection to the forward is a jdwp:PID of its own
                ddmc_mon = R.DdmcMonitor(args, vm, cond, run.dir)
                monitor, mon_stream = ddmc_mon, ddmc_mon
        else:
            monitor, mon_stream = start_monitor(run, args, vm, cond, cp, java, javac)
        def send(command):
            if isinstance(monitor, R.DdmcMonitor):
                return monitor.send(command)
            if monitor is None:
                raise R.Failure("@mon: there is no monitor through adb")
            try:
                monitor.stdin.write((command + "\n").encode())
                monitor.stdin.flush()
            except OSError:
                raise R.Failure(f"the ddmlib monitor is gone; could not send {command!r}")

        used_ports = 0
        vm_gone = False
        if args.jdi:
            classes = os.path.join(run.dir, "jdi")
            try:
                J.compile_client(javac, classes)
            except RuntimeError as e:
                raise R.Failure(str(e))
            if monitor is not None:
                vm.port = wait_debug_ports(mon_stream, cond, 0, 60, monitor)[-1]
            R.log(f"IdeClient through {args.mode} on port {vm.port} (pid {vm.proc.pid})")
            ok_jdi, out = J.run_client(java, classes, "127.0.0.1", vm.port, 180)
            print(out, flush=True)
            if not ok_jdi:
                raise R.Failure(f"IdeClient through {args.mode} failed")
        for script in scripts:
            if not vm.alive():
                raise R.Failure(f"{script.name}: the VM is no longer running (status {vm.proc.poll()})")
            if monitor is not None and args.mode == "ddmlib":
                # ddmlib recycles its connection to the VM after each debugger: a new port each time.
                ports = wait_debug_ports(mon_stream, cond, used_ports, 60, monitor)
                used_ports = len(ports)
                vm.port = ports[-1]
                R.log(f"ddmlib's debugger port for pid {vm.proc.pid}: {vm.port}")
            R.log(f"{script.name}: {len(script.steps)} steps through {args.mode} (pid {vm.proc.pid})")
            session = R.Session(args, script, vm, run.dir, cond, mon_stream, send)
            try:
                session.run()
                if args.verbose:
                    print(session.transcript(), flush=True)
            except R.Failure as f:
                print(f"\nFAIL: {script.name} through {args.mode}: {f}\n", flush=True)
                print("==== jdb transcript\n" + session.transcript() + "\n==== end of jdb transcript", flush=True)
                raise R.Failure(f"{script.name} failed")
            finally:
                session.stop_jdb()
            vm_gone = session.vm_gone
        if isinstance(monitor, R.DdmcMonitor):
            monitor.close()
        elif monitor is not None:
            monitor.stdin.write(b"quit\n")
            monitor.stdin.flush()
            m = wait_text(mon_stream, cond, r"^problems: (\d+)$", 20, "the ddmlib monitor at quit", monitor)
            try:
                rc = monitor.wait(timeout=20)
            except subprocess.TimeoutExpired:
                raise R.Failure("the ddmlib monitor did not end after quit")
            if rc != 0 or m.group(1) != "0":
                raise R.Failure(f"the ddmlib monitor exited {rc} and reported {m.group(1)} problem(s) "
                                "(ddmlib errors or chunks it could not use): see its output")
        if not vm.alive() and not vm_gone:
            raise R.Failure(f"the VM is no longer running (status {vm.proc.poll()})")
        ok = True
    except R.Failure as f:
        print(f"FAIL: {f}", flush=True)
    except Exception as e:  # a bug in the driver is a failure too
        import traceback
        traceback.print_exc()
        print(f"FAIL: {type(e).__name__}: {e}", flush=True)
    finally:
        if not ok:
            if vm is not None:
                with cond:
                    out, err = vm.out.text, vm.err.text
                print(f"==== program stdout (last 20 lines)\n{R.tail(out, 20)}", flush=True)
                print(f"==== minivm stderr (last 40 lines)\n{R.tail(err, 40)}", flush=True)
            if mon_stream is not None:
                with cond:
                    mon = mon_stream.text
                print(f"==== ddmlib monitor (last 60 lines)\n{R.tail(mon, 60)}", flush=True)
            print("====", flush=True)
        if isinstance(monitor, R.DdmcMonitor):
            monitor.close()
        elif monitor is not None and monitor.poll() is None:
            monitor.kill()
        run.stop()
        R.kill_children()
        if not ok:
            run.dump_logs()
    if not ok:
        return 1
    what = "IdeClient" if args.jdi else f"{len(scripts)} script(s)"
    print(f"PASS: {what} through {args.mode} in {time.monotonic() - t0:.1f} s", flush=True)
    if not os.environ.get("DDMC_KEEP_WORK"):
        shutil.rmtree(run.dir, ignore_errors=True)
    return 0


def signal_setup():
    """SIGTERM (ctest's timeout) unwinds main, so its finally stops the adb server and the rest."""
    import signal

    def stop(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)


if __name__ == "__main__":
    sys.exit(main())
