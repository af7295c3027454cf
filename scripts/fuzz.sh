#!/usr/bin/env bash
# Builds the libFuzzer targets (preset fuzz) and runs them: scripts/fuzz.sh [SECONDS] [graph|npy|onnx|all]
#   graph: graph files through loading, the passes, selection, planning and the report writer
#   npy:   .npy files through read_npy, the dtype rule, a write-back and the report writer
#   onnx:  ONNX models through the front end, then the mapped graph as `graph` does (seeds:
#          tests/data/onnx and the first models of ONNX's conformance data where it is installed)
#   all (the default): one after the other, SECONDS (default 60) each.
# The seed corpus (graphs/, tests/data/bad/, tests/data/fuzz/; tests/data/npy/ for npy) is
# copied to a temporary directory so that a run never writes into the repository; a crash's
# input is kept in build/fuzz/findings/. Exits non-zero on any crash, leak, timeout or undefined
# behaviour.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
which=${2:-all}
case "$which" in graph|npy|onnx|all) ;; *) echo "usage: scripts/fuzz.sh [SECONDS] [graph|npy|onnx|all]" >&2; exit 2;; esac

bash scripts/setup.sh --fuzz

args=()
if command -v ninja >/dev/null && [ ! -f build/fuzz/CMakeCache.txt ]; then args+=(-G Ninja); fi
cmake --preset fuzz "${args[@]}" >/dev/null
targets=(gexec_fuzz_graph gexec_fuzz_npy)
# The ONNX target exists where the fuzz build has ONNX input (protobuf, protoc, onnx.proto).
grep -q "^GEXEC_ONNX:BOOL=ON" build/fuzz/CMakeCache.txt && onnx=1 || onnx=0
[ $onnx = 1 ] && targets+=(gexec_fuzz_onnx)
build_args=()
for t in "${targets[@]}"; do build_args+=(--target "$t"); done
cmake --build build/fuzz --parallel "$(nproc)" "${build_args[@]}"

findings=build/fuzz/findings
mkdir -p "$findings"
# One job: the fuzzer shares the machine. stdin is /dev/null so that an init.file naming
# /dev/stdin cannot wait for input.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

run_target() {  # NAME DICT SEED_GLOB...
  local name=$1 dict=$2
  shift 2
  local corpus
  corpus=$(mktemp -d)
  for f in "$@"; do
    [ -f "$f" ] && cp "$f" "$corpus/$(echo "$f" | tr / _)"
  done
  local dict_arg=()
  [ -n "$dict" ] && dict_arg=(-dict="$dict")
  local rc=0
  "build/fuzz/tests/fuzz/gexec_fuzz_$name" "$corpus" "${dict_arg[@]}" -max_len=65536 -timeout=10 \
    -rss_limit_mb=2048 -max_total_time="$seconds" -print_final_stats=1 -artifact_prefix="$findings/$name-" \
    </dev/null || rc=$?
  rm -rf "$corpus"
  return $rc
}

if [ "$which" = graph ] || [ "$which" = all ]; then
  run_target graph tests/fuzz/graph.dict graphs/*.json tests/data/bad/* tests/data/fuzz/*
fi
if [ "$which" = npy ] || [ "$which" = all ]; then
  run_target npy "" tests/data/npy/*
fi
if [ "$which" = onnx ] || [ "$which" = all ]; then
  if [ $onnx = 1 ]; then
    seeds=(tests/data/onnx/*.onnx tests/data/onnx/bad/*.onnx)
    # The first 40 matching models, taken without a pipe: under pipefail `ls | head` fails
    # with SIGPIPE (exit 141) once there are more than head reads.
    d=/usr/include/onnx/backend/test/data/node
    if [ -d "$d" ]; then
      conformance=("$d"/test_{add,gemm,matmul,relu,reshape,cast}*/model.onnx)
      seeds+=("${conformance[@]:0:40}")
    fi
    run_target onnx "" "${seeds[@]}"
  else
    echo "fuzz: no ONNX target (this fuzz build has no ONNX input)"
  fi
fi
