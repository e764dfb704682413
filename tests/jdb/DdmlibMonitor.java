// The real ddmlib (Debian libandroid-ddms-java) watching one VM while a debugger (jdb) debugs it
// through ddmlib's per-client debugger port: the monitor half of jdb_ddmlib (run_android.py).
//
//   java DdmlibMonitor --serial 127.0.0.1:PORT --pid PID [--timeout S]
//
// It connects to the adb server named by ANDROID_ADB_SERVER_PORT, waits until ddmlib lists PID and
// has its HELO, turns thread updates and heap updates on, and prints "debug-port N": the port
// ddmlib listens on for this client's debugger. Then, until a line "quit" (or EOF) on stdin, it
// keeps DDM traffic going (every 250 ms: THST, STKL of main; every second: HPIF now; every two
// seconds: HPGC) and prints one line per change ddmlib reports:
//
//   threads n=N main=STATUS debugger=STATUS attached=BOOL       (THEN/THCR/THST)
//   stack main: C.m(F:L) < C.m(F:L) ... debugger=STATUS          (STKL)
//   heap reason=R size=B allocated=B objects=N debugger=STATUS   (HPIF; R 1 = asked now, 3 = at a GC)
//   segments n=N bytes=B debugger=STATUS                         (HPST/HPSG/HPEN after a GC)
//   debugger STATUS attached=BOOL                                 (the debugger came or went)
//
// When a debugger disconnects, ddmlib drops its connection to the VM and opens a new one (a new
// Client, with a new debugger port): the monitor follows it and prints "client ..." and
// "debug-port N" again; lines are printed for the current connection only.
//
// "kill" on stdin makes ddmlib stop the VM (Client.kill(): an EXIT chunk), as DDMS's button did.
//
// On quit it prints "problems: N" (ddmlib errors, unusable chunks; each as "problem: ...") and
// "monitor: done", and exits 0 only when there were none. Every line is flushed as it is printed.
import com.android.ddmlib.AndroidDebugBridge;
import com.android.ddmlib.Client;
import com.android.ddmlib.ClientData;
import com.android.ddmlib.DdmPreferences;
import com.android.ddmlib.IDevice;
import com.android.ddmlib.Log;
import com.android.ddmlib.ThreadInfo;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

public class DdmlibMonitor {
  static final String[] STATUS = {"zombie", "running", "sleeping", "monitor", "wait", "initializing",
                                  "starting", "native", "vmwait", "suspended"};
  static final ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
  static long deadline;

  static synchronized void say(String s) {
    System.out.println(s);
    System.out.flush();
  }

  static boolean waitFor(long ms, Supplier<Boolean> cond) {
    long end = Math.min(System.currentTimeMillis() + ms, deadline);
    while (true) {
      try {
        if (cond.get()) return true;
      } catch (RuntimeException e) {
        // ddmlib's objects can be mid-update: ask again
      }
      if (System.currentTimeMillis() >= end) return false;
      try {
        Thread.sleep(50);
      } catch (InterruptedException e) {
        return false;
      }
    }
  }

  static boolean portFree(int p) {
    try (ServerSocket ss = new ServerSocket()) {
      ss.bind(new InetSocketAddress(InetAddress.getByName("localhost"), p));
      return true;
    } catch (java.io.IOException e) {
      return false;
    }
  }

  /** A base b with b..b+n-1 free, away from adb's ports and ddmlib's defaults (8600, 8700). */
  static int freeRange(int n) {
    Random r = new Random();
    for (int i = 0; i < 200; i++) {
      int base = 20000 + r.nextInt(12000);
      boolean ok = true;
      for (int p = base; p < base + n && ok; p++) ok = portFree(p);
      if (ok) return base;
    }
    throw new RuntimeException("no free range of " + n + " ports");
  }

  static int freePort() {
    try (ServerSocket ss = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      return ss.getLocalPort();
    } catch (java.io.IOException e) {
      throw new RuntimeException(e);
    }
  }

