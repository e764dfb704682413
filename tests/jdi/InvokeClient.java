// Method calls from a debugger at breakpoints, through the JDK's own JDI, against Invoke.java on
// the JDK or examples/minivm/programs/invoke.mvm, which mirrors it line for line:
//
//   java InvokeClient MODE HOST PORT
//
// render: at each of 500 hits of a breakpoint in Invoke.hit (SUSPEND_ALL), calls toString() on the
//         event's thread the instant the event arrives (as IntelliJ and Eclipse do after a stop),
//         then on the frame's Item (INVOKE_SINGLE_THREADED); every call must succeed.
// nested: at each of 30 hits, calls Invoke.show(it) (alternately letting every thread run and
//         single-threaded), which passes a breakpoint of its own: that BreakpointEvent must arrive
//         on the calling thread, and once it is resumed the call must complete with "item".
// kill:   at a hit, calls Invoke.slow(2000) letting every thread run, prints "INVOKING" and
//         waits: run_jdi.py kills this process (SIGKILL) during the call and checks through the
//         program's output that every thread of the VM runs on afterwards.
// Prints "ok - ..." or "FAIL - ..." per check and "all checks passed" at the end.
import com.sun.jdi.*;
import com.sun.jdi.connect.*;
import com.sun.jdi.event.*;
import com.sun.jdi.request.*;
import java.util.*;
import java.util.concurrent.*;

public class InvokeClient {
  static final long TIMEOUT_MS = 20000;

  static int failures;
  static VirtualMachine vm;
  static EventQueue queue;
  static EventRequestManager erm;

  static void check(boolean ok, String what) {
    System.out.println((ok ? "ok - " : "FAIL - ") + what);
    System.out.flush();
    if (!ok) failures++;
  }

  static void fatal(String what) {
    System.out.println("FAIL - " + what);
    System.exit(1);
  }

  /** The next breakpoint event whose method is named method; other sets are resumed. */
  static EventSet waitForBreakpoint(String method) throws InterruptedException {
    long end = System.currentTimeMillis() + TIMEOUT_MS;
    while (true) {
      long left = end - System.currentTimeMillis();
      if (left <= 0) {
        for (ThreadReference t : vm.allThreads())
          System.out.println("# thread " + t.name() + " status " + t.status() + " suspended " + t.suspendCount());
        fatal("timed out waiting for a breakpoint in " + method);
      }
      EventSet set = queue.remove(left);
      if (set == null) continue;
      for (Event e : set) {
        if (e instanceof VMDeathEvent || e instanceof VMDisconnectEvent) fatal("the VM went away waiting for " + method);
        if (e instanceof BreakpointEvent && ((BreakpointEvent) e).location().method().name().equals(method)) return set;
      }
      set.resume();
    }
  }

  static BreakpointEvent bp(EventSet set) {
    for (Event e : set)
      if (e instanceof BreakpointEvent) return (BreakpointEvent) e;
    return null;
  }

  static ReferenceType type(String name) throws InterruptedException {
    for (int i = 0; i < 200; i++) {
      List<ReferenceType> l = vm.classesByName(name);
      if (!l.isEmpty()) return l.get(0);
      Thread.sleep(50);
    }
    fatal("class " + name + " never loaded");
    return null;
  }

  static Method method(ReferenceType t, String name, String sig) {
    List<Method> l = sig == null ? t.methodsByName(name) : t.methodsByName(name, sig);
    if (l.isEmpty()) fatal("no method " + t.name() + "." + name);
    return l.get(0);
  }

  static ObjectReference item(ThreadReference th) throws Exception {
    StackFrame f = th.frame(0);
    return (ObjectReference) f.getValue(f.visibleVariableByName("it"));
  }

  static String str(Value v) { return v instanceof StringReference ? ((StringReference) v).value() : String.valueOf(v); }

