"""The Python API on the CPU backend with NumPy arrays: binding without copies, results, errors."""
import json
import threading

import numpy as np
import pytest

import gexec
from conftest import bad_path, cli, graph_path

GRAPH = graph_path("gemm_bias_relu.json")  # A f16 [64,80], B f16 [80,96], Bias f32 [96] constant, C f16 [64,96]


def reference(a, b, bias):
    return np.maximum(a.astype(np.float32) @ b.astype(np.float32) + bias, 0)


def arrays(seed=1):
    rng = np.random.default_rng(seed)
    a = (rng.standard_normal((64, 80)) * 0.25).astype(np.float16)
    b = (rng.standard_normal((80, 96)) * 0.25).astype(np.float16)
    bias = (rng.standard_normal(96) * 0.1).astype(np.float32)
    return a, b, bias


@pytest.fixture
def ex():
    return gexec.Executor(gexec.Graph.load(GRAPH), backend="cpu")


def close(got, want):
    np.testing.assert_allclose(got.astype(np.float32), want, atol=2e-2, rtol=2e-2)


def test_graph_load_and_from_dict_agree():
    g = gexec.Graph.load(GRAPH)
    with open(GRAPH) as f:
        d = gexec.Graph.from_dict(json.load(f))
    assert g.name == d.name == "gemm_bias_relu"
    assert g.inputs == d.inputs == ["A", "B", "Bias"]
    assert g.outputs == ["C"]
    assert g.tensors["A"] == {"shape": (64, 80), "dtype": "f16", "layout": "rowmajor", "constant": False}
    assert d.source == "<dict>" and g.source == GRAPH


def test_selection_names_each_op_and_kernel(ex):
    assert ex.backend == "cpu"
    assert len(ex.selection) == 1
    op, kernel = ex.selection[0]
    assert isinstance(op, str) and kernel == "cpu.gemm_bias_act"


def test_run_binds_output_and_computes(ex):
    a, b, bias = arrays()
    c = np.zeros((64, 96), np.float16)
    out = ex.run({"A": a, "B": b, "Bias": bias}, outputs={"C": c})
    assert out["C"] is c  # the caller's array, written in place
    close(c, reference(a, b, bias))
    assert np.count_nonzero(c) > 0


def test_inputs_are_read_in_place_not_copied(ex):
    a, b, bias = arrays()
    c = np.zeros((64, 96), np.float16)
    ex.run({"A": a, "B": b, "Bias": bias}, outputs={"C": c})
    first = c.copy()
    rebinds = ex.rebinds
    a *= 2  # the same object, new values: read from its memory by the next run
    ex.run({"A": a, "B": b, "Bias": bias}, outputs={"C": c})
    assert ex.rebinds == rebinds  # nothing moved
    close(c, reference(a, b, bias))
    assert not np.array_equal(c, first)


def test_new_arrays_each_run(ex):
    for seed in range(3):
        a, b, bias = arrays(seed)
        out = ex.run({"A": a, "B": b, "Bias": bias})
        close(out["C"], reference(a, b, bias))


def test_outputs_left_out_are_fresh_numpy_arrays(ex):
    a, b, bias = arrays()
    first = ex.run({"A": a, "B": b, "Bias": bias})["C"]
    second = ex.run({"A": a * 0, "B": b, "Bias": bias})["C"]
    assert isinstance(first, np.ndarray) and first.dtype == np.float16 and first.shape == (64, 96)
    assert not np.shares_memory(first, second)
    close(first, reference(a, b, bias))  # not overwritten by the second run


def test_inputs_left_out_come_from_the_seed():
    g = gexec.Graph.load(GRAPH)
    ex = gexec.Executor(g, backend="cpu")
    drawn = ex.run({})["C"]
    a, b, bias = arrays()
    ex.run({"A": a, "B": b, "Bias": bias})
    again = ex.run({})["C"]  # back to the drawn values
    np.testing.assert_array_equal(drawn, again)
    other = gexec.Executor(g, backend="cpu", seed=ex.seed + 1).run({})["C"]
    assert not np.array_equal(drawn, other)


def test_partial_inputs(ex):
    drawn = ex.run({})["C"]
    a, _, _ = arrays()
    mixed = ex.run({"A": a})["C"]
    assert not np.array_equal(drawn, mixed)
    assert all(c["passed"] for c in ex.check())


