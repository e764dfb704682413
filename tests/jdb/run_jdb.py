#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Drives the real `jdb` against a VM and checks what it shows (python3 standard library only).

    run_jdb.py --target jvm [--java java --javac javac] [options] SCRIPT...
    run_jdb.py --target minivm --minivm PATH [--program FILE.mvm] [options] SCRIPT...

--target jvm compiles tests/jdb/Debug.java (javac -g) into a temporary directory and runs it on the
JDK's own VM with -agentlib:jdwp=transport=dt_socket,server=y,suspend=y|n,address=127.0.0.1:0; it
is the reference that proves the expectations are right. --target minivm runs
`MINIVM -agentlib:jdwp=transport=dt_socket,address=127.0.0.1:0,server=y,suspend=y|n PROGRAM`
(examples/minivm/programs/debug.mvm, which mirrors Debug.java line for line). Either way the VM
picks a free port and the runner reads it from the VM's listening line ("Listening for transport
dt_socket at address: PORT" from the JVM, "JDWP listening on HOST:PORT" from minivm), then attaches
`jdb -sourcepath tests/jdb -attach 127.0.0.1:PORT` through pipes and plays the scripts in order.
jdb runs in a scratch directory with user.home pointing there (no jdb.ini or .jdbrc is read) and an
English locale. Nothing waits a fixed time: every step waits for jdb's output (and the program's)
with a deadline (--timeout, 20 s) that only matters when something is wrong.

Several scripts run in sequence; a script that says `%vm same` attaches a new jdb to the VM the
previous one left running. The JVM closes its listening socket while a debugger is attached and
listens again (with address=...:0, on a new port) when it leaves, so for the JVM the runner waits for
that next listening line; minivm keeps listening on the port it announced.

--jvm-agent PATH (with --target jvm) runs the same JVM with libddmc's JDWP agent instead of the
JDK's: -agentpath:PATH=transport=dt_socket,address=127.0.0.1:0,server=y,suspend=y|n. The agent
prints the JDK's listening line and, like minivm, keeps listening on its port between sessions.

On a mismatch the runner prints which step failed and why, the whole jdb transcript (each step's
command and output), the program's output and the VM's stderr, and exits with status 1. A failed
script does not stop later scripts that start a VM of their own. Every process it starts is killed
by pid when it ends (also on SIGTERM from ctest).

