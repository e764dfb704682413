// The program the jdb tests debug; examples/minivm/programs/debug.mvm mirrors it line for line.
public class Debug {
    static int counter;
    static String greeting = "hello";

    int id;
    String label;
    Debug next;

    static int square(int x) {
        int result = x * x;
        return result;
    }

    static int sumTo(int n) {
        int total = 0;
        for (int i = 1; i <= n; i++) {
            total = total + square(i);
        }
        return total;
    }

    static void pause(int ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            return;
        }
    }

    static void worker() {
        while (true) {
            counter = counter + 1;
            pause(20);
        }
    }

    public static void main(String[] args) {
        Thread w = new Thread(Debug::worker, "Worker");
        w.setDaemon(true);
        w.start(); while (counter == 0) Thread.onSpinWait(); // the Worker announced (ThreadStart) before main can stop
        boolean flag = true;
        char letter = 'A';
        long big = 1234567890123L;
        double ratio = 2.5;
        String text = greeting;
        int[] numbers = {10, 20, 30};
        Debug obj = new Debug();
        obj.id = 7;
        obj.label = "seven";
        int round = 0;
        while (true) {
            int value = sumTo(3);
            System.out.print("round ");
            System.out.print(round);
            System.out.print(" value ");
            System.out.println(value);
            round = round + 1;
            pause(100);
        }
    }
}
// SPDX-License-Identifier: Apache-2.0
