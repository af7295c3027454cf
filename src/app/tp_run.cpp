// The sharded run (tp_run.hpp). One process drives every rank: a step enqueues op k of every rank
// before op k + 1 of any, each collective's N calls inside one communicator group, so that the
// CPU ranks' host communicator and NCCL's one-thread-many-devices mode both see their calls
// together.
#include "tp_run.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <numeric>
#include <sstream>

#include "check.hpp"
#if GEXEC_HAVE_CUDA
#include "gexec/backends/cuda_device.hpp"
#endif
#include "gexec/exec/work.hpp"
#include "gexec/io/load.hpp"
#include "gexec/ir/printer.hpp"
#include "gexec/passes/tensor_parallel.hpp"
#include "gexec/rng/init.hpp"
#include "kernel_choices.hpp"
#include "load_inputs.hpp"

namespace gexec {
namespace {

using Runs = std::vector<std::unique_ptr<PreparedRun>>;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

std::string nccl_info() {
#if GEXEC_HAVE_CUDA
  return nccl_build_info();
#else
  return "none (gexec was built without the CUDA backend)";
#endif
}

// Which of the ops that run every time a step enqueues.
enum class StepOps { all, compute, communication };

// One step of every rank: op k of each rank, then op k + 1; `only` >= 0: that op alone. A
// collective's results are waited for before the first op that reads them (Executor::enqueue_op),
// and at the step's end.
Status step(const Runs& runs, Communicator& comm, StepOps which, int64_t only = -1) {
  const Executor& ex0 = runs[0]->executor();
  const size_t ops = ex0.kernel_count();
  for (size_t k = 0; k < ops; ++k) {
    if (only >= 0 && int64_t(k) != only) continue;
    const Op& op = ex0.op_of_kernel(k);
    const bool collective = is_collective(op.type);
    if ((which == StepOps::compute && collective) || (which == StepOps::communication && !collective)) continue;
    if (collective) GEXEC_TRY(comm.group_begin());
    Status s;
    for (const auto& run : runs) {
      s = run->device()->make_current();
      if (s) s = run->executor().enqueue_op(k);
      if (!s) break;
    }
    // A group begun is ended even when a rank failed to enqueue: NCCL would hang otherwise.
    if (collective) {
      const Status end = comm.group_end();
      if (s && !end) s = end;
    }
    if (!s) return s.error().with("rank step, op " + op.name);
  }
  for (const auto& run : runs) {
    GEXEC_TRY(run->device()->make_current());
    GEXEC_TRY(run->executor().join_collectives());
  }
  return {};
}

Status synchronize_all(const Runs& runs) {
  for (const auto& run : runs) {
    GEXEC_TRY(run->device()->make_current());
    GEXEC_TRY(run->device()->synchronize());
    GEXEC_TRY(run->executor().after_runs());
  }
  return {};
}

// The graph inputs of rank r: the unsharded inputs cut where the plan cut them, and the files
// given (--load-inputs) of the inputs every rank holds whole.
Result<HostTensors> rank_inputs(const ShardPlan& plan, const Graph& original, const HostTensors& loaded,
                                uint64_t seed, int r, std::map<std::string, std::vector<uint8_t>>& drawn) {
  HostTensors host;
  for (const auto& [name, bytes] : loaded)
    if (plan.rank.find_tensor(name) != kNone) host[name] = bytes;
  for (const ShardedInput& s : plan.inputs) {
    const TensorId t = original.find_tensor(s.of);
    if (t == kNone) return runtime_error("sharded input " + s.name + " names " + s.of + ", not an input of the graph");
    const Tensor& whole = original.tensor(t);
    const std::vector<uint8_t>* bytes = nullptr;
    if (auto it = loaded.find(s.of); it != loaded.end()) {
      bytes = &it->second;
    } else {
      auto d = drawn.find(s.of);
      if (d == drawn.end()) d = drawn.emplace(s.of, generate_input(whole, seed)).first;
      bytes = &d->second;
    }
    host[s.name] = slice_bytes(whole, *bytes, s.axis, plan.ranks, r);
  }
  return host;
}

// Medians of `enqueue` timed on `device`, as gexec run times a run (no captured graph: a step
// spans devices and communicators).
Result<double> median_us(Device& device, const std::function<Status()>& enqueue, const TimingOptions& opts,
                         std::vector<double>* samples = nullptr, TimingInfo* info = nullptr) {
  TimingOptions how = opts;
  how.cuda_graph = false;
  how.rotate_bytes = 0;
  how.profile = false;
  how.info = info;
  bool graph_used = false;
  auto s = device.time_runs(enqueue, how, &graph_used);
  if (!s) return s.error();
  if (samples) *samples = *s;
  return summarize(*s).median;
}

Status time_sharded(const Runs& runs, Communicator& comm, const Graph& original, const TimingOptions& opts,
                    RunReport& rep) {
  TensorParallelSummary& tp = *rep.tp;
  Device& first = *runs[0]->device();
  RunTiming timing;
  timing.options = opts;
  timing.options.cuda_graph = false;
  std::vector<double> samples;
  auto whole = median_us(first, [&] { return step(runs, comm, StepOps::all); }, opts, &samples, &timing.info);
  if (!whole) return whole.error().with("timing the sharded step");
  GEXEC_TRY(synchronize_all(runs));
  timing.samples = samples;
  timing.stats = summarize(samples);
  const Work work = count_work(original);  // the unsharded graph's work: the step's throughput
  timing.flops = work.flops;
  timing.bytes = work.bytes;
  timing.tflops = *whole > 0 ? work.flops / (*whole * 1e-6) / 1e12 : 0;
  timing.gbps = *whole > 0 ? work.bytes / (*whole * 1e-6) / 1e9 : 0;
  timing.noisy = timing.stats.cv > kNoisyCv;
  timing.complete = true;
  rep.timing = std::move(timing);
  tp.step_us = *whole;
  // Each rank's compute alone, on its own device; the collectives alone; each collective alone.
  tp.rank_compute_us.clear();
  for (size_t r = 0; r < runs.size(); ++r) {
    Executor& ex = runs[r]->executor();
    Device& dev = *runs[r]->device();
    auto c = median_us(dev, [&]() -> Status {
      GEXEC_TRY(dev.make_current());
      for (size_t k = 0; k < ex.kernel_count(); ++k)
        if (!is_collective(ex.op_of_kernel(k).type)) GEXEC_TRY(ex.enqueue_op(k));
      return {};
    }, opts);
    if (!c) return c.error().with("timing rank " + std::to_string(r) + "'s compute");
    tp.rank_compute_us.push_back(*c);
  }
  GEXEC_TRY(synchronize_all(runs));
  // The devices compute side by side: the slowest rank's; the CPU ranks one after another: their sum.
  tp.compute_us = first.backend() == Backend::cpu
                      ? std::accumulate(tp.rank_compute_us.begin(), tp.rank_compute_us.end(), 0.0)
                      : *std::max_element(tp.rank_compute_us.begin(), tp.rank_compute_us.end());
  tp.communication_us = 0;
  if (!tp.collectives.empty()) {
    auto m = median_us(first, [&] { return step(runs, comm, StepOps::communication); }, opts);
    if (!m) return m.error().with("timing the collectives");
    tp.communication_us = *m;
    const Executor& ex = runs[0]->executor();
    for (size_t k = 0; k < ex.kernel_count(); ++k) {
      if (!is_collective(ex.op_of_kernel(k).type)) continue;
      auto one = median_us(first, [&] { return step(runs, comm, StepOps::communication, int64_t(k)); }, opts);
      if (!one) return one.error().with("timing collective " + ex.op_of_kernel(k).name);
      for (TensorParallelSummary::Collective& c : tp.collectives)
        if (c.op == ex.op_of_kernel(k).name) c.median_us = *one;
    }
    GEXEC_TRY(synchronize_all(runs));
  }
  tp.exposed_us = std::max(0.0, tp.step_us - tp.compute_us);
  tp.overlap = tp.communication_us > 0 ? std::clamp(1.0 - tp.exposed_us / tp.communication_us, 0.0, 1.0) : 0.0;
  tp.timed = true;
  return {};
}

}  // namespace

Status run_tensor_parallel(const RunOptions& opts, const ModelFile& model, const PrepareOptions& base, RunReport& rep,
                           PhaseTimes& times, const std::function<void()>& tell) {
  const Graph& original = model.graph;
  const int n = opts.tp;
  std::vector<int> devices = opts.devices;
  if (devices.empty())
    for (int r = 0; r < n; ++r) devices.push_back(r);
  if (int(devices.size()) != n)
    return bad_input("--devices lists " + std::to_string(devices.size()) + " devices for --tp " + std::to_string(n) +
                     "; give one per rank");
  if (opts.tp_reduce != "all-reduce" && opts.tp_reduce != "reduce-scatter")
    return bad_input("--tp-reduce " + opts.tp_reduce + ": expected all-reduce or reduce-scatter");
  if (opts.verify == "exact") return bad_input("--verify exact is not available with --tp (a sum over ranks is not exact)");
  if (!opts.dump_dir.empty() || !opts.expect_dir.empty() || opts.autotune || !opts.tuning_cache.empty() || opts.algo ||
      !opts.emit_gemms.empty() || opts.timing.profile)
    return bad_input("--tp runs with the check and the timing only: --dump, --expect, --autotune, --tuning-cache, --algo, "
                     "--emit-gemms and --profile are not available with it yet");
  auto plan = shard_graph(original, {n, opts.tp_reduce == "reduce-scatter"});
  if (!plan) return plan.error();
  TensorParallelSummary tp;
  tp.ranks = n;
  tp.reduce = opts.tp_reduce;
  tp.notes = plan->notes;
  for (const ShardedInput& s : plan->inputs)
    tp.sharded_inputs.push_back(s.name + ": slice r of " + s.of + " along axis " + std::to_string(s.axis));
  rep.tp = tp;

  if (opts.dry_run) rep.printed_before = print_graph(original);
  auto t0 = Clock::now();
  Runs runs;
  for (int r = 0; r < n; ++r) {
    PrepareOptions o = base;
    o.device = devices[size_t(r)];
    runs.push_back(std::make_unique<PreparedRun>(plan->rank, o));
    std::ostringstream prints;
    GEXEC_TRY(runs.back()->run_passes(prints));
    if (r == 0) rep.pass_prints = prints.str();
  }
  const PreparedRun& first = *runs[0];
  rep.passes = PassesSummary{first.pass_records(), int64_t(original.ops.size()), int64_t(first.graph().ops.size())};
  if (opts.dry_run)
    rep.printed_after = "// the program of each of the " + std::to_string(n) + " ranks\n" + print_graph(first.graph());
  times.passes = ms_since(t0);
  tell();
  if (!opts.emit_graph.empty()) {
    GEXEC_TRY(save_graph_file(first.graph(), opts.emit_graph, std::filesystem::path(opts.graph_path).parent_path().string()));
    rep.emitted_graph = opts.emit_graph;
  }
  t0 = Clock::now();
  for (auto& run : runs) GEXEC_TRY(run->choose_target());
  for (auto& run : runs)
    if (run->backend() != first.backend())
      return bad_input("--tp: the ranks chose different backends (" + std::string(backend_name(first.backend())) + " and " +
                       std::string(backend_name(run->backend())) + "); name one with --backend");
  for (auto& run : runs)
    if (!run->target_notice().empty())
      rep.warnings.push_back({run->backend() == Backend::cpu ? RunWarning::Kind::cpu_fallback : RunWarning::Kind::other,
                              run->target_notice()});
  rep.device = DeviceSummary{first.caps(), first.backend()};
  if (first.backend() == Backend::cuda) rep.tp->devices = devices;
  rep.tp->communicator = first.backend() == Backend::cpu ? HostCommunicator(1).describe() : nccl_info();
  times.device = ms_since(t0);
  tell();
  for (auto& run : runs) GEXEC_TRY(run->select());
  const Graph& rg = first.graph();
  rep.kernels = kernel_choices(rg, first.selection());
  for (const Op& op : rg.ops)
    if (is_collective(op.type))
      rep.tp->collectives.push_back({op.name, std::string(op_type_name(op.type)), collective_tensor_bytes(rg, op),
                                     collective_ring_bytes(rg, op), -1});
  for (auto& run : runs) rep.tp->arena_bytes.push_back(run->plan().arena_bytes);
  if (opts.dry_run) {
    rep.result = RunReport::Result::dry_run;
    return {};
  }
  tell();

  // The communicator, joined by every rank's device before its kernels are built.
  t0 = Clock::now();
  std::shared_ptr<Communicator> comm = opts.communicator;
  if (comm) {
    if (comm->ranks() != n)
      return bad_input("the communicator given has " + std::to_string(comm->ranks()) + " ranks; --tp is " + std::to_string(n));
  } else if (first.backend() == Backend::cpu) {
    comm = std::make_shared<HostCommunicator>(n);
  } else {
#if GEXEC_HAVE_CUDA
    auto c = open_nccl_communicator(devices);
    if (!c) return c.error();
    comm = *c;
#else
    return runtime_error("--tp on CUDA: gexec was built without the CUDA backend");
#endif
  }
  rep.tp->communicator = comm->describe();
  for (int r = 0; r < n; ++r) runs[size_t(r)]->device()->join(comm, r);

  HostTensors loaded;
  if (!opts.load_inputs_dir.empty()) {
    auto l = load_inputs(opts.load_inputs_dir, original, model.inputs);
    if (!l) return l.error();
    loaded = std::move(*l);
  }
  rep.load_inputs_dir = opts.load_inputs_dir;
  rep.loaded_inputs.emplace();
  for (const auto& [name, bytes] : loaded) rep.loaded_inputs->push_back(name);
  std::map<std::string, std::vector<uint8_t>> drawn;
  for (int r = 0; r < n; ++r) {
    auto host = rank_inputs(*plan, original, loaded, base.seed, r, drawn);
    if (!host) return host.error();
    GEXEC_TRY(runs[size_t(r)]->device()->make_current());
    GEXEC_TRY(runs[size_t(r)]->create_executor(&*host));
  }
  drawn.clear();
  for (auto& run : runs)
    if (run->executor().kernel_count() != first.executor().kernel_count())
      return runtime_error("--tp: the ranks' programs differ in their ops (a bug of the sharding)");

  times.setup = ms_since(t0);
  // The checked run: every rank's outputs poisoned, one step, every device waited for.
  t0 = Clock::now();
  for (auto& run : runs) {
    GEXEC_TRY(run->device()->make_current());
    GEXEC_TRY(run->executor().poison_outputs());
  }
  GEXEC_TRY(step(runs, *comm, StepOps::all));
  GEXEC_TRY(synchronize_all(runs));
  times.first_run = ms_since(t0);
  rep.executed = true;
  for (auto& run : runs)
    for (std::string& note : run->executor().notes())
      if (std::find(rep.notes.begin(), rep.notes.end(), note) == rep.notes.end()) rep.notes.push_back(std::move(note));
  tell();

  // Rank 0's outputs against the unsharded graph's reference; every other rank's against rank 0's.
  t0 = Clock::now();
  auto inputs = reference_inputs(original, first.executor(), base.seed, loaded);
  if (!inputs) return inputs.error();
  auto outputs = read_outputs(original, first.executor());
  if (!outputs) return outputs.error();
  for (int r = 1; r < n && rep.tp->ranks_disagree.empty(); ++r) {
    GEXEC_TRY(runs[size_t(r)]->device()->make_current());
    auto other = read_outputs(original, runs[size_t(r)]->executor());
    if (!other) return other.error();
    for (const auto& [name, bytes] : *outputs)
      if (other->at(name) != bytes) {
        rep.tp->ranks_disagree = "output " + name + " of rank " + std::to_string(r) + " differs from rank 0's";
        break;
      }
  }
  GEXEC_TRY(runs[0]->device()->make_current());
  Precision declared;
  for (auto& run : runs) declared.merge(run->executor().precision());
  const CheckPlan check_plan = plan_check(original, base.verify, base.verify_budget, base.samples, {},
                                          first.backend() == Backend::cuda);
  GEXEC_TRY(check_against_reference(
      original, base, check_plan, first.backend(), declared, nullptr, *inputs, *outputs, rep.check,
      [&](std::string w) { rep.warnings.push_back({RunWarning::Kind::other, std::move(w)}); }, tell));
  times.check = ms_since(t0);
  rep.tp->ranks_compared = true;  // after the check: the report prints it after the check's lines
  tell();

  if (opts.timing.iters > 0) {
    if (opts.timing.rotate_bytes > 0)
      rep.warnings.push_back({RunWarning::Kind::other, "--cold-l2 / --rotating are not applied to a sharded run: its "
                                                       "step is timed on the run's own buffers"});
    GEXEC_TRY(time_sharded(runs, *comm, original, opts.timing, rep));
  }
  rep.result = rep.check->pass() && rep.tp->ranks_disagree.empty() ? RunReport::Result::pass : RunReport::Result::fail;
  return {};
}

}  // namespace gexec
