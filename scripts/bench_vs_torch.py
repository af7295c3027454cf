#!/usr/bin/env python3
"""Benchmarks gexec's fused GEMM + bias + ReLU against PyTorch on the same GPU and the same data.

Runs on a machine with a CUDA device and PyTorch; elsewhere it says so and exits 0.

    python3 scripts/bench_vs_torch.py --gexec build/release/gexec --out docs
    python3 scripts/bench_vs_torch.py --gexec build/release/gexec --out docs --fp8   # FP8 rows (bench_fp8.py)

For each shape and dtype it times two products with `gexec gemm` (GEMM + bias + ReLU, and the plain
product; the graphs are built in memory), loads the inputs gexec used from its --dump into PyTorch,
checks PyTorch's result against gexec's output, and times three PyTorch versions on those
tensors with the method gexec uses. Prints one table and writes OUT/performance.md and
OUT/performance.png.
"""

import argparse
import datetime
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SKIP_MESSAGE = "skipped: needs PyTorch and a CUDA device"
REPO = Path(__file__).resolve().parent.parent
EXAMPLE = "graphs/gemm_bias_relu.json"

# (M, N, K); every shape in f16, the large ones in bf16 too.
SHAPES = [(64, 96, 80), (128, 128, 128), (1024, 1024, 1024), (4096, 4096, 4096), (8192, 8192, 8192),
          (4096, 11008, 4096), (8192, 4096, 1024), (16, 4096, 4096), (4095, 4097, 4093)]
BF16_MIN_MACS = 8192 * 4096 * 1024
TARGET_MIN_MACS = 1024 ** 3  # "every shape >= 1024^3" for the target against PyTorch

MIN_SAMPLE_US = 100.0  # the batch rule of gexec's timer (include/gexec/exec/timing.hpp)
MAX_REPS = 10000

COLUMNS = ["gexec fused", "gexec fused tuned", "gexec plain", "torch relu(addmm)", "torch _addmm_activation",
           "torch graph"]
TORCH_COLUMNS = COLUMNS[3:]
AUTOTUNE_TOP = 16
ODD_SHAPE = (4095, 4097, 4093)  # the padding target: padded (the default) against --pad never


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gexec", default="build/release/gexec", help="the gexec executable")
    p.add_argument("--out", default="docs", help="where performance.md and performance.png go")
    p.add_argument("--warmup-ms", type=float, default=200.0, help="warm-up of every timing")
    p.add_argument("--shapes", default="", help="only these, e.g. 4096x4096x4096,64x96x80 (default: all)")
    p.add_argument("--no-bf16", action="store_true", help="f16 only")
    p.add_argument("--timeout", type=float, default=300.0, help="seconds allowed to one gexec run")
    p.add_argument("--fp8", action="store_true",
                   help="the FP8 rows only (scripts/bench_fp8.py): writes OUT/performance-fp8.md")
    return p.parse_args()


def samples_for(m, n, k):
    """Timed iterations (--iters counts iterations): many for the latency-bound shapes, whose
    samples batch about a hundred microseconds of launches, fewer for the large ones, so that
    the whole benchmark stays within a few minutes."""
    macs = m * n * k
    return 20000 if macs < 2 ** 30 else 100 if macs < 2 ** 34 else 40


def cases(args):
    wanted = {s.strip() for s in args.shapes.split(",") if s.strip()}
    out = []
    for m, n, k in SHAPES:
        if wanted and f"{m}x{n}x{k}" not in wanted:
            continue
        out.append((m, n, k, "f16"))
    if not args.no_bf16:
        for m, n, k in SHAPES:
            if m * n * k >= BF16_MIN_MACS and (not wanted or f"{m}x{n}x{k}" in wanted):
                out.append((m, n, k, "bf16"))
    return out


def shape_label(m, n, k):
    return f"{m}^3" if m == n == k else f"{m}x{n}x{k}"


# ---------------------------------------------------------------- gexec

