// The run report's small helpers: names of its enums, the exit status, the check's verdict.
#include "gexec/app/run_report.hpp"

#include "kernel_choices.hpp"

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

std::vector<KernelChoice> kernel_choices(const Graph& g, const Selection& s) {
  std::vector<KernelChoice> out;
  for (size_t o = 0; o < g.ops.size() && o < s.ops.size(); ++o) {
    const Op& op = g.ops[o];
    const OpChoice& c = s.ops[o];
    KernelChoice k{op.name, std::string(op_type_name(op.type)), c.kernel ? c.kernel->name : "", op.hoisted, c.notes, {}, 0, 0, {}};
    for (const Rejection& r : c.rejected) k.rejected.push_back({r.kernel, r.reason});
    out.push_back(std::move(k));
  }
  return out;
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
