// `gexec compare BASE NEW...`: results files (gexec gemm --json, gexec run --report), each NEW
// matched point by point (or op by op) with BASE, each time ratio judged against the noise the two
// runs measured.
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
#include <map>
#include <new>
#include <sstream>

#include "gexec/app/compare.hpp"
#include "gexec/io/text.hpp"
#include "output_file.hpp"
#include "output_paths.hpp"
#include "results_file.hpp"

namespace gexec {
namespace {

std::string kind_name(const std::string& format) {
  return format == "gexec.gemm" ? "a `gexec gemm --json` file (gexec.gemm)" : "a `gexec run --report` file (gexec.report)";
}

Result<std::vector<CompareRow>> compare_results(const ResultsFile& base, const ResultsFile& next,
                                                const std::string& base_name, const std::string& new_name,
                                                double threshold) {
  // Points and run reports share no key: every row would be "missing" or "new".
  if (base.format != next.format)
    return bad_input(path_text(base_name) + " is " + kind_name(base.format) + " and " + path_text(new_name) + " is " +
                     kind_name(next.format) + "; compare files of the same kind");
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
    r.noise = std::max(threshold, 2 * std::sqrt(b.spread * b.spread + n.spread * n.spread));
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

// BASE is read once; each NEW in turn (streamed: memory grows with the points, not the files).
Result<std::vector<Comparison>> compare_files(const CompareOptions& opts) {
  try {
    auto base = read_results_file(opts.base);
    if (!base) return base.error();
    std::vector<Comparison> out;
    for (const std::string& path : opts.news) {
      auto next = read_results_file(path);
      if (!next) return next.error();
      auto rows = compare_results(*base, *next, opts.base, path, opts.threshold);
      if (!rows) return rows.error();
      out.push_back({opts.base, path, std::move(*rows)});
    }
    return out;
  } catch (const std::bad_alloc&) {
    return runtime_error("out of host memory reading " + path_text(opts.base) +
                         " and the files compared with it (an allocation failed); nothing was compared");
  }
}

}  // namespace

CompareCounts count_verdicts(const Comparison& c) {
  CompareCounts n;
  for (const CompareRow& r : c.rows) {
    n.faster += r.verdict == "FAST";
    n.slower += r.verdict == "SLOW";
    n.same += r.verdict == "same";
    n.failed += r.verdict == "FAILED";
    n.untimed += r.verdict == "untimed";
    n.missing += r.verdict == "missing";
    n.added += r.verdict == "new";
  }
  return n;
}

Result<std::vector<CompareRow>> compare_documents(const std::string& base_text, const std::string& new_text,
                                                  const std::string& base_name, const std::string& new_name,
                                                  double threshold) {
  std::istringstream b(base_text), n(new_text);
  auto base = read_results(b, base_name);
  if (!base) return base.error();
  auto next = read_results(n, new_name);
  if (!next) return next.error();
  return compare_results(*base, *next, base_name, new_name, threshold);
}

Exit compare_command(const CompareOptions& opts, std::ostream& out, std::ostream& err) {
  if (!(opts.threshold >= 0)) {
    err << "gexec: --threshold: a fraction of 0 or more (0.05 is 5%)\n";
    return Exit::bad_input;
  }
  if (opts.news.empty()) {
    err << "gexec: compare: give BASE and at least one NEW file\n";
    return Exit::bad_input;
  }
  if (opts.plot_path == "-") {
    err << "gexec: --plot: a PNG file name (not \"-\")\n";
    return Exit::bad_input;
  }
  // Checked before anything is read: an output never replaces one of the files compared.
  std::vector<std::pair<std::string, std::string>> inputs{{"the BASE file", opts.base}};
  for (const std::string& n : opts.news) inputs.push_back({"a NEW file", n});
  std::vector<std::pair<std::string, std::string>> outputs;
  for (const auto& [name, path] : {std::pair{"--markdown", &opts.markdown_path}, std::pair{"--json", &opts.json_path},
                                   std::pair{"--plot", &opts.plot_path}})
    if (!path->empty()) outputs.push_back({name, *path});
  if (Status s = check_output_files(outputs, inputs, opts.force); !s) {
    err << "gexec: " << s.error().message << "\n";
    return s.error().code;
  }
  auto cs = compare_files(opts);
  if (!cs) {
    err << "gexec: " << cs.error().message << "\n";
    return cs.error().code;
  }
  // With a file on stdout ("-"), the text table steps aside so that the file reads alone.
  const bool quiet = opts.markdown_path == "-" || opts.json_path == "-";
  if (!quiet) out << compare_text(*cs, opts.threshold);
  Exit code = Exit::ok;
  for (const Comparison& c : *cs) {
    const CompareCounts n = count_verdicts(c);
    if (n.slower || n.failed) code = Exit::check_failed;
  }
  auto write = [&](const std::string& path, const std::string& text) {
    if (path.empty()) return true;
    if (Status w = write_output_file(path, text, &out); !w) {
      err << "gexec: " << w.error().message << "\n";
      code = Exit::runtime;
      return false;
    }
    if (!quiet) out << "wrote " << path << "\n";
    return true;
  };
  write(opts.markdown_path, compare_markdown(*cs, opts.threshold));
  write(opts.json_path, compare_json(*cs, opts.threshold));
  if (!opts.plot_path.empty()) {
    if (Status p = compare_plot(*cs, opts.plot_path); !p) {
      err << "gexec: --plot: " << p.error().message << "\n";
      code = Exit::runtime;
    } else if (!quiet) {
      out << "wrote " << opts.plot_path << "\n";
    }
  }
  return code;
}

}  // namespace gexec
