// The residual cost table: read once from $GEXEC_RESIDUAL_COSTS, looked up by exact shape and dtype.
#include "residual_cost.hpp"

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

namespace gexec {
namespace {

using Key = std::tuple<int64_t, int64_t, int64_t, std::string>;
struct Cost {
  double fused_us = 0, unfused_us = 0;
};

const std::map<Key, Cost>& table() {
  static const std::map<Key, Cost> t = [] {
    std::map<Key, Cost> m;
    const char* path = std::getenv("GEXEC_RESIDUAL_COSTS");
    if (!path || !*path) return m;
    std::ifstream f(path);
    std::string line;
    while (std::getline(f, line)) {
      if (line.empty() || line[0] == '#') continue;
      std::istringstream is(line);
      int64_t mm = 0, n = 0, k = 0;
      std::string d;
      Cost c;
      if (is >> mm >> n >> k >> d >> c.fused_us >> c.unfused_us) m[{mm, n, k, d}] = c;
    }
    return m;
  }();
  return t;
}

}  // namespace

bool residual_fusion_pays(int64_t m, int64_t n, int64_t k, DType d, std::string* why) {
  const auto& t = table();
  auto it = t.find({m, n, k, std::string(dtype_name(d))});
  if (it == t.end()) {
    if (why) *why = "no measurement for this shape: fusing saves a read and a write of C";
    return true;
  }
  const Cost& c = it->second;
  const bool pays = c.fused_us <= c.unfused_us;
  if (why) {
    std::ostringstream os;
    os << "measured " << c.fused_us << " us fused through C against " << c.unfused_us << " us for the product and "
       << "a separate ADD";
    *why = os.str();
  }
  return pays;
}

}  // namespace gexec
