// The program MutateClient.java debugs: HotSwap (Greeter is redefined from redefine/*.java), Drop
// Frame (outer -> middle -> inner, popped and re-entered) and Force Return (one method per return
// type, whose results main keeps in statics the client reads). Sleeper sleeps in Thread.sleep, a
// native frame neither pop nor force return may touch. main loops until the VM is killed.
public class Mutate {
    static int counter;
    static int lastInner;
    static int greeting;
    static boolean gz;
    static byte gb;
    static char gc;
    static short gs;
    static int gi;
    static long gj;
    static float gf;
    static double gd;
    static String gl = "none";
    static int voids;

    static int inner(int x) {
        int y = x * 2;
        return y;
    }

    static int middle(int x) {
        counter = counter + 1;
        int r = inner(x);
        lastInner = r;
        return r;
    }

    static int outer(int x) {
        int r = middle(x) + 1;
        return r;
    }

    static boolean rz() { return false; }
    static byte rb() { return 1; }
    static char rc() { return 'a'; }
    static short rs() { return 2; }
    static int ri() { return 3; }
    static long rj() { return 4L; }
    static float rf() { return 5.0f; }
    static double rd() { return 6.0; }
    static String rl() { return "plain"; }
    static void rv() { voids = voids + 1; }

    static void pause(int ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            return;
        }
    }

    public static void main(String[] args) {
        Thread s = new Thread(() -> { while (true) pause(100000); }, "Sleeper");
        s.setDaemon(true);
        s.start();
        while (true) {
            outer(3);
            gz = rz();
            gb = rb();
            gc = rc();
            gs = rs();
            gi = ri();
            gj = rj();
            gf = rf();
            gd = rd();
            gl = rl();
            rv();
            greeting = Greeter.value();
            pause(5);
        }
    }
}

class Greeter {
    static int value() {
        int v = 1;
        return v;
    }
}
// SPDX-License-Identifier: Apache-2.0
