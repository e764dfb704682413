// vm_death.jdb: the VM exits while a thread sits at a breakpoint. Worker counts; main prints
// "alive COUNT" every 50 ms and exits with status 3 once the count has not moved for 20 checks
// (a second): when a debugger holds Worker. tests/jdb/exit.mvm mirrors it line for line.
public class Exit {
    static int count;

    static void pause(int ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            return;
        }
    }

    static void worker() {
        while (true) {
            count = count + 1;
            pause(20);
        }
    }

    public static void main(String[] args) {
        Thread w = new Thread(Exit::worker, "Worker");
        w.setDaemon(true);
        w.start();
        int last = -1;
        int still = 0;
        while (still < 20) {
            pause(50);
            if (count == last) {
                still = still + 1;
            } else {
                still = 0;
            }
            last = count;
            System.out.print("alive ");
            System.out.println(last);
        }
        System.out.println("exiting");
        System.exit(3);
    }
}
// SPDX-License-Identifier: Apache-2.0
