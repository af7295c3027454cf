#!/usr/bin/env bash
# On a GPU machine with Nsight Compute: shows that `gexec run --profile-range` hands an outside
# profiler exactly the timed iterations, and that the replay lines tune offline for a run.
#   scripts/gpu_profile.sh [GEXEC] [OUTDIR]      (defaults: build/release/gexec, out/profile)
# 1. ncu --profile-from-start off, with --iters N --profile-range, captures N x K kernels, K the
#    kernels of one iteration, in CUDA graph replay and in direct launches alike; without
#    --profile-range it captures none (nothing outside the range is taken).
# 2. With --nvtx --print-nvtx-rename kernel and direct launches, each captured kernel carries the
#    NVTX range of its op, "OP [KERNEL]": every iteration's sequence of ranges is the plan's ops
#    that run every time, in order (from the run's JSON report), and ncu's --nvtx-include
#    "gexec timed iterations/" keeps all of them.
# 3. gexec run --emit-gemms; gexec gemm --from runs each line's product with its candidate (the
#    JSON's `command` of each point is its line); gexec gemm --from --autotune --tuning-cache, then
#    gexec run --tuning-cache takes every product's candidate "from the cache".
# Exit 0 when all hold; the ncu CSV files and logs are in OUTDIR.
set -uo pipefail
cd "$(dirname "$0")/.."
gexec=${1:-build/release/gexec}
out=${2:-out/profile}
graph=${GRAPH:-graphs/mlp3.json}
iters=5
mkdir -p "$out"
status=0
if ! command -v ncu > /dev/null; then
  echo "ncu not found: Nsight Compute is needed for this check"
  exit 1
fi
ncu --version | tail -1

"$gexec" -q run "$graph" --backend cuda --iters "$iters" --profile-range --no-cuda-graph --report "$out/plan.json" \
  > /dev/null || { echo "the run itself failed"; exit 1; }

capture() {  # NAME then gexec's run options: ncu's CSV (raw page, one row per kernel) in $out/NAME.csv
  local name=$1
  shift
  ncu --profile-from-start off --nvtx --print-nvtx-rename kernel --csv --page raw --metrics gpu__time_duration.sum \
    --log-file "$out/$name.csv" "$gexec" -q run "$graph" --backend cuda "$@" > "$out/$name.out" 2>&1
  echo "$name: ncu exit $?"
}
capture graph --iters "$iters" --profile-range
capture direct --iters "$iters" --profile-range --no-cuda-graph
capture none --iters "$iters" --no-cuda-graph
ncu --profile-from-start off --nvtx --nvtx-include "gexec timed iterations/" --print-nvtx-rename kernel --csv \
  --page raw --metrics gpu__time_duration.sum --log-file "$out/filtered.csv" \
  "$gexec" -q run "$graph" --backend cuda --iters "$iters" --profile-range --no-cuda-graph > "$out/filtered.out" 2>&1

python3 - "$out" "$iters" <<'PY' || status=1
import csv, json, sys
out, iters = sys.argv[1], int(sys.argv[2])

def kernels(name):
    """The 'Kernel Name' of every captured kernel, in order (the units row skipped)."""
    rows = [l for l in open(f"{out}/{name}.csv") if l.startswith('"')]
    if not rows:
        return []
    table = list(csv.DictReader(rows))
    return [r["Kernel Name"] for r in table if r.get("ID", "").strip().isdigit()]

plan = json.load(open(f"{out}/plan.json"))
ops = [f'{k["op"]} [{k["kernel"]}]' for k in plan["kernels"] if not k["hoisted"]]
graph, direct, none, filtered = (kernels(n) for n in ("graph", "direct", "none", "filtered"))
ok = True
def check(cond, text):
    global ok
    print(("ok   " if cond else "FAIL ") + text)
    ok &= bool(cond)

per_iter = len(direct) // iters if direct else 0
print(f"plan: {len(ops)} ops every run: {ops}")
print(f"captured: graph replay {len(graph)}, direct {len(direct)}, without --profile-range {len(none)}, "
      f"--nvtx-include 'gexec timed iterations/' {len(filtered)}")
check(per_iter > 0 and len(direct) == iters * per_iter, f"direct launches: {len(direct)} = {iters} x {per_iter} kernels")
check(len(graph) == len(direct), f"CUDA graph replay: {len(graph)} kernels, as many as direct launches")
check(len(none) == 0, "without --profile-range nothing is captured")
check(len(filtered) == len(direct), f"--nvtx-include keeps the {len(direct)} kernels of the timed iterations")
def op_of(name):
    """ncu renames a kernel "RANGE/KERNEL" after the innermost NVTX range: the op it belongs to."""
    return next((o for o in ops if name == o or name.startswith(o + "/")), name)

for i in range(iters):
    seq = [op_of(n) for n in direct[i * per_iter:(i + 1) * per_iter]]
    collapsed = [n for j, n in enumerate(seq) if j == 0 or seq[j - 1] != n]
    check(collapsed == ops, f"iteration {i}: the kernels' NVTX ranges are the plan's ops in order")
print("profile check:", "pass" if ok else "FAIL")
sys.exit(0 if ok else 1)
PY

echo "--- replay lines, tuned offline, read by the run"
"$gexec" -q run "$graph" --backend cuda --emit-gemms "$out/products.gemms" > /dev/null || status=1
grep -v '^#' "$out/products.gemms"
# Each line run alone names the same product and candidate: gemm --json's `command` is the line.
"$gexec" -q gemm --from "$out/products.gemms" --backend cuda --iters 20 --json "$out/replayed.json" > /dev/null || status=1
python3 - "$out" <<'PY' || status=1
import json, sys
out = sys.argv[1]
lines = [l.split("  #")[0] for l in open(f"{out}/products.gemms") if l.strip() and not l.startswith("#")]
points = json.load(open(f"{out}/replayed.json"))["points"]
same = [p["command"] for p in points] == lines
print(("ok  " if same else "FAIL") + f" {len(points)} replayed points ran the products and candidates (--algo) of the {len(lines)} lines")
for p in points:
    print(f'   {p["m"]}x{p["n"]}x{p["k"]} {p["dtype"]} {p["kernel"]} algo {p["algo_index"]}/{p["algo_count"]} {p["median_us"]:.2f} us {p["result"]}')
sys.exit(0 if same else 1)
PY
rm -f "$out/tune.json"
"$gexec" gemm --from "$out/products.gemms" --backend cuda --autotune --tuning-cache "$out/tune.json" --iters 20 \
  --json "$out/tuned.json" 2>&1 | tail -6 || status=1
products=$(grep -vc '^#' "$out/products.gemms")
"$gexec" run "$graph" --backend cuda --tuning-cache "$out/tune.json" > "$out/cached_run.txt" 2>&1 || status=1
hits=$(grep -c "from the cache" "$out/cached_run.txt")
grep "autotune:" "$out/cached_run.txt"
if [ "$hits" -eq "$products" ]; then
  echo "ok   the run took all $products products' candidates from the cache gemm --from --autotune wrote"
else
  echo "FAIL the run took $hits of $products products' candidates from the cache"; status=1
fi
exit $status
