/* The target of the scale section's frame and array figures (bench/bench_hotspot.c): a thread
 * "deep" that recurses DEPTH calls and sleeps there (Deep.deep names it), and Deep.arr, an int[]
 * of ELEMENTS; prints "DEEP ready" and idles until killed.
 *
 *   java Deep DEPTH ELEMENTS */
public class Deep {
  static int[] arr;
  static Thread deep;
  static volatile boolean ready;

  static void down(int n) throws InterruptedException {
    if (n > 1) {
      down(n - 1);
      return;
    }
    ready = true;
    while (true) Thread.sleep(60000);
  }

  public static void main(String[] args) throws Exception {
    int depth = Integer.parseInt(args[0]);
    arr = new int[Integer.parseInt(args[1])];
    for (int i = 0; i < arr.length; i++) arr[i] = i;
    /* A big stack: 10,000 interpreted frames. */
    deep = new Thread(null, () -> {
      try {
        down(depth);
      } catch (InterruptedException e) {
        return;
      }
    }, "deep", 256L << 20);
    deep.setDaemon(true);
    deep.start();
    while (!ready) Thread.sleep(10);
    System.out.println("DEEP ready");
    System.out.flush();
    while (true) Thread.sleep(60000);
  }
}
// SPDX-License-Identifier: Apache-2.0
