// The program vm_death.jdb ends while a thread sits at a breakpoint: main prints "alive N" until a
// debugger sets Exit.quit, then exits with status 3. tests/jdb/exit.mvm mirrors it line for line,
// so don't renumber it.
public class Exit {
    static boolean quit;
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
        int round = 0;
        while (!quit) {
            System.out.print("alive ");
            System.out.println(round);
            round = round + 1;
            pause(50);
        }
        System.out.println("exiting");
        System.exit(3);
    }
}
