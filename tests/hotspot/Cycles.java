/* The debuggee of cycles.py: three workers call work() in batches, each counting its batches in a
 * static field (c0, c1, c2) the client reads over JDWP to see that every worker runs, and how fast;
 * slow(ms) is the method the client calls (ClassType.InvokeMethod) at a breakpoint in work() and
 * leaves running when it disconnects. The sleep between batches keeps the program's CPU use low on
 * a shared machine while a breakpoint left behind (each call through the interpreter and the
 * agent) or a thread left suspended still shows as a collapse of the rate. */
public class Cycles {
  static volatile long c0, c1, c2;
  static volatile int sink;

  static int work(int x) {
    return x * 31 + 7;
  }

  static int slow(int ms) throws InterruptedException {
    Thread.sleep(ms);
    return ms;
  }

  static void batch(int n) {
    int s = 0;
    for (int i = 0; i < 20000; i++) s += work(i + n);
    sink = s;
  }

  public static void main(String[] args) throws Exception {
    for (int w = 0; w < 3; w++) {
      final int id = w;
      Thread t = new Thread(() -> {
        for (int n = 0; ; n++) {
          batch(n);
          if (id == 0) c0++;
          else if (id == 1) c1++;
          else c2++;
          try {
            Thread.sleep(2);
          } catch (InterruptedException e) {
            return;
          }
        }
      }, "worker-" + w);
      t.setDaemon(true);
      t.start();
    }
    System.out.println("cycles ready");
    System.out.flush();
    Thread.sleep(Long.MAX_VALUE);
  }
}
// SPDX-License-Identifier: Apache-2.0
