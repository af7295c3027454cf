// One prepared run: the graph after the passes, the device, the kernel selection, the buffer
// plan and the executor, built from one options struct; then tuning, runs, the reference check
// and the timing on it. `gexec run` (run_graph), the Python module's Executor, the launch
// benchmark and the backend-ops harness all build their runs here, so that a switch added to
// the options (--pad, --residual-costs) reaches each of them, as IREE's run-module and its
// Python bindings share one session.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "gexec/app/modes.hpp"
#include "gexec/app/run_report.hpp"
#include "gexec/exec/buffer_plan.hpp"
#include "gexec/exec/device.hpp"
#include "gexec/exec/executor.hpp"
#include "gexec/exec/trace.hpp"
#include "gexec/ir/graph.hpp"
#include "gexec/kernels/select.hpp"
#include "gexec/passes/pipeline.hpp"
#include "gexec/status.hpp"
#include "gexec/tune/autotune.hpp"

namespace gexec {

// Tensor bytes by name (graph inputs from files, inputs and outputs read back for the check).
using HostTensors = std::map<std::string, std::vector<uint8_t>>;

// --verify-budget's default: the seconds of CPU reference --verify auto allows before it samples.
constexpr double kDefaultVerifyBudget = 5.0;

struct PrepareOptions {
  // Where it runs.
  BackendChoice backend = BackendChoice::automatic;
  int device = 0;                    // the CUDA device
  bool dry_run = false;              // choose no device: its capabilities only
  std::optional<std::string> arch;   // a dry-run's device, e.g. sm_90; default: detected, else sm_90
  // The passes (PipelineOptions).
  std::string passes = "default";    // "default", "none" or a comma-separated list
  bool print_after_all = false;
  std::string print_after;
  std::string residual_costs;        // fuse_residual's measured costs (a file), or empty
  // Selection and preparation.
  KernelOptions kernel;              // --pad
  // The inputs no caller gives are drawn from this seed.
  uint64_t seed = 0;
  // The check.
  VerifyMode verify = VerifyMode::automatic;
  double verify_budget = kDefaultVerifyBudget;  // seconds of CPU reference auto allows before it samples
  int64_t samples = 4096;            // a sampled check compares at least this many per output
  std::optional<double> atol, rtol;  // override the per-dtype defaults
};

struct CheckPlan;  // src/app/check.hpp

class PreparedRun {
 public:
  // The steps, in their order; each reads what the ones before it made. prepare() takes them all.
  PreparedRun(Graph original, PrepareOptions opts);
  ~PreparedRun();
  PreparedRun(const PreparedRun&) = delete;
  PreparedRun& operator=(const PreparedRun&) = delete;

  // The passes on a copy of the graph; what --print-after(-all) printed goes to `prints`.
  Status run_passes(std::ostream& prints);
  // The device (opened unless a dry run), or `on`, a device the caller owns and keeps alive.
  Status choose_target(Device* on = nullptr);
  // The kernels (with options().kernel) and the buffers.
  Status select();
  // The executor, with the graph inputs in `host_inputs` (by name) in place of drawn ones.
  Status create_executor(const HostTensors* host_inputs = nullptr);

  // All four steps: the prepared run, or the first step's error.
  static Result<std::unique_ptr<PreparedRun>> prepare(Graph original, const PrepareOptions& opts,
                                                      Device* on = nullptr, const HostTensors* host_inputs = nullptr);

  // Tuned before the checked run, so that the run checked (and timed) is the tuned one: the
  // precision the candidates are checked under is set here (TF32 on CUDA, what the kernels declare).
  Result<std::vector<TunedKernel>> tune(AutotuneOptions tune, std::ostream& log);

  // One run, each kernel's launch checked.
  Status run() {
    const TraceRange range("gexec run");
    return executor().run_checked();
  }

  // The stored bytes of every input of the graph as loaded (check.hpp's reference_inputs), and
  // its outputs read back by name.
  Result<HostTensors> reference_inputs(const HostTensors& loaded, bool with_unread = false) const;
  Result<HostTensors> read_outputs() const;

  // How the outputs will be checked (plan_check), known before the executor exists: full,
  // sample, exact or none. Planned once; check() plans it where nobody asked before.
  VerifyMode check_mode();

  // The outputs against the reference of the graph as loaded, as `gexec run` checks them: on the
  // device's float64 engine where the plan and the device's memory allow, else on the CPU. `into`
  // receives the check's summary before the comparison (when `before_compare` is called) and its
  // outputs after; `warn` what the user should know (a check moved to the CPU, say). `inputs`
  // are reference_inputs(), read since the last run: the device's engine reads the inputs the run
  // left on the device where they are, instead of uploading those same bytes again.
  Status check(const HostTensors& inputs, const HostTensors& outputs, std::optional<CheckSummary>& into,
               const std::function<void(std::string)>& warn, const std::function<void()>& before_compare = {});

  // Times runs as `gexec run --iters` does, with `peak_tflops` or else the device's measured peak
  // (where it cannot be measured, *peak_unknown says why and there is no share of peak).
  Status time(const TimingOptions& opts, std::optional<double> peak_tflops, RunTiming& into,
              std::string* peak_unknown = nullptr);

  const PrepareOptions& options() const { return opts_; }
  const Graph& original() const { return original_; }
  const Graph& graph() const { return graph_; }  // after the passes
  const std::vector<PassRecord>& pass_records() const { return records_; }
  Backend backend() const { return backend_; }
  const DeviceCaps& caps() const { return caps_; }
  const std::string& target_notice() const { return notice_; }  // e.g. why auto chose the CPU
  // Null in a dry run. Shared so that arrays the device allocated may outlive the run.
  const std::shared_ptr<Device>& device() const { return device_; }
  const Selection& selection() const { return *selection_; }
  const BufferPlan& plan() const { return plan_; }
  Executor& executor() const { return *ex_; }

 private:
  Graph original_;
  PrepareOptions opts_;
  Graph graph_;
  std::vector<PassRecord> records_;
  Backend backend_ = Backend::cuda;
  DeviceCaps caps_;
  std::string notice_;
  std::shared_ptr<Device> device_;
  std::optional<Selection> selection_;
  BufferPlan plan_;
  std::unique_ptr<Executor> ex_;
  std::unique_ptr<CheckPlan> check_plan_;
};

}  // namespace gexec
