// The program InvokeClient.java debugs: method calls from the debugger at breakpoints, as an IDE
// renders a stopped thread's objects. examples/minivm/programs/invoke.mvm mirrors it line for
// line. main passes hit(Item) in an endless loop; Ticker counts on its own; show(Item) is a
// static method with code (minivm's toString() is built in), for a breakpoint inside a call;
// slow(ms) is a call that runs for a while, for a debugger killed during one.
public class Invoke {
    static int ticks;
    static int rounds;

    static void pause(int ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            return;
        }
    }

    static void ticker() {
        while (true) {
            ticks = ticks + 1;
            System.out.println("tick " + ticks);
            pause(50);
        }
    }

    static void hit(Item it) {
        rounds = rounds + 1;
    }

    static String show(Item it) {
        String s = "item";
        return s;
    }

    static void slow(int ms) {
        pause(ms);
    }

    public static void main(String[] args) {
        Thread t = new Thread(Invoke::ticker, "Ticker");
        t.setDaemon(true);
        t.start();
        int i = 0;
        while (true) {
            Item it = new Item();
            it.value = i;
            hit(it);
            System.out.println("round " + i);
            i = i + 1;
            pause(2);
        }
    }
}

class Item {
    int value;
}
// SPDX-License-Identifier: Apache-2.0
