// Text formatting of a run's results.
#include "report.hpp"

#include <cstdio>

namespace gexec {

std::string human_bytes(int64_t bytes) {
  const char* unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = double(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
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
  out << "buffers: one arena of " << human_bytes(plan.arena_bytes) << " for " << placed << " tensors ("
      << human_bytes(plan.total_bytes) << " without reuse), " << kArenaAlignment << "-byte aligned\n";
  for (size_t t = 0; t < g.tensors.size(); ++t)
    if (plan.offset[t] >= 0)
      out << "  " << g.tensors[t].name << " @" << plan.offset[t] << " (" << human_bytes(g.tensors[t].bytes()) << ")\n";
}

void print_checks(std::ostream& out, const Graph& g, const std::vector<OutputCheck>& checks) {
  char line[512];
  const bool exact = !checks.empty() && checks.front().tol.exact;
  if (exact)
    out << "check: exact, every element bit for bit equal to the reference\n";
  else
    out << "check: pass when every |got - ref| <= its bound (output rounding, intermediate roundings, accumulation,"
           " atol) and ||got - ref|| <= the normwise bound; ratios are error / bound\n";
  std::snprintf(line, sizeof line, "  %-16s %-5s %-14s %10s %10s %10s %10s %9s %9s %12s  %s\n", "output", "dtype",
                "shape", "max_abs", "max_rel", "rel_fro", "fro_bound", "elem_rat", "norm_rat", "beyond", "result");
  out << line;
  for (const OutputCheck& c : checks) {
    const TensorId id = g.find_tensor(c.name);
    const std::string shape = id == kNone ? "?" : shape_str(g.tensor(id).shape);
    std::string beyond = std::to_string(c.beyond) + "/" + std::to_string(c.checked);
    std::snprintf(line, sizeof line, "  %-16s %-5s %-14s %10.3e %10.3e %10.3e %10.3e %9.3f %9.3f %12s  %s\n",
                  c.name.c_str(), std::string(dtype_name(c.dtype)).c_str(), shape.c_str(), c.max_abs, c.max_rel,
                  c.rel_fro, c.rel_fro_bound, c.max_ratio, c.norm_ratio, beyond.c_str(), c.pass ? "pass" : "FAIL");
    out << line;
    if (c.worst >= 0) {
      std::snprintf(line, sizeof line, "      worst element %lld: got %.8g, expected %.8g, bound %.3g\n",
                    (long long)c.worst, c.worst_got, c.worst_ref, c.worst_bound);
      out << line;
    }
    out << "      checked " << (c.mode == "sample" ? "a sample of " + std::to_string(c.checked) + " of the "
                                                     : std::string("all "))
        << c.count << " elements against the " << (c.mode == "sample" ? "sampled" : "full") << " reference"
        << (c.mode == "exact" ? ", bit for bit" : "") << "\n";
  }
}

}  // namespace gexec
