#!/usr/bin/env python3
"""Benchmarks transformer MLP blocks in gexec against PyTorch on the same GPU and the same data.

Runs on a machine with a CUDA device and PyTorch; elsewhere it says so and exits 0 (the graph
writer works anywhere: --write-small writes the small blocks of graphs/).

    python3 scripts/bench_blocks.py --gexec build/release/gexec [--quick | --dtypes bf16 --tokens 256,4096]
        [--max-autotune] [--out DIR] [--docs docs/performance.md]

Blocks (d 4096; GPT ffn 16384, LLaMA ffn 11008; 256, 4096 and 8192 tokens; f16 and bf16):
  GPT:   y = gelu(x W1 + b1) W2 + b2 + x     (GEMM+bias+GELU, GEMM+bias+residual)
  LLaMA: y = (silu(x Wg) * (x Wu)) Wd + x    (two GEMMs, a fused SwiGLU group, GEMM+residual)
Each is written as primitives (MATMUL, BIAS_ADD, GELU, SILU, MUL, ADD); gexec's passes fuse it.
Columns: gexec (default passes), gexec --autotune, gexec's GEMMs alone (the same products as
plain MATMULs), PyTorch eager, eager replayed as a CUDA graph, torch.compile (default mode; with
--max-autotune also max-autotune-no-cudagraphs), all on the inputs gexec drew (its --dump).
Then: the fused GEMM + bias + residual against the plain GEMM and against the unfused plan (GEMM
+ bias, then a separate ADD), whose figures --residual-costs writes for fuse_residual's cost hook
(gexec run --residual-costs); and a chain of 4 elementwise ops on 64 MB tensors against the time to read
its inputs and write its output once at the measured HBM bandwidth (a device-to-device copy).
Prints the tables (markdown, for docs/performance.md) and writes them to OUT/blocks.md, and with
--docs PAGE into PAGE between its bench_blocks markers.
"""

import argparse
import json
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_vs_torch as bvt  # noqa: E402  (run_gexec, time_torch: one timing method for both)

REPO = Path(__file__).resolve().parent.parent
D = 4096
FFN = {"gpt": 16384, "llama": 11008}
TOKENS = [256, 4096, 8192]
CHAIN_ELEMS = 32 * 1024 * 1024  # 64 MB of f16 per tensor


# ---------------------------------------------------------------- graphs

def tensor(name, shape, dtype, std=None, constant=False):
    t = {"name": name, "shape": shape, "dtype": dtype}
    if std is not None:
        t["init"] = {"dist": "normal", "std": std}
    if constant:
        t["constant"] = True
    return t


def op(op_type, name, ins, outs, attrs=None):
    o = {"op_type": op_type, "name": name, "inputs": ins, "outputs": outs}
    if attrs:
        o["attrs"] = attrs
    return o


