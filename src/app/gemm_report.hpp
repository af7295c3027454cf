// `gexec gemm`'s rendering, apart from its sweep (gemm_command.cpp) as run's is (report.cpp,
// json_report.cpp): each point's outcome as a row of the table, of the CSV and of the JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "gexec/app/gemm_command.hpp"
#include "gexec/app/nvml.hpp"
#include "gexec/app/run_report.hpp"

namespace gexec {

// One point's outcome.
struct GemmRow {
  GemmPoint p;
  std::string backend, kernel, algo, l2 = "warm", error;
  std::string command;  // the `gexec gemm` line that runs this point alone, with the candidate it ran
  RunReport::Result result = RunReport::Result::error;
  int algo_index = 0, algo_count = 0;
  std::optional<RunTiming> timing;
  std::vector<double> percentiles;  // per requested percentile
  std::optional<double> max_abs, rel_fro;
  PointPower power;
  std::vector<std::string> warnings;
  bool noisy = false;  // cv above kNoisyCv
  bool interrupted = false;  // Ctrl-C stopped it: not a row
  bool passed() const { return result == RunReport::Result::pass; }
};

// The rendering helpers, by name in their own namespace (num, print_row: common names).
namespace gemm_report {

// A number as printf's format `f` writes it; "" for NaN and infinities.
std::string num(double v, const char* f = "%.4g");
std::string opt_num(const std::optional<double>& v, const char* f = "%.4g");
// "p50", "p99.9": a percentile's column name.
std::string pct_name(double p);
// "MxNxK [batch B] DTYPE->OUT bias B act A TRANS": a point in messages.
std::string point_label(const GemmPoint& p);

// The CSV's columns (the fixed ones, a column per extra percentile, the tags) and one row's fields.
std::vector<std::string> csv_columns(const std::vector<double>& pcts,
                                     const std::vector<std::pair<std::string, std::string>>& tags);
std::vector<std::string> csv_fields(const GemmRow& r, const GemmOptions& opts, const std::vector<double>& pcts,
                                    const std::vector<std::pair<std::string, std::string>>& tags);

// One point of the JSON's "points", and the JSON's "options".
nlohmann::json row_json(const GemmRow& r, const GemmOptions& opts, const std::vector<double>& pcts);
nlohmann::json options_json(const GemmOptions& o);

// The table: a header once, then a line per point as it finishes.
void print_header(std::ostream& out, const std::vector<double>& pcts);
void print_row(std::ostream& out, const GemmRow& r);

}  // namespace gemm_report
}  // namespace gexec
