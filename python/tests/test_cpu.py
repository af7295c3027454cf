"""The Python API on the CPU backend with NumPy arrays: binding without copies, results, errors."""
import faulthandler
import json
import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import gexec
from conftest import SOURCE, bad_path, cli, graph_path

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


@pytest.mark.parametrize("name", ["mlp3.json", "fp8_rowwise.json", "batched_shared_b.json", "transposed.json"])
def test_gemm_commands_are_the_ones_run_emits(name, tmp_path):
    ex = gexec.Executor(gexec.Graph.load(graph_path(name)), backend="cpu", pad="never")
    commands = ex.gemm_commands()
    assert commands and all(c.startswith("gexec gemm --m ") and "--pad never" in c for c in commands)
    emitted = tmp_path / "g.gemms"
    rc, _, err = cli("run", graph_path(name), "--backend", "cpu", "--pad", "never", "--emit-gemms", str(emitted))
    assert rc == 0, err
    lines = [l.split("  #")[0] for l in emitted.read_text().splitlines() if l and not l.startswith("#")]
    assert lines == commands


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


def test_f8_tensors_are_type_errors_through_dlpack():
    # DLPack v0.8 (python/src/dlpack.hpp) has no float8 codes: f8 outputs come back as gexec.Arrays
    # that refuse to leave, f8 inputs cannot be given; the run itself and the check still work.
    ex = gexec.Executor(gexec.Graph.load(graph_path("fp8_output_amax.json")), backend="cpu")
    out = ex.run({})
    c = out["C"]
    assert isinstance(c, gexec.Array) and c.dtype == "f8e5m2" and c.shape == (128, 32)
    amax = out["C_amax"]
    assert isinstance(amax, np.ndarray) and amax.shape == (1,) and amax[0] > 0
    assert all(r["passed"] for r in ex.check())
    with pytest.raises(TypeError, match=r"f8e5m2: DLPack v0\.8 .*has no float8 type"):
        c.to_numpy()
    with pytest.raises(TypeError, match=r"f8e5m2: DLPack v0\.8"):
        c.__dlpack__()
    ex2 = gexec.Executor(gexec.Graph.load(graph_path("fp8_gemm_bias_relu.json")), backend="cpu")
    with pytest.raises(TypeError, match=r"input A: f8e4m3: DLPack v0\.8"):
        ex2.run({"A": np.zeros((64, 80), np.uint8)})


# Errors: each names the tensor and what was expected.


def misaligned(a):
    flat = np.zeros(64 * 80 + 8, np.float16)
    return flat[1 : 1 + 64 * 80].reshape(64, 80)


# One input replaced by a bad one: the error's type, and its message naming the input.
@pytest.mark.parametrize(
    "name, bad, error, match",
    [
        ("A", lambda a: a.astype(np.float32), TypeError, r"input A: dtype float32; expected float16"),
        ("Bias", lambda bias: bias.astype(np.float16), TypeError, r"input Bias: dtype float16; expected float32"),
        ("A", lambda a: np.ascontiguousarray(a.T), ValueError, r"input A: shape \(80, 64\); expected \(64, 80\)"),
        ("A", lambda a: np.ascontiguousarray(a.T).T, ValueError, r"input A: strides"),
        ("A", misaligned, ValueError, r"input A: the data at 0x[0-9a-f]+ is not aligned"),
    ],
    ids=["wrong_dtype", "bias_in_f16", "wrong_shape", "transposed_view_strides", "misaligned_array"],
)
def test_a_bad_input_is_refused_naming_it(ex, name, bad, error, match):
    a, b, bias = arrays()
    inputs = {"A": a, "B": b, "Bias": bias}
    inputs[name] = bad(inputs[name])
    with pytest.raises(error, match=match):
        ex.run(inputs)


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