def block_graph(kind, tokens, d, ffn, dtype, gemms_only=False):
    """The block as primitives; with gemms_only, only its products (plain MATMULs)."""
    ws, wf = 1.0 / math.sqrt(d), 1.0 / math.sqrt(ffn)
    t = [tensor("x", [tokens, d], dtype, 1.0)]
    if kind == "gpt":
        t += [tensor("W1", [d, ffn], dtype, ws, True), tensor("W2", [ffn, d], dtype, wf, True),
              tensor("h_mm", [tokens, ffn], dtype), tensor("y_mm", [tokens, d], dtype)]
        ops = [op("MATMUL", "fc1", ["x", "W1"], ["h_mm"])]
        if gemms_only:
            t += [tensor("h", [tokens, ffn], dtype, 1.0)]
            ops += [op("MATMUL", "fc2", ["h", "W2"], ["y_mm"])]
            outs = ["h_mm", "y_mm"]
        else:
            t += [tensor("b1", [ffn], dtype, 0.05, True), tensor("b2", [d], dtype, 0.05, True),
                  tensor("h_b", [tokens, ffn], dtype), tensor("h", [tokens, ffn], dtype),
                  tensor("y_b", [tokens, d], dtype), tensor("y", [tokens, d], dtype)]
            ops += [op("BIAS_ADD", "fc1_bias", ["h_mm", "b1"], ["h_b"]), op("GELU", "fc1_gelu", ["h_b"], ["h"]),
                    op("MATMUL", "fc2", ["h", "W2"], ["y_mm"]), op("BIAS_ADD", "fc2_bias", ["y_mm", "b2"], ["y_b"]),
                    op("ADD", "residual", ["y_b", "x"], ["y"])]
            outs = ["y"]
    else:
        t += [tensor("Wg", [d, ffn], dtype, ws, True), tensor("Wu", [d, ffn], dtype, ws, True),
              tensor("Wd", [ffn, d], dtype, wf, True), tensor("g", [tokens, ffn], dtype),
              tensor("u", [tokens, ffn], dtype), tensor("y_mm", [tokens, d], dtype)]
        ops = [op("MATMUL", "gate", ["x", "Wg"], ["g"]), op("MATMUL", "up", ["x", "Wu"], ["u"])]
        if gemms_only:
            t += [tensor("h", [tokens, ffn], dtype, 1.0)]
            ops += [op("MATMUL", "down", ["h", "Wd"], ["y_mm"])]
            outs = ["g", "u", "y_mm"]
        else:
            t += [tensor("s", [tokens, ffn], dtype), tensor("h", [tokens, ffn], dtype), tensor("y", [tokens, d], dtype)]
            ops += [op("SILU", "gate_silu", ["g"], ["s"]), op("MUL", "swiglu", ["s", "u"], ["h"]),
                    op("MATMUL", "down", ["h", "Wd"], ["y_mm"]), op("ADD", "residual", ["y_mm", "x"], ["y"])]
            outs = ["y"]
    name = f"{kind}_mlp_block" + ("_gemms" if gemms_only else "")
    return {"format": "gexec.graph", "version": 1, "name": name, "seed": 17, "tensors": t, "ops": ops, "outputs": outs}


def residual_graph(m, n, k, dtype, variant):
    """GEMM + bias + residual as primitives ("fused", "unfused": the same, run without
    fuse_residual), or the plain GEMM of the same shape ("plain")."""
    t = [tensor("A", [m, k], dtype, 1.0), tensor("B", [k, n], dtype, 1.0 / math.sqrt(k), True),
         tensor("P", [m, n], dtype)]
    ops = [op("MATMUL", "mm", ["A", "B"], ["P"])]
    outs = ["P"]
    if variant != "plain":
        t += [tensor("bias", [n], dtype, 0.05, True), tensor("R", [m, n], dtype, 1.0), tensor("Pb", [m, n], dtype),
              tensor("Y", [m, n], dtype)]
        ops += [op("BIAS_ADD", "bias_add", ["P", "bias"], ["Pb"]), op("ADD", "residual", ["Pb", "R"], ["Y"])]
        outs = ["Y"]
    return {"format": "gexec.graph", "version": 1, "name": f"residual_{variant}", "seed": 5, "tensors": t,
            "ops": ops, "outputs": outs}


