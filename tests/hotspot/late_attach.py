#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""An agent loaded into a running JVM: `jcmd PID JVMTI.agent_load FILE OPTIONS` into
tests/hotspot/Late.java, started without any agent.

    late_attach.py --workdir DIR --ddmc DDMC (--agent libddmcjdwp.so | --reference)

--agent: jcmd loads libddmcjdwp.so with "transport=dt_socket,server=y,address=127.0.0.1:0,suspend=n"
(jcmd's own parser splits an unquoted argument at its '=', so the options go in double quotes
inside the one argument). Then:
  - jcmd reports "return code: 0" and the JVM prints the agent's listening line;
  - `ddmc info` answers: the JVM's pid, app name Late, HotSpot's VM name;
  - jdb attaches: `threads` lists main, `suspend`, `where` on main shows Late.main, `print
    Late.count` with main's frames reads the field, `stop in Late.step` is refused as not supported
    (HotSpot gives no agent the breakpoint, single-step, local-variable, method and field event
    capabilities after start-up: agent/README.md), `resume`, `exit`;
  - the program goes on counting after jdb leaves;
  - a second agent_load of the same file is refused (return code -1, the agent says why) and the
    first one still answers `ddmc info`.
--reference: the JDK's own libjdwp.so through the same jcmd: HotSpot refuses it (the JDK's agent
has no Agent_OnAttach; JDK 17 has no other way to start it late either), and the JVM goes on.
Exits 0 on success, 1 with the report."""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
OPTS = "transport=dt_socket,server=y,address=127.0.0.1:0,suspend=n"


class Output:
    def __init__(self, pipe):
        self.text, self.lock = "", threading.Lock()
        threading.Thread(target=self._read, args=(pipe,), daemon=True).start()

    def _read(self, pipe):
        # Chunks, not lines: jdb's prompt ends no line.
        for raw in iter(lambda: os.read(pipe.fileno(), 65536), b""):
            with self.lock:
                self.text += raw.decode(errors="replace")

    def get(self):
        with self.lock:
            return self.text


def wait_for(out, regex, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        m = re.search(regex, out.get(), re.M)
        if m:
            return m
        time.sleep(0.05)
    return None


def agent_load(pid, path, opts):
    jcmd = shutil.which("jcmd")
    r = subprocess.run([jcmd, str(pid), "JVMTI.agent_load", path, '"%s"' % opts], capture_output=True, text=True,
                       timeout=60)
    return r.stdout + r.stderr


class Jdb:
    """jdb through pipes: each command's output up to the expected text (or the deadline)."""

    def __init__(self, port):
        home = os.environ.get("DDMC_LATE_HOME", "/tmp")
        self.p = subprocess.Popen([shutil.which("jdb"), "-J-Duser.home=" + home, "-attach", "127.0.0.1:%s" % port],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.out = Output(self.p.stdout)
        self.seen = 0

    def cmd(self, command, regex, timeout=20.0):
        """Sends COMMAND (None: nothing) and returns the match of REGEX in the output after it."""
        start = len(self.out.get())
        if command is not None:
            self.p.stdin.write((command + "\n").encode())
            self.p.stdin.flush()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = re.search(regex, self.out.get()[start:], re.M)
            if m:
                return m
            time.sleep(0.05)
        return None

    def close(self):
        try:
            self.p.stdin.write(b"exit\n")
            self.p.stdin.flush()
            self.p.wait(timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            self.p.kill()
            self.p.wait()


def ddmc_info(ddmc, port):
    r = subprocess.run([ddmc, "-c", "127.0.0.1:%s" % port, "--json", "info"], capture_output=True, text=True,
                       timeout=60)
    try:
        return json.loads(r.stdout)
    except ValueError:
        return {"error": r.stdout + r.stderr}


def jdb_session(port, checks):
    jdb = Jdb(port)
    try:
        checks.append(("jdb attaches", jdb.cmd(None, r"^> ", 30) is not None))
        m = jdb.cmd("threads", r"\(java\.lang\.Thread\)(\S+)\s+main\s")
        checks.append(("jdb: threads lists main", m is not None))
        checks.append(("jdb: suspend", jdb.cmd("suspend", r"All threads suspended") is not None))
        if m:
            tid = m.group(1)
            hit = None
            for _ in range(5):  # jdb learns thread ids from its events: a moment after attaching
                hit = jdb.cmd("thread " + tid, r"^main\[1\] |is not a valid thread id", 10)
                if hit and "not a valid" not in hit.group(0):
                    break
                time.sleep(0.5)
            checks.append(("jdb: thread main", hit is not None and "not a valid" not in hit.group(0)))
            checks.append(("jdb: where shows Late.main",
                           jdb.cmd("where", r"Late\.main \(Late\.java:\d+\)") is not None))
            checks.append(("jdb: print Late.count in main's frames",
                           jdb.cmd("print Late.count", r"Late\.count = \d+") is not None))
        checks.append(("jdb: stop in Late.step refused, not supported after start-up",
                       jdb.cmd("stop in Late.step", r"not supported on the target VM") is not None))
        checks.append(("jdb: resume", jdb.cmd("resume", r"All threads resumed") is not None))
    finally:
        jdb.close()
        report = jdb.out.get()
    return report


def counts(out):
    return [int(x) for x in re.findall(r"^count (\d+)$", out.get(), re.M)]


def late_agent(args, vm, out, checks):
    text = agent_load(vm.pid, os.path.abspath(args.agent), OPTS)
    checks.append(("jcmd: return code 0", "return code: 0" in text))
    m = wait_for(out, r"Listening for transport dt_socket at address: (\d+)", 20)
    checks.append(("the agent announces its port", m is not None))
    if m is None:
        return text
    port = m.group(1)
    info = ddmc_info(args.ddmc, port)
    hello = info.get("vm", {})
    checks.append(("ddmc info: pid, app name, VM", hello.get("pid") == vm.pid and hello.get("app_name") == "Late" and
                   "OpenJDK" in hello.get("vm_ident", "")))
    text += "\nddmc info: %s\n" % json.dumps(info)
    text += jdb_session(port, checks)
    before = max(counts(out) or [-1])
    after = before
    deadline = time.monotonic() + 10
    while after <= before and time.monotonic() < deadline:
        time.sleep(0.2)
        after = max(counts(out) or [-1])
    checks.append(("the program goes on after jdb left (count %d -> %d)" % (before, after), after > before >= 0))
    again = agent_load(vm.pid, os.path.abspath(args.agent), OPTS)
    checks.append(("a second agent_load is refused", "return code: -1" in again and
                   wait_for(out, r"ddmcjdwp: already loaded in this VM", 10) is not None))
    info2 = ddmc_info(args.ddmc, port)
    checks.append(("the first agent still answers ddmc info", info2.get("vm", {}).get("pid") == vm.pid))
    return text + "\nsecond agent_load: " + again


def late_reference(vm, out, checks):
    home = subprocess.run([shutil.which("java"), "-XshowSettings:properties", "-version"], capture_output=True,
                          text=True).stderr
    m = re.search(r"java\.home = (\S+)", home)
    jdwp = os.path.join(m.group(1), "lib", "libjdwp.so") if m else ""
    checks.append(("the JDK's libjdwp.so exists", os.path.isfile(jdwp)))
    text = agent_load(vm.pid, jdwp, OPTS)
    checks.append(("jcmd: HotSpot refuses the JDK's agent late (no Agent_OnAttach)",
                   "Agent_OnAttach is not available" in text))
    before = max(counts(out) or [-1])
    time.sleep(1.5)
    checks.append(("the program goes on", max(counts(out) or [-1]) > before >= 0))
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--ddmc")
    ap.add_argument("--agent")
    ap.add_argument("--reference", action="store_true")
    args = ap.parse_args()
    java, javac, jcmd, jdb = (shutil.which(t) for t in ("java", "javac", "jcmd", "jdb"))
    if not all((java, javac, jcmd, jdb)) or not (args.reference or (args.agent and args.ddmc)):
        print("FAIL: need java, javac, jcmd and jdb (default-jdk-headless), and --reference or --agent with --ddmc")
        return 1
    work = os.path.join(args.workdir, "late-" + ("reference" if args.reference else "agent"))
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    os.environ["DDMC_LATE_HOME"] = work
    r = subprocess.run([javac, "-g", "-d", work, os.path.join(HERE, "Late.java")], capture_output=True, text=True)
    if r.returncode != 0:
        print("FAIL: javac: " + r.stdout + r.stderr)
        return 1
    vm = subprocess.Popen([java, "-cp", work, "Late"], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT)
    out = Output(vm.stdout)
    checks, text = [], ""
    try:
        if wait_for(out, r"^late ready", 30) is None:
            checks.append(("Late starts", False))
        elif args.reference:
            text = late_reference(vm, out, checks)
        else:
            text = late_agent(args, vm, out, checks)
        checks.append(("the JVM still runs", vm.poll() is None))
    finally:
        if vm.poll() is None:
            vm.kill()
        vm.wait()
    for name, ok in checks:
        print("%s - %s" % ("ok" if ok else "FAIL", name))
    if checks and all(ok for _, ok in checks):
        print("PASS: late attach (%s)" % ("the JDK's agent" if args.reference else args.agent))
        return 0
    print("==== transcript\n%s\n==== program output (last 30 lines)\n%s" % (
        text, "\n".join(out.get().splitlines()[-30:])))
    return 1


if __name__ == "__main__":
    sys.exit(main())