Script format (tests/jdb/*.jdb), one item per line; blank lines and lines starting with # are
ignored, leading blanks are ignored:

  %vm suspend=y | %vm suspend=n
                  first line: start a new VM with that suspend mode (the previous VM is checked to
                  be still alive, then killed)
  %vm same        first line: attach to the VM the previous script left running
  %forbid REGEX   jdb's output must never match REGEX in any step of this script (added to the
                  built-in list: internal exceptions, "not supported on the target VM", ...)
  %allow REGEX    a built-in forbidden pattern (exactly as written in FORBIDDEN) this script expects,
                  e.g. "Exception occurred:" for an uncaught exception jdb reports
  %timeout SEC    per-step deadline for this script
  %program NAME   the VM runs tests/jdb/NAME.java (class NAME) on the JVM and tests/jdb/name.mvm
                  (lower case) on minivm instead of Debug / --program (new VMs only); a program
                  not in tests/jdb comes from tests/jdi/NAME.java and examples/minivm/programs/

A step is one of:
  @attach         start jdb and attach it to the VM (the step's output is jdb's banner)
  > COMMAND       send COMMAND to jdb; `> exit` / `> quit` waits for jdb to end (status 0)
  @wait           send nothing; wait for asynchronous output (jdb's or the program's)
  @kill-jdb       kill jdb (SIGKILL: the debugger vanishes without a word, as a crashed IDE does)
                  and wait until it is gone; only out~ / out= / mon~ / mon= steps may follow
  @mon COMMAND    send COMMAND to the monitor (a driver that has one: run_android.py's ddmlib
                  monitor takes `kill`, ddmlib's Client.kill()); then wait like @wait

With --ddmc PATH the runner has a monitor of its own on the same JDWP port, beside jdb
(docs/sessions.md): the `ddmc` CLI, whose output (and what the commands below report) is what
mon~ / mon= match. Its @mon commands:
  @mon start ARGS   start `ddmc -c 127.0.0.1:PORT ARGS` in the background (threads --watch S)
  @mon run ARGS     run `ddmc -c 127.0.0.1:PORT ARGS` to its end; its output and "[exit N]"
                    ({workdir} in ARGS is the runner's scratch directory)
  @mon stop         end the background ddmc (SIGTERM, by pid) and wait for it
  @mon hold N       open N raw sessions (handshake, one HELO each) and keep them open
  @mon release      close them
  @mon second-jdb   attach a second jdb while the first is attached, for 15 s at most; its
                    output, then the VM's stderr lines that say "refused"

followed by its expectations:
  ~ REGEX         jdb's output for this step must match REGEX (Python re, MULTILINE; it may span
                  lines with \\n). Named groups (?P<name>...) set variables.
  = TEXT          jdb's output for this step must contain TEXT
  ! REGEX         jdb's output for this step must not match REGEX (checked when the step ends)
  out~ REGEX      the program's stdout written since the step began must match REGEX
  out= TEXT       ... must contain TEXT
  mon~ REGEX      the monitor's output (a driver such as run_android.py passes one: ddmlib's
  mon= TEXT       view of the VM) written since the step began matches REGEX / contains TEXT
  vm-exits [N]    the VM ends in this step (exit status N, default 0) and jdb ends on its own; the
                  step waits for both, and the script then need not `> exit` nor leave the VM running
  ${name}         in a command, TEXT or REGEX: a variable set by an earlier step of the same
                  script (inserted as literal text; re.escape'd in a REGEX)

A step's output is everything jdb printed after the previous step ended, up to its prompt. jdb
prints the prompt after a command that resumes the VM from one thread while another prints the
event, so that "> " can land inside the event's lines ("Breakpoint hit: > \"thread=main\", ...");
expectations are matched with such a stray "> " removed (see INTERLEAVED). The step
ends when every ~ / = / out~ / out= expectation has matched and jdb's output ends with a prompt
("> " or "THREAD[N] "), or, for exit, when jdb has ended. Asynchronous output (a breakpoint hit
after `cont`) belongs to the step that caused it: put its expectation there, so the step waits for it.
After `> exit` only out~ / out= steps (@wait) may follow; the VM must still be running at the end of
every script.
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# What jdb must never print: a JDI call the VM answered wrongly surfaces as one of these.
FORBIDDEN = [
    r"Internal exception",
    r"Internal error",
    r"Exception in thread",
    r"Exception occurred:",
    r"UnsupportedOperationException",
    r"is not supported on the target VM",
    r"ParseException",
    r"com\.sun\.jdi\.[A-Za-z]+Exception",
    r"\bInvalid\w*Exception\b",
    r"is not a valid thread id",
    r"No (?:thread|default thread) specified",
]
# jdb's prompt at the end of its output: "> " with no current thread, "NAME[N] " with one.
PROMPT = re.compile(r"(?:\A|\n)(?:> |\S[^\n]*?\[\d+\] )\Z")
# After a command that resumes the VM, jdb's command thread prints its prompt ("> ", or "main[1] "
# if the event thread has already made main current) while its event thread may be printing the
# event in pieces, so the prompt can land inside it: "Breakpoint hit: > ...", "Breakpoint hit:
# main[1] ...", "VM Started: > No frames...", "main[1] 18    total = ...", "main[1] > " at the end.
# Expectations are matched against the output with such a prompt taken out (the transcript shows it
# as jdb printed it).
_STRAY = r"(?:> |[^\s\[\]\"]+\[\d+\] )"
# The command thread's own reply can land there too: after `stop at` a thread already running
# towards the line hits it at once, and "Set breakpoint Debug:18" (with its prompt) comes out between
# "Breakpoint hit: " and the rest; it is moved in front of the event.
INTERLEAVED = [
    (re.compile(r"(Breakpoint hit: |Step completed: )(Set breakpoint [^\n]*\n)" + _STRAY + "?"), r"\2\1"),
    (re.compile(r"(\[\d+\] )" + _STRAY + r"\Z"), r"\1"),
    (re.compile(r"(^|Breakpoint hit: |Step completed: |VM Started: )" + _STRAY + r"(?=\S)", re.M), r"\1"),
    # In an event set of two events the prompt can land after the first one's words, before the
    # newline that ends them: "Step completed: > \nBreakpoint hit: ...".
    (re.compile(r"(Breakpoint hit: |Step completed: |VM Started: )" + _STRAY + r"(?=\n)"), r"\1"),
]


def normalize(text):
    for pat, repl in INTERLEAVED:
        text = pat.sub(repl, text)
    return text
VAR = re.compile(r"\$\{(\w+)\}")

CHILDREN = []  # Popen objects, killed by pid at exit


class Failure(Exception):
    pass


def log(msg):
    print(f"[jdb {time.strftime('%H:%M:%S')}] {msg}", flush=True)


def kill_children(*_):
    for p in CHILDREN:
        if p.poll() is None:
            try:
                p.kill()
            except OSError:
                pass
    for p in CHILDREN:
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass


def on_signal(signum, _frame):
    kill_children()
    sys.exit(128 + signum)


def clean_env():
    env = dict(os.environ)
    for k in ("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS", "CLASSPATH"):
        env.pop(k, None)
    env["LC_ALL"] = "C.UTF-8"
    env["LANG"] = "C.UTF-8"
    return env


class Stream:
    """Everything a child writes to one pipe, collected by a thread; waiters are woken on new data."""

    def __init__(self, pipe, cond, name, on_line=None):
        self.pipe, self.cond, self.name, self.on_line = pipe, cond, name, on_line
        self.text = ""
        self.eof = False
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        pending = b""
        while True:
            try:
                chunk = os.read(self.pipe.fileno(), 65536)
            except OSError:
                chunk = b""
            if not chunk:
                break
            pending += chunk
            # Decode whole UTF-8 sequences only.
            cut = len(pending)
            while cut > 0 and cut > len(pending) - 4 and (pending[cut - 1] & 0xC0) == 0x80:
                cut -= 1
            if cut > 0 and pending[cut - 1] >= 0xC0:
                cut -= 1
            text, pending = pending[:cut].decode("utf-8", "replace"), pending[cut:]
            with self.cond:
                self.text += text
                if self.on_line:
                    self.on_line(self.text)
                self.cond.notify_all()
        with self.cond:
            self.text += pending.decode("utf-8", "replace")
            self.eof = True
            self.cond.notify_all()


def program_java(name):
    """NAME.java of %program NAME: tests/jdb/, else tests/jdi/ (the JDI test's programs)."""
    here = os.path.join(HERE, name + ".java")
    return here if os.path.isfile(here) else os.path.join(ROOT, "tests", "jdi", name + ".java")


def program_mvm(name):
    """name.mvm of %program NAME: tests/jdb/, else examples/minivm/programs/."""
    here = os.path.join(HERE, name.lower() + ".mvm")
    return here if os.path.isfile(here) else os.path.join(ROOT, "examples", "minivm", "programs", name.lower() + ".mvm")


class VM:
    """The debuggee: a JVM running Debug, or minivm running debug.mvm."""

    def __init__(self, args, suspend, workdir, cond, index, program=None):
        self.cond = cond
        self.port = None
        self.suspend = suspend
        env = clean_env()
        jdwp_opts = f"transport=dt_socket,address=127.0.0.1:0,server=y,suspend={suspend}"
        agent = f"-agentlib:jdwp={jdwp_opts}"
        if args.target == "jvm" and args.jvm_agent:
            # libddmc's JVM TI agent in place of the JDK's own: same options, same listening line.
            agent = f"-agentpath:{os.path.abspath(args.jvm_agent)}={jdwp_opts}"
        if args.target == "jvm":
            cmd = [args.java, agent, *args.vm_arg, "-cp", args.classes, program or "Debug"]
            # The JVM prints its listening line on stdout, minivm on stderr.
            port_re, port_stream = r"Listening for transport dt_socket at address: (\d+)", "out"
        else:
            mvm = program_mvm(program) if program else args.program
            cmd = [args.minivm, agent, *args.vm_arg, mvm]
            port_re, port_stream = r"JDWP listening on [^ \n]*:(\d+)", "err"
        self.cmd = cmd
        log(f"VM {index}: {' '.join(cmd)}")
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, cwd=workdir, env=env)
        CHILDREN.append(self.proc)
        port_rx = re.compile(port_re)

        self.ports = []  # every listening line so far: the JVM listens anew after each session

        def find_port(text):
            found = [int(p) for p in port_rx.findall(text)]
            if len(found) > len(self.ports):
                self.ports = found
                self.port = found[-1]

        self.out = Stream(self.proc.stdout, cond, "program stdout", find_port if port_stream == "out" else None)
        self.err = Stream(self.proc.stderr, cond, "VM stderr", find_port if port_stream == "err" else None)
        deadline = time.monotonic() + args.timeout
        with cond:
            while self.port is None and self.proc.poll() is None and time.monotonic() < deadline:
                cond.wait(min(1.0, max(0.01, deadline - time.monotonic())))
        if self.port is None:
            raise Failure(f"the VM did not report its JDWP port within {args.timeout:g} s "
                          f"(exit status {self.proc.poll()}): no line matching {port_re!r} on its "
                          f"std{port_stream}; with suspend=y it must come before the VM waits for the debugger")
        log(f"VM {index}: pid {self.proc.pid}, JDWP on 127.0.0.1:{self.port}, suspend={suspend}")

    def wait_listening(self, after, timeout):
        """Waits until the VM has announced more than `after` listening lines (the JVM closes its
        server socket for a session and listens again, on a new port, after it)."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while len(self.ports) <= after and self.proc.poll() is None and time.monotonic() < deadline:
                self.cond.wait(min(1.0, max(0.01, deadline - time.monotonic())))
            if len(self.ports) <= after:
                raise Failure(f"the VM did not listen again within {timeout:g} s after the last session")

    def alive(self):
        return self.proc.poll() is None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass


class Expect:
    def __init__(self, kind, text, where):
        self.kind, self.text, self.where = kind, text, where  # kind: ~ = ! out~ out=


class Step:
    def __init__(self, kind, command, where):
        self.kind, self.command, self.where = kind, command, where  # kind: attach, cmd, wait
        self.expects = []

    def title(self):
        if self.kind == "cmd":
            return f"> {self.command}"
        if self.kind == "mon":
            return f"@mon {self.command}"
        return "@" + self.kind


class Script:
    def __init__(self, path):
        self.path = path
        self.name = os.path.basename(path)
        self.vm = None  # "y", "n" or "same"
        self.forbid = []
        self.allow = []  # built-in forbidden patterns this script expects (%allow)
        self.timeout = None
        self.program = None  # %program NAME: None means Debug / --program
        self.steps = []
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
        for no, raw in enumerate(lines, 1):
            line = raw.strip()
            where = f"{self.name}:{no}"
            if not line or line.startswith("#"):
                continue
            if line.startswith("%"):
                word, _, rest = line[1:].partition(" ")
                rest = rest.strip()
                if word == "vm":
                    if self.vm is not None or self.steps:
                        raise SystemExit(f"{where}: %vm must come once, before the first step")
                    self.vm = {"suspend=y": "y", "suspend=n": "n", "same": "same"}.get(rest)
                    if self.vm is None:
                        raise SystemExit(f"{where}: %vm takes suspend=y, suspend=n or same")
                elif word == "forbid":
                    self.forbid.append(rest)
                elif word == "allow":
                    if rest not in FORBIDDEN:
                        raise SystemExit(f"{where}: %allow takes one of the built-in forbidden patterns")
                    self.allow.append(rest)
                elif word == "timeout":
                    self.timeout = float(rest)
                elif word == "program":
                    if not re.fullmatch(r"[A-Za-z_]\w*", rest):
                        raise SystemExit(f"{where}: %program takes a class name")
                    self.program = rest
                else:
                    raise SystemExit(f"{where}: unknown directive %{word}")
            elif line.startswith(">"):
                self.steps.append(Step("cmd", line[1:].strip(), where))
            elif line in ("@attach", "@wait", "@kill-jdb"):
                self.steps.append(Step(line[1:], None, where))
            elif line.startswith("@mon "):
                self.steps.append(Step("mon", line[5:].strip(), where))
            elif re.fullmatch(r"vm-exits(?:\s+-?\d+)?", line):
                if not self.steps:
                    raise SystemExit(f"{where}: vm-exits belongs to a step")
                self.steps[-1].expects.append(Expect("vm-exits", line[8:].strip() or "0", where))
            else:
                m = re.match(r"(out~|out=|mon~|mon=|~|=|!)\s?(.*)$", line)
                if not m or not self.steps:
                    raise SystemExit(f"{where}: not a step or an expectation: {raw}")
                if not m.group(2):
                    raise SystemExit(f"{where}: empty expectation")
                self.steps[-1].expects.append(Expect(m.group(1), m.group(2), where))
        if self.vm is None:
            raise SystemExit(f"{self.name}: the first line must be %vm suspend=y|n or %vm same")
        if self.program and self.vm == "same":
            raise SystemExit(f"{self.name}: %program needs a new VM (%vm suspend=y|n)")
        for s in self.steps:
            if s.kind == "kill-jdb" and any(e.kind in ("~", "=", "!", "vm-exits") for e in s.expects):
                raise SystemExit(f"{s.where}: after @kill-jdb there is no jdb output to expect")
            for e in s.expects:
                if e.kind in ("~", "!", "out~", "mon~"):
                    try:
                        re.compile(VAR.sub("x", e.text))
                    except re.error as err:
                        raise SystemExit(f"{e.where}: bad regular expression: {err}")


class DdmcMonitor:
    """The --ddmc monitor: the ddmc CLI (and raw sessions) on the VM's JDWP port beside jdb."""

    def __init__(self, args, vm, cond, workdir):
        self.args, self.vm, self.cond, self.workdir = args, vm, cond, workdir
        self.text = ""
        self.eof = False
        self.bg = None
        self.held = []

    def _append(self, text):
        with self.cond:
            self.text += text
            self.cond.notify_all()

    def _pump(self, proc):
        for raw in iter(proc.stdout.readline, b""):
            self._append(raw.decode("utf-8", "replace"))

    def _ddmc(self, words):
        return [self.args.ddmc, "-c", f"127.0.0.1:{self.vm.port}", *words]

    def send(self, command):
        import shlex
        import socket
        words = [w.replace("{workdir}", self.workdir) for w in shlex.split(command)]
        verb, rest = words[0], words[1:]
        if verb == "start":
            if self.bg is not None:
                raise Failure("@mon start: a background ddmc already runs")
            self.bg = subprocess.Popen(self._ddmc(rest), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                       env=clean_env())
            CHILDREN.append(self.bg)
            threading.Thread(target=self._pump, args=(self.bg,), daemon=True).start()
        elif verb == "run":
            r = subprocess.run(self._ddmc(rest), capture_output=True, env=clean_env(), timeout=60)
            self._append(r.stdout.decode("utf-8", "replace") + r.stderr.decode("utf-8", "replace") +
                         f"[exit {r.returncode}]\n")
        elif verb == "stop":
            if self.bg is None:
                raise Failure("@mon stop: no background ddmc")
            self.bg.terminate()
            rc = self.bg.wait(timeout=20)
            self.bg = None
            self._append(f"[stopped {rc}]\n")
        elif verb == "hold":
            for _ in range(int(rest[0])):
                s = socket.create_connection(("127.0.0.1", self.vm.port), timeout=10)
                s.sendall(b"JDWP-Handshake")
                got = b""
                while len(got) < 14:
                    more = s.recv(14 - len(got))
                    if not more:
                        raise Failure("@mon hold: the VM closed a session before its handshake")
                    got += more
                self.held.append(s)
            self._append(f"[holding {len(self.held)}]\n")
        elif verb == "release":
            for s in self.held:
                s.close()
            self._append(f"[released {len(self.held)}]\n")
            self.held = []
        elif verb == "second-jdb":
            home = os.path.join(self.workdir, "home2")
            os.makedirs(home, exist_ok=True)
            mark = len(self.vm.err.text) if getattr(self.vm, "err", None) is not None else 0
            try:
                r = subprocess.run([self.args.jdb, f"-J-Duser.home={home}", "-J-Duser.language=en",
                                    "-attach", f"127.0.0.1:{self.vm.port}"], input=b"exit\n",
                                   capture_output=True, env=clean_env(), cwd=home, timeout=15)
                out = r.stdout.decode("utf-8", "replace") + r.stderr.decode("utf-8", "replace")
            except subprocess.TimeoutExpired as e:
                out = (e.stdout or b"").decode("utf-8", "replace") + "[second jdb still running after 15 s]\n"
            with self.cond:
                err = self.vm.err.text[mark:] if getattr(self.vm, "err", None) is not None else ""
                refused = [l for l in err.splitlines() if "refused" in l]
            self._append(out + "".join(f"[vm] {l}\n" for l in refused))
        else:
            raise Failure(f"@mon {verb}: unknown ddmc monitor command")

    def close(self):
        if self.bg is not None and self.bg.poll() is None:
            self.bg.kill()
        for s in self.held:
            s.close()


class Session:
    """One script played against one VM with one jdb process."""

    def __init__(self, args, script, vm, workdir, cond, monitor=None, monitor_send=None):
        self.args, self.script, self.vm, self.workdir, self.cond = args, script, vm, workdir, cond
        self.monitor = monitor   # a Stream for mon~ / mon= (a driver's view of the VM), or None
        self.monitor_send = monitor_send  # @mon COMMAND calls it with COMMAND, or None
        self.timeout = script.timeout or args.timeout
        self.forbid = [re.compile(p, re.M) for p in FORBIDDEN + script.forbid if p not in script.allow]
        self.vars = {}
        self.jdb = None
        self.jout = None
        self.pos = 0             # end of the last step's output in jdb's transcript
        self.log = []            # (step title, where, output) per finished or failed step
        self.exited = False
        self.killed = False      # @kill-jdb ended jdb
        self.vm_gone = False     # a vm-exits step saw the VM end

    # -- helpers ----------------------------------------------------------------------------------
    def subst(self, text, regex):
        def one(m):
            if m.group(1) not in self.vars:
                raise Failure(f"variable ${{{m.group(1)}}} was never set")
            v = self.vars[m.group(1)]
            return re.escape(v) if regex else v
        return VAR.sub(one, text)

    def start_jdb(self):
        home = os.path.join(self.workdir, "home")
        os.makedirs(home, exist_ok=True)
        cmd = [self.args.jdb, f"-J-Duser.home={home}", "-J-Duser.language=en", "-J-Duser.country=US",
               *self.args.jdb_arg, "-sourcepath", self.args.sourcepath, "-attach", f"127.0.0.1:{self.vm.port}"]
        log(f"{self.script.name}: {' '.join(cmd)}")
        self.jdb = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, cwd=home, env=clean_env())
        CHILDREN.append(self.jdb)
        self.jout = Stream(self.jdb.stdout, self.cond, "jdb")

    def send(self, command):
        try:
            self.jdb.stdin.write((command + "\n").encode("utf-8"))
            self.jdb.stdin.flush()
        except (BrokenPipeError, OSError):
            raise Failure(f"jdb is gone; could not send {command!r}")

    # -- one step ---------------------------------------------------------------------------------
    def run_step(self, step):
        if step.kind == "attach":
            if self.jdb is not None:
                raise Failure("@attach twice in one script")
            self.start_jdb()
        elif self.jdb is None and (step.kind == "cmd" or any(e.kind in "~=!" for e in step.expects)):
            raise Failure("no jdb here: the step needs @attach first")
        elif self.exited and (step.kind in ("cmd", "kill-jdb") or any(e.kind in "~=!" for e in step.expects)):
            raise Failure("jdb has already exited")
        if any(e.kind.startswith("mon") for e in step.expects) and self.monitor is None:
            raise Failure("mon~ / mon= need a monitor (a driver that watches the VM passes one)")
        if self.vm_gone:
            raise Failure("the VM has already exited (vm-exits): nothing can follow")
        if step.kind == "kill-jdb":
            if self.jdb is None:
                raise Failure("no jdb to kill: the step needs @attach first")
            log(f"{self.script.name}: killing jdb (pid {self.jdb.pid})")
            self.jdb.kill()
            self.jdb.wait(timeout=self.timeout)
            with self.cond:  # its reader sees EOF soon after; the output so far is the step's
                end = time.monotonic() + self.timeout
                while not self.jout.eof and time.monotonic() < end:
                    self.cond.wait(0.2)
            self.exited = self.killed = True
        if step.kind == "mon" and self.monitor_send is None:
            raise Failure("@mon needs a monitor (a driver that watches the VM passes one)")
        vm_exits = next((int(e.text) for e in step.expects if e.kind == "vm-exits"), None)

        is_exit = step.kind == "cmd" and step.command.split()[:1] in (["exit"], ["quit"])
        checks = []
        for e in step.expects:
            if e.kind == "vm-exits":
                continue
            text = self.subst(e.text, e.kind in ("~", "!", "out~", "mon~"))
            if e.kind in ("~", "!", "out~", "mon~"):
                checks.append((e, re.compile(text, re.M)))
            else:
                checks.append((e, text))
        out_mark = len(self.vm.out.text)
        mon_mark = len(self.monitor.text) if self.monitor is not None else 0
        start = self.pos
        title = step.title()
        if step.kind == "cmd":
            command = self.subst(step.command, False)
            title = f"> {command}"
            self.send(command)
        elif step.kind == "mon":  # after the marks: what the command causes belongs to this step
            self.monitor_send(self.subst(step.command, False))
        deadline = time.monotonic() + self.timeout
        jdb_live = self.jdb is not None and not self.exited

        def window():
            return self.jout.text[start:] if jdb_live else ""

        def unmet():
            w, prog = normalize(window()), self.vm.out.text[out_mark:]
            mon = self.monitor.text[mon_mark:] if self.monitor is not None else ""
            missing = []
            for e, pat in checks:
                if e.kind == "~" and not pat.search(w):
                    missing.append(e)
                elif e.kind == "=" and pat not in w:
                    missing.append(e)
                elif e.kind == "out~" and not pat.search(prog):
                    missing.append(e)
                elif e.kind == "out=" and pat not in prog:
                    missing.append(e)
                elif e.kind == "mon~" and not pat.search(mon):
                    missing.append(e)
                elif e.kind == "mon=" and pat not in mon:
                    missing.append(e)
            return missing

        waits_for_jdb = step.kind not in ("wait", "mon") or any(e.kind in ("~", "=") for e in step.expects)

        def vm_ended():
            return not self.vm.alive() and self.vm.out.eof and self.vm.err.eof

        def ended():
            if vm_exits is not None:
                return vm_ended() and (not jdb_live or self.jout.eof)
            if not jdb_live or not waits_for_jdb:
                return True
            if is_exit:
                return self.jout.eof
            return PROMPT.search(normalize(window())) is not None

        with self.cond:
            while True:
                missing = unmet()
                if not missing and ended():
                    break
                if jdb_live and self.jout.eof and not is_exit and vm_exits is None:
                    break  # jdb ended on its own: report below
                if ended() and any(p.search(normalize(window())) for p in self.forbid):
                    break  # jdb is back at its prompt after an internal error: no point waiting
                if vm_ended() and vm_exits is None:
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self.cond.wait(min(left, 1.0))
            missing = unmet()
            raw = window()
            w = normalize(raw)
            done = ended()
            end = len(self.jout.text) if jdb_live else start
        self.pos = end
        shown = raw
        if step.kind == "kill-jdb":
            shown = "(jdb killed)\n"
        if any(e.kind.startswith("out") for e in step.expects):
            if shown and not shown.endswith("\n"):
                shown += "\n"
            prog = self.vm.out.text[out_mark:]
            shown += "".join(f"[program] {line}\n" for line in prog.splitlines()[-8:]) or "[program] (nothing)\n"
        if any(e.kind.startswith("mon") for e in step.expects):
            if shown and not shown.endswith("\n"):
                shown += "\n"
            mon = self.monitor.text[mon_mark:]
            shown += "".join(f"[monitor] {line}\n" for line in mon.splitlines()[-12:]) or "[monitor] (nothing)\n"
        self.log.append((title, step.where, shown))

        problems = []
        if vm_exits is not None:
            status = self.vm.proc.poll()
            if status is None:
                problems.append(f"the VM did not exit within {self.timeout:g} s")
            elif status != vm_exits:
                problems.append(f"the VM exited with status {status}, want {vm_exits}")
            if jdb_live and not self.jout.eof:
                problems.append("jdb did not end after the VM exited")
            for e in missing:
                problems.append(f"expected ({e.where}): {e.kind} {e.text}")
            missing, done = [], True
            self.vm_gone = True
            if jdb_live:
                self.exited = True
                try:
                    self.jdb.wait(timeout=self.timeout)
                except subprocess.TimeoutExpired:
                    pass
        if missing or not done:
            if jdb_live and self.jout.eof and not is_exit:
                problems.append(f"jdb ended (status {self.jdb.wait()})")
            if not self.vm.alive():
                problems.append(f"the VM died (status {self.vm.proc.poll()})")
            if not problems and not (done and any(p.search(w) for p in self.forbid)):
                problems.append(f"timed out after {self.timeout:g} s")
            for e in missing:
                problems.append(f"expected ({e.where}): {e.kind} {e.text}")
            if not missing and not done:
                problems.append("jdb did not end" if is_exit else "jdb did not show its prompt")
        for e, pat in checks:
            if e.kind == "!" and pat.search(w):
                problems.append(f"unexpected ({e.where}): ! {e.text}\n    matched: {pat.search(w).group(0)!r}")
        for pat in self.forbid:
            m = pat.search(w)
            if m:
                problems.append(f"forbidden output: {m.group(0)!r} (pattern {pat.pattern})")
        if problems:
            raise Failure("\n  ".join(problems))
        # Capture variables from the ~ matches.
        for e, pat in checks:
            if e.kind == "~":
                self.vars.update({k: v for k, v in pat.search(w).groupdict().items() if v is not None})
            elif e.kind == "mon~":
                m = pat.search(self.monitor.text[mon_mark:])
                self.vars.update({k: v for k, v in m.groupdict().items() if v is not None})
            elif e.kind == "out~":
                m = pat.search(self.vm.out.text[out_mark:])
                self.vars.update({k: v for k, v in m.groupdict().items() if v is not None})
        if is_exit:
            rc = self.jdb.wait(timeout=self.timeout)
            self.exited = True
            if rc != 0:
                raise Failure(f"jdb exited with status {rc}")

    def run(self):
        t0 = time.monotonic()
        failures = []
        for i, step in enumerate(self.script.steps, 1):
            s0 = time.monotonic()
            try:
                try:
                    self.run_step(step)
                except Failure as f:
                    # jdb's own race, whatever the VM: `threads` lists what the VM says, but a
                    # command naming a thread looks it up in jdb's cache, which its event thread
                    # fills from ThreadStart events, possibly later on a loaded machine. jdb
                    # refuses before doing anything, so the same command is sent once more.
                    if step.kind != "cmd" or "'is not a valid thread id'" not in str(f):
                        raise
                    for attempt in range(1, 11):  # a loaded machine: up to about 10 s
                        log(f"{self.script.name}: step {i}: jdb's thread cache lagged; sending it again ({attempt})")
                        time.sleep(1.0)
                        try:
                            self.run_step(step)
                            break
                        except Failure as again:
                            if attempt == 10 or "'is not a valid thread id'" not in str(again):
                                raise
            except Failure as f:
                msg = f"step {i} ({step.where}) {step.title()} FAILED:\n  {f}"
                gone = (self.jdb is not None and self.jdb.poll() is not None and not self.exited) \
                    or not self.vm.alive()
                if not self.args.keep_going or gone:
                    raise Failure("\n".join(failures + [msg]))
                failures.append(msg)
                log(f"FAIL {i:2d} {step.where:<22} {step.title():<28} {time.monotonic() - s0:6.2f} s")
                continue
            log(f"  ok {i:2d} {step.where:<22} {step.title():<28} {time.monotonic() - s0:6.2f} s")
        if failures:
            raise Failure("\n".join(failures))
        if self.jdb is not None and not self.exited:
            raise Failure(f"{self.script.name}: the script ended without `> exit`")
        if not self.vm.alive() and not self.vm_gone:
            raise Failure(f"{self.script.name}: the VM is no longer running (status {self.vm.proc.poll()})")
        log(f"{self.script.name}: passed in {time.monotonic() - t0:.1f} s")

    def transcript(self):
        parts = []
        for title, where, out in self.log:
            parts.append(f"---- {where}: {title}\n{out}")
        if self.jout is not None and len(self.jout.text) > self.pos:
            parts.append(f"---- (after the last step)\n{self.jout.text[self.pos:]}")
        return "\n".join(parts)

    def stop_jdb(self):
        if self.jdb is not None and self.jdb.poll() is None:
            self.jdb.kill()
            self.jdb.wait(timeout=10)


def tail(text, n):
    lines = text.splitlines()
    return "\n".join(lines[-n:]) if lines else "(nothing)"


def main():
    ap = argparse.ArgumentParser(description="Play jdb scripts against a VM (see the module docstring).")
    ap.add_argument("--target", choices=("jvm", "minivm"), required=True)
    ap.add_argument("--minivm", help="the minivm binary (--target minivm)")
    ap.add_argument("--jvm-agent", help="--target jvm: debug the JVM through this JDWP agent (libddmcjdwp.so, "
                                        "loaded with -agentpath) instead of the JDK's -agentlib:jdwp")
    ap.add_argument("--program", default=os.path.join(ROOT, "examples", "minivm", "programs", "debug.mvm"),
                    help="the .mvm program minivm runs (default: examples/minivm/programs/debug.mvm)")
    ap.add_argument("--java-source", default=os.path.join(HERE, "Debug.java"),
                    help="the Java program the JVM runs (default: tests/jdb/Debug.java)")
    ap.add_argument("--sourcepath", default=HERE, help="jdb's -sourcepath (default: tests/jdb)")
    ap.add_argument("--jdb", default="jdb")
    ap.add_argument("--ddmc", help="the ddmc CLI: a monitor beside jdb on the same port (@mon start|run|stop...)")
    ap.add_argument("--java", default="java")
    ap.add_argument("--javac", default="javac")
    ap.add_argument("--vm-arg", action="append", default=[],
                    help="an extra VM option before the program (repeatable), e.g. --vm-arg=-verbose:jdwp")
    ap.add_argument("--jdb-arg", action="append", default=[],
                    help="an extra jdb option (repeatable), e.g. --jdb-arg=-dbgtrace --jdb-arg=4 "
                         "(JDI's event trace: diagnosis only, it adds lines to the output)")
    ap.add_argument("--timeout", type=float, default=20.0, help="per-step deadline in seconds (20)")
    ap.add_argument("--workdir", help="scratch directory (default: a temporary one, removed at the end)")
    ap.add_argument("-k", "--keep-going", action="store_true",
                    help="after a failed step, go on with the script's next steps (diagnosis; later "
                         "steps may fail only because an earlier one did)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every transcript, also on success")
    ap.add_argument("scripts", nargs="+")
    args = ap.parse_args()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    scripts = [Script(p) for p in args.scripts]
    if scripts[0].vm == "same":
        ap.error(f"{scripts[0].name}: the first script must start a VM (%vm suspend=y|n)")
    for tool in ("jdb",) + (("java", "javac") if args.target == "jvm" else ()):
        path = getattr(args, tool)
        if shutil.which(path) is None:
            print(f"FAIL: {tool} not found ({path}); scripts/setup.sh installs a JDK", flush=True)
            return 1
    if args.jvm_agent and (args.target != "jvm" or not os.path.isfile(args.jvm_agent)):
        print(f"FAIL: --jvm-agent {args.jvm_agent!r} needs --target jvm and an existing file", flush=True)
        return 1
    if args.target == "minivm":
        if not args.minivm or not os.access(args.minivm, os.X_OK):
            print(f"FAIL: --minivm {args.minivm!r} is not an executable", flush=True)
            return 1
        for prog in [args.program] + [program_mvm(s.program) for s in scripts if s.program]:
            if not os.path.isfile(prog):
                print(f"FAIL: the minivm program {prog} does not exist", flush=True)
                return 1

    tmp = None
    if args.workdir:
        os.makedirs(args.workdir, exist_ok=True)
        workdir = args.workdir
    else:
        workdir = tmp = tempfile.mkdtemp(prefix="run_jdb-")
    cond = threading.Condition()
    failed = []
    t_all = time.monotonic()
    try:
        if args.target == "jvm":
            args.classes = os.path.join(workdir, "classes")
            os.makedirs(args.classes, exist_ok=True)
            sources = [args.java_source] + sorted({program_java(s.program) for s in scripts if s.program})
            r = subprocess.run([args.javac, "-g", "-d", args.classes, *sources],
                               capture_output=True, text=True, env=clean_env(), timeout=120)
            if r.returncode != 0:
                print(f"FAIL: javac {args.java_source}:\n{r.stdout}{r.stderr}", flush=True)
                return 1
            if any(s.program == "Mutate" for s in scripts):
                # jdb's redefine reads the new class file from its own directory (home, below).
                r = subprocess.run([args.javac, "-g", "-d", os.path.join(workdir, "home", "redefine"),
                                    os.path.join(ROOT, "tests", "jdi", "redefine", "Greeter.java")],
                                   capture_output=True, text=True, env=clean_env(), timeout=120)
                if r.returncode != 0:
                    print(f"FAIL: javac redefine/Greeter.java:\n{r.stdout}{r.stderr}", flush=True)
                    return 1
        vm = None
        vm_broken = False
        for n, script in enumerate(scripts, 1):
            session = None
            try:
                if script.vm == "same":
                    if vm is None or not vm.alive() or (vm_broken and not args.keep_going):
                        raise Failure(f"{script.name}: no VM left running by the previous script")
                    if args.target == "jvm" and not args.jvm_agent:
                        vm.wait_listening(used_listen, args.timeout)
                else:
                    if vm is not None:
                        vm.stop()
                    vm_broken = False
                    vm = None
                    vm = VM(args, script.vm, workdir, cond, n, script.program)
                log(f"{script.name}: {len(script.steps)} steps against the {args.target} "
                    f"(pid {vm.proc.pid}, suspend={vm.suspend})")
                with cond:
                    used_listen = len(vm.ports)
                mon = DdmcMonitor(args, vm, cond, workdir) if args.ddmc else None
                session = Session(args, script, vm, workdir, cond, mon, mon.send if mon else None)
                try:
                    session.run()
                finally:
                    if mon is not None:
                        mon.close()
                if args.verbose:
                    print(session.transcript(), flush=True)
            except Failure as f:
                vm_broken = True
                failed.append(script.name)
                print(f"\nFAIL: {script.name} against the {args.target}: {f}\n", flush=True)
                if session is not None:
                    print("==== jdb transcript\n" + session.transcript() + "\n==== end of jdb transcript",
                          flush=True)
                if vm is not None and (session is not None or not vm.port):
                    with cond:
                        out, err = vm.out.text, vm.err.text
                    print(f"==== program stdout (last 30 lines)\n{tail(out, 30)}", flush=True)
                    print(f"==== VM stderr (last 40 lines)\n{tail(err, 40)}\n====", flush=True)
            finally:
                if session is not None:
                    session.stop_jdb()
        if vm is not None:
            vm.stop()
    finally:
        kill_children()
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    took = time.monotonic() - t_all
    if failed:
        print(f"FAIL: {', '.join(failed)} ({args.target}, {took:.1f} s)", flush=True)
        return 1
    print(f"PASS: {len(scripts)} script(s) against the {args.target} in {took:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
