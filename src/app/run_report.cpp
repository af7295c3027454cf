// The run report's small helpers: names of its enums, the exit status, the check's verdict.
#include "gexec/app/run_report.hpp"

namespace gexec {

std::string_view warning_kind_name(RunWarning::Kind k) {
  switch (k) {
    case RunWarning::Kind::cpu_fallback: return "cpu_fallback";
    case RunWarning::Kind::noisy_timings: return "noisy_timings";
    case RunWarning::Kind::peak_unknown: return "peak_unknown";
    case RunWarning::Kind::other: break;
  }
  return "other";
}

std::string_view result_name(RunReport::Result r) {
  switch (r) {
    case RunReport::Result::pass: return "pass";
    case RunReport::Result::fail: return "fail";
    case RunReport::Result::dry_run: return "dry-run";
    case RunReport::Result::error: break;
  }
  return "error";
}

bool CheckSummary::pass() const {
  for (const CheckedOutput& o : outputs)
    if (!o.check.pass) return false;
  return true;
}

bool ExpectSummary::pass() const {
  for (const ExpectedOutput& o : outputs)
    if (!o.pass) return false;
  return true;
}

Exit RunReport::exit_code() const {
  switch (result) {
    case Result::pass:
    case Result::dry_run: return Exit::ok;
    case Result::fail: return Exit::check_failed;
    case Result::error: break;
  }
  return error ? error->code : Exit::runtime;
}

}  // namespace gexec
