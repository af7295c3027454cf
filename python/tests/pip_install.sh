#!/usr/bin/env bash
# `pip install` into a fresh venv, then the seed flow from there: the `gexec` console entry runs a
# graph, `python -m gexec` answers, and `import gexec` (from the venv, not the build tree) runs and
# checks a graph with its type stubs installed beside it.
#   pip_install.sh PYTHON BUILD_DIR SOURCE_DIR
# The package is built from a copy of the files pip needs, with GEXEC_BUILD_DIR=BUILD_DIR (the
# module and command already built there), so that the repository is not written into and no
# second build runs. Exit 77 (skipped, with the reason) where the interpreter has no venv or
# setuptools.
set -euo pipefail
python=$1 build=$(cd "$2" && pwd) src=$(cd "$3" && pwd)
unset PYTHONPATH
for m in venv ensurepip setuptools; do
  if ! "$python" -c "import $m" 2>/dev/null; then
    echo "skipped: $python has no $m (Debian: python3-venv, python3-setuptools)"
    exit 77
  fi
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/src/python"
cp "$src/pyproject.toml" "$src/setup.py" "$src/README.md" "$src/CMakeLists.txt" "$tmp/src/"
cp -r "$src/python/package" "$src/python/gexec.pyi" "$tmp/src/python/"
# Debian's setuptools and NumPy serve the venv: no registry is asked for anything.
"$python" -m venv --system-site-packages "$tmp/venv"
# --system-site-packages reaches the base installation's packages; where PYTHON is itself a venv's
# (the GPU machine's Python 3.12 with NumPy), its own site-packages are what serve: a .pth file in
# the new venv adds them too.
"$python" -c 'import site; print("\n".join(site.getsitepackages()))' \
  > "$("$tmp/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/_from_parent.pth"
GEXEC_BUILD_DIR=$build "$tmp/venv/bin/pip" install --no-build-isolation --no-index -q "$tmp/src"

fail() { echo "FAILED: $*"; exit 1; }
cd "$tmp"
"$tmp/venv/bin/gexec" --version | grep -q "^gexec " || fail "the gexec console entry printed no version"
out=$("$tmp/venv/bin/gexec" run "$src/graphs/gemm_bias_relu.json" --backend cpu) || fail "gexec run exited $?"
grep -q "^result: pass" <<<"$out" || fail "gexec run did not pass: $out"
# The command's own exit status comes through the entry (2: a file that is not there).
rc=0
"$tmp/venv/bin/gexec" run "$tmp/no-such-graph.json" >/dev/null 2>&1 || rc=$?
[ $rc = 2 ] || fail "gexec run of a missing file exited $rc through the console entry, not 2"
"$tmp/venv/bin/python" -m gexec --version | grep -q "^gexec " || fail "python -m gexec printed no version"
"$tmp/venv/bin/python" - "$src/graphs/gemm_bias_relu.json" "$tmp/venv" <<'PY' || fail "import gexec from the venv"
import os, sys
import gexec
here = os.path.dirname(gexec.__file__)
assert here.startswith(sys.argv[2]), f"gexec imported from {here}, not from the venv"
for f in ("__init__.pyi", "py.typed"):
    assert os.path.exists(os.path.join(here, f)), f"{f} is not installed beside the module"
ex = gexec.Executor(gexec.Graph.load(sys.argv[1]), backend="cpu")
outputs = ex.run()
checks = ex.check()
assert checks and all(c["passed"] for c in checks), checks
print(f"import gexec {gexec.__version__} from {here}: outputs {sorted(outputs)}, check passed")
PY
echo "pip install into a fresh venv: console entry, python -m gexec and import gexec all ran"
