/* The target of the hotspot section's queries (bench/bench_hotspot.c): defines CLASSES small
 * classes (Gen0..GenN-1, each a class file of a few dozen bytes built here, so no javac run at
 * bench time) through one class loader, initializes them (loaded and prepared, as a debugger
 * lists them), starts THREADS threads that sleep, prints "MANY ready" and idles until killed.
 *
 *   java Many CLASSES THREADS */
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;

public class Many {
  static final class Loader extends ClassLoader {
    Class<?> define(String name, byte[] b) {
      return defineClass(name, b, 0, b.length);
    }
  }

  /* class NAME extends java.lang.Object {} : the constant pool's two classes and their names. */
  static byte[] classFile(String name) throws IOException {
    ByteArrayOutputStream bo = new ByteArrayOutputStream();
    DataOutputStream o = new DataOutputStream(bo);
    o.writeInt(0xCAFEBABE);
    o.writeShort(0);
    o.writeShort(52);
    o.writeShort(5); // constant pool count: 4 entries
    o.writeByte(1); // #1 Utf8 name
    o.writeUTF(name);
    o.writeByte(7); // #2 Class #1
    o.writeShort(1);
    o.writeByte(1); // #3 Utf8 java/lang/Object
    o.writeUTF("java/lang/Object");
    o.writeByte(7); // #4 Class #3
    o.writeShort(3);
    o.writeShort(0x0021); // public super
    o.writeShort(2);
    o.writeShort(4);
    o.writeShort(0); // interfaces
    o.writeShort(0); // fields
    o.writeShort(0); // methods
    o.writeShort(0); // attributes
    return bo.toByteArray();
  }

  public static void main(String[] args) throws Exception {
    int classes = Integer.parseInt(args[0]), threads = Integer.parseInt(args[1]);
    Loader l = new Loader();
    for (int i = 0; i < classes; i++) {
      l.define("Gen" + i, classFile("Gen" + i));
      Class.forName("Gen" + i, true, l);
    }
    for (int i = 0; i < threads; i++) {
      Thread t = new Thread(() -> {
        while (true) {
          try {
            Thread.sleep(60000);
          } catch (InterruptedException e) {
            return;
          }
        }
      }, "Sleeper-" + i);
      t.setDaemon(true);
      t.start();
    }
    System.out.println("MANY ready");
    while (true) Thread.sleep(60000);
  }
}
// SPDX-License-Identifier: Apache-2.0
