// `gexec check GRAPH --inputs DIR --outputs DIR`: anyone's outputs against gexec's reference.
#include <cmath>
#include <sstream>

#include "gexec/app/commands.hpp"
#include "gexec/io/load.hpp"
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

Exit check_graph(const CheckOptions& opts, std::ostream& out, std::ostream& err, nlohmann::json& rep) {
  auto fail = [&err](const Error& e) {
    err << "gexec: " << e.message << "\n";
    return e.code;
  };
  auto loaded = load_graph_file(opts.graph_path);
  if (!loaded) return fail(loaded.error());
  const Graph& g = *loaded;
  const uint64_t seed = opts.seed.value_or(g.seed.value_or(0));
  rep["graph"] = report_graph(g, opts.graph_path, seed);
  out << "graph " << g.name << " (" << opts.graph_path << "): " << g.tensors.size() << " tensors, " << g.ops.size()
      << " ops\n";
  if (opts.precision != "f32" && opts.precision != "tf32") return fail(bad_input("--precision: f32 or tf32"));
  auto files = read_files(g, opts);
  if (!files) return fail(files.error());
  out << "read " << files->first.size() << " inputs from " << opts.inputs_dir << " and " << files->second.size()
      << " outputs from " << opts.outputs_dir << "\n";

  CheckSettings settings;
  settings.mode = check_mode(g, opts.verify);
  settings.samples = opts.samples;
  settings.seed = seed;
  settings.atol = opts.atol;
  settings.rtol = opts.rtol;
  settings.precision.tf32 = opts.precision == "tf32";
  if (settings.mode == "exact")
    if (Status s = check_exact_inputs(g, files->first); !s) return fail(s.error());
  rep["check"] = report_check_section(opts.verify, settings.mode, opts.samples, reference_work(g), kFullCheckWork,
                                      opts.precision);
  if (settings.mode == "sample") out << "check: sampled, " << opts.samples << " elements per output\n";
  auto checks = check_outputs(g, files->first, files->second, settings);
  if (!checks) return fail(checks.error());
  print_checks(out, g, *checks);
  rep["check"]["outputs"] = report_checks(g, *checks);
  bool pass = true;
  for (const OutputCheck& c : *checks) pass &= c.pass;
  out << "result: " << (pass ? "pass" : "FAIL") << "\n";
  rep["result"] = pass ? "pass" : "fail";
  return pass ? Exit::ok : Exit::check_failed;
}

}  // namespace

Exit check_command(const CheckOptions& opts, std::ostream& out, std::ostream& err) {
  nlohmann::json rep = report_start();
  rep["command"] = "check";
  rep["timing"] = nullptr;
  std::ostringstream errors;
  const Exit code = check_graph(opts, out, opts.report_path.empty() ? err : errors, rep);
  if (opts.report_path.empty()) return code;
  err << errors.str();
  rep["exit_code"] = static_cast<int>(code);
  if (code != Exit::ok && code != Exit::check_failed) {
    std::string message = errors.str();
    while (!message.empty() && message.back() == '\n') message.pop_back();
    rep["result"] = "error";
    rep["error"] = message;
  }
  if (Status s = write_report(opts.report_path, rep); !s) {
    err << "gexec: " << s.error().message << "\n";
    return code == Exit::ok ? s.error().code : code;
  }
  out << "wrote the report to " << opts.report_path << "\n";
  return code;
}

}  // namespace gexec
