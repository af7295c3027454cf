"""The Python API on the CUDA backend with CuPy and PyTorch arrays: zero-copy (pointer equality),
results, the stream order with the caller's work, errors. Skipped, with the reason, where CuPy,
PyTorch or a CUDA device is absent."""
import pytest

import gexec
from conftest import graph_path

GRAPH = graph_path("gemm_bias_relu.json")


def cuda_executor(path=GRAPH):
    try:
        return gexec.Executor(gexec.Graph.load(path), backend="cuda")
    except gexec.RuntimeError as e:
        pytest.skip(f"no CUDA device for the gexec CUDA backend: {e}")


@pytest.fixture
def cp():
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed for this interpreter")
    try:
        if cupy.cuda.runtime.getDeviceCount() == 0:
            pytest.skip("CuPy sees no CUDA device")
    except cupy.cuda.runtime.CUDARuntimeError as e:
        pytest.skip(f"CuPy sees no CUDA device: {e}")
    return cupy


@pytest.fixture
def torch():
    t = pytest.importorskip("torch", reason="PyTorch is not installed for this interpreter")
    if not t.cuda.is_available():
        pytest.skip("PyTorch sees no CUDA device")
    return t


def cupy_arrays(cp, seed=0):
    rng = cp.random.default_rng(seed)
    a = (rng.standard_normal((64, 80), dtype=cp.float32) * 0.25).astype(cp.float16)
    b = (rng.standard_normal((80, 96), dtype=cp.float32) * 0.25).astype(cp.float16)
    bias = rng.standard_normal(96, dtype=cp.float32) * 0.1
    return a, b, bias


def cupy_reference(cp, a, b, bias):
    return cp.maximum(a.astype(cp.float32) @ b.astype(cp.float32) + bias, 0)


def test_cupy_zero_copy_and_result(cp):
    ex = cuda_executor()
    assert ex.backend == "cuda" and ex.selection[0][1].startswith("cublaslt")
    a, b, bias = cupy_arrays(cp)
    c = cp.zeros((64, 96), cp.float16)
    ptr = c.data.ptr
    out = ex.run({"A": a, "B": b, "Bias": bias}, outputs={"C": c})
    assert out["C"] is c and c.data.ptr == ptr
    # Ordered on the default stream: no explicit synchronisation before reading.
    cp.testing.assert_allclose(c.astype(cp.float32), cupy_reference(cp, a, b, bias), atol=2e-2, rtol=2e-2)
    assert all(r["passed"] for r in ex.check())


def test_cupy_inputs_read_in_place(cp):
    ex = cuda_executor()
    a, b, bias = cupy_arrays(cp)
    c = cp.zeros((64, 96), cp.float16)
    ex.run({"A": a, "B": b, "Bias": bias}, outputs={"C": c})
    rebinds = ex.rebinds
    a *= 2  # enqueued on CuPy's stream before the next run: the run must see it
    ex.run({"A": a, "B": b, "Bias": bias}, outputs={"C": c})
    assert ex.rebinds == rebinds
    cp.testing.assert_allclose(c.astype(cp.float32), cupy_reference(cp, a, b, bias), atol=4e-2, rtol=2e-2)


def test_cupy_new_arrays_each_run(cp):
    ex = cuda_executor()
    for seed in range(3):
        a, b, bias = cupy_arrays(cp, seed)
        out = ex.run({"A": a, "B": b, "Bias": bias})["C"]
        assert isinstance(out, gexec.Array)
        got = cp.from_dlpack(out)
        assert got.data.ptr == out.ptr  # exported without a copy
        assert cp.asarray(out).data.ptr == out.ptr  # __cuda_array_interface__ too
        cp.testing.assert_allclose(got.astype(cp.float32), cupy_reference(cp, a, b, bias), atol=2e-2, rtol=2e-2)


def test_cupy_errors(cp):
    ex = cuda_executor()
    a, b, bias = cupy_arrays(cp)
    with pytest.raises(ValueError, match=r"input A: the array is on the CPU; expected one on cuda:0"):
        ex.run({"A": cp.asnumpy(a), "B": b, "Bias": bias})
    with pytest.raises(TypeError, match=r"input A: dtype float32; expected float16"):
        ex.run({"A": a.astype(cp.float32), "B": b, "Bias": bias})
    with pytest.raises(ValueError, match=r"input A: strides"):
        ex.run({"A": cp.ascontiguousarray(a.T).T, "B": b, "Bias": bias})
    with pytest.raises(ValueError, match=r"input A: shape"):
        ex.run({"A": a.reshape(80, 64), "B": b, "Bias": bias})
    with pytest.raises(KeyError):
        ex.run({"a": a})


