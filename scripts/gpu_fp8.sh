#!/usr/bin/env bash
# The FP8 checks and measurements for a GPU machine (H200), after a release build
# (scripts/gpu_check.sh build, or scripts/build.sh release). Everything lands under $1 (default
# out/fp8): the FP8 GPU tests, every FP8 graph checked and timed (with its dry-run notes), the
# error that fast accumulation keeps at large K, and the FP8 benchmark against torch._scaled_mm.
#   scripts/gpu_fp8.sh OUTDIR
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-out/fp8}
mkdir -p "$out"
gexec=build/release/gexec
status=0
note() { printf '\n=== %s\n' "$*" | tee -a "$out/summary.txt"; }

note "FP8 GPU tests"
build/release/tests/gexec_gpu_tests "[fp8]" > "$out/gpu_tests.txt" 2>&1 || status=1
tail -3 "$out/gpu_tests.txt" | tee -a "$out/summary.txt"

note "FP8 graphs: dry-run notes, checked run, timing"
for g in graphs/fp8_*.json; do
  name=$(basename "$g" .json)
  "$gexec" run --dry-run "$g" > "$out/$name.dry-run.txt" 2>&1 || status=1
  if "$gexec" run "$g" --iters 200 --report "$out/$name.report.json" > "$out/$name.run.txt" 2>&1; then
    echo "pass  $g: $(grep '^time\|median' "$out/$name.run.txt" | tail -1)" | tee -a "$out/summary.txt"
  else
    status=1; echo "FAIL  $g (see $out/$name.run.txt)" | tee -a "$out/summary.txt"
  fi
done

# What fast accumulation keeps: f32 output (so the output rounding adds nothing), fast
# accumulation on and off, K from 1024 to 16384; the check lines give max_abs, max_rel, rel_fro
# and the worst element against the double reference (kFp8FastAccumU in
# include/gexec/verify/bound.hpp, declared by the FP8 kernel, is the bound's assumption to
# compare them with).
note "fast accumulation error (f32 output)"
for k in 1024 4096 16384; do
  for fast in false true; do
    f="$out/fast_${fast}_k$k.json"
    cat > "$f" <<JSON
{"format": "gexec.graph", "version": 1, "name": "fp8_fast_${fast}_k$k",
 "tensors": [
  {"name": "A", "shape": [1024, $k], "dtype": "f8e4m3", "scale": 0.015625, "init": {"dist": "normal", "std": 1}},
  {"name": "B", "shape": [$k, 1024], "dtype": "f8e4m3", "scale": 0.001953125, "init": {"dist": "normal", "std": 0.0625}, "constant": true},
  {"name": "C", "shape": [1024, 1024], "dtype": "f32"}],
 "ops": [{"op_type": "MATMUL", "inputs": ["A", "B"], "outputs": ["C"], "attrs": {"fast_accum": $fast}}],
 "outputs": ["C"]}
JSON
    echo "K=$k fast_accum=$fast:" | tee -a "$out/summary.txt"
    "$gexec" run "$f" --verify full 2>&1 | grep -E '^  C |worst' | tee -a "$out/summary.txt"
  done
done

note "FP8 benchmark against torch._scaled_mm"
python3 scripts/bench_vs_torch.py --gexec "$gexec" --out "$out" --fp8 2>&1 | tee "$out/bench.txt" | tail -30
[ -f "$out/performance-fp8.md" ] || status=1

note "done: status $status (files in $out)"
exit $status
