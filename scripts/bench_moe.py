#!/usr/bin/env python3
"""Benchmarks gexec's GROUPED_GEMM (mixture-of-experts products) against PyTorch on one GPU.

Runs on a machine with a CUDA device and PyTorch; elsewhere it says so and exits 0.

    python3 scripts/bench_moe.py --gexec build/release/gexec [--out DIR] [--quick] [--fp8]

For G experts in {8, 64, 256}, T tokens in {512, 4096, 16384} and uniform or Zipf(1.2) routing,
one product per configuration: Y [T, N] = X [T, K] times each expert's W_g [N, K] (nn.Linear's
layout, `trans_b`), bf16 in and out, K = 4096 (d_model) and N = 2048 (one expert's FFN width, as
in DeepSeek-V3 and Qwen3-MoE). Per configuration, in one run and on the same routing:

  gexec grouped    `gexec run` of a graph holding one GROUPED_GEMM (the offsets are data)
  gexec mma.sync   the same, held to the portable kernel (--kernel experts=cuda.grouped_gemm_mma)
  gexec per-expert `gexec run` of a graph of one MATMUL per non-empty expert (sizes known ahead)
  torch grouped    torch._grouped_mm(X, W.transpose(-2, -1), offs)
  torch loop       torch.mm per expert into slices of Y, captured in one CUDA graph

With --fp8, the same configurations with e4m3 X and W (one scale each): gexec's GROUPED_GEMM
on them (FP8 tensor cores on a Hopper, where the shape fits; elsewhere widened to bf16), gexec's
bf16 product for the same routing, torch._scaled_grouped_mm (row-wise scales, the form it takes on Hopper)
and torch._grouped_mm in bf16. A PyTorch call it refuses says so, with its message, in the table.

Times are medians of CUDA-event samples after a warm-up, gexec's method (bench_vs_torch.py);
both sides replay CUDA graphs, with their L2 warm. The inputs differ (each side draws its own
normal values: the products' speed does not depend on them); gexec's result is checked against
its reference in a separate run of the smallest configurations. Prints one table and writes
OUT/moe.md.
"""

import argparse
import json
import math
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_vs_torch as bvt  # noqa: E402  (the timing method, the command runner)

GROUPS = [8, 64, 256]
TOKENS = [512, 4096, 16384]
ROUTINGS = ["uniform", "zipf:1.2"]
K, N = 4096, 2048


