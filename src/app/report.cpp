// Text formatting of a run's results.
#include "report.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

namespace gexec {

std::unordered_map<std::string_view, TensorId> tensor_ids(const Graph& g) {
  std::unordered_map<std::string_view, TensorId> ids;
  ids.reserve(g.tensors.size());
  for (size_t t = 0; t < g.tensors.size(); ++t) ids.emplace(g.tensors[t].name, TensorId(t));
  return ids;
}

std::string human_bytes(int64_t bytes) {
  const char* unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = double(bytes);
  int u = 0;
  while (v >= 1024 && u < 6) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
  return buf;
}

void print_plan(std::ostream& out, const Graph& g, const BufferPlan& plan) {
  int64_t placed = 0;
  for (int64_t off : plan.offset) placed += off >= 0;
  if (!plan.fits) {
    out << "buffers: the arena would exceed " << plan.arena_bytes << " bytes (2^63 - 1, the largest size) for "
        << placed << " tensors; no device can hold it\n";
  } else {
    out << "buffers: one arena of " << human_bytes(plan.arena_bytes) << " for " << placed << " tensors ("
        << human_bytes(plan.total_bytes) << " without reuse), " << kArenaAlignment << "-byte aligned\n";
  }
  const int64_t beyond = std::numeric_limits<int64_t>::max();
  for (size_t t = 0; t < g.tensors.size(); ++t)
    if (plan.offset[t] >= 0) {
      out << "  " << g.tensors[t].name;
      if (plan.offset[t] == beyond) out << " @beyond 2^63";
      else out << " @" << plan.offset[t];
      out << " (" << human_bytes(g.tensors[t].bytes()) << ")\n";
    }
}

std::string value_text(double v) {
  if (std::isnan(v)) return "NaN (non-finite)";
  if (std::isinf(v)) return v > 0 ? "inf (non-finite)" : "-inf (non-finite)";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.8g", v);
  return buf;
}

void print_checks(std::ostream& out, const Graph& g, const std::vector<OutputCheck>& checks) {
  char line[512];
  out << "check: pass when |got - ref| <= atol + rtol * scale, scale bounding the magnitudes that produced each element\n";
  std::snprintf(line, sizeof line, "  %-16s %-5s %-14s %10s %10s %10s %9s %9s %12s  %s\n", "output", "dtype", "shape",
                "max_abs", "max_rel", "rel_fro", "atol", "rtol", "beyond", "result");
  out << line;
  // Outputs are found by name through one map: Graph::find_tensor is a linear search, and a
  // graph may have tens of thousands of outputs.
  const auto ids = tensor_ids(g);
  for (const OutputCheck& c : checks) {
    const Tensor& t = g.tensor(ids.at(c.name));
    std::string beyond = std::to_string(c.beyond) + "/" + std::to_string(c.checked);
    std::snprintf(line, sizeof line, "  %-16s %-5s %-14s %10.3e %10.3e %10.3e %9.2e %9.2e %12s  %s\n", c.name.c_str(),
                  std::string(dtype_name(c.dtype)).c_str(), shape_str(t.shape).c_str(), c.max_abs, c.max_rel,
                  c.rel_fro, c.tol.atol, c.tol.rtol, beyond.c_str(), c.pass ? "pass" : "FAIL");
    out << line;
    if (c.worst >= 0) {
      std::snprintf(line, sizeof line, "      worst element %lld: got %s, expected %s\n", (long long)c.worst,
                    value_text(c.worst_got).c_str(), value_text(c.worst_ref).c_str());
      out << line;
    }
    // inf against inf is a failure, not a match: say so rather than let "got inf, expected inf" puzzle.
    if (c.got_nonfinite > 0 || c.ref_nonfinite > 0)
      out << "      the output holds " << c.got_nonfinite << " non-finite value" << (c.got_nonfinite == 1 ? "" : "s")
          << " (inf or NaN) and the reference " << c.ref_nonfinite << ", of " << c.checked
          << " checked; a non-finite element never passes\n";
    out << "      checked " << (c.mode == "sample" ? "a sample of " + std::to_string(c.checked) + " of the "
                                                     : std::string("all "))
        << c.count << " elements against the " << (c.mode == "sample" ? "sampled" : "full") << " reference\n";
  }
}

}  // namespace gexec
