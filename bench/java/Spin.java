// Twin of bench/programs/spin.mvm (same class, methods and line numbers): the CPU-bound loop of
// the "cost of debugging support" figures. main(N) prints "SPIN <ms> <checksum>".
public class Spin {
  static long sink; static long count;

  public static void main(String[] args) throws InterruptedException {
    run(args);
  }

  static void run(String[] args) throws InterruptedException { long n = parse(args[0]); Thread.sleep(300);
    long t0 = System.nanoTime() / 1000000; long i = 0; long h = 1;
    while (true) {
      if (i >= n) break;
      h = mix(h, i);
      i = i + 1; count = count + 1;
    }
    long ms = System.nanoTime() / 1000000 - t0; sink = h; Thread.sleep(100);
    System.out.println("SPIN " + ms + " " + h);
  }

  static long mix(long h, long i) {
    long x = h * 31;
    x = x ^ i;
    x = x ^ (x >> 7);
    return x & 0xffffff;
  }

  static void cold() {
    sink = 0;
  }

  static long parse(String s) { return Long.parseLong(s); }
}
// SPDX-License-Identifier: Apache-2.0
