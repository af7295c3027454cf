// `gexec gemm`: a GEMM + epilogue profiler over a sweep of shapes and types (`gexec compare`,
// which judges its files, is compare.hpp).
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
  std::string from;                 // --from FILE: the points of a replay file (gemm_replay.hpp) instead
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

}  // namespace gexec