def gemm_spec(m, n, k, dtype, fused):
    """The `gexec gemm` options of one product: GEMM + bias + ReLU (a constant bias of the output's
    dtype), or the plain product."""
    spec = ["--shapes", f"{m}x{n}x{k}", "--dtype", dtype]
    return spec + (["--bias", dtype, "--act", "relu"] if fused else ["--bias", "none", "--act", "none"])


class GexecError(Exception):
    pass


def run_command(cmd, timeout, env=None):
    """Runs cmd in the repository; returns (the CompletedProcess, wall seconds)."""
    t0 = time.perf_counter()
    try:
        p = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=timeout,
                           env=dict(os.environ, **(env or {})))
    except subprocess.TimeoutExpired:
        raise GexecError(f"timed out after {timeout:.0f} s: {' '.join(cmd)}")
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        last = (p.stderr.strip().splitlines() or p.stdout.strip().splitlines() or ["no output"])[-1]
        raise GexecError(f"gexec exited with {p.returncode}: {last}")
    return p, wall


def run_gexec(gexec, graph, extra, timeout, env=None):
    """Runs `gexec run graph extra...`; returns (the timing-json object or None, wall seconds)."""
    p, wall = run_command([gexec, "run", str(graph)] + extra, timeout, env)
    timing = None
    for line in p.stdout.splitlines():
        if line.startswith("timing-json: "):
            timing = json.loads(line[len("timing-json: "):])
    return timing, wall


def time_gexec(args, graph, iters, extra=(), env=None):
    """`gexec run GRAPH --iters N`: the timing-json object."""
    timing, _ = run_gexec(args.gexec, graph, ["--iters", str(iters), "--warmup-ms", str(args.warmup_ms)] + list(extra),
                          args.timeout, env)
    if timing is None:
        raise GexecError("gexec printed no timing-json line")
    return timing


def time_gemm(args, spec, iters, extra=()):
    """`gexec gemm SPEC --iters N --json`: the one point's row (median_us, reps, graph_used, ...)."""
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "gemm.json"
        run_command([args.gexec, "-q", "gemm"] + spec + ["--iters", str(iters), "--warmup-ms", str(args.warmup_ms),
                                                         "--json", str(out)] + list(extra), args.timeout)
        points = json.loads(out.read_text()).get("points", [])
    if len(points) != 1 or "median_us" not in points[0]:
        raise GexecError("gexec gemm wrote no timed point")
    if points[0].get("result") != "pass":
        raise GexecError(f"gexec gemm: the point did not pass: {points[0].get('error') or points[0].get('result')}")
    return points[0]


# ---------------------------------------------------------------- PyTorch

def time_torch(torch, fn, iters, warmup_ms):
    """gexec's method: warm-up for warmup_ms in chunks (synchronising only between chunks),
    calibration of the batch size, then `iters` samples of `reps` back-to-back calls between
    two CUDA events; returns the median per call in microseconds, and reps."""
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    chunk = 1
    while True:
        c0 = time.perf_counter()
        for _ in range(chunk):
            fn()
        torch.cuda.synchronize()
        if (time.perf_counter() - t0) * 1e3 >= warmup_ms:
            break
        if (time.perf_counter() - c0) * 1e3 < 10 and chunk < 2 ** 20:
            chunk *= 2
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    n = 1
    while True:
        start.record()
        for _ in range(n):
            fn()
        stop.record()
        stop.synchronize()
        us = start.elapsed_time(stop) * 1e3
        per = us / n
        if us >= MIN_SAMPLE_US or n >= MAX_REPS:
            break
        n = min(MAX_REPS, max(2 * n, math.ceil(2 * MIN_SAMPLE_US / max(per, 0.01))))
    reps = 1 if per >= MIN_SAMPLE_US else min(MAX_REPS, math.ceil(MIN_SAMPLE_US / max(per, 1e-6)))
    marks = [torch.cuda.Event(enable_timing=True) for _ in range(iters + 1)]
    marks[0].record()
    for i in range(iters):
        for _ in range(reps):
            fn()
        marks[i + 1].record()
    torch.cuda.synchronize()
    samples = [marks[i].elapsed_time(marks[i + 1]) * 1e3 / reps for i in range(iters)]
    return statistics.median(samples), reps


