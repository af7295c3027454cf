// gexec.Executor: a prepared run (gexec/app/prepared_run.hpp, as `gexec run` prepares one), once;
// then runs on the caller's arrays, each bound in place of its arena slot (Executor::bind), with the GIL released
// while the device works.
#include "runner.hpp"

#include "gexec/app/gemm_replay.hpp"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <sstream>

#include "gexec/app/check_options.hpp"
#include "gexec/app/run_report.hpp"
#include "gexec/app/timing_json.hpp"
#include "gexec/io/text.hpp"
#include "gexec/passes/pipeline.hpp"

namespace gexec::py_binding {
namespace {

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const std::string& n : names) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? "none" : s;
}

py::object json_to_python(const nlohmann::json& j) {
  return py::module_::import("json").attr("loads")(j.dump());
}

}  // namespace

Runner::Runner(const PyGraph& g, const ExecutorOptions& o) {
  // The command line's rules (check_options.hpp), without exact mode: its inputs are drawn by
  // gexec, here they are the caller's.
  if (Status st = check_option_values(o.verify, python_verify_modes(), o.atol, o.rtol, o.samples); !st)
    throw py::value_error(st.error().message);
  PrepareOptions p;
  auto verify = parse_verify_mode(o.verify);
  auto backend = parse_backend_choice(o.backend);
  auto pad = parse_pad_policy(o.pad);
  if (!verify) throw py::value_error(verify.error().message);
  if (!backend) throw py::value_error(backend.error().message);
  if (!pad) throw py::value_error(pad.error().message);
  if (auto names = parse_pass_list(o.passes); !names) throw py::value_error("passes: " + names.error().message);
  p.backend = *backend;
  p.device = o.device;
  p.passes = o.passes;
  p.residual_costs = o.residual_costs;
  p.kernel.pad = *pad;
  pad_ = o.pad;
  p.seed = o.seed.value_or(g.graph.seed.value_or(0));
  p.verify = *verify;
  p.samples = o.samples;
  p.atol = o.atol;
  p.rtol = o.rtol;
  use_replay_ = o.cuda_graph;
  run_ = std::make_unique<PreparedRun>(g.graph, p);

  std::ostringstream prints;
  if (Status st = run_->run_passes(prints); !st) throw_error(st.error());
  if (Status st = run_->choose_target(); !st) {
    if (st.error().code == Exit::bad_input) throw py::value_error(st.error().message);
    throw_runtime_error(st.error().message);
  }
  if (!run_->target_notice().empty()) PyErr_WarnEx(PyExc_RuntimeWarning, run_->target_notice().c_str(), 1);
  backend_ = run_->backend();
  if (Status st = run_->select(); !st) throw_error(st.error());
  const Graph& graph = run_->graph();
  for (size_t i = 0; i < graph.ops.size(); ++i) {
    const KernelDef* k = run_->selection().ops[i].kernel;
    selection_.emplace_back(graph.ops[i].name, k ? k->name : "");
  }
  device_ = run_->device();
  Status created;
  {
    py::gil_scoped_release nogil;
    created = run_->create_executor();
  }
  if (!created) throw_error(created.error());
  ex_ = &run_->executor();
  place_ = {backend_, o.device, device_->stream_handle()};

  const Graph& original = run_->original();
  const GraphIndex idx(original);
  auto slot = [&](TensorId t, bool output) {
    Slot s;
    s.tensor = &original.tensor(t);
    s.name = s.tensor->name;
    s.output = output;
    s.key = py::str(s.name);
    s.id = ex_->graph().find_tensor(s.name);
    if (s.id != kNone) s.why_not = ex_->why_not_bindable(s.id);
    return s;
  };
  for (size_t t = 0; t < original.tensors.size(); ++t)
    if (idx.is_input(TensorId(t))) inputs_.push_back(slot(TensorId(t), false));
  for (TensorId t : original.outputs) outputs_.push_back(slot(t, true));
}

Runner::~Runner() {
  // The caller's arrays are released with the slots: no run may still be reading them.
  if (device_) (void)device_->synchronize();
}

// Waits (without the GIL, so that the thread holding the lock can finish) only when contended,
// and never for the calling thread itself.
Runner::Held Runner::hold() {
  std::unique_lock<std::mutex> lock(mutex_, std::try_to_lock);
  if (!lock.owns_lock()) {
    if (holder_.load() == std::this_thread::get_id())
      throw py::value_error("a run, check or timing of this executor was called from within one of its own (an input's "
                            "__dlpack__ or an output's buffer calling back into it); it would wait for itself");
    py::gil_scoped_release nogil;
    lock.lock();
  }
  return Held(*this, std::move(lock));
}