def test_a_run_from_within_a_run_is_refused_not_a_deadlock(ex):
    a, b, bias = arrays()
    seen = []

    class Reentrant:
        """An input whose conversion runs the executor again, as a callback might."""

        def __dlpack_device__(self):
            return a.__dlpack_device__()

        def __dlpack__(self, *args, **kwargs):
            try:
                ex.run({"A": a, "B": b, "Bias": bias})
            except ValueError as e:
                seen.append(str(e))
            return a.__dlpack__(*args, **kwargs)

    # Were it to deadlock, the watchdog ends the process (exit 1) instead of hanging the suite.
    faulthandler.dump_traceback_later(60, exit=True)
    try:
        out = ex.run({"A": Reentrant(), "B": b, "Bias": bias})
    finally:
        faulthandler.cancel_dump_traceback_later()
    assert len(seen) == 1 and "called from within one of its own" in seen[0]
    close(out["C"], reference(a, b, bias))
    close(ex.run({"A": a, "B": b, "Bias": bias})["C"], reference(a, b, bias))  # the lock was released


def test_errors_leave_the_executor_usable(ex):
    a, b, bias = arrays()
    with pytest.raises(TypeError):
        ex.run({"A": a.astype(np.float32)})
    out = ex.run({"A": a, "B": b, "Bias": bias})
    close(out["C"], reference(a, b, bias))


def test_pad_and_residual_costs_reach_the_executor(tmp_path):
    """The executor is prepared from the options `gexec run` prepares with: --pad and --residual-costs."""
    g = gexec.Graph.load(os.path.join(SOURCE, "tests", "golden", "fuse_residual", "plain.json"))
    # Without a table the residual ADD is fused into the product; a table that measured fusing
    # slower for this shape keeps the ADD (as `gexec run --residual-costs` does).
    assert [op for op, _ in gexec.Executor(g, backend="cpu").selection] == ["mm"]
    slower = tmp_path / "slower.tsv"
    slower.write_text("16 8 32 f16 12.5 10.0\n")
    ex = gexec.Executor(g, backend="cpu", residual_costs=str(slower))
    assert [op for op, _ in ex.selection] == ["mm", "add"]
    ex.run()
    assert all(c["passed"] for c in ex.check())
    with pytest.raises(gexec.GraphError, match="none.tsv: cannot read the file"):
        gexec.Executor(g, backend="cpu", residual_costs=str(tmp_path / "none.tsv"))
    for pad in ("auto", "never", "always"):
        gexec.Executor(g, backend="cpu", pad=pad)
    with pytest.raises(ValueError, match=r'--pad: unknown value "sideways"'):
        gexec.Executor(g, backend="cpu", pad="sideways")


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


def test_module_exports_nothing_private():
    """The module shares a process with other C++ extensions (NumPy's, PyTorch's): nothing of the
    static libraries it links (libstdc++ where the toolchain links it statically, gexec's own) may be
    exported, or the process's copies mix."""
    import shutil
    import subprocess
    nm = shutil.which("nm")
    if not nm:
        pytest.skip("nm (binutils) is not on PATH")
    out = subprocess.run([nm, "-D", "--defined-only", gexec.__file__], capture_output=True, text=True, check=True).stdout
    names = [line.split()[-1] for line in out.splitlines() if line.strip()]
    assert "PyInit_gexec" in names
    # gexec's own code, and libstdc++'s state (the locale, the stream base) where it was linked in;
    # the weak instantiations of header templates that the module's own objects emit may stay.
    private = ("_ZN5gexec", "_ZNK5gexec", "_ZNSt6locale", "_ZNKSt6locale", "_ZNSt8ios_base")
    leaked = [n for n in names if n.startswith(private)]
    assert leaked == [], f"{len(leaked)} private symbols exported, e.g. {leaked[:5]}"


