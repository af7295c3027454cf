// The steps every run of a graph shares: passes, target, selection, plan, executor; then
// tuning, the reference check and the timing of the prepared executor.
#include "gexec/app/prepared_run.hpp"

#include <sstream>

#include "gexec/exec/trace.hpp"
#include "gexec/io/file.hpp"
#include "gexec/verify/reference.hpp"

#include "check.hpp"
#include "target.hpp"
#include "timing_report.hpp"

namespace gexec {

PreparedRun::PreparedRun(Graph original, PrepareOptions opts)
    : original_(std::move(original)), opts_(std::move(opts)) {
  enable_tracing();
}

PreparedRun::~PreparedRun() = default;

// Each phase is a trace range (exec/trace.hpp) named "gexec PHASE", for outside profilers.
Status PreparedRun::run_passes(std::ostream& prints) {
  const TraceRange range("gexec passes");
  auto names = parse_pass_list(opts_.passes);
  if (!names) return names.error();
  graph_ = original_;
  // The passes read the table with a plain stream: a folder or a FIFO (which would be waited on)
  // is refused here first, as every input file is.
  if (!opts_.residual_costs.empty())
    if (Status s = check_regular_file(opts_.residual_costs); !s) return s.error().with("--residual-costs");
  auto records =
      run_pipeline(graph_, {*names, opts_.print_after_all, opts_.print_after, opts_.residual_costs}, prints);
  if (!records) return records.error();
  records_ = std::move(*records);
  return {};
}

Status PreparedRun::choose_target(Device* on) {
  if (on) {
    backend_ = on->backend();
    caps_ = on->caps();
    device_ = std::shared_ptr<Device>(on, [](Device*) {});  // the caller's: not deleted here
    return {};
  }
  const TraceRange range("gexec device");
  auto target = gexec::choose_target(opts_);
  if (!target) return target.error();
  backend_ = target->backend;
  caps_ = target->caps;
  notice_ = target->notice;
  device_ = std::shared_ptr<Device>(std::move(target->device));
  return {};
}

Status PreparedRun::select() {
  const TraceRange range("gexec select");
  auto selection = select_kernels(graph_, caps_, backend_, opts_.kernel);
  if (!selection) return selection.error();
  selection_ = std::move(*selection);
  plan_ = plan_buffers(graph_);
  return {};
}

Status PreparedRun::create_executor(const HostTensors* host_inputs) {
  if (!device_) return runtime_error("a dry run has no device to run on");
  const TraceRange range("gexec set-up");
  auto ex = Executor::create(*device_, graph_, *selection_, plan_, opts_.seed, host_inputs);
  if (!ex) return ex.error();
  ex_ = std::move(*ex);
  return {};
}

Result<std::unique_ptr<PreparedRun>> PreparedRun::prepare(Graph original, const PrepareOptions& opts, Device* on,
                                                          const HostTensors* host_inputs) {
  auto run = std::make_unique<PreparedRun>(std::move(original), opts);
  std::ostringstream prints;
  GEXEC_TRY(run->run_passes(prints));
  GEXEC_TRY(run->choose_target(on));
  GEXEC_TRY(run->select());
  GEXEC_TRY(run->create_executor(host_inputs));
  return run;
}

Result<std::vector<TunedKernel>> PreparedRun::tune(AutotuneOptions tune, std::ostream& log) {
  const TraceRange range("gexec tune");
  tune.precision.tf32 = backend_ == Backend::cuda && opts_.kernel.tf32;
  tune.precision.merge(ex_->precision());
  return autotune(*ex_, caps_, tune, log);
}

Result<HostTensors> PreparedRun::reference_inputs(const HostTensors& loaded, bool with_unread) const {
  return gexec::reference_inputs(original_, *ex_, opts_.seed, loaded, with_unread);
}

Result<HostTensors> PreparedRun::read_outputs() const { return gexec::read_outputs(original_, *ex_); }

VerifyMode PreparedRun::check_mode() {
  if (!check_plan_)
    check_plan_ = std::make_unique<CheckPlan>(plan_check(original_, opts_.verify,
                                                         opts_.verify_budget, opts_.samples, {},
                                                         backend_ == Backend::cuda));
  return check_plan_->mode;
}

Status PreparedRun::check(const HostTensors& inputs, const HostTensors& outputs, std::optional<CheckSummary>& into,
                          const std::function<void(std::string)>& warn, const std::function<void()>& before_compare) {
  (void)check_mode();
  // What the kernels declare is read after tuning chose them.
  return check_against_reference(original_, opts_, *check_plan_, backend_, ex_->precision(), ex_.get(), inputs, outputs,
                                 into, warn, before_compare);
}

Status PreparedRun::time(const TimingOptions& opts, std::optional<double> peak_tflops, RunTiming& into,
                         std::string* peak_unknown) {
  const TraceRange range("gexec timing");
  if (!peak_tflops) {
    auto measured = device_->peak_tflops();
    if (measured) peak_tflops = *measured;
    else if (peak_unknown) *peak_unknown = measured.error().message;
  }
  return measure_timing(*ex_, opts, peak_tflops, into);
}

}  // namespace gexec
