// The renderings of `gexec compare` (compare.hpp): a text table, Markdown and JSON, one section
// per NEW file, each row with both times, the ratio, the band it was judged with and the verdict,
// and a summary line that counts every verdict (rows present in one file only included).
#include <cstdio>
#include <nlohmann/json.hpp>

#include "gexec/app/compare.hpp"

namespace gexec {
namespace {

std::string summary(const Comparison& c) {
  const CompareCounts n = count_verdicts(c);
  return std::to_string(c.rows.size()) + " rows: " + std::to_string(n.faster) + " faster, " +
         std::to_string(n.slower) + " slower, " + std::to_string(n.same) + " same, " + std::to_string(n.failed) +
         " failed the check, " + std::to_string(n.untimed) + " untimed, " + std::to_string(n.missing) +
         " only in BASE, " + std::to_string(n.added) + " only in NEW";
}

std::string band_text(double threshold) {
  char b[160];
  std::snprintf(b, sizeof b, "band: the larger of --threshold %g%% and twice the runs' combined spread",
                threshold * 100);
  return b;
}

// A time of a row that the file lacks ("missing" has no NEW time, "new" no BASE time) is blank.
bool has_base(const CompareRow& r) { return r.verdict != "new"; }
bool has_new(const CompareRow& r) { return r.verdict != "missing"; }
bool has_ratio(const CompareRow& r) { return has_base(r) && has_new(r) && r.verdict != "untimed"; }

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

}  // namespace

std::string compare_text(const std::vector<Comparison>& cs, double threshold) {
  std::string out;
  char line[512];
  for (const Comparison& c : cs) {
    if (cs.size() > 1) out += "== " + c.next + " against " + c.base + "\n";
    std::snprintf(line, sizeof line, "%-60s %12s %12s %8s %8s  %s\n", "point", "base_us", "new_us", "ratio", "band",
                  "verdict");
    out += line;
    for (const CompareRow& r : c.rows) {
      std::snprintf(line, sizeof line, "%-60s %12s %12s %8s %8s  %s\n", r.key.c_str(),
                    has_base(r) ? fmt("%.3f", r.base_us).c_str() : "-", has_new(r) ? fmt("%.3f", r.new_us).c_str() : "-",
                    has_ratio(r) ? fmt("%.3f", r.ratio).c_str() : "-",
                    has_ratio(r) ? fmt("%.1f%%", r.noise * 100).c_str() : "-", r.verdict.c_str());
      out += line;
    }
    out += summary(c) + " (" + band_text(threshold) + ")\n";
  }
  return out;
}

std::string compare_markdown(const std::vector<Comparison>& cs, double threshold) {
  // Table cells hold no '|' of their own: a key's are escaped.
  auto cell = [](const std::string& s) {
    std::string o;
    for (char ch : s) o += ch == '|' ? std::string("\\|") : std::string(1, ch);
    return o;
  };
  std::string out = "# gexec compare\n\n" + band_text(threshold) + ".\n";
  for (const Comparison& c : cs) {
    out += "\n## `" + cell(c.next) + "` against `" + cell(c.base) + "`\n\n" + summary(c) + ".\n\n";
    out += "| point | base (us) | new (us) | ratio | band | verdict |\n| --- | ---: | ---: | ---: | ---: | --- |\n";
    for (const CompareRow& r : c.rows)
      out += "| " + cell(r.key) + " | " + (has_base(r) ? fmt("%.3f", r.base_us) : "") + " | " +
             (has_new(r) ? fmt("%.3f", r.new_us) : "") + " | " + (has_ratio(r) ? fmt("%.3f", r.ratio) : "") + " | " +
             (has_ratio(r) ? fmt("%.1f%%", r.noise * 100) : "") + " | " +
             (r.verdict == "SLOW" || r.verdict == "FAILED" ? "**" + r.verdict + "**" : r.verdict) + " |\n";
  }
  return out;
}

std::string compare_json(const std::vector<Comparison>& cs, double threshold) {
  nlohmann::json doc{{"format", "gexec.compare"}, {"version", 1}, {"threshold", threshold}};
  doc["base"] = cs.empty() ? "" : cs[0].base;
  nlohmann::json list = nlohmann::json::array();
  for (const Comparison& c : cs) {
    const CompareCounts n = count_verdicts(c);
    nlohmann::json rows = nlohmann::json::array();
    for (const CompareRow& r : c.rows) {
      nlohmann::json j{{"point", r.key}, {"verdict", r.verdict}};
      j["base_us"] = has_base(r) ? nlohmann::json(r.base_us) : nlohmann::json(nullptr);
      j["new_us"] = has_new(r) ? nlohmann::json(r.new_us) : nlohmann::json(nullptr);
      j["ratio"] = has_ratio(r) ? nlohmann::json(r.ratio) : nlohmann::json(nullptr);
      j["band"] = has_ratio(r) ? nlohmann::json(r.noise) : nlohmann::json(nullptr);
      rows.push_back(j);
    }
    list.push_back({{"new", c.next},
                    {"summary",
                     {{"rows", c.rows.size()}, {"faster", n.faster}, {"slower", n.slower}, {"same", n.same},
                      {"failed", n.failed}, {"untimed", n.untimed}, {"only_in_base", n.missing},
                      {"only_in_new", n.added}}},
                    {"rows", rows}});
  }
  doc["comparisons"] = list;
  return doc.dump(2) + "\n";
}

}  // namespace gexec
