// HotSwap, Drop Frame and Force Return through JDI (the JDK's, or Eclipse's with
// -Dide.bootstrap=org.eclipse.jdi.Bootstrap) against Mutate.java:
//
//   java MutateClient REDEFINED_CLASS ADDED_METHOD_CLASS HOST PORT
//
// REDEFINED_CLASS: Greeter.class of redefine/Greeter.java (same members, another body);
// ADDED_METHOD_CLASS: Greeter.class of redefine_added/Greeter.java (a method more); both "-" on
// minivm (examples/minivm/programs/mutate.mvm, which has no RedefineClasses). In order:
// the capabilities; popFrames of one frame (inner re-entered, middle not run again) and of two
// (middle runs again), with the frames the VM shows right after each pop; popFrames and
// forceEarlyReturn on a native frame (Thread.sleep: NativeMethodException); forceEarlyReturn of
// each return type, whose values main keeps; redefineClasses of Greeter while main is stopped
// (its breakpoint there deleted by JDI, the new line table, a breakpoint in the new code hit, the
// new value seen), then a schema change, bytes that are no class file and a class file of another
// name, each refused. Prints "ok - ..." or "FAIL - ..." per check and "all checks passed" at the end.
import com.sun.jdi.*;
import com.sun.jdi.connect.*;
import com.sun.jdi.event.*;
import com.sun.jdi.request.*;
import java.nio.file.*;
import java.util.*;

public class MutateClient {
  static final long TIMEOUT_MS = 20000;
  static int failures;
  static VirtualMachine vm;
  static EventQueue queue;
  static EventRequestManager erm;
  static ClassType mutate;
  static String redefinedPath, addedPath;
  /** minivm (REDEFINED_CLASS "-"): no RedefineClasses (canRedefineClasses false), and Sleeper's
   *  sleep is an instruction of a bytecode method, where the VM refuses pops and returns all the
   *  same (OPAQUE_FRAME). */
  static boolean MINIVM;
  static final boolean ECLIPSE = System.getProperty("ide.bootstrap") != null;

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

  /** The next breakpoint event; any other event set fails the run. */
  static BreakpointEvent nextBreakpoint() throws InterruptedException {
    long end = System.currentTimeMillis() + TIMEOUT_MS;
    while (true) {
      long left = end - System.currentTimeMillis();
      if (left <= 0) fatal("no breakpoint within " + TIMEOUT_MS + " ms");
      EventSet set = queue.remove(left);
      if (set == null) continue;
      for (Event e : set) {
        if (e instanceof BreakpointEvent) return (BreakpointEvent) e;
        if (e instanceof VMDeathEvent || e instanceof VMDisconnectEvent) fatal("the VM went away");
      }
      set.resume();
    }
  }

  static Method method(ReferenceType t, String name) {
    List<Method> l = t.methodsByName(name);
    if (l.isEmpty()) fatal("no method " + name + " in " + t.name());
    return l.get(0);
  }

  static BreakpointRequest breakAt(Location l) {
    BreakpointRequest bp = erm.createBreakpointRequest(l);
    bp.setSuspendPolicy(EventRequest.SUSPEND_EVENT_THREAD);
    bp.enable();
    return bp;
  }

  static Value stat(String field) { return mutate.getValue(mutate.fieldByName(field)); }

  static int intStat(String field) { return ((IntegerValue) stat(field)).value(); }

  static String names(ThreadReference t) throws IncompatibleThreadStateException {
    StringBuilder b = new StringBuilder();
    for (StackFrame f : t.frames()) b.append(b.length() > 0 ? "," : "").append(f.location().method().name());
    return b.toString();
  }

  interface Act { void run() throws Exception; }

  static String thrownBy(Act a) {
    try {
      a.run();
      return "nothing";
    } catch (Exception | Error e) {
      if (e instanceof InternalException) return "InternalException(" + ((InternalException) e).errorCode() + ")";
      return e.getClass().getSimpleName();
    }
  }

