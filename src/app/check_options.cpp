// The rules of the check's options, shared by the command line and the Python module.
#include "gexec/app/check_options.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

namespace gexec {
namespace {

// The shortest text that reads back as d: 0, 3600000, 0.5, 1e300, inf, nan.
std::string number_text(double d) {
  char buf[40];
  if (std::isfinite(d) && d == std::trunc(d) && std::fabs(d) < 1e16) {
    std::snprintf(buf, sizeof buf, "%.0f", d);
    return buf;
  }
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, d);
    if (!std::isfinite(d) || std::strtod(buf, nullptr) == d) break;
  }
  std::string s = buf;
  // "1e+300" -> "1e300", "1e-07" -> "1e-7"
  if (const size_t e = s.find('e'); e != std::string::npos) {
    std::string exp = s.substr(e + 1);
    const bool neg = !exp.empty() && exp[0] == '-';
    if (!exp.empty() && (exp[0] == '+' || exp[0] == '-')) exp.erase(0, 1);
    exp.erase(0, std::min(exp.find_first_not_of('0'), exp.size() - 1));
    s = s.substr(0, e + 1) + (neg ? "-" : "") + exp;
  }
  return s;
}

std::string joined(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

const std::vector<std::string>& run_verify_modes() {
  static const std::vector<std::string> m{"auto", "full", "sample", "exact", "none"};
  return m;
}
const std::vector<std::string>& check_verify_modes() {
  static const std::vector<std::string> m{"auto", "full", "sample", "exact"};
  return m;
}
const std::vector<std::string>& python_verify_modes() {
  static const std::vector<std::string> m{"auto", "full", "sample", "none"};
  return m;
}

std::string number_range_text(double lo, double hi, bool open_lo) {
  return std::string("expected a finite number ") + (open_lo ? "above " : "from ") + number_text(lo) +
         (open_lo ? " up to " : " to ") + number_text(hi);
}

bool number_in_range(double v, double lo, double hi, bool open_lo) {
  return std::isfinite(v) && v >= lo && v <= hi && !(open_lo && v == lo);
}

Status check_option_values(const std::string& verify, const std::vector<std::string>& modes,
                           std::optional<double> atol, std::optional<double> rtol, int64_t samples) {
  bool known = false;
  for (const std::string& m : modes) known = known || m == verify;
  if (!known) {
    std::string why = "verify: \"" + verify + "\"; expected one of " + joined(modes);
    if (verify == "exact")
      why += " (exact mode draws small integer inputs of its own; here the inputs are the caller's)";
    return bad_input(why);
  }
  for (const auto& [name, v] : {std::pair{"atol", atol}, std::pair{"rtol", rtol}})
    if (v && !number_in_range(*v, 0, kMaxAllowance))
      return bad_input(std::string(name) + ": " + number_range_text(0, kMaxAllowance) + ", got " + number_text(*v));
  if (samples < kMinCheckSamples)
    return bad_input("samples: expected an integer from " + std::to_string(kMinCheckSamples) + " to " +
                     std::to_string(std::numeric_limits<int64_t>::max()) + ", got " + std::to_string(samples));
  return {};
}

}  // namespace gexec
