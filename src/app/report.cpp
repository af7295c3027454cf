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
  out << "check: pass when |got - ref| <= atol + rtol * scale, scale bounding the magnitudes that produced each element\n";
  std::snprintf(line, sizeof line, "  %-16s %-5s %-14s %10s %10s %10s %9s %9s %12s  %s\n", "output", "dtype", "shape",
                "max_abs", "max_rel", "rel_fro", "atol", "rtol", "beyond", "result");
  out << line;
  for (const OutputCheck& c : checks) {
    const Tensor& t = g.tensor(g.find_tensor(c.name));
    std::string beyond = std::to_string(c.beyond) + "/" + std::to_string(c.checked);
    std::snprintf(line, sizeof line, "  %-16s %-5s %-14s %10.3e %10.3e %10.3e %9.2e %9.2e %12s  %s\n", c.name.c_str(),
                  std::string(dtype_name(c.dtype)).c_str(), shape_str(t.shape).c_str(), c.max_abs, c.max_rel,
                  c.rel_fro, c.tol.atol, c.tol.rtol, beyond.c_str(), c.pass ? "pass" : "FAIL");
    out << line;
    if (c.worst >= 0) {
      std::snprintf(line, sizeof line, "      worst element %lld: got %.8g, expected %.8g\n", (long long)c.worst,
                    c.worst_got, c.worst_ref);
      out << line;
    }
    out << "      checked " << (c.mode == "sample" ? "a sample of " + std::to_string(c.checked) + " of the "
                                                     : std::string("all "))
        << c.count << " elements against the " << (c.mode == "sample" ? "sampled" : "full") << " reference\n";
  }
}

}  // namespace gexec