  public static void main(String[] args) throws Exception {
    String mode = args[0];
    AttachingConnector ac = null;
    for (AttachingConnector c : Bootstrap.virtualMachineManager().attachingConnectors())
      if (c.name().equals("com.sun.jdi.SocketAttach")) ac = c;
    Map<String, Connector.Argument> ca = ac.defaultArguments();
    ca.get("hostname").setValue(args[1]);
    ca.get("port").setValue(args[2]);
    vm = ac.attach(ca);
    queue = vm.eventQueue();
    erm = vm.eventRequestManager();
    check(true, "attached to " + vm.name() + " " + vm.version());

    ClassType invoke = (ClassType) type("Invoke");
    ReferenceType itemType = type("Item");
    Method hit = method(invoke, "hit", null);
    Method threadToString = method(type("java.lang.Thread"), "toString", "()Ljava/lang/String;");
    Method itemToString = method(itemType, "toString", "()Ljava/lang/String;");
    BreakpointRequest hitBp = erm.createBreakpointRequest(hit.location());
    hitBp.setSuspendPolicy(EventRequest.SUSPEND_ALL);
    hitBp.enable();

    if (mode.equals("render")) {
      int n = 500, ok = 0;
      for (int i = 0; i < n; i++) {
        EventSet set = waitForBreakpoint("hit");
        ThreadReference th = bp(set).thread();
        try {
          // at once, before anything else: the event's thread may not have parked yet
          String ts = str(th.invokeMethod(th, threadToString, List.of(), 0));
          String is = str(item(th).invokeMethod(th, itemToString, List.of(), ObjectReference.INVOKE_SINGLE_THREADED));
          if (ts.length() > 0 && is.startsWith("Item@")) ok++;
          else if (i - ok < 5) System.out.println("# hit " + i + ": toString() gave " + ts + " / " + is);
        } catch (Exception e) {
          if (i - ok < 5) System.out.println("# hit " + i + ": " + e);
        }
        set.resume();
      }
      check(ok == n, "toString() of the stopped thread and of its Item right after each of " + n + " breakpoint hits: " + ok + " succeeded");
    } else if (mode.equals("nested")) {
      Method show = method(invoke, "show", null);
      BreakpointRequest showBp = erm.createBreakpointRequest(show.location());
      showBp.setSuspendPolicy(EventRequest.SUSPEND_ALL);
      showBp.enable();
      ExecutorService ex = Executors.newSingleThreadExecutor();
      int n = 30, ok = 0;
      for (int i = 0; i < n; i++) {
        EventSet set = waitForBreakpoint("hit");
        ThreadReference th = bp(set).thread();
        ObjectReference it = item(th);
        int options = i % 2 == 0 ? 0 : ClassType.INVOKE_SINGLE_THREADED;
        Future<Value> call = ex.submit(() -> invoke.invokeMethod(th, show, List.of(it), options));
        EventSet inner = waitForBreakpoint("show");
        boolean same = bp(inner).thread().equals(th);
        inner.resume();
        String got;
        try {
          got = str(call.get(TIMEOUT_MS, TimeUnit.MILLISECONDS));
        } catch (Exception e) {
          got = e.toString();
        }
        if (same && got.equals("item")) ok++;
        else System.out.println("# round " + i + ": nested on the calling thread " + same + ", the call gave " + got);
        set.resume();
      }
      ex.shutdown();
      check(ok == n, "a breakpoint inside a called method is reported on the calling thread, and the call completes once it is resumed: " + ok + " of " + n);
    } else if (mode.equals("kill")) {
      Method slow = method(invoke, "slow", null);
      EventSet set = waitForBreakpoint("hit");
      ThreadReference th = bp(set).thread();
      Thread caller = new Thread(() -> {
        try {
          invoke.invokeMethod(th, slow, List.of(vm.mirrorOf(2000)), 0);
          System.out.println("FAIL - slow(2000) returned before this process was killed");
        } catch (Exception e) {
          System.out.println("# the call: " + e);
        }
      });
      caller.setDaemon(true);
      caller.start();
      Thread.sleep(300);
      System.out.println("INVOKING");
      System.out.flush();
      Thread.sleep(60000);
      fatal("not killed during the call");
    } else {
      fatal("unknown mode " + mode);
    }
    vm.dispose();
    System.out.println(failures == 0 ? "all checks passed" : failures + " checks failed");
    System.exit(failures == 0 ? 0 : 1);
  }
}
// SPDX-License-Identifier: Apache-2.0
