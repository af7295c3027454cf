#!/usr/bin/env python3
"""FP8 rows of the benchmark against PyTorch (scripts/bench_vs_torch.py --fp8).

For each shape: gexec's FP8 GEMM + bias + ReLU (e4m3 x e4m3 -> bf16, tensor-wise scales, fast
accumulation on and off, default and autotuned), the same with per-row/column scales and with
block scales (1 x 128 on A, 128 x 128 on B), gexec's own bf16 GEMM + bias + ReLU, and on gexec's
dumped inputs torch._scaled_mm with tensor-wise scales and bias (fast accumulation on and off) and
row-wise scales, and torch.nn.functional.scaled_mm with the BlockWise1x128 / BlockWise128x128
scaling types. Then the quantizing CAST (8192 x 8192 bf16 -> e4m3 with 1 x 128 block scales)
against a copy on the same machine, and the accuracy of tensor-wise, row-wise and block scaling on
activations with outliers. Prints tables and writes OUT/performance-fp8.md, a section for
docs/performance.md.
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
# (Block scales take no fast accumulation: cuBLASLt has no such kernel, and gexec refuses it.)
GEXEC_COLS = ["gexec fp8", "gexec fp8 tuned", "gexec fp8 no-fast", "gexec fp8 rowwise", "gexec fp8 block",
              "gexec fp8 block tuned", "gexec bf16"]
TORCH_COLS = ["torch _scaled_mm", "torch _scaled_mm no-fast", "torch _scaled_mm rowwise", "torch scaled_mm block"]
# Block scales drawn in [low, high): the real values (std 1 for A, 1/16 for B) over S stay in
# e4m3's range.
BLOCK_S_A, BLOCK_S_B = (2.0 ** -7, 2.0 ** -6), (2.0 ** -10, 2.0 ** -9)


def write_graph(path, m, n, k, kind):
    """kind: fp8, fp8_nofast, fp8_rowwise, fp8_block or bf16; always GEMM_BIAS_ACT with ReLU and a
    bf16 bias."""
    f8 = kind.startswith("fp8")
    extra = []
    if kind.startswith("fp8_block"):
        # S of A a graph input, S of B a constant beside the constant B, both drawn positive.
        sa = {"block": [1, 128], "tensor": "SA"}
        sb = {"block": [128, 128], "tensor": "SB"}
        up = lambda x, b: (x + b - 1) // b
        extra = [{"name": "SA", "shape": [m, up(k, 128)], "dtype": "f32",
                  "init": {"dist": "uniform", "low": BLOCK_S_A[0], "high": BLOCK_S_A[1]}},
                 {"name": "SB", "shape": [up(k, 128), up(n, 128)], "dtype": "f32", "constant": True,
                  "init": {"dist": "uniform", "low": BLOCK_S_B[0], "high": BLOCK_S_B[1]}}]
    elif kind == "fp8_rowwise":
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
        attrs["fast_accum"] = kind not in ("fp8_nofast", "fp8_block")
    g = {"format": "gexec.graph", "version": 1, "name": f"{kind}_{m}x{n}x{k}",
         "tensors": [a, b, {"name": "Bias", "shape": [n], "dtype": "bf16", "init": {"dist": "normal", "std": 0.5},
                            "constant": True},
                     {"name": "C", "shape": [m, n], "dtype": "bf16"}] + extra,
         "ops": [{"op_type": "GEMM_BIAS_ACT", "inputs": ["A", "B", "Bias"], "outputs": ["C"], "attrs": attrs}],
         "outputs": ["C"]}
    Path(path).write_text(json.dumps(g) + "\n")


def run_case(bench, args, torch, np, tmp, m, n, k):
    row = {"m": m, "n": n, "k": k, "us": {}, "errors": [], "check": ""}
    iters = bench.samples_for(m, n, k)
    dump = tmp / "dump"
    block_dump = tmp / "block_dump"
    for d in (dump, block_dump):
        shutil.rmtree(d, ignore_errors=True)
    plan = [("gexec fp8", "fp8", ["--dump", str(dump)]), ("gexec fp8 tuned", "fp8", ["--autotune"]),
            ("gexec fp8 no-fast", "fp8_nofast", []), ("gexec fp8 rowwise", "fp8_rowwise", []),
            ("gexec fp8 block", "fp8_block", ["--dump", str(block_dump)]),
            ("gexec fp8 block tuned", "fp8_block", ["--autotune"]), ("gexec bf16", "bf16", [])]
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
        del a, b, c_gexec, ref
        torch_block(bench, args, torch, np, block_dump, row, iters, m, n, k)
    except Exception as e:
        row["errors"].append(f"torch: {type(e).__name__}: {e}")
    finally:
        shutil.rmtree(dump, ignore_errors=True)
        shutil.rmtree(block_dump, ignore_errors=True)
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
    return row


def torch_block(bench, args, torch, np, dump, row, iters, m, n, k):
    """PyTorch's block-scaled product on the codes and S gexec's block run stored, in the layout it
    takes: A [M, K] with S [M, K/128] M-major, B as the transpose of a row-major [N, K] with S the
    transpose of a row-major [N/128, K/128]. Records its time, or its refusal with the message."""
    if not (dump / "A.npy").exists():
        row["errors"].append("torch block: no dumped inputs from gexec's block run")
        return
    try:
        import torch.nn.functional as F
        f8 = torch.float8_e4m3fn
        load = lambda name: torch.from_numpy(np.ascontiguousarray(np.load(dump / f"{name}.npy"))).to("cuda")
        sa, sb = load("SA").float(), load("SB").float()                       # [M, K/128], [K/128, N/128]
        a = (load("A") / sa.repeat_interleave(128, 1)[:, :k]).to(f8)           # the codes gexec stored
        b = (load("B") / sb.repeat_interleave(128, 0)[:k].repeat_interleave(128, 1)[:, :n]).to(f8)  # [K, N]
        w = b.t().contiguous()                                                 # [N, K] row-major
        bias = load("Bias").to(torch.bfloat16)
        c_gexec = load("C").float()
        scale_a = sa.t().contiguous().t()                                      # M-major
        scale_b = sb.t().contiguous().t()                                      # [K/128, N/128], K-major
        types = (F.ScalingType.BlockWise1x128, F.ScalingType.BlockWise128x128)
        try:
            mm = lambda: F.scaled_mm(a, w.t(), scale_a, types[0], scale_b, types[1], bias=bias,
                                     output_dtype=torch.bfloat16)
            ref = torch.relu(mm()).float()
            row["torch_block_note"] = "with bias"
        except Exception:  # no bias with block scales: the product alone, gexec's time includes its bias
            mm = lambda: F.scaled_mm(a, w.t(), scale_a, types[0], scale_b, types[1], output_dtype=torch.bfloat16)
            ref = torch.relu(mm().float() + bias.float())
            row["torch_block_note"] = "without bias"
        err = ((ref - c_gexec).abs().max() / ref.abs().max().clamp(min=1e-6)).item()
        row["check"] += f"; block {'ok' if err <= 2e-2 else 'MISMATCH'} {err:.1e}"
        row["us"]["torch scaled_mm block"], _ = bench.time_torch(torch, mm, iters, args.warmup_ms)
    except Exception as e:
        row["errors"].append(f"torch block: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")


def table(bench, rows):
    head = ["shape (MxNxK)"] + [c + " us" for c in GEXEC_COLS + TORCH_COLS] + [
        "fp8 TFLOP/s", "tuned TFLOP/s", "block TFLOP/s", "fp8/torch", "tuned/torch", "block speed / fp8",
        "block/torch block", "bf16/fp8", "check"]
    body = []
    for r in rows:
        us = r["us"]
        best = min([us[c] for c in ("gexec fp8", "gexec fp8 tuned") if c in us], default=None)
        torch_us = us.get("torch _scaled_mm")
        body.append([bench.shape_label(r["m"], r["n"], r["k"])] + [bench.fmt_us(us.get(c)) for c in GEXEC_COLS + TORCH_COLS] + [
            bench.fmt_tf(bench.tflops(r, "gexec fp8")), bench.fmt_tf(bench.tflops(r, "gexec fp8 tuned")),
            bench.fmt_tf(bench.tflops(r, block_col(r))),
            bench.fmt_x(us["gexec fp8"] / torch_us if torch_us and "gexec fp8" in us else None),
            bench.fmt_x(best / torch_us if torch_us and best else None),
            bench.fmt_x(best / us[block_col(r)] if best and block_col(r) else None),
            bench.fmt_x(us[block_col(r)] / us["torch scaled_mm block"]
                        if block_col(r) and "torch scaled_mm block" in us else None),
            bench.fmt_x(us["gexec bf16"] / best if best and "gexec bf16" in us else None), r["check"] or "-"])
    return head, body


def block_col(r):
    """The faster of gexec's block-scaled columns (default and autotuned), or None."""
    cols = [c for c in ("gexec fp8 block", "gexec fp8 block tuned") if c in r["us"]]
    return min(cols, key=lambda c: r["us"][c]) if cols else None


