// Greeter of Mutate.java with a method added: a schema change HotSpot refuses (canAddMethod false).
class Greeter {
    static int value() {
        return other();
    }

    static int other() {
        return 3;
    }
}
// SPDX-License-Identifier: Apache-2.0
