import java.util.ArrayList;
import java.util.List;

public class HeapProg {
  static final class Node {
    final int value;
    Node next;
    Node(int value, Node next) { this.value = value; this.next = next; }
  }
  static final class Blob {
    final byte[] bytes = new byte[64];
  }
  /* Every field type, inherited fields and interfaces' statics before them (the JVM TI field
   * indexes the agent's heap walk maps): prof_agent.py checks each value in the dump. */
  interface Consts {
    int A = 1;
    Object O = new Object();
  }
  interface More extends Consts {
    long L = System.nanoTime();
  }
  static class Base implements Consts {
    static int sb = 3;
    final long baseLong;
    Object baseRef;
    Base(long v) { baseLong = v; }
  }
  static final class Mixed extends Base implements More, Runnable {
    static double sd = 2.5;
    final boolean z = true;
    final byte b = -7;
    final char c = 'Q';
    final short s = -1234;
    final int i = 0x12345678;
    final long j = -0x123456789abL;
    final float f = 1.5f;
    final double d = -2.25;
    final Object self;
    final int[] arr = {1, 2, 3};
    Mixed() {
      super(42L);
      self = this;
      baseRef = new Object[] {this, null};
    }
    public void run() {}
  }
  static Mixed mixed;
  static Node head;
  static final List<Object> kept = new ArrayList<>();

  static void allocate(int n) {
    for (int i = 0; i < n; i++) kept.add(new Blob());
  }

  public static void main(String[] args) throws Exception {
    for (int i = 0; i < 1000; i++) head = new Node(i, head);
    mixed = new Mixed();
    System.out.println("ready");
    System.out.flush();
    while (true) {
      Thread.sleep(50);
      if (kept.size() < 100000) allocate(100);
    }
  }
}
// SPDX-License-Identifier: Apache-2.0
