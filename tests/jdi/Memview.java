// The program tests/jdi/MemviewClient.java looks at through JDI's memory view (instanceCounts,
// instances, referringObjects); examples/minivm/programs/memview.mvm is its twin. setup() leaves
// 7 MvItem reachable (in the array Memview.items), one of them also held by the one MvHolder,
// and 5 MvItem garbage (made in garbage(), whose frame is gone): those must never count.
class MvItem {
    int n;
}

class MvHolder {
    Object held;
}

public class Memview {
    static Object[] items;
    static MvHolder holder;
    static volatile int ready;

    static void garbage() {
        for (int i = 0; i < 5; i++) {
            MvItem g = new MvItem();
            g.n = 100 + i;
        }
    }

    static void setup() {
        items = new Object[7];
        for (int i = 0; i < 7; i++) {
            MvItem it = new MvItem();
            it.n = i;
            items[i] = it;
        }
        garbage();
        holder = new MvHolder();
        holder.held = items[3];
    }

    public static void main(String[] args) throws Exception {
        setup();
        ready = 1;
        while (true) Thread.sleep(50);
    }
}
// SPDX-License-Identifier: Apache-2.0
