// `gexec check GRAPH --inputs DIR --outputs DIR`: anyone's outputs against gexec's reference.
#include <cmath>
#include <sstream>

#include "gexec/app/commands.hpp"
#include "gexec/app/run_report.hpp"
#include "gexec/app/model_file.hpp"
#include "gexec/io/load.hpp"
#include "gexec/verify/compare.hpp"
#include "gexec/verify/exact.hpp"
#include "check.hpp"
#include "json_report.hpp"
#include "report.hpp"
#include "tensor_files.hpp"

namespace gexec {
namespace {

using TensorBytes = std::map<std::string, std::vector<uint8_t>>;

// Every graph input and output from its file; all problems, one line each.
Result<std::pair<TensorBytes, TensorBytes>> read_files(const Graph& g, const CheckOptions& opts) {
  TensorBytes inputs, outputs;
  std::string problems;
  const GraphIndex idx(g);
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    if (!idx.is_input(TensorId(t))) continue;
    auto b = read_tensor_file(opts.inputs_dir, g.tensors[t]);
    if (b) inputs[g.tensors[t].name] = std::move(*b);
    else problems += (problems.empty() ? "" : "\n") + b.error().message;
  }
  for (TensorId id : g.outputs) {
    auto b = read_tensor_file(opts.outputs_dir, g.tensor(id));
    if (b) outputs[g.tensor(id).name] = std::move(*b);
    else problems += (problems.empty() ? "" : "\n") + b.error().message;
  }
  if (!problems.empty()) return bad_input(problems);
  return std::pair{std::move(inputs), std::move(outputs)};
}

// Exact mode vouches for bit equality only where the inputs keep the graph exact.
Status check_exact_inputs(const Graph& g, const TensorBytes& inputs) {
  auto range = exact_range(g);
  if (!range) return range.error();
  for (const Tensor& t : g.tensors) {
    const auto it = inputs.find(t.name);
    if (it == inputs.end()) continue;
    for (int64_t i = 0; i < t.numel(); ++i) {
      const double v = load_as_float(it->second.data(), t.dtype, i);
      if (v != std::nearbyint(v) || std::fabs(v) > double(*range))
        return bad_input("--verify exact: input " + t.name + " holds " + std::to_string(v) +
                         ", not an integer in -" + std::to_string(*range) + ".." + std::to_string(*range) +
                         " (the range that keeps this graph exact)");
    }
  }
  return {};
}

// The check, filling `summary` (the same section `run` reports); an error returns early.
Status check_into(const CheckOptions& opts, std::ostream& out, nlohmann::json& rep, CheckSummary& summary) {
  auto loaded = load_model_file(opts.graph_path);
  if (!loaded) return loaded.error();
  const Graph& g = loaded->graph;
  const uint64_t seed = opts.seed.value_or(g.seed.value_or(0));
  rep["graph"] = {{"name", g.name}, {"file", opts.graph_path}, {"seed", seed}, {"tensors", g.tensors.size()},
                  {"ops", g.ops.size()}};
  out << "graph " << g.name << " (" << opts.graph_path << "): " << g.tensors.size() << " tensors, " << g.ops.size()
      << " ops\n";
  if (opts.precision != "f32" && opts.precision != "tf32") return bad_input("--precision: f32 or tf32");
  auto files = read_files(g, opts);
  if (!files) return files.error();
  out << "read " << files->first.size() << " inputs from " << opts.inputs_dir << " and " << files->second.size()
      << " outputs from " << opts.outputs_dir << "\n";

  CheckSettings settings;
  settings.mode = check_mode(g, opts.verify);
  settings.samples = opts.samples;
  settings.seed = seed;
  settings.atol = opts.atol;
  settings.rtol = opts.rtol;
  settings.precision.tf32 = opts.precision == "tf32";
  // No kernel to declare the accumulator: f8 products are assumed to come from FP8 tensor cores.
  if (has_f8_product(g)) settings.precision.merge(fp8_tensor_core_precision(has_fast_accum(g)));
  if (settings.mode == "exact") GEXEC_TRY(check_exact_inputs(g, files->first));
  summary = CheckSummary{opts.verify, settings.mode, opts.precision, opts.samples, reference_work(g), kFullCheckWork,
                         {}, false};
  if (settings.mode == "sample") out << "check: sampled, " << opts.samples << " elements per output\n";
  auto checks = check_outputs(g, files->first, files->second, settings);
  if (!checks) return checks.error();
  for (OutputCheck& c : *checks) {
    const TensorId id = g.find_tensor(c.name);
    std::vector<int64_t> shape = id == kNone ? std::vector<int64_t>{} : g.tensor(id).shape;
    summary.outputs.push_back({std::move(c), std::move(shape)});
  }
  summary.compared = true;
  print_checks(out, summary.outputs);
  return {};
}

}  // namespace

Exit check_command(const CheckOptions& opts, std::ostream& out, std::ostream& err) {
  nlohmann::json rep = {{"format", kReportFormat}, {"version", kReportVersion}, {"gexec_version", GEXEC_VERSION},
                        {"command", "check"},      {"result", "error"},       {"exit_code", 0},
                        {"error", nullptr},        {"timing", nullptr},       {"warnings", nlohmann::json::array()},
                        {"notes", nlohmann::json::array()}};
  CheckSummary summary;
  const Status s = check_into(opts, out, rep, summary);
  Exit code = Exit::ok;
  if (!s) {
    code = s.error().code;
    err << "gexec: " << s.error().message << "\n";
    rep["error"] = "gexec: " + s.error().message;
  } else {
    code = summary.pass() ? Exit::ok : Exit::check_failed;
    rep["check"] = check_json(summary);
    rep["result"] = summary.pass() ? "pass" : "fail";
    out << "result: " << (summary.pass() ? "pass" : "FAIL") << "\n";
  }
  rep["exit_code"] = static_cast<int>(code);
  if (opts.report_path.empty()) return code;
  if (Status w = write_report(opts.report_path, rep); !w) {
    err << "gexec: " << w.error().message << "\n";
    return code == Exit::ok ? w.error().code : code;
  }
  out << "wrote the report to " << opts.report_path << "\n";
  return code;
}

}  // namespace gexec