# The check's options follow the command line's rules (check_options.hpp).


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"verify": "exact"}, r'verify: "exact"; expected one of auto, full, sample, none \(exact mode draws'),
        ({"atol": float("inf")}, r"atol: expected a finite number from 0 to 1e300, got inf"),
        ({"atol": -1.0}, r"atol: expected a finite number from 0 to 1e300, got -1"),
        ({"atol": float("nan")}, r"atol: expected a finite number from 0 to 1e300, got nan"),
        ({"rtol": -0.5}, r"rtol: expected a finite number from 0 to 1e300, got -0.5"),
        ({"samples": 0}, r"samples: expected an integer from 1 to 9223372036854775807, got 0"),
    ],
    ids=["exact", "atol_inf", "atol_negative", "atol_nan", "rtol_negative", "samples_0"],
)
def test_check_options_are_refused_as_the_command_line_refuses_them(kwargs, match):
    with pytest.raises(ValueError, match=match):
        gexec.Executor(gexec.Graph.load(GRAPH), backend="cpu", **kwargs)


def test_the_check_options_share_the_command_lines_rule():
    rc, _, err = cli("run", GRAPH, "--backend", "cpu", "--atol", "inf")
    assert rc == 2 and "expected a finite number from 0 to 1e300" in err
    with pytest.raises(ValueError, match="expected a finite number from 0 to 1e300"):
        gexec.Executor(gexec.Graph.load(GRAPH), backend="cpu", atol=float("inf"))
    ex = gexec.Executor(gexec.Graph.load(GRAPH), backend="cpu", atol=0.0, rtol=1e300, samples=1, verify="sample")
    ex.run({})
    assert [r["mode"] for r in ex.check()] == ["sample"]


# Robustness: what a hostile or careless caller does must raise a clear exception, never crash.


@pytest.mark.parametrize(
    "code",
    [
        "gexec.Executor.__new__(gexec.Executor).run({})",
        "gexec.Executor.__new__(gexec.Executor).selection",
        "gexec.Array.__new__(gexec.Array).to_numpy()",
        "gexec.Array.__new__(gexec.Array).shape",
        "gexec.Graph.__new__(gexec.Graph).name",
        "gexec.Executor(gexec.Graph.__new__(gexec.Graph), backend='cpu')",
    ],
)
def test_an_instance_made_by_new_raises_instead_of_crashing(code):
    # In a child interpreter, so that a crash fails this test instead of ending the session.
    script = f"import gexec\ntry:\n    {code}\nexcept TypeError as e:\n    print('TypeError:', e)\n"
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, f"exit status {p.returncode} (negative: killed by that signal); {p.stderr}"
    assert "TypeError:" in p.stdout and "made by __new__ without __init__" in p.stdout, p.stdout


def test_an_output_sharing_memory_with_an_input_is_refused(ex):
    # check() reads the inputs from the arrays after the run: an output written over an input made
    # the check fail on a correct run. Such a run is refused before anything runs.
    a, b, bias = arrays()
    buf = np.zeros(64 * 96, np.float16)
    a_view = buf[: 64 * 80].reshape(64, 80)
    a_view[:] = a
    c = buf.reshape(64, 96)
    with pytest.raises(ValueError, match=r"output C shares memory with input A"):
        ex.run({"A": a_view, "B": b, "Bias": bias}, outputs={"C": c})
    with pytest.raises(gexec.RuntimeError, match="no run"):
        ex.check()  # the refused run is not one to check
    with pytest.raises(ValueError, match=r"output C shares memory with input A"):
        ex.run({"A": a_view, "B": b, "Bias": bias}, outputs={"C": c})  # the same arrays again
    out = ex.run({"A": a, "B": b, "Bias": bias}, outputs={"C": np.zeros((64, 96), np.float16)})
    close(out["C"], reference(a, b, bias))
    assert all(r["passed"] for r in ex.check())


def test_a_read_only_input_is_refused_naming_it(ex):
    a, b, bias = arrays()
    a.flags.writeable = False
    try:
        a.__dlpack__()
    except BufferError:
        pass
    else:
        pytest.skip("this NumPy exports read-only arrays through DLPack")
    with pytest.raises(BufferError, match=r"input A: the array refused to export itself through DLPack .*writable"):
        ex.run({"A": a, "B": b, "Bias": bias})


