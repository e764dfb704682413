// What an IDE does to a VM through JDI (the JDK's own com.sun.jdi), against Ide.java on the JDK or
// examples/minivm/programs/ide.mvm, which mirrors it line for line:
//
//   java IdeClient HOST PORT
//
// attaches with the socket connector to a VM that runs Ide (suspend=n: it waits at its gate),
// then: classesByName, capabilities, a ClassPrepare request for Counter (not loaded until the gate
// opens), the gate opened by setting a static field, a breakpoint set from the ClassPrepare event
// (an IDE's deferred breakpoint), method entry/exit with a class filter and the return value, field
// watchpoints (modification and access), frame variables and `this` at a breakpoint, a static method
// invoked while suspended (with and without INVOKE_SINGLE_THREADED, and on a running thread),
// step over / out / into, an exception breakpoint caught and one uncaught, monitor information of
// a thread blocked on a lock another holds, suspend / resume of every thread, and disconnect.
// Prints "ok - ..." or "FAIL - ..." per check; exits 1 if any failed. The VM keeps running.
import com.sun.jdi.*;
import com.sun.jdi.connect.*;
import com.sun.jdi.event.*;
import com.sun.jdi.request.*;
import java.util.*;

public class IdeClient {
  // Lines of Ide.java (ide.mvm carries the same).
  static final int TWICE_FIRST = 9, TWICE_RETURN = 10, MAIN_MAKE = 58, MAIN_TWICE = 59, MAIN_CATCH = 62;
  static final int MAKE_FIRST = 81, MAKE_STORE = 82, RISKY_THROW = 37, CRASH_THROW = 42;
  static final long TIMEOUT_MS = 20000;

  static int failures;
  static VirtualMachine vm;
  static EventQueue queue;
  static EventRequestManager erm;

  static void check(boolean ok, String what) {
    System.out.println((ok ? "ok - " : "FAIL - ") + what);
    if (!ok) failures++;
  }

  static void fatal(String what) {
    System.out.println("FAIL - " + what);
    System.exit(1);
  }

  /** The next event set with an event e for which want holds; sets before it are resumed. */
  static EventSet waitFor(String what, java.util.function.Predicate<Event> want) throws InterruptedException {
    long end = System.currentTimeMillis() + TIMEOUT_MS;
    while (true) {
      long left = end - System.currentTimeMillis();
      if (left <= 0) {
        for (ThreadReference t : vm.allThreads()) {
          String at = "";
          try {
            if (t.isSuspended() && t.frameCount() > 0) at = " at " + t.frame(0).location();
          } catch (Exception ignored) {
          }
          System.out.println("# thread " + t.name() + " status " + t.status() + " suspended " + t.suspendCount() + at);
        }
        fatal("timed out waiting for " + what);
      }
      EventSet set = queue.remove(left);
      if (set == null) continue;
      for (Event e : set) {
        if (e instanceof VMDeathEvent || e instanceof VMDisconnectEvent) fatal("the VM went away waiting for " + what);
        if (want.test(e)) return set;
        System.out.println("# while waiting for " + what + ", passed over " + e);
      }
      set.resume();
    }
  }

  static <T extends Event> T first(EventSet set, Class<T> type) {
    for (Event e : set)
      if (type.isInstance(e)) return type.cast(e);
    return null;
  }

  static ThreadReference thread(String name) {
    for (ThreadReference t : vm.allThreads())
      if (t.name().equals(name)) return t;
    return null;
  }

  static String where(Location l) {
    return l.declaringType().name() + "." + l.method().name() + ":" + l.lineNumber();
  }

  static int intOf(Value v) { return v instanceof IntegerValue ? ((IntegerValue) v).value() : Integer.MIN_VALUE; }

  /** The JDK's JDI, or another implementation's: -Dide.bootstrap=org.eclipse.jdi.Bootstrap (Eclipse's,
   *  eclipse-jdt-debug.jar) names a class whose static virtualMachineManager() gives its manager. */
  static VirtualMachineManager manager() throws Exception {
    String bootstrap = System.getProperty("ide.bootstrap");
    if (bootstrap == null) return Bootstrap.virtualMachineManager();
    return (VirtualMachineManager) Class.forName(bootstrap).getMethod("virtualMachineManager").invoke(null);
  }