def test_check_reports_and_catches_a_wrong_output(ex):
    a, b, bias = arrays()
    c = np.zeros((64, 96), np.float16)
    ex.run({"A": a, "B": b, "Bias": bias}, outputs={"C": c})
    [chk] = ex.check()
    assert chk["name"] == "C" and chk["passed"] and chk["beyond"] == 0
    assert {"max_abs", "rel_fro", "beyond", "passed", "atol", "rtol", "mode"} <= set(chk)
    c[:] = 7  # the check reads the caller's output as it is now
    [bad] = ex.check()
    assert not bad["passed"] and bad["beyond"] > 0


def test_check_before_any_run(ex):
    with pytest.raises(gexec.RuntimeError, match="no run"):
        ex.check()


def test_colmajor_tensors_take_fortran_order():
    ex = gexec.Executor(gexec.Graph.load(graph_path("transposed.json")), backend="cpu")
    rng = np.random.default_rng(3)
    a = rng.standard_normal((80, 64)).astype(np.float16)
    b = np.asfortranarray(rng.standard_normal((96, 80)).astype(np.float16))
    bt = rng.standard_normal((96, 80)).astype(np.float16)
    out = ex.run({"A": a, "B": b, "Bt": bt})
    want = a.T.astype(np.float32) @ b.T.astype(np.float32)
    close(out["C"], want)
    assert out["D"].flags.f_contiguous  # D is colmajor in the graph
    close(out["D"], a.T.astype(np.float32) @ bt.T.astype(np.float32))
    with pytest.raises(ValueError, match=r"input B: strides .*colmajor"):
        ex.run({"B": np.ascontiguousarray(b)})


def test_bf16_output_on_cpu_is_a_gexec_array():
    ex = gexec.Executor(gexec.Graph.load(graph_path("gemm_bias_gelu_bf16.json")), backend="cpu")
    out = ex.run({})
    [name] = ex.outputs
    arr = out[name]
    assert isinstance(arr, gexec.Array) and arr.dtype == "bf16"
    host = arr.to_numpy()
    assert host.dtype == np.float32 and host.shape == arr.shape and np.isfinite(host).all()
    assert all(c["passed"] for c in ex.check())
    assert not hasattr(arr, "__cuda_array_interface__")
    assert arr.__dlpack_device__() == (1, 0) and type(arr.__dlpack__()).__name__ == "PyCapsule"
    with pytest.raises(BufferError):
        arr.__dlpack__(copy=True)


# Errors: each names the tensor and what was expected.


def test_wrong_dtype_is_a_type_error(ex):
    a, b, bias = arrays()
    with pytest.raises(TypeError, match=r"input A: dtype float32; expected float16"):
        ex.run({"A": a.astype(np.float32), "B": b, "Bias": bias})


def test_bias_in_f16_is_a_type_error(ex):
    a, b, bias = arrays()
    with pytest.raises(TypeError, match=r"input Bias: dtype float16; expected float32"):
        ex.run({"A": a, "B": b, "Bias": bias.astype(np.float16)})


def test_wrong_shape_is_a_value_error(ex):
    a, b, bias = arrays()
    with pytest.raises(ValueError, match=r"input A: shape \(80, 64\); expected \(64, 80\)"):
        ex.run({"A": np.ascontiguousarray(a.T), "B": b, "Bias": bias})


def test_transposed_view_is_a_strides_error(ex):
    a, b, bias = arrays()
    with pytest.raises(ValueError, match=r"input A: strides"):
        ex.run({"A": np.ascontiguousarray(a.T).T, "B": b, "Bias": bias})


def test_misaligned_array_is_a_value_error(ex):
    a, b, bias = arrays()
    flat = np.zeros(64 * 80 + 8, np.float16)
    shifted = flat[1 : 1 + 64 * 80].reshape(64, 80)
    with pytest.raises(ValueError, match=r"input A: the data at 0x[0-9a-f]+ is not aligned"):
        ex.run({"A": shifted, "B": b, "Bias": bias})


def test_wrong_output_dtype(ex):
    with pytest.raises(TypeError, match=r"output C: dtype float32; expected float16"):
        ex.run({}, outputs={"C": np.zeros((64, 96), np.float32)})


