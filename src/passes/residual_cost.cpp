// The residual cost table: read from the file PipelineOptions::residual_costs names (gexec run
// --residual-costs), handed to the passes of one run in their PassContext, looked up by exact shape
// and dtype.
#include "residual_cost.hpp"

#include <fstream>
#include <sstream>

namespace gexec {

Result<ResidualCosts> load_residual_costs(const std::string& path) {
  std::ifstream f(path);
  if (!f) return bad_input("--residual-costs " + path + ": cannot read the file");
  ResidualCosts costs;
  std::string line;
  for (int number = 1; std::getline(f, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos || line[line.find_first_not_of(" \t")] == '#') continue;
    std::istringstream is(line);
    int64_t m = 0, n = 0, k = 0;
    std::string d, rest;
    ResidualCost c;
    if (!(is >> m >> n >> k >> d >> c.fused_us >> c.unfused_us) || (is >> rest) || !parse_dtype(d))
      return bad_input("--residual-costs " + path + ":" + std::to_string(number) +
                       ": expected \"M N K DTYPE FUSED_US UNFUSED_US\", found \"" + line + "\"");
    costs.by_shape[{m, n, k, d}] = c;
  }
  return costs;
}

bool residual_fusion_pays(const ResidualCosts* costs, int64_t m, int64_t n, int64_t k, DType d, std::string* why) {
  const auto it = costs ? costs->by_shape.find({m, n, k, std::string(dtype_name(d))}) : decltype(costs->by_shape.end()){};
  if (!costs || it == costs->by_shape.end()) {
    if (why) *why = "no measurement for this shape: fusing saves a read and a write of C";
    return true;
  }
  const ResidualCost& c = it->second;
  if (why) {
    std::ostringstream os;
    os << "measured " << c.fused_us << " us fused through C against " << c.unfused_us << " us for the product and "
       << "a separate ADD";
    *why = os.str();
  }
  return c.fused_us <= c.unfused_us;
}

}  // namespace gexec
