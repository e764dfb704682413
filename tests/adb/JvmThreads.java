// The Java program of run_e2e.py's jvm mode: threads.mvm's states on HotSpot, under
// libddmcjdwp.so on dt_android_adb, until killed.
//   Sleeper    SLEEPING (Thread.sleep)
//   Busy       RUNNING  (a counting loop)
//   Native     NATIVE   (blocked in accept() on a loopback socket nobody dials)
//   Holder     holds LOCK, sleeping inside it
//   Blocked-1  MONITOR  (enters LOCK)
//   Waiter-1   WAIT     (COND.wait() with no notify)
//   Allocator  allocates garbage, so a GC has something to collect
import java.net.InetAddress;
import java.net.ServerSocket;

public class JvmThreads {
  static final Object LOCK = new Object(), COND = new Object();
  static volatile long sink;

  static Thread start(String name, Runnable r) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    t.start();
    return t;
  }

  static void nap(long ms) {
    try {
      Thread.sleep(ms);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  public static void main(String[] args) throws Exception {
    start("Sleeper", () -> { while (true) nap(1000); });
    start("Busy", () -> { long n = 0; while (true) sink = ++n; });
    ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
    start("Native", () -> {
      try {
        server.accept();
      } catch (Exception e) {
        throw new RuntimeException(e);
      }
    });
    start("Holder", () -> { while (true) synchronized (LOCK) { nap(1500); } });
    nap(100);
    start("Blocked-1", () -> { while (true) synchronized (LOCK) { sink++; } });
    start("Waiter-1", () -> {
      synchronized (COND) {
        while (true) {
          try {
            COND.wait();
          } catch (InterruptedException e) {
            return;
          }
        }
      }
    });
    start("Allocator", () -> { while (true) { sink += new byte[4096].length; nap(1); } });
    System.out.println("JvmThreads ready");
    while (true) nap(1000);
  }
}
// SPDX-License-Identifier: Apache-2.0
