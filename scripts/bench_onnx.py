#!/usr/bin/env python3
"""MLPs exported from Hugging Face transformers to ONNX, run by gexec and by PyTorch and onnxruntime.

  python3 scripts/bench_onnx.py [--gexec build/release/gexec] [--out bench_onnx_out] [--small-only]

Models (torch.onnx.export, opset 17, the TorchScript exporter where the installed torch has it):
LlamaMLP (SiLU gate), GPT2MLP (activation gelu_new: the tanh GELU with Pow) and BERT's
intermediate + output (dense, erf GELU, dense, the residual; BertOutput's LayerNorm is left out,
gexec has no LayerNorm), at d 4096 and d 256, in f32 and f16, the token count a dynamic axis.

Per model and dtype: `gexec run --dry-run` (the ops after the passes: one GEMM per Linear, the
activations in epilogues or groups); on the GPU, for each --gpu-tokens, gexec's checked run
(reference check and --expect against onnxruntime's outputs on the same input) and its time on
that input, and PyTorch eager, eager in a CUDA graph and torch.compile (--compile-mode, default
max-autotune-no-cudagraphs); on the CPU, for each --cpu-tokens (f32), gexec's CPU backend and
onnxruntime's CPU provider, both with --threads threads (OPENBLAS_NUM_THREADS,
intra_op_num_threads). f32 products run in full f32 (gexec --precision f32; PyTorch's default,
TF32 off). The timings of a row are taken in --rounds rounds, each timing every variant once in
the same order, and each variant's figure is the median of its rounds: the GPU's clocks drift
over a run (its power limit after sustained load: a 200 ms warm-up alone put gexec's BERT f16 at
142 us, against 122 us with a warm-up of 10 iterations), and variants timed one after the other
would each meet another state. Every step is in a try: a failure is recorded in the row's errors,
naming the step, and the run goes on. Prints one table and writes
results.json and results.md under --out.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "scripts"))
import bench_vs_torch as bvt  # noqa: E402  (time_torch, cuda_graph_of: the same timing method)

OPS = ("GEMM_BIAS_ACT", "MATMUL", "BIAS_ADD", "ADD", "SUB", "MUL", "DIV", "RELU", "GELU", "SILU", "SIGMOID", "TANH", "ERF",
       "POW", "CAST", "FUSED_ELEMENTWISE")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--gexec", default=str(REPO / "build/release/gexec"))
    p.add_argument("--out", default="bench_onnx_out")
    p.add_argument("--models", default="llama,gpt2,bert")
    p.add_argument("--dims", default="4096,256")
    p.add_argument("--dtypes", default="f32,f16")
    p.add_argument("--gpu-tokens", default="256,4096")
    p.add_argument("--cpu-tokens", default="64,256")
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--iters", type=int, default=30)
    p.add_argument("--warmup-ms", type=float, default=200)
    p.add_argument("--rounds", type=int, default=3, help="rounds over every variant of a row; the median is kept")
    p.add_argument("--timeout", type=float, default=600, help="seconds for one gexec command")
    p.add_argument("--compile-mode", default="max-autotune-no-cudagraphs",
                   help="torch.compile's mode (\"default\" compiles in seconds, max-autotune in minutes per model)")
    p.add_argument("--small-only", action="store_true", help="d 256 only (a quick trial)")
    p.add_argument("--autotune", action="store_true",
                   help="also time gexec on the GPU with --autotune --algo-space all (every cuBLASLt configuration of "
                        "each product timed first, all of them: --autotune-top 2048)")
    p.add_argument("--check-only", action="store_true",
                   help="export, onnxruntime's outputs and gexec's checked runs with their tables; no timings")
    a = p.parse_args()
    a.dims = [256] if a.small_only else [int(v) for v in a.dims.split(",")]
    a.gpu_tokens = [int(v) for v in a.gpu_tokens.split(",") if v]  # empty: no GPU rows
    a.cpu_tokens = [int(v) for v in a.cpu_tokens.split(",") if v]  # empty: no CPU rows
    return a


def step(row, name, fn, *a):
    """fn(*a), or None with "name: error" in the row's errors."""
    try:
        return fn(*a)
    except subprocess.TimeoutExpired as e:
        row["errors"].append(f"{name}: timed out after {e.timeout:.0f} s")
    except Exception as e:  # noqa: BLE001  every failure is recorded, none stops the run
        row["errors"].append(f"{name}: {type(e).__name__}: {str(e).strip().splitlines()[-1] if str(e).strip() else ''}")
        traceback.print_exc(limit=2, file=sys.stderr)
    return None


