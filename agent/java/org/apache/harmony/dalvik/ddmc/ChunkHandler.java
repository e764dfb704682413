package org.apache.harmony.dalvik.ddmc;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * A handler of one or more chunk types, registered with {@link DdmServer#registerHandler}.
 * Android's class of the same name and signatures. Every method runs on the VM's JDWP thread:
 * a handler that blocks holds up every debugger and DDM request until it returns.
 */
public abstract class ChunkHandler {
    /** DDM is big-endian. */
    public static final ByteOrder CHUNK_ORDER = ByteOrder.BIG_ENDIAN;
    public static final int CHUNK_FAIL = type("FAIL");

    public ChunkHandler() {}

    /** A DDM peer has started talking to the VM (its first DDM packet of this session). */
    public abstract void connected();

    /** The session that called {@link #connected} has ended. */
    public abstract void disconnected();

    /**
     * Answers request (its data is the VM's until this returns). Returns the reply chunk, or null
     * for the empty reply. An exception thrown here reaches the peer as a FAIL chunk with its
     * message; the VM and the next request go on.
     */
    public abstract Chunk handleChunk(Chunk request);

    /** A FAIL chunk: [u4 errorCode][u4 length of msg in UTF-16 units][msg as UTF-16BE]. */
    public static Chunk createFailChunk(int errorCode, String msg) {
        if (msg == null) msg = "";
        ByteBuffer out = ByteBuffer.allocate(8 + msg.length() * 2);
        out.order(CHUNK_ORDER);
        out.putInt(errorCode);
        out.putInt(msg.length());
        putString(out, msg);
        return new Chunk(CHUNK_FAIL, out);
    }

    /** The request's bytes as a big-endian buffer (shared, not copied). */
    public static ByteBuffer wrapChunk(Chunk request) {
        ByteBuffer in = ByteBuffer.wrap(request.data, request.offset, request.length);
        in.order(CHUNK_ORDER);
        return in;
    }

    /** Reads len UTF-16 code units from buf. */
    public static String getString(ByteBuffer buf, int len) {
        char[] s = new char[len];
        for (int i = 0; i < len; i++) s[i] = buf.getChar();
        return new String(s);
    }

    /** Writes str's UTF-16 code units into buf (no length). */
    public static void putString(ByteBuffer buf, String str) {
        for (int i = 0, n = str.length(); i < n; i++) buf.putChar(str.charAt(i));
    }

    /** The type of a four-letter name: type("HELO") == 0x48454c4f. */
    public static int type(String typeName) {
        if (typeName.length() != 4) throw new IllegalArgumentException("Bad type name: " + typeName);
        int t = 0;
        for (int i = 0; i < 4; i++) t = (t << 8) | (typeName.charAt(i) & 0xff);
        return t;
    }

    /** The four-letter name of a type. */
    public static String name(int type) {
        char[] s = new char[4];
        for (int i = 0; i < 4; i++) s[i] = (char) ((type >>> (24 - 8 * i)) & 0xff);
        return new String(s);
    }
}
// SPDX-License-Identifier: Apache-2.0
