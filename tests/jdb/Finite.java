// The program hotspot.jdb debugs (with javac -g): unlike Debug.java it runs to its end, so a
// session can follow it from VM_START to VM_DEATH. Don't renumber it: the script names its lines.
public class Finite {
    int id;
    String label;

    Finite(int id, String label) {
        this.id = id;
        this.label = label;
    }

    public String toString() {
        return "Finite#" + id + "(" + label + ")";
    }

    static int square(int x) {
        int result = x * x;
        return result;
    }

    public static void main(String[] args) {
        Finite obj = new Finite(7, "seven");
        int total = 0;
        for (int i = 1; i <= 3; i++) {
            total = total + square(i);
        }
        System.out.println("total " + total + " " + obj);
    }
}
// SPDX-License-Identifier: Apache-2.0
