// Autotuning: times each kernel's variants (for cuBLASLt, the heuristic's candidates), keeps the
// fastest whose output passes the check against the reference, and saves or reloads the choices in a tuning cache.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "gexec/exec/executor.hpp"
#include "gexec/kernels/device_caps.hpp"
#include "gexec/kernels/precision.hpp"

namespace gexec {

struct AutotuneOptions {
  bool tune = false;        // time the variants (--autotune); otherwise only the cache is applied
  int top = 16;             // at most this many variants per kernel, in the kernel's order
  std::string cache_path;   // --tuning-cache: reloaded first, saved after tuning; empty: none
  bool cuda_graph = true;   // time as the run is timed: graph replay or direct launches
  int iters = 20;           // timed samples per variant
  // Told the fraction of the tuning done, now and then; the caller draws it (the app: a
  // progress line on a terminal). May be empty.
  std::function<void(double done)> progress;
  // Asked between timing samples (TimingOptions::poll): an error stops the tuning (Ctrl-C). May be empty.
  std::function<Status()> poll;
  Precision precision;      // what the kernels declare: candidates are checked against the reference with it
};

// What happened to one kernel with more than one variant.
struct TunedKernel {
  std::string op, signature;
  int variants = 0, chosen = 0, rejected = 0;  // rejected: outputs that fail the check against the reference
  std::string chosen_name;
  double default_us = 0, best_us = 0;          // 0 when not timed (taken from the cache)
  bool from_cache = false;
};

// Applies the cache, then (opts.tune) tunes the kernels with Kernel::tunable() that it did not
// hold, prints one line per kernel on `out`, and saves the cache. Candidates are checked against
// the default with verify's comparison and timed with exec's statistics (the median). Leaves every kernel with its chosen variant selected.
Result<std::vector<TunedKernel>> autotune(Executor& ex, const DeviceCaps& caps, const AutotuneOptions& opts,
                                          std::ostream& out);

}  // namespace gexec
