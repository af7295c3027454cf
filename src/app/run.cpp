// `gexec run`: load, then the prepared run (prepared_run.hpp): passes, selection, planning,
// execution, tuning, reference check, timing; the report as data (run_graph), printed as text and
// written as JSON by the command (run_command).
#include <spdlog/spdlog.h>

#include <chrono>
#include <filesystem>
#include <new>
#include <iostream>
#include <sstream>

#include "gexec/app/commands.hpp"
#include "gexec/app/gemm_replay.hpp"
#include "output_file.hpp"
#include "gexec/app/prepared_run.hpp"
#include "gexec/app/run_report.hpp"
#include "gexec/exec/executor.hpp"
#include "gexec/exec/trace.hpp"
#include "gexec/io/load.hpp"
#include "gexec/io/text.hpp"
#include "gexec/ir/printer.hpp"
#include "gexec/passes/pipeline.hpp"
#include "gexec/verify/exact.hpp"
#include "dump.hpp"
#include "expect.hpp"
#include "onnx_data.hpp"
#include "gexec/app/model_file.hpp"
#include "host_memory.hpp"
#include "json_report.hpp"
#include "load_inputs.hpp"
#include "gexec/app/nvml.hpp"
#include "output_paths.hpp"
#include "interrupt.hpp"
#include "progress.hpp"
#include "report.hpp"
#include "target.hpp"
#include "timing_report.hpp"
#include "tp_run.hpp"
#include "kernel_choices.hpp"

namespace gexec {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}


// --algo N: every kernel with variants (the cuBLASLt GEMMs) runs its N-th; one with fewer is
// refused, so that the user does not time the default believing it is N.
Status select_algo(Executor& ex, int n) {
  int tried = 0;
  for (size_t k = 0; k < ex.kernel_count(); ++k) {
    Tunable* t = ex.kernel(k).tunable();
    const int count = t ? t->variant_count() : 1;
    if (count <= 1 && n == 0) continue;
    ++tried;
    if (n < 0 || n >= count)
      return bad_input("--algo " + std::to_string(n) + ": op " + ex.op_of_kernel(k).name + " has " +
                       std::to_string(count) + " candidate" + (count == 1 ? "" : "s") + " (0 to " +
                       std::to_string(count - 1) + ")");
    GEXEC_TRY(t->select_variant(n));
  }
  if (tried == 0 && n != 0) return bad_input("--algo " + std::to_string(n) + ": no kernel of this run has candidates");
  return {};
}

// The variant each kernel runs, as the kernel describes it (cuBLASLt: algorithm id, tile, stages,
// split-K, swizzle); for kernels with a single implementation, nothing.
void fill_algos(const Executor& ex, std::vector<KernelChoice>& choices) {
  for (size_t k = 0; k < ex.kernel_count(); ++k) {
    Kernel& kernel = ex.kernel(k);
    const Tunable* t = kernel.tunable();
    const std::string& name = ex.op_of_kernel(k).name;
    for (KernelChoice& c : choices) {
      if (c.op != name) continue;
      c.variants = t ? t->variant_count() : 1;
      c.variant = t ? t->selected_variant() : 0;
      c.algo = kernel.algo_description();
    }
  }
}

// Each product's replay line, with the candidate it runs once `ex` is prepared.
void fill_gemm_commands(const Graph& g, const Executor* ex, const RunOptions& o, std::vector<KernelChoice>& choices) {
  for (const ProductCommand& p : product_commands(g, ex, {std::nullopt, o.pad, o.precision}))
    for (KernelChoice& c : choices)
      if (c.op == p.op) c.gemm_command = p.command;
}

// --emit-gemms FILE: the lines, one per product, after a comment naming the graph.
Status emit_gemms(const RunOptions& o, const std::vector<KernelChoice>& choices, RunReport& rep) {
  if (o.emit_gemms.empty()) return {};
  std::string text = "# the products of " + o.graph_path + ", one gexec gemm command each (gexec gemm --from FILE runs them)\n";
  for (const KernelChoice& c : choices)
    if (!c.gemm_command.empty()) text += c.gemm_command + "  # " + c.op + "\n";
  GEXEC_TRY(write_output_file(o.emit_gemms, text));
  rep.emitted_gemms = o.emit_gemms;
  return {};
}

