// The JSON report, built from the run's report section by section.
#include "json_report.hpp"
#include "tp_report.hpp"

#include <cmath>

#include "gexec/app/commands.hpp"
#include "gexec/io/text.hpp"
#include "expect.hpp"
#include "output_file.hpp"
#include "timing_report.hpp"

namespace gexec {

using nlohmann::json;

namespace {

json graph_json(const GraphSummary& g) {
  return {{"name", g.name}, {"file", g.file},       {"format", g.format}, {"source", g.source},
          {"seed", g.seed}, {"tensors", g.tensors}, {"ops", g.ops}};
}

json device_json(const DeviceSummary& d) {
  const DeviceCaps& caps = d.caps;
  return {{"name", caps.name},
          {"backend", std::string(backend_name(d.backend))},
          {"compute_capability", caps.cc},
          {"detected", caps.detected},
          {"total_bytes", caps.total_bytes},
          {"sm_count", caps.sm_count},
          {"versions", {{"gexec", GEXEC_VERSION}, {"cuda_runtime", caps.cuda_runtime}, {"cublaslt", caps.cublaslt}}},
          {"description", describe(caps)}};
}

json passes_json(const PassesSummary& p) {
  json a = json::array();
  for (const PassRecord& r : p.records)
    a.push_back({{"name", r.name}, {"changed", r.changed}, {"ms", r.millis}, {"notes", r.notes}});
  return a;
}

json kernels_json(const std::vector<KernelChoice>& kernels) {
  json a = json::array();
  for (const KernelChoice& c : kernels) {
    json rejected = json::array();
    for (const KernelChoice::Rejected& r : c.rejected) rejected.push_back({{"kernel", r.kernel}, {"reason", r.reason}});
    a.push_back({{"op", c.op},
                 {"type", c.type},
                 {"kernel", c.kernel.empty() ? json(nullptr) : json(c.kernel)},
                 {"hoisted", c.hoisted},
                 {"notes", c.notes},
                 {"rejected", rejected}});
    // Known once the kernel is prepared: the candidate it runs (--algo takes the index).
    if (!c.gemm_command.empty()) a.back()["gemm_command"] = c.gemm_command;
    if (c.variants > 0)
      a.back()["algo"] = {{"index", c.variant}, {"candidates", c.variants}, {"config", c.algo}};
  }
  return a;
}

json buffers_json(const BufferSummary& b) {
  json tensors = json::array();
  for (const PlacedBuffer& t : b.tensors) tensors.push_back({{"name", t.tensor}, {"offset", t.offset}, {"bytes", t.bytes}});
  return {{"arena_bytes", b.arena_bytes},
          {"peak_bytes", b.arena_bytes},
          {"total_bytes", b.total_bytes},
          {"alignment", b.alignment},
          {"tensors", tensors}};
}

json output_json(const CheckedOutput& o) {
  const OutputCheck& c = o.check;
  return {{"name", c.name}, {"dtype", std::string(dtype_name(c.dtype))}, {"shape", o.shape}, {"mode", compare_mode_name(c.mode)},
          {"count", c.count},
          {"checked", c.checked},
          {"max_abs", finite_or_null(c.max_abs)},
          {"max_rel", finite_or_null(c.max_rel)},
          {"rel_fro", finite_or_null(c.rel_fro)},
          {"rel_fro_bound", finite_or_null(c.rel_fro_bound)},
          {"norm_ratio", finite_or_null(c.norm_ratio)},
          {"max_ratio", finite_or_null(c.max_ratio)},
          {"worst", c.worst < 0 ? json(nullptr)
                                : json{{"index", c.worst},
                                       {"got", finite_or_null(c.worst_got)},
                                       {"ref", finite_or_null(c.worst_ref)},
                                       {"bound", finite_or_null(c.worst_bound)}}},
          {"beyond", c.beyond},
          {"unbounded", c.unbounded},
          {"atol", c.tol.atol},
          {"rtol", c.tol.rtol},
          {"exact", c.tol.exact},
          {"reference", reference_site_name(c.reference)},
          {"cross_checked", c.cross_checked},
          {"tile", c.tile},
          {"checked_by", c.checked_by},
          {"pass", c.pass}};
}

json warnings_json(const std::vector<RunWarning>& warnings) {
  json a = json::array();
  for (const RunWarning& w : warnings) a.push_back({{"kind", std::string(warning_kind_name(w.kind))}, {"message", w.message}});
  return a;
}

}  // namespace

json finite_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json check_json(const CheckSummary& c) {
  json outputs = json::array();
  for (const CheckedOutput& o : c.outputs) outputs.push_back(output_json(o));
  return {{"requested", verify_mode_name(c.requested)},
          {"mode", verify_mode_name(c.mode)},
          {"samples", c.samples},
          {"precision", precision_choice_name(c.precision)},
          {"tile", c.tile},
          {"reference_multiply_adds", c.reference_work},
          {"budget_s", c.budget_s},
          {"estimate_s", c.estimate_s >= 0 ? json(c.estimate_s) : json(nullptr)},
          {"reference", reference_site_name(c.reference)},
          {"device", c.device.empty() ? json(nullptr) : json(c.device)},
          {"why", c.why},
          {"outputs", outputs}};
}

json report_json(const RunReport& r) {
  json rep = {{"format", kReportFormat},
              {"version", kReportVersion},
              {"gexec_version", GEXEC_VERSION},
              {"command", "run"},
              {"result", std::string(result_name(r.result))},
              {"exit_code", static_cast<int>(r.exit_code())},
              {"error", r.error ? json("gexec: " + r.error->message) : json(nullptr)},  // as printed
              {"timing", nullptr},
              {"warnings", warnings_json(r.warnings)},
              {"notes", r.notes}};
  if (r.graph) rep["graph"] = graph_json(*r.graph);
  if (r.passes) {
    rep["passes"] = passes_json(*r.passes);
    rep["ops_after_passes"] = r.passes->ops_after;
  }
  if (r.device) rep["device"] = device_json(*r.device);
  if (r.device)
    rep["options"] = {{"pad", std::string(pad_policy_name(r.kernel_options.pad))},
                      {"precision", r.kernel_options.tf32 ? "tf32" : "f32"}};
  if (r.kernels) rep["kernels"] = kernels_json(*r.kernels);
  if (r.buffers) rep["buffers"] = buffers_json(*r.buffers);
  if (r.loaded_inputs) {
    rep["inputs"]["loaded"] = *r.loaded_inputs;
    rep["inputs"]["exact_range"] = r.exact_range ? json(*r.exact_range) : json(nullptr);
  }
  if (r.dump) rep["dump"] = {{"dir", r.dump->dir}, {"widened_to_f32", r.dump->widened_to_f32}};
  if (r.check) rep["check"] = check_json(*r.check);
  if (r.expect) rep["expect"] = expect_json(*r.expect);
  if (r.timing && r.timing->complete) rep["timing"] = timing_json(*r.timing);
  if (r.tp) rep["tensor_parallel"] = tp_json(*r.tp);
  if (r.times_ms) {
    const PhaseTimes& t = *r.times_ms;
    rep["times_ms"] = {{"load", t.load},           {"passes", t.passes}, {"device", t.device}, {"setup", t.setup},
                       {"first_run", t.first_run}, {"check", t.check},   {"total", t.total}};
  }
  return rep;
}

// Any text may have reached the report (file names, messages quoting a file's bytes): invalid
// UTF-8 is replaced rather than thrown on, and the file is replaced only once written whole.
Status write_report(const std::string& path, const json& doc, std::ostream* stdout_stream) {
  const Status s = write_output_file(path, dump_json(doc, 2) + "\n", stdout_stream);
  if (!s) return s.error().with("--report");
  return {};
}

nlohmann::json common_options_json(const RunOptions& o) {
  return {{"backend", o.backend},
          {"device", o.device},
          {"pad", o.pad},
          {"verify", o.verify},
          {"verify_budget", o.verify_budget},
          {"iters", o.timing.iters},
          {"warmup", o.timing.warmup_iters},
          {"warmup_ms", o.timing.warmup_ms},
          {"duration_s", o.timing.duration_s},
          {"cuda_graph", o.timing.cuda_graph},
          {"autotune", o.autotune},
          {"algo", o.algo ? nlohmann::json(*o.algo) : nlohmann::json(nullptr)},
          {"kernel", o.kernels},
          {"algo_space", o.algo_space}};
}

}  // namespace gexec
