// The Python module `gexec`: Graph, Executor, Array and the two exceptions, over the library.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cmath>
#include <filesystem>

#include "arrays.hpp"
#include "gexec/app/model_file.hpp"
#include "gexec/io/load.hpp"
#include "gexec/io/text.hpp"
#include "instances.hpp"
#include "runner.hpp"

namespace py = pybind11;
using namespace gexec;
using namespace gexec::py_binding;

namespace gexec::py_binding {
namespace {
PyObject* graph_error = nullptr;
PyObject* runtime_error_type = nullptr;
}  // namespace

// The lines of a GraphError as (file, pointer, message) tuples: "SOURCE: /pointer: message" (the
// loader's), "SOURCE:LINE:COL: message" (JSON syntax: no pointer), anything else whole.
py::list problems_of(const std::string& message, const std::string& source) {
  py::list out;
  size_t start = 0;
  while (start <= message.size()) {
    size_t end = message.find('\n', start);
    if (end == std::string::npos) end = message.size();
    const std::string line = message.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    py::object file = py::none(), pointer = py::none();
    std::string text = line;
    if (!source.empty() && line.compare(0, source.size() + 1, source + ":") == 0) {
      file = py::str(source);
      text = line.substr(source.size() + 1);
      if (text.compare(0, 2, " /") == 0) {
        const size_t colon = text.find(": ", 1);
        pointer = py::str(text.substr(1, colon == std::string::npos ? std::string::npos : colon - 1));
        text = colon == std::string::npos ? std::string() : text.substr(colon + 2);
      } else if (!text.empty() && text[0] == ' ') {
        text.erase(0, 1);
      }
    }
    out.append(py::make_tuple(file, pointer, text));
  }
  return out;
}

void throw_graph_error(const std::string& message, const std::string& source) {
  py::list problems = problems_of(message, source);
  py::object e = py::reinterpret_borrow<py::object>(graph_error)(message);
  e.attr("problems") = problems;
  e.attr("pointer") = problems.empty() ? py::none() : py::object(problems[0].cast<py::tuple>()[1]);
  PyErr_SetObject(graph_error, e.ptr());
  throw py::error_already_set();
}
void throw_runtime_error(const std::string& message) {
  PyErr_SetString(runtime_error_type, message.c_str());
  throw py::error_already_set();
}
void throw_error(const Error& e) {
  if (e.code == Exit::bad_input) throw_graph_error(e.message);
  throw_runtime_error(e.message);
}
}  // namespace gexec::py_binding

namespace {

// A graph file or an ONNX model (told apart by content); `dims` sizes an ONNX model's open dimensions.
// `dims` held to --dim's rule (a name, and a size from 1 to 2^48), with its message.
std::map<std::string, int64_t> checked_dims(const std::map<std::string, int64_t>& dims) {
  std::map<std::string, int64_t> out;
  for (const auto& [name, size] : dims)
    if (Status s = parse_dim(name + "=" + std::to_string(size), &out); !s) throw_graph_error(s.error().message);
  return out;
}

PyGraph load_file(const std::string& path, const std::map<std::string, int64_t>& dims) {
  auto m = load_model_file(path, {checked_dims(dims), {}});
  if (!m) throw_graph_error(m.error().message, path_text(path));  // the loader names the file so
  return {std::move(m->graph), path};
}

PyGraph from_onnx(const py::bytes& data, const std::string& base_dir, const std::map<std::string, int64_t>& dims) {
  const std::string dir = base_dir.empty() ? std::filesystem::current_path().string() : base_dir;
  auto m = load_onnx_bytes(std::string(data), "<onnx>", dir, {checked_dims(dims), {}});
  if (!m) throw_graph_error(m.error().message, "<onnx>");
  return {std::move(m->graph), "<onnx>"};
}

// json.dumps's fallback for what it cannot write: NumPy scalars and arrays (np.int64 in a shape,
// a seed, init values as an array) and anything else with __index__ become Python values.
py::object plain_value(py::handle v) {
  const py::module_ numpy = py::module_::import("numpy");
  if (py::isinstance(v, numpy.attr("ndarray"))) return v.attr("tolist")();
  if (py::isinstance(v, numpy.attr("generic"))) return v.attr("item")();
  if (py::hasattr(v, "__index__")) return py::module_::import("operator").attr("index")(v);
  throw py::type_error("a value of type " + std::string(py::str(py::type::handle_of(v).attr("__name__"))) +
                       " in the graph dict; a graph holds str, int, float, bool, None, lists and dicts (NumPy "
                       "scalars and arrays are converted)");
}

// The dict as JSON can say it: NumPy arrays and scalars as lists and numbers (plain_value), and NaN
// and the infinities as the strings the format reads ("nan", "inf", "-inf"), which json.dumps would
// write as tokens that are not JSON. Past `depth` (a cycle) the rest is left to json.dumps, which
// names the cycle.
py::object jsonable(py::handle v, const py::object& numpy, int depth = 0) {
  if (depth > 1000) return py::reinterpret_borrow<py::object>(v);
  if (py::isinstance<py::float_>(v)) {
    const double x = v.cast<double>();
    if (std::isnan(x)) return py::str("nan");
    if (std::isinf(x)) return py::str(x > 0 ? "inf" : "-inf");
    return py::reinterpret_borrow<py::object>(v);
  }
  if (!numpy.is_none() && (py::isinstance(v, numpy.attr("ndarray")) || py::isinstance(v, numpy.attr("generic"))))
    return jsonable(plain_value(v), numpy, depth + 1);
  if (py::isinstance<py::dict>(v)) {
    py::dict out;
    for (auto item : py::reinterpret_borrow<py::dict>(v)) out[item.first] = jsonable(item.second, numpy, depth + 1);
    return out;
  }
  if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
    py::list out;
    for (auto x : v) out.append(jsonable(x, numpy, depth + 1));
    return out;
  }
  return py::reinterpret_borrow<py::object>(v);
}

