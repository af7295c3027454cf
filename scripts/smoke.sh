#!/usr/bin/env bash
# Smoke test of every graph under graphs/: validate, dry-run, and run with its check, on the GPU
# where there is one and on the CPU backend otherwise. One line per step; fails on the first error.
#   scripts/smoke.sh [path/to/gexec]
set -uo pipefail
cd "$(dirname "$0")/.."
gexec=${1:-build/release/gexec}
failed=0 passed=0
step() {  # step NAME COMMAND...: runs it quietly, prints one line, keeps the output on failure
  local name=$1; shift
  local out
  if out=$("$@" 2>&1); then
    passed=$((passed + 1))
    printf 'ok    %s\n' "$name"
  else
    local rc=$?
    failed=$((failed + 1))
    printf 'FAIL  %s (exit %d)\n%s\n' "$name" "$rc" "$out"
  fi
}
# A run needs a backend that can run here: the CPU backend, or the CUDA one with a device.
version=$("$gexec" --version)
no_run=""
if ! grep -q "^backends:.*cpu" <<<"$version" && ! grep -q "^cuda devices: [1-9]" <<<"$version"; then
  no_run="this build has no CPU backend and there is no CUDA device"
fi
skipped=0
emitted=$(mktemp -d)
trap 'rm -rf "$emitted"' EXIT
for g in graphs/*.json; do
  step "validate $g" "$gexec" validate "$g"
  step "dry-run  $g" "$gexec" run --dry-run "$g"
  # A graph whose arena is GiBs (the MoE layer: 3 GB of experts, a reference of 0.7 T multiply-adds)
  # runs where there is a GPU; on a CPU-only machine that would take many minutes.
  big=""
  if ! grep -q "^cuda devices: [1-9]" <<<"$version" &&
     "$gexec" run --dry-run "$g" 2>/dev/null | grep -qE "one arena of [0-9.]+ GiB"; then
    big="over 1 GiB of tensors and no GPU"
  fi
  if [ -n "$no_run" ]; then
    skipped=$((skipped + 1))
  elif [ -n "$big" ]; then
    skipped=$((skipped + 1))
    echo "skipped: run $g: $big"
  else
    step "run      $g" "$gexec" -q run "$g" --emit-graph "$emitted/$(basename "$g")"
    # The graph after the passes (fused ops, groups) is a graph file too: it loads, runs and passes.
    step "emitted  $g" "$gexec" -q run "$emitted/$(basename "$g")" --passes none
  fi
done
[ -n "$no_run" ] && echo "skipped: $skipped runs: $no_run"
echo "smoke: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
