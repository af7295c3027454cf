// `gexec compare BASE NEW...`: results files (`gexec gemm --json`, `gexec run --report`) judged
// point by point against one baseline, each time ratio against the noise the runs measured; the
// comparison as text, Markdown, JSON and a plot of the ratios.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "gexec/status.hpp"

namespace gexec {

struct CompareOptions {
  std::string base;               // the baseline: a `gexec gemm --json` or `gexec run --report` file
  std::vector<std::string> news;  // one or more files of the same kind, each judged against base
  double threshold = 0.05;        // a point slower by more than this (and than its noise) is a regression
  std::string markdown_path, json_path, plot_path;  // --markdown, --json, --plot ("-": stdout, not --plot)
  bool force = false;             // --force: an output may replace one of the files compared
};

// One row of a comparison.
struct CompareRow {
  std::string key;            // the point (m, n, k, ... ) or the op
  double base_us = 0, new_us = 0, ratio = 0;
  double noise = 0;           // the relative band the noise alone explains (see compare_command.cpp)
  std::string verdict;        // "same", "SLOW", "FAST", "FAILED", "untimed", "missing", "new"
};

// One NEW file against the base: its rows, base's order first, then the points only NEW has.
struct Comparison {
  std::string base, next;  // the two paths, as given
  std::vector<CompareRow> rows;
};

// How many rows of a comparison have each verdict.
struct CompareCounts {
  int faster = 0, slower = 0, same = 0, failed = 0, untimed = 0, missing = 0, added = 0;
};
CompareCounts count_verdicts(const Comparison& c);

// The rows of comparing two documents' text (named base_name and new_name in messages);
// bad_input when either cannot be compared (neither format, a version this gexec does not read, a
// negative spread, a point twice: results_file.hpp) or they are of two formats.
Result<std::vector<CompareRow>> compare_documents(const std::string& base_text, const std::string& new_text,
                                                  const std::string& base_name, const std::string& new_name,
                                                  double threshold);

// The renderings (compare_report.cpp): the text table, Markdown, and the JSON document
// ("format": "gexec.compare", docs/gemm.md).
std::string compare_text(const std::vector<Comparison>& cs, double threshold);
std::string compare_markdown(const std::vector<Comparison>& cs, double threshold);
std::string compare_json(const std::vector<Comparison>& cs, double threshold);

// A PNG of every row's ratio with its noise band, one series per NEW file, drawn by python3 with
// matplotlib (compare_plot.cpp); a runtime error saying what is missing where either is absent.
Status compare_plot(const std::vector<Comparison>& cs, const std::string& path);

// `gexec compare BASE NEW...`: the text on `out`, the files; 1 when any point is SLOW or FAILED,
// 2 for bad files or options, 3 where a file cannot be written or the plot cannot be drawn.
Exit compare_command(const CompareOptions& opts, std::ostream& out, std::ostream& err);

}  // namespace gexec