Runner::Held::Held(Runner& r, std::unique_lock<std::mutex> lock) : r_(r), lock_(std::move(lock)) {
  r_.holder_.store(std::this_thread::get_id());
}

Runner::Held::~Held() { r_.holder_.store(std::thread::id()); }  // before lock_ unlocks

Runner::Slot* Runner::find(std::vector<Slot>& slots, const std::string& name) {
  for (Slot& s : slots)
    if (s.name == name) return &s;
  return nullptr;
}

void Runner::bind_address(Slot& s, void* address) {
  if (s.id == kNone || ex_->address(s.id) == address) return;
  ++rebinds_;
  if (Status st = ex_->bind(s.id, address); !st) throw_runtime_error(st.error().message);
}

void Runner::bind_given(Slot& s, const py::handle& obj) {
  const char* role = s.output ? "output" : "input";
  // The same array object as in the last run: imported and checked then, and an array's memory
  // does not move (see the module's notes on PyTorch's resize_/set_).
  if (s.bound && s.bound->object.is(obj)) {
    if (s.output) s.result = s.bound->object;
    return;
  }
  if (!s.why_not.empty())
    throw py::value_error(std::string(role) + " " + s.name + ": cannot be given: " + s.why_not);
  Imported in = import_array(obj, *s.tensor, role, place_);
  bind_address(s, in.data);
  s.bound = std::move(in);  // the array of the run before is released only now
  if (s.output) s.result = s.bound->object;
}

void Runner::bind_fresh_output(Slot& s) {
  if (s.id == kNone) throw_runtime_error("output " + s.name + " is missing after the passes");
  const Tensor& t = *s.tensor;
  Imported in;
  // bf16 and f8 have no NumPy dtype: those outputs are gexec.Arrays.
  if (backend_ == Backend::cpu && t.dtype != DType::bf16 && !is_f8(t.dtype)) {
    std::vector<py::ssize_t> shape(t.shape.begin(), t.shape.end()), strides;
    for (int64_t st : layout_strides(t)) strides.push_back(py::ssize_t(st * dtype_size(t.dtype)));
    py::array a(py::dtype(t.dtype == DType::f16 ? "float16" : "float32"), shape, strides);
    in.data = a.mutable_data();
    in.object = std::move(a);
  } else {
    auto buffer = device_->allocate_buffer(t.bytes());
    if (!buffer) throw_runtime_error(buffer.error().with("output " + s.name).message);
    in.data = buffer->get();
    in.object = py::cast(Array(*buffer, t, place_, device_));
  }
  // An output the executor keeps in its own memory (a constant's CAST computed once before the
  // runs): a fresh array all the same, filled from that memory after the run.
  s.copied = !s.why_not.empty();
  if (!s.copied) bind_address(s, in.data);
  s.bound = std::move(in);
  s.result = s.bound->object;
}

Status Runner::copy_out(const Slot& s) {
  const size_t bytes = size_t(s.tensor->bytes());
  if (backend_ == Backend::cpu && s.bound->object && py::isinstance<py::array>(s.bound->object))
    return device_->download(s.bound->data, ex_->address(s.id), bytes);
  std::vector<uint8_t> host(bytes);
  GEXEC_TRY(device_->download(host.data(), ex_->address(s.id), bytes));
  return device_->upload(s.bound->data, host.data(), bytes);
}

void Runner::unbind(Slot& s) {
  if (s.why_not.empty()) bind_address(s, nullptr);
  s.bound.reset();
}

void Runner::unknown_names(const py::dict& inputs, const py::dict& outputs) {
  auto names = [](const std::vector<Slot>& slots) {
    std::vector<std::string> n;
    for (const Slot& s : slots) n.push_back(s.name);
    return n;
  };
  for (const auto* which : {&inputs, &outputs}) {
    const bool out = which == &outputs;
    for (auto item : *which) {
      if (!py::isinstance<py::str>(item.first)) throw py::type_error("tensor names must be str");
      const std::string name = item.first.cast<std::string>();
      if (find(out ? outputs_ : inputs_, name)) continue;
      std::string msg = name + ": not an " + (out ? "output" : "input") + " of graph " + run_->original().name + " (its " +
                        (out ? "outputs: " + joined(names(outputs_)) : "inputs: " + joined(names(inputs_))) + ")";
      if (find(out ? inputs_ : outputs_, name))
        msg += std::string("; it is an ") + (out ? "input: pass it in inputs" : "output: pass it in outputs=");
      throw py::key_error(msg);
    }
  }
  throw py::key_error("a tensor name matched none of the graph's");  // not reached: a count differed
}

