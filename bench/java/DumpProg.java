// SPDX-License-Identifier: Apache-2.0
/* The heap of the hotspot section's dump figures (bench/bench_hotspot_ddm.c): NODES small objects
 * in a linked list plus ARRAYS int[1024], about 64 MiB, built then held.
 *
 *   java DumpProg NODES ARRAYS            prints "DUMPPROG ready" and idles until killed
 *   java DumpProg NODES ARRAYS FILE       dumps its own heap with HotSpotDiagnosticMXBean.dumpHeap
 *                                         (live objects) to FILE, prints "DUMPHEAP ms bytes" and idles */
import com.sun.management.HotSpotDiagnosticMXBean;
import java.io.File;
import java.lang.management.ManagementFactory;

public class DumpProg {
  static final class Node {
    Node next;
    long value;
    int[] small;
  }

  static Node head;
  static int[][] arrays;

  public static void main(String[] args) throws Exception {
    int nodes = Integer.parseInt(args[0]), narrays = Integer.parseInt(args[1]);
    for (int i = 0; i < nodes; i++) {
      Node n = new Node();
      n.next = head;
      n.value = i;
      head = n;
    }
    arrays = new int[narrays][];
    for (int i = 0; i < narrays; i++) arrays[i] = new int[1024];
    System.gc();
    if (args.length > 2) {
      File f = new File(args[2]);
      f.delete();
      HotSpotDiagnosticMXBean mx = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
      long t0 = System.nanoTime();
      mx.dumpHeap(f.getPath(), true);
      long t1 = System.nanoTime();
      System.out.println("DUMPHEAP " + (t1 - t0) / 1e6 + " " + f.length());
      System.out.flush();
      Thread.sleep(600_000); /* until killed: the bench reads its peak RSS */
      return;
    }
    System.out.println("DUMPPROG ready");
    System.out.flush();
    Thread.sleep(600_000);
  }
}
