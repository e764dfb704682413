/* The JDI client behind the debugger benchmarks (bench/bench_dbg.c): one program drives minivm
 * (libddmc) and HotSpot (OpenJDK's agent), so the two figures differ only on the VM side.
 * PORTS is one port or several, comma-separated: bp, step, stepkeep and attach then take turns
 * between the VMs (slices of 0.25 s; attach cycles alternate), so drift in the machine's load
 * hits every VM alike.
 *
 *   java JdiBench attach HOST PORTS N               ms from attach() until allThreads() returns, N times
 *   java JdiBench bp     HOST PORTS CLASS LINE SECS breakpoint hits per second (resumed at each hit)
 *   java JdiBench step   HOST PORTS CLASS LINE SECS line steps (over) per second from a breakpoint there, as
 *                                                   jdb's `next` and IDEs do it: per step a new request
 *                                                   with a count filter of 1, resume, the event, delete
 *   java JdiBench stepkeep HOST PORTS CLASS LINE SECS  the same with one step request kept enabled: each
 *                                                   step is the event and one resume (JDWP keeps an
 *                                                   uncounted step request active until it is cleared)
 *   java JdiBench methods HOST PORTS CLASS LINE SECS method entry and exit events per second: from a breakpoint
 *                                                   there, a MethodEntry and a MethodExit request (class filter
 *                                                   CLASS, that thread), each event resumed
 *   java JdiBench invoke HOST PORTS CLASS LINE SECS static calls per second: from a breakpoint there (deleted;
 *                                                   the thread stays suspended), CLASS.tick(1L) invoked on
 *                                                   that thread with INVOKE_SINGLE_THREADED, one after another
 *   java JdiBench pop    HOST PORTS CLASS LINE SECS Drop Frame round trips per second: held at a breakpoint
 *                                                   there (inside a call), popFrames of that frame, resume, the
 *                                                   same breakpoint again as the call runs anew
 *   java JdiBench redefine HOST PORTS CLASS LINE SECS  redefineClasses of CLASS (its own class file, from this
 *                                                   client's class path) per second, the thread held at a
 *                                                   breakpoint there (deleted)
 *   java JdiBench idle   HOST PORT SECS             attached, no request, until the VM ends (at most SECS)
 *   java JdiBench cold   HOST PORT CLASS METHOD SECS  the same with a breakpoint in a method that never runs
 *   java JdiBench watch  HOST PORT CLASS FIELD SECS   the same with access and modification watchpoints on a field
 *
 * Output: "RESULT <mode>" then three numbers per port, in order (attach: median and best ms, 0;
 * bp, step, stepkeep, invoke: events (calls)/s, how many, and this client's own CPU microseconds per event,
 * all its threads; -1 0 -1 for a VM that failed, after a line "FAIL <port> <exception>"); idle, cold and watch: "RESULT <mode> death|disconnect|timeout". "ERROR ..." and exit 1
 * when nothing could be measured. bp, step and stepkeep warm the client up (its JIT) on each VM for
 * 0.5 s before counting. idle and cold resume the VM (a suspend=y VM starts then) and leave when
 * it disconnects, so the debugger is attached for the VM's whole run. */
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

  /* The class, waiting for it to be prepared if it is not yet (the VM is resumed then: a
   * suspend=y VM loads nothing until it is). Nothing else may be able to suspend a thread at that
   * point: VirtualMachine.Resume also undoes an event's suspension that it overtakes. */
  static ReferenceType classNamed(VirtualMachine vm, String name) throws Exception {
    List<ReferenceType> l = vm.classesByName(name);
    if (!l.isEmpty()) return l.get(0);
    ClassPrepareRequest r = vm.eventRequestManager().createClassPrepareRequest();
    r.addClassFilter(name);
    r.setSuspendPolicy(EventRequest.SUSPEND_NONE);
    r.enable();
    l = vm.classesByName(name);
    if (!l.isEmpty()) {
      vm.eventRequestManager().deleteEventRequest(r);
      return l.get(0);
    }
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
    long deadline = System.currentTimeMillis() + 3000;
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
    throw new IllegalStateException("no " + type.getSimpleName() + " within 3 s");
  }

  static final long WARMUP_NS = 500_000_000L, SLICE_NS = 250_000_000L;

  /* One VM of a bp / step / stepkeep run: its thread stays suspended (set[0]) between turns. */
  static final class Target {
    final String port;
    VirtualMachine vm;
    ThreadReference thread;
    final EventSet[] set = new EventSet[1];
    StepRequest keep;
    byte[] classFile;
    ClassType cls;
    Method tick;
    long events, ns, cpu;
    String error;

    Target(String port) {
      this.port = port;
    }
  }

  static void setUp(Target t, String host, String mode, String cls, int line) throws Exception {
    t.vm = attach(host, t.port);
    Location loc = lineOf(classNamed(t.vm, cls), line);
    /* Resume before the breakpoint exists (a suspend=y VM starts here; suspend=n: nothing to
     * undo). Resumed after it, the VM.Resume could overtake the first hit and resume its thread,
     * which then hits again with a stale event set in the queue. */
    t.vm.resume();
    EventRequestManager erm = t.vm.eventRequestManager();
    BreakpointRequest bp = erm.createBreakpointRequest(loc);
    bp.setSuspendPolicy(EventRequest.SUSPEND_EVENT_THREAD);
    bp.enable();
    t.thread = await(t.vm, BreakpointEvent.class, t.set).thread();
    if (mode.equals("bp") || mode.equals("pop")) return;
    erm.deleteEventRequest(bp);
    if (mode.equals("invoke") || mode.equals("redefine")) {
      t.cls = (ClassType) loc.declaringType();
      t.tick = t.cls.methodsByName("tick").get(0);
    }
    if (mode.equals("redefine")) {
      try (java.io.InputStream in = ClassLoader.getSystemResourceAsStream(cls.replace('.', '/') + ".class")) {
        if (in == null) throw new IllegalStateException("no class file for " + cls + " on the class path");
        t.classFile = in.readAllBytes();
      }
    }
    if (mode.equals("stepkeep")) {
      t.keep = erm.createStepRequest(t.thread, StepRequest.STEP_LINE, StepRequest.STEP_OVER);
      t.keep.setSuspendPolicy(EventRequest.SUSPEND_EVENT_THREAD);
      t.keep.enable();
    }
    if (mode.equals("methods")) {
      MethodEntryRequest en = erm.createMethodEntryRequest();
      MethodExitRequest ex = erm.createMethodExitRequest();
      for (EventRequest r : new EventRequest[] {en, ex}) {
        if (r == en) {
          en.addClassFilter(cls);
          en.addThreadFilter(t.thread);
        } else {
          ex.addClassFilter(cls);
          ex.addThreadFilter(t.thread);
        }
        r.setSuspendPolicy(EventRequest.SUSPEND_EVENT_THREAD);
        r.enable();
      }
    }
  }

  /* One round trip: resume the held event set, wait for the next event. bp: the next hit.
   * step: jdb's `next` (a request with a count filter of 1 per step, deleted at its event).
   * stepkeep: the next line (the request stays). */
  static void once(Target t, String mode) throws Exception {
    if (mode.equals("invoke")) {
      Value v = t.cls.invokeMethod(t.thread, t.tick, Collections.singletonList(t.vm.mirrorOf(1L)),
          ClassType.INVOKE_SINGLE_THREADED);
      if (!(v instanceof LongValue) || ((LongValue) v).value() != 2L) throw new IllegalStateException("tick(1) = " + v);
      return;
    }
    if (mode.equals("methods")) {
      t.set[0].resume();
      await(t.vm, LocatableEvent.class, t.set); // a method entry or exit
      return;
    }
    if (mode.equals("bp")) {
      t.set[0].resume();
      await(t.vm, BreakpointEvent.class, t.set);
      return;
    }
    if (mode.equals("pop")) {
      t.thread.popFrames(t.thread.frame(0));
      t.set[0].resume();
      await(t.vm, BreakpointEvent.class, t.set);
      return;
    }
    if (mode.equals("redefine")) {
      t.vm.redefineClasses(Collections.singletonMap(t.cls, t.classFile));
      return;
    }
    EventRequestManager erm = t.vm.eventRequestManager();
    StepRequest s = t.keep;
    if (s == null) {
      s = erm.createStepRequest(t.thread, StepRequest.STEP_LINE, StepRequest.STEP_OVER);
      s.addCountFilter(1);
      s.setSuspendPolicy(EventRequest.SUSPEND_EVENT_THREAD);
      s.enable();
    }
    t.set[0].resume();
    await(t.vm, StepEvent.class, t.set);
    if (t.keep == null) erm.deleteEventRequest(s);
  }

  /* CPU time of this whole JVM (every thread: JDI's reader and event threads too), or 0. */
  static long cpuNs() {
    java.lang.management.OperatingSystemMXBean os = java.lang.management.ManagementFactory.getOperatingSystemMXBean();
    return os instanceof com.sun.management.OperatingSystemMXBean
        ? ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime()
        : 0;
  }

  static void fail(Target t, Exception e) {
    t.error = e.toString();
    System.out.println("FAIL " + t.port + " " + t.error);
    try {
      t.vm.dispose();
    } catch (Exception ignored) {
    }
  }

  static void roundTrips(String host, String[] ports, String mode, String cls, int line, double secs) {
    List<Target> ts = new ArrayList<>();
    for (String p : ports) ts.add(new Target(p));
    for (Target t : ts) {
      try {
        setUp(t, host, mode, cls, line);
        for (long w = System.nanoTime() + WARMUP_NS; System.nanoTime() < w;) once(t, mode);
      } catch (Exception e) {
        fail(t, e);
      }
    }
    long end = System.nanoTime() + (long) (secs * 1e9);
    while (System.nanoTime() < end) {
      boolean any = false;
      for (Target t : ts) {
        if (t.error != null) continue;
        any = true;
        long t0 = System.nanoTime(), stop = t0 + SLICE_NS, now = t0, c0 = cpuNs();
        try {
          while (now < stop) {
            once(t, mode);
            t.events++;
            now = System.nanoTime();
          }
        } catch (Exception e) {
          fail(t, e);
          now = System.nanoTime();
        }
        t.ns += now - t0;
        t.cpu += cpuNs() - c0;
      }
      if (!any) break;
    }
    StringBuilder out = new StringBuilder("RESULT " + mode);
    for (Target t : ts) {
      if (t.error != null) {
        out.append(" -1 0 -1");
        continue;
      }
      out.append(String.format(Locale.ROOT, " %.0f %d %.1f", t.events / (t.ns / 1e9), t.events,
          t.events > 0 ? t.cpu / 1e3 / t.events : -1.0));
      try {
        if (t.keep != null) t.vm.eventRequestManager().deleteEventRequest(t.keep);
        t.vm.eventRequestManager().deleteAllBreakpoints();
        t.set[0].resume();
        t.vm.dispose();
      } catch (Exception ignored) {
      }
    }
    System.out.println(out);
  }

  static void attachCycles(String host, String[] ports, int n) throws Exception {
    double[][] ms = new double[ports.length][n];
    String[] error = new String[ports.length];
    for (int i = 0; i < n; i++)
      for (int k = 0; k < ports.length; k++) {
        if (error[k] != null) continue;
        try {
          long t0 = System.nanoTime();
          VirtualMachine vm = attach(host, ports[k]);
          vm.allThreads();
          ms[k][i] = (System.nanoTime() - t0) / 1e6;
          vm.dispose();
        } catch (Exception e) {
          error[k] = e.toString();
          System.out.println("FAIL " + ports[k] + " " + error[k]);
        }
        Thread.sleep(50);
      }
    StringBuilder out = new StringBuilder("RESULT attach");
    for (int k = 0; k < ports.length; k++) {
      if (error[k] != null) {
        out.append(" -1 0 -1");
        continue;
      }
      Arrays.sort(ms[k]);
      out.append(String.format(Locale.ROOT, " %.3f %.3f 0", ms[k][n / 2], ms[k][0]));
    }
    System.out.println(out);
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
    String[] ports = port.split(",");
    switch (mode) {
      case "attach":
        attachCycles(host, ports, Integer.parseInt(a[3]));
        break;
      case "bp":
      case "step":
      case "stepkeep":
      case "methods":
      case "invoke":
      case "pop":
      case "redefine":
        roundTrips(host, ports, mode, a[3], Integer.parseInt(a[4]), Double.parseDouble(a[5]));
        break;
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
      case "watch": {
        VirtualMachine vm = attach(host, port);
        ReferenceType t = classNamed(vm, a[3]);
        Field f = t.fieldByName(a[4]);
        EventRequestManager erm = vm.eventRequestManager();
        erm.createModificationWatchpointRequest(f).enable();
        erm.createAccessWatchpointRequest(f).enable();
        vm.resume();
        System.out.println("RESULT watch " + untilDeath(vm, Double.parseDouble(a[5])));
        break;
      }
      default:
        throw new IllegalArgumentException("mode " + mode);
    }
  }
}
// SPDX-License-Identifier: Apache-2.0
