/* The JDI client behind the debugger benchmarks: the same program drives minivm (libddmc) and
 * HotSpot (OpenJDK's agent) in one run, so the two figures are comparable.
 *
 *   java JdiBench attach HOST PORT N               ms from attach() until allThreads() returns, N times
 *   java JdiBench bp     HOST PORT CLASS LINE SECS breakpoint hits per second (resumed at each hit)
 *   java JdiBench step   HOST PORT CLASS LINE SECS line steps (over) per second from a breakpoint there,
 *                                                   one step request kept enabled, resumed at each event
 *   java JdiBench next   HOST PORT CLASS LINE SECS the same as jdb's `next` does it: a new request with a
 *                                                   count filter of 1 per step, deleted at its event
 *                                                   (OpenJDK 17's agent now and then loses such a step:
 *                                                   the thread runs on, and this mode fails after 10 s)
 *   java JdiBench idle   HOST PORT SECS            attached, no request, until the VM ends (at most SECS)
 *   java JdiBench cold   HOST PORT CLASS METHOD SECS  the same with a breakpoint in a method that never runs
 *
 * Output: one line "RESULT <mode> <figure>..." (attach: median and best ms; bp, step: events/s and
 * how many), or "ERROR ..." and exit 1. bp and step warm the client up (its JIT) for WARMUP_SECS
 * before counting. idle and cold resume the VM (a suspend=y VM starts then) and leave when it
 * disconnects, so the debugger is attached for the VM's whole run. */
import com.sun.jdi.*;
import com.sun.jdi.connect.*;
import com.sun.jdi.event.*;
import com.sun.jdi.request.*;
import java.util.*;

public class JdiBench {
  static VirtualMachine attach(String host, String port) throws Exception {
    AttachingConnector socket = null;
    for (AttachingConnector a : Bootstrap.virtualMachineManager().attachingConnectors())
      if (a.name().equals("com.sun.jdi.SocketAttach")) socket = a;
    if (socket == null) throw new IllegalStateException("no SocketAttach connector");
    Map<String, Connector.Argument> args = socket.defaultArguments();
    args.get("hostname").setValue(host);
    args.get("port").setValue(port);
    if (args.containsKey("timeout")) args.get("timeout").setValue("10000");
    return socket.attach(args);
  }

  /* The class, waiting for it to be prepared if it is not yet. */
  static ReferenceType classNamed(VirtualMachine vm, String name) throws Exception {
    List<ReferenceType> l = vm.classesByName(name);
    if (!l.isEmpty()) return l.get(0);
    ClassPrepareRequest r = vm.eventRequestManager().createClassPrepareRequest();
    r.addClassFilter(name);
    r.enable();
    vm.resume();
    long deadline = System.currentTimeMillis() + 10000;
    while (System.currentTimeMillis() < deadline) {
      EventSet es = vm.eventQueue().remove(1000);
      if (es == null) continue;
      for (Event e : es)
        if (e instanceof ClassPrepareEvent && ((ClassPrepareEvent) e).referenceType().name().equals(name)) {
          vm.eventRequestManager().deleteEventRequest(r);
          return ((ClassPrepareEvent) e).referenceType();
        }
      es.resume();
    }
    throw new IllegalStateException("class " + name + " never prepared");
  }

  static Location lineOf(ReferenceType t, int line) throws Exception {
    List<Location> l = t.locationsOfLine(line);
    if (l.isEmpty()) throw new IllegalStateException("no code at " + t.name() + ":" + line);
    return l.get(0);
  }

  /* Waits for an event of the given type, resuming sets that hold none. */
  static <T extends Event> T await(VirtualMachine vm, Class<T> type, EventSet[] set) throws Exception {
    long deadline = System.currentTimeMillis() + 10000;
    while (System.currentTimeMillis() < deadline) {
      EventSet es = vm.eventQueue().remove(1000);
      if (es == null) continue;
      for (Event e : es)
        if (type.isInstance(e)) {
          set[0] = es;
          return type.cast(e);
        }
      es.resume();
    }
    throw new IllegalStateException("no " + type.getSimpleName() + " within 10 s");
  }

  static final long WARMUP_NS = 500_000_000L;

  /* One line step (over). keep != null: the step request stays enabled, so a step is the event
   * and one resume (the round trip, as bp measures it). keep == null: jdb's `next`, a new request
   * with a count filter of 1, resume, the event, delete. set[0] holds the suspended set on entry
   * and on return. */
  static void step(EventRequestManager erm, ThreadReference t, VirtualMachine vm, EventSet[] set, StepRequest keep)
      throws Exception {
    StepRequest s = keep;
    if (s == null) {
      s = erm.createStepRequest(t, StepRequest.STEP_LINE, StepRequest.STEP_OVER);
      s.addCountFilter(1);
      s.setSuspendPolicy(EventRequest.SUSPEND_EVENT_THREAD);
      s.enable();
    }
    set[0].resume();
    await(vm, StepEvent.class, set);
    if (keep == null) erm.deleteEventRequest(s);
  }

