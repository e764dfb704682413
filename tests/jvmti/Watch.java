// The same as examples/minivm/programs/watch.mvm, for the threadwatch agent on HotSpot: two
// threads each block once on lock (main holds it for 500 ms), one thread waits three times for
// 50 ms on cond (nobody notifies), main joins all three.
public class Watch {
  static final Object lock = new Object();
  static final Object cond = new Object();

  public static void main(String[] args) throws Exception {
    Thread c1, c2, w;
    synchronized (lock) {
      c1 = new Thread(Watch::contender, "Contender-1");
      c2 = new Thread(Watch::contender, "Contender-2");
      c1.start();
      c2.start();
      Thread.sleep(500);
    }
    w = new Thread(Watch::waiter, "Waiter");
    w.start();
    c1.join();
    c2.join();
    w.join();
    System.gc();
    System.out.println("watch: done");
  }

  static void contender() {
    synchronized (lock) {
    }
  }

  static void waiter() {
    try {
      for (int i = 0; i < 3; i++) {
        synchronized (cond) {
          cond.wait(50);
        }
      }
    } catch (InterruptedException e) {
      throw new RuntimeException(e);
    }
  }
}
// SPDX-License-Identifier: Apache-2.0
