#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Install test of the Debian packages (cmake/packaging.cmake), python3 standard library only.

From a built tree: `cpack -G DEB` into the work directory; each package's control fields and
file list; `dpkg -x` of all of them into one fresh root; the library's SONAME and symbol version;
a consumer program (tests/package/consumer) built against that root with pkg-config and with
CMake's find_package (shared and static), run: it embeds libddmc, listens on 127.0.0.1 and gets a
DDM HELO naming its VM; the unpacked `ddmc` run against minivm (from the build tree) names that
VM; the shipped ELF files (libddmc.so, libddmcjdwp.so, ddmc) hardened as Debian builds them
(cmake/hardening.cmake: BIND_NOW, GNU_RELRO, fortified and stack-protected calls, ddmc a PIE);
lintian on the .debs has no error (E:) and no hardening-* tag, informational ones included. A
missing tool fails the test (scripts/setup.sh installs them all). Every child is bounded by a timeout and killed by pid.
"""
import argparse
import gzip
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

ARGS = None
CHILDREN = []
T0 = time.monotonic()


class Failure(Exception):
    pass


def check(cond, msg, *detail):
    if not cond:
        raise Failure(msg + "".join("\n    " + str(d) for d in detail))


def log(msg):
    print(f"[package {time.monotonic() - T0:5.1f}s] {msg}", flush=True)


def run(cmd, timeout=60, env=None, cwd=None, ok=True):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout,
                       env=env, cwd=cwd)
    if ok:
        check(r.returncode == 0, f"{' '.join(map(str, cmd))}: exit {r.returncode}",
              "stdout: " + r.stdout[-3000:], "stderr: " + r.stderr[-3000:])
    return r


def cleanup(*_):
    for p in CHILDREN:
        if p.poll() is None:
            p.kill()
            p.wait(timeout=5)


def control(deb):
    """The control fields of a .deb as a dict (continuation lines joined with newlines)."""
    out = run(["dpkg-deb", "-f", deb]).stdout
    fields, key = {}, None
    for line in out.splitlines():
        if line[:1] in (" ", "\t") and key:
            fields[key] += "\n" + line[1:]
        elif ":" in line:
            key, val = line.split(":", 1)
            fields[key] = val.strip()
    return fields


def contents(deb):
    """{path: link target or None} of the files (not directories) of a .deb, paths without './'."""
    files = {}
    for line in run(["dpkg-deb", "-c", deb]).stdout.splitlines():
        if line.startswith("d"):
            continue
        m = re.match(r"\S+\s+\S+\s+\d+\s+\S+\s+\S+\s+\./(\S+)(?: -> (\S+))?$", line)
        check(m, f"{deb}: unexpected listing line", line)
        files[m.group(1)] = m.group(2)
    return files


def control_member(deb, name):
    r = subprocess.run(["dpkg-deb", "-I", deb, name], capture_output=True, text=True, timeout=30)
    return r.stdout if r.returncode == 0 else None


def build_packages():
    debs = os.path.join(ARGS.workdir, "debs")
    r = run([ARGS.cpack, "-G", "DEB", "--config", os.path.join(ARGS.build_dir, "CPackConfig.cmake"), "-B", debs],
            timeout=120, cwd=ARGS.build_dir)
    got = sorted(f for f in os.listdir(debs) if f.endswith(".deb"))
    arch = run(["dpkg", "--print-architecture"]).stdout.strip()
    want = {name: f"{name}_{ARGS.deb_version}_{arch}.deb" for name in ARGS.packages}
    check(got == sorted(want.values()), "cpack made other packages than expected", got, sorted(want.values()),
          r.stdout[-2000:])
    log(f"cpack: {', '.join(got)}")
    return {name: os.path.join(debs, f) for name, f in want.items()}


def check_packages(debs):
    lib = ARGS.libdir
    soname_file = f"libddmc.so.{ARGS.version}"
    major = ARGS.version.split(".")[0]
    expect = {
        "libddmc0": {f"usr/{lib}/libddmc.so.{major}": soname_file, f"usr/{lib}/{soname_file}": None},
        "libddmc-dev": {f"usr/{lib}/libddmc.so": f"libddmc.so.{major}", f"usr/{lib}/libddmc.a": None,
                        "usr/include/ddmc/ddmc.h": None, "usr/include/ddmc/version.h": None,
                        f"usr/{lib}/cmake/ddmc/ddmcConfig.cmake": None,
                        f"usr/{lib}/cmake/ddmc/ddmcConfigVersion.cmake": None,
                        f"usr/{lib}/cmake/ddmc/ddmcTargets.cmake": None, f"usr/{lib}/pkgconfig/ddmc.pc": None},
        "ddmc": {"usr/bin/ddmc": None, "usr/share/ddmc/ui/index.html": None, "usr/share/ddmc/ui/uPlot.iife.min.js": None},
    }
    if ARGS.man:
        expect["ddmc"]["usr/share/man/man1/ddmc.1.gz"] = None
    if ARGS.jdwp_agent:
        expect["libddmc0"][f"usr/{lib}/libddmcjdwp.so"] = None
        # Android's DdmServer API for the app, where the agent looks for it (agent/README.md).
        expect["libddmc0"][f"usr/{lib}/libddmcjdwp-ddm.jar"] = None
    sections = {"libddmc0": "libs", "libddmc-dev": "libdevel", "ddmc": "devel"}
    owner = {}
    for name, deb in debs.items():
        f = control(deb)
        check(f.get("Package") == name and f.get("Version") == ARGS.deb_version, f"{name}: Package/Version", f)
        check(f.get("Section") == sections[name], f"{name}: Section", f.get("Section"))
        check(re.match(r".+ <[^@ ]+@[^@ ]+>$", f.get("Maintainer", "")), f"{name}: Maintainer", f.get("Maintainer"))
        desc = f.get("Description", "").split("\n")
        check(len(desc) >= 2 and desc[0] and len(desc[0]) < 80, f"{name}: Description (synopsis, long text)", desc)
        files = contents(deb)
        for path, target in expect[name].items():
            check(path in files, f"{name}: lacks {path}", sorted(files))
            check(files[path] == target, f"{name}: {path} links to {files[path]}, expected {target}")
        for doc in ("copyright", "changelog.Debian.gz"):
            check(f"usr/share/doc/{name}/{doc}" in files, f"{name}: lacks /usr/share/doc/{name}/{doc}")
        for path in files:
            check(path not in owner, f"{path} is in both {owner.get(path)} and {name}")
            owner[path] = name
        log(f"{name}: {len(files)} files; Depends: {f.get('Depends')}")
    # The runtime package holds the SONAME file only; the dev package the link to build with.
    check(not any(p.startswith(f"usr/{lib}/libddmc.so") for p in contents(debs["libddmc-dev"])
                  if p != f"usr/{lib}/libddmc.so"), "libddmc-dev carries the shared library itself")
    dep = control(debs["libddmc0"]).get("Depends", "")
    check("libc6" in dep and "zlib1g" in dep, "libddmc0: Depends (dpkg-shlibdeps) lacks libc6 or zlib1g", dep)
    dep = control(debs["libddmc-dev"]).get("Depends", "")
    check(f"libddmc0 (= {ARGS.deb_version})" in dep and "zlib1g-dev" in dep,
          "libddmc-dev must depend on this libddmc0 exactly and on zlib1g-dev", dep)
    if "ddmc" in debs:
        dep = control(debs["ddmc"]).get("Depends", "")
        check("libc6" in dep and "libpng" in dep, "ddmc: Depends (dpkg-shlibdeps) lacks libc6 or libpng", dep)
    shlibs = control_member(debs["libddmc0"], "shlibs") or ""
    check(re.search(rf"^libddmc {major} libddmc0 \(>= {re.escape(ARGS.deb_version)}\)$", shlibs, re.M),
          "libddmc0: shlibs", shlibs)
    triggers = control_member(debs["libddmc0"], "triggers") or ""
    check(re.search(r"^activate-noawait ldconfig$", triggers, re.M), "libddmc0: no ldconfig trigger", triggers)


def unpack(debs):
    root = os.path.join(ARGS.workdir, "root")
    os.makedirs(root)
    for deb in debs.values():
        run(["dpkg", "-x", deb, root])
    lib = os.path.join(root, "usr", ARGS.libdir)
    so = os.path.join(lib, f"libddmc.so.{ARGS.version}")
    major = ARGS.version.split(".")[0]
    dyn = run(["readelf", "-d", "--wide", so]).stdout
    check(f"Library soname: [libddmc.so.{major}]" in dyn, "SONAME of the packaged library", dyn[:800])
    syms = run(["readelf", "--dyn-syms", "--wide", so]).stdout
    node = "DDMC_" + ".".join(ARGS.version.split(".")[:2])
    check(re.search(rf"\bddmc_vm_new_@@{re.escape(node)}\b", syms), f"ddmc_vm_new_ is not under {node}")
    check(not re.search(r"\.debug_info\b", run(["readelf", "-S", "--wide", so]).stdout),
          "the packaged shared library is not stripped")
    log(f"unpacked into {root}: SONAME libddmc.so.{major}, symbols under {node}")
    return root, lib


def hardening(root, lib):
    """What lintian's hardening-no-relro, -no-bindnow, -no-fortify-functions and
    -no-stackprotector look for, read off each shipped ELF file directly."""
    elfs = [os.path.join(lib, f"libddmc.so.{ARGS.version}")]
    if ARGS.jdwp_agent:
        elfs.append(os.path.join(lib, "libddmcjdwp.so"))
    if not ARGS.no_tool:
        elfs.append(os.path.join(root, "usr", "bin", "ddmc"))
    for elf in elfs:
        name = os.path.basename(elf)
        dyn = run(["readelf", "-d", "--wide", elf]).stdout
        check(re.search(r"\(FLAGS\)\s+.*\bBIND_NOW\b|\(FLAGS_1\)\s+Flags:.*\bNOW\b|\(BIND_NOW\)", dyn),
              f"{name}: no BIND_NOW (linked without -z now)", dyn[-1500:])
        segs = run(["readelf", "-l", "--wide", elf]).stdout
        check(re.search(r"^\s*GNU_RELRO\s", segs, re.M), f"{name}: no GNU_RELRO segment (linked without -z relro)",
              segs[-1500:])
        syms = run(["readelf", "--dyn-syms", "--wide", elf]).stdout
        chk = sorted(set(re.findall(r"\b(__\w+_chk)\b", syms)) - {"__stack_chk_fail"})
        check(chk, f"{name}: no fortified call (__*_chk): built without -D_FORTIFY_SOURCE=2 or -O")
        check(re.search(r"\b__stack_chk_fail\b", syms), f"{name}: no __stack_chk_fail: built without a stack protector")
        if name == "ddmc":
            check(re.search(r"^\s*Type:\s+DYN\b", run(["readelf", "-h", "--wide", elf]).stdout, re.M) and
                  re.search(r"\(FLAGS_1\)\s+Flags:.*\bPIE\b", dyn), "ddmc: not a PIE", dyn[-1500:])
        log(f"{name}: BIND_NOW, GNU_RELRO, stack protector, {len(chk)} fortified calls ({', '.join(chk[:4])}, ...)")


def run_consumer(exe, lib, label, env_lib=True):
    env = dict(os.environ)
    if env_lib:
        env["LD_LIBRARY_PATH"] = lib
    ldd = run(["ldd", exe], env=env).stdout
    m = re.search(r"libddmc\.so\.\d+ => (\S+)", ldd)
    if env_lib:
        check(m and os.path.realpath(m.group(1)).startswith(os.path.realpath(lib) + os.sep),
              f"{label}: libddmc does not come from the unpacked tree", ldd)
    else:
        check(m is None, f"{label}: linked statically, yet needs libddmc.so", ldd)
    out = run([exe], env=env, timeout=30).stdout
    check(re.search(rf"^consumer: libddmc {re.escape(ARGS.version)}, HELO on 127\.0\.0\.1:\d+ named the VM consumer-vm$",
                    out, re.M), f"{label}: output", out)
    log(f"{label}: {out.strip()}")


def consumer_pkg_config(root, lib):
    env = dict(os.environ)
    env["PKG_CONFIG_PATH"] = os.path.join(lib, "pkgconfig")
    pc = lambda *a: run(["pkg-config", *a, "ddmc"], env=env).stdout.strip()
    check(pc("--modversion") == ARGS.version, "pkg-config --modversion ddmc", pc("--modversion"))
    check(os.path.realpath(pc("--variable=libdir")) == os.path.realpath(lib), "ddmc.pc's libdir is not the unpacked one",
          pc("--variable=libdir"))
    check(os.path.realpath(pc("--variable=includedir")) == os.path.realpath(os.path.join(root, "usr", "include")),
          "ddmc.pc's includedir", pc("--variable=includedir"))
    check("-lz" in pc("--static", "--libs") and "-lpthread" in pc("--static", "--libs"),
          "pkg-config --static --libs ddmc lacks zlib or pthread", pc("--static", "--libs"))
    exe = os.path.join(ARGS.workdir, "consumer_pc")
    run([ARGS.cc, *pc("--cflags").split(), os.path.join(ARGS.consumer, "consumer.c"), "-o", exe,
         *pc("--libs").split()])
    run_consumer(exe, lib, "pkg-config consumer")


def consumer_cmake(root, lib):
    bdir = os.path.join(ARGS.workdir, "consumer-cmake")
    r = run([ARGS.cmake, "-S", ARGS.consumer, "-B", bdir, f"-DCMAKE_PREFIX_PATH={os.path.join(root, 'usr')}",
             f"-DCMAKE_C_COMPILER={ARGS.cc}", f"-DDDMC_WANT={ARGS.version}"], timeout=120)
    m = re.search(r"ddmc (\S+) from (\S+)", r.stdout)
    check(m and m.group(1) == ARGS.version, "find_package(ddmc): version", r.stdout[-1500:])
    check(os.path.realpath(m.group(2)) == os.path.realpath(os.path.join(lib, "cmake", "ddmc")),
          "find_package(ddmc) found another copy", m.group(2))
    run([ARGS.cmake, "--build", bdir], timeout=120)
    run_consumer(os.path.join(bdir, "consumer"), lib, "find_package consumer (ddmc::ddmc)")
    run_consumer(os.path.join(bdir, "consumer_static"), lib, "find_package consumer (ddmc::ddmc_static)", env_lib=False)
    # A newer release than this one is refused (ddmcConfigVersion.cmake).
    major, minor = (int(x) for x in ARGS.version.split(".")[:2])
    r = run([ARGS.cmake, "-S", ARGS.consumer, "-B", bdir + "-newer", f"-DCMAKE_PREFIX_PATH={os.path.join(root, 'usr')}",
             f"-DCMAKE_C_COMPILER={ARGS.cc}", f"-DDDMC_WANT={major}.{minor + 1}"], timeout=120, ok=False)
    check(r.returncode != 0 and "ddmc" in r.stderr, "find_package(ddmc <newer>) was not refused", r.stdout[-800:])
    log(f"find_package(ddmc {major}.{minor + 1}) refused, as it must be")


def tool(root):
    ddmc = os.path.join(root, "usr", "bin", "ddmc")
    out = run([ddmc, "--version"]).stdout
    check(ARGS.version in out, "ddmc --version", out)
    cmd = [ARGS.minivm, "-agentlib:jdwp=transport=dt_socket,address=127.0.0.1:0,server=y,suspend=n",
           os.path.join(ARGS.programs, "idle.mvm")]
    vm = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    CHILDREN.append(vm)
    port, lines, got = [None], [], threading.Event()

    def reader():
        for raw in vm.stderr:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            lines.append(line)
            m = re.search(r"JDWP listening on [^ ]*:(\d+)\s*$", line)
            if m and port[0] is None:
                port[0] = int(m.group(1))
                got.set()
        got.set()

    threading.Thread(target=reader, daemon=True).start()
    check(got.wait(15) and port[0], "minivm did not report its JDWP port", *lines[-5:])
    target = f"127.0.0.1:{port[0]}"
    doc = json.loads(run([ddmc, "-c", target, "--json", "info"], timeout=30).stdout)
    v = doc.get("vm", {})
    check(doc.get("ok") and v.get("pid") == vm.pid and (v.get("vm_ident") or "").startswith("minivm"),
          "the unpacked ddmc's info does not name minivm", doc)
    out = run([ddmc, "-c", target, "info"], timeout=30).stdout
    check(re.search(r"^vm\s+minivm", out, re.M) and re.search(rf"^pid\s+{vm.pid}$", out, re.M), "ddmc info text", out)
    vm.kill()
    vm.wait(timeout=10)
    log(f"unpacked ddmc: info on {target} names {v['vm_ident']!r}, pid {vm.pid}")
    if ARGS.man:
        with gzip.open(os.path.join(root, "usr", "share", "man", "man1", "ddmc.1.gz"), "rb") as f, \
                open(ARGS.man, "rb") as src:
            check(f.read() == src.read(), "the packaged ddmc.1.gz is not docs/ddmc.1")


def lintian(debs):
    # --display-info: hardening-no-bindnow and hardening-no-fortify-functions are I: tags.
    r = run(["lintian", "--display-info", "--tag-display-limit", "0", *debs.values()], timeout=120, ok=False)
    out = r.stdout + r.stderr
    print(out.strip(), flush=True)
    errors = [l for l in out.splitlines() if l.startswith("E: ")]
    check(not errors, f"lintian reports {len(errors)} error(s)", *errors)
    hard = [l for l in out.splitlines() if re.match(r"[EWI]: \S+: hardening-", l)]
    check(not hard, f"lintian reports {len(hard)} hardening tag(s) (cmake/hardening.cmake)", *hard)
    check(r.returncode == 0, f"lintian failed (exit {r.returncode}) without an E: line", r.stderr[-1500:])
    log(f"lintian: no error, {sum(1 for l in out.splitlines() if l.startswith('W: '))} warning(s)")


def main():
    global ARGS
    ap = argparse.ArgumentParser()
    ap.add_argument("--build-dir", required=True)
    ap.add_argument("--cpack", required=True)
    ap.add_argument("--cmake", required=True)
    ap.add_argument("--cc", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("--deb-version", required=True)
    ap.add_argument("--libdir", required=True)
    ap.add_argument("--consumer", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--minivm")
    ap.add_argument("--programs")
    ap.add_argument("--jdwp-agent", action="store_true",
                    help="the JDWP agent was built: libddmc0 must carry libddmcjdwp.so")
    ap.add_argument("--man", help="docs/ddmc.1, when it exists: the ddmc package must carry it")
    ap.add_argument("--no-tool", action="store_true", help="DDMC_BUILD_TOOLS=OFF: no ddmc package")
    ARGS = ap.parse_args()
    ARGS.packages = ["libddmc0", "libddmc-dev"] + ([] if ARGS.no_tool else ["ddmc"])
    signal.signal(signal.SIGTERM, lambda *_: (cleanup(), sys.exit(1)))
    try:
        missing = [t for t in ("dpkg-deb", "dpkg-shlibdeps", "lintian", "pkg-config", "readelf", "ldd", "file")
                   if shutil.which(t) is None]
        check(not missing, f"missing tools: {' '.join(missing)} (scripts/setup.sh installs them)")
        check(ARGS.no_tool or (ARGS.minivm and ARGS.programs), "the ddmc package is tested against minivm: "
              "build with DDMC_BUILD_EXAMPLES=ON")
        shutil.rmtree(ARGS.workdir, ignore_errors=True)
        os.makedirs(ARGS.workdir)
        debs = build_packages()
        check_packages(debs)
        root, lib = unpack(debs)
        hardening(root, lib)
        consumer_pkg_config(root, lib)
        consumer_cmake(root, lib)
        if not ARGS.no_tool:
            tool(root)
        lintian(debs)
    except Failure as e:
        print(f"FAIL: {e}", flush=True)
        return 1
    except subprocess.TimeoutExpired as e:
        print(f"FAIL: timed out: {e}", flush=True)
        return 1
    finally:
        cleanup()
    log("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