def gexec(args, cmd, env=None):
    p = subprocess.run([args.gexec] + cmd, capture_output=True, text=True, timeout=args.timeout,
                       env=dict(os.environ, **(env or {})))
    return p.returncode, p.stdout, p.stderr


# ---------------------------------------------------------------- models

def make_module(torch, kind, d):
    import transformers as tf
    ffn = {4096: 11008}.get(d, 4 * d) if kind == "llama" else 4 * d
    if kind == "llama":
        from transformers.models.llama.modeling_llama import LlamaMLP
        return LlamaMLP(tf.LlamaConfig(hidden_size=d, intermediate_size=ffn, hidden_act="silu", mlp_bias=False))
    if kind == "gpt2":
        from transformers.models.gpt2.modeling_gpt2 import GPT2MLP
        return GPT2MLP(ffn, tf.GPT2Config(n_embd=d, activation_function="gelu_new", resid_pdrop=0.0))
    from transformers.models.bert.modeling_bert import BertIntermediate

    class BertFFN(torch.nn.Module):  # BertIntermediate + BertOutput's dense and residual (no LayerNorm)
        def __init__(self):
            super().__init__()
            cfg = tf.BertConfig(hidden_size=d, intermediate_size=ffn, hidden_act="gelu")
            self.intermediate = BertIntermediate(cfg)
            self.dense = torch.nn.Linear(ffn, d)

        def forward(self, x):
            return self.dense(self.intermediate(x)) + x

    return BertFFN()


def export(torch, module, d, dtype, path):
    x = torch.zeros(8, d, dtype=dtype)
    kw = dict(input_names=["x"], output_names=["y"], dynamic_axes={"x": {0: "tokens"}, "y": {0: "tokens"}},
              opset_version=17)
    with torch.no_grad():
        try:
            torch.onnx.export(module, (x,), str(path), dynamo=False, **kw)
        except TypeError:  # a torch without the dynamo argument
            torch.onnx.export(module, (x,), str(path), **kw)
    return path


def fused_ops(args, model, tokens):
    rc, out, err = gexec(args, ["run", "--dry-run", str(model), "--dim", f"tokens={tokens}", "--backend", "cpu"])
    if rc != 0:
        raise RuntimeError(f"gexec run --dry-run exited {rc}: {err.strip().splitlines()[-1:]}")
    after = out.split("// after the passes", 1)[-1].split("\n\n", 1)[0]
    # Each op's line reads "op NAME = TYPE(...)": a group's steps (MUL, SILU inside it) are not ops.
    counts = {op: len(re.findall(rf"^op \S+ = {op}\(", after, re.M)) for op in OPS}
    return ", ".join(f"{n} {op}" for op, n in counts.items() if n)


# ---------------------------------------------------------------- data and onnxruntime

def write_case(np, onnx, folder, x, y):
    from onnx import numpy_helper
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "input_0.pb").write_bytes(numpy_helper.from_array(x, "x").SerializeToString())
    if y is not None:
        (folder / "output_0.pb").write_bytes(numpy_helper.from_array(y, "y").SerializeToString())


def ort_session(args, model):
    import onnxruntime as ort
    o = ort.SessionOptions()
    o.intra_op_num_threads = args.threads
    o.inter_op_num_threads = 1
    return ort.InferenceSession(str(model), o, providers=["CPUExecutionProvider"])


