#!/usr/bin/env bash
# Configures and builds one preset (default: release) in parallel: scripts/build.sh [release|debug|asan]
set -euo pipefail
cd "$(dirname "$0")/.."
preset=${1:-release}
args=()
# Ninja when there is one; the preset leaves the generator to the machine.
if command -v ninja >/dev/null && [ ! -f "build/$preset/CMakeCache.txt" ]; then args+=(-G Ninja); fi
[ -n "${GEXEC_CUDA_ARCH:-}" ] && args+=("-DCMAKE_CUDA_ARCHITECTURES=$GEXEC_CUDA_ARCH")
[ ! -x /usr/local/cuda/bin/nvcc ] && ! command -v nvcc >/dev/null && args+=(-DGEXEC_CUDA=OFF)
cmake --preset "$preset" "${args[@]}" >/dev/null
cmake --build --preset "$preset" --parallel "$(nproc)"
