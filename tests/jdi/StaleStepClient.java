// An IDE steps after resuming a stale event set, through the JDK's JDI or Eclipse's
// (-Dide.bootstrap=org.eclipse.jdi.Bootstrap), against Invoke.java on the JDK or
// examples/minivm/programs/invoke.mvm, which mirrors it line for line:
//
//   java StaleStepClient HOST PORT
//
// A breakpoint on a line of Ticker's loop (Invoke.java line 20, in ticker()) is hit; the thread is resumed
// behind the event set's back (as a VirtualMachine.Resume that overtook the hit does) and hits
// again, so a second breakpoint set waits in the queue. The breakpoint is deleted; a step into
// (count 1) is asked; the client resumes the set it holds, then, waiting for the step event,
// meets the stale breakpoint set and resumes it too: the thread runs free when the step event is
// handled. A step out asked then names a running thread: JDWP lists no THREAD_NOT_SUSPENDED for
// EventRequest.Set, the JDK's agent accepts it (and steps from wherever the thread is), and both
// JDIs fail if the VM refuses it. The step out, asked while the thread sleeps in pause(50), must
// then end: a StepEvent on the thread, in pause or ticker.
// Prints "ok - ..." or "FAIL - ..." per check and "all checks passed" at the end.
import com.sun.jdi.*;
import com.sun.jdi.connect.*;
import com.sun.jdi.event.*;
import com.sun.jdi.request.*;
import java.util.*;

public class StaleStepClient {
  static final long TIMEOUT_MS = 20000;
  static final int LOOP_LINE = 20, NEXT_LINE = 21; // Invoke.java: ticks = ticks + 1; then println

  static int failures;
  static VirtualMachine vm;
  static EventQueue queue;

  static void check(boolean ok, String what) {
    System.out.println((ok ? "ok - " : "FAIL - ") + what);
    System.out.flush();
    if (!ok) failures++;
  }

  static void fatal(String what) {
    System.out.println("FAIL - " + what);
    System.exit(1);
  }

  static VirtualMachineManager manager() throws Exception {
    String bootstrap = System.getProperty("ide.bootstrap");
    if (bootstrap == null) return Bootstrap.virtualMachineManager();
    return (VirtualMachineManager) Class.forName(bootstrap).getMethod("virtualMachineManager").invoke(null);
  }

  /** The next event set holding an event of kind; with resumeOthers, sets without one are resumed
   *  (an IDE waiting for its step resumes what it does not want), else they fail the run. */
  static EventSet next(Class<? extends Event> kind, boolean resumeOthers, List<String> seen) throws InterruptedException {
    long end = System.currentTimeMillis() + TIMEOUT_MS;
    while (true) {
      long left = end - System.currentTimeMillis();
      if (left <= 0) fatal("no " + kind.getSimpleName() + " within " + TIMEOUT_MS + " ms (seen: " + seen + ")");
      EventSet set = queue.remove(left);
      if (set == null) continue;
      for (Event e : set) {
        if (e instanceof VMDeathEvent || e instanceof VMDisconnectEvent) fatal("the VM went away waiting for " + kind.getSimpleName());
        if (kind.isInstance(e)) return set;
      }
      for (Event e : set) seen.add(e instanceof BreakpointEvent ? "breakpoint at " + where(((BreakpointEvent) e).location()) : e.getClass().getSimpleName());
      if (!resumeOthers) fatal("unexpected event set " + set + " waiting for " + kind.getSimpleName());
      set.resume();
    }
  }

  static <T extends Event> T first(EventSet set, Class<T> kind) {
    for (Event e : set)
      if (kind.isInstance(e)) return kind.cast(e);
    return null;
  }

  /** The next set with a StepEvent of th within ms, or null; any other set fails the run. */
  static EventSet stepWithin(ThreadReference th, long ms) throws InterruptedException {
    long end = System.currentTimeMillis() + ms;
    for (long left = ms; left > 0; left = end - System.currentTimeMillis()) {
      EventSet set = queue.remove(left);
      if (set == null) continue;
      StepEvent e = first(set, StepEvent.class);
      if (e != null && e.thread().equals(th)) return set;
      fatal("unexpected event set " + set + " waiting for the step out");
    }
    return null;
  }

  static String where(Location l) {
    return l.declaringType().name() + "." + l.method().name() + ":" + l.lineNumber();
  }

