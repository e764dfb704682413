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
  static Node head;
  static final List<Object> kept = new ArrayList<>();

  static void allocate(int n) {
    for (int i = 0; i < n; i++) kept.add(new Blob());
  }

  public static void main(String[] args) throws Exception {
    for (int i = 0; i < 1000; i++) head = new Node(i, head);
    System.out.println("ready");
    System.out.flush();
    while (true) {
      Thread.sleep(50);
      if (kept.size() < 100000) allocate(100);
    }
  }
}
// SPDX-License-Identifier: Apache-2.0
