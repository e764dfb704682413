/* The JDI client behind the debugger benchmarks: the same program drives minivm (libddmc) and
 * HotSpot (OpenJDK's agent) in one run, so the two figures are comparable.
 *
 *   java JdiBench attach HOST PORT N               ms from attach() until allThreads() returns, N times
 *   java JdiBench bp     HOST PORT CLASS LINE SECS breakpoint hits per second (resumed at each hit)
 *   java JdiBench step   HOST PORT CLASS LINE SECS line steps (over) per second from a breakpoint there
 *   java JdiBench idle   HOST PORT SECS            attached, no request, for SECS
 *   java JdiBench cold   HOST PORT CLASS METHOD SECS  a breakpoint in a method that never runs
 *
 * Output: one line "RESULT <mode> <figure>", or "ERROR ..." and exit 1. */
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
        System.out.printf(Locale.ROOT, "RESULT attach %.2f%n", ms[n / 2]);
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
        for (int i = 0; i < 200; i++) { /* warm-up */
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
        System.out.printf(Locale.ROOT, "RESULT bp %.0f%n", rate);
        break;
      }
      case "step": {
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
        long steps = 0, t0 = System.nanoTime(), end = t0 + (long) (secs * 1e9);
        while (System.nanoTime() < end) {
          StepRequest s = erm.createStepRequest(t, StepRequest.STEP_LINE, StepRequest.STEP_OVER);
          s.addCountFilter(1);
          s.setSuspendPolicy(EventRequest.SUSPEND_EVENT_THREAD);
          s.enable();
          set[0].resume();
          await(vm, StepEvent.class, set);
          erm.deleteEventRequest(s);
          steps++;
        }
        double rate = steps / ((System.nanoTime() - t0) / 1e9);
        set[0].resume();
        vm.dispose();
        System.out.printf(Locale.ROOT, "RESULT step %.0f%n", rate);
        break;
      }
      case "idle": {
        VirtualMachine vm = attach(host, port);
        vm.resume();
        Thread.sleep((long) (Double.parseDouble(a[3]) * 1000));
        vm.dispose();
        System.out.println("RESULT idle 0");
        break;
      }
      case "cold": {
        VirtualMachine vm = attach(host, port);
        ReferenceType t = classNamed(vm, a[3]);
        Method m = t.methodsByName(a[4]).get(0);
        BreakpointRequest r = vm.eventRequestManager().createBreakpointRequest(m.location());
        r.enable();
        vm.resume();
        Thread.sleep((long) (Double.parseDouble(a[5]) * 1000));
        vm.dispose();
        System.out.println("RESULT cold 0");
        break;
      }
      default:
        throw new IllegalArgumentException("mode " + mode);
    }
  }
}
