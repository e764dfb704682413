// The program IdeClient.java debugs the way an IDE does; examples/minivm/programs/ide.mvm mirrors it
// line for line. Counter is first used only after a debugger opens the gate (Ide.gate = 1).
public class Ide {
    static int gate;
    static int rounds;
    static Object lock;

    static int twice(int x) {
        int r = x + x;
        return r;
    }

    static void pause(int ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            return;
        }
    }

    static void holder() {
        synchronized (lock) {
            Thread b = new Thread(Ide::blocked, "Blocked"); b.setDaemon(true); b.start(); while (true) {
                pause(50);
            }
        }
    }

    static void blocked() {
        synchronized (lock) {
            rounds = rounds + 1000;
        }
    }

    static void risky(int n) {
        if (n == 2) {
            throw new Oops();
        }
    }

    static void crash() {
        throw new Oops();
    }

    public static void main(String[] args) {
        lock = new Object();
        Thread h = new Thread(Ide::holder, "Holder");
        h.setDaemon(true);
        h.start();
        while (gate == 0) {
            pause(20);
        }
        // Holder started Blocked inside the lock: Blocked waits for it from then on.


        int i = 0;
        while (true) {
            Counter c = Counter.make(i);
            int t = twice(c.value);
            try {
                risky(i);
            } catch (Oops e) {
                rounds = rounds + 1;
            }
            if (i == 3) {
                Thread k = new Thread(Ide::crash, "Crasher");
                k.setDaemon(true);
                k.start();
            }
            i = i + 1;
            pause(50);
        }
    }
}

class Counter {
    static int created;
    int value;

    static Counter make(int v) {
        Counter c = new Counter();
        c.value = v;
        created = created + 1;
        return c;
    }
}

class Oops extends RuntimeException {
}
// SPDX-License-Identifier: Apache-2.0
