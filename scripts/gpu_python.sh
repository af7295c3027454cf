#!/usr/bin/env bash
# The Python API on the GPU machine: the module's tests with CuPy and PyTorch (python/tests), the
# seed's example (examples/seed_e2e.py) and the overhead benchmark (python/bench/bench_overhead.py).
# Builds build/release first where the module is not built yet. Every output goes to OUT_DIR.
#   scripts/gpu_python.sh OUT_DIR
set -uo pipefail
out=${1:?usage: scripts/gpu_python.sh OUT_DIR}
cd "$(dirname "$0")/.."
mkdir -p "$out"
build=build/release
if ! compgen -G "$build/python/gexec*.so" >/dev/null; then
  echo "=== build (the module is not built yet)"
  GEXEC_CUDA_ARCH=90 bash scripts/build.sh release > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
fi
# The interpreter the module was built for (python/CMakeLists.txt chose it and wrote it down).
py=$(sed -n 's/^Python3_EXECUTABLE:[A-Z]*=//p' "$build/CMakeCache.txt")
py=${py:-python3}
export PYTHONPATH="$PWD/$build/python" GEXEC_BIN="$PWD/$build/gexec" GEXEC_SOURCE_DIR="$PWD"
status=0
run() {  # run NAME COMMAND...: output to OUT_DIR/NAME.txt, its tail to stdout
  echo "=== $1"
  "${@:2}" > "$out/$1.txt" 2>&1 || { echo "($1 failed)"; status=1; }
  tail -25 "$out/$1.txt"
}
run versions "$py" -c "import sys, numpy; print(sys.version); print('numpy', numpy.__version__)
for m in ('cupy', 'torch'):
    try: print(m, __import__(m).__version__)
    except ImportError as e: print(m, 'absent:', e)"
run pytest "$py" python/tests/run_tests.py -v
run seed_e2e "$py" examples/seed_e2e.py
run bench "$py" python/bench/bench_overhead.py "$out" --gexec "$build/gexec"
exit $status
