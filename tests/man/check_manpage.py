#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""docs/ddmc.1 against the tool: the page renders without a warning, and it documents exactly
what `ddmc --help` and `ddmc COMMAND --help` list.

  check_manpage.py --ddmc BIN --page docs/ddmc.1 [--sources tools/]

Checks, each a FAIL line when it does not hold:
  * `groff -man -Tutf8 -ww PAGE` and `MANWIDTH=80 man -l PAGE` exit 0 with nothing on stderr;
  * the global options (.SH OPTIONS .TP tags) equal the option column of `ddmc --help`'s
    "Options" section;
  * the commands (.SS under .SH COMMANDS) equal those of `ddmc --help`'s "Commands" section;
  * per command, the .TP options of its .SS equal the option column of `ddmc COMMAND --help`;
  * the exit codes (.SH EXIT STATUS) equal `ddmc --help`'s "Exit codes";
  * the environment variables (.SH ENVIRONMENT) equal those `ddmc --help` names and those the
    sources read with getenv().
"""
import argparse
import os
import re
import shutil
import subprocess
import sys

OPT = re.compile(r"(?<![\w-])(--?[A-Za-z][\w-]*)")
FAILS = []


def fail(msg):
    FAILS.append(msg)
    print("FAIL: %s" % msg, flush=True)


def plain(roff):
    """A roff line as text: escapes for '-' and fonts resolved, requests and quotes dropped."""
    s = re.sub(r"\\f(\[[^]]*\]|.)", "", roff)
    s = s.replace("\\-", "-").replace("\\%", "").replace("\\&", "")
    s = re.sub(r"^\.[A-Za-z]+\s*", "", s)
    return s.replace('"', " ")


def parse_page(path):
    """{'OPTIONS': [tags], 'COMMANDS': {name: [tags]}, 'EXIT STATUS': [tags], 'ENVIRONMENT': [tags]}."""
    sections = {}
    commands = {}
    sh = ss = None
    lines = open(path, encoding="utf-8").read().splitlines()
    for i, line in enumerate(lines):
        if line.startswith(".SH "):
            sh, ss = line[4:].strip().strip('"'), None
            sections.setdefault(sh, [])
        elif line.startswith(".SS ") and sh == "COMMANDS":
            ss = line[4:].strip().strip('"')
            commands[ss] = []
        elif line.startswith(".TP") and i + 1 < len(lines):
            tag = plain(lines[i + 1])
            if sh == "COMMANDS" and ss:
                commands[ss].append(tag)
            elif sh:
                sections[sh].append(tag)
    sections["COMMANDS"] = commands
    return sections


def tag_options(tags):
    out = set()
    for t in tags:
        out.update(OPT.findall(t.split(" - ")[0]))
    return out


def help_section(text, title):
    """The lines of the section whose heading line starts with title, up to a blank line."""
    lines = text.splitlines()
    for i, l in enumerate(lines):
        if l.startswith(title):
            out = []
            for m in lines[i + 1:]:
                if not m.strip():
                    break
                out.append(m)
            return out
    return None


def help_options(lines):
    """The option column of --help lines: lines indented at most 6 spaces that begin with '-'."""
    out = set()
    for l in lines:
        indent = len(l) - len(l.lstrip(" "))
        if indent > 6 or not l.lstrip().startswith("-"):
            continue
        left = re.split(r"\s{2,}", l.strip())[0]
        out.update(OPT.findall(left))
    return out


def run(argv, env=None):
    r = subprocess.run(argv, capture_output=True, env=env, stdin=subprocess.DEVNULL, timeout=60)
    return r.returncode, r.stdout.decode(errors="replace"), r.stderr.decode(errors="replace")


def diff(what, page, tool, tool_name):
    if page != tool:
        fail("%s: only in the man page: %s; only in %s: %s" %
             (what, sorted(page - tool) or "-", tool_name, sorted(tool - page) or "-"))
        return False
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ddmc", required=True)
    ap.add_argument("--page", required=True)
    ap.add_argument("--sources", help="directory whose *.c getenv() calls the page must document")
    args = ap.parse_args()

    # Rendering: no warning from groff (-ww: all of them) nor from man.
    for tool in ("groff", "man"):
        if not shutil.which(tool):
            fail("%s is not installed (scripts/setup.sh installs groff-base and man-db)" % tool)
    if not FAILS:
        rc, out, err = run(["groff", "-man", "-Tutf8", "-ww", "-z", args.page])
        if rc != 0 or err.strip():
            fail("groff -man -Tutf8 -ww %s: exit %d, stderr:\n%s" % (args.page, rc, err))
        env = dict(os.environ, MANWIDTH="80", MANPAGER="cat", PAGER="cat", LC_ALL="C.UTF-8")
        rc, out, err = run(["man", "-l", args.page], env=env)
        if rc != 0 or err.strip() or "ddmc" not in out:
            fail("MANWIDTH=80 man -l %s: exit %d, stderr:\n%s" % (args.page, rc, err))
        else:
            print("rendering: groff -ww and man -l: no warnings (%d lines at 80 columns)" % len(out.splitlines()))

    page = parse_page(args.page)
    rc, top, err = run([args.ddmc, "--help"])
    if rc != 0:
        fail("ddmc --help exited %d" % rc)

    opts = help_section(top, "Options")
    if opts is None:
        fail("ddmc --help has no Options section")
    elif diff("global options", tag_options(page.get("OPTIONS", [])), help_options(opts), "ddmc --help"):
        print("global options: %s" % " ".join(sorted(help_options(opts))))

    cmds = help_section(top, "Commands")
    tool_cmds = set()
    for l in cmds or []:
        if l.startswith("  ") and not l.startswith("   ") and l.strip():
            tool_cmds.add(l.split()[0])
    page_cmds = set(page["COMMANDS"])
    if diff("commands", page_cmds, tool_cmds, "ddmc --help"):
        print("commands: %s" % " ".join(sorted(tool_cmds)))

    for cmd in sorted(page_cmds | tool_cmds):
        rc, text, err = run([args.ddmc, cmd, "--help"])
        if rc != 0 or not text.startswith("usage: ddmc"):
            fail("ddmc %s --help: exit %d, %r" % (cmd, rc, (text + err)[:200]))
            continue
        o = help_section(text, "Options:")
        tool_o = help_options(o) if o is not None else set()
        page_o = tag_options(page["COMMANDS"].get(cmd, []))
        if diff("ddmc %s options" % cmd, page_o, tool_o, "ddmc %s --help" % cmd):
            print("%-8s %s" % (cmd, " ".join(sorted(tool_o)) or "(no options)"))

    codes = set(re.findall(r"^\s+(\d+)\s", "\n".join(help_section(top, "Exit codes") or []), re.M))
    page_codes = set(t.strip() for t in page.get("EXIT STATUS", []))
    if diff("exit codes", page_codes, codes, "ddmc --help"):
        print("exit codes: %s" % " ".join(sorted(codes, key=int)))

    env_re = re.compile(r"\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b")
    page_env = set(t.strip() for t in page.get("ENVIRONMENT", []))
    help_env = set(env_re.findall("\n".join(l for l in top.splitlines() if l.startswith("Environment"))))
    diff("environment", page_env, help_env, "ddmc --help")
    if args.sources:
        src_env = set()
        for name in os.listdir(args.sources):
            if name.endswith(".c"):
                src_env.update(re.findall(r'getenv\("([A-Z0-9_]+)"\)', open(os.path.join(args.sources, name)).read()))
        if diff("environment", page_env, src_env, "getenv() in %s" % args.sources):
            print("environment: %s" % " ".join(sorted(src_env)))

    if FAILS:
        print("%d difference(s) between %s and ddmc" % (len(FAILS), args.page))
        return 1
    print("PASS: %s agrees with ddmc --help and every ddmc COMMAND --help" % args.page)
    return 0


if __name__ == "__main__":
    sys.exit(main())