def test_cupy_less_aligned_buffer_rebuilds_and_stays_right(cp):
    ex = cuda_executor()
    a, b, bias = cupy_arrays(cp)
    big = cp.zeros(64 * 80 + 8, cp.float16)
    a16 = big[8 : 8 + 64 * 80].reshape(64, 80)  # 16-byte aligned, not 256
    a16[...] = a
    out = ex.run({"A": a16, "B": b, "Bias": bias})["C"]
    cp.testing.assert_allclose(cp.from_dlpack(out).astype(cp.float32), cupy_reference(cp, a, b, bias),
                               atol=2e-2, rtol=2e-2)


def test_torch_zero_copy_f16_and_bf16(torch):
    ex = cuda_executor()
    g = torch.Generator(device="cuda").manual_seed(0)
    a = (torch.randn(64, 80, device="cuda", generator=g) * 0.25).half()
    b = (torch.randn(80, 96, device="cuda", generator=g) * 0.25).half()
    bias = torch.randn(96, device="cuda", generator=g) * 0.1
    c = torch.empty(64, 96, device="cuda", dtype=torch.float16)
    ptr = c.data_ptr()
    out = ex.run({"A": a, "B": b, "Bias": bias}, outputs={"C": c})
    assert out["C"] is c and c.data_ptr() == ptr
    want = torch.relu(a.float() @ b.float() + bias)
    torch.testing.assert_close(c.float(), want, atol=2e-2, rtol=2e-2)
    fresh = ex.run({"A": a, "B": b, "Bias": bias})["C"]
    t = torch.from_dlpack(fresh)
    assert t.data_ptr() == fresh.ptr
    torch.testing.assert_close(t.float(), want, atol=2e-2, rtol=2e-2)
    with pytest.raises(TypeError, match=r"dtype bfloat16; expected float16"):
        ex.run({"A": a.bfloat16()})

    bf = cuda_executor(graph_path("gemm_bias_gelu_bf16.json"))
    inputs = {}
    for name in bf.inputs:
        info = gexec.Graph.load(graph_path("gemm_bias_gelu_bf16.json")).tensors[name]
        dtype = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}[info["dtype"]]
        inputs[name] = (torch.randn(*info["shape"], device="cuda", generator=g) * 0.25).to(dtype)
    outs = bf.run(inputs)
    assert all(r["passed"] for r in bf.check())
    for arr in outs.values():
        assert torch.from_dlpack(arr).dtype == torch.bfloat16


def test_torch_errors(torch):
    ex = cuda_executor()
    a = torch.zeros(64, 80, dtype=torch.float16)  # on the CPU
    with pytest.raises(ValueError, match=r"input A: the array is on the CPU"):
        ex.run({"A": a})
    with pytest.raises(ValueError, match=r"input A: strides"):
        ex.run({"A": torch.zeros(80, 64, device="cuda", dtype=torch.float16).t()})


def test_gil_released_during_device_work(cp):
    # A second thread keeps running Python while the main thread waits for the device.
    import threading

    big = gexec.Graph.from_dict({
        "format": "gexec.graph", "version": 1, "name": "big",
        "tensors": [
            {"name": "A", "shape": [4096, 4096], "dtype": "f16"},
            {"name": "B", "shape": [4096, 4096], "dtype": "f16"},
            {"name": "C", "shape": [4096, 4096], "dtype": "f16"}],
        "ops": [{"op_type": "MATMUL", "inputs": ["A", "B"], "outputs": ["C"]}],
        "outputs": ["C"]})
    ex = gexec.Executor(big, backend="cuda")
    c = cp.empty((4096, 4096), cp.float16)
    ticks = [0]
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            ticks[0] += 1

    t = threading.Thread(target=spin)
    t.start()
    for _ in range(200):  # ~40 ms of products queued; enqueuing is far quicker
        ex.run({}, outputs={"C": c})
    before = ticks[0]
    ex.synchronize()  # only C code from here: the spinner ticks only if the GIL is released
    during = ticks[0] - before
    stop.set()
    t.join()
    assert during > 0


def test_cupy_replay_of_the_same_buffers_stays_right(cp):
    ex = cuda_executor()
    a, b, bias = cupy_arrays(cp)
    c = cp.zeros((64, 96), cp.float16)
    inputs, outputs = {"A": a, "B": b, "Bias": bias}, {"C": c}
    seen = []
    for i in range(6):
        a[...] = cupy_arrays(cp, i)[0]  # new values, same buffer: a replay must read them
        ex.run(inputs, outputs)
        seen.append(ex.replaying)
        cp.testing.assert_allclose(c.astype(cp.float32), cupy_reference(cp, a, b, bias), atol=2e-2, rtol=2e-2)
    assert seen[:2] == [False, False] and seen[-1]  # captured once the buffers stayed the same
    other = cp.zeros_like(c)
    ex.run(inputs, {"C": other})  # a new buffer: launched directly, on it
    assert not ex.replaying
    cp.testing.assert_allclose(other.astype(cp.float32), cupy_reference(cp, a, b, bias), atol=2e-2, rtol=2e-2)
    direct = gexec.Executor(gexec.Graph.load(GRAPH), backend="cuda", cuda_graph=False)
    for _ in range(5):
        direct.run(inputs, outputs)
    assert not direct.replaying
