// The real ddmlib (Debian libandroid-ddms-java, 25.2.2) looks at minivm through the real adb
// server and the adbd stand-in, through ddmlib's public API only, as DDMS and Android Studio did.
//
//   java DdmlibE2E --serial 127.0.0.1:PORT [--timeout S] [--abi "64-bit (x86_64)"]
//        [--client PID:KIND]...     KIND: idle | hello | threads | alloc | zygote | prof | hprof
//                                         | jvm (JvmThreads.java) | jvmprof (JvmProf.java)
//        [--many PID,PID,...]       wait for all, then kill each (SIGTERM) and see it dropped
//
// The adb server port comes from ANDROID_ADB_SERVER_PORT (how this ddmlib picks it). Prints one
// "ok - ..." or "FAIL - ..." line per check and exits 0 only when every check passed and ddmlib
// logged no error and no heap-segment parse failure.
import com.android.ddmlib.AllocationInfo;
import com.android.ddmlib.AllocationsParser;
import com.android.ddmlib.AndroidDebugBridge;
import com.android.ddmlib.Client;
import com.android.ddmlib.ClientData;
import com.android.ddmlib.DdmPreferences;
import com.android.ddmlib.HeapSegment;
import com.android.ddmlib.IDevice;
import com.android.ddmlib.Log;
import com.android.ddmlib.ThreadInfo;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

public class DdmlibE2E {
  static int passed = 0, failed = 0;
  static long deadline;
  static final ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
  static final java.util.concurrent.atomic.AtomicInteger ddmlibRaces = new java.util.concurrent.atomic.AtomicInteger();
  static final ConcurrentLinkedQueue<String> changes = new ConcurrentLinkedQueue<>();
  static final String STATUS_NAMES[] = {"zombie", "running", "sleeping", "monitor", "wait", "initializing",
                                        "starting", "native", "vmwait", "suspended"};

  static void check(boolean ok, String what) {
    if (ok) {
      passed++;
      System.out.println("ok - " + what);
    } else {
      failed++;
      System.out.println("FAIL - " + what);
    }
    System.out.flush();
  }

  static void note(String s) {
    System.out.println("# " + s);
    System.out.flush();
  }

