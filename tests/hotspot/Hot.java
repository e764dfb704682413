/* A hot method on a JVM for tests/hotspot/stall_agent.py: main calls Hot.hot in bursts for ever and
 * prints how many calls it has made twice a second, so the test sees whether the thread posting
 * the debugger's events goes on while the debugger reads nothing. */
public class Hot {
  static long calls;

  static long hot(long x) {
    calls++;
    return x * 31 + 7;
  }

  public static void main(String[] args) throws Exception {
    System.out.println("HOT ready");
    System.out.flush();
    long acc = 0, next = System.nanoTime();
    for (;;) {
      for (int i = 0; i < 1000; i++) acc = hot(acc);
      Thread.sleep(1); /* a hot method, not a whole core of a shared machine */
      if (System.nanoTime() - next >= 0) {
        System.out.println("HOT calls " + calls + " " + (acc & 1));
        System.out.flush();
        next = System.nanoTime() + 500_000_000L;
      }
    }
  }
}
// SPDX-License-Identifier: Apache-2.0
