#!/usr/bin/env bash
# Configures and builds one preset (default: release) in parallel, all of it or the named targets:
#   scripts/build.sh [release|debug|asan] [TARGET...]
# GEXEC_CUDA_ARCH overrides the CUDA architectures (CMake's form, e.g. "90-real"). ccache is used
# where it is installed.
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-release}
shift || true
args=()
# Ninja when there is one; the preset leaves the generator to the machine.
if command -v ninja >/dev/null && [ ! -f "build/$preset/CMakeCache.txt" ]; then args+=(-G Ninja); fi
[ -n "${GEXEC_CUDA_ARCH:-}" ] && args+=("-DCMAKE_CUDA_ARCHITECTURES=$GEXEC_CUDA_ARCH")
if command -v ccache >/dev/null && [ "${CCACHE_DISABLE:-0}" != 1 ]; then
  args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
# The configure step's summary says what the build contains (and what it leaves out, and why).
cmake --preset "$preset" "${args[@]}" | sed -n '/^-- gexec .* configuration:/,/^-- Configuring done/p' | grep -v "Configuring done"
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build --preset "$preset" --parallel "$(nproc)" "${targets[@]}"
