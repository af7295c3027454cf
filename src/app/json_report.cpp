// The JSON report's sections, built from the run's results.
#include "json_report.hpp"

#include <cmath>

#include "gexec/io/file.hpp"
#include "gexec/io/text.hpp"
#include "report.hpp"

namespace gexec {

using nlohmann::json;

json finite_or_null(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

json report_start() {
  return {{"format", kReportFormat},
          {"version", kReportVersion},
          {"gexec_version", GEXEC_VERSION},
          {"result", "error"},
          {"exit_code", 0},
          {"error", nullptr}};
}

json report_graph(const Graph& g, const std::string& file, uint64_t seed) {
  return {{"name", g.name}, {"file", file}, {"seed", seed}, {"tensors", g.tensors.size()}, {"ops", g.ops.size()}};
}

json report_device(const DeviceCaps& caps, Backend backend) {
  return {{"name", caps.name},
          {"backend", std::string(backend_name(backend))},
          {"compute_capability", caps.cc},
          {"detected", caps.detected},
          {"total_bytes", caps.total_bytes},
          {"sm_count", caps.sm_count},
          {"versions", {{"gexec", GEXEC_VERSION}, {"cuda_runtime", caps.cuda_runtime}, {"cublaslt", caps.cublaslt}}},
          {"description", describe(caps)}};
}

json report_passes(const std::vector<PassRecord>& records) {
  json a = json::array();
  for (const PassRecord& r : records) a.push_back({{"name", r.name}, {"changed", r.changed}, {"ms", r.millis}});
  return a;
}

json report_kernels(const Graph& g, const Selection& s) {
  json a = json::array();
  for (size_t o = 0; o < g.ops.size() && o < s.ops.size(); ++o) {
    const Op& op = g.ops[o];
    const OpChoice& c = s.ops[o];
    json rejected = json::array();
    for (const Rejection& r : c.rejected) rejected.push_back({{"kernel", r.kernel}, {"reason", r.reason}});
    a.push_back({{"op", op.name},
                 {"type", std::string(op_type_name(op.type))},
                 {"kernel", c.kernel ? json(c.kernel->name) : json(nullptr)},
                 {"hoisted", op.hoisted},
                 {"notes", c.notes},
                 {"rejected", rejected}});
  }
  return a;
}

json report_buffers(const Graph& g, const BufferPlan& plan) {
  json tensors = json::array();
  for (size_t t = 0; t < g.tensors.size() && t < plan.offset.size(); ++t)
    if (plan.offset[t] >= 0)
      tensors.push_back({{"name", g.tensors[t].name}, {"offset", plan.offset[t]}, {"bytes", g.tensors[t].bytes()}});
  return {{"arena_bytes", plan.arena_bytes},
          {"peak_bytes", plan.arena_bytes},
          {"total_bytes", plan.total_bytes},
          {"alignment", kArenaAlignment},
          {"tensors", tensors}};
}

json report_checks(const Graph& g, const std::vector<OutputCheck>& checks) {
  json a = json::array();
  const auto ids = tensor_ids(g);  // one map, not a linear search per output
  for (const OutputCheck& c : checks) {
    const auto found = ids.find(c.name);
    json shape = found == ids.end() ? json::array() : json(g.tensor(found->second).shape);
    a.push_back({{"name", c.name},
                 {"dtype", std::string(dtype_name(c.dtype))},
                 {"shape", shape},
                 {"mode", c.mode},
                 {"count", c.count},
                 {"checked", c.checked},
                 {"max_abs", finite_or_null(c.max_abs)},
                 {"max_rel", finite_or_null(c.max_rel)},
                 {"rel_fro", finite_or_null(c.rel_fro)},
                 {"worst", c.worst < 0 ? json(nullptr)
                                       : json{{"index", c.worst},
                                              {"got", finite_or_null(c.worst_got)},
                                              {"ref", finite_or_null(c.worst_ref)}}},
                 {"beyond", c.beyond},
                 {"atol", c.tol.atol},
                 {"rtol", c.tol.rtol},
                 {"pass", c.pass}});
  }
  return a;
}

// Any text may have reached the report (file names, messages quoting a file's bytes): invalid
// UTF-8 is replaced rather than thrown on, and the file is replaced only once written whole.
Status write_report(const std::string& path, const json& doc) {
  Status s = write_file_atomic(path, dump_json(doc, 2) + "\n");
  if (!s) return s.error().with("--report");
  return {};
}

}  // namespace gexec
