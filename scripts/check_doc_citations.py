#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Fails when a file of the repository cites a document a clone does not have, or a section of the
protocol reference that does not exist.

    check_doc_citations.py REPO_ROOT

A clone has docs/protocol/ (the project's own protocol reference) and nothing beside the tree, so:
  - `../shared` (the folder the design notes once lived in) is refused everywhere but in the two
    files that hand the Harmony JDWP conformance suite, an outside test input never copied in, to
    its test (ALLOWED_SHARED);
  - a citation of a specification file that is not in docs/ (ddm-profiling.md, jdwp-debugger.md,
    ddm-protocol.txt, ..., STYLE.md, "spec §1.2", "spec/...", "JDWP 2.5") is refused;
  - a citation of a file that is in docs/protocol/ must say where it is (docs/protocol/X.md), except
    inside docs/protocol/ itself, and every section it names (§2.7) must be a numbered heading of
    that file.
Every file under REPO_ROOT is read but .git/ and build trees (build*/ at the top). Exit 0 when
every citation resolves, 1 otherwise (one line per problem: FILE:LINE: what)."""
import os
import re
import sys

PROTOCOL_DIR = os.path.join("docs", "protocol")
# Design notes that lived beside the clone and were never part of the repository.
GONE = ("ddm-wire.md", "ddm-profiling.md", "jdwp-debugger.md", "ddm-protocol.txt",
        "debugger-support.txt", "jvmti-on-dalvik.txt", "STYLE.md")
# `../shared` in these files names the Harmony conformance suite a test runs, not a document.
ALLOWED_SHARED = {"tests/CMakeLists.txt", "tests/hotspot/ddm_suite.py", "scripts/test.sh",
                  "tests/conformance/README.md", "tests/conformance/expected-pass.txt",
                  "tests/conformance/known-failures.tsv", "tests/conformance/run_conformance.py"}
SKIP_DIRS = {".git", "node_modules"}  # node_modules: npm packages installed by scripts/setup.sh, not ours
SECTION = r"§\s*(\d+(?:\.\d+)*)"
# A comment may break a citation across lines: spaces, newlines and comment leaders in between.
GAP = r"[`\s*#/]*"
MORE = re.compile(r"\s*(?:,|and|or|;|/)?\s*" + SECTION)
CITE = re.compile(r"(?<![\w.-])((?:docs/protocol/)?)([\w-]+\.md)" + GAP + SECTION)
SPEC = re.compile(r"(?<![\w.-])(?:shared/)?spec/[\w.-]+|(?<![\w.-])spec\s*§")
OLD_JDWP = re.compile(r"\bJDWP [2-5]\.\d+")
STYLE = re.compile(r"(?<![\w-])STYLE\s*§")


def headings(path):
    """The section numbers of a protocol file: '## 2. Chunks' -> '2', '### 2.7 Threads' -> '2.7'."""
    found = set()
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            m = re.match(r"#{2,6}\s+(\d+(?:\.\d+)*)\.?\s", line)
            if m:
                found.add(m.group(1))
    return found


def files_under(root):
    for d, dirs, names in os.walk(root):
        rel_d = os.path.relpath(d, root)
        dirs[:] = [x for x in dirs
                   if x not in SKIP_DIRS and not (rel_d == "." and x.startswith("build"))]
        for n in names:
            yield os.path.relpath(os.path.join(d, n), root)


def read_text(path):
    with open(path, "rb") as fh:
        data = fh.read()
    if b"\0" in data:
        return None  # binary: images, corpora
    return data.decode("utf-8", errors="replace")


def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


def check_file(rel, text, protocol, problems):
    in_protocol = os.path.dirname(rel) == PROTOCOL_DIR
    for m in re.finditer(r"\.\./shared", text):
        rest = text[m.end():m.end() + 8]
        if rel in ALLOWED_SHARED and not rest.startswith(("/spec", "/STYLE")):
            continue
        problems.append(f"{rel}:{line_of(text, m.start())}: cites ../shared, which a clone does not have")
    # Each pattern runs only on files holding its literal part: the lookbehinds make a blind scan slow.
    for m in (SPEC.finditer(text) if "spec" in text else ()):
        problems.append(f"{rel}:{line_of(text, m.start())}: cites the old spec ('{m.group(0)}'): "
                        "cite docs/protocol/... instead")
    # "JDWP 2.5" named a section of the old debugger notes (JDWP versions are 1.x, 9, 17...).
    for m in (OLD_JDWP.finditer(text) if "JDWP " in text else ()):
        problems.append(f"{rel}:{line_of(text, m.start())}: '{m.group(0)}' cites the old notes: "
                        f"cite {PROTOCOL_DIR}/jdwp.md §N")
    for m in (STYLE.finditer(text) if "STYLE" in text else ()):
        problems.append(f"{rel}:{line_of(text, m.start())}: cites STYLE, which is not in the repository")
    for name in (n for n in GONE if n in text):
        for m in re.finditer(r"(?<![\w-])" + re.escape(name) + r"(?![\w-])", text):
            prefix = text[max(0, m.start() - len(PROTOCOL_DIR) - 1):m.start()]
            if name in protocol and (prefix == PROTOCOL_DIR + "/" or in_protocol):
                continue  # a file of the reference, cited by its place (sections checked below)
            if name in protocol:
                why = f"cites {name} without its place: cite {PROTOCOL_DIR}/{name}"
            else:
                why = f"cites {name}, which is not in the repository"
            problems.append(f"{rel}:{line_of(text, m.start())}: {why}")
    # Citations of the reference itself: the file must exist and so must every section named.
    for m in (CITE.finditer(text) if "§" in text else ()):
        prefix, name = m.group(1), m.group(2)
        if not prefix and not in_protocol:
            if name in protocol and name not in GONE:
                problems.append(f"{rel}:{line_of(text, m.start())}: cite {PROTOCOL_DIR}/{name}, not {name}")
            continue  # another document's sections (README.md §...) are not checked here
        if name not in protocol:
            problems.append(f"{rel}:{line_of(text, m.start())}: {PROTOCOL_DIR}/{name} does not exist")
            continue
        secs = [m.group(3)]
        pos = m.end()
        while True:
            more = MORE.match(text, pos)
            if not more:
                break
            secs.append(more.group(1))
            pos = more.end()
        for s in secs:
            if s not in protocol[name]:
                problems.append(f"{rel}:{line_of(text, m.start())}: {PROTOCOL_DIR}/{name} has no §{s}")
    for m in re.finditer(r"docs/protocol/([\w.-]+)", text):
        if not os.path.exists(os.path.join(ROOT, PROTOCOL_DIR, m.group(1).rstrip("."))):
            problems.append(f"{rel}:{line_of(text, m.start())}: {m.group(0)} does not exist")


def main():
    global ROOT
    ROOT = sys.argv[1] if len(sys.argv) > 1 else "."
    pdir = os.path.join(ROOT, PROTOCOL_DIR)
    protocol = {}
    if os.path.isdir(pdir):
        for n in sorted(os.listdir(pdir)):
            if n.endswith(".md"):
                protocol[n] = headings(os.path.join(pdir, n))
    problems = []
    if not protocol:
        problems.append(f"{PROTOCOL_DIR}/ has no .md files")
    checked = 0
    for rel in sorted(files_under(ROOT)):
        if rel == os.path.join("scripts", "check_doc_citations.py"):
            continue  # names every forbidden citation on purpose
        text = read_text(os.path.join(ROOT, rel))
        if text is None:
            continue
        if rel.endswith(".1"):
            text = text.replace("\\-", "-")  # roff writes a hyphen as \-
        checked += 1
        check_file(rel, text, protocol, problems)
    for p in problems:
        print(p)
    print(f"check_doc_citations: {checked} files, {len(problems)} problems")
    return 1 if problems or checked == 0 else 0


ROOT = "."
if __name__ == "__main__":
    sys.exit(main())
