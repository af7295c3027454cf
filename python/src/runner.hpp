// gexec.Executor behind the binding: a prepared run (passes, selection, buffer plan) made once,
// then runs on the caller's arrays (bound through Executor::bind), the reference check of the
// last run, and the CLI's timing.
#pragma once

#include <pybind11/pybind11.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "arrays.hpp"
#include "gexec/app/prepared_run.hpp"
#include "gexec/exec/executor.hpp"
#include "gexec/ir/graph.hpp"

namespace gexec::py_binding {

// gexec.Graph: a loaded, checked graph and where it came from.
struct PyGraph {
  Graph graph;
  std::string source;  // the file, or "<dict>"
};

// The exceptions the module raises for gexec's own errors (set up by the module).
// A GraphError with .problems, a list of (file, pointer, message), and .pointer, the first one's pointer;
// `source` is how the loader named the file ("<dict>", the path), where the message is the loader's.
[[noreturn]] void throw_graph_error(const std::string& message, const std::string& source = "");
[[noreturn]] void throw_runtime_error(const std::string& message);
// bad_input as GraphError, anything else as gexec.RuntimeError.
[[noreturn]] void throw_error(const Error& e);

// The keyword arguments of gexec.Executor, as given; the constructor parses them once into the
// prepared run's options (PrepareOptions).
struct ExecutorOptions {
  std::string backend = "auto";
  int device = 0;
  std::string passes = "default";
  std::string pad = "auto";         // as `gexec run --pad`
  std::string residual_costs;       // as `gexec run --residual-costs`
  std::optional<uint64_t> seed;
  std::optional<double> atol, rtol;
  std::string verify = "auto";
  int64_t samples = 4096;
  bool cuda_graph = true;  // replay a captured run once the bindings stay the same
};

// After this many runs in a row on the same buffers, run() captures the run and replays it: a
// capture costs more than a run, so buffers that change every run are never captured.
constexpr int kRunsBeforeCapture = 3;

class Runner {
 public:
  Runner(const PyGraph& g, const ExecutorOptions& opts);
  ~Runner();

  // {name: array} for every output; see the module's docstring.
  py::dict run(const py::dict& inputs, const py::object& outputs);
  py::list check();
  py::dict time(int iters, int warmup_iters, double warmup_ms, bool cuda_graph, bool profile,
                std::optional<double> peak_tflops);
  void synchronize();

  py::list selection() const;
  std::string backend() const;
  std::string device_name() const;
  uint64_t seed() const { return run_->options().seed; }
  py::list input_names() const;
  py::list output_names() const;
  py::list notes() const;
  py::list gemm_commands() const;
  int64_t rebinds() const { return rebinds_; }
  bool replaying() const { return replayed_; }

 private:
  // One graph input or output the caller may give: its tensor in the executed graph and the
  // array bound to it in the last run (none: its arena slot, or for an output a fresh buffer).
  struct Slot {
    std::string name;
    py::object key;       // the name as a Python str, for the dict lookups of every run
    TensorId id = kNone;  // in the executed graph; kNone where the passes removed it
    const Tensor* tensor = nullptr;  // in the graph as loaded
    bool output = false;
    std::string why_not;  // why it cannot be given (Executor::why_not_bindable), or empty
    std::optional<Imported> bound;
    py::object result;  // an output's array returned by the last run
    bool copied = false;  // an output no caller's buffer can hold (why_not): copied out after the run
  };
  // The runner's lock, held for a run, a check or a timing; released with the object.
  class Held {
   public:
    Held(Runner& r, std::unique_lock<std::mutex> lock);
    ~Held();
    Held(const Held&) = delete;
    Held& operator=(const Held&) = delete;

   private:
    Runner& r_;
    std::unique_lock<std::mutex> lock_;
  };
  Held hold();
  [[noreturn]] void unknown_names(const py::dict& inputs, const py::dict& outputs);  // the KeyError
  Slot* find(std::vector<Slot>& slots, const std::string& name);
  void bind_given(Slot& s, const py::handle& obj);
  void bind_fresh_output(Slot& s);
  Status copy_out(const Slot& s);
  void unbind(Slot& s);
  void bind_address(Slot& s, void* address);
  // ValueError where a given output's memory overlaps an input's or another output's.
  void refuse_aliasing();

  std::mutex mutex_;  // one run (or check or timing) at a time: they share the bindings
  // The thread holding mutex_: a call from it while it holds the lock (an input's __dlpack__ that
  // runs the graph again) is refused, where waiting for the lock would wait for itself.
  std::atomic<std::thread::id> holder_{};
  std::unique_ptr<PreparedRun> run_;
  Backend backend_ = Backend::cpu;
  std::shared_ptr<Device> device_;  // run_'s
  Executor* ex_ = nullptr;          // run_'s
  std::vector<std::pair<std::string, std::string>> selection_;
  std::string pad_;  // --pad as given: the replay lines name it where it is not the default
  Place place_;
  std::vector<Slot> inputs_, outputs_;
  bool ran_ = false;
  int64_t rebinds_ = 0;  // Executor::bind calls that changed an address (for tests)
  uint64_t unaliased_version_ = ~uint64_t(0);  // the bindings version refuse_aliasing last passed
  // The captured run (Device::capture) of the bindings version it was captured on.
  bool use_replay_ = true;
  std::unique_ptr<Replay> replay_;
  uint64_t version_ = ~uint64_t(0);  // of the last run
  int same_runs_ = 0;                // runs in a row on that version
  bool capture_refused_ = false;     // for that version: do not try again
  bool replayed_ = false;            // the last run was a replay
  Status enqueue_run();              // without the GIL: replay, capture or launch
};

}  // namespace gexec::py_binding