// The options as given, for the JSON report: what a rerun needs besides the graph.
nlohmann::json run_options_json(const RunOptions& o) {
  nlohmann::json j = common_options_json(o);
  j.update({{"graph", o.graph_path},
            {"seed", o.seed ? nlohmann::json(*o.seed) : nlohmann::json(nullptr)},
            {"passes", o.passes},
            {"samples", o.samples},
            {"rotate_bytes", o.timing.rotate_bytes},
            {"profile", o.timing.profile},
            {"autotune_top", o.autotune_top},
            {"tuning_cache", o.tuning_cache},
            {"emit_gemms", o.emit_gemms},
            {"profile_range", o.timing.profile_range},
            {"load_inputs", o.load_inputs_dir},
            {"dims", o.dims},
            {"expect", o.expect_dir},
            {"expect_atol", o.expect_atol ? nlohmann::json(*o.expect_atol) : nlohmann::json(nullptr)},
            {"expect_rtol", o.expect_rtol ? nlohmann::json(*o.expect_rtol) : nlohmann::json(nullptr)},
            {"force", o.force},
            {"precision", o.precision}});
  return j;
}

BufferSummary buffer_summary(const Graph& g, const BufferPlan& plan) {
  BufferSummary b{plan.arena_bytes, plan.total_bytes, kArenaAlignment, plan.fits, {}};
  for (size_t t = 0; t < g.tensors.size() && t < plan.offset.size(); ++t)
    if (plan.offset[t] >= 0) b.tensors.push_back({g.tensors[t].name, plan.offset[t], g.tensors[t].bytes()});
  return b;
}

// The options of the prepared run, the mode names parsed once.
Result<PrepareOptions> prepare_options(const RunOptions& o, uint64_t seed) {
  PrepareOptions p;
  auto backend = parse_backend_choice(o.backend);
  if (!backend) return backend.error();
  auto verify = parse_verify_mode(o.verify);
  if (!verify) return verify.error();
  auto pad = parse_pad_policy(o.pad);
  if (!pad) return pad.error();
  p.backend = *backend;
  p.device = o.device;
  p.dry_run = o.dry_run;
  p.arch = o.arch;
  p.passes = o.passes;
  p.print_after_all = o.print_after_all;
  p.print_after = o.print_after;
  p.residual_costs = o.residual_costs;
  p.kernel.pad = *pad;
  auto precision = parse_precision_choice(o.precision);
  if (!precision) return precision.error();
  p.kernel.tf32 = *precision == PrecisionChoice::tf32;
  for (const std::string& k : o.kernels) GEXEC_TRY(parse_forced_kernel(k, p.kernel.forced));
  if (o.algo_space != "heuristic" && o.algo_space != "all")
    return bad_input("--algo-space " + o.algo_space + ": expected heuristic or all");
  p.kernel.algo_space_all = o.algo_space == "all";
  p.kernel.tune_alternatives = o.autotune || !o.tuning_cache.empty();
  p.seed = seed;
  p.verify = *verify;
  p.verify_budget = o.verify_budget;
  p.samples = o.samples;
  p.atol = o.atol;
  p.rtol = o.rtol;
  return p;
}