def targets(rows):
    out = []
    for r in rows:
        label = bench_label(r)
        best = min([r["us"][c] for c in ("gexec fp8", "gexec fp8 tuned") if c in r["us"]], default=None)
        blk = block_col(r)
        if (r["m"], r["n"], r["k"]) in ((4096, 4096, 4096), (8192, 8192, 8192)) and best and blk:
            t = 2.0 * r["m"] * r["n"] * r["k"] / (r["us"][blk] * 1e-6) / 1e12
            out.append((f"block-scaled GEMM+bias+ReLU {label} >= 1250 TFLOP/s", f"{t:.0f}",
                        "met" if t >= 1250 else "missed"))
            x = best / r["us"][blk]
            out.append((f"block-scaled {label} >= 0.93x the speed of tensor-wise", f"{x:.2f}x",
                        "met" if x >= 0.93 else "missed"))
        if blk and "torch scaled_mm block" in r["us"]:
            x = r["us"][blk] / r["us"]["torch scaled_mm block"]
            out.append((f"block-scaled vs torch scaled_mm block {label} <= 0.97x", f"{x:.2f}x",
                        "met" if x <= 0.97 else "missed"))
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


def quantize_row(bench, args, torch, tmp, rows=8192, cols=8192):
    """gexec's quantizing CAST (bf16 -> e4m3, 1 x 128 blocks, S computed) against a device copy on
    the same machine: the copy's bandwidth, applied to the bytes the CAST moves (x read, the codes
    and S written), is the floor."""
    g = {"format": "gexec.graph", "version": 1, "name": "quantize",
         "tensors": [{"name": "X", "shape": [rows, cols], "dtype": "bf16", "init": {"dist": "normal", "std": 1.0}},
                     {"name": "X8", "shape": [rows, cols], "dtype": "f8e4m3",
                      "scale": {"block": [1, 128], "tensor": "SX"}},
                     {"name": "SX", "shape": [rows, (cols + 127) // 128], "dtype": "f32"}],
         "ops": [{"name": "quantize", "op_type": "CAST", "inputs": ["X"], "outputs": ["X8", "SX"]}],
         "outputs": ["X8", "SX"]}
    path = tmp / "quantize.json"
    path.write_text(json.dumps(g) + "\n")
    row = {"shape": f"{rows}x{cols}", "errors": []}
    try:
        row["gexec_us"] = bench.time_gexec(args, path, 50, ["--verify", "sample"])["median_us"]
    except (bench.GexecError, ValueError, KeyError) as e:
        row["errors"].append(f"gexec quantize: {e}")
    x = torch.randn(rows, cols, device="cuda", dtype=torch.bfloat16)
    y = torch.empty_like(x)
    row["copy_us"], _ = bench.time_torch(torch, lambda: y.copy_(x), 50, args.warmup_ms)
    copy_bytes = 2 * x.numel() * 2
    row["bytes"] = x.numel() * 2 + x.numel() + rows * ((cols + 127) // 128) * 4
    row["floor_us"] = row["copy_us"] * row["bytes"] / copy_bytes
    del x, y
    torch.cuda.empty_cache()
    return row


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
        print("quantizing CAST ...", file=sys.stderr, flush=True)
        q = quantize_row(bench, args, torch, Path(tmp))
    elapsed = time.perf_counter() - start
    head, body = table(bench, rows)
    bench.print_columns(head, body, right=False)
    for r in rows:
        for e in r["errors"]:
            print(f"  {bench_label(r)}: {e}")
    tg = targets(rows)
    q_line = (f"quantizing CAST {q['shape']} bf16 -> e4m3 (1x128 blocks, S computed): "
              f"{bench.fmt_us(q.get('gexec_us'))} us; a device copy moving the same {q['bytes'] / 2 ** 20:.0f} MiB at "
              f"the bandwidth of torch's copy ({bench.fmt_us(q['copy_us'])} us for {2 * 2 * 8192 * 8192 / 2 ** 20:.0f} "
              f"MiB): {bench.fmt_us(q['floor_us'])} us")
    print(q_line)
    for e in q["errors"]:
        print(f"  {e}")
    if "gexec_us" in q:
        x = q["gexec_us"] / q["floor_us"]
        tg.append((f"quantizing CAST {q['shape']} bf16 <= 1.15x a copy of its bytes", f"{x:.2f}x",
                   "met" if x <= 1.15 else "missed"))
    for name, value, verdict in tg:
        print(f"target: {name}: {value} ({verdict})")
    ver = bench.versions(torch, args)
    md = ["## FP8 (e4m3 x e4m3 -> bf16, GEMM + bias + ReLU)", "",
          f"Measured by `python3 scripts/bench_vs_torch.py --fp8 {' '.join(a for a in sys.argv[1:] if a != '--fp8')}` "
          f"in {elapsed:.0f} s; versions: {', '.join(f'{k} {v}' for k, v in ver.items())}.",
          "Same buffers: PyTorch runs on the codes gexec stored (its --dump, divided by the power-of-two scales). "
          "torch._scaled_mm adds the bias but has no ReLU; gexec's time includes it. "
          "Rowwise: per-row A and per-column B scales (outer-vector scale mode). Block: 1x128 blocks on A, 128x128 "
          "on B, their S drawn; PyTorch's block product runs on gexec's codes (its dump divided by the S of each "
          "block) and S; block scales take no fast accumulation.", "",
          "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    md += ["| " + " | ".join(b) + " |" for b in body]
    notes = sorted({r["torch_block_note"] for r in rows if "torch_block_note" in r})
    if notes:
        md += ["", "torch scaled_mm block ran " + " / ".join(notes) + " (without: its time is the product alone, and the bias is added afterwards only to compare outputs)."]
    md += ["", q_line + "."]
    md += [""] + [f"- {name}: {value} ({verdict})" for name, value, verdict in tg]
    errs = [f"- {bench_label(r)}: {e}" for r in rows for e in r["errors"]] + [f"- quantize: {e}" for e in q["errors"]]
    if errs:
        md += ["", "Errors:", ""] + errs
    path = out_dir / "performance-fp8.md"
    path.write_text("\n".join(md) + "\n")
    print(f"wrote {path}")
    return 0
