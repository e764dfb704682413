// Reflection a bytecode view, IntelliJ's lambda step-into and a JSP or Kotlin debugger read,
// through the JDK's JDI (tests/jdi/run_reflect.py):
//
//   java ReflectClient jvm HOST PORT CLASSDIR      Reflect.java on the JDK (either agent)
//   java ReflectClient minivm HOST PORT            ide.mvm on minivm
//
// jvm: Method.bytecodes() of every method of Reflect and JspPage equals the Code attribute of the
// class file javac wrote (read here with a small parser), constantPoolCount() / constantPool()
// and majorVersion() / minorVersion() equal the class file's; allModules() holds java.base and
// unnamed modules, Reflect's module() is its loader's unnamed module, String's is java.base with
// the boot loader; JspPage, which carries an SMAP (the runner added it), has the strata Java and
// JSP, JSP by default, its lines mapped, and setDefaultStratum is accepted and changes what
// Location.lineNumber() says and where a step by line ends (page.jsp line 1 is two Java lines);
// ClassPrepare requests filtered by source name see JspLater, loaded later, by its SMAP's source
// names as by its own source file. minivm: bytecodes in minivm's own encoding (26 bytes per
// instruction, examples/minivm/README.md), no constant pool, no modules.
// Prints "ok - ..." or "FAIL - ..." per check and "all checks passed" at the end.
import com.sun.jdi.*;
import com.sun.jdi.connect.*;
import com.sun.jdi.event.*;
import com.sun.jdi.request.*;
import java.io.*;
import java.nio.file.*;
import java.util.*;

public class ReflectClient {
  static int failures;

  static void check(boolean ok, String what) {
    System.out.println((ok ? "ok - " : "FAIL - ") + what);
    System.out.flush();
    if (!ok) failures++;
  }

  /** What the client needs of a class file: the constant pool's count and bytes, the version,
   *  and each method's Code bytes by name + descriptor. */
  static final class ClassFile {
    int cpCount, major, minor;
    byte[] cpBytes;
    final Map<String, byte[]> code = new HashMap<>();

    ClassFile(byte[] b) throws IOException {
      DataInputStream in = new DataInputStream(new ByteArrayInputStream(b));
      if (in.readInt() != 0xCAFEBABE) throw new IOException("not a class file");
      minor = in.readUnsignedShort();
      major = in.readUnsignedShort();
      cpCount = in.readUnsignedShort();
      int start = 10;
      String[] utf = new String[cpCount];
      for (int i = 1; i < cpCount; i++) {
        int tag = in.readUnsignedByte();
        switch (tag) {
          case 1: utf[i] = in.readUTF(); break;
          case 3: case 4: in.readInt(); break;
          case 5: case 6: in.readLong(); i++; break; // two slots
          case 7: case 8: case 16: case 19: case 20: in.readUnsignedShort(); break;
          case 9: case 10: case 11: case 12: case 17: case 18: in.readInt(); break;
          case 15: in.readUnsignedByte(); in.readUnsignedShort(); break;
          default: throw new IOException("constant pool tag " + tag);
        }
      }
      int end = b.length - in.available();
      cpBytes = Arrays.copyOfRange(b, start, end);
      in.skipBytes(6); // access, this, super
      in.skipBytes(2 * in.readUnsignedShort());
      int nf = in.readUnsignedShort();
      for (int i = 0; i < nf; i++) { in.skipBytes(6); skipAttributes(in); }
      int nm = in.readUnsignedShort();
      for (int i = 0; i < nm; i++) {
        in.skipBytes(2);
        String key = utf[in.readUnsignedShort()] + utf[in.readUnsignedShort()];
        int na = in.readUnsignedShort();
        for (int a = 0; a < na; a++) {
          String name = utf[in.readUnsignedShort()];
          int len = in.readInt();
          byte[] attr = new byte[len];
          in.readFully(attr);
          if (name.equals("Code")) {
            DataInputStream c = new DataInputStream(new ByteArrayInputStream(attr));
            c.skipBytes(4);
            byte[] bc = new byte[c.readInt()];
            c.readFully(bc);
            code.put(key, bc);
          }
        }
      }
    }