def test_time_stops_at_ctrl_c():
    # 10^7 iterations take minutes; SIGINT must end them within moments, as KeyboardInterrupt.
    script = (
        "import sys, time, gexec\n"
        f"ex = gexec.Executor(gexec.Graph.load({GRAPH!r}), backend='cpu')\n"
        "ex.run({})\n"
        "t0 = time.monotonic()\n"
        "try:\n"
        "    print('ready', flush=True)  # a signal from now on is caught below, wherever it lands\n"
        "    ex.time(iters=10**7, warmup_iters=0)\n"
        "except KeyboardInterrupt:\n"
        "    print(f'interrupted after {time.monotonic() - t0:.1f} s', flush=True)\n"
    )
    p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "ready"
        time.sleep(0.5)
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
    finally:
        p.kill()
    assert "interrupted after" in out, f"{out}{err}"
    assert p.returncode == 0


def test_graph_error_carries_the_problems_and_the_pointer(tmp_path):
    with open(GRAPH) as f:
        d = json.load(f)
    d["tensors"][0]["dtype"] = "f17"
    d["ops"][0]["attrs"]["act"] = "relux"
    with pytest.raises(gexec.GraphError) as e:
        gexec.Graph.from_dict(d)
    problems = e.value.problems
    assert len(problems) == len(str(e.value).splitlines()) == 2
    assert e.value.pointer == "/tensors/0/dtype"
    assert problems[0][:2] == ("<dict>", "/tensors/0/dtype") and problems[0][2].startswith('unknown dtype "f17"')
    assert problems[1][:2] == ("<dict>", "/ops/0/attrs/act") and problems[1][2].startswith('unknown activation')
    path = bad_path("dtype_unknown.json")
    with pytest.raises(gexec.GraphError) as e:
        gexec.Graph.load(path)
    assert e.value.problems[0][0] == path and e.value.pointer.startswith("/")
    syntax = tmp_path / "syntax.json"
    syntax.write_text("{\n  ")
    with pytest.raises(gexec.GraphError) as e:
        gexec.Graph.load(str(syntax))
    [(source, pointer, message)] = e.value.problems
    assert source == str(syntax) and pointer is None and e.value.pointer is None
    assert message.startswith("2:") and "JSON syntax error" in message


def test_from_dict_takes_numpy_scalars_and_arrays():
    with open(GRAPH) as f:
        d = json.load(f)
    d["tensors"][0]["shape"] = [np.int64(64), np.int32(80)]
    d["tensors"][1]["init"]["std"] = np.float32(0.25)
    d["seed"] = np.uint64(7)
    d["tensors"][2]["init"] = {"values": np.linspace(-1, 1, 96, dtype=np.float32)}  # Bias [96], as an array
    g = gexec.Graph.from_dict(d)
    assert g.tensors["A"]["shape"] == (64, 80) and g.seed == 7
    assert gexec.Executor(g, backend="cpu", seed=np.int64(3)).seed == 3
    d["seed"] = object()
    with pytest.raises(TypeError, match="a value of type object in the graph dict"):
        gexec.Graph.from_dict(d)


