// What examples/minivm/programs/hello.mvm does, in Java: the calltrace agent prints the same
// counts for both (tests/jvmti/run_agents.py).
public class Hello {
    static String greeting;

    public static void main(String[] args) {
        greeting = "Hello from minivm";
        System.out.println(greeting);
        int v = fib(10);
        System.out.print("fib(10) = ");
        System.out.println(v);
        System.out.print("arguments: ");
        System.out.println(args.length);
    }

    static int fib(int n) {
        if (n < 2) return n;
        return fib(n - 1) + fib(n - 2);
    }
}
// SPDX-License-Identifier: Apache-2.0
