#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""adbd stand-in: the device side of adb over TCP, enough for `adb connect`, ddmlib and JDWP.

It plays adbd for tests on a machine with no Android device:

* Listens on 127.0.0.1:PORT for the adb host server (`adb -P P connect 127.0.0.1:PORT`) and
  speaks the adb wire protocol: 24-byte little-endian headers (command, arg0, arg1, data_length,
  data_crc32, magic = command ^ 0xffffffff). CNXN is answered with a `device::` banner and no
  AUTH; OPEN/OKAY/WRTE/CLSE streams keep one WRTE outstanding per stream (the next one only
  after the host's OKAY), and every WRTE from the host is answered with OKAY once its bytes are
  consumed. Version 0x01000001 (adb >= 27) lets both sides skip the checksum; older hosts get it
  checked. Outgoing packets always carry the byte-sum checksum (harmless when skipped).
* Owns the JDWP control socket (default `@jdwp-control`; '@' = abstract namespace) in both
  forms: SOCK_STREAM reading the pid as 4 hex chars (Android <= 7) and SOCK_SEQPACKET reading a
  raw host-order u32 (Android 9-11). A hex pid cut to 4 digits (pid > 0xffff) is matched to the
  peer's SO_PEERCRED pid.
* Services: `track-jdwp` (4-hex-digit length + decimal "pid\\n" lines, re-sent on every
  change), `jdwp` (the list once, then close), `jdwp:<pid>` (a socketpair whose far end goes to
  the VM via sendmsg SCM_RIGHTS with a 1-byte payload, the near end relayed to the adb stream;
  or, for a pid given with --tcp-vm PID:PORT, a TCP connection to 127.0.0.1:PORT relayed the
  same way), `shell:` commands ddmlib runs on connect (getprop, getprop KEY, echo $VAR, id ...).
  Every service asked for is logged; unknown ones are refused with CLSE.
* Synthetic VMs (--synthetic-vms N, --silent-vm PID): pids with no process behind them, served
  inside the stand-in so that hundreds of VMs cost next to nothing. A synthetic VM answers the
  JDWP handshake, HELO (version 1, its pid, "standin-synthetic", app name, user id, ABI, flags,
  native-debuggable byte, package name), FEAT, any other DDM chunk with an empty reply, and
  other commands with NOT_IMPLEMENTED; every tenth one sends WAIT before its HELO reply, as a VM
  waiting for a debugger does. A silent VM shakes hands and then never answers anything; SIGUSR1
  takes the silent VMs off the list of JDWP processes, or puts them back. Synthetic VMs are not
  minivm or libddmc: they stand for the adb side's load (streams, relays), not the VM's.

stdlib only. Single-threaded: one selectors loop. Exits on SIGTERM/SIGINT, and with
--die-with-parent also when the process that started it goes away (so a crashed test never
leaves it behind).

Usage: adbd_standin.py [--port N] [--port-file F] [--control @name] [--tcp-vm PID:PORT]...
       [--synthetic-vms N] [--synthetic-base PID] [--silent-vm PID]... [--log F]
       [--die-with-parent] [-v]
Prints "adbd-standin: ready port=N control=NAME" on stdout once it listens.
"""
import argparse
import array
import os
import selectors
import signal
import socket
import struct
import sys
import time

A_SYNC = 0x434E5953
A_CNXN = 0x4E584E43
A_AUTH = 0x48545541
A_OPEN = 0x4E45504F
A_OKAY = 0x59414B4F
A_CLSE = 0x45534C43
A_WRTE = 0x45545257
A_STLS = 0x534C5453
NAMES = {A_SYNC: "SYNC", A_CNXN: "CNXN", A_AUTH: "AUTH", A_OPEN: "OPEN", A_OKAY: "OKAY",
         A_CLSE: "CLSE", A_WRTE: "WRTE", A_STLS: "STLS"}
A_VERSION_MIN = 0x01000000
A_VERSION_SKIP_CHECKSUM = 0x01000001
MAX_PAYLOAD = 256 * 1024
HDR = struct.Struct("<6I")

PROPS = {
    "ro.build.version.sdk": "29",
    "ro.build.version.release": "10",
    "ro.build.version.codename": "REL",
    "ro.build.type": "userdebug",
    "ro.build.tags": "test-keys",
    "ro.build.id": "DDMC.STANDIN",
    "ro.build.fingerprint": "libddmc/minivm/minivm:10/DDMC.STANDIN/1:userdebug/test-keys",
    "ro.build.characteristics": "default",
    "ro.product.manufacturer": "libddmc",
    "ro.product.brand": "libddmc",
    "ro.product.name": "minivm",
    "ro.product.model": "minivm",
    "ro.product.device": "minivm",
    "ro.product.cpu.abi": "x86_64",
    "ro.product.cpu.abilist": "x86_64",
    "ro.product.cpu.abilist64": "x86_64",
    "ro.product.cpu.abilist32": "",
    "ro.debuggable": "1",
    "ro.secure": "0",
    "ro.adb.secure": "0",
    "ro.kernel.qemu": "0",
    "ro.serialno": "standin",
    "ro.boot.serialno": "standin",
    "ro.zygote": "zygote64",
    "dalvik.vm.heapsize": "256m",
    "dalvik.vm.heapgrowthlimit": "192m",
    "persist.sys.timezone": "UTC",
    "persist.sys.locale": "en-US",
    "ro.config.low_ram": "false",
    "init.svc.adbd": "running",
    "sys.boot_completed": "1",
    "dev.bootcomplete": "1",
    "service.bootanim.exit": "1",
}
SHELL_ENV = {"EXTERNAL_STORAGE": "/sdcard", "ANDROID_DATA": "/data", "ANDROID_ROOT": "/system",
             "ANDROID_STORAGE": "/storage", "PATH": "/system/bin", "HOME": "/"}

VERBOSE = False
LOG = sys.stderr


def log(msg):
    LOG.write("%.3f adbd-standin: %s\n" % (time.time(), msg))
    LOG.flush()


def dlog(msg):
    if VERBOSE:
        log(msg)


class Loop:
    """A selectors loop whose registrations are objects with on_event(mask)."""

    def __init__(self):
        self.sel = selectors.DefaultSelector()
        self.running = True

    def want(self, obj, sock, events):
        try:
            key = self.sel.get_key(sock)
        except (KeyError, ValueError):
            key = None
        if key is None:
            if events:
                self.sel.register(sock, events, obj)
        elif events == 0:
            self.sel.unregister(sock)
        elif key.events != events:
            self.sel.modify(sock, events, obj)

    def drop(self, sock):
        try:
            self.sel.unregister(sock)
        except (KeyError, ValueError):
            pass

    def run(self, tick):
        while self.running:
            for key, mask in self.sel.select(timeout=0.25):
                try:
                    key.data.on_event(mask)
                except Exception as e:  # one broken peer must not take the stand-in down
                    log("error handling %r: %s: %s" % (key.data, type(e).__name__, e))
                    closer = getattr(key.data, "fail", None)
                    if closer:
                        closer()
                    else:
                        self.drop(key.fileobj)
            tick()


# --------------------------------------------------------------------------- JDWP processes

class Registry:
    """The VMs adbd knows: pid -> a control connection or a TCP endpoint."""

    def __init__(self):
        self.procs = {}        # pid -> Proc
        self.trackers = set()  # TrackJdwp streams

    def pids(self):
        return sorted(self.procs)

    def add(self, proc):
        old = self.procs.get(proc.pid)
        if old is not None and old is not proc:
            log("pid %d announced again; replacing the old entry" % proc.pid)
            old.close(notify=False)
        self.procs[proc.pid] = proc
        self.changed()

    def remove(self, proc):
        if self.procs.get(proc.pid) is proc:
            del self.procs[proc.pid]
            self.changed()

    def list_text(self):
        return "".join("%d\n" % p for p in self.pids())

    def changed(self):
        pids = self.pids()
        shown = " ".join(str(p) for p in pids[:20]) + (" ... (%d in all)" % len(pids) if len(pids) > 20 else "")
        log("jdwp processes: %s" % (shown or "(none)"))
        for t in list(self.trackers):
            t.send_list()


class ControlProc:
    """One VM connected to the control socket."""

    def __init__(self, loop, reg, sock, seqpacket):
        self.loop, self.reg, self.sock, self.seqpacket = loop, reg, sock, seqpacket
        self.pid = None
        self.buf = b""
        self.pending_fds = []
        self.closed = False
        try:
            cred = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            self.peer_pid, self.peer_uid, _ = struct.unpack("3i", cred)
        except OSError:
            self.peer_pid, self.peer_uid = -1, -1
        sock.setblocking(False)
        loop.want(self, sock, selectors.EVENT_READ)

    def __repr__(self):
        return "<vm pid=%s peer=%s>" % (self.pid, self.peer_pid)

    def on_event(self, mask):
        if mask & selectors.EVENT_WRITE:
            self.flush_fds()
        if mask & selectors.EVENT_READ:
            self.on_readable()

    def on_readable(self):
        try:
            data = self.sock.recv(64)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            if self.pid is not None:
                log("vm pid %d left (control socket closed)" % self.pid)
            self.close()
            return
        if self.pid is not None:
            log("vm pid %d sent %d unexpected bytes on the control socket" % (self.pid, len(data)))
            return
        if self.seqpacket:
            self.announce(data)
        else:
            self.buf += data
            if len(self.buf) >= 4:
                self.announce(self.buf[:4])
                if len(self.buf) > 4:
                    log("pid announcement followed by %d extra bytes" % (len(self.buf) - 4))

    def announce(self, msg):
        pid = None
        how = ""
        text = msg[:4].decode("ascii", "replace")
        if len(msg) == 4 and all(c in "0123456789abcdefABCDEF" for c in text):
            pid = int(text, 16)
            how = "hex4 '%s'" % text
            # Dalvik's snprintf(buf, 5, "%04x") keeps the first 4 digits of a bigger pid.
            if self.peer_pid > 0xFFFF and ("%04x" % self.peer_pid)[:4] == text.lower():
                log("pid %d was announced cut to '%s'; using SO_PEERCRED" % (self.peer_pid, text))
                pid = self.peer_pid
        elif len(msg) == 4:
            pid = struct.unpack("=I", msg)[0]
            how = "raw32"
        elif len(msg) == 8:
            pid = struct.unpack("=Q", msg)[0]
            how = "raw64"
        if pid is None or pid <= 0:
            log("bad pid announcement %r from peer pid %d; closing" % (msg, self.peer_pid))
            self.close()
            return
        if self.peer_pid > 0 and pid != self.peer_pid:
            log("note: announced pid %d differs from SO_PEERCRED pid %d" % (pid, self.peer_pid))
        self.pid = pid
        log("vm pid %d announced (%s, %s, uid %d)" % (pid, how, "seqpacket" if self.seqpacket else "stream",
                                                     self.peer_uid))
        self.reg.add(self)

    def connect_debugger(self):
        """Returns the near end of a socketpair whose far end goes to the VM."""
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.pending_fds.append(b)
        self.flush_fds()
        return a

    def flush_fds(self):
        while self.pending_fds and not self.closed:
            b = self.pending_fds[0]
            try:
                self.sock.sendmsg([b"\0"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [b.fileno()]))],
                                  socket.MSG_NOSIGNAL | socket.MSG_DONTWAIT)
            except BlockingIOError:
                break
            except OSError as e:
                log("cannot pass a debugger socket to pid %s: %s" % (self.pid, e))
                self.close()
                return
            self.pending_fds.pop(0)
            b.close()
        if not self.closed:
            self.loop.want(self, self.sock, selectors.EVENT_READ | (selectors.EVENT_WRITE if self.pending_fds else 0))

    def fail(self):
        self.close()

    def close(self, notify=True):
        if self.closed:
            return
        self.closed = True
        self.loop.drop(self.sock)
        self.sock.close()
        for b in self.pending_fds:
            b.close()
        self.pending_fds = []
        if notify and self.pid is not None:
            self.reg.remove(self)


class TcpProc:
    """A VM on dt_socket, registered with --tcp-vm PID:PORT: jdwp:<pid> dials 127.0.0.1:PORT."""

    def __init__(self, pid, port):
        self.pid, self.port = pid, port

    def __repr__(self):
        return "<tcp vm pid=%d port=%d>" % (self.pid, self.port)

    def connect_debugger(self):
        s = socket.create_connection(("127.0.0.1", self.port), timeout=5)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return s

    def close(self, notify=True):
        pass


class SyntheticProc:
    """A pid served by the stand-in itself (see the module doc): jdwp:<pid> gets a SyntheticConn."""

    def __init__(self, loop, pid, index, silent=False):
        self.loop, self.pid, self.index, self.silent = loop, pid, index, silent

    def __repr__(self):
        return "<synthetic vm pid=%d%s>" % (self.pid, " silent" if self.silent else "")

    def connect_debugger(self):
        a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        SyntheticConn(self.loop, self, b)
        return a

    def close(self, notify=True):
        pass


def utf16(s):
    b = s.encode("utf-16-be")
    return struct.pack(">I", len(b) // 2) + b


class SyntheticConn:
    """The VM end of one debugger connection to a synthetic VM."""

    HELO = 0x48454C4F
    FEAT = 0x46454154
    WAIT = 0x57414954

    def __init__(self, loop, proc, sock):
        self.loop, self.proc, self.sock = loop, proc, sock
        sock.setblocking(False)
        self.inbuf = b""
        self.out = bytearray()
        self.shaken = False
        self.next_id = 0x20000001
        self.update()

    def __repr__(self):
        return "<synthetic conn pid=%d>" % self.proc.pid

    def update(self):
        self.loop.want(self, self.sock, selectors.EVENT_READ | (selectors.EVENT_WRITE if self.out else 0))

    def fail(self):
        self.loop.drop(self.sock)
        self.sock.close()

    def send(self, data):
        self.out += data
        self.flush()

    def flush(self):
        while self.out:
            try:
                n = self.sock.send(self.out, socket.MSG_NOSIGNAL | socket.MSG_DONTWAIT)
            except BlockingIOError:
                break
            except OSError:
                self.out.clear()
                break
            del self.out[:n]
        self.update()

    def on_event(self, mask):
        if mask & selectors.EVENT_WRITE:
            self.flush()
        if not mask & selectors.EVENT_READ:
            return
        try:
            data = self.sock.recv(65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self.fail()
            return
        self.inbuf += data
        if not self.shaken:
            if len(self.inbuf) < 14:
                return
            if self.inbuf[:14] != b"JDWP-Handshake":
                self.fail()
                return
            self.inbuf = self.inbuf[14:]
            self.shaken = True
            self.send(b"JDWP-Handshake")
        while len(self.inbuf) >= 11 and not self.proc.silent:
            length, pid_, flags, cset, cmd = struct.unpack(">IIBBB", self.inbuf[:11])
            if length < 11 or length > (1 << 20):
                self.fail()
                return
            if len(self.inbuf) < length:
                return
            body = self.inbuf[11:length]
            self.inbuf = self.inbuf[length:]
            if flags & 0x80:
                continue
            if cset != 199 or cmd != 1 or len(body) < 8:
                self.send(struct.pack(">IIBH", 11, pid_, 0x80, 99))  # NOT_IMPLEMENTED
                continue
            ctype = struct.unpack(">I", body[:4])[0]
            if ctype == self.HELO:
                if self.proc.index % 10 == 9:
                    self.command(self.WAIT, b"\0")
                self.reply(pid_, self.HELO, self.helo())
            elif ctype == self.FEAT:
                feats = ["hprof-heap-dump", "method-trace-profiling"]
                self.reply(pid_, self.FEAT, struct.pack(">I", len(feats)) + b"".join(utf16(f) for f in feats))
            else:
                self.send(struct.pack(">IIBH", 11, pid_, 0x80, 0))

    def helo(self):
        i = self.proc.index
        name = "com.example.synth%03d" % i
        return (struct.pack(">IIII", 1, self.proc.pid, len("standin-synthetic"), len(name)) +
                "standin-synthetic".encode("utf-16-be") + name.encode("utf-16-be") +
                struct.pack(">i", i % 3 * 10) + utf16("x86_64" if i % 2 == 0 else "arm64-v8a") + utf16("") +
                b"\0" + utf16(name))

    def reply(self, id_, ctype, payload):
        body = struct.pack(">II", ctype, len(payload)) + payload
        self.send(struct.pack(">IIBH", 11 + len(body), id_, 0x80, 0) + body)

    def command(self, ctype, payload):
        body = struct.pack(">II", ctype, len(payload)) + payload
        self.send(struct.pack(">IIBBB", 11 + len(body), self.next_id, 0, 199, 1) + body)
        self.next_id += 1


class ControlListener:
    def __init__(self, loop, reg, name, seqpacket):
        self.loop, self.reg, self.seqpacket = loop, reg, seqpacket
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET if seqpacket else socket.SOCK_STREAM)
        addr = "\0" + name[1:] if name.startswith("@") else name
        if not name.startswith("@") and os.path.exists(name):
            os.unlink(name)
        self.sock.bind(addr)
        self.sock.listen(64)
        self.sock.setblocking(False)
        loop.want(self, self.sock, selectors.EVENT_READ)

    def on_event(self, mask):
        try:
            s, _ = self.sock.accept()
        except BlockingIOError:
            return
        ControlProc(self.loop, self.reg, s, self.seqpacket)


# --------------------------------------------------------------------------- adb transport

class Stream:
    """A device-side adb stream: queues bytes for the host, one WRTE outstanding at a time."""

    def __init__(self, dev, local_id, remote_id, service):
        self.dev, self.local_id, self.remote_id, self.service = dev, local_id, remote_id, service
        self.out = bytearray()
        self.awaiting_okay = False
        self.closing = False
        self.closed = False

    def __repr__(self):
        return "<stream %d/%d %s>" % (self.local_id, self.remote_id, self.service)

    def start(self):
        pass

    def write(self, data):
        if self.closed or self.closing:
            return
        self.out += data
        self.pump()

    def pump(self):
        if self.closed or self.awaiting_okay:
            return
        if self.out:
            n = min(len(self.out), self.dev.max_payload)
            chunk = bytes(self.out[:n])
            del self.out[:n]
            self.awaiting_okay = True
            self.dev.send(A_WRTE, self.local_id, self.remote_id, chunk)
        elif self.closing:
            self.dev.send(A_CLSE, self.local_id, self.remote_id)
            self.finish()

    def on_okay(self):
        self.awaiting_okay = False
        self.pump()
        self.drained()

    def drained(self):
        pass

    def on_data(self, data):
        dlog("%r: %d bytes from the host ignored" % (self, len(data)))
        self.ack()

    def ack(self):
        if not self.closed:
            self.dev.send(A_OKAY, self.local_id, self.remote_id)

    def close_when_drained(self):
        self.closing = True
        self.pump()

    def finish(self):
        """Forget the stream (the CLSE went out, or the host closed it)."""
        if not self.closed:
            self.closed = True
            self.dev.streams.pop(self.local_id, None)
            self.cleanup()

    def cleanup(self):
        pass


class OneShot(Stream):
    def __init__(self, dev, lid, rid, service, payload):
        super().__init__(dev, lid, rid, service)
        self.payload = payload

    def start(self):
        self.write(self.payload)
        self.close_when_drained()


class TrackJdwp(Stream):
    def start(self):
        self.dev.reg.trackers.add(self)
        self.send_list()

    def send_list(self):
        body = self.dev.reg.list_text().encode()
        self.write(b"%04x" % len(body) + body)

    def cleanup(self):
        self.dev.reg.trackers.discard(self)


class Relay(Stream):
    """Bytes between the adb stream and a socket (the near end of the VM's socketpair, or TCP)."""

    def __init__(self, dev, lid, rid, service, sock):
        super().__init__(dev, lid, rid, service)
        self.sock = sock
        sock.setblocking(False)
        self.to_sock = bytearray()
        self.ack_pending = False
        self.sock_eof = False
        self.update()

    def update(self):
        if self.closed:
            return
        ev = 0
        if not self.awaiting_okay and not self.out and not self.sock_eof:
            ev |= selectors.EVENT_READ
        if self.to_sock:
            ev |= selectors.EVENT_WRITE
        self.dev.loop.want(self, self.sock, ev)

    def on_event(self, mask):
        if mask & selectors.EVENT_WRITE:
            self.flush()
        if mask & selectors.EVENT_READ and not self.closed:
            try:
                data = self.sock.recv(self.dev.max_payload)
            except BlockingIOError:
                data = None
            except OSError:
                data = b""
            if data == b"":
                dlog("%r: the VM side closed" % self)
                self.sock_eof = True
                self.close_when_drained()
            elif data:
                self.write(data)
        self.update()

    def fail(self):
        self.sock_eof = True
        self.close_when_drained()
        self.update()

    def drained(self):
        self.update()

    def on_data(self, data):
        self.to_sock += data
        self.ack_pending = True
        self.flush()
        self.update()

    def flush(self):
        while self.to_sock and not self.closed:
            try:
                n = self.sock.send(self.to_sock, socket.MSG_NOSIGNAL | socket.MSG_DONTWAIT)
            except BlockingIOError:
                break
            except OSError:
                self.to_sock.clear()
                self.sock_eof = True
                self.close_when_drained()
                return
            del self.to_sock[:n]
        if not self.to_sock and self.ack_pending:
            # OKAY only once the VM side took the bytes: the host's next WRTE waits for it.
            self.ack_pending = False
            self.ack()

    def cleanup(self):
        self.dev.loop.drop(self.sock)
        self.sock.close()


def shell_output(cmd):
    """What a tiny /system/bin/sh prints for the commands ddmlib and tests run. None: unknown."""
    cmd = cmd.strip()
    for suffix in ("2>/dev/null", "2> /dev/null"):
        if cmd.endswith(suffix):
            cmd = cmd[: -len(suffix)].strip()
    words = cmd.split()
    if not words:
        return ""
    if words[0] == "getprop":
        if len(words) == 1:
            return "".join("[%s]: [%s]\n" % (k, v) for k, v in sorted(PROPS.items()))
        return PROPS.get(words[1], "") + "\n"
    if words[0] == "echo":
        out = []
        for w in words[1:]:
            out.append(SHELL_ENV.get(w[1:], "") if w.startswith("$") else w)
        return " ".join(out) + "\n"
    if words[0] == "id":
        return "uid=2000(shell) gid=2000(shell) groups=2000(shell) context=u:r:shell:s0\n"
    if words[0] == "whoami":
        return "shell\n"
    if words[0] == "true":
        return ""
    return None


class Device:
    """One adb host connection (TCP)."""

    def __init__(self, loop, reg, sock, addr):
        self.loop, self.reg, self.sock, self.addr = loop, reg, sock, addr
        sock.setblocking(False)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.inbuf = bytearray()
        self.outbuf = bytearray()
        self.version = A_VERSION_MIN
        self.max_payload = 4096
        self.online = False
        self.streams = {}
        self.next_id = 1
        self.closed = False
        log("adb host connected from %s:%d" % addr)
        loop.want(self, sock, selectors.EVENT_READ)

    def __repr__(self):
        return "<adb host %s:%d>" % self.addr

    # ---- wire
    def send(self, cmd, arg0, arg1, data=b""):
        if self.closed:
            return
        dlog("-> %s %d %d %d bytes" % (NAMES.get(cmd, hex(cmd)), arg0, arg1, len(data)))
        self.outbuf += HDR.pack(cmd, arg0, arg1, len(data), sum(data) & 0xFFFFFFFF, cmd ^ 0xFFFFFFFF) + data
        self.flush()

    def flush(self):
        while self.outbuf:
            try:
                n = self.sock.send(self.outbuf, socket.MSG_NOSIGNAL | socket.MSG_DONTWAIT)
            except BlockingIOError:
                break
            except OSError as e:
                log("adb host %s:%d: send failed: %s" % (self.addr + (e,)))
                self.close()
                return
            del self.outbuf[:n]
        self.loop.want(self, self.sock, selectors.EVENT_READ | (selectors.EVENT_WRITE if self.outbuf else 0))

    def on_event(self, mask):
        if mask & selectors.EVENT_WRITE:
            self.flush()
        if mask & selectors.EVENT_READ and not self.closed:
            try:
                data = self.sock.recv(1 << 20)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                log("adb host %s:%d disconnected" % self.addr)
                self.close()
                return
            self.inbuf += data
            self.parse()

    def parse(self):
        while len(self.inbuf) >= HDR.size and not self.closed:
            cmd, a0, a1, n, crc, magic = HDR.unpack_from(self.inbuf)
            if magic != cmd ^ 0xFFFFFFFF:
                log("bad magic 0x%08x for command 0x%08x; dropping the host" % (magic, cmd))
                self.close()
                return
            if n > max(MAX_PAYLOAD, self.max_payload) * 4:
                log("payload of %d bytes is too big; dropping the host" % n)
                self.close()
                return
            if len(self.inbuf) < HDR.size + n:
                return
            data = bytes(self.inbuf[HDR.size:HDR.size + n])
            del self.inbuf[:HDR.size + n]
            if self.version < A_VERSION_SKIP_CHECKSUM and cmd != A_CNXN and (sum(data) & 0xFFFFFFFF) != crc:
                log("checksum mismatch on %s; dropping the packet" % NAMES.get(cmd, hex(cmd)))
                continue
            dlog("<- %s %d %d %d bytes" % (NAMES.get(cmd, hex(cmd)), a0, a1, n))
            self.handle(cmd, a0, a1, data)

    # ---- protocol
    def handle(self, cmd, a0, a1, data):
        if cmd == A_CNXN:
            self.on_cnxn(a0, a1, data)
            return
        if not self.online:
            log("%s before CNXN ignored" % NAMES.get(cmd, hex(cmd)))
            return
        if cmd == A_OPEN:
            self.on_open(a0, data.rstrip(b"\0").decode("utf-8", "replace"))
        elif cmd == A_OKAY:
            s = self.streams.get(a1)
            if s is not None:
                if s.remote_id != a0:
                    s.remote_id = a0
                s.on_okay()
        elif cmd == A_WRTE:
            s = self.streams.get(a1)
            if s is None:
                # The host wrote to a stream we already closed: tell it again.
                self.send(A_CLSE, 0, a0)
            else:
                s.on_data(data)
        elif cmd == A_CLSE:
            s = self.streams.get(a1)
            if s is not None:
                dlog("host closed %r" % s)
                s.finish()
        elif cmd == A_AUTH:
            log("unexpected AUTH (we never ask for it); ignored")
        else:
            log("unknown command 0x%08x ignored" % cmd)

    def on_cnxn(self, version, maxdata, banner):
        log("CNXN from host: version 0x%08x maxdata %d banner %r" % (version, maxdata, banner.rstrip(b"\0").decode(
            "utf-8", "replace")))
        for s in list(self.streams.values()):
            s.finish()
        self.version = min(version, A_VERSION_SKIP_CHECKSUM)
        self.max_payload = min(maxdata, MAX_PAYLOAD) if maxdata > 0 else 4096
        self.online = True
        banner = ("device::ro.product.name=%s;ro.product.model=%s;ro.product.device=%s;features=cmd" %
                  (PROPS["ro.product.name"], PROPS["ro.product.model"], PROPS["ro.product.device"]))
        # Old hosts (version 0x01000000) expect the banner NUL-terminated; newer ones cope with both.
        self.send(A_CNXN, self.version, MAX_PAYLOAD, banner.encode())

    def on_open(self, remote_id, service):
        log("service requested: %r" % service)
        lid = self.next_id
        self.next_id += 1
        s = self.make_stream(lid, remote_id, service)
        if s is None:
            log("service %r refused (CLSE)" % service)
            self.send(A_CLSE, 0, remote_id)
            return
        self.streams[lid] = s
        self.send(A_OKAY, lid, remote_id)
        s.start()

    def make_stream(self, lid, rid, service):
        if service == "track-jdwp":
            return TrackJdwp(self, lid, rid, service)
        if service == "jdwp":
            return OneShot(self, lid, rid, service, self.reg.list_text().encode())
        if service.startswith("jdwp:"):
            try:
                pid = int(service[5:])
            except ValueError:
                return None
            proc = self.reg.procs.get(pid)
            if proc is None:
                log("jdwp:%d: no such process" % pid)
                return None
            try:
                sock = proc.connect_debugger()
            except OSError as e:
                log("jdwp:%d: %s" % (pid, e))
                return None
            log("jdwp:%d: debugger connection handed to %r" % (pid, proc))
            return Relay(self, lid, rid, service, sock)
        if service.startswith("shell:") or service.startswith("exec:"):
            cmd = service.split(":", 1)[1]
            out = shell_output(cmd)
            if out is None:
                log("shell command %r unknown: empty output" % cmd)
                out = ""
            return OneShot(self, lid, rid, service, out.encode())
        return None

    def fail(self):
        self.close()

    def close(self):
        if self.closed:
            return
        self.closed = True
        for s in list(self.streams.values()):
            s.finish()
        self.loop.drop(self.sock)
        self.sock.close()


class HostListener:
    def __init__(self, loop, reg, port):
        self.loop, self.reg = loop, reg
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", port))
        self.sock.listen(16)
        self.sock.setblocking(False)
        self.port = self.sock.getsockname()[1]
        loop.want(self, self.sock, selectors.EVENT_READ)

    def on_event(self, mask):
        try:
            s, addr = self.sock.accept()
        except BlockingIOError:
            return
        Device(self.loop, self.reg, s, addr)


def main():
    global VERBOSE, LOG
    ap = argparse.ArgumentParser(description="adbd stand-in for tests (adb over TCP + @jdwp-control)")
    ap.add_argument("--port", type=int, default=0, help="TCP port on 127.0.0.1 (0: any free one)")
    ap.add_argument("--port-file", help="write the port here once listening")
    ap.add_argument("--control", default="@jdwp-control", help="control socket name ('@' = abstract)")
    ap.add_argument("--no-seqpacket", action="store_true", help="only the SOCK_STREAM control socket")
    ap.add_argument("--tcp-vm", action="append", default=[], metavar="PID:PORT",
                    help="a dt_socket VM: jdwp:PID relays to 127.0.0.1:PORT (repeatable)")
    ap.add_argument("--synthetic-vms", type=int, default=0, metavar="N",
                    help="N synthetic DDM-speaking VMs served by the stand-in itself")
    ap.add_argument("--synthetic-base", type=int, default=4200000, metavar="PID",
                    help="the first synthetic pid (default 4200000: above Linux's pid_max, never a real process)")
    ap.add_argument("--silent-vm", action="append", type=int, default=[], metavar="PID",
                    help="a synthetic VM that shakes hands and never answers (repeatable)")
    ap.add_argument("--log", help="log file (default stderr)")
    ap.add_argument("--die-with-parent", action="store_true", help="exit when the process that started it exits")
    ap.add_argument("-v", "--verbose", action="store_true", help="log every adb packet")
    args = ap.parse_args()
    VERBOSE = args.verbose
    if args.log:
        LOG = open(args.log, "a", buffering=1)
    if 5555 <= args.port <= 5585:
        ap.error("ports 5555-5585 are where the adb server looks for emulators: pick another")

    loop = Loop()
    reg = Registry()
    ControlListener(loop, reg, args.control, False)
    if not args.no_seqpacket:
        try:
            ControlListener(loop, reg, args.control, True)
        except OSError as e:
            log("no SOCK_SEQPACKET control socket: %s" % e)
    for spec in args.tcp_vm:
        pid, port = spec.split(":")
        reg.procs[int(pid)] = TcpProc(int(pid), int(port))
    for i in range(args.synthetic_vms):
        reg.procs[args.synthetic_base + i] = SyntheticProc(loop, args.synthetic_base + i, i)
    silent = [SyntheticProc(loop, pid, -1, silent=True) for pid in args.silent_vm]
    for proc in silent:
        reg.procs[proc.pid] = proc
    toggles = []
    signal.signal(signal.SIGUSR1, lambda signum, frame: toggles.append(1))
    host = HostListener(loop, reg, args.port)
    while 5555 <= host.port <= 5585:  # a kernel-chosen port in the emulator range: pick again
        host = HostListener(loop, reg, 0)
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % host.port)
        os.rename(tmp, args.port_file)
    log("listening on 127.0.0.1:%d, control socket %s" % (host.port, args.control))
    print("adbd-standin: ready port=%d control=%s" % (host.port, args.control), flush=True)

    def stop(signum, frame):
        loop.running = False

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    parent = os.getppid()

    def tick():
        while toggles:
            toggles.pop()
            shown = any(reg.procs.get(p.pid) is p for p in silent)
            for proc in silent:
                if shown:
                    reg.procs.pop(proc.pid, None)
                else:
                    reg.procs[proc.pid] = proc
            log("SIGUSR1: silent VMs %s" % ("hidden" if shown else "listed"))
            reg.changed()
        if args.die_with_parent and os.getppid() != parent:
            log("parent %d is gone; exiting" % parent)
            loop.running = False

    loop.run(tick)
    log("exiting")


if __name__ == "__main__":
    main()
