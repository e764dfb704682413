package com.android.ddmlib;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A custom chunk sent and received with ddmlib's own packet code, as a DDMS plug-in does:
 * ChunkHandler, allocBuffer / getChunkDataBuf / finishChunkPacket and JdwpAgent.send are
 * package-private in ddmlib 25, hence this class in ddmlib's package (DdmlibE2E's class path puts
 * it beside the jar). Replies and unsolicited chunks of the types passed to listen() are queued.
 */
public final class E2EChunks extends ChunkHandler {
    /** One chunk ddmlib handed to this handler. */
    public static final class Got {
        public final String type;
        public final byte[] data;
        public final boolean isReply;

        Got(String type, byte[] data, boolean isReply) {
            this.type = type;
            this.data = data;
            this.isReply = isReply;
        }
    }

    static final E2EChunks INSTANCE = new E2EChunks();
    static final BlockingQueue<Got> got = new LinkedBlockingQueue<>();

    private E2EChunks() {}

    /** Sends [type][data] to c; its reply, if it has a chunk, is queued. */
    public static void send(Client c, String type, byte[] data) throws IOException {
        ByteBuffer buf = allocBuffer(data.length);
        JdwpPacket packet = new JdwpPacket(buf);
        ByteBuffer chunk = getChunkDataBuf(buf);
        chunk.put(data);
        finishChunkPacket(packet, type(type), chunk.position());
        c.send(packet, INSTANCE);
    }

    /** Unsolicited chunks of type from every client are queued from now on. */
    public static void listen(String type) {
        MonitorThread.getInstance().getDdmExtension().registerHandler(type(type), INSTANCE);
    }

    /** The next chunk queued within ms, or null. */
    public static Got next(long ms) throws InterruptedException {
        return got.poll(ms, TimeUnit.MILLISECONDS);
    }

    /** [u4 code][u4 n][UTF-16 message] of a FAIL chunk's data, as "code: message". */
    public static String failText(byte[] data) {
        ByteBuffer b = ByteBuffer.wrap(data).order(CHUNK_ORDER);
        int code = b.getInt();
        int n = b.getInt();
        return code + ": " + getString(b, n);
    }

    @Override
    void clientReady(Client client) {}

    @Override
    void clientDisconnected(Client client) {}

    @Override
    void handleChunk(Client client, int type, ByteBuffer data, boolean isReply, int msgId) {
        byte[] b = new byte[data.remaining()];
        data.get(b);
        got.add(new Got(name(type), b, isReply));
    }
}
// SPDX-License-Identifier: Apache-2.0
