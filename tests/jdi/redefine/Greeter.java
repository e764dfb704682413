// Greeter of Mutate.java, redefined: the same members, another body (three lines, value 2).
class Greeter {
    static int value() {
        int a = 1;
        int v = a + 1;
        return v;
    }
}
// SPDX-License-Identifier: Apache-2.0