  public static void main(String[] args) throws Exception {
    redefinedPath = args[0];
    addedPath = args[1];
    MINIVM = redefinedPath.equals("-");
    byte[] redefined = MINIVM ? new byte[0] : Files.readAllBytes(Paths.get(args[0]));
    byte[] added = MINIVM ? new byte[0] : Files.readAllBytes(Paths.get(args[1]));
    AttachingConnector ac = null;
    VirtualMachineManager vmm = manager();
    System.out.println("# JDI: " + vmm.getClass().getName());
    for (AttachingConnector c : vmm.attachingConnectors())
      if (c.name().equals("com.sun.jdi.SocketAttach")) ac = c;
    if (ac == null) fatal("no SocketAttach connector");
    Map<String, Connector.Argument> ca = ac.defaultArguments();
    ca.get("hostname").setValue(args[2]);
    ca.get("port").setValue(args[3]);
    vm = ac.attach(ca);
    queue = vm.eventQueue();
    erm = vm.eventRequestManager();
    check(true, "attached to " + vm.name());
    if (MINIVM)
      check(!vm.canRedefineClasses() && !vm.canAddMethod() && !vm.canUnrestrictedlyRedefineClasses(),
          "minivm: no canRedefineClasses, canAddMethod nor canUnrestrictedlyRedefineClasses");
    else
      check(vm.canRedefineClasses() && !vm.canAddMethod() && !vm.canUnrestrictedlyRedefineClasses(),
          "canRedefineClasses, not canAddMethod nor canUnrestrictedlyRedefineClasses, as HotSpot");
    check(vm.canPopFrames(), "canPopFrames");
    check(vm.canForceEarlyReturn(), "canForceEarlyReturn");

    for (int i = 0; i < 200 && mutate == null; i++) {
      List<ReferenceType> l = vm.classesByName("Mutate");
      if (!l.isEmpty()) mutate = (ClassType) l.get(0);
      else Thread.sleep(50);
    }
    if (mutate == null) fatal("class Mutate never loaded");
    popFrames();
    nativeFrames();
    forceEarlyReturn();
    if (MINIVM) {
      ReferenceType g = vm.classesByName("Greeter").get(0);
      check(thrownBy(() -> vm.redefineClasses(Map.of(g, new byte[] {1}))).equals("UnsupportedOperationException"),
          "minivm: redefineClasses refused");
    } else {
      redefine(redefined, added);
    }
    vm.dispose();
    if (failures > 0) fatal(failures + " check(s) failed");
    System.out.println("all checks passed");
  }

  static void popFrames() throws Exception {
    BreakpointRequest bp = breakAt(method(mutate, "inner").location());
    BreakpointEvent hit = nextBreakpoint();
    ThreadReference t = hit.thread();
    check(names(t).startsWith("inner,middle,outer,main"), "stopped in inner (" + names(t) + ")");
    int counter = intStat("counter");
    t.popFrames(t.frame(0));
    check(names(t).startsWith("middle,outer,main"), "inner popped: the frames " + names(t));
    StackFrame top = t.frame(0);
    LocalVariable x = top.visibleVariableByName("x");
    check(x != null && ((IntegerValue) top.getValue(x)).value() == 3, "middle's x read through the new top frame: " + (x == null ? "none" : top.getValue(x)));
    check(top.location().lineNumber() == method(mutate, "middle").allLineLocations().get(1).lineNumber(),
        "middle stands at its call of inner (line " + top.location().lineNumber() + ")");
    t.resume();
    hit = nextBreakpoint();
    check(hit.thread().equals(t) && intStat("counter") == counter,
        "inner re-entered, middle's code before the call not run again (counter " + counter + " -> " + intStat("counter") + ")");

    t.popFrames(t.frame(1));
    check(names(t).startsWith("outer,main"), "inner and middle popped: the frames " + names(t));
    t.resume();
    hit = nextBreakpoint();
    check(intStat("counter") == counter + 1, "middle re-entered and run again (counter " + counter + " -> " + intStat("counter") + ")");
    erm.deleteEventRequest(bp);
    hit.thread().resume();
  }

  static ThreadReference thread(String name) {
    for (ThreadReference t : vm.allThreads())
      if (t.name().equals(name)) return t;
    fatal("no thread " + name);
    return null;
  }