def ort_us(args, sess, x):
    sess.run(None, {"x": x})
    t = []
    deadline = time.perf_counter() + args.timeout
    for _ in range(max(5, args.iters // 3)):
        t0 = time.perf_counter()
        sess.run(None, {"x": x})
        t.append((time.perf_counter() - t0) * 1e6)
        if time.perf_counter() > deadline:
            break
    return statistics.median(t)


def gexec_run(args, model, folder, tokens, backend, extra):
    """`gexec run` of the model on folder's input_0.pb (the input PyTorch and onnxruntime get, so
    that every variant, checked or timed, runs on the same data), with extra options."""
    cmd = ["run", str(model), "--backend", backend, "--dim", f"tokens={tokens}", "--precision", "f32",
           "--load-inputs", str(folder)] + extra
    return gexec(args, cmd, {"OPENBLAS_NUM_THREADS": str(args.threads)} if backend == "cpu" else None)


def gexec_checked(args, model, folder, tokens, backend, expect):
    rc, out, err = gexec_run(args, model, folder, tokens, backend, ["--expect", str(folder)] if expect else [])
    if rc not in (0, 1):
        raise RuntimeError(f"gexec exited {rc}: {(err.strip().splitlines() or ['no output'])[-1]}")
    # The check's and --expect's tables whole (their worst elements say what failed), not only the verdict.
    text = out.split("\ncheck:", 1)
    lines = [ln.rstrip() for ln in ("check:" + text[1] if len(text) > 1 else out).splitlines() if ln.strip()][:40]
    return ("pass" if rc == 0 else "FAIL") + (" (expect)" if expect else " (reference only)"), lines


def gexec_us(args, model, folder, tokens, backend, autotune=False):
    # Autotuned: every cuBLASLt configuration of each product timed (the whole space, not only the
    # heuristic's first few), as a user chasing the last microsecond would run it.
    tune = ["--autotune", "--algo-space", "all", "--autotune-top", "2048"] if autotune else []
    rc, out, err = gexec_run(args, model, folder, tokens, backend, ["--verify", "none", "--iters", str(args.iters),
                                                                    "--warmup-ms", str(args.warmup_ms)] + tune)
    if rc != 0:
        raise RuntimeError(f"gexec exited {rc}: {(err.strip().splitlines() or ['no output'])[-1]}")
    for line in out.splitlines():
        if line.startswith("timing-json: "):
            return json.loads(line[len("timing-json: "):])["median_us"]
    raise RuntimeError("gexec printed no timing-json line")


# ---------------------------------------------------------------- one model

def torch_timers(args, torch, module, x, row):
    """The PyTorch variants of a row as {name: fn() -> us}: eager, its CUDA graph, torch.compile
    (compiled and called once here, untimed)."""
    eager = lambda: module(x)  # noqa: E731
    timers = {"torch eager": lambda: bvt.time_torch(torch, eager, args.iters, args.warmup_ms)[0]}
    g = step(row, "torch CUDA graph capture", bvt.cuda_graph_of, torch, eager)
    if g is not None:
        timers["torch CUDA graph"] = lambda: bvt.time_torch(torch, g[0].replay, args.iters, args.warmup_ms)[0]
    c = step(row, "torch.compile", lambda: torch.compile(module, mode=args.compile_mode, dynamic=False))
    if c is not None and step(row, "torch.compile (first call)", c, x) is not None:
        timers["torch.compile"] = lambda: bvt.time_torch(torch, lambda: c(x), args.iters, args.warmup_ms)[0]
    return timers


def time_rounds(args, row, timers):
    """Each round times every variant once, in the same order; a variant that fails is dropped
    from the later rounds. Its figure is the median of its rounds (all kept in row["rounds"])."""
    row["rounds"] = {name: [] for name in timers}
    for _ in range(max(1, args.rounds)):
        for name, fn in timers.items():
            if name in row["rounds"]:
                v = step(row, f"{name} timing", fn)
                if v is None:
                    del row["rounds"][name]
                else:
                    row["rounds"][name].append(v)
    for name, vs in row["rounds"].items():
        row["us"][name] = statistics.median(vs)


def run_model(args, torch, np, onnx, kind, d, dt, out):
    tdtype = {"f32": torch.float32, "f16": torch.float16}[dt]
    npdtype = {"f32": np.float32, "f16": np.float16}[dt]
    rows, base = [], {"model": kind, "d": d, "dtype": dt}
    head = dict(base, where="model", tokens=None, us={}, check="", fused="", errors=[])
    rows.append(head)
    torch.manual_seed(0)
    module = step(head, "build the module", make_module, torch, kind, d)
    if module is None:
        return rows
    module = module.eval().to(tdtype)
    path = out / "models" / f"{kind}_d{d}_{dt}.onnx"
    path.parent.mkdir(parents=True, exist_ok=True)
    if step(head, "torch.onnx.export", export, torch, module, d, tdtype, path) is None:
        return rows
    head["fused"] = step(head, "gexec run --dry-run", fused_ops, args, path, 256) or ""
    sess = step(head, "onnxruntime session", ort_session, args, path)
    rng = np.random.default_rng(1)
    plan = [("gpu", t) for t in args.gpu_tokens] + [("cpu", t) for t in args.cpu_tokens if dt == "f32"]
    on_gpu = torch.cuda.is_available() and step(head, "module to cuda", lambda: module.to("cuda")) is not None
    for where, tokens in plan:
        row = dict(base, where=where, tokens=tokens, us={}, check="", errors=[])
        rows.append(row)
        x = rng.standard_normal((tokens, d)).astype(npdtype)
        y = step(row, "onnxruntime run (expected outputs)", lambda: sess.run(None, {"x": x})[0]) if sess else None
        folder = out / "data" / f"{kind}_d{d}_{dt}_{where}_{tokens}"
        step(row, "write the test data", write_case, np, onnx, folder, x, y)
        backend = "cuda" if where == "gpu" else "cpu"
        checked = step(row, f"gexec {backend} checked run", gexec_checked, args, path, folder, tokens, backend, y is not None)
        if checked:
            row["check"], row["check_lines"] = checked
        if args.check_only:
            continue
        timers = {f"gexec {backend}": lambda: gexec_us(args, path, folder, tokens, backend)}
        if args.autotune and backend == "cuda":
            timers["gexec cuda autotuned"] = lambda: gexec_us(args, path, folder, tokens, backend, True)
        if where == "cpu" and sess:
            timers["onnxruntime cpu"] = lambda: ort_us(args, sess, x)
        if where == "gpu" and on_gpu:
            xt = torch.from_numpy(x).to("cuda")
            timers.update(step(row, "torch set-up", torch_timers, args, torch, module, xt, row) or {})
        time_rounds(args, row, timers)
        if where == "gpu" and on_gpu:
            torch.cuda.synchronize()
            torch.cuda.empty_cache()
    return rows


# ---------------------------------------------------------------- table

def ratio(row):
    """gexec's default against the best other; with --autotune, the autotuned run's in parentheses."""
    us = {k: v for k, v in row["us"].items() if v}
    mine = us.get("gexec cuda") or us.get("gexec cpu")
    others = [v for k, v in us.items() if not k.startswith("gexec")]
    if not (mine and others):
        return ""
    tuned = us.get("gexec cuda autotuned")
    return f"{mine / min(others):.2f}x" + (f" ({tuned / min(others):.2f}x)" if tuned else "")


def markdown(rows):
    cols = ["gexec cuda", "gexec cuda autotuned", "torch eager", "torch CUDA graph", "torch.compile", "gexec cpu", "onnxruntime cpu"]
    head = "| model | d | dtype | where | tokens | " + " | ".join(c + " (us)" for c in cols) + \
           " | gexec / best other | check | fused (after the passes) | errors |"
    lines = [head, "|" + " --- |" * (head.count("|") - 1)]
    for r in rows:
        cells = [r["model"], str(r["d"]), r["dtype"], r["where"], str(r["tokens"] or "")]
        cells += [f"{r['us'][c]:.1f}" if r["us"].get(c) else "" for c in cols]
        cells += [ratio(r), r.get("check", ""), r.get("fused", ""), "; ".join(r["errors"]).replace("|", "/")]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def main():
    args = parse_args()
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    try:
        import numpy as np
        import onnx
        import torch
    except ImportError as e:
        sys.exit(f"bench_onnx.py needs numpy, onnx, torch, transformers and onnxruntime: {e}")
    torch.set_grad_enabled(False)  # inference only: no autograd state in any variant
    rows = []
    for kind in args.models.split(","):
        for d in args.dims:
            for dt in args.dtypes.split(","):
                print(f"== {kind} d {d} {dt}", flush=True)
                try:
                    rows += run_model(args, torch, np, onnx, kind, d, dt, out)
                except Exception as e:  # noqa: BLE001  a model that fails leaves the others
                    rows.append({"model": kind, "d": d, "dtype": dt, "where": "model", "tokens": None, "us": {},
                                 "errors": [f"{type(e).__name__}: {e}"]})
                (out / "results.json").write_text(json.dumps({"args": vars(args), "rows": rows}, indent=1, default=str))
    versions = {m: getattr(sys.modules.get(m), "__version__", "?") for m in ("torch", "onnx", "onnxruntime", "transformers")}
    text = markdown(rows)
    (out / "results.md").write_text(f"versions: {versions}; threads {args.threads}; "
                                    f"medians of {args.rounds} rounds; {time.perf_counter() - t0:.0f} s\n\n" + text)
    (out / "results.json").write_text(json.dumps({"args": vars(args), "versions": versions, "rows": rows}, indent=1,
                                                 default=str))
    print(text)
    print(f"wrote {out / 'results.json'} and {out / 'results.md'} in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
