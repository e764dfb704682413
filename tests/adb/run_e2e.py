#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end runs of dt_android_adb with the real adb host server (Debian `adb`, 29) and the
real ddmlib (Debian `libandroid-ddms-java`, 25.2.2), through the adbd stand-in.

  run_e2e.py MODE --minivm BIN --programs DIR --workdir DIR [--timeout S]

MODE:
  selftest  the stand-in under the real adb, no Java: devices -l, getprop, jdwp, track-jdwp,
            a fake VM on the SOCK_SEQPACKET control socket (raw pid, fd passing, relay), and
            minivm on dt_android_adb reached with `adb forward tcp:N jdwp:PID` (handshake + HELO)
  ddmlib    minivm (threads, alloc, zygote) on dt_android_adb; DdmlibE2E checks identity, names,
            WAIT, threads, heap info and segments
  socket    the same ddmlib checks with minivm on dt_socket, reached by the stand-in's --tcp-vm
  many      N (default 20) minivm idle.mvm on one stand-in; ddmlib lists all and drops each
  hprof     minivm heap.mvm on dt_android_adb; DdmlibE2E calls ddmlib's dumpHprof (HPDS) and
            HandleHeap.sendHPDU (to a writable and an unwritable path); the dumps pass the strict reader
  prof      minivm trace.mvm on dt_android_adb; DdmlibE2E drives ddmlib's profiling calls: allocation
            tracker (REAL parsed by AllocationsParser), method tracer (streaming), sampling profiler
  jvm       HotSpot running JvmThreads.java under --jvm-agent libddmcjdwp.so on dt_android_adb;
            DdmlibE2E checks HELO (the JVM's name and version, the main class), threads, HPIF
  jvmprof   HotSpot running JvmProf.java the same way; DdmlibE2E drives the allocation tracker
            (JvmProf$Blob at JvmProf.allocate), the method tracer (streaming) and the sampler,
            dumpHprof (HPDS) and sendHPDU; the traces pass the real dmtracedump, the dumps the
            strict reader (1000 JvmProf$Node) and the real hprof-conv
  jvmddm    HotSpot running tests/hotspot/DdmApp.java the same way: its own chunk handlers (Android's
            DdmServer API from the agent) reached with ddmlib's own packet code: reply, FAIL from a
            throwing handler then the next request served, an unsolicited chunk, an unknown type
  ps        `ddmc ps` (--ddmc BIN) against --count N VMs (default 300): 4 minivm processes on
            dt_android_adb, the rest synthetic VMs served by the stand-in (--synthetic-vms); the
            listing's time is printed (bench/RESULTS.md) and must stay under --ps-budget seconds;
            a silent VM is listed as not answering within -t; a VM held by another debugger is
            listed as attached; --json parses; --watch sees a minivm appear and disappear

Everything it starts (stand-in, adb server, VMs) gets its own ports and names, its HOME and
TMPDIR point into the work dir, the adb server runs in the foreground on its own port (never
5037) and is stopped with `adb -P PORT kill-server`, then by pid if needed. If adb, the JDK or
ddmlib is missing the run FAILS (it never skips): scripts/setup.sh --e2e installs them.
"""
import argparse
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import array

HERE = os.path.dirname(os.path.abspath(__file__))
STANDIN = os.path.join(HERE, "adbd_standin.py")
JAVA_SRC = os.path.join(HERE, "DdmlibE2E.java")
# A custom chunk with ddmlib's own packet code: package-private there, so a class in its package.
JAVA_DDMLIB_SRC = os.path.join(HERE, "ddmlib", "com", "android", "ddmlib", "E2EChunks.java")
JARS = {
    "ddmlib": ["/usr/share/java/com.android.tools.ddms.ddmlib.jar", "/usr/share/java/ddmlib.jar"],
    "tools-common": ["/usr/share/java/com.android.tools.common.jar", "/usr/share/java/common.jar"],
    "guava": ["/usr/share/java/guava.jar"],
    "kxml2": ["/usr/share/java/kxml2.jar"],
}

T0 = time.time()


def say(msg):
    print("[%6.2f] %s" % (time.time() - T0, msg), flush=True)


class Fail(Exception):
    pass


def free_port():
    """A free TCP port on 127.0.0.1 outside 5037 and the emulator range 5554-5585."""
    for _ in range(50):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        p = s.getsockname()[1]
        s.close()
        if p != 5037 and not 5550 <= p <= 5590:
            return p
    raise Fail("no free port")


def find_tools():
    missing = []
    adb = shutil.which("adb") or ("/usr/lib/android-sdk/platform-tools/adb"
                                  if os.path.exists("/usr/lib/android-sdk/platform-tools/adb") else None)
    if not adb:
        missing.append("adb (Debian package 'adb')")
    java, javac = shutil.which("java"), shutil.which("javac")
    if not java or not javac:
        missing.append("java/javac (Debian package 'default-jdk-headless')")
    cp = []
    for name, cands in JARS.items():
        found = next((c for c in cands if os.path.exists(c)), None)
        if not found:
            missing.append("%s jar (Debian package 'libandroid-ddms-java' and its dependencies)" % name)
        else:
            cp.append(found)
    return adb, java, javac, cp, missing


class Run:
    def __init__(self, args):
        self.args = args
        os.makedirs(args.workdir, exist_ok=True)
        self.dir = tempfile.mkdtemp(prefix=args.mode + "-", dir=args.workdir)
        self.procs = []  # (name, Popen, logpath)
        self.adb = None
        self.adb_port = None
        self.adb_server = None
        self.standin = None
        self.serial = None
        self.control = "@ddmc-e2e-%d-%s" % (os.getpid(), args.mode)
        home = os.path.join(self.dir, "home")
        tmp = os.path.join(self.dir, "tmp")
        os.makedirs(home)
        os.makedirs(tmp)
        env = dict(os.environ)
        for k in ("ANDROID_SERIAL", "ADB_VENDOR_KEYS", "ADB_TRACE", "ANDROID_ADB_SERVER_ADDRESS"):
            env.pop(k, None)
        env.update({"HOME": home, "TMPDIR": tmp, "ANDROID_SDK_HOME": home, "ANDROID_USER_HOME":
                    os.path.join(home, ".android"), "ADB_LOCAL_TRANSPORT_MAX_PORT": "5553"})
        self.env = env

    def log(self, name):
        return os.path.join(self.dir, name + ".log")

    def spawn(self, name, argv, env=None, stdout=None):
        lf = open(self.log(name), "wb")
        p = subprocess.Popen(argv, env=env or self.env, stdin=subprocess.DEVNULL,
                             stdout=stdout if stdout is not None else lf, stderr=lf)
        self.procs.append((name, p, self.log(name)))
        return p

    def adbcmd(self, *a, timeout=15, check=True):
        argv = [self.adb, "-P", str(self.adb_port)] + list(a)
        try:
            r = subprocess.run(argv, env=self.env, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise Fail("'%s' did not finish in %d s" % (" ".join(argv[1:]), timeout))
        out = r.stdout.decode(errors="replace")
        if check and r.returncode != 0:
            raise Fail("'%s' exited %d: %s %s" % (" ".join(argv[1:]), r.returncode, out.strip(),
                                                   r.stderr.decode(errors="replace").strip()))
        return out

    # ---- the pieces
    def start_standin(self, extra=()):
        pf = os.path.join(self.dir, "standin.port")
        self.standin = self.spawn("standin", [sys.executable, STANDIN, "--control", self.control, "--port-file", pf,
                                              "--die-with-parent", "--log", self.log("standin-events")] + list(extra))
        for _ in range(100):
            if os.path.exists(pf):
                break
            if self.standin.poll() is not None:
                raise Fail("the adbd stand-in exited with %d (see %s)" % (self.standin.returncode, self.log("standin")))
            time.sleep(0.05)
        else:
            raise Fail("the adbd stand-in did not come up in 5 s")
        self.standin_port = int(open(pf).read())
        self.serial = "127.0.0.1:%d" % self.standin_port
        say("stand-in on 127.0.0.1:%d, control socket %s" % (self.standin_port, self.control))

    def start_adb(self):
        self.adb_port = free_port()
        self.env["ANDROID_ADB_SERVER_PORT"] = str(self.adb_port)
        # Foreground server: its pid is ours to stop, and it never touches 5037.
        self.adb_server = self.spawn("adb-server", [self.adb, "-P", str(self.adb_port), "nodaemon", "server"])
        deadline = time.time() + 20
        while True:
            if self.adb_server.poll() is not None:
                raise Fail("adb server exited with %d (see %s)" % (self.adb_server.returncode, self.log("adb-server")))
            try:
                socket.create_connection(("127.0.0.1", self.adb_port), timeout=1).close()
                break
            except OSError:
                if time.time() > deadline:
                    raise Fail("adb server did not listen on %d in 20 s" % self.adb_port)
                time.sleep(0.1)
        say("adb server (pid %d) on port %d: %s" % (self.adb_server.pid, self.adb_port,
                                                     self.adbcmd("version").splitlines()[0]))

    def connect(self):
        # adb 29's `connect` exits 0 even when it fails: poll get-state until "device".
        deadline = time.time() + 30
        last = ""
        while time.time() < deadline:
            out = self.adbcmd("connect", self.serial, check=False)
            for _ in range(10):
                last = self.adbcmd("-s", self.serial, "get-state", check=False).strip()
                if last == "device":
                    say("adb connect %s: %s; get-state: device" % (self.serial, out.strip()))
                    return
                time.sleep(0.2)
        raise Fail("device %s never reached state 'device' (last: %r)" % (self.serial, last))

    def start_vm(self, program, name, transport="adb", extra_env=None):
        if transport == "adb":
            flag = "-agentlib:jdwp=transport=dt_android_adb,server=y,suspend=n"
        else:
            flag = "-agentlib:jdwp=transport=dt_socket,address=127.0.0.1:0,server=y,suspend=n"
        env = dict(self.env)
        env["DDMC_ADB_CONTROL"] = self.control
        if extra_env:
            env.update(extra_env)
        argv = [self.args.minivm, "-verbose:jdwp", flag, os.path.join(self.args.programs, program)]
        p = self.spawn(name, argv, env=env)
        return p

    def wait_listed(self, pids, timeout=20):
        deadline = time.time() + timeout
        out = ""
        while time.time() < deadline:
            out = self.adbcmd("-s", self.serial, "jdwp", timeout=10, check=False)
            listed = set(int(x) for x in out.split() if x.isdigit())
            if set(pids) <= listed:
                return listed
            time.sleep(0.3)
        raise Fail("adb jdwp lists %r, want %r" % (out.split(), sorted(pids)))

    def java(self, argv, timeout):
        jdir = os.path.join(self.dir, "java")
        os.makedirs(jdir)
        cp = ":".join(self.cp)
        r = subprocess.run([self.javac, "-nowarn", "-d", jdir, "-cp", cp, JAVA_SRC, JAVA_DDMLIB_SRC], capture_output=True,
                           timeout=120)
        if r.returncode != 0:
            raise Fail("javac failed:\n" + r.stdout.decode() + r.stderr.decode())
        say("running DdmlibE2E %s" % " ".join(argv))
        p = subprocess.Popen([self.java_bin, "-cp", jdir + ":" + cp, "DdmlibE2E", "--serial", self.serial,
                              "--timeout", str(timeout)] + argv, env=self.env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.procs.append(("java", p, None))
        fails = []
        with open(self.log("java"), "w") as jl:
            for line in p.stdout:
                line = line.decode(errors="replace")
                jl.write(line)
                if not line.startswith("# ddmlib") or os.environ.get("DDMLIB_VERBOSE"):
                    sys.stdout.write("    " + line)
                if line.startswith("FAIL"):
                    fails.append(line.strip())
        try:
            rc = p.wait(timeout=timeout + 20)
        except subprocess.TimeoutExpired:
            p.kill()
            raise Fail("DdmlibE2E did not finish")
        if rc == 3:  # DdmlibE2E's watchdog: it hung; show where the VMs were too
            self.dump_vm_stacks()
        if rc != 0 or fails:
            raise Fail("DdmlibE2E exited %d with %d failed checks:\n  %s" % (rc, len(fails), "\n  ".join(fails)))

    def dump_vm_stacks(self):
        gdb = shutil.which("gdb")
        for name, p, _ in self.procs:
            if not name.startswith("minivm") or p.poll() is not None:
                continue
            if not gdb:
                say("%s (pid %d) still running; no gdb to show its threads" % (name, p.pid))
                continue
            try:
                r = subprocess.run([gdb, "-batch", "-p", str(p.pid), "-ex", "thread apply all bt"],
                                   stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
                say("%s (pid %d) threads:\n%s" % (name, p.pid, r.stdout.decode(errors="replace")))
            except subprocess.TimeoutExpired:
                say("%s (pid %d): gdb did not finish" % (name, p.pid))

    # ---- teardown
    def stop(self):
        for name, p, _ in reversed(self.procs):
            if name in ("adb-server", "standin") or p.poll() is not None:
                continue
            p.terminate()
        for name, p, _ in self.procs:
            if name in ("adb-server", "standin"):
                continue
            try:
                p.wait(timeout=5)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        if self.adb_server is not None and self.adb_server.poll() is None:
            try:
                self.adbcmd("kill-server", timeout=10, check=False)
            except Fail:
                pass
            try:
                self.adb_server.wait(timeout=5)
            except subprocess.TimeoutExpired:
                say("adb server ignored kill-server; killing pid %d" % self.adb_server.pid)
                self.adb_server.kill()
                self.adb_server.wait()
        if self.standin is not None and self.standin.poll() is None:
            self.standin.terminate()
            try:
                self.standin.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.standin.kill()
                self.standin.wait()

    def dump_logs(self):
        for name, p, path in self.procs:
            if not path or not os.path.exists(path):
                continue
            data = open(path, "rb").read().decode(errors="replace").splitlines()
            print("----- %s (last 40 of %d lines; %s)" % (name, len(data), path))
            for l in data[-40:]:
                print("  " + l)
        ev = self.log("standin-events")
        if os.path.exists(ev):
            data = open(ev).read().splitlines()
            print("----- stand-in events (last 60 of %d lines; %s)" % (len(data), ev))
            for l in data[-60:]:
                print("  " + l)


# ------------------------------------------------------------------------------ JDWP bits

def jdwp_hello(sock, timeout=10):
    """Handshake, then DDM HELO over sock; returns (pid, vm_ident)."""
    sock.settimeout(timeout)
    sock.sendall(b"JDWP-Handshake")
    buf = b""
    while len(buf) < 14:
        d = sock.recv(14 - len(buf))
        if not d:
            raise Fail("EOF during the JDWP handshake")
        buf += d
    if buf != b"JDWP-Handshake":
        raise Fail("bad handshake echo %r" % buf)
    body = struct.pack(">II", 0x48454C4F, 4) + struct.pack(">I", 1)
    sock.sendall(struct.pack(">IIBBB", 11 + len(body), 0x40000001, 0, 199, 1) + body)
    while True:
        hdr = b""
        while len(hdr) < 11:
            d = sock.recv(11 - len(hdr))
            if not d:
                raise Fail("EOF waiting for the HELO reply")
            hdr += d
        length, pid_, flags = struct.unpack(">IIB", hdr[:9])
        rest = b""
        while len(rest) < length - 11:
            d = sock.recv(length - 11 - len(rest))
            if not d:
                raise Fail("EOF in a packet")
            rest += d
        if flags == 0x80 and pid_ == 0x40000001:
            break
    ctype, clen = struct.unpack(">II", rest[:8])
    if ctype != 0x48454C4F:
        raise Fail("HELO answered with chunk %r" % struct.pack(">I", ctype))
    p = rest[8:]
    _ver, vpid, vlen, alen = struct.unpack(">IIII", p[:16])
    ident = p[16:16 + 2 * vlen].decode("utf-16-be")
    return vpid, ident


# ------------------------------------------------------------------------------ modes

def mode_selftest(run):
    run.start_standin()
    run.start_adb()
    run.connect()
    out = run.adbcmd("devices", "-l")
    line = next((l for l in out.splitlines() if l.startswith(run.serial)), "")
    say("devices -l: %s" % line)
    if "device product:minivm model:minivm device:minivm" not in line:
        raise Fail("devices -l does not show the stand-in's banner: %r" % out)
    sdk = run.adbcmd("-s", run.serial, "shell", "getprop", "ro.build.version.sdk").strip()
    if sdk != "29":
        raise Fail("getprop ro.build.version.sdk = %r" % sdk)
    props = run.adbcmd("-s", run.serial, "shell", "getprop")
    for want in ("[ro.build.version.sdk]: [29]", "[ro.product.cpu.abi]: [x86_64]", "[ro.debuggable]: [1]"):
        if want not in props:
            raise Fail("getprop lacks %s" % want)
    say("shell getprop: %d lines, sdk 29" % len(props.splitlines()))
    if run.adbcmd("-s", run.serial, "jdwp").strip() != "":
        raise Fail("jdwp lists processes before any VM started")

    # track-jdwp through `adb track-jdwp`: the initial (empty) list, then every change.
    track = subprocess.Popen([run.adb, "-P", str(run.adb_port), "-s", run.serial, "track-jdwp"], env=run.env,
                             stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    run.procs.append(("track-jdwp", track, None))

    def track_msg(timeout=10):
        import select
        buf = b""
        end = time.time() + timeout
        while True:
            need = 4 if len(buf) < 4 else 4 + int(buf[:4], 16)
            if len(buf) >= need and len(buf) >= 4:
                return buf[4:need].decode()
            left = end - time.time()
            if left <= 0 or not select.select([track.stdout], [], [], left)[0]:
                raise Fail("track-jdwp: no message in %d s (have %r)" % (timeout, buf))
            d = os.read(track.stdout.fileno(), 1 if len(buf) < 4 else need - len(buf))
            if not d:
                raise Fail("track-jdwp closed")
            buf += d

    if track_msg() != "":
        raise Fail("track-jdwp: the first list is not empty")

    # A fake VM on the SOCK_SEQPACKET control socket: raw u32 pid, then it gets a descriptor.
    fake_pid = os.getpid()
    ctl = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    ctl.connect("\0" + run.control[1:])
    ctl.send(struct.pack("=I", fake_pid))
    if track_msg() != "%d\n" % fake_pid:
        raise Fail("track-jdwp did not report the seqpacket VM")
    run.wait_listed([fake_pid])
    say("fake VM pid %d announced raw32 on SOCK_SEQPACKET: listed by track-jdwp and jdwp" % fake_pid)
    fwd = free_port()
    run.adbcmd("-s", run.serial, "forward", "tcp:%d" % fwd, "jdwp:%d" % fake_pid)
    dbg = socket.create_connection(("127.0.0.1", fwd), timeout=10)
    dbg.sendall(b"JDWP-Handshake")  # adb opens jdwp:<pid> when the forward gets a connection
    ctl.settimeout(10)
    msg, anc, flags, _ = ctl.recvmsg(1, socket.CMSG_SPACE(4))
    fds = [array.array("i", d[:4])[0] for lvl, typ, d in anc if lvl == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS]
    if len(msg) != 1 or len(fds) != 1:
        raise Fail("the stand-in sent %r with %d descriptors (want 1 byte, 1 fd)" % (msg, len(fds)))
    vmside = socket.socket(fileno=fds[0])
    vmside.settimeout(10)
    got = b""
    while len(got) < 14:
        got += vmside.recv(14 - len(got))
    if got != b"JDWP-Handshake":
        raise Fail("relayed handshake %r" % got)
    vmside.sendall(b"JDWP-Handshake" + b"x" * 300000)  # more than one WRTE: exercises OKAY pacing
    want = b"JDWP-Handshake" + b"x" * 300000
    got = b""
    dbg.settimeout(10)
    while len(got) < len(want):
        d = dbg.recv(65536)
        if not d:
            break
        got += d
    if got != want:
        raise Fail("relay returned %d of %d bytes" % (len(got), len(want)))
    dbg.sendall(b"y" * 200000)
    got = b""
    while len(got) < 200000:
        d = vmside.recv(65536)
        if not d:
            break
        got += d
    if got != b"y" * 200000:
        raise Fail("relay to the VM delivered %d of 200000 bytes" % len(got))
    dbg.close()
    vmside.settimeout(10)
    if vmside.recv(10) != b"":
        raise Fail("closing the debugger side did not close the VM side")
    vmside.close()
    say("fd passing + relay: handshake and 300 KB / 200 KB each way through adb forward, then close")
    ctl.close()
    if track_msg() != "":
        raise Fail("track-jdwp did not drop the seqpacket VM when its control socket closed")
    run.adbcmd("-s", run.serial, "forward", "--remove", "tcp:%d" % fwd)

    # minivm on dt_android_adb: listed, and a HELO through adb forward answers with its pid.
    vm = run.start_vm("idle.mvm", "minivm-idle")
    if track_msg(15) != "%d\n" % vm.pid:
        raise Fail("track-jdwp did not report minivm pid %d" % vm.pid)
    listed = run.wait_listed([vm.pid])
    out = run.adbcmd("-s", run.serial, "jdwp").split()
    say("adb jdwp: %s (minivm pid %d)" % (" ".join(out), vm.pid))
    if out != [str(vm.pid)]:
        raise Fail("adb jdwp printed %r" % out)
    run.adbcmd("-s", run.serial, "forward", "tcp:%d" % fwd, "jdwp:%d" % vm.pid)
    for attempt in range(2):  # twice: the VM takes the next debugger after a session ends
        s = socket.create_connection(("127.0.0.1", fwd), timeout=10)
        pid, ident = jdwp_hello(s)
        s.close()
        say("HELO through adb forward: pid %d ident %r" % (pid, ident))
        if pid != vm.pid or ident != "minivm v0.1":
            raise Fail("HELO pid %d ident %r, want %d 'minivm v0.1'" % (pid, ident, vm.pid))
        time.sleep(0.3)
    vm.terminate()
    vm.wait(timeout=5)
    if track_msg(10) != "":
        raise Fail("track-jdwp still lists minivm after it exited")
    say("minivm exit: dropped from track-jdwp")
    track.terminate()


def mode_ddmlib(run):
    run.start_standin()
    run.start_adb()
    run.connect()
    vms = [(run.start_vm("threads.mvm", "minivm-threads"), "threads"),
           (run.start_vm("alloc.mvm", "minivm-alloc"), "alloc"),
           (run.start_vm("zygote.mvm", "minivm-zygote"), "zygote")]
    run.wait_listed([p.pid for p, _ in vms])
    argv = []
    for p, kind in vms:
        argv += ["--client", "%d:%s" % (p.pid, kind)]
    run.java(argv, run.args.java_timeout)


def mode_socket(run):
    # minivm on dt_socket first, each on a free port of its own.
    vms = []
    for prog, kind in (("threads.mvm", "threads"), ("alloc.mvm", "alloc"), ("zygote.mvm", "zygote")):
        port = free_port()
        run.args  # noqa
        env = dict(run.env)
        argv = [run.args.minivm, "-verbose:jdwp",
                "-agentlib:jdwp=transport=dt_socket,address=127.0.0.1:%d,server=y,suspend=n" % port,
                os.path.join(run.args.programs, prog)]
        p = run.spawn("minivm-" + kind, argv, env=env)
        vms.append((p, kind, port))
    for p, kind, port in vms:
        deadline = time.time() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if p.poll() is not None or time.time() > deadline:
                    raise Fail("minivm %s never listened on %d" % (kind, port))
                time.sleep(0.1)
    # That probe connection was a peer without a handshake: the VM drops it after its timeout or
    # at EOF; either way it listens again.
    extra = []
    for p, kind, port in vms:
        extra += ["--tcp-vm", "%d:%d" % (p.pid, port)]
    run.start_standin(extra)
    run.start_adb()
    run.connect()
    run.wait_listed([p.pid for p, _, _ in vms])
    argv = []
    for p, kind, _ in vms:
        argv += ["--client", "%d:%s" % (p.pid, kind)]
    run.java(argv, run.args.java_timeout)


def mode_many(run):
    run.start_standin()
    run.start_adb()
    run.connect()
    vms = [run.start_vm("idle.mvm", "minivm-idle-%02d" % i) for i in range(run.args.count)]
    listed = run.wait_listed([p.pid for p in vms], timeout=30)
    say("adb jdwp lists all %d VMs" % len(vms))
    run.java(["--many", ",".join(str(p.pid) for p in vms)], run.args.java_timeout)
    out = run.adbcmd("-s", run.serial, "jdwp").split()
    if out:
        raise Fail("adb jdwp still lists %r after every VM exited" % out)


def mode_prof(run):
    run.start_standin()
    run.start_adb()
    run.connect()
    vm = run.start_vm("trace.mvm", "minivm-trace")
    run.wait_listed([vm.pid])
    run.java(["--client", "%d:prof" % vm.pid], run.args.java_timeout)


def start_jvm(run, program, src=None, cp=None):
    """HotSpot running tests/adb/PROGRAM.java (or SRC, compiled against CP) under libddmcjdwp.so
    on dt_android_adb: the agent dials the stand-in's control socket (DDMC_ADB_CONTROL, as minivm
    does). Returns its Popen once adb lists it."""
    if not run.args.jvm_agent or not os.path.isfile(run.args.jvm_agent):
        raise Fail("mode %s needs --jvm-agent PATH (libddmcjdwp.so), not %r" % (run.args.mode, run.args.jvm_agent))
    run.start_standin()
    run.start_adb()
    run.connect()
    jdir = os.path.join(run.dir, "jvm-classes")
    r = subprocess.run([run.javac, "-g", "-d", jdir] + (["-cp", cp] if cp else [])
                       + [src or os.path.join(HERE, program + ".java")], capture_output=True, timeout=120)
    if r.returncode != 0:
        raise Fail("javac %s.java failed:\n%s%s" % (program, r.stdout.decode(), r.stderr.decode()))
    env = dict(run.env)
    env["DDMC_ADB_CONTROL"] = run.control
    # The JVM's default heap limit (a quarter of the machine's memory) is what HPIF reports:
    # above 2 GiB it goes out clamped to 0x7fffffff, the most ddmlib's signed int can show.
    vm = run.spawn("jvm-" + program, [run.java_bin, "-agentpath:%s=transport=dt_android_adb,server=y,suspend=n"
                                      % os.path.abspath(run.args.jvm_agent), "-cp", jdir, program], env=env)
    run.wait_listed([vm.pid])
    return vm


def mode_jvm(run):
    # ddmlib checks HELO, threads and HPIF.
    vm = start_jvm(run, "JvmThreads")
    run.java(["--client", "%d:jvm" % vm.pid], run.args.java_timeout)


def mode_jvmddm(run):
    # An app's own chunk handlers (Android's DdmServer API, tests/hotspot/DdmApp.java) reached by
    # ddmlib's own packet code; the API's classes come from the agent (the system class loader's search), not -cp.
    jar = os.path.join(os.path.dirname(os.path.abspath(run.args.jvm_agent or ".")), "libddmcjdwp-ddm.jar")
    if not os.path.isfile(jar):
        raise Fail("no %s beside the agent" % jar)
    vm = start_jvm(run, "DdmApp", src=os.path.join(HERE, "..", "hotspot", "DdmApp.java"), cp=jar)
    run.java(["--client", "%d:jvmddm" % vm.pid], run.args.java_timeout)


def find_platform_tool(name):
    path = shutil.which(name) or os.path.join("/usr/lib/android-sdk/platform-tools", name)
    if not os.access(path, os.X_OK):
        raise Fail("%s not found (Debian package '%s'; scripts/setup.sh installs it)" % (name, name))
    return path


def read_hprof(path):
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "hprof"))
    import hprof_reader
    try:
        return hprof_reader.summary(hprof_reader.read(open(path, "rb").read()))
    except (OSError, hprof_reader.Bad) as e:
        raise Fail("%s: %s" % (os.path.basename(path), e))


def mode_jvmprof(run):
    # ddmlib's profiling calls and heap dumps on HotSpot (JvmProf.java), then what ddmlib saved
    # through the real dmtracedump, the strict hprof reader and the real hprof-conv.
    dmtd, conv = find_platform_tool("dmtracedump"), find_platform_tool("hprof-conv")
    vm = start_jvm(run, "JvmProf")
    run.env["DDMC_HPROF_DIR"] = run.dir
    run.java(["--client", "%d:jvmprof" % vm.pid], run.args.java_timeout)
    for name, method in (("ddmlib-method.trace", "JvmProf.fib"), ("ddmlib-sample.trace", "JvmProf.main")):
        path = os.path.join(run.dir, name)
        r = subprocess.run([dmtd, "-o", path], capture_output=True, timeout=120)
        out, err = r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")
        if r.returncode != 0 or "VERSION: 3" not in out or method not in out:
            raise Fail("dmtracedump -o %s: exit %d, %s %s; stderr %r; output %r" % (
                name, r.returncode, "VERSION: 3" in out, method in out, err[-500:], out[:500]))
        if "ERROR" in err or "does not match" in err:
            raise Fail("dmtracedump -o %s complains: %r" % (name, err[-500:]))
        say("%s: dmtracedump -o reads %d lines naming %s" % (name, out.count("\n"), method))
    for name in ("ddmlib-hpds.hprof", "ddmlib-hpdu.hprof"):
        path = os.path.join(run.dir, name)
        d = read_hprof(path)
        if d["instances"].get("JvmProf$Node") != 1000 or not d["instances"].get("JvmProf$Blob"):
            raise Fail("%s: not JvmProf's heap (JvmProf$Node %r, JvmProf$Blob %r)" % (
                name, d["instances"].get("JvmProf$Node"), d["instances"].get("JvmProf$Blob")))
        out = path + ".std"
        r = subprocess.run([conv, path, out], capture_output=True, timeout=120)
        if r.returncode != 0:
            raise Fail("hprof-conv %s: exit %d: %s" % (name, r.returncode, r.stderr.decode(errors="replace")))
        c = read_hprof(out)
        if c["version"] != "1.0.2" or c["instances"].get("JvmProf$Node") != 1000:
            raise Fail("hprof-conv %s: version %s, JvmProf$Node %r" % (name, c["version"],
                                                                        c["instances"].get("JvmProf$Node")))
        say("%s: strict reader ok (%d classes, JvmProf$Node 1000, JvmProf$Blob %d); hprof-conv to 1.0.2, "
            "read again" % (name, d["classes"], d["instances"]["JvmProf$Blob"]))


def mode_hprof(run):
    run.start_standin()
    run.start_adb()
    run.connect()
    vm = run.start_vm("heap.mvm", "minivm-heap")
    run.wait_listed([vm.pid])
    run.env["DDMC_HPROF_DIR"] = run.dir
    run.java(["--client", "%d:hprof" % vm.pid], run.args.java_timeout)
    # What ddmlib received and what the VM wrote, through the strict reader.
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "hprof"))
    import hprof_reader
    for name in ("ddmlib-hpds.hprof", "ddmlib-hpdu.hprof"):
        path = os.path.join(run.dir, name)
        try:
            d = hprof_reader.summary(hprof_reader.read(open(path, "rb").read()))
        except (OSError, hprof_reader.Bad) as e:
            raise Fail("%s: %s" % (name, e))
        if d["instances"].get("Node") != 1000 or d["instances"].get("Leaf") != 250:
            raise Fail("%s: not heap.mvm's objects: %r" % (name, d["instances"]))
        say("%s: strict reader ok, %d classes, Node 1000, Leaf 250" % (name, d["classes"]))


def mode_ddmc(run):
    # The project's own monitor through the same real adb server: ddmc -p PID (adb jdwp:PID).
    if not run.args.ddmc or not os.access(run.args.ddmc, os.X_OK):
        raise Fail("ddmc not built at %r" % run.args.ddmc)
    run.start_standin()
    run.start_adb()
    run.connect()
    z = run.start_vm("zygote.mvm", "minivm-zygote")
    t = run.start_vm("threads.mvm", "minivm-threads")
    run.wait_listed([z.pid, t.pid])

    def ddmc(*a):
        argv = [run.args.ddmc, "-P", str(run.adb_port), "-s", run.serial, "--json"] + list(a)
        r = subprocess.run(argv, env=run.env, stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
        try:
            doc = json.loads(r.stdout.decode() or "null")
        except ValueError:
            raise Fail("ddmc %s printed no JSON: %r %r" % (" ".join(a), r.stdout[:200], r.stderr[:200]))
        return r.returncode, doc

    deadline = time.time() + 15
    # The zygote renames itself after half a second and enters wait-for-debugger one instruction
    # later; under a sanitizer a query can land between the two, so wait for both.
    while True:
        rc, doc = ddmc("-p", str(z.pid), "info")
        if rc != 0:
            raise Fail("ddmc -p %d info exited %d: %s" % (z.pid, rc, doc))
        v = doc["vm"]
        if (v["app_name"] == "com.example.zygote" and v["waiting_for_debugger"]) or time.time() > deadline:
            break
        time.sleep(0.5)
    vm = doc["vm"]
    if vm["pid"] != z.pid or vm["vm_ident"] != "minivm v0.1" or vm["app_name"] != "com.example.zygote":
        raise Fail("ddmc info through adb: %s" % vm)
    if not vm["waiting_for_debugger"]:
        raise Fail("ddmc info through adb: the zygote should be waiting for a debugger: %s" % vm)
    say("ddmc -p %d info via adb: pid, ident, app name %r, waiting for a debugger" % (z.pid, vm["app_name"]))
    rc, doc = ddmc("-p", str(t.pid), "threads")
    names = set(th["name"] for th in doc.get("threads", []))
    if rc != 0 or not {"main", "Sleeper", "Waiter-1", "Busy"} <= names:
        raise Fail("ddmc -p %d threads via adb: exit %d, threads %s" % (t.pid, rc, sorted(names)))
    say("ddmc -p %d threads via adb: %d threads" % (t.pid, len(names)))
    # ddmc timeline of both through adb (--vm pid:PID; the port from ANDROID_ADB_SERVER_PORT): a
    # process each in one Trace Event file, threads.mvm's threads named, their states as slices.
    out = os.path.join(tempfile.mkdtemp(prefix="ddmc-timeline-"), "timeline.json")
    r = subprocess.run([run.args.ddmc, "--json", "timeline", "-d", "1.5", "-o", out, "--vm", "pid:%d" % z.pid,
                        "--vm", "pid:%d" % t.pid], env=dict(run.env, ANDROID_ADB_SERVER_PORT=str(run.adb_port)),
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    doc = json.loads(r.stdout.decode() or "null")
    if r.returncode != 0 or [v["pid"] for v in doc["timeline"]["vms"]] != [z.pid, t.pid]:
        raise Fail("ddmc timeline --vm pid:%d --vm pid:%d: exit %d, %s %r" % (z.pid, t.pid, r.returncode, doc,
                                                                          r.stderr[-500:]))
    with open(out) as f:
        ev = json.load(f)["traceEvents"]
    # --adb: every process adb lists, the same two (-P, -s as ps takes them).
    r2 = subprocess.run([run.args.ddmc, "-P", str(run.adb_port), "-s", run.serial, "--json", "timeline", "-d", "1",
                         "-o", out + ".adb", "--adb"], env=run.env, stdin=subprocess.DEVNULL, capture_output=True,
                        timeout=60)
    doc2 = json.loads(r2.stdout.decode() or "null")
    if r2.returncode != 0 or sorted(v["pid"] for v in doc2["timeline"]["vms"]) != sorted([z.pid, t.pid]):
        raise Fail("ddmc timeline --adb: exit %d, %s %r" % (r2.returncode, doc2, r2.stderr[-500:]))
    shutil.rmtree(os.path.dirname(out))
    names = {e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name" and e["pid"] == t.pid}
    slices = [e for e in ev if e["ph"] == "X" and e["pid"] == t.pid and e.get("cat") == "thread_state"]
    pids = {e["pid"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
    if not {"main", "Sleeper", "Waiter-1", "Busy"} <= names or not slices or pids != {z.pid, t.pid}:
        raise Fail("ddmc timeline via adb: processes %s, threads %s, %d slices" % (pids, sorted(names), len(slices)))
    say("ddmc timeline via adb (--vm pid:PID, --adb): 2 processes, %d thread-state slices of threads.mvm"
        % len(slices))
    rc, doc = ddmc("-p", "999999", "info")
    if rc != 2:
        raise Fail("ddmc -p 999999 (no such process) exited %d, want 2: %s" % (rc, doc))
    say("ddmc -p 999999: exit 2 (%s)" % doc.get("error", {}).get("message", doc))


def hold_with_debugger(run, pid):
    """A debugger connection of ours on a minivm through `adb forward` (the handshake and one JDWP
    command, VirtualMachine.IDSizes, so the VM reports it in SESS); the open socket."""
    fwd = free_port()
    run.adbcmd("-s", run.serial, "forward", "tcp:%d" % fwd, "jdwp:%d" % pid)
    dbg = socket.create_connection(("127.0.0.1", fwd), timeout=10)
    dbg.settimeout(10)
    dbg.sendall(b"JDWP-Handshake")
    got = b""
    while len(got) < 14 + 11:
        if len(got) == 14:
            dbg.sendall(struct.pack(">IIBBB", 11, 1, 0, 1, 7))
        d = dbg.recv(14 + 11 - len(got) if len(got) >= 14 else 14 - len(got))
        if not d:
            raise Fail("minivm %d closed our debugger connection" % pid)
        got += d
    return dbg


def mode_ui(run):
    # ddmc ui --all (and -p PID) through the same adb server: tests/ui/ui_test.js drives Debian's
    # chromium on the page (its --adb-port run), starting and killing one more VM itself.
    for what, path in (("ddmc", run.args.ddmc), ("tests/ui/ui_test.js", run.args.ui_test), ("node", run.args.node)):
        if not path or not os.path.exists(path):
            raise Fail("%s not found at %r" % (what, path))
    run.start_standin()
    run.start_adb()
    run.connect()
    a = run.start_vm("idle.mvm", "minivm-idle")
    z = run.start_vm("zygote.mvm", "minivm-zygote")
    held = run.start_vm("idle.mvm", "minivm-held")
    run.wait_listed([a.pid, z.pid, held.pid])
    dbg = hold_with_debugger(run, held.pid)  # open until the page's checks are done
    out = os.path.join(run.dir, "ui")
    argv = [run.args.node, run.args.ui_test, "--ddmc", run.args.ddmc, "--chromium", run.args.chromium, "--out", out,
            "--adb-port", str(run.adb_port), "--serial", run.serial, "--control", run.control, "--minivm",
            run.args.minivm, "--programs", run.args.programs, "--pids", "%d,%d,%d" % (a.pid, z.pid, held.pid)]
    # SIGTERM on a timeout: the script then ends the ddmc and minivm it started itself.
    node = subprocess.Popen(argv, env=run.env, stdin=subprocess.DEVNULL)
    try:
        rc = node.wait(timeout=150)
    except subprocess.TimeoutExpired:
        node.terminate()
        try:
            node.wait(timeout=10)
        except subprocess.TimeoutExpired:
            node.kill()
            node.wait()
        raise Fail("ui_test.js --adb-port did not finish in 150 s")
    finally:
        dbg.close()
    if rc != 0:
        raise Fail("ui_test.js --adb-port exited %d (its log above; screenshots in %s)" % (rc, out))
    say("ddmc ui --all through adb: the page's checks passed")


def mode_ps(run):
    # ddmc ps through the real adb server. The VMs: 4 minivm processes (idle x2, zygote, and one
    # idle held by a debugger connection of ours), the rest synthetic (the stand-in answers their
    # handshake and HELO itself, see adbd_standin.py), plus one silent VM in a second phase.
    if not run.args.ddmc or not os.access(run.args.ddmc, os.X_OK):
        raise Fail("ddmc not built at %r" % run.args.ddmc)
    n_real = 4
    n_synth = run.args.count - n_real
    silent = 4199999
    base = 4200000
    run.start_standin(["--synthetic-vms", str(n_synth), "--synthetic-base", str(base), "--silent-vm", str(silent)])
    run.start_adb()
    run.connect()
    idle = [run.start_vm("idle.mvm", "minivm-idle-%d" % i) for i in range(2)]
    zyg = run.start_vm("zygote.mvm", "minivm-zygote")
    held = run.start_vm("idle.mvm", "minivm-held")
    real = idle + [zyg, held]
    run.wait_listed([p.pid for p in real], timeout=30)

    def silent_listed(want):
        run.standin.send_signal(signal.SIGUSR1)
        deadline = time.time() + 10
        while (str(silent) in run.adbcmd("-s", run.serial, "jdwp").split()) != want:
            if time.time() > deadline:
                raise Fail("the stand-in did not %s the silent VM on SIGUSR1" % ("list" if want else "hide"))
            time.sleep(0.2)

    silent_listed(False)  # the timing below is of VMs that answer; the silent one comes after

    def ddmc(*a, timeout=60):
        argv = [run.args.ddmc, "-P", str(run.adb_port), "-s", run.serial] + list(a)
        t = time.time()
        r = subprocess.run(argv, env=run.env, stdin=subprocess.DEVNULL, capture_output=True, timeout=timeout)
        return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace"), time.time() - t

    def ps_json(*a, timeout=60):
        rc, out, err, secs = ddmc("--json", *a, timeout=timeout)
        try:
            doc = json.loads(out)
        except ValueError:
            raise Fail("ddmc --json %s printed no JSON (exit %d): %r %r" % (" ".join(a), rc, out[:300], err[:300]))
        return rc, doc, err, secs

    # A debugger of ours on one minivm: the VM serves a monitor beside it (docs/sessions.md), so ps
    # still gets its HELO.
    fwd = free_port()
    run.adbcmd("-s", run.serial, "forward", "tcp:%d" % fwd, "jdwp:%d" % held.pid)
    dbg = socket.create_connection(("127.0.0.1", fwd), timeout=10)
    dbg.sendall(b"JDWP-Handshake")
    dbg.settimeout(10)
    echo = b""
    while len(echo) < 14:
        d = dbg.recv(14 - len(echo))
        if not d:
            raise Fail("the held minivm closed our debugger connection")
        echo += d
    # One JDWP command (VirtualMachine.IDSizes) makes it a debugger the VM reports in SESS.
    dbg.sendall(struct.pack(">IIBBB", 11, 1, 0, 1, 7))
    got = b""
    while len(got) < 11:
        d = dbg.recv(64)
        if not d:
            raise Fail("the held minivm closed our debugger connection after IDSizes")
        got += d

    # The zygote renames itself after 0.5 s and then waits for a debugger.
    deadline = time.time() + 20
    while True:
        rc, doc, err, secs = ps_json("-t", "3000", "ps")
        procs = {p["pid"]: p for p in doc.get("processes", [])}
        z = procs.get(zyg.pid, {})
        if rc == 0 and z.get("app_name") == "com.example.zygote" and z.get("debugger") == "waiting":
            break
        if time.time() > deadline:
            raise Fail("ddmc ps never showed the zygote renamed and waiting: exit %d, %s" % (rc, z or doc))
        time.sleep(0.5)

    # The listing of the whole set, timed (the figure of bench/RESULTS.md), text and JSON.
    cmd = "ddmc -P %d -s %s -v -t 3000 ps" % (run.adb_port, run.serial)
    times = []
    for _ in range(3):
        rc, out, err, secs = ddmc("-v", "-t", "3000", "ps")
        times.append(secs)
        if rc != 0:
            raise Fail("%s exited %d: %s" % (cmd, rc, err))
    rows = [l for l in out.splitlines()[1:] if l.strip()]
    say("BENCH `%s`: %d processes (%d minivm, %d synthetic) listed in %s s (3 runs); ddmc says: %s" %
        (cmd, len(rows), n_real, n_synth, ", ".join("%.3f" % t for t in times), err.strip()))
    if max(times) > run.args.ps_budget:
        raise Fail("ddmc ps took %.2f s, over the %.1f s budget" % (max(times), run.args.ps_budget))
    if len(rows) != n_real + n_synth or "%d answered HELO" % (n_real + n_synth) not in err:
        raise Fail("ps listed %d rows, want %d, all answering (the held minivm too): %s" %
                   (len(rows), n_real + n_synth, err))
    silent_listed(True)
    rc, doc, err, secs = ps_json("-t", "3000", "ps")
    procs = {p["pid"]: p for p in doc["processes"]}
    want = set(p.pid for p in real) | set(range(base, base + n_synth)) | {silent}
    if set(procs) != want or doc["count"] != len(want):
        raise Fail("ps --json lists %d pids, want %d (missing %s, extra %s)" %
                   (len(procs), len(want), sorted(want - set(procs))[:10], sorted(set(procs) - want)[:10]))
    for i in range(n_synth):
        p = procs[base + i]
        exp = {"state": "ok", "vm_pid": base + i, "vm_ident": "standin-synthetic",
               "app_name": "com.example.synth%03d" % i, "user_id": i % 3 * 10,
               "abi": "x86_64" if i % 2 == 0 else "arm64-v8a",
               "debugger": "waiting" if i % 10 == 9 else "none", "debugger_attached": False}
        bad = {k: (p.get(k), v) for k, v in exp.items() if p.get(k) != v}
        if bad:
            raise Fail("synthetic pid %d: (got, want) %s" % (base + i, bad))
    for vm in idle:
        p = procs[vm.pid]
        if p["state"] != "ok" or p["vm_pid"] != vm.pid or p["vm_ident"] != "minivm v0.1" or p["debugger"] != "none":
            raise Fail("idle minivm %d: %s" % (vm.pid, p))
    h = procs[held.pid]
    if (h["state"] != "ok" or h["vm_pid"] != held.pid or h["vm_ident"] != "minivm v0.1" or
            h["debugger"] != "attached" or h["debugger_attached"] is not True):
        raise Fail("the minivm held by our debugger connection (answers beside it, debugger attached): %s" % h)
    s = procs[silent]
    if s["state"] != "no-answer" or "3000 ms" not in (s["message"] or ""):
        raise Fail("the silent VM: %s" % s)
    say("ps --json: %d processes; synthetic fields, minivm idents, zygote waiting, held minivm answering, silent "
        "VM no-answer (%s)" % (len(procs), s["message"]))
    rc, text, err, secs = ddmc("-t", "3000", "ps")
    for pid, needle in ((held.pid, "minivm v0.1"), (held.pid, "attached"), (silent, "no answer to HELO within 3000 ms"),
                        (zyg.pid, "com.example.zygote")):
        line = next((l for l in text.splitlines() if l.split() and l.split()[0] == str(pid)), "")
        if needle not in line:
            raise Fail("ps text: the line of pid %d lacks %r: %r" % (pid, needle, line))

    # The silent VM is not waited on beyond -t: with -t 1000 the whole listing takes about 1 s.
    rc, doc, err, secs = ps_json("-t", "1000", "ps")
    s = {p["pid"]: p for p in doc["processes"]}[silent]
    if rc != 0 or s["state"] != "no-answer" or not 0.9 <= secs < 3.0:
        raise Fail("ps -t 1000: exit %d in %.2f s, silent VM %s" % (rc, secs, s))
    say("ps -t 1000: %.2f s in all, the silent VM listed as %s" % (secs, s["state"]))
    dbg.close()
    run.adbcmd("-s", run.serial, "forward", "--remove", "tcp:%d" % fwd)

    # --watch: a minivm appears and disappears while ps watches, JSON then text (ended by SIGINT).
    def watch_cycle(argv, name):
        w = subprocess.Popen([run.args.ddmc, "-P", str(run.adb_port), "-s", run.serial, "-t", "2000"] + argv,
                             env=run.env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        run.procs.append((name, w, None))
        # Read as it comes: a whole picture of 300 rows is 20 KB, and a full pipe would stop ddmc.
        import threading
        w.chunks = []
        w.reader = threading.Thread(target=lambda: w.chunks.extend(iter(lambda: w.stdout.read1(65536), b"")))
        w.reader.start()
        time.sleep(1.5)
        vm = run.start_vm("idle.mvm", "minivm-" + name)
        run.wait_listed([vm.pid])
        time.sleep(1.0)
        vm.terminate()
        vm.wait(timeout=5)
        deadline = time.time() + 10
        while str(vm.pid) in run.adbcmd("-s", run.serial, "jdwp").split():
            if time.time() > deadline:
                raise Fail("adb still lists minivm %d after it exited" % vm.pid)
            time.sleep(0.2)
        time.sleep(1.0)
        return w, vm

    w, vm = watch_cycle(["--json", "ps", "--watch", "--duration", "7"], "ps-watch-json")
    try:
        w.wait(timeout=20)
    except subprocess.TimeoutExpired:
        w.kill()
        raise Fail("ddmc ps --watch --duration 7 did not end")
    w.reader.join()
    out, err = b"".join(w.chunks), w.stderr.read()
    try:
        doc = json.loads(out.decode())
    except ValueError:
        raise Fail("ps --watch --json printed no JSON (exit %d): %r %r" % (w.returncode, out[:300], err[:300]))
    ev = [(e["event"], e["pid"]) for e in doc["events"]]
    if w.returncode != 0 or ev != [("appeared", vm.pid), ("gone", vm.pid)] or doc["interrupted"]:
        raise Fail("ps --watch --json: exit %d, events %s" % (w.returncode, doc.get("events")))
    if vm.pid in [p["pid"] for p in doc["processes"]] or doc["count"] != len(want):
        raise Fail("ps --watch --json: the final list still has %d or lacks others" % vm.pid)
    t_app, t_gone = doc["events"][0]["t_ms"], doc["events"][1]["t_ms"]
    say("ps --watch --json: pid %d appeared at %d ms, gone at %d ms; %d track-jdwp lists, %d processes at the end"
        % (vm.pid, t_app, t_gone, doc["lists"], doc["count"]))

    w, vm = watch_cycle(["ps", "--watch"], "ps-watch-text")
    w.send_signal(signal.SIGINT)
    try:
        w.wait(timeout=10)
    except subprocess.TimeoutExpired:
        w.kill()
        raise Fail("ddmc ps --watch did not end on SIGINT")
    w.reader.join()
    out, err = b"".join(w.chunks), w.stderr.read()
    pictures = [p for p in out.decode().split("ddmc ps  ")[1:]]
    has = [any(l.split() and l.split()[0] == str(vm.pid) for l in p.splitlines()) for p in pictures]
    if w.returncode != 0 or True not in has or has[-1] or has[0]:
        raise Fail("ps --watch (text): exit %d, pid %d in pictures %s; stderr %r; output:\n%s" %
                   (w.returncode, vm.pid, has, err, "\n".join(l for l in out.decode().splitlines() if "synth" not in l)))
    lines = [l for p in pictures for l in p.splitlines() if l.split() and l.split()[0] == str(vm.pid)]
    line = next((l for l in lines if "minivm v0.1" in l), None)
    if line is None:
        raise Fail("ps --watch (text): no picture shows pid %d answering: %r" % (vm.pid, lines))
    say("ps --watch (text, SIGINT): %d pictures, pid %d absent, then %r, then absent" % (len(pictures), vm.pid,
                                                                                         line.strip()))

    # Errors: no adb server there (2), no such device (2), usage (64).
    def json_run(argv):
        r = subprocess.run([run.args.ddmc, "--json"] + argv, env=run.env, stdin=subprocess.DEVNULL,
                           capture_output=True, timeout=30)
        try:
            return r.returncode, json.loads(r.stdout.decode())
        except ValueError:
            raise Fail("ddmc --json %s printed no JSON: %r" % (" ".join(argv), r.stdout[:300]))

    rc, doc = json_run(["-P", str(free_port()), "ps"])
    if rc != 2 or doc["ok"] or doc["error"]["exit"] != 2:
        raise Fail("ps against no adb server: exit %d, %s" % (rc, doc))
    rc, doc = json_run(["-P", str(run.adb_port), "-s", "no-such-device", "ps"])
    if rc != 2 or "no-such-device" not in doc["error"]["message"]:
        raise Fail("ps -s no-such-device: exit %d, %s" % (rc, doc))
    for bad in (["-p", "1", "ps"], ["-c", "127.0.0.1:1", "ps"], ["ps", "--duration", "1"], ["ps", "--bogus"]):
        r = subprocess.run([run.args.ddmc] + bad, env=run.env, capture_output=True, timeout=30)
        if r.returncode != 64:
            raise Fail("ddmc %s exited %d, want 64 (usage)" % (" ".join(bad), r.returncode))
    say("ps errors: no adb server 2, unknown device 2 (%s), usage 64" % doc["error"]["message"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["selftest", "ddmlib", "socket", "many", "ddmc", "prof", "hprof", "ps", "jvm", "jvmprof",
                                     "jvmddm", "ui"])
    ap.add_argument("--jvm-agent", help="libddmcjdwp.so (mode jvm)")
    ap.add_argument("--ui-test", help="tests/ui/ui_test.js (mode ui)")
    ap.add_argument("--node", default="node", help="node (mode ui)")
    ap.add_argument("--chromium", default="/usr/bin/chromium", help="Debian's chromium (mode ui)")
    ap.add_argument("--ddmc", help="the ddmc binary (mode ddmc)")
    ap.add_argument("--minivm", required=True)
    ap.add_argument("--programs", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--count", type=int, default=None, help="VMs (many: 20, ps: 300)")
    ap.add_argument("--ps-budget", type=float, default=5.0, help="ps: seconds the listing may take")
    ap.add_argument("--java-timeout", type=int, default=120)
    ap.add_argument("--setup", help="run this (scripts/setup.sh) with --e2e first")
    args = ap.parse_args()
    if args.count is None:
        args.count = 300 if args.mode == "ps" else 20

    if args.setup:
        say("%s --e2e" % args.setup)
        r = subprocess.run([args.setup, "--e2e"], stdin=subprocess.DEVNULL)
        if r.returncode != 0:
            print("FAIL: %s --e2e exited %d: could not install adb / libandroid-ddms-java / default-jdk-headless "
                  "(no network to the Debian mirrors?). These tests need them; they do not skip." %
                  (args.setup, r.returncode), flush=True)
            return 1
    adb, java, javac, cp, missing = find_tools()
    if args.mode in ("selftest", "ps", "ui"):
        missing = [m for m in missing if m.startswith("adb")]
    if missing:
        print("FAIL: missing for the adb end-to-end tests: %s. Install them with `scripts/setup.sh --e2e` "
              "(needs the Debian package mirrors). These tests fail, never skip, without them." %
              "; ".join(missing), flush=True)
        return 1
    if not os.access(args.minivm, os.X_OK):
        print("FAIL: minivm not built at %s" % args.minivm, flush=True)
        return 1

    run = Run(args)
    run.adb, run.java_bin, run.javac, run.cp = adb, java, javac, cp
    say("mode %s, work dir %s" % (args.mode, run.dir))
    ok = False
    try:
        {"selftest": mode_selftest, "ddmlib": mode_ddmlib, "socket": mode_socket, "many": mode_many,
         "ddmc": mode_ddmc, "prof": mode_prof, "hprof": mode_hprof, "ps": mode_ps, "jvm": mode_jvm,
         "jvmprof": mode_jvmprof, "jvmddm": mode_jvmddm, "ui": mode_ui}[args.mode](run)
        ok = True
    except Fail as e:
        print("FAIL: %s" % e, flush=True)
    except Exception as e:  # a bug in the driver is a failure too, with its traceback
        import traceback
        traceback.print_exc()
        print("FAIL: %s: %s" % (type(e).__name__, e), flush=True)
    finally:
        run.stop()
    if not ok:
        run.dump_logs()
        return 1
    say("PASS (%s)" % args.mode)
    if not os.environ.get("DDMC_KEEP_WORK"):
        shutil.rmtree(run.dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