def chain_graph(n, dtype):
    """4 elementwise ops over two inputs: y = gelu(silu(a + b) * a), one output."""
    s = [n // 4096, 4096]
    t = [tensor("a", s, dtype, 1.0), tensor("b", s, dtype, 1.0), tensor("t0", s, dtype), tensor("t1", s, dtype),
         tensor("t2", s, dtype), tensor("y", s, dtype)]
    ops = [op("ADD", "add", ["a", "b"], ["t0"]), op("SILU", "silu", ["t0"], ["t1"]),
           op("MUL", "mul", ["t1", "a"], ["t2"]), op("GELU", "gelu", ["t2"], ["y"])]
    return {"format": "gexec.graph", "version": 1, "name": "chain4", "seed": 3, "tensors": t, "ops": ops,
            "outputs": ["y"]}


def write_json(path, g):
    with open(path, "w") as f:
        f.write("{\n")
        items = [f'  "{k}": {json.dumps(v)}' for k, v in g.items() if k not in ("tensors", "ops")]
        f.write(",\n".join(items[:4]) + ",\n")
        for key in ("tensors", "ops"):
            f.write(f'  "{key}": [\n' + ",\n".join("    " + json.dumps(x) for x in g[key]) + "\n  ],\n")
        f.write(",\n".join(items[4:]) + "\n}\n")


def write_small():
    """The small blocks of graphs/ (d 128, 64 tokens): GPT in f16, LLaMA in bf16."""
    write_json(REPO / "graphs" / "gpt_mlp_block.json", block_graph("gpt", 64, 128, 512, "f16"))
    write_json(REPO / "graphs" / "llama_mlp_block.json", block_graph("llama", 64, 128, 352, "bf16"))


# ---------------------------------------------------------------- timing

def gexec_us(args, graph, extra=(), env=None, verify="sample"):
    """gexec's median. A block's sampled check would compute its inner products in full on the
    CPU (a product reading another op's output needs all of it): minutes at these sizes, so blocks
    run unchecked here and are compared with PyTorch's result instead."""
    t = bvt.time_gexec(args, graph, args.iters, ["--verify", verify] + list(extra), env)
    return t["median_us"]


def torch_block(torch, F, kind, w):
    if kind == "gpt":
        return lambda: F.linear(F.gelu(torch.addmm(w["b1"], w["x"], w["W1"]), approximate="tanh"), w["W2t"], w["b2"]) + w["x"]
    return lambda: torch.mm(F.silu(torch.mm(w["x"], w["Wg"])) * torch.mm(w["x"], w["Wu"]), w["Wd"]) + w["x"]


def torch_gemms(torch, kind, w):
    if kind == "gpt":
        return lambda: (torch.mm(w["x"], w["W1"]), torch.mm(w["h"], w["W2"]))
    return lambda: (torch.mm(w["x"], w["Wg"]), torch.mm(w["x"], w["Wu"]), torch.mm(w["h"], w["Wd"]))


def load_dump(torch, np, dump, dtype, names):
    tdtype = torch.float16 if dtype == "f16" else torch.bfloat16
    out = {}
    for n in names:
        arr = np.load(Path(dump) / f"{n}.npy")
        out[n] = torch.from_numpy(np.ascontiguousarray(arr)).to("cuda").to(tdtype)
    return out


def over_budget(args):
    return time.perf_counter() - args.t0 > args.budget_s


def run_block(args, torch, np, F, tmp, kind, tokens, dtype):
    row = {"kind": kind, "tokens": tokens, "dtype": dtype, "us": {}, "errors": [], "check": ""}
    ffn = FFN[kind]
    g, gg = tmp / "block.json", tmp / "gemms.json"
    write_json(g, block_graph(kind, tokens, D, ffn, dtype))
    write_json(gg, block_graph(kind, tokens, D, ffn, dtype, gemms_only=True))
    dump = tmp / "dump"
    shutil.rmtree(dump, ignore_errors=True)
    for col, graph, extra in (("gexec", g, ["--dump", str(dump)]),
                              ("gexec tuned", g, ["--autotune", "--autotune-top", str(args.autotune_top)]),
                              ("gexec GEMMs alone", gg, [])):
        try:
            row["us"][col] = gexec_us(args, graph, extra, verify="none")
        except (bvt.GexecError, ValueError, KeyError) as e:
            row["errors"].append(f"{col}: {e}")
    if not (dump / "x.npy").exists():
        row["errors"].append("torch: no dumped inputs from gexec")
        return row
    keep = []
    try:
        names = ["x", "W1", "W2", "b1", "b2"] if kind == "gpt" else ["x", "Wg", "Wu", "Wd"]
        w = load_dump(torch, np, dump, dtype, names + ["y"])
        gexec_y = w.pop("y").float()
        shutil.rmtree(dump, ignore_errors=True)
        if kind == "gpt":
            w["W2t"] = w["W2"].t().contiguous()  # F.linear's weight layout, prepared once
        w["h"] = torch.randn(tokens, ffn, device="cuda").to(w["x"].dtype)
        eager = torch_block(torch, F, kind, w)
        ref = eager().float()
        err = ((ref - gexec_y).abs().max() / ref.abs().max().clamp_min(1e-6)).item()
        row["check"] = f"{'ok' if err <= 3e-2 else 'MISMATCH'} {err:.1e}"
        variants = {"torch eager": eager}
        graph, _ = bvt.cuda_graph_of(torch, eager)
        keep.append(graph)
        variants["torch eager graph"] = graph.replay
        variants["torch.mm GEMMs alone"] = torch_gemms(torch, kind, w)
        modes = ["default"] + (["max-autotune-no-cudagraphs"] if args.max_autotune else [])
        for mode in modes:
            col = "torch.compile" if mode == "default" else "torch.compile max-autotune"
            if over_budget(args):
                row["errors"].append(f"{col}: skipped, past the time budget of {args.budget_s:.0f} s")
                continue
            try:
                c = torch.compile(torch_block(torch, F, kind, w), mode=None if mode == "default" else mode, dynamic=False)
                c()
                variants[col] = c
            except Exception as e:
                row["errors"].append(f"{col}: {type(e).__name__}: {e}")
        for col, fn in variants.items():
            row["us"][col], _ = bvt.time_torch(torch, fn, args.iters, args.warmup_ms)
    except Exception as e:
        row["errors"].append(f"torch: {type(e).__name__}: {e}")
    finally:
        shutil.rmtree(dump, ignore_errors=True)
        keep.clear()
        torch.cuda.synchronize()
        torch.cuda.empty_cache()
        if hasattr(torch, "_dynamo"):
            torch._dynamo.reset()
    return row


def run_residual(args, tmp, tokens, dtype):
    """The second GEMM of the LLaMA block (tokens x d x ffn) with bias and residual."""
    m, n, k = tokens, D, FFN["llama"]
    row = {"m": m, "n": n, "k": k, "dtype": dtype, "us": {}, "errors": []}
    unfused = "canonicalize,dead_ops,fold_constant_casts,fuse_elementwise"
    for col, variant, extra in (("fused through C", "fused", []), ("unfused (GEMM+bias, ADD)", "unfused", ["--passes", unfused]),
                                ("plain GEMM", "plain", [])):
        path = tmp / f"res_{variant}.json"
        write_json(path, residual_graph(m, n, k, dtype, variant))
        try:
            # Without a cost table (no --residual-costs), so that "fused" is always the fused plan.
            row["us"][col] = gexec_us(args, path, extra)
        except (bvt.GexecError, ValueError, KeyError) as e:
            row["errors"].append(f"{col}: {e}")
    return row


def run_chain(args, torch, tmp, dtype):
    row = {"dtype": dtype, "us": {}, "errors": []}
    path = tmp / "chain.json"
    write_json(path, chain_graph(CHAIN_ELEMS, dtype))
    try:
        row["us"]["gexec group"] = gexec_us(args, path)
        row["us"]["gexec unfused"] = gexec_us(args, path, ["--passes", "canonicalize,dead_ops"])
    except (bvt.GexecError, ValueError, KeyError) as e:
        row["errors"].append(f"gexec: {e}")
    tdtype = torch.float16 if dtype == "f16" else torch.bfloat16
    a = torch.randn(CHAIN_ELEMS, device="cuda").to(tdtype)
    b = torch.randn(CHAIN_ELEMS, device="cuda").to(tdtype)
    F = torch.nn.functional
    eager = lambda: F.gelu(F.silu(a + b) * a, approximate="tanh")
    row["us"]["torch eager"], _ = bvt.time_torch(torch, eager, args.iters, args.warmup_ms)
    if not over_budget(args):
        try:
            c = torch.compile(eager, dynamic=False)
            c()
            row["us"]["torch.compile"], _ = bvt.time_torch(torch, c, args.iters, args.warmup_ms)
        except Exception as e:
            row["errors"].append(f"torch.compile: {type(e).__name__}: {e}")
    # HBM bandwidth: a device-to-device copy of 256 MB reads and writes each byte once.
    big = torch.empty(128 * 1024 * 1024, dtype=torch.float16, device="cuda")
    dst = torch.empty_like(big)
    copy_us, _ = bvt.time_torch(torch, lambda: dst.copy_(big), args.iters, args.warmup_ms)
    row["bandwidth_gbs"] = 2 * big.numel() * 2 / (copy_us * 1e-6) / 1e9
    row["bytes"] = 3 * CHAIN_ELEMS * a.element_size()
    row["floor_us"] = row["bytes"] / (row["bandwidth_gbs"] * 1e9) * 1e6
    del big, dst
    torch.cuda.empty_cache()
    return row


# ---------------------------------------------------------------- tables

def fmt(v):
    return "-" if v is None else (f"{v:.1f}" if v < 1000 else f"{v:.0f}")


def md(head, body):
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in body]
    return "\n".join(lines)