  static void nativeFrames() throws Exception {
    ThreadReference s = thread("Sleeper");
    s.suspend();
    String before = names(s);
    if (!MINIVM)
      check(s.frame(0).location().method().isNative(), "Sleeper stands in a native method (" + s.frame(0).location().method().name() + ")");
    // The JDK's JDI maps OPAQUE_FRAME from PopFrames to no exception of its own:
    // InternalException(32); Eclipse's to NativeMethodException.
    String popped = thrownBy(() -> s.popFrames(s.frame(0)));
    check(popped.equals(ECLIPSE ? "NativeMethodException" : "InternalException(32)"), "popFrames of a native frame: OPAQUE_FRAME (" + popped + ")");
    check(thrownBy(() -> s.forceEarlyReturn(vm.mirrorOfVoid())).equals("NativeMethodException"),
        "forceEarlyReturn from a native frame: NativeMethodException (OPAQUE_FRAME)");
    check(names(s).equals(before) && before.startsWith(MINIVM ? "pause,sleeper" : "sleep,pause,"), "Sleeper's frames unchanged (" + names(s) + ")");
    s.resume();
  }

  static void forceEarlyReturn() throws Exception {
    String[] ms = {"rz", "rb", "rc", "rs", "ri", "rj", "rf", "rd", "rl", "rv"};
    Value[] vs = {vm.mirrorOf(true), vm.mirrorOf((byte) 11), vm.mirrorOf('z'), vm.mirrorOf((short) 22), vm.mirrorOf(33),
        vm.mirrorOf(44L), vm.mirrorOf(55.5f), vm.mirrorOf(66.25), vm.mirrorOf("forced"), vm.mirrorOfVoid()};
    // Every breakpoint goes in while main stands at outer, so one round meets them all in order.
    BreakpointRequest start = breakAt(method(mutate, "outer").location());
    BreakpointEvent at = nextBreakpoint();
    erm.deleteEventRequest(start);
    List<BreakpointRequest> bps = new ArrayList<>();
    for (String m : ms) bps.add(breakAt(method(mutate, m).location()));
    at.thread().resume();
    int voids = -1;
    BreakpointRequest bp = null;
    for (int i = 0; i < ms.length; i++) {
      BreakpointEvent hit = nextBreakpoint();
      String name = hit.location().method().name();
      int k = Arrays.asList(ms).indexOf(name);
      if (name.equals("rv")) voids = intStat("voids");
      hit.thread().forceEarlyReturn(vs[k]);
      erm.deleteEventRequest(bps.get(k));
      // Set before the last resume: main must stop at the very next outer, before another
      // round overwrites the forced values (a loaded machine may take longer than main's pause).
      if (i == ms.length - 1) bp = breakAt(method(mutate, "outer").location());
      hit.thread().resume();
    }
    BreakpointEvent hit = nextBreakpoint(); // the next round: every value of the last one is in
    check(((BooleanValue) stat("gz")).value(), "boolean forced: " + stat("gz"));
    check(((ByteValue) stat("gb")).value() == 11, "byte forced: " + stat("gb"));
    check(((CharValue) stat("gc")).value() == 'z', "char forced: " + stat("gc"));
    check(((ShortValue) stat("gs")).value() == 22, "short forced: " + stat("gs"));
    check(((IntegerValue) stat("gi")).value() == 33, "int forced: " + stat("gi"));
    check(((LongValue) stat("gj")).value() == 44L, "long forced: " + stat("gj"));
    check(((FloatValue) stat("gf")).value() == 55.5f, "float forced: " + stat("gf"));
    check(((DoubleValue) stat("gd")).value() == 66.25, "double forced: " + stat("gd"));
    check(((StringReference) stat("gl")).value().equals("forced"), "String forced: " + stat("gl"));
    check(intStat("voids") == voids, "void forced: rv's body not run (voids " + voids + " -> " + intStat("voids") + ")");
    erm.deleteEventRequest(bp);
    hit.thread().resume();
  }

