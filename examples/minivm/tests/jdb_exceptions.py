#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""jdb's exception breakpoints on minivm: plays a jdb session against programs/exceptions.mvm
(suspend=y) and checks every exception event jdb prints: the class, where it is thrown (before
the stack unwinds: `where` still shows the thrower), where it will be caught or "uncaught",
class filters (`catch java.lang.ArithmeticException`, `catch caught BadInput` matching a
program class), and the end: the VM exits with 1 after main's uncaught exception, with Java's
trace on stderr.

usage: jdb_exceptions.py MINIVM EXCEPTIONS.MVM JDB"""
import os
import re
import select
import subprocess
import sys
import time


class Session:
    def __init__(self, cmd):
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.buf = b""
        self.log = b""

    def expect(self, text, timeout=20):
        """Reads jdb's output until text appears; returns what came before it (and it)."""
        deadline = time.time() + timeout
        want = text.encode()
        while want not in self.buf:
            left = deadline - time.time()
            if left <= 0 or self.p.poll() is not None and not select.select([self.p.stdout], [], [], 0)[0]:
                fail("jdb never printed %r; its output so far:\n%s" % (text, self.log.decode(errors="replace")))
            r, _, _ = select.select([self.p.stdout], [], [], min(left, 0.5))
            if r:
                chunk = os.read(self.p.stdout.fileno(), 65536)
                if not chunk:
                    time.sleep(0.05)
                self.buf += chunk
                self.log += chunk
        i = self.buf.index(want) + len(want)
        before, self.buf = self.buf[:i], self.buf[i:]
        return before.decode(errors="replace")

    def send(self, line):
        self.p.stdin.write((line + "\n").encode())
        self.p.stdin.flush()


VM = None


def fail(msg):
    if VM is not None and VM.poll() is None:
        VM.kill()
    sys.exit("FAIL: " + msg)


def main():
    global VM
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    minivm, program, jdb = sys.argv[1:]
    VM = subprocess.Popen([minivm, "-agentlib:jdwp=transport=dt_socket,address=127.0.0.1:0,server=y,suspend=y", program],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = VM.stderr.readline().decode()
    m = re.search(r"JDWP listening on 127\.0\.0\.1:(\d+)", line)
    if not m:
        fail("minivm did not print its port: %r" % line)
    s = Session([jdb, "-attach", "127.0.0.1:" + m.group(1)])
    try:
        s.expect("VM Started")
        s.expect("main[1] ")
        s.send("catch java.lang.ArithmeticException")
        s.expect("Set all java.lang.ArithmeticException")
        # BadInput is prepared at its first use, after main starts: jdb defers the request to the
        # ClassPrepare event, as on a JVM
        s.send("catch caught BadInput")
        s.expect("Deferring caught BadInput")
        s.send("run")
        s.expect("Set deferred caught BadInput")
        # caught by a superclass, two frames up; reported before unwinding
        s.expect('Exception occurred: BadInput (to be caught at: Exceptions.bySuperclass(), line=25 bci=3)'
                 '"thread=main", Exceptions.parse(), line=11 bci=5')
        s.expect("main[1] ")
        s.send("where")
        out = s.expect("main[1] ")
        for frame in ("[1] Exceptions.parse (Exceptions.java:11)", "[2] Exceptions.bySuperclass (Exceptions.java:22)",
                      "[3] Exceptions.main (Exceptions.java:70)"):
            if frame not in out:
                fail("where at the throw: no %r in\n%s" % (frame, out))
        s.send("cont")
        # a VM error (divide by zero), caught by a .catchall (a finally) in the caller
        s.expect('Exception occurred: java.lang.ArithmeticException (to be caught at: Exceptions.withFinally(), '
                 'line=32 bci=7)"thread=main", Exceptions.divide(), line=17 bci=0')
        s.expect("main[1] ")
        s.send("cont")
        # the finally's rethrow, caught by the inner try of nested()
        s.expect('Exception occurred: java.lang.ArithmeticException (to be caught at: Exceptions.nested(), '
                 'line=43 bci=4)"thread=main", Exceptions.withFinally(), line=32 bci=11')
        s.expect("main[1] ")
        s.send("cont")
        # the Worker's BadInput nobody catches: only jdb's own "uncaught java.lang.Throwable" matches
        # ("catch caught BadInput" does not)
        out = s.expect('"thread=Worker", Exceptions.parse(), line=11 bci=5')
        if "Exception occurred: BadInput (uncaught)" not in out or out.count("Exception occurred") != 1:
            fail("the Worker's uncaught BadInput, once (its caught-only request must not match):\n" + out)
        s.expect("Worker[1] ")
        s.send("cont")
        out = s.expect('"thread=main", Exceptions.divide(), line=17 bci=0')
        if "Exception occurred: java.lang.ArithmeticException (uncaught)" not in out:
            fail("main's uncaught ArithmeticException:\n" + out)
        s.expect("main[1] ")
        s.send("cont")
        s.expect("The application exited")
    finally:
        if s.p.poll() is None:
            s.p.kill()
        s.p.wait(10)
    try:
        out, err = VM.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        fail("minivm did not exit")
    err = err.decode()
    want = ('Exception in thread "main" java.lang.ArithmeticException: divide by zero\n'
            "\tat Exceptions.divide(Exceptions.java:17)\n\tat Exceptions.main(Exceptions.java:77)\n")
    if VM.returncode != 1 or want not in err:
        fail("minivm exited with %d (want 1); stderr:\n%s" % (VM.returncode, err))
    if 'Exception in thread "Worker" BadInput: negative input\n' not in err:
        fail("no Worker trace on stderr:\n" + err)
    print("ok: jdb saw every throw with its catch location, and the uncaught ones")


if __name__ == "__main__":
    main()