  /* Resumes any event set until the VM dies or disconnects, or secs pass (then detaches).
   * Returns "death", "disconnect" or "timeout". */
  static String untilDeath(VirtualMachine vm, double secs) throws Exception {
    long end = System.nanoTime() + (long) (secs * 1e9);
    try {
      while (System.nanoTime() < end) {
        EventSet es = vm.eventQueue().remove(200);
        if (es == null) continue;
        for (Event e : es) {
          if (e instanceof VMDisconnectEvent) return "disconnect";
          if (e instanceof VMDeathEvent) return "death";
        }
        es.resume();
      }
    } catch (VMDisconnectedException e) {
      return "disconnect";
    }
    vm.dispose();
    return "timeout";
  }

  public static void main(String[] a) throws Exception {
    try {
      run(a);
    } catch (Exception e) {
      System.out.println("ERROR " + e);
      System.exit(1);
    }
    System.exit(0);
  }

  static void run(String[] a) throws Exception {
    String mode = a[0], host = a[1], port = a[2];
    switch (mode) {
      case "attach": {
        int n = Integer.parseInt(a[3]);
        double[] ms = new double[n];
        for (int i = 0; i < n; i++) {
          long t0 = System.nanoTime();
          VirtualMachine vm = attach(host, port);
          vm.allThreads();
          ms[i] = (System.nanoTime() - t0) / 1e6;
          vm.dispose();
          Thread.sleep(50);
        }
        Arrays.sort(ms);
        System.out.printf(Locale.ROOT, "RESULT attach %.3f %.3f%n", ms[n / 2], ms[0]);
        break;
      }
      case "bp": {
        VirtualMachine vm = attach(host, port);
        Location loc = lineOf(classNamed(vm, a[3]), Integer.parseInt(a[4]));
        double secs = Double.parseDouble(a[5]);
        BreakpointRequest r = vm.eventRequestManager().createBreakpointRequest(loc);
        r.setSuspendPolicy(EventRequest.SUSPEND_EVENT_THREAD);
        r.enable();
        vm.resume();
        EventSet[] set = new EventSet[1];
        for (long w = System.nanoTime() + WARMUP_NS; System.nanoTime() < w;) {
          await(vm, BreakpointEvent.class, set);
          set[0].resume();
        }
        long hits = 0, t0 = System.nanoTime(), end = t0 + (long) (secs * 1e9);
        while (System.nanoTime() < end) {
          await(vm, BreakpointEvent.class, set);
          hits++;
          set[0].resume();
        }
        double rate = hits / ((System.nanoTime() - t0) / 1e9);
        vm.eventRequestManager().deleteEventRequest(r);
        vm.dispose();
        System.out.printf(Locale.ROOT, "RESULT bp %.0f %d%n", rate, hits);
        break;
      }
      case "step":
      case "next": {
        VirtualMachine vm = attach(host, port);
        Location loc = lineOf(classNamed(vm, a[3]), Integer.parseInt(a[4]));
        double secs = Double.parseDouble(a[5]);
        EventRequestManager erm = vm.eventRequestManager();
        BreakpointRequest bp = erm.createBreakpointRequest(loc);
        bp.setSuspendPolicy(EventRequest.SUSPEND_EVENT_THREAD);
        bp.enable();
        vm.resume();
        EventSet[] set = new EventSet[1];
        ThreadReference t = await(vm, BreakpointEvent.class, set).thread();
        erm.deleteEventRequest(bp);
        StepRequest keep = null;
        if (mode.equals("step")) {
          keep = erm.createStepRequest(t, StepRequest.STEP_LINE, StepRequest.STEP_OVER);
          keep.setSuspendPolicy(EventRequest.SUSPEND_EVENT_THREAD);
          keep.enable();
        }
        for (long w = System.nanoTime() + WARMUP_NS; System.nanoTime() < w;) step(erm, t, vm, set, keep);
        long steps = 0, t0 = System.nanoTime(), end = t0 + (long) (secs * 1e9);
        while (System.nanoTime() < end) {
          step(erm, t, vm, set, keep);
          steps++;
        }
        double rate = steps / ((System.nanoTime() - t0) / 1e9);
        if (keep != null) erm.deleteEventRequest(keep);
        set[0].resume();
        vm.dispose();
        System.out.printf(Locale.ROOT, "RESULT %s %.0f %d%n", mode, rate, steps);
        break;
      }
      case "idle": {
        VirtualMachine vm = attach(host, port);
        vm.resume();
        System.out.println("RESULT idle " + untilDeath(vm, Double.parseDouble(a[3])));
        break;
      }
      case "cold": {
        VirtualMachine vm = attach(host, port);
        ReferenceType t = classNamed(vm, a[3]);
        Method m = t.methodsByName(a[4]).get(0);
        BreakpointRequest r = vm.eventRequestManager().createBreakpointRequest(m.location());
        r.enable();
        vm.resume();
        System.out.println("RESULT cold " + untilDeath(vm, Double.parseDouble(a[5])));
        break;
      }
      default:
        throw new IllegalArgumentException("mode " + mode);
    }
  }
}
