/* The idle JVM that hosts OpenJDK's JDWP agent for the comparison figures: main waits forever,
 * so the agent's threads are the only ones doing anything. */
public class Idle {
  public static void main(String[] args) throws InterruptedException {
    Object lock = new Object();
    synchronized (lock) {
      while (true) lock.wait();
    }
  }
}
// SPDX-License-Identifier: Apache-2.0
