#!/usr/bin/env python3
"""Checks the source tree's shape (CI runs it; exits 1 on any finding).

    tools/check_tree.py [--graph] [--root DIR]

Findings:
  - a .c or .h file directly in engine/ (every module lives in the folder of
    its layer, docs/architecture.md);
  - an include from fs/, tools/ or config/ of an engine header outside
    engine/include/ (they use the public API only; the unit tests and the
    fuzz targets may reach a module's private header: they test it);
  - an include cycle between engine folders (data flows one way:
    common <- io <- format <- decode <- read <- scan ... see LAYERS);
    a public header in include/pqfs/ belongs to the folder of its .c;
  - an engine folder including one that LAYERS puts above it;
  - a function longer than 150 lines (from its opening brace to its closing
    one), in engine/, fs/, config/ and tools/;
  - a source file longer than 1,500 lines there (split it along its seams);
  - a header in engine/include/pqfs/ that nothing in fs/, tools/ or config/
    includes, directly or through another public header (it is private: it
    belongs beside its .c);
  - a folder's NAME_internal.h (what only that folder's .c files share: the
    one way internals are marked) included from another folder.
--graph prints the folder dependency graph that was found.  --root checks
another tree (tests/unit/test_check_tree.py runs it on made-up ones).

Functions are found by the project's style: a definition's `{` and `}` stand
alone in column 0.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENGINE = os.path.join(ROOT, "engine")
MAX_FUNCTION_LINES = 150
MAX_FILE_LINES = 1500

# Engine folders, lowest first: a folder may include only folders before it
# (and itself).  expr and plan sit beside the read path: plan proves with
# expr over format's statistics; write (the column and file writers, CSV
# input) comes before scan, whose data.parquet output encodes with it; scan
# runs plans over read's readers; tablefmt (Hive, Delta: which files are
# a table's rows) reads Delta checkpoints through scan; lake is the logic
# layer on top.
LAYERS = ["common", "io", "format", "decode", "read", "expr", "plan",
          "write", "scan", "tablefmt", "lake"]

INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def source_files(top, exts=(".c", ".h")):
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and not d.startswith("build"))
        for f in sorted(filenames):
            if f.endswith(exts):
                yield os.path.join(dirpath, f)


def engine_headers():
    """Header base name -> its path relative to engine/ (one name, one header)."""
    out = {}
    for p in source_files(ENGINE, (".h",)):
        rel = os.path.relpath(p, ENGINE)
        out.setdefault(os.path.basename(rel), []).append(rel)
    return out


def resolve(include, from_file, headers):
    """The engine header an include names (relative to engine/), or None."""
    cand = os.path.normpath(os.path.join(os.path.dirname(from_file), include))
    if os.path.isfile(cand) and os.path.commonpath([cand, ENGINE]) == ENGINE:
        return os.path.relpath(cand, ENGINE)
    for base in (os.path.join(ENGINE, "include"), ENGINE):
        cand = os.path.normpath(os.path.join(base, include))
        if os.path.isfile(cand):
            return os.path.relpath(cand, ENGINE)
    hits = headers.get(os.path.basename(include), [])
    return hits[0] if len(hits) == 1 else None


def folder_of(rel):
    """The layer a file belongs to: its folder; a public header's is the
    folder of the .c of its name (include/pqfs/scan.h: scan)."""
    parts = rel.split(os.sep)
    if parts[0] == "include":
        base = os.path.splitext(parts[-1])[0] + ".c"
        for d in LAYERS:
            if os.path.isfile(os.path.join(ENGINE, d, base)):
                return d
        return "include"
    return parts[0] if len(parts) > 1 else ""


def long_functions(path):
    out = []
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    start = None
    for i, line in enumerate(lines):
        if line == "{" and start is None:
            start = i
            # the name: the nearest preceding line with an identifier before '('
            name = "?"
            for j in range(i - 1, max(-1, i - 6), -1):
                m = re.search(r"([A-Za-z_]\w*)\s*\(", lines[j])
                if m:
                    name = m.group(1)
                    break
        elif line.startswith("}") and start is not None and not line.startswith("};"):
            n = i - start + 1
            if n > MAX_FUNCTION_LINES:
                out.append((name, start + 1, n))
            start = None
        elif line.startswith("};") and start is not None:
            start = None  # an initializer or a struct, not a function
    return out


def set_root(root):
    global ROOT, ENGINE
    ROOT = os.path.abspath(root)
    ENGINE = os.path.join(ROOT, "engine")


def line_count(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return sum(1 for _ in f)


def main():
    args = sys.argv[1:]
    show_graph = "--graph" in args
    if "--root" in args:
        i = args.index("--root")
        if i + 1 >= len(args):
            print("check_tree: --root needs a directory", file=sys.stderr)
            return 2
        set_root(args[i + 1])
    findings = []
    headers = engine_headers()
    for name, paths in sorted(headers.items()):
        if len(paths) > 1:
            findings.append(f"engine: two headers named {name}: {', '.join(paths)}")

    for p in source_files(ENGINE):
        if os.path.dirname(p) == ENGINE:
            findings.append(f"{os.path.relpath(p, ROOT)}: a file directly in engine/ (put it in its layer's folder)")

    # Includes from outside the engine: the public API only.
    public_used = set()
    for top in ("fs", "tools", "config"):
        for p in source_files(os.path.join(ROOT, top)):
            with open(p, encoding="utf-8", errors="replace") as f:
                for n, line in enumerate(f, 1):
                    m = INCLUDE_RE.match(line)
                    if not m:
                        continue
                    target = resolve(m.group(1), p, headers)
                    if target:
                        public_used.add(target)
                    if target and not target.startswith("include" + os.sep):
                        findings.append(f"{os.path.relpath(p, ROOT)}:{n}: includes engine/{target}, "
                                        "which is not in engine/include/")

    # The folder graph.
    graph = {}
    for p in source_files(ENGINE):
        rel = os.path.relpath(p, ENGINE)
        src = folder_of(rel)
        with open(p, encoding="utf-8", errors="replace") as f:
            for n, line in enumerate(f, 1):
                m = INCLUDE_RE.match(line)
                if not m:
                    continue
                target = resolve(m.group(1), p, headers)
                if not target:
                    continue
                dst = folder_of(target)
                if dst != src and target.endswith("_internal.h"):
                    findings.append(f"engine/{rel}:{n}: includes engine/{target}, internal to {dst}/")
                if dst != src:
                    graph.setdefault(src, {}).setdefault(dst, f"engine/{rel}:{n}")
    for src, dsts in sorted(graph.items()):
        for dst, where in sorted(dsts.items()):
            if src in LAYERS and dst in LAYERS and LAYERS.index(dst) > LAYERS.index(src):
                findings.append(f"{where}: {src}/ includes {dst}/, a layer above it (order: {' < '.join(LAYERS)})")
    # Cycles (also among folders LAYERS does not name).
    state = {}

    def visit(node, stack):
        state[node] = 1
        for nxt in sorted(graph.get(node, {})):
            if state.get(nxt) == 1:
                cyc = stack[stack.index(nxt):] + [nxt] if nxt in stack else [node, nxt]
                findings.append("include cycle between engine folders: " + " -> ".join(cyc))
            elif not state.get(nxt):
                visit(nxt, stack + [nxt])
        state[node] = 2

    for node in sorted(graph):
        if not state.get(node):
            visit(node, [node])

    public = os.path.join(ENGINE, "include")
    # A public header that a used one includes is part of the API too
    # (lake.h's proc.h: what the write lifecycle asks of /proc).
    todo = list(public_used)
    while todo:
        h = todo.pop()
        if not h.startswith("include" + os.sep):
            continue
        with open(os.path.join(ENGINE, h), encoding="utf-8", errors="replace") as f:
            for line in f:
                m = INCLUDE_RE.match(line)
                target = m and resolve(m.group(1), os.path.join(ENGINE, h), headers)
                if target and target not in public_used:
                    public_used.add(target)
                    todo.append(target)
    for p in source_files(public, (".h",)):
        rel = os.path.relpath(p, ENGINE)
        if rel not in public_used:
            findings.append(f"engine/{rel}: public, but nothing in fs/, tools/ or config/ includes it "
                            "(a private header lives beside its .c)")

    for top in ("engine", "fs", "config", "tools"):
        for p in source_files(os.path.join(ROOT, top)):
            n = line_count(p)
            if n > MAX_FILE_LINES:
                findings.append(f"{os.path.relpath(p, ROOT)}: {n} lines (at most {MAX_FILE_LINES}: split it along its seams)")
        for p in source_files(os.path.join(ROOT, top), (".c",)):
            for name, line, n in long_functions(p):
                findings.append(f"{os.path.relpath(p, ROOT)}:{line}: {name} is {n} lines (at most {MAX_FUNCTION_LINES})")

    if show_graph:
        for src, dsts in sorted(graph.items()):
            print(f"{src or '(engine/)'} -> {', '.join(sorted(d or '(engine/)' for d in dsts))}")
    for f in findings:
        print("check_tree: " + f)
    if findings:
        print(f"check_tree: {len(findings)} finding(s)")
        return 1
    print("check_tree: the tree is in shape")
    return 0


if __name__ == "__main__":
    sys.exit(main())
