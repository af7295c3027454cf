#!/usr/bin/env bash
# ONNX's own conformance tests (backend test data: DATA/{node,pytorch-converted,...}/test_*/
# model.onnx with test_data_set_0/) through gexec. Every model goes through `gexec validate` (one
# process for all); a model that validates runs with
#   gexec run MODEL --backend B --load-inputs SET --expect SET
# on the CPU backend, and on CUDA where a device is present (f32 products without TF32 unless
# --tf32); a model that does not must be refused with exit 2 and a message that names a node's op
# ("node 3 (Gemm, opset 17): why"). Prints a table (test, ops, result) and the line
#   N passed, N failed, N refused
# and exits 1 on any failure: a run that fails its check or --expect, a crash, an internal error,
# a refusal that names no op. Exits 77 (skipped) when no test data is found, unless
# GEXEC_CONFORMANCE_REQUIRED=1 (CI), which makes that a failure too.
#
#   scripts/onnx_conformance.sh [--gexec PATH] [--data DIR] [--backend cpu|cuda|all] [--tf32] [--filter REGEX] [-v] [-q]
#     --data: the test data folder (default: libonnx-testdata's /usr/include/onnx/backend/test/data,
#       else the Python onnx package's onnx/backend/test/data; GEXEC_ONNX_TEST_DATA also sets it)
#     --backend: all (the default) runs the CPU backend and CUDA where `gexec --version` counts a device
#     --filter: only the tests whose folder (e.g. node/test_gemm_alpha) matches
#     -v: print each failing run's output
#     -q: no progress line (it is drawn on stderr only when stderr is a terminal: tests done of the
#       total, elapsed, an estimate of the time left)
# Ctrl-C stops it after the test running: the rows printed so far stand, a summary of those
# follows, exit 130.
set -uo pipefail
cd "$(dirname "$0")/.."
gexec=build/release/gexec
data=${GEXEC_ONNX_TEST_DATA:-}
backend=all
precision=f32
filter=""
verbose=0
quiet=0
while [ $# -gt 0 ]; do
  case $1 in
    --gexec) gexec=$2; shift ;;
    --data) data=$2; shift ;;
    --backend) backend=$2; shift ;;
    --tf32) precision=tf32 ;;
    --filter) filter=$2; shift ;;
    -v) verbose=1 ;;
    -q) quiet=1 ;;
    *) echo "usage: scripts/onnx_conformance.sh [--gexec PATH] [--data DIR] [--backend cpu|cuda|all] [--tf32] [--filter REGEX] [-v] [-q]" >&2; exit 2 ;;
  esac
  shift
done
case $backend in cpu|cuda|all) ;; *) echo "onnx_conformance: --backend cpu, cuda or all" >&2; exit 2 ;; esac

if [ -z "$data" ]; then
  for d in /usr/include/onnx/backend/test/data /usr/local/include/onnx/backend/test/data; do
    [ -d "$d/node" ] && { data=$d; break; }
  done
fi
if [ -z "$data" ]; then
  for py in python3 /usr/bin/python3; do
    d=$("$py" -c "import onnx, os; print(os.path.join(os.path.dirname(onnx.__file__), 'backend', 'test', 'data'))" 2>/dev/null) || continue
    [ -d "$d/node" ] && { data=$d; break; }
  done
fi
if [ -z "$data" ] || [ ! -d "$data" ]; then
  echo "onnx_conformance: skipped: no ONNX test data (sudo apt-get install libonnx-testdata, or pip's onnx; --data DIR)"
  [ "${GEXEC_CONFORMANCE_REQUIRED:-0}" = 1 ] && exit 1
  exit 77
fi
[ -x "$gexec" ] || { echo "onnx_conformance: no gexec binary at $gexec (bash scripts/build.sh release gexec)" >&2; exit 2; }
version=$("$gexec" --version)
if ! grep -q "^inputs: .*onnx" <<<"$version"; then
  echo "onnx_conformance: $gexec was built without ONNX input (see its configure summary)" >&2
  exit 1
fi
backends=()
case $backend in
  cpu) backends=(cpu) ;;
  cuda) backends=(cuda) ;;
  all)
    backends=(cpu)
    devices=$(sed -n 's/^cuda devices: \([0-9]*\).*/\1/p' <<<"$version")
    [ "${devices:-0}" -gt 0 ] && backends+=(cuda)
    ;;