// Fills `rep` as the run goes, telling `seen` after each section; an error returns early with
// what was reached already in `rep`. The steps: prepare (passes, target, selection, plan,
// executor), tune, run, check, time.
Status run_into(const RunOptions& opts, RunReport& rep, const RunObserver& seen) {
  auto tell = [&] {
    if (seen) seen(rep);
  };
  const auto start = Clock::now();
  PhaseTimes times;
  // Before the graph is read, so that a report of a graph that fails to load never lands on it.
  if (!opts.graph)
    if (Status s = check_not_inputs({{"--report", opts.report_path}}, {{"the graph file", opts.graph_path}}, opts.force);
        !s) {
      rep.refused_outputs = "--report";
      return s;
    }
  std::optional<TraceRange> load_range;
  load_range.emplace("gexec load");
  auto loaded = opts.graph ? Result<ModelFile>(graph_model(*opts.graph))
                           : load_model_file(opts.graph_path, {opts.dims, opts.load_inputs_dir});
  load_range.reset();
  if (!loaded) return loaded.error();
  const ModelFile& model = *loaded;
  const uint64_t seed = opts.seed.value_or(model.graph.seed.value_or(0));
  times.load = ms_since(start);
  rep.graph = GraphSummary{model.graph.name, opts.graph_path, std::string(format_name(model.format)), model.description,
                           seed, int64_t(model.graph.tensors.size()), int64_t(model.graph.ops.size())};
  tell();
  // The results --expect compares with, read (and their shapes checked) before anything runs.
  std::map<std::string, ExpectedValues> expected;
  std::vector<std::string> expect_files;
  if (!opts.expect_dir.empty()) {
    auto e = read_expected(opts.expect_dir, model, &expect_files);
    if (!e) return e.error();
    expected = std::move(*e);
  }
  // Every output writable, none of them an input: known now, not after the run (output_paths.hpp).
  std::vector<std::pair<std::string, std::string>> more_inputs;
  for (const std::string& f : model.data_files) more_inputs.push_back({"an external data file of the model", f});
  for (const std::string& f : expect_files) more_inputs.push_back({"an --expect file", f});
  for (const std::string& f : pb_file_paths(opts.load_inputs_dir, "input_"))
    more_inputs.push_back({"a --load-inputs file", f});
  GEXEC_TRY(check_run_paths(opts, model.graph, &rep.refused_outputs, more_inputs));

  // The switches are read here, once; selection and preparation get them in KernelOptions.
  auto options = prepare_options(opts, seed);
  if (!options) return options.error();
  rep.kernel_options = options->kernel;
  if (opts.tp > 0) {
    GEXEC_TRY(run_tensor_parallel(opts, model, *options, rep, times, tell));
    times.total = ms_since(start);
    if (!opts.dry_run) rep.times_ms = times;
    return {};
  }
  for (const Op& op : model.graph.ops)
    if (is_collective(op.type))
      return bad_input(opts.graph_path + ": op " + op.name + " is " + std::string(op_type_name(op.type)) +
                       ", a collective: this graph is a rank's program of a sharded run; run the unsharded graph "
                       "with --tp N (docs/distributed.md)");
  PreparedRun run(model.graph, *options);
  const Graph& original = run.original();

  // Passes.
  if (opts.dry_run) {
    // An ONNX model's exporter patterns: which nodes became which op of the graph below.
    for (const std::string& p : model.patterns) rep.printed_before += "// ONNX " + p + "\n";
    rep.printed_before += print_graph(original);
  }
  auto t0 = Clock::now();
  std::ostringstream prints;
  const Status passed = run.run_passes(prints);
  rep.pass_prints = prints.str();
  GEXEC_TRY(passed);
  const Graph& graph = run.graph();
  times.passes = ms_since(t0);
  rep.passes = PassesSummary{run.pass_records(), int64_t(original.ops.size()), int64_t(graph.ops.size())};
  if (opts.dry_run) rep.printed_after = print_graph(graph);
  tell();
  if (!opts.emit_graph.empty()) {
    GEXEC_TRY(save_graph_file(graph, opts.emit_graph, std::filesystem::path(opts.graph_path).parent_path().string()));
    rep.emitted_graph = opts.emit_graph;
  }

  // Device, kernels and buffers.
  t0 = Clock::now();
  GEXEC_TRY(run.choose_target());
  if (!run.target_notice().empty()) rep.warnings.push_back({RunWarning::Kind::cpu_fallback, run.target_notice()});
  times.device = ms_since(t0);
  rep.device = DeviceSummary{run.caps(), run.backend()};
  tell();
  GEXEC_TRY(run.select());
  rep.kernels = kernel_choices(graph, run.selection());
  fill_gemm_commands(graph, nullptr, opts, *rep.kernels);
  const BufferPlan& plan = run.plan();
  rep.buffers = buffer_summary(graph, plan);
  // --verify exact: integer inputs that keep every value exact, or the reason none exist.
  std::optional<int64_t> exact_range_r;
  if (options->verify == VerifyMode::exact) {
    if (!opts.load_inputs_dir.empty()) return bad_input("--verify exact draws its own inputs; drop --load-inputs");
    auto r = exact_range(original);
    if (!r) return r.error();
    exact_range_r = *r;
  }
  if (opts.dry_run) {
    GEXEC_TRY(emit_gemms(opts, *rep.kernels, rep));
    rep.result = RunReport::Result::dry_run;
    return {};
  }
  tell();
  // A graph too large for the device is refused as such before the host side is sized, so that
  // the message names the memory that is really short (the arena's own check is the backstop).
  const DeviceCaps& caps = run.caps();
  if (run.backend() == Backend::cuda && caps.total_bytes > 0 && plan.arena_bytes > caps.free_bytes)
    return device_memory_short(caps.name, plan.arena_bytes, caps.free_bytes, caps.total_bytes);
  // How the outputs will be checked: on the CUDA backend with the products on the device where its
  // memory allows them (the kernels' declared precision is known later; the products' geometry
  // now); on the CPU in full within the --verify-budget, else by strata.
  // The host side is sized up front like the device's arena: refused now rather than aborted later.
  GEXEC_TRY(check_host_memory(estimate_host_memory(opts, original, run.check_mode(), plan, run.backend())));

  // Inputs from .npy files, where given; the others are drawn from the seed.
  HostTensors host_inputs;
  if (!opts.load_inputs_dir.empty()) {
    auto l = load_inputs(opts.load_inputs_dir, original, model.inputs);
    if (!l) return l.error();
    host_inputs = std::move(*l);
    for (std::string& w : load_inputs_warnings(opts.load_inputs_dir, original, host_inputs, model.inputs))
      rep.warnings.push_back({RunWarning::Kind::other, std::move(w)});
  }
  if (exact_range_r) host_inputs = exact_inputs(original, *exact_range_r, seed);
  rep.exact_range = exact_range_r;
  rep.load_inputs_dir = opts.load_inputs_dir;
  rep.loaded_inputs.emplace();
  if (!exact_range_r)
    for (const auto& [name, bytes] : host_inputs) rep.loaded_inputs->push_back(name);
  tell();

  // Execution.
  t0 = Clock::now();
  GEXEC_TRY(run.create_executor(&host_inputs));
  Executor& ex = run.executor();
  times.setup = ms_since(t0);
  // Tuned before the checked run, so that the run checked (and timed) is the tuned one.
  if (opts.autotune || !opts.tuning_cache.empty()) {
    AutotuneOptions tune;
    tune.tune = opts.autotune;
    tune.top = opts.autotune_top;
    tune.cache_path = opts.tuning_cache;
    tune.cuda_graph = opts.timing.cuda_graph;
    tune.poll = check_interrupt;
    Progress bar("autotune");
    tune.progress = [&bar](double done) { bar.update(done); };
    std::ostringstream log;
    auto tuned = run.tune(tune, log);
    rep.tuning_log = log.str();
    if (!tuned) return tuned.error();
    // Only kernels with several variants (cuBLASLt's candidates) are tuned: say when there was none.
    if (opts.autotune && tuned->empty())
      rep.warnings.push_back(
          {RunWarning::Kind::other,
           run.backend() == Backend::cpu
               ? "--autotune: the CPU backend has nothing to tune (each of its kernels has one variant); the run is "
                 "untuned"
               : "--autotune: no kernel of this run has variants to choose between (only cuBLASLt products do); "
                 "the run is untuned"});
    tell();
  }
  if (opts.algo) GEXEC_TRY(select_algo(ex, *opts.algo));
  fill_algos(ex, *rep.kernels);
  fill_gemm_commands(graph, &ex, opts, *rep.kernels);
  GEXEC_TRY(emit_gemms(opts, *rep.kernels, rep));
  t0 = Clock::now();
  GEXEC_TRY(check_interrupt());
  GEXEC_TRY(run.run());
  times.first_run = ms_since(t0);
  rep.notes = ex.notes();
  rep.executed = true;
  tell();

  // Check against the reference of the graph as loaded.
  t0 = Clock::now();
  auto inputs = run.reference_inputs(host_inputs, !opts.dump_dir.empty());
  if (!inputs) return inputs.error();
  auto outputs = run.read_outputs();
  if (!outputs) return outputs.error();
  spdlog::debug("check: inputs and outputs read back in {:.1f} ms", ms_since(t0));
  if (!opts.dump_dir.empty()) {
    auto all = *inputs;
    all.insert(outputs->begin(), outputs->end());
    auto widened = dump_tensors(opts.dump_dir, original, all);
    if (!widened) return widened.error();
    rep.dump = DumpSummary{opts.dump_dir, int64_t(all.size()), *widened};
    tell();
  }
  GEXEC_TRY(run.check(
      *inputs, *outputs, rep.check, [&](std::string w) { rep.warnings.push_back({RunWarning::Kind::other, std::move(w)}); },
      tell));
  if (!opts.expect_dir.empty())
    rep.expect = compare_expected(opts.expect_dir, original, *outputs, expected, opts.expect_atol, opts.expect_rtol);
  times.check = ms_since(t0);
  tell();

  GEXEC_TRY(check_interrupt());  // Ctrl-C during the check: stop before the timing
  if (opts.timing.iters > 0) {
    RunTiming timing;
    std::string peak_unknown;
    TimingOptions how = opts.timing;
    if (!how.poll) how.poll = check_interrupt;
    Progress bar("timing", 1.0, opts.timing_progress);
    if (opts.timing_progress) how.progress = [&bar](double done) { bar.update(done); };
    const Status s = run.time(how, opts.peak_tflops, timing, &peak_unknown);
    bar.clear();
    if (!peak_unknown.empty()) rep.warnings.push_back({RunWarning::Kind::peak_unknown, peak_unknown});
    if (timing.stats.samples > 0) {
      if (timing.noisy) rep.warnings.push_back({RunWarning::Kind::noisy_timings, noisy_message(timing)});
      rep.timing = std::move(timing);
    }
    GEXEC_TRY(s);
  }
  times.total = ms_since(start);
  rep.times_ms = times;
  rep.result = rep.check->pass() && (!rep.expect || rep.expect->pass()) ? RunReport::Result::pass : RunReport::Result::fail;
  return {};
}

}  // namespace