def test_unknown_names_are_key_errors(ex):
    with pytest.raises(KeyError, match=r"X: not an input of graph gemm_bias_relu \(its inputs: A, B, Bias\)"):
        ex.run({"X": np.zeros(3)})
    with pytest.raises(KeyError, match=r"it is an output: pass it in outputs="):
        ex.run({"C": np.zeros((64, 96), np.float16)})
    with pytest.raises(KeyError, match=r"Q: not an output"):
        ex.run({}, outputs={"Q": np.zeros(3)})


def test_not_an_array_is_a_type_error(ex):
    with pytest.raises(TypeError, match=r"input A: expected an array with __dlpack__"):
        ex.run({"A": [[1.0]]})


def test_errors_leave_the_executor_usable(ex):
    a, b, bias = arrays()
    with pytest.raises(TypeError):
        ex.run({"A": a.astype(np.float32)})
    out = ex.run({"A": a, "B": b, "Bias": bias})
    close(out["C"], reference(a, b, bias))


def test_bad_options():
    g = gexec.Graph.load(GRAPH)
    with pytest.raises(ValueError, match="unknown backend"):
        gexec.Executor(g, backend="tpu")
    with pytest.raises(ValueError, match="passes"):
        gexec.Executor(g, backend="cpu", passes="no_such_pass")
    with pytest.raises(ValueError, match="verify"):
        gexec.Executor(g, backend="cpu", verify="sometimes")


def test_graph_error_has_the_lines_of_validate():
    path = bad_path("dtype_unknown.json")
    rc, _, err = cli("validate", path)
    assert rc == 2 and err.strip()
    with pytest.raises(gexec.GraphError) as e:
        gexec.Graph.load(path)
    assert str(e.value).strip() == err.strip()
    assert isinstance(e.value, ValueError)
    assert ": /" in str(e.value)  # FILE: /json/pointer: ...


def test_graph_error_from_dict_names_the_pointer():
    with open(GRAPH) as f:
        d = json.load(f)
    d["tensors"][0]["dtype"] = "f17"
    with pytest.raises(gexec.GraphError, match=r"<dict>: /tensors/0/dtype"):
        gexec.Graph.from_dict(d)


def test_runtime_error_has_the_cli_message():
    rc, _, err = cli("run", GRAPH, "--backend", "cuda")
    if rc == 0:
        pytest.skip("this machine has a CUDA device: no CUDA failure to compare")
    with pytest.raises(gexec.RuntimeError) as e:
        gexec.Executor(gexec.Graph.load(GRAPH), backend="cuda")
    assert err.strip() == "gexec: " + str(e.value)
    assert isinstance(e.value, RuntimeError)


def test_time_has_the_cli_timing_json_fields(ex):
    a, b, bias = arrays()
    ex.run({"A": a, "B": b, "Bias": bias})
    t = ex.time(iters=5, warmup_iters=1, peak_tflops=1.0)
    assert t["samples"] >= 1 and t["median_us"] > 0 and t["flops"] == pytest.approx(2 * 64 * 96 * 80 + 2 * 64 * 96)
    rc, out, _ = cli("run", GRAPH, "--backend", "cpu", "--iters", "5", "--warmup", "1", "--peak-tflops", "1")
    assert rc == 0
    line = next(l for l in out.splitlines() if l.startswith("timing-json: "))
    assert set(json.loads(line[len("timing-json: "):])) == set(t)


def test_runs_from_threads():
    # Runs on one executor from several threads are serialised and each correct.
    ex = gexec.Executor(gexec.Graph.load(GRAPH), backend="cpu")
    errors = []

    def work(seed):
        try:
            for _ in range(5):
                a, b, bias = arrays(seed)
                close(ex.run({"A": a, "B": b, "Bias": bias})["C"], reference(a, b, bias))
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_cpu_runs_are_never_replays(ex):
    a, b, bias = arrays()
    c = np.zeros((64, 96), np.float16)
    for _ in range(5):  # the same buffers every time: a CUDA executor would replay by now
        ex.run({"A": a, "B": b, "Bias": bias}, outputs={"C": c})
        assert not ex.replaying
    close(c, reference(a, b, bias))
