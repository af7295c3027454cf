// The timing report: statistics, rates, the noise warning, the per-op profile, the JSON line.
#include "timing_report.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gexec/exec/work.hpp"

namespace gexec {
namespace {

// Per-op timings use a shorter warm-up: the whole run's warm-up has already warmed the device.
constexpr double kProfileWarmupMs = 50;

std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// "1.23 G" style, for FLOP and byte counts per run.
std::string si(double v) {
  const char* unit[] = {"", "k", "M", "G", "T", "P"};
  int u = 0;
  while (v >= 1000 && u < 5) {
    v /= 1000;
    ++u;
  }
  return fmt("%.4g", v) + " " + unit[u];
}

struct OpTime {
  std::string name, type;
  double median_us = 0;
};

Result<std::vector<OpTime>> profile_ops(Executor& ex, const TimingOptions& opts) {
  TimingOptions one = opts;
  one.cuda_graph = false;  // each op on its own, launched directly
  one.profile = false;
  one.info = nullptr;
  one.warmup_ms = std::min(opts.warmup_ms, kProfileWarmupMs);
  std::vector<OpTime> times;
  for (size_t k = 0; k < ex.kernel_count(); ++k) {
    const Op& op = ex.op_of_kernel(k);
    bool graph_used = false;
    auto samples = ex.device().time_runs([&ex, k] { return ex.enqueue_op(k); }, one, &graph_used);
    if (!samples) return samples.error().with("timing op " + op.name);
    times.push_back({op.name, std::string(op_type_name(op.type)), summarize(std::move(*samples)).median});
  }
  return times;
}

}  // namespace

Status time_and_report(Executor& ex, const TimingOptions& opts, std::optional<double> peak_tflops,
                       std::ostream& out, nlohmann::json* json_out) {
  TimingInfo info;
  TimingOptions run = opts;
  run.info = &info;
  bool graph_used = false;
  auto samples = ex.device().time_runs([&ex] { return ex.enqueue(); }, run, &graph_used);
  if (!samples) return samples.error().with("timing");
  if (samples->empty()) return runtime_error("timing: the device returned no samples");
  const TimingStats s = summarize(std::move(*samples));
  const Work work = count_work(ex.graph());
  const double seconds = s.median * 1e-6;
  const double tflops = seconds > 0 ? work.flops / seconds / 1e12 : 0;
  const double gbps = seconds > 0 ? work.bytes / seconds / 1e9 : 0;

  out << "timing: " << s.samples << " samples of " << info.reps << " back-to-back iteration"
      << (info.reps == 1 ? "" : "s") << ", " << (graph_used ? "CUDA graph replay" : "direct launches")
      << "; warm-up " << opts.warmup_iters << " iterations" << (opts.warmup_ms > 0 ? fmt(" and %.0f ms", opts.warmup_ms) : "")
      << " (" << info.warmup_iters << " run in " << fmt("%.1f", info.warmup_ms) << " ms, calibration included)\n";
  out << "  per iteration (us): min " << fmt("%.3f", s.min) << ", median " << fmt("%.3f", s.median) << ", mean "
      << fmt("%.3f", s.mean) << ", p90 " << fmt("%.3f", s.p90) << ", p99 " << fmt("%.3f", s.p99) << ", max "
      << fmt("%.3f", s.max) << "; cv " << fmt("%.1f%%", s.cv * 100) << " (percentiles interpolated)\n";
  out << "  at the median: " << fmt("%.4g", tflops) << " TFLOP/s (" << si(work.flops) << "FLOP a run), "
      << fmt("%.4g", gbps) << " GB/s (" << si(work.bytes)
      << "B a run: inputs read once, outputs written once)\n";
  std::optional<double> pct;
  if (peak_tflops && *peak_tflops > 0) {
    pct = 100.0 * tflops / *peak_tflops;
    out << "  " << fmt("%.3g%%", *pct) << " of the peak " << fmt("%.1f", *peak_tflops) << " TFLOP/s\n";
  } else {
    out << "  % of peak: peak unknown\n";
  }
  if (s.cv > kNoisyCv) {
    const std::string msg = "the timings are noisy: cv " + fmt("%.1f%%", s.cv * 100) + " is above " +
                            fmt("%.0f%%", kNoisyCv * 100) +
                            "; the device may be shared, throttling or changing clocks; compare medians with care";
    spdlog::warn("{}", msg);
    out << "  warning: " << msg << "\n";
  }

  nlohmann::json j = {{"samples", s.samples},     {"reps", info.reps},     {"graph_used", graph_used},
                      {"median_us", s.median},    {"min_us", s.min},       {"mean_us", s.mean},
                      {"p90_us", s.p90},          {"p99_us", s.p99},       {"max_us", s.max},
                      {"cv", s.cv},               {"flops", work.flops},   {"bytes", work.bytes},
                      {"tflops", tflops},         {"gbps", gbps},          {"warmup_iters", info.warmup_iters}};
  j["peak_tflops"] = peak_tflops ? nlohmann::json(*peak_tflops) : nlohmann::json(nullptr);
  j["peak_pct"] = pct ? nlohmann::json(*pct) : nlohmann::json(nullptr);

  if (opts.profile) {
    auto ops = profile_ops(ex, opts);
    if (!ops) return ops.error().with("profiling");
    double sum = 0;
    for (const OpTime& t : *ops) sum += t.median_us;
    out << "profile: each op timed alone with direct launches, " << opts.iters << " samples each\n";
    char line[256];
    std::snprintf(line, sizeof line, "  %-24s %-14s %12s %7s\n", "op", "type", "median us", "share");
    out << line;
    nlohmann::json jops = nlohmann::json::array();
    for (const OpTime& t : *ops) {
      std::snprintf(line, sizeof line, "  %-24s %-14s %12.3f %6.1f%%\n", t.name.c_str(), t.type.c_str(), t.median_us,
                    sum > 0 ? 100.0 * t.median_us / sum : 0.0);
      out << line;
      jops.push_back({{"name", t.name}, {"type", t.type}, {"median_us", t.median_us}});
    }
    out << "  sum of the ops " << fmt("%.3f", sum) << " us; the whole run " << fmt("%.3f", s.median) << " us ("
        << (graph_used ? "CUDA graph replay" : "direct launches") << ")\n";
    j["ops"] = jops;
  }
  out << "timing-json: " << j.dump() << "\n";
  if (json_out) *json_out = j;
  return {};
}

}  // namespace gexec
