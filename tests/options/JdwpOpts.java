// The Java program of jdwp_options.py (minivm's twin: jdwpopts.mvm). It prints "main running",
// throws and catches OptsError at 1.5 s (onthrow=OptsError), lets a thread die of an uncaught
// OptsError at 3 s (onuncaught=y), then sleeps 20 s and prints "main done".
class OptsError extends RuntimeException {
  OptsError(String m) {
    super(m);
  }
}

public class JdwpOpts {
  static void dier() {
    throw new OptsError("uncaught in Dier");
  }

  public static void main(String[] args) throws Exception {
    System.out.println("main running");
    Thread.sleep(1500);
    try {
      throw new OptsError("caught in main");
    } catch (OptsError e) {
      System.out.println("caught");
    }
    Thread.sleep(1500);
    Thread t = new Thread(JdwpOpts::dier, "Dier");
    t.setDaemon(true);
    t.start();
    Thread.sleep(20000);
    System.out.println("main done");
  }
}
// SPDX-License-Identifier: Apache-2.0
