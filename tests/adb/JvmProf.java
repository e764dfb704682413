// SPDX-License-Identifier: Apache-2.0
// The Java program of run_e2e.py's jvmprof mode: what ddmlib's profiling calls and heap dumps
// should find on HotSpot under libddmcjdwp.so (dt_android_adb), until killed.
//   JvmProf$Node  exactly 1000 instances, kept from a static (the heap dump counts them)
//   JvmProf$Blob  allocated 50 at a time in JvmProf.allocate (the allocation tracker's stack);
//                 the last one kept, so a dump right after a collection still holds one
//   JvmProf.fib   called by main in every round (the method tracer and the sampler name it)
public class JvmProf {
  static final class Node {
    Node next;
    int value;
  }

  static final class Blob {
    final long[] words = new long[8];
  }

  static Node[] keep;
  static volatile Blob last;
  static volatile long sink;

  static Blob allocate() {
    return new Blob();
  }

  static int fib(int n) {
    return n < 2 ? n : fib(n - 1) + fib(n - 2);
  }

  public static void main(String[] args) throws Exception {
    keep = new Node[1000];
    for (int i = 0; i < keep.length; i++) {
      keep[i] = new Node();
      keep[i].value = i;
      keep[i].next = i > 0 ? keep[i - 1] : null;
    }
    System.out.println("JvmProf ready");
    while (true) {
      for (int i = 0; i < 50; i++) {
        last = allocate();
        sink += last.words.length;
      }
      sink += fib(18);
      Thread.sleep(10);
    }
  }
}