  public static void main(String[] args) throws Exception {
    AttachingConnector ac = null;
    VirtualMachineManager vmm = manager();
    System.out.println("# JDI: " + vmm.getClass().getName());
    for (AttachingConnector c : vmm.attachingConnectors())
      if (c.name().equals("com.sun.jdi.SocketAttach")) ac = c;
    if (ac == null) fatal("no SocketAttach connector");
    Map<String, Connector.Argument> ca = ac.defaultArguments();
    ca.get("hostname").setValue(args[0]);
    ca.get("port").setValue(args[1]);
    vm = ac.attach(ca);
    queue = vm.eventQueue();
    EventRequestManager erm = vm.eventRequestManager();
    check(true, "attached to " + vm.name() + " " + vm.version());

    ReferenceType invoke = null;
    for (int i = 0; i < 200 && invoke == null; i++) {
      List<ReferenceType> l = vm.classesByName("Invoke");
      if (!l.isEmpty()) invoke = l.get(0);
      else Thread.sleep(50);
    }
    if (invoke == null) fatal("class Invoke never loaded");
    Method ticker = invoke.methodsByName("ticker").get(0);
    List<Location> at = ticker.locationsOfLine(LOOP_LINE);
    if (at.isEmpty()) fatal("no code on line " + LOOP_LINE + " of ticker");
    BreakpointRequest bp = erm.createBreakpointRequest(at.get(0));
    bp.setSuspendPolicy(EventRequest.SUSPEND_EVENT_THREAD);
    bp.enable();

    List<String> seen = new ArrayList<>();
    EventSet held = next(BreakpointEvent.class, false, seen);
    ThreadReference th = first(held, BreakpointEvent.class).thread();
    check(th.suspendCount() == 1, "the first hit of line " + LOOP_LINE + " holds " + th.name() + " (suspend count " + th.suspendCount() + ")");

    // Resumed behind the set's back, the thread goes round the loop and hits again: a second
    // breakpoint set, stale, waits in the queue, and holds the thread.
    th.resume();
    long end = System.currentTimeMillis() + TIMEOUT_MS;
    while (th.suspendCount() == 0 && System.currentTimeMillis() < end) Thread.sleep(5);
    check(th.suspendCount() == 1, "resumed alone, " + th.name() + " hits line " + LOOP_LINE + " again (suspend count " + th.suspendCount() + ")");

    erm.deleteEventRequest(bp);
    StepRequest into = erm.createStepRequest(th, StepRequest.STEP_LINE, StepRequest.STEP_INTO);
    into.addCountFilter(1);
    into.setSuspendPolicy(EventRequest.SUSPEND_EVENT_THREAD);
    into.enable();
    held.resume(); // the set the client holds: the thread steps from the second hit
    // The step event has held the thread before the client looks at its queue (else resuming the
    // stale set could come first, and change nothing: a count does not go below 0).
    end = System.currentTimeMillis() + TIMEOUT_MS;
    while (th.suspendCount() == 0 && System.currentTimeMillis() < end) Thread.sleep(5);
    EventSet stepSet = next(StepEvent.class, true, seen);
    check(seen.equals(List.of("breakpoint at Invoke.ticker:" + LOOP_LINE)),
        "the stale breakpoint set came first and was resumed (" + seen + ")");
    StepEvent into1 = first(stepSet, StepEvent.class);
    check(into1.thread().equals(th) && into1.location().method().equals(ticker) && into1.location().lineNumber() == NEXT_LINE,
        "step into from line " + LOOP_LINE + " ends at Invoke.ticker:" + NEXT_LINE + " (" + where(into1.location()) + ")");
    erm.deleteEventRequest(into);

    // The stale set's resume let the thread run: the step out names a running thread. It is asked
    // while the thread sleeps (in pause, called by ticker), so that it ends: out of ticker()'s own
    // frame, an endless loop, a step out never ends, under the JDK's agent as under any.
    check(th.suspendCount() == 0, "after the stale set's resume " + th.name() + " runs (suspend count " + th.suspendCount() + ")");
    EventSet outSet = null;
    StepRequest out = null;
    for (int attempt = 1; outSet == null; attempt++) {
      end = System.currentTimeMillis() + TIMEOUT_MS;
      while (th.status() != ThreadReference.THREAD_STATUS_SLEEPING && System.currentTimeMillis() < end) Thread.sleep(1);
      check(th.status() == ThreadReference.THREAD_STATUS_SLEEPING, th.name() + " sleeps in pause(50)");
      out = erm.createStepRequest(th, StepRequest.STEP_LINE, StepRequest.STEP_OUT);
      out.addCountFilter(1);
      out.setSuspendPolicy(EventRequest.SUSPEND_EVENT_THREAD);
      try {
        out.enable();
        check(true, "a step out of the running " + th.name() + " is accepted");
      } catch (Exception e) {
        fatal("a step out of the running " + th.name() + " is refused: " + e);
      }
      outSet = stepWithin(th, 3000);
      if (outSet != null) break;
      // The thread left pause between our look and the request (a loaded machine can hold this
      // client for 50 ms): out of ticker's endless loop no step out ends, under any agent. Again.
      if (attempt == 5) fatal("no step out ended in 5 tries: " + th.name() + " never stood in pause when asked");
      System.out.println("# try " + attempt + ": " + th.name() + " had left pause when the step out took effect; again");
      erm.deleteEventRequest(out);
    }
    StepEvent out1 = first(outSet, StepEvent.class);
    check(out1.thread().equals(th), "the step out ends on " + th.name() + " (at " + where(out1.location()) + ")");
    check(th.suspendCount() == 1, "the step event holds " + th.name() + " (suspend count " + th.suspendCount() + ")");
    int frames = th.frameCount();
    boolean found = false;
    for (StackFrame f : th.frames()) found |= f.location().method().equals(ticker);
    check(frames >= 1 && found, "its frames can be read: " + frames + ", ticker() among them");
    erm.deleteEventRequest(out);
    outSet.resume();

    // The VM answers on and the thread goes round its loop.
    Thread.sleep(200);
    check(th.suspendCount() == 0 && !th.isSuspended(), th.name() + " runs again after the last resume");
    vm.dispose();
    System.out.println(failures == 0 ? "all checks passed" : failures + " checks failed");
    System.exit(failures == 0 ? 0 : 1);
  }
}
// SPDX-License-Identifier: Apache-2.0
