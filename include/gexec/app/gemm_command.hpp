// `gexec gemm` (a GEMM + epilogue profiler over a sweep of shapes and types) and `gexec compare`
// (two results files, point by point, with a verdict that allows for the measured noise).
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "gexec/app/commands.hpp"
#include "gexec/app/gemm_sweep.hpp"
#include "gexec/status.hpp"

namespace gexec {

struct GemmOptions {
  GemmSweepText sweep;
  RunOptions run;                   // every point's run: backend, device, seed, check, timing, tuning, pad, algo
  bool cold_l2 = false;             // --cold-l2: rotate over kDefaultRotateBytes of operand sets
  double rotating_mb = 0;           // --rotating MB: the same over this many MB
  std::string percentiles = "50,90,99";
  std::string csv_path, json_path, export_times;
  bool append = false;              // --append: add rows to --csv FILE (same columns)
  std::string tags;                 // --tags key:value,...: extra columns
  bool progress = true;             // a progress line on stderr (when it is a terminal)
};

// Runs every point, prints the table on `out`, writes the files; 0 when every point passed,
// 1 when any failed its check or stopped with an error, 2 for bad options.
Exit gemm_command(const GemmOptions& opts, std::ostream& out, std::ostream& err);

struct CompareOptions {
  std::string base, next;  // two `gexec gemm --json` or `gexec run --report` files
  double threshold = 0.05; // a point slower by more than this (and than its noise) is a regression
};

// One row of a comparison.
struct CompareRow {
  std::string key;            // the point (m, n, k, ... ) or the op
  double base_us = 0, new_us = 0, ratio = 0;
  double noise = 0;           // the relative band the noise alone explains (see compare_command.cpp)
  std::string verdict;        // "same", "SLOW", "FAST", "FAILED", "missing", "new"
};

// The rows of comparing two documents' text; bad_input when either cannot be compared (neither
// format, a version this gexec does not read, a negative spread, a point twice: results_file.hpp)
// or they are of two formats.
Result<std::vector<CompareRow>> compare_documents(const std::string& base_text, const std::string& new_text,
                                                  const CompareOptions& opts);

// `gexec compare BASE NEW`: the table; 1 when any point is SLOW or FAILED, 2 for bad files.
Exit compare_command(const CompareOptions& opts, std::ostream& out, std::ostream& err);

}  // namespace gexec
