// The text rendering of a run's report: the lines `gexec run` prints, section by section.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "gexec/app/run_report.hpp"

namespace gexec {

std::string human_bytes(int64_t bytes);
void print_plan(std::ostream& out, const BufferSummary& plan);
// "1.5", or "inf (non-finite)" / "NaN (non-finite)".
std::string value_text(double v);
// How the outputs will be checked (sampled by strata, or on a device), before the reference runs.
void print_check_mode(std::ostream& out, const CheckSummary& c);
// The check's table: per output the errors, the normwise bound and the ratios to both bounds.
void print_checks(std::ostream& out, const std::vector<CheckedOutput>& checks);

// Prints a report on `out` (and its warnings through spdlog) as the run fills it: each update
// prints the sections filled since the last one, so a caller can update after every section and
// once more at the end. The error is not printed: the command prints it once.
class TextReport {
 public:
  explicit TextReport(std::ostream& out) : out_(out) {}
  void update(const RunReport& r);

 private:
  std::ostream& out_;
  size_t next_section_ = 0;
  size_t warnings_logged_ = 0;
};

// The whole report at once.
void print_report(std::ostream& out, const RunReport& r);

}  // namespace gexec