def onnx_gemm_relu():
    """Y = relu(A W + b) as ONNX bytes, built with python3-onnx's helper; None without it."""
    try:
        from onnx import TensorProto, helper, numpy_helper
    except ImportError:
        return None, None
    rng = np.random.default_rng(3)
    w = (rng.standard_normal((8, 6)) * 0.5).astype(np.float32)
    b = (rng.standard_normal(6) * 0.1).astype(np.float32)
    nodes = [helper.make_node("Gemm", ["A", "W", "b"], ["t"], name="/fc/Gemm"), helper.make_node("Relu", ["t"], ["Y"])]
    graph = helper.make_graph(nodes, "gemm_relu", [helper.make_tensor_value_info("A", TensorProto.FLOAT, [4, 8])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [4, 6])],
                              initializer=[numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return model.SerializeToString(), (w, b)


def test_onnx_models_load_from_a_file_and_from_bytes(tmp_path):
    data, weights = onnx_gemm_relu()
    if data is None:  # no python3-onnx: the checked-in model (tests/data/make_onnx.py wrote it)
        path = os.path.join(SOURCE, "tests", "data", "onnx", "mlp.onnx")
        g = gexec.Graph.load(path, dims={"batch": 2})
        with open(path, "rb") as f:
            b = gexec.Graph.from_onnx(f.read(), dims={"batch": 2})
        assert g.inputs == b.inputs and g.outputs == b.outputs == ["y"]
        assert g.tensors["x"]["shape"] == (8, 8)  # [batch, 4, 8] folded into the product's M
        out = gexec.Executor(g, backend="cpu").run({"x": np.ones((8, 8), np.float32)})
        assert out["y"].shape == (8, 8)
        return
    path = tmp_path / "gemm_relu.onnx"
    path.write_bytes(data)
    g = gexec.Graph.load(str(path))
    b = gexec.Graph.from_onnx(data)
    assert g.name == b.name == "gemm_relu"
    assert b.source == "<onnx>"
    assert g.inputs == b.inputs == ["A", "W", "b"]
    assert g.tensors["W"]["constant"] and not g.tensors["A"]["constant"]
    ex = gexec.Executor(b, backend="cpu")
    a = np.random.default_rng(4).standard_normal((4, 8)).astype(np.float32)
    out = ex.run({"A": a})
    w, bias = weights
    np.testing.assert_allclose(out["Y"], np.maximum(a @ w + bias, 0), rtol=1e-5, atol=1e-5)
    assert all(c["passed"] for c in ex.check())
    with pytest.raises(gexec.GraphError, match="<onnx>: not an ONNX model"):
        gexec.Graph.from_onnx(data[: len(data) // 2])


def cast_constant_graph():
    """A constant W cast once before the runs (a hoisted CAST) whose f16 copy is also an output."""
    return {"format": "gexec.graph", "version": 1, "tensors": [
        {"name": "X", "shape": [4, 8], "dtype": "f32"},
        {"name": "W", "shape": [8, 8], "dtype": "f32", "constant": True},
        {"name": "U", "shape": [2, 2], "dtype": "f32"},
        {"name": "W16", "shape": [8, 8], "dtype": "f16"},
        {"name": "X16", "shape": [4, 8], "dtype": "f16"},
        {"name": "Y", "shape": [4, 8], "dtype": "f32"}],
        "ops": [{"op_type": "CAST", "inputs": ["W"], "outputs": ["W16"]},
                {"op_type": "CAST", "inputs": ["X"], "outputs": ["X16"]},
                {"op_type": "MATMUL", "inputs": ["X16", "W16"], "outputs": ["Y"]}],
        "outputs": ["Y", "W16"]}


def test_an_output_computed_once_before_the_runs_is_returned_and_inputs_lists_what_run_takes():
    ex = gexec.Executor(gexec.Graph.from_dict(cast_constant_graph()), backend="cpu")
    # W is read once, before the runs, and U by no op: run() takes neither, so inputs lists neither.
    assert ex.inputs == ["X"]
    x = np.random.default_rng(2).standard_normal((4, 8)).astype(np.float32)
    for _ in range(2):
        out = ex.run({"X": x})
        assert out["W16"].shape == (8, 8) and out["W16"].dtype == np.float16
        assert np.isfinite(out["W16"]).all() and np.abs(out["W16"]).max() > 0  # not the poison, not zeros
        w = out["W16"].astype(np.float32)
        np.testing.assert_allclose(out["Y"], x.astype(np.float16).astype(np.float32) @ w, rtol=1e-5, atol=1e-5)
        assert all(c["passed"] for c in ex.check())


def test_check_after_a_refused_run_raises_instead_of_mixing_two_runs(ex):
    a, b, bias = arrays()
    ex.run({"A": a, "B": b, "Bias": bias})
    assert all(c["passed"] for c in ex.check())
    a2, _, _ = arrays(seed=5)
    with pytest.raises(TypeError):  # A is bound anew before B is refused
        ex.run({"A": a2, "B": b.astype(np.float32), "Bias": bias})
    with pytest.raises(gexec.RuntimeError, match="the last call to run\\(\\) was refused"):
        ex.check()
    ex.run({"A": a2, "B": b, "Bias": bias})
    assert all(c["passed"] for c in ex.check())


def test_file_arguments_are_refused_rather_than_waited_on_or_cut(tmp_path):
    fifo = tmp_path / "costs"
    os.mkfifo(fifo)
    g = gexec.Graph.load(GRAPH)
    with pytest.raises(gexec.GraphError, match="not a regular file \\(a FIFO\\)"):
        gexec.Executor(g, backend="cpu", residual_costs=str(fifo))
    with pytest.raises(gexec.GraphError, match="is a folder"):
        gexec.Executor(g, backend="cpu", residual_costs=str(tmp_path))
    with pytest.raises(gexec.GraphError, match="the path holds a NUL byte"):
        gexec.Graph.load(GRAPH + "\0/elsewhere.json")


def test_time_refuses_what_the_command_line_refuses(ex):
    ex.run({})
    for kwargs, says in [({"peak_tflops": -1}, "peak_tflops"), ({"peak_tflops": float("nan")}, "peak_tflops"),
                         ({"warmup_ms": float("nan")}, "warmup_ms")]:
        with pytest.raises(ValueError, match=says):
            ex.time(iters=1, **kwargs)


def test_from_dict_takes_nan_and_infinities_as_the_format_writes_them():
    d = json.load(open(GRAPH))
    d["tensors"][2]["init"] = {"values": [float("nan"), float("inf"), -float("inf")] + [0.0] * 93}
    g = gexec.Graph.from_dict(d)  # JSON has no NaN token: they travel as "nan", "inf", "-inf"
    assert g.name == d["name"]
    d["tensors"][0]["init"] = {"dist": "normal", "std": float("nan")}
    with pytest.raises(gexec.GraphError) as e:
        gexec.Graph.from_dict(d)
    assert e.value.pointer == "/tensors/0/init/std"


def test_onnx_dims_are_held_to_the_command_lines_rule():
    path = os.path.join(SOURCE, "tests", "data", "onnx", "mlp.onnx")
    for size in (0, -3, 2**62):
        with pytest.raises(gexec.GraphError, match="an integer from 1 to 2\\^48"):
            gexec.Graph.load(path, dims={"batch": size})


@pytest.mark.parametrize("constant", [False, True])
def test_a_new_block_scale_for_a_weight_is_read_like_the_weight(constant):
    """W8's S given anew (doubled) doubles Y, also where W8 and S are constants read once."""
    d = {"format": "gexec.graph", "version": 1, "tensors": [
        {"name": "x", "shape": [4, 128], "dtype": "f32"},
        {"name": "x8", "shape": [4, 128], "dtype": "f8e4m3", "scale": {"block": [1, 128], "tensor": "sx"}},
        {"name": "sx", "shape": [4, 1], "dtype": "f32"},
        {"name": "w8", "shape": [128, 8], "dtype": "f8e4m3", "scale": {"block": [128, 128], "tensor": "sw"},
         "init": {"dist": "normal", "std": 1.0}, "constant": constant},
        {"name": "sw", "shape": [1, 1], "dtype": "f32", "init": {"values": [0.5]}, "constant": constant},
        {"name": "y", "shape": [4, 8], "dtype": "f32"}],
        "ops": [{"op_type": "CAST", "inputs": ["x"], "outputs": ["x8", "sx"]},
                {"op_type": "MATMUL", "inputs": ["x8", "w8"], "outputs": ["y"]}],
        "outputs": ["y"]}
    ex = gexec.Executor(gexec.Graph.from_dict(d), backend="cpu")
    x = np.random.default_rng(0).standard_normal((4, 128)).astype(np.float32)
    y1 = ex.run({"x": x})["y"].copy()
    y2 = ex.run({"x": x, "sw": np.array([[1.0]], np.float32)})["y"].copy()
    np.testing.assert_array_equal(y2, 2 * y1)  # a power of two: exact
    assert all(c["passed"] for c in ex.check())