  static void sleep(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Polls cond every 100 ms until it holds, ms pass, or the global deadline passes. */
  static boolean waitFor(long ms, Supplier<Boolean> cond) {
    long end = Math.min(System.currentTimeMillis() + ms, deadline);
    while (true) {
      try {
        if (cond.get()) return true;
      } catch (RuntimeException e) {
        // ddmlib objects can be mid-update; try again
      }
      if (System.currentTimeMillis() >= end) return false;
      sleep(100);
    }
  }

  static IDevice findDevice(AndroidDebugBridge bridge, String serial) {
    for (IDevice d : bridge.getDevices())
      if (d.getSerialNumber().equals(serial)) return d;
    return null;
  }

  static Client findClient(IDevice dev, int pid) {
    for (Client c : dev.getClients())
      if (c.getClientData().getPid() == pid) return c;
    return null;
  }

  @SuppressWarnings("unchecked")
  static Set<String> features(ClientData cd) {
    try {
      Field f = ClientData.class.getDeclaredField("mFeatures");
      f.setAccessible(true);
      Object v = f.get(cd);
      if (v instanceof Collection) return new TreeSet<>((Collection<String>) v);
    } catch (ReflectiveOperationException | RuntimeException e) {
      note("cannot read ClientData.mFeatures: " + e);
    }
    return null;
  }

  static String describe(ClientData cd) {
    return String.format("pid=%d ident='%s' name='%s' user=%d(valid=%b) abi='%s' flags='%s' ddm=%b debugger=%s",
        cd.getPid(), cd.getVmIdentifier(), cd.getClientDescription(), cd.getUserId(), cd.isValidUserId(),
        cd.getAbi(), cd.getJvmFlags(), cd.isDdmAware(), cd.getDebuggerConnectionStatus());
  }

  // ------------------------------------------------------------------------------ per client

  static void checkIdentity(IDevice dev, int pid, String kind, String abi) {
    String tag = kind + " pid " + pid;
    boolean seen = waitFor(30000, () -> findClient(dev, pid) != null);
    check(seen, tag + ": listed by ddmlib (track-jdwp through adb)");
    if (!seen) return;
    Client c = findClient(dev, pid);
    ClientData cd = c.getClientData();
    check(waitFor(20000, () -> cd.isDdmAware() && cd.getVmIdentifier() != null),
        tag + ": DDM-aware after HELO");
    note(describe(cd));
    check(cd.getPid() == pid, tag + ": HELO pid equals the pid adb reports (" + cd.getPid() + ")");
    check(abi.equals(cd.getAbi()), tag + ": ABI '" + abi + "' (" + cd.getAbi() + ")");
    if (kind.equals("jvm") || kind.equals("jvmprof") || kind.equals("jvmddm")) {
      checkJvmIdentity(cd, tag, kind.equals("jvm") ? "JvmThreads" : kind.equals("jvmddm") ? "DdmApp" : "JvmProf");
      return;
    }
    check("minivm v0.1".equals(cd.getVmIdentifier()), tag + ": VM ident 'minivm v0.1' (" + cd.getVmIdentifier() + ")");
    check("CheckJNI=false".equals(cd.getJvmFlags()), tag + ": JVM flags 'CheckJNI=false' (" + cd.getJvmFlags() + ")");
    check(cd.isValidUserId() && cd.getUserId() == 0, tag + ": user id 0 from HELO (" + cd.getUserId() + ")");
    check(!cd.isNativeDebuggable(), tag + ": not native-debuggable");
    // FEAT's reply comes after HELO's: wait until ddmlib has processed it (a non-empty set).
    waitFor(20000, () -> { Set<String> f = features(cd); return f != null && !f.isEmpty(); });
    Set<String> feats = features(cd);
    note(tag + ": features " + feats);
    check(feats != null && cd.hasFeature(ClientData.FEATURE_PROFILING)
              && cd.hasFeature(ClientData.FEATURE_PROFILING_STREAMING)
              && cd.hasFeature(ClientData.FEATURE_SAMPLING_PROFILER) && cd.hasFeature(ClientData.FEATURE_HPROF)
              && cd.hasFeature(ClientData.FEATURE_HPROF_STREAMING),
        tag + ": FEAT processed; method tracing (streaming), sampling and hprof dumps (streaming) claimed");
    if (kind.equals("zygote")) {
      boolean renamed = waitFor(15000, () -> "com.example.zygote".equals(cd.getClientDescription()));
      check(renamed, tag + ": app name follows the rename to 'com.example.zygote' (" + cd.getClientDescription()
                         + ")");
      boolean waiting =
          waitFor(15000, () -> cd.getDebuggerConnectionStatus() == ClientData.DebuggerStatus.WAITING);
      check(waiting, tag + ": WAIT seen: debugger status WAITING (" + cd.getDebuggerConnectionStatus() + ")");
    } else {
      String d = cd.getClientDescription();
      check(d == null || d.equals("<pre-initialized>"),
          tag + ": app name is the start-up '<pre-initialized>' (" + d + ")");
      check(cd.getDebuggerConnectionStatus() == ClientData.DebuggerStatus.DEFAULT,
          tag + ": no WAIT: debugger status DEFAULT (" + cd.getDebuggerConnectionStatus() + ")");
    }
  }

  /** HotSpot under libddmcjdwp.so (the same JDK runs this client): HELO names the VM from
   *  java.vm.name / java.vm.version and the app from the main class; no WAIT, no debugger. */
  static void checkJvmIdentity(ClientData cd, String tag, String main) {
    String want = System.getProperty("java.vm.name") + " " + System.getProperty("java.vm.version");
    check(want.equals(cd.getVmIdentifier()), tag + ": VM ident '" + want + "' (" + cd.getVmIdentifier() + ")");
    check(waitFor(15000, () -> main.equals(cd.getClientDescription())),
        tag + ": app name is the main class '" + main + "' (" + cd.getClientDescription() + ")");
    check(cd.isValidUserId() && cd.getUserId() == 0, tag + ": user id 0 from HELO (" + cd.getUserId() + ")");
    waitFor(20000, () -> { Set<String> f = features(cd); return f != null && !f.isEmpty(); });
    note(tag + ": features " + features(cd));
    check(cd.getDebuggerConnectionStatus() == ClientData.DebuggerStatus.DEFAULT,
        tag + ": no WAIT: debugger status DEFAULT (" + cd.getDebuggerConnectionStatus() + ")");
  }

  /** tests/hotspot/DdmApp.java's own chunk handlers (Android's DdmServer API on HotSpot), reached
   *  with ddmlib's own packet code (E2EChunks, in ddmlib's package): ECHO answered, BOOM's
   *  exception as a FAIL chunk and the next ECHO served, PUSH's unsolicited PSHD (from
   *  DdmServer.sendChunk on an app thread) delivered to a registered ddmlib handler, and a type
   *  nobody registered answered by the empty reply, which ddmlib drops without calling the
   *  sender's handler ("Got empty reply", a debug line), as for PUSH's own empty reply. */
  static void checkAppChunks(IDevice dev, int pid) {
    String tag = "jvmddm pid " + pid;
    Client c = findClient(dev, pid);
    if (c == null) return;
    try {
      com.android.ddmlib.E2EChunks.listen("PSHD");
      com.android.ddmlib.E2EChunks.send(c, "ECHO", new byte[] {1, 2, 3});
      com.android.ddmlib.E2EChunks.Got g = com.android.ddmlib.E2EChunks.next(10000);
      check(g != null && g.isReply && g.type.equals("ECHO") && java.util.Arrays.equals(g.data, new byte[] {3, 2, 1}),
          tag + ": the app's ECHO handler answered ddmlib's ECHO 010203 with 030201");
      com.android.ddmlib.E2EChunks.send(c, "BOOM", new byte[0]);
      g = com.android.ddmlib.E2EChunks.next(10000);
      String fail = g != null && g.type.equals("FAIL") ? com.android.ddmlib.E2EChunks.failText(g.data) : null;
      check(g != null && g.isReply && "1: java.lang.IllegalStateException: boom 1".equals(fail),
          tag + ": the handler's exception reached ddmlib as FAIL (" + fail + ")");
      com.android.ddmlib.E2EChunks.send(c, "ECHO", new byte[] {9});
      g = com.android.ddmlib.E2EChunks.next(10000);
      check(g != null && g.isReply && g.type.equals("ECHO") && g.data.length == 1 && g.data[0] == 9,
          tag + ": the next ECHO served after the FAIL");
      com.android.ddmlib.E2EChunks.send(c, "PUSH", new byte[] {(byte) 0xca, (byte) 0xfe});
      g = com.android.ddmlib.E2EChunks.next(10000);
      check(g != null && !g.isReply && g.type.equals("PSHD")
                && java.util.Arrays.equals(g.data, new byte[] {(byte) 0xca, (byte) 0xfe}),
          tag + ": DdmServer.sendChunk's unsolicited PSHD cafe reached ddmlib's handler"
              + (g == null ? " (nothing)" : " (" + g.type + ", reply " + g.isReply + ")"));
      com.android.ddmlib.E2EChunks.send(c, "ZZZZ", new byte[] {0});
      com.android.ddmlib.E2EChunks.send(c, "ECHO", new byte[] {7});
      g = com.android.ddmlib.E2EChunks.next(10000);
      check(g != null && g.isReply && g.type.equals("ECHO") && g.data.length == 1 && g.data[0] == 7,
          tag + ": ZZZZ (no handler) gave ddmlib nothing to handle (the empty reply), the ECHO after it did"
              + (g == null ? " (nothing)" : " (" + g.type + ")"));
      check(com.android.ddmlib.E2EChunks.next(500) == null, tag + ": nothing else arrived");
    } catch (java.io.IOException | InterruptedException e) {
      check(false, tag + ": " + e);
    }
  }

  /** HPIF on HotSpot: the figures of java.lang.Runtime, asked for now (the agent has no GC
   *  notifications, collections or heap walks: no HPGC, no HPSG segments). */
  static void checkJvmHeap(IDevice dev, int pid) {
    String tag = "jvm pid " + pid;
    Client c = findClient(dev, pid);
    if (c == null) return;
    ClientData cd = c.getClientData();
    try { // HandleHeap is package-private: reached by reflection; 1 is HPIF_WHEN_NOW
      java.lang.reflect.Method m =
          Class.forName("com.android.ddmlib.HandleHeap").getDeclaredMethod("sendHPIF", Client.class, int.class);
      m.setAccessible(true);
      m.invoke(null, c, 1);
    } catch (ReflectiveOperationException e) {
      check(false, tag + ": HPIF request: " + e);
      return;
    }
    boolean info = waitFor(20000, () -> {
      ClientData.HeapInfo hi = cd.getVmHeapInfo(1);
      return hi != null && hi.maxSizeInBytes > 0 && hi.sizeInBytes > 0;
    });
    ClientData.HeapInfo hi = cd.getVmHeapInfo(1);
    check(info, tag + ": HPIF heap info, asked for now (" + (hi == null ? "none" : "max " + hi.maxSizeInBytes) + ")");
    if (!info) return;
    note(String.format("%s: heap 1 max=%d size=%d allocated=%d objects=%d reason=%d", tag, hi.maxSizeInBytes,
        hi.sizeInBytes, hi.bytesAllocated, hi.objectsAllocated, hi.reason));
    check(hi.maxSizeInBytes >= hi.sizeInBytes && hi.sizeInBytes >= hi.bytesAllocated && hi.bytesAllocated > 0,
        tag + ": max >= size >= allocated > 0 (Runtime's maxMemory, totalMemory, total - free)");
  }

  static void checkThreads(IDevice dev, int pid) {
    String tag = "threads pid " + pid;
    Client c = findClient(dev, pid);
    if (c == null) return;
    ClientData cd = c.getClientData();
    c.setThreadUpdateEnabled(true);
    c.requestThreadUpdate();
    check(waitFor(15000, () -> cd.getThreads().length >= 8), tag + ": THEN/THCR/THST: thread list arrived ("
                                                              + cd.getThreads().length + " threads)");
    // Statuses move; sample for a few seconds and record every (name -> statuses) pair seen.
    Map<String, Set<String>> seen = new LinkedHashMap<>();
    Set<Integer> tids = new HashSet<>();
    int[] busyUtime = {-1, -1}; // first and last THST utime of the spinning thread, clock ticks
    long end = Math.min(System.currentTimeMillis() + 6000, deadline);
    while (System.currentTimeMillis() < end) {
      c.requestThreadUpdate();
      sleep(400);
      for (ThreadInfo t : cd.getThreads()) {
        int st = t.getStatus();
        if (st == -1) continue; // ddmlib's "no THST for this thread yet" (just created by THCR)
        String sn = st >= 0 && st < STATUS_NAMES.length ? STATUS_NAMES[st] : ("?" + st);
        seen.computeIfAbsent(String.valueOf(t.getThreadName()), k -> new TreeSet<>()).add(sn);
        if ("Busy".equals(t.getThreadName())) {
          if (busyUtime[0] < 0) busyUtime[0] = t.getUtime();
          busyUtime[1] = t.getUtime();
        }
        tids.add(t.getThreadId());
      }
    }
    note(tag + ": statuses seen " + seen);
    check(seen.containsKey("main"), tag + ": a thread named 'main'");
    check(busyUtime[0] >= 0 && busyUtime[1] > busyUtime[0],
        tag + ": Busy's utime grows (" + busyUtime[0] + " -> " + busyUtime[1] + " ticks)");
    String[][] want = {{"Sleeper", "sleeping"}, {"Busy", "running"}, {"Native", "native"},
                       {"Waiter-1", "wait"}, {"Blocked-1", "monitor"}};
    for (String[] w : want) {
      Set<String> s = seen.get(w[0]);
      check(s != null && s.contains(w[1]), tag + ": " + w[0] + " seen " + w[1] + " (" + s + ")");
    }
    Set<String> all = new TreeSet<>();
    for (Set<String> s : seen.values()) all.addAll(s);
    check(all.size() >= 5 && !all.stream().anyMatch(x -> x.startsWith("?")),
        tag + ": at least 5 distinct known statuses " + all);
    check(tids.size() == new HashSet<>(tids).size() && tids.size() >= 8, tag + ": distinct thread ids");
    c.setThreadUpdateEnabled(false);
  }

  static void checkHeap(IDevice dev, int pid) {
    String tag = "alloc pid " + pid;
    Client c = findClient(dev, pid);
    if (c == null) return;
    ClientData cd = c.getClientData();
    c.setHeapUpdateEnabled(true); // HPIF(3) + HPSG(1, 0): info and segments after every GC
    boolean info = waitFor(20000, () -> {
      ClientData.HeapInfo hi = cd.getVmHeapInfo(1);
      return hi != null && hi.maxSizeInBytes > 0 && hi.sizeInBytes > 0;
    });
    if (!info) {
      note(tag + ": no heap info yet; asking for a GC");
      c.executeGarbageCollector();
      info = waitFor(15000, () -> cd.getVmHeapInfo(1) != null);
    }
    check(info, tag + ": HPIF heap info after a GC");
    if (info) {
      ClientData.HeapInfo hi = cd.getVmHeapInfo(1);
      note(String.format("%s: heap 1 max=%d size=%d allocated=%d objects=%d reason=%d", tag, hi.maxSizeInBytes,
          hi.sizeInBytes, hi.bytesAllocated, hi.objectsAllocated, hi.reason));
      check(hi.maxSizeInBytes >= hi.sizeInBytes && hi.sizeInBytes >= hi.bytesAllocated && hi.objectsAllocated > 0,
          tag + ": max >= size >= allocated, objects > 0");
    }
    // An explicit GC (HPGC) too, as DDMS's "Cause GC" button does.
    c.executeGarbageCollector();
    // ddmlib starts a new set at each HPST (getHeapSegments() is null until its HPEN): the copy is
    // taken in the same look as the check that the set is complete.
    List<Collection<HeapSegment>> got = new ArrayList<>();
    boolean segs = waitFor(20000, () -> {
      ClientData.HeapData hd = cd.getVmHeapData();
      synchronized (hd) {
        Collection<HeapSegment> s = hd.isHeapDataComplete() ? hd.getHeapSegments() : null;
        if (s == null || s.isEmpty()) return false;
        got.add(new ArrayList<>(s));
        return true;
      }
    });
    check(segs, tag + ": HPST/HPSG/HPEN: a complete set of heap segments");
    if (!segs) return;
    Collection<HeapSegment> list = got.get(0);
    int nseg = 0, bad = 0, elements = 0;
    long bytes = 0;
    Map<Integer, Long> byKind = new HashMap<>();
    for (HeapSegment hs : list) {
      nseg++;
      if (!hs.isValid()) {
        bad++;
        continue;
      }
      hs.rewindElements();
      long sum = 0;
      HeapSegment.HeapSegmentElement e = null;
      while ((e = hs.getNextElement(e)) != null) {
        elements++;
        sum += e.getLength();
        byKind.merge(e.getKind(), (long) e.getLength(), Long::sum);
      }
      // getNextElement returns null at the end of the data AND on a ParseException: only a
      // segment whose runs add up to its length was decoded to the end.
      if (sum != hs.getLength()) {
        bad++;
        note(tag + ": segment " + hs + " decodes to " + sum + " of " + hs.getLength() + " bytes");
      }
      bytes += sum;
    }
    note(String.format("%s: %d segments, %d runs, %d bytes; bytes by kind %s", tag, nseg, elements, bytes, byKind));
    check(nseg > 0 && bad == 0, tag + ": ddmlib's HeapSegment decoder accepts every segment (" + bad + " bad of "
                                    + nseg + ")");
    check(elements > 0 && bytes > 0, tag + ": segments carry runs");
    c.setHeapUpdateEnabled(false);
  }

  // ------------------------------------------------------------------------------ profiling

  static volatile byte[] traceBytes;
  static volatile String traceTrouble;
  static volatile AllocationInfo[] allocs;
  static volatile String allocTrouble;

  static String head(byte[] b, int n) {
    return new String(b, 0, Math.min(n, b.length), StandardCharsets.UTF_8);
  }

  /** Where ddmlib hands over method traces (IMethodProfilingHandler) and allocations (REAL: the
   * bytes are in ClientData only for the duration of the change event). */
  static void installProfilingHandlers(Client c) {
    ClientData.setMethodProfilingHandler(new ClientData.IMethodProfilingHandler() {
      @Override
      public void onSuccess(String remoteFilePath, Client client) {
        traceTrouble = "a file path instead of the data: " + remoteFilePath;
      }

      @Override
      public void onSuccess(byte[] data, Client client) {
        traceBytes = data;
      }

      @Override
      public void onStartFailure(Client client, String message) {
        traceTrouble = "start failed: " + message;
      }

      @Override
      public void onEndFailure(Client client, String message) {
        traceTrouble = "stop failed: " + message;
      }
    });
    // REAL: ddmlib hands the bytes to ClientData only for the duration of the change event.
    AndroidDebugBridge.addClientChangeListener((cl, mask) -> {
      if (cl != c || (mask & Client.CHANGE_HEAP_ALLOCATIONS) == 0) return;
      byte[] data = cl.getClientData().getAllocationsData();
      if (data == null) return;
      try {
        allocs = AllocationsParser.parse(ByteBuffer.wrap(data));
      } catch (RuntimeException e) {
        allocTrouble = e.toString();
      }
    });
  }

  /** trace.mvm through ddmlib's own profiling calls: the allocation tracker (REAE, REAQ, REAL
   * parsed by ddmlib's AllocationsParser), the method tracer (streaming: MPSS, MPRQ, MPSE data)
   * and the sampling profiler (SPSS, SPSE). */
  static void checkProfiling(IDevice dev, int pid) {
    String tag = "prof pid " + pid;
    Client c = findClient(dev, pid);
    if (c == null) return;
    ClientData cd = c.getClientData();
    installProfilingHandlers(c);

    c.enableAllocationTracker(true);
    c.requestAllocationStatus();
    check(waitFor(10000, () -> cd.getAllocationStatus() == ClientData.AllocationTrackingStatus.ON),
        tag + ": REAE 1 then REAQ: allocation tracking ON (" + cd.getAllocationStatus() + ")");
    sleep(1000);
    c.requestAllocationDetails();
    check(waitFor(10000, () -> allocs != null || allocTrouble != null),
        tag + ": REAL parsed by ddmlib's AllocationsParser (" + allocTrouble + ")");
    AllocationInfo[] a = allocs;
    if (a != null) {
      note(tag + ": " + a.length + " allocations; newest: " + (a.length > 0 ? a[0].getAllocatedClass() + " at "
          + (a[0].getStackTrace().length > 0 ? a[0].getStackTrace()[0] : "?") : "none"));
      check(a.length >= 30, tag + ": allocations of a second of rounds (" + a.length + ")");
      int nodes = 0, numbered = 0;
      for (int i = 0; i < a.length; i++) {
        if (a[i].getAllocNumber() == a.length - i) numbered++;
        StackTraceElement[] st = a[i].getStackTrace();
        if ("Node".equals(a[i].getAllocatedClass()) && a[i].getSize() == 32 && a[i].getThreadId() == 1
            && st.length == 2 && "Trace".equals(st[0].getClassName()) && "round".equals(st[0].getMethodName())
            && "Trace.java".equals(st[0].getFileName()) && st[0].getLineNumber() == 23
            && "main".equals(st[1].getMethodName()) && st[1].getLineNumber() == 11)
          nodes++;
      }
      check(nodes * 6 >= a.length - 6 && nodes > 0, tag + ": every round's Node, with its stack Trace.round(Trace.java:23)"
          + " <- Trace.main(Trace.java:11) (" + nodes + " of " + a.length + ")");
      check(numbered == a.length, tag + ": ddmlib numbers them newest first (" + numbered + ")");
    }
    trackingOff(tag, c, cd);

    // The method tracer, streaming (the VM said method-trace-profiling-streaming in FEAT).
    tracerOn(tag, c, cd);
    sleep(1000);
    try {
      c.stopMethodTracer();
    } catch (java.io.IOException e) {
      traceTrouble = e.toString();
    }
    check(waitFor(15000, () -> traceBytes != null || traceTrouble != null),
        tag + ": MPSE: the trace bytes reached IMethodProfilingHandler.onSuccess (" + traceTrouble + ")");
    byte[] t = traceBytes;
    if (t != null) {
      String text = head(t, 4096);
      note(tag + ": method trace " + t.length + " bytes");
      check(text.startsWith("*version\n3\n") && text.contains("clock=dual\n") && text.contains("\tTrace\tfib\t(I)I\t")
              && text.contains("*end\nSLOW"),
          tag + ": a dmtrace v3 dual-clock file naming Trace.fib");
      check(t.length > 1000, tag + ": records in it (" + t.length + " bytes)");
    }
    check(waitFor(10000, () -> cd.getMethodProfilingStatus() == ClientData.MethodProfilingStatus.OFF),
        tag + ": tracer OFF after the data (" + cd.getMethodProfilingStatus() + ")");

    // The sampling profiler.
    traceBytes = null;
    try {
      c.startSamplingProfiler(1, TimeUnit.MILLISECONDS);
    } catch (java.io.IOException e) {
      traceTrouble = e.toString();
    }
    check(waitFor(10000, () -> cd.getMethodProfilingStatus() == ClientData.MethodProfilingStatus.SAMPLER_ON),
        tag + ": SPSS then MPRQ: SAMPLER_ON (" + cd.getMethodProfilingStatus() + ")");
    sleep(500);
    try {
      c.stopSamplingProfiler();
    } catch (java.io.IOException e) {
      traceTrouble = e.toString();
    }
    check(waitFor(15000, () -> traceBytes != null || traceTrouble != null),
        tag + ": SPSE: the sampled trace's bytes reached onSuccess (" + traceTrouble + ")");
    t = traceBytes;
    if (t != null) {
      String text = head(t, 4096);
      note(tag + ": sampled trace " + t.length + " bytes");
      check(text.startsWith("*version\n3\n") && text.contains("\tTrace\tmain\t") && text.contains("*end\nSLOW"),
          tag + ": a dmtrace file from the sampler naming Trace.main");
    }
    check(waitFor(10000, () -> cd.getMethodProfilingStatus() == ClientData.MethodProfilingStatus.OFF),
        tag + ": sampler OFF (" + cd.getMethodProfilingStatus() + ")");
    check(traceTrouble == null, tag + ": no profiling failure reported (" + traceTrouble + ")");
  }

  static void save(String tag, String name, byte[] b) {
    try {
      java.nio.file.Files.write(java.nio.file.Paths.get(System.getenv("DDMC_HPROF_DIR"), name), b);
    } catch (java.io.IOException | RuntimeException e) {
      check(false, tag + ": cannot save " + name + ": " + e);
    }
  }

  /** Stops the method tracer or the sampler and waits for its bytes; null when none came. */
  static byte[] traceFromStop(String tag, Client c, boolean sampler, String what) {
    try {
      if (sampler) c.stopSamplingProfiler();
      else c.stopMethodTracer();
    } catch (java.io.IOException e) {
      traceTrouble = e.toString();
    }
    check(waitFor(30000, () -> traceBytes != null || traceTrouble != null),
        tag + ": " + what + ": the trace's bytes reached IMethodProfilingHandler.onSuccess (" + traceTrouble + ")");
    return traceBytes;
  }

  /** JvmProf.java on HotSpot through ddmlib's profiling calls: the allocation tracker (the agent
   * polls the tracking flag every 20 ms and then turns SampledObjectAlloc on, so allocations are
   * recorded shortly after REAE), the method tracer (streaming) and the sampling profiler. The
   * traces go to DDMC_HPROF_DIR for run_e2e.py's dmtracedump. */
  static void checkJvmProfiling(IDevice dev, int pid) {
    String tag = "jvmprof pid " + pid;
    Client c = findClient(dev, pid);
    if (c == null) return;
    ClientData cd = c.getClientData();
    check(cd.hasFeature(ClientData.FEATURE_PROFILING_STREAMING) && cd.hasFeature(ClientData.FEATURE_SAMPLING_PROFILER)
              && cd.hasFeature(ClientData.FEATURE_HPROF_STREAMING),
        tag + ": FEAT claims streaming method tracing, sampling and streaming hprof dumps (" + features(cd) + ")");
    installProfilingHandlers(c);

    c.enableAllocationTracker(true);
    c.requestAllocationStatus();
    check(waitFor(10000, () -> cd.getAllocationStatus() == ClientData.AllocationTrackingStatus.ON),
        tag + ": REAE 1 then REAQ: allocation tracking ON (" + cd.getAllocationStatus() + ")");
    sleep(1000); // the agent's 20 ms poll, then about 50 rounds of JvmProf's allocations
    c.requestAllocationDetails();
    check(waitFor(10000, () -> allocs != null || allocTrouble != null),
        tag + ": REAL parsed by ddmlib's AllocationsParser (" + allocTrouble + ")");
    AllocationInfo[] a = allocs;
    if (a != null) {
      int blobs = 0, numbered = 0;
      AllocationInfo sample = null;
      for (int i = 0; i < a.length; i++) {
        if (a[i].getAllocNumber() == a.length - i) numbered++;
        StackTraceElement[] st = a[i].getStackTrace();
        if ("JvmProf$Blob".equals(a[i].getAllocatedClass()) && a[i].getSize() > 0 && st.length >= 2
            && "JvmProf".equals(st[0].getClassName()) && "allocate".equals(st[0].getMethodName())
            && "JvmProf.java".equals(st[0].getFileName()) && st[0].getLineNumber() > 0
            && "JvmProf".equals(st[1].getClassName()) && "main".equals(st[1].getMethodName())) {
          blobs++;
          if (sample == null) sample = a[i];
        }
      }
      note(tag + ": " + a.length + " allocations, " + blobs + " JvmProf$Blob; one: "
           + (sample == null ? "none" : sample.getSize() + " bytes at " + sample.getStackTrace()[0] + " <- "
                                          + sample.getStackTrace()[1]));
      check(blobs >= 50, tag + ": JvmProf$Blob allocated at JvmProf.allocate(JvmProf.java) <- JvmProf.main ("
                             + blobs + " of " + a.length + ")");
      check(numbered == a.length, tag + ": ddmlib numbers them newest first (" + numbered + ")");
    }
    trackingOff(tag, c, cd);

    tracerOn(tag, c, cd);
    sleep(1000);
    byte[] t = traceFromStop(tag, c, false, "MPSE");
    if (t != null) {
      String text = head(t, 1 << 20);
      note(tag + ": method trace " + t.length + " bytes");
      check(text.startsWith("*version\n3\n") && text.contains("\tJvmProf\tfib\t(I)I\t") && text.contains("*end\nSLOW"),
          tag + ": a dmtrace v3 file naming JvmProf.fib (I)I");
      save(tag, "ddmlib-method.trace", t);
    }
    check(waitFor(10000, () -> cd.getMethodProfilingStatus() == ClientData.MethodProfilingStatus.OFF),
        tag + ": tracer OFF after the data (" + cd.getMethodProfilingStatus() + ")");

    traceBytes = null;
    try {
      c.startSamplingProfiler(1, TimeUnit.MILLISECONDS);
    } catch (java.io.IOException e) {
      traceTrouble = e.toString();
    }
    check(waitFor(10000, () -> cd.getMethodProfilingStatus() == ClientData.MethodProfilingStatus.SAMPLER_ON),
        tag + ": SPSS then MPRQ: SAMPLER_ON (" + cd.getMethodProfilingStatus() + ")");
    sleep(1000);
    t = traceFromStop(tag, c, true, "SPSE");
    if (t != null) {
      String text = head(t, 1 << 20);
      note(tag + ": sampled trace " + t.length + " bytes");
      check(text.startsWith("*version\n3\n") && text.contains("\tJvmProf\tmain\t") && text.contains("*end\nSLOW"),
          tag + ": a dmtrace file from the sampler naming JvmProf.main");
      save(tag, "ddmlib-sample.trace", t);
    }
    check(waitFor(10000, () -> cd.getMethodProfilingStatus() == ClientData.MethodProfilingStatus.OFF),
        tag + ": sampler OFF (" + cd.getMethodProfilingStatus() + ")");
    check(traceTrouble == null, tag + ": no profiling failure reported (" + traceTrouble + ")");
  }

  // ------------------------------------------------------------------------------ heap dumps

  static volatile byte[] hprofBytes;
  static volatile String hprofFile;
  static volatile String hprofTrouble;
  static volatile int hprofFailures;

  /** A whole hprof as Android writes it: the 1.0.3 header with 4-byte ids, HEAP DUMP END last. */
  static boolean wholeHprof(byte[] b) {
    byte[] magic = "JAVA PROFILE 1.0.3\0".getBytes(StandardCharsets.US_ASCII);
    if (b == null || b.length < magic.length + 12 + 9) return false;
    for (int i = 0; i < magic.length; i++)
      if (b[i] != magic[i]) return false;
    ByteBuffer bb = ByteBuffer.wrap(b);
    return bb.getInt(magic.length) == 4 && b[b.length - 9] == 0x2C && bb.getInt(b.length - 4) == 0;
  }

  /** ddmlib's own HPDU request (HandleHeap is package-private: reached by reflection). */
  static void sendHPDU(String tag, Client c, String path) {
    try {
      // ddmlib's sendHPDU records the file name it waits for only after it has sent the
      // request, and its HPDU handler takes that name when the reply comes: a VM that answers
      // before the name is recorded (a small heap, written beside the build) gets
      // onSuccess(null). Recording it first, as sendHPDU itself then does again, closes that race.
      java.lang.reflect.Method pending =
          Class.forName("com.android.ddmlib.ClientData").getDeclaredMethod("setPendingHprofDump", String.class);
      pending.setAccessible(true);
      pending.invoke(c.getClientData(), path);
      java.lang.reflect.Method m =
          Class.forName("com.android.ddmlib.HandleHeap").getDeclaredMethod("sendHPDU", Client.class, String.class);
      m.setAccessible(true);
      m.invoke(null, c, path);
    } catch (ReflectiveOperationException e) {
      check(false, tag + ": HandleHeap.sendHPDU: " + e);
    }
  }

  /** heap.mvm through ddmlib's dumpHprof (HPDS: the VM says hprof-heap-dump-streaming) and
   * HandleHeap.sendHPDU (the file form ddmlib uses for VMs without it): the bytes reach
   * IHprofDumpHandler.onSuccess(byte[]), the file name onSuccess(String); an unwritable path
   * reaches onEndFailure. The dumps go to DDMC_HPROF_DIR for run_e2e.py's strict reader. */
  static void checkHprof(IDevice dev, int pid) {
    String tag = "hprof pid " + pid;
    String dir = System.getenv("DDMC_HPROF_DIR");
    Client c = findClient(dev, pid);
    if (c == null || dir == null) {
      check(false, tag + ": no client, or DDMC_HPROF_DIR unset");
      return;
    }
    ClientData.setHprofDumpHandler(new ClientData.IHprofDumpHandler() {
      @Override
      public void onSuccess(String remoteFile, Client client) {
        hprofFile = remoteFile;
      }

      @Override
      public void onSuccess(byte[] data, Client client) {
        hprofBytes = data;
      }

      @Override
      public void onEndFailure(Client client, String message) {
        hprofFailures++;
        hprofTrouble = "onEndFailure(" + message + ")";
      }
    });
    c.dumpHprof();
    check(waitFor(30000, () -> hprofBytes != null || hprofTrouble != null),
        tag + ": dumpHprof: HPDS bytes reached IHprofDumpHandler.onSuccess(byte[]) (" + hprofTrouble + ")");
    byte[] b = hprofBytes;
    if (b != null) {
      note(tag + ": HPDS hprof " + b.length + " bytes");
      check(wholeHprof(b), tag + ": a whole Android hprof (1.0.3, id size 4, HEAP DUMP END last)");
      try {
        java.nio.file.Files.write(java.nio.file.Paths.get(dir, "ddmlib-hpds.hprof"), b);
      } catch (java.io.IOException e) {
        check(false, tag + ": cannot save the dump: " + e);
      }
    }
    String path = dir + "/ddmlib-hpdu.hprof";
    sendHPDU(tag, c, path);
    check(waitFor(30000, () -> path.equals(hprofFile)),
        tag + ": HPDU [0]: IHprofDumpHandler.onSuccess(\"" + path + "\") (" + hprofFile + ", " + hprofTrouble + ")");
    try {
      check(wholeHprof(java.nio.file.Files.readAllBytes(java.nio.file.Paths.get(path))),
          tag + ": the VM's HPDU file is a whole hprof when the reply comes");
    } catch (java.io.IOException e) {
      check(false, tag + ": cannot read " + path + ": " + e);
    }
    sendHPDU(tag, c, "/nonexistent-dir/x.hprof");
    check(waitFor(30000, () -> hprofFailures == 1),
        tag + ": HPDU to an unwritable path: HPDU [0xFF] reached onEndFailure (" + hprofTrouble + ")");
    check(c.isValid() && c.getClientData().isDdmAware(), tag + ": the client is still there after the failure");
  }

  static void checkMany(IDevice dev, List<Integer> pids) {
    String tag = "many(" + pids.size() + ")";
    boolean all = waitFor(60000, () -> {
      for (int p : pids) {
        Client c = findClient(dev, p);
        if (c == null || !c.getClientData().isDdmAware()) return false;
      }
      return true;
    });
    int n = 0;
    for (int p : pids)
      if (findClient(dev, p) != null) n++;
    check(all, tag + ": ddmlib lists all " + pids.size() + " VMs and each answered HELO (" + n + " listed)");
    if (!all) return;
    int ok = 0;
    for (int p : pids) {
      ClientData cd = findClient(dev, p).getClientData();
      if (cd.getPid() == p && "minivm v0.1".equals(cd.getVmIdentifier())) ok++;
    }
    check(ok == pids.size(), tag + ": every HELO names its own pid and 'minivm v0.1' (" + ok + ")");
    List<Integer> alive = new ArrayList<>(pids);
    int dropped = 0;
    for (int p : pids) {
      ProcessHandle.of(p).ifPresent(ProcessHandle::destroy); // a VM the test started: SIGTERM
      alive.remove(Integer.valueOf(p));
      boolean gone = waitFor(15000, () -> findClient(dev, p) == null);
      boolean othersStay = true;
      for (int q : alive)
        if (findClient(dev, q) == null) othersStay = false;
      if (gone && othersStay) dropped++;
      else note(tag + ": after killing " + p + ": gone=" + gone + " others listed=" + othersStay);
    }
    check(dropped == pids.size(), tag + ": each VM dropped from ddmlib's list as it exits, the others kept ("
                                      + dropped + "/" + pids.size() + ")");
    check(waitFor(5000, () -> dev.getClients().length == 0), tag + ": no client left (" + dev.getClients().length
                                                                  + ")");
  }

  // ------------------------------------------------------------------------------ main

  static int freePort() {
    try (java.net.ServerSocket ss = new java.net.ServerSocket(0, 1, java.net.InetAddress.getByName("127.0.0.1"))) {
      return ss.getLocalPort();
    } catch (java.io.IOException e) {
      throw new RuntimeException(e);
    }
  }

  static boolean portFree(int p) {
    try (java.net.ServerSocket ss = new java.net.ServerSocket()) {
      ss.bind(new java.net.InetSocketAddress(java.net.InetAddress.getByName("localhost"), p));
      return true;
    } catch (java.io.IOException e) {
      return false;
    }
  }

  /** A base b with b..b+n-1 all free, away from adb's 5037/5555-5585 and the defaults. */
  static int freeRange(int n) {
    java.util.Random r = new java.util.Random();
    for (int attempt = 0; attempt < 200; attempt++) {
      int base = 20000 + r.nextInt(12000);
      boolean ok = true;
      for (int p = base; p < base + n && ok; p++) ok = portFree(p);
      if (ok) return base;
    }
    throw new RuntimeException("no free range of " + n + " ports");
  }

  /**
   * Every wait is bounded by the deadline, but a ddmlib call can still block (a lock its monitor
   * thread holds, a write to a peer that stopped reading). Past the deadline, print where every
   * thread is and end with status 3, so a hang reports its cause instead of being killed blind.
   */
  static void startWatchdog(long at) {
    Thread w = new Thread(() -> {
      while (System.currentTimeMillis() < at) sleep(200);
      StringBuilder sb = new StringBuilder("FAIL - watchdog: still running 10 s past the deadline; thread stacks:\n");
      for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
        sb.append("# thread '").append(e.getKey().getName()).append("' ").append(e.getKey().getState()).append('\n');
        for (StackTraceElement f : e.getValue()) sb.append("#     at ").append(f).append('\n');
      }
      System.out.print(sb);
      System.out.flush();
      Runtime.getRuntime().halt(3);
    }, "watchdog");
    w.setDaemon(true);
    w.start();
  }