  static Client findClient(AndroidDebugBridge bridge, String serial, int pid) {
    for (IDevice d : bridge.getDevices()) {
      if (!d.getSerialNumber().equals(serial)) continue;
      for (Client c : d.getClients())
        if (c.getClientData().getPid() == pid) return c;
    }
    return null;
  }

  static String status(Client c) {
    return "debugger=" + c.getClientData().getDebuggerConnectionStatus();
  }

  static ThreadInfo mainThread(ClientData cd) {
    for (ThreadInfo t : cd.getThreads())
      if ("main".equals(t.getThreadName())) return t;
    return null;
  }

  static volatile Client current;

  /** Watches c from now on: thread and heap updates on, "client ..." and "debug-port N" printed. */
  static synchronized void adopt(Client c) {
    c.setThreadUpdateEnabled(true);
    c.setHeapUpdateEnabled(true);
    current = c;
    say("client pid=" + c.getClientData().getPid() + " ident='" + c.getClientData().getVmIdentifier() + "' "
        + status(c));
    say("debug-port " + c.getDebuggerListenPort());
  }

  static void onChange(Client c, int mask) {
    if (c != current) return; // a connection ddmlib has dropped
    ClientData cd = c.getClientData();
    if ((mask & Client.CHANGE_DEBUGGER_STATUS) != 0)
      say("debugger " + cd.getDebuggerConnectionStatus() + " attached=" + c.isDebuggerAttached());
    if ((mask & Client.CHANGE_THREAD_DATA) != 0) {
      ThreadInfo[] ts = cd.getThreads();
      ThreadInfo m = mainThread(cd);
      String ms = m == null ? "none" : m.getStatus() >= 0 && m.getStatus() < STATUS.length
          ? STATUS[m.getStatus()] : ("?" + m.getStatus());
      say("threads n=" + ts.length + " main=" + ms + " " + status(c) + " attached=" + c.isDebuggerAttached());
    }
    if ((mask & Client.CHANGE_THREAD_STACKTRACE) != 0) {
      ThreadInfo m = mainThread(cd);
      StackTraceElement[] st = m == null ? null : m.getStackTrace();
      if (st != null) {
        StringBuilder b = new StringBuilder("stack main:");
        for (int i = 0; i < st.length; i++) {
          b.append(i == 0 ? " " : " < ").append(st[i].getClassName()).append('.').append(st[i].getMethodName())
              .append('(').append(st[i].getFileName()).append(':').append(st[i].getLineNumber()).append(')');
        }
        say(b + " " + status(c));
      }
    }
    if ((mask & Client.CHANGE_HEAP_DATA) != 0) {
      ClientData.HeapInfo hi = cd.getVmHeapInfo(1);
      if (hi != null)
        say(String.format("heap reason=%d size=%d allocated=%d objects=%d %s", hi.reason, hi.sizeInBytes,
            hi.bytesAllocated, hi.objectsAllocated, status(c)));
      ClientData.HeapData hd = cd.getVmHeapData();
      synchronized (hd) {
        if (hd.isHeapDataComplete() && hd.getHeapSegments() != null && !hd.getHeapSegments().isEmpty()) {
          long bytes = 0;
          for (com.android.ddmlib.HeapSegment s : hd.getHeapSegments()) bytes += s.getLength();
          say("segments n=" + hd.getHeapSegments().size() + " bytes=" + bytes + " " + status(c));
        }
      }
    }
  }

