"""The seed's end-to-end check through gexec's Python API: CuPy arrays attached to the graph's
tensors, one GEMM+Bias+ReLU op built in Python, run on the device without copies, checked against
NumPy.

    PYTHONPATH=build/release/python python3 examples/seed_e2e.py

Prints "e2e f16 GEMM+Bias+ReLU max_err: ..." and "OK" (exit 0), or "FAIL" (exit 1).
"""
import sys

import cupy as cp
import numpy as np

import gexec

M, N, K = 64, 96, 80
TOL = 2e-2  # f16 output: about ten ulps at these magnitudes

# The arrays, as the seed made them.
rng = np.random.default_rng(0)
A = cp.asarray((rng.standard_normal((M, K)) * 0.25).astype(np.float16))
B = cp.asarray((rng.standard_normal((K, N)) * 0.25).astype(np.float16))
bias = cp.asarray((rng.standard_normal(N) * 0.1).astype(np.float32))
C = cp.empty((M, N), dtype=cp.float16)

# The IR: a tensor per array, one op, the graph.
tensors = [
    {"name": "A", "shape": [M, K], "dtype": "f16"},
    {"name": "B", "shape": [K, N], "dtype": "f16"},
    {"name": "bias", "shape": [N], "dtype": "f32"},
    {"name": "C", "shape": [M, N], "dtype": "f16"},
]
op = {"op_type": "GEMM_BIAS_ACT", "name": "gemm_bias_relu", "inputs": ["A", "B", "bias"], "outputs": ["C"],
      "attrs": {"mnk": [M, N, K], "act": "relu"}}
graph = gexec.Graph.from_dict({"format": "gexec.graph", "version": 1, "name": "seed_e2e",
                               "tensors": tensors, "ops": [op], "outputs": ["C"]})

# The launch: the arrays bound in place of gexec's own buffers.
ex = gexec.Executor(graph, backend="cuda")
out = ex.run({"A": A, "B": B, "bias": bias}, outputs={"C": C})
assert out["C"] is C
cp.cuda.Device().synchronize()

# The check against NumPy.
ref = np.maximum(cp.asnumpy(A).astype(np.float32) @ cp.asnumpy(B).astype(np.float32) + cp.asnumpy(bias), 0)
max_err = float(np.max(np.abs(cp.asnumpy(C).astype(np.float32) - ref)))
print(f"e2e f16 GEMM+Bias+ReLU max_err: {max_err:.3e}")
print(f"kernel: {ex.selection[0][1]}")
if max_err <= TOL and all(r["passed"] for r in ex.check()):
    print("OK")
    sys.exit(0)
print("FAIL")
sys.exit(1)
