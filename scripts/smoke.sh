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
  if [ -n "$no_run" ]; then
    skipped=$((skipped + 1))
  else
    step "run      $g" "$gexec" -q run "$g" --emit-graph "$emitted/$(basename "$g")"
    # The graph after the passes (fused ops, groups) is a graph file too: it loads, runs and passes.
    step "emitted  $g" "$gexec" -q run "$emitted/$(basename "$g")" --passes none
  fi
done
[ -n "$no_run" ] && echo "skipped: $skipped runs: $no_run"
echo "smoke: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
