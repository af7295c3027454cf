// `gexec run`: load, passes, selection, planning, execution, reference check, report.
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>

#include "gexec/app/commands.hpp"
#include "gexec/exec/executor.hpp"
#include "gexec/io/load.hpp"
#include "gexec/ir/printer.hpp"
#include "gexec/passes/pipeline.hpp"
#include "gexec/rng/init.hpp"
#include "gexec/verify/compare.hpp"
#include "gexec/verify/reference.hpp"
#include "dump.hpp"
#include "timing_report.hpp"
#include "report.hpp"
#include "target.hpp"

namespace gexec {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

Exit fail(std::ostream& err, const Error& e) {
  err << "gexec: " << e.message << "\n";
  return e.code;
}

// The stored bytes of every input of the graph as loaded: read back from the device where the
// executed graph still has it, generated on the host (the same bits) where passes removed it.
Result<std::map<std::string, std::vector<uint8_t>>> reference_inputs(const Graph& original, const Executor& ex,
                                                                     uint64_t seed) {
  std::map<std::string, std::vector<uint8_t>> inputs;
  const GraphIndex idx(original);
  const Graph& run = ex.graph();
  for (size_t t = 0; t < original.tensors.size(); ++t) {
    if (!idx.is_input(TensorId(t))) continue;
    const Tensor& tensor = original.tensors[t];
    const TensorId there = run.find_tensor(tensor.name);
    if (there == kNone) {
      inputs[tensor.name] = generate_input(tensor, seed);
      continue;
    }
    auto bytes = ex.read(there);
    if (!bytes) return bytes.error();
    inputs[tensor.name] = std::move(*bytes);
  }
  return inputs;
}

Result<std::vector<OutputCheck>> check_outputs(const Graph& original,
                                               const std::map<std::string, std::vector<uint8_t>>& inputs,
                                               const std::map<std::string, std::vector<uint8_t>>& outputs,
                                               const RunOptions& opts) {
  auto ref = run_reference(original, inputs);
  if (!ref) return ref.error().with("reference");
  std::vector<OutputCheck> checks;
  for (TensorId id : original.outputs) {
    const Tensor& t = original.tensor(id);
    Tolerance tol = default_tolerance(t.dtype);
    if (opts.atol) tol.atol = *opts.atol;
    if (opts.rtol) tol.rtol = *opts.rtol;
    checks.push_back(compare_output(t, outputs.at(t.name).data(), ref->at(t.name), tol));
  }
  return checks;
}

// The outputs of the graph as loaded, read back from the executed graph by name.
Result<std::map<std::string, std::vector<uint8_t>>> read_outputs(const Graph& original, const Executor& ex) {
  std::map<std::string, std::vector<uint8_t>> outputs;
  for (TensorId id : original.outputs) {
    const std::string& name = original.tensor(id).name;
    const TensorId there = ex.graph().find_tensor(name);
    if (there == kNone) return runtime_error("output " + name + " is missing after the passes");
    auto got = ex.read(there);
    if (!got) return got.error();
    outputs[name] = std::move(*got);
  }
  return outputs;
}

}  // namespace

