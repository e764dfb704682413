import com.sun.jdi.*;
import com.sun.jdi.connect.*;
import java.util.*;

// JDI's memory view (VirtualMachine.instanceCounts, ReferenceType.instances,
// ObjectReference.referringObjects) against Memview (tests/jdi/Memview.java or memview.mvm):
// only reachable objects count, as the JDK's agent counts them. Usage: MemviewClient HOST PORT.
// Prints "all checks passed" when every check held.
public class MemviewClient {
    static int failures;

    static void check(boolean ok, String what) {
        System.out.println((ok ? "ok - " : "FAIL - ") + what);
        if (!ok) failures++;
    }

    static VirtualMachine attach(String host, String port) throws Exception {
        AttachingConnector c = null;
        for (AttachingConnector a : Bootstrap.virtualMachineManager().attachingConnectors())
            if (a.transport().name().equals("dt_socket")) c = a;
        Map<String, Connector.Argument> args = c.defaultArguments();
        args.get("hostname").setValue(host);
        args.get("port").setValue(port);
        return c.attach(args);
    }

    static ReferenceType type(VirtualMachine vm, String name) throws Exception {
        for (int i = 0; i < 600; i++) {
            List<ReferenceType> l = vm.classesByName(name);
            if (!l.isEmpty()) return l.get(0);
            Thread.sleep(50);
        }
        throw new RuntimeException("class " + name + " never loaded");
    }

    static int n(ObjectReference item) {
        return ((IntegerValue) item.getValue(item.referenceType().fieldByName("n"))).value();
    }

    public static void main(String[] a) throws Exception {
        VirtualMachine vm = attach(a[0], a[1]);
        ReferenceType main = type(vm, "Memview");
        for (int i = 0; i < 600 && ((IntegerValue) main.getValue(main.fieldByName("ready"))).value() == 0; i++)
            Thread.sleep(50);
        vm.suspend();
        ReferenceType item = type(vm, "MvItem"), holder = type(vm, "MvHolder");
        check(vm.canGetInstanceInfo(), "canGetInstanceInfo");
        // (A class twice in one list: the JDK's agent answers 0 for all but its last place; not asked.)
        long[] counts = vm.instanceCounts(Arrays.asList(item, holder, main));
        check(counts.length == 3 && counts[0] == 7 && counts[1] == 1 && counts[2] == 0,
              "instanceCounts(MvItem, MvHolder, Memview) = " + Arrays.toString(counts) + " (7 1 0)");
        check(vm.instanceCounts(new ArrayList<>()).length == 0, "instanceCounts of no class");

        List<ObjectReference> all = item.instances(0);
        Set<Integer> ns = new TreeSet<>();
        for (ObjectReference o : all) ns.add(n(o));
        check(all.size() == 7 && ns.equals(new TreeSet<>(Arrays.asList(0, 1, 2, 3, 4, 5, 6))),
              "instances(MvItem, 0): " + all.size() + " with n " + ns + " (0..6: no garbage)");
        check(item.instances(3).size() == 3, "instances(MvItem, 3): " + item.instances(3).size());
        check(main.instances(0).isEmpty(), "instances(Memview, 0) empty");

        ObjectReference h = (ObjectReference) main.getValue(main.fieldByName("holder"));
        ArrayReference arr = (ArrayReference) main.getValue(main.fieldByName("items"));
        ObjectReference third = (ObjectReference) h.getValue(holder.fieldByName("held"));
        check(n(third) == 3, "holder.held is item 3");
        List<ObjectReference> refs = third.referringObjects(0);
        check(refs.size() == 2 && refs.contains(h) && refs.contains(arr),
              "referringObjects(item 3) = the holder and the array: " + refs);
        check(third.referringObjects(1).size() == 1, "referringObjects(item 3, 1): one");
        ObjectReference first = (ObjectReference) arr.getValue(0);
        List<ObjectReference> r0 = first.referringObjects(0);
        check(r0.size() == 1 && r0.get(0).equals(arr), "referringObjects(item 0) = the array: " + r0);
        boolean fromStatics = false;
        for (ObjectReference o : h.referringObjects(0))
            if (o instanceof ClassObjectReference && ((ClassObjectReference) o).reflectedType().equals(main))
                fromStatics = true;
        check(fromStatics, "referringObjects(holder) holds Memview's class object (its static field)");
        vm.resume();
        vm.dispose();
        if (failures == 0) System.out.println("all checks passed");
        System.exit(failures == 0 ? 0 : 1);
    }
}
// SPDX-License-Identifier: Apache-2.0
