// What examples/minivm/programs/histo.mvm does, in Java: the heaphisto agent reports the same
// counts for both (tests/jvmti/run_heaphisto.py). Histo comes first: the source launcher
// runs the first class of the file.
public class Histo {
    static HistoApple[] apples;
    static HistoBanana bananas;

    public static void main(String[] args) {
        apples = new HistoApple[300];
        for (int i = 0; i < 300; i++) {
            apples[i] = new HistoApple();
            apples[i].weight = i;
        }
        HistoBanana list = null;
        for (int i = 0; i < 120; i++) {
            HistoBanana b = new HistoBanana();
            b.next = list;
            list = b;
        }
        bananas = list;
        for (int i = 0; i < 500; i++) {
            HistoCherry c = new HistoCherry();
            c.pit = i;
        }
        System.out.println("histo ready");
    }
}

class HistoApple {
    int weight;
}

class HistoBanana {
    HistoBanana next;
}

class HistoCherry {
    long pit;
}
// SPDX-License-Identifier: Apache-2.0
