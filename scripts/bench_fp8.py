#!/usr/bin/env python3
"""FP8 rows of the benchmark against PyTorch (scripts/bench_vs_torch.py --fp8).

For each shape: gexec's FP8 GEMM + bias + ReLU (e4m3 x e4m3 -> bf16, tensor-wise scales, fast
accumulation on and off, default and autotuned), the same with per-row/column scales, gexec's own
bf16 GEMM + bias + ReLU, and on gexec's dumped inputs torch._scaled_mm with tensor-wise scales and
bias (fast accumulation on and off) and row-wise scales. Prints a table and writes
OUT/performance-fp8.md, a section for docs/performance.md.
"""

import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

SHAPES = [(1024, 1024, 1024), (4096, 4096, 4096), (8192, 8192, 8192), (4096, 11008, 4096), (8192, 4096, 1024),
          (16, 4096, 4096)]
# Powers of two, so that stored = real / scale is exact and PyTorch gets the very same codes.
SCALE_A, SCALE_B = 2.0 ** -6, 2.0 ** -9
GEXEC_COLS = ["gexec fp8", "gexec fp8 tuned", "gexec fp8 no-fast", "gexec fp8 rowwise", "gexec bf16"]
TORCH_COLS = ["torch _scaled_mm", "torch _scaled_mm no-fast", "torch _scaled_mm rowwise"]


def write_graph(path, m, n, k, kind):
    """kind: fp8, fp8_nofast, fp8_rowwise or bf16; always GEMM_BIAS_ACT with ReLU and a bf16 bias."""
    f8 = kind.startswith("fp8")
    if kind == "fp8_rowwise":
        # Scales per row of A and per column of B; powers of two as above, varying a little.
        sa = {"axis": 0, "values": [SCALE_A * (2.0 ** (i % 2)) for i in range(m)]}
        sb = {"axis": 1, "values": [SCALE_B * (2.0 ** (j % 2)) for j in range(n)]}
    else:
        sa, sb = SCALE_A, SCALE_B
    a = {"name": "A", "shape": [m, k], "dtype": "f8e4m3" if f8 else "bf16", "init": {"dist": "normal", "std": 1.0}}
    b = {"name": "B", "shape": [k, n], "dtype": "f8e4m3" if f8 else "bf16",
         "init": {"dist": "normal", "std": 1.0 / 16}, "constant": True}
    if f8:
        a["scale"], b["scale"] = sa, sb
    attrs = {"mnk": [m, n, k], "act": "relu"}
    if f8:
        attrs["fast_accum"] = kind != "fp8_nofast"
    g = {"format": "gexec.graph", "version": 1, "name": f"{kind}_{m}x{n}x{k}",
         "tensors": [a, b, {"name": "Bias", "shape": [n], "dtype": "bf16", "init": {"dist": "normal", "std": 0.5},
                            "constant": True},
                     {"name": "C", "shape": [m, n], "dtype": "bf16"}],
         "ops": [{"op_type": "GEMM_BIAS_ACT", "inputs": ["A", "B", "Bias"], "outputs": ["C"], "attrs": attrs}],
         "outputs": ["C"]}
    Path(path).write_text(json.dumps(g) + "\n")


def run_case(bench, args, torch, np, tmp, m, n, k):
    row = {"m": m, "n": n, "k": k, "us": {}, "errors": [], "check": ""}
    iters = bench.samples_for(m, n, k)
    dump = tmp / "dump"
    shutil.rmtree(dump, ignore_errors=True)
    plan = [("gexec fp8", "fp8", ["--dump", str(dump)]), ("gexec fp8 tuned", "fp8", ["--autotune"]),
            ("gexec fp8 no-fast", "fp8_nofast", []), ("gexec fp8 rowwise", "fp8_rowwise", []),
            ("gexec bf16", "bf16", [])]
    for col, kind, extra in plan:
        g = tmp / f"{kind}.json"
        write_graph(g, m, n, k, kind)
        try:
            t = bench.time_gexec(args, g, iters, ["--verify", "sample"] + extra)
            row["us"][col] = t["median_us"]
        except (bench.GexecError, ValueError, KeyError) as e:
            row["errors"].append(f"{col}: {e}")
    if not (dump / "A.npy").exists():
        row["errors"].append("torch: no dumped inputs from gexec to run on")
        return row
    try:
        f8 = torch.float8_e4m3fn
        load = lambda name: torch.from_numpy(np.ascontiguousarray(np.load(dump / f"{name}.npy"))).to("cuda")
        a = (load("A") / SCALE_A).to(f8)                            # [M, K], the codes gexec stored
        b = (load("B") / SCALE_B).to(f8).t().contiguous().t()       # [K, N] column-major, as _scaled_mm wants
        bias = load("Bias").to(torch.bfloat16)
        c_gexec = load("C").float()
        sa = torch.tensor(SCALE_A, device="cuda")
        sb = torch.tensor(SCALE_B, device="cuda")
        mm = lambda fast: torch._scaled_mm(a, b, scale_a=sa, scale_b=sb, bias=bias, out_dtype=torch.bfloat16,
                                           use_fast_accum=fast)
        ref = torch.relu(mm(True)).float()
        err = ((ref - c_gexec).abs().max() / ref.abs().max().clamp(min=1e-6)).item()
        row["check"] = f"{'ok' if err <= 2e-2 else 'MISMATCH'} {err:.1e}"
        row["us"]["torch _scaled_mm"], _ = bench.time_torch(torch, lambda: mm(True), iters, args.warmup_ms)
        row["us"]["torch _scaled_mm no-fast"], _ = bench.time_torch(torch, lambda: mm(False), iters, args.warmup_ms)
        try:
            ra = torch.full((m, 1), SCALE_A, device="cuda", dtype=torch.float32)
            rb = torch.full((1, n), SCALE_B, device="cuda", dtype=torch.float32)
            rw = lambda: torch._scaled_mm(a, b, scale_a=ra, scale_b=rb, bias=bias, out_dtype=torch.bfloat16,
                                          use_fast_accum=True)
            rw()
            row["us"]["torch _scaled_mm rowwise"], _ = bench.time_torch(torch, rw, iters, args.warmup_ms)
        except Exception as e:  # row-wise needs a recent PyTorch
            row["errors"].append(f"torch rowwise: {type(e).__name__}: {e}")
    except Exception as e:
        row["errors"].append(f"torch: {type(e).__name__}: {e}")
    finally:
        shutil.rmtree(dump, ignore_errors=True)
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
    return row


