// The rules of the check's options (--verify, --atol, --rtol, --samples), in one place: the
// command line's parsers and the Python module's Executor both apply them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gexec/status.hpp"

namespace gexec {

// --atol and --rtol: a finite number from 0 to this.
inline constexpr double kMaxAllowance = 1e300;
// --samples: an integer from 1 (the largest is INT64_MAX).
inline constexpr int64_t kMinCheckSamples = 1;

// The --verify modes of `gexec run` and of `gexec check` (which has no run to leave unchecked),
// and of the Python module's Executor: its inputs are the caller's arrays, and exact mode needs
// the small integers it draws itself (`gexec run --verify exact` refuses --load-inputs the same way).
const std::vector<std::string>& run_verify_modes();    // auto, full, sample, exact, none
const std::vector<std::string>& check_verify_modes();  // auto, full, sample, exact
const std::vector<std::string>& python_verify_modes(); // auto, full, sample, none

// "expected a finite number from LO to HI" ("above LO up to HI" with open_lo), as messages say it.
std::string number_range_text(double lo, double hi, bool open_lo = false);
// Whether v is finite and within the range above.
bool number_in_range(double v, double lo, double hi, bool open_lo = false);

// The options given as values: bad_input naming the first that breaks its rule, e.g.
// "atol: expected a finite number from 0 to 1e300, got inf".
Status check_option_values(const std::string& verify, const std::vector<std::string>& modes,
                           std::optional<double> atol, std::optional<double> rtol, int64_t samples);

}  // namespace gexec
