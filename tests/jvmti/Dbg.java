// What examples/minivm/programs/dbg.mvm does, line for line: the jdebug test agent
// (tests/jvmti/jdebug.c) prints the same lines for both (tests/jvmti/run_agents.py).
public class Dbg {
    static int counter;

    public static void main(String[] args) {
        int r = compute(5);
        System.out.println(r);
        int s = safe();
        System.out.println(s);
    }

    static int compute(int x) {
        int y = x * 2;
        counter = y;
        int z = counter + 1;
        return z;
    }

    static int safe() {
        try {
            fail();
        } catch (Oops e) {
            return 1;
        }
        return 0;
    }

    static void fail() {
        throw new Oops();
    }
}

class Oops extends RuntimeException {
}
// SPDX-License-Identifier: Apache-2.0