def table(bench, rows):
    head = ["shape (MxNxK)"] + [c + " us" for c in GEXEC_COLS + TORCH_COLS] + [
        "fp8 TFLOP/s", "tuned TFLOP/s", "fp8/torch", "tuned/torch", "bf16/fp8", "check"]
    body = []
    for r in rows:
        us = r["us"]
        best = min([us[c] for c in ("gexec fp8", "gexec fp8 tuned") if c in us], default=None)
        torch_us = us.get("torch _scaled_mm")
        body.append([bench.shape_label(r["m"], r["n"], r["k"])] + [bench.fmt_us(us.get(c)) for c in GEXEC_COLS + TORCH_COLS] + [
            bench.fmt_tf(bench.tflops(r, "gexec fp8")), bench.fmt_tf(bench.tflops(r, "gexec fp8 tuned")),
            bench.fmt_x(us["gexec fp8"] / torch_us if torch_us and "gexec fp8" in us else None),
            bench.fmt_x(best / torch_us if torch_us and best else None),
            bench.fmt_x(us["gexec bf16"] / best if best and "gexec bf16" in us else None), r["check"] or "-"])
    return head, body


def targets(rows):
    out = []
    for r in rows:
        label = bench_label(r)
        best = min([r["us"][c] for c in ("gexec fp8", "gexec fp8 tuned") if c in r["us"]], default=None)
        if (r["m"], r["n"], r["k"]) in ((4096, 4096, 4096), (8192, 8192, 8192)) and best:
            t = 2.0 * r["m"] * r["n"] * r["k"] / (best * 1e-6) / 1e12
            out.append((f"FP8 GEMM+bias+ReLU {label} >= 1400 TFLOP/s", f"{t:.0f}", "met" if t >= 1400 else "missed"))
            if "gexec bf16" in r["us"]:
                x = r["us"]["gexec bf16"] / best
                out.append((f"FP8 vs gexec bf16 {label} >= 1.8x", f"{x:.2f}x", "met" if x >= 1.8 else "missed"))
        if r["m"] * r["n"] * r["k"] >= 1024 ** 3 and best and "torch _scaled_mm" in r["us"]:
            x = best / r["us"]["torch _scaled_mm"]
            out.append((f"FP8 vs torch._scaled_mm {label} <= 0.97x", f"{x:.2f}x", "met" if x <= 0.97 else "missed"))
    return out


def bench_label(r):
    m, n, k = r["m"], r["n"], r["k"]
    return f"{m}^3" if m == n == k else f"{m}x{n}x{k}"


def run_fp8(bench, args, torch, np, out_dir):
    start = time.perf_counter()
    wanted = {s.strip() for s in args.shapes.split(",") if s.strip()}
    rows = []
    with tempfile.TemporaryDirectory(prefix="gexec-bench-fp8-") as tmp:
        for m, n, k in SHAPES:
            if wanted and f"{m}x{n}x{k}" not in wanted:
                continue
            print(f"fp8 {m}x{n}x{k} ...", file=sys.stderr, flush=True)
            rows.append(run_case(bench, args, torch, np, Path(tmp), m, n, k))
    elapsed = time.perf_counter() - start
    head, body = table(bench, rows)
    bench.print_columns(head, body, right=False)
    for r in rows:
        for e in r["errors"]:
            print(f"  {bench_label(r)}: {e}")
    tg = targets(rows)
    for name, value, verdict in tg:
        print(f"target: {name}: {value} ({verdict})")
    ver = bench.versions(torch, args)
    md = ["## FP8 (e4m3 x e4m3 -> bf16, GEMM + bias + ReLU)", "",
          f"Measured by `python3 scripts/bench_vs_torch.py --fp8 {' '.join(a for a in sys.argv[1:] if a != '--fp8')}` "
          f"in {elapsed:.0f} s; versions: {', '.join(f'{k} {v}' for k, v in ver.items())}.",
          "Same buffers: PyTorch runs on the codes gexec stored (its --dump, divided by the power-of-two scales). "
          "torch._scaled_mm adds the bias but has no ReLU; gexec's time includes it. "
          "Rowwise: per-row A and per-column B scales (outer-vector scale mode).", "",
          "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    md += ["| " + " | ".join(b) + " |" for b in body]
    md += [""] + [f"- {name}: {value} ({verdict})" for name, value, verdict in tg]
    errs = [f"- {bench_label(r)}: {e}" for r in rows for e in r["errors"]]
    if errs:
        md += ["", "Errors:", ""] + errs
    path = out_dir / "performance-fp8.md"
    path.write_text("\n".join(md) + "\n")
    print(f"wrote {path}")
    return 0
