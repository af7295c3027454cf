#!/usr/bin/env bash
# Runs the graph generator (tests/graphgen, README.md "Testing aids") for SECONDS (default 60) on
# every core: random valid graphs through the default pipeline and a random pass list each, on the
# CPU backend against the reference. Failures are minimised into build/graphgen-findings/, each
# with the `gexec run` command that reproduces it. Exits non-zero when a graph failed.
#   scripts/graphgen.sh [SECONDS]      GEXEC_GRAPHGEN_SEED picks the first seed (default 1)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
bash scripts/build.sh release gexec gexec_graphgen >/dev/null
exec build/release/tests/gexec_graphgen --seed "${GEXEC_GRAPHGEN_SEED:-1}" --seconds "$seconds" --jobs "$(nproc)" \
  --out build/graphgen-findings
