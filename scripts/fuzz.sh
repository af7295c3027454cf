#!/usr/bin/env bash
# Builds the libFuzzer target (preset fuzz) and runs it: scripts/fuzz.sh [SECONDS, default 60]
# The seed corpus (graphs/, tests/data/bad/, tests/data/fuzz/) is copied to a temporary
# directory so that a run never writes into the repository; a crash's input is kept in
# build/fuzz/findings/. Exits non-zero on any crash, leak, timeout or undefined behaviour.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}

bash scripts/setup.sh --fuzz

args=()
if command -v ninja >/dev/null && [ ! -f build/fuzz/CMakeCache.txt ]; then args+=(-G Ninja); fi
cmake --preset fuzz "${args[@]}" >/dev/null
cmake --build --preset fuzz --parallel "$(nproc)"

corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
for f in graphs/*.json tests/data/bad/* tests/data/fuzz/*; do
  [ -f "$f" ] && cp "$f" "$corpus/$(echo "$f" | tr / _)"
done
findings=build/fuzz/findings
mkdir -p "$findings"

# One job: the fuzzer shares the machine. stdin is /dev/null so that an init.file naming
# /dev/stdin cannot wait for input.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
build/fuzz/tests/fuzz/gexec_fuzz_graph "$corpus" \
  -dict=tests/fuzz/graph.dict -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
  -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$findings/" </dev/null