  public static void main(String[] args) throws Exception {
    String serial = null;
    int pid = -1, timeout = 120;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--serial": serial = args[++i]; break;
        case "--pid": pid = Integer.parseInt(args[++i]); break;
        case "--timeout": timeout = Integer.parseInt(args[++i]); break;
        default:
          System.err.println("unknown argument " + args[i]);
          System.exit(2);
      }
    }
    if (serial == null || pid < 0) {
      System.err.println("usage: DdmlibMonitor --serial S --pid PID [--timeout S]");
      System.exit(2);
    }
    deadline = System.currentTimeMillis() + timeout * 1000L;
    Log.setLogOutput(new Log.ILogOutput() {
      @Override
      public void printLog(Log.LogLevel level, String tag, String message) {
        String line = Log.getLogFormatString(level, tag, message).trim();
        say("# ddmlib " + line);
        if (level.getPriority() >= Log.LogLevel.ERROR.getPriority()) problems.add(tag + ": " + message);
        if (message.contains("unsupported chunk") || message.contains("Discarding") || message.contains("Exception"))
          problems.add(tag + ": " + message);
      }

      @Override
      public void printAndPromptLog(Log.LogLevel level, String tag, String message) {
        printLog(level, tag, message);
      }
    });
    DdmPreferences.setLogLevel(System.getenv("DDMLIB_VERBOSE") != null ? "verbose" : "info");
    DdmPreferences.setTimeOut(10000);
    DdmPreferences.setSelectedDebugPort(freePort());
    DdmPreferences.setDebugPortBase(freeRange(8));
    AndroidDebugBridge.init(true);
    final int fpid = pid;
    AndroidDebugBridge.addClientChangeListener((c, mask) -> {
      if (c.getClientData().getPid() == fpid) onChange(c, mask);
    });
    AndroidDebugBridge bridge = AndroidDebugBridge.createBridge();
    final String fserial = serial;
    Client[] cl = new Client[1];
    boolean found = waitFor(40000, () -> {
      cl[0] = findClient(bridge, fserial, fpid);
      return cl[0] != null && cl[0].getClientData().isDdmAware() && cl[0].getDebuggerListenPort() > 0;
    });
    if (!found) {
      say("monitor: FAIL: ddmlib never listed pid " + pid + " on " + serial + " with its HELO and a debugger port");
      Runtime.getRuntime().halt(1);
    }
    adopt(cl[0]);

    AtomicBoolean stop = new AtomicBoolean();
    Thread ticker = new Thread(() -> {
      for (int tick = 0; !stop.get(); tick++) {
        try {
          // When a debugger leaves, ddmlib drops its connection to a DDM-aware VM and opens a new
          // one: a new Client, with a new debugger port. Follow it.
          Client n = findClient(bridge, fserial, fpid);
          if (n != null && n != current && n.getClientData().isDdmAware() && n.getDebuggerListenPort() > 0)
            adopt(n);
          Client c = current;
          c.requestThreadUpdate();
          ThreadInfo m = mainThread(c.getClientData());
          if (m != null) c.requestThreadStackTrace(m.getThreadId());
          if (tick % 4 == 0) c.updateHeapInfo();
          if (tick % 8 == 4) c.executeGarbageCollector();
          Thread.sleep(250);
        } catch (InterruptedException e) {
          return;
        } catch (RuntimeException e) {
          problems.add("ticker: " + e);
        }
      }
    }, "ticker");
    ticker.setDaemon(true);
    ticker.start();

    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    String line;
    while ((line = in.readLine()) != null && !line.trim().equals("quit")) {
      if (line.trim().equals("kill")) { // DDMS's "Stop process": an EXIT chunk
        say("killing pid " + pid);
        current.kill();
      } else {
        say("monitor: unknown command '" + line.trim() + "'");
        problems.add("unknown command " + line.trim());
      }
    }
    stop.set(true);
    ticker.join(2000);
    List<String> probs = new ArrayList<>(problems);
    for (String p : probs) say("problem: " + p);
    say("problems: " + probs.size());
    say("monitor: done");
    AndroidDebugBridge.disconnectBridge();
    AndroidDebugBridge.terminate();
    Runtime.getRuntime().halt(probs.isEmpty() ? 0 : 1);
  }
}
// SPDX-License-Identifier: Apache-2.0