  public static void main(String[] args) throws Exception {
    AttachingConnector ac = null;
    VirtualMachineManager vmm = manager();
    System.out.println("# JDI: " + vmm.getClass().getName() + " " + vmm.majorInterfaceVersion() + "." + vmm.minorInterfaceVersion());
    for (AttachingConnector c : vmm.attachingConnectors())
      if (c.name().equals("com.sun.jdi.SocketAttach")) ac = c;
    Map<String, Connector.Argument> ca = ac.defaultArguments();
    ca.get("hostname").setValue(args[0]);
    ca.get("port").setValue(args[1]);
    vm = ac.attach(ca);
    queue = vm.eventQueue();
    erm = vm.eventRequestManager();
    check(true, "attached with the socket connector to " + vm.name() + " " + vm.version());

    // ---- classes, capabilities, a deferred breakpoint through ClassPrepare
    List<ReferenceType> ides = vm.classesByName("Ide");
    check(ides.size() == 1, "classesByName(\"Ide\") finds the running program's class");
    ClassType ide = (ClassType) ides.get(0);
    check(vm.classesByName("Counter").isEmpty(), "Counter is not loaded before the gate opens");
    check(vm.canWatchFieldModification() && vm.canWatchFieldAccess(), "capabilities: field watchpoints");
    check(vm.canGetMonitorInfo() && vm.canGetOwnedMonitorInfo() && vm.canGetCurrentContendedMonitor()
              && vm.canGetMonitorFrameInfo(), "capabilities: monitor information");
    check(vm.canGetMethodReturnValues() && vm.canUseInstanceFilters(), "capabilities: return values, instance filters");

    ClassPrepareRequest cpr = erm.createClassPrepareRequest();
    cpr.addClassFilter("Counter");
    cpr.setSuspendPolicy(EventRequest.SUSPEND_ALL);
    cpr.enable();
    ide.setValue(ide.fieldByName("gate"), vm.mirrorOf(1));
    EventSet set = waitFor("ClassPrepare of Counter", e -> e instanceof ClassPrepareEvent);
    ClassPrepareEvent cpe = first(set, ClassPrepareEvent.class);
    ReferenceType counter = cpe.referenceType();
    check(counter.name().equals("Counter") && counter.signature().equals("LCounter;"),
        "ClassPrepare for Counter (" + counter.signature() + ")");
    check(cpe.thread().name().equals("main"), "ClassPrepare on the thread that first used it (" + cpe.thread().name() + ")");
    check(counter.isPrepared() && !counter.isInitialized(), "Counter prepared, not yet initialized, at the event");
    cpr.disable();
    Method make = counter.methodsByName("make").get(0);
    BreakpointRequest bpMake = erm.createBreakpointRequest(make.location());
    bpMake.enable();
    MethodEntryRequest entry = erm.createMethodEntryRequest();
    entry.addClassFilter("Counter");
    entry.enable();
    MethodExitRequest exit = erm.createMethodExitRequest();
    exit.addClassFilter("Counter");
    exit.enable();
    Field value = counter.fieldByName("value");
    ModificationWatchpointRequest mod = erm.createModificationWatchpointRequest(value);
    mod.enable();
    AccessWatchpointRequest acc = erm.createAccessWatchpointRequest(value);
    acc.enable();
    set.resume();

    // Round 0, in order: entry of make + its breakpoint, value = 0, make returns a Counter, main reads value.
    List<String> seen = new ArrayList<>();
    ObjectReference made = null;
    int bpLine = -1, modValue = -1, accLine = -1;
    boolean done = false;
    long end = System.currentTimeMillis() + TIMEOUT_MS;
    EventSet last = null;
    while (!done) {
      EventSet s = queue.remove(Math.max(1, end - System.currentTimeMillis()));
      if (s == null) fatal("timed out in round 0; seen " + seen);
      for (Event e : s) {
        if (e instanceof MethodEntryEvent) {
          String m = ((MethodEntryEvent) e).method().name();
          if (m.equals("make")) seen.add("entry make");
        } else if (e instanceof MethodExitEvent) {
          MethodExitEvent x = (MethodExitEvent) e;
          if (x.method().name().equals("make")) {
            seen.add("exit make");
            if (x.returnValue() instanceof ObjectReference) made = (ObjectReference) x.returnValue();
          }
        } else if (e instanceof BreakpointEvent) {
          seen.add("breakpoint");
          bpLine = ((BreakpointEvent) e).location().lineNumber();
        } else if (e instanceof ModificationWatchpointEvent) {
          ModificationWatchpointEvent w = (ModificationWatchpointEvent) e;
          seen.add("modify value");
          modValue = intOf(w.valueToBe());
          check(w.object() != null && w.object().referenceType().equals(counter), "the modified object is a Counter");
          check(w.location().lineNumber() == MAKE_STORE, "modification at Counter.make line " + MAKE_STORE
                    + " (" + w.location().lineNumber() + ")");
        } else if (e instanceof AccessWatchpointEvent) {
          AccessWatchpointEvent w = (AccessWatchpointEvent) e;
          seen.add("access value");
          accLine = w.location().lineNumber();
          check(w.location().method().name().equals("main"), "access in main (" + where(w.location()) + ")");
          done = true;
        } else if (e instanceof VMDeathEvent || e instanceof VMDisconnectEvent) {
          fatal("VM went away in round 0");
        }
      }
      if (done) last = s; // main stays at the access until the next requests are in place
      else s.resume();
    }
    check(seen.equals(List.of("entry make", "breakpoint", "modify value", "exit make", "access value")),
        "round 0 events in order " + seen);
    check(bpLine == MAKE_FIRST, "deferred breakpoint hit at Counter.make line " + MAKE_FIRST + " (" + bpLine + ")");
    check(modValue == 0, "modification value 0 (" + modValue + ")");
    check(made != null && made.referenceType().equals(counter) && intOf(made.getValue(value)) == 0,
        "MethodExit's return value is the new Counter, value 0");
    check(accLine == MAIN_TWICE, "access at Ide.main line " + MAIN_TWICE + " (" + accLine + ")");
    bpMake.disable();
    entry.disable();
    exit.disable();
    mod.disable();
    acc.disable();

    // ---- a breakpoint in twice: frames, variables, `this`, calls while suspended
    Method twice = ide.methodsByName("twice").get(0);
    BreakpointRequest bpTwice = erm.createBreakpointRequest(twice.location());
    bpTwice.setSuspendPolicy(EventRequest.SUSPEND_EVENT_THREAD); // the other threads run on
    bpTwice.enable();
    last.resume();
    set = waitFor("the breakpoint in twice", e -> e instanceof BreakpointEvent);
    bpTwice.disable();
    BreakpointEvent bp = first(set, BreakpointEvent.class);
    ThreadReference main = bp.thread();
    check(main.name().equals("main") && bp.location().lineNumber() == TWICE_FIRST,
        "breakpoint in Ide.twice line " + TWICE_FIRST + " (" + where(bp.location()) + ")");
    StackFrame f0 = main.frame(0);
    check(f0.thisObject() == null, "thisObject() is null in a static method");
    int x = intOf(f0.getValue(f0.visibleVariableByName("x")));
    StackFrame f1 = main.frame(1);
    int i = intOf(f1.getValue(f1.visibleVariableByName("i")));
    check(f1.location().method().name().equals("main") && f1.location().lineNumber() == MAIN_TWICE,
        "caller frame Ide.main line " + MAIN_TWICE + " (" + where(f1.location()) + ")");
    check(i == 0 && x == 0, "variables: round 0, twice's x (" + x + ") and main's i (" + i + ") are 0");
    ObjectReference c = (ObjectReference) f1.getValue(f1.visibleVariableByName("c"));
    check(c != null && intOf(c.getValue(value)) == i, "main's c is a Counter whose value is i");
    ThreadReference holder = thread("Holder");
    Value r = ide.invokeMethod(main, twice, List.of(vm.mirrorOf(-4)), ClassType.INVOKE_SINGLE_THREADED);
    check(intOf(r) == -8, "invokeMethod with INVOKE_SINGLE_THREADED: twice(-4) = -8 (" + r + ")");
    check(holder.suspendCount() == 0, "a single-threaded call leaves the other threads as they were");
    try {
      ide.invokeMethod(holder, twice, List.of(vm.mirrorOf(1)), 0);
      check(false, "invokeMethod on a running thread is refused");
    } catch (IncompatibleThreadStateException e) {
      check(true, "invokeMethod on a running thread is refused (THREAD_NOT_SUSPENDED: " + e.getClass().getSimpleName() + ")");
    }
    r = ide.invokeMethod(main, twice, List.of(vm.mirrorOf(21)), 0);
    check(intOf(r) == 42, "invokeMethod Ide.twice(21) = 42 while suspended (" + r + ")");
    // JDI: "When the invocation completes, all threads in the target VM are suspended, regardless
    // of their state before the invocation."
    boolean allSuspended = true;
    for (ThreadReference t : vm.allThreads())
      if (t.suspendCount() < 1) allSuspended = false;
    check(allSuspended && main.suspendCount() == 1, "after a call that ran every thread, every thread is suspended");
    // Undo it with a VM-wide resume (resuming threads one by one would leave the VM-wide suspend
    // in force for threads started later), main held by a suspend of its own.
    main.suspend();
    vm.resume();
    check(main.suspendCount() == 1 && holder.suspendCount() == 0, "vm.resume() after main.suspend(): main stays, the rest run");
    check(main.frame(0).location().lineNumber() == TWICE_FIRST, "the calls left the thread where it was");

    // ---- steps: over, out, then into from a breakpoint on the call's line
    StepRequest step = erm.createStepRequest(main, StepRequest.STEP_LINE, StepRequest.STEP_OVER);
    step.addCountFilter(1);
    step.enable();
    set.resume();
    set = waitFor("step over", e -> e instanceof StepEvent);
    Location at = first(set, StepEvent.class).location();
    check(at.method().name().equals("twice") && at.lineNumber() == TWICE_RETURN,
        "step over to Ide.twice line " + TWICE_RETURN + " (" + where(at) + ")");
    erm.deleteEventRequest(step);
    step = erm.createStepRequest(main, StepRequest.STEP_LINE, StepRequest.STEP_OUT);
    step.addCountFilter(1);
    step.enable();
    set.resume();
    set = waitFor("step out", e -> e instanceof StepEvent);
    at = first(set, StepEvent.class).location();
    check(at.method().name().equals("main") && at.lineNumber() == MAIN_TWICE,
        "step out to Ide.main line " + MAIN_TWICE + " (" + where(at) + ")");
    erm.deleteEventRequest(step);
    Method mainMethod = ide.methodsByName("main").get(0);
    BreakpointRequest bpCall = erm.createBreakpointRequest(mainMethod.locationsOfLine(MAIN_MAKE).get(0));
    bpCall.enable();
    set.resume();
    set = waitFor("the breakpoint at the call of make", e -> e instanceof BreakpointEvent);
    bpCall.disable();
    step = erm.createStepRequest(main, StepRequest.STEP_LINE, StepRequest.STEP_INTO);
    step.addCountFilter(1);
    step.enable();
    set.resume();
    set = waitFor("step into", e -> e instanceof StepEvent);
    at = first(set, StepEvent.class).location();
    check(at.method().name().equals("make") && at.lineNumber() == MAKE_FIRST,
        "step into Counter.make line " + MAKE_FIRST + " (" + where(at) + ")");
    erm.deleteEventRequest(step);

    // ---- exception breakpoints: Oops caught (round 2), then uncaught (the Crasher thread, round 3)
    // Oops is not loaded before round 2 throws it: every exception thrown in Ide (the filter is on
    // the throwing location's class), then checked to be an Oops.
    ExceptionRequest caught = erm.createExceptionRequest(null, true, false);
    caught.addClassFilter("Ide");
    caught.enable();
    set.resume();
    set = waitFor("the caught Oops", e -> e instanceof ExceptionEvent);
    caught.disable();
    ExceptionEvent ee = first(set, ExceptionEvent.class);
    StackFrame mf = ee.thread().frame(1);
    int round = intOf(mf.getValue(mf.visibleVariableByName("i")));
    check(ee.exception().referenceType().name().equals("Oops") && round == 2,
        "exception event for Oops (round " + round + ")");
    check(ee.location().method().name().equals("risky") && ee.location().lineNumber() == RISKY_THROW,
        "thrown at Ide.risky line " + RISKY_THROW + " (" + where(ee.location()) + ")");
    check(ee.catchLocation() != null && ee.catchLocation().method().name().equals("main")
              && ee.catchLocation().lineNumber() == MAIN_CATCH,
        "to be caught at Ide.main line " + MAIN_CATCH + " (" + (ee.catchLocation() == null ? "none" : where(ee.catchLocation())) + ")");
    // as jdb's default `catch uncaught java.lang.Throwable`
    ExceptionRequest uncaught = erm.createExceptionRequest(vm.classesByName("java.lang.Throwable").get(0), false, true);
    uncaught.enable();
    set.resume();
    set = waitFor("the uncaught Oops", e -> e instanceof ExceptionEvent);
    uncaught.disable();
    ee = first(set, ExceptionEvent.class);
    check(ee.thread().name().equals("Crasher") && ee.catchLocation() == null
              && ee.exception().referenceType().name().equals("Oops"),
        "uncaught Oops in thread " + ee.thread().name() + ", no catch location");
    check(ee.location().method().name().equals("crash") && ee.location().lineNumber() == CRASH_THROW,
        "thrown at Ide.crash line " + CRASH_THROW + " (" + where(ee.location()) + ")");
    set.resume();

    // ---- monitors: Blocked waits for the lock Holder keeps
    ThreadReference blocked = thread("Blocked");
    check(blocked != null && holder != null, "threads Holder and Blocked are listed");
    long until = System.currentTimeMillis() + TIMEOUT_MS;
    while (blocked.status() != ThreadReference.THREAD_STATUS_MONITOR && System.currentTimeMillis() < until)
      Thread.sleep(20);
    vm.suspend();
    check(blocked.status() == ThreadReference.THREAD_STATUS_MONITOR, "Blocked's status is MONITOR (" + blocked.status() + ")");
    ObjectReference lock = (ObjectReference) ide.getValue(ide.fieldByName("lock"));
    check(lock.equals(blocked.currentContendedMonitor()), "Blocked's contended monitor is Ide.lock");
    check(holder.equals(lock.owningThread()), "Ide.lock is owned by Holder (" + lock.owningThread() + ")");
    check(lock.entryCount() == 1, "entry count 1 (" + lock.entryCount() + ")");
    check(lock.waitingThreads().contains(blocked), "Blocked is among the lock's waiting threads");
    check(holder.ownedMonitors().contains(lock), "Holder's owned monitors include Ide.lock");
    int holderDepth = -1;
    List<StackFrame> hf = holder.frames();
    for (int k = 0; k < hf.size(); k++)
      if (hf.get(k).location().method().name().equals("holder")) holderDepth = k;
    int lockDepth = -2;
    for (MonitorInfo mi : holder.ownedMonitorsAndFrames())
      if (mi.monitor().equals(lock)) lockDepth = mi.stackDepth();
    check(holderDepth >= 0 && lockDepth == holderDepth,
        "ownedMonitorsAndFrames: entered by the frame of Ide.holder, depth " + holderDepth + " (" + lockDepth + ")");
    check(blocked.ownedMonitors().isEmpty(), "Blocked owns no monitor");

    // ---- suspend / resume of every thread (vm.suspend above), then disconnect
    boolean all = true;
    for (ThreadReference t : vm.allThreads())
      if (t.suspendCount() < 1) all = false;
    check(all && main.isSuspended(), "vm.suspend(): every thread suspended");
    vm.resume();
    check(!main.isSuspended() && main.suspendCount() == 0, "vm.resume(): main runs again");
    int before = intOf(ide.getValue(ide.fieldByName("rounds")));
    Thread.sleep(300);
    check(before >= 1, "the program counted its caught Oops (rounds " + before + ")");
    vm.dispose();
    check(true, "disconnected");
    System.out.println(failures == 0 ? "all checks passed" : failures + " checks failed");
    System.exit(failures == 0 ? 0 : 1);
  }
}
// SPDX-License-Identifier: Apache-2.0
