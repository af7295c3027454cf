#!/usr/bin/env python3
"""Checks every #include of the project against the layer table of docs/architecture.md.

The table's rows name a layer, its folder(s) and the layers it may include ("depends on"); the
table is read from the document itself, so the document and this check cannot drift apart. Every
source and header under src/, include/gexec/, apps/, python/src/ and tests/ belongs to one layer
(by its folder); each of its project includes ("...") must resolve to a file of the repository, of
the same layer or of a layer the table allows. A header under src/ is its layer's own (the public
ones are under include/gexec/): only that layer and the tests include it. `status.hpp` and
`build_info.hpp` (include/gexec/) belong to no layer: anyone may include them. A library file
(src/, include/, python/src/) that reads the environment (getenv) must be named in the document,
which says what it reads. Prints one line per problem and exits 1 if there is any.

    scripts/check_layers.py [REPO]      (default: the repository this script is in)
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
SHARED = {"include/gexec/status.hpp", "include/gexec/build_info.hpp"}
# Headers the build generates (no file of the repository), by the layer that owns them: protoc's
# classes of ONNX's schema (cmake/onnx.cmake).
GENERATED = {"gexec_onnx.pb.h": "onnx"}
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


# Include directories beyond include/, by the including file's folder, as the CMake targets set them
# (tests/CMakeLists.txt; python/CMakeLists.txt adds src/app to the module's).
EXTRA_DIRS = {"tests": ["tests", "tests/graphgen"], "python/src": ["src/app"]}


def resolve(including, name):
    """The repository-relative file an include names, or None where it names no file of the repository."""
    here = os.path.dirname(os.path.join(ROOT, including))
    extra = [d for top, dirs in EXTRA_DIRS.items() if including.startswith(top + "/") for d in dirs]
    for base in [here, os.path.join(ROOT, "include"), os.path.join(ROOT, "src"), ROOT] + [os.path.join(ROOT, d) for d in extra]:
        p = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(p):
            return os.path.relpath(p, ROOT)
    return None


def is_private(path):
    """A header beside a layer's sources (under src/), not one of the public ones under include/gexec/."""
    return path.startswith("src/") and path.endswith((".h", ".hpp", ".cuh"))


GETENV = re.compile(r"\bgetenv\s*\(")


def main():
    table = read_table()
    doc = open(os.path.join(ROOT, "docs/architecture.md"), encoding="utf-8").read()
    bad, checked = [], 0
    for top in ("src", "include/gexec", "apps", "python/src", "tests"):
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
                if not path.startswith(("apps/", "tests/")) and GETENV.search(text) and f"`{path}`" not in doc:
                    bad.append(f"{path}: reads the environment (getenv), which docs/architecture.md does not say")
                for name in INCLUDE.findall(text):
                    if name in GENERATED:
                        checked += 1
                        if GENERATED[name] not in allowed:
                            bad.append(f'{path}: layer {mine} includes "{name}", generated for layer {GENERATED[name]}; '
                                       f"the table allows {mine} -> {', '.join(sorted(table[mine][1])) or 'nothing'}")
                        continue
                    target = resolve(path, name)
                    if target is None:
                        bad.append(f'{path}: includes "{name}", which is no file of the repository')
                        continue
                    if target in SHARED:
                        continue
                    checked += 1
                    theirs = layer_of(target, table)
                    if is_private(target) and theirs != mine and not path.startswith("tests/"):
                        bad.append(f'{path}: layer {mine} includes "{name}", a header of its own of layer {theirs} '
                                   f"({target}); only layer {theirs} and the tests include it")
                    elif theirs is None:
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
