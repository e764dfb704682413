import java.nio.ByteBuffer;

import org.apache.harmony.dalvik.ddmc.Chunk;
import org.apache.harmony.dalvik.ddmc.ChunkHandler;
import org.apache.harmony.dalvik.ddmc.DdmServer;

/**
 * An app with chunk handlers of its own, through Android's DDM API (libddmcjdwp-ddm.jar, which
 * libddmcjdwp.so appends to the system class loader's search). ECHO answers ECHO with the bytes reversed; BOOM throws;
 * BADC returns a Chunk whose bounds lie past its array;
 * PUSH has an app thread send PSHD [payload of the PUSH] unsolicited with DdmServer.sendChunk;
 * connected() / disconnected() print their counts.
 */
public class DdmApp {
    static final int ECHO = ChunkHandler.type("ECHO");
    static final int BOOM = ChunkHandler.type("BOOM");
    static final int PUSH = ChunkHandler.type("PUSH");
    static final int PSHD = ChunkHandler.type("PSHD");
    static final int BADC = ChunkHandler.type("BADC");
    static final Object lock = new Object();
    static byte[] toPush;

    static class Handler extends ChunkHandler {
        int connects, disconnects, booms;

        @Override
        public synchronized void connected() {
            System.out.println("DDMAPP connected " + ++connects);
        }

        @Override
        public synchronized void disconnected() {
            System.out.println("DDMAPP disconnected " + ++disconnects);
        }

        @Override
        public Chunk handleChunk(Chunk request) {
            ByteBuffer in = wrapChunk(request);
            if (request.type == ECHO) {
                byte[] out = new byte[request.length];
                for (int i = 0; i < out.length; i++) out[i] = in.get(request.offset + request.length - 1 - i);
                return new Chunk(ECHO, out, 0, out.length);
            }
            if (request.type == BOOM) throw new IllegalStateException("boom " + ++booms);
            if (request.type == BADC) return new Chunk(BADC, new byte[2], 1, 5); /* past its array */
            if (request.type == PUSH) {
                synchronized (lock) {
                    toPush = new byte[request.length];
                    in.get(toPush);
                    lock.notifyAll();
                }
                return null;
            }
            return createFailChunk(1, "DdmApp has no " + name(request.type));
        }
    }

    public static void main(String[] args) throws Exception {
        Handler h = new Handler();
        DdmServer.registerHandler(ECHO, h);
        DdmServer.registerHandler(BOOM, h);
        DdmServer.registerHandler(PUSH, h);
        DdmServer.registerHandler(BADC, h);
        DdmServer.registrationComplete();
        System.out.println("DDMAPP ready (DdmServer from "
                + (DdmServer.class.getClassLoader() == ClassLoader.getSystemClassLoader() ? "the system class loader"
                        : String.valueOf(DdmServer.class.getClassLoader())) + ")");
        for (;;) {
            byte[] p;
            synchronized (lock) {
                while (toPush == null) lock.wait();
                p = toPush;
                toPush = null;
            }
            DdmServer.sendChunk(new Chunk(PSHD, p, 0, p.length));
            System.out.println("DDMAPP pushed " + p.length);
        }
    }
}
// SPDX-License-Identifier: Apache-2.0
