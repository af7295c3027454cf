// `gexec run --iters N`: times the prepared run and prints the statistics, rates and profile.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>

#include "gexec/exec/executor.hpp"
#include "gexec/exec/timing.hpp"

namespace gexec {

// Times ex.enqueue() through the device's time_runs (opts.iters > 0), then prints: how it was
// timed, min/median/mean/p90/p99/max per iteration, TFLOP/s and GB/s at the median (count_work),
// the share of `peak_tflops` when known, a warning when the spread exceeds kNoisyCv, with
// opts.profile a table of each op timed alone, and last one line "timing-json: {...}" for scripts.
// Where json_out is given, the same statistics as the "timing-json" line are stored there too.
Status time_and_report(Executor& ex, const TimingOptions& opts, std::optional<double> peak_tflops,
                       std::ostream& out, nlohmann::json* json_out = nullptr);

}  // namespace gexec
