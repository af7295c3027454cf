#!/usr/bin/env bash
# Sets up, builds the gexec command only (not the tests), and runs a graph with its check: on the
# GPU where there is one, else on the CPU backend. Every argument goes to `gexec run`:
#   scripts/run.sh [GRAPH] [run options]      (default graph: graphs/gemm_bias_relu.json)
#   scripts/run.sh graphs/mlp3.json --iters 100
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh release gexec
if [ $# -eq 0 ] || [[ $1 == -* ]]; then set -- graphs/gemm_bias_relu.json "$@"; fi
exec build/release/gexec run "$@"
