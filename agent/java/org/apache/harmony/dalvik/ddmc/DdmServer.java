package org.apache.harmony.dalvik.ddmc;

import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The app side of DDM: chunk handlers by type, and unsolicited chunks to the DDM peer. Android's
 * class of the same name and signatures. On a JVM, libddmcjdwp.so puts this class on the boot
 * class path and backs its natives with libddmc (agent/README.md); without the agent, handlers
 * are kept but never called and sendChunk drops the chunk, as Android does with no peer.
 *
 * Threads: register, unregister and sendChunk from any thread; handlers run on the JDWP thread.
 * The JDWP thread takes no monitor of this class: an app thread a debugger suspends in the middle
 * of registerHandler cannot stop it from serving the debugger's resume.
 */
public final class DdmServer {
    public static final int CLIENT_PROTOCOL_VERSION = 1;

    /* broadcast's events, as the agent passes them. */
    private static final int CONNECTED = 1;
    private static final int DISCONNECTED = 2;

    private static final ConcurrentHashMap<Integer, ChunkHandler> handlers = new ConcurrentHashMap<>();
    private static final CountDownLatch registrationComplete = new CountDownLatch(1);
    private static volatile boolean registrationTimedOut; /* written by the JDWP thread only */

    private DdmServer() {}

    /**
     * Handles type with handler from now on. Throws NullPointerException (no handler) or
     * RuntimeException when the type has a handler already, or when the VM handles it itself
     * (HELO, THST, HPIF... are libddmc's).
     */
    public static void registerHandler(int type, ChunkHandler handler) {
        if (handler == null) throw new NullPointerException("handler for " + ChunkHandler.name(type) + " is null");
        int rc = nativeRegisterSafe(type); /* idempotent: the agent keeps a type once registered */
        if (rc != 0) {
            throw new RuntimeException("type " + ChunkHandler.name(type) + " cannot be registered: "
                    + (rc == 1 ? "the VM handles it" : "error " + rc));
        }
        if (handlers.putIfAbsent(type, handler) != null) {
            throw new RuntimeException("type " + ChunkHandler.name(type) + " already registered");
        }
    }

    /** Stops handling type; returns its handler, or null. A chunk of it then gets the empty reply. */
    public static ChunkHandler unregisterHandler(int type) {
        return handlers.remove(type);
    }

    /**
     * The app has registered its handlers: chunks that arrived before wait for this (at most once,
     * for at most one second in all) so that a peer's first request finds its handler.
     */
    public static void registrationComplete() {
        registrationComplete.countDown();
    }

    /** Sends chunk to the DDM peer, unsolicited; dropped when there is none. Never blocks. */
    public static void sendChunk(Chunk chunk) {
        if (chunk.offset < 0 || chunk.length < 0 || chunk.offset > chunk.data.length - chunk.length) {
            throw new IndexOutOfBoundsException("chunk offset " + chunk.offset + " length " + chunk.length
                    + " of " + chunk.data.length + " bytes");
        }
        try {
            nativeSendChunk(chunk.type, chunk.data, chunk.offset, chunk.length);
        } catch (UnsatisfiedLinkError e) {
            /* no agent: no peer */
        }
    }

    private static int nativeRegisterSafe(int type) {
        try {
            return nativeRegister(type);
        } catch (UnsatisfiedLinkError e) {
            return 0; /* no agent: kept, never called */
        }
    }

    /* Bound by HotSpot to libddmcjdwp.so's exports of these JNI names, at the first call. 0, 1 (a type of the VM's own) or a libddmc error. */
    private static native int nativeRegister(int type);
    private static native void nativeSendChunk(int type, byte[] data, int offset, int length);

    /* Called by the agent on the JDWP thread: once per DDM session each. */
    private static void broadcast(int event) {
        for (ChunkHandler h : handlers.values()) {
            try {
                if (event == CONNECTED) {
                    h.connected();
                } else if (event == DISCONNECTED) {
                    h.disconnected();
                }
            } catch (RuntimeException | Error e) {
                /* one handler's failure does not keep the others from hearing of the session */
            }
        }
    }

    /*
     * Called by the agent on the JDWP thread for a chunk of a type this class registered. Returns
     * the reply, or null for the empty reply (no handler now). A handler's exception becomes a
     * FAIL chunk here, so the agent only ever sees one when even that fails.
     */
    private static Chunk dispatch(int type, byte[] data, int offset, int length) {
        if (!registrationTimedOut && registrationComplete.getCount() > 0) {
            try {
                if (!registrationComplete.await(1, TimeUnit.SECONDS)) registrationTimedOut = true;
            } catch (InterruptedException e) {
                registrationTimedOut = true;
            }
        }
        ChunkHandler h = handlers.get(type);
        if (h == null) return null;
        try {
            return h.handleChunk(new Chunk(type, data, offset, length));
        } catch (Throwable t) {
            String msg = t.getMessage();
            return ChunkHandler.createFailChunk(1, t.getClass().getName() + (msg != null ? ": " + msg : ""));
        }
    }
}
// SPDX-License-Identifier: Apache-2.0
