// Token routing for `gexec gemm --groups` (routing.hpp).
#include "gexec/app/routing.hpp"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <numeric>
#include <string>

#include "gexec/io/file.hpp"

namespace gexec {
namespace {

Result<std::vector<int64_t>> counts_of(std::string_view spec, int64_t groups, int64_t tokens) {
  std::vector<int64_t> c(static_cast<size_t>(groups), 0);
  if (spec == "uniform") {
    for (int64_t g = 0; g < groups; ++g) c[size_t(g)] = tokens / groups + (g < tokens % groups ? 1 : 0);
    return c;
  }
  if (spec.starts_with("zipf:")) {
    const std::string s_text(spec.substr(5));
    char* end = nullptr;
    const double s = std::strtod(s_text.c_str(), &end);
    if (s_text.empty() || *end != '\0' || !(s > 0) || !std::isfinite(s))
      return bad_input("--routing: '" + std::string(spec) + "': zipf:S needs a positive exponent S");
    std::vector<double> exact(static_cast<size_t>(groups));
    double total = 0;
    for (int64_t g = 0; g < groups; ++g) total += exact[size_t(g)] = std::pow(double(g + 1), -s);
    int64_t given = 0;
    for (int64_t g = 0; g < groups; ++g) {
      exact[size_t(g)] *= double(tokens) / total;
      c[size_t(g)] = int64_t(std::floor(exact[size_t(g)]));
      given += c[size_t(g)];
    }
    std::vector<int64_t> order(static_cast<size_t>(groups));
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return exact[size_t(a)] - double(c[size_t(a)]) > exact[size_t(b)] - double(c[size_t(b)]);
    });
    for (int64_t i = 0; i < tokens - given; ++i) ++c[size_t(order[size_t(i)])];
    return c;
  }
  if (spec.starts_with("file:")) {
    const std::string path(spec.substr(5));
    // InputFile refuses a folder or a FIFO (never waits on one) with the system's reason.
    auto f = InputFile::open(path);
    if (!f) return f.error().with("--routing");
    auto text = f->read_all();
    if (!text) return text.error().with("--routing");
    const auto j = nlohmann::json::parse(*text, nullptr, false);
    if (j.is_discarded() || !j.is_array() || int64_t(j.size()) != groups)
      return bad_input("--routing: '" + path + "' must hold a JSON array of " + std::to_string(groups) + " counts");
    int64_t sum = 0;
    for (size_t g = 0; g < j.size(); ++g) {
      // 3 and 3.0 alike, as a graph's i32 `values` takes them.
      const double v = j[g].is_number() ? j[g].get<double>() : -1;
      if (!(v >= 0 && v <= double(INT32_MAX) && v == std::floor(v)))
        return bad_input("--routing: '" + path + "': element " + std::to_string(g) +
                         " is not an integer from 0 to 2^31 - 1");
      sum += c[g] = int64_t(v);
    }
    if (sum != tokens)
      return bad_input("--routing: '" + path + "': the counts sum to " + std::to_string(sum) + ", not the " +
                       std::to_string(tokens) + " tokens");
    return c;
  }
  return bad_input("--routing: '" + std::string(spec) + "' is not uniform, zipf:S or file:F");
}

}  // namespace

Result<std::vector<int32_t>> routing_ends(std::string_view spec, int64_t groups, int64_t tokens) {
  if (groups < 1 || tokens < 1 || tokens > INT32_MAX) return bad_input("--routing: needs G >= 1 and 1 <= T < 2^31");
  auto c = counts_of(spec, groups, tokens);
  if (!c) return c.error();
  std::vector<int32_t> ends(static_cast<size_t>(groups));
  int64_t acc = 0;
  for (int64_t g = 0; g < groups; ++g) ends[size_t(g)] = int32_t(acc += (*c)[size_t(g)]);
  return ends;
}

}  // namespace gexec
