/** The debuggee of tests/hotspot/names_agent.py: a static Object[N] of byte[1024] replaced every
 * PERIOD ms (what an IDE's variables view reads while stepping), and a short thread started each
 * time (ThreadStart events for the full-table check). While the file PAUSE exists it rotates
 * nothing, so a heap histogram sees exactly one array (none half filled), and says so by creating
 * PAUSE.ack (the test waits for it: a loaded machine may take long to get here). Prints "ROTATE ready"
 * once the first array is in place. Usage: Rotate N PERIOD PAUSE */
public class Rotate {
  static Object[] arr;
  static volatile int cycle;

  static Object[] fill(int n) {
    Object[] x = new Object[n];
    for (int i = 0; i < n; i++) x[i] = new byte[1024];
    return x;
  }

  public static void main(String[] args) throws Exception {
    int n = Integer.parseInt(args[0]);
    long period = Long.parseLong(args[1]);
    arr = fill(n);
    System.out.println("ROTATE ready");
    System.out.flush();
    java.io.File pause = new java.io.File(args[2]);
    java.io.File paused = new java.io.File(args[2] + ".ack");
    while (true) {
      Thread.sleep(period);
      if (pause.exists()) {
        paused.createNewFile(); // no array is being filled from here until PAUSE goes
        continue;
      }
      arr = fill(n);
      Thread t = new Thread(() -> {}, "tick-" + cycle);
      t.start();
      t.join();
      cycle++;
    }
  }
}
// SPDX-License-Identifier: Apache-2.0
