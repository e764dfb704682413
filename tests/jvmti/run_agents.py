#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The sample JVM TI agents (examples/agents, built against the JDK's jvmti.h) loaded into minivm,
with their output asserted, and the same agent on HotSpot for the same program.

    run_agents.py MINIVM AGENT_DIR PROGRAMS_DIR JAVA HELLO_JAVA

Each case runs minivm with a 60 s bound and checks the exit status, stdout and stderr."""
import os
import signal
import subprocess
import sys

MINIVM, AGENTS, PROGRAMS, JAVA, HELLO_JAVA = sys.argv[1:6]
failures = []


def run(args, env=None, timeout=60):
    e = dict(os.environ)
    # minivm ends through exit() when agents are loaded; its VM is not freed (daemon threads may
    # still run), which LeakSanitizer would report.
    e["ASAN_OPTIONS"] = e.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
    if env:
        e.update(env)
    p = subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=e)
    return p.returncode, p.stdout, p.stderr


def check(name, cond, detail=""):
    if not cond:
        failures.append(name)
        print(f"FAIL {name}: {detail}")
    else:
        print(f"ok   {name}")


def agent(name):
    return os.path.join(AGENTS, f"lib{name}.so")


hello = os.path.join(PROGRAMS, "hello.mvm")
HELLO_OUT = ["Hello from minivm", "fib(10) = 55", "arguments: 0"]
TRACE = ["calltrace: 177 Hello.fib(I)I", "calltrace: 1 Hello.main([Ljava/lang/String;)V",
         "calltrace: total 178 calls of 2 methods", "calltrace: exits 178"]

# 1. By path: the program's own output, then the counts (fib(10) makes 177 calls).
rc, out, err = run([MINIVM, f"-agentpath:{agent('calltrace')}=classes=Hello,exits", hello])
check("calltrace by path", rc == 0 and out.splitlines() == HELLO_OUT + TRACE, f"rc={rc} out={out!r} err={err!r}")

# 2. By name, found through MINIVM_AGENT_PATH.
rc, out, err = run([MINIVM, "-agentlib:calltrace=classes=Hello", hello], env={"MINIVM_AGENT_PATH": "/nonexistent:" + AGENTS})
check("calltrace by name", rc == 0 and out.splitlines() == HELLO_OUT + TRACE[:3], f"rc={rc} out={out!r} err={err!r}")

# 3. The same library twice (by path, then by name): dlopen gives one copy, so its globals are
# shared, as on HotSpot; but each Agent_OnLoad made its own environment, and each environment
# gets every MethodEntry (twice the counts) and its own VMDeath (two reports). The second load
# asked for exits: 178 MethodExit events through the one environment that enabled them.
rc, out, err = run([MINIVM, f"-agentpath:{agent('calltrace')}=classes=Hello", f"-agentlib:calltrace=classes=Hello,exits", hello],
                   env={"MINIVM_AGENT_PATH": AGENTS})
lines = out.splitlines()
check("two agents", rc == 0 and lines.count("calltrace: 354 Hello.fib(I)I") == 2 and lines.count("calltrace: exits 178") == 2,
      f"rc={rc} out={out!r} err={err!r}")

# 4. The same agent on HotSpot, the equivalent Java program: the same lines.
rc, out, err = run([JAVA, "-Xshare:off", f"-agentpath:{agent('calltrace')}=classes=Hello,exits", HELLO_JAVA], timeout=120)
check("calltrace on HotSpot prints the same", rc == 0 and out.splitlines() == HELLO_OUT + TRACE, f"rc={rc} out={out!r} err={err[-500:]!r}")

# 5. Debugging functions (examples/agents/jdebug.c): a breakpoint, locals read and written (x = 5
# becomes 6, so compute returns 13 instead of 11), single steps by line, a watched field read
# and written, an exception thrown and caught. The same lines on minivm and on HotSpot.
JDEBUG = ["jdebug: breakpoint at compute line 14 (again: 40, clear elsewhere: 41)",  # DUPLICATE, NOT_FOUND
          "jdebug: watching counter (again: 40)",
          "jdebug: breakpoint in Dbg.compute line 14: x = 5 (as a long: 34, bad slot: 35)",  # TYPE_MISMATCH, INVALID_SLOT
          "jdebug: x set to 6; stepping",
          "jdebug: step to Dbg.compute line 15",
          "jdebug: write of counter = 12 (I) in Dbg.compute line 15",
          "jdebug: step to Dbg.compute line 16",
          "jdebug: read of counter in Dbg.compute line 16",
          "jdebug: step to Dbg.compute line 17",
          "jdebug: stepped out to Dbg.main line 7",
          "13",
          "jdebug: LOops; thrown in Dbg.fail line 30, to be caught in Dbg.safe line 23",
          "jdebug: LOops; caught in Dbg.safe line 23",
          "1",
          "jdebug: 1 breakpoint, 1 reads, 1 writes, 1 exception, 1 catch, stepped yes"]
dbg = os.path.join(PROGRAMS, "dbg.mvm")
rc, out, err = run([MINIVM, dbg])
check("dbg.mvm without an agent", rc == 0 and out.splitlines() == ["11", "1"], f"rc={rc} out={out!r} err={err!r}")
rc, out, err = run([MINIVM, f"-agentpath:{agent('jdebug')}", dbg])
check("jdebug on minivm", rc == 0 and out.splitlines() == JDEBUG, f"rc={rc} out={out!r} err={err!r}")
javac = os.path.join(os.path.dirname(os.path.realpath(JAVA)), "javac")
classes = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"jdebug-classes-{os.getpid()}")
c = subprocess.run([javac, "-g", "-d", classes, os.path.join(os.path.dirname(HELLO_JAVA), "Dbg.java")],
                   capture_output=True, text=True, timeout=120)
check("Dbg.java compiles with -g", c.returncode == 0, c.stderr)
rc, out, err = run([JAVA, "-Xshare:off", f"-agentpath:{agent('jdebug')}", "-cp", classes, "Dbg"], timeout=120)
check("jdebug on HotSpot prints the same", rc == 0 and out.splitlines() == JDEBUG, f"rc={rc} out={out!r} err={err[-500:]!r}")

# 6. Bad input: each ends start-up with exit status 1 and one clear line, before the program runs.
cases = [
    ("missing library", [f"-agentpath:{AGENTS}/libnothere.so"], "could not load agent library"),
    ("missing name", ["-agentlib:nothere"], "could not load agent library libnothere.so"),
    ("no Agent_OnLoad", [f"-agentpath:{agent('badagents_noonload')}"], "has no Agent_OnLoad"),
    ("Agent_OnLoad fails", [f"-agentpath:{agent('badagents_fail')}"], "failed to initialize: Agent_OnLoad returned 7"),
    ("agent refuses its options", [f"-agentpath:{agent('calltrace')}=bogus"], "Agent_OnLoad returned 2"),
    ("empty agentpath", ["-agentpath:"], "bad agent option"),
    ("agentlib with a path", ["-agentlib:a/b"], "bad agent option"),
]
# A FIFO (or a directory) as the agent: refused before dlopen, which would wait on the FIFO for a
# writer forever (HotSpot too).
fifo_dir = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"agent-fifo-{os.getpid()}")
os.makedirs(fifo_dir, exist_ok=True)
fifo = os.path.join(fifo_dir, "libfifo.so")
if not os.path.exists(fifo):
    os.mkfifo(fifo)
cases += [
    ("FIFO as agentpath", [f"-agentpath:{fifo}"], f"could not load agent library {fifo}: a FIFO, not a regular file"),
    ("directory as agentpath", [f"-agentpath:{fifo_dir}"], "a directory, not a regular file"),
]
for name, flags, msg in cases:
    try:
        rc, out, err = run([MINIVM] + flags + [hello], timeout=20)
    except subprocess.TimeoutExpired:
        rc, out, err = None, "", "(minivm did not finish in 20 s)"
    check(name, rc == 1 and msg in err and "Hello from minivm" not in out, f"rc={rc} out={out!r} err={err!r}")
os.unlink(fifo)
os.rmdir(fifo_dir)

# 7. Calls in the OnLoad phase: clear JVM TI errors, never a crash (then the agent fails on purpose).
rc, out, err = run([MINIVM, f"-agentpath:{agent('badagents_fail')}=probe", hello])
want = ["badagent: GetPhase 0 phase 1",            # NONE, JVMTI_PHASE_ONLOAD
        "badagent: GetPhase(NULL) 100",            # NULL_POINTER
        "badagent: GetCurrentThread 112",          # WRONG_PHASE
        "badagent: GetAllThreads 112",             # WRONG_PHASE (before the NULL checks)
        "badagent: GetClassSignature(NULL) 112",   # WRONG_PHASE
        "badagent: GetBytecodes 112"]              # WRONG_PHASE: a live-phase function
check("OnLoad-phase errors", rc == 1 and out.splitlines() == want, f"rc={rc} out={out!r} err={err!r}")

# 7. threadwatch (threads and monitors): watch.mvm and Watch.java start three threads, make two
# contended enters on an Object and three timed-out waits on another; the agent starts its own
# thread with RunAgentThread (a Thread made with JNI NewObject) that wakes on a raw monitor.
WATCH = ["threadwatch: contended-enter Ljava/lang/Object; 2", "threadwatch: contended-entered Ljava/lang/Object; 2",
         "threadwatch: start Contender-1 1", "threadwatch: start Contender-2 1", "threadwatch: start Waiter 1",
         "threadwatch: end Contender-1 1", "threadwatch: end Contender-2 1", "threadwatch: end Waiter 1",
         "threadwatch: wait Ljava/lang/Object; 3", "threadwatch: waited Ljava/lang/Object; 3 timed-out 3",
         "threadwatch: agent thread ran"]
watch = os.path.join(PROGRAMS, "watch.mvm")
rc, out, err = run([MINIVM, f"-agentpath:{agent('threadwatch')}", watch])
lines = out.splitlines()
check("threadwatch on minivm", rc == 0 and lines[:1] == ["watch: done"] and all(w in lines for w in WATCH),
      f"rc={rc} out={out!r} err={err!r}")
watch_java = os.path.join(os.path.dirname(HELLO_JAVA), "Watch.java")
rc, out, err = run([JAVA, "-Xshare:off", f"-agentpath:{agent('threadwatch')}", watch_java], timeout=120)
lines = out.splitlines()
check("threadwatch on HotSpot counts the same", rc == 0 and all(w in lines for w in WATCH),
      f"rc={rc} out={out!r} err={err[-500:]!r}")

# 8. A GC callback that wakes the agent thread through the raw monitor (threadwatch=gc): the
# collector's GarbageCollectionFinish enters the monitor the agent thread waits on, without a
# deadlock; both programs collect once after the joins. On both VMs.
GC_WOKE = "threadwatch: a collection woke the agent thread"
rc, out, err = run([MINIVM, f"-agentpath:{agent('threadwatch')}=gc", watch])
lines = out.splitlines()
check("GC callback wakes the agent thread on minivm", rc == 0 and GC_WOKE in lines and all(w in lines for w in WATCH),
      f"rc={rc} out={out!r} err={err!r}")
rc, out, err = run([JAVA, "-Xshare:off", f"-agentpath:{agent('threadwatch')}=gc", watch_java], timeout=120)
check("GC callback wakes the agent thread on HotSpot", rc == 0 and GC_WOKE in out.splitlines(),
      f"rc={rc} out={out!r} err={err[-500:]!r}")

# 9. DataDumpRequest: kill -QUIT once the agent says it is live (minivm only: HotSpot also prints
# its thread dump on SIGQUIT). The program runs on: main holds Watch.lock for 500 ms.
e = dict(os.environ)
e["ASAN_OPTIONS"] = e.get("ASAN_OPTIONS", "") + ":detect_leaks=0"
p = subprocess.Popen([MINIVM, f"-agentpath:{agent('threadwatch')}=dump", watch], stdout=subprocess.PIPE,
                     stderr=subprocess.PIPE, text=True, env=e)
first = p.stdout.readline()
if first.strip() == "threadwatch: ready":
    p.send_signal(signal.SIGQUIT)
try:
    rest, err = p.communicate(timeout=60)
except subprocess.TimeoutExpired:
    p.kill()
    rest, err = p.communicate()
lines = rest.splitlines()
check("SIGQUIT gives one DataDumpRequest", first.strip() == "threadwatch: ready" and p.returncode == 0 and
      "threadwatch: data-dump request 1" in lines and "watch: done" in lines, f"rc={p.returncode} first={first!r} out={rest!r} err={err!r}")

# 10. VMObjectAlloc (jdebug's allocs): exceptions.mvm makes the VM raise two ArithmeticExceptions,
# one NullPointerException, one ArrayIndexOutOfBoundsException and one ClassCastException; the
# exceptions bytecode creates with new-instance are not VM allocations.
rc, out, err = run([MINIVM, f"-agentpath:{agent('jdebug')}=Nothing,none,none,allocs", os.path.join(PROGRAMS, "exceptions.mvm")])
got = [l for l in out.splitlines() if l.startswith("jdebug: VM allocated")]
check("VMObjectAlloc counts the VM's own exceptions", rc == 1 and got == [
    "jdebug: VM allocated Ljava/lang/ArithmeticException; 2",
    "jdebug: VM allocated Ljava/lang/ArrayIndexOutOfBoundsException; 1",
    "jdebug: VM allocated Ljava/lang/ClassCastException; 1",
    "jdebug: VM allocated Ljava/lang/NullPointerException; 1"], f"rc={rc} out={out!r} err={err[-300:]!r}")

if failures:
    print(f"{len(failures)} failed: {', '.join(failures)}")
    sys.exit(1)
print("all agent cases passed")
