// Method entry and exit requests (class filter Reentry, suspend all) while Reentry.java makes the
// JVM load and link a JDK library: every entry and exit of Reentry's methods is reported once,
// work()'s return value is right, and the program ends normally (status 0, checked by
// run_jdi.py --reentry), under the JDK's agent and libddmcjdwp.so alike:
//
//   java ReentryClient HOST PORT        (the VM started with suspend=y)
//
// Prints "ok - ..." or "FAIL - ..." per check and "all checks passed" at the end.
import com.sun.jdi.*;
import com.sun.jdi.connect.*;
import com.sun.jdi.event.*;
import com.sun.jdi.request.*;
import java.util.*;

public class ReentryClient {
  static final long TIMEOUT_MS = 60000;
  static int failures;

  static void check(boolean ok, String what) {
    System.out.println((ok ? "ok - " : "FAIL - ") + what);
    System.out.flush();
    if (!ok) failures++;
  }

  public static void main(String[] args) throws Exception {
    AttachingConnector ac = null;
    for (AttachingConnector c : Bootstrap.virtualMachineManager().attachingConnectors())
      if (c.name().equals("com.sun.jdi.SocketAttach")) ac = c;
    Map<String, Connector.Argument> ca = ac.defaultArguments();
    ca.get("hostname").setValue(args[0]);
    ca.get("port").setValue(args[1]);
    VirtualMachine vm = ac.attach(ca);
    EventRequestManager erm = vm.eventRequestManager();
    MethodEntryRequest entry = erm.createMethodEntryRequest();
    entry.addClassFilter("Reentry");
    entry.setSuspendPolicy(EventRequest.SUSPEND_ALL);
    entry.enable();
    MethodExitRequest exit = erm.createMethodExitRequest();
    exit.addClassFilter("Reentry");
    exit.setSuspendPolicy(EventRequest.SUSPEND_ALL);
    exit.enable();
    vm.resume();
    List<String> entries = new ArrayList<>(), exits = new ArrayList<>();
    Value workResult = null;
    boolean death = false;
    long end = System.currentTimeMillis() + TIMEOUT_MS;
    while (!death) {
      long left = end - System.currentTimeMillis();
      EventSet set = left > 0 ? vm.eventQueue().remove(left) : null;
      if (set == null) {
        check(false, "VMDeath within " + TIMEOUT_MS + " ms (entries " + entries + ", exits " + exits + ")");
        System.exit(1);
      }
      for (Event e : set) {
        if (e instanceof MethodEntryEvent) entries.add(((MethodEntryEvent) e).method().name());
        if (e instanceof MethodExitEvent) {
          MethodExitEvent x = (MethodExitEvent) e;
          exits.add(x.method().name());
          if (x.method().name().equals("work")) workResult = x.returnValue();
        }
        if (e instanceof VMDisconnectEvent) {
          check(false, "the VM went away without VMDeath (entries " + entries + ", exits " + exits + ")");
          System.exit(1);
        }
        death |= e instanceof VMDeathEvent;
      }
      set.resume();
    }
    check(entries.equals(List.of("main", "work", "done")), "method entries main, work, done: " + entries);
    check(exits.equals(List.of("work", "done", "main")), "method exits work, done, main: " + exits);
    check(workResult instanceof IntegerValue && ((IntegerValue) workResult).value() == 42,
        "work() returned 42: " + workResult);
    if (failures > 0) System.exit(1);
    System.out.println("all checks passed");
  }
}
// SPDX-License-Identifier: Apache-2.0