def block_table(rows):
    cols = ["gexec", "gexec tuned", "gexec GEMMs alone", "torch eager", "torch eager graph", "torch.compile",
            "torch.compile max-autotune", "torch.mm GEMMs alone"]
    torch_cols = ["torch eager", "torch eager graph", "torch.compile", "torch.compile max-autotune"]
    body = []
    for r in rows:
        us = r["us"]
        best_torch = min((us[c] for c in torch_cols if c in us), default=None)
        best_gexec = min((us[c] for c in ("gexec", "gexec tuned") if c in us), default=None)
        vs_torch = f"{best_gexec / best_torch:.3f}" if best_gexec and best_torch else "-"
        vs_gemms = f"{best_gexec / us['gexec GEMMs alone']:.3f}" if best_gexec and us.get("gexec GEMMs alone") else "-"
        body.append([r["kind"], r["tokens"], r["dtype"]] + [fmt(us.get(c)) for c in cols] + [vs_torch, vs_gemms, r["check"]])
    head = ["block", "tokens", "dtype"] + [c + " (us)" for c in cols] + ["gexec best / torch best", "gexec best / its GEMMs",
                                                                         "check"]
    return md(head, body)


def residual_table(rows, costs_path):
    body, lines = [], []
    for r in rows:
        us = r["us"]
        f, u, p = us.get("fused through C"), us.get("unfused (GEMM+bias, ADD)"), us.get("plain GEMM")
        body.append([f"{r['m']}x{r['n']}x{r['k']}", r["dtype"], fmt(f), fmt(u), fmt(p),
                     f"{f / p:.3f}" if f and p else "-", "fused" if f and u and f <= u else ("unfused" if f and u else "-")])
        if f and u:
            lines.append(f"{r['m']} {r['n']} {r['k']} {r['dtype']} {f:.2f} {u:.2f}")
    if costs_path and lines:
        with open(costs_path, "w") as fh:
            fh.write("# M N K DTYPE FUSED_US UNFUSED_US, from scripts/bench_blocks.py; read by gexec run --residual-costs\n")
            fh.write("\n".join(lines) + "\n")
    return md(["M x N x K", "dtype", "fused through C (us)", "GEMM+bias then ADD (us)", "plain GEMM (us)",
               "fused / plain", "faster plan"], body)


