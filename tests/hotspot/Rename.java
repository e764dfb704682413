/* A thread that renames itself (Thread.setName) a moment after it starts, for THNM on a JVM: the
 * agent has no event for it and must notice the rename when it next reads the thread table. */
public class Rename {
  public static void main(String[] args) throws Exception {
    Thread t = new Thread(() -> {
      try {
        Thread.sleep(1500);
        Thread.currentThread().setName("Renamed-after");
        Thread.sleep(600_000);
      } catch (InterruptedException e) {
        return;
      }
    }, "Renamed-before");
    t.setDaemon(true);
    t.start();
    System.out.println("RENAME ready");
    System.out.flush();
    Thread.sleep(600_000);
  }
}
// SPDX-License-Identifier: Apache-2.0
