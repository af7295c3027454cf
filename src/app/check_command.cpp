// `gexec check GRAPH --inputs DIR --outputs DIR`: anyone's outputs against gexec's reference.
#include <cmath>
#include <filesystem>
#include <sstream>

#include "gexec/app/commands.hpp"
#include "gexec/app/run_report.hpp"
#include "gexec/app/model_file.hpp"
#include "gexec/io/load.hpp"
#include "gexec/io/text.hpp"
#include "gexec/ir/block_scale.hpp"
#include "gexec/ir/f8_rules.hpp"
#include "gexec/verify/compare.hpp"
#include "gexec/verify/exact.hpp"
#include "check.hpp"
#include "dump.hpp"
#include "json_report.hpp"
#include "output_paths.hpp"
#include "report.hpp"
#include "target.hpp"
#include "tensor_files.hpp"

namespace gexec {
namespace {

using TensorBytes = std::map<std::string, std::vector<uint8_t>>;

// Every graph input and output from its file; all problems, one line each.
Result<std::pair<TensorBytes, TensorBytes>> read_files(const Graph& g, const CheckOptions& opts) {
  TensorBytes inputs, outputs, all;
  std::string problems;
  const GraphIndex idx(g);
  // Block-scaled f8 tensors last: their real values are stored with their S, read first.
  for (const bool blocks : {false, true}) {
    auto read = [&](const std::string& dir, TensorId id, TensorBytes& into) {
      const Tensor& t = g.tensor(id);
      if (t.scale.is_block() != blocks) return;
      const std::optional<Tensor> with_s = with_scale_from(g, t, all);
      if (!with_s) return;  // S's own file is missing or refused: that is its problem line
      auto b = read_tensor_file(dir, *with_s);
      // A given S as --load-inputs takes it: every value a positive, finite f32.
      if (b && idx.is_input(id) && is_block_scale(g, id)) {
        std::vector<double> s(size_t(t.numel()));
        for (size_t i = 0; i < s.size(); ++i) s[i] = load_as_float(b->data(), t.dtype, int64_t(i));
        if (const std::string why = block_scale_values_problem(s); !why.empty())
          b = bad_input(path_text((std::filesystem::path(dir) / tensor_file_name(t.name)).string()) +
                        ": block scale " + quote_text(t.name) + " " + why);
      }
      if (b) all[t.name] = into[t.name] = std::move(*b);
      else problems += (problems.empty() ? "" : "\n") + b.error().message;
    };
    for (size_t t = 0; t < g.tensors.size(); ++t)
      if (idx.is_input(TensorId(t))) read(opts.inputs_dir, TensorId(t), inputs);
    for (TensorId id : g.outputs) read(opts.outputs_dir, id, outputs);
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

// What the check reads and its --report must not overwrite: the graph, its init.file arrays and
// the .npy file of every graph input and output.
std::vector<std::pair<std::string, std::string>> check_inputs(const Graph& g, const CheckOptions& opts) {
  namespace fs = std::filesystem;
  std::vector<std::pair<std::string, std::string>> in{{"the graph file", opts.graph_path}};
  const fs::path graph_dir = fs::path(opts.graph_path).parent_path();
  for (const Tensor& t : g.tensors)
    if (t.init && t.init->kind == InitKind::file) {
      const fs::path p(t.init->file);
      in.push_back({"the init.file of tensor " + quote_text(t.name), (p.is_relative() ? graph_dir / p : p).string()});
    }
  const GraphIndex idx(g);
  for (size_t t = 0; t < g.tensors.size(); ++t)
    if (idx.is_input(TensorId(t)))
      in.push_back({"the --inputs file of " + quote_text(g.tensors[t].name),
                    (fs::path(opts.inputs_dir) / tensor_file_name(g.tensors[t].name)).string()});
  for (TensorId id : g.outputs)
    in.push_back({"the --outputs file of " + quote_text(g.tensor(id).name),
                  (fs::path(opts.outputs_dir) / tensor_file_name(g.tensor(id).name)).string()});
  return in;
}

// The check, filling `summary` (the same section `run` reports); an error returns early.
// A --report refused by the checks of its path sets *report_refused: it is not written at all.
Status check_into(const CheckOptions& opts, std::ostream& out, nlohmann::json& rep, CheckSummary& summary,
                  bool* report_refused) {
  const std::vector<std::pair<std::string, std::string>> report{{"--report", opts.report_path}};
  // Before the graph is read, so that a report about a bad graph never lands on the graph.
  if (Status s = check_not_inputs(report, {{"the graph file", opts.graph_path}}, opts.force); !s) {
    *report_refused = true;
    return s;
  }
  // An ONNX model's open dimensions: --dim, else the shapes of the --inputs files (as --load-inputs).
  auto loaded = load_model_file(opts.graph_path, {opts.dims, opts.inputs_dir});
  if (!loaded) return loaded.error();
  const Graph& g = loaded->graph;
  if (Status s = check_output_files(report, check_inputs(g, opts), opts.force); !s) {
    *report_refused = true;
    return s;
  }
  const uint64_t seed = opts.seed.value_or(g.seed.value_or(0));
  rep["graph"] = {{"name", g.name}, {"file", opts.graph_path}, {"seed", seed}, {"tensors", g.tensors.size()},
                  {"ops", g.ops.size()}};
  out << "graph " << g.name << " (" << opts.graph_path << "): " << g.tensors.size() << " tensors, " << g.ops.size()
      << " ops\n";
  // The modes, parsed once.
  auto verify = parse_verify_mode(opts.verify);
  if (!verify) return verify.error();
  auto backend = parse_backend_choice(opts.backend);
  if (!backend) return backend.error();
  auto precision = parse_precision_choice(opts.precision);
  if (!precision) return precision.error();
  const bool tf32 = *precision == PrecisionChoice::tf32;
  auto files = read_files(g, opts);
  if (!files) return files.error();
  out << "read " << files->first.size() << " inputs from " << opts.inputs_dir << " and " << files->second.size()
      << " outputs from " << opts.outputs_dir << "\n";

  Precision prec;
  prec.tf32 = tf32;
  // No kernel to declare the accumulator: f8 products are assumed to come from FP8 tensor cores.
  if (has_f8_product(g)) prec.merge(fp8_tensor_core_precision(has_fast_accum(g)));
  // The products summed on a CUDA device where there is one (--backend), else on the CPU.
  std::string note;
  auto engine = open_reference_engine(*backend, opts.device, &note);
  if (!engine) return engine.error();
  CheckPlan plan = plan_check(g, *verify, opts.verify_budget, opts.samples, prec, *engine != nullptr);
  if (plan.device && note.empty()) note = first_refusal(**engine, g, prec);
  // A device asked for by name that cannot take the products is an error with the figures.
  if (plan.device && !note.empty() && *backend == BackendChoice::cuda) return runtime_error("--backend cuda: " + note);
  if (plan.device && !note.empty()) {
    engine->reset();
    plan = plan_check(g, *verify, opts.verify_budget, opts.samples, prec, false);
  }
  if (!note.empty()) {
    out << "note: the reference runs on the CPU: " << note << "\n";
    rep["notes"].push_back("the reference runs on the CPU: " + note);
  }
  CheckSettings settings;
  settings.mode = plan.mode;
  settings.tile = plan.tile;
  settings.samples = opts.samples;
  settings.seed = seed;
  settings.atol = opts.atol;
  settings.rtol = opts.rtol;
  settings.precision = prec;
  settings.device = plan.device ? engine->get() : nullptr;
  if (settings.mode == VerifyMode::exact) GEXEC_TRY(check_exact_inputs(g, files->first));
  summary = check_summary(*verify, plan, settings, reference_work(g), opts.verify_budget, settings.device);
  print_check_mode(out, summary);
  std::vector<std::string> notes;
  auto checks = check_outputs(g, files->first, files->second, settings, &notes);
  for (const std::string& n : notes) {
    out << "note: " << n << "\n";
    rep["notes"].push_back(n);
  }
  if (!checks) return checks.error();
  const auto ids = tensor_ids(g);  // find_tensor per output would be quadratic
  for (OutputCheck& c : *checks) {
    const auto id = ids.find(c.name);
    std::vector<int64_t> shape = id == ids.end() ? std::vector<int64_t>{} : g.tensor(id->second).shape;
    summary.outputs.push_back({std::move(c), std::move(shape)});
  }
  summary.compared = true;
  print_checks(out, summary.outputs);
  return {};
}

}  // namespace

Exit check_command(const CheckOptions& opts, std::ostream& stdout_stream, std::ostream& err) {
  // --report -: the JSON alone on stdout, the text on stderr (as `gexec run` does).
  const bool json_on_stdout = opts.report_path == "-";
  std::ostream& out = json_on_stdout ? err : stdout_stream;
  nlohmann::json rep = {{"format", kReportFormat}, {"version", kReportVersion}, {"gexec_version", GEXEC_VERSION},
                        {"command", "check"},      {"result", "error"},       {"exit_code", 0},
                        {"error", nullptr},        {"timing", nullptr},       {"warnings", nlohmann::json::array()},
                        {"notes", nlohmann::json::array()}};
  CheckSummary summary;
  bool report_refused = false;
  const Status s = check_into(opts, out, rep, summary, &report_refused);
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
  if (opts.report_path.empty() || report_refused) return code;
  if (Status w = write_report(opts.report_path, rep, &stdout_stream); !w) {
    err << "gexec: " << w.error().message << "\n";
    return code == Exit::ok ? w.error().code : code;
  }
  if (!json_on_stdout) out << "wrote the report to " << opts.report_path << "\n";
  return code;
}

}  // namespace gexec