    static void skipAttributes(DataInputStream in) throws IOException {
      int n = in.readUnsignedShort();
      for (int i = 0; i < n; i++) { in.skipBytes(2); in.skipBytes(in.readInt()); }
    }
  }

  static VirtualMachine attach(String host, String port) throws Exception {
    AttachingConnector c = null;
    for (AttachingConnector a : Bootstrap.virtualMachineManager().attachingConnectors())
      if (a.name().equals("com.sun.jdi.SocketAttach")) c = a;
    Map<String, Connector.Argument> args = c.defaultArguments();
    args.get("hostname").setValue(host);
    args.get("port").setValue(port);
    return c.attach(args);
  }

  static ReferenceType one(VirtualMachine vm, String name) {
    List<ReferenceType> l = vm.classesByName(name);
    if (l.size() != 1) throw new IllegalStateException(name + ": " + l.size() + " classes");
    return l.get(0);
  }

  static void classFile(ReferenceType t, Path file) throws Exception {
    ClassFile cf = new ClassFile(Files.readAllBytes(file));
    String n = t.name();
    check(t.constantPoolCount() == cf.cpCount, n + ".constantPoolCount() " + t.constantPoolCount() + " == " + cf.cpCount);
    check(Arrays.equals(t.constantPool(), cf.cpBytes), n + ".constantPool() equals the class file's " + cf.cpBytes.length + " bytes");
    check(t.majorVersion() == cf.major && t.minorVersion() == cf.minor,
          n + " class file version " + t.majorVersion() + "." + t.minorVersion() + " == " + cf.major + "." + cf.minor);
    int compared = 0;
    for (Method m : t.methods()) {
      byte[] want = cf.code.get(m.name() + m.signature());
      if (want == null) continue;
      byte[] got = m.bytecodes();
      check(Arrays.equals(got, want), n + "." + m.name() + m.signature() + " bytecodes (" + got.length + " bytes) equal the Code attribute's " + want.length);
      compared++;
    }
    check(compared >= 2, n + ": " + compared + " methods compared");
  }

  static void modules(VirtualMachine vm, ReferenceType reflect) {
    check(vm.canGetModuleInfo(), "canGetModuleInfo");
    List<ModuleReference> all = vm.allModules();
    boolean base = false, unnamed = false;
    for (ModuleReference m : all) {
      if ("java.base".equals(m.name())) base = true;
      if (m.name() == null || m.name().isEmpty()) unnamed = true;
    }
    check(all.size() >= 10 && base && unnamed, "allModules(): " + all.size() + " modules, java.base " + base + ", an unnamed one " + unnamed);
    ModuleReference mine = reflect.module();
    check(mine != null && (mine.name() == null || mine.name().isEmpty()) && all.contains(mine),
          "Reflect's module() is an unnamed module allModules() lists: " + (mine == null ? null : mine.name()));
    check(mine != null && Objects.equals(mine.classLoader(), reflect.classLoader()) && reflect.classLoader() != null,
          "its classLoader() is Reflect's: " + (mine == null ? null : mine.classLoader()));
    ModuleReference base2 = one(vm, "java.lang.String").module();
    check("java.base".equals(base2.name()) && base2.classLoader() == null && all.contains(base2),
          "String's module() is java.base, boot loader: " + base2.name() + " " + base2.classLoader());
    check(one(vm, "JspPage").module().equals(mine), "JspPage is in the same module");
  }