def chain_table(rows):
    body = []
    for r in rows:
        us = r["us"]
        g = us.get("gexec group")
        body.append([r["dtype"], f"{r['bytes'] / 2**20:.0f} MB", f"{r['bandwidth_gbs']:.0f}", fmt(r["floor_us"]), fmt(g),
                     fmt(us.get("gexec unfused")), fmt(us.get("torch eager")), fmt(us.get("torch.compile")),
                     f"{g / r['floor_us']:.3f}" if g else "-"])
    return md(["dtype", "bytes moved", "copy GB/s", "floor (us)", "gexec group (us)", "gexec unfused (us)",
               "torch eager (us)", "torch.compile (us)", "gexec / floor"], body)


# ---------------------------------------------------------------- main

def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gexec", default="build/release/gexec")
    p.add_argument("--out", default="", help="a folder for blocks.md and residual_costs.tsv (default: none)")
    p.add_argument("--quick", action="store_true", help="f16 only, 256 and 4096 tokens")
    p.add_argument("--dtypes", default="", help="instead: these dtypes, e.g. bf16 or f16,bf16")
    p.add_argument("--tokens", default="", help="instead: these token counts, e.g. 256,4096")
    p.add_argument("--max-autotune", action="store_true", help="also torch.compile mode max-autotune-no-cudagraphs")
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--warmup-ms", type=float, default=100.0)
    p.add_argument("--autotune-top", type=int, default=8)
    p.add_argument("--timeout", type=float, default=240.0, help="seconds allowed to one gexec run")
    p.add_argument("--budget-s", type=float, default=420.0, help="torch.compile is skipped past this many seconds")
    p.add_argument("--residual-costs", default="", help="write the residual measurements here (for gexec run --residual-costs)")
    p.add_argument("--docs", default="", help="also write the tables into this page (docs/performance.md) between its "
                   "bench_blocks markers")
    p.add_argument("--write-small", action="store_true", help="write graphs/gpt_mlp_block.json, llama_mlp_block.json; exit")
    return p.parse_args()


