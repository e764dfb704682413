// The program ReentryClient.java debugs under method entry and exit requests: work() makes HotSpot
// load a JDK library (libmanagement, through jdk.internal.loader.NativeLibraries) and link its
// native methods, Java code that runs while the requests are on. An agent whose event callback
// runs Java code there (FindClass does, when the caller's frame is in NativeLibraries) gets the
// event again inside itself, without end, and the JVM dies of a stack overflow.
public class Reentry {
  static int work() {
    String name = java.lang.management.ManagementFactory.getRuntimeMXBean().getName();
    return name.isEmpty() ? 0 : 42;
  }

  static void done(int r) {
    System.out.println("done " + r);
  }

  public static void main(String[] args) {
    done(work());
  }
}
// SPDX-License-Identifier: Apache-2.0