  static void strata(VirtualMachine vm, ReferenceType page) throws Exception {
    check(vm.canGetSourceDebugExtension(), "canGetSourceDebugExtension");
    String smap = page.sourceDebugExtension();
    check(smap.startsWith("SMAP\n"), "sourceDebugExtension() is the runner's SMAP");
    List<String> strata = page.availableStrata();
    check(strata.contains("JSP") && strata.contains("Kt") && strata.contains("Java"), "availableStrata() " + strata);
    check("JSP".equals(page.defaultStratum()), "defaultStratum() " + page.defaultStratum());
    check(page.sourceNames("JSP").equals(List.of("page.jsp")), "sourceNames(JSP) " + page.sourceNames("JSP"));
    List<Location> at3 = page.locationsOfLine("JSP", "page.jsp", 3);
    check(!at3.isEmpty() && at3.get(0).lineNumber("Java") == 35, "page.jsp line 3 is Reflect.java line 35: " + at3);
    Location l = at3.get(0);
    vm.setDefaultStratum("Java");
    check("Java".equals(vm.getDefaultStratum()) && l.lineNumber() == 35 && l.sourceName().equals("Reflect.java"),
          "setDefaultStratum(Java): line " + l.lineNumber() + " of " + l.sourceName());
    vm.setDefaultStratum("JSP");
    check(l.lineNumber() == 3 && l.sourceName().equals("page.jsp"), "setDefaultStratum(JSP): line " + l.lineNumber() + " of " + l.sourceName());
    vm.setDefaultStratum(null);
    check(l.lineNumber() == 3, "setDefaultStratum(null): the class's own default, JSP: line " + l.lineNumber());
    // Where a step over the first line of render ends: by the lines of the default stratum where
    // the SMAP has it (Kt: 33), else of the SMAP's default (JSP, whose line 1 is Java lines 32-33:
    // 34), "Java" included; "" leaves the last one in force. The JDK's agent decodes a class's
    // SMAP once, with the default stratum of that moment, and keeps it while the class stays in
    // its one-class cache: later SetDefaultStratum calls do not reach this class there. libddmc
    // follows each call (JDWP: "set the default stratum"); only it is asked the changes.
    boolean ours = vm.description().contains("libddmc");
    String[] order = {"Kt", "", "JSP", "Java", "Nope"};
    int[] want = {33, 33, 34, 34, 34};
    for (int i = 0; i < (ours ? order.length : 2); i++) {
      int got = stepOver(vm, page, order[i]);
      check(got == want[i], "step over render's first line, default stratum '" + order[i] + "': ends at Java line " + got
                                + " (" + want[i] + ")");
    }
    vm.setDefaultStratum(null);
  }

  /** Stops at the first line of JspPage.render, steps over one line with stratum as the VM's
   *  default (null: not set; the back-end decides where a step by line ends), and gives the Java
   *  line it ended on (-1: no step event in time). */
  static int stepOver(VirtualMachine vm, ReferenceType page, String stratum) throws Exception {
    if (stratum != null) vm.setDefaultStratum(stratum);
    EventRequestManager erm = vm.eventRequestManager();
    Location first = page.methodsByName("render").get(0).location();
    BreakpointRequest bp = erm.createBreakpointRequest(first);
    bp.setSuspendPolicy(EventRequest.SUSPEND_EVENT_THREAD);
    bp.enable();
    ThreadReference t = null;
    int line = -1;
    long end = System.currentTimeMillis() + 20000;
    while (System.currentTimeMillis() < end && line < 0) {
      EventSet set = vm.eventQueue().remove(1000);
      if (set == null) continue;
      for (Event e : set) {
        if (e instanceof BreakpointEvent && t == null) {
          t = ((BreakpointEvent) e).thread();
          bp.disable();
          StepRequest st = erm.createStepRequest(t, StepRequest.STEP_LINE, StepRequest.STEP_OVER);
          st.addCountFilter(1);
          st.enable();
        } else if (e instanceof StepEvent) {
          line = ((StepEvent) e).location().lineNumber("Java");
          erm.deleteEventRequest(e.request());
        }
      }
      set.resume();
    }
    erm.deleteEventRequest(bp);
    return line;
  }

