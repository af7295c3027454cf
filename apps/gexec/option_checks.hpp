// Range checks of gexec's numeric and path options, with bounds a person can read ("an integer
// from 1 to 9223372036854775807", not CLI11's doubles printed to 309 digits).
#pragma once

#include <CLI/CLI.hpp>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>

#include "gexec/app/check_options.hpp"

namespace gexec::cli {

// Shortened for the message: the value may be anything the user typed.
inline std::string shown(const std::string& v) {
  std::string s;
  for (char c : v.substr(0, 40)) s += (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) ? '?' : c;
  return "\"" + s + (v.size() > 40 ? "...\"" : "\"");
}

// A decimal integer in [lo, hi], digits only: "-1" is refused, not wrapped, and 2^64 is refused,
// not saturated.
inline CLI::Validator integer_in(uint64_t lo, uint64_t hi) {
  const std::string desc = "INT in " + std::to_string(lo) + ".." + std::to_string(hi);
  return CLI::Validator(
      [lo, hi](std::string& v) -> std::string {
        const std::string want = "expected an integer from " + std::to_string(lo) + " to " + std::to_string(hi);
        size_t i = 0;
        if (v.empty()) return want + ", got an empty value";
        uint64_t x = 0;
        for (; i < v.size(); ++i) {
          if (v[i] < '0' || v[i] > '9') return want + ", got " + shown(v);
          const uint64_t d = uint64_t(v[i] - '0');
          if (x > (std::numeric_limits<uint64_t>::max() - d) / 10) return want + ", got " + shown(v) + " (too large)";
          x = x * 10 + d;
        }
        if (x < lo || x > hi) return want + ", got " + shown(v);
        return {};
      },
      desc);
}

// A finite decimal number in [lo, hi] (NaN and infinities refused); `open_lo` excludes lo. The
// range and its text are the library's (check_options.hpp), which the Python module applies too.
inline CLI::Validator number_in(double lo, double hi, bool open_lo = false) {
  const std::string want = number_range_text(lo, hi, open_lo);
  return CLI::Validator(
      [=](std::string& v) -> std::string {
        errno = 0;
        char* end = nullptr;
        const double d = std::strtod(v.c_str(), &end);
        if (v.empty() || end != v.c_str() + v.size() || errno == ERANGE || !number_in_range(d, lo, hi, open_lo))
          return want + ", got " + shown(v);
        return {};
      },
      "NUMBER");
}

// Any finite decimal number (NaN and infinities refused).
inline CLI::Validator finite_number() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        errno = 0;
        char* end = nullptr;
        const double d = std::strtod(v.c_str(), &end);
        if (v.empty() || end != v.c_str() + v.size() || errno == ERANGE || !std::isfinite(d))
          return "expected a finite number, got " + shown(v);
        return {};
      },
      "NUMBER");
}

// A path that is not the empty string.
inline CLI::Validator non_empty_path() {
  return CLI::Validator([](std::string& v) -> std::string { return v.empty() ? "the path is empty" : ""; }, "PATH");
}

}  // namespace gexec::cli