  /** REAE 0, then REAQ: ddmlib must see allocation tracking OFF. */
  static void trackingOff(String tag, Client c, ClientData cd) {
    c.enableAllocationTracker(false);
    c.requestAllocationStatus();
    check(waitFor(10000, () -> cd.getAllocationStatus() == ClientData.AllocationTrackingStatus.OFF),
        tag + ": REAE 0 then REAQ: tracking OFF (" + cd.getAllocationStatus() + ")");
  }

  /** MPSS (the streaming method tracer), then MPRQ: ddmlib must see TRACER_ON. */
  static void tracerOn(String tag, Client c, ClientData cd) {
    traceBytes = null;
    try {
      c.startMethodTracer();
    } catch (java.io.IOException e) {
      traceTrouble = e.toString();
    }
    check(waitFor(10000, () -> cd.getMethodProfilingStatus() == ClientData.MethodProfilingStatus.TRACER_ON),
        tag + ": MPSS then MPRQ: TRACER_ON (" + cd.getMethodProfilingStatus() + ")");
  }

  public static void main(String[] args) {
    String serial = null;
    int timeout = 150;
    String abi = "64-bit (x86_64)";
    List<int[]> clients = new ArrayList<>();
    List<String> kinds = new ArrayList<>();
    List<Integer> many = new ArrayList<>();
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--serial": serial = args[++i]; break;
        case "--timeout": timeout = Integer.parseInt(args[++i]); break;
        case "--abi": abi = args[++i]; break;
        case "--client": {
          String[] pk = args[++i].split(":");
          clients.add(new int[] {Integer.parseInt(pk[0])});
          kinds.add(pk[1]);
          break;
        }
        case "--many":
          for (String p : args[++i].split(",")) many.add(Integer.parseInt(p));
          break;
        default:
          System.err.println("unknown argument " + args[i]);
          System.exit(2);
      }
    }
    if (serial == null) {
      System.err.println("usage: DdmlibE2E --serial S [--client PID:KIND]... [--many PIDS]");
      System.exit(2);
    }
    deadline = System.currentTimeMillis() + timeout * 1000L;
    startWatchdog(deadline + 10000);

    Log.setLogOutput(new Log.ILogOutput() {
      @Override
      public void printLog(Log.LogLevel level, String tag, String message) {
        String line = Log.getLogFormatString(level, tag, message);
        System.out.print("# ddmlib " + line);
        if (!line.endsWith("\n")) System.out.println();
        // ddmlib logs every REAL it receives at error level ("*** Received REAL"): not a problem.
        boolean realNote = "ddm-heap".equals(tag) && message.startsWith("*** Received REAL");
        // ddmlib's own race, not the VM's doing: its device monitor closes a client whose pid left
        // adb's jdwp list (the channel set to null) while its monitor thread still holds the
        // client's ready key, and Client.read then throws. Seen when many VMs exit at once; any
        // fault of the VM that made ddmlib close the client logs its own line first.
        boolean closedRace = message.contains("\"this.mChan\" is null") && message.contains("com.android.ddmlib.Client.read");
        if (closedRace) {
          ddmlibRaces.incrementAndGet();
          return;
        }
        if (level.getPriority() >= Log.LogLevel.ERROR.getPriority() && !realNote) problems.add(tag + ": " + message);
        // Not errors in ddmlib's eyes, but each means a chunk it could not use.
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
    // ddmlib listens on a "selected VM" port (8700) and one debugger port per client from 8600
    // up: other ddmlib instances, real VMs or parallel tests may hold those. Pick free ones.
    int nports = clients.size() + many.size() + 8;
    DdmPreferences.setSelectedDebugPort(freePort());
    DdmPreferences.setDebugPortBase(freeRange(nports));
    note("debug ports: selected " + DdmPreferences.getSelectedDebugPort() + ", clients from "
         + DdmPreferences.getDebugPortBase());

    note("ANDROID_ADB_SERVER_PORT=" + System.getenv("ANDROID_ADB_SERVER_PORT"));
    AndroidDebugBridge.init(true); // client support: ddmlib opens jdwp:<pid> for each VM
    AndroidDebugBridge.addClientChangeListener((c, mask) ->
        changes.add(c.getClientData().getPid() + ":" + Integer.toHexString(mask)));
    AndroidDebugBridge bridge = AndroidDebugBridge.createBridge(); // the server the test started
    check(waitFor(20000, () -> bridge.isConnected() && bridge.hasInitialDeviceList()),
        "ddmlib connected to the adb server and got the device list");
    final String s = serial;
    boolean online = waitFor(20000, () -> {
      IDevice d = findDevice(bridge, s);
      return d != null && d.isOnline();
    });
    check(online, "device " + serial + " online through the stand-in");
    if (online) {
      IDevice dev = findDevice(bridge, serial);
      check(waitFor(10000, () -> "29".equals(dev.getProperty(IDevice.PROP_BUILD_API_LEVEL))),
          "device properties via shell:getprop (sdk " + dev.getProperty(IDevice.PROP_BUILD_API_LEVEL) + ", abi "
              + dev.getProperty(IDevice.PROP_DEVICE_CPU_ABI) + ")");
      for (int i = 0; i < clients.size(); i++) checkIdentity(dev, clients.get(i)[0], kinds.get(i), abi);
      for (int i = 0; i < clients.size(); i++) {
        if (kinds.get(i).equals("threads") || kinds.get(i).equals("jvm")) checkThreads(dev, clients.get(i)[0]);
        if (kinds.get(i).equals("jvm")) checkJvmHeap(dev, clients.get(i)[0]);
        if (kinds.get(i).equals("jvmddm")) checkAppChunks(dev, clients.get(i)[0]);
        if (kinds.get(i).equals("alloc")) checkHeap(dev, clients.get(i)[0]);
        if (kinds.get(i).equals("prof")) checkProfiling(dev, clients.get(i)[0]);
        if (kinds.get(i).equals("hprof")) checkHprof(dev, clients.get(i)[0]);
        if (kinds.get(i).equals("jvmprof")) {
          checkJvmProfiling(dev, clients.get(i)[0]);
          checkHprof(dev, clients.get(i)[0]);
        }
      }
      if (!many.isEmpty()) checkMany(dev, many);
    }
    sleep(300); // let late log lines from ddmlib's monitor thread land
    List<String> probs = new ArrayList<>(problems);
    for (String p : probs) note("ddmlib problem: " + p);
    check(probs.isEmpty(), "ddmlib logged no errors, unsupported chunks or parse failures (" + probs.size() + ")");
    if (ddmlibRaces.get() > 0) note("ddmlib's read of a client it had closed (its own race, not counted): " + ddmlibRaces.get());
    note("client change events: " + changes.size());
    AndroidDebugBridge.disconnectBridge();
    AndroidDebugBridge.terminate();
    System.out.println(passed + " passed, " + failed + " failed");
    System.out.flush();
    Runtime.getRuntime().halt(failed == 0 ? 0 : 1);
  }
}
// SPDX-License-Identifier: Apache-2.0
