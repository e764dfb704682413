// JDWP's monitor events (MONITOR_CONTENDED_ENTER / ENTERED, MONITOR_WAIT / WAITED) through the
// JDK's own JDI, against Watch (tests/jvmti/Watch.java on HotSpot, examples/minivm/programs/
// watch.mvm on minivm) started with suspend=y: the requests are in place before its first
// instruction. Watch's Contender-1 and Contender-2 each block once on a lock main holds, and
// Waiter waits three times for 50 ms with nobody notifying. The JVM's own threads also wait on
// monitors: only the program's threads are counted. run_jdi.py --monitors runs it.
import com.sun.jdi.*;
import com.sun.jdi.connect.*;
import com.sun.jdi.event.*;
import com.sun.jdi.request.*;
import java.util.*;

public class MonitorClient {
  static int failures;

  static void check(boolean ok, String what) {
    System.out.println((ok ? "ok   " : "FAIL ") + what);
    if (!ok) failures++;
  }

  /* An event of the program's own: one of its threads, on one of its monitors (plain Objects). The
   * JDK's code in those threads may contend on its own locks (a ThreadGroup at thread exit) now
   * and then: not the program's doing, not counted. */
  static boolean ours(ThreadReference t, ObjectReference monitor) {
    String n = t.name();
    return (n.startsWith("Contender-") || n.equals("Waiter")) && monitor.referenceType().name().equals("java.lang.Object");
  }

  static String where(Location l) {
    return l == null ? "(no location)" : l.declaringType().name() + "." + l.method().name();
  }

  public static void main(String[] args) throws Exception {
    AttachingConnector ac = null;
    for (AttachingConnector c : Bootstrap.virtualMachineManager().attachingConnectors())
      if (c.name().equals("com.sun.jdi.SocketAttach")) ac = c;
    Map<String, Connector.Argument> ca = ac.defaultArguments();
    ca.get("hostname").setValue(args[0]);
    ca.get("port").setValue(args[1]);
    VirtualMachine vm = ac.attach(ca);
    check(vm.canRequestMonitorEvents(), "canRequestMonitorEvents");
    EventRequestManager erm = vm.eventRequestManager();
    List<EventRequest> reqs = List.of(erm.createMonitorContendedEnterRequest(),
        erm.createMonitorContendedEnteredRequest(), erm.createMonitorWaitRequest(), erm.createMonitorWaitedRequest());
    for (EventRequest r : reqs) {
      r.setSuspendPolicy(EventRequest.SUSPEND_EVENT_THREAD); // alive and named until resumed
      r.enable();
    }
    vm.resume();
    Map<String, Integer> counts = new TreeMap<>();
    Set<String> enterMethods = new TreeSet<>();
    long[] waits = {0, 0}; // the waits' timeouts in all, the waited that timed out
    boolean ended = false;
    long deadline = System.currentTimeMillis() + 60000;
    while (!ended && System.currentTimeMillis() < deadline) {
      EventSet set;
      try {
        set = vm.eventQueue().remove(5000);
      } catch (VMDisconnectedException e) {
        ended = true; // the program's threads were joined before it ended: nothing of theirs is lost
        break;
      }
      if (set == null) continue;
      try {
        ended |= count(set, counts, enterMethods, waits);
        if (!ended) set.resume();
      } catch (VMDisconnectedException e) {
        ended = true; // the JVM ended while one of its own threads' events was being read
      }
    }
    long timeouts = waits[0], timedOut = waits[1];
    report(counts, enterMethods, timeouts, timedOut, ended);
    try {
      vm.dispose();
    } catch (VMDisconnectedException e) {
      // the VM has ended
    }
    System.out.println(failures == 0 ? "all checks passed" : failures + " checks failed");
    System.exit(failures == 0 ? 0 : 1);
  }

  /* Counts one event set's monitor events of the program's threads; true at the VM's end. */
  static boolean count(EventSet set, Map<String, Integer> counts, Set<String> enterMethods, long[] waits) {
    boolean ended = false;
    for (Event e : set) {
      if (e instanceof VMDeathEvent || e instanceof VMDisconnectEvent) {
        ended = true;
      } else if (e instanceof MonitorContendedEnterEvent) {
        MonitorContendedEnterEvent m = (MonitorContendedEnterEvent) e;
        if (!ours(m.thread(), m.monitor())) continue;
        counts.merge("contended-enter " + m.monitor().referenceType().name(), 1, Integer::sum);
        enterMethods.add(where(m.location()));
      } else if (e instanceof MonitorContendedEnteredEvent) {
        MonitorContendedEnteredEvent m = (MonitorContendedEnteredEvent) e;
        if (ours(m.thread(), m.monitor())) counts.merge("contended-entered " + m.monitor().referenceType().name(), 1, Integer::sum);
      } else if (e instanceof MonitorWaitEvent) {
        MonitorWaitEvent m = (MonitorWaitEvent) e;
        if (!ours(m.thread(), m.monitor())) continue;
        counts.merge("wait " + m.monitor().referenceType().name(), 1, Integer::sum);
        waits[0] += m.timeout();
      } else if (e instanceof MonitorWaitedEvent) {
        MonitorWaitedEvent m = (MonitorWaitedEvent) e;
        if (!ours(m.thread(), m.monitor())) continue;
        counts.merge("waited " + m.monitor().referenceType().name(), 1, Integer::sum);
        if (m.timedout()) waits[1]++;
      }
    }
    return ended;
  }

  static void report(Map<String, Integer> counts, Set<String> enterMethods, long timeouts, long timedOut,
                     boolean ended) {
    System.out.println("# counts " + counts + ", enters in " + enterMethods);
    check(ended, "the program ran to its end");
    check(counts.getOrDefault("contended-enter java.lang.Object", 0) == 2, "two contended enters on an Object");
    check(counts.getOrDefault("contended-entered java.lang.Object", 0) == 2, "two contended entered on an Object");
    check(enterMethods.equals(Set.of("Watch.contender")), "both in Watch.contender");
    check(counts.getOrDefault("wait java.lang.Object", 0) == 3, "three waits on an Object");
    check(timeouts == 150, "each wait's timeout is 50 ms (" + timeouts + " in all)");
    check(counts.getOrDefault("waited java.lang.Object", 0) == 3 && timedOut == 3, "three waited, all timed out");
    check(counts.size() == 4, "the four kinds, nothing else");
  }
}
// SPDX-License-Identifier: Apache-2.0