Exit run_command(const RunOptions& opts, std::ostream& out, std::ostream& err) {
  const auto start = Clock::now();
  auto loaded = load_graph_file(opts.graph_path);
  if (!loaded) return fail(err, loaded.error());
  const Graph& original = *loaded;
  const uint64_t seed = opts.seed.value_or(original.seed.value_or(0));
  const double load_ms = ms_since(start);
  out << "graph " << original.name << " (" << opts.graph_path << "): " << original.tensors.size() << " tensors, "
      << original.ops.size() << " ops, seed " << seed << "\n";

  // Passes.
  auto names = parse_pass_list(opts.passes);
  if (!names) return fail(err, names.error());
  Graph graph = original;
  if (opts.dry_run) out << "\n// before the passes\n" << print_graph(graph);
  auto t0 = Clock::now();
  auto records = run_pipeline(graph, {*names, opts.print_after_all, opts.print_after}, out);
  if (!records) return fail(err, records.error());
  const double passes_ms = ms_since(t0);
  out << "passes:";
  if (records->empty()) out << " none";
  for (const PassRecord& r : *records) {
    out << " " << r.name << (r.changed ? " (changed)" : "");
    spdlog::debug("pass {}: {:.3f} ms{}", r.name, r.millis, r.changed ? ", changed the graph" : "");
  }
  out << "; " << original.ops.size() << " ops -> " << graph.ops.size() << "\n";
  if (opts.dry_run) out << "\n// after the passes\n" << print_graph(graph) << "\n";
  if (!opts.emit_graph.empty()) {
    if (Status s = save_graph_file(graph, opts.emit_graph); !s) return fail(err, s.error());
    out << "wrote the graph after the passes to " << opts.emit_graph << "\n";
  }

  // Device, kernels and buffers.
  t0 = Clock::now();
  auto target = choose_target(opts);
  if (!target) return fail(err, target.error());
  if (!target->notice.empty()) spdlog::warn("{}", target->notice);
  const double device_ms = ms_since(t0);
  out << "device: " << describe(target->caps) << " [" << backend_name(target->backend) << "]\n";
  auto selection = select_kernels(graph, target->caps, target->backend);
  if (!selection) return fail(err, selection.error());
  out << "kernels:\n" << print_selection(graph, *selection);
  const BufferPlan plan = plan_buffers(graph);
  print_plan(out, graph, plan);
  if (opts.dry_run) {
    out << "dry run: nothing executed\n";
    return Exit::ok;
  }

  // Execution.
  t0 = Clock::now();
  auto ex = Executor::create(*target->device, graph, *selection, plan, seed);
  if (!ex) return fail(err, ex.error());
  const double setup_ms = ms_since(t0);
  t0 = Clock::now();
  if (Status s = (*ex)->run_checked(); !s) return fail(err, s.error());
  const double run_ms = ms_since(t0);

  // Check against the reference of the graph as loaded.
  t0 = Clock::now();
  auto inputs = reference_inputs(original, **ex, seed);
  if (!inputs) return fail(err, inputs.error());
  auto outputs = read_outputs(original, **ex);
  if (!outputs) return fail(err, outputs.error());
  if (!opts.dump_dir.empty()) {
    auto all = *inputs;
    all.insert(outputs->begin(), outputs->end());
    auto widened = dump_tensors(opts.dump_dir, original, all);
    if (!widened) return fail(err, widened.error());
    out << "dumped " << all.size() << " tensors to " << opts.dump_dir;
    for (const std::string& w : *widened) out << (w == widened->front() ? "; bf16 written as f32: " : ", ") << w;
    out << "\n";
  }
  bool pass = true;
  if (opts.verify == "none") {
    out << "check: skipped (--verify none)\n";
  } else {
    auto checks = check_outputs(original, *inputs, *outputs, opts);
    if (!checks) return fail(err, checks.error());
    print_checks(out, original, *checks);
    for (const OutputCheck& c : *checks) pass &= c.pass;
  }
  const double check_ms = ms_since(t0);

  if (opts.timing.iters > 0) {
    std::optional<double> peak = opts.peak_tflops;
    if (!peak) {
      auto measured = target->device->peak_tflops();
      if (measured) peak = *measured;
      else spdlog::info("peak unknown: {}", measured.error().message);
    }
    if (Status s = time_and_report(**ex, opts.timing, peak, out); !s) return fail(err, s.error());
  }
  char times[256];
  std::snprintf(times, sizeof times,
                "time: load %.1f ms, passes %.1f ms, device %.1f ms, set-up %.1f ms, first run %.2f ms, check %.1f ms; "
                "total %.1f ms\n",
                load_ms, passes_ms, device_ms, setup_ms, run_ms, check_ms, ms_since(start));
  out << times << "result: " << (pass ? "pass" : "FAIL") << "\n";
  return pass ? Exit::ok : Exit::check_failed;
}

}  // namespace gexec
