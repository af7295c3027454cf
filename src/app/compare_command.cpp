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

#include "gexec/app/gemm_command.hpp"
#include "output_file.hpp"

#include <nlohmann/json.hpp>

namespace gexec {
namespace {

using json = nlohmann::json;

struct Measure {
  double median_us = 0, cv = 0;
  bool passed = true;
};

double number(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : 0;
}
std::string text(const json& j, const char* key) {
  const auto it = j.find(key);
  if (it == j.end()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

// The measurements of one document, in file order, by key.
Result<std::vector<std::pair<std::string, Measure>>> measures(const std::string& content, const std::string& path) {
  json doc;
  try {
    doc = json::parse(content);
  } catch (const json::exception& e) {
    return bad_input(path + ": not JSON: " + e.what());
  }
  std::vector<std::pair<std::string, Measure>> out;
  const std::string format = doc.is_object() ? text(doc, "format") : "";
  if (format == "gexec.gemm") {
    for (const json& p : doc.value("points", json::array())) {
      std::string key = text(p, "m") + "x" + text(p, "n") + "x" + text(p, "k");
      if (number(p, "batch") > 1) key += " b" + text(p, "batch");
      key += " " + text(p, "dtype") + "->" + text(p, "out_dtype") + " bias " + text(p, "bias") + " " +
             text(p, "act") + " " + text(p, "trans") + " " + text(p, "l2") + " " + text(p, "backend");
      const double spread = p.contains("spread") ? number(p, "spread") : number(p, "cv");
      out.push_back({key, {number(p, "median_us"), spread, text(p, "result") == "pass"}});
    }
    return out;
  }
  if (format == "gexec.report") {
    const json& t = doc.contains("timing") && doc["timing"].is_object() ? doc["timing"] : json();
    if (t.is_null()) return bad_input(path + ": this report has no timing (run with --iters N)");
    const std::string graph = doc.contains("graph") && doc["graph"].is_object() ? text(doc["graph"], "name") : "";
    const bool passed = text(doc, "result") == "pass";
    const double median = number(t, "median_us");
    const double cv = median > 0 && t.contains("p90_us") ? (number(t, "p90_us") - median) / median : number(t, "cv");
    out.push_back({"run " + graph, {number(t, "median_us"), cv, passed}});
    for (const json& op : t.value("ops", json::array()))
      out.push_back({"op " + text(op, "name"), {number(op, "median_us"), cv, passed}});
    return out;
  }
  return bad_input(path + ": neither a `gexec gemm --json` file (format gexec.gemm) nor a `gexec run --report` "
                   "file (format gexec.report)");
}

}  // namespace

Result<std::vector<CompareRow>> compare_documents(const std::string& base_text, const std::string& new_text,
                                                  const CompareOptions& opts) {
  auto base = measures(base_text, opts.base);
  if (!base) return base.error();
  auto next = measures(new_text, opts.next);
  if (!next) return next.error();
  std::map<std::string, Measure> by_key(next->begin(), next->end());
  std::vector<CompareRow> rows;
  for (const auto& [key, b] : *base) {
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
    r.noise = std::max(opts.threshold, 2 * std::sqrt(b.cv * b.cv + n.cv * n.cv));
    if (!n.passed) r.verdict = "FAILED";
    else if (!(b.median_us > 0) || !(n.median_us > 0)) r.verdict = "untimed";
    else if (r.ratio > 1 + r.noise) r.verdict = "SLOW";
    else if (r.ratio < 1 / (1 + r.noise)) r.verdict = "FAST";
    else r.verdict = "same";
    rows.push_back(r);
  }
  for (const auto& [key, n] : *next) {
    if (!by_key.count(key)) continue;
    CompareRow r;
    r.key = key;
    r.new_us = n.median_us;
    r.verdict = "new";
    rows.push_back(r);
  }
  return rows;
}

Exit compare_command(const CompareOptions& opts, std::ostream& out, std::ostream& err) {
  if (!(opts.threshold >= 0)) {
    err << "gexec: --threshold: a fraction of 0 or more (0.05 is 5%)\n";
    return Exit::bad_input;
  }
  std::string texts[2];
  const std::string* paths[2] = {&opts.base, &opts.next};
  for (int i = 0; i < 2; ++i) {
    bool exists = false;
    auto t = read_existing_file(*paths[i], &exists);
    if (t && !exists) t = bad_input(*paths[i] + ": no such file");
    if (!t) {
      err << "gexec: " << t.error().message << "\n";
      return t.error().code;
    }
    texts[i] = *t;
  }
  auto rows = compare_documents(texts[0], texts[1], opts);
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