RunReport run_graph(const RunOptions& opts, const RunObserver& observer) {
  enable_tracing();
  RunReport rep;
  Status s;
  try {
    s = run_into(opts, rep, observer);
  } catch (const std::bad_alloc&) {
    // The estimate (host_memory.hpp) should have refused first; this is the backstop.
    s = runtime_error("out of host memory: an allocation failed (the run needs more than this process may use)");
  }
  if (!s) {
    rep.result = RunReport::Result::error;
    rep.error = s.error();
  }
  return rep;
}

Exit run_command(const RunOptions& opts, std::ostream& out, std::ostream& err) {
  // Ctrl-C stops the run at its next step (the tuning and the timing ask between samples): the
  // report says so and is written; exit 130.
  const StopOnInterrupt stop;
  // --report -: the JSON alone on stdout, the text report on stderr.
  const bool json_on_stdout = opts.report_path == "-";
  TextReport text(json_on_stdout ? err : out);
  const RunReport rep = run_graph(opts, [&](const RunReport& r) { text.update(r); });
  text.update(rep);
  Exit code = rep.exit_code();
  if (rep.error) err << "gexec: " << printable(rep.error->message, true) << "\n";
  // A report path refused before the run (it is the graph, say) is not written either.
  if (opts.report_path.empty() || rep.refused_outputs.find("--report") != std::string::npos) return code;
  nlohmann::json doc = report_json(rep);
  doc["command_line"] = opts.command_line;
  doc["options"] = run_options_json(opts);
  doc["environment"] = environment_json(opts.device);
  if (Status s = write_report(opts.report_path, doc, &out); !s) {
    err << "gexec: " << s.error().message << "\n";
    return code == Exit::ok ? s.error().code : code;
  }
  if (!json_on_stdout) out << "wrote the report to " << opts.report_path << "\n";
  return code;
}

}  // namespace gexec