def cuda_graph_of(torch, fn):
    """fn captured as a CUDA graph, with the output the capture holds."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # warm-up before capture, as torch.cuda.graphs asks
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = fn()
    return g, out


def torch_variants(torch, a, b, bias):
    """The three PyTorch versions of relu(A @ B + bias); the last replays a captured graph,
    returned with its output so that both live as long as the timing."""
    eager = lambda: torch.relu(torch.addmm(bias, a, b))
    fused = lambda: torch._addmm_activation(bias, a, b)
    graph, static_out = cuda_graph_of(torch, fused)
    return {"torch relu(addmm)": eager, "torch _addmm_activation": fused, "torch graph": graph.replay}, (graph, static_out)


def load_inputs(torch, np, dump, dtype):
    tdtype = torch.float16 if dtype == "f16" else torch.bfloat16
    out = {}
    for name in ("A", "B", "Bias", "C"):
        arr = np.load(Path(dump) / f"{name}.npy")
        # bf16 is dumped widened to float32; narrowing it back is exact.
        t = torch.from_numpy(np.ascontiguousarray(arr)).to("cuda")
        out[name] = t.float() if name == "C" else t.to(tdtype)
    return out


def sanity(torch, t, fn):
    """Largest |torch - gexec| over the largest |result|: both accumulate in f32 and round once."""
    ref = fn().float()
    scale = max(ref.abs().max().item(), 1e-6)
    err = (ref - t["C"]).abs().max().item() / scale
    return err, err <= 2e-2


# ---------------------------------------------------------------- one case

def run_case(args, torch, np, tmp, m, n, k, dtype):
    row = {"m": m, "n": n, "k": k, "dtype": dtype, "us": {}, "errors": [], "check": ""}
    iters = samples_for(m, n, k)
    fused_g, plain_g, dump = gemm_spec(m, n, k, dtype, True), gemm_spec(m, n, k, dtype, False), tmp / "dump"
    shutil.rmtree(dump, ignore_errors=True)
    try:
        t = time_gemm(args, fused_g, iters, ["--verify", "sample", "--dump", str(dump)])
        row["us"]["gexec fused"] = t["median_us"]
        row["reps"] = t.get("reps")
        row["graph"] = t.get("graph_used")
        row["peak"] = t.get("peak_tflops")
    except (GexecError, ValueError, KeyError) as e:
        row["errors"].append(f"gexec fused: {e}")
    try:
        row["us"]["gexec fused tuned"] = time_gemm(
            args, fused_g, iters, ["--verify", "sample", "--autotune", "--autotune-top", str(AUTOTUNE_TOP)])["median_us"]
    except (GexecError, ValueError, KeyError) as e:
        row["errors"].append(f"gexec fused tuned: {e}")
    try:
        row["us"]["gexec plain"] = time_gemm(args, plain_g, iters, ["--verify", "sample"])["median_us"]
    except (GexecError, ValueError, KeyError) as e:
        row["errors"].append(f"gexec plain: {e}")
    if (m, n, k) == ODD_SHAPE:
        try:
            row["unpadded_us"] = time_gemm(args, fused_g, iters, ["--verify", "sample", "--pad", "never"])["median_us"]
        except (GexecError, ValueError, KeyError) as e:
            row["errors"].append(f"gexec fused unpadded: {e}")
    if not (dump / "A.npy").exists():
        row["errors"].append("torch: no dumped inputs from gexec to run on")
        return row
    graph = None
    try:
        tensors = load_inputs(torch, np, dump, dtype)
        shutil.rmtree(dump, ignore_errors=True)
        a, b, bias = tensors["A"], tensors["B"], tensors["Bias"]
        variants, graph = torch_variants(torch, a, b, bias)
        err, ok = sanity(torch, tensors, variants["torch _addmm_activation"])
        row["check"] = f"{'ok' if ok else 'MISMATCH'} {err:.1e}"
        for name, fn in variants.items():
            row["us"][name], _ = time_torch(torch, fn, iters, args.warmup_ms)
    except Exception as e:  # a failed shape is recorded and the others still run
        row["errors"].append(f"torch: {type(e).__name__}: {e}")
    finally:
        shutil.rmtree(dump, ignore_errors=True)
        del graph
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
    return row


def tflops(row, col):
    us = row["us"].get(col)
    return 2.0 * row["m"] * row["n"] * row["k"] / (us * 1e-6) / 1e12 if us else None


def ratio(row, col):
    f, o = row["us"].get("gexec fused"), row["us"].get(col)
    return f / o if f and o else None


def torch_best(row):
    times = [row["us"][c] for c in TORCH_COLUMNS if c in row["us"]]
    return min(times) if len(times) == len(TORCH_COLUMNS) else None


# ---------------------------------------------------------------- the example graph

def example_timings(args):
    res = {"errors": []}
    for key, extra in (("graph_us", []), ("direct_us", ["--no-cuda-graph"])):
        try:
            t = time_gexec(args, REPO / EXAMPLE, 1000, extra)
            res[key] = t["median_us"]
            res[key + "_reps"] = t.get("reps")
            if key == "graph_us" and not t.get("graph_used"):
                res["errors"].append("the example was not replayed as a CUDA graph")
        except (GexecError, ValueError, KeyError) as e:
            res["errors"].append(f"example {key}: {e}")
    try:
        run_gexec(args.gexec, REPO / EXAMPLE, [], args.timeout)  # untimed: loads the binary and driver into the page cache
        walls = [run_gexec(args.gexec, REPO / EXAMPLE, [], args.timeout)[1] for _ in range(5)]
        res["process_s"] = statistics.median(walls)
    except GexecError as e:
        res["errors"].append(f"example process: {e}")
    return res


# ---------------------------------------------------------------- output

def fmt_us(v):
    return "-" if v is None else f"{v:.1f}" if v >= 100 else f"{v:.2f}"


def fmt_x(v):
    return "-" if v is None else f"{v:.2f}x"


def fmt_tf(v):
    return "-" if v is None else f"{v:.1f}" if v >= 10 else f"{v:.3f}"


HEAD = ["shape (MxNxK)", "dtype"] + [c + " us" for c in COLUMNS] + [
    "fused/plain", "fused/torch best", "tuned/torch best", "fused TFLOP/s", "tuned TFLOP/s", "check"]


def best_ratio(row, col):
    best, us = torch_best(row), row["us"].get(col)
    return us / best if best and us else None


def table_rows(rows):
    out = []
    for r in rows:
        out.append([f"{r['m']}x{r['n']}x{r['k']}", r["dtype"]] + [fmt_us(r["us"].get(c)) for c in COLUMNS] +
                   [fmt_x(ratio(r, "gexec plain")), fmt_x(best_ratio(r, "gexec fused")),
                    fmt_x(best_ratio(r, "gexec fused tuned")), fmt_tf(tflops(r, "gexec fused")),
                    fmt_tf(tflops(r, "gexec fused tuned")), r["check"] or "-"])
    return out


def print_columns(head, body, right=True):
    """head and the body's rows as columns as wide as their widest cell, two spaces apart."""
    widths = [max(len(h), *(len(b[i]) for b in body)) if body else len(h) for i, h in enumerate(head)]
    pad = str.rjust if right else str.ljust
    print("  ".join(pad(h, w) for h, w in zip(head, widths)))
    for b in body:
        print("  ".join(pad(c, w) for c, w in zip(b, widths)))