py::dict Runner::run(const py::dict& inputs, const py::object& outputs) {
  const Held held = hold();
  if (!outputs.is_none() && !py::isinstance<py::dict>(outputs))
    throw py::type_error("outputs: expected a dict {name: array} or None");
  const py::dict given_out = outputs.is_none() ? py::dict() : outputs.cast<py::dict>();
  // Every name checked before anything is bound: the slots' own name objects looked up (borrowed
  // references, no strings made per run); only when some given name matched none is each looked at.
  std::vector<PyObject*> in_obj(inputs_.size()), out_obj(outputs_.size());
  Py_ssize_t found_in = 0, found_out = 0;
  for (size_t i = 0; i < inputs_.size(); ++i)
    found_in += (in_obj[i] = PyDict_GetItem(inputs.ptr(), inputs_[i].key.ptr())) != nullptr;
  for (size_t i = 0; i < outputs_.size(); ++i)
    found_out += (out_obj[i] = PyDict_GetItem(given_out.ptr(), outputs_[i].key.ptr())) != nullptr;
  if (found_in != PyDict_Size(inputs.ptr()) || found_out != PyDict_Size(given_out.ptr()))
    unknown_names(inputs, given_out);
  // From here a refused argument leaves some inputs bound anew: check() has no run to check until
  // one succeeds (it would compare the last run's outputs with other inputs).
  ran_ = false;
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (in_obj[i]) bind_given(inputs_[i], in_obj[i]);
    else unbind(inputs_[i]);
  }
  for (size_t i = 0; i < outputs_.size(); ++i) {
    if (out_obj[i]) bind_given(outputs_[i], out_obj[i]);
    else bind_fresh_output(outputs_[i]);
  }
  if (ex_->bindings_version() != unaliased_version_) {
    refuse_aliasing();
    unaliased_version_ = ex_->bindings_version();
  }
  Status st;
  {
    py::gil_scoped_release nogil;
    st = device_->wait_for_default_stream();
    if (st) st = enqueue_run();
    if (st) st = device_->default_stream_waits();
    for (const Slot& s : outputs_)
      if (st && s.copied) st = copy_out(s);
  }
  if (!st) throw_runtime_error(st.error().message);
  ran_ = true;
  py::dict result;
  for (const Slot& s : outputs_) result[s.key] = s.result;
  return result;
}

void Runner::refuse_aliasing() {
  struct Span {
    const Slot* slot;
    uintptr_t begin, end;
  };
  std::vector<Span> spans;
  for (const std::vector<Slot>* slots : {&inputs_, &outputs_})
    for (const Slot& s : *slots)
      if (s.bound && s.bound->data) {
        const auto begin = reinterpret_cast<uintptr_t>(s.bound->data);
        spans.push_back({&s, begin, begin + uintptr_t(s.tensor->bytes())});
      }
  for (size_t i = 0; i < spans.size(); ++i)
    for (size_t j = i + 1; j < spans.size(); ++j) {
      const Span &a = spans[i], &b = spans[j];
      if ((!a.slot->output && !b.slot->output) || a.begin >= b.end || b.begin >= a.end) continue;
      ran_ = false;  // the bindings are not those of the last run any more
      const Span& out = a.slot->output ? a : b;
      const Span& other = &out == &a ? b : a;
      throw py::value_error("output " + out.slot->name + " shares memory with " +
                            (other.slot->output ? "output " : "input ") + other.slot->name +
                            ": an output may not overlap an input or another output (a later op, and check(), "
                            "would read what the run wrote over it); give it an array of its own");
    }
}

Status Runner::enqueue_run() {
  const uint64_t v = ex_->bindings_version();
  if (v != version_) {
    replay_.reset();  // it points at the old buffers
    version_ = v;
    same_runs_ = 0;
    capture_refused_ = false;
  }
  ++same_runs_;
  replayed_ = false;
  if (use_replay_ && !replay_ && !capture_refused_ && same_runs_ >= kRunsBeforeCapture) {
    std::string why;
    auto r = device_->capture([this] { return ex_->enqueue(); }, &why);
    if (!r) return r.error();
    replay_ = std::move(*r);
    capture_refused_ = !replay_;  // direct launches for these buffers (`why` says why; not an error)
  }
  if (replay_) {
    replayed_ = true;
    return replay_->launch();
  }
  return ex_->enqueue();
}

