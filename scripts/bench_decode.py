#!/usr/bin/env python3
"""Decode-shaped products (M <= 128 against large weights) with cold weights: gexec against PyTorch.

Runs only on a machine with a CUDA device and PyTorch (the GPU machine); elsewhere it says so and
exits 2 at once.

    python3 scripts/bench_decode.py --gexec build/release/gexec --out out/decode [--docs docs/performance.md] [--quick]

For M in {1, 8, 16, 32, 64, 128}, (N, K) in {(4096, 4096), (11008, 4096), (4096, 11008), (14336, 4096),
(4096, 14336), (16384, 4096)}, f16 and bf16, the weight stored [N, K] (nn.Linear's layout), with a
bias of the operands' dtype, it times in one run:
- gexec default (`gexec gemm --cold-l2`: the selector's choice, the cost model deciding),
- gexec's skinny kernel forced (`--kernel cuda.skinny_gemm_bias_act`),
- cuBLASLt forced (`--kernel cublaslt.gemm_bias_act`),
- PyTorch `F.linear(x, W, bias)` in CUDA graph replay,
every one on operand sets rotated so that together they exceed the L2 (gexec: --cold-l2, 128 MB;
PyTorch: as many weight sets as 128 MB holds, at least 2), and, for the up projections (N > K),
the same with a SiLU after the bias: gexec's GEMM_BIAS_ACT with `act` silu (`--act silu`: the skinny
kernel applies it in its epilogue, cuBLASLt, which has none, in a second kernel) against PyTorch's
`F.silu(F.linear(...))`.
The floor is the weight's bytes at the copy bandwidth measured in the same run (a device copy of
1 GiB, read + write bytes over time). Prints a table; writes OUT/decode.md, OUT/decode.json and
OUT/decode.png (time / floor against M), and with --docs the table into that page between its
bench_decode markers.
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MS = [1, 8, 16, 32, 64, 128]
NKS = [(4096, 4096), (11008, 4096), (4096, 11008), (14336, 4096), (4096, 14336), (16384, 4096)]
ROTATE_BYTES = 128 << 20  # gexec's --cold-l2 size: twice the H200's L2
KERNELS = {"gexec default": None, "gexec skinny": "cuda.skinny_gemm_bias_act", "cuBLASLt": "cublaslt.gemm_bias_act"}
DOCS_BEGIN, DOCS_END = "<!-- bench_decode: begin -->", "<!-- bench_decode: end -->"


def fail(msg, code=2):
    print(f"bench_decode.py: {msg}", file=sys.stderr)
    sys.exit(code)


def need_torch():
    try:
        import torch  # noqa: F401
    except ImportError:
        fail("needs PyTorch (import torch failed); run it on the GPU machine")
    if not torch.cuda.is_available():
        fail("needs a CUDA device (torch.cuda.is_available() is False); run it on the GPU machine")
    return torch


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gexec", default="build/release/gexec")
    p.add_argument("--out", default="out/decode")
    p.add_argument("--docs", default="", help="also write the table into this page between its bench_decode markers")
    p.add_argument("--quick", action="store_true", help="f16 only, M in {1, 16, 128}, the first two (N, K)")
    p.add_argument("--iters", type=int, default=50)
    p.add_argument("--timeout", type=float, default=240.0, help="seconds allowed to one gexec gemm sweep")
    return p.parse_args()


def copy_gbps(torch):
    """Device copy bandwidth: (read + write bytes) / time, median of 20 copies of 1 GiB."""
    n = 1 << 30
    src = torch.empty(n, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    for _ in range(3):
        dst.copy_(src)
    times = []
    for _ in range(20):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        dst.copy_(src)
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e-3)
    del src, dst
    return 2 * n / statistics.median(times) / 1e9


def gexec_sweep(args, shapes, dtype, kernel, act):
    """One `gexec gemm` over all shapes of a dtype: {(m, n, k): row}."""
    if not shapes:
        return {}
    spec = ["--shapes", ",".join(f"{m}x{n}x{k}" for m, n, k in shapes), "--dtype", dtype, "--bias", dtype,
            "--act", act, "--trans", "nt", "--cold-l2", "--iters", str(args.iters)]
    if kernel:
        spec += ["--kernel", kernel]
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "gemm.json"
        cmd = [args.gexec, "-q", "gemm"] + spec + ["--json", str(out)]
        try:
            p = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            fail(f"timed out after {args.timeout:.0f} s: {' '.join(cmd)}", 3)
        if not out.exists():
            fail(f"gexec gemm exited {p.returncode} without its JSON: {(p.stderr or p.stdout).strip()[-400:]}", 3)
        points = json.loads(out.read_text()).get("points", [])
    rows = {}
    for r in points:
        rows[(r["m"], r["n"], r["k"])] = r
    return rows


def torch_us(torch, m, n, k, dtype, silu):
    """F.linear (+ SiLU) over rotating weight sets, captured as one CUDA graph; microseconds per product."""
    F = torch.nn.functional
    t = {"f16": torch.float16, "bf16": torch.bfloat16}[dtype]
    wbytes = n * k * 2
    sets = max(2, -(-ROTATE_BYTES // wbytes))
    xs = [torch.randn(m, k, device="cuda", dtype=t) for _ in range(sets)]
    ws = [torch.randn(n, k, device="cuda", dtype=t) * 0.02 for _ in range(sets)]
    bs = [torch.randn(n, device="cuda", dtype=t) for _ in range(sets)]
    fn = (lambda x, w, b: F.silu(F.linear(x, w, b))) if silu else F.linear
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for i in range(sets):
            fn(xs[i], ws[i], bs[i])
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        outs = [fn(xs[i], ws[i], bs[i]) for i in range(sets)]
    for _ in range(5):
        g.replay()
    times = []
    for _ in range(30):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e3 / sets)
    del outs, g, xs, ws, bs
    return statistics.median(times)


def main():
    args = parse_args()
    torch = need_torch()
    if not Path(args.gexec).exists():
        fail(f"no gexec at {args.gexec}; build it first (bash scripts/build.sh release gexec)")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    dtypes = ["f16"] if args.quick else ["f16", "bf16"]
    ms = [1, 16, 128] if args.quick else MS
    nks = NKS[:2] if args.quick else NKS
    gbps = copy_gbps(torch)
    print(f"copy bandwidth {gbps:.0f} GB/s (read + write over time, 1 GiB)", flush=True)
    rows = []
    for dtype in dtypes:
        shapes = [(m, n, k) for n, k in nks for m in ms]
        up = [(m, n, k) for m, n, k in shapes if n > k]  # the up projections also run with a SiLU
        sweeps = {(name, act): gexec_sweep(args, shapes if act == "none" else up, dtype, kern, act)
                  for name, kern in KERNELS.items() for act in ("none", "silu")}
        for m, n, k in shapes:
            for silu in ([False, True] if n > k else [False]):
                row = {"m": m, "n": n, "k": k, "dtype": dtype, "epilogue": "bias+silu" if silu else "bias",
                       "floor_us": n * k * 2 / (gbps * 1e3)}
                for name in KERNELS:
                    p = sweeps[(name, "silu" if silu else "none")].get((m, n, k), {})
                    ok = p.get("result") == "pass" and "median_us" in p and p.get("l2") == "cold"
                    row[name] = p["median_us"] if ok else None
                    row[name + " kernel"] = p.get("kernel", "")
                    if p and not ok:
                        row[name + " kernel"] = f"{p.get('result')}: {p.get('error', '')}"[:60]
                row["torch"] = torch_us(torch, m, n, k, dtype, silu)
                rows.append(row)
                print(line(row), flush=True)
    text = table(rows, gbps, torch.cuda.get_device_name())
    print(text)
    (out / "decode.md").write_text(text)
    (out / "decode.json").write_text(json.dumps({"copy_gbps": gbps, "rows": rows}, indent=1))
    plot(rows, out / "decode.png")
    if args.docs:
        write_into_docs(Path(args.docs), text)


def fmt(v):
    return "-" if v is None else f"{v:.2f}"


def line(r):
    cols = " ".join(f"{name} {fmt(r[name])}" for name in list(KERNELS) + ["torch"])
    return f"{r['dtype']} {r['m']}x{r['n']}x{r['k']} {r['epilogue']}: floor {r['floor_us']:.2f} us, {cols} ({r['gexec default kernel']})"


def table(rows, gbps, device):
    head = ["dtype", "M x N x K", "epilogue", "floor (us)"] + [f"{n} (us)" for n in KERNELS] + \
           ["torch (us)", "default / floor", "default / torch", "default kernel"]
    out = [f"Cold weights (rotated past the L2), {device}, copy bandwidth {gbps:.0f} GB/s measured in the same run.", "",
           "| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in rows:
        d = r["gexec default"]
        cells = [r["dtype"], f"{r['m']} x {r['n']} x {r['k']}", r["epilogue"], f"{r['floor_us']:.2f}"] + \
                [fmt(r[n]) for n in KERNELS] + [fmt(r["torch"]),
                                                 "-" if d is None else f"{d / r['floor_us']:.2f}",
                                                 "-" if d is None else f"{d / r['torch']:.2f}",
                                                 r["gexec default kernel"]]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def plot(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no matplotlib: no plot", file=sys.stderr)
        return
    shapes = sorted({(r["n"], r["k"]) for r in rows})
    fig, axes = plt.subplots(1, len(shapes), figsize=(4 * len(shapes), 3.5), sharey=True, squeeze=False)
    for ax, (n, k) in zip(axes[0], shapes):
        for name in list(KERNELS) + ["torch"]:
            pts = [(r["m"], r[name] / r["floor_us"]) for r in rows
                   if (r["n"], r["k"]) == (n, k) and r["dtype"] == "f16" and r["epilogue"] == "bias" and r[name]]
            if pts:
                ax.plot(*zip(*pts), marker="o", label=name)
        ax.set_xscale("log", base=2)
        ax.set_title(f"N={n} K={k} (f16)")
        ax.set_xlabel("M")
        ax.axhline(1.0, color="gray", lw=0.5)
    axes[0][0].set_ylabel("time / floor")
    axes[0][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def write_into_docs(path, text):
    page = path.read_text()
    begin, end = page.find(DOCS_BEGIN), page.find(DOCS_END)
    if begin < 0 or end < begin:
        print(f"{path}: no {DOCS_BEGIN} ... {DOCS_END} markers; not written", file=sys.stderr)
        return
    path.write_text(page[:begin + len(DOCS_BEGIN)] + "\n" + text + page[end:])


if __name__ == "__main__":
    main()
