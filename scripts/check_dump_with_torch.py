#!/usr/bin/env python3
"""Recomputes a graph's outputs with PyTorch from the inputs `gexec run --dump DIR` wrote, and
compares them with the outputs gexec wrote beside them.

    gexec run graph.json --dump DIR
    python3 scripts/check_dump_with_torch.py graph.json DIR

Every op of the graph (MATMUL, GEMM_BIAS_ACT with its residual, BIAS_ADD, ADD, MUL, RELU, GELU, SILU, CAST) runs on the GPU in
float32 without TF32, each result rounded to its tensor's dtype as a device stores it. An element
passes when |gexec - torch| <= atol + rtol * scale, scale bounding the magnitudes that produced it
(for a product sum_k |a_ik b_kj| + |bias_j|): the looser rule of gexec's check before report
version 2, kept here as a plain cross-check of the dump. gexec's current rule (the bound from the
roundings, and a normwise rule) applies to any outputs saved as DIR/<name>.npy through
`gexec check GRAPH --inputs DIR --outputs DIR`. Exits 1 when an output fails, 0 when all pass,
and 0 with "skipped: ..." without PyTorch or a CUDA device.
"""
import json
import os
import sys

# Per output dtype: (atol, rtol), the magnitude rule gexec's check used before report version 2.
TOLERANCE = {"f32": (1e-6, 2.0**-9), "f16": (1e-5, 2.0**-9), "bf16": (1e-4, 2.0**-6)}


def main():
    if len(sys.argv) != 3:
        print("usage: check_dump_with_torch.py GRAPH.json DUMP_DIR", file=sys.stderr)
        return 2
    try:
        import numpy as np
        import torch
    except ImportError:
        print("skipped: needs PyTorch and a CUDA device")
        return 0
    if not torch.cuda.is_available():
        print("skipped: needs PyTorch and a CUDA device")
        return 0
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    dev = torch.device("cuda")
    graph_path, dump = sys.argv[1], sys.argv[2]
    with open(graph_path) as f:
        graph = json.load(f)
    tensors = {t["name"]: t for t in graph["tensors"]}
    store = {"f16": torch.float16, "bf16": torch.bfloat16, "f32": torch.float32}

    def rounded(x, name):
        # As the device stores it: rounded once to the tensor's dtype.
        return x.to(store[tensors[name].get("dtype", "f32")]).to(torch.float32)

    values, scales = {}, {}
    written = {out for op in graph["ops"] for out in op["outputs"]}
    for name in tensors:
        if name in written:
            continue
        path = os.path.join(dump, name + ".npy")
        if not os.path.exists(path):
            print(f"missing input {path}: run gexec with --dump {dump} first", file=sys.stderr)
            return 2
        x = torch.from_numpy(np.load(path).astype(np.float32)).to(dev)
        values[name], scales[name] = x, x.abs()

    def gelu(x, form):
        return torch.nn.functional.gelu(x, approximate="tanh" if form == "tanh" else "none")

    for op in graph["ops"]:
        kind, ins, out = op["op_type"], op["inputs"], op["outputs"][0]
        attrs = op.get("attrs", {})
        if kind in ("MATMUL", "GEMM_BIAS_ACT"):
            a, b = values[ins[0]], values[ins[1]]
            sa, sb = scales[ins[0]], scales[ins[1]]
            if attrs.get("trans_a"):
                a, sa = a.transpose(-1, -2), sa.transpose(-1, -2)
            if attrs.get("trans_b"):
                b, sb = b.transpose(-1, -2), sb.transpose(-1, -2)
            alpha = float(attrs.get("alpha", 1.0))
            v, s = alpha * torch.matmul(a, b), abs(alpha) * torch.matmul(sa, sb)
            if kind == "GEMM_BIAS_ACT":
                residual = attrs.get("residual", False)
                if len(ins) > (3 if residual else 2):
                    v, s = v + values[ins[2]], s + scales[ins[2]]
                if residual:  # inside the activation, as cuBLASLt adds beta * C
                    beta = float(attrs.get("beta", 1.0))
                    v, s = v + beta * values[ins[-1]], s + abs(beta) * scales[ins[-1]]
                act = attrs.get("act", "none")
                if act == "relu":
                    v = torch.relu(v)
                elif act == "gelu":
                    v, s = gelu(v, "tanh"), s * 1.13
        elif kind == "BIAS_ADD" or kind == "ADD":
            v, s = values[ins[0]] + values[ins[1]], scales[ins[0]] + scales[ins[1]]
        elif kind == "MUL":
            v, s = values[ins[0]] * values[ins[1]], scales[ins[0]] * scales[ins[1]]
        elif kind == "SILU":
            v, s = torch.nn.functional.silu(values[ins[0]]), scales[ins[0]] * 1.1
        elif kind == "RELU":
            v, s = torch.relu(values[ins[0]]), scales[ins[0]]
        elif kind == "GELU":
            v, s = gelu(values[ins[0]], attrs.get("approximate", "tanh")), scales[ins[0]] * 1.13
        elif kind == "CAST":
            v, s = values[ins[0]], scales[ins[0]]
        else:
            print(f"op {op.get('name', kind)}: {kind} is not supported here", file=sys.stderr)
            return 2
        values[out] = rounded(v, out)
        scales[out] = torch.maximum(s, values[out].abs()) if kind == "CAST" else s

    print(f"{'output':16} {'dtype':5} {'shape':14} {'max_abs':>10} {'rel_fro':>10} {'beyond':>14}  result")
    failed = False
    for name in graph["outputs"]:
        dtype = tensors[name].get("dtype", "f32")
        got = torch.from_numpy(np.load(os.path.join(dump, name + ".npy")).astype(np.float32)).to(dev)
        ref, scale = values[name], scales[name]
        atol, rtol = TOLERANCE[dtype]
        err = (got - ref).abs()
        bad = ~(err <= atol + rtol * scale)  # NaN counts as beyond
        norm = ref.double().norm().item()
        rel_fro = err.double().norm().item() / norm if norm > 0 else float(err.double().norm().item() > 0)
        beyond = int(bad.sum().item())
        failed |= beyond > 0
        shape = "[" + ",".join(str(d) for d in got.shape) + "]"
        print(f"{name:16} {dtype:5} {shape:14} {err.max().item():10.3e} {rel_fro:10.3e} "
              f"{str(beyond) + '/' + str(got.numel()):>14}  {'FAIL' if beyond else 'pass'}")
    print("result:", "FAIL" if failed else "pass")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
