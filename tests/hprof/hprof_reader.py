#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A strict hprof reader for the tests, written from
docs/protocol/profiling.md §6 alone (it shares no code
with the library's writer or host/hprof.c).

    hprof_reader.py FILE [--json] [--census CENSUS]

Reads "JAVA PROFILE 1.0.3" (Android) and "JAVA PROFILE 1.0.2" (standard, what hprof-conv writes)
with 4-byte ids. Walks every record and every heap sub-record with its exact length and fails
(exit 1, one line on stderr) on anything that does not add up:
  - a record or sub-record past its end, an unknown tag or sub-tag, 0xC3 (never to be written),
    an Android-only sub-tag in a 1.0.2 file, bytes after HEAP DUMP END, no HEAP DUMP END;
  - ids: a string, class or object defined twice; a reference to a string, class, object or
    stack trace that is not in the file (0 is null); a CLASS DUMP without a LOAD CLASS for it or
    the reverse; a LOAD CLASS name that is not a string;
  - an INSTANCE DUMP whose byte count is not the sum of its class's and superclasses' field
    sizes, a field value of a type its field does not have (object fields must name objects);
  - strings that are not UTF-8.
With --json it prints what it found (per class: instances; per array type: arrays; roots by kind).
With --census FILE (minivm's MINIVM_HPROF_CENSUS output: "objects bytes signature" lines) it
also checks that every type's count in the dump equals the VM's own, both ways.
"""
import json
import struct
import sys

SIZES = {2: 4, 4: 1, 5: 2, 6: 4, 7: 8, 8: 1, 9: 2, 10: 4, 11: 8}
PRIM_NAMES = {4: "boolean", 5: "char", 6: "float", 7: "double", 8: "byte", 9: "short", 10: "int", 11: "long"}
ROOTS = {0xFF: ("unknown", 0), 0x01: ("jni-global", 4), 0x02: ("jni-local", 8), 0x03: ("java-frame", 8),
         0x04: ("native-stack", 4), 0x05: ("sticky-class", 0), 0x06: ("thread-block", 4),
         0x07: ("monitor-used", 0), 0x08: ("thread-object", 8)}
ANDROID_ROOTS = {0x89: ("interned-string", 0), 0x8A: ("finalizing", 0), 0x8B: ("debugger", 0),
                 0x8C: ("reference-cleanup", 0), 0x8D: ("vm-internal", 0), 0x8E: ("jni-monitor", 8),
                 0x90: ("unreachable", 0)}


class Bad(Exception):
    pass


class Cursor:
    def __init__(self, data, start, end):
        self.d, self.p, self.end = data, start, end

    def take(self, n, what):
        if n < 0 or self.p + n > self.end:
            raise Bad("%s at offset %d runs past its record (ends at %d)" % (what, self.p, self.end))
        b = self.d[self.p:self.p + n]
        self.p += n
        return b

    def u1(self, what): return self.take(1, what)[0]
    def u2(self, what): return struct.unpack(">H", self.take(2, what))[0]
    def u4(self, what): return struct.unpack(">I", self.take(4, what))[0]
    def id(self, what): return self.u4(what)


class Dump:
    def __init__(self):
        self.version = None
        self.strings = {}
        self.load_classes = {}      # class id -> (serial, name id)
        self.class_serials = set()
        self.traces = set()
        self.frames = set()
        self.classes = {}           # class id -> dict
        self.objects = {}           # id -> ("instance", class id) / ("objarray", class id) / ("primarray", type)
        self.instances = []         # (id, class id, value bytes)
        self.elements = {}          # object array id -> its element ids
        self.obj_refs = []          # (from, to) object references to resolve
        self.string_refs = []
        self.roots = {}
        self.thread_serials = set()
        self.heap_infos = 0
        self.ended = False

    def define(self, oid, what, where):
        if oid == 0:
            raise Bad("%s at offset %d has id 0" % (what, where))
        if oid in self.objects or oid in self.classes:
            raise Bad("id 0x%x defined twice (the second: %s at offset %d)" % (oid, what, where))


def read_value(c, t, what):
    if t not in SIZES:
        raise Bad("%s: unknown basic type %d at offset %d" % (what, t, c.p))
    return c.take(SIZES[t], what)


def heap_records(dump, data, start, end):
    c = Cursor(data, start, end)
    android = dump.version == "1.0.3"
    while c.p < end:
        at = c.p
        tag = c.u1("sub-record tag")
        if tag in ROOTS or (android and tag in ANDROID_ROOTS):
            name, extra = (ROOTS.get(tag) or ANDROID_ROOTS[tag])
            obj = c.id(name)
            rest = c.take(extra, name)
            if tag == 0x01:
                pass  # the JNI global ref's own id: not an object of the heap
            if tag in (0x02, 0x03, 0x04, 0x06, 0x08, 0x8E):
                dump.thread_serials.add(struct.unpack(">I", rest[:4])[0])
            if tag == 0x08:
                st = struct.unpack(">I", rest[4:8])[0]
                if st != 0xFFFFFFFF:
                    dump.obj_refs.append(("trace", st, at))
            dump.roots[name] = dump.roots.get(name, 0) + 1
            dump.obj_refs.append(("root " + name, obj, at))
        elif tag == 0xFE and android:
            c.u4("heap id")
            dump.string_refs.append(("heap name", c.id("heap name"), at))
            dump.heap_infos += 1
        elif tag == 0x20:
            cid = c.id("class id")
            dump.define(cid, "CLASS DUMP", at)
            st = c.u4("stack serial")
            sup = c.id("super")
            loader = c.id("loader")
            for w in ("signers", "protection domain", "reserved", "reserved"):
                c.id(w)
            size = c.u4("instance size")
            for _ in range(c.u2("constant count")):
                c.u2("constant index")
                read_value(c, c.u1("constant type"), "constant")
            statics = []
            for _ in range(c.u2("static count")):
                nid = c.id("static name")
                t = c.u1("static type")
                v = read_value(c, t, "static value")
                dump.string_refs.append(("static name", nid, at))
                if t == 2 and struct.unpack(">I", v)[0]:
                    dump.obj_refs.append(("static", struct.unpack(">I", v)[0], at))
                statics.append((nid, t))
            fields, names = [], []
            for _ in range(c.u2("field count")):
                nid = c.id("field name")
                t = c.u1("field type")
                if t not in SIZES:
                    raise Bad("field of unknown type %d at offset %d" % (t, c.p))
                dump.string_refs.append(("field name", nid, at))
                fields.append(t)
                names.append(nid)
            dump.classes[cid] = {"super": sup, "fields": fields, "size": size, "at": at, "statics": statics,
                                 "names": names}
            dump.obj_refs.append(("trace", st, at))
            if sup:
                dump.obj_refs.append(("superclass", sup, at))
            if loader:
                dump.obj_refs.append(("class loader", loader, at))
        elif tag == 0x21:
            oid = c.id("object id")
            dump.define(oid, "INSTANCE DUMP", at)
            st = c.u4("stack serial")
            cid = c.id("class id")
            n = c.u4("byte count")
            vals = c.take(n, "instance values")
            dump.objects[oid] = ("instance", cid)
            dump.instances.append((oid, cid, vals, at))
            dump.obj_refs.append(("trace", st, at))
        elif tag == 0x22:
            oid = c.id("array id")
            dump.define(oid, "OBJECT ARRAY DUMP", at)
            st = c.u4("stack serial")
            n = c.u4("count")
            cid = c.id("array class")
            elems = c.take(4 * n, "elements")
            dump.objects[oid] = ("objarray", cid)
            dump.elements[oid] = [e for (e,) in struct.iter_unpack(">I", elems)]
            dump.obj_refs.append(("array class", cid, at))
            dump.obj_refs.append(("trace", st, at))
            for (e,) in struct.iter_unpack(">I", elems):
                if e:
                    dump.obj_refs.append(("array element", e, at))
        elif tag == 0x23:
            oid = c.id("array id")
            dump.define(oid, "PRIMITIVE ARRAY DUMP", at)
            st = c.u4("stack serial")
            n = c.u4("count")
            t = c.u1("element type")
            if t not in PRIM_NAMES:
                raise Bad("primitive array of type %d at offset %d" % (t, at))
            c.take(SIZES[t] * n, "elements")
            dump.objects[oid] = ("primarray", t)
            dump.obj_refs.append(("trace", st, at))
        elif tag == 0xC3:
            raise Bad("0xC3 PRIMITIVE ARRAY NODATA at offset %d (hprof-conv corrupts it: never write it)" % at)
        else:
            raise Bad("unexpected sub-tag 0x%02x at offset %d in a %s file" % (tag, at, dump.version))


def read(data):
    dump = Dump()
    for v in ("1.0.3", "1.0.2"):
        magic = ("JAVA PROFILE " + v).encode() + b"\0"
        if data.startswith(magic):
            dump.version = v
            break
    else:
        raise Bad("not an hprof 1.0.2 / 1.0.3 file (magic %r)" % data[:20])
    c = Cursor(data, 19, len(data))
    if c.u4("id size") != 4:
        raise Bad("id size is not 4")
    c.take(8, "timestamp")
    while c.p < len(data):
        at = c.p
        if dump.ended:
            raise Bad("record after HEAP DUMP END at offset %d" % at)
        tag = c.u1("record tag")
        c.u4("record time")
        n = c.u4("record length")
        body = Cursor(data, c.p, c.p + n)
        c.take(n, "record 0x%02x body" % tag)
        if tag == 0x01:
            sid = body.id("string id")
            if sid in dump.strings:
                raise Bad("string id %d defined twice (offset %d)" % (sid, at))
            try:
                dump.strings[sid] = bytes(body.take(body.end - body.p, "string")).decode("utf-8")
            except UnicodeDecodeError:
                raise Bad("string %d at offset %d is not UTF-8" % (sid, at))
        elif tag == 0x02:
            serial, cid, st, nid = body.u4("serial"), body.id("class"), body.u4("trace"), body.id("name")
            if cid in dump.load_classes or serial in dump.class_serials:
                raise Bad("LOAD CLASS of class 0x%x or serial %d twice (offset %d)" % (cid, serial, at))
            dump.load_classes[cid] = (serial, nid)
            dump.class_serials.add(serial)
            dump.string_refs.append(("class name", nid, at))
            dump.obj_refs.append(("trace", st, at))
        elif tag == 0x04:
            fid = body.id("frame id")
            for w in ("method name", "signature", "source file"):
                sid = body.id(w)
                if sid:
                    dump.string_refs.append((w, sid, at))
            body.u4("class serial")
            body.u4("line")
            dump.frames.add(fid)
        elif tag == 0x05:
            serial = body.u4("trace serial")
            body.u4("thread serial")
            for _ in range(body.u4("frame count")):
                dump.obj_refs.append(("frame", body.id("frame"), at))
            dump.traces.add(serial)
        elif tag in (0x0C, 0x1C):
            heap_records(dump, data, body.p, body.end)
            body.p = body.end
        elif tag == 0x2C:
            dump.ended = True
        elif tag in (0x03, 0x06, 0x07, 0x0A, 0x0B, 0x0D, 0x0E):
            body.p = body.end  # standard records the VMs never write: allowed, not checked
        else:
            raise Bad("unknown record tag 0x%02x at offset %d" % (tag, at))
        if body.p != body.end:
            raise Bad("record 0x%02x at offset %d has %d bytes left over" % (tag, at, body.end - body.p))
    if not dump.ended:
        raise Bad("no HEAP DUMP END")
    check(dump)
    return dump


def check(d):
    for what, sid, at in d.string_refs:
        if sid not in d.strings:
            raise Bad("%s at offset %d names string %d, which is not in the file" % (what, at, sid))
    for what, ref, at in d.obj_refs:
        if what == "trace":
            if ref not in d.traces:
                raise Bad("stack trace serial %d (offset %d) is not in the file" % (ref, at))
        elif what == "frame":
            if ref not in d.frames:
                raise Bad("stack frame %d (offset %d) is not in the file" % (ref, at))
        elif what in ("superclass", "array class"):
            if ref not in d.classes:
                raise Bad("%s 0x%x at offset %d is not a CLASS DUMP" % (what, ref, at))
        elif ref not in d.objects and ref not in d.classes:
            raise Bad("%s 0x%x at offset %d is not an object of the dump" % (what, ref, at))
    for cid in d.classes:
        if cid not in d.load_classes:
            raise Bad("CLASS DUMP 0x%x has no LOAD CLASS" % cid)
    for cid in d.load_classes:
        if cid not in d.classes:
            raise Bad("LOAD CLASS 0x%x has no CLASS DUMP" % cid)
    for cid, c in d.classes.items():  # superclass chains end
        seen, k = set(), cid
        while k:
            if k in seen:
                raise Bad("class 0x%x: superclasses form a cycle" % cid)
            seen.add(k)
            k = d.classes[k]["super"]
    for oid, cid, vals, at in d.instances:
        if cid not in d.classes:
            raise Bad("INSTANCE DUMP 0x%x at offset %d: class 0x%x is not a CLASS DUMP" % (oid, at, cid))
        types, k = [], cid
        while k:
            types += d.classes[k]["fields"]
            k = d.classes[k]["super"]
        if sum(SIZES[t] for t in types) != len(vals):
            raise Bad("INSTANCE DUMP 0x%x at offset %d: %d value bytes, its fields take %d"
                      % (oid, at, len(vals), sum(SIZES[t] for t in types)))
        p = 0
        for t in types:
            if t == 2:
                ref = struct.unpack(">I", vals[p:p + 4])[0]
                if ref and ref not in d.objects and ref not in d.classes:
                    raise Bad("INSTANCE DUMP 0x%x at offset %d: a field names 0x%x, not an object" % (oid, at, ref))
            p += SIZES[t]


FORMATS = {2: ">I", 4: ">?", 5: ">H", 6: ">f", 7: ">d", 8: ">b", 9: ">h", 10: ">i", 11: ">q"}


def fields_of(d, vals, cid):
    """An INSTANCE DUMP's values as {field name: value} (a name a subclass shadows keeps the
    subclass's value; references as ids)."""
    out, p = {}, 0
    while cid:
        k = d.classes[cid]
        for t, nid in zip(k["fields"], k["names"]):
            v = struct.unpack(FORMATS[t], vals[p:p + SIZES[t]])[0]
            out.setdefault(d.strings[nid], v)
            p += SIZES[t]
        cid = k["super"]
    return out


def class_name(d, cid):
    return d.strings[d.load_classes[cid][1]]


def summary(d):
    inst, arrays = {}, {}
    for oid, (kind, x) in d.objects.items():
        if kind == "instance":
            n = class_name(d, x)
            inst[n] = inst.get(n, 0) + 1
        else:
            n = class_name(d, x) if kind == "objarray" else PRIM_NAMES[x] + "[]"
            arrays[n] = arrays.get(n, 0) + 1
    return {"version": d.version, "strings": len(d.strings), "classes": len(d.classes),
            "class_names": sorted(class_name(d, c) for c in d.classes),
            "class_objects": sum(1 for c in d.classes if c < 0xF0000000),
            "instances": inst, "arrays": arrays, "roots": d.roots, "heap_infos": d.heap_infos,
            "threads": sorted(d.thread_serials)}


def pretty(sig):
    dims = len(sig) - len(sig.lstrip("["))
    e = sig[dims:]
    prims = {"Z": "boolean", "B": "byte", "C": "char", "S": "short", "I": "int", "J": "long", "F": "float",
             "D": "double"}
    base = e[1:-1].replace("/", ".") if e.startswith("L") else prims.get(e, e)
    return base + "[]" * dims


def check_census(s, path):
    """Every type the VM counted has that many objects in the dump, and nothing else is there."""
    want = {}
    for line in open(path):
        n, _bytes, sig = line.split(None, 2)
        want[sig.strip()] = int(n)
    got = dict(s["instances"])
    for k, v in s["arrays"].items():
        got[k] = got.get(k, 0) + v
    for sig, n in want.items():
        if sig == "Ljava/lang/Class;":  # class objects are CLASS DUMPs, under their own ids
            have = s["class_objects"] + got.pop("java.lang.Class", 0)
        else:
            have = got.pop(pretty(sig), 0)
        if have != n:
            raise Bad("census: the VM has %d %s, the dump %d" % (n, sig, have))
    if got:
        raise Bad("census: the dump has objects the VM did not count: %r" % got)


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    path = args[0]
    try:
        d = read(open(path, "rb").read())
        s = summary(d)
        if "--census" in args:
            check_census(s, args[args.index("--census") + 1])
    except Bad as e:
        print("hprof_reader: %s: %s" % (path, e), file=sys.stderr)
        return 1
    if "--json" in args:
        print(json.dumps(s, indent=1, sort_keys=True))
    else:
        print("%s: hprof %s, %d classes, %d instances, %d arrays, %d roots" % (
            path, s["version"], s["classes"], sum(s["instances"].values()), sum(s["arrays"].values()),
            sum(s["roots"].values())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
