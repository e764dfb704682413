/* The HotSpot twin of Ui.mvm (tests/ui/ui_test.js): main starts a Worker that calls hot() for
 * about 1.5 s, joins it, and starts the next, for ever; a daemon Collector allocates garbage and
 * collects every 2 s; a daemon Busy calls hot() for ever, so the hot method runs for the whole of
 * a trace. */
public class UiProg {
  static volatile long sink;

  static long hot(long x) {
    long v = x;
    for (int i = 0; i < 50000; i++) v = (v * 31 + 7) & 0xffffff;
    return v;
  }

  static void work() {
    long end = System.nanoTime() + 1_500_000_000L;
    long acc = 0;
    while (System.nanoTime() < end) {
      for (int i = 0; i < 100; i++) acc += hot(acc + i);
      sink = new int[64].length + acc;
    }
  }

  static void busy() {
    long acc = 0;
    while (true) acc += hot(acc);
  }

  public static void main(String[] args) throws Exception {
    Thread c = new Thread(() -> {
      while (true) {
        for (int i = 0; i < 200; i++) sink += new int[256].length;
        System.gc();
        try {
          Thread.sleep(2000);
        } catch (InterruptedException e) {
          return;
        }
      }
    }, "Collector");
    c.setDaemon(true);
    c.start();
    Thread b = new Thread(UiProg::busy, "Busy");
    b.setDaemon(true);
    b.start();
    System.out.println("ready");
    for (int n = 0; ; n++) {
      Thread w = new Thread(UiProg::work, "Worker-" + n);
      w.start();
      w.join();
      Thread.sleep(500);
    }
  }
}
// SPDX-License-Identifier: Apache-2.0
