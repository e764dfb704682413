// The program ReflectClient.java inspects (tests/jdi/run_reflect.py): classes whose bytecodes,
// constant pool and module the client compares with their class files, and JspPage, to which the
// runner adds a SourceDebugExtension (an SMAP with a JSP stratum) after javac.
public class Reflect {
  static volatile int sink;
  static long big = 1234567890123L; // a long constant: a two-slot constant pool entry
  static double ratio = 0.5;

  static int work(int n) {
    int s = 0;
    for (int i = 0; i < n; i++) s += i * 3 + (int) big;
    return s;
  }

  String text(Object o) {
    return "Reflect " + o + " " + ratio;
  }

  public static void main(String[] args) throws Exception {
    JspPage page = new JspPage();
    sink = work(3) + page.render(2);
    System.out.println("ready");
    for (int i = 0; i < 6000; i++) { // ten minutes at most; the runner kills it first
      Thread.sleep(100);
      sink += page.render(i & 7) + Later.poll();
    }
  }
}

class JspPage {
  int render(int n) {
    int a = n + 1;          // Reflect.java line 32: page.jsp line 1 (the runner's SMAP)
    int b = a * 2;          // 33: page.jsp 1 too
    int c = b - n;          // 34: page.jsp 2
    return a + b + c;       // 35: page.jsp 3
  }
}

// JspLater is loaded once the client, having asked for its ClassPrepare event by source names,
// sets load; the runner gives it an SMAP too (later.jsp, output file Later_jsp.java).
class Later {
  static volatile boolean load;
  static JspLater it;

  static int poll() {
    if (load && it == null) it = new JspLater();
    return 0;
  }
}

class JspLater {
  int n = 1;
}
// SPDX-License-Identifier: Apache-2.0
