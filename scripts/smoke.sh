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
emitted=$(mktemp -d)
trap 'rm -rf "$emitted"' EXIT
for g in graphs/*.json; do
  step "validate $g" "$gexec" validate "$g"
  step "dry-run  $g" "$gexec" run --dry-run "$g"
  step "run      $g" "$gexec" -q run "$g" --emit-graph "$emitted/$(basename "$g")"
  # The graph after the passes (fused ops, groups) is a graph file too: it loads, runs and passes.
  step "emitted  $g" "$gexec" -q run "$emitted/$(basename "$g")" --passes none
done
echo "smoke: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
