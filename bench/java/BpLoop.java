// Twin of bench/programs/bploop.mvm (same class, methods and line numbers): the loop the
// breakpoint and single-step round trips run. JdiBench sets its breakpoint at line 10 (the call),
// and steps over lines from there: 10 -> 11 -> 10 -> ...
public class BpLoop {
  static long counter;

  public static void main(String[] args) {
    long i = 0;
    while (true) {
      i = tick(i);
      counter = i;
    }
  }

  static long tick(long i) {
    return i + 1;
  }
}
// SPDX-License-Identifier: Apache-2.0
