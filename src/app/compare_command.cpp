// `gexec compare BASE NEW`: two results files (gexec gemm --json, gexec run --report), matched
// point by point (or op by op), each time ratio judged against the noise the two runs measured.
//
// The verdict: a point is SLOW when NEW's median exceeds BASE's by more than the band, FAST when
// it is below by as much, else "same". The band is the larger of --threshold and twice the
// combined spread of the samples, sqrt(s_base^2 + s_new^2), where s is a run's interquartile
// range over its median (gemm files; for run reports, whose timing has no quartiles, (p90 -
// median) / median). The per-sample spread rather than the standard error of the median, since
// reruns differ by clocks and placement, which one run's samples do not average out; quartiles
// rather than the cv, since a few outliers (a shared machine) inflate the cv without moving the
// median. Identical reruns therefore read "same".
#include <cmath>
#include <cstdio>
#include <map>
#include <new>
#include <sstream>

#include "gexec/app/gemm_command.hpp"
#include "gexec/io/text.hpp"
#include "results_file.hpp"

namespace gexec {
namespace {

std::string kind_name(const std::string& format) {
  return format == "gexec.gemm" ? "a `gexec gemm --json` file (gexec.gemm)" : "a `gexec run --report` file (gexec.report)";
}

Result<std::vector<CompareRow>> compare_results(const ResultsFile& base, const ResultsFile& next,
                                                const CompareOptions& opts) {
  // Points and run reports share no key: every row would be "missing" or "new".
  if (base.format != next.format)
    return bad_input(path_text(opts.base) + " is " + kind_name(base.format) + " and " + path_text(opts.next) + " is " +
                     kind_name(next.format) + "; compare two files of the same kind");
  std::map<std::string, Measure> by_key(next.rows.begin(), next.rows.end());
  std::vector<CompareRow> rows;
  for (const auto& [key, b] : base.rows) {
    CompareRow r;
    r.key = key;
    r.base_us = b.median_us;
    const auto it = by_key.find(key);
    if (it == by_key.end()) {
      r.verdict = "missing";
      rows.push_back(r);
      continue;
    }
    const Measure n = it->second;  // a copy: the node is erased next, so that the rest are the new points
    by_key.erase(it);
    r.new_us = n.median_us;
    r.ratio = b.median_us > 0 ? n.median_us / b.median_us : 0;
    r.noise = std::max(opts.threshold, 2 * std::sqrt(b.spread * b.spread + n.spread * n.spread));
    if (!n.passed) r.verdict = "FAILED";
    else if (!(b.median_us > 0) || !(n.median_us > 0)) r.verdict = "untimed";
    else if (r.ratio > 1 + r.noise) r.verdict = "SLOW";
    else if (r.ratio < 1 / (1 + r.noise)) r.verdict = "FAST";
    else r.verdict = "same";
    rows.push_back(r);
  }
  for (const auto& [key, n] : next.rows) {
    if (!by_key.count(key)) continue;
    CompareRow r;
    r.key = key;
    r.new_us = n.median_us;
    r.verdict = "new";
    rows.push_back(r);
  }
  return rows;
}

Result<std::vector<CompareRow>> compare_files(const CompareOptions& opts) {
  try {
    auto base = read_results_file(opts.base);
    if (!base) return base.error();
    auto next = read_results_file(opts.next);
    if (!next) return next.error();
    return compare_results(*base, *next, opts);
  } catch (const std::bad_alloc&) {
    return runtime_error("out of host memory reading " + path_text(opts.base) + " and " + path_text(opts.next) +
                         " (an allocation failed); nothing was compared");
  }
}

}  // namespace

Result<std::vector<CompareRow>> compare_documents(const std::string& base_text, const std::string& new_text,
                                                  const CompareOptions& opts) {
  std::istringstream b(base_text), n(new_text);
  auto base = read_results(b, opts.base);
  if (!base) return base.error();
  auto next = read_results(n, opts.next);
  if (!next) return next.error();
  return compare_results(*base, *next, opts);
}

Exit compare_command(const CompareOptions& opts, std::ostream& out, std::ostream& err) {
  if (!(opts.threshold >= 0)) {
    err << "gexec: --threshold: a fraction of 0 or more (0.05 is 5%)\n";
    return Exit::bad_input;
  }
  // Streamed (results_file.hpp): memory grows with the points, not the files; what still runs
  // out is said, with exit 3, not an abort.
  auto rows = compare_files(opts);
  if (!rows) {
    err << "gexec: " << rows.error().message << "\n";
    return rows.error().code;
  }
  char line[512];
  std::snprintf(line, sizeof line, "%-60s %12s %12s %8s %8s  %s\n", "point", "base_us", "new_us", "ratio", "band",
                "verdict");
  out << line;
  int slow = 0, fast = 0, failed = 0;
  for (const CompareRow& r : *rows) {
    std::snprintf(line, sizeof line, "%-60s %12.3f %12.3f %8.3f %7.1f%%  %s\n", r.key.c_str(), r.base_us, r.new_us,
                  r.ratio, r.noise * 100, r.verdict.c_str());
    out << line;
    slow += r.verdict == "SLOW";
    fast += r.verdict == "FAST";
    failed += r.verdict == "FAILED";
  }
  out << rows->size() << " compared: " << slow << " slower, " << fast << " faster, " << failed
      << " failed the check (band: the larger of --threshold " << opts.threshold * 100
      << "% and twice the runs' combined spread)\n";
  return slow || failed ? Exit::check_failed : Exit::ok;
}

}  // namespace gexec