PyGraph from_dict(const py::dict& d, const std::string& base_dir) {
  const py::object dumps = py::module_::import("json").attr("dumps");
  py::object numpy = py::none();  // without NumPy there are no NumPy values to convert
  try {
    numpy = py::module_::import("numpy");
  } catch (py::error_already_set&) {
  }
  const py::object plain = jsonable(d, numpy);
  const std::string text = dumps(plain, py::arg("default") = py::cpp_function(&plain_value)).cast<std::string>();
  const std::string dir = base_dir.empty() ? std::filesystem::current_path().string() : base_dir;
  auto g = load_graph_text(text, "<dict>", dir);
  if (!g) throw_graph_error(g.error().message, "<dict>");
  return {std::move(*g), "<dict>"};
}

py::dict tensor_info(const Tensor& t) {
  py::dict d;
  d["shape"] = py::tuple(py::cast(t.shape));
  d["dtype"] = std::string(dtype_name(t.dtype));
  d["layout"] = std::string(layout_name(t.layout));
  d["constant"] = t.constant;
  return d;
}

constexpr const char* kArray = "gexec.Array";
constexpr const char* kExecutor = "gexec.Executor";
const PyGraph& graph_of(py::handle self) { return cpp_object<PyGraph>(self, "gexec.Graph"); }
const Array& array_of(py::handle self) { return cpp_object<Array>(self, kArray); }

}  // namespace