py::list Runner::check() {
  const Held held = hold();
  if (!ran_)
    throw_runtime_error("check(): there is no run to check (none yet, or the last call to run() was refused); call "
                        "run() first");
  std::optional<CheckSummary> summary;
  Status st;
  {
    py::gil_scoped_release nogil;
    // As `gexec run` checks; what it would warn of is not raised here.
    st = [&]() -> Status {
      GEXEC_TRY(device_->wait_for_default_stream());
      GEXEC_TRY(ex_->after_runs());  // a run that failed on its data is not checked
      auto inputs = run_->reference_inputs({});
      if (!inputs) return inputs.error();
      auto outputs = run_->read_outputs();
      if (!outputs) return outputs.error();
      return run_->check(*inputs, *outputs, summary, [](std::string) {});
    }();
  }
  if (!st) throw_runtime_error(st.error().message);
  std::vector<OutputCheck> checks;
  if (summary)
    for (CheckedOutput& c : summary->outputs) checks.push_back(std::move(c.check));
  py::list out;
  for (const OutputCheck& c : checks) {
    py::dict d;
    d["name"] = c.name;
    d["dtype"] = std::string(dtype_name(c.dtype));
    d["mode"] = std::string(compare_mode_name(c.mode));
    d["count"] = c.count;
    d["checked"] = c.checked;
    d["max_abs"] = c.max_abs;
    d["max_rel"] = c.max_rel;
    d["rel_fro"] = c.rel_fro;
    d["rel_fro_bound"] = c.rel_fro_bound;
    d["norm_ratio"] = c.norm_ratio;
    d["max_ratio"] = c.max_ratio;
    d["beyond"] = c.beyond;
    d["unbounded"] = c.unbounded;
    d["worst"] = c.worst;
    d["worst_got"] = c.worst_got;
    d["worst_ref"] = c.worst_ref;
    d["worst_bound"] = c.worst_bound;
    d["atol"] = c.tol.atol;
    d["rtol"] = c.tol.rtol;
    d["checked_by"] = c.checked_by;
    d["passed"] = c.pass;
    out.append(d);
  }
  return out;
}

py::dict Runner::time(int iters, int warmup_iters, double warmup_ms, bool cuda_graph, bool profile,
                      std::optional<double> peak_tflops) {
  if (iters <= 0) throw py::value_error("iters: " + std::to_string(iters) + "; expected at least 1");
  if (warmup_iters < 0) throw py::value_error("warmup_iters must not be negative");
  // The command line's ranges (--warmup-ms, --peak-tflops): NaN is refused like any other value outside them.
  if (!(warmup_ms >= 0 && warmup_ms <= 3600000))
    throw py::value_error("warmup_ms: " + number_text(warmup_ms) + "; expected a number from 0 to 3600000");
  if (peak_tflops && !(*peak_tflops > 0 && *peak_tflops <= 1e9))
    throw py::value_error("peak_tflops: " + number_text(*peak_tflops) + "; expected a number above 0 up to 1000000000");
  const Held held = hold();
  TimingOptions opts{.iters = iters, .warmup_iters = warmup_iters, .warmup_ms = warmup_ms, .cuda_graph = cuda_graph,
                     .profile = profile};
  // Ctrl-C (any signal whose handler raises) stops the timing between samples; its exception is
  // raised once the device work is drained.
  std::optional<py::error_already_set> raised;
  opts.poll = [&raised]() -> Status {
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() == 0) return {};
    raised.emplace();  // takes the exception the handler raised
    return runtime_error("interrupted");
  };
  RunTiming timing;
  Status st;
  {
    py::gil_scoped_release nogil;
    // As the command line: the peak measured once (and cached) where not given.
    st = device_->wait_for_default_stream();
    if (st) st = run_->time(opts, peak_tflops, timing);
    if (Status w = device_->default_stream_waits(); st && !w) st = w;
  }
  if (raised) throw std::move(*raised);
  if (!st) throw_runtime_error(st.error().message);
  return json_to_python(timing_json(timing)).cast<py::dict>();
}

void Runner::synchronize() {
  Status st;
  {
    py::gil_scoped_release nogil;
    st = device_->synchronize();
    if (st) st = ex_->after_runs();  // bad GROUPED_GEMM offsets, found on the device
  }
  if (!st) throw_runtime_error(st.error().message);
}

py::list Runner::selection() const {
  py::list l;
  for (const auto& [op, kernel] : selection_) l.append(py::make_tuple(op, kernel));
  return l;
}

std::string Runner::backend() const { return std::string(backend_name(backend_)); }
std::string Runner::device_name() const { return device_->caps().name; }

py::list Runner::input_names() const {
  py::list l;
  for (const Slot& s : inputs_)
    if (s.why_not.empty()) l.append(s.name);  // what run() takes: not an input the passes left unread
  return l;
}

py::list Runner::output_names() const {
  py::list l;
  for (const Slot& s : outputs_) l.append(s.name);
  return l;
}

py::list Runner::notes() const { return py::cast(ex_->notes()); }

py::list Runner::gemm_commands() const {
  py::list l;
  for (const ProductCommand& c : product_commands(run_->graph(), ex_, {std::nullopt, pad_, std::nullopt}))
    l.append(c.command);
  return l;
}

}  // namespace gexec::py_binding