def counts_for(routing, groups, tokens):
    """Tokens per expert: uniform (the remainder to the first experts), zipf:S (expert g's share
    proportional to 1 / (g + 1)^S, rounded by largest remainder), or file:F (a JSON list)."""
    if routing == "uniform":
        return [tokens // groups + (1 if g < tokens % groups else 0) for g in range(groups)]
    if routing.startswith("zipf:"):
        s = float(routing[5:])
        w = [1.0 / (g + 1) ** s for g in range(groups)]
        total = sum(w)
        exact = [tokens * x / total for x in w]
        c = [math.floor(x) for x in exact]
        order = sorted(range(groups), key=lambda g: exact[g] - c[g], reverse=True)
        for g in order[: tokens - sum(c)]:
            c[g] += 1
        return c
    if routing.startswith("file:"):
        c = json.loads(Path(routing[5:]).read_text())
        if len(c) != groups or sum(c) != tokens:
            raise SystemExit(f"{routing}: expected {groups} counts summing to {tokens}")
        return c
    raise SystemExit(f"unknown routing {routing!r}; expected uniform, zipf:S or file:F")


def ends_of(counts):
    out, acc = [], 0
    for c in counts:
        acc += c
        out.append(acc)
    return out


# The f8 rows' scales: X ~ N(0, 1) stored up to about 5 / 2^-4 = 80, W ~ N(0, 1/K) up to about
# 0.08 / 2^-8 = 20, well inside e4m3's 448.
SCALE_X, SCALE_W = 2.0 ** -4, 2.0 ** -8


def grouped_graph(path, tokens, counts, dtype="bf16"):
    g = len(counts)
    f8 = dtype.startswith("f8")
    x = {"name": "X", "shape": [tokens, K], "dtype": dtype}
    w = {"name": "W", "shape": [g, N, K], "dtype": dtype, "init": {"dist": "normal", "std": K ** -0.5},
         "constant": True}
    if f8:
        x["scale"], w["scale"] = SCALE_X, SCALE_W
    graph = {
        "format": "gexec.graph", "version": 1, "name": f"moe_g{g}_t{tokens}",
        "tensors": [
            x, w,
            {"name": "offsets", "shape": [g], "dtype": "i32", "init": {"values": ends_of(counts)}},
            {"name": "Y", "shape": [tokens, N], "dtype": "bf16" if f8 else dtype},
        ],
        "ops": [{"op_type": "GROUPED_GEMM", "name": "experts", "inputs": ["X", "W", "offsets"], "outputs": ["Y"],
                 "attrs": {"trans_b": True}}],
    }
    Path(path).write_text(json.dumps(graph))


def per_expert_graph(path, counts, dtype="bf16"):
    tensors, ops = [], []
    for e, c in enumerate(counts):
        if c == 0:
            continue
        tensors += [{"name": f"X{e}", "shape": [c, K], "dtype": dtype},
                    {"name": f"W{e}", "shape": [N, K], "dtype": dtype, "init": {"dist": "normal", "std": K ** -0.5},
                     "constant": True},
                    {"name": f"Y{e}", "shape": [c, N], "dtype": dtype}]
        ops.append({"op_type": "MATMUL", "name": f"expert{e}", "inputs": [f"X{e}", f"W{e}"], "outputs": [f"Y{e}"],
                    "attrs": {"trans_b": True}})
    Path(path).write_text(json.dumps({"format": "gexec.graph", "version": 1, "name": "per_expert",
                                      "tensors": tensors, "ops": ops}))


def time_gexec(args, graph, verify="none", extra=()):
    timing, _ = bvt.run_gexec(args.gexec, graph, ["--iters", str(args.iters), "--warmup-ms", str(args.warmup_ms),
                                                  "--passes", "none", "--verify", verify] + list(extra), args.timeout)
    if timing is None:
        raise bvt.GexecError("gexec printed no timing-json line")
    return timing["median_us"]


def torch_rows(torch, args, tokens, counts):
    g = len(counts)
    x = torch.randn(tokens, K, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(g, N, K, device="cuda", dtype=torch.bfloat16) * K ** -0.5
    offs = torch.tensor(ends_of(counts), device="cuda", dtype=torch.int32)
    out = {}
    wt = w.transpose(-2, -1)  # [G, K, N], column-major per expert: _grouped_mm's fast layout
    try:
        ref = torch._grouped_mm(x, wt, offs=offs)
        out["torch grouped"], _ = bvt.time_torch(torch, lambda: torch._grouped_mm(x, wt, offs=offs), args.iters,
                                                 args.warmup_ms)
    except Exception as e:  # noqa: BLE001  (an unsupported build or shape: the cell says so)
        out["torch grouped"] = None
        print(f"  torch._grouped_mm: {type(e).__name__}: {str(e).splitlines()[0][:120]}", file=sys.stderr)
        ref = None
    y = torch.empty(tokens, N, device="cuda", dtype=torch.bfloat16)
    bounds = list(zip([0] + ends_of(counts)[:-1], ends_of(counts)))

    def loop():
        for e, (s, t) in enumerate(bounds):
            if t > s:
                torch.mm(x[s:t], w[e].t(), out=y[s:t])
        return y

    graph, _ = bvt.cuda_graph_of(torch, loop)
    out["torch loop"], _ = bvt.time_torch(torch, graph.replay, args.iters, args.warmup_ms)
    if ref is not None:  # the two PyTorch results agree: both sides compute the same products
        graph.replay()
        torch.cuda.synchronize()
        err = (ref[: ends_of(counts)[-1]].float() - y[: ends_of(counts)[-1]].float()).abs().max().item()
        out["torch agree"] = err
    del x, w, y, graph
    torch.cuda.empty_cache()
    return out


def check_once(args, tmp, routings, dtype="bf16"):
    """The check, once per routing, at the smallest size: gexec's result against its reference."""
    for routing in routings:
        p = Path(tmp) / "check.json"
        grouped_graph(p, 512, counts_for(routing, 64, 512), dtype)
        proc, _ = bvt.run_command([args.gexec, "run", str(p), "--iters", "3"], args.timeout)
        verdict = [l for l in proc.stdout.splitlines() if l.startswith("result:")]
        print(f"check {dtype} G 64 T 512 {routing}: {verdict[-1] if verdict else 'no result line'}")


def torch_fp8_rows(torch, args, tokens, counts):
    """torch._scaled_grouped_mm on e4m3 X and W with row-wise scales (X [T, K] row-major, W as
    [G, K, N] column-major per expert), and torch._grouped_mm on the same values in bf16."""
    g = len(counts)
    x = (torch.randn(tokens, K, device="cuda") / SCALE_X).to(torch.float8_e4m3fn)
    w = (torch.randn(g, N, K, device="cuda") * K ** -0.5 / SCALE_W).to(torch.float8_e4m3fn)
    offs = torch.tensor(ends_of(counts), device="cuda", dtype=torch.int32)
    sx = torch.full((tokens,), SCALE_X, device="cuda", dtype=torch.float32)
    sw = torch.full((g, N), SCALE_W, device="cuda", dtype=torch.float32)
    wt = w.transpose(-2, -1)
    out = {}
    try:
        out["torch scaled grouped"], _ = bvt.time_torch(
            torch, lambda: torch._scaled_grouped_mm(x, wt, sx, sw, offs=offs, out_dtype=torch.bfloat16),
            args.iters, args.warmup_ms)
    except Exception as e:  # noqa: BLE001  (refused on this build or GPU: the table says so)
        out["torch scaled grouped"] = None
        out["torch refused"] = f"{type(e).__name__}: {str(e).splitlines()[0][:160]}"
        print(f"  torch._scaled_grouped_mm: {out['torch refused']}", file=sys.stderr)
    xb, wb = (x.float() * SCALE_X).to(torch.bfloat16), (w.float() * SCALE_W).to(torch.bfloat16).transpose(-2, -1)
    out["torch grouped"], _ = bvt.time_torch(torch, lambda: torch._grouped_mm(xb, wb, offs=offs), args.iters,
                                             args.warmup_ms)
    del x, w, xb, wb
    torch.cuda.empty_cache()
    return out


def fp8_table(args, torch, tmp, groups, tokens_list, routings):
    """The --fp8 rows: one table, in the same run."""
    check_once(args, tmp, routings, "f8e4m3")
    rows, refusals = [], set()
    for g in groups:
        for tokens in tokens_list:
            for routing in routings:
                counts = counts_for(routing, g, tokens)
                row = {"G": g, "T": tokens, "routing": routing}
                p = Path(tmp) / "grouped8.json"
                grouped_graph(p, tokens, counts, "f8e4m3")
                row["gexec f8"] = time_gexec(args, p)
                grouped_graph(p, tokens, counts, "bf16")
                row["gexec bf16"] = time_gexec(args, p)
                row.update(torch_fp8_rows(torch, args, tokens, counts))
                if row.get("torch refused"):
                    refusals.add(row["torch refused"])
                rows.append(row)
                print(f"f8 G {g:4d} T {tokens:6d} {routing:9s} gexec f8 {row['gexec f8']:9.1f} us  gexec bf16 "
                      f"{row['gexec bf16']:9.1f}  torch scaled {fmt(row['torch scaled grouped']):>9s}  torch bf16 "
                      f"{row['torch grouped']:9.1f}", flush=True)
    head = ["G", "T", "routing", "gexec f8 us", "gexec bf16 us", "torch _scaled_grouped_mm us", "torch _grouped_mm us",
            "gexec f8 / _scaled_grouped_mm", "gexec f8 TFLOP/s"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in rows:
        ts = r["torch scaled grouped"]
        vs = "-" if ts is None else f"{r['gexec f8'] / ts:.2f}x"
        lines.append(f"| {r['G']} | {r['T']} | {r['routing']} | {r['gexec f8']:.1f} | {r['gexec bf16']:.1f} | {fmt(ts)} | "
                     f"{r['torch grouped']:.1f} | {vs} | {2.0 * r['T'] * K * N / r['gexec f8'] / 1e6:.0f} |")
    return "\n".join(lines) + "".join(f"\n\ntorch._scaled_grouped_mm refused: {m}" for m in sorted(refusals)) + "\n"


def fmt(v):
    return "-" if v is None else f"{v:.1f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gexec", default="build/release/gexec")
    ap.add_argument("--out", default=None, help="folder for moe.md")
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--warmup-ms", type=float, default=100.0)
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--quick", action="store_true", help="G 8 and 64, T 512 and 4096 only")
    ap.add_argument("--routing", action="append", help="uniform, zipf:S or file:F (repeatable)")
    ap.add_argument("--fp8", action="store_true", help="the e4m3 rows (against torch._scaled_grouped_mm) instead")
    args = ap.parse_args()
    try:
        import torch
    except ImportError:
        print(bvt.SKIP_MESSAGE)
        return 0
    if not torch.cuda.is_available():
        print(bvt.SKIP_MESSAGE)
        return 0
    groups = GROUPS[:2] if args.quick else GROUPS
    tokens_list = TOKENS[:2] if args.quick else TOKENS
    routings = args.routing or ROUTINGS
    t0 = time.time()
    rows = []
    if args.fp8:
        with tempfile.TemporaryDirectory() as tmp:
            text = fp8_table(args, torch, tmp, groups, tokens_list, routings)
        text += f"\n({time.time() - t0:.0f} s; torch {torch.__version__}, {torch.cuda.get_device_name()}; K {K}, N {N}, e4m3 -> bf16)\n"
        print(text)
        if args.out:
            Path(args.out).mkdir(parents=True, exist_ok=True)
            (Path(args.out) / "moe_fp8.md").write_text(text)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        check_once(args, tmp, routings)
        for g in groups:
            for tokens in tokens_list:
                for routing in routings:
                    counts = counts_for(routing, g, tokens)
                    row = {"G": g, "T": tokens, "routing": routing, "largest": max(counts),
                           "empty": sum(1 for c in counts if c == 0)}
                    p = Path(tmp) / "grouped.json"
                    grouped_graph(p, tokens, counts)
                    row["gexec grouped"] = time_gexec(args, p)
                    # The same graph held to the mma.sync kernel: what the WGMMA kernel adds.
                    row["gexec mma.sync"] = time_gexec(args, p, extra=["--kernel", "experts=cuda.grouped_gemm_mma"])
                    p = Path(tmp) / "per_expert.json"
                    per_expert_graph(p, counts)
                    row["gexec per-expert"] = time_gexec(args, p)
                    row.update(torch_rows(torch, args, tokens, counts))
                    tg = row.get("torch grouped")
                    row["vs torch grouped"] = row["gexec grouped"] / tg if tg else None
                    row["vs torch loop"] = row["gexec grouped"] / row["torch loop"]
                    row["TFLOP/s"] = 2.0 * tokens * K * N / row["gexec grouped"] / 1e6
                    rows.append(row)
                    print(f"G {g:4d} T {tokens:6d} {routing:9s} gexec {row['gexec grouped']:9.1f} us  per-expert "
                          f"{row['gexec per-expert']:9.1f}  torch grouped {fmt(tg):>9s}  torch loop "
                          f"{row['torch loop']:9.1f}  gexec/torch {fmt(row['vs torch grouped'] and row['vs torch grouped'] * 100)}%"
                          f"  {row['TFLOP/s']:.0f} TFLOP/s", flush=True)
    head = ["G", "T", "routing", "largest group", "empty groups", "gexec grouped us", "gexec mma.sync us", "gexec per-expert us",
            "torch _grouped_mm us", "torch loop (graph) us", "gexec / _grouped_mm", "gexec / loop", "gexec TFLOP/s"]
    lines = ["| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in rows:
        vs = r["vs torch grouped"]
        lines.append(f"| {r['G']} | {r['T']} | {r['routing']} | {r['largest']} | {r['empty']} | {r['gexec grouped']:.1f} | "
                     f"{r['gexec mma.sync']:.1f} | {r['gexec per-expert']:.1f} | {fmt(r.get('torch grouped'))} | {r['torch loop']:.1f} | "
                     f"{'-' if vs is None else f'{vs:.2f}x'} | {r['vs torch loop']:.2f}x | {r['TFLOP/s']:.0f} |")
    # Zipf against uniform, same G and T.
    skew = []
    for r in rows:
        if r["routing"] != "uniform":
            u = next((q for q in rows if q["G"] == r["G"] and q["T"] == r["T"] and q["routing"] == "uniform"), None)
            if u:
                skew.append(f"G {r['G']} T {r['T']}: {r['routing']} / uniform = {r['gexec grouped'] / u['gexec grouped']:.2f}x")
    text = ("\n".join(lines) + "\n\nUneven routing against uniform (gexec grouped):\n\n" +
            "\n".join("- " + s for s in skew) + f"\n\n({time.time() - t0:.0f} s; torch {torch.__version__}, "
            f"{torch.cuda.get_device_name()}; K {K}, N {N}, bf16)\n")
    print(text)
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        (Path(args.out) / "moe.md").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