def main():
    args = parse_args()
    if args.write_small:
        write_small()
        return 0
    try:
        import numpy as np
        import torch
        import torch.nn.functional as F
        if not torch.cuda.is_available():
            raise ImportError
    except ImportError:
        print(bvt.SKIP_MESSAGE)
        return 0
    args.t0 = time.perf_counter()
    dtypes = args.dtypes.split(",") if args.dtypes else ["f16"] if args.quick else ["f16", "bf16"]
    tokens = [int(t) for t in args.tokens.split(",")] if args.tokens else [256, 4096] if args.quick else TOKENS
    out = Path(args.out) if args.out else None
    if out:
        out.mkdir(parents=True, exist_ok=True)
    costs = args.residual_costs or (str(out / "residual_costs.tsv") if out else "")
    blocks, residuals, chains = [], [], []
    with tempfile.TemporaryDirectory(prefix="gexec_blocks_") as t:
        tmp = Path(t)
        for dtype in dtypes:
            for n in tokens:
                for kind in ("gpt", "llama"):
                    r = run_block(args, torch, np, F, tmp, kind, n, dtype)
                    blocks.append(r)
                    print(f"[{time.perf_counter() - args.t0:6.0f} s] {kind} {n} {dtype}: " +
                          ", ".join(f"{k} {fmt(v)}" for k, v in r["us"].items()) + (f"; {r['errors']}" if r["errors"] else ""),
                          flush=True)
            for n in tokens:
                residuals.append(run_residual(args, tmp, n, dtype))
            chains.append(run_chain(args, torch, tmp, dtype))
    text = (f"## Transformer MLP blocks ({torch.cuda.get_device_name()}, torch {torch.__version__}, "
            f"{time.perf_counter() - args.t0:.0f} s)\n\n"
            f"Medians of {args.iters} samples; d {D}, GPT ffn {FFN['gpt']}, LLaMA ffn {FFN['llama']}.\n\n"
            + block_table(blocks) + "\n\n### GEMM + bias + residual (LLaMA's down projection)\n\n"
            + residual_table(residuals, costs) + "\n\n### A chain of 4 elementwise ops (add, silu, mul, gelu) on 64 MB tensors\n\n"
            + chain_table(chains) + "\n")
    errors = [f"{r.get('kind', '')} {r.get('tokens', r.get('m', ''))} {r['dtype']}: {e}"
              for r in blocks + residuals + chains for e in r["errors"]]
    if errors:
        text += "\nProblems:\n\n" + "\n".join(f"- {e}" for e in errors) + "\n"
    print(text)
    if out:
        (out / "blocks.md").write_text(text)
        (out / "blocks.json").write_text(json.dumps({"blocks": blocks, "residual": residuals, "chain": chains}, indent=1))
    if args.docs:
        write_into_docs(Path(args.docs), text)
    return 0


DOCS_BEGIN, DOCS_END = "<!-- bench_blocks: begin -->", "<!-- bench_blocks: end -->"


def write_into_docs(path, text):
    """Replaces what stands between the page's two bench_blocks markers by the tables (one level
    deeper, as the page's section holds them); the page is left alone without both markers."""
    page = path.read_text()
    begin, end = page.find(DOCS_BEGIN), page.find(DOCS_END)
    if begin < 0 or end < begin:
        print(f"{path}: no {DOCS_BEGIN} ... {DOCS_END} markers; not written", file=sys.stderr)
        return
    body = "\n".join("#" + line if line.startswith("#") else line for line in text.strip().splitlines())
    path.write_text(page[:begin + len(DOCS_BEGIN)] + "\n" + body + "\n" + page[end:])
    print(f"wrote the tables into {path}")


if __name__ == "__main__":
    sys.exit(main())
