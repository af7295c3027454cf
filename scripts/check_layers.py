#!/usr/bin/env python3
"""Checks every #include of the project against the layer table of docs/architecture.md.

The table's rows name a layer, its folder(s) and the layers it may include ("depends on"); the
table is read from the document itself, so the document and this check cannot drift apart. Every
source and header under src/, include/gexec/, apps/ and python/src/ belongs to one layer (by its
folder); each of its project includes must resolve to a file of the same layer or of a layer the
table allows. `status.hpp` and `build_info.hpp` (include/gexec/) belong to no layer: anyone may
include them. Prints one line per arrow the table does not allow and exits 1 if there is any.

    scripts/check_layers.py [REPO]      (default: the repository this script is in)
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
SHARED = {"include/gexec/status.hpp", "include/gexec/build_info.hpp"}
SOURCE = re.compile(r"\.(c|cc|cpp|cu|cuh|h|hpp)$")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def read_table():
    """{layer: (folders, allowed layers)} from the first Markdown table with a 'depends on' column."""
    text = open(os.path.join(ROOT, "docs/architecture.md"), encoding="utf-8").read()
    rows, header = {}, None
    for line in text.splitlines():
        if not line.startswith("|"):
            if rows:
                break
            header = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = [c.lower() for c in cells]
            continue
        if set(cells[0]) <= set("-: "):
            continue
        if "depends on" not in header or "folder" not in header:
            header = None
            continue
        row = dict(zip(header, cells))
        folders = re.findall(r"`([^`]+)`", row["folder"])
        deps = {d.strip() for d in re.split(r"[,;]", row["depends on"]) if d.strip() and d.strip() not in "-"}
        # "all of the above": every layer listed before this row.
        if any("all of the above" in d for d in deps):
            deps = set(rows)
        rows[row["layer"]] = (folders, deps)
    if not rows:
        sys.exit("check_layers: docs/architecture.md has no layer table (a table with 'folder' and 'depends on')")
    return rows


def layer_of(path, table):
    """The layer owning a repository-relative path, by its longest matching folder; None if none."""
    best, length = None, -1
    for layer, (folders, _) in table.items():
        for f in folders:
            f = f.rstrip("/")
            candidates = [f]
            if f.startswith("src/"):  # src/ir owns include/gexec/ir, src/backends/cpu include/gexec/backends
                candidates.append("include/gexec/" + f.split("/")[1])
            for c in candidates:
                if (path == c or path.startswith(c + "/")) and len(c) > length:
                    best, length = layer, len(c)
    return best


def resolve(including, name):
    """The repository-relative file an include names, or None for a system or generated header."""
    here = os.path.dirname(os.path.join(ROOT, including))
    for base in (here, os.path.join(ROOT, "include"), os.path.join(ROOT, "src"), ROOT):
        p = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(p):
            return os.path.relpath(p, ROOT)
    return None


def main():
    table = read_table()
    bad, checked = [], 0
    for top in ("src", "include/gexec", "apps", "python/src"):
        for dirpath, _, files in os.walk(os.path.join(ROOT, top)):
            for f in sorted(files):
                if not SOURCE.search(f):
                    continue
                path = os.path.relpath(os.path.join(dirpath, f), ROOT)
                if path in SHARED:
                    continue
                mine = layer_of(path, table)
                if mine is None:
                    bad.append(f"{path}: belongs to no layer of docs/architecture.md's table")
                    continue
                allowed = table[mine][1] | {mine}
                text = open(os.path.join(ROOT, path), encoding="utf-8", errors="replace").read()
                for name in INCLUDE.findall(text):
                    target = resolve(path, name)
                    if target is None or target in SHARED:
                        continue
                    checked += 1
                    theirs = layer_of(target, table)
                    if theirs is None:
                        bad.append(f'{path}: includes "{name}" ({target}), which belongs to no layer')
                    elif theirs not in allowed:
                        bad.append(f'{path}: layer {mine} includes "{name}" of layer {theirs}; '
                                   f"the table allows {mine} -> {', '.join(sorted(table[mine][1])) or 'nothing'}")
    for line in bad:
        print(line)
    print(f"check_layers: {checked} includes checked, {len(bad)} not allowed by docs/architecture.md")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