  static void redefine(byte[] redefined, byte[] added) throws Exception {
    ReferenceType greeter = vm.classesByName("Greeter").get(0);
    Method value = method(greeter, "value");
    int linesBefore = value.allLineLocations().size();
    BreakpointRequest old = breakAt(value.location());
    BreakpointEvent hit = nextBreakpoint();
    check(hit.location().method().equals(value), "stopped in Greeter.value (old code)");
    hit.thread().resume();
    BreakpointRequest stop = breakAt(method(mutate, "outer").location());
    hit = nextBreakpoint(); // main stopped outside Greeter: an IDE's HotSwap at a breakpoint
    vm.redefineClasses(Map.of(greeter, redefined));
    if (ECLIPSE) {
      hotCodeReplaceEclipse(old, stop, hit.thread());
      return;
    }
    check(!erm.breakpointRequests().contains(old), "JDI deleted the breakpoint in the redefined class");
    value = method(greeter, "value");
    int linesAfter = value.allLineLocations().size();
    check(linesBefore == 2 && linesAfter == 3, "Greeter.value's line table: " + linesBefore + " lines, then " + linesAfter);
    BreakpointRequest fresh = breakAt(value.allLineLocations().get(1));
    erm.deleteEventRequest(stop);
    hit.thread().resume();
    hit = nextBreakpoint();
    check(hit.location().method().name().equals("value") && hit.location().lineNumber() == value.allLineLocations().get(1).lineNumber(),
        "a breakpoint in the new code is hit (Greeter.value line " + hit.location().lineNumber() + ")");
    erm.deleteEventRequest(fresh);
    ThreadReference main = hit.thread();
    main.resume();
    long end = System.currentTimeMillis() + TIMEOUT_MS;
    while (intStat("greeting") != 2 && System.currentTimeMillis() < end) Thread.sleep(20);
    check(intStat("greeting") == 2, "main runs the new Greeter.value: greeting " + intStat("greeting"));

    refusals(greeter, main, redefined, added);
  }

  /** Eclipse's JDI keeps its breakpoint requests and line tables across a redefinition (its
   *  debugger's hot code replace deletes and sets them again itself): the request in the old code
   *  must fire no more, as the JDK's agent drops it. */
  static void hotCodeReplaceEclipse(BreakpointRequest old, BreakpointRequest stop, ThreadReference main) throws Exception {
    check(erm.breakpointRequests().contains(old), "Eclipse's JDI keeps its request in the redefined class");
    erm.deleteEventRequest(stop);
    main.resume();
    long end = System.currentTimeMillis() + TIMEOUT_MS;
    while (intStat("greeting") != 2 && System.currentTimeMillis() < end) Thread.sleep(20);
    check(intStat("greeting") == 2, "main runs the new Greeter.value: greeting " + intStat("greeting"));
    EventSet set = queue.remove(1000);
    check(set == null, "the breakpoint in the old code fires no more (" + set + ")");
    if (set != null) set.resume();
    // A breakpoint set anew where the old one was (the first instruction, in both bodies): the
    // back-end forgot the old one, so this one reaches the VM and fires.
    BreakpointRequest again = breakAt(method(vm.classesByName("Greeter").get(0), "value").location());
    BreakpointEvent hit = nextBreakpoint();
    check(hit.request().equals(again), "a breakpoint set again at Greeter.value's first instruction fires (" + hit.request() + ")");
    erm.deleteEventRequest(again);
    erm.deleteEventRequest(old);
    hit.thread().resume();
    refusals(vm.classesByName("Greeter").get(0), main, Files.readAllBytes(Paths.get(redefinedPath)), Files.readAllBytes(Paths.get(addedPath)));
  }

  static void refusals(ReferenceType greeter, ThreadReference main, byte[] redefined, byte[] added) throws Exception {
    main.suspend();
    final ReferenceType g = greeter;
    check(thrownBy(() -> vm.redefineClasses(Map.of(g, added))).equals("UnsupportedOperationException"),
        "a method added: UnsupportedOperationException (ADD_METHOD_NOT_IMPLEMENTED): " + thrownBy(() -> vm.redefineClasses(Map.of(g, added))));
    byte[] junk = "not a class file at all".getBytes("UTF-8");
    check(thrownBy(() -> vm.redefineClasses(Map.of(g, junk))).equals("ClassFormatError"),
        "bytes that are no class file: ClassFormatError (INVALID_CLASS_FORMAT): " + thrownBy(() -> vm.redefineClasses(Map.of(g, junk))));
    check(thrownBy(() -> vm.redefineClasses(Map.of(mutate, redefined))).equals("NoClassDefFoundError"),
        "Greeter's class file for Mutate: NoClassDefFoundError (NAMES_DONT_MATCH): " + thrownBy(() -> vm.redefineClasses(Map.of(mutate, redefined))));
    main.resume();
    Thread.sleep(100);
    check(intStat("greeting") == 2, "after the refusals main still runs the redefined code: greeting " + intStat("greeting"));
  }
}
// SPDX-License-Identifier: Apache-2.0