def print_table(rows):
    print_columns(HEAD, table_rows(rows))
    for r in rows:
        for e in r["errors"]:
            print(f"  {r['m']}x{r['n']}x{r['k']} {r['dtype']}: {e}")


def targets(rows, ex):
    """(target, measured, verdict) for each target of the issue; f16 rows only."""
    out = []
    f16 = {(r["m"], r["n"], r["k"]): r for r in rows if r["dtype"] == "f16"}

    def verdict(value, limit):
        return "not measured" if value is None else "met" if value <= limit else "missed"

    for s in ((4096, 4096, 4096), (8192, 8192, 8192)):
        r = f16.get(s)
        v = ratio(r, "gexec plain") if r else None
        out.append((f"fused <= 1.03x plain, {shape_label(*s)} f16", fmt_x(v), verdict(v, 1.03)))
    for s, r in f16.items():
        if s[0] * s[1] * s[2] < TARGET_MIN_MACS:
            continue
        d, t = best_ratio(r, "gexec fused"), best_ratio(r, "gexec fused tuned")
        best = min(x for x in (d, t) if x is not None) if d or t else None
        out.append((f"fused <= 0.95x PyTorch's best, {shape_label(*s)} f16",
                    f"{fmt_x(d)} default, {fmt_x(t)} with --autotune", verdict(best, 0.95)))
    r = f16.get(ODD_SHAPE)
    if r:
        padded, unpadded = r["us"].get("gexec fused"), r.get("unpadded_us")
        v = unpadded / padded if padded and unpadded else None
        out.append((f"{shape_label(*ODD_SHAPE)} f16 padded >= 3x the unpadded rate",
                    f"{v:.2f}x ({fmt_us(padded)} us padded, {fmt_us(unpadded)} us with --pad never)" if v else "-",
                    "not measured" if v is None else "met" if v >= 3 else "missed"))
    g, d, p = ex.get("graph_us"), ex.get("direct_us"), ex.get("process_s")
    # Three decimals: a verdict must not hinge on a digit the table hides.
    out.append(("example graph per iteration, graph replay <= 4 us", f"{g:.3f} us" if g else "-", verdict(g, 4.0)))
    out.append(("example graph per iteration, direct launches <= 7 us", f"{d:.3f} us" if d else "-",
                verdict(d, 7.0)))
    out.append((f"whole process `gexec run {EXAMPLE}` < 0.5 s", f"{p:.3f} s" if p else "-",
                "not measured" if p is None else "met" if p < 0.5 else "missed"))
    return out


