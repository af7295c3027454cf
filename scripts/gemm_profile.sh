#!/usr/bin/env bash
# `gexec gemm` on a GPU: the cube sweep 1024..8192 in f16 and bf16 with a warm and a cold L2 (NVML
# figures in every row), and `gexec compare` on 4095x4097x4093: two identical runs (expected: no
# regression) and --pad never against padding (expected: SLOW, exit 1). Files go to $1.
#   scripts/gemm_profile.sh OUTDIR [GEXEC]     (about a minute and a half on an H200)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/gemm_profile.sh OUTDIR [GEXEC]}
gexec=${2:-build/release/gexec}
mkdir -p "$out"
status=0
note() { printf '\n=== %s\n' "$*"; }

sweep=(--cube 1024:8192:1024 --dtype f16,bf16 --verify sample --iters 200 --warmup-ms 100)
note "cube sweep, warm L2"
"$gexec" gemm "${sweep[@]}" --csv "$out/gemm_cubes.csv" --json "$out/gemm_warm.json" --tags run:warm \
  --export-times "$out/gemm_warm_times.csv" || status=1
note "cube sweep, cold L2 (rotating operand sets)"
"$gexec" gemm "${sweep[@]}" --cold-l2 --csv "$out/gemm_cubes.csv" --append --json "$out/gemm_cold.json" \
  --tags run:cold || status=1

note "summary of $out/gemm_cubes.csv"
python3 - "$out/gemm_cubes.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
cols = ["m", "dtype", "l2", "algo_index", "median_us", "p99_us", "cv", "tflops", "peak_pct", "sm_mhz_start",
        "sm_mhz_min", "sm_mhz_end", "power_w_max", "power_limit_w", "temp_c_end", "throttle", "result"]
print(" ".join(f"{c:>13}" for c in cols))
for r in rows:
    print(" ".join(f"{r.get(c, ''):>13}" for c in cols))
print(f"{len(rows)} rows, {sum(r['result'] == 'pass' for r in rows)} passed")
PY

odd=(--shapes 4095x4097x4093 --dtype f16 --bias f16 --act relu --verify sample --iters 100 --warmup-ms 100)
note "4095x4097x4093: padded (auto) twice, and --pad never"
"$gexec" gemm "${odd[@]}" --pad auto --json "$out/odd_pad.json" || status=1
"$gexec" gemm "${odd[@]}" --pad auto --json "$out/odd_pad_again.json" || status=1
"$gexec" gemm "${odd[@]}" --pad never --json "$out/odd_never.json" || status=1
note "compare: identical reruns (expected: no regression, exit 0)"
"$gexec" compare "$out/odd_pad.json" "$out/odd_pad_again.json"; echo "exit $?"
note "compare: padded as the base, --pad never as the new run (expected: SLOW, exit 1)"
"$gexec" compare "$out/odd_pad.json" "$out/odd_never.json"; echo "exit $?"
exit $status