PYBIND11_MODULE(gexec, m) {
  m.doc() = R"doc(gexec: JSON graphs of GEMMs and elementwise ops run through the pass pipeline, kernel selection
and buffer plan of the gexec library, on the caller's NumPy, CuPy or PyTorch arrays without copies.

    g = gexec.Graph.load("graphs/gemm_bias_relu.json")
    ex = gexec.Executor(g)                       # passes, selection, plan: once
    out = ex.run({"A": a, "B": b, "Bias": bias}, outputs={"C": c})
    ex.check()                                   # the last run against the CPU reference
    ex.time(iters=100)                           # the figures of `gexec run --iters`
)doc";
  m.attr("__version__") = GEXEC_VERSION;

  graph_error = PyErr_NewExceptionWithDoc(
      "gexec.GraphError",
      "A graph that does not load or cannot run as written. The message holds one line per problem, "
      "\"SOURCE: /json/pointer: what is wrong\", as `gexec validate` prints them; .problems holds them as "
      "(source, pointer, message) tuples (source and pointer None where a line has none, as for a JSON syntax "
      "error at LINE:COL), and .pointer the first one's pointer.",
      PyExc_ValueError, nullptr);
  runtime_error_type = PyErr_NewExceptionWithDoc(
      "gexec.RuntimeError", "A failure while setting up or running on the device, with the command line's message.",
      PyExc_RuntimeError, nullptr);
  // Set on every GraphError raised; the class's own values for one raised by hand.
  PyObject_SetAttrString(graph_error, "problems", py::list().ptr());
  PyObject_SetAttrString(graph_error, "pointer", Py_None);
  m.attr("GraphError") = py::handle(graph_error);
  m.attr("RuntimeError") = py::handle(runtime_error_type);

  py::class_<PyGraph>(m, "Graph", "A loaded and checked graph (docs/graph-format.md).")
      .def_static("load", &load_file, py::arg("path"), py::arg("dims") = std::map<std::string, int64_t>{},
                  "Loads and checks a graph file or an ONNX model (told apart by content; docs/onnx.md). `dims` "
                  "sizes an ONNX model's named dimensions. Raises GraphError with the lines of `gexec validate`.")
      .def_static("from_onnx", &from_onnx, py::arg("data"), py::arg("base_dir") = "",
                  py::arg("dims") = std::map<std::string, int64_t>{},
                  "An ONNX model from its serialized bytes (ModelProto.SerializeToString()); `base_dir` (default: "
                  "the current folder) resolves external data. Problems are reported against \"<onnx>\".")
      .def_static("from_dict", &from_dict, py::arg("graph"), py::arg("base_dir") = "",
                  "The same from a dict with the file's structure; `base_dir` (default: the current folder) "
                  "resolves init.file paths. Problems are reported against \"<dict>\".")
      .def_property_readonly("name", [](py::handle self) { return graph_of(self).graph.name; })
      .def_property_readonly(
          "source", [](py::handle self) { return graph_of(self).source; }, "The file, or \"<dict>\".")
      .def_property_readonly(
          "seed", [](py::handle self) { return graph_of(self).graph.seed; }, "The graph's seed, or None (0 is used).")
      .def_property_readonly(
          "inputs",
          [](py::handle self) {
            const PyGraph& g = graph_of(self);
            std::vector<std::string> n;
            const GraphIndex idx(g.graph);
            for (size_t t = 0; t < g.graph.tensors.size(); ++t)
              if (idx.is_input(TensorId(t))) n.push_back(g.graph.tensors[t].name);
            return n;
          },
          "Names of the graph inputs (tensors no op writes), constants included.")
      .def_property_readonly(
          "outputs",
          [](py::handle self) {
            const PyGraph& g = graph_of(self);
            std::vector<std::string> n;
            for (TensorId t : g.graph.outputs) n.push_back(g.graph.tensor(t).name);
            return n;
          },
          "Names of the graph outputs.")
      .def_property_readonly(
          "tensors",
          [](py::handle self) {
            const PyGraph& g = graph_of(self);
            py::dict d;
            for (const Tensor& t : g.graph.tensors) d[py::str(t.name)] = tensor_info(t);
            return d;
          },
          "{name: {shape, dtype, layout, constant}} for every tensor.")
      .def("__repr__", [](py::handle self) {
        const PyGraph& g = graph_of(self);
        return "gexec.Graph(" + g.graph.name + ", " + std::to_string(g.graph.tensors.size()) + " tensors, " +
               std::to_string(g.graph.ops.size()) + " ops)";
      });

  py::class_<Array>(m, "Array",
                    "A buffer gexec allocated for an output the caller did not give. Exports __dlpack__ (so "
                    "cupy.from_dlpack, torch.from_dlpack and numpy.from_dlpack take it without a copy) and, on "
                    "CUDA, __cuda_array_interface__ (cupy.asarray, numba).")
      .def(
          "__dlpack__",
          [](py::handle self, py::object stream, py::object max_version, py::object dl_device, py::object copy) {
            const Array& a = array_of(self);
            // max_version: the unversioned capsule is what every consumer still takes (the protocol
            // lets a producer answer so); a copy is never made.
            (void)max_version, (void)dl_device;
            if (!copy.is_none() && copy.cast<bool>())
              throw py::buffer_error("gexec.Array exports its buffer without copies (copy=True asked)");
            return a.dlpack(std::move(stream));
          },
          py::kw_only(), py::arg("stream") = py::none(), py::arg("max_version") = py::none(),
          py::arg("dl_device") = py::none(), py::arg("copy") = py::none(),
          "A DLPack capsule of the buffer (no copy). The run that wrote it is ordered before the legacy default "
          "stream's later work.")
      .def("__dlpack_device__", method(&Array::dlpack_device, kArray))
      .def_property_readonly("__cuda_array_interface__", method(&Array::cuda_array_interface, kArray))
      .def_property_readonly("shape", [](py::handle self) { return py::tuple(py::cast(array_of(self).shape())); })
      .def_property_readonly("dtype",
                             [](py::handle self) { return std::string(dtype_name(array_of(self).dtype())); })
      .def_property_readonly("nbytes", method(&Array::nbytes, kArray))
      .def_property_readonly(
          "ptr", [](py::handle self) { return reinterpret_cast<uintptr_t>(array_of(self).data()); },
          "The buffer's address.")
      .def("to_numpy", method(&Array::to_numpy, kArray), "A host copy as a NumPy array (bf16 widened to float32).")
      .def("__repr__", method(&Array::repr, kArray));

  py::class_<Runner>(m, "Executor",
                     R"doc(A graph prepared to run: its passes, kernel selection, buffer plan and kernels, done once.

Executor(graph, backend="auto", device=0, passes="default", seed=None, *, atol=None, rtol=None,
         verify="auto", samples=4096, cuda_graph=True)

backend: "auto" (CUDA where a device is present, else the CPU, with a RuntimeWarning), "cuda" or "cpu".
passes: "default", "none" or a comma-separated list, as `gexec run --passes`.
pad: "auto", "never" or "always", as `gexec run --pad`: whether GEMM operands with misaligned rows
are copied into 16-byte-aligned buffers (auto: where a cost estimate says it pays). ValueError otherwise.
residual_costs: a file of measured residual costs, as `gexec run --residual-costs` (M N K DTYPE
FUSED_US UNFUSED_US lines, from scripts/bench_blocks.py): fuse_residual keeps the product and a
separate ADD where fusing measured slower; "" (the default): none. A file that cannot be read or
parsed raises GraphError naming it and the line.
seed: draws the inputs that run() is not given (default: the graph's seed, else 0).
atol, rtol, verify, samples: how check() compares, as the command line's options and under their rules
(atol, rtol: finite, 0 to 1e300; samples: at least 1; verify: auto, full, sample or none, since exact
mode draws inputs of its own). ValueError otherwise.
cuda_graph: on CUDA, once three runs in a row used the same buffers, the run is captured as a CUDA
graph and replayed (one launch) until a buffer changes; False launches the kernels every time.)doc")
      .def(py::init([](py::handle graph, const std::string& backend, int device, const std::string& passes,
                       std::optional<uint64_t> seed, std::optional<double> atol, std::optional<double> rtol,
                       const std::string& verify, int64_t samples, bool cuda_graph, const std::string& pad,
                       const std::string& residual_costs) {
             const ExecutorOptions o{.backend = backend, .device = device, .passes = passes, .pad = pad,
                                     .residual_costs = residual_costs, .seed = seed, .atol = atol, .rtol = rtol,
                                     .verify = verify, .samples = samples, .cuda_graph = cuda_graph};
             return std::make_unique<Runner>(cpp_object<PyGraph>(graph, "gexec.Graph"), o);
           }),
           py::arg("graph"), py::arg("backend") = "auto", py::arg("device") = 0, py::arg("passes") = "default",
           py::arg("seed") = py::none(), py::kw_only(), py::arg("atol") = py::none(), py::arg("rtol") = py::none(),
           py::arg("verify") = "auto", py::arg("samples") = 4096, py::arg("cuda_graph") = true,
           py::arg("pad") = "auto", py::arg("residual_costs") = "")
      .def("run", method(&Runner::run, kExecutor), py::arg("inputs") = py::dict(), py::arg("outputs") = py::none(),
           R"doc(Runs the graph once; returns {output name: array} for every output.

inputs, outputs: {tensor name: array}, any object with __dlpack__ (NumPy on the CPU backend; CuPy or
PyTorch on CUDA). An array on the executor's device, in the tensor's dtype (f16: float16, bf16:
bfloat16, f32: float32), shape and layout (strides) is bound without a copy; f8e4m3/f8e5m2 tensors
cannot be given (DLPack v0.8 has no float8 codes: TypeError) and come back as gexec.Arrays that
refuse to_numpy and __dlpack__ the same way; anything else raises
TypeError (dtype, not an array) or ValueError (device, shape, strides, alignment), and an unknown name
KeyError, each naming the tensor and what was expected. Inputs left out keep the values drawn from the
graph's init and the seed; outputs left out are allocated (NumPy on the CPU, gexec.Array on CUDA) and
returned (bf16 and f8 outputs as gexec.Array). The same array object passed again is not imported again (do not resize_/set_ a bound
PyTorch tensor).

On CUDA the run is enqueued after the work already on the legacy default stream (CuPy's and
PyTorch's default) and that stream's later work waits for it; run() returns without waiting for the
device (call synchronize(), or the caller's own). The GIL is released while the device work is enqueued
or waited for. Nothing is planned again: a new array only moves the kernels' pointers. An output whose
memory overlaps an input's or another output's is refused (ValueError): the kernels and check() read
the inputs after outputs are written. Runs, checks and timings of one executor take turns (a call from
another thread waits); one called from within another on the same thread (an input's __dlpack__ that
runs the executor) raises ValueError.)doc")
      .def("check", method(&Runner::check, kExecutor),
           "Compares the outputs of the last run with the CPU reference of the graph as loaded, on the inputs of "
           "that run (read from the arrays as they are now). Returns one dict per output: name, dtype, mode, "
           "count, checked, max_abs, max_rel, rel_fro, rel_fro_bound, norm_ratio, max_ratio, beyond, worst, worst_got, "
           "worst_ref, worst_bound, atol, rtol, passed (as `gexec run` reports them).")
      .def("time", method(&Runner::time, kExecutor), py::arg("iters") = 100, py::kw_only(),
           py::arg("warmup_iters") = 10, py::arg("warmup_ms") = 0.0, py::arg("cuda_graph") = true,
           py::arg("profile") = false, py::arg("peak_tflops") = py::none(),
           "Times runs on the arrays of the last run (or the executor's own buffers) as `gexec run --iters` does; "
           "returns the dict of its timing-json line (median_us, min_us, ..., tflops, gbps, peak_pct). Signals are "
           "handled between samples: Ctrl-C raises KeyboardInterrupt.")
      .def("synchronize", method(&Runner::synchronize, kExecutor),
           "Waits for the device; raises gexec.RuntimeError on a failure.")
      .def_property_readonly("selection", method(&Runner::selection, kExecutor),
                             "[(op name, kernel name), ...] after the passes.")
      .def_property_readonly("backend", method(&Runner::backend, kExecutor), "\"cuda\" or \"cpu\".")
      .def_property_readonly("device_name", method(&Runner::device_name, kExecutor))
      .def_property_readonly("seed", method(&Runner::seed, kExecutor), "The seed the inputs left out are drawn from.")
      .def_property_readonly("inputs", method(&Runner::input_names, kExecutor), "Names run() accepts in inputs (an input no op reads after the passes, or one read once before "
                              "the runs, is not among them).")
      .def_property_readonly("outputs", method(&Runner::output_names, kExecutor),
                             "Names run() returns (and accepts in outputs).")
      .def_property_readonly("notes", method(&Runner::notes, kExecutor),
                             "\"op NAME: NOTE\" for each kernel with something to say.")
      .def("gemm_commands", method(&Runner::gemm_commands, kExecutor),
           "The `gexec gemm` command line of each product (MATMUL, GEMM_BIAS_ACT) after the passes, in op order, "
           "as `gexec run --emit-gemms` writes them: each runs that product alone (`gexec gemm --from FILE` runs a "
           "file of them), naming the cuBLASLt candidate it runs (--algo) where there are several.")
      .def_property_readonly("replaying", method(&Runner::replaying, kExecutor),
                             "Whether the last run was the replay of a captured CUDA graph.")
      .def_property_readonly("rebinds", method(&Runner::rebinds, kExecutor),
                             "How many times a run moved a tensor to another buffer (the same arrays again: none).");
}
