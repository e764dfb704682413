package org.apache.harmony.dalvik.ddmc;

import java.nio.ByteBuffer;

/**
 * One DDM chunk: a 4-byte type and the bytes {@code data[offset, offset + length)}. Android's
 * class of the same name and signatures (libddmc's libddmcjdwp.so gives it to any JVM).
 */
public class Chunk {
    public int type;
    public byte[] data;
    public int offset;
    public int length;

    public Chunk() {}

    public Chunk(int type, byte[] data, int offset, int length) {
        this.type = type;
        this.data = data;
        this.offset = offset;
        this.length = length;
    }

    /** The bytes written so far into buf (from 0 to its position); buf must have an array. */
    public Chunk(int type, ByteBuffer buf) {
        this(type, buf.array(), buf.arrayOffset(), buf.position());
    }
}
// SPDX-License-Identifier: Apache-2.0
