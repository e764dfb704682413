/* The debuggee of late_attach.py: runs without any agent until one is loaded into it with jcmd.
 * main calls step() every 10 ms and prints its count every 100 calls (the program goes on). */
public class Late {
  static volatile long count;

  static int step(int i) {
    int twice = i * 2;
    count++;
    return twice;
  }

  public static void main(String[] args) throws Exception {
    System.out.println("late ready");
    System.out.flush();
    for (int i = 0; ; i++) {
      step(i);
      if (i % 100 == 0) {
        System.out.println("count " + count);
        System.out.flush();
      }
      Thread.sleep(10);
    }
  }
}
// SPDX-License-Identifier: Apache-2.0
