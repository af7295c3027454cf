// `gexec run --iters N`: times the prepared run (RunTiming), and prints and serializes the result.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>

#include "gexec/app/run_report.hpp"
#include "gexec/app/timing_json.hpp"
#include "gexec/exec/executor.hpp"
#include "gexec/exec/timing.hpp"

namespace gexec {

// Times ex.enqueue() through the device's time_runs (opts.iters > 0): the statistics, TFLOP/s
// and GB/s at the median (count_work) and the share of `peak_tflops` when known. `into` is
// filled as the timing goes; with opts.profile each op is then timed alone, and `into.complete`
// is set once everything was timed.
Status measure_timing(Executor& ex, const TimingOptions& opts, std::optional<double> peak_tflops, RunTiming& into);

// "the timings are noisy: cv ... is above ...": the warning for a spread above kNoisyCv.
std::string noisy_message(const RunTiming& t);

// How it was timed, min/median/mean/p90/p99/max per iteration, the rates, the peak's share, the
// noise warning, with a profile its table, and last one line "timing-json: {...}" for scripts.
void print_timing(std::ostream& out, const RunTiming& t);

// measure_timing, then print_timing (logging the noise warning too); json_out, where given,
// receives timing_json.
Status time_and_report(Executor& ex, const TimingOptions& opts, std::optional<double> peak_tflops,
                       std::ostream& out, nlohmann::json* json_out = nullptr);

}  // namespace gexec