def versions(torch, args):
    v = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__, "torch CUDA": torch.version.cuda,
         "python": platform.python_version()}
    try:
        v["gexec"] = subprocess.run([args.gexec, "--version"], capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as e:
        v["gexec"] = f"unknown ({e})"
    try:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30)
        v["driver"] = smi.stdout.strip().splitlines()[0] if smi.returncode == 0 and smi.stdout.strip() else "unknown"
    except (OSError, subprocess.TimeoutExpired):
        v["driver"] = "unknown"
    return v


GEXEC_COLUMNS = COLUMNS[:3]


def plot(rows, path):
    """Time ratios of gexec's columns to PyTorch's best on a linear axis (below 1: gexec is
    faster), with lines at parity and at the 0.95 target; the latency-bound shapes (below
    TARGET_MIN_MACS, where launch cost dominates and the target does not apply) in their own
    panel, so that their larger ratios do not squash the others."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no plot"
    groups = [("compute-bound shapes (>= 1024^3 multiply-adds): target <= 0.95x",
               [r for r in rows if r["m"] * r["n"] * r["k"] >= TARGET_MIN_MACS]),
              ("latency-bound shapes", [r for r in rows if r["m"] * r["n"] * r["k"] < TARGET_MIN_MACS])]
    groups = [(t, g) for t, g in groups if g]
    if not groups:
        return "no rows to plot"
    fig, axes = plt.subplots(1, len(groups), figsize=(max(10, 1.0 * len(rows) + 3), 5.5), squeeze=False,
                             gridspec_kw={"width_ratios": [len(g) for _, g in groups]})
    width = 0.8 / len(GEXEC_COLUMNS)
    for ax, (title, group) in zip(axes[0], groups):
        for i, col in enumerate(GEXEC_COLUMNS):
            xs = [j + (i - (len(GEXEC_COLUMNS) - 1) / 2) * width for j in range(len(group))]
            ax.bar(xs, [best_ratio(r, col) or 0 for r in group], width, label=col)
        ax.axhline(1.0, color="black", linewidth=1, label="PyTorch's best (parity)")
        if group is groups[0][1] and title.startswith("compute"):
            ax.axhline(0.95, color="tab:red", linestyle="--", linewidth=1, label="target 0.95x")
        ax.set_xticks(range(len(group)))
        ax.set_xticklabels([f"{shape_label(r['m'], r['n'], r['k'])}\n{r['dtype']}" for r in group], fontsize=8)
        ax.set_ylim(bottom=0)
        ax.set_title(title, fontsize=9)
        ax.grid(axis="y", alpha=0.3)
    axes[0][0].set_ylabel("gexec time / PyTorch's best time (lower is better)")
    axes[0][0].legend(fontsize=8, loc="upper left")
    fig.suptitle("GEMM + bias + ReLU: gexec against PyTorch on the same GPU and data")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return None


HAND_BEGIN = "<!-- written by hand: kept as it is when the script rewrites this file -->"
HAND_END = "<!-- end of the part written by hand -->"


def hand_written(path):
    """The part of an earlier performance.md between the two markers (the analysis of a run),
    with the markers; the bare markers when there is none."""
    try:
        old = Path(path).read_text()
        begin, end = old.index(HAND_BEGIN), old.index(HAND_END)
        if begin < end:
            return old[begin:end + len(HAND_END)]
    except (OSError, ValueError):
        pass
    return HAND_BEGIN + "\n" + HAND_END


def write_markdown(path, rows, ex, ver, command, plot_note, elapsed, warmup_ms):
    def md_table(head, body):
        lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(b) + " |" for b in body]
        return "\n".join(lines)

    peak = next((r.get("peak") for r in rows if r.get("peak")), None)
    errors = [f"- {r['m']}x{r['n']}x{r['k']} {r['dtype']}: {e}" for r in rows for e in r["errors"]] + \
             [f"- {e}" for e in ex["errors"]]
    text = f"""# Performance

