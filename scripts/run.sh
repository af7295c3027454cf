#!/usr/bin/env bash
# Sets up, builds, and runs the example graph: on the GPU where there is one, else on the CPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh release
exec build/release/gexec run "${1:-graphs/gemm_bias_relu.json}" "${@:2}"