  /** ClassPrepare requests filtered by source name (SourceNameMatch) for JspLater, which Reflect
   *  loads once Later.load is set: as libjdwp, a pattern matches the class's source file or a source
   *  name of its SMAP (the output file, a stratum's file), never a file's path. */
  static void sourceNameFilters(VirtualMachine vm) throws Exception {
    EventRequestManager erm = vm.eventRequestManager();
    String[] hit = {"later.jsp", "later*", "*r.jsp", "Later_jsp.java", "*_jsp.java", "Reflect.java"};
    String[] miss = {"web/later.jsp", "*web/later.jsp", "page.jsp", "nomatch.jsp", "JSP"};
    Map<EventRequest, String> pattern = new HashMap<>();
    Map<String, Integer> events = new TreeMap<>();
    for (String[] list : new String[][] {hit, miss})
      for (String p : list) {
        ClassPrepareRequest r = erm.createClassPrepareRequest();
        r.addClassFilter("JspLater");
        r.addSourceNameFilter(p);
        r.setSuspendPolicy(EventRequest.SUSPEND_NONE);
        r.enable();
        pattern.put(r, p);
        events.put(p, 0);
      }
    ClassType later = (ClassType) one(vm, "Later");
    later.setValue(later.fieldByName("load"), vm.mirrorOf(true));
    long end = System.currentTimeMillis() + 20000, quiet = Long.MAX_VALUE;
    while (System.currentTimeMillis() < Math.min(end, quiet)) {
      EventSet set = vm.eventQueue().remove(200);
      if (set == null) continue;
      for (Event e : set) {
        String p = pattern.get(e.request());
        if (p != null && e instanceof ClassPrepareEvent && ((ClassPrepareEvent) e).referenceType().name().equals("JspLater")) {
          events.merge(p, 1, Integer::sum);
          quiet = System.currentTimeMillis() + 1000; // any late one would come with the others
        }
      }
      set.resume();
    }
    for (String p : hit) check(events.get(p) == 1, "ClassPrepare of JspLater filtered by source name '" + p + "': " + events.get(p) + " event(s) (1)");
    for (String p : miss) check(events.get(p) == 0, "ClassPrepare of JspLater filtered by source name '" + p + "': " + events.get(p) + " event(s) (0)");
    for (EventRequest r : pattern.keySet()) erm.deleteEventRequest(r);
  }

  static void jvm(VirtualMachine vm, Path classes) throws Exception {
    check(vm.canGetBytecodes(), "canGetBytecodes");
    check(vm.canGetConstantPool(), "canGetConstantPool");
    ReferenceType reflect = one(vm, "Reflect"), page = one(vm, "JspPage");
    classFile(reflect, classes.resolve("Reflect.class"));
    classFile(page, classes.resolve("JspPage.class"));
    Method hash = ((ClassType) one(vm, "java.lang.Object")).concreteMethodByName("hashCode", "()I");
    String native_;
    try {
      native_ = "bytes " + hash.bytecodes().length;
    } catch (Exception e) {
      native_ = e.getClass().getName();
    }
    check(native_.equals("bytes 0"), "Object.hashCode (native) bytecodes: " + native_);
    modules(vm, reflect);
    strata(vm, page);
    sourceNameFilters(vm);
  }

  static void minivm(VirtualMachine vm) {
    check(vm.canGetBytecodes(), "canGetBytecodes");
    check(!vm.canGetConstantPool() && !vm.canGetModuleInfo() && !vm.canGetSourceDebugExtension(),
          "no constant pool, modules, SourceDebugExtension or strata (README)");
    ReferenceType ide = one(vm, "Ide");
    int seen = 0;
    for (Method m : ide.methods()) {
      if (m.isNative() || m.isAbstract()) continue;
      byte[] b = m.bytecodes();
      long n;
      try {
        List<Location> ls = m.allLineLocations();
        n = ls.get(ls.size() - 1).codeIndex() + 1;
      } catch (AbsentInformationException e) {
        continue;
      }
      check(b.length % 26 == 0 && b.length / 26 >= n, "Ide." + m.name() + ": " + b.length + " bytes, 26 per instruction, >= " + n + " instructions");
      seen++;
    }
    check(seen >= 3, seen + " methods of Ide");
    try {
      ide.constantPool();
      check(false, "constantPool() refused");
    } catch (UnsupportedOperationException e) {
      check(true, "constantPool() refused: " + e.getClass().getSimpleName());
    }
  }

  public static void main(String[] a) throws Exception {
    VirtualMachine vm = attach(a[1], a[2]);
    try {
      if (a[0].equals("jvm")) jvm(vm, Paths.get(a[3]));
      else minivm(vm);
    } finally {
      vm.dispose();
    }
    if (failures != 0) {
      System.out.println(failures + " checks failed");
      System.exit(1);
    }
    System.out.println("all checks passed");
  }
}
// SPDX-License-Identifier: Apache-2.0