gexec against PyTorch on {ver['device']}, {datetime.date.today().isoformat()}: medians of one run,
on the same input values (PyTorch reads the inputs gexec drew, from its `--dump`).

Reproduce on a machine with a CUDA device and PyTorch (takes a few minutes):

    {command}

## Method

- **gexec fused**: a graph with one `GEMM_BIAS_ACT` (act relu): A [M,K], B [K,N], bias [N] and
  C [M,N], all of the row's dtype. `gexec run G --iters N --warmup-ms {warmup_ms:g} --verify sample --dump DIR`,
  CUDA graph replay (the default). **gexec fused tuned**: the same with
  `--autotune --autotune-top {AUTOTUNE_TOP}` (the fastest of cuBLASLt's first {AUTOTUNE_TOP} candidates that matches the
  default's output). **gexec plain**: the same as fused with one `MATMUL` and no bias.
- {shape_label(*ODD_SHAPE)} is padded to 16-byte rows by default; it is also timed with `--pad never`:
  {fmt_us(next((r.get("unpadded_us") for r in rows if (r["m"], r["n"], r["k"]) == ODD_SHAPE and r["dtype"] == "f16"), None))} us (f16).
- gexec's timer: warm-up by duration, then N samples, each of R back-to-back iterations between
  two CUDA events (R chosen once so that a sample lasts at least 100 us; 1 for larger
  iterations), nothing synchronised or allocated inside the loop; the median of the per-iteration times.
- **PyTorch**, on the same tensors and with the same method (warm-up, batches of back-to-back
  calls, CUDA events, median): `torch.relu(torch.addmm(bias, A, B))`,
  `torch._addmm_activation(bias, A, B)`, and a `torch.cuda.CUDAGraph` replay of the latter.
- Ratios are gexec's time / the other time: below 1 means gexec is faster. "torch best" is the
  fastest of the three PyTorch versions.
  TFLOP/s is 2MNK / median time (the bias and ReLU are not counted).
- check: the largest |PyTorch - gexec| over the largest |result| (a sanity check; gexec checks
  its own output against its CPU reference with `--verify sample`).
- Device peak as gexec measured it (8192^3 f16 cuBLASLt GEMM): {f'{peak:.1f} TFLOP/s' if peak else 'unknown'}.

## Results

{md_table(HEAD, table_rows(rows))}

{'![TFLOP/s per shape and implementation](performance.png)' if not plot_note else plot_note}

## The example graph (`{EXAMPLE}`, 64x96x80, f16)

| measurement | value |
|---|---|
| per iteration, CUDA graph replay | {fmt_us(ex.get('graph_us'))} us (samples of {ex.get('graph_us_reps', '-')} iterations) |
| per iteration, direct launches (`--no-cuda-graph`) | {fmt_us(ex.get('direct_us'))} us (samples of {ex.get('direct_us_reps', '-')} iterations) |
| whole process `gexec run {EXAMPLE}`, median of 5 | {f"{ex['process_s']:.3f} s" if ex.get('process_s') else '-'} |

## Targets

{md_table(["target", "measured", "verdict"], [list(t) for t in targets(rows, ex)])}

{hand_written(path)}

## Errors

{chr(10).join(errors) if errors else 'None.'}

## Versions

{md_table(["", ""], [[k, str(v)] for k, v in ver.items()])}

The whole benchmark took {elapsed:.0f} s.
"""
    Path(path).write_text(text)


def main():
    args = parse_args()
    try:
        import numpy as np
        import torch
    except ImportError:
        print(SKIP_MESSAGE)
        return 0
    if not torch.cuda.is_available():
        print(SKIP_MESSAGE)
        return 0
    gexec = Path(args.gexec)
    if not gexec.is_absolute():
        gexec = (Path.cwd() / gexec).resolve()
    if not gexec.exists():
        print(f"bench_vs_torch: no gexec at {gexec}; build it first (scripts/build.sh release)", file=sys.stderr)
        return 2
    args.gexec = str(gexec)
    out_dir = Path(args.out)
    if not out_dir.is_absolute():
        out_dir = Path.cwd() / out_dir
    out_dir.mkdir(parents=True, exist_ok=True)
    command = "python3 scripts/bench_vs_torch.py " + " ".join(sys.argv[1:])
    if args.fp8:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import bench_fp8
        return bench_fp8.run_fp8(sys.modules[__name__], args, torch, np, out_dir)

    start = time.perf_counter()
    rows = []
    with tempfile.TemporaryDirectory(prefix="gexec-bench-") as tmp:
        for m, n, k, dtype in cases(args):
            print(f"{m}x{n}x{k} {dtype} ...", file=sys.stderr, flush=True)
            rows.append(run_case(args, torch, np, Path(tmp), m, n, k, dtype))
    print("example graph ...", file=sys.stderr, flush=True)
    ex = example_timings(args)
    elapsed = time.perf_counter() - start

    print_table(rows)
    print(f"example graph: graph replay {fmt_us(ex.get('graph_us'))} us, direct launches {fmt_us(ex.get('direct_us'))} us, "
          f"whole process {ex['process_s']:.3f} s" if ex.get("process_s") else "example graph: see the errors")
    for e in ex["errors"]:
        print(f"  {e}")
    for name, value, verdict in targets(rows, ex):
        print(f"target: {name}: {value} ({verdict})")

    plot_note = plot(rows, out_dir / "performance.png")
    ver = versions(torch, args)
    write_markdown(out_dir / "performance.md", rows, ex, ver, command, plot_note, elapsed, args.warmup_ms)
    print(f"wrote {out_dir / 'performance.md'}" + ("" if plot_note else f" and {out_dir / 'performance.png'}"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
