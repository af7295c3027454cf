// `gexec run`: load, passes, selection, planning, execution, reference check, report.
#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <sstream>

#include "gexec/app/commands.hpp"
#include "gexec/exec/autotune.hpp"
#include "gexec/exec/executor.hpp"
#include "gexec/io/load.hpp"
#include "gexec/ir/printer.hpp"
#include "gexec/passes/pipeline.hpp"
#include "check.hpp"
#include "dump.hpp"
#include "json_report.hpp"
#include "load_inputs.hpp"
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


// The run; `rep` gathers the JSON report as the run goes, so that it holds what was reached.
Exit run_graph(const RunOptions& opts, std::ostream& out, std::ostream& err, nlohmann::json& rep) {
  const auto start = Clock::now();
  auto loaded = load_graph_file(opts.graph_path);
  if (!loaded) return fail(err, loaded.error());
  const Graph& original = *loaded;
  const uint64_t seed = opts.seed.value_or(original.seed.value_or(0));
  const double load_ms = ms_since(start);
  rep["graph"] = report_graph(original, opts.graph_path, seed);
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
  for (const PassRecord& r : *records)
    for (const std::string& note : r.notes) out << "  " << r.name << ": " << note << "\n";
  rep["passes"] = report_passes(*records);
  rep["ops_after_passes"] = graph.ops.size();
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
  rep["device"] = report_device(target->caps, target->backend);
  out << "device: " << describe(target->caps) << " [" << backend_name(target->backend) << "]\n";
  auto selection = select_kernels(graph, target->caps, target->backend);
  if (!selection) return fail(err, selection.error());
  out << "kernels:\n" << print_selection(graph, *selection);
  rep["kernels"] = report_kernels(graph, *selection);
  const BufferPlan plan = plan_buffers(graph);
  print_plan(out, graph, plan);
  rep["buffers"] = report_buffers(graph, plan);
  if (opts.dry_run) {
    out << "dry run: nothing executed\n";
    rep["result"] = "dry-run";
    return Exit::ok;
  }

  // Inputs from .npy files, where given; the others are drawn from the seed.
  std::map<std::string, std::vector<uint8_t>> host_inputs;
  if (!opts.load_inputs_dir.empty()) {
    auto l = load_inputs(opts.load_inputs_dir, original);
    if (!l) return fail(err, l.error());
    host_inputs = std::move(*l);
    out << "loaded " << host_inputs.size() << " input" << (host_inputs.size() == 1 ? "" : "s") << " from "
        << opts.load_inputs_dir << (host_inputs.empty() ? "" : ":");
    for (const auto& [name, bytes] : host_inputs) out << " " << name;
    out << "\n";
  }
  rep["inputs"]["loaded"] = nlohmann::json::array();
  for (const auto& [name, bytes] : host_inputs) rep["inputs"]["loaded"].push_back(name);

  // Execution.
  t0 = Clock::now();
  auto ex = Executor::create(*target->device, graph, *selection, plan, seed, &host_inputs);
  if (!ex) return fail(err, ex.error());
  const double setup_ms = ms_since(t0);
  // Tuned before the checked run, so that the run checked (and timed) is the tuned one.
  if (opts.autotune || !opts.tuning_cache.empty()) {
    AutotuneOptions tune;
    tune.tune = opts.autotune;
    tune.top = opts.autotune_top;
    tune.cache_path = opts.tuning_cache;
    tune.cuda_graph = opts.timing.cuda_graph;
    auto tuned = autotune(**ex, target->caps, tune, out);
    if (!tuned) return fail(err, tuned.error());
  }
  t0 = Clock::now();
  if (Status s = (*ex)->run_checked(); !s) return fail(err, s.error());
  const double run_ms = ms_since(t0);
  // Known only once the kernels are prepared: e.g. an epilogue that had to run unfused.
  for (const std::string& note : (*ex)->notes()) out << "note: " << note << "\n";

  // Check against the reference of the graph as loaded.
  t0 = Clock::now();
  auto inputs = reference_inputs(original, **ex, seed, host_inputs);
  if (!inputs) return fail(err, inputs.error());
  auto outputs = read_outputs(original, **ex);
  if (!outputs) return fail(err, outputs.error());
  if (!opts.dump_dir.empty()) {
    auto all = *inputs;
    all.insert(outputs->begin(), outputs->end());
    auto widened = dump_tensors(opts.dump_dir, original, all);
    if (!widened) return fail(err, widened.error());
    rep["dump"] = {{"dir", opts.dump_dir}, {"widened_to_f32", nlohmann::json(*widened)}};
    out << "dumped " << all.size() << " tensors to " << opts.dump_dir;
    for (const std::string& w : *widened) out << (w == widened->front() ? "; bf16 written as f32: " : ", ") << w;
    out << "\n";
  }
  bool pass = true;
  const std::string mode = check_mode(original, opts);
  const double work = reference_work(original);
  rep["check"] = {{"requested", opts.verify},       {"mode", mode},
                  {"samples", opts.samples},        {"reference_multiply_adds", work},
                  {"full_check_limit", kFullCheckWork}, {"outputs", nlohmann::json::array()}};
  if (mode == "none") {
    out << "check: skipped (--verify none)\n";
  } else {
    if (mode == "sample")
      out << "check: sampled, " << opts.samples << " elements per output (--verify " << opts.verify << "; the reference"
          << " would take " << work << " multiply-adds)\n";
    auto checks = check_outputs(original, *inputs, *outputs, opts, mode, seed);
    if (!checks) return fail(err, checks.error());
    print_checks(out, original, *checks);
    rep["check"]["outputs"] = report_checks(original, *checks);
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
    nlohmann::json timing;
    if (Status s = time_and_report(**ex, opts.timing, peak, out, &timing); !s) return fail(err, s.error());
    rep["timing"] = timing;
  }
  char times[256];
  std::snprintf(times, sizeof times,
                "time: load %.1f ms, passes %.1f ms, device %.1f ms, set-up %.1f ms, first run %.2f ms, check %.1f ms; "
                "total %.1f ms\n",
                load_ms, passes_ms, device_ms, setup_ms, run_ms, check_ms, ms_since(start));
  out << times << "result: " << (pass ? "pass" : "FAIL") << "\n";
  rep["times_ms"] = {{"load", load_ms},     {"passes", passes_ms}, {"device", device_ms}, {"setup", setup_ms},
                     {"first_run", run_ms}, {"check", check_ms},   {"total", ms_since(start)}};
  rep["result"] = pass ? "pass" : "fail";
  return pass ? Exit::ok : Exit::check_failed;
}

}  // namespace

Exit run_command(const RunOptions& opts, std::ostream& out, std::ostream& err) {
  nlohmann::json rep = report_start();
  rep["timing"] = nullptr;
  // Errors are kept to be put in the report as well; they are only written on the way out.
  std::ostringstream errors;
  const Exit code = run_graph(opts, out, opts.report_path.empty() ? err : errors, rep);
  if (opts.report_path.empty()) return code;
  err << errors.str();
  rep["exit_code"] = static_cast<int>(code);
  if (code != Exit::ok && code != Exit::check_failed) {
    std::string message = errors.str();
    while (!message.empty() && message.back() == '\n') message.pop_back();
    rep["result"] = "error";
    rep["error"] = message.empty() ? "exit status " + std::to_string(static_cast<int>(code)) : message;
  }
  if (Status s = write_report(opts.report_path, rep); !s) {
    err << "gexec: " << s.error().message << "\n";
    return code == Exit::ok ? s.error().code : code;
  }
  out << "wrote the report to " << opts.report_path << "\n";
  return code;
}

}  // namespace gexec