esac

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
models=()
for m in "$data"/*/test_*/model.onnx; do
  t=${m#"$data"/}
  t=${t%/model.onnx}
  [ -n "$filter" ] && ! grep -qE -- "$filter" <<<"$t" && continue
  models+=("$m")
done
[ ${#models[@]} -gt 0 ] || { echo "onnx_conformance: no test matches under $data" >&2; exit 1; }

# One validate for every model; a crash there (no verdict for some model) is retried model by model.
start=$SECONDS
timeout 600 "$gexec" validate "${models[@]}" >"$tmp/ok" 2>"$tmp/refused"
rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 2 ]; then
  echo "onnx_conformance: gexec validate over all models exited $rc; validating them one by one" >&2
  : >"$tmp/ok"
  : >"$tmp/refused"
  for m in "${models[@]}"; do
    timeout 60 "$gexec" validate "$m" >>"$tmp/ok" 2>>"$tmp/refused"
    r=$?
    [ $r -ne 0 ] && [ $r -ne 2 ] && echo "$m: CRASH: gexec validate exited $r" >>"$tmp/refused"
  done
fi

# Each model's verdict, in one pass (a process per model would cost minutes): "run<TAB>ops" for
# a model that validated; "refused<TAB>ops<TAB>why" for one refused with the ops it names; "FAIL<TAB>
# ops<TAB>why" for no verdict, an internal error or a refusal that names no op.
printf '%s\n' "${models[@]}" >"$tmp/models"
awk -v ok="$tmp/ok" -v refused="$tmp/refused" '
  function model_of(line,   i) { i = index(line, "/model.onnx: "); return i ? substr(line, 1, i + 10) : "" }
  BEGIN {
    while ((getline line < ok) > 0) {
      m = model_of(line)
      if (m == "") continue
      ops = line; sub(/^.*; ops /, "", ops); sub(/\)$/, "", ops)
      valid[m] = ops
    }
    while ((getline line < refused) > 0) {
      m = model_of(line)
      if (m == "") continue
      rest = substr(line, length(m) + 3)
      if (!(m in first)) first[m] = rest
      if (rest ~ /(internal|CRASH)/) bad[m] = rest
      if (match(rest, /node [0-9]+( "[^"]*")? \([A-Za-z0-9_]+, opset [0-9?]+/)) {
        op = substr(rest, RSTART, RLENGTH); sub(/^.*\(/, "", op); sub(/,.*$/, "", op)
        if (index("," named[m] ",", "," op ",") == 0) named[m] = named[m] (named[m] == "" ? "" : ",") op
      }
    }
  }
  {
    m = $0
    if (m in valid) { print "run\t" valid[m]; next }
    if (!(m in first)) { print "FAIL\t?\tno verdict from gexec validate"; next }
    if (m in bad) { print "FAIL\t" (named[m] == "" ? "?" : named[m]) "\t" bad[m]; next }
    if (named[m] == "") { print "FAIL\t?\ta refusal that names no op: " first[m]; next }
    why = first[m]; sub(/^node [0-9]+( "[^"]*")? \([^)]*\): /, "", why)
    print "refused\t" named[m] "\t" why
  }' "$tmp/models" >"$tmp/verdicts"

passed=0 failed=0 refused=0
printf '%-58s %-34s %s\n' "test" "ops" "result"
# The progress line: on stderr when it is a terminal, erased before each row of the table.
show_progress=0
[ -t 2 ] && [ $quiet = 0 ] && show_progress=1
progress() {  # DONE
  [ $show_progress = 1 ] || return 0
  local done=$1 total=${#models[@]} spent=$((SECONDS - start)) left=""
  [ "$done" -gt 0 ] && left=", ~$(( spent * (total - done) / done )) s left"
  printf '\r\033[Kconformance: %d/%d tests, %d s%s' "$done" "$total" "$spent" "$left" >&2
}
report() {
  [ $show_progress = 1 ] && printf '\r\033[K' >&2
  printf '%-58s %-34s %s\n' "$1" "$2" "$3"
}
interrupted=0
trap 'interrupted=1' INT
i=0
while IFS=$'\t' read -r verdict ops why; do
  [ $interrupted = 1 ] && break
  progress "$i"
  m=${models[$i]}
  i=$((i + 1))
  t=${m#"$data"/}
  t=${t%/model.onnx}
  case $verdict in
    refused) refused=$((refused + 1)); report "$t" "$ops" "refused: ${why:0:100}"; continue ;;
    FAIL) failed=$((failed + 1)); report "$t" "$ops" "FAIL (${why:0:140})"; continue ;;
  esac
  set_dir=$(dirname "$m")/test_data_set_0
  result=""
  for b in "${backends[@]}"; do
    log="$tmp/run.log"
    timeout 300 "$gexec" run "$m" --backend "$b" --precision "$precision" --load-inputs "$set_dir" --expect "$set_dir" \
      >"$log" 2>&1
    r=$?
    # Ctrl-C reached gexec too: that test did not finish, and is not a row.
    if [ $interrupted = 1 ]; then i=$((i - 1)); break 2; fi
    case $r in
      0) result+="${result:+, }pass ($b)" ;;
      1) result+="${result:+, }FAIL ($b: a check failed)" ;;
      2|3) result+="${result:+, }FAIL ($b: $(grep -m1 '^gexec: ' "$log" | cut -c1-160))" ;;
      *) result+="${result:+, }FAIL ($b: exit $r, a crash or timeout)" ;;
    esac
    if [ $r -ne 0 ] && [ $verbose = 1 ]; then sed 's/^/    | /' "$log"; fi
  done
  if [[ $result == *FAIL* ]]; then failed=$((failed + 1)); else passed=$((passed + 1)); fi
  report "$t" "$ops" "$result"
done <"$tmp/verdicts"
[ $show_progress = 1 ] && printf '\r\033[K' >&2
if [ $interrupted = 1 ]; then
  echo "interrupted (Ctrl-C) after $i of ${#models[@]} tests: $passed passed, $failed failed, $refused refused"
  exit 130
fi
echo "backends: ${backends[*]} (f32 products: $precision); test data: $data; $((SECONDS - start)) s"
echo "$passed passed, $failed failed, $refused refused"
[ $failed -eq 0 ]
