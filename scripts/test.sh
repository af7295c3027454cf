#!/usr/bin/env bash
# Sets up, builds, and runs the whole test suite (unit, command line, smoke, GPU where present).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh release
status=0
ctest --test-dir build/release --output-on-failure --timeout 1200 || status=$?
# ctest hides a skipped test's output: repeat its reason so that a skip is never silent.
log=build/release/Testing/Temporary/LastTest.log
if [ -f "$log" ]; then
  grep -h "^skipped: no CUDA device" "$log" | sed 's/^/gpu tests /' || true
  grep -h "^SKIPPED \[" "$log" | sed 's/^/python tests /' || true  # pytest -rs: a GPU test without CuPy, PyTorch or a GPU
fi
exit $status
